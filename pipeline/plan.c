/*
 * plan.c - exact fan-in counting and the plan file.
 *
 * DESIGN: a counter must hold every distinct target of a billion-row dump
 * in memory, so a key costs what it must and little more: the key bytes
 * once, behind a varint length, in an arena of 1 MiB blocks (blocks never
 * move, so entries handed out stay valid, and growth never copies keys),
 * and a 16-byte slot {count, reference} in a linear-probing table kept at
 * most 3/4 full. The reference packs the arena offset with 16 bits of the
 * key's hash, so a probe rarely touches the arena for a key that is not
 * the one sought. The hash is FNV-1a-64 (chunk.h), mixed by a multiply
 * before taking the top bits as the slot index.
 *
 * The plan reuses the same table (key -> index of the hot entry) for its
 * per-row lookups: one table for the whole plan, because a hot key is the
 * index's, whichever source writes it. Its file is plan_file.c's.
 *
 * Counted hot keys (el_plan_add_counted) are found without a merged
 * counter: each source's counter is walked, and a key's fan-in is the sum
 * of its count in every counter (a probe each). A merged counter would
 * hold every distinct key a second time, which for a billion-row dump is
 * gigabytes; the probes cost a few seconds at most.
 */
#include "pipeline/plan.h"

#include <inttypes.h>       /* PRIu64 */
#include <stdbool.h>        /* bool */
#include <stdio.h>          /* snprintf */
#include <stdlib.h>         /* malloc, qsort */
#include <string.h>         /* memcmp, strdup */

#include "common/utf8.h"
#include "common/vec.h"     /* el_grow */
#include "pipeline/chunk.h" /* el_fnv1a64 */
#include "pipeline/mapping.h" /* EL_MAX_MAX_SHARDS */
#include "pipeline/shard.h" /* el_shard_count */

/* ---- the table: key -> 64-bit value ---- */

#define BLOCK_SHIFT 20
#define BLOCK_SIZE ((size_t)1 << BLOCK_SHIFT)
#define INITIAL_SLOTS 1024u
#define TAG_BITS 16

typedef struct slot {
    uint64_t val;  /* the count (counter) or hot index (plan) */
    uint64_t ref;  /* 0: empty; else ((arena offset + 1) << TAG_BITS) | tag */
} slot;

typedef struct keytab {
    slot *slots;
    size_t cap;      /* power of two */
    unsigned shift;  /* 64 - log2(cap) */
    size_t n;        /* keys held */
    char **blocks;
    size_t nblocks, blocks_cap;
    size_t used;     /* bytes used in the last block */
} keytab;

static uint64_t key_hash(const char *key, size_t len)
{
    return el_fnv1a64(key, len);
}

static size_t slot_of(const keytab *t, uint64_t h)
{
    return (size_t)((h * 0x9e3779b97f4a7c15ull) >> t->shift);
}

static uint64_t tag_of(uint64_t h)
{
    return h >> (64 - TAG_BITS);
}

static void keytab_free(keytab *t)
{
    free(t->slots);
    for (size_t i = 0; i < t->nblocks; i++)
        free(t->blocks[i]);
    free(t->blocks);
    memset(t, 0, sizeof *t);
}

static el_err keytab_init(keytab *t)
{
    memset(t, 0, sizeof *t);
    t->slots = calloc(INITIAL_SLOTS, sizeof *t->slots);
    if (!t->slots)
        return EL_ENOMEM;
    t->cap = INITIAL_SLOTS;
    t->shift = 64 - 10;
    return EL_OK;
}

/* The key stored at arena offset off. */
static const char *arena_key(const keytab *t, uint64_t ref, size_t *len)
{
    uint64_t off = (ref >> TAG_BITS) - 1;
    const unsigned char *p = (const unsigned char *)t->blocks[off >> BLOCK_SHIFT] +
                             (off & (BLOCK_SIZE - 1));
    size_t n = 0;
    unsigned sh = 0;
    while (*p & 0x80) {
        n |= (size_t)(*p++ & 0x7f) << sh;
        sh += 7;
    }
    n |= (size_t)*p++ << sh;
    *len = n;
    return (const char *)p;
}

