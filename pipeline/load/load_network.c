/*
 * load_network.c - the network stage of a load: chunks from the queue are
 * taken into the sender's window (sender.h), which forms BatchWriteItem
 * requests, hands them to the request driver (dynamo/ddb_driver.h) and
 * judges every answer item by item. Here: the chunks, the acknowledgements
 * (a chunk's arena goes when its last item is done, and its input's
 * watermark moves), rejects, the checkpoint and the progress reports.
 *
 * DESIGN: the stage runs on the calling thread and is the only owner of the
 * sender, the chunks after they are queued, and every request: no locks on
 * the hot path. An item is acknowledged exactly once: written, refused (to
 * the rejects file) or superseded by a later row of its key.
 */
#include "pipeline/load/load_run.h"

#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strdup */

#include "common/vec.h"        /* el_grow */
#include "dynamo/ddb_driver.h"
#include "pipeline/flow/checkpoint.h"
#include "pipeline/rows/rejects.h"
#include "pipeline/load/sender.h"
#include "pipeline/flow/watermark.h"

typedef struct net {
    load_run *r;
    el_ddb_driver *drv;
    el_sender *snd;
    el_chunk **chunks;       /* chunks taken from the queue, not yet freed */
    size_t nchunks, chunks_cap;
    el_watermark *tr;        /* one per input, plus the shard directory's */
    el_load_stats *st;
    double next_checkpoint, next_progress;
    el_checkpoint *cp;       /* reused for every write */
} net;

/* The item is done: its chunk's count goes down, and when it was the
 * chunk's last the arena goes in one call and the watermark moves. */
static void ack(net *n, el_item *it)
{
    el_chunk *c = it->chunk;
    if (--c->unacked == 0) {
        el_watermark_done(&n->tr[c->input], c->seq);
        el_chunk *last = n->chunks[--n->nchunks];
        n->chunks[c->slot] = last;
        last->slot = c->slot;
        el_chunk_free(c);
    }
}

/* What became of an item the sender was given (sender.h's done). */
static el_err item_done(void *ctx, el_item *it, el_sent how, const char *reason, el_diag *diag)
{
    net *n = ctx;
    load_run *r = n->r;
    size_t idx = it->chunk->input;
    el_err err = EL_OK;
    switch (how) {
    case EL_SENT_WRITTEN:
        /* a shard directory item comes from no row: counted apart */
        if (idx < r->ninputs)
            n->st->items_written++;
        else
            n->st->directory_items++;
        break;
    case EL_SENT_SUPERSEDED:
        /* a later row of its key replaced it before it went: the run's
         * duplicates, each row once */
        n->st->duplicates++;
        break;
    case EL_SENT_REFUSED: {
        const char *path = idx < r->ninputs ? r->inputs[idx].path : "<shard directory>";
        if (idx < r->ninputs)
            atomic_fetch_add(&r->rows_rejected, 1); /* a row's outcome: rejected */
        err = el_rejects_item_from(r->o->rejects, idx, it->offset, path, it->line, reason,
                                   el_item_json(it), it->json_len, diag);
        if (r->o->on_reject) {
            el_diag at;
            el_diag_at(&at, EL_EREJECT, it->line, 0, it->offset, "%s", reason);
            r->o->on_reject(path, &at, r->o->reject_user);
        }
        break;
    }
    }
    ack(n, it);
    return err;
}

