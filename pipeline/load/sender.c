/*
 * sender.c - batches to the driver, answers judged item by item, hot keys
 * paced.
 *
 * DESIGN: the sender is the only owner of the batcher and of every
 * request it submits: no locks. A batch is formed only when the driver
 * could send it at once, so items wait in the batcher (where a later row
 * of their key can still supersede them), not in a queue of requests.
 * Each item ends in exactly one done call: written, superseded or refused.
 *
 * Throttling by its cause: a request refused for a key range (a hot
 * partition key of the table or of the index) comes back here, not to the
 * driver's resend: its items go back to the batcher and the keys named are
 * paced. UnprocessedItems name their items but not the cause: each item
 * handed back counts against both its partition keys, and the pacer paces
 * a key refused significantly more often than the rest (pacer.h). Items
 * handed back of keys not paced are the table's limit or chance: their
 * units go to the driver, whose learned rate tells one from the other
 * (dynamo/tablerate.h). A throttle that names no key range is the
 * driver's to resend after a backoff.
 */
#include "pipeline/load/sender.h"

#include <math.h>      /* exp */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* memcpy, memmem, strlen, memcmp */

#include "common/buf.h"
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/load/batcher.h"
#include "pipeline/load/pacer.h"

/* Rows one batch may supersede (el_batcher_form): a chain of a key's rows
 * goes at once unless longer. */
#define MAX_SUPERSEDED 512

typedef el_sender_batch batch;

struct el_sender {
    el_ddb_driver *drv;
    el_sender_cfg cfg;
    el_batcher *b;
    el_buf body;
    el_pacer *pacer;          /* per-key pacing; NULL when switched off (benchmarks) */
    uint64_t item_retries;    /* items put back to be sent again */
    uint64_t items_sent, items_refused;
    uint64_t refused_keyrange[2]; /* items refused by a key-range throttle: table, index */
    uint64_t refused_unpaced; /* unprocessed items of keys not paced (the table's limit, or
                                 a key not yet known hot) */
};

/* ---- per-key pacing ---- */

/* The units a write of the item costs in each partition it lands in (the
 * table's, the index's): one per started KB. */
static double item_units(const el_item *it)
{
    double u = (double)((it->size + 1023u) / 1024u);
    return u < 1 ? 1 : u;
}

static bool has_index_key(const el_item *it)
{
    return it->indexed && it->ipk_hash != 0;
}

/* When the item may go as far as its paced keys say (reserving that time
 * for it); now or earlier when none of its keys is paced. With a horizon,
 * a time that far ahead or more is not reserved (pacer.h). */
static double item_due(el_sender *s, const el_item *it, double now, double horizon)
{
    if (!s->pacer || el_pacer_idle(s->pacer))
        return now;
    double u = item_units(it);
    double t = el_pacer_reserve(s->pacer, EL_PACE_TABLE, it->pk_hash, u, now, horizon);
    if (has_index_key(it) && (horizon <= 0 || t < now + horizon)) {
        double ti = el_pacer_reserve(s->pacer, EL_PACE_INDEX, it->ipk_hash, u, now, horizon);
        if (ti > t)
            t = ti;
    }
    return t;
}

/* The batcher's gate (batcher.h): fresh rows reserve at most a horizon
 * ahead, and ask again when their time nears. */
static double gate(void *ctx, const el_item *it, double now)
{
    return item_due(ctx, it, now, EL_BATCHER_GATE_HORIZON_MS);
}

static bool item_paced(const el_sender *s, const el_item *it)
{
    return s->pacer && (el_pacer_paced(s->pacer, EL_PACE_TABLE, it->pk_hash) ||
                        (has_index_key(it) &&
                         el_pacer_paced(s->pacer, EL_PACE_INDEX, it->ipk_hash)));
}

/* The item's index partition key value, for the summary: read from its
 * JSON (edgeload's own compact DynamoDB JSON: "GSI1PK":{"S":"value"}). */
