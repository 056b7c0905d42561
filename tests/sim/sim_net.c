/*
 * sim_net.c - events in virtual time: arrivals at the service, answers
 * back to the driver.
 *
 * DESIGN: one min-heap of events by (time, sequence), so two events at one
 * time keep the order they were made in and a seed replays a run exactly.
 * An answer is classified by the driver's own el_ddb_classify, as the curl
 * transport's are.
 */
#include "sim_net.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "common/backoff.h"     /* el_rand_unit */
#include "dynamo/ddb_errors.h"   /* el_ddb_classify */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"
#include "pipeline/load/sender.h"    /* el_sender_batch */

enum { EV_ARRIVE, EV_ANSWER };

typedef struct event {
    double t;
    uint64_t seq;
    int kind;
    el_ddb_op *op;            /* NULL: cancelled */
    double half;              /* the way back (ms) */
    sim_reply reply;          /* EV_ANSWER */
} event;

struct sim_net {
    sim_service *svc;
    double now, latency, jitter;
    uint64_t rng, seq, sends;
    event *heap;
    size_t n, cap;
    size_t inflight, max_inflight;
};

static bool before(const event *a, const event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(sim_net *n, event e)
{
    if (n->n == n->cap) {
        n->cap = n->cap ? 2 * n->cap : 64;
        n->heap = realloc(n->heap, n->cap * sizeof *n->heap);
        if (!n->heap)
            abort();
    }
    e.seq = n->seq++;
    size_t i = n->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!before(&e, &n->heap[up]))
            break;
        n->heap[i] = n->heap[up];
        i = up;
    }
    n->heap[i] = e;
}

static event pop(sim_net *n)
{
    event top = n->heap[0], last = n->heap[--n->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n->n)
            break;
        if (c + 1 < n->n && before(&n->heap[c + 1], &n->heap[c]))
            c++;
        if (!before(&n->heap[c], &last))
            break;
        n->heap[i] = n->heap[c];
        i = c;
    }
    if (n->n)
        n->heap[i] = last;
    return top;
}

static el_err t_send(void *self, el_ddb_op *op)
{
    sim_net *n = self;
    double lat = n->latency + n->jitter * el_rand_unit(&n->rng);
    push(n, (event){ .t = n->now + lat / 2, .kind = EV_ARRIVE, .op = op, .half = lat / 2 });
    n->sends++;
    if (++n->inflight > n->max_inflight)
        n->max_inflight = n->inflight;
    return EL_OK;
}

static void answer(sim_net *n, el_ddb_driver *d, event *e)
{
    el_ddb_result res;
    const sim_reply *r = &e->reply;
    if (r->end == SIM_HTTP)
        el_ddb_classify(CURLE_OK, r->status, r->body.data, r->body.len, &res);
    else
        el_ddb_classify(r->end == SIM_RESET ? CURLE_RECV_ERROR : CURLE_GOT_NOTHING, 0, NULL, 0,
                        &res);
    res.request_id[0] = '\0';
    res.sends = 1;
    n->inflight--;
    el_ddb_driver_complete(d, e->op, &res, r->end == SIM_HTTP ? r->body.data : NULL,
                           r->end == SIM_HTTP ? r->body.len : 0);
}

static el_err t_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    sim_net *n = self;
    double until = n->now + (timeout_ms > 0 ? timeout_ms : 0);
    bool answered = false;
    while (n->n > 0 && n->heap[0].t <= until) {
        event e = pop(n);
        if (e.t > n->now)
            n->now = e.t;
        if (!e.op) {
            sim_reply_clear(&e.reply);
            continue;
        }
        if (e.kind == EV_ARRIVE) {
            el_sender_batch *bt = el_ddb_op_user(e.op);
            event back = { .t = n->now + e.half, .kind = EV_ANSWER, .op = e.op };
            sim_service_batch(n->svc, bt->items, bt->n, n->now, &back.reply);
            push(n, back);
            continue;
        }
        answer(n, d, &e);
        sim_reply_clear(&e.reply);
        answered = true;
        /* like the curl transport: return with what came at this moment */
        if (n->n == 0 || n->heap[0].t > n->now)
            break;
    }
    if (!answered && until > n->now)
        n->now = until;
    return EL_OK;
}

static void t_cancel(void *self, el_ddb_op *op)
{
    sim_net *n = self;
    for (size_t i = 0; i < n->n; i++)
        if (n->heap[i].op == op) {
            n->heap[i].op = NULL;
            n->inflight--;
        }
}

static void t_wakeup(void *self)
{
    (void)self;
}

static double t_now(void *self)
{
    return ((sim_net *)self)->now;
}

static void t_free(void *self)
{
    sim_net *n = self;
    for (size_t i = 0; i < n->n; i++)
        sim_reply_clear(&n->heap[i].reply);
    free(n->heap);
    free(n);
}

el_ddb_transport sim_net_transport(sim_service *svc, double latency_ms, double jitter_ms,
                                   uint64_t seed, sim_net **out)
{
    sim_net *n = calloc(1, sizeof *n);
    if (!n)
        abort();
    n->svc = svc;
    n->latency = latency_ms;
    n->jitter = jitter_ms;
    n->rng = seed ^ 0xabcdef12345ull;
    n->now = 1000.0; /* not 0: some clocks treat 0 as "never" */
    *out = n;
    return (el_ddb_transport){ .send = t_send, .wait = t_wait, .cancel = t_cancel,
                               .wakeup = t_wakeup, .now = t_now, .free = t_free, .self = n };
}

double sim_net_now(const sim_net *n)
{
    return n->now;
}

uint64_t sim_net_sends(const sim_net *n)
{
    return n->sends;
}

size_t sim_net_max_inflight(const sim_net *n)
{
    return n->max_inflight;
}
