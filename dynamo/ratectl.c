/*
 * ratectl.c - the window and the capacity budget's token bucket.
 *
 * DESIGN: kept free of clocks and I/O so tests can replay a throttle
 * pattern and check the exact window after each step.
 */
#include "dynamo/ratectl.h"

/* The window's limit, in seconds of budget: 5 % over its 10 s. The window
 * counts what is in flight (requests sent, not yet answered), which at a
 * second of latency would otherwise hold the load 10 % below its budget
 * (measured: 442 of 500 WCU/s on a loaded machine); the token bucket keeps
 * the long-run rate at the budget itself. */
#define WINDOW_BUDGET_S 10.5

void el_rate_init(el_rate *r, int max_window, double wcu_per_s, double now)
{
    r->window = max_window > 0 ? max_window : 1;
    r->wcu_per_s = wcu_per_s > 0 ? wcu_per_s : 0;
    r->capacity = r->wcu_per_s * 0.5;
    r->tokens = r->capacity;
    r->last_refill = now;
    r->inflight = 0;
    for (int i = 0; i < EL_RATE_SLOTS; i++) {
        r->slot_units[i] = 0;
        r->slot_tick[i] = -1;
    }
}

static long long tick_of(double now)
{
    return (long long)(now / EL_RATE_SLOT_MS);
}

/* Adds units (may be negative: settled or refunded) to the window at now. */
static void record(el_rate *r, double now, double units)
{
    long long t = tick_of(now);
    int i = (int)(t % EL_RATE_SLOTS);
    if (r->slot_tick[i] != t) {
        r->slot_tick[i] = t;
        r->slot_units[i] = 0;
    }
    r->slot_units[i] += units;
}

/* Milliseconds until the window has room for units more (0: now): the
 * units answered in the last 10 s, those in flight and these within 10 s
 * of budget. Counting what is in flight makes it hold by the answers'
 * time too: every request answered in some 10 s was, when the last of
 * them was sent, either answered within the 10 s before, in flight, or
 * that request itself. */
static double window_wait_ms(const el_rate *r, double units, double now)
{
    long long t = tick_of(now);
    double sum = r->inflight;
    for (int i = 0; i < EL_RATE_SLOTS; i++)
        if (r->slot_tick[i] > t - EL_RATE_SLOTS && r->slot_tick[i] <= t)
            sum += r->slot_units[i];
    double limit = r->wcu_per_s * WINDOW_BUDGET_S;
    if (sum <= 0 || sum + units <= limit)
        return 0;
    /* the oldest ticks leave the window first: wait for enough of them
     * (or all of them, for a request larger than the whole limit) */
    for (long long k = t - EL_RATE_SLOTS + 1; k <= t; k++) {
        int i = (int)(k % EL_RATE_SLOTS);
        if (r->slot_tick[i] == k)
            sum -= r->slot_units[i];
        if (sum <= 0 || sum + units <= limit) {
            double free_at = (double)(k + EL_RATE_SLOTS) * EL_RATE_SLOT_MS; /* k leaves then */
            return free_at > now ? free_at - now : 0;
        }
    }
    /* what is in flight alone holds the window: only an answer frees it
     * (and wakes the driver); look again a slot later at the latest */
    return EL_RATE_SLOT_MS;
}

int el_rate_window(const el_rate *r)
{
    return r->window;
}

static void refill(el_rate *r, double now)
{
    if (now > r->last_refill) {
        r->tokens += (now - r->last_refill) / 1000.0 * r->wcu_per_s;
        if (r->tokens > r->capacity)
            r->tokens = r->capacity;
    }
    r->last_refill = now;
}

bool el_rate_take(el_rate *r, double wcu, double now)
{
    if (r->wcu_per_s <= 0)
        return true;
    refill(r, now);
    /* a request larger than the bucket goes when the bucket is full */
    double need = wcu < r->capacity ? wcu : r->capacity;
    if (r->tokens < need || window_wait_ms(r, wcu, now) > 0)
        return false;
    r->tokens -= wcu;
    r->inflight += wcu;
    return true;
}

double el_rate_wait_ms(el_rate *r, double wcu, double now)
{
    if (r->wcu_per_s <= 0)
        return 0;
    refill(r, now);
    double need = wcu < r->capacity ? wcu : r->capacity;
    double bucket = r->tokens >= need ? 0 : (need - r->tokens) / r->wcu_per_s * 1000.0;
    double window = window_wait_ms(r, wcu, now);
    return bucket > window ? bucket : window;
}

static void leave_flight(el_rate *r, double units)
{
    r->inflight -= units;
    if (r->inflight < 0)
        r->inflight = 0;
}

void el_rate_settle(el_rate *r, double estimated, double consumed, double now)
{
    if (r->wcu_per_s <= 0)
        return;
    leave_flight(r, estimated);
    if (consumed > 0)
        r->tokens -= consumed - estimated;
    record(r, now, consumed > 0 ? consumed : estimated);
}

void el_rate_refund(el_rate *r, double units, double now)
{
    (void)now;
    if (r->wcu_per_s <= 0 || units <= 0)
        return;
    leave_flight(r, units);
    r->tokens += units;
    if (r->tokens > r->capacity)
        r->tokens = r->capacity;
}
