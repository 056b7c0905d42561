/*
 * load_network.c - the network stage of a load: items from the queue are
 * formed into BatchWriteItem requests (batcher.h), kept --concurrency in
 * flight on a curl multi handle driven over epoll (netloop.h), resent when
 * unprocessed, throttled or failed (with backoff), bisected when refused
 * to find the bad item, and acknowledged exactly once.
 *
 * DESIGN: the stage runs on the calling thread and is the only owner of the
 * batcher, the chunks after they are queued, and every request: no locks on
 * the hot path. An item is acknowledged exactly once: written, refused (to
 * the rejects file) or superseded by a later row of its key; a chunk's
 * arena goes when its last item is, and the watermark moves.
 */
#include "pipeline/load_internal.h"

#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* memcpy, strlen, memcmp */

#include "common/backoff.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/vec.h"        /* el_grow */
#include "dynamo/ddb_errors.h" /* one line for a refusal */
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/batcher.h"
#include "pipeline/checkpoint.h"
#include "dynamo/ratectl.h"
#include "pipeline/rejects.h"
#include "pipeline/watermark.h"

/* ---- the network stage ---- */

typedef struct sendreq {
    el_ddb_req *req;
    el_item *items[EL_DDB_BATCH_ITEMS];
    size_t n;
    unsigned attempt;
    double wcu_estimate;     /* taken from the --max-wcu bucket when sent */
    double not_before;       /* resend time while waiting */
    size_t slot;             /* index in net.out while on the multi handle */
} sendreq;

typedef struct net {
    load_run *r;
    el_batcher *b;
    el_netloop *loop;
    CURLM *multi;            /* the loop's */
    size_t inflight;
    sendreq **out;           /* requests on the multi handle (inflight of them) */
    size_t out_cap;
    el_chunk **chunks;       /* chunks taken from the queue, not yet freed */
    size_t nchunks, chunks_cap;
    /* Requests to resend after a backoff: a min-heap by not_before. Under
     * throttling thousands wait, and a list walked twice per wake-up (the
     * due ones, the next due time) had up to 30 % of a throttled load's
     * perf samples.
     * It has room for every live request, so queueing one never fails. */
    sendreq **waiting;
    size_t nwaiting;
    size_t nreqs, reqs_cap;  /* requests alive; the capacity of waiting */
    el_watermark *tr;        /* one per input, plus the shard directory's */
    el_load_stats *st;
    el_rate rate;
    uint64_t rng;
    double failing_since;    /* start of continuous non-throttle failure, 0 = none */
    double next_checkpoint, next_progress;
    el_checkpoint *cp;       /* reused for every write */
    el_buf body;
    /* A batch formed while the capacity budget could not pay for it: it
     * goes first once the budget allows (its items stay out of the
     * batcher, their keys held). */
    el_item *held[EL_DDB_BATCH_ITEMS];
    size_t nheld;
    double held_wcu;
} net;

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
    return el_checkpoint_write(r->o->checkpoint_path, cp, diag);
}

static void report(net *n, bool final)
{
    /* `edgeload counters` hands over no item: its progress is its reading */
    load_report(n->r, n->st, n->r->o->counters_only ? NULL : n->tr, el_rate_window(&n->rate),
                final);
}

/* Puts a request on the multi handle and remembers it. */
static el_err start(net *n, sendreq *s)
{
    sendreq **v = el_grow(n->out, &n->out_cap, n->inflight + 1, sizeof *v, 64);
    if (!v)
        return EL_ENOMEM;
    n->out = v;
    el_ddb_req_reset(s->req);
    if (curl_multi_add_handle(n->multi, el_ddb_req_handle(s->req)) != CURLM_OK)
        return EL_ENET;
    s->slot = n->inflight;
    n->out[n->inflight++] = s;
    n->st->requests++;
    return EL_OK;
}

/* Takes a finished request off the multi handle. */
static void stop_req(net *n, sendreq *s)
{
    curl_multi_remove_handle(n->multi, el_ddb_req_handle(s->req));
    sendreq *last = n->out[--n->inflight];
    n->out[s->slot] = last;
    last->slot = s->slot;
}

static el_err build_body(net *n, el_item **items, size_t count)
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

static void free_req(net *n, sendreq *s);