/* Copies key into the arena; *ref gets its reference (without the tag). */
static el_err arena_put(keytab *t, const char *key, size_t len, uint64_t *ref)
{
    size_t need = len + 3; /* varint of <= 65535 takes at most 3 bytes */
    if (t->nblocks == 0 || t->used + need > BLOCK_SIZE) {
        char **b = el_grow(t->blocks, &t->blocks_cap, t->nblocks + 1, sizeof *b, 16);
        if (!b)
            return EL_ENOMEM;
        t->blocks = b;
        char *blk = malloc(BLOCK_SIZE);
        if (!blk)
            return EL_ENOMEM;
        t->blocks[t->nblocks++] = blk;
        t->used = 0;
    }
    uint64_t off = ((uint64_t)(t->nblocks - 1) << BLOCK_SHIFT) + t->used;
    unsigned char *p = (unsigned char *)t->blocks[t->nblocks - 1] + t->used;
    size_t n = len;
    while (n >= 0x80) {
        *p++ = (unsigned char)(n | 0x80);
        n >>= 7;
    }
    *p++ = (unsigned char)n;
    memcpy(p, key, len);
    p += len;
    t->used = (size_t)(p - (unsigned char *)t->blocks[t->nblocks - 1]);
    *ref = (off + 1) << TAG_BITS;
    return EL_OK;
}

/* The slot holding key, or the empty slot where it would go. */
static slot *keytab_find(const keytab *t, const char *key, size_t len, uint64_t h)
{
    uint64_t tag = tag_of(h);
    size_t mask = t->cap - 1;
    for (size_t i = slot_of(t, h);; i = (i + 1) & mask) {
        slot *s = &t->slots[i];
        if (s->ref == 0)
            return s;
        if ((s->ref & ((1u << TAG_BITS) - 1)) != tag)
            continue;
        size_t klen;
        const char *k = arena_key(t, s->ref, &klen);
        if (klen == len && memcmp(k, key, len) == 0)
            return s;
    }
}

/* Rehashes into a table of cap slots (a power of two, larger than now). */
static el_err keytab_resize(keytab *t, size_t cap)
{
    slot *ns = calloc(cap, sizeof *ns);
    if (!ns)
        return EL_ENOMEM;
    slot *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = ns;
    while (t->cap < cap) {
        t->cap *= 2;
        t->shift--;
    }
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].ref == 0)
            continue;
        size_t klen;
        const char *k = arena_key(t, old[i].ref, &klen);
        uint64_t h = key_hash(k, klen);
        size_t mask = cap - 1, j = slot_of(t, h);
        while (ns[j].ref != 0)
            j = (j + 1) & mask;
        ns[j] = old[i];
    }
    free(old);
    return EL_OK;
}

static el_err keytab_grow(keytab *t)
{
    return keytab_resize(t, t->cap * 2);
}

/* Makes room for n keys in all without growing on the way. Keys inserted
 * in another table's slot order (a merge) come in the order of their hash:
 * into a table smaller than theirs they pile up in runs that every probe
 * then walks (merging 2 counters of 200,000 keys took 2 s); into one as
 * large, each lands near where it sits in its own. */
static el_err keytab_reserve(keytab *t, size_t n)
{
    size_t cap = t->cap;
    while ((n + 1) * 4 > cap * 3)
        cap *= 2;
    return cap > t->cap ? keytab_resize(t, cap) : EL_OK;
}

