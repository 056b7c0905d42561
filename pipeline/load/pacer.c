/*
 * pacer.c - per-key rates, found by comparing each key's refusals with
 * everyone's.
 *
 * DESIGN: a key's limit is what DynamoDB grants it, which edgeload cannot
 * ask for; it can only watch. Keys are watched from their first refusal:
 * units granted and refused, and writes answered and refused, as sums
 * that decay with a time constant of a second (so each is "about the last
 * second" without a ring per key). A key's grant rate is its granted sum
 * over the time constant, corrected for how long it has been watched.
 * The constants come from the service and from statistics: 1,000 units a
 * second is a partition's documented limit; three standard errors make a
 * share significant; five points is the least excess worth pacing for
 * (under it a hot key costs less than pacing would); a second is long
 * enough for hundreds of a hot key's answers.
 *
 * Keys live in a chained hash table by (kind, hash). Labels are kept only
 * for paced keys. Watched keys not refused for two seconds are forgotten
 * (unless they wait out a cool-down), paced keys after 30 s: a table
 * throttled as a whole hands back items of every key, and those must not
 * pile up here.
 */
#include "pipeline/load/pacer.h"

#include <math.h>    /* exp, floor, pow, sqrt */
#include <stdlib.h>  /* calloc, free, malloc */
#include <string.h>  /* memcpy, strcmp, strlen */

#define TAU_MS 1000.0          /* the sums' time constant */
#define LONG_TAU_MS 30000.0    /* the population's long-run share's */
#define Z 4.0                  /* standard errors that make a share significant: every key
                                  is tested at every refusal, so chance must clear a high bar */
#define MIN_EXCESS 0.05        /* the least excess share worth pacing for */
#define MIN_REFUSALS 3.0       /* refusals (decayed) before a key is judged hot */
#define MIN_EVIDENCE 20.0      /* ... and answers */
#define BELOW_GRANTED 0.95     /* a cut sets the rate this much under the grants */
#define CUT_GAP_MS 1000.0      /* one cut a second at most */
#define GROW_START 0.01        /* growth a second after the first quiet second */
#define GROW_MAX 1.0           /* ... doubling each quiet second, up to this */
#define QUIET_MS 1000.0        /* time without excess before the rate grows */
#define MIN_RATE 1.0           /* units/s: a key is never stopped */
#define MAX_RATE 1e7
#define SLACK_MS 50.0          /* a paced key may catch up this much after idling */
#define WATCH_MS 2000.0        /* a watched key not refused for this long is forgotten */
#define FORGET_MS 30000.0      /* a paced key not refused for this long is forgotten */
#define SWEEP_MS 1000.0
#define MAX_ENTRIES 200000     /* watched keys beyond this are not kept */

typedef struct pkey {
    uint64_t h;
    uint8_t kind;
    bool paced;
    double rate;               /* units/s while paced */
    double next;               /* reservation clock: the next write's earliest time */
    double born, t;            /* watched since; the sums' time */
    double g;                  /* units granted, decayed */
    double nref, nans;         /* writes refused, answered, decayed */
    double last_refusal, last_excess, last_cut, last_grow;
    double pop_ref, pop_ans;   /* the population's sums when the key was first refused */
    uint64_t refusals;
    char *label;               /* paced keys only */
    struct pkey *chain;
} pkey;

struct el_pacer {
    double pop_ref, pop_ans, pop_t; /* writes refused and answered of keys not paced, decayed */
    double long_ref, long_ans;      /* the same over half a minute: when few other keys
                                       are written, what chance refuses of them */
    pkey **slots;
    size_t nslots, count, npaced;
    double last_sweep;
    uint64_t keys_paced;
    el_pacer_stats hot;        /* the key refused most, kept past its expiry */
};

static size_t slot_of(const el_pacer *p, el_pacer_kind kind, uint64_t h)
{
    uint64_t x = (h ^ (kind ? 0x9E3779B97F4A7C15ull : 0)) * 0xff51afd7ed558ccdull;
    return (size_t)(x >> 32) & (p->nslots - 1);
}

static pkey *find(const el_pacer *p, el_pacer_kind kind, uint64_t h)
{
    for (pkey *e = p->slots[slot_of(p, kind, h)]; e; e = e->chain)
        if (e->h == h && e->kind == kind)
            return e;
    return NULL;
}

el_pacer *el_pacer_new(void)
{
    el_pacer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nslots = 256;
    p->slots = calloc(p->nslots, sizeof *p->slots);
    if (!p->slots) {
        free(p);
        return NULL;
    }
    return p;
}

static void entry_free(pkey *e)
{
    free(e->label);
    free(e);
}

void el_pacer_free(el_pacer *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nslots; i++)
        for (pkey *e = p->slots[i], *next; e; e = next) {
            next = e->chain;
            entry_free(e);
        }
    free(p->slots);
    free(p);
}

bool el_pacer_idle(const el_pacer *p)
{
    return p->npaced == 0;
}

