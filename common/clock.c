/*
 * clock.c - monotonic time.
 *
 * DESIGN: one definition, so that every deadline in the program (backoff,
 * budgets, checkpoints, progress) is on the same clock.
 */
#include "common/clock.h"

#include <time.h>  /* clock_gettime, nanosleep */

double el_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void el_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    nanosleep(&ts, NULL);
}