/* The slot of key, inserted with val 0 when new (*added tells). */
static el_err keytab_upsert(keytab *t, const char *key, size_t len, slot **out, bool *added)
{
    if (len > EL_PLAN_MAX_KEY)
        return EL_ELIMIT;
    uint64_t h = key_hash(key, len);
    slot *s = keytab_find(t, key, len, h);
    *added = false;
    if (s->ref == 0) {
        if ((t->n + 1) * 4 > t->cap * 3) {
            el_err err = keytab_grow(t);
            if (err)
                return err;
            s = keytab_find(t, key, len, h);
        }
        uint64_t ref;
        el_err err = arena_put(t, key, len, &ref);
        if (err)
            return err;
        s->ref = ref | tag_of(h);
        s->val = 0;
        t->n++;
        *added = true;
    }
    *out = s;
    return EL_OK;
}

static const slot *keytab_get(const keytab *t, const char *key, size_t len)
{
    if (len > EL_PLAN_MAX_KEY || !t->slots)
        return NULL;
    const slot *s = keytab_find(t, key, len, key_hash(key, len));
    return s->ref ? s : NULL;
}

/* ---- the counter ---- */

struct el_plan_counter {
    keytab tab;
    uint64_t total;
    size_t last;     /* slot of the last key added + 1 (0: none): dumps are
                        sorted by PK, so the index sort key repeats in runs */
    size_t last_cap; /* table size when last was set (a growth moves slots) */
};

el_plan_counter *el_plan_counter_new(void)
{
    el_plan_counter *c = calloc(1, sizeof *c);
    if (!c || keytab_init(&c->tab)) {
        el_plan_counter_free(c);
        return NULL;
    }
    return c;
}

void el_plan_counter_free(el_plan_counter *c)
{
    if (!c)
        return;
    keytab_free(&c->tab);
    free(c);
}

el_err el_plan_counter_add_n(el_plan_counter *c, const char *key, size_t len, uint64_t n)
{
    slot *s;
    bool added;
    if (n == 0)
        return EL_OK;
    if (c->last && c->last_cap == c->tab.cap) {
        s = &c->tab.slots[c->last - 1];
        size_t klen;
        const char *k = arena_key(&c->tab, s->ref, &klen);
        if (klen == len && memcmp(k, key, len) == 0) {
            s->val += n;
            c->total += n;
            return EL_OK;
        }
    }
    el_err err = keytab_upsert(&c->tab, key, len, &s, &added);
    if (err)
        return err;
    s->val += n;
    c->total += n;
    c->last = (size_t)(s - c->tab.slots) + 1;
    c->last_cap = c->tab.cap;
    return EL_OK;
}

el_err el_plan_counter_add(el_plan_counter *c, const char *key, size_t len)
{
    return el_plan_counter_add_n(c, key, len, 1);
}

el_err el_plan_counter_merge(el_plan_counter *into, const el_plan_counter *from)
{
    const keytab *t = &from->tab;
    el_err err = keytab_reserve(&into->tab, into->tab.n + t->n);
    if (err)
        return err;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].ref == 0)
            continue;
        size_t len;
        const char *k = arena_key(t, t->slots[i].ref, &len);
        err = el_plan_counter_add_n(into, k, len, t->slots[i].val);
        if (err)
            return err;
    }
    return EL_OK;
}

uint64_t el_plan_counter_get(const el_plan_counter *c, const char *key, size_t len)
{
    const slot *s = keytab_get(&c->tab, key, len);
    return s ? s->val : 0;
}

size_t el_plan_counter_distinct(const el_plan_counter *c)
{
    return c->tab.n;
}

uint64_t el_plan_counter_total(const el_plan_counter *c)
{
    return c->total;
}

size_t el_plan_counter_memory(const el_plan_counter *c)
{
    const keytab *t = &c->tab;
    return sizeof *c + t->cap * sizeof(slot) + t->nblocks * BLOCK_SIZE +
           t->blocks_cap * sizeof(char *);
}

/* Negative when a ranks before b: higher count, then smaller key. */
static int entry_cmp(const el_plan_entry *a, const el_plan_entry *b)
{
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int r = memcmp(a->key, b->key, n);
    if (r)
        return r;
    return a->len < b->len ? -1 : a->len > b->len;
}

