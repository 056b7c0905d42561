/*
 * tablerate.c - the learned rate of a table: every cut an experiment,
 * judged by whether the share refused fell.
 *
 * DESIGN: a ring of 10-ms slots (five seconds) of sends (units granted and refused by
 * their answers), a token bucket at the learned rate holding 100 ms of it
 * (so that requests go evenly, not in bursts the table's own bucket would
 * refuse), the state of one experiment and the long-run share that bounds
 * the noise. Slots of 10 ms: the trigger and the cut need a slot of sends
 * past the first refused one, so a shorter slot is a faster first cut
 * (at 25 ms the simulated table of 3,000 WCU/s saw 4 % of a load refused
 * before it; at 10 ms, 2 %). No clock, no I/O: the unit tests replay
 * services and check each step.
 */
#include "dynamo/tablerate.h"

#include <math.h>    /* exp, sqrt, pow, floor */
#include <stddef.h>  /* NULL */

#define CUT 0.90             /* of the rate granted while saturated */
#define MIN_MARGIN 0.005     /* shares within 0.5 % of the noise are the noise */
#define Z 3.0                /* standard errors that make a fall significant */
#define Z_TRIGGER 4.0        /* ... and a share over the noise: it is tested at every
                                answer, so chance must clear a higher bar */
#define WINDOW_SLOTS 100     /* the trigger looks at the last second of sends */
#define SETTLE_MS 250.0      /* sends this soon after a cut are not judged: the table's
                                bucket, emptied by what went before, refills meanwhile */
#define JUDGE_MS 500.0       /* an experiment is judged on half a second of sends */
#define JUDGE_MAX_MS 3000.0  /* ... or on as long as ten answers take, up to three seconds */
#define JUDGE_LIMIT_MS 5000.0 /* ... or on what five seconds brought: with too few
                                answers to show a fall, the cut is undone */
#define MIN_ANSWERS 10       /* answers a share must rest on */
#define GROW_START 0.01      /* growth per second after the first quiet second */
#define GROW_MAX 1.0         /* ... doubling every GROW_DOUBLING_MS of quiet, up to this */
#define GROW_DOUBLING_MS 1000.0
#define QUIET_MS 1000.0
#define FORGET_MS 60000.0    /* a minute without refusals: no rate */
#define BUCKET_S 0.1
#define MIN_RATE 1.0         /* units/s: a table is never stopped */
#define LONG_MS 30000.0      /* the long run the noise is bounded by */

void el_trate_init(el_trate *t)
{
    *t = (el_trate){ .last_refusal = -1e300 };
    for (int i = 0; i < EL_TRATE_SLOTS; i++)
        t->s[i].tick = -1;
}

static long long tick_of(double ms)
{
    return (long long)(ms / EL_TRATE_SLOT_MS);
}

/* The slot of tick k, emptied when it held an older tick; NULL when k is
 * older than the ring. */
static el_trate_slot *slot(el_trate *t, long long k)
{
    el_trate_slot *s = &t->s[k % EL_TRATE_SLOTS];
    if (s->tick == k)
        return s;
    if (s->tick > k)
        return NULL;
    *s = (el_trate_slot){ .tick = k };
    return s;
}

/* Units granted and refused, answers, over the sends of ticks [from, to]. */
typedef struct sums {
    double granted, refused;
    int answers;
} sums;

static sums sum(const el_trate *t, long long from, long long to)
{
    sums r = { 0 };
    for (int i = 0; i < EL_TRATE_SLOTS; i++) {
        const el_trate_slot *s = &t->s[i];
        if (s->tick >= from && s->tick <= to) {
            r.granted += s->granted;
            r.refused += s->refused;
            r.answers += s->answers;
        }
    }
    return r;
}

static double share(const sums *s)
{
    double all = s->granted + s->refused;
    return all > 0 ? s->refused / all : 0;
}

/* The margin by which a share of n answers differs from another by more
 * than chance. */
static double variance(double p, int n)
{
    return n > 0 ? p * (1 - p) / n : 1;
}

static double margin(double p, int n)
{
    double m = Z_TRIGGER * sqrt(variance(p, n));
    return m > MIN_MARGIN ? m : MIN_MARGIN;
}

static const el_trate_slot *slot_at(const el_trate *t, long long k)
{
    const el_trate_slot *s = &t->s[((k % EL_TRATE_SLOTS) + EL_TRATE_SLOTS) % EL_TRATE_SLOTS];
    return s->tick == k ? s : NULL;
}

static bool saturated(const el_trate *t, long long k)
{
    const el_trate_slot *s = slot_at(t, k);
    return s && s->refusals > 0;
}

/* Units per second the table granted while saturated: over the slots of
 * sends, all of whose answers are in, from the first that had refusals
 * (in the last second, and from tick `from` on) to the latest. The first
 * saturated slot itself is left out when later ones exist (it still spent
 * what was left of the table's burst) and hold ten answers at least:
 * *clean says so. Measured over the
 * whole span, not slot by slot, since one request may carry more units
 * than a slot's worth of the rate. 0 when nothing was refused. */
