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
 * per-row lookups. Its file is JSON written by hand (the values are
 * integers and already valid UTF-8 keys) and read with yajl's tree API,
 * then checked field by field: a plan decides where items go, so a damaged
 * one must stop the load, not shard it differently.
 */
#include "pipeline/plan.h"

#include <errno.h>          /* errno for file errors */
#include <fcntl.h>          /* open for the directory fsync */
#include <inttypes.h>       /* PRIu64 */
#include <stdbool.h>        /* bool */
#include <stdio.h>          /* snprintf, fopen */
#include <stdlib.h>         /* malloc, qsort */
#include <string.h>         /* memcmp, strerror */
#include <unistd.h>         /* write, fsync, close, unlink */
#include <yajl/yajl_tree.h> /* plan files are read whole */

#include "common/json_guard.h"
#include "common/buf.h"
#include "common/file.h"
#include "common/utf8.h"
#include "formats/ddb_value.h"
#include "pipeline/chunk.h"
#include "pipeline/mapping.h"
#include "pipeline/shard.h"
#include "common/vec.h"  /* el_grow */

/* ---- the table: key -> 64-bit value ---- */

#define BLOCK_SHIFT 20
#define BLOCK_SIZE ((size_t)1 << BLOCK_SHIFT)
#define INITIAL_SLOTS 1024u
#define TAG_BITS 16
#define PLAN_FILE_MAX ((size_t)1 << 30)

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

static el_err keytab_grow(keytab *t)
{
    size_t cap = t->cap * 2;
    slot *ns = calloc(cap, sizeof *ns);
    if (!ns)
        return EL_ENOMEM;
    slot *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = ns;
    t->cap = cap;
    t->shift--;
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
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].ref == 0)
            continue;
        size_t len;
        const char *k = arena_key(t, t->slots[i].ref, &len);
        el_err err = el_plan_counter_add_n(into, k, len, t->slots[i].val);
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
    el_plan_source pub;   /* pub.hot points at hot */
    char *name;
    el_plan_hot *hot;
    size_t hot_cap;
    keytab index;         /* key -> position in hot */
} plan_source;

struct el_plan {
    plan_source *src;
    size_t n, cap;
    char *estimate;            /* JSON object written as "estimate", or NULL */
};

el_plan *el_plan_new(void)
{
    return calloc(1, sizeof(el_plan));
}

void el_plan_free(el_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++) {
        plan_source *s = &p->src[i];
        free(s->name);
        for (size_t j = 0; j < s->pub.nhot; j++)
            free((char *)s->hot[j].key);
        free(s->hot);
        keytab_free(&s->index);
    }
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
    if (!s->name || keytab_init(&s->index)) {
        free(s->name);
        keytab_free(&s->index);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s->pub.name = s->name;
    s->pub.rows = rows;
    s->pub.threshold = threshold;
    s->pub.max_shards = threshold ? max_shards : 0;
    if (index)
        *index = p->n;
    p->n++;
    return EL_OK;
}

