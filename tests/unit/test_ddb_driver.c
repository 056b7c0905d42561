/*
 * test_ddb_driver.c - the request driver's policies against a scripted
 * transport on a virtual clock: the window, throttling and its backoff,
 * the give-up after max_retry_time_s, refusals to the callback, verdicts,
 * the capacity budget and its settling, the rate learned from refusals,
 * fatal answers, dropping on free, x-amz-retry-after's bound, a clock
 * 10 minutes off corrected from the answers' Date;
 * and the ConsumedCapacity scan every answer goes through.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strstr, strlen */

#include "aws/skew.h"
#include "common/backoff.h"  /* EL_BACKOFF_HINT_EXTRA_MS */
#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h"    /* el_ddb_classify */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"

/* ---- the scripted transport ---- */

#define MAX_SENDS 256

typedef struct answer {
    el_ddb_outcome outcome;
    long status;
    const char *type;    /* error type */
    const char *body;
    double latency;      /* ms from send to answer */
    unsigned reasons;    /* ThrottlingReasons bits */
    double retry_after;  /* ms */
    unsigned sends;      /* libcurl's own sends of it (0: the usual one) */
} answer;

typedef struct sent {
    el_ddb_op *op;
    double at, due;
    answer a;
    bool open;
    time_t signed_at;           /* with a signing clock: the time signed with */
    long offset;                /* and its offset */
} sent;

typedef struct fake {
    double now;
    answer script[MAX_SENDS];   /* the answer to send number i */
    size_t nscript;
    answer dflt;                /* after the script */
    sent sends[MAX_SENDS];
    size_t nsends;
    size_t max_open;            /* most sends open at once */
    size_t cancels;
    /* A signing clock (the transport's el_skew), on the machine's wall
     * clock: epoch + now. The service's clock is service_ahead seconds
     * ahead of it; it refuses what was signed more than 5 minutes away
     * from its time, as AWS does, with its time in the Date header.
     * date_lies: it always says its time is 10 minutes ahead. */
    el_skew *skew;
    time_t epoch;
    long service_ahead;
    bool date_lies;
} fake;

static size_t open_count(const fake *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nsends; i++)
        n += f->sends[i].open;
    return n;
}

/* The machine's wall clock of the fake: its epoch plus the virtual ms. */
static time_t f_wall(void *self)
{
    fake *f = self;
    return f->epoch + (time_t)(f->now / 1000.0);
}

static el_err f_send(void *self, el_ddb_op *op)
{
    fake *f = self;
    assert_true(f->nsends < MAX_SENDS);
    sent *s = &f->sends[f->nsends];
    s->a = f->nsends < f->nscript ? f->script[f->nsends] : f->dflt;
    if (f->skew)
        s->signed_at = el_skew_now(f->skew, &s->offset); /* signs at each send */
    s->op = op;
    s->at = f->now;
    s->due = f->now + (s->a.latency > 0 ? s->a.latency : 10);
    s->open = true;
    f->nsends++;
    size_t open = open_count(f);
    if (open > f->max_open)
        f->max_open = open;
    return EL_OK;
}

static el_err f_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    fake *f = self;
    double until = f->now + timeout_ms, first = -1;
    for (size_t i = 0; i < f->nsends; i++)
        if (f->sends[i].open && (first < 0 || f->sends[i].due < first))
            first = f->sends[i].due;
    f->now = first >= 0 && first < until ? first : until;
    for (size_t i = 0; i < f->nsends; i++) {
        sent *s = &f->sends[i];
        if (!s->open || s->due > f->now)
            continue;
        s->open = false;
        el_ddb_result res = { .outcome = s->a.outcome, .http_status = s->a.status,
                              .reasons = s->a.reasons, .retry_after_ms = s->a.retry_after,
                              .sends = s->a.sends ? s->a.sends : 1 };
        snprintf(res.error_type, sizeof res.error_type, "%s", s->a.type ? s->a.type : "");
        snprintf(res.message, sizeof res.message, "scripted %s", s->a.type ? s->a.type : "");
        if (f->skew) {
            time_t service = f_wall(f) + f->service_ahead;
            res.server_time = f->date_lies ? f_wall(f) + 600 : service;
            res.clock_offset = s->offset;
            long off = (long)(s->signed_at - service);
            if (off < -300 || off > 300) {
                res = (el_ddb_result){ .outcome = EL_DDB_FATAL, .http_status = 400,
                                       .server_time = res.server_time,
                                       .clock_offset = s->offset, .sends = 1 };
                snprintf(res.error_type, sizeof res.error_type, "InvalidSignatureException");
                snprintf(res.message, sizeof res.message, "Signature %s: %ld s from the "
                         "service's time", off < 0 ? "expired" : "not yet current", off);
            }
        }
        const char *body = s->a.body ? s->a.body : "{}";
        el_ddb_driver_complete(d, s->op, &res, body, strlen(body));
    }
    return EL_OK;
}

