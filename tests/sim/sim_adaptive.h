/*
 * sim_adaptive.h - the AWS SDKs' adaptive retry mode as a limiter for the
 * request driver (el_ddb_limiter), the baseline of the scorecard.
 *
 * Written from botocore's retries/adaptive.py, throttling.py and
 * bucket.py: a token bucket of requests (not units) per second, off until
 * the first throttle; the send rate is measured in half-second buckets
 * smoothed by 0.8; a throttle sets the bucket's rate to 0.7 x the rate
 * measured (or the bucket's, when lower) and remembers it as W_max; each
 * other answer sets it by CUBIC, 0.4 x (t - K)^3 + W_max with
 * K = cbrt(W_max x 0.3 / 0.4), never above twice the measured send rate.
 * The bucket holds one second of its rate (at least one request) and its
 * rate is never under 0.5 a second. Only throttling errors count: items a
 * BatchWriteItem hands back are the application's to resend.
 */
#ifndef SIM_ADAPTIVE_H
#define SIM_ADAPTIVE_H

#include "dynamo/ddb_driver.h"

typedef struct sim_adaptive sim_adaptive;

sim_adaptive *sim_adaptive_new(void);
void sim_adaptive_free(sim_adaptive *a);

/* The limiter (its self is a). */
el_ddb_limiter sim_adaptive_limiter(sim_adaptive *a);

#endif