el_err el_plan_add_hot(el_plan *p, size_t source, const char *key, size_t len, uint64_t fan_in,
                       size_t shards, el_diag *diag)
{
    if (source >= p->n)
        return el_diag_set(diag, EL_EINTERNAL, "no plan source %zu", source);
    plan_source *s = &p->src[source];
    el_plan_source *ps = &s->pub;
    size_t bad;
    if (ps->threshold == 0)
        return el_diag_set(diag, EL_EUSAGE, "hot keys given but \"threshold\" is 0 (hot "
                           "sharding off)");
    if (len == 0)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is empty");
    if (len > EL_PLAN_MAX_KEY)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is longer than %u bytes", EL_PLAN_MAX_KEY);
    if (!el_utf8_valid(key, len, &bad) || memchr(key, '\0', len))
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is not valid UTF-8 text");
    if (fan_in < ps->threshold || fan_in > ps->rows)
        return el_diag_set(diag, EL_EUSAGE, "\"fan_in\" %" PRIu64 " of '%.*s' is not between "
                           "the threshold %" PRIu64 " and the source's rows %" PRIu64, fan_in,
                           (int)(len > 200 ? 200 : len), key, ps->threshold, ps->rows);
    if (shards < 2 || shards > ps->max_shards)
        return el_diag_set(diag, EL_EUSAGE, "\"shards\" %zu of '%.*s' is not from 2 to "
                           "max_shards %zu", shards, (int)(len > 200 ? 200 : len), key,
                           ps->max_shards);
    slot *sl;
    bool added;
    el_err err = keytab_upsert(&s->index, key, len, &sl, &added);
    if (err)
        return el_diag_set(diag, err, "out of memory");
    if (!added)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" '%.*s' is listed twice",
                           (int)(len > 200 ? 200 : len), key);
    char *copy = NULL;
    el_plan_hot *v = el_grow(s->hot, &s->hot_cap, ps->nhot + 1, sizeof *v, 16);
    if (v) {
        s->hot = v;
        ps->hot = v;
    }
    if (ps->nhot < s->hot_cap && (copy = malloc(len + 1))) {
        memcpy(copy, key, len);
        copy[len] = '\0';
    }
    if (!copy) {
        /* the table keeps the key but the entry is never used: forget it */
        sl->val = UINT64_MAX;
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    sl->val = ps->nhot;
    s->hot[ps->nhot] = (el_plan_hot){ copy, len, fan_in, shards };
    ps->nhot++;
    return EL_OK;
}

el_err el_plan_add_counted(el_plan *p, size_t source, const el_plan_counter *targets,
                           el_diag *diag)
{
    if (source >= p->n)
        return el_diag_set(diag, EL_EINTERNAL, "no plan source %zu", source);
    const el_plan_source *ps = &p->src[source].pub;
    if (ps->threshold == 0)
        return EL_OK;
    el_plan_entry *v;
    size_t n;
    el_err err = el_plan_counter_at_least(targets, ps->threshold, &v, &n);
    if (err)
        return el_diag_set(diag, err, "out of memory");
    for (size_t i = 0; !err && i < n; i++)
        err = el_plan_add_hot(p, source, v[i].key, v[i].len, v[i].count,
                              el_shard_count(v[i].count, ps->threshold, ps->max_shards), diag);
    free(v);
    return err;
}

const el_plan_hot *el_plan_lookup(const el_plan *p, size_t source, const char *key, size_t len)
{
    if (source >= p->n || p->src[source].pub.nhot == 0)
        return NULL;
    const plan_source *s = &p->src[source];
    const slot *sl = keytab_get(&s->index, key, len);
    if (!sl || sl->val >= s->pub.nhot)
        return NULL;
    return &s->hot[sl->val];
}

size_t el_plan_shards(const el_plan *p, size_t source, const char *key, size_t len)
{
    const el_plan_hot *h = el_plan_lookup(p, source, key, len);
    return h ? h->shards : 1;
}

/* ---- the file ---- */

el_err el_plan_set_estimate(el_plan *p, const char *json)
{
    char *copy = strdup(json);
    if (!copy)
        return EL_ENOMEM;
    free(p->estimate);
    p->estimate = copy;
    return EL_OK;
}

