/*
 * pacer.c - per-key rates learned from refusals and grants.
 *
 * DESIGN: a key's rate is what DynamoDB grants it, which edgeload cannot
 * ask for; it can only watch. An AIMD rule alone (halve on refusal, grow on
 * success) finds it too, but oscillates around it: every probe above the
 * limit costs a refusal of every write of the key then in flight, and a
 * halving leaves half the key's rate unused until it has grown back (the
 * service model's hottest target, 17 % of a load, then sets the wall time).
 * Measuring the grants gives the rate at once: a refusal means "above the
 * limit", and what was accepted over the last second or two, just after
 * the burst a partition allows was spent, is the limit. Halving is kept
 * only for the first second of a key, before there is a measurement.
 *
 * Keys live in a chained hash table by (kind, hash). Entries are small;
 * labels are kept only for paced keys. Suspects (refused once, not paced)
 * are forgotten after two seconds, paced keys after 30 s without a
 * refusal: a table throttled as a whole hands back items of every key, and
 * those must not pile up here.
 */
#include "pipeline/pacer.h"

#include <stdlib.h>  /* calloc, free, malloc */
#include <string.h>  /* memcpy */

#define INITIAL_RATE 1000.0   /* units/s: a partition's write limit */
#define MIN_RATE 1.0          /* units/s: a key is never stopped */
#define MAX_RATE 1e7
#define SURE_AFTER_MS 2000.0  /* a second refusal within this makes a suspect paced */
#define CUT_GAP_MS 250.0      /* refusals closer than this are one event (writes in flight) */
#define MEASURE_MS 250.0      /* grants seen before a refusal may set the rate from them */
#define BUCKET_MS 1000.0      /* grants are summed per second */
#define BELOW_GRANTED 0.95    /* a refusal sets the rate this much under the grants */
#define GROWTH_PER_S 0.01     /* while nothing is refused */
#define QUIET_MS 1000.0       /* refusal-free time before the rate grows */
#define SLACK_MS 50.0         /* a paced key may catch up this much after idling */
#define FORGET_MS 30000.0     /* a paced key not refused for this long is forgotten */
#define SWEEP_MS 1000.0
#define MAX_ENTRIES 200000    /* suspects beyond this are not kept */

typedef struct pkey {
    uint64_t h;
    uint8_t kind;
    bool paced;
    double rate;               /* units/s while paced */
    double next;               /* reservation clock: the next write's earliest time */
    double last_refusal, last_cut, paced_since, last_grow;
    double g_t0, g_cur, g_prev; /* grants: this second's units (from g_t0), the last second's */
    bool has_prev;
    uint64_t refusals;
    uint64_t last_item;        /* the item of the last refusal (a suspect's) */
    char *label;               /* paced keys only */
    struct pkey *chain;
} pkey;

struct el_pacer {
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

/* The grants' sums rolled forward to now. */
static void roll(pkey *e, double now)
{
    if (now - e->g_t0 < BUCKET_MS)
        return;
    bool adjacent = now - e->g_t0 < 2 * BUCKET_MS;
    e->g_prev = adjacent ? e->g_cur : 0;
    e->has_prev = true;
    e->g_cur = 0;
    e->g_t0 = adjacent ? e->g_t0 + BUCKET_MS : now;
}

/* Units/s granted over the last one to two seconds. */
static double granted_rate(pkey *e, double now)
{
    roll(e, now);
    double span = (now - e->g_t0) / 1000.0;
    double units = e->g_cur;
    if (e->has_prev) {
        span += BUCKET_MS / 1000.0;
        units += e->g_prev;
    }
    return span > 0.05 ? units / span : 0;
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

el_err el_pacer_refused(el_pacer *p, el_pacer_kind kind, uint64_t h, uint64_t item, bool sure,
                        const char *label, size_t len, double now)
{
    pkey *e = find(p, kind, h);
    if (!e) {
        if (!sure && p->count >= MAX_ENTRIES)
            return EL_OK; /* a table-wide throttle: nothing to learn per key */
        e = calloc(1, sizeof *e);
        if (!e)
            return EL_ENOMEM;
        e->h = h;
        e->kind = (uint8_t)kind;
        e->last_refusal = -1e18;
        size_t s = slot_of(p, kind, h);
        e->chain = p->slots[s];
        p->slots[s] = e;
        p->count++;
        maybe_grow(p);
    }
    e->refusals++;
    if (!e->paced) {
        if (!sure && (now - e->last_refusal > SURE_AFTER_MS || item == e->last_item)) {
            e->last_refusal = now;
            e->last_item = item;
            return EL_OK; /* a suspect until another of its items is refused */
        }
        char *l = malloc(len + 1);
        if (!l)
            return EL_ENOMEM;
        if (len)
            memcpy(l, label, len);
        l[len] = '\0';
        e->label = l;
        e->paced = true;
        e->rate = INITIAL_RATE;
        e->paced_since = e->last_cut = e->last_grow = e->g_t0 = now;
        e->next = now;
        p->npaced++;
        p->keys_paced++;
    } else if (now - e->last_cut >= CUT_GAP_MS) {
        /* never below half the rate per cut: a key whose demand is low
         * was granted little because it asked little */
        double g = now - e->paced_since >= MEASURE_MS ? granted_rate(e, now) : 0;
        double r = g > 0 ? (g < e->rate ? g : e->rate) * BELOW_GRANTED : 0;
        e->rate = r > e->rate * 0.5 ? r : e->rate * 0.5;
        if (e->rate < MIN_RATE)
            e->rate = MIN_RATE;
        e->last_cut = now;
    }
    e->last_refusal = now;
    e->last_grow = now;
    if (e->next < now)
        e->next = now;
    note_hottest(p, e);
    return EL_OK;
}

void el_pacer_granted(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now)
{
    if (p->npaced == 0)
        return;
    pkey *e = find(p, kind, h);
    if (!e || !e->paced)
        return;
    roll(e, now);
    e->g_cur += units;
}

bool el_pacer_paced(const el_pacer *p, el_pacer_kind kind, uint64_t h)
{
    if (p->npaced == 0)
        return false;
    const pkey *e = find(p, kind, h);
    return e && e->paced;
}

double el_pacer_reserve(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now)
{
    if (p->npaced == 0)
        return now;
    pkey *e = find(p, kind, h);
    if (!e || !e->paced)
        return now;
    if (now - e->last_refusal >= QUIET_MS && now > e->last_grow) {
        e->rate *= 1.0 + GROWTH_PER_S * (now - e->last_grow) / 1000.0;
        if (e->rate > MAX_RATE)
            e->rate = MAX_RATE;
        e->last_grow = now;
    }
    double t = e->next > now - SLACK_MS ? e->next : now - SLACK_MS;
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
            bool drop = e->paced ? quiet > FORGET_MS && e->next < now : quiet > SURE_AFTER_MS;
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
