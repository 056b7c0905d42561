/*
 * ratectl.h - how fast the request driver (ddb_driver.h) may send.
 *
 * Two independent controls, both pure (time is an argument, ms on the
 * driver's clock), owned by the driver's thread:
 *  - an AIMD window over requests in flight, as TCP and the AWS SDKs'
 *    adaptive retry mode do: a throttle cuts the window to 70 % (at most
 *    once per 100 ms, so one burst of throttles is one signal), each
 *    successful request grows it by 1/window, up to --concurrency;
 *  - a token bucket of capacity units for --max-wcu / --max-rcu: requests
 *    take their estimated units before they go, the difference to what
 *    DynamoDB reports as consumed is settled when the answer comes, and a
 *    throttled request (which consumed nothing) gets its units back. The
 *    bucket holds half a second of budget. The bucket may go below zero (a
 *    request larger than the bucket goes when it is full, and the debt is
 *    paid before the next one), so over any 10 seconds the consumed rate
 *    stays within a bucket of the cap, plus one request when a single
 *    request costs more than a second of budget.
 */
#ifndef EL_RATECTL_H
#define EL_RATECTL_H

#include <stdbool.h>  /* bool */

typedef struct el_rate {
    double cwnd;          /* current window, 1 .. max_window */
    double max_window;
    double last_cut;      /* time of the last decrease (ms) */
    double wcu_per_s;     /* 0 = no capacity cap */
    double tokens;
    double capacity;
    double last_refill;   /* ms */
} el_rate;

void el_rate_init(el_rate *r, int max_window, double wcu_per_s, double now);

/* Requests that may be in flight now (>= 1). */
int el_rate_window(const el_rate *r);

void el_rate_on_throttle(el_rate *r, double now);
void el_rate_on_success(el_rate *r);

/* Takes wcu from the bucket if the budget allows a request now (the
 * bucket holds min(wcu, capacity)); false, taking nothing, if not. */
bool el_rate_take(el_rate *r, double wcu, double now);

/* Milliseconds until el_rate_take(wcu) would succeed (0 when it would now). */
double el_rate_wait_ms(el_rate *r, double wcu, double now);

/* Settles the difference between consumed and estimated units (nothing
 * when consumed is 0: the answer did not say). */
void el_rate_settle(el_rate *r, double estimated, double consumed);

/* Gives back the units of a request that consumed none (a throttle). */
void el_rate_refund(el_rate *r, double units);

#endif
