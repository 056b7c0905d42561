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

/* A small, fast, thread-local-free PRNG (splitmix64) for jitter. */
uint64_t el_rand_next(uint64_t *state);
/* Uniform in [0,1). */
double el_rand_unit(uint64_t *state);

#endif
