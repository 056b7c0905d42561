/*
 * counters.c - exact counter backfill: counting rows, then UpdateItem SET.
 *
 * DESIGN: counting happens on the reader threads, so the two tables (edge
 * fingerprints already counted, counter key -> count) are split into 64
 * stripes by hash, each behind its own mutex: two readers rarely want the
 * same stripe at once, and no thread-local maps need merging at the end.
 * An edge is first inserted into the fingerprint set; only when it was not
 * there do its counters grow, so "a duplicate row counts once" needs no
 * second pass. Counter keys are "PK\0SK\0attribute" in a per-stripe arena.
 *
 * Writing them is counters_write.c's.
 */
#include "pipeline/counters/counters.h"

#include <pthread.h>  /* stripe locks */
#include <stdbool.h>  /* bool */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, qsort */
#include <string.h>   /* memcmp, memcpy, strlen */

#include "formats/ddb_value.h"
#include "common/hash.h"      /* el_fnv1a64 */
#include "pipeline/rows/transform.h"
#include "common/vec.h"  /* el_grow */

#define STRIPES 64

typedef struct fp {
    uint64_t a, b;                /* {0,0} marks an empty slot */
} fp;

typedef struct centry {
    uint64_t hash;                /* 0 marks an empty slot */
    size_t off;                   /* key text in the stripe's arena */
    uint32_t len;                 /* key bytes, without the final NUL */
    uint64_t count;
} centry;

typedef struct stripe {
    pthread_mutex_t mu;
    fp *edges;
    size_t edge_cap, nedges;
    centry *ctr;
    size_t ctr_cap, nctr;
    char *arena;
    size_t arena_len, arena_cap;
    uint64_t dups;
} stripe;

struct el_counters {
    const el_mapping *m;
    stripe s[STRIPES];
};

/* ---- hashing ---- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void el_counters_fingerprint(const void *data, size_t len, uint64_t out[2])
{
    /* a: FNV-1a-64 finished with a mixer; b: a word-at-a-time multiply-mix
     * with another seed. Independent enough for non-adversarial keys. */
    const unsigned char *p = data;
    uint64_t a = 0xcbf29ce484222325ULL, b = 0x9e3779b97f4a7c15ULL ^ (uint64_t)len;
    for (size_t i = 0; i < len; i++) {
        a ^= p[i];
        a *= 0x100000001b3ULL;
    }
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        b = mix64(b ^ w) * 0xff51afd7ed558ccdULL;
    }
    uint64_t w = 0;
    for (size_t k = 0; i + k < len; k++)
        w |= (uint64_t)p[i + k] << (8 * k);
    b = mix64(b ^ w ^ 0xc4ceb9fe1a85ec53ULL);
    out[0] = mix64(a);
    out[1] = b;
}

/* ---- the tables ---- */

el_err el_counters_new(const el_mapping *m, el_counters **out)
{
    el_counters *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return EL_ENOMEM;
    c->m = m;
    for (size_t i = 0; i < STRIPES; i++)
        pthread_mutex_init(&c->s[i].mu, NULL);
    *out = c;
    return EL_OK;
}

void el_counters_free(el_counters *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < STRIPES; i++) {
        pthread_mutex_destroy(&c->s[i].mu);
        free(c->s[i].edges);
        free(c->s[i].ctr);
        free(c->s[i].arena);
    }
    free(c);
}

/* Inserts f; true when it was new. Caller holds the stripe's lock. */
static el_err edge_insert(stripe *s, fp f, bool *fresh)
{
    if ((s->nedges + 1) * 4 > s->edge_cap * 3) {
        size_t cap = s->edge_cap ? s->edge_cap * 2 : 1024;
        fp *v = calloc(cap, sizeof *v);
        if (!v)
            return EL_ENOMEM;
        for (size_t i = 0; i < s->edge_cap; i++) {
            fp e = s->edges[i];
            if (!e.a && !e.b)
                continue;
            size_t j = (size_t)(e.a >> 6) & (cap - 1);
            while (v[j].a || v[j].b)
                j = (j + 1) & (cap - 1);
            v[j] = e;
        }
        free(s->edges);
        s->edges = v;
        s->edge_cap = cap;
    }
    size_t j = (size_t)(f.a >> 6) & (s->edge_cap - 1);
    while (s->edges[j].a || s->edges[j].b) {
        if (s->edges[j].a == f.a && s->edges[j].b == f.b) {
            *fresh = false;
            return EL_OK;
        }
        j = (j + 1) & (s->edge_cap - 1);
    }
    s->edges[j] = f;
    s->nedges++;
    *fresh = true;
    return EL_OK;
}

