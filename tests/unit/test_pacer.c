/*
 * test_pacer.c - per-key pacing: who is paced (a key-range refusal at once;
 * a key refused significantly more than the rest; not a key refused as
 * much as the rest, at a table's limit or by chance), the rate (a
 * partition's limit at first, cut under what it is granted while still
 * refused more than the rest, under 1,000 only when refused at it),
 * reservations and their horizon, growth while nothing beyond the rest is
 * refused, forgetting, kinds kept apart, and the hottest key. Time is the
 * test's: milliseconds passed in.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>    /* fabs */

#include "pipeline/load/pacer.h"

#define HOT 0x1234u
#define OTHER 0x9999u

static double gap_ms(el_pacer *p, el_pacer_kind k, uint64_t h, double units, double now)
{
    double t1 = el_pacer_reserve(p, k, h, units, now, 0);
    double t2 = el_pacer_reserve(p, k, h, units, now, 0);
    return t2 - t1;
}

/* One answer at `now`: of 100 writes of other keys, `pop_refused` were
 * refused; key h had `mine` writes of one unit answered, `refused` of them
 * refused. */
static void answer(el_pacer *p, el_pacer_kind k, uint64_t h, int mine, int refused,
                   int pop_refused, double now)
{
    el_pacer_answer(p, pop_refused, 100, now);
    for (int i = 0; i < mine; i++) {
        if (i < refused)
            assert_int_equal(el_pacer_refused(p, k, h, 1, false, "TARGET#bob", 10, now), EL_OK);
        else
            el_pacer_granted(p, k, h, 1, now);
    }
}

static void test_unknown_keys_go_now(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_non_null(p);
    assert_true(el_pacer_idle(p));
    assert_true(el_pacer_empty(p));
    assert_true(el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 500, 0) <= 500);
    assert_false(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    el_pacer_free(p);
}

static void test_key_range_paces_at_once_and_kinds_apart(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, 1, true, "TARGET#bob", 10, 0), EL_OK);
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
        t = el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 2, 0);
    assert_true(t > 90);
    el_pacer_free(p);
}

static void test_horizon_reserves_nothing_beyond_it(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, 1, true, "TARGET#bob", 10, 0), EL_OK);
    /* 100 ms of reservations at 1,000 units/s, with a horizon of 50 ms:
     * the writes past it are told when to ask again, and take nothing */
    double last = 0;
    int reserved = 0;
    for (int i = 0; i < 100; i++) {
        last = el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 0, 50);
        reserved += last < 50;
    }
    assert_true(reserved >= 49 && reserved <= 51);
    assert_true(last >= 50 && last < 52);
    /* without a horizon the next reservation comes right after the last one
     * made, not after the writes that were only told to ask again */
    assert_true(el_pacer_reserve(p, EL_PACE_INDEX, HOT, 1, 0, 0) < 52);
    el_pacer_free(p);
}

static void test_a_key_refused_more_than_the_rest_is_paced(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    /* the rest: 10 % refused; this key: half its writes */
    double now = 0;
    for (int step = 0; step < 20 && !el_pacer_paced(p, EL_PACE_INDEX, HOT); step++)
        answer(p, EL_PACE_INDEX, HOT, 4, 2, 10, now += 10);
    assert_true(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    assert_true(now <= 100); /* within ten answers of twenty of its writes */
    el_pacer_stats st;
    el_pacer_stats_get(p, &st);
    assert_int_equal(st.keys_paced, 1);
    assert_true(st.has_hottest);
    assert_string_equal(st.hottest, "TARGET#bob");
    el_pacer_free(p);
}

static void test_a_key_refused_as_much_as_the_rest_is_not(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    /* a table at its limit, or chance: every key 60 %, or 15 %, refused;
     * however long, a busy key is not paced for it */
    double now = 0;
    for (int step = 0; step < 500; step++)
        answer(p, EL_PACE_INDEX, HOT, 10, 6, 60, now += 10);
    for (int step = 0; step < 500; step++)
        answer(p, EL_PACE_TABLE, OTHER, 20, step % 7 == 0 ? 6 : 2, 15, now += 10);
    assert_false(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, OTHER));
    assert_true(el_pacer_idle(p));
    el_pacer_free(p);
}