char *el_plan_to_json(const el_plan *p)
{
    el_buf b;
    el_buf_init(&b, PLAN_FILE_MAX);
    el_err err = el_buf_puts(&b, "{\"version\":1,\"sources\":[");
    for (size_t i = 0; !err && i < p->n; i++) {
        const el_plan_source *s = &p->src[i].pub;
        err = el_buf_puts(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
        if (!err)
            err = el_json_put_string(&b, s->name, strlen(s->name));
        if (!err)
            err = el_buf_printf(&b, ",\"rows\":%" PRIu64 ",\"threshold\":%" PRIu64
                                ",\"max_shards\":%zu,\"hot\":[", s->rows, s->threshold,
                                s->max_shards);
        for (size_t j = 0; !err && j < s->nhot; j++) {
            const el_plan_hot *h = &s->hot[j];
            err = el_buf_puts(&b, j ? ",\n  {\"key\":" : "\n  {\"key\":");
            if (!err)
                err = el_json_put_string(&b, h->key, h->len);
            if (!err)
                err = el_buf_printf(&b, ",\"fan_in\":%" PRIu64 ",\"shards\":%zu}", h->fan_in,
                                    h->shards);
        }
        if (!err)
            err = el_buf_puts(&b, "]}");
    }
    if (!err)
        err = el_buf_puts(&b, "\n]");
    if (!err && p->estimate) {
        err = el_buf_puts(&b, ",\n\"estimate\":");
        if (!err)
            err = el_buf_puts(&b, p->estimate);
    }
    if (!err)
        err = el_buf_puts(&b, "}\n");
    if (err) {
        el_buf_free(&b);
        return NULL;
    }
    return el_buf_take(&b);
}

static el_err write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return EL_EIO;
        data += w;
        len -= (size_t)w;
    }
    return EL_OK;
}

el_err el_plan_write(const el_plan *p, const char *path, el_diag *diag)
{
    char *json = el_plan_to_json(p);
    if (!json)
        return el_diag_set(diag, EL_ENOMEM, "out of memory rendering the plan");
    /* not mkstemp: its 0600 would make the plan unreadable to others,
     * where a plain file gets 0666 less the umask */
    el_buf tmp;
    el_buf_init(&tmp, 8192);
    int fd = -1;
    errno = EEXIST;
    for (unsigned n = 0; fd < 0 && errno == EEXIST && n < 100; n++) {
        el_buf_reset(&tmp);
        if (el_buf_printf(&tmp, "%s.tmp.%ld.%u", path, (long)getpid(), n)) {
            free(json);
            el_buf_free(&tmp);
            return el_diag_set(diag, EL_EIO, "cannot write plan %s: path too long", path);
        }
        fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        int e = errno;
        free(json);
        el_buf_free(&tmp);
        return el_diag_set(diag, EL_EIO, "cannot create %s.tmp.*: %s", path, strerror(e));
    }
    el_err err = write_all(fd, json, strlen(json));
    int e = errno;
    if (!err && fsync(fd) != 0) {
        err = EL_EIO;
        e = errno;
    }
    if (close(fd) != 0 && !err) {
        err = EL_EIO;
        e = errno;
    }
    if (!err && rename(tmp.data, path) != 0) {
        err = EL_EIO;
        e = errno;
    }
    free(json);
    if (err) {
        unlink(tmp.data);
        el_buf_free(&tmp);
        return el_diag_set(diag, EL_EIO, "cannot write plan %s: %s", path, strerror(e));
    }
    el_buf_free(&tmp);
    /* make the rename itself durable */
    const char *slash = strrchr(path, '/');
    el_buf dir;
    el_buf_init(&dir, 8192);
    if (el_buf_append(&dir, slash ? path : ".", slash ? (size_t)(slash - path) + 1 : 1) ==
        EL_OK) {
        int dfd = open(dir.data, O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    el_buf_free(&dir);
    return EL_OK;
}

/* ---- reading ---- */

/* An unsigned integer field; false when v is not one. */
static bool get_uint(yajl_val v, uint64_t *out)
{
    if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
        return false;
    *out = (uint64_t)YAJL_GET_INTEGER(v);
    return true;
}

static el_err parse_hot_entry(el_plan *p, size_t si, yajl_val h, size_t j, el_diag *diag)
{
    const char *name = p->src[si].name;
    if (!YAJL_IS_OBJECT(h))
        return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: must be an object "
                           "{\"key\", \"fan_in\", \"shards\"}", name, j);
    const char *key = NULL;
    uint64_t fan_in = 0, shards = 0;
    bool have_fan_in = false, have_shards = false;
    for (size_t i = 0; i < h->u.object.len; i++) {
        const char *k = h->u.object.keys[i];
        yajl_val v = h->u.object.values[i];
        if (strcmp(k, "key") == 0) {
            if (!YAJL_IS_STRING(v))
                return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: \"key\" must be a "
                                   "string", name, j);
            key = YAJL_GET_STRING(v);
        } else if (strcmp(k, "fan_in") == 0) {
            if (!(have_fan_in = get_uint(v, &fan_in)))
                return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: \"fan_in\" must be "
                                   "a non-negative integer", name, j);
        } else if (strcmp(k, "shards") == 0) {
            if (!(have_shards = get_uint(v, &shards)))
                return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: \"shards\" must be "
                                   "a non-negative integer", name, j);
        } else {
            return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: unknown key \"%s\" "
                               "(expected key, fan_in, shards)", name, j, k);
        }
    }
    if (!key || !have_fan_in || !have_shards)
        return el_diag_set(diag, EL_EUSAGE, "source '%s', hot[%zu]: needs \"%s\"", name, j,
                           !key ? "key" : !have_fan_in ? "fan_in" : "shards");
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_add_hot(p, si, key, strlen(key), fan_in,
                                 shards > SIZE_MAX ? SIZE_MAX : (size_t)shards, &d);
    if (err)
        return el_diag_set(diag, err, "source '%s', hot[%zu]: %s", name, j, d.msg);
    return EL_OK;
}

