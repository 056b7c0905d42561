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
 * Writing happens after every item is acknowledged (the loader's promise:
 * entities, edges, then counters, so an entity Put never lands after its
 * counter was set). The counters are sorted by key so all attributes of one
 * counter item go out in one UpdateItem; requests run on a curl multi handle
 * like verify.c's BatchGetItem loop, each slot resending its own request
 * after a backoff.
 */
#include "pipeline/counters.h"

#include <pthread.h>  /* stripe locks */
#include <stdbool.h>  /* bool */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, qsort */
#include <string.h>   /* memcmp, memcpy, strlen */
#include <yajl/yajl_tree.h> /* ConsumedCapacity of the answers */

#include "dynamo/ddb_errors.h"  /* one line for a refusal */
#include "formats/ddb_value.h"
#include "common/backoff.h"
#include "common/hash.h"      /* el_fnv1a64 */
#include "common/clock.h"     /* el_now_ms */
#include "dynamo/ratectl.h"
#include "pipeline/transform.h"
#include "common/vec.h"  /* el_grow */

#define STRIPES 64
#define MAX_ATTRS_PER_UPDATE 64   /* attributes of one counter item in one UpdateItem */

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

uint64_t el_counters_edges(const el_counters *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < STRIPES; i++)
        n += c->s[i].nedges;
    return n;
}

uint64_t el_counters_duplicates(const el_counters *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < STRIPES; i++)
        n += c->s[i].dups;
    return n;
}

uint64_t el_counters_size(const el_counters *c)
{
    uint64_t n = 0;
    for (size_t i = 0; i < STRIPES; i++)
        n += c->s[i].nctr;
    return n;
}

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

/* ---- writing ---- */

typedef el_counter_entry cref;