static el_err send_items(net *n, el_item **items, size_t count, unsigned attempt,
                         double wcu_estimate)
{
    sendreq **v = el_grow(n->waiting, &n->reqs_cap, n->nreqs + 1, sizeof *v, 64);
    if (!v)
        return EL_ENOMEM;
    n->waiting = v;
    sendreq *s = calloc(1, sizeof *s);
    if (!s)
        return EL_ENOMEM;
    memcpy(s->items, items, count * sizeof *items);
    s->n = count;
    s->attempt = attempt;
    s->wcu_estimate = wcu_estimate;
    el_err err = build_body(n, items, count);
    if (!err)
        err = el_ddb_req_new(n->r->o->ddb, "BatchWriteItem", &n->body, s, &s->req);
    if (err) {
        free(s);
        return err;
    }
    n->nreqs++;
    err = start(n, s);
    if (err)
        free_req(n, s);
    return err;
}

static void free_req(net *n, sendreq *s)
{
    n->nreqs--;
    el_ddb_req_free(s->req);
    free(s);
}

/* Queues s for a resend at s->not_before (room is kept by send_items). */
static void wait_push(net *n, sendreq *s)
{
    size_t i = n->nwaiting++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (n->waiting[up]->not_before <= s->not_before)
            break;
        n->waiting[i] = n->waiting[up];
        i = up;
    }
    n->waiting[i] = s;
}

/* Takes the waiting request due first (there is one). */
static sendreq *wait_pop(net *n)
{
    sendreq *top = n->waiting[0];
    sendreq *last = n->waiting[--n->nwaiting];
    size_t i = 0, len = n->nwaiting;
    if (len == 0)
        return top;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && n->waiting[c + 1]->not_before < n->waiting[c]->not_before)
            c++;
        if (last->not_before <= n->waiting[c]->not_before)
            break;
        n->waiting[i] = n->waiting[c];
        i = c;
    }
    n->waiting[i] = last;
    return top;
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

static void schedule_resend(net *n, sendreq *s, double now)
{
    s->attempt++;
    s->not_before = now + el_backoff_ms(s->attempt, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS,
                                        el_rand_unit(&n->rng));
    wait_push(n, s);
}

static el_err on_success(net *n, sendreq *s, double now)
{
    size_t len;
    const char *resp = el_ddb_req_response(s->req, &len);
    el_ddb_batch_result br;
    el_diag d;
    el_diag_clear(&d);
    const el_mapping *m = n->r->o->mapping;
    el_err err = el_ddb_parse_batch_write(resp, len, m->pk_attr, m->sk_attr, &br, &d);
    if (err) {
        /* An answer we cannot read is treated like a lost reply: resend. */
        n->st->retries++;
        schedule_resend(n, s, now);
        return EL_OK;
    }
    n->st->wcu_consumed += br.consumed_wcu;
    el_rate_settle(&n->rate, s->wcu_estimate, br.consumed_wcu);
    if (br.nunprocessed > 0)
        el_rate_on_throttle(&n->rate, now); /* unprocessed items are throttling too */
    else
        el_rate_on_success(&n->rate);
    for (size_t i = 0; i < s->n; i++) {
        el_item *it = s->items[i];
        bool unprocessed = false;
        for (size_t k = 0; k < br.nunprocessed && !unprocessed; k++)
            unprocessed = key_matches(it, &br.unprocessed[k]);
        if (unprocessed) {
            it->attempts++;
            it->not_before = now + el_backoff_ms(it->attempts, EL_BACKOFF_BASE_MS,
                                                 EL_BACKOFF_CAP_MS, el_rand_unit(&n->rng));
            n->st->retries++;
            err = el_batcher_retry(n->b, it);
            if (err)
                break;
        } else {
            /* a shard directory item comes from no row: counted apart */
            if (it->chunk->input < n->r->ninputs)
                n->st->items_written++;
            else
                n->st->directory_items++;
            ack(n, it, true);
        }
    }
    el_ddb_batch_result_clear(&br);
    free_req(n, s);
    return err;
}

