/*
 * backoff.c - capped exponential backoff with full jitter.
 *
 * DESIGN: "full jitter" spreads retries of many clients over the whole
 * window, which AWS measured to finish contended work soonest; the cap keeps
 * one slow key from parking items for minutes.
 */
#include "common/backoff.h"

double el_backoff_ms(unsigned attempt, double base_ms, double cap_ms, double u)
{
    double ceiling = base_ms;
    for (unsigned i = 0; i < attempt && ceiling < cap_ms; i++)
        ceiling *= 2;
    if (ceiling > cap_ms)
        ceiling = cap_ms;
    if (u < 0)
        u = 0;
    if (u >= 1)
        u = 0.999999999;
    return u * ceiling;
}

double el_backoff_hinted_ms(double backoff_ms, double hint_ms)
{
    if (hint_ms <= 0)
        return backoff_ms;
    double most = backoff_ms + EL_BACKOFF_HINT_EXTRA_MS;
    double wait = hint_ms < most ? hint_ms : most;
    return wait > backoff_ms ? wait : backoff_ms;
}

uint64_t el_rand_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double el_rand_unit(uint64_t *s)
{
    return (double)(el_rand_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
