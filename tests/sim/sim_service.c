/*
 * sim_service.c - the simulated DynamoDB: buckets, faults, the table.
 *
 * DESIGN: an item's partition keys are its hashes (el_item.pk_hash and
 * ipk_hash), its identity its key's hash: the service never parses JSON,
 * so a scenario of 100,000 items costs milliseconds here. The answers it
 * writes are real DynamoDB JSON (UnprocessedItems carrying the items'
 * JSON, ConsumedCapacity, ThrottlingReasons), so the driver and the sender
 * read them with the code that reads DynamoDB's.
 */
#include "sim_service.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h" /* el_rand_unit */
#include "pipeline/load/batcher.h" /* EL_DDB_BATCH_ITEMS */

/* Appending to a reply cannot fail here but for memory: a test aborts. */
#define PUT(call)                                                                          \
    do {                                                                                   \
        if (call)                                                                          \
            abort();                                                                       \
    } while (0)

typedef struct bucket {
    double tokens, last;
} bucket;

typedef struct kslot {       /* a partition key's bucket */
    uint64_t key;            /* hash ^ kind tag; 0 = empty */
    bucket b;
} kslot;

typedef struct vslot {       /* an item key's last version */
    uint64_t key;            /* 0 = empty */
    uint64_t version;
} vslot;

#define INDEX_TAG 0x9E3779B97F4A7C15ull
#define PEAK_SLOTS 600       /* one-second peaks kept for on-demand growth */

struct sim_service {
    sim_service_cfg c;
    uint64_t rng;
    bucket table, index;
    double table_rate_now;
    kslot *keys;
    size_t kcap, kused;
    vslot *vers;
    size_t vcap, vused;
    sim_service_stats st;
    /* on-demand: units written per second, by second */
    double sec_units[PEAK_SLOTS];
    long long sec_of[PEAK_SLOTS];
    double od_rate;           /* the on-demand table's rate now */
};

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h | 1; /* never 0: 0 marks an empty slot */
}

/* ---- open-addressing tables ---- */

static kslot *key_bucket(sim_service *s, uint64_t key, double now, double cap)
{
    if ((s->kused + 1) * 2 > s->kcap) {
        size_t ncap = s->kcap ? s->kcap * 2 : 1024;
        kslot *n = calloc(ncap, sizeof *n);
        for (size_t i = 0; i < s->kcap; i++)
            if (s->keys[i].key) {
                size_t j = (size_t)(s->keys[i].key * 0x9E3779B97F4A7C15ull >> 20) & (ncap - 1);
                while (n[j].key)
                    j = (j + 1) & (ncap - 1);
                n[j] = s->keys[i];
            }
        free(s->keys);
        s->keys = n;
        s->kcap = ncap;
    }
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (s->kcap - 1);
    while (s->keys[j].key && s->keys[j].key != key)
        j = (j + 1) & (s->kcap - 1);
    if (!s->keys[j].key) {
        s->keys[j].key = key;
        s->keys[j].b = (bucket){ .tokens = cap, .last = now }; /* a new key starts full */
        s->kused++;
    }
    return &s->keys[j];
}

static vslot *version_slot(const sim_service *s, uint64_t key)
{
    if (!s->vcap)
        return NULL;
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (s->vcap - 1);
    while (s->vers[j].key && s->vers[j].key != key)
        j = (j + 1) & (s->vcap - 1);
    return &s->vers[j];
}

static void set_version(sim_service *s, uint64_t key, uint64_t v)
{
    if ((s->vused + 1) * 2 > s->vcap) {
        size_t ncap = s->vcap ? s->vcap * 2 : 4096;
        vslot *old = s->vers;
        size_t oldcap = s->vcap;
        s->vers = calloc(ncap, sizeof *s->vers);
        s->vcap = ncap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key)
                *version_slot(s, old[i].key) = old[i];
        free(old);
    }
    vslot *slot = version_slot(s, key);
    if (!slot->key) {
        slot->key = key;
        s->vused++;
    }
    slot->version = v;
}

/* ---- capacity ---- */

static void refill(bucket *b, double rate, double cap, double now)
{
    if (now > b->last) {
        b->tokens += (now - b->last) / 1000.0 * rate;
        if (b->tokens > cap)
            b->tokens = cap;
        b->last = now;
    }
}

/* The on-demand table's rate: twice the highest second written up to
 * on_demand_delay_s ago, never under its start, never over its maximum. */
static double on_demand_rate(sim_service *s, double now)
{
    long long sec = (long long)(now / 1000.0) - (long long)s->c.on_demand_delay_s;
    double peak = 0;
    for (int i = 0; i < PEAK_SLOTS; i++)
        if (s->sec_of[i] >= 0 && s->sec_of[i] < sec && s->sec_units[i] > peak)
            peak = s->sec_units[i];
    double r = 2 * peak;
    if (r < s->c.table_wcu)
        r = s->c.table_wcu;
    if (s->c.on_demand_max > 0 && r > s->c.on_demand_max)
        r = s->c.on_demand_max;
    return r;
}