static void f_cancel(void *self, el_ddb_op *op)
{
    fake *f = self;
    f->cancels++;
    for (size_t i = 0; i < f->nsends; i++)
        if (f->sends[i].op == op)
            f->sends[i].open = false;
}

static double f_now(void *self)
{
    return ((fake *)self)->now;
}

static bool to_caller; /* the next driver() gets throttles_to_caller */

static el_ddb_driver *driver(fake *f, int concurrency, double units_per_s, double max_retry_s)
{
    el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = f_cancel, .now = f_now,
                           .self = f, .skew = f->skew };
    el_ddb_driver_opts o = { .concurrency = concurrency, .units_per_s = units_per_s,
                             .max_retry_time_s = max_retry_s, .throttles_to_caller = to_caller };
    to_caller = false;
    el_ddb_driver *d;
    el_diag diag;
    el_diag_clear(&diag);
    assert_int_equal(el_ddb_driver_new_with(&t, &o, NULL, &d, &diag), EL_OK);
    return d;
}

static const answer ok = { .outcome = EL_DDB_SUCCESS, .status = 200, .body = "{}",
                           .latency = 10 };
static const answer throttle = { .outcome = EL_DDB_THROTTLED, .status = 400,
                                 .type = "ProvisionedThroughputExceededException",
                                 .latency = 10 };
static const answer broken = { .outcome = EL_DDB_TRANSIENT, .status = 500,
                               .type = "InternalServerError", .latency = 10 };
static const answer refused = { .outcome = EL_DDB_REJECTED, .status = 400,
                                .type = "ValidationException", .latency = 10 };

/* A callback that counts its calls in the request's state and obeys a verdict. */
typedef struct req_state {
    int calls;
    el_ddb_outcome last;
} req_state;

typedef struct cb_ctx {
    el_ddb_verdict verdict;
    int done;
    int split;           /* REJECTED answers submit two halves this many times */
    double last_consumed;
    int all_done;        /* answers with el_ddb_answer.all_done */
} cb_ctx;

static el_ddb_verdict on_done(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                              void *ctx)
{
    cb_ctx *c = ctx;
    req_state *s = el_ddb_op_user(op);
    s->calls++;
    s->last = a->res.outcome;
    c->last_consumed = a->consumed;
    c->all_done += a->all_done;
    if (a->res.outcome == EL_DDB_REJECTED && c->split > 0) {
        c->split--;
        for (int k = 0; k < 2; k++) {
            el_buf b;
            el_buf_init(&b, 1024);
            assert_int_equal(el_buf_puts(&b, "{\"half\":1}"), EL_OK);
            assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &b, 1, on_done, c,
                                                  sizeof(req_state), NULL), EL_OK);
            el_buf_free(&b); /* perhaps an earlier request's storage */
        }
    }
    if (c->verdict == EL_DDB_DONE)
        c->done++;
    return c->verdict;
}

static req_state *submit(el_ddb_driver *d, cb_ctx *c, double units)
{
    el_buf b;
    el_buf_init(&b, 1024);
    assert_int_equal(el_buf_puts(&b, "{\"RequestItems\":{}}"), EL_OK);
    void *user;
    assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &b, units, on_done, c,
                                          sizeof(req_state), &user), EL_OK);
    assert_int_equal(b.len, 0); /* taken; the storage may be an earlier request's */
    el_buf_free(&b);
    return user;
}

/* Steps until nothing is pending (or the driver fails): the result. */
static el_err run(el_ddb_driver *d, el_diag *diag)
{
    el_diag_clear(diag);
    for (int i = 0; i < 100000 && el_ddb_driver_pending(d) > 0; i++) {
        el_err err = el_ddb_driver_step(d, -1, diag);
        if (err)
            return err;
    }
    return el_ddb_driver_pending(d) ? EL_EINTERNAL : EL_OK;
}

/* ---- tests ---- */

