/*
 * ratectl.c - AIMD window and WCU token bucket.
 *
 * DESIGN: kept free of clocks and I/O so tests can replay a throttle
 * pattern and check the exact window after each step.
 */
#include "dynamo/ratectl.h"

#define CUT_FACTOR 0.7
#define CUT_SPACING_MS 100.0

void el_rate_init(el_rate *r, int max_window, double wcu_per_s, double now)
{
    r->max_window = max_window > 0 ? max_window : 1;
    r->cwnd = r->max_window;
    r->last_cut = -1e300;
    r->wcu_per_s = wcu_per_s > 0 ? wcu_per_s : 0;
    r->capacity = r->wcu_per_s * 0.5;
    r->tokens = r->capacity;
    r->last_refill = now;
}

int el_rate_window(const el_rate *r)
{
    int w = (int)r->cwnd;
    return w < 1 ? 1 : w;
}

void el_rate_on_throttle(el_rate *r, double now)
{
    if (now - r->last_cut < CUT_SPACING_MS)
        return;
    r->last_cut = now;
    r->cwnd *= CUT_FACTOR;
    if (r->cwnd < 1)
        r->cwnd = 1;
}

void el_rate_on_success(el_rate *r)
{
    r->cwnd += 1.0 / r->cwnd;
    if (r->cwnd > r->max_window)
        r->cwnd = r->max_window;
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
    if (r->tokens < need)
        return false;
    r->tokens -= wcu;
    return true;
}

double el_rate_wait_ms(el_rate *r, double wcu, double now)
{
    if (r->wcu_per_s <= 0)
        return 0;
    refill(r, now);
    double need = wcu < r->capacity ? wcu : r->capacity;
    if (r->tokens >= need)
        return 0;
    return (need - r->tokens) / r->wcu_per_s * 1000.0;
}

void el_rate_settle(el_rate *r, double estimated, double consumed)
{
    if (r->wcu_per_s > 0 && consumed > 0)
        r->tokens -= consumed - estimated;
}

void el_rate_refund(el_rate *r, double units)
{
    if (r->wcu_per_s <= 0 || units <= 0)
        return;
    r->tokens += units;
    if (r->tokens > r->capacity)
        r->tokens = r->capacity;
}