double sim_service_table_rate(sim_service *s, double now)
{
    if (s->c.table_wcu <= 0)
        return 0;
    if (s->c.on_demand)
        return on_demand_rate(s, now);
    double f = 1;
    for (size_t i = 0; i < s->c.nsteps; i++)
        if (now >= s->c.steps[i].at_s * 1000.0)
            f = s->c.steps[i].factor;
    return s->c.table_wcu * f;
}

static void note_written(sim_service *s, double units, double now)
{
    long long sec = (long long)(now / 1000.0);
    int i = (int)(sec % PEAK_SLOTS);
    if (s->sec_of[i] != sec) {
        s->sec_of[i] = sec;
        s->sec_units[i] = 0;
    }
    s->sec_units[i] += units;
}

sim_service *sim_service_new(const sim_service_cfg *cfg)
{
    sim_service *s = calloc(1, sizeof *s);
    s->c = *cfg;
    s->rng = cfg->seed ? cfg->seed : 1;
    s->table.tokens = cfg->table_wcu * cfg->table_burst_s;
    s->index.tokens = cfg->index_wcu * cfg->index_burst_s;
    for (int i = 0; i < PEAK_SLOTS; i++)
        s->sec_of[i] = -1;
    return s;
}

void sim_service_free(sim_service *s)
{
    if (!s)
        return;
    free(s->keys);
    free(s->vers);
    free(s);
}

void sim_reply_clear(sim_reply *r)
{
    el_buf_free(&r->body);
}

/* ---- a batch ---- */

enum { R_TABLE = 1, R_INDEX = 2, R_TABLE_KEY = 4, R_INDEX_KEY = 8 };

static double item_units(const el_item *it)
{
    double u = (double)((it->size + 1023u) / 1024u);
    return u < 1 ? 1 : u;
}

/* Whether the item fits every bucket it draws on; *why gets the buckets
 * that refused. Takes nothing. */
static bool fits(sim_service *s, const el_item *it, double now, double trate, unsigned *why)
{
    double u = item_units(it);
    unsigned w = 0;
    if (trate > 0) {
        refill(&s->table, trate, trate * s->c.table_burst_s, now);
        if (s->table.tokens < u)
            w |= R_TABLE;
    }
    bool idx = it->indexed && it->ipk_hash;
    if (idx && s->c.index_wcu > 0) {
        refill(&s->index, s->c.index_wcu, s->c.index_wcu * s->c.index_burst_s, now);
        if (s->index.tokens < u)
            w |= R_INDEX;
    }
    if (s->c.key_wcu > 0) {
        double cap = s->c.key_wcu * s->c.key_burst_s;
        kslot *k = key_bucket(s, mix(it->pk_hash), now, cap);
        refill(&k->b, s->c.key_wcu, cap, now);
        if (k->b.tokens < u)
            w |= R_TABLE_KEY;
        if (idx) {
            k = key_bucket(s, mix(it->ipk_hash ^ INDEX_TAG), now, cap);
            refill(&k->b, s->c.key_wcu, cap, now);
            if (k->b.tokens < u)
                w |= R_INDEX_KEY;
        }
    }
    *why |= w;
    return w == 0;
}

static void take(sim_service *s, const el_item *it, double now, double trate)
{
    double u = item_units(it);
    bool idx = it->indexed && it->ipk_hash;
    if (trate > 0)
        s->table.tokens -= u;
    if (idx && s->c.index_wcu > 0)
        s->index.tokens -= u;
    if (s->c.key_wcu > 0) {
        double cap = s->c.key_wcu * s->c.key_burst_s;
        key_bucket(s, mix(it->pk_hash), now, cap)->b.tokens -= u;
        if (idx)
            key_bucket(s, mix(it->ipk_hash ^ INDEX_TAG), now, cap)->b.tokens -= u;
    }
    s->st.units_table += u;
    if (idx)
        s->st.units_index += u;
    note_written(s, u, now);
    set_version(s, mix(it->hash), it->line);
}

static void put_reason(el_buf *b, bool *first, const char *reason, const char *table,
                       bool index)
{
    PUT(el_buf_puts(b, *first ? "" : ","));
    *first = false;
    PUT(el_buf_printf(b, "{\"reason\":\"%s\",\"resource\":\"arn:aws:dynamodb:us-east-1:000000000000:"
                     "table/%s%s\"}",
                  reason, table, index ? "/index/GSI1" : ""));
}

