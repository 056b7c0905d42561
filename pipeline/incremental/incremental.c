/*
 * incremental.c - `load --incremental`: each row a conditional write in a
 * TransactWriteItems with its counter changes, several in flight.
 *
 * DESIGN: a delta is small next to a full dump, and the cost is in the
 * round trips, so one thread does everything: it reads a round of rows
 * (at most EL_INCR_ROUND_ROWS, no item key twice, never across inputs, so
 * rows of one key keep their input order and inputs their mapping order),
 * groups them (incr_round.c), and hands the round's transactions to the
 * request driver (dynamo/ddb_driver.h) until every row is applied, found a
 * duplicate, or rejected; then the next round. A counter item is touched
 * by one transaction with the driver at a time: a hot item's transactions
 * queue up instead of cancelling each other with TransactionConflict.
 * Throttling and transient failures are the driver's (the same body and
 * token again: a lost reply is answered as a replay); a cancellation is
 * judged here, and what must go again goes with a new body.
 */
#include "pipeline/incremental/incremental.h"

#include <assert.h>     /* the figures add up, in debug builds */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strcmp, strlen */
#include <time.h>     /* clock_gettime: the run id */
#include <unistd.h>   /* getpid: the run id */

#include "common/backoff.h"    /* el_rand_next: the run id */
#include "common/clock.h"      /* el_now_ms */
#include "dynamo/ddb_driver.h"
#include "pipeline/incremental/incr_round.h"
#include "pipeline/rows/inputs.h"
#include "pipeline/rows/rowloop.h"
#include "pipeline/sharding/shard_plan.h"
#include "pipeline/rows/transform.h"

typedef struct input {
    char *path;
    el_source *src;
    el_reader *reader;
    size_t op_col;            /* (size_t)-1: no op column in this input */
} input;

typedef struct ictx {
    const el_incr_opts *o;
    el_incr_stats *st;
    double t0, last_progress; /* ms */
    /* how far the round being applied is, for the ETA: input bytes before
     * and after reading it, its rows, and rows settled before it */
    uint64_t round_bytes0, round_bytes1, round_settled0;
    size_t round_rows;
    const input *cur;         /* the input being applied */
    input *in;
    size_t nin;
    incr_round rd;
    el_buf body;
    el_ddb_driver *drv;
    uint64_t run_id;
    el_plan *plan;            /* --plan: index shards of hot targets, or NULL */
    uint64_t resubmits;       /* transactions built again (conflicts, partial conditions) */
    uint64_t cancel_throttles; /* cancellations whose reason was throttling */
    el_err fail;              /* an error a callback met (the driver stops on it) */
} ictx;

/* The driver's figures in the run's stats. */
static void sync_stats(ictx *c)
{
    if (!c->drv)
        return;
    const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(c->drv);
    c->st->requests = ds->requests;
    c->st->retries = ds->resends + c->resubmits;
    c->st->throttled = ds->throttled + c->cancel_throttles;
    c->st->wcu_consumed = ds->consumed;
}

static bool stopped(const ictx *c)
{
    return c->o->stop && *c->o->stop;
}

void el_incr_load_stats(const el_incr_stats *st, el_load_stats *out)
{
    memset(out, 0, sizeof *out);
    out->rows_read = st->rows_read;
    out->items_written = st->added + st->deleted + st->replayed;
    out->duplicates = st->duplicates + st->absent;
    out->rejected = st->rejected;
    out->retries = st->retries;
    out->throttled = st->throttled;
    out->requests = st->requests;
    out->wcu_consumed = st->wcu_consumed;
    out->elapsed_s = st->elapsed_s;
}

/* Input bytes the readers have consumed (every input before the current
 * one is read whole). */
static uint64_t bytes_read(const ictx *c, uint64_t *total)
{
    uint64_t done = 0;
    if (total)
        *total = 0;
    for (size_t i = 0; i < c->nin; i++) {
        el_input *raw = c->in[i].reader ? el_reader_input(c->in[i].reader) : NULL;
        if (!raw)
            continue;
        done += el_input_raw_consumed(raw);
        if (total)
            *total += el_input_raw_size(raw);
    }
    return done;
}

/* Rows whose fate is known (rejects excepted: they never join a round). */
static uint64_t settled(const el_incr_stats *st)
{
    return st->added + st->deleted + st->duplicates + st->absent + st->replayed;
}