static const char *index_key_value(const el_sender *s, const el_item *it, size_t *len)
{
    const char *attr = s->cfg.index_pk_attr;
    char pat[160];
    int pl = attr ? snprintf(pat, sizeof pat, "\"%s\":{\"", attr) : -1;
    *len = 0;
    if (pl <= 0 || (size_t)pl >= sizeof pat)
        return NULL;
    const char *json = el_item_json(it), *end = json + it->json_len;
    const char *p = memmem(json, it->json_len, pat, (size_t)pl);
    if (!p || end - p < pl + 4)
        return NULL;
    p += pl + 1; /* past the type letter */
    if (memcmp(p, "\":\"", 3) != 0)
        return NULL;
    p += 3;
    const char *q = p;
    while (q < end && *q != '"')
        q += *q == '\\' && q + 1 < end ? 2 : 1;
    *len = (size_t)(q - p);
    return p;
}

/* A write of the item was refused for its key of that kind. */
static el_err refused(el_sender *s, const el_item *it, el_pacer_kind kind, bool sure, double now)
{
    size_t len = 0;
    const char *label;
    if (kind == EL_PACE_TABLE) {
        label = el_item_key(it);
        len = strlen(label); /* PK ends at the NUL */
    } else {
        label = index_key_value(s, it, &len);
    }
    uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
    return el_pacer_refused(s->pacer, kind, h, item_units(it), sure, label, len, now);
}

/* A request refused for a key range of the table and/or the index: the
 * keys of that kind in it are paced. When some of them are paced already
 * the refusal is theirs (one hot key among 25 spread over a batch); when
 * none is, every one of them is paced (the innocent ones at a partition's
 * full rate, forgotten after a quiet while). */
static el_err pace_request(el_sender *s, const batch *bt, el_pacer_kind kind, double now)
{
    bool any_paced = false;
    for (size_t i = 0; i < bt->n && !any_paced; i++) {
        const el_item *it = bt->items[i];
        if (kind == EL_PACE_INDEX && !has_index_key(it))
            continue;
        uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
        any_paced = el_pacer_paced(s->pacer, kind, h);
    }
    for (size_t i = 0; i < bt->n; i++) {
        const el_item *it = bt->items[i];
        if (kind == EL_PACE_INDEX && !has_index_key(it))
            continue;
        uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
        if (any_paced && !el_pacer_paced(s->pacer, kind, h))
            continue;
        el_err err = refused(s, it, kind, true, now);
        if (err)
            return err;
    }
    return EL_OK;
}

static el_ddb_verdict fail_oom(el_sender *s)
{
    el_diag d;
    el_diag_set(&d, EL_ENOMEM, "out of memory");
    el_ddb_driver_fail(s->drv, EL_ENOMEM, &d);
    return EL_DDB_STOP;
}

/* A throttled request. A key-range reason: the keys are paced and the
 * items go back to the batcher (resent as their keys allow; the others at
 * once). Otherwise the driver resends it after a backoff. */
static el_ddb_verdict on_throttled(el_sender *s, batch *bt, const el_ddb_answer *a)
{
    unsigned table_kr = a->res.reasons & (1u << EL_THR_TABLE_WRITE_KEY_RANGE);
    unsigned index_kr = a->res.reasons & (1u << EL_THR_INDEX_WRITE_KEY_RANGE);
    double now = el_ddb_driver_now(s->drv);
    s->items_refused += bt->n;
    if (!s->pacer || (!table_kr && !index_kr)) {
        /* the table's limit or chance: the driver resends it whole */
        size_t unpaced = 0;
        for (size_t i = 0; i < bt->n; i++)
            unpaced += !item_paced(s, bt->items[i]);
        if (s->pacer)
            el_pacer_answer(s->pacer, (double)unpaced, (double)unpaced, now);
        return EL_DDB_AGAIN;
    }
    el_err err = EL_OK;
    if (table_kr)
        err = pace_request(s, bt, EL_PACE_TABLE, now);
    if (!err && index_kr)
        err = pace_request(s, bt, EL_PACE_INDEX, now);
    if (table_kr)
        s->refused_keyrange[EL_PACE_TABLE] += bt->n;
    if (index_kr)
        s->refused_keyrange[EL_PACE_INDEX] += bt->n;
    for (size_t i = 0; !err && i < bt->n; i++) {
        el_item *it = bt->items[i];
        it->attempts++;
        it->not_before = item_due(s, it, now, 0);
        s->item_retries++;
        err = el_batcher_retry(s->b, it); /* keeps its key held */
    }
    return err ? fail_oom(s) : EL_DDB_DONE;
}

/* The item is done: its key is released (unless superseded: the batcher
 * released it) and the caller told. */