/* A refused batch: split it to find the item DynamoDB refuses. */
static el_err on_rejected(net *n, sendreq *s, const el_ddb_result *res)
{
    el_err err = EL_OK;
    if (s->n > 1) {
        size_t half = s->n / 2;
        err = send_items(n, s->items, half, 0, 0);
        if (!err)
            err = send_items(n, s->items + half, s->n - half, 0, 0);
    } else {
        el_item *it = s->items[0];
        el_diag d;
        el_diag_clear(&d);
        char reason[700];
        snprintf(reason, sizeof reason, "DynamoDB refused the item: %s: %s", res->error_type,
                 res->message);
        size_t idx = it->chunk->input;
        const char *path = idx < n->r->ninputs ? n->r->inputs[idx].path : "<shard directory>";
        if (idx < n->r->ninputs)
            atomic_fetch_add(&n->r->rows_rejected, 1); /* a row's outcome: rejected */
        err = el_rejects_item_from(n->r->o->rejects, idx, it->offset, path, it->line, reason,
                                   el_item_json(it), it->json_len, &d);
        if (n->r->o->on_reject) {
            el_diag at;
            el_diag_at(&at, EL_EREJECT, it->line, 0, it->offset, "%s", reason);
            n->r->o->on_reject(path, &at, n->r->o->reject_user);
        }
        ack(n, it, true);
        if (err) {
            free_req(n, s);
            load_fail(n->r, err, &d);
            return err;
        }
    }
    free_req(n, s);
    return err;
}