bool el_pacer_empty(const el_pacer *p)
{
    return p->count == 0;
}

/* Doubles the slot array when entries outnumber slots (a failure only
 * makes chains longer). */
static void maybe_grow(el_pacer *p)
{
    if (p->count < p->nslots)
        return;
    size_t old = p->nslots;
    pkey **s = calloc(old * 2, sizeof *s);
    if (!s)
        return;
    pkey **prev = p->slots;
    p->slots = s;
    p->nslots = old * 2;
    for (size_t i = 0; i < old; i++)
        for (pkey *e = prev[i], *next; e; e = next) {
            next = e->chain;
            size_t j = slot_of(p, (el_pacer_kind)e->kind, e->h);
            e->chain = s[j];
            s[j] = e;
        }
    free(prev);
}

/* The sums decayed to now. */
static void decay(pkey *e, double now)
{
    if (now <= e->t)
        return;
    double f = exp(-(now - e->t) / TAU_MS);
    e->g *= f;
    e->nref *= f;
    e->nans *= f;
    e->t = now;
}

/* Units/s granted about the last second. */
static double granted_rate(const pkey *e, double now)
{
    double age = now - e->born;
    double filled = 1 - exp(-(age > 1 ? age : 1) / TAU_MS); /* the sum's share of its steady state */
    return e->g / (TAU_MS / 1000.0 * filled);
}

static double variance(double p, double n)
{
    return n > 0 ? p * (1 - p) / n : 1;
}

static void pop_decay(el_pacer *p, double now)
{
    if (now <= p->pop_t)
        return;
    double f = exp(-(now - p->pop_t) / TAU_MS), fl = exp(-(now - p->pop_t) / LONG_TAU_MS);
    p->pop_ref *= f;
    p->pop_ans *= f;
    p->long_ref *= fl;
    p->long_ans *= fl;
    p->pop_t = now;
}

void el_pacer_answer(el_pacer *p, double refused, double answered, double now)
{
    pop_decay(p, now);
    p->pop_ref += refused;
    p->pop_ans += answered;
    p->long_ref += refused;
    p->long_ans += answered;
}

/* The share refused of all keys not paced since the key was first refused
 * (the same time its own sums cover); over the last half minute when the
 * others were written too little meanwhile (a load's last rows may all be
 * one paced key's). */
static double pop_share(el_pacer *p, const pkey *e, double now)
{
    pop_decay(p, now);
    double f = exp(-(now - e->born) / TAU_MS);
    double r = p->pop_ref - e->pop_ref * f, a = p->pop_ans - e->pop_ans * f;
    if (a < MIN_EVIDENCE)
        return p->long_ans > 0 ? p->long_ref / p->long_ans : 0;
    return r > 0 ? r / a : 0;
}

/* Whether the key's share refused exceeds everyone's significantly. */
static bool excess(const pkey *e, double share)
{
    if (e->nref < MIN_REFUSALS || e->nans < MIN_EVIDENCE)
        return false;
    double mine = e->nref / e->nans;
    double m = Z * sqrt(variance(share, e->nans));
    return mine > share + (m > MIN_EXCESS ? m : MIN_EXCESS);
}

static void note_hottest(el_pacer *p, const pkey *e)
{
    if (p->hot.has_hottest && e->refusals <= p->hot.hottest_refusals &&
        !(p->hot.hottest_kind == e->kind && strcmp(p->hot.hottest, e->label ? e->label : "") == 0))
        return;
    p->hot.has_hottest = true;
    p->hot.hottest_kind = (el_pacer_kind)e->kind;
    p->hot.hottest_refusals = e->refusals;
    p->hot.hottest_rate = e->rate;
    const char *l = e->label ? e->label : "";
    size_t n = strlen(l);
    if (n >= sizeof p->hot.hottest)
        n = sizeof p->hot.hottest - 1;
    memcpy(p->hot.hottest, l, n);
    p->hot.hottest[n] = '\0';
}

/* What a key is sent at so that a partition's rate is written: 1,000
 * units a second, and what chance refuses of every key besides (the
 * population's long-run share), up to twice that. */
static double partition_rate(const el_pacer *p)
{
    double chance = p->long_ans > 0 ? p->long_ref / p->long_ans : 0;
    if (chance > 0.5)
        chance = 0.5;
    return EL_PACER_PARTITION_WCU / (1 - chance);
}

static el_err start_pacing(el_pacer *p, pkey *e, const char *label, size_t len, double now)
{
    if (!e->label) {
        char *l = malloc(len + 1);
        if (!l)
            return EL_ENOMEM;
        if (len)
            memcpy(l, label, len);
        l[len] = '\0';
        e->label = l;
    }
    /* at a partition's limit, not at what it was granted: that still held
     * the burst a partition allows */
    e->rate = partition_rate(p);
    e->paced = true;
    e->last_cut = e->last_grow = e->last_excess = now;
    e->next = now;
    p->npaced++;
    p->keys_paced++;
    return EL_OK;
}

