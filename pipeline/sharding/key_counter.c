/*
 * key_counter.c - exact counting of distinct keys.
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
 */
#include "pipeline/sharding/key_counter.h"

#include <stdbool.h>        /* bool */
#include <stdlib.h>         /* malloc, qsort */
#include <string.h>         /* memcmp */

#include "common/vec.h"     /* el_grow */
#include "pipeline/flow/chunk.h" /* el_fnv1a64 */

/* ---- the table: key -> 64-bit value ---- */

#define BLOCK_SHIFT 20
#define BLOCK_SIZE ((size_t)1 << BLOCK_SHIFT)
#define INITIAL_SLOTS 1024u
#define TAG_BITS 16

typedef struct slot {
    uint64_t val;  /* the count */
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
    if (len > EL_KEY_MAX_LEN)
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
    if (len > EL_KEY_MAX_LEN || !t->slots)
        return NULL;
    const slot *s = keytab_find(t, key, len, key_hash(key, len));
    return s->ref ? s : NULL;
}

/* ---- the counter ---- */

struct el_key_counter {
    keytab tab;
    uint64_t total;
    size_t last;     /* slot of the last key added + 1 (0: none): dumps are
                        sorted by PK, so the index sort key repeats in runs */
    size_t last_cap; /* table size when last was set (a growth moves slots) */
};

el_key_counter *el_key_counter_new(void)
{
    el_key_counter *c = calloc(1, sizeof *c);
    if (!c || keytab_init(&c->tab)) {
        el_key_counter_free(c);
        return NULL;
    }
    return c;
}

void el_key_counter_free(el_key_counter *c)
{
    if (!c)
        return;
    keytab_free(&c->tab);
    free(c);
}

el_err el_key_counter_add_n(el_key_counter *c, const char *key, size_t len, uint64_t n)
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

el_err el_key_counter_add(el_key_counter *c, const char *key, size_t len)
{
    return el_key_counter_add_n(c, key, len, 1);
}

el_err el_key_counter_merge(el_key_counter *into, const el_key_counter *from)
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
        err = el_key_counter_add_n(into, k, len, t->slots[i].val);
        if (err)
            return err;
    }
    return EL_OK;
}

uint64_t el_key_counter_get(const el_key_counter *c, const char *key, size_t len)
{
    const slot *s = keytab_get(&c->tab, key, len);
    return s ? s->val : 0;
}

size_t el_key_counter_distinct(const el_key_counter *c)
{
    return c->tab.n;
}

uint64_t el_key_counter_total(const el_key_counter *c)
{
    return c->total;
}

size_t el_key_counter_memory(const el_key_counter *c)
{
    const keytab *t = &c->tab;
    return sizeof *c + t->cap * sizeof(slot) + t->nblocks * BLOCK_SIZE +
           t->blocks_cap * sizeof(char *);
}

int el_key_count_cmp(const el_key_count *a, const el_key_count *b)
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
    return el_key_count_cmp(a, b);
}

size_t el_key_counter_top(const el_key_counter *c, size_t k, el_key_count *out)
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
        el_key_count e;
        e.key = arena_key(t, s->ref, &e.len);
        e.count = s->val;
        if (n == k && el_key_count_cmp(&e, &out[k - 1]) >= 0)
            continue;
        size_t j = n < k ? n++ : k - 1;
        while (j > 0 && el_key_count_cmp(&e, &out[j - 1]) < 0) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = e;
    }
    return n;
}

el_err el_key_counter_at_least(const el_key_counter *c, uint64_t min, el_key_count **out,
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
    el_key_count *v = malloc(cnt * sizeof *v);
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

bool el_key_counter_next(const el_key_counter *c, size_t *pos, el_key_count *out)
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

void el_key_counter_histogram(const el_key_counter *c, uint64_t hist[EL_KEY_HIST_BUCKETS])
{
    const keytab *t = &c->tab;
    memset(hist, 0, EL_KEY_HIST_BUCKETS * sizeof *hist);
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t v = t->slots[i].val;
        if (t->slots[i].ref != 0 && v > 0)
            hist[63 - __builtin_clzll(v)]++;
    }
}