static void test_window_bounds_inflight(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 3, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 10; i++)
        submit(d, &c, 1);
    assert_false(el_ddb_driver_wants(d)); /* fresh requests wait */
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 10);
    assert_int_equal(f.nsends, 10);
    assert_int_equal(f.max_open, 3);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_int_equal(st->requests, 10);
    assert_int_equal(st->resends, 0);
    assert_true(el_ddb_driver_wants(d));
    el_ddb_driver_free(d);
    assert_int_equal(f.cancels, 10); /* every request released once */
}

static void test_throttle_backs_off(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.script[1] = throttle;
    f.nscript = 2;
    el_ddb_driver *d = driver(&f, 10, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(f.nsends, 3);
    assert_int_equal(c.done, 1); /* the callback saw only the success */
    /* full jitter: the n-th resend waits a uniform draw below 25 ms * 2^n */
    double gap1 = f.sends[1].at - (f.sends[0].at + 10);
    double gap2 = f.sends[2].at - (f.sends[1].at + 10);
    assert_true(gap1 >= 0 && gap1 <= 50 + 1);
    assert_true(gap2 >= 0 && gap2 <= 100 + 1);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_int_equal(st->throttled, 2);
    assert_int_equal(st->resends, 2);
    /* the window does not shrink: what the table grants is learned from
     * the answers (tablerate.h), and two throttles are no evidence */
    assert_int_equal(el_ddb_driver_window(d), 10);
    assert_int_equal(st->learned.cuts, 0);
    el_ddb_driver_free(d);
}

static void test_transient_failures_give_up(void **state)
{
    (void)state;
    fake f = { .dflt = broken };
    el_ddb_driver *d = driver(&f, 4, 0, 2.0); /* give up after 2 s */
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_ENET);
    assert_non_null(strstr(diag.msg, "giving up after 2 s of continuous failures"));
    assert_non_null(strstr(diag.msg, "InternalServerError"));
    assert_true(f.now > 2000);
    assert_true(f.nsends > 3);
    assert_int_equal(c.done, 0); /* nothing was claimed done */
    el_ddb_driver_free(d);
}

static void test_success_resets_failure_clock(void **state)
{
    (void)state;
    /* a request with four failures of 300 ms each (with their backoffs,
     * under 2 s), a success; then another the same: 2.4 s of failures or
     * more in all, but never 2 s without a success */
    fake f = { .dflt = ok };
    for (size_t i = 0; i < 9; i++)
        f.script[i] = (answer){ .outcome = EL_DDB_TRANSIENT, .status = 503,
                                .type = "ServiceUnavailable", .latency = 300 };
    f.script[4] = ok;
    f.nscript = 9;
    el_ddb_driver *d = driver(&f, 1, 0, 2.0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    el_diag diag;
    for (int k = 0; k < 2; k++) {
        submit(d, &c, 1);
        el_err err = run(d, &diag);
        if (err)
            fail_msg("%s at %.0f ms after %zu sends", diag.msg, f.now, f.nsends);
    }
    assert_int_equal(c.done, 2);
    assert_int_equal(f.nsends, 10);
    assert_true(f.now >= 8 * 300); /* more than 2 s of failures in all */
    el_ddb_driver_free(d);
}

static void test_refusal_goes_to_callback_which_splits(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = refused;
    f.nscript = 1;
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE, .split = 1 };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(f.nsends, 3);   /* the refused one, then its two halves */
    assert_int_equal(c.done, 3);
    el_ddb_driver_free(d);
}

static void test_verdict_again(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 10, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_AGAIN_THROTTLED };
    submit(d, &c, 1);
    el_diag diag;
    el_diag_clear(&diag);
    /* sent, answered, put back; sent again, answered, put back */
    for (int i = 0; i < 50 && el_ddb_driver_stats_get(d)->throttled < 2; i++)
        assert_int_equal(el_ddb_driver_step(d, -1, &diag), EL_OK);
    assert_int_equal(f.nsends, 2);
    assert_int_equal(el_ddb_driver_stats_get(d)->throttled, 2);
    assert_int_equal(el_ddb_driver_stats_get(d)->resends, 1);
    assert_int_equal(el_ddb_driver_window(d), 10);
    c.verdict = EL_DDB_DONE;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 1);
    el_ddb_driver_free(d);
}

static void test_fatal_stops(void **state)
{
    (void)state;
    fake f = { .dflt = { .outcome = EL_DDB_FATAL, .status = 400,
                         .type = "UnrecognizedClientException", .latency = 10 } };
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_ESERVICE);
    assert_non_null(strstr(diag.msg, "BatchWriteItem"));
    assert_int_equal(c.done, 0);
    el_ddb_driver_free(d); /* the other request is dropped without a callback */
    assert_int_equal(c.done, 0);
}