static el_err finish(el_sender *s, el_item *it, el_sent how, const char *reason, el_diag *diag)
{
    if (how != EL_SENT_SUPERSEDED)
        el_batcher_release(s->b, it);
    return s->cfg.done(s->cfg.ctx, it, how, reason, diag);
}

static el_err build_body(el_sender *s, el_item *const *items, size_t count)
{
    el_buf *b = &s->body;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"RequestItems\":{");
    if (!err)
        err = el_json_put_string(b, s->cfg.table, strlen(s->cfg.table));
    if (!err)
        err = el_buf_puts(b, ":[");
    for (size_t i = 0; !err && i < count; i++) {
        err = el_buf_puts(b, i ? ",{\"PutRequest\":{\"Item\":" : "{\"PutRequest\":{\"Item\":");
        if (!err)
            err = el_buf_append(b, el_item_json(items[i]), items[i]->json_len);
        if (!err)
            err = el_buf_puts(b, "}}");
    }
    if (!err)
        err = el_buf_puts(b, "]},\"ReturnConsumedCapacity\":\"INDEXES\"}");
    return err;
}

static el_ddb_verdict on_answer(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                                void *ctx);

/* Hands items[0..count) to the driver as one BatchWriteItem. */
static el_err send_items(el_sender *s, el_item *const *items, size_t count)
{
    double units = 0;
    for (size_t i = 0; i < count; i++)
        units += el_item_wcu(items[i]);
    el_err err = build_body(s, items, count);
    void *user = NULL;
    if (!err)
        err = el_ddb_driver_submit(s->drv, "BatchWriteItem", &s->body, units, on_answer, s,
                                   sizeof(batch), &user);
    if (err)
        return err;
    batch *bt = user;
    memcpy(bt->items, items, count * sizeof *items);
    bt->n = count;
    bt->counted = 1;
    s->items_sent += count;
    return EL_OK;
}

static bool key_matches(const el_item *it, const el_ddb_key *k)
{
    const char *key = el_item_key(it);
    size_t pklen = strlen(key); /* PK ends at the NUL */
    if (strlen(k->pk) != pklen || memcmp(key, k->pk, pklen) != 0)
        return false;
    const char *sk = key + pklen + 1;
    size_t sklen = it->key_len - pklen - 1;
    return k->sk && strlen(k->sk) == sklen && memcmp(sk, k->sk, sklen) == 0;
}

