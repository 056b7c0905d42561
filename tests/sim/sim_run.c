/*
 * sim_run.c - one simulated load and its score.
 *
 * DESIGN: the loop is the load's network stage (pipeline/load/load_network.c)
 * without threads: the reader is infinitely fast (every item is available
 * as soon as the sender has room for it), so the load is limited only by
 * the service, the controller and the client's window, which is what the
 * scorecard measures. A run stops at 30 times its floor of virtual time:
 * a stall is a failed row, not a hung test.
 */
#include "sim_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/load/sender.h"
#include "sim_adaptive.h"
#include "sim_net.h"

typedef struct run {
    uint64_t done, refused, superseded;
} run;

static el_err on_done(void *ctx, el_item *it, el_sent how, const char *reason, el_diag *diag)
{
    (void)it;
    (void)reason;
    (void)diag;
    run *r = ctx;
    r->done++;
    if (how == EL_SENT_REFUSED)
        r->refused++;
    else if (how == EL_SENT_SUPERSEDED)
        r->superseded++;
    return EL_OK;
}

/* ---- the floor ---- */

/* Seconds to write `units` at the table's rate as it changes (its schedule,
 * or on-demand growth driven by a client that always writes at the rate),
 * and at most at `client` units/s. */
static double table_time(const sim_service_cfg *c, double units, double client)
{
    if (c->table_wcu <= 0 || units <= 0)
        return 0;
    if (!c->nsteps && !c->on_demand)
        return units / c->table_wcu;
    /* 10 ms steps; on-demand keeps its own one-second peaks */
    double done = 0, t = 0, dt = 0.01;
    double sec_units[4096] = { 0 };
    while (done < units && t < 4000) {
        double rate = c->table_wcu;
        if (c->on_demand) {
            long long upto = (long long)t - (long long)c->on_demand_delay_s;
            double peak = 0;
            for (long long s = 0; s < upto && s < 4096; s++)
                if (sec_units[s] > peak)
                    peak = sec_units[s];
            if (2 * peak > rate)
                rate = 2 * peak;
            if (c->on_demand_max > 0 && rate > c->on_demand_max)
                rate = c->on_demand_max;
        } else {
            for (size_t i = 0; i < c->nsteps; i++)
                if (t >= c->steps[i].at_s)
                    rate = c->table_wcu * c->steps[i].factor;
        }
        if (client > 0 && rate > client)
            rate = client;
        done += rate * dt;
        if ((long long)t < 4096)
            sec_units[(long long)t] += rate * dt;
        t += dt;
    }
    return t;
}

static double fault_share(const sim_service_cfg *c)
{
    double f = c->f_throttle + c->f_500 + c->f_500_applied + c->f_503 + c->f_reset + c->f_lost +
               c->f_truncated;
    return f + c->f_partial * 0.5; /* half of a partial batch comes back */
}

static void floor_of(const sim_scenario *sc, const sim_workload *w, sim_score *s)
{
    double lat = (sc->latency_ms + sc->jitter_ms / 2) / 1000.0;
    int conc = sc->concurrency > 0 ? sc->concurrency : 16;
    double client_items = conc * (double)EL_DDB_BATCH_ITEMS / lat;
    double units_per_item = w->units_table / (double)w->nitems;
    struct { double t; const char *by; } c[] = {
        { (double)w->nitems / client_items, "client" },
        { table_time(&sc->svc, w->units_table, client_items * units_per_item), "table" },
        { sc->svc.index_wcu > 0 ? w->units_index / sc->svc.index_wcu : 0, "index" },
        { sc->svc.key_wcu > 0 ? w->max_key_units / sc->svc.key_wcu : 0, "key" },
        { sc->max_wcu > 0 ? (w->units_table + w->units_index) / sc->max_wcu : 0, "budget" },
    };
    size_t best = 0;
    for (size_t i = 1; i < sizeof c / sizeof c[0]; i++)
        if (c[i].t > c[best].t)
            best = i;
    s->floor_s = c[best].t / (1 - fault_share(&sc->svc));
    s->floor_by = c[best].by;
}

/* ---- exactness ---- */

typedef struct vent {
    uint64_t key, line;
} vent;