static void test_stop_verdict(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_STOP };
    submit(d, &c, 1);
    el_diag diag;
    el_err err = run(d, &diag);
    assert_int_equal(err, EL_EINTERNAL); /* the callback did not say why */
    el_ddb_driver_free(d);
}

/* --max-wcu 100: the bucket holds 50 units. Requests of 50 units go one
 * every half second; over 10 s no more than the budget plus a bucket. */
static void test_budget_paces_sends(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 16, 100, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 21; i++)
        submit(d, &c, 50);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(f.nsends, 21);
    for (size_t i = 1; i < f.nsends; i++) {
        double gap = f.sends[i].at - f.sends[i - 1].at;
        assert_true(gap >= 499 && gap <= 503);
    }
    /* 21 requests of 50 units: 1,050 units, 50 of them the full bucket at t=0 */
    assert_true(f.sends[20].at >= 9990 && f.sends[20].at <= 10060);
    el_ddb_driver_free(d);
}

/* A callback that says half of each answer's units came back refused by
 * the table's limit, from its `from`-th answer on. */
typedef struct partial_ctx {
    double tokens, last;       /* the table: 2,000 units/s, 20 units of burst */
} partial_ctx;

#define TABLE_RATE 2000.0

static el_ddb_verdict on_partial(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                                 void *ctx)
{
    (void)a;
    partial_ctx *p = ctx;
    double now = el_ddb_driver_now(d);
    p->tokens += (now - p->last) / 1000.0 * TABLE_RATE;
    if (p->tokens > 20)
        p->tokens = 20;
    p->last = now;
    double units = el_ddb_op_units(op), granted = units < p->tokens ? units : p->tokens;
    if (granted < 0)
        granted = 0;
    p->tokens -= granted;
    if (granted < units)
        el_ddb_driver_note_refused(d, units - granted);
    return EL_DDB_DONE;
}

/* The learned table rate: 4 requests of 10 units in flight with 10 ms
 * answers offer 4,000 units/s to a table that grants 2,000 and hands back
 * the rest. The driver learns a rate under what it was granted (from the
 * estimate less what came back, as no ConsumedCapacity is given) and
 * spaces the later sends by it. */
static void test_learned_rate_spaces_sends(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    partial_ctx p = { 0 };
    for (int i = 0; i < 250; i++) {
        el_buf b;
        el_buf_init(&b, 1024);
        assert_int_equal(el_buf_puts(&b, "{\"RequestItems\":{}}"), EL_OK);
        assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &b, 10, on_partial, &p, 0,
                                              NULL), EL_OK);
        el_buf_free(&b);
    }
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_true(st->learned.cuts >= 1);
    assert_int_equal(st->learned.undone, 0);
    assert_true(st->learned.rate > 0.7 * TABLE_RATE && st->learned.rate < TABLE_RATE);
    /* the last 50 sends: no faster than the rate (10 units each) allows,
     * a little slack for the bucket's 100 ms; unlimited, they took 125 ms */
    double span = f.sends[249].at - f.sends[199].at;
    assert_true(span >= 0.9 * 49 * 10 * 1000 / st->learned.rate);
    assert_true(span > 200);
    el_ddb_driver_free(d);
}

/* A request larger than the whole bucket waits for a full bucket, goes,
 * and the next one waits until its debt is paid. */
static void test_budget_large_request(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 16, 100, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 10);  /* takes 10 of the 50 */
    submit(d, &c, 300); /* waits for 50 again, goes, leaves -250 */
    submit(d, &c, 10);  /* waits until the bucket holds 10: 2.6 s later */
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_true(f.sends[0].at == 0);
    assert_true(f.sends[1].at >= 99 && f.sends[1].at <= 103);
    assert_true(f.sends[2].at - f.sends[1].at >= 2599 && f.sends[2].at - f.sends[1].at <= 2603);
    el_ddb_driver_free(d);
}

/* What DynamoDB reports as consumed settles the estimate: an answer that
 * consumed 40 units more than estimated delays the next send 0.4 s more. */
