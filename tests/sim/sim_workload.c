/*
 * sim_workload.c - skewed follow edges as items.
 *
 * DESIGN: edges are drawn, sorted by follower (a dump's primary-key
 * order), and a share of them repeated at a later place; then each row is
 * transformed into an item in 512-item chunks, as a reader would. The
 * partition keys' units are summed for the scenario's floor.
 */
#include "sim_workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h" /* el_rand_unit */
#include "common/hash.h"

#define PUT(call)                                                                          \
    do {                                                                                   \
        if (call)                                                                          \
            abort();                                                                       \
    } while (0)

typedef struct edge {
    uint32_t from, to;
    uint32_t size;
} edge;

typedef struct dup {
    size_t src, after;
} dup;

static int by_place(const void *a, const void *b)
{
    const dup *x = a, *y = b;
    return x->after < y->after ? -1 : x->after > y->after ? 1 : 0;
}

static int by_follower(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from ? 1 : 0;
}

/* ---- a map of units per partition key ---- */

typedef struct uslot {
    uint64_t key;
    double units;
} uslot;

typedef struct umap {
    uslot *s;
    size_t cap, used;
} umap;

static void umap_add(umap *m, uint64_t key, double units)
{
    key |= 1;
    if ((m->used + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 4096;
        uslot *n = calloc(ncap, sizeof *n);
        for (size_t i = 0; i < m->cap; i++)
            if (m->s[i].key) {
                size_t j = (size_t)(m->s[i].key * 0x9E3779B97F4A7C15ull >> 16) & (ncap - 1);
                while (n[j].key)
                    j = (j + 1) & (ncap - 1);
                n[j] = m->s[i];
            }
        free(m->s);
        m->s = n;
        m->cap = ncap;
    }
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 16) & (m->cap - 1);
    while (m->s[j].key && m->s[j].key != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->s[j].key) {
        m->s[j].key = key;
        m->used++;
    }
    m->s[j].units += units;
}

static double umap_max(const umap *m, uint64_t *which)
{
    double best = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->s[i].key && m->s[i].units > best) {
            best = m->s[i].units;
            *which = m->s[i].key;
        }
    return best;
}

/* ---- drawing ---- */

/* Index of the first cdf entry >= u. */
static uint32_t draw(const double *cdf, size_t n, double u)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

static uint32_t item_size(bool mixed, uint64_t *rng)
{
    if (!mixed)
        return 180 + (uint32_t)(40 * el_rand_unit(rng));
    return (uint32_t)(100.0 * pow(40960.0 / 100.0, el_rand_unit(rng)));
}

/* Shards of each target by fan-in (1: not sharded). */
static uint32_t *shard_counts(const sim_workload_cfg *c, const edge *e, size_t n)
{
    uint32_t *fan = calloc(c->users, sizeof *fan);
    for (size_t i = 0; i < n; i++)
        fan[e[i].to]++;
    for (size_t u = 0; u < c->users; u++) {
        uint32_t s = 1;
        if (c->shard_threshold && fan[u] >= c->shard_threshold) {
            s = (uint32_t)((fan[u] + c->shard_threshold - 1) / c->shard_threshold);
            if (s < 2)
                s = 2;
            if (c->max_shards && s > c->max_shards)
                s = (uint32_t)c->max_shards;
        }
        fan[u] = s;
    }
    return fan;
}