/* Every distinct key ends with its last row's version. */
static bool exact(const sim_workload *w, const sim_service *svc)
{
    size_t cap = 1;
    while (cap < 2 * w->nitems)
        cap *= 2;
    vent *t = calloc(cap, sizeof *t);
    for (size_t i = 0; i < w->nchunks; i++)
        for (size_t j = 0; j < w->chunks[i]->nitems; j++) {
            const el_item *it = &w->chunks[i]->items[j];
            uint64_t k = it->hash | 1;
            size_t s = (size_t)(k * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (t[s].key && t[s].key != k)
                s = (s + 1) & (cap - 1);
            t[s].key = k;
            if (it->line > t[s].line)
                t[s].line = it->line;
        }
    bool ok = sim_service_items(svc) == w->nkeys;
    for (size_t i = 0; ok && i < w->nchunks; i++)
        for (size_t j = 0; ok && j < w->chunks[i]->nitems; j++) {
            const el_item *it = &w->chunks[i]->items[j];
            uint64_t k = it->hash | 1;
            size_t s = (size_t)(k * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
            while (t[s].key != k)
                s = (s + 1) & (cap - 1);
            ok = sim_service_version(svc, it) == t[s].line;
        }
    free(t);
    return ok;
}

/* ---- the run ---- */

void sim_run(const sim_scenario *sc, sim_score *out)
{
    memset(out, 0, sizeof *out);
    sim_workload w;
    sim_workload_make(&sc->work, &w);
    sim_service_cfg svcc = sc->svc;
    svcc.table = "Graph";
    sim_service *svc = sim_service_new(&svcc);
    sim_net *net;
    el_ddb_transport t = sim_net_transport(svc, sc->latency_ms, sc->jitter_ms,
                                           sc->work.seed ^ sc->svc.seed, &net);
    sim_adaptive *ad = NULL;
    el_ddb_limiter lim;
    el_ddb_driver_opts o = { .concurrency = sc->concurrency, .units_per_s = sc->max_wcu,
                             .throttles_to_caller = true,
                             .no_learned_rate = sc->no_table_rate,
                             .seed = sc->work.seed * 7919 + 17 };
    bool no_pacing = sc->no_pacing;
    if (sc->policy == SIM_SDK_ADAPTIVE) {
        ad = sim_adaptive_new();
        lim = sim_adaptive_limiter(ad);
        o.limiter = &lim;
        o.throttles_to_caller = false;
        no_pacing = true;
    }
    el_ddb_driver *d = NULL;
    el_diag diag;
    if (el_ddb_driver_new_with(&t, &o, NULL, &d, &diag))
        abort();
    run r = { 0 };
    el_sender_cfg cfg = { .table = "Graph", .pk_attr = "PK", .sk_attr = "SK",
                          .index_pk_attr = "GSI1PK", .window_items = 8192,
                          .no_pacing = no_pacing, .done = on_done, .ctx = &r };
    el_sender *snd;
    if (el_sender_new(d, &cfg, &snd))
        abort();
    floor_of(sc, &w, out);
    double t0 = el_ddb_driver_now(d);
    double limit = t0 + 30.0 * out->floor_s * 1000.0 + 60000.0;
    size_t ci = 0, ii = 0;
    out->finished = true;
    /* SIM_TRACE=1: a line per virtual second, for working on a scenario */
    bool trace = getenv("SIM_TRACE") != NULL;
    double trace_ms = getenv("SIM_TRACE_MS") ? atof(getenv("SIM_TRACE_MS")) : 1000.0;
    double next_trace = t0 + trace_ms;
    uint64_t last_sent = 0, last_ref = 0, last_done = 0;
    double last_units = 0;
    for (;;) {
        double now = el_ddb_driver_now(d);
        while (ci < w.nchunks && el_sender_has_room(snd)) {
            el_chunk *c = w.chunks[ci];
            if (el_sender_add(snd, &c->items[ii]))
                abort();
            if (++ii == c->nitems) {
                ci++;
                ii = 0;
            }
        }
        if (ci == w.nchunks && el_sender_pending(snd) == 0 && el_ddb_driver_pending(d) == 0)
            break;
        if (now > limit) {
            out->finished = false;
            break;
        }
        if (el_sender_fill(snd, &diag))
            abort();
        if (trace && now >= next_trace) {
            el_throttle_figures f = { 0 };
            uint64_t rt;
            el_sender_figures(snd, &f, &rt);
            sim_service_stats ss;
            sim_service_stats_get(svc, &ss);
            fprintf(stderr, "t=%5.1f sent %6llu refused %5.1f%% done %6llu rate %7.0f cuts %llu/%llu "
                            "noise %.3f paced %llu pending %zu table %.0f wrote %.0f u back t%llu i%llu tk%llu ik%llu\n",
                    (now - t0) / 1000.0, (unsigned long long)(f.items_sent - last_sent),
                    f.items_sent > last_sent ? 100.0 * (double)(f.items_refused - last_ref) /
                                                   (double)(f.items_sent - last_sent)
                                             : 0.0,
                    (unsigned long long)(r.done - last_done), f.learned.rate,
                    (unsigned long long)f.learned.cuts, (unsigned long long)f.learned.undone,
                    f.learned.noise, (unsigned long long)f.keys_paced, el_sender_pending(snd),
                    sim_service_table_rate(svc, now), ss.units_table - last_units,
                    (unsigned long long)ss.back_table, (unsigned long long)ss.back_index,
                    (unsigned long long)ss.back_table_key, (unsigned long long)ss.back_index_key);
            last_units = ss.units_table;
            last_sent = f.items_sent;
            last_ref = f.items_refused;
            last_done = r.done;
            next_trace += trace_ms;
        }
        el_sender_tick(snd, now);
        double wake = now + 1000.0;
        double due = el_sender_next_due(snd);
        if (due >= 0 && due < wake && el_ddb_driver_wants(d))
            wake = due;
        if (el_ddb_driver_step(d, wake, &diag)) {
            fprintf(stderr, "%s: the driver stopped: %s\n", sc->name, diag.msg);
            out->finished = false;
            break;
        }
    }
    out->wall_s = (el_ddb_driver_now(d) - t0) / 1000.0;
    out->ratio = out->floor_s > 0 ? out->wall_s / out->floor_s : 0;
    el_throttle_figures f = { 0 };
    uint64_t retries;
    el_sender_figures(snd, &f, &retries);
    out->items_sent = f.items_sent;
    out->items_refused = f.items_refused;
    out->refused_share = f.items_sent ? (double)f.items_refused / (double)f.items_sent : 0;
    out->keys_paced = f.keys_paced;
    out->table_rate = f.learned.rate;
    out->requests = el_ddb_driver_stats_get(d)->requests;
    out->exact = out->finished && r.refused == 0 && r.done == w.nitems && exact(&w, svc);
    el_sender_free(snd);
    el_ddb_driver_free(d);
    sim_adaptive_free(ad);
    sim_service_free(svc);
    sim_workload_free(&w);
}