static double saturated_rate(const el_trate *t, long long from, double now, bool *clean)
{
    long long done = tick_of(now - 2 * t->latency) - 1;
    long long k0 = done - WINDOW_SLOTS + 1;
    if (k0 < from)
        k0 = from;
    while (k0 <= done && !saturated(t, k0))
        k0++;
    *clean = false;
    if (k0 > done)
        return 0;
    sums after = sum(t, k0 + 1, done);
    if (after.answers >= MIN_ANSWERS && after.refused > 0) {
        *clean = true;
        return after.granted / ((double)(done - k0) * EL_TRATE_SLOT_MS / 1000.0);
    }
    sums all = sum(t, k0, done);
    return all.granted / ((double)(done - k0 + 1) * EL_TRATE_SLOT_MS / 1000.0);
}

static double capacity(const el_trate *t)
{
    return t->rate * BUCKET_S;
}

/* Units per second sent over the sends of ticks [from, to]. */
static void judge(el_trate *t, double now);

static double sent_rate(const el_trate *t, long long from, long long to)
{
    sums s = sum(t, from, to);
    return (s.granted + s.refused) / ((double)(to - from + 1) * EL_TRATE_SLOT_MS / 1000.0);
}

/* Growth, forgetting and the bucket's refill up to now. */
static void advance(el_trate *t, double now)
{
    if (t->rate <= 0)
        return;
    double dt = now - t->last_refill;
    if (dt <= 0)
        return;
    t->last_refill = now;
    if (t->judging && now > t->cut_at + JUDGE_LIMIT_MS)
        judge(t, now); /* no answer came to judge it on: the cut's evidence is gone */
    if (!t->judging && now - t->last_refusal > FORGET_MS) {
        t->rate = 0;
        return;
    }
    double quiet = now - t->grow_from;
    if (!t->judging && quiet >= QUIET_MS) {
        /* probing: slowly at first, then twice as fast each quiet second */
        double g = GROW_START * pow(2, floor((quiet - QUIET_MS) / GROW_DOUBLING_MS));
        double grown = t->rate * (1 + (g < GROW_MAX ? g : GROW_MAX) * dt / 1000.0);
        /* it grows only while the load sends near it: past twice what was
         * sent it is not what holds the load (and a lull must not leave a
         * rate far above the table's) */
        double cap = 2 * sent_rate(t, tick_of(now) - WINDOW_SLOTS + 1, tick_of(now));
        t->rate = grown < cap ? grown : (t->rate > cap ? t->rate : cap);
    }
    t->tokens += dt / 1000.0 * t->rate;
    if (t->tokens > capacity(t))
        t->tokens = capacity(t);
}

/* Once in an experiment, its cut is lowered when the sends since it are
 * refused beyond the noise and the table's rate measured on them (clean
 * of any burst) is under it: the reading that set the cut off may have
 * held the end of the table's burst. */
static void refine(el_trate *t, double now)
{
    long long from = tick_of(t->cut_at) + 1;
    sums w = sum(t, from, tick_of(now));
    double sh = share(&w);
    if (w.answers < MIN_ANSWERS || sh <= t->noise + margin(sh, w.answers))
        return;
    bool clean;
    double g = saturated_rate(t, from, now, &clean);
    if (!clean || CUT * g >= t->rate)
        return;
    t->rate = CUT * g > MIN_RATE ? CUT * g : MIN_RATE;
    if (t->tokens > capacity(t))
        t->tokens = capacity(t);
    t->refined = true;
}

/* The experiment's verdict, once the sends of its second are answered. */
static void judge(el_trate *t, double now)
{
    double end = t->cut_at + SETTLE_MS + JUDGE_MS;
    double answered = now - 2 * t->latency - EL_TRATE_SLOT_MS; /* sends answered by now */
    if (answered < end)
        return;
    long long from = tick_of(t->cut_at + SETTLE_MS);
    sums a = sum(t, from, tick_of(end));
    if (a.answers < MIN_ANSWERS) {
        /* a load of few requests a second (large requests, a low limit, a
         * slow service): judged on the sends that brought ten answers, not
         * on half a second's few, where no fall can be told from chance
         * and a real limit's cut would be undone */
        double last = t->cut_at + SETTLE_MS + JUDGE_MAX_MS;
        end = answered < last ? answered : last;
        a = sum(t, from, tick_of(end));
        if (a.answers < MIN_ANSWERS && now <= t->cut_at + JUDGE_LIMIT_MS)
            return; /* too little sent since (a load waiting on its input): wait */
    }
    double after = share(&a);
    double fall = t->share_before - after;
    double m = Z * sqrt(variance(t->share_before, t->answers_before) + variance(after, a.answers));
    t->grow_from = now;
    bool fell = fall > m && fall > MIN_MARGIN;
    if ((-fall > m && -fall > MIN_MARGIN) ||
        (fell && after > t->noise + margin(after, a.answers))) {
        /* the share rose, or fell but not to the noise: a limit under the
         * cut (what the cut was measured on still held some of the table's
         * burst). Cut again, to what the table granted while sent the cut
         * rate, and judge that. */
        double g = a.granted / ((double)(tick_of(end) - tick_of(t->cut_at + SETTLE_MS) + 1) *
                                EL_TRATE_SLOT_MS / 1000.0);
        if (CUT * g < t->rate)
            t->rate = CUT * g > MIN_RATE ? CUT * g : MIN_RATE;
        if (t->tokens > capacity(t))
            t->tokens = capacity(t);
        t->cut_at = now;
        t->share_before = after;
        t->answers_before = a.answers;
        t->nr_cuts++;
        return;
    }
    t->judging = false;
    if (fell) {
        /* the share fell: a limit, kept. What is still refused under it
         * does not depend on the rate: the noise. */
        t->noise = after;
        return;
    }
    /* chance: the rate did not matter */
    t->rate = t->rate_before;
    t->tokens = 0;
    t->last_refill = now;
    t->noise = after;
    t->nr_undone++;
}