static void throttle_body(sim_service *s, unsigned why, el_buf *b)
{
    PUT(el_buf_puts(b, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                   "ProvisionedThroughputExceededException\",\"message\":\"The level of "
                   "configured provisioned throughput for the table was exceeded.\""));
    if (s->c.reasons && why) {
        bool first = true;
        PUT(el_buf_puts(b, ",\"ThrottlingReasons\":["));
        if (why & R_TABLE_KEY)
            put_reason(b, &first, "TableWriteKeyRangeThroughputExceeded", s->c.table, false);
        if (why & R_INDEX_KEY)
            put_reason(b, &first, "IndexWriteKeyRangeThroughputExceeded", s->c.table, true);
        if (why & R_TABLE)
            put_reason(b, &first, "TableWriteProvisionedThroughputExceeded", s->c.table, false);
        if (why & R_INDEX)
            put_reason(b, &first, "IndexWriteProvisionedThroughputExceeded", s->c.table, true);
        PUT(el_buf_puts(b, "]"));
    }
    PUT(el_buf_puts(b, "}"));
}

static void ok_body(sim_service *s, el_item *const *back, size_t nback, double consumed,
                    el_buf *b)
{
    PUT(el_buf_puts(b, "{\"UnprocessedItems\":{"));
    if (nback) {
        PUT(el_buf_printf(b, "\"%s\":[", s->c.table));
        for (size_t i = 0; i < nback; i++) {
            PUT(el_buf_puts(b, i ? ",{\"PutRequest\":{\"Item\":" : "{\"PutRequest\":{\"Item\":"));
            PUT(el_buf_append(b, el_item_json(back[i]), back[i]->json_len));
            PUT(el_buf_puts(b, "}}"));
        }
        PUT(el_buf_puts(b, "]"));
    }
    PUT(el_buf_printf(b, "},\"ConsumedCapacity\":[{\"TableName\":\"%s\",\"CapacityUnits\":%.1f}]}",
                  s->c.table, consumed));
}

void sim_service_batch(sim_service *s, el_item *const *items, size_t n, double now,
                       sim_reply *out)
{
    el_buf_init(&out->body, 64u << 20);
    out->end = SIM_HTTP;
    out->status = 200;
    s->st.requests++;
    s->st.items_in += n;
    double u = el_rand_unit(&s->rng);
    const sim_service_cfg *c = &s->c;
    double edge = 0;
#define FAULT(share) (u >= edge && u < (edge += (share)))
    if (FAULT(c->f_throttle)) {
        s->st.faults++;
        out->status = 400;
        throttle_body(s, 0, &out->body);
        return;
    }
    if (FAULT(c->f_500)) {
        s->st.faults++;
        out->status = 500;
        PUT(el_buf_puts(&out->body, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                                "InternalServerError\",\"message\":\"Internal server error\"}"));
        return;
    }
    if (FAULT(c->f_503)) {
        s->st.faults++;
        out->status = 503;
        PUT(el_buf_puts(&out->body, "<html><body><h1>503 Service Unavailable</h1></body></html>"));
        return;
    }
    if (FAULT(c->f_reset)) {
        s->st.faults++;
        out->end = SIM_RESET;
        return;
    }
    bool after_500 = FAULT(c->f_500_applied), lost = FAULT(c->f_lost),
         cut = FAULT(c->f_truncated);
    bool partial = el_rand_unit(&s->rng) < c->f_partial;
#undef FAULT
    if (after_500 || lost || cut)
        s->st.faults++;
    double trate = sim_service_table_rate(s, now);
    el_item *back[EL_DDB_BATCH_ITEMS];
    size_t nback = 0;
    unsigned why = 0;
    double consumed = 0;
    for (size_t i = 0; i < n; i++) {
        el_item *it = items[i];
        if (partial && el_rand_unit(&s->rng) < 0.5) {
            back[nback++] = it; /* handed back at random */
            continue;
        }
        unsigned w = 0;
        if (!fits(s, it, now, trate, &w)) {
            why |= w;
            s->st.back_table += !!(w & R_TABLE);
            s->st.back_index += !!(w & R_INDEX);
            s->st.back_table_key += !!(w & R_TABLE_KEY);
            s->st.back_index_key += !!(w & R_INDEX_KEY);
            back[nback++] = it;
            continue;
        }
        take(s, it, now, trate);
        consumed += item_units(it) * (it->indexed && it->ipk_hash ? 2 : 1);
    }
    if (nback == n && why) {
        /* nothing fitted: the request is refused whole */
        s->st.whole_throttles++;
        out->status = 400;
        throttle_body(s, why, &out->body);
        return;
    }
    s->st.items_written += n - nback;
    s->st.items_back += nback;
    if (after_500) {
        out->status = 500;
        PUT(el_buf_puts(&out->body, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                                "InternalServerError\",\"message\":\"Internal server error\"}"));
        return;
    }
    if (lost) {
        out->end = SIM_NO_REPLY;
        return;
    }
    ok_body(s, back, nback, consumed, &out->body);
    if (cut)
        out->body.len /= 2; /* cut in half: not JSON any more */
}

uint64_t sim_service_version(const sim_service *s, const el_item *it)
{
    const vslot *v = version_slot(s, mix(it->hash));
    return v && v->key ? v->version : 0;
}

size_t sim_service_items(const sim_service *s)
{
    return s->vused;
}

void sim_service_stats_get(const sim_service *s, sim_service_stats *out)
{
    *out = s->st;
}