static void test_budget_settles_consumed(void **state)
{
    (void)state;
    fake f = { .dflt = { .outcome = EL_DDB_SUCCESS, .status = 200,
                         .body = "{\"ConsumedCapacity\":[{\"TableName\":\"T\","
                                 "\"CapacityUnits\":50}]}",
                         .latency = 10 } };
    el_ddb_driver *d = driver(&f, 1, 100, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 3; i++)
        submit(d, &c, 10);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_true(c.last_consumed == 50);
    assert_true(el_ddb_driver_stats_get(d)->consumed == 150);
    /* t=0 pays 10 (40 left); answer at 10 ms settles 40 more (0 left);
     * the second goes at 100 ms (10 units refilled), then 500 ms later */
    assert_true(f.sends[1].at >= 99 && f.sends[1].at <= 104);
    assert_true(f.sends[2].at - f.sends[1].at >= 499 && f.sends[2].at - f.sends[1].at <= 505);
    el_ddb_driver_free(d);
}

/* A throttled request consumed nothing: its units come back. */
static void test_throttle_refunds_budget(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.nscript = 1;
    el_ddb_driver *d = driver(&f, 4, 100, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 50);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    /* the resend pays from the refunded bucket at once, not 0.5 s later */
    assert_true(f.sends[1].at - f.sends[0].at < 10 + 51);
    el_ddb_driver_free(d);
}

static void test_free_drops_pending(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 2, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 5; i++)
        submit(d, &c, 1);
    el_diag diag;
    el_diag_clear(&diag);
    assert_int_equal(el_ddb_driver_step(d, 0, &diag), EL_OK); /* two go out */
    el_ddb_driver_free(d);
    assert_int_equal(c.done, 0);
}

/* Throttles are counted by their reasons (one answer may give several),
 * and those that give none apart; the window stays. */
static void test_throttle_reasons_counted(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.script[0].reasons = 1u << EL_THR_INDEX_WRITE_KEY_RANGE;
    f.nscript = 1;
    el_ddb_driver *d = driver(&f, 10, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(el_ddb_driver_window(d), 10);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_int_equal(st->throttled, 1);
    assert_int_equal(st->by_reason[EL_THR_INDEX_WRITE_KEY_RANGE], 1);
    assert_int_equal(st->unspecified, 0);
    el_ddb_driver_free(d);

    fake g = { .dflt = ok };
    g.script[0] = throttle;
    g.script[0].reasons = (1u << EL_THR_TABLE_WRITE_PROVISIONED) |
                          (1u << EL_THR_INDEX_WRITE_KEY_RANGE);
    g.script[1] = throttle; /* no reasons: as before */
    g.nscript = 2;
    d = driver(&g, 10, 0, 0);
    submit(d, &c, 1);
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(el_ddb_driver_window(d), 10);
    st = el_ddb_driver_stats_get(d);
    assert_int_equal(st->by_reason[EL_THR_TABLE_WRITE_PROVISIONED], 1);
    assert_int_equal(st->unspecified, 1);
    el_ddb_driver_free(d);
}

/* A Retry-After hint is a floor under the backoff. */
static void test_retry_after(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.script[0].retry_after = 2000;
    f.nscript = 1;
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_true(f.sends[1].at - f.sends[0].at >= 10 + 2000);
    el_ddb_driver_free(d);
}

/* A hint far over the backoff is honoured up to 5 s over it, not more. */
static void test_retry_after_bounded(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.script[0].retry_after = 3600 * 1000.0; /* an hour */
    f.nscript = 1;
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    double gap = f.sends[1].at - f.sends[0].at - 10; /* the answer took 10 ms */
    assert_true(gap >= EL_BACKOFF_HINT_EXTRA_MS);
    assert_true(gap <= EL_BACKOFF_HINT_EXTRA_MS + 2 * EL_BACKOFF_BASE_MS + 2);
    el_ddb_driver_free(d);
}

/* ---- a clock 10 minutes off ---- */

typedef struct heard {
    int reports;
    long offset;
} heard;

static void on_skew(void *user, const char *service, long offset)
{
    heard *h = user;
    assert_string_equal(service, "DynamoDB");
    h->reports++;
    h->offset = offset;
}

/* 2024-06-11T10:30:12Z */
#define EPOCH ((time_t)1718101812)

static void skewed(fake *f, heard *h, long service_ahead)
{
    f->epoch = EPOCH;
    f->service_ahead = service_ahead;
    assert_int_equal(el_skew_new("DynamoDB", f_wall, f, on_skew, h, &f->skew), EL_OK);
}

/* The machine's clock is 10 minutes behind the service's: the first
 * window is refused (Signature expired), the answer's Date sets the
 * transport's clock, each refused request is signed again and resent
 * once, every later one is signed with the service's time; one report. */
static void test_clock_skew_corrected(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    heard h = {0};
    skewed(&f, &h, 600);
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 20; i++)
        submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 20);                      /* each callback once, a success */
    assert_int_equal(f.nsends, 24);                    /* the first 4, twice */
    for (size_t i = 0; i < f.nsends; i++)
        assert_int_equal(f.sends[i].offset, i < 4 ? 0 : 600);
    assert_int_equal(h.reports, 1);
    assert_int_equal(h.offset, 600);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_int_equal(st->resends, 4);
    assert_int_equal(st->failures, 0);                 /* not a failure of the service */
    el_ddb_driver_free(d);
    el_skew_free(f.skew);
}

