/*
 * test_pacer.c - per-key pacing: who is paced (a key-range refusal at once,
 * an unprocessed item on its second refusal), the rate (a partition's
 * limit at first, halved before a measurement, then just under what was
 * granted), reservations at that rate, growth while nothing is refused,
 * forgetting, kinds kept apart, and the hottest key for the summary.
 * Time is the test's: milliseconds passed in.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>    /* fabs */

#include "pipeline/pacer.h"

#define HOT 0x1234u
#define OTHER 0x9999u

static uint64_t next_item = 1; /* a different item each refusal */

static double gap_ms(el_pacer *p, el_pacer_kind k, uint64_t h, double units, double now)
{
    double t1 = el_pacer_reserve(p, k, h, units, now);
    double t2 = el_pacer_reserve(p, k, h, units, now);
    return t2 - t1;
}

static void test_unknown_keys_go_now(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_non_null(p);
    assert_true(el_pacer_idle(p));
    assert_true(el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 500) <= 500);
    assert_false(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    el_pacer_free(p);
}

static void test_key_range_paces_at_once_and_kinds_apart(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "TARGET#bob", 10, 0),
                     EL_OK);
    assert_true(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    /* the same value as a table key is another partition */
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    assert_false(el_pacer_idle(p));
    /* a partition's limit, 1,000 units/s: 1 ms per unit, 4 ms for 4 */
    assert_true(fabs(gap_ms(p, EL_PACE_INDEX, HOT, 1, 1) - 1.0) < 1e-9);
    assert_true(fabs(gap_ms(p, EL_PACE_INDEX, HOT, 4, 1) - 4.0) < 1e-9);
    /* reservations queue up: the 100th write of a unit is ~100 ms out */
    double t = 0;
    for (int i = 0; i < 100; i++)
        t = el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 2);
    assert_true(t > 90);
    el_pacer_free(p);
}

static void test_unprocessed_paces_on_second_refusal(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, next_item++, false, "USER#a", 6, 0), EL_OK);
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    /* again after the suspicion lapsed (2 s): still a suspect */
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, 77, false, "USER#a", 6, 2500), EL_OK);
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    /* the same item again within 2 s (its resend refused too): a table
     * at its limit, not the key */
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, 77, false, "USER#a", 6, 2600),
                     EL_OK);
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, 77, false, "USER#a", 6, 2700),
                     EL_OK);
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    /* another item within 2 s: paced */
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, next_item++, false, "USER#a", 6, 3000), EL_OK);
    assert_true(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    el_pacer_free(p);
}

/* Before a second of grants a refusal halves the rate (once per burst of
 * refusals: writes in flight together); after, a refusal sets it just under
 * the rate granted. */
static void test_rate_follows_grants(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 0), EL_OK);
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 100), EL_OK);
    /* within 250 ms of the first: the same event, no cut */
    assert_true(fabs(gap_ms(p, EL_PACE_INDEX, HOT, 1, 100) - 1.0) < 1e-9);
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 300), EL_OK);
    assert_true(fabs(gap_ms(p, EL_PACE_INDEX, HOT, 1, 300) - 2.0) < 1e-9); /* 500/s */
    /* 400 units granted a second for 2 s, then a refusal: ~380/s */
    for (int ms = 300; ms < 2300; ms += 5)
        el_pacer_granted(p, EL_PACE_INDEX, HOT, 2, ms);
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 2300),
                     EL_OK);
    double g = gap_ms(p, EL_PACE_INDEX, HOT, 1, 2300);
    assert_true(g > 1000.0 / 400.0 && g < 1000.0 / 360.0);
    /* granted only 50/s since: the cut stops at half the rate (~190/s) */
    for (int ms = 2300; ms < 4300; ms += 20)
        el_pacer_granted(p, EL_PACE_INDEX, HOT, 1, ms);
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 4300),
                     EL_OK);
    g = gap_ms(p, EL_PACE_INDEX, HOT, 1, 4300);
    assert_true(g > 1000.0 / 200.0 && g < 1000.0 / 180.0);
    /* grants of other keys do not count */
    el_pacer_granted(p, EL_PACE_INDEX, OTHER, 1000, 2400);
    el_pacer_free(p);
}

static void test_rate_grows_when_quiet_and_key_forgotten(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "T", 1, 0), EL_OK);
    double g0 = gap_ms(p, EL_PACE_INDEX, HOT, 10, 10);
    /* 10 s without a refusal: ~10 % faster */
    double g1 = gap_ms(p, EL_PACE_INDEX, HOT, 10, 10000);
    assert_true(g1 < g0 * 0.93 && g1 > g0 * 0.88);
    el_pacer_expire(p, 20000);
    assert_true(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    el_pacer_expire(p, 31000); /* 30 s after its last refusal */
    assert_false(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    assert_true(el_pacer_idle(p));
    el_pacer_stats ps;
    el_pacer_stats_get(p, &ps);
    assert_int_equal(ps.keys_paced, 1); /* the run's figure stays */
    assert_int_equal(ps.paced_now, 0);
    el_pacer_free(p);
}

static void test_hottest_key(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    el_pacer_stats ps;
    el_pacer_stats_get(p, &ps);
    assert_false(ps.has_hottest);
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, OTHER, next_item++, true, "USER#x", 6, 0), EL_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, next_item++, true, "TARGET#bob#3", 12,
                                          i * 300.0),
                         EL_OK);
    el_pacer_stats_get(p, &ps);
    assert_true(ps.has_hottest);
    assert_int_equal(ps.hottest_kind, EL_PACE_INDEX);
    assert_string_equal(ps.hottest, "TARGET#bob#3");
    assert_int_equal(ps.hottest_refusals, 3);
    assert_int_equal(ps.keys_paced, 2);
    el_pacer_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_keys_go_now),
        cmocka_unit_test(test_key_range_paces_at_once_and_kinds_apart),
        cmocka_unit_test(test_unprocessed_paces_on_second_refusal),
        cmocka_unit_test(test_rate_follows_grants),
        cmocka_unit_test(test_rate_grows_when_quiet_and_key_forgotten),
        cmocka_unit_test(test_hottest_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
