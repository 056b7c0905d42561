/*
 * backoff.h - retry delays: capped exponential backoff with full jitter
 * (the AWS SDKs' policy): delay = random(0, min(cap, base * 2^attempt)).
 * Pure: the random draw is an argument, so tests give exact expectations.
 */
#ifndef EL_BACKOFF_H
#define EL_BACKOFF_H

#include <stdint.h>  /* uint64_t */

#define EL_BACKOFF_BASE_MS 25.0
#define EL_BACKOFF_CAP_MS 20000.0

/* attempt counts from 0 (the first retry); u is a uniform draw in [0,1). */
double el_backoff_ms(unsigned attempt, double base_ms, double cap_ms, double u);

/* A service's hint of how long to wait (x-amz-retry-after, or
 * Retry-After) is honoured within this much over the backoff. */
#define EL_BACKOFF_HINT_EXTRA_MS 5000.0

/* The delay before a retry whose backoff came out at backoff_ms when the
 * answer asked for hint_ms (<= 0: no hint): the hint, but never under the
 * backoff nor more than EL_BACKOFF_HINT_EXTRA_MS over it, as the SDKs'
 * current retry behaviour bounds it (botocore's standard mode, 2026: "min
 * is t_i, max is t_i + 5"), so that a service cannot park a client for
 * long and a client never retries sooner than its own backoff says. */
double el_backoff_hinted_ms(double backoff_ms, double hint_ms);

/* A small, fast, thread-local-free PRNG (splitmix64) for jitter. */
uint64_t el_rand_next(uint64_t *state);
/* Uniform in [0,1). */
double el_rand_unit(uint64_t *state);

#endif