/* A clock 10 minutes ahead: "not yet current", set back the same way. */
static void test_clock_skew_ahead(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    heard h = {0};
    skewed(&f, &h, -600);
    el_ddb_driver *d = driver(&f, 2, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 5; i++)
        submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 5);
    assert_int_equal(f.nsends, 7);
    assert_int_equal(h.offset, -600);
    el_ddb_driver_free(d);
    el_skew_free(f.skew);
}

/* Refused again after the correction (the service's Date says 10 minutes
 * ahead but it refuses that too): each request is resent once only, then
 * the run stops with the clock's message. */
static void test_clock_skew_refused_after_correction(void **state)
{
    (void)state;
    fake f = { .dflt = ok, .date_lies = true };
    heard h = {0};
    skewed(&f, &h, 1800); /* 30 minutes: the Date's 10 do not reach it */
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    for (int i = 0; i < 8; i++)
        submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_ESERVICE);
    assert_int_equal(c.done, 0);
    assert_true(f.nsends <= 8);                        /* the first window, twice at most */
    assert_int_equal(h.reports, 1);
    assert_true(strncmp(diag.msg, "this machine's clock is off", 27) == 0);
    assert_non_null(strstr(diag.msg, "Signature expired"));
    el_ddb_driver_free(d);
    el_skew_free(f.skew);
}

/* A wrong secret on a machine whose clock is 2 minutes off is not taken
 * for the clock's: not resent, the secret's message. */
static void test_wrong_secret_not_clock(void **state)
{
    (void)state;
    answer bad = { .outcome = EL_DDB_FATAL, .status = 400, .type = "InvalidSignatureException",
                   .latency = 10 };
    fake f = { .dflt = bad };
    heard h = {0};
    skewed(&f, &h, 120);
    el_ddb_driver *d = driver(&f, 1, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_ESERVICE);
    assert_int_equal(f.nsends, 1);
    assert_int_equal(h.reports, 0);
    assert_int_equal(el_skew_offset(f.skew), 0);
    assert_non_null(strstr(diag.msg, "the signature does not match"));
    el_ddb_driver_free(d);
    el_skew_free(f.skew);
}

/* With throttles_to_caller the callback judges a throttle: taking the work
 * back (DONE) ends the request; AGAIN leaves the resend to the driver. */
static void test_throttles_to_caller(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = throttle;
    f.script[1] = throttle;
    f.nscript = 2;
    to_caller = true;
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(f.nsends, 1);  /* the callback took it back */
    assert_int_equal(c.done, 1);
    el_ddb_driver_free(d);
    to_caller = true;
    d = driver(&f, 4, 0, 0);
    f.nsends = 0;
    f.nscript = 2;
    cb_ctx again = { .verdict = EL_DDB_AGAIN };
    submit(d, &again, 1);
    el_diag_clear(&diag);
    for (int i = 0; i < 100 && f.nsends < 3; i++)
        assert_int_equal(el_ddb_driver_step(d, -1, &diag), EL_OK);
    assert_int_equal(f.nsends, 3); /* sent again by the driver each time */
    el_ddb_driver_free(d);
}