/* A progress snapshot, at most once a second unless final. A round is read
 * whole before it is applied, so the bytes reported are those before the
 * round plus the round's share of its bytes that is applied: the ETA
 * follows the writes, not the reading. For an uncompressed input the
 * round's bytes are its rows' offsets (the reader's buffer runs ahead of
 * them); for a compressed one, the compressed bytes read for it. */
static void report_progress(ictx *c, bool final)
{
    if (!c->o->progress)
        return;
    double now = el_clock_now(c->o->clock);
    if (!final && now - c->last_progress < 1000.0)
        return;
    c->last_progress = now;
    c->st->elapsed_s = (now - c->t0) / 1000.0;
    sync_stats(c);
    el_progress p = { .final = final, .transactional = true,
                      .transactions = c->st->transactions, .window = c->drv ? el_ddb_driver_window(c->drv) : 0 };
    el_incr_load_stats(c->st, &p.st);
    p.bytes_done = bytes_read(c, &p.bytes_total);
    if (!final && c->round_rows > 0) {
        uint64_t b0 = c->round_bytes0, b1 = c->round_bytes1;
        if (c->cur && el_input_compression(el_reader_input(c->cur->reader)) == EL_COMP_NONE) {
            uint64_t before = 0; /* inputs before this one are done */
            for (const input *i = c->in; i < c->cur; i++)
                before += el_input_raw_size(el_reader_input(i->reader));
            b0 = before + c->rd.rows[0].offset;
            b1 = before + c->rd.rows[c->round_rows - 1].offset;
        }
        double share = (double)(settled(c->st) - c->round_settled0) / (double)c->round_rows;
        share = share < 0 ? 0 : share > 1 ? 1 : share;
        p.bytes_done = b0 + (uint64_t)(share * (double)(b1 - b0));
    }
    c->o->progress(&p, c->o->progress_user);
}

/* ---- inputs ---- */

