/*
 * tablerate.c - the learned rate of a table: cut on refusals to just under
 * what was granted, judged 200 ms later, crept up while quiet.
 *
 * DESIGN: a ring of 100-ms slots of units granted and refused (two seconds
 * of history: the second before a cut and the time after it), a token
 * bucket at the learned rate holding 100 ms of it (so that requests go
 * evenly, not in bursts the table's own bucket would refuse), and the
 * state of one chain of cuts under test. No clock, no I/O: the unit tests
 * replay a service and check each step.
 */
#include "dynamo/tablerate.h"

#define CUT 0.95              /* of the units granted over the last second */
#define MIN_SHARE 0.005       /* refusals under 0.5 % of a second's writes do not cut */
#define CHECK_MS 200.0        /* a cut is judged on the 200 ms after it */
#define CREEP_PER_S 0.01      /* growth while nothing was refused for a second */
#define QUIET_MS 1000.0
#define FORGET_MS 60000.0     /* no refusal for a minute: no rate */
#define NOISE_MS 30000.0      /* a noise share fades to nothing over this */
#define BUCKET_S 0.1
#define MIN_HISTORY_MS 300.0  /* grants seen for at least this long before a first cut */

void el_trate_init(el_trate *t)
{
    *t = (el_trate){ .first = -1, .last_refusal = -1e300 };
    for (int i = 0; i < EL_TRATE_SLOTS; i++)
        t->tick[i] = -1;
}

static long long tick_of(double now)
{
    return (long long)(now / EL_TRATE_SLOT_MS);
}

static int slot(el_trate *t, double now)
{
    long long k = tick_of(now);
    int i = (int)(k % EL_TRATE_SLOTS);
    if (t->tick[i] != k) {
        t->tick[i] = k;
        t->granted[i] = t->refused[i] = 0;
    }
    return i;
}

/* Units granted and refused in the slots of ticks [from, to]. */
static void sum(const el_trate *t, long long from, long long to, double *g, double *r)
{
    *g = *r = 0;
    for (int i = 0; i < EL_TRATE_SLOTS; i++)
        if (t->tick[i] >= from && t->tick[i] <= to) {
            *g += t->granted[i];
            *r += t->refused[i];
        }
}

static double share(double g, double r)
{
    return g + r > 0 ? r / (g + r) : 0;
}

/* The last second: units granted per second over it (over what there is
 * of it at the start) and the share refused. */
static void last_second(const el_trate *t, double now, double *rate, double *sh)
{
    long long k = tick_of(now);
    double g, r;
    sum(t, k - 9, k, &g, &r);
    double from = (double)(k - 9) * EL_TRATE_SLOT_MS;
    if (t->first > from)
        from = t->first;
    double span = now - from;
    if (span < EL_TRATE_SLOT_MS)
        span = EL_TRATE_SLOT_MS;
    *rate = g / span * 1000.0;
    *sh = share(g, r);
}

static double noise_now(const el_trate *t, double now)
{
    double left = 1.0 - (now - t->noise_at) / NOISE_MS;
    return left > 0 ? t->noise * left : 0;
}

static double capacity(const el_trate *t)
{
    return t->rate * BUCKET_S;
}

/* Creep, forget, refill: the bucket and rate as of now. */
static void advance(el_trate *t, double now)
{
    if (t->rate <= 0)
        return;
    double dt = now - t->last_refill;
    if (dt <= 0)
        return;
    if (now - t->last_refusal > FORGET_MS) {
        t->rate = 0;
        t->cuts = 0;
        return;
    }
    if (now - t->last_refusal >= QUIET_MS)
        t->rate *= 1.0 + CREEP_PER_S * dt / 1000.0;
    t->tokens += dt / 1000.0 * t->rate;
    if (t->tokens > capacity(t))
        t->tokens = capacity(t);
    t->last_refill = now;
}

/* Judges the chain of cuts once CHECK_MS have passed since its last one:
 * the share refused fell to under half the chain's worst (the table's
 * limit: kept), or did not after two cuts that lowered the rate by a tenth
 * (noise: undone). */
static void check(el_trate *t, double now)
{
    if (t->cuts == 0 || now - t->cut_at < CHECK_MS)
        return;
    double g, r;
    /* the slot of the cut still carries what was sent before it */
    sum(t, tick_of(t->cut_at) + 1, tick_of(t->cut_at + CHECK_MS), &g, &r);
    double after = share(g, r);
    if (after < t->share_before / 2) {
        t->cuts = 0; /* the limit: kept */
        return;
    }
    if (after > t->share_before)
        t->share_before = after; /* the chain is judged against its worst */
    if (t->cuts < 2)
        return; /* once more, on a reading free of the table's first burst */
    if (t->rate_before <= 0 || t->rate <= 0.9 * t->rate_before) {
        t->rate = t->rate_before;
        t->tokens = 0;
        t->last_refill = now;
        t->noise = after;
        t->noise_at = now;
        t->nr_undone++;
    }
    t->cuts = 0;
}

void el_trate_granted(el_trate *t, double units, double now)
{
    if (t->first < 0)
        t->first = now;
    t->granted[slot(t, now)] += units;
    long long k = tick_of(now);
    double g, r;
    sum(t, k - 9, k, &g, &r);
    if (g > t->peak)
        t->peak = g;
    check(t, now);
}

void el_trate_refused(el_trate *t, double units, double now)
{
    t->refused[slot(t, now)] += units;
    advance(t, now);
    t->last_refusal = now;
    check(t, now);
    if (t->cuts > 0 && now - t->cut_at < CHECK_MS)
        return; /* each cut judged before the next */
    double granted, sh;
    last_second(t, now, &granted, &sh);
    if (t->cuts > 0) {
        /* a cut not yet judged good: its own time measures what the table
         * grants, free of the burst the second before may have had */
        long long from = tick_of(t->cut_at) + 1, k = tick_of(now);
        double g, r;
        sum(t, from, k, &g, &r);
        double span = now - (double)from * EL_TRATE_SLOT_MS;
        if (span >= EL_TRATE_SLOT_MS)
            granted = g / span * 1000.0;
    }
    double noise = noise_now(t, now);
    if (sh < MIN_SHARE || sh <= 2 * noise)
        return;
    /* a rate needs grants to measure: refused from the start, or whole,
     * the window's backoff is what acts */
    if (granted <= 0 || now - t->first < MIN_HISTORY_MS)
        return;
    if (t->cuts == 0) {
        t->rate_before = t->rate;
        t->share_before = sh;
    } else if (sh > t->share_before) {
        t->share_before = sh;
    }
    double r = CUT * granted;
    if (t->rate > 0 && r < t->rate / 2)
        r = t->rate / 2; /* never more than half at once */
    if (t->rate > 0 && r > t->rate)
        r = t->rate;
    if (r < t->peak / 4)
        r = t->peak / 4; /* a floor: the window still acts below it */
    if (t->rate <= 0)
        t->tokens = 0; /* the table just refused: nothing in hand */
    t->rate = r;
    if (t->tokens > capacity(t))
        t->tokens = capacity(t);
    t->last_refill = now;
    t->cut_at = now;
    t->cuts++;
    t->nr_cuts++;
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

double el_trate_rate(el_trate *t, double now)
{
    advance(t, now);
    return t->rate;
}