static void test_few_refusals_are_no_evidence(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    /* three refusals of three writes: as bad as it gets, but twenty
     * answers are the least a key is judged on */
    double now = 0;
    for (int i = 0; i < 3; i++)
        answer(p, EL_PACE_TABLE, HOT, 1, 1, 0, now += 10);
    assert_false(el_pacer_paced(p, EL_PACE_TABLE, HOT));
    el_pacer_free(p);
}

static void test_cut_under_granted_never_under_a_partition_unless_refused_there(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, 1, true, "TARGET#bob", 10, 0), EL_OK);
    /* granted 500 units/s and still refused more than the rest: refused
     * even at a partition's rate, cut under what it was granted */
    double now = 0;
    for (int step = 0; step < 300; step++) {
        now += 10;
        el_pacer_answer(p, 0, 100, now);
        for (int i = 0; i < 5; i++)
            el_pacer_granted(p, EL_PACE_INDEX, HOT, 1, now);
        for (int i = 0; i < 5; i++)
            assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, 1, false, "TARGET#bob", 10, now),
                             EL_OK);
    }
    double gap = gap_ms(p, EL_PACE_INDEX, HOT, 1, now);
    /* at most 95 % of 500 units/s: at least 2.1 ms a unit */
    assert_true(gap > 2.0);
    assert_true(gap < 1000.0); /* never stopped */
    el_pacer_free(p);
}

static void test_quiet_key_grows_faster_each_second_up_to_twice_granted(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_TABLE, HOT, 1, true, "USER#a", 6, 0), EL_OK);
    /* granted all it is sent, nothing refused: probing for more */
    double now = 0, g1 = 0, g3 = 0;
    for (int ms = 10; ms <= 8000; ms += 10) {
        now = ms;
        el_pacer_answer(p, 0, 100, now);
        /* it is sent as fast as it is paced: 10 units per 10 ms at first */
        double until = now + 10;
        double t = el_pacer_reserve(p, EL_PACE_TABLE, HOT, 1, now, 0);
        while (t < until) {
            el_pacer_granted(p, EL_PACE_TABLE, HOT, 1, now);
            t = el_pacer_reserve(p, EL_PACE_TABLE, HOT, 1, now, 0);
        }
        if (ms == 2000)
            g1 = gap_ms(p, EL_PACE_TABLE, HOT, 1, now);
        if (ms == 5000)
            g3 = gap_ms(p, EL_PACE_TABLE, HOT, 1, now);
    }
    /* after a quiet second it grows: by 1 %, then 2, 4 %... a second */
    assert_true(g1 < 1.0 && g1 > 0.95);
    assert_true(g3 < g1 * 0.9);
    el_pacer_free(p);
}

static void test_forgets_quiet_keys(void **state)
{
    (void)state;
    el_pacer *p = el_pacer_new();
    assert_int_equal(el_pacer_refused(p, EL_PACE_INDEX, HOT, 1, true, "TARGET#bob", 10, 0), EL_OK);
    answer(p, EL_PACE_TABLE, OTHER, 1, 1, 0, 0);
    assert_false(el_pacer_empty(p));
    el_pacer_expire(p, 5000); /* the watched key: gone after 2 s */
    assert_true(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    el_pacer_expire(p, 31000); /* the paced one after 30 s */
    assert_false(el_pacer_paced(p, EL_PACE_INDEX, HOT));
    assert_true(el_pacer_idle(p));
    assert_true(el_pacer_empty(p));
    /* the summary keeps the hottest key past its expiry */
    el_pacer_stats st;
    el_pacer_stats_get(p, &st);
    assert_true(st.has_hottest);
    assert_int_equal(st.paced_now, 0);
    el_pacer_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_keys_go_now),
        cmocka_unit_test(test_key_range_paces_at_once_and_kinds_apart),
        cmocka_unit_test(test_horizon_reserves_nothing_beyond_it),
        cmocka_unit_test(test_a_key_refused_more_than_the_rest_is_paced),
        cmocka_unit_test(test_a_key_refused_as_much_as_the_rest_is_not),
        cmocka_unit_test(test_few_refusals_are_no_evidence),
        cmocka_unit_test(test_cut_under_granted_never_under_a_partition_unless_refused_there),
        cmocka_unit_test(test_quiet_key_grows_faster_each_second_up_to_twice_granted),
        cmocka_unit_test(test_forgets_quiet_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
