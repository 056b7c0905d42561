/*
 * ddb_driver.c - the request driver: window, budget, retries, answers.
 *
 * DESIGN: every bulk path of edgeload had grown its own copy of this loop
 * (load on epoll, verify, counters and incremental on curl_multi_perform),
 * each with its own retry classification, backoff, give-up rule and
 * ConsumedCapacity parsing; a fix to one was a fix to one. Here the policy
 * is written once, against a transport interface, so that the same code
 * runs over libcurl (ddb_transport_curl.c) and over a scripted transport in
 * the unit tests, where time is the test's and every decision can be
 * checked exactly.
 *
 * Requests wait in two places before they go: a FIFO of fresh ones, and a
 * min-heap of resends by their due time (under throttling thousands wait;
 * a list walked per wake-up was up to 30 % of a throttled load's samples).
 * A due resend goes before a fresh request. Either waits for a free slot of
 * the window and for the budget to pay its estimate: a request is never
 * sent on credit the bucket does not have, and a request costing more than
 * the whole bucket goes when the bucket is full (ratectl.h), so the
 * consumed rate holds whatever the request sizes.
 */
#include "dynamo/ddb_driver.h"

#include <stdio.h>    /* snprintf: a reason's resource */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* memcpy, strlen */

#include "common/backoff.h"
#include "common/vec.h"        /* el_grow */
#include "dynamo/ddb_errors.h" /* el_ddb_fail: one line for refused credentials */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"
#include "dynamo/ratectl.h"
#include "dynamo/tablerate.h"

#define MAX_OP_NAME 128
/* Backoff exponents stop growing here (the delay is capped long before). */
#define MAX_BACKOFF_ATTEMPT 30
#define DEFAULT_MAX_RETRY_S 900.0
/* Bodies of finished requests kept for the callers' next ones: a body
 * built into an empty buffer grows by doubling, 7 reallocations for a
 * BatchWriteItem of 25 edges (~160 instructions an item under callgrind,
 * 1 % of a load into nullddb.c). One a slot of the default window; larger
 * storage than a pooled request keeps is freed. */
#define SPARE_BODIES 16

typedef enum op_state { OP_QUEUED, OP_WAITING, OP_INFLIGHT, OP_IDLE } op_state;

struct el_ddb_op {
    char name[MAX_OP_NAME];
    el_buf body;               /* until a transport takes it (el_ddb_op_take_body) */
    const char *body_ptr;      /* the body as sent, wherever it lives */
    size_t body_len;
    double units;              /* the budget's estimate */
    unsigned attempts;         /* sends so far */
    bool skew_resent;          /* resent once after a clock refusal (aws/skew.h) */
    double not_before;         /* while waiting: due time (ms) */
    double sent_at;            /* the last send (ms): the learned rate's samples go by it */
    op_state state;
    el_ddb_done_fn done;
    void *ctx;
    void *transport;           /* the transport's handle */
    el_ddb_op *next;           /* in the FIFO */
    el_ddb_op *live_prev, *live_next; /* every request not done */
    size_t user_size;
    max_align_t user[];        /* the caller's state */
};

struct el_ddb_driver {
    el_ddb_transport t;
    const el_aws_config *cfg;  /* for the one-line explanations; may be NULL */
    el_rate rate;
    el_trate learned;          /* the rate the table grants, when it refuses */
    bool learn;
    const el_ddb_limiter *limiter; /* another policy in place of the window's cuts and learn */
    double cb_refused;         /* units the running callback noted as refused */
    bool in_callback;
    double max_retry_ms;
    uint64_t rng;
    double failing_since;      /* start of failures without a success, 0 = none */
    el_ddb_op *fifo_head, *fifo_tail;
    size_t nfifo;
    el_ddb_op **heap;          /* resends by not_before */
    size_t nheap, heap_cap;
    el_ddb_op *live;           /* every request not done */
    size_t nlive, inflight;
    el_ddb_driver_stats st;
    el_buf spare[SPARE_BODIES]; /* empty bodies with storage, for el_ddb_driver_submit */
    size_t nspare;
    bool held;                 /* el_ddb_driver_hold: send nothing */
    bool throttles_to_caller;
    el_err err;                /* the error that stops the run, EL_OK while going */
    el_diag diag;
};