static int cref_cmp(const void *x, const void *y)
{
    const cref *a = x, *b = y;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->key, b->key, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

typedef struct slot {
    el_ddb_req *req;              /* NULL: free */
    size_t first, n;              /* counters refs[first .. first+n) */
    unsigned attempt;
    double not_before;
    double first_failure;
    bool on_wire;
} slot;

typedef struct wctx {
    const el_counters_write_opts *o;
    el_counters_stats *st;
    cref *refs;
    size_t nrefs;
    el_buf body;
    el_rate rate;
    uint64_t rng;
    el_err refused_err;
    el_diag refused_diag;
} wctx;

static el_err build_update(wctx *w, size_t first, size_t n)
{
    el_buf *b = &w->body;
    const cref *r = &w->refs[first];
    const char *pk = r->key;
    size_t pklen = strlen(pk);
    const char *sk = pk + pklen + 1;
    size_t sklen = r->item_len - pklen - 1;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"TableName\":");
    err = err ? err : el_json_put_string(b, w->o->table, strlen(w->o->table));
    err = err ? err : el_buf_puts(b, ",\"Key\":{");
    err = err ? err : el_json_put_string(b, w->o->pk_attr, strlen(w->o->pk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, pk, pklen);
    err = err ? err : el_buf_puts(b, "},");
    err = err ? err : el_json_put_string(b, w->o->sk_attr, strlen(w->o->sk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, sk, sklen);
    err = err ? err : el_buf_puts(b, "}},\"UpdateExpression\":\"SET ");
    for (size_t i = 0; !err && i < n; i++)
        err = el_buf_printf(b, "%s#a%zu = :n%zu", i ? ", " : "", i, i);
    err = err ? err : el_buf_puts(b, "\",\"ExpressionAttributeNames\":{");
    for (size_t i = 0; !err && i < n; i++) {
        const char *attr = r[i].key + r[i].item_len + 1;
        err = el_buf_printf(b, "%s\"#a%zu\":", i ? "," : "", i);
        err = err ? err : el_json_put_string(b, attr, r[i].len - r[i].item_len - 1);
    }
    err = err ? err : el_buf_puts(b, "},\"ExpressionAttributeValues\":{");
    for (size_t i = 0; !err && i < n; i++)
        err = el_buf_printf(b, "%s\":n%zu\":{\"N\":\"%llu\"}", i ? "," : "", i,
                            (unsigned long long)r[i].count);
    err = err ? err : el_buf_puts(b, "},\"ReturnConsumedCapacity\":\"TOTAL\"}");
    return err;
}

static double consumed_units(const char *body, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, body, len);
    copy[len] = '\0';
    yajl_val root = yajl_tree_parse(copy, NULL, 0);
    free(copy);
    double units = 0;
    yajl_val v = root ? yajl_tree_get(root, (const char *[]){ "ConsumedCapacity",
                                                              "CapacityUnits", NULL },
                                      yajl_t_number)
                      : NULL;
    if (v)
        units = YAJL_GET_DOUBLE(v);
    yajl_tree_free(root);
    return units;
}

static bool stopped(const wctx *w)
{
    return w->o->stop && *w->o->stop;
}

/* A finished UpdateItem: done, refused, or to be resent. EL_OK unless the
 * run must stop (diag says why). */
static el_err on_update_done(wctx *w, slot *s, CURLcode code, el_diag *diag)
{
    el_ddb_result res;
    el_ddb_req_finish(s->req, code, &res);
    double now = el_now_ms();
    switch (res.outcome) {
    case EL_DDB_SUCCESS: {
        size_t len;
        const char *resp = el_ddb_req_response(s->req, &len);
        double units = consumed_units(resp, len);
        w->st->wcu_consumed += units;
        el_rate_settle(&w->rate, 1.0, units);
        el_rate_on_success(&w->rate);
        w->st->updates++;
        w->st->counters += s->n;
        el_ddb_req_free(s->req);
        s->req = NULL;
        return EL_OK;
    }
    case EL_DDB_THROTTLED:
        w->st->throttled++;
        w->st->retries++;
        el_rate_on_throttle(&w->rate, now);
        break;
    case EL_DDB_TRANSIENT:
        if (s->first_failure == 0)
            s->first_failure = now;
        else if (now - s->first_failure > w->o->max_retry_time_s * 1000.0)
            return el_diag_set(diag, res.http_status ? EL_ESERVICE : EL_ENET,
                               "UpdateItem of counters failed for %.0f s, giving up: %s%s%s",
                               (now - s->first_failure) / 1000.0, res.error_type,
                               res.error_type[0] ? ": " : "", res.message);
        w->st->retries++;
        break;
    case EL_DDB_REJECTED:
        w->st->refused++;
        if (!w->refused_err) {
            w->refused_err = EL_ESERVICE;
            el_diag_set(&w->refused_diag, EL_ESERVICE, "DynamoDB refused the counter update of "
                        "'%s': %s: %s", w->refs[s->first].key, res.error_type, res.message);
        }
        el_ddb_req_free(s->req);
        s->req = NULL;
        return EL_OK;
    case EL_DDB_FATAL:
        return el_ddb_fail(diag, &res, el_ddb_config(w->o->ddb), "UpdateItem");
    }
    s->not_before = now + el_backoff_ms(s->attempt, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS,
                                        el_rand_unit(&w->rng));
    if (s->attempt < 30)
        s->attempt++;
    return EL_OK;
}

el_err el_counters_list(const el_counters *c, el_counter_entry **out, size_t *n)
{
    *n = el_counters_size(c);
    *out = NULL;
    cref *refs = calloc(*n ? *n : 1, sizeof *refs);
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
            refs[k++] = (cref){ key, e->len, pklen + 1 + sklen, e->count };
        }
    }
    qsort(refs, *n, sizeof *refs, cref_cmp);
    *out = refs;
    return EL_OK;
}

static el_err collect(const el_counters *c, wctx *w)
{
    return el_counters_list(c, &w->refs, &w->nrefs);
}

