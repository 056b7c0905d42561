/*
 * shard_plan.c - the shard plan: which keys are hot, and their shards.
 *
 * DESIGN: the plan keeps its hot keys in a key counter used as a map
 * (key -> position in the hot list + 1; 0 is "not hot") for its per-row
 * lookups: one table for the whole plan, because a hot key is the
 * index's, whichever source writes it. Its file is shard_plan_file.c's.
 *
 * Counted hot keys (el_plan_add_counted) are found without a merged
 * counter: each source's counter is walked, and a key's fan-in is the sum
 * of its count in every counter (a probe each). A merged counter would
 * hold every distinct key a second time, which for a billion-row dump is
 * gigabytes; the probes cost a few seconds at most.
 */
#include "pipeline/sharding/shard_plan.h"

#include <inttypes.h>       /* PRIu64 */
#include <stdbool.h>        /* bool */
#include <stdio.h>          /* snprintf */
#include <stdlib.h>         /* malloc, qsort */
#include <string.h>         /* memcmp, strdup */

#include "common/utf8.h"
#include "common/vec.h"     /* el_grow */
#include "pipeline/sharding/shard.h" /* el_shard_count, EL_MAX_MAX_SHARDS */

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
    el_key_counter *index;     /* key -> position in hot + 1 */
    char *estimate;            /* JSON object written as "estimate", or NULL */
};

el_plan *el_plan_new(void)
{
    el_plan *p = calloc(1, sizeof(el_plan));
    if (p && !(p->index = el_key_counter_new())) {
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
    el_key_counter_free(p->index);
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
    if (len > EL_KEY_MAX_LEN)
        return el_diag_set(diag, EL_EUSAGE, "\"key\" is longer than %u bytes", EL_KEY_MAX_LEN);
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
    if (el_key_counter_get(p->index, key, len))
        return el_diag_set(diag, EL_EUSAGE, "\"key\" '%.*s' is listed twice", KEY_SHOWN(len),
                           key);
    char *copy = NULL;
    el_plan_share *sh = NULL;
    el_plan_hot *v = el_grow(p->hot, &p->hot_cap, p->nhot + 1, sizeof *v, 16);
    if (v)
        p->hot = v;
    if (!v || !(copy = malloc(len + 1)) || !(sh = malloc(nshares * sizeof *sh)) ||
        el_key_counter_add_n(p->index, key, len, (uint64_t)p->nhot + 1)) {
        free(copy);
        free(sh);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    memcpy(copy, key, len);
    copy[len] = '\0';
    memcpy(sh, shares, nshares * sizeof *sh);
    p->hot[p->nhot++] = (el_plan_hot){ copy, len, fan_in, shards, sh, nshares };
    return EL_OK;
}

/* A key found hot while counting: the key (in its counter's arena) and its
 * fan-in over every source, and where its shares are in found.shares. */
typedef struct candidate {
    el_key_count e;
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
    return el_key_count_cmp(&((const candidate *)a)->e, &((const candidate *)b)->e);
}

/* Decides key e of source `from`, the first counter that holds it (the
 * later ones are summed in): appended to f when it is hot. */
static el_err consider(el_plan *p, const el_key_counter *const *targets, size_t from,
                       const el_key_count *e, found *f, el_diag *diag)
{
    size_t mark = f->nshares, lowest = from;
    uint64_t fan_in = 0;
    bool agree = true;
    for (size_t j = from; j < p->n; j++) {
        uint64_t n = j == from ? e->count
                               : targets[j] ? el_key_counter_get(targets[j], e->key, e->len) : 0;
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

el_err el_plan_add_counted(el_plan *p, const el_key_counter *const *targets, el_diag *diag)
{
    found f = { 0 };
    el_err err = EL_OK;
    for (size_t i = 0; !err && i < p->n; i++) {
        if (!targets[i])
            continue;
        size_t pos = 0;
        el_key_count e;
        while (!err && el_key_counter_next(targets[i], &pos, &e)) {
            bool seen = false; /* decided with an earlier source */
            for (size_t j = 0; !seen && j < i; j++)
                seen = targets[j] && el_key_counter_get(targets[j], e.key, e.len) > 0;
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
    uint64_t at = el_key_counter_get(p->index, key, len);
    if (at == 0 || at > p->nhot)
        return NULL;
    return &p->hot[at - 1];
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