el_err el_pacer_refused(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, bool sure,
                        const char *label, size_t len, double now)
{
    (void)units;
    pkey *e = find(p, kind, h);
    if (!e) {
        if (!sure && p->count >= MAX_ENTRIES)
            return EL_OK; /* a table-wide throttle: nothing to learn per key */
        e = calloc(1, sizeof *e);
        if (!e)
            return EL_ENOMEM;
        e->h = h;
        e->kind = (uint8_t)kind;
        e->born = e->t = now;
        pop_decay(p, now);
        /* the population before this answer: its writes are in the key's
         * time too */
        e->pop_ref = p->pop_ref;
        e->pop_ans = p->pop_ans;
        size_t s = slot_of(p, kind, h);
        e->chain = p->slots[s];
        p->slots[s] = e;
        p->count++;
        maybe_grow(p);
    }
    decay(e, now);
    e->nref += 1;
    e->nans += 1;
    e->refusals++;
    e->last_refusal = now;
    bool over = sure || excess(e, pop_share(p, e, now));
    if (over)
        e->last_excess = now;
    if (!e->paced) {
        if (over) {
            el_err err = start_pacing(p, e, label, len, now);
            if (err)
                return err;
            note_hottest(p, e);
        }
        return EL_OK;
    }
    if (over && now - e->last_cut >= CUT_GAP_MS) {
        /* still refused more than the rest: under what it is granted, and
         * under a partition's rate only when refused even at it */
        double r = BELOW_GRANTED * granted_rate(e, now);
        double floor = partition_rate(p);
        if (e->rate > floor && r < floor)
            r = floor;
        if (r > e->rate)
            r = e->rate * BELOW_GRANTED;
        e->rate = r > MIN_RATE ? r : MIN_RATE;
        e->last_cut = now;
    }
    if (e->next < now)
        e->next = now;
    note_hottest(p, e);
    return EL_OK;
}

void el_pacer_granted(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now)
{
    if (p->count == 0)
        return;
    pkey *e = find(p, kind, h);
    if (!e)
        return;
    decay(e, now);
    e->g += units;
    e->nans += 1;
}

bool el_pacer_paced(const el_pacer *p, el_pacer_kind kind, uint64_t h)
{
    if (p->npaced == 0)
        return false;
    const pkey *e = find(p, kind, h);
    return e && e->paced;
}

double el_pacer_reserve(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now,
                        double horizon)
{
    if (p->npaced == 0)
        return now;
    pkey *e = find(p, kind, h);
    if (!e || !e->paced)
        return now;
    double quiet = now - e->last_excess;
    if (quiet >= QUIET_MS && now > e->last_grow) {
        /* nothing refused beyond the rest: probe for more, faster the
         * longer it lasts (a key paced by chance is released within
         * seconds; a hot one is refused again, and cut back) */
        double g = GROW_START * pow(2, floor((quiet - QUIET_MS) / 1000.0));
        double grown = e->rate * (1 + (g < GROW_MAX ? g : GROW_MAX) * (now - e->last_grow) / 1000.0);
        /* ... but not past twice what it is granted: then its rows do not
         * wait on its pace */
        decay(e, now);
        double cap = 2 * granted_rate(e, now);
        e->rate = grown < cap ? grown : (e->rate > cap ? e->rate : cap);
        if (e->rate > MAX_RATE)
            e->rate = MAX_RATE;
        e->last_grow = now;
    }
    double t = e->next > now - SLACK_MS ? e->next : now - SLACK_MS;
    if (horizon > 0 && t >= now + horizon)
        return t;
    e->next = t + (units > 0 ? units : 1) / e->rate * 1000.0;
    return t;
}

void el_pacer_expire(el_pacer *p, double now)
{
    if (p->count == 0 || now - p->last_sweep < SWEEP_MS)
        return;
    p->last_sweep = now;
    for (size_t i = 0; i < p->nslots; i++) {
        pkey **link = &p->slots[i];
        while (*link) {
            pkey *e = *link;
            double quiet = now - e->last_refusal;
            /* a paced key also waits out its reservations: writes reserved
             * past the quiet time still go at their pace */
            bool drop = e->paced ? quiet > FORGET_MS && e->next < now : quiet > WATCH_MS;
            if (!drop) {
                link = &e->chain;
                continue;
            }
            *link = e->chain;
            if (e->paced)
                p->npaced--;
            p->count--;
            entry_free(e);
        }
    }
}

void el_pacer_stats_get(const el_pacer *p, el_pacer_stats *out)
{
    *out = p->hot;
    out->keys_paced = p->keys_paced;
    out->paced_now = p->npaced;
    /* the hottest key's current rate, while it is paced */
    if (p->hot.has_hottest)
        for (size_t i = 0; i < p->nslots; i++)
            for (const pkey *e = p->slots[i]; e; e = e->chain)
                if (e->paced && e->kind == p->hot.hottest_kind && e->label &&
                    strcmp(e->label, p->hot.hottest) == 0)
                    out->hottest_rate = e->rate;
}
