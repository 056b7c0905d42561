/*
 * counters_write.c - writing the counted counters: one UpdateItem
 * `SET #a0 = :n0, ...` per counter item, through the request driver.
 *
 * DESIGN: writing happens after every item is acknowledged (the loader's
 * promise: entities, edges, then counters, so an entity Put never lands
 * after its counter was set). The counters are sorted by key, so all the
 * attributes of one counter item go out in one UpdateItem, and the order
 * is the same on every run over the same input: that is what lets a
 * checkpoint say "the first K counter items are written". SET is
 * idempotent, so writing a counter item twice (a resume that redoes the
 * last few) lands the same value.
 *
 * A counter item's size is not known before its first answer, and an
 * UpdateItem costs by the item's size: the budget's estimate starts at one
 * unit and follows the average that DynamoDB reports as consumed.
 */
#include "pipeline/counters/counters.h"

#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* memcmp, strlen */

#include "common/clock.h"      /* el_clock_now */
#include "dynamo/ddb_driver.h"
#include "formats/ddb_value.h" /* el_json_put_string */

#define MAX_ATTRS_PER_UPDATE 64   /* attributes of one counter item in one UpdateItem */

/* A request's counters: refs[first .. first+n). */
typedef struct upd {
    size_t first, n;
    size_t group;                 /* the counter item's index in key order */
} upd;

/* Counter items in key order: where each begins in refs. */
typedef struct groups {
    size_t *first;                /* first[g]: index in refs of group g's first counter */
    size_t n;
    unsigned char *done;          /* done[g]: group g is written */
    size_t prefix;                /* every group before this is written */
} groups;

typedef struct wctx {
    const el_counters_write_opts *o;
    el_counters_stats *st;
    el_ddb_driver *drv;
    el_counter_entry *refs;
    size_t nrefs;
    el_buf body;
    double t0;                    /* start (ms) */
    uint64_t digest;              /* of every count: what a checkpoint's counters are */
    double consumed_sum;          /* for the estimate */
    uint64_t answered;
    groups g;
    el_err refused_err;
    el_diag refused_diag;
} wctx;

