/*
 * test_backoff.c - capped exponential backoff with full jitter, exact values
 * for given draws, and the splitmix64 generator behind the draws.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */

#include "common/backoff.h"

#define BASE EL_BACKOFF_BASE_MS
#define CAP EL_BACKOFF_CAP_MS

static void test_defaults(void **state)
{
    (void)state;
    assert_true(BASE == 25.0);
    assert_true(CAP == 20000.0);      /* 20 s */
}

static void test_attempt_zero_ceiling_is_base(void **state)
{
    (void)state;
    assert_true(el_backoff_ms(0, BASE, CAP, 0.0) == 0.0);
    assert_true(el_backoff_ms(0, BASE, CAP, 0.5) == 12.5);
    assert_true(el_backoff_ms(0, BASE, CAP, 0.25) == 6.25);
    assert_true(el_backoff_ms(0, 100.0, CAP, 0.5) == 50.0);
}

static void test_exact_doubling(void **state)
{
    (void)state;
    /* ceiling = base * 2^attempt: with u = 0.5 the delay is half of it */
    const double want[] = { 12.5, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400 };
    for (unsigned a = 0; a < 10; a++)
        assert_true(el_backoff_ms(a, BASE, CAP, 0.5) == want[a]);
    assert_true(el_backoff_ms(3, BASE, CAP, 0.75) == 150.0);
    assert_true(el_backoff_ms(9, BASE, CAP, 0.125) == 1600.0);
}

static void test_cap_at_20_seconds(void **state)
{
    (void)state;
    /* 25 * 2^10 = 25600 > 20000: capped from attempt 10 on */
    assert_true(el_backoff_ms(9, BASE, CAP, 0.5) == 6400.0);
    assert_true(el_backoff_ms(10, BASE, CAP, 0.5) == 10000.0);
    assert_true(el_backoff_ms(11, BASE, CAP, 0.5) == 10000.0);
    assert_true(el_backoff_ms(1000, BASE, CAP, 0.5) == 10000.0);
    assert_true(el_backoff_ms(4000000000u, BASE, CAP, 0.5) == 10000.0);
    double top = el_backoff_ms(100, BASE, CAP, 0.999999);
    assert_true(top < CAP && top > 19999.0);
    /* a base above the cap is capped too */
    assert_true(el_backoff_ms(0, 50000.0, CAP, 0.5) == 10000.0);
}

static void test_draw_is_clamped(void **state)
{
    (void)state;
    assert_true(el_backoff_ms(2, BASE, CAP, -3.0) == 0.0);
    double d = el_backoff_ms(2, BASE, CAP, 1.0);      /* [0,1): 1 means just below */
    assert_true(d < 100.0 && d > 99.99);
    d = el_backoff_ms(2, BASE, CAP, 7.0);
    assert_true(d < 100.0 && d > 99.99);
}

static void test_rand_is_splitmix64(void **state)
{
    (void)state;
    /* splitmix64's reference outputs for seed 0 */
    uint64_t s = 0;
    assert_true(el_rand_next(&s) == 0xe220a8397b1dcdafull);
    assert_true(el_rand_next(&s) == 0x6e789e6aa1b965f4ull);
    assert_true(el_rand_next(&s) == 0x06c45d188009454full);
    /* deterministic per seed */
    uint64_t a = 42, b = 42;
    for (int i = 0; i < 10; i++)
        assert_true(el_rand_next(&a) == el_rand_next(&b));
}

static void test_rand_unit_range(void **state)
{
    (void)state;
    uint64_t s = 12345;
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < 100000; i++) {
        double u = el_rand_unit(&s);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
        if (u < lo)
            lo = u;
        if (u > hi)
            hi = u;
    }
    assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
    assert_true(lo < 0.001 && hi > 0.999);
}

/* A service's hint is honoured between the backoff and 5 s over it. */
static void test_hint_bounded(void **state)
{
    (void)state;
    assert_true(el_backoff_hinted_ms(300, 0) == 300);       /* no hint */
    assert_true(el_backoff_hinted_ms(300, -1) == 300);
    assert_true(el_backoff_hinted_ms(300, 2000) == 2000);   /* honoured */
    assert_true(el_backoff_hinted_ms(300, 100) == 300);     /* never sooner */
    assert_true(el_backoff_hinted_ms(300, 60000) == 5300);  /* at most 5 s over */
    assert_true(el_backoff_hinted_ms(0, 3600000) == EL_BACKOFF_HINT_EXTRA_MS);
    assert_true(EL_BACKOFF_HINT_EXTRA_MS == 5000.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_attempt_zero_ceiling_is_base),
        cmocka_unit_test(test_exact_doubling),
        cmocka_unit_test(test_cap_at_20_seconds),
        cmocka_unit_test(test_draw_is_clamped),
        cmocka_unit_test(test_rand_is_splitmix64),
        cmocka_unit_test(test_rand_unit_range),
        cmocka_unit_test(test_hint_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
