/*
 * test_eta.c - the ETA follows the recent rate: exact values for a steady
 * rate, a rate that drops (the ETA follows within one window, where an ETA
 * from the start would still promise the old rate), a stall (unknown, not
 * a growing number), the end, and the ring's bounds.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cmd/eta.h"

static void test_steady_rate(void **state)
{
    (void)state;
    el_eta e;
    el_eta_init(&e, 10);
    assert_true(el_eta_seconds(&e, 1000) == -1);   /* no sample */
    el_eta_add(&e, 0, 0);
    assert_true(el_eta_seconds(&e, 1000) == -1);   /* one sample: no rate */
    for (int s = 1; s <= 5; s++)
        el_eta_add(&e, s * 1000.0, (uint64_t)s * 100);
    assert_true(el_eta_rate(&e) == 100.0);
    assert_true(el_eta_seconds(&e, 1000) == 5.0);  /* 500 left at 100/s */
    assert_true(el_eta_seconds(&e, 500) == 0.0);
    assert_true(el_eta_seconds(&e, 0) == -1);      /* total unknown */
}

static void test_follows_a_drop_within_the_window(void **state)
{
    (void)state;
    el_eta e;
    el_eta_init(&e, 10);
    /* 60 s at 1000/s, then the writes are throttled to 100/s */
    uint64_t done = 0;
    double t = 0;
    for (int s = 0; s <= 60; s++, t += 1000)
        el_eta_add(&e, t, done += (s ? 1000 : 0));
    assert_true(el_eta_rate(&e) == 1000.0);
    for (int s = 0; s < 10; s++, t += 1000)
        el_eta_add(&e, t, done += 100);
    /* the whole window is now at the new rate */
    assert_true(el_eta_rate(&e) == 100.0);
    uint64_t total = done + 5000;
    assert_true(el_eta_seconds(&e, total) == 50.0);
    /* an ETA from the start would say: 65,000 done in 69 s, 5,000 left: 5.3 s */
}

static void test_stall_is_unknown(void **state)
{
    (void)state;
    el_eta e;
    el_eta_init(&e, 5);
    el_eta_add(&e, 0, 0);
    el_eta_add(&e, 1000, 500);
    for (int s = 2; s < 20; s++)
        el_eta_add(&e, s * 1000.0, 500);
    assert_true(el_eta_rate(&e) == 0.0);
    assert_true(el_eta_seconds(&e, 1000) == -1);
    /* figures that go back (they do not) are taken as no progress */
    el_eta_add(&e, 20000, 100);
    assert_true(el_eta_rate(&e) == 0.0);
}

static void test_ring_keeps_the_window(void **state)
{
    (void)state;
    el_eta e;
    el_eta_init(&e, 30);
    /* 10 reports a second for 100 s: more samples than the ring holds; the
     * rate is still the slope over what it holds */
    for (int i = 0; i <= 1000; i++)
        el_eta_add(&e, i * 100.0, (uint64_t)i * 7);
    assert_true(e.n <= EL_ETA_SAMPLES);
    assert_true(el_eta_rate(&e) > 69.99 && el_eta_rate(&e) < 70.01);
    /* samples older than the window go: one sample a minute */
    el_eta_init(&e, 30);
    for (int i = 0; i < 10; i++)
        el_eta_add(&e, i * 60000.0, (uint64_t)i * 60);
    assert_int_equal(e.n, 2);
    assert_true(el_eta_rate(&e) == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_rate),
        cmocka_unit_test(test_follows_a_drop_within_the_window),
        cmocka_unit_test(test_stall_is_unknown),
        cmocka_unit_test(test_ring_keeps_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
