/*
 * tablerate.h - the rate a table grants, learned from what it refuses.
 *
 * A table (or its index) at its write limit refuses what goes over it,
 * handing items back unprocessed or refusing whole requests. The request
 * window (ratectl.h) reacts to each refusal by shrinking and then grows
 * back one request per round trip, so at the limit it keeps probing past
 * it: measured against a model of the service, 5-7 % of the items a
 * sharded load sent were refused and sent again. This control learns
 * instead the rate the table actually grants and sends at it: a refusal
 * sets the rate just under the units granted over the last second (95 %),
 * sent evenly from a bucket of 100 ms, and the rate creeps up (1 % a
 * second) while nothing is refused, to find room that opens; a minute
 * without refusals forgets it.
 *
 * Refusals that do not depend on the rate (a share of requests failing at
 * random, whatever the load sends) must not drive the rate down, so each
 * cut is judged on the 1.5 s after it. Under 0.5 % refused then (and under
 * half the worst share of its chain of cuts): the table's limit, kept.
 * Otherwise, after a first cut the next refusal cuts again, measured on
 * what was granted since the cut (a reading free of the burst a table has
 * at first, which makes the second before the first refusal look faster
 * than the table is; when the share refused grew after the cut or stays
 * over 10 %, this second cut comes after 200 ms already); still not under
 * 0.5 % after a third: not a limit, the rate before the cuts is
 * restored, and refusals up to twice that share do not cut for a while
 * (the share fades over two minutes). Refusals under 0.5 % of what is
 * sent, or fewer than three in a second, never cut, and a rate is
 * measured on at least 300 ms and ten answers with grants: a table that
 * refuses everything, or a command of a few requests, is left to the
 * window's backoff. The rate never falls under a quarter of the best
 * second granted.
 *
 * Units are whatever the caller's requests cost (write units for writes,
 * read units for reads). Pure: time is an argument (ms of the caller's
 * monotonic clock); owned by the request driver's thread.
 */
#ifndef EL_TABLERATE_H
#define EL_TABLERATE_H

#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */

/* The history: 20 slots of 100 ms. */
#define EL_TRATE_SLOTS 20
#define EL_TRATE_SLOT_MS 100.0

typedef struct el_trate {
    double rate;            /* units/s sent at most; 0 = not limiting */
    double tokens, last_refill;
    double last_refusal;    /* ms */
    double peak;            /* most units granted in any second seen */
    double first;           /* time of the first grant, -1 none */
    /* the cut being checked: made at cut_at, from rate_before; cuts = how
     * many in a row have not lowered the share refused (0 = none pending) */
    int cuts;
    bool judged;            /* the last cut was judged: not fallen, the next refusal cuts */
    double cut_at, rate_before, share_before;
    double noise, noise_at; /* a share refused seen not to depend on the rate */
    double granted[EL_TRATE_SLOTS], refused[EL_TRATE_SLOTS];
    int events[EL_TRATE_SLOTS], grants[EL_TRATE_SLOTS]; /* refusals, grants (calls) a slot */
    long long tick[EL_TRATE_SLOTS];
    uint64_t nr_cuts, nr_undone; /* figures: cuts made, cuts undone as noise */
} el_trate;

/* What a run did with it, for its figures. */
typedef struct el_trate_figures {
    double rate;      /* units/s learned now; 0: none limits */
    uint64_t cuts;    /* times the rate was set or lowered */
    uint64_t undone;  /* cuts undone: the refusals did not depend on the rate */
} el_trate_figures;

void el_trate_init(el_trate *t);

/* units were accepted (written or read) at now. */
void el_trate_granted(el_trate *t, double units, double now);

/* units were refused by the table's or index's limit at now (not a single
 * key's range): may set or lower the rate. */
void el_trate_refused(el_trate *t, double units, double now);

/* Milliseconds until a request of units may go by the learned rate (0:
 * now, and always when no rate is learned). */
double el_trate_wait_ms(el_trate *t, double units, double now);

/* A request of units goes at now: taken from the rate's bucket. */
void el_trate_take(el_trate *t, double units, double now);

/* The rate learned now (units/s), 0 when none limits. */
double el_trate_rate(el_trate *t, double now);

#endif