static void test_reason_names(void **state)
{
    (void)state;
    assert_string_equal(el_ddb_throttle_reason_name(EL_THR_INDEX_WRITE_KEY_RANGE),
                        "IndexWriteKeyRangeThroughputExceeded");
    assert_int_equal(el_ddb_throttle_reason_parse("TableWriteAccountLimitExceeded"),
                     EL_THR_TABLE_WRITE_ACCOUNT);
    assert_int_equal(el_ddb_throttle_reason_parse("SomethingNew"), EL_THR_OTHER);
    for (int r = 0; r < EL_THR_OTHER; r++)
        assert_int_equal(el_ddb_throttle_reason_parse(el_ddb_throttle_reason_name(r)), r);
    char res[256];
    const char *body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                       "ProvisionedThroughputExceededException\",\"message\":\"m\","
                       "\"ThrottlingReasons\":[{\"reason\":\"IndexWriteKeyRangeThroughputExceeded\","
                       "\"resource\":\"arn:aws:dynamodb:us-east-1:1:table/G/index/GSI1\"},"
                       "{\"reason\":\"TableWriteKeyRangeThroughputExceeded\",\"resource\":\"x\"}]}";
    unsigned m = el_ddb_throttling_reasons(body, strlen(body), res, sizeof res);
    assert_int_equal(m, (1u << EL_THR_INDEX_WRITE_KEY_RANGE) |
                            (1u << EL_THR_TABLE_WRITE_KEY_RANGE));
    assert_string_equal(res, "arn:aws:dynamodb:us-east-1:1:table/G/index/GSI1");
    assert_int_equal(el_ddb_throttling_reasons("{\"message\":\"x\"}", 13, res, sizeof res), 0);
    assert_string_equal(res, "");
    /* the classifier gives them with the outcome */
    el_ddb_result r;
    el_ddb_classify(CURLE_OK, 400, body, strlen(body), &r);
    assert_int_equal(r.outcome, EL_DDB_THROTTLED);
    assert_int_equal(r.reasons, m);
}

/* libcurl's own resends (a reused connection found closed) are requests the
 * server saw: counted as requests and resends, the request answered once. */
static void test_transport_resends_counted(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[1] = ok;
    f.script[1].sends = 3;
    f.nscript = 2;
    el_ddb_driver *d = driver(&f, 1, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    submit(d, &c, 1);
    submit(d, &c, 1);
    el_diag diag;
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 2);
    const el_ddb_driver_stats *st = el_ddb_driver_stats_get(d);
    assert_int_equal(f.nsends, 2);
    assert_int_equal(st->requests, 4);
    assert_int_equal(st->resends, 2);
    el_ddb_driver_free(d);
}

/* ---- ConsumedCapacity ---- */

static void test_consumed_units(void **state)
{
    (void)state;
#define CU(json) el_ddb_consumed_units(json, strlen(json))
    assert_true(CU("{\"UnprocessedItems\":{},\"ConsumedCapacity\":[{\"TableName\":\"T\","
                   "\"CapacityUnits\":25.0},{\"TableName\":\"U\",\"CapacityUnits\":2}]}") == 27);
    assert_true(CU("{\"ConsumedCapacity\":{\"TableName\":\"T\",\"CapacityUnits\":1.5},"
                   "\"Attributes\":{}}") == 1.5);
    /* INDEXES detail without a total: the parts */
    assert_true(CU("{\"ConsumedCapacity\":[{\"TableName\":\"T\",\"Table\":{\"CapacityUnits\":3},"
                   "\"GlobalSecondaryIndexes\":{\"GSI1\":{\"CapacityUnits\":2},"
                   "\"GSI2\":{\"CapacityUnits\":1}}}]}") == 6);
    /* a total with the detail beside it counts once */
    assert_true(CU("{\"ConsumedCapacity\":[{\"CapacityUnits\":6,\"Table\":{\"CapacityUnits\":3},"
                   "\"GlobalSecondaryIndexes\":{\"GSI1\":{\"CapacityUnits\":3}}}]}") == 6);
    assert_true(CU("{\"ConsumedCapacity\":[{\"ReadCapacityUnits\":4}]}") == 4);
    /* items that hold an attribute called CapacityUnits do not count */
    assert_true(CU("{\"Responses\":{\"T\":[{\"CapacityUnits\":{\"N\":\"99\"},"
                   "\"ConsumedCapacity\":{\"N\":\"7\"}}]},\"ConsumedCapacity\":[{\"TableName\":"
                   "\"T\",\"CapacityUnits\":0.5}]}") == 0.5);
    assert_true(CU("{\"Items\":[],\"Count\":0}") == 0);
    assert_true(CU("not json") == 0);
    assert_true(CU("{\"ConsumedCapacity\":[{\"CapacityUnits\":5}") == 0); /* cut short */
    assert_true(CU("") == 0);
#undef CU
}

/* all_done: the driver's scan of an answer tells a BatchWriteItem caller
 * when there is nothing more to read in it. */
