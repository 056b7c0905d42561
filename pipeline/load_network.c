/*
 * load_network.c - the network stage of a load: items from the queue are
 * formed into BatchWriteItem requests (batcher.h) and handed to the request
 * driver (dynamo/ddb_driver.h), which keeps --concurrency of them in
 * flight, paces them by the --max-wcu budget and resends throttled or
 * failed ones. Here: unprocessed items go back to the batcher, refused
 * batches are split to find the bad item, every item is acknowledged
 * exactly once, and partition keys that DynamoDB throttles on their own are
 * paced (pipeline/pacer.h): their rows wait in the batcher for their time
 * instead of being sent to be refused with other keys' rows beside them.
 *
 * DESIGN: the stage runs on the calling thread and is the only owner of the
 * batcher, the chunks after they are queued, and every request: no locks on
 * the hot path. An item is acknowledged exactly once: written, refused (to
 * the rejects file) or superseded by a later row of its key; a chunk's
 * arena goes when its last item is, and the watermark moves. A batch is
 * formed only when the driver could send it at once, so items wait in the
 * batcher (where a later row of their key can still supersede them), not in
 * a queue of requests.
 *
 * Throttling by its cause: a request refused for a key range (a hot
 * partition key of the table or of the index) comes back here, not to the
 * driver's resend: its items go back to the batcher, the keys named are
 * paced, and the window stays (the other keys are not too fast). A table or
 * index limit, or a throttle that names no reason, is the driver's: it cuts
 * the window and resends after a backoff. UnprocessedItems name their
 * items but not the cause: a key refused again within seconds is paced,
 * and the window is cut only when items of keys not paced came back.
 * Those of them that share no key with another item handed back are the
 * table's limit: their units go to the driver's learned table rate
 * (dynamo/tablerate.h), and when two or more come back in one answer
 * their keys are not suspects.
 */
#include "pipeline/load_internal.h"

#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* memcpy, strlen, memcmp */

#include "common/buf.h"
#include "common/vec.h"        /* el_grow */
#include "dynamo/ddb_driver.h"
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/batcher.h"
#include "pipeline/checkpoint.h"
#include "pipeline/pacer.h"
#include "pipeline/rejects.h"
#include "pipeline/watermark.h"

/* A request's items, kept in the driver's request. */
typedef struct batch {
    el_item *items[EL_DDB_BATCH_ITEMS];
    size_t n;
} batch;

typedef struct net {
    load_run *r;
    el_ddb_driver *drv;
    el_batcher *b;
    el_chunk **chunks;       /* chunks taken from the queue, not yet freed */
    size_t nchunks, chunks_cap;
    el_watermark *tr;        /* one per input, plus the shard directory's */
    el_load_stats *st;
    uint64_t item_retries;   /* unprocessed items put back */
    double next_checkpoint, next_progress;
    el_checkpoint *cp;       /* reused for every write */
    el_buf body;
    el_pacer *pacer;         /* per-key pacing; NULL when switched off (benchmarks) */
    uint64_t items_sent, items_refused;
    uint64_t refused_keyrange[2]; /* items refused by a key-range throttle: table, index */
    uint64_t refused_unpaced; /* unprocessed items of keys not paced (the table's limit, or
                                 a key not yet known hot) */
} net;

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
 * for it); now or earlier when none of its keys is paced. */
static double item_due(net *n, const el_item *it, double now)
{
    if (!n->pacer || el_pacer_idle(n->pacer))
        return now;
    double u = item_units(it);
    double t = el_pacer_reserve(n->pacer, EL_PACE_TABLE, it->pk_hash, u, now);
    if (has_index_key(it)) {
        double ti = el_pacer_reserve(n->pacer, EL_PACE_INDEX, it->ipk_hash, u, now);
        if (ti > t)
            t = ti;
    }
    return t;
}

static double gate(void *ctx, const el_item *it, double now)
{
    return item_due(ctx, it, now);
}

static bool item_paced(const net *n, const el_item *it)
{
    return n->pacer && (el_pacer_paced(n->pacer, EL_PACE_TABLE, it->pk_hash) ||
                        (has_index_key(it) &&
                         el_pacer_paced(n->pacer, EL_PACE_INDEX, it->ipk_hash)));
}