static el_ddb_verdict on_written(el_sender *s, batch *bt, const el_ddb_answer *a)
{
    el_ddb_batch_result br = { 0 };
    el_diag d;
    el_diag_clear(&d);
    /* the driver's scan found nothing unprocessed: no second pass */
    if (!a->all_done &&
        el_ddb_parse_batch_write(a->body, a->len, s->cfg.pk_attr, s->cfg.sk_attr, &br, &d))
        return EL_DDB_AGAIN; /* an answer we cannot read is a lost reply: resend */
    double now = el_ddb_driver_now(s->drv);
    el_err err = EL_OK;
    double table_units = 0;    /* units handed back of keys not paced: the table's limit or
                                  chance, for the driver's learned rate */
    s->items_refused += br.nunprocessed;
    bool back[EL_DDB_BATCH_ITEMS];
    size_t nback = 0, unpaced = 0, unpaced_back = 0;
    for (size_t i = 0; i < bt->n; i++) {
        back[i] = false;
        for (size_t k = 0; k < br.nunprocessed && !back[i]; k++)
            back[i] = key_matches(bt->items[i], &br.unprocessed[k]);
        nback += back[i];
        if (s->pacer && !item_paced(s, bt->items[i])) {
            unpaced++;
            unpaced_back += back[i];
        }
    }
    if (s->pacer)
        el_pacer_answer(s->pacer, (double)unpaced_back, (double)unpaced, now);
    bool watch = s->pacer && (nback > 0 || !el_pacer_empty(s->pacer));
    for (size_t i = 0; i < bt->n && !err; i++) {
        el_item *it = bt->items[i];
        double u = item_units(it);
        if (back[i]) {
            /* which of its partition keys was too fast is not said: each
             * is measured against the rest (pacer.h) */
            if (s->pacer) {
                err = refused(s, it, EL_PACE_TABLE, false, now);
                if (!err && has_index_key(it))
                    err = refused(s, it, EL_PACE_INDEX, false, now);
                if (err)
                    break;
            }
            bool paced = item_paced(s, it);
            if (!paced) {
                s->refused_unpaced++;
                table_units += el_item_wcu(it);
            }
            it->attempts++;
            /* a paced key's rows go at its pace; others after a backoff */
            it->not_before = paced ? item_due(s, it, now, 0)
                                   : now + el_ddb_driver_backoff_ms(s->drv, it->attempts);
            s->item_retries++;
            err = el_batcher_retry(s->b, it);
        } else {
            if (watch) {
                el_pacer_granted(s->pacer, EL_PACE_TABLE, it->pk_hash, u, now);
                if (has_index_key(it))
                    el_pacer_granted(s->pacer, EL_PACE_INDEX, it->ipk_hash, u, now);
            }
            err = finish(s, it, EL_SENT_WRITTEN, NULL, &d);
        }
    }
    el_ddb_batch_result_clear(&br);
    if (table_units > 0)
        el_ddb_driver_note_refused(s->drv, table_units);
    if (err) {
        if (err == EL_ENOMEM && !d.msg[0])
            el_diag_set(&d, err, "out of memory");
        el_ddb_driver_fail(s->drv, err, &d);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

/* A refused batch: split it to find the item DynamoDB refuses. */
static el_ddb_verdict on_refused(el_sender *s, batch *bt, const el_ddb_answer *a)
{
    el_diag d;
    el_diag_clear(&d);
    el_err err = EL_OK;
    if (bt->n > 1) {
        size_t half = bt->n / 2;
        err = send_items(s, bt->items, half);
        if (!err)
            err = send_items(s, bt->items + half, bt->n - half);
        if (err)
            el_diag_set(&d, err, "out of memory");
    } else {
        char reason[700];
        snprintf(reason, sizeof reason, "DynamoDB refused the item: %s: %s",
                 a->res.error_type, a->res.message);
        err = finish(s, bt->items[0], EL_SENT_REFUSED, reason, &d);
    }
    if (err) {
        el_ddb_driver_fail(s->drv, err, &d);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

static el_ddb_verdict on_answer(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                                void *ctx)
{
    (void)d;
    el_sender *s = ctx;
    batch *bt = el_ddb_op_user(op);
    /* the driver resends a request on its own (a lost answer, a 5xx, a
     * throttle handed back to it): its items went again each time */
    if (a->attempts > bt->counted) {
        s->items_sent += (uint64_t)(a->attempts - bt->counted) * bt->n;
        bt->counted = a->attempts;
    }
    if (a->res.outcome == EL_DDB_THROTTLED)
        return on_throttled(s, bt, a);
    return a->res.outcome == EL_DDB_SUCCESS ? on_written(s, bt, a) : on_refused(s, bt, a);
}

/* ---- the API ---- */

el_err el_sender_new(el_ddb_driver *drv, const el_sender_cfg *cfg, el_sender **out)
{
    *out = NULL;
    el_sender *s = calloc(1, sizeof *s);
    if (!s)
        return EL_ENOMEM;
    s->drv = drv;
    s->cfg = *cfg;
    el_buf_init(&s->body, EL_DDB_MAX_REQUEST_BYTES);
    s->b = el_batcher_new(cfg->window_items, !cfg->no_interleave);
    if (!cfg->no_pacing)
        s->pacer = el_pacer_new();
    if (!s->b || (!cfg->no_pacing && !s->pacer)) {
        el_sender_free(s);
        return EL_ENOMEM;
    }
    if (s->pacer)
        el_batcher_set_gate(s->b, gate, s);
    *out = s;
    return EL_OK;
}

void el_sender_free(el_sender *s)
{
    if (!s)
        return;
    el_batcher_free(s->b);
    el_pacer_free(s->pacer);
    el_buf_free(&s->body);
    free(s);
}

bool el_sender_has_room(const el_sender *s)
{
    return el_batcher_has_room(s->b);
}

el_err el_sender_add(el_sender *s, el_item *it)
{
    return el_batcher_add(s->b, it);
}

el_err el_sender_fill(el_sender *s, el_diag *diag)
{
    el_item *items[EL_DDB_BATCH_ITEMS], *sup[MAX_SUPERSEDED];
    double now = el_ddb_driver_now(s->drv);
    double max_units = el_ddb_driver_max_units(s->drv);
    /* with no key paced the gate would let every row go: not asked per row
     * (a row's call was ~30 instructions); keys become paced only in the
     * answers' callbacks, never while a batch is formed */
    if (s->pacer)
        el_batcher_set_gate(s->b, el_pacer_idle(s->pacer) ? NULL : gate, s);
    while (el_ddb_driver_wants(s->drv)) {
        size_t nsup;
        size_t cnt = el_batcher_form(s->b, now, EL_DDB_BATCH_ITEMS, EL_DDB_MAX_REQUEST_BYTES,
                                     max_units, items, sup, MAX_SUPERSEDED, &nsup);
        /* the rows a later row of their key replaced before they went */
        for (size_t i = 0; i < nsup; i++) {
            el_err err = finish(s, sup[i], EL_SENT_SUPERSEDED, NULL, diag);
            if (err)
                return err;
        }
        if (cnt == 0)
            return EL_OK;
        el_err err = send_items(s, items, cnt);
        if (err)
            return el_diag_set(diag, err, "out of memory");
    }
    return EL_OK;
}

size_t el_sender_pending(const el_sender *s)
{
    return el_batcher_pending(s->b);
}

double el_sender_next_due(const el_sender *s)
{
    return el_batcher_next_due(s->b);
}

void el_sender_tick(el_sender *s, double now)
{
    if (s->pacer)
        el_pacer_expire(s->pacer, now);
}

void el_sender_figures(const el_sender *s, el_throttle_figures *t, uint64_t *item_retries)
{
    const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(s->drv);
    memcpy(t->by_reason, ds->by_reason, sizeof t->by_reason);
    t->unspecified = ds->unspecified;
    t->items_refused = s->items_refused;
    t->items_sent = s->items_sent;
    t->learned = ds->learned;
    t->keys_paced = t->paced_now = 0;
    if (s->pacer) {
        el_pacer_stats ps;
        el_pacer_stats_get(s->pacer, &ps);
        t->keys_paced = ps.keys_paced;
        t->paced_now = ps.paced_now;
    }
    *item_retries = s->item_retries;
}

void el_sender_limited_by(const el_sender *s, double max_wcu, double elapsed_s,
                          double consumed, char *out, size_t len)
{
    const el_ddb_driver_stats *t = el_ddb_driver_stats_get(s->drv);
    out[0] = '\0';
    el_pacer_stats ps = { 0 };
    if (s->pacer)
        el_pacer_stats_get(s->pacer, &ps);
    struct { uint64_t count; const char *what; } c[] = {
        { s->refused_keyrange[EL_PACE_INDEX] +
              (ps.has_hottest && ps.hottest_kind == EL_PACE_INDEX ? ps.hottest_refusals : 0),
          "index key range" },
        { s->refused_keyrange[EL_PACE_TABLE] +
              (ps.has_hottest && ps.hottest_kind == EL_PACE_TABLE ? ps.hottest_refusals : 0),
          "table key range" },
        { t->by_reason[EL_THR_TABLE_WRITE_PROVISIONED], "table write limit" },
        { t->by_reason[EL_THR_INDEX_WRITE_PROVISIONED], "index write limit" },
        { t->by_reason[EL_THR_TABLE_WRITE_ACCOUNT] + t->by_reason[EL_THR_INDEX_WRITE_ACCOUNT],
          "account write limit" },
        { t->by_reason[EL_THR_TABLE_WRITE_MAX_ON_DEMAND] +
              t->by_reason[EL_THR_INDEX_WRITE_MAX_ON_DEMAND],
          "on-demand maximum throughput" },
        { t->unspecified, "throttling (DynamoDB gave no reason)" },
        { s->refused_unpaced, "the table's write capacity (items handed back unprocessed)" },
    };
    size_t best = 0;
    for (size_t i = 1; i < sizeof c / sizeof c[0]; i++)
        if (c[i].count > c[best].count)
            best = i;
    if (c[best].count > 0) {
        bool key = best < 2;
        if (key && ps.has_hottest && (el_pacer_kind)(best == 0) == ps.hottest_kind)
            snprintf(out, len, "%s %s", c[best].what, ps.hottest);
        else
            snprintf(out, len, "%s", c[best].what);
        return;
    }
    if (max_wcu > 0 && elapsed_s > 0 && consumed >= 0.9 * max_wcu * elapsed_s)
        snprintf(out, len, "the --max-wcu budget (%.0f WCU/s)", max_wcu);
}