static el_err parse_source(el_plan *p, yajl_val v, size_t i, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(v))
        return el_diag_set(diag, EL_EUSAGE, "sources[%zu] must be an object", i);
    const char *name = NULL;
    uint64_t f[3] = { 0, 0, 0 }; /* rows, threshold, max_shards */
    bool have[3] = { false, false, false };
    static const char *const fields[3] = { "rows", "threshold", "max_shards" };
    yajl_val hot = NULL;
    for (size_t k = 0; k < v->u.object.len; k++) {
        const char *key = v->u.object.keys[k];
        yajl_val x = v->u.object.values[k];
        size_t fi = 3;
        for (size_t q = 0; q < 3; q++)
            if (strcmp(key, fields[q]) == 0)
                fi = q;
        if (strcmp(key, "name") == 0) {
            if (!YAJL_IS_STRING(x) || !YAJL_GET_STRING(x)[0])
                return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: \"name\" must be a "
                                   "non-empty string", i);
            name = YAJL_GET_STRING(x);
        } else if (fi < 3) {
            if (!(have[fi] = get_uint(x, &f[fi])))
                return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: \"%s\" must be a "
                                   "non-negative integer", i, fields[fi]);
        } else if (strcmp(key, "hot") == 0) {
            if (!YAJL_IS_ARRAY(x))
                return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: \"hot\" must be a list", i);
            hot = x;
        } else {
            return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: unknown key \"%s\" (expected "
                               "name, rows, threshold, max_shards, hot)", i, key);
        }
    }
    if (!name)
        return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: needs \"name\"", i);
    for (size_t q = 0; q < 3; q++)
        if (!have[q])
            return el_diag_set(diag, EL_EUSAGE, "source '%s': needs \"%s\"", name, fields[q]);
    if (!hot)
        return el_diag_set(diag, EL_EUSAGE, "source '%s': needs \"hot\"", name);
    if (f[1] == 0 && f[2] != 0)
        return el_diag_set(diag, EL_EUSAGE, "source '%s': \"max_shards\" must be 0 when "
                           "\"threshold\" is 0 (hot sharding off)", name);
    size_t si;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_add_source(p, name, f[0], f[1],
                                    f[2] > EL_MAX_MAX_SHARDS ? 0 : (size_t)f[2], &si, &d);
    if (err)
        return el_diag_set(diag, err, "%s", d.msg);
    for (size_t j = 0; !err && j < hot->u.array.len; j++)
        err = parse_hot_entry(p, si, hot->u.array.values[j], j, diag);
    return err;
}

