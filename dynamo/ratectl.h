/*
 * ratectl.h - the request driver's (ddb_driver.h) own limits on sending.
 *
 * Pure (time is an argument, ms on the driver's clock), owned by the
 * driver's thread:
 *  - the window: at most --concurrency requests in flight. It does not
 *    shrink on throttles: what the table and its keys grant is learned
 *    elsewhere (tablerate.h, pipeline/load/pacer.h), and a window cut by
 *    refusals at random starves a load at high latency (the simulator's
 *    20 %-fault load at 50 ms held 40 % of its pace with a window that did);
 *  - a token bucket of capacity units for --max-wcu / --max-rcu: requests
 *    take their estimated units before they go, the difference to what
 *    DynamoDB reports as consumed is settled when the answer comes, and a
 *    throttled request (which consumed nothing) gets its units back. The
 *    bucket holds half a second of budget. The bucket may go below zero (a
 *    request larger than the bucket goes when it is full, and the debt is
 *    paid before the next one);
 *  - a sliding window of the units answered in the last 10 seconds (what
 *    each answer consumed, at the time it came) plus the units in flight,
 *    so that the budget holds over any 10 seconds also when one request
 *    costs more than a second of it (a 350 KB item with an index is 700
 *    units: at 300 units/s the bucket alone would let 5 of them into some
 *    10 s, 17 % over), and by the time DynamoDB consumed them, not only by
 *    the time they were sent: a request goes only when the window, what is
 *    in flight and itself stay within 10.5 s of budget (or nothing is).
 */
#ifndef EL_RATECTL_H
#define EL_RATECTL_H

#include <stdbool.h>  /* bool */

/* The sliding window: 100 slots of 100 ms. */
#define EL_RATE_SLOTS 100
#define EL_RATE_SLOT_MS 100.0

typedef struct el_rate {
    int window;           /* requests in flight at most (>= 1) */
    double wcu_per_s;     /* 0 = no capacity cap */
    double tokens;
    double capacity;
    double last_refill;   /* ms */
    double inflight;      /* units of requests sent and not answered */
    double slot_units[EL_RATE_SLOTS]; /* units answered in each 100 ms of the last 10 s */
    long long slot_tick[EL_RATE_SLOTS]; /* which 100-ms tick each slot holds, -1 none */
} el_rate;

void el_rate_init(el_rate *r, int max_window, double wcu_per_s, double now);

/* Requests that may be in flight (>= 1). */
int el_rate_window(const el_rate *r);

/* Takes wcu from the bucket if the budget allows a request now (the
 * bucket holds min(wcu, capacity)); false, taking nothing, if not. */
bool el_rate_take(el_rate *r, double wcu, double now);

/* Milliseconds until a request of wcu units may go (0 when it may now):
 * the bucket holds min(wcu, capacity) and the sliding window has room. */
double el_rate_wait_ms(el_rate *r, double wcu, double now);

/* A request estimated at `estimated` units was answered at now, having
 * consumed `consumed` (0: the answer did not say, and the estimate counts):
 * it leaves the units in flight, enters the window, and the bucket pays
 * the difference. */
void el_rate_settle(el_rate *r, double estimated, double consumed, double now);

/* A request that consumed nothing (a throttle) leaves the units in flight
 * and gives its units back to the bucket. */
void el_rate_refund(el_rate *r, double units, double now);

#endif