/* ---- requests ---- */

void *el_ddb_op_user(el_ddb_op *op)
{
    return op->user_size ? (void *)op->user : NULL;
}

const char *el_ddb_op_name(const el_ddb_op *op)
{
    return op->name;
}

const char *el_ddb_op_body(const el_ddb_op *op, size_t *len)
{
    *len = op->body_len;
    return op->body_ptr ? op->body_ptr : "";
}

double el_ddb_op_units(const el_ddb_op *op)
{
    return op->units;
}

void *el_ddb_op_transport(const el_ddb_op *op)
{
    return op->transport;
}

void el_ddb_op_set_transport(el_ddb_op *op, void *handle)
{
    op->transport = handle;
}

el_buf *el_ddb_op_take_body(el_ddb_op *op)
{
    return &op->body;
}

void el_ddb_op_set_body_view(el_ddb_op *op, const char *body, size_t len)
{
    op->body_ptr = body;
    op->body_len = len;
}

static void op_free(el_ddb_driver *d, el_ddb_op *op)
{
    if (op->live_prev)
        op->live_prev->live_next = op->live_next;
    else
        d->live = op->live_next;
    if (op->live_next)
        op->live_next->live_prev = op->live_prev;
    d->nlive--;
    if (d->t.cancel)
        d->t.cancel(d->t.self, op);
    /* op->body is what the caller built or, once sent, the storage the
     * transport gave back for it: either serves the next request */
    if (op->body.data && op->body.cap <= EL_DDB_POOL_KEEP_BUFFER && d->nspare < SPARE_BODIES) {
        el_buf_reset(&op->body);
        d->spare[d->nspare++] = op->body;
    } else {
        el_buf_free(&op->body);
    }
    free(op);
}

/* ---- the resend heap ---- */

static void heap_push(el_ddb_driver *d, el_ddb_op *op)
{
    size_t i = d->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (d->heap[up]->not_before <= op->not_before)
            break;
        d->heap[i] = d->heap[up];
        i = up;
    }
    d->heap[i] = op;
}

static el_ddb_op *heap_pop(el_ddb_driver *d)
{
    el_ddb_op *top = d->heap[0];
    el_ddb_op *last = d->heap[--d->nheap];
    size_t i = 0, len = d->nheap;
    if (len == 0)
        return top;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && d->heap[c + 1]->not_before < d->heap[c]->not_before)
            c++;
        if (last->not_before <= d->heap[c]->not_before)
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    d->heap[i] = last;
    return top;
}

/* ---- the driver ---- */

double el_ddb_driver_now(const el_ddb_driver *d)
{
    return d->t.now(d->t.self);
}

