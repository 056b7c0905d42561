/* test_ratectl.c - the window and the --max-wcu token bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "dynamo/ratectl.h"

static void test_window_is_the_concurrency(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 0, 0);
    assert_int_equal(el_rate_window(&r), 16);
    el_rate_init(&r, 0, 0, 0);
    assert_int_equal(el_rate_window(&r), 1); /* never under one */
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
    el_rate_settle(&r, 10, 50, 0);        /* it really cost 40 more */
    assert_false(el_rate_take(&r, 20, 0));
    el_rate_settle(&r, 50, 0, 0);         /* consumed unknown: no change */
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

/* Requests of 700 units (a 350 KB item with an index) at 300 units/s: one
 * costs more than 2 s of budget, so the bucket alone would let 5 of them
 * (3,500 units) into some 10 s. The window keeps every 10 s within 10 %
 * of the budget, and the long-run rate within 10 % below it. */
static void test_window_holds_for_large_requests(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 300, 0);
    double sends[200];
    int n = 0;
    for (double t = 0; t <= 60000 && n < 200; t += 1) {
        if (el_rate_wait_ms(&r, 700, t) <= 0 && el_rate_take(&r, 700, t)) {
            sends[n++] = t;
            el_rate_settle(&r, 700, 700, t + 50); /* answered 50 ms later */
        }
    }
    for (int i = 0; i < n; i++) {
        double units = 0;
        for (int j = i; j < n && sends[j] < sends[i] + 10000; j++)
            units += 700;
        if (units > 1.1 * 300 * 10)
            fail_msg("%.0f units in the 10 s from %.0f ms", units, sends[i]);
    }
    double rate = 700.0 * n / 60.0;
    assert_true(rate >= 0.9 * 300 * 60 / 61.0 && rate <= 1.1 * 300);
    /* a request larger than the whole window goes once the window is empty */
    el_rate_init(&r, 16, 10, 0);               /* 100 units a window */
    assert_true(el_rate_take(&r, 500, 0));
    assert_true(el_rate_wait_ms(&r, 500, 5000) > 0); /* in flight counts */
    el_rate_settle(&r, 500, 500, 6000);
    assert_false(el_rate_take(&r, 500, 9999));
    assert_true(el_rate_wait_ms(&r, 500, 15000) > 0); /* answered at 6 s: in the window */
    double w = el_rate_wait_ms(&r, 500, 60000);
    assert_true(w == 0);                        /* the bucket has paid its debt too */
    assert_true(el_rate_take(&r, 500, 60000));
}

/* In flight counts: requests sent and not answered hold the window, so a
 * burst of answers cannot push some 10 s of answers over the budget. */
static void test_window_counts_in_flight(void **state)
{
    (void)state;
    el_rate r;
    el_rate_init(&r, 16, 100, 0);              /* 1,050 units a window, bucket 50 */
    double t = 0;
    int sent = 0;
    for (; t < 30000; t += 10)
        if (el_rate_take(&r, 50, t))
            sent++;                            /* never answered */
    assert_int_equal(sent, 21);                /* 1,050 units in flight: nothing more */
    el_rate_refund(&r, 50, t);                 /* one was throttled: its units are free */
    assert_true(el_rate_take(&r, 50, t + 1000));
    assert_false(el_rate_take(&r, 50, t + 2000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_is_the_concurrency),
        cmocka_unit_test(test_no_cap_always_allows),
        cmocka_unit_test(test_bucket_holds_half_a_second),
        cmocka_unit_test(test_bucket_rate_over_ten_seconds),
        cmocka_unit_test(test_settle_charges_the_difference),
        cmocka_unit_test(test_oversized_request_goes_when_bucket_full),
        cmocka_unit_test(test_window_holds_for_large_requests),
        cmocka_unit_test(test_window_counts_in_flight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