static int entry_qsort_cmp(const void *a, const void *b)
{
    return entry_cmp(a, b);
}

size_t el_plan_counter_top(const el_plan_counter *c, size_t k, el_plan_entry *out)
{
    const keytab *t = &c->tab;
    size_t n = 0;
    if (k == 0)
        return 0;
    for (size_t i = 0; i < t->cap; i++) {
        const slot *s = &t->slots[i];
        if (s->ref == 0)
            continue;
        /* cheap rejection before looking at the key */
        if (n == k && s->val < out[k - 1].count)
            continue;
        el_plan_entry e;
        e.key = arena_key(t, s->ref, &e.len);
        e.count = s->val;
        if (n == k && entry_cmp(&e, &out[k - 1]) >= 0)
            continue;
        size_t j = n < k ? n++ : k - 1;
        while (j > 0 && entry_cmp(&e, &out[j - 1]) < 0) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = e;
    }
    return n;
}

el_err el_plan_counter_at_least(const el_plan_counter *c, uint64_t min, el_plan_entry **out,
                                size_t *n)
{
    const keytab *t = &c->tab;
    size_t cnt = 0;
    *out = NULL;
    *n = 0;
    for (size_t i = 0; i < t->cap; i++)
        cnt += t->slots[i].ref != 0 && t->slots[i].val >= min;
    if (cnt == 0)
        return EL_OK;
    el_plan_entry *v = malloc(cnt * sizeof *v);
    if (!v)
        return EL_ENOMEM;
    size_t j = 0;
    for (size_t i = 0; i < t->cap; i++) {
        const slot *s = &t->slots[i];
        if (s->ref == 0 || s->val < min)
            continue;
        v[j].key = arena_key(t, s->ref, &v[j].len);
        v[j].count = s->val;
        j++;
    }
    qsort(v, cnt, sizeof *v, entry_qsort_cmp);
    *out = v;
    *n = cnt;
    return EL_OK;
}

bool el_plan_counter_next(const el_plan_counter *c, size_t *pos, el_plan_entry *out)
{
    const keytab *t = &c->tab;
    for (size_t i = *pos; i < t->cap; i++) {
        if (t->slots[i].ref == 0)
            continue;
        out->key = arena_key(t, t->slots[i].ref, &out->len);
        out->count = t->slots[i].val;
        *pos = i + 1;
        return true;
    }
    *pos = t->cap;
    return false;
}

void el_plan_counter_histogram(const el_plan_counter *c, uint64_t hist[EL_PLAN_HIST_BUCKETS])
{
    const keytab *t = &c->tab;
    memset(hist, 0, EL_PLAN_HIST_BUCKETS * sizeof *hist);
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t v = t->slots[i].val;
        if (t->slots[i].ref != 0 && v > 0)
            hist[63 - __builtin_clzll(v)]++;
    }
}

/* ---- the plan ---- */

typedef struct plan_source {
    el_plan_source pub;
    char *name;
} plan_source;

struct el_plan {
    plan_source *src;
    size_t n, cap;
    el_plan_hot *hot;          /* each key and shares array malloc'd on its own */
    size_t nhot, hot_cap;
    keytab index;              /* key -> position in hot */
    char *estimate;            /* JSON object written as "estimate", or NULL */
};

el_plan *el_plan_new(void)
{
    el_plan *p = calloc(1, sizeof(el_plan));
    if (p && keytab_init(&p->index)) {
        free(p);
        return NULL;
    }
    return p;
}

void el_plan_free(el_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->src[i].name);
    for (size_t i = 0; i < p->nhot; i++) {
        free((char *)p->hot[i].key);
        free((el_plan_share *)p->hot[i].shares);
    }
    keytab_free(&p->index);
    free(p->hot);
    free(p->estimate);
    free(p->src);
    free(p);
}