/* The figures the driver and the sender keep, in the load's terms. */
static void sync_stats(net *n)
{
    const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(n->drv);
    uint64_t item_retries = 0;
    n->st->requests = ds->requests;
    n->st->throttled = ds->throttled;
    n->st->wcu_consumed = ds->consumed;
    if (n->snd)
        el_sender_figures(n->snd, &n->st->thr, &item_retries);
    n->st->retries = ds->resends + item_retries;
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
        err = el_sender_add(n->snd, &c->items[i]);
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
    while (el_sender_has_room(n->snd)) {
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

/* How long a stopping run lets what is on the wire finish. */
#define DRAIN_MS 30000.0

static bool all_done(const net *n)
{
    return el_sender_pending(n->snd) == 0 && el_ddb_driver_pending(n->drv) == 0 &&
           el_queue_done(n->r->queue);
}

el_err load_network_stage(load_run *r, el_load_stats *st, el_diag *diag)
{
    net n = { .r = r, .st = st };
    const el_load_opts *o = r->o;
    int concurrency = o->concurrency > 0 ? o->concurrency : EL_DEFAULT_CONCURRENCY;
    el_ddb_driver_opts dopts = { .concurrency = concurrency, .units_per_s = o->max_wcu,
                                 .max_retry_time_s = o->max_retry_time_s,
                                 .throttles_to_caller = true };
    /* benchmark switches: see el_load_opts */
    bool no_pacing = o->bench_no_pacing;
    dopts.no_learned_rate = no_pacing || o->bench_no_table_rate;
    el_err err;
    if (o->transport) {
        /* el_load_run frees it: the counter phase makes its driver on it too */
        el_ddb_transport t = *o->transport;
        t.free = NULL;
        err = el_ddb_driver_new_with(&t, &dopts, NULL, &n.drv, diag);
    } else {
        err = el_ddb_driver_new(o->ddb, &dopts, &n.drv, diag);
    }
    if (!err) {
        const el_mapping *m = o->mapping;
        el_sender_cfg sc = { .table = m->table, .pk_attr = m->pk_attr, .sk_attr = m->sk_attr,
                             .index_pk_attr = m->index_pk_attr,
                             .window_items = LOAD_WINDOW_ITEMS, .no_pacing = no_pacing,
                             .no_interleave = o->bench_no_interleave,
                             .done = item_done, .ctx = &n };
        if (el_sender_new(n.drv, &sc, &n.snd))
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&r->mu);
    r->drv = n.drv;
    pthread_mutex_unlock(&r->mu);
    /* one tracker per input, plus one for the shard directory items */
    n.tr = calloc(r->ninputs + 1, sizeof *n.tr);
    for (size_t i = 0; n.tr && i <= r->ninputs; i++)
        el_watermark_init(&n.tr[i], i < r->ninputs ? r->inputs[i].resume_offset : 0);
    if (!err && !n.tr)
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    double now = n.drv ? el_ddb_driver_now(n.drv) : 0;
    double interval = (o->checkpoint_interval_s > 0 ? o->checkpoint_interval_s : EL_CHECKPOINT_INTERVAL_S) * 1000.0;
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
            bool idle = el_sender_pending(n.snd) == 0 && el_ddb_driver_pending(n.drv) == 0;
            if (idle && el_queue_done(r->queue))
                break;
            err = pull(&n, idle);
            if (err) {
                el_diag_set(diag, err, "out of memory");
                break;
            }
            err = el_sender_fill(n.snd, diag);
            if (err)
                break;
        }
        now = el_ddb_driver_now(n.drv);
        el_sender_tick(n.snd, now);
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
        double due = el_sender_next_due(n.snd);
        if (!drain_until && due >= 0 && due < wake && el_ddb_driver_wants(n.drv))
            wake = due;
        bool room = el_ddb_driver_wants(n.drv) && el_sender_has_room(n.snd);
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
        st->elapsed_s = (el_clock_now(r->o->clock) - r->t0) / 1000.0;
        if (n.snd)
            el_sender_limited_by(n.snd, o->max_wcu, st->elapsed_s, st->wcu_consumed,
                                 st->thr.limited_by, sizeof st->thr.limited_by);
        report(&n, true);
    }
    pthread_mutex_lock(&r->mu); /* no reader wakes it from now on (load_wake_network) */
    r->drv = NULL;
    pthread_mutex_unlock(&r->mu);
    el_sender_free(n.snd);
    el_ddb_driver_free(n.drv);
    for (size_t i = 0; i < n.nchunks; i++)
        el_chunk_free(n.chunks[i]);
    if (n.tr)
        for (size_t i = 0; i <= r->ninputs; i++)
            el_watermark_free(&n.tr[i]);
    free(n.tr);
    free(n.chunks);
    el_checkpoint_free(n.cp);
    if (!err && interrupted)
        return EL_EINTR;
    return err;
}