static el_err open_inputs(ictx *c, el_diag *diag)
{
    const el_incr_opts *o = c->o;
    el_input_spec *specs;
    size_t n;
    el_err err = el_inputs_pair(o->mapping, o->inputs, o->ninputs, &o->reader, &specs, &n, diag);
    if (err)
        return err;
    c->in = calloc(n ? n : 1, sizeof *c->in);
    if (!c->in) {
        el_inputs_free(specs, n);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    bool any_op = false;
    for (size_t i = 0; !err && i < n; i++) {
        input *in = &c->in[c->nin++];
        in->path = specs[i].path; /* ours now */
        specs[i].path = NULL;
        in->src = specs[i].src;
        el_input_spec spec = { in->path, in->src, specs[i].ropts };
        err = el_input_open_bound(&spec, &in->reader, diag);
        if (err)
            break;
        const el_schema *schema = el_reader_schema(in->reader);
        in->op_col = (size_t)-1;
        for (size_t k = 0; o->op_column && k < schema->ncols; k++)
            if (strcmp(schema->names[k], o->op_column) == 0)
                in->op_col = k;
        any_op |= in->op_col != (size_t)-1;
    }
    el_inputs_free(specs, n);
    if (!err && o->op_column && !any_op)
        err = el_diag_set(diag, EL_EUSAGE, "--op-column '%s': no input has that column",
                          o->op_column);
    return err;
}

/* ---- reading a round ---- */

/* Records a bad row. EL_ELIMIT past --max-rejects, EL_EIO when the
 * rejects file cannot be written; diag says which. */
static el_err reject(ictx *c, const input *in, const el_diag *why, const el_row *row,
                     el_diag *diag)
{
    el_diag d;
    el_diag_clear(&d);
    c->st->rejected++;
    el_diag at = *why;
    at.line = row->line;
    at.offset = row->offset;
    el_err err = el_rejects_row(c->o->rejects, in->path, &at, el_reader_schema(in->reader), row,
                                &d);
    if (err)
        el_diag_set(diag, err, "%s", d.msg[0] ? d.msg : el_strerror(err));
    return err;
}

/* ---- applying a round through the driver ---- */

static void release(ictx *c, incr_group *g)
{
    for (size_t i = 0; i < g->nitems; i++)
        c->rd.items[g->items[i]].busy = false;
    for (size_t i = 0; i < g->nputs; i++)
        c->rd.items[g->puts[i]].busy = false;
    g->queued = false;
}

/* A group waits to be submitted again (a new body) after a backoff. */
static void later(ictx *c, incr_group *g)
{
    g->attempt++;
    g->not_before = el_ddb_driver_now(c->drv) + el_ddb_driver_backoff_ms(c->drv, g->attempt);
    c->resubmits++;
}

static el_err reject_member(ictx *c, const incr_row *ir, const input *in,
                            const el_ddb_result *res, el_diag *diag)
{
    char reason[700];
    snprintf(reason, sizeof reason, "DynamoDB refused the transaction: %s: %s", res->error_type,
             res->message);
    el_diag d;
    el_diag_clear(&d);
    c->st->rejected++;
    el_err err = el_rejects_item(c->o->rejects, in->path, ir->line, reason,
                                 c->rd.json.data + ir->json_off, ir->json_len, &d);
    if (err)
        return el_diag_set(diag, err, "%s", d.msg);
    return EL_OK;
}

static bool is_conflict(const char *code)
{
    return strcmp(code, "TransactionConflict") == 0 || strcmp(code, "ThrottlingError") == 0 ||
           strcmp(code, "ProvisionedThroughputExceeded") == 0 ||
           strcmp(code, "RequestLimitExceeded") == 0 || strcmp(code, "Throttling") == 0;
}

/* A TransactionCanceledException for group gi (a request of units): who
 * failed and why. */
static el_err on_cancelled(ictx *c, size_t gi, const input *in, const el_ddb_answer *a,
                           double units, el_diag *diag)
{
    incr_round *r = &c->rd;
    incr_group *g = &r->groups[gi];
    el_ddb_cancel_code codes[EL_DDB_TXN_MAX_ACTIONS];
    size_t ncodes;
    if (el_ddb_cancellation_codes(a->body, a->len, a->res.message, codes,
                                  EL_DDB_TXN_MAX_ACTIONS, &ncodes))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    bool conflict = false, throttle = false;
    size_t nfailed = 0;
    bool failed[EL_DDB_TXN_MAX_ACTIONS] = { false };
    for (size_t i = 0; i < ncodes; i++) {
        if (is_conflict(codes[i].code)) {
            conflict = true;
            throttle |= strcmp(codes[i].code, "TransactionConflict") != 0;
        } else if (strcmp(codes[i].code, "ConditionalCheckFailed") == 0 && i < g->n) {
            failed[i] = true;
            nfailed++;
        }
    }
    el_err err = EL_OK;
    if (conflict) {
        /* someone else touched an item: the same rows again, later */
        c->st->conflicts++;
        if (throttle) {
            c->cancel_throttles++;
            el_ddb_driver_note_refused(c->drv, units);
        }
        g->variant++;
        later(c, g);
    } else if (nfailed > 0) {
        /* those rows' conditions failed: duplicates; the rest goes again */
        size_t keep = 0;
        size_t m[EL_DDB_TXN_MAX_ACTIONS];
        for (size_t i = 0; i < g->n; i++) {
            const incr_row *ir = &r->rows[g->m[i]];
            if (failed[i]) {
                if (ir->del)
                    c->st->absent++;
                else
                    c->st->duplicates++;
            } else {
                m[keep++] = g->m[i];
            }
        }
        if (keep == 0) {
            incr_group_finish(r, g);
        } else {
            c->resubmits++;
            err = incr_group_set_members(r, g, m, keep);
            g->variant++;
            g->attempt = 0;
            g->not_before = 0;
        }
    } else if (g->n > 1) {
        c->st->splits++;
        err = incr_round_split(r, gi);
    } else {
        err = reject_member(c, &r->rows[g->m[0]], in, &a->res, diag);
        incr_group_finish(r, &r->groups[gi]);
    }
    if (err && !diag->msg[0])
        el_diag_set(diag, err, "out of memory");
    return err;
}

/* The state a transaction's request keeps: which group it is. */
typedef struct txn_ref {
    size_t gi;
} txn_ref;

static el_ddb_verdict on_txn(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                             void *ctx)
{
    ictx *c = ctx;
    size_t gi = ((txn_ref *)el_ddb_op_user(op))->gi;
    incr_round *r = &c->rd;
    incr_group *g = &r->groups[gi];
    const char *type = a->res.error_type;
    if (a->res.outcome == EL_DDB_SUCCESS) {
        release(c, g);
        bool replay = el_ddb_txn_replayed(a->body, a->len);
        c->st->transactions++;
        for (size_t i = 0; i < g->n; i++) {
            if (replay)
                c->st->replayed++;
            else if (r->rows[g->m[i]].del)
                c->st->deleted++;
            else
                c->st->added++;
        }
        incr_group_finish(r, g);
        return EL_DDB_DONE;
    }
    if (strcmp(type, "TransactionInProgressException") == 0)
        return EL_DDB_AGAIN; /* the first send is still being applied: ask again */
    release(c, g);
    el_diag why;
    el_diag_clear(&why);
    el_err err = EL_OK;
    if (strcmp(type, "TransactionCanceledException") == 0) {
        err = on_cancelled(c, gi, c->cur, a, el_ddb_op_units(op), &why);
    } else if (strcmp(type, "IdempotentParameterMismatchException") == 0) {
        c->resubmits++;
        r->groups[gi].variant++; /* a new token, at once */
    } else if (r->groups[gi].n > 1) {
        c->st->splits++;
        err = incr_round_split(r, gi);
    } else {
        incr_group_finish(r, &r->groups[gi]);
        err = reject_member(c, &r->rows[r->groups[gi].m[0]], c->cur, &a->res, &why);
    }
    if (err) {
        if (!why.msg[0])
            el_diag_set(&why, err, "out of memory");
        el_ddb_driver_fail(d, err, &why);
        return EL_DDB_STOP;
    }
    return EL_DDB_DONE;
}

/* Submits group gi's transaction (its counter items become busy). */
static el_err submit(ictx *c, size_t gi, el_diag *diag)
{
    incr_group *g = &c->rd.groups[gi];
    double wcu;
    el_err err = incr_txn_body(&c->rd, g, c->o->mapping, c->run_id, &c->body, &wcu);
    void *user = NULL;
    if (!err)
        err = el_ddb_driver_submit(c->drv, "TransactWriteItems", &c->body, wcu, on_txn, c,
                                   sizeof(txn_ref), &user);
    if (err)
        return el_diag_set(diag, err, "TransactWriteItems request: %s", el_strerror(err));
    ((txn_ref *)user)->gi = gi;
    g->queued = true;
    for (size_t i = 0; i < g->nitems; i++)
        c->rd.items[g->items[i]].busy = true;
    for (size_t i = 0; i < g->nputs; i++)
        c->rd.items[g->puts[i]].busy = true;
    return EL_OK;
}

/* Drives the round's transactions until each is done. */
static el_err apply_round(ictx *c, el_diag *diag)
{
    incr_round *r = &c->rd;
    if (incr_round_group(r, c->o->no_grouping))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    size_t first = 0;
    el_err err = EL_OK;
    while (!err) {
        if (stopped(c))
            return el_diag_set(diag, EL_EINTR, "interrupted");
        while (first < r->ngroups && r->groups[first].done)
            first++;
        if (first == r->ngroups && el_ddb_driver_pending(c->drv) == 0)
            break;
        double now = el_ddb_driver_now(c->drv), due = -1;
        for (size_t gi = first; !err && gi < r->ngroups && el_ddb_driver_wants(c->drv); gi++) {
            incr_group *g = &r->groups[gi];
            if (g->done || g->queued)
                continue;
            if (g->not_before > now) {
                if (due < 0 || g->not_before < due)
                    due = g->not_before;
                continue;
            }
            bool busy = false;
            for (size_t i = 0; i < g->nitems && !busy; i++)
                busy = r->items[g->items[i]].busy;
            for (size_t i = 0; i < g->nputs && !busy; i++)
                busy = r->items[g->puts[i]].busy;
            busy = busy || incr_group_waits(r, g);
            if (!busy)
                err = submit(c, gi, diag);
        }
        if (!err)
            err = el_ddb_driver_step(c->drv, due, diag);
        report_progress(c, false);
    }
    return err;
}

static el_err apply_input(ictx *c, input *in, el_diag *diag)
{
    el_transform *t;
    if (el_transform_new(c->o->mapping, in->src, &t))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (c->plan)
        el_transform_set_plan(t, c->plan);
    el_rowloop *loop = NULL;
    el_rowloop_opts lo = { .path = in->path, .reader = in->reader, .transform = t,
                           .src = in->src, .mode = EL_ROWLOOP_ITEMS };
    if (el_rowloop_new(&lo, &loop)) {
        el_transform_free(t);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_rowloop_row out;
    bool carry = false, eof = false;
    el_err err = EL_OK;
    while (!err && !eof) {
        incr_round_reset(&c->rd);
        c->round_bytes0 = bytes_read(c, NULL);
        c->round_settled0 = settled(c->st);
        while (!err && c->rd.nrows < EL_INCR_ROUND_ROWS &&
               c->rd.json.len < EL_INCR_ROUND_JSON_BYTES) {
            if (carry) { /* the row that ended the last round starts this one */
                err = el_rowloop_again(loop, &c->rd.json, &c->rd.keys, &out, diag);
            } else {
                err = el_rowloop_next(loop, &c->rd.json, &c->rd.keys, &out, diag);
                if (err == EL_EOF) {
                    err = EL_OK;
                    eof = true;
                    break;
                }
                if (!err)
                    c->st->rows_read++;
            }
            if (err)
                break;
            if (out.what != EL_ROWLOOP_ITEM) {
                carry = false;
                err = reject(c, in, out.why, out.row, diag);
                continue;
            }
            const el_row *row = out.row;
            bool del = false;
            if (in->op_col != (size_t)-1 && in->op_col < row->ncols) {
                const el_value *ov = &row->values[in->op_col];
                del = !ov->is_null && ov->len == 1 && (ov->data[0] == 'D' || ov->data[0] == 'd');
            }
            bool repeat;
            el_diag d;
            el_diag_clear(&d);
            err = incr_round_add_item(&c->rd, c->o->mapping, in->src, row, out.json_mark,
                                      out.key_mark, out.size, del, &repeat, &d);
            if (err) {
                if (!d.line) {
                    d.line = row->line;
                    d.offset = row->offset;
                }
                el_rowloop_wrap(in->path, err, &d, diag);
            }
            carry = !err && repeat;
            if (carry)
                break;
        }
        c->round_bytes1 = bytes_read(c, NULL);
        c->round_rows = c->rd.nrows;
        c->cur = in;
        if (!err && c->rd.nrows > 0)
            err = apply_round(c, diag);
        c->round_rows = 0;
        if (stopped(c) && !err)
            err = el_diag_set(diag, EL_EINTR, "interrupted");
    }
    el_rowloop_free(loop);
    el_transform_free(t);
    return err;
}

el_err el_incr_run(const el_incr_opts *o, el_incr_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_clock_now(o->clock);
    ictx c = { .o = o, .st = st, .run_id = o->run_id, .t0 = t0, .last_progress = t0 };
    if (!c.run_id) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
                        ((uint64_t)getpid() << 32);
        c.run_id = el_rand_next(&seed);
    }
    el_buf_init(&c.body, EL_DDB_MAX_REQUEST_BYTES);
    el_err err = incr_round_init(&c.rd) ? el_diag_set(diag, EL_ENOMEM, "out of memory") : EL_OK;
    bool transport_taken = false; /* by the driver, also when making it fails */
    if (!err) {
        transport_taken = true;
        el_ddb_driver_opts dopts = { .concurrency = o->concurrency, .units_per_s = o->max_wcu,
                                     .max_retry_time_s = o->max_retry_time_s };
        err = o->transport ? el_ddb_driver_new_with(o->transport, &dopts, NULL, &c.drv, diag)
                           : el_ddb_driver_new(o->ddb, &dopts, &c.drv, diag);
    }
    if (!err)
        err = open_inputs(&c, diag);
    if (!err && o->plan_path)
        err = el_plan_load(o->plan_path, &c.plan, diag);
    for (size_t i = 0; !err && i < c.nin; i++)
        err = apply_input(&c, &c.in[i], diag);
    sync_stats(&c);
    if (c.nin > 0)
        report_progress(&c, true); /* ends a bar's line before the summary */
    /* transactions still out (error, interrupt) are dropped: the rows were
     * not counted, and applying the delta again is exact */
    el_ddb_driver_free(c.drv);
    c.drv = NULL;
    if (o->transport && !transport_taken && o->transport->free)
        o->transport->free(o->transport->self);
    incr_round_free(&c.rd);
    for (size_t i = 0; i < c.nin; i++) {
        el_reader_free(c.in[i].reader);
        free(c.in[i].path);
    }
    free(c.in);
    el_plan_free(c.plan);
    el_buf_free(&c.body);
    st->elapsed_s = (el_clock_now(o->clock) - t0) / 1000.0;
    /* every row read ended one way (pipeline/flow/stats.h), in debug builds */
    el_load_stats ls;
    el_incr_load_stats(st, &ls);
    assert(err || stopped(&c) || el_load_stats_add_up(&ls));
    (void)ls;
    return err;
}