size_t el_plan_nsources(const el_plan *p)
{
    return p->n;
}

const el_plan_source *el_plan_get_source(const el_plan *p, size_t i)
{
    return i < p->n ? &p->src[i].pub : NULL;
}

size_t el_plan_find_source(const el_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->src[i].name, name) == 0)
            return i;
    return EL_PLAN_NO_SOURCE;
}

size_t el_plan_nhot(const el_plan *p)
{
    return p->nhot;
}

const el_plan_hot *el_plan_get_hot(const el_plan *p, size_t i)
{
    return i < p->nhot ? &p->hot[i] : NULL;
}

el_err el_plan_add_source(el_plan *p, const char *name, uint64_t rows, uint64_t threshold,
                          size_t max_shards, size_t *index, el_diag *diag)
{
    if (!name || !name[0])
        return el_diag_set(diag, EL_EUSAGE, "a source has an empty name");
    if (el_plan_find_source(p, name) != EL_PLAN_NO_SOURCE)
        return el_diag_set(diag, EL_EUSAGE, "source '%s' is given twice", name);
    if (threshold && (max_shards < 2 || max_shards > EL_MAX_MAX_SHARDS))
        return el_diag_set(diag, EL_EUSAGE, "source '%s': \"max_shards\" must be an integer "
                           "from 2 to %d", name, EL_MAX_MAX_SHARDS);
    plan_source *v = el_grow(p->src, &p->cap, p->n + 1, sizeof *v, 4);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    p->src = v;
    plan_source *s = &p->src[p->n];
    memset(s, 0, sizeof *s);
    s->name = strdup(name);
    if (!s->name)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    s->pub.name = s->name;
    s->pub.rows = rows;
    s->pub.threshold = threshold;
    s->pub.max_shards = threshold ? max_shards : 0;
    if (index)
        *index = p->n;
    p->n++;
    return EL_OK;
}

/* At most 200 bytes of a key, for messages. */
#define KEY_SHOWN(len) ((int)((len) > 200 ? 200 : (len)))

/* " (threshold T, max_shards M)" or " (no hot settings)", into buf. */
static const char *settings_of(const el_plan_source *s, char *buf, size_t cap)
{
    if (s->threshold == 0)
        snprintf(buf, cap, "no \"hot\" settings");
    else
        snprintf(buf, cap, "hot threshold %" PRIu64 ", max_shards %zu", s->threshold,
                 s->max_shards);
    return buf;
}

/* The sources of one key must agree on the settings that decide its
 * shards: otherwise which of them would? */
static el_err settings_conflict(const el_plan *p, const char *key, size_t len, size_t a,
                                size_t b, el_diag *diag)
{
    char sa[96], sb[96];
    return el_diag_set(diag, EL_EUSAGE, "index key '%.*s' is written by sources '%s' (%s) and "
                       "'%s' (%s): sources that share an index partition key need the same "
                       "\"hot\" settings, so that all of its edges go to the same shards",
                       KEY_SHOWN(len), key, p->src[a].name,
                       settings_of(&p->src[a].pub, sa, sizeof sa), p->src[b].name,
                       settings_of(&p->src[b].pub, sb, sizeof sb));
}

static bool same_settings(const el_plan_source *a, const el_plan_source *b)
{
    return a->threshold == b->threshold && a->max_shards == b->max_shards;
}

