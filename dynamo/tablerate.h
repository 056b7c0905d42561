/*
 * tablerate.h - the rate a table grants, learned from what it refuses.
 *
 * A table (or its index) at its write limit refuses what goes over it:
 * it hands items back unprocessed, or refuses whole requests. Faults at
 * random refuse too, in the same words. The two differ only in how they
 * answer a change of rate: sending slower than a limit ends its refusals,
 * sending slower does nothing to chance. So every cut of the rate is an
 * experiment, judged by whether the share refused fell:
 *
 *  - Trigger: over the last second of sends, the share of units refused
 *    exceeds the noise (the share earlier experiments found not to depend
 *    on the rate, 0 at first) by a significant margin: three standard
 *    errors of the share over the answers it was measured on, at least
 *    0.5 %.
 *  - Cut: to 95 % of what the table granted in its saturated slots (100-ms
 *    slots of sends with refusals: the table's bucket was empty then, so
 *    what it granted is its rate, free of the burst a table allows).
 *  - Judge: on the sends of the second after the cut (their answers, once
 *    in). When the share fell by the margin, the limit is real: the rate
 *    stays. When it did not, the cut is undone and the share seen is the
 *    noise. The noise follows the share down at once, and up only through
 *    experiments.
 *  - Grow: while nothing beyond the noise is refused, the rate grows, by
 *    1 % a second at first and twice as fast for each further second
 *    without refusals (up to doubling a second), so capacity that comes
 *    (an on-demand table takes twice its previous peak, another tenant
 *    leaves) is taken within seconds; growing past the limit makes the
 *    next refusals, and the next cut. The rate never exceeds twice what
 *    was sent over the last second, and a minute without refusals
 *    forgets it.
 *
 * Samples are placed by the time their request was sent, so an experiment
 * sees only what was sent at its rate. Units are whatever the caller's
 * requests cost (write units for writes, read units for reads). Pure: time
 * is an argument (ms of the caller's monotonic clock); owned by the
 * request driver's thread.
 */
#ifndef EL_TABLERATE_H
#define EL_TABLERATE_H

#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */

/* The history: 300 slots of 10 ms of sends. */
#define EL_TRATE_SLOTS 300
#define EL_TRATE_SLOT_MS 10.0

typedef struct el_trate_slot {
    long long tick;           /* which 100 ms of sends it holds, -1 none */
    double granted, refused;  /* units of those sends, by their answers */
    int answers, refusals;    /* answers, and those with refused units */
} el_trate_slot;

typedef struct el_trate {
    double rate;              /* units/s sent at most; 0 = not limiting */
    double tokens, last_refill;
    double noise;             /* the share refused that does not depend on the rate */
    double long_refused, long_all, long_n, long_t; /* units refused, all, answers: the long
                                                      run, decaying (tablerate.c) */
    double last_refusal;      /* ms: the last refusal beyond the noise */
    double grow_from;         /* ms: since when nothing beyond the noise was refused */
    double latency;           /* ms: answers' round trip, smoothed */
    /* an experiment under way: the cut at cut_at from rate_before, the share
     * (and its answers) that set it off */
    bool judging, refined;
    double cut_at, rate_before, share_before;
    int answers_before;
    el_trate_slot s[EL_TRATE_SLOTS];
    uint64_t nr_cuts, nr_undone; /* figures: cuts made, cuts undone as noise */
} el_trate;

/* What a run did with it, for its figures. */
typedef struct el_trate_figures {
    double rate;      /* units/s learned now; 0: none limits */
    uint64_t cuts;    /* times the rate was set or lowered */
    uint64_t undone;  /* cuts undone: the refusals did not depend on the rate */
    double noise;     /* the share of units refused found not to depend on the rate */
} el_trate_figures;

void el_trate_init(el_trate *t);

/* The answer to a request sent at sent_at came at now: `granted` units of
 * it were accepted (written or read) and `refused` units refused by the
 * table's or index's limit or at random (not by a single hot key's
 * range, which the caller paces). May set, lower, undo or raise the rate. */
void el_trate_answer(el_trate *t, double sent_at, double granted, double refused, double now);

/* Milliseconds until a request of units may go by the learned rate (0:
 * now, and always when no rate is learned). */
double el_trate_wait_ms(el_trate *t, double units, double now);

/* A request of units goes at now: taken from the rate's bucket. */
void el_trate_take(el_trate *t, double units, double now);

/* The figures as of now. */
el_trate_figures el_trate_figures_get(el_trate *t, double now);

#endif
