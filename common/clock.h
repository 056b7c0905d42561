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

/* Sleeps ms milliseconds (<= 0: returns at once); a signal ends it early. */
void el_sleep_ms(double ms);

#endif