static el_err build_update(wctx *w, size_t first, size_t n)
{
    el_buf *b = &w->body;
    const el_counter_entry *r = &w->refs[first];
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

static el_ddb_verdict on_update(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                                void *ctx)
{
    (void)d;
    wctx *w = ctx;
    upd *u = el_ddb_op_user(op);
    if (a->res.outcome == EL_DDB_SUCCESS) {
        w->st->updates++;
        w->st->counters += u->n;
        w->consumed_sum += a->consumed;
        w->answered++;
        w->g.done[u->group] = 1;
        while (w->g.prefix < w->g.n && w->g.done[w->g.prefix])
            w->g.prefix++;
        return EL_DDB_DONE;
    }
    w->st->refused++;
    if (!w->refused_err) {
        w->refused_err = EL_ESERVICE;
        el_diag_set(&w->refused_diag, EL_ESERVICE, "DynamoDB refused the counter update of "
                    "'%s': %s: %s", w->refs[u->first].key, a->res.error_type, a->res.message);
    }
    return EL_DDB_DONE;
}

/* Units an UpdateItem is estimated at: the average consumed so far. */
static double estimate(const wctx *w)
{
    double avg = w->answered ? w->consumed_sum / (double)w->answered : 1.0;
    return avg > 1.0 ? avg : 1.0;
}

uint64_t el_counters_digest(const el_counter_entry *e, size_t n)
{
    uint64_t h = el_checkpoint_hash(0, "edgeload-counters-v1", 20);
    for (size_t i = 0; i < n; i++) {
        unsigned char count[8];
        for (int k = 0; k < 8; k++)
            count[k] = (unsigned char)(e[i].count >> (8 * k));
        h = el_checkpoint_hash(h, e[i].key, e[i].len + 1);
        h = el_checkpoint_hash(h, count, sizeof count);
    }
    return h;
}

/* Cuts the sorted counters into counter items (every attribute of one
 * item, at most MAX_ATTRS_PER_UPDATE, in one UpdateItem). */
static el_err make_groups(wctx *w)
{
    groups *g = &w->g;
    g->first = calloc(w->nrefs + 1, sizeof *g->first);
    g->done = calloc(w->nrefs + 1, 1);
    if (!g->first || !g->done)
        return EL_ENOMEM;
    for (size_t next = 0; next < w->nrefs;) {
        size_t n = 1;
        while (next + n < w->nrefs && n < MAX_ATTRS_PER_UPDATE &&
               w->refs[next + n].item_len == w->refs[next].item_len &&
               memcmp(w->refs[next + n].key, w->refs[next].key, w->refs[next].item_len) == 0)
            n++;
        g->first[g->n++] = next;
        next += n;
    }
    g->first[g->n] = w->nrefs;
    return EL_OK;
}

static el_err save(wctx *w, el_diag *diag)
{
    const el_counters_write_opts *o = w->o;
    if (!o->checkpoint_path || !o->base)
        return EL_OK;
    el_checkpoint cp = *o->base;
    cp.has_counters = true;
    cp.counters_digest = w->digest;
    cp.counters_done = w->g.prefix;
    return el_checkpoint_write(o->checkpoint_path, &cp, diag);
}

static void report(wctx *w, bool final)
{
    const el_counters_write_opts *o = w->o;
    if (!o->progress)
        return;
    const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(w->drv);
    el_progress p = { .final = final, .phase = "writing-counters", .done = w->g.prefix,
                      .total = w->g.n, .window = el_ddb_driver_window(w->drv) };
    if (o->before)
        p.st = *o->before;
    p.st.requests += ds->requests;
    p.st.retries += ds->resends;
    p.st.throttled += ds->throttled;
    p.st.wcu_consumed += ds->consumed;
    p.st.counters_written = w->st->counters;
    p.st.elapsed_s += (el_clock_now(w->o->clock) - w->t0) / 1000.0;
    o->progress(&p, o->progress_user);
}

el_err el_counters_write(el_counters *c, const el_counters_write_opts *o,
                         el_counters_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_clock_now(o->clock);
    wctx w = { .o = o, .st = st, .t0 = t0 };
    el_diag_clear(&w.refused_diag);
    el_buf_init(&w.body, 1u << 20);
    el_ddb_driver_opts dopts = { .concurrency = o->concurrency, .units_per_s = o->max_wcu,
                                 .max_retry_time_s = o->max_retry_time_s };
    el_err err;
    if (o->transport) {
        el_ddb_transport t = *o->transport; /* borrowed: the caller frees it */
        t.free = NULL;
        err = el_ddb_driver_new_with(&t, &dopts, NULL, &w.drv, diag);
    } else {
        err = el_ddb_driver_new(o->ddb, &dopts, &w.drv, diag);
    }
    if (!err && (el_counters_list(c, &w.refs, &w.nrefs) || make_groups(&w)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    size_t group = 0;
    if (!err) {
        w.digest = el_counters_digest(w.refs, w.nrefs);
        if (o->resume && o->resume_digest == w.digest && o->resume_done <= w.g.n) {
            /* the same counts as the run resumed: what it wrote stands */
            group = w.g.prefix = (size_t)o->resume_done;
            st->skipped = group;
        } else if (o->resume && o->resume_done > 0) {
            st->counts_changed = true; /* other rows than then: every count again */
        }
        err = save(&w, diag);
    }
    double interval = (o->checkpoint_interval_s > 0 ? o->checkpoint_interval_s : EL_CHECKPOINT_INTERVAL_S) * 1000.0;
    /* saves and reports are due on the driver's clock: the wake-up step is
     * given is read on it, and a transport's clock need not be the wall's */
    double start = w.drv ? el_ddb_driver_now(w.drv) : 0;
    double next_save = start + interval, next_report = start + 1000;
    while (!err) {
        if (o->stop && *o->stop) {
            err = el_diag_set(diag, EL_EINTR, "interrupted while writing counters");
            break;
        }
        while (!err && group < w.g.n && el_ddb_driver_wants(w.drv)) {
            size_t first = w.g.first[group], n = w.g.first[group + 1] - first;
            void *user;
            err = build_update(&w, first, n);
            if (!err)
                err = el_ddb_driver_submit(w.drv, "UpdateItem", &w.body, estimate(&w), on_update,
                                           &w, sizeof(upd), &user);
            if (err) {
                el_diag_set(diag, err, "UpdateItem request: %s", el_strerror(err));
                break;
            }
            *(upd *)user = (upd){ .first = first, .n = n, .group = group++ };
        }
        if (err || (group >= w.g.n && el_ddb_driver_pending(w.drv) == 0))
            break;
        double now = el_ddb_driver_now(w.drv);
        if (now >= next_save) {
            next_save = now + interval;
            err = save(&w, diag);
            if (err)
                break;
        }
        if (now >= next_report) {
            next_report = now + 1000;
            report(&w, false);
        }
        double wake = o->checkpoint_path && next_save < next_report ? next_save : next_report;
        err = el_ddb_driver_step(w.drv, wake, diag);
    }
    if (w.drv) {
        /* what is written is recorded, whatever stopped the run */
        el_diag sd;
        el_diag_clear(&sd);
        el_err serr = save(&w, &sd);
        if (serr && !err) {
            err = serr;
            *diag = sd;
        }
        report(&w, true);
    }
    if (w.drv) {
        const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(w.drv);
        st->requests = ds->requests;
        st->retries = ds->resends;
        st->throttled = ds->throttled;
        st->wcu_consumed = ds->consumed;
    }
    el_ddb_driver_free(w.drv);
    free(w.g.first);
    free(w.g.done);
    free(w.refs);
    el_buf_free(&w.body);
    st->elapsed_s = (el_clock_now(o->clock) - t0) / 1000.0;
    if (!err && w.refused_err) {
        *diag = w.refused_diag;
        err = w.refused_err;
    }
    return err;
}
