/*
 * tablerate.c - the learned rate of a table: cut on refusals to just under
 * what was granted, judged on the 1.5 s after, crept up while quiet.
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
#define CHECK_MS 200.0        /* the earliest a second cut of a chain may follow */
#define EARLY_SHARE 0.10      /* ... if still this much is refused (or more than before) */
#define JUDGE_MS 1500.0       /* a cut is judged on the 1.5 s after it */
#define KEPT_SHARE 0.005      /* ... and kept if less than this was refused then */
#define MAX_CHAIN 3           /* cuts not kept in a row before they are undone as noise */
#define MIN_REFUSALS 3        /* refusals in the last second before a cut */
#define MIN_GRANTS 10         /* answers with grants the rate is measured on */
#define CREEP_PER_S 0.01      /* growth while nothing was refused for a second */
#define QUIET_MS 1000.0
#define FORGET_MS 60000.0     /* no refusal for a minute: no rate */
#define NOISE_MS 120000.0     /* a noise share fades to nothing over this */
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
        t->events[i] = t->grants[i] = 0;
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

/* Refusals and grants (calls) in the slots of ticks [from, now's]. */
static void calls(const el_trate *t, long long from, double now, int *refusals, int *grants)
{
    long long k = tick_of(now);
    *refusals = *grants = 0;
    for (int i = 0; i < EL_TRATE_SLOTS; i++)
        if (t->tick[i] >= from && t->tick[i] <= k) {
            *refusals += t->events[i];
            *grants += t->grants[i];
        }
}

static double share(double g, double r)
{
    return g + r > 0 ? r / (g + r) : 0;
}

/* Units granted per second in the slots of ticks [from, now's], counting
 * only the time of slots in which anything was sent (granted or refused):
 * a command that writes in rounds (incremental) or a load waiting on its
 * readers would otherwise look slower than the table let it be. */
static double granted_rate(const el_trate *t, long long from, double now)
{
    long long k = tick_of(now);
    double g = 0, busy = 0;
    for (int i = 0; i < EL_TRATE_SLOTS; i++) {
        if (t->tick[i] < from || t->tick[i] > k || t->granted[i] + t->refused[i] <= 0)
            continue;
        g += t->granted[i];
        busy += t->tick[i] == k ? now - (double)k * EL_TRATE_SLOT_MS : EL_TRATE_SLOT_MS;
    }
    if (busy < EL_TRATE_SLOT_MS)
        busy = EL_TRATE_SLOT_MS;
    return g / busy * 1000.0;
}

/* The last second: units granted per second over it and the share
 * refused. */
static void last_second(const el_trate *t, double now, double *rate, double *sh)
{
    long long k = tick_of(now);
    double g, r;
    sum(t, k - 9, k, &g, &r);
    *rate = granted_rate(t, k - 9, now);
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

/* The share refused since the last cut (its own slot still carries what
 * was sent before it), up to `until` ms after it. */
static double share_since_cut(const el_trate *t, double until)
{
    double g, r;
    sum(t, tick_of(t->cut_at) + 1, tick_of(t->cut_at + until), &g, &r);
    return share(g, r);
}

/* Judges the chain of cuts JUDGE_MS after its last one, on what was
 * refused since: under half the chain's worst share and under 0.5 % (the
 * table's limit: kept); otherwise, after the first or second cut, the next
 * refusal cuts again (a limit not yet found, or noise); after the third,
 * noise: undone, and refusals up to twice that share do not cut for a
 * while. Three, not two: a second cut measured while the answers were
 * slow (a busy machine) can still be over the limit.
 * An absolute bound, not only "fell by half": the reading that set off a
 * cut is the worst second of many, and the next is better by chance. */
static void check(el_trate *t, double now)
{
    if (t->cuts == 0 || t->judged || now - t->cut_at < JUDGE_MS)
        return;
    double after = share_since_cut(t, JUDGE_MS);
    if (after < t->share_before / 2 && after < KEPT_SHARE) {
        t->cuts = 0; /* the limit: kept */
        return;
    }
    if (t->cuts < MAX_CHAIN) {
        t->judged = true;
        return;
    }
    t->rate = t->rate_before;
    t->tokens = 0;
    t->last_refill = now;
    t->noise = after;
    t->noise_at = now;
    t->nr_undone++;
    t->cuts = 0;
}

void el_trate_granted(el_trate *t, double units, double now)
{
    if (t->first < 0)
        t->first = now;
    int i = slot(t, now);
    t->granted[i] += units;
    t->grants[i]++;
    long long k = tick_of(now);
    double g, r;
    sum(t, k - 9, k, &g, &r);
    if (g > t->peak)
        t->peak = g;
    check(t, now);
}

void el_trate_refused(el_trate *t, double units, double now)
{
    int i = slot(t, now);
    t->refused[i] += units;
    t->events[i]++;
    advance(t, now);
    t->last_refusal = now;
    check(t, now);
    if (t->cuts > 0 && !t->judged) {
        /* a cut under judgement: no other, but for one early (a table's
         * first burst made the second before the cut look faster than the
         * table is: the share refused grew after it, or stays over 10 %) */
        double since = share_since_cut(t, now - t->cut_at);
        if (now - t->cut_at < CHECK_MS || t->cuts > 1 || since < MIN_SHARE ||
            (since < t->share_before && since < EARLY_SHARE))
            return;
    }
    double granted, sh;
    last_second(t, now, &granted, &sh);
    long long from = tick_of(now) - 9;
    if (t->cuts > 0 && now - (double)(tick_of(t->cut_at) + 1) * EL_TRATE_SLOT_MS >= EL_TRATE_SLOT_MS) {
        /* a cut not yet judged good: its own time measures what the table
         * grants, free of the burst the second before may have had */
        from = tick_of(t->cut_at) + 1;
        granted = granted_rate(t, from, now);
    }
    int refusals, grants;
    calls(t, tick_of(now) - 9, now, &refusals, &grants);
    double noise = noise_now(t, now);
    if (!t->judged && (sh < MIN_SHARE || sh <= 2 * noise || refusals < MIN_REFUSALS))
        return; /* (a chain judged to go on cuts at the next refusal) */
    /* a rate is measured on enough answers: refused from the start, whole,
     * or by a command of a few requests, the window's backoff is what acts */
    calls(t, from, now, &refusals, &grants);
    if (granted <= 0 || grants < MIN_GRANTS || now - t->first < MIN_HISTORY_MS)
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
    t->judged = false;
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
