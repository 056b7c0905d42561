/*
 * sim_adaptive.c - botocore's adaptive retry mode, for comparison.
 *
 * DESIGN: the three parts of botocore (RateClocker, CubicCalculator,
 * TokenBucket) in one struct, time in seconds as botocore keeps it. The
 * token bucket is consulted before each send (wait_ms) and charged one
 * token per request (sent), as botocore's before-send hook does.
 */
#include "sim_adaptive.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define SMOOTH 0.8
#define BUCKET_S 0.5
#define SCALE 0.4
#define BETA 0.7
#define MIN_RATE 0.5
#define MAX_ADJUST 2.0

struct sim_adaptive {
    bool enabled;
    /* RateClocker */
    double measured, last_bucket;
    double count;
    bool clocked;
    /* CubicCalculator */
    double w_max, k, last_fail;
    /* TokenBucket */
    double fill, capacity, tokens, last;
    bool started;
};

static double secs(double ms)
{
    return ms / 1000.0;
}

static void refill(sim_adaptive *a, double t)
{
    if (!a->started) {
        a->started = true;
        a->last = t;
        return;
    }
    a->tokens += (t - a->last) * a->fill;
    if (a->tokens > a->capacity)
        a->tokens = a->capacity;
    a->last = t;
}

static void set_rate(sim_adaptive *a, double rate, double t)
{
    refill(a, t);
    a->fill = rate > MIN_RATE ? rate : MIN_RATE;
    a->capacity = rate >= 1 ? rate : 1;
    if (a->tokens > a->capacity)
        a->tokens = a->capacity;
}

/* RateClocker.record: the send rate, measured per half second. */
static double record(sim_adaptive *a, double t)
{
    double bucket = floor(t / BUCKET_S) * BUCKET_S;
    if (!a->clocked) {
        a->clocked = true;
        a->last_bucket = floor(t);
    }
    a->count += 1;
    if (bucket > a->last_bucket) {
        double rate = a->count / (bucket - a->last_bucket);
        a->measured = rate * SMOOTH + a->measured * (1 - SMOOTH);
        a->count = 0;
        a->last_bucket = bucket;
    }
    return a->measured;
}

static double wait_ms(void *self, double units, double now)
{
    (void)units;
    sim_adaptive *a = self;
    if (!a->enabled)
        return 0;
    refill(a, secs(now));
    return a->tokens >= 1 ? 0 : (1 - a->tokens) / a->fill * 1000.0;
}

static void sent(void *self, double units, double now)
{
    (void)units;
    sim_adaptive *a = self;
    if (!a->enabled)
        return;
    refill(a, secs(now));
    a->tokens -= 1;
}

static void answered(void *self, bool throttled, double now)
{
    sim_adaptive *a = self;
    double t = secs(now);
    double measured = record(a, t);
    double rate;
    if (!throttled) {
        double dt = t - a->last_fail;
        rate = SCALE * pow(dt - a->k, 3) + a->w_max;
    } else {
        double use = a->enabled && a->fill < measured ? a->fill : measured;
        a->w_max = use;
        a->k = cbrt(a->w_max * (1 - BETA) / SCALE);
        a->last_fail = t;
        rate = use * BETA;
        a->enabled = true;
    }
    if (rate > MAX_ADJUST * measured)
        rate = MAX_ADJUST * measured;
    set_rate(a, rate, t);
}

sim_adaptive *sim_adaptive_new(void)
{
    sim_adaptive *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    a->fill = 1;
    a->capacity = 1;
    return a;
}

void sim_adaptive_free(sim_adaptive *a)
{
    free(a);
}

el_ddb_limiter sim_adaptive_limiter(sim_adaptive *a)
{
    return (el_ddb_limiter){ .wait_ms = wait_ms, .sent = sent, .answered = answered, .self = a };
}