/* The item's index partition key value, for the summary: read from its
 * JSON (edgeload's own compact DynamoDB JSON: "GSI1PK":{"S":"value"}). */
static const char *index_key_value(const net *n, const el_item *it, size_t *len)
{
    const char *attr = n->r->o->mapping->index_pk_attr;
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
static el_err refused(net *n, const el_item *it, el_pacer_kind kind, bool sure, double now)
{
    size_t len = 0;
    const char *label;
    if (kind == EL_PACE_TABLE) {
        label = el_item_key(it);
        len = strlen(label); /* PK ends at the NUL */
    } else {
        label = index_key_value(n, it, &len);
    }
    uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
    return el_pacer_refused(n->pacer, kind, h, it->hash, sure, label, len, now);
}

/* A request refused for a key range of the table and/or the index: the
 * keys of that kind in it are paced. When some of them are paced already
 * the refusal is theirs (one hot key among 25 spread over a batch); when
 * none is, every one of them is paced (the innocent ones at a partition's
 * full rate, forgotten after a quiet while). */
static el_err pace_request(net *n, const batch *bt, el_pacer_kind kind, double now)
{
    bool any_paced = false;
    for (size_t i = 0; i < bt->n && !any_paced; i++) {
        const el_item *it = bt->items[i];
        if (kind == EL_PACE_INDEX && !has_index_key(it))
            continue;
        uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
        any_paced = el_pacer_paced(n->pacer, kind, h);
    }
    for (size_t i = 0; i < bt->n; i++) {
        const el_item *it = bt->items[i];
        if (kind == EL_PACE_INDEX && !has_index_key(it))
            continue;
        uint64_t h = kind == EL_PACE_TABLE ? it->pk_hash : it->ipk_hash;
        if (any_paced && !el_pacer_paced(n->pacer, kind, h))
            continue;
        el_err err = refused(n, it, kind, true, now);
        if (err)
            return err;
    }
    return EL_OK;
}

/* A throttled request. A key-range reason: the keys are paced and the
 * items go back to the batcher (resent as their keys allow; the others at
 * once). Otherwise the driver resends it after a backoff. */
static el_ddb_verdict on_throttled(net *n, batch *bt, const el_ddb_answer *a)
{
    unsigned table_kr = a->res.reasons & (1u << EL_THR_TABLE_WRITE_KEY_RANGE);
    unsigned index_kr = a->res.reasons & (1u << EL_THR_INDEX_WRITE_KEY_RANGE);
    n->items_refused += bt->n;
    if (!n->pacer || (!table_kr && !index_kr))
        return EL_DDB_AGAIN;
    double now = el_ddb_driver_now(n->drv);
    el_err err = EL_OK;
    if (table_kr)
        err = pace_request(n, bt, EL_PACE_TABLE, now);
    if (!err && index_kr)
        err = pace_request(n, bt, EL_PACE_INDEX, now);
    if (table_kr)
        n->refused_keyrange[EL_PACE_TABLE] += bt->n;
    if (index_kr)
        n->refused_keyrange[EL_PACE_INDEX] += bt->n;
    for (size_t i = 0; !err && i < bt->n; i++) {
        el_item *it = bt->items[i];
        it->attempts++;
        it->not_before = item_due(n, it, now);
        n->item_retries++;
        err = el_batcher_retry(n->b, it); /* keeps its key held */
    }
    if (err) {
        el_diag d;
        el_diag_set(&d, err, "out of memory");
        el_ddb_driver_fail(n->drv, err, &d);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

static void ack(net *n, el_item *it, bool release)
{
    if (release)
        el_batcher_release(n->b, it);
    el_chunk *c = it->chunk;
    if (--c->unacked == 0) {
        /* every item acknowledged: the arena goes in one call */
        el_watermark_done(&n->tr[c->input], c->seq);
        el_chunk *last = n->chunks[--n->nchunks];
        n->chunks[c->slot] = last;
        last->slot = c->slot;
        el_chunk_free(c);
    }
}

/* The figures the driver keeps, in the load's terms. */
static void sync_stats(net *n)
{
    const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(n->drv);
    n->st->requests = ds->requests;
    n->st->throttled = ds->throttled;
    n->st->retries = ds->resends + n->item_retries;
    n->st->wcu_consumed = ds->consumed;
    el_throttle_figures *t = &n->st->thr;
    memcpy(t->by_reason, ds->by_reason, sizeof t->by_reason);
    t->unspecified = ds->unspecified;
    t->items_refused = n->items_refused;
    t->items_sent = n->items_sent;
    t->learned = ds->learned;
    if (n->pacer) {
        el_pacer_stats ps;
        el_pacer_stats_get(n->pacer, &ps);
        t->keys_paced = ps.keys_paced;
    }
}

/* What held the load back, in a word for the summary: the cause of most
 * refusals, or the budget when the load ran at it. */
static void limited_by(net *n, char *out, size_t len)
{
    const el_throttle_figures *t = &n->st->thr;
    out[0] = '\0';
    el_pacer_stats ps = { 0 };
    if (n->pacer)
        el_pacer_stats_get(n->pacer, &ps);
    struct { uint64_t count; const char *what; } c[] = {
        { n->refused_keyrange[EL_PACE_INDEX] +
              (ps.has_hottest && ps.hottest_kind == EL_PACE_INDEX ? ps.hottest_refusals : 0),
          "index key range" },
        { n->refused_keyrange[EL_PACE_TABLE] +
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
        { n->refused_unpaced, "the table's write capacity (items handed back unprocessed)" },
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
    double max_wcu = n->r->o->max_wcu;
    if (max_wcu > 0 && n->st->elapsed_s > 0 &&
        n->st->wcu_consumed >= 0.9 * max_wcu * n->st->elapsed_s)
        snprintf(out, len, "the --max-wcu budget (%.0f WCU/s)", max_wcu);
}

static el_err write_checkpoint(net *n, el_diag *diag)
{
    load_run *r = n->r;
    el_checkpoint *cp = n->cp;
    uint64_t high[r->ninputs ? r->ninputs : 1];
    bool has[r->ninputs ? r->ninputs : 1];
    el_rejects_snapshot(r->o->rejects, &cp->rejects_bytes, &cp->rejected, high, has,
                        r->ninputs);
    for (size_t i = 0; i < r->ninputs; i++) {
        const el_watermark *w = &n->tr[i];
        el_checkpoint_input *in = &cp->inputs[i];
        in->done = r->inputs[i].resume_done || el_watermark_complete(w);
        in->offset = in->done ? 0 /* not used */ : el_watermark_offset(w);
        in->rejects_high = high[i];
        in->has_rejects = has[i];
    }
    cp->items_written = r->base_written + n->st->items_written;
    /* the counter phase of the run resumed stays recorded until this run's
     * own counter phase replaces it */
    cp->has_counters = r->resume_counters;
    cp->counters_digest = r->resume_counters_digest;
    cp->counters_done = r->resume_counters_done;
    return el_checkpoint_write(r->o->checkpoint_path, cp, diag);
}

static void report(net *n, bool final)
{
    sync_stats(n);
    /* `edgeload counters` hands over no item: its progress is its reading */
    load_report(n->r, n->st, n->r->o->counters_only ? NULL : n->tr,
                el_ddb_driver_window(n->drv), final);
}

static el_err build_body(net *n, el_item *const *items, size_t count)
{
    el_buf *b = &n->body;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"RequestItems\":{");
    if (!err)
        err = el_json_put_string(b, n->r->o->mapping->table, strlen(n->r->o->mapping->table));
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
static el_err send_items(net *n, el_item *const *items, size_t count)
{
    double units = 0;
    for (size_t i = 0; i < count; i++)
        units += el_item_wcu(items[i]);
    el_err err = build_body(n, items, count);
    void *user = NULL;
    if (!err)
        err = el_ddb_driver_submit(n->drv, "BatchWriteItem", &n->body, units, on_answer, n,
                                   sizeof(batch), &user);
    if (err)
        return err;
    batch *bt = user;
    memcpy(bt->items, items, count * sizeof *items);
    bt->n = count;
    n->items_sent += count;
    return EL_OK;
}

/* Whether the item handed back shares its table or index partition key
 * with another item of the batch handed back too: a hot key's signature
 * (a table at its limit hands back items of every key). */
static bool shares_key_back(const batch *bt, const bool *back, size_t i)
{
    const el_item *it = bt->items[i];
    for (size_t j = 0; j < bt->n; j++) {
        if (j == i || !back[j])
            continue;
        const el_item *o = bt->items[j];
        if (o->pk_hash == it->pk_hash ||
            (has_index_key(it) && has_index_key(o) && o->ipk_hash == it->ipk_hash))
            return true;
    }
    return false;
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

static el_ddb_verdict on_written(net *n, batch *bt, const el_ddb_answer *a)
{
    el_ddb_batch_result br = { 0 };
    el_diag d;
    el_diag_clear(&d);
    const el_mapping *m = n->r->o->mapping;
    /* the driver's scan found nothing unprocessed: no second pass */
    if (!a->all_done &&
        el_ddb_parse_batch_write(a->body, a->len, m->pk_attr, m->sk_attr, &br, &d))
        return EL_DDB_AGAIN; /* an answer we cannot read is a lost reply: resend */
    double now = el_ddb_driver_now(n->drv);
    el_err err = EL_OK;
    bool unpaced_back = false; /* an item of a key not paced came back */
    double table_units = 0;    /* of those, units refused by the table's limit */
    n->items_refused += br.nunprocessed;
    bool back[EL_DDB_BATCH_ITEMS], spread[EL_DDB_BATCH_ITEMS];
    for (size_t i = 0; i < bt->n; i++) {
        back[i] = false;
        for (size_t k = 0; k < br.nunprocessed && !back[i]; k++)
            back[i] = key_matches(bt->items[i], &br.unprocessed[k]);
    }
    /* Items handed back of keys not paced, sharing no key with another
     * handed back: the table's limit. Two or more of them in one answer
     * are that limit for sure, and while the driver sends at a rate it
     * learned from the table their keys are not suspects (a table at its
     * limit hands back items of every key, and a key with many rows would
     * be paced for it); one alone may still be a hot key's. Without a
     * learned rate they stay suspects: pacing them is then what slows the
     * load down to the table (bench.sh part 7 with the table rate off:
     * 6 % refused with them paced, 17 % without). */
    bool table_paced = el_ddb_driver_stats_get(n->drv)->learned.rate > 0;
    size_t nspread = 0;
    for (size_t i = 0; i < bt->n; i++) {
        spread[i] = back[i] && !item_paced(n, bt->items[i]) && !shares_key_back(bt, back, i);
        if (spread[i]) {
            nspread++;
            table_units += el_item_wcu(bt->items[i]);
        }
    }
    for (size_t i = 0; i < bt->n; i++) {
        el_item *it = bt->items[i];
        if (back[i]) {
            /* which of its partition keys was too fast is not said: both
             * are suspects, paced when refused again */
            bool was_paced = item_paced(n, it);
            if (n->pacer && !(spread[i] && nspread >= 2 && table_paced)) {
                err = refused(n, it, EL_PACE_TABLE, false, now);
                if (!err && has_index_key(it))
                    err = refused(n, it, EL_PACE_INDEX, false, now);
                if (err)
                    break;
            }
            if (!was_paced) {
                unpaced_back = true;
                n->refused_unpaced++;
            }
            it->attempts++;
            /* a paced key's rows go at its pace; others after a backoff */
            it->not_before = item_paced(n, it)
                                 ? item_due(n, it, now)
                                 : now + el_ddb_driver_backoff_ms(n->drv, it->attempts);
            n->item_retries++;
            err = el_batcher_retry(n->b, it);
            if (err)
                break;
        } else {
            if (n->pacer && !el_pacer_idle(n->pacer)) {
                double u = item_units(it);
                el_pacer_granted(n->pacer, EL_PACE_TABLE, it->pk_hash, u, now);
                if (has_index_key(it))
                    el_pacer_granted(n->pacer, EL_PACE_INDEX, it->ipk_hash, u, now);
            }
            /* a shard directory item comes from no row: counted apart */
            if (it->chunk->input < n->r->ninputs)
                n->st->items_written++;
            else
                n->st->directory_items++;
            ack(n, it, true);
        }
    }
    el_ddb_batch_result_clear(&br);
    /* unprocessed items are throttling too: the window is cut unless they
     * were all of keys already paced (then only those keys are too fast);
     * those of no key paced and sharing no key with another item handed
     * back are the table's limit, for its learned rate */
    if (unpaced_back)
        el_ddb_driver_note_refused(n->drv, table_units);
    if (err) {
        el_diag_set(&d, err, "out of memory");
        el_ddb_driver_fail(n->drv, err, &d);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

/* A refused batch: split it to find the item DynamoDB refuses. */
static el_ddb_verdict on_refused(net *n, batch *bt, const el_ddb_answer *a)
{
    el_diag d;
    el_diag_clear(&d);
    el_err err = EL_OK;
    if (bt->n > 1) {
        size_t half = bt->n / 2;
        err = send_items(n, bt->items, half);
        if (!err)
            err = send_items(n, bt->items + half, bt->n - half);
        if (err)
            el_diag_set(&d, err, "out of memory");
    } else {
        el_item *it = bt->items[0];
        char reason[700];
        snprintf(reason, sizeof reason, "DynamoDB refused the item: %s: %s",
                 a->res.error_type, a->res.message);
        load_run *r = n->r;
        size_t idx = it->chunk->input;
        const char *path = idx < r->ninputs ? r->inputs[idx].path : "<shard directory>";
        if (idx < r->ninputs)
            atomic_fetch_add(&r->rows_rejected, 1); /* a row's outcome: rejected */
        err = el_rejects_item_from(r->o->rejects, idx, it->offset, path, it->line, reason,
                                   el_item_json(it), it->json_len, &d);
        if (r->o->on_reject) {
            el_diag at;
            el_diag_at(&at, EL_EREJECT, it->line, 0, it->offset, "%s", reason);
            r->o->on_reject(path, &at, r->o->reject_user);
        }
        ack(n, it, true);
    }
    if (err) {
        el_ddb_driver_fail(n->drv, err, &d);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

static el_ddb_verdict on_answer(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                                void *ctx)
{
    (void)d;
    net *n = ctx;
    batch *bt = el_ddb_op_user(op);
    if (a->res.outcome == EL_DDB_THROTTLED)
        return on_throttled(n, bt, a);
    return a->res.outcome == EL_DDB_SUCCESS ? on_written(n, bt, a) : on_refused(n, bt, a);
}

/* Takes one chunk from the queue into the window (an end marker only
 * updates its input's tracker). */
static el_err take_chunk(net *n, el_chunk *c)
{
    el_watermark *w = &n->tr[c->input];
    el_err err = EL_OK;
    if (c->eof)
        el_watermark_eof(w);
    else
        err = el_watermark_received(w, c->seq, c->start_offset, c->end_offset);
    if (err || c->eof) {
        el_chunk_free(c);
        return err;
    }
    el_chunk **v = el_grow(n->chunks, &n->chunks_cap, n->nchunks + 1, sizeof *v, 64);
    if (!v) {
        el_chunk_free(c);
        return EL_ENOMEM;
    }
    n->chunks = v;
    c->slot = n->nchunks;
    n->chunks[n->nchunks++] = c;
    for (size_t i = 0; i < c->nitems; i++) {
        err = el_batcher_add(n->b, &c->items[i]);
        if (err)
            return err;
    }
    return EL_OK;
}

/* Takes chunks from the queue while the window has room. block: wait for
 * one when there is nothing else to do. */
static el_err pull(net *n, bool block)
{
    void *p;
    while (el_batcher_has_room(n->b)) {
        bool got = block ? el_queue_pop(n->r->queue, &p) : el_queue_try_pop(n->r->queue, &p);
        if (!got)
            break;
        block = false;
        el_err err = take_chunk(n, p);
        if (err)
            return err;
    }
    return EL_OK;
}

/* Forms batches while the driver could send them at once. Batches stay
 * within one bucket of the capacity budget (el_batcher_form max_units),
 * so a budget smaller than 25 large items sends fewer items a request
 * instead of overdrawing the bucket. */
static el_err fill_window(net *n)
{
    el_item *items[EL_DDB_BATCH_ITEMS], *sup[LOAD_MAX_SUPERSEDED];
    double now = el_ddb_driver_now(n->drv);
    double max_units = el_ddb_driver_max_units(n->drv);
    /* with no key paced the gate would let every row go: not asked per row
     * (a row's call was ~30 instructions); keys become paced only in the
     * answers' callbacks, never while a batch is formed */
    if (n->pacer)
        el_batcher_set_gate(n->b, el_pacer_idle(n->pacer) ? NULL : gate, n);
    while (el_ddb_driver_wants(n->drv)) {
        size_t nsup;
        size_t cnt = el_batcher_form(n->b, now, EL_DDB_BATCH_ITEMS, EL_DDB_MAX_REQUEST_BYTES,
                                     max_units, items, sup, LOAD_MAX_SUPERSEDED, &nsup);
        /* the rows a later row of their key replaced before they went: the
         * run's duplicates, each row once */
        n->st->duplicates += nsup;
        for (size_t i = 0; i < nsup; i++)
            ack(n, sup[i], false);
        if (cnt == 0)
            return EL_OK;
        el_err err = send_items(n, items, cnt);
        if (err)
            return err;
    }
    return EL_OK;
}

/* How long a stopping run lets what is on the wire finish. */
#define DRAIN_MS 30000.0

static bool all_done(const net *n)
{
    return el_batcher_pending(n->b) == 0 && el_ddb_driver_pending(n->drv) == 0 &&
           el_queue_done(n->r->queue);
}

el_err load_network_stage(load_run *r, el_load_stats *st, el_diag *diag)
{
    net n = { .r = r, .st = st };
    const el_load_opts *o = r->o;
    el_buf_init(&n.body, EL_DDB_MAX_REQUEST_BYTES);
    n.b = el_batcher_new(LOAD_WINDOW_ITEMS);
    int concurrency = o->concurrency > 0 ? o->concurrency : 16;
    el_ddb_driver_opts dopts = { .concurrency = concurrency, .units_per_s = o->max_wcu,
                                 .max_retry_time_s = o->max_retry_time_s,
                                 .throttles_to_caller = true };
    /* Benchmark switches (docs/PERFORMANCE.md), not user options: without
     * per-key pacing every throttle is resent by the driver as before;
     * without the learned table rate (dynamo/tablerate.h), or without
     * either, refusals only shrink the window. */
    dopts.no_learned_rate = getenv("EDGELOAD_BENCH_NO_PACING") ||
                            getenv("EDGELOAD_BENCH_NO_TABLE_RATE");
    if (!getenv("EDGELOAD_BENCH_NO_PACING")) {
        n.pacer = el_pacer_new();
        if (n.pacer && n.b)
            el_batcher_set_gate(n.b, gate, &n);
    }
    el_err err = el_ddb_driver_new(o->ddb, &dopts, &n.drv, diag);
    pthread_mutex_lock(&r->mu);
    r->drv = n.drv;
    pthread_mutex_unlock(&r->mu);
    /* one tracker per input, plus one for the shard directory items */
    n.tr = calloc(r->ninputs + 1, sizeof *n.tr);
    for (size_t i = 0; n.tr && i <= r->ninputs; i++)
        el_watermark_init(&n.tr[i], i < r->ninputs ? r->inputs[i].resume_offset : 0);
    if (!err && (!n.b || !n.tr || (!n.pacer && !getenv("EDGELOAD_BENCH_NO_PACING"))))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    double now = n.drv ? el_ddb_driver_now(n.drv) : 0;
    double interval = (o->checkpoint_interval_s > 0 ? o->checkpoint_interval_s : 5) * 1000.0;
    n.next_checkpoint = now + interval;
    n.next_progress = now + 1000.0;
    if (!err && o->checkpoint_path) {
        n.cp = el_checkpoint_new(r->ninputs);
        if (!n.cp)
            err = EL_ENOMEM;
        for (size_t i = 0; !err && i < r->ninputs; i++)
            if (!(n.cp->inputs[i].path = strdup(r->inputs[i].path)))
                err = EL_ENOMEM;
        if (!err)
            n.cp->job_hash = r->job_hash;
        if (err)
            el_diag_set(diag, err, "out of memory");
    }
    /* a checkpoint from the first moment: a kill before the first interval
     * still leaves one to resume from */
    if (!err && n.cp)
        err = write_checkpoint(&n, diag);
    double drain_until = 0;
    while (!err) {
        now = el_ddb_driver_now(n.drv);
        bool stop = (o->stop && *o->stop) || atomic_load(&r->abort);
        if (stop && drain_until == 0) {
            /* stop taking input and sending; let what is on the wire finish */
            drain_until = now + DRAIN_MS;
            atomic_store(&r->abort, true);
            el_queue_close(r->queue);
            el_ddb_driver_hold(n.drv, true);
        }
        if (drain_until) {
            if (el_ddb_driver_inflight(n.drv) == 0 || now > drain_until)
                break;
        } else {
            bool idle = el_batcher_pending(n.b) == 0 && el_ddb_driver_pending(n.drv) == 0;
            if (idle && el_queue_done(r->queue))
                break;
            err = pull(&n, idle);
            if (!err)
                err = fill_window(&n);
            if (err) {
                el_diag_set(diag, err, "out of memory");
                break;
            }
        }
        now = el_ddb_driver_now(n.drv);
        if (n.pacer)
            el_pacer_expire(n.pacer, now);
        if (n.cp && now >= n.next_checkpoint) {
            n.next_checkpoint = now + interval;
            err = write_checkpoint(&n, diag);
            if (err)
                break;
        }
        if (now >= n.next_progress) {
            n.next_progress = now + 1000.0;
            report(&n, false);
        }
        if (!drain_until && all_done(&n))
            continue; /* all done: the loop's top ends it */
        /* Wake for a checkpoint or a progress report, and for an item put
         * back to the batcher that becomes due while the driver could take
         * it; the driver adds its own resends and budget. Readers wake us
         * (el_ddb_driver_wakeup) only when `hungry` says we wait for them. */
        double wake = n.next_progress;
        if (n.cp && n.next_checkpoint < wake)
            wake = n.next_checkpoint;
        double due = el_batcher_next_due(n.b);
        if (!drain_until && due >= 0 && due < wake && el_ddb_driver_wants(n.drv))
            wake = due;
        bool room = el_ddb_driver_wants(n.drv) && el_batcher_has_room(n.b);
        if (room && !drain_until && !el_queue_done(r->queue)) {
            atomic_store(&r->hungry, true);
            /* a chunk may have come between pull() and now: then don't sleep */
            void *peek;
            if (el_queue_try_pop(r->queue, &peek)) {
                atomic_store(&r->hungry, false);
                err = take_chunk(&n, peek);
                if (err) {
                    el_diag_set(diag, err, "out of memory");
                    break;
                }
                continue;
            }
        }
        err = el_ddb_driver_step(n.drv, wake, diag);
        atomic_store(&r->hungry, false);
        /* a failure the driver or a callback stopped on is said in diag */
    }
    bool interrupted = !err && o->stop && *o->stop;
    if (n.drv)
        sync_stats(&n);
    if (n.cp) {
        /* requests still out are dropped below: their items were never
         * acknowledged, so the watermark stays below them */
        el_diag cd;
        el_diag_clear(&cd);
        el_err cerr = write_checkpoint(&n, &cd);
        if (cerr && !err) {
            err = cerr;
            *diag = cd;
        }
    }
    if (n.drv) {
        st->elapsed_s = (el_ddb_driver_now(n.drv) - r->t0) / 1000.0;
        limited_by(&n, st->thr.limited_by, sizeof st->thr.limited_by);
        report(&n, true);
    }
    pthread_mutex_lock(&r->mu); /* no reader wakes it from now on (load_wake_network) */
    r->drv = NULL;
    pthread_mutex_unlock(&r->mu);
    el_ddb_driver_free(n.drv);
    for (size_t i = 0; i < n.nchunks; i++)
        el_chunk_free(n.chunks[i]);
    if (n.tr)
        for (size_t i = 0; i <= r->ninputs; i++)
            el_watermark_free(&n.tr[i]);
    free(n.tr);
    free(n.chunks);
    el_checkpoint_free(n.cp);
    el_batcher_free(n.b);
    el_pacer_free(n.pacer);
    el_buf_free(&n.body);
    if (!err && interrupted)
        return EL_EINTR;
    return err;
}