static el_err on_done(net *n, sendreq *s, CURLcode code)
{
    el_ddb_result res;
    double now = el_now_ms();
    el_ddb_req_finish(s->req, code, &res);
    switch (res.outcome) {
    case EL_DDB_SUCCESS:
        n->failing_since = 0;
        return on_success(n, s, now);
    case EL_DDB_THROTTLED:
        n->st->throttled++;
        n->st->retries++;
        el_rate_on_throttle(&n->rate, now);
        schedule_resend(n, s, now);
        return EL_OK;
    case EL_DDB_TRANSIENT:
        if (n->failing_since == 0)
            n->failing_since = now;
        if (now - n->failing_since > n->r->o->max_retry_time_s * 1000.0) {
            el_diag d;
            el_diag_set(&d, EL_ENET, "giving up after %.0f s of continuous failures; last: %s%s%s",
                        n->r->o->max_retry_time_s, res.error_type,
                        res.error_type[0] ? ": " : "", res.message);
            free_req(n, s); /* its items stay unacknowledged: nothing is claimed written */
            load_fail(n->r, EL_ENET, &d);
            return EL_ENET;
        }
        n->st->retries++;
        schedule_resend(n, s, now);
        return EL_OK;
    case EL_DDB_REJECTED:
        n->failing_since = 0;
        return on_rejected(n, s, &res);
    case EL_DDB_FATAL:
        break;
    }
    el_diag d; /* one line to act on: expired token, wrong region... (ddb_errors.h) */
    (void)el_ddb_fail(&d, &res, el_ddb_config(n->r->o->ddb), "BatchWriteItem");
    free_req(n, s);
    load_fail(n->r, EL_ESERVICE, &d);
    return EL_ESERVICE;
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

/* Forms and sends batches while the window and the capacity budget allow.
 * *wait_ms gets how long the budget wants us to wait (0 = not limited).
 * With a budget, a batch is formed first and then paid for: its cost is
 * known only once its items are chosen, and a batch is never sent on
 * credit it does not have (a batch larger than the whole bucket waits for
 * a full bucket; el_batcher_form keeps batches within one bucket unless a
 * single item is larger). */
static el_err fill_window(net *n, double now, double *wait_ms)
{
    el_item *sup[LOAD_MAX_SUPERSEDED];
    bool budget = n->rate.wcu_per_s > 0;
    *wait_ms = 0;
    while ((int)n->inflight < el_rate_window(&n->rate)) {
        if (n->nheld == 0) {
            size_t nsup;
            size_t cnt = el_batcher_form(n->b, now, EL_DDB_BATCH_ITEMS,
                                         EL_DDB_MAX_REQUEST_BYTES,
                                         budget ? n->rate.capacity : 0, n->held, sup,
                                         LOAD_MAX_SUPERSEDED, &nsup);
            /* the rows a later row of their key replaced before they went:
             * the run's duplicates, each row once */
            n->st->duplicates += nsup;
            for (size_t i = 0; i < nsup; i++)
                ack(n, sup[i], false);
            if (cnt == 0)
                return EL_OK;
            n->nheld = cnt;
            n->held_wcu = 0;
            for (size_t i = 0; i < cnt; i++)
                n->held_wcu += el_item_wcu(n->held[i]);
        }
        if (budget) {
            double w = el_rate_wait_ms(&n->rate, n->held_wcu, now);
            if (w > 0) {
                *wait_ms = w;
                return EL_OK;
            }
            (void)el_rate_take(&n->rate, n->held_wcu, now);
        }
        unsigned attempt = 0;
        for (size_t i = 0; i < n->nheld; i++)
            if (n->held[i]->attempts > attempt)
                attempt = n->held[i]->attempts;
        size_t cnt = n->nheld;
        n->nheld = 0;
        el_err err = send_items(n, n->held, cnt, attempt, n->held_wcu);
        if (err)
            return err;
    }
    return EL_OK;
}

#define DRAIN_MS 30000.0

el_err load_network_stage(load_run *r, el_load_stats *st, el_diag *diag)
{
    net n = { .r = r, .st = st, .rng = (uint64_t)el_now_ms() ^ 0x5eed };
    el_buf_init(&n.body, EL_DDB_MAX_REQUEST_BYTES);
    n.b = el_batcher_new(LOAD_WINDOW_ITEMS);
    el_err lerr = el_netloop_new(&n.loop);
    n.multi = n.loop ? el_netloop_multi(n.loop) : NULL;
    pthread_mutex_lock(&r->mu);
    r->loop = n.loop;
    pthread_mutex_unlock(&r->mu);
    /* one tracker per input, plus one for the shard directory items */
    n.tr = calloc(r->ninputs + 1, sizeof *n.tr);
    for (size_t i = 0; n.tr && i <= r->ninputs; i++)
        el_watermark_init(&n.tr[i], i < r->ninputs ? r->inputs[i].resume_offset : 0);
    el_err err = lerr ? lerr : (n.b && n.tr) ? EL_OK : EL_ENOMEM;
    const el_load_opts *o = r->o;
    int concurrency = o->concurrency > 0 ? o->concurrency : 16;
    double now = el_now_ms();
    el_rate_init(&n.rate, concurrency, o->max_wcu, now);
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
    }
    if (!err) {
        curl_multi_setopt(n.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)concurrency);
        curl_multi_setopt(n.multi, CURLMOPT_MAXCONNECTS, (long)concurrency);
    }
    if (err)
        el_diag_set(diag, err, lerr == EL_EIO ? "cannot create the network event loop"
                                              : "out of memory");
    /* a checkpoint from the first moment: a kill before the first interval
     * still leaves one to resume from */
    if (!err && n.cp)
        err = write_checkpoint(&n, diag);
    double drain_until = 0;
    while (!err) {
        now = el_now_ms();
        bool stop = (o->stop && *o->stop) || atomic_load(&r->abort);
        if (stop && drain_until == 0) {
            /* stop taking input; let what is on the wire finish */
            drain_until = now + DRAIN_MS;
            atomic_store(&r->abort, true);
            el_queue_close(r->queue);
        }
        if (drain_until) {
            if (n.inflight == 0 || now > drain_until)
                break;
        } else {
            bool idle = el_batcher_pending(n.b) == 0 && n.nheld == 0 && n.inflight == 0 &&
                        n.nwaiting == 0;
            if (idle && el_queue_done(r->queue))
                break;
            err = pull(&n, idle);
            if (err) {
                el_diag_set(diag, err, "out of memory");
                break;
            }
            now = el_now_ms();
            /* resend requests whose backoff has passed; a resend costs
             * capacity again (a throttled or failed request consumed
             * nothing that was counted) */
            while (n.nwaiting > 0 && n.waiting[0]->not_before <= now &&
                   (int)n.inflight < el_rate_window(&n.rate)) {
                if (n.rate.wcu_per_s > 0) {
                    if (el_rate_wait_ms(&n.rate, n.waiting[0]->wcu_estimate, now) > 0)
                        break;
                    (void)el_rate_take(&n.rate, n.waiting[0]->wcu_estimate, now);
                }
                sendreq *s = wait_pop(&n);
                err = start(&n, s);
                if (err) {
                    free_req(&n, s);
                    break;
                }
            }
        }
        double budget_wait = 0;
        if (!err && !drain_until)
            err = fill_window(&n, now, &budget_wait);
        if (err) {
            el_diag_set(diag, err, "%s", el_strerror(err));
            break;
        }
        /* start what fill_window and the resends added (libcurl sets a 0 ms
         * timer for a new transfer); answers arrive in el_netloop_wait */
        el_netloop_run_timers(n.loop);
        CURLMsg *msg;
        int left;
        bool answered = false;
        while (!err && (msg = curl_multi_info_read(n.multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            answered = true;
            CURLcode code = msg->data.result;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&req);
            sendreq *s = el_ddb_req_user(req);
            stop_req(&n, s);
            err = on_done(&n, s, code);
        }
        if (err) {
            /* on_done recorded the reason with load_fail() */
            break;
        }
        now = el_now_ms();
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
        /* Sleep until a transfer moves, a retry or the capacity budget is
         * due, a checkpoint or progress report is due, or (when there is
         * room for more) a reader hands over a chunk: readers wake us with
         * el_netloop_wakeup only when `hungry` says we wait for them. */
        double timeout = 1000;
        if (budget_wait > 0 && budget_wait < timeout)
            timeout = budget_wait;
        /* A due retry or resend counts only when it can go: with every
         * slot of the window taken, only an answer frees one, and its
         * socket wakes us (counting it made this loop turn at timeout 0
         * while throttled rows waited behind a full window). Not while
         * draining: nothing is sent. Retried rows go through the capacity
         * budget too: while it makes us wait, its wait is the timeout. */
        bool can_send = !drain_until && (int)n.inflight < el_rate_window(&n.rate);
        double due = can_send && budget_wait <= 0 ? el_batcher_next_due(n.b) : -1;
        if (can_send && n.nwaiting > 0 && (due < 0 || n.waiting[0]->not_before < due))
            due = n.waiting[0]->not_before;
        if (n.cp && (due < 0 || n.next_checkpoint < due))
            due = n.next_checkpoint;
        if (due < 0 || n.next_progress < due)
            due = n.next_progress;
        if (due - now < timeout)
            timeout = due > now ? due - now : 0;
        if (n.inflight == 0 && n.nwaiting == 0 && n.nheld == 0 &&
            el_batcher_pending(n.b) == 0 && el_queue_done(r->queue))
            continue; /* all done: the loop's top ends it */
        if (answered && !drain_until && (int)n.inflight < el_rate_window(&n.rate))
            continue; /* an answer freed a slot: send again before sleeping */
        bool room = (int)n.inflight < el_rate_window(&n.rate) && el_batcher_has_room(n.b);
        if (room && !drain_until && !el_queue_done(r->queue)) {
            atomic_store(&r->hungry, true);
            /* a chunk may have come between pull() and now: then don't sleep */
            void *peek;
            if (el_queue_try_pop(r->queue, &peek)) {
                atomic_store(&r->hungry, false);
                err = take_chunk(&n, peek);
                if (err)
                    break;
                continue;
            }
        }
        /* even with nothing to wait for (timeout 0), ready sockets must be
         * handed to libcurl here: nothing else reads them */
        err = el_netloop_wait(n.loop, timeout > 0 ? (int)timeout + 1 : 0);
        atomic_store(&r->hungry, false);
        if (err) {
            el_diag_set(diag, err, "waiting for the network failed");
            break;
        }
    }
    bool interrupted = !err && o->stop && *o->stop;
    /* Requests still out are dropped: their items were never acknowledged,
     * so nothing is counted as written that was not, and the checkpoint's
     * watermark stays below them. */
    while (n.inflight) {
        sendreq *s = n.out[n.inflight - 1];
        stop_req(&n, s);
        free_req(&n, s);
    }
    if (n.cp) {
        el_diag cd;
        el_diag_clear(&cd);
        el_err cerr = write_checkpoint(&n, &cd);
        if (cerr && !err) {
            err = cerr;
            *diag = cd;
        }
    }
    report(&n, true);
    while (n.nwaiting > 0)
        free_req(&n, wait_pop(&n));
    free(n.waiting);
    for (size_t i = 0; i < n.nchunks; i++)
        el_chunk_free(n.chunks[i]);
    if (n.tr)
        for (size_t i = 0; i <= r->ninputs; i++)
            el_watermark_free(&n.tr[i]);
    free(n.tr);
    free(n.chunks);
    free(n.out);
    el_checkpoint_free(n.cp);
    pthread_mutex_lock(&r->mu); /* no reader wakes it from now on (wake_network) */
    r->loop = NULL;
    pthread_mutex_unlock(&r->mu);
    el_netloop_free(n.loop);
    el_batcher_free(n.b);
    el_buf_free(&n.body);
    if (!err && interrupted)
        return EL_EINTR;
    return err;
}

