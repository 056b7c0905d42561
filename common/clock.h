/*
 * clock.h - the one monotonic clock every stage measures time with.
 *
 * Milliseconds as a double: retry delays, rate buckets and timeouts are
 * fractions of a second, and a double holds a monotonic millisecond count
 * exactly for longer than any run. Not wall time: it never jumps when the
 * system clock is set.
 */
#ifndef EL_CLOCK_H
#define EL_CLOCK_H

/* Monotonic milliseconds (CLOCK_MONOTONIC). Any thread. */
double el_now_ms(void);

/*
 * A clock an engine is given by its caller: its elapsed times and progress
 * intervals are read from it, so a test on a scripted DynamoDB (whose
 * driver runs on virtual time) sees figures in that same time. A NULL
 * clock, or one with no now_ms, is el_now_ms.
 */
typedef struct el_clock {
    double (*now_ms)(void *self); /* monotonic milliseconds */
    void *self;
} el_clock;

static inline double el_clock_now(const el_clock *c)
{
    return c && c->now_ms ? c->now_ms(c->self) : el_now_ms();
}

/* Sleeps ms milliseconds (<= 0: returns at once); a signal ends it early. */
void el_sleep_ms(double ms);

#endif