el_err el_ddb_driver_new_with(const el_ddb_transport *t, const el_ddb_driver_opts *o,
                              const el_aws_config *cfg, el_ddb_driver **out, el_diag *diag)
{
    *out = NULL;
    el_ddb_driver *d = calloc(1, sizeof *d);
    if (!d) {
        if (t->free)
            t->free(t->self);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    d->t = *t;
    d->cfg = cfg;
    int window = o && o->concurrency > 0 ? o->concurrency : EL_DEFAULT_CONCURRENCY;
    double now = el_ddb_driver_now(d);
    el_rate_init(&d->rate, window, o ? o->units_per_s : 0, now);
    el_trate_init(&d->learned);
    d->limiter = o ? o->limiter : NULL;
    d->learn = !(o && o->no_learned_rate) && !d->limiter;
    d->max_retry_ms = (o && o->max_retry_time_s > 0 ? o->max_retry_time_s : DEFAULT_MAX_RETRY_S) *
                      1000.0;
    d->rng = o && o->seed ? o->seed : (uint64_t)now ^ (uint64_t)(uintptr_t)d ^ 0x5eedULL;
    d->throttles_to_caller = o && o->throttles_to_caller;
    *out = d;
    return EL_OK;
}

void el_ddb_driver_free(el_ddb_driver *d)
{
    if (!d)
        return;
    while (d->live)
        op_free(d, d->live);
    while (d->nspare)
        el_buf_free(&d->spare[--d->nspare]);
    free(d->heap);
    if (d->t.free)
        d->t.free(d->t.self);
    free(d);
}

el_err el_ddb_driver_submit(el_ddb_driver *d, const char *name, el_buf *body, double units,
                            el_ddb_done_fn done, void *ctx, size_t user_size, void **user)
{
    if (user)
        *user = NULL;
    size_t n = strlen(name);
    if (n >= MAX_OP_NAME) {
        el_buf_free(body);
        return EL_EUSAGE;
    }
    /* the heap has room for every live request, so a resend never fails */
    el_ddb_op **h = el_grow(d->heap, &d->heap_cap, d->nlive + 1, sizeof *h, 64);
    el_ddb_op *op = h ? calloc(1, sizeof *op + user_size) : NULL;
    if (h)
        d->heap = h;
    if (!op) {
        el_buf_free(body);
        return EL_ENOMEM;
    }
    memcpy(op->name, name, n + 1);
    op->body = *body;
    el_buf_init(body, body->max);
    if (d->nspare && d->spare[d->nspare - 1].cap <= body->max) {
        /* the caller's buffer stays empty, with storage to build into */
        body->data = d->spare[--d->nspare].data;
        body->cap = d->spare[d->nspare].cap;
    }
    op->body_ptr = op->body.data;
    op->body_len = op->body.len;
    op->units = units > 0 ? units : 0;
    op->done = done;
    op->ctx = ctx;
    op->user_size = user_size;
    op->state = OP_QUEUED;
    op->live_next = d->live;
    if (d->live)
        d->live->live_prev = op;
    d->live = op;
    d->nlive++;
    if (d->fifo_tail)
        d->fifo_tail->next = op;
    else
        d->fifo_head = op;
    d->fifo_tail = op;
    d->nfifo++;
    if (user)
        *user = el_ddb_op_user(op);
    return EL_OK;
}

bool el_ddb_driver_wants(const el_ddb_driver *d)
{
    /* Queued requests count against the window, not "none queued": that
     * let one request be submitted per step, and a step sleeps until an
     * answer, so with 10 ms answers a load kept one request in flight
     * whatever --concurrency said (bench.sh part 7 measured 1.0). */
    return !d->held && (int)(d->inflight + d->nfifo) < el_rate_window(&d->rate);
}

size_t el_ddb_driver_pending(const el_ddb_driver *d)
{
    return d->nlive;
}

size_t el_ddb_driver_inflight(const el_ddb_driver *d)
{
    return d->inflight;
}

int el_ddb_driver_window(const el_ddb_driver *d)
{
    return el_rate_window(&d->rate);
}

const el_ddb_driver_stats *el_ddb_driver_stats_get(const el_ddb_driver *d)
{
    return &d->st;
}

/* The learned rate's figures, as of now. */
static void learned_stats(el_ddb_driver *d, double now)
{
    d->st.learned = el_trate_figures_get(&d->learned, now);
}

void el_ddb_driver_wakeup(el_ddb_driver *d)
{
    if (d->t.wakeup)
        d->t.wakeup(d->t.self);
}

void el_ddb_driver_note_refused(el_ddb_driver *d, double units)
{
    /* the sample is taken with the answer's (el_ddb_driver_complete) */
    if (d->in_callback && units > 0)
        d->cb_refused += units;
}

void el_ddb_driver_hold(el_ddb_driver *d, bool hold)
{
    d->held = hold;
}

double el_ddb_driver_max_units(const el_ddb_driver *d)
{
    return d->rate.wcu_per_s > 0 ? d->rate.capacity : 0;
}

void el_ddb_driver_fail(el_ddb_driver *d, el_err err, const el_diag *why)
{
    if (d->err)
        return;
    d->err = err ? err : EL_EINTERNAL;
    if (why)
        d->diag = *why;
    else
        el_diag_set(&d->diag, d->err, "%s", el_strerror(d->err));
}

double el_ddb_driver_backoff_ms(el_ddb_driver *d, unsigned attempts)
{
    unsigned a = attempts < MAX_BACKOFF_ATTEMPT ? attempts : MAX_BACKOFF_ATTEMPT;
    return el_backoff_ms(a, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS, el_rand_unit(&d->rng));
}

/* Puts op in the resend heap, due after a backoff (and the wait the
 * service asked for, hint_ms, within common/backoff.h's bound). */
static void resend_later(el_ddb_driver *d, el_ddb_op *op, double now, double hint_ms)
{
    double wait = el_backoff_hinted_ms(el_ddb_driver_backoff_ms(d, op->attempts), hint_ms);
    op->state = OP_WAITING;
    op->not_before = now + wait;
    heap_push(d, op);
}

/* A throttling answer of op: counted by its reasons; the learned rate
 * takes the sample unless every reason is a hot key range (then only
 * those keys are too fast, and the caller paces them). */
static void on_throttle(el_ddb_driver *d, const el_ddb_result *res, const el_ddb_op *op,
                        double now)
{
    d->st.throttled++;
    if (!res->reasons)
        d->st.unspecified++;
    for (int r = 0; r < EL_THR_COUNT; r++) {
        if (!(res->reasons & (1u << r)))
            continue;
        d->st.by_reason[r]++;
        if (res->resource[0])
            snprintf(d->st.resource[r], sizeof d->st.resource[r], "%s", res->resource);
    }
    if (d->learn && (!res->reasons || (res->reasons & ~EL_THR_KEY_RANGE_MASK))) {
        el_trate_answer(&d->learned, op->sent_at, 0, op->units, now);
        learned_stats(d, now);
    }
}

/* ---- sending ---- */

/* The next request to go, if one waits and may go at `now`; *budget_due
 * gets the time the budget would pay for it when that is what holds it. */
static el_ddb_op *next_to_send(el_ddb_driver *d, double now, double *budget_due)
{
    el_ddb_op *op = NULL;
    bool resend = d->nheap > 0 && d->heap[0]->not_before <= now;
    if (resend)
        op = d->heap[0];
    else if (d->fifo_head)
        op = d->fifo_head;
    if (!op)
        return NULL;
    /* the learned rate holds it as the budget does (it is 0 until the
     * table refuses something) */
    double lw = d->learn ? el_trate_wait_ms(&d->learned, op->units, now) : 0;
    if (d->limiter)
        lw = d->limiter->wait_ms(d->limiter->self, op->units, now);
    if (lw > 0) {
        *budget_due = now + lw;
        return NULL;
    }
    if (d->rate.wcu_per_s > 0) {
        double w = el_rate_wait_ms(&d->rate, op->units, now);
        if (w > 0) {
            *budget_due = now + w;
            return NULL;
        }
        (void)el_rate_take(&d->rate, op->units, now);
    }
    if (d->learn)
        el_trate_take(&d->learned, op->units, now);
    if (d->limiter)
        d->limiter->sent(d->limiter->self, op->units, now);
    if (resend) {
        heap_pop(d);
    } else {
        d->fifo_head = op->next;
        if (!d->fifo_head)
            d->fifo_tail = NULL;
        op->next = NULL;
        d->nfifo--;
    }
    return op;
}

static el_err send_ready(el_ddb_driver *d, double now, double *budget_due)
{
    *budget_due = -1;
    while (!d->held && (int)d->inflight < el_rate_window(&d->rate)) {
        el_ddb_op *op = next_to_send(d, now, budget_due);
        if (!op)
            break;
        if (op->attempts > 0)
            d->st.resends++;
        op->attempts++;
        op->sent_at = now;
        op->state = OP_INFLIGHT;
        d->inflight++;
        d->st.requests++;
        el_err err = d->t.send(d->t.self, op);
        if (err) {
            d->inflight--;
            op->state = OP_IDLE;
            el_diag_set(&d->diag, err, "cannot send a %s request: %s", op->name,
                        el_strerror(err));
            op_free(d, op);
            return d->err = err;
        }
    }
    return EL_OK;
}

el_err el_ddb_driver_step(el_ddb_driver *d, double wake_at, el_diag *diag)
{
    if (d->err) {
        *diag = d->diag;
        return d->err;
    }
    double now = el_ddb_driver_now(d);
    double budget_due;
    el_err err = send_ready(d, now, &budget_due);
    if (!err) {
        /* Sleep until an answer, the caller's wish, or what we wait for
         * ourselves. A due resend counts only when a slot is free (with the
         * window full only an answer frees one, and its socket wakes us)
         * and the rate or the budget does not hold it: when they hold the
         * next request, nothing goes before budget_due (a resend due
         * earlier made this a busy loop until then). */
        double due = wake_at;
        bool room = !d->held && (int)d->inflight < el_rate_window(&d->rate);
        if (room && budget_due < 0 && d->nheap > 0 &&
            (due < 0 || d->heap[0]->not_before < due))
            due = d->heap[0]->not_before;
        if (budget_due >= 0 && (due < 0 || budget_due < due))
            due = budget_due;
        double timeout = due < 0 ? 1000 : due - now;
        if (timeout > 1000)
            timeout = 1000;
        if (timeout < 0)
            timeout = 0;
        /* +1: wake just after the due time, not just before it */
        err = d->t.wait(d->t.self, d, timeout > 0 ? (int)timeout + 1 : 0);
        if (err)
            el_diag_set(&d->diag, err, "waiting for the network failed");
    }
    if (err && !d->err)
        d->err = err;
    if (d->err)
        *diag = d->diag;
    return d->err;
}

/* ---- one request, waited for ---- */

typedef struct call_state {
    bool answered;
    el_err err;
    el_diag diag;
    el_buf *response;
} call_state;

static el_ddb_verdict on_call(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a, void *ctx)
{
    (void)d;
    (void)op;
    call_state *c = ctx;
    c->answered = true;
    if (a->res.outcome == EL_DDB_REJECTED) {
        c->err = el_diag_set(&c->diag, EL_ESERVICE, "%s refused: %s: %s", el_ddb_op_name(op),
                             a->res.error_type, a->res.message);
    } else if (c->response && a->len && el_buf_append(c->response, a->body, a->len)) {
        c->err = el_diag_set(&c->diag, EL_ENOMEM, "%s answer too large", el_ddb_op_name(op));
    }
    return EL_DDB_DONE;
}

el_err el_ddb_driver_call(el_ddb_driver *d, const char *op, el_buf *body, double units,
                          el_buf *response, el_diag *diag)
{
    call_state c = { .response = response };
    el_diag_clear(&c.diag);
    el_err err = el_ddb_driver_submit(d, op, body, units, on_call, &c, 0, NULL);
    if (err)
        return el_diag_set(diag, err, "%s request: %s", op, el_strerror(err));
    while (!c.answered) {
        err = el_ddb_driver_step(d, -1, diag);
        if (err)
            return err; /* the request is dropped with the driver */
    }
    if (c.err)
        *diag = c.diag;
    return c.err;
}

/* ---- answers ---- */

static void give_up(el_ddb_driver *d, el_ddb_op *op, const el_ddb_result *res)
{
    el_diag why;
    el_diag_set(&why, EL_ENET, "giving up after %.0f s of continuous failures; last: %s%s%s",
                d->max_retry_ms / 1000.0, res->error_type, res->error_type[0] ? ": " : "",
                res->message);
    el_ddb_driver_fail(d, EL_ENET, &why);
    (void)op;
}

void el_ddb_driver_complete(el_ddb_driver *d, el_ddb_op *op, const el_ddb_result *res,
                            const char *body, size_t len)
{
    double now = el_ddb_driver_now(d);
    d->inflight--;
    op->state = OP_IDLE;
    if (res->sends > 1) {
        /* libcurl sent it again itself (a reused connection had closed):
         * those sends count, as the server saw them */
        d->st.requests += res->sends - 1;
        d->st.resends += res->sends - 1;
    }
    if (d->err) {
        op_free(d, op); /* stopping: answers after the error change nothing */
        return;
    }
    if (d->limiter)
        d->limiter->answered(d->limiter->self, res->outcome == EL_DDB_THROTTLED, now);
    double consumed = 0;
    bool all_done = false;
    if (body && len && res->outcome == EL_DDB_SUCCESS)
        consumed = el_ddb_answer_units(body, len, &all_done);
    d->st.consumed += consumed;
    /* what the answer consumed enters the budget's window now; a throttle
     * consumed nothing (refunded below) */
    if (res->outcome != EL_DDB_THROTTLED)
        el_rate_settle(&d->rate, op->units, consumed, now);
    if (!op->skew_resent && el_ddb_skew_resend(d->t.skew, res)) {
        op->skew_resent = true; /* once: refused again, it stops the run below */
        resend_later(d, op, now, 0);
        return;
    }
    switch (res->outcome) {
    case EL_DDB_THROTTLED:
        on_throttle(d, res, op, now);
        el_rate_refund(&d->rate, op->units, now); /* it consumed nothing; the resend pays */
        if (d->throttles_to_caller)
            break;
        resend_later(d, op, now, res->retry_after_ms);
        return;
    case EL_DDB_TRANSIENT:
        d->st.failures++;
        if (d->failing_since == 0)
            d->failing_since = now;
        if (now - d->failing_since > d->max_retry_ms) {
            give_up(d, op, res);
            op_free(d, op);
            return;
        }
        resend_later(d, op, now, res->retry_after_ms);
        return;
    case EL_DDB_FATAL: {
        el_diag why; /* one line to act on: expired token, wrong region... */
        el_diag_clear(&why);
        (void)el_ddb_fail(&why, res, d->cfg, op->name);
        el_ddb_driver_fail(d, EL_ESERVICE, &why);
        op_free(d, op);
        return;
    }
    case EL_DDB_SUCCESS:
        d->failing_since = 0;
        break;
    case EL_DDB_REJECTED:
        d->failing_since = 0;
        break;
    }
    el_ddb_answer a = { .res = *res, .body = body ? body : "", .len = body ? len : 0,
                        .consumed = consumed, .all_done = all_done,
                        .attempts = op->attempts };
    d->cb_refused = 0;
    d->in_callback = true;
    el_ddb_verdict v = op->done ? op->done(d, op, &a, op->ctx) : EL_DDB_DONE;
    d->in_callback = false;
    if (d->learn && res->outcome == EL_DDB_SUCCESS && v != EL_DDB_AGAIN) {
        /* what the table granted: its ConsumedCapacity, or the estimate
         * less what the callback said came back; and what it refused */
        double refused = v == EL_DDB_AGAIN_THROTTLED ? op->units : d->cb_refused;
        double granted = consumed > 0 ? consumed : op->units - refused;
        el_trate_answer(&d->learned, op->sent_at, granted > 0 ? granted : 0, refused, now);
        learned_stats(d, now);
    }
    switch (v) {
    case EL_DDB_AGAIN_THROTTLED:
        d->st.throttled++;
        /* fall through */
    case EL_DDB_AGAIN:
        resend_later(d, op, now, res->retry_after_ms);
        return;
    case EL_DDB_STOP:
        if (!d->err)
            el_ddb_driver_fail(d, EL_EINTERNAL, NULL);
        op_free(d, op);
        return;
    case EL_DDB_DONE:
        op_free(d, op);
        return;
    }
}
