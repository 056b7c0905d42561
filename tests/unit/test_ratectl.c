/* test_ratectl.c - the AIMD window and the --max-wcu token bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dynamo/ratectl.h"

static void test_window_starts_at_max_and_halves_on_throttle(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 0, 0);
    assert_int_equal(el_rate_window(&r), 16);
    el_rate_on_throttle(&r, 1000);
    assert_int_equal(el_rate_window(&r), 11); /* 16 * 0.7 = 11.2 */
    /* a burst of throttles within 100 ms is one signal */
    el_rate_on_throttle(&r, 1050);
    assert_int_equal(el_rate_window(&r), 11);
    el_rate_on_throttle(&r, 1101);
    assert_int_equal(el_rate_window(&r), 7); /* 11.2 * 0.7 = 7.84 */
}

static void test_window_never_below_one_and_recovers_additively(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 8, 0, 0);
    for (int i = 0; i < 50; i++)
        el_rate_on_throttle(&r, 1000.0 + 200.0 * i);
    assert_int_equal(el_rate_window(&r), 1);
    /* 1/w per success: from 1 to 2 takes one success, 2 to 3 two more ... */
    el_rate_on_success(&r);
    assert_int_equal(el_rate_window(&r), 2);
    int successes = 0;
    while (el_rate_window(&r) < 8) {
        el_rate_on_success(&r);
        successes++;
    }
    /* additive: about sum(k, k=2..7) = 27 successes */
    assert_in_range(successes, 20, 30);
    for (int i = 0; i < 100; i++)
        el_rate_on_success(&r);
    assert_int_equal(el_rate_window(&r), 8);
}

static void test_no_cap_always_allows(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 4, 0, 0);
    for (int i = 0; i < 1000; i++)
        assert_true(el_rate_take(&r, 50, 0));
    assert_true(el_rate_wait_ms(&r, 50, 0) == 0);
}

static void test_bucket_holds_half_a_second(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 500, 0);
    /* starts full: 250 WCU */
    for (int i = 0; i < 5; i++)
        assert_true(el_rate_take(&r, 50, 0));
    assert_false(el_rate_take(&r, 50, 0));
    /* 100 ms later: 50 WCU more */
    assert_true(el_rate_wait_ms(&r, 50, 0) > 99.0);
    assert_true(el_rate_take(&r, 50, 100));
    assert_false(el_rate_take(&r, 50, 100));
}

static void test_bucket_rate_over_ten_seconds(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 500, 0);
    double sent = 0;
    for (double t = 0; t <= 10000; t += 1) /* every millisecond, try a 50 WCU batch */
        if (el_rate_take(&r, 50, t))
            sent += 50;
    /* 10 s at 500 WCU/s plus the initial half-second bucket */
    assert_in_range((long)sent, 5000, 5250 + 50);
}

static void test_settle_charges_the_difference(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 100, 0);
    assert_true(el_rate_take(&r, 50, 0)); /* 50 left */
    el_rate_settle(&r, 10, 50);           /* it really cost 40 more */
    assert_false(el_rate_take(&r, 20, 0));
    el_rate_settle(&r, 50, 0);            /* consumed unknown: no change */
    assert_true(el_rate_wait_ms(&r, 20, 0) > 0);
}

static void test_oversized_request_goes_when_bucket_full(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 10, 0); /* bucket of 5 WCU */
    assert_true(el_rate_take(&r, 50, 0));
    assert_false(el_rate_take(&r, 50, 100));
    /* debt of 45 plus a full bucket of 5: 5 s at 10 WCU/s */
    assert_false(el_rate_take(&r, 50, 4900));
    assert_true(el_rate_take(&r, 50, 5001));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_starts_at_max_and_halves_on_throttle),
        cmocka_unit_test(test_window_never_below_one_and_recovers_additively),
        cmocka_unit_test(test_no_cap_always_allows),
        cmocka_unit_test(test_bucket_holds_half_a_second),
        cmocka_unit_test(test_bucket_rate_over_ten_seconds),
        cmocka_unit_test(test_settle_charges_the_difference),
        cmocka_unit_test(test_oversized_request_goes_when_bucket_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