/* The slot of key in s, or SIZE_MAX. */
static size_t ctr_find(const stripe *s, uint64_t h, const char *key, size_t len)
{
    if (!s->ctr_cap)
        return SIZE_MAX;
    size_t j = (size_t)(h >> 6) & (s->ctr_cap - 1);
    while (s->ctr[j].hash) {
        const centry *e = &s->ctr[j];
        if (e->hash == h && e->len == len && memcmp(s->arena + e->off, key, len) == 0)
            return j;
        j = (j + 1) & (s->ctr_cap - 1);
    }
    return SIZE_MAX;
}

static el_err ctr_add(stripe *s, uint64_t h, const char *key, size_t len, uint64_t n)
{
    size_t at = ctr_find(s, h, key, len);
    if (at != SIZE_MAX) {
        s->ctr[at].count += n;
        return EL_OK;
    }
    if ((s->nctr + 1) * 4 > s->ctr_cap * 3) {
        size_t cap = s->ctr_cap ? s->ctr_cap * 2 : 256;
        centry *v = calloc(cap, sizeof *v);
        if (!v)
            return EL_ENOMEM;
        for (size_t i = 0; i < s->ctr_cap; i++) {
            if (!s->ctr[i].hash)
                continue;
            size_t j = (size_t)(s->ctr[i].hash >> 6) & (cap - 1);
            while (v[j].hash)
                j = (j + 1) & (cap - 1);
            v[j] = s->ctr[i];
        }
        free(s->ctr);
        s->ctr = v;
        s->ctr_cap = cap;
    }
    char *arena = el_grow(s->arena, &s->arena_cap, s->arena_len + len + 1, 1, 4096);
    if (!arena)
        return EL_ENOMEM;
    s->arena = arena;
    memcpy(s->arena + s->arena_len, key, len);
    s->arena[s->arena_len + len] = '\0';
    size_t j = (size_t)(h >> 6) & (s->ctr_cap - 1);
    while (s->ctr[j].hash)
        j = (j + 1) & (s->ctr_cap - 1);
    s->ctr[j] = (centry){ .hash = h, .off = s->arena_len, .len = (uint32_t)len, .count = n };
    s->arena_len += len + 1;
    s->nctr++;
    return EL_OK;
}

static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = mix64(el_fnv1a64(key, len));
    return h ? h : 1;
}

/* Marks the edge counted; *fresh false when it was counted before. */
static el_err see_edge(el_counters *c, const char *key, size_t klen, bool *fresh)
{
    uint64_t f[2];
    el_counters_fingerprint(key, klen, f);
    fp e = { f[0], f[1] };
    if (!e.a && !e.b)
        e.b = 1;
    stripe *s = &c->s[e.a % STRIPES];
    pthread_mutex_lock(&s->mu);
    el_err err = edge_insert(s, e, fresh);
    if (!err && !*fresh)
        s->dups++;
    pthread_mutex_unlock(&s->mu);
    return err;
}

static el_err count_key(el_counters *c, const char *ckey, size_t len)
{
    uint64_t h = key_hash(ckey, len);
    stripe *s = &c->s[h % STRIPES];
    pthread_mutex_lock(&s->mu);
    el_err err = ctr_add(s, h, ckey, len, 1);
    pthread_mutex_unlock(&s->mu);
    return err;
}

el_err el_counters_add_keys(el_counters *c, const char *key, size_t klen,
                            const char *const *ckeys, const size_t *ckey_lens, size_t n)
{
    bool fresh;
    el_err err = see_edge(c, key, klen, &fresh);
    for (size_t i = 0; !err && fresh && i < n; i++)
        err = count_key(c, ckeys[i], ckey_lens[i]);
    return err;
}

el_err el_counter_render(const el_counter_spec *cs, const el_row *row, el_buf *out,
                         size_t *item_len, bool *skip, el_diag *diag)
{
    size_t mark = out->len, bad_pk, bad_sk;
    el_err err = el_template_render(cs->pk, row, out, &bad_pk);
    size_t pklen = out->len - mark;
    if (!err)
        err = el_buf_putc(out, '\0');
    if (!err)
        err = el_template_render(cs->sk, row, out, &bad_sk);
    size_t sklen = out->len - mark - pklen - 1;
    if (!err)
        err = el_buf_putc(out, '\0');
    if (!err)
        err = el_buf_puts(out, cs->attribute);
    if (err) {
        el_buf_truncate(out, mark);
        return el_diag_set(diag, err, "counter key too long (template '%s')",
                           el_template_text(cs->pk));
    }
    *skip = bad_pk != (size_t)-1 || bad_sk != (size_t)-1 || pklen == 0 || sklen == 0;
    *item_len = pklen + 1 + sklen;
    if (*skip) {
        el_buf_truncate(out, mark);
        return EL_OK;
    }
    if (pklen > EL_DDB_MAX_PK_BYTES || sklen > EL_DDB_MAX_SK_BYTES) {
        el_buf_truncate(out, mark);
        return el_diag_set(diag, EL_ELIMIT, "counter key over DynamoDB's key size limit "
                           "(template '%s')", el_template_text(cs->pk));
    }
    return EL_OK;
}