static void test_answer_all_done(void **state)
{
    (void)state;
    fake f = { .dflt = ok };
    f.script[0] = (answer){ .outcome = EL_DDB_SUCCESS, .status = 200,
                            .body = "{\"UnprocessedItems\":{},\"ConsumedCapacity\":"
                                    "[{\"TableName\":\"T\",\"CapacityUnits\":50}]}" };
    f.script[1] = (answer){ .outcome = EL_DDB_SUCCESS, .status = 200,
                            .body = "{\"UnprocessedItems\":{\"T\":[{\"PutRequest\":{\"Item\":"
                                    "{\"PK\":{\"S\":\"a\"}}}}]},\"ConsumedCapacity\":"
                                    "[{\"TableName\":\"T\",\"CapacityUnits\":24}]}" };
    f.script[2] = (answer){ .outcome = EL_DDB_REJECTED, .status = 400,
                            .type = "ValidationException", .body = "{}" };
    f.nscript = 3;
    el_ddb_driver *d = driver(&f, 1, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    el_diag diag;
    submit(d, &c, 1);
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.all_done, 1);
    assert_true(c.last_consumed == 50);
    submit(d, &c, 1);
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.all_done, 1); /* an unprocessed item: not all done */
    assert_true(c.last_consumed == 24);
    submit(d, &c, 1);
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.all_done, 1); /* a refusal is never all done */
    el_ddb_driver_free(d);
}

static void test_body_storage_reused(void **state)
{
    (void)state;
    /* a done request's body storage is handed to the next submit to build
     * into, empty, and only within that buffer's limit */
    fake f = { .dflt = ok };
    el_ddb_driver *d = driver(&f, 4, 0, 0);
    cb_ctx c = { .verdict = EL_DDB_DONE };
    el_diag diag;
    el_buf b;
    el_buf_init(&b, 1024);
    assert_int_equal(el_buf_puts(&b, "{\"RequestItems\":{\"a long enough table\":[]}}"), EL_OK);
    char *first = b.data;
    assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &b, 1, on_done, &c,
                                          sizeof(req_state), NULL), EL_OK);
    assert_null(b.data); /* nothing done yet: nothing to hand over */
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(el_buf_puts(&b, "{}"), EL_OK);
    assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &b, 1, on_done, &c,
                                          sizeof(req_state), NULL), EL_OK);
    assert_ptr_equal(b.data, first); /* the first body's storage, empty */
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    assert_int_equal(b.max, 1024);
    assert_int_equal(run(d, &diag), EL_OK);
    el_buf_free(&b);
    el_buf small;
    el_buf_init(&small, 8);
    assert_int_equal(el_buf_puts(&small, "{}"), EL_OK);
    assert_int_equal(el_ddb_driver_submit(d, "BatchWriteItem", &small, 1, on_done, &c,
                                          sizeof(req_state), NULL), EL_OK);
    assert_null(small.data); /* the spare is larger than this buffer may grow */
    assert_int_equal(run(d, &diag), EL_OK);
    assert_int_equal(c.done, 3);
    el_ddb_driver_free(d); /* frees the spares (ASan: no leak) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_bounds_inflight),
        cmocka_unit_test(test_throttle_backs_off),
        cmocka_unit_test(test_transient_failures_give_up),
        cmocka_unit_test(test_success_resets_failure_clock),
        cmocka_unit_test(test_refusal_goes_to_callback_which_splits),
        cmocka_unit_test(test_verdict_again),
        cmocka_unit_test(test_fatal_stops),
        cmocka_unit_test(test_stop_verdict),
        cmocka_unit_test(test_budget_paces_sends),
        cmocka_unit_test(test_budget_large_request),
        cmocka_unit_test(test_learned_rate_spaces_sends),
        cmocka_unit_test(test_budget_settles_consumed),
        cmocka_unit_test(test_throttle_refunds_budget),
        cmocka_unit_test(test_free_drops_pending),
        cmocka_unit_test(test_throttle_reasons_counted),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_retry_after_bounded),
        cmocka_unit_test(test_clock_skew_corrected),
        cmocka_unit_test(test_clock_skew_ahead),
        cmocka_unit_test(test_clock_skew_refused_after_correction),
        cmocka_unit_test(test_wrong_secret_not_clock),
        cmocka_unit_test(test_throttles_to_caller),
        cmocka_unit_test(test_reason_names),
        cmocka_unit_test(test_consumed_units),
        cmocka_unit_test(test_transport_resends_counted),
        cmocka_unit_test(test_body_storage_reused),
        cmocka_unit_test(test_answer_all_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