el_err el_counters_write(el_counters *c, const el_counters_write_opts *o,
                         el_counters_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_now_ms();
    wctx w = { .o = o, .st = st, .rng = (uint64_t)t0 ^ 0xc0417e55ULL };
    el_diag_clear(&w.refused_diag);
    el_buf_init(&w.body, 1u << 20);
    size_t nslots = o->concurrency > 0 ? (size_t)o->concurrency : 16;
    el_rate_init(&w.rate, (int)nslots, o->max_wcu, t0);
    slot *slots = calloc(nslots, sizeof *slots);
    CURLM *multi = curl_multi_init();
    el_err err = slots && multi ? collect(c, &w) : EL_ENOMEM;
    if (err)
        el_diag_set(diag, err, "out of memory");
    if (!err) {
        curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)nslots);
        curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)nslots);
    }
    size_t next = 0;
    while (!err) {
        if (stopped(&w)) {
            err = el_diag_set(diag, EL_EINTR, "interrupted while writing counters");
            break;
        }
        double now = el_now_ms(), due = -1;
        size_t busy = 0, wire = 0;
        for (size_t i = 0; i < nslots; i++)
            wire += slots[i].on_wire;
        for (size_t i = 0; !err && i < nslots; i++) {
            slot *s = &slots[i];
            if (s->req && s->on_wire) {
                busy++;
                continue;
            }
            if (!s->req && next < w.nrefs) {
                /* the next counter item: every attribute of it in one update */
                size_t n = 1;
                while (next + n < w.nrefs && n < MAX_ATTRS_PER_UPDATE &&
                       w.refs[next + n].item_len == w.refs[next].item_len &&
                       memcmp(w.refs[next + n].key, w.refs[next].key,
                              w.refs[next].item_len) == 0)
                    n++;
                memset(s, 0, sizeof *s);
                s->first = next;
                s->n = n;
                next += n;
                err = build_update(&w, s->first, s->n);
                if (!err)
                    err = el_ddb_req_new(o->ddb, "UpdateItem", &w.body, s, &s->req);
                if (err) {
                    el_diag_set(diag, err, "UpdateItem request: %s", el_strerror(err));
                    break;
                }
            }
            if (!s->req)
                continue;
            busy++;
            if (s->not_before > now) {
                if (due < 0 || s->not_before < due)
                    due = s->not_before;
                continue;
            }
            if ((int)wire >= el_rate_window(&w.rate))
                continue;
            if (o->max_wcu > 0 && !el_rate_take(&w.rate, 1.0, now)) {
                double wait = now + el_rate_wait_ms(&w.rate, 1.0, now);
                if (due < 0 || wait < due)
                    due = wait;
                continue;
            }
            el_ddb_req_reset(s->req);
            if (curl_multi_add_handle(multi, el_ddb_req_handle(s->req)) != CURLM_OK) {
                err = el_diag_set(diag, EL_ENET, "cannot start a transfer");
                break;
            }
            s->on_wire = true;
            wire++;
            st->requests++;
        }
        if (err || busy == 0)
            break;
        int running;
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while (!err && (msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&req);
            slot *s = el_ddb_req_user(req);
            curl_multi_remove_handle(multi, msg->easy_handle);
            s->on_wire = false;
            err = on_update_done(&w, s, msg->data.result, diag);
        }
        if (err)
            break;
        int timeout = 100;
        now = el_now_ms();
        if (due >= 0 && due - now < timeout)
            timeout = due > now ? (int)(due - now) + 1 : 0;
        curl_multi_poll(multi, NULL, 0, timeout, NULL);
    }
    for (size_t i = 0; slots && i < nslots; i++) {
        if (slots[i].req) {
            if (slots[i].on_wire)
                curl_multi_remove_handle(multi, el_ddb_req_handle(slots[i].req));
            el_ddb_req_free(slots[i].req);
        }
    }
    free(slots);
    if (multi)
        curl_multi_cleanup(multi);
    free(w.refs);
    el_buf_free(&w.body);
    st->elapsed_s = (el_now_ms() - t0) / 1000.0;
    if (!err && w.refused_err) {
        *diag = w.refused_diag;
        err = w.refused_err;
    }
    return err;
}