el_err el_plan_parse(const char *json, size_t len, el_plan **out, el_diag *diag)
{
    *out = NULL;
    /* yajl's tree cuts strings at a NUL: a key "a\u0000b" would load as "a" */
    if (strstr(json, "\\u0000"))
        return el_diag_set(diag, EL_EUSAGE, "a string holds \\u0000 (NUL), which no key "
                           "may");
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(json, len, EL_JSON_MAX_DEPTH, 0, &g))
        return el_diag_set(diag, EL_EUSAGE, "plan refused: %s", g.msg);
    char errbuf[512];
    yajl_val root = yajl_tree_parse(json, errbuf, sizeof errbuf);
    if (!root) {
        char *nl = strchr(errbuf, '\n');
        if (nl)
            *nl = '\0';
        return el_diag_set(diag, EL_EUSAGE, "not valid JSON: %s", errbuf);
    }
    el_plan *p = el_plan_new();
    el_err err = p ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    bool have_version = false, have_sources = false;
    if (!err && !YAJL_IS_OBJECT(root))
        err = el_diag_set(diag, EL_EUSAGE, "a plan must be a JSON object");
    for (size_t i = 0; !err && i < root->u.object.len; i++) {
        const char *k = root->u.object.keys[i];
        yajl_val v = root->u.object.values[i];
        if (strcmp(k, "version") == 0) {
            uint64_t ver;
            if (!get_uint(v, &ver) || ver != 1)
                err = el_diag_set(diag, EL_EUSAGE, "unsupported plan \"version\" (this "
                                  "edgeload reads version 1)");
            have_version = true;
        } else if (strcmp(k, "sources") == 0) {
            if (!YAJL_IS_ARRAY(v)) {
                err = el_diag_set(diag, EL_EUSAGE, "\"sources\" must be a list");
                break;
            }
            have_sources = true;
            for (size_t j = 0; !err && j < v->u.array.len; j++)
                err = parse_source(p, v->u.array.values[j], j, diag);
        } else if (strcmp(k, "estimate") == 0) {
            /* what plan estimated, for people and scripts: not read back */
            if (!YAJL_IS_OBJECT(v))
                err = el_diag_set(diag, EL_EUSAGE, "\"estimate\" must be an object");
        } else {
            err = el_diag_set(diag, EL_EUSAGE, "unknown key \"%s\" (expected version, "
                              "sources, estimate)", k);
        }
    }
    if (!err && !have_version)
        err = el_diag_set(diag, EL_EUSAGE, "no \"version\": not an edgeload plan");
    if (!err && !have_sources)
        err = el_diag_set(diag, EL_EUSAGE, "no \"sources\"");
    yajl_tree_free(root);
    if (err) {
        el_plan_free(p);
        return err;
    }
    *out = p;
    return EL_OK;
}

el_err el_plan_load(const char *path, el_plan **out, el_diag *diag)
{
    *out = NULL;
    el_buf b;
    el_buf_init(&b, PLAN_FILE_MAX);
    int errnum;
    el_err err = el_read_file(path, &b, &errnum);
    if (err) {
        el_buf_free(&b);
        if (err == EL_EIO)
            return el_diag_set(diag, EL_EIO, "cannot open plan %s: %s", path, strerror(errnum));
        return el_diag_set(diag, EL_EUSAGE, "cannot read plan %s: larger than 1 GB", path);
    }
    if (memchr(el_buf_str(&b), '\0', b.len)) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_EUSAGE, "plan %s: not a JSON text (holds a NUL byte)",
                           path);
    }
    el_diag inner;
    el_diag_clear(&inner);
    err = el_plan_parse(el_buf_str(&b), b.len, out, &inner);
    if (err)
        el_diag_set(diag, err, "plan %s: %s", path, inner.msg);
    el_buf_free(&b);
    return err;
}