/* A cut to 90 % of g (units/s granted while saturated): an experiment,
 * set off by a share sh over n answers. */
static void cut(el_trate *t, double g, double sh, int n, double now)
{
    double r = CUT * g;
    /* never under a quarter of what was sent over the last second at one
     * cut: a reading of a few sparse answers is no table's rate, and a
     * limit lower still is found by the next cut */
    double sent = sent_rate(t, tick_of(now) - WINDOW_SLOTS + 1, tick_of(now));
    if (r < sent / 4)
        r = sent / 4;
    /* ... and never over the rate it cuts (refused at the rate itself:
     * the limit is under it). The floor alone could be: the last second
     * may hold the unpaced sends from before the first cut. */
    if (t->rate > 0 && r > t->rate)
        r = t->rate * CUT;
    if (r < MIN_RATE)
        r = MIN_RATE;
    t->judging = true;
    t->refined = false;
    t->cut_at = now;
    t->rate_before = t->rate;
    t->share_before = sh;
    t->answers_before = n;
    if (t->rate <= 0)
        t->tokens = 0; /* the table just refused: nothing in hand */
    t->rate = r;
    if (t->tokens > capacity(t))
        t->tokens = capacity(t);
    t->last_refill = now;
    t->nr_cuts++;
}

void el_trate_answer(el_trate *t, double sent_at, double granted, double refused, double now)
{
    double lat = now - sent_at;
    t->latency = t->latency > 0 ? 0.9 * t->latency + 0.1 * lat : lat;
    el_trate_slot *s = slot(t, tick_of(sent_at));
    if (s) {
        s->granted += granted;
        s->refused += refused;
        s->answers++;
        s->refusals += refused > 0;
    }
    /* the noise is at most what is refused in the long run (a second's
     * share dips by chance, so the noise does not follow each dip) */
    double f = exp(-(now - t->long_t) / LONG_MS);
    t->long_refused = t->long_refused * f + refused;
    t->long_all = t->long_all * f + granted + refused;
    t->long_n = t->long_n * f + 1;
    t->long_t = now;
    if (t->long_n >= MIN_ANSWERS * 2 && t->long_refused < t->noise * t->long_all)
        t->noise = t->long_refused / t->long_all;
    advance(t, now);
    if (t->judging) {
        if (!t->refined && refused > 0)
            refine(t, now);
        judge(t, now);
        return;
    }
    if (refused <= 0)
        return;
    long long k = tick_of(now);
    sums w;
    double sh;
    /* the share since refusals began within the second: a table's burst
     * before them is not part of the reading */
    long long first = k - WINDOW_SLOTS + 1;
    while (first < k && !saturated(t, first))
        first++;
    w = sum(t, first, k);
    sh = share(&w);
    if (w.answers < MIN_ANSWERS || sh <= t->noise + margin(sh, w.answers))
        return;
    t->last_refusal = now;
    t->grow_from = now;
    bool clean;
    double g = saturated_rate(t, tick_of(now) - WINDOW_SLOTS + 1, now, &clean);
    if (!clean)
        return; /* no saturated slot past the first is complete yet: the next answer decides */
    cut(t, g, sh, w.answers, now);
}

double el_trate_wait_ms(el_trate *t, double units, double now)
{
    advance(t, now);
    if (t->rate <= 0)
        return 0;
    double cap = capacity(t);
    double need = units < cap ? units : cap; /* a large request goes on a full bucket */
    return t->tokens >= need ? 0 : (need - t->tokens) / t->rate * 1000.0;
}

void el_trate_take(el_trate *t, double units, double now)
{
    advance(t, now);
    if (t->rate > 0)
        t->tokens -= units;
}

el_trate_figures el_trate_figures_get(el_trate *t, double now)
{
    advance(t, now);
    return (el_trate_figures){ .rate = t->rate, .cuts = t->nr_cuts, .undone = t->nr_undone,
                               .noise = t->noise };
}