el_err el_plan_add_hot(el_plan *p, const char *key, size_t len, size_t shards,
                       const el_plan_share *shares, size_t nshares, el_diag *diag)
{
    size_t bad;
    if (len == 0)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is empty");
    if (len > EL_PLAN_MAX_KEY)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is longer than %u bytes", EL_PLAN_MAX_KEY);
    if (!el_utf8_valid(key, len, &bad) || memchr(key, '\0', len))
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is not valid UTF-8 text");
    if (nshares == 0)
        return el_diag_set(diag, EL_EUSAGE, "'%.*s' names no source", KEY_SHOWN(len), key);
    uint64_t fan_in = 0;
    const el_plan_source *first = NULL;
    for (size_t i = 0; i < nshares; i++) {
        size_t si = shares[i].source;
        if (si >= p->n)
            return el_diag_set(diag, EL_EINTERNAL, "no plan source %zu", si);
        if (i > 0 && si <= shares[i - 1].source)
            return el_diag_set(diag, EL_EUSAGE, "'%.*s' names source '%s' twice or out of "
                               "order", KEY_SHOWN(len), key, p->src[si].name);
        const el_plan_source *s = &p->src[si].pub;
        if (!first)
            first = s;
        if (!same_settings(s, first))
            return settings_conflict(p, key, len, shares[0].source, si, diag);
        if (shares[i].count == 0 || shares[i].count > s->rows)
            return el_diag_set(diag, EL_EUSAGE, "source '%s' has %" PRIu64 " rows of '%.*s', "
                               "not from 1 to its %" PRIu64 " rows", s->name, shares[i].count,
                               KEY_SHOWN(len), key, s->rows);
        if (fan_in + shares[i].count < fan_in)
            return el_diag_set(diag, EL_EUSAGE, "the fan-in of '%.*s' is too large",
                               KEY_SHOWN(len), key);
        fan_in += shares[i].count;
    }
    if (first->threshold == 0)
        return el_diag_set(diag, EL_EUSAGE, "'%.*s' is listed hot, but hot sharding is off "
                           "(\"threshold\" 0) in source '%s'", KEY_SHOWN(len), key,
                           first->name);
    if (fan_in < first->threshold)
        return el_diag_set(diag, EL_EUSAGE, "the fan-in %" PRIu64 " of '%.*s' is below the "
                           "threshold %" PRIu64, fan_in, KEY_SHOWN(len), key, first->threshold);
    if (shards < 2 || shards > first->max_shards)
        return el_diag_set(diag, EL_EUSAGE, "\"shards\" %zu of '%.*s' is not from 2 to "
                           "max_shards %zu", shards, KEY_SHOWN(len), key, first->max_shards);
    slot *sl;
    bool added;
    el_err err = keytab_upsert(&p->index, key, len, &sl, &added);
    if (err)
        return el_diag_set(diag, err, "out of memory");
    if (!added)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" '%.*s' is listed twice", KEY_SHOWN(len),
                           key);
    char *copy = NULL;
    el_plan_share *sh = NULL;
    el_plan_hot *v = el_grow(p->hot, &p->hot_cap, p->nhot + 1, sizeof *v, 16);
    if (v)
        p->hot = v;
    if (v && (copy = malloc(len + 1)) && (sh = malloc(nshares * sizeof *sh))) {
        memcpy(copy, key, len);
        copy[len] = '\0';
        memcpy(sh, shares, nshares * sizeof *sh);
    } else {
        free(copy);
        /* the table keeps the key but the entry is never used: forget it */
        sl->val = UINT64_MAX;
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    sl->val = p->nhot;
    p->hot[p->nhot++] = (el_plan_hot){ copy, len, fan_in, shards, sh, nshares };
    return EL_OK;
}

/* A key found hot while counting: the key (in its counter's arena) and its
 * fan-in over every source, and where its shares are in found.shares. */
typedef struct candidate {
    el_plan_entry e;
    size_t first, n;
} candidate;

/* The hot keys found so far, before they are sorted and added. */
typedef struct found {
    candidate *cand;
    size_t ncand, cand_cap;
    el_plan_share *shares;
    size_t nshares, shares_cap;
} found;