void sim_workload_make(const sim_workload_cfg *c, sim_workload *w)
{
    memset(w, 0, sizeof *w);
    uint64_t rng = c->seed ? c->seed : 7;
    double *cdf = malloc(c->users * sizeof *cdf);
    double sum = 0;
    for (size_t u = 0; u < c->users; u++)
        cdf[u] = (sum += 1.0 / pow((double)(u + 1), c->zipf_s));
    for (size_t u = 0; u < c->users; u++)
        cdf[u] /= sum;
    size_t ndup = (size_t)((double)c->edges * c->dup_share);
    size_t base = c->edges - ndup;
    edge *e = malloc(c->edges * sizeof *e);
    for (size_t i = 0; i < base; i++) {
        uint32_t rank = draw(cdf, c->users, el_rand_unit(&rng));
        e[i].from = (uint32_t)(el_rand_unit(&rng) * (double)c->users);
        e[i].to = rank;
        e[i].size = item_size(c->mixed_sizes, &rng);
    }
    qsort(e, base, sizeof *e, by_follower);
    if (c->hot_midway) /* the second half's hottest target is another key */
        for (size_t i = base / 2; i < base; i++)
            e[i].to = (uint32_t)((e[i].to + c->users / 3) % c->users);
    /* repeats: an earlier edge again, at a later place, with new content
     * (drawn as (source row, place after it), then merged in one pass) */
    dup *dups = malloc((ndup ? ndup : 1) * sizeof *dups);
    for (size_t d = 0; d < ndup; d++) {
        dups[d].src = (size_t)(el_rand_unit(&rng) * (double)base);
        dups[d].after = dups[d].src + (size_t)(el_rand_unit(&rng) * (double)(base - dups[d].src));
    }
    qsort(dups, ndup, sizeof *dups, by_place);
    edge *all = malloc(c->edges * sizeof *all);
    size_t k = 0, d = 0;
    for (size_t i = 0; i < base; i++) {
        all[k++] = e[i];
        for (; d < ndup && dups[d].after == i; d++) {
            all[k] = e[dups[d].src];
            all[k++].size = item_size(c->mixed_sizes, &rng);
        }
    }
    free(dups);
    free(e);
    e = all;
    uint32_t *shards = shard_counts(c, e, c->edges);
    umap pk = { 0 }, ipk = { 0 };
    el_chunk *ch = NULL;
    char json[512], key[128], ikey[96], isk[64];
    for (size_t i = 0; i < c->edges; i++) {
        if (!ch || ch->nitems == EL_CHUNK_ITEMS) {
            ch = el_chunk_new(0);
            if (!ch)
                abort();
            ch->seq = w->nchunks;
            w->chunks = realloc(w->chunks, (w->nchunks + 1) * sizeof *w->chunks);
            w->chunks[w->nchunks++] = ch;
        }
        const edge *x = &e[i];
        snprintf(isk, sizeof isk, "ACTOR#%u", x->from);
        if (shards[x->to] > 1)
            snprintf(ikey, sizeof ikey, "TARGET#%u#%u", x->to,
                     (unsigned)(el_fnv1a64(isk, strlen(isk)) % shards[x->to]));
        else
            snprintf(ikey, sizeof ikey, "TARGET#%u", x->to);
        int jl = snprintf(json, sizeof json,
                          "{\"PK\":{\"S\":\"ACTOR#%u\"},\"SK\":{\"S\":\"TARGET#%u\"},"
                          "\"GSI1PK\":{\"S\":\"%s\"},\"GSI1SK\":{\"S\":\"%s\"},"
                          "\"v\":{\"N\":\"%zu\"}}",
                          x->from, x->to, ikey, isk, i + 1);
        int kl = snprintf(key, sizeof key, "ACTOR#%u%cTARGET#%u", x->from, '\0', x->to);
        size_t jm = ch->json.len, km = ch->keys.len;
        PUT(el_buf_append(&ch->json, json, (size_t)jl));
        PUT(el_buf_append(&ch->keys, key, (size_t)kl));
        PUT(el_chunk_commit(ch, jm, km, x->size, i + 1, i * 100));
        el_item *it = &ch->items[ch->nitems - 1];
        it->indexed = 1;
        it->ipk_hash = el_fnv1a64(ikey, strlen(ikey));
        double u = (double)((x->size + 1023u) / 1024u);
        w->units_table += u;
        w->units_index += u;
        umap_add(&pk, it->pk_hash, u);
        umap_add(&ipk, it->ipk_hash, u);
    }
    w->nitems = c->edges;
    /* distinct keys: the base edges that are unique, by (from, to) */
    umap keys = { 0 };
    for (size_t i = 0; i < w->nchunks; i++)
        for (size_t j = 0; j < w->chunks[i]->nitems; j++)
            umap_add(&keys, w->chunks[i]->items[j].hash, 1);
    w->nkeys = keys.used;
    uint64_t which = 0;
    double mt = umap_max(&pk, &which), mi = umap_max(&ipk, &which);
    w->max_key_units = mt > mi ? mt : mi;
    if (mi >= mt) {
        /* name the hottest index key for the report */
        for (size_t i = 0; i < c->edges && !w->hottest[0]; i++) {
            const el_item *it = &w->chunks[i / EL_CHUNK_ITEMS]->items[i % EL_CHUNK_ITEMS];
            if ((it->ipk_hash | 1) == which) {
                const char *j = strstr(el_item_json(it), "\"GSI1PK\":{\"S\":\"");
                if (j)
                    sscanf(j + 15, "%63[^\"]", w->hottest);
            }
        }
    }
    free(keys.s);
    free(pk.s);
    free(ipk.s);
    free(shards);
    free(e);
    free(cdf);
}

void sim_workload_free(sim_workload *w)
{
    for (size_t i = 0; i < w->nchunks; i++)
        el_chunk_free(w->chunks[i]);
    free(w->chunks);
    memset(w, 0, sizeof *w);
}