el_err el_counters_add_row(el_counters *c, const el_source *src, const el_row *row,
                           const char *key, size_t klen, el_buf *scratch, el_diag *diag)
{
    if (src->ncounters == 0)
        return EL_OK;
    bool fresh;
    el_err err = see_edge(c, key, klen, &fresh);
    if (err || !fresh)
        return err;
    for (size_t i = 0; i < src->ncounters; i++) {
        bool skip;
        size_t item_len;
        el_buf_reset(scratch);
        err = el_counter_render(&src->counters[i], row, scratch, &item_len, &skip, diag);
        if (err)
            return err;
        if (skip)
            continue; /* NULL/empty placeholder: this row adds to no such counter */
        err = count_key(c, scratch->data, scratch->len);
        if (err)
            return el_diag_set(diag, err, "out of memory counting counters");
    }
    return EL_OK;
}

/* The stripes' figures added up: the getters below, which run once the
 * adders are done (counters.h), so no stripe lock is taken. */
typedef struct totals {
    uint64_t edges, dups, counters;
} totals;

static totals sum_stripes(const el_counters *c)
{
    totals t = { 0, 0, 0 };
    for (size_t i = 0; i < STRIPES; i++) {
        t.edges += c->s[i].nedges;
        t.dups += c->s[i].dups;
        t.counters += c->s[i].nctr;
    }
    return t;
}

uint64_t el_counters_edges(const el_counters *c) { return sum_stripes(c).edges; }

uint64_t el_counters_duplicates(const el_counters *c) { return sum_stripes(c).dups; }

uint64_t el_counters_size(const el_counters *c) { return sum_stripes(c).counters; }

size_t el_counters_memory(const el_counters *c)
{
    size_t n = sizeof *c;
    for (size_t i = 0; i < STRIPES; i++)
        n += c->s[i].edge_cap * sizeof(fp) + c->s[i].ctr_cap * sizeof(centry) +
             c->s[i].arena_cap;
    return n;
}

uint64_t el_counters_get(const el_counters *c, const char *pk, const char *sk,
                         const char *attribute)
{
    size_t a = strlen(pk), b = strlen(sk), n = strlen(attribute);
    char *key = malloc(a + b + n + 2);
    if (!key)
        return 0;
    memcpy(key, pk, a + 1);
    memcpy(key + a + 1, sk, b + 1);
    memcpy(key + a + b + 2, attribute, n);
    size_t len = a + b + n + 2;
    uint64_t h = key_hash(key, len);
    const stripe *s = &c->s[h % STRIPES];
    size_t at = ctr_find(s, h, key, len);
    free(key);
    return at != SIZE_MAX ? s->ctr[at].count : 0;
}

/* ---- the list ---- */

static int cref_cmp(const void *x, const void *y)
{
    const el_counter_entry *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->key, b->key, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

el_err el_counters_list(const el_counters *c, el_counter_entry **out, size_t *n)
{
    *n = el_counters_size(c);
    *out = NULL;
    el_counter_entry *refs = calloc(*n ? *n : 1, sizeof *refs);
    if (!refs)
        return EL_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < STRIPES; i++) {
        const stripe *s = &c->s[i];
        for (size_t j = 0; j < s->ctr_cap; j++) {
            const centry *e = &s->ctr[j];
            if (!e->hash)
                continue;
            const char *key = s->arena + e->off;
            size_t pklen = strlen(key);
            size_t sklen = strlen(key + pklen + 1);
            refs[k++] = (el_counter_entry){ key, e->len, pklen + 1 + sklen, e->count };
        }
    }
    qsort(refs, *n, sizeof *refs, cref_cmp);
    *out = refs;
    return EL_OK;
}

/* ---- the tap: counting as a row loop observer ---- */

static el_err tap_observe(void *user, const el_source *src, const el_row *row, const char *key,
                          size_t key_len, el_diag *diag)
{
    el_counters_tap *tap = user;
    tap->rows++;
    return el_counters_add_row(tap->c, src, row, key, key_len, &tap->scratch, diag);
}

void el_counters_tap_init(el_counters_tap *tap, el_counters *c)
{
    tap->c = c;
    tap->rows = 0;
    el_buf_init(&tap->scratch, 1u << 20);
}

el_rowloop_observer el_counters_tap_observer(el_counters_tap *tap)
{
    el_rowloop_observer ob = { tap->c ? tap_observe : NULL, tap };
    return ob;
}

void el_counters_tap_free(el_counters_tap *tap)
{
    el_buf_free(&tap->scratch);
}
