/*
 * eta.c - a ring of (time, work done) samples, and the rate across it.
 *
 * DESIGN: the rate is the slope between the oldest sample still within the
 * window and the newest, not an average of per-interval rates, so uneven
 * report intervals weigh what they cover and a stall inside the window
 * shows as a lower rate at once. When nothing moved within the window the
 * ETA is unknown, not infinite: a bar says "?" rather than a number that
 * only grows.
 */
#include "cmd/eta.h"

#include <string.h>  /* memset */

void el_eta_init(el_eta *e, double window_s)
{
    memset(e, 0, sizeof *e);
    e->window_ms = (window_s > 0 ? window_s : 30) * 1000.0;
}

static size_t at(const el_eta *e, size_t i)
{
    return (e->head + i) % EL_ETA_SAMPLES;
}

void el_eta_add(el_eta *e, double now_ms, uint64_t done)
{
    if (e->n > 0) {
        size_t last = at(e, e->n - 1);
        if (done < e->done[last])
            done = e->done[last];
        if (now_ms < e->t[last])
            now_ms = e->t[last];
    }
    if (e->n == EL_ETA_SAMPLES) {
        e->head = at(e, 1);
        e->n--;
    }
    size_t slot = at(e, e->n);
    e->t[slot] = now_ms;
    e->done[slot] = done;
    e->n++;
    /* keep one sample at or before the window's start, so the slope spans
     * the whole window */
    while (e->n > 2 && now_ms - e->t[at(e, 1)] >= e->window_ms) {
        e->head = at(e, 1);
        e->n--;
    }
}

double el_eta_rate(const el_eta *e)
{
    if (e->n < 2)
        return 0;
    size_t first = e->head, last = at(e, e->n - 1);
    double dt = (e->t[last] - e->t[first]) / 1000.0;
    if (dt <= 0)
        return 0;
    return (double)(e->done[last] - e->done[first]) / dt;
}

double el_eta_seconds(const el_eta *e, uint64_t total)
{
    if (total == 0 || e->n == 0)
        return -1;
    uint64_t done = e->done[at(e, e->n - 1)];
    if (done >= total)
        return 0;
    double rate = el_eta_rate(e);
    if (rate <= 0)
        return -1;
    return (double)(total - done) / rate;
}
