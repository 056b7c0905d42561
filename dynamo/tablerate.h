/*
 * tablerate.h - the rate a table grants, learned from what it refuses.
 *
 * This is the table half of edgeload's rate control; the other half paces
 * single hot partition keys (pipeline/load/pacer.h). The request window is
 * fixed at --concurrency and the --max-wcu budget is a plain token bucket
 * (ratectl.h): neither reacts to refusals.
 *
 * A table (or its index) at its write limit refuses what goes over it: it
 * hands items back unprocessed, or refuses whole requests. Faults at
 * random refuse too, in the same words. The two differ only in how they
 * answer a change of rate: sending slower than a limit ends its refusals,
 * sending slower does nothing to chance. So every cut is an experiment,
 * judged by whether the share refused fell:
 *
 *  - Trigger: since refusals began within the last second of sends, the
 *    share of units refused exceeds the noise (what experiments found not
 *    to depend on the rate; 0 at first) by four standard errors of the
 *    share over its answers, and by at least 0.5 %. Four, not three: it is
 *    tested at every answer, and chance must not set it off.
 *  - Cut: to 90 % of what the table granted while saturated, measured over
 *    the sends after the first slot with refusals (that first slot still
 *    spent the table's burst), never under a quarter of what was sent
 *    over the last second, and always under the rate it cuts. Under its
 *    limit the table's bucket refills.
 *    Once during the experiment the cut is lowered to 90 % of what the
 *    sends since it were granted, if they are still refused beyond the
 *    noise (the first reading held what was left of the burst).
 *  - Judge: on half a second of sends after a quarter of a second of
 *    settling, or, on a slow load, on as many sends as bring ten answers
 *    (up to three seconds; with fewer after five seconds the cut is
 *    undone). If the share fell by three standard errors, the limit is
 *    real: kept, and what is still refused is the noise; if it fell but
 *    not to the noise, or rose, the limit is lower still: cut again to
 *    90 % of what was granted meanwhile, and judge that. If it did not
 *    move, chance: the cut is undone and the share seen is the noise.
 *  - Grow: while nothing beyond the noise is refused, after a quiet
 *    second, by 1 % a second at first and twice as fast each further
 *    quiet second (up to doubling a second), so that capacity that comes
 *    (another tenant leaves, an on-demand table takes twice its previous
 *    peak) is found in seconds; past the limit, the next refusals cut it
 *    again. The rate never grows past twice what was sent in the last
 *    second, the noise never stays above the share refused over the last
 *    half minute, and a minute without refusals forgets the rate.
 *
 * Samples are placed by the time their request was sent, in slots of
 * 10 ms, so an experiment sees only what was sent at its rate. Units are
 * whatever the caller's requests cost (write units for writes, read units
 * for reads). The constants are the statistics' (standard errors) and the
 * service's (a second of burst, whose draining the settling waits out);
 * the simulator (tests/sim/) proves them on a matrix of services. Pure:
 * time is an argument (ms of the caller's monotonic clock); owned by the
 * request driver's thread.
 */
#ifndef EL_TABLERATE_H
#define EL_TABLERATE_H

#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */

/* The history: 500 slots of 10 ms of sends, five seconds: an experiment on
 * a slow load is judged on up to three seconds of them. */
#define EL_TRATE_SLOTS 500
#define EL_TRATE_SLOT_MS 10.0

typedef struct el_trate_slot {
    long long tick;           /* which 10 ms of sends it holds, -1 none */
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