static int candidate_cmp(const void *a, const void *b)
{
    const el_plan_entry *x = &((const candidate *)a)->e, *y = &((const candidate *)b)->e;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

/* Decides key e of source `from`, the first counter that holds it (the
 * later ones are summed in): appended to f when it is hot. */
static el_err consider(el_plan *p, const el_plan_counter *const *targets, size_t from,
                       const el_plan_entry *e, found *f, el_diag *diag)
{
    size_t mark = f->nshares, lowest = from;
    uint64_t fan_in = 0;
    bool agree = true;
    for (size_t j = from; j < p->n; j++) {
        uint64_t n = j == from ? e->count
                               : targets[j] ? el_plan_counter_get(targets[j], e->key, e->len) : 0;
        if (n == 0)
            continue;
        el_plan_share *v = el_grow(f->shares, &f->shares_cap, f->nshares + 1, sizeof *v, 64);
        if (!v)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        f->shares = v;
        v[f->nshares++] = (el_plan_share){ j, n };
        fan_in += n;
        const el_plan_source *s = &p->src[j].pub;
        agree = agree && same_settings(s, &p->src[from].pub);
        if (s->threshold && (p->src[lowest].pub.threshold == 0 ||
                             s->threshold < p->src[lowest].pub.threshold))
            lowest = j;
    }
    const el_plan_source *low = &p->src[lowest].pub;
    if (low->threshold == 0 || fan_in < low->threshold) {
        f->nshares = mark; /* not hot under any of its sources' settings */
        return EL_OK;
    }
    for (size_t k = mark; !agree && k < f->nshares; k++)
        if (!same_settings(&p->src[f->shares[k].source].pub, &p->src[from].pub))
            return settings_conflict(p, e->key, e->len, from, f->shares[k].source, diag);
    candidate *c = el_grow(f->cand, &f->cand_cap, f->ncand + 1, sizeof *c, 64);
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    f->cand = c;
    c[f->ncand++] = (candidate){ { e->key, e->len, fan_in }, mark, f->nshares - mark };
    return EL_OK;
}

el_err el_plan_add_counted(el_plan *p, const el_plan_counter *const *targets, el_diag *diag)
{
    found f = { 0 };
    el_err err = EL_OK;
    for (size_t i = 0; !err && i < p->n; i++) {
        if (!targets[i])
            continue;
        size_t pos = 0;
        el_plan_entry e;
        while (!err && el_plan_counter_next(targets[i], &pos, &e)) {
            bool seen = false; /* decided with an earlier source */
            for (size_t j = 0; !seen && j < i; j++)
                seen = targets[j] && el_plan_counter_get(targets[j], e.key, e.len) > 0;
            if (!seen)
                err = consider(p, targets, i, &e, &f, diag);
        }
    }
    if (!err && f.ncand) /* qsort wants a non-NULL array, even empty */
        qsort(f.cand, f.ncand, sizeof *f.cand, candidate_cmp);
    for (size_t k = 0; !err && k < f.ncand; k++) {
        const candidate *c = &f.cand[k];
        const el_plan_source *s = &p->src[f.shares[c->first].source].pub;
        err = el_plan_add_hot(p, c->e.key, c->e.len,
                              el_shard_count(c->e.count, s->threshold, s->max_shards),
                              &f.shares[c->first], c->n, diag);
    }
    free(f.cand);
    free(f.shares);
    return err;
}

const el_plan_hot *el_plan_lookup(const el_plan *p, const char *key, size_t len)
{
    if (p->nhot == 0)
        return NULL;
    const slot *sl = keytab_get(&p->index, key, len);
    if (!sl || sl->val >= p->nhot)
        return NULL;
    return &p->hot[sl->val];
}

size_t el_plan_shards(const el_plan *p, const char *key, size_t len)
{
    const el_plan_hot *h = el_plan_lookup(p, key, len);
    return h ? h->shards : 1;
}

el_err el_plan_set_estimate(el_plan *p, const char *json)
{
    char *copy = strdup(json);
    if (!copy)
        return EL_ENOMEM;
    free(p->estimate);
    p->estimate = copy;
    return EL_OK;
}

const char *el_plan_estimate(const el_plan *p)
{
    return p->estimate;
}
