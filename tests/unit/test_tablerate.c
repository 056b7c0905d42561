/*
 * test_tablerate.c - the learned table rate against simulated services:
 * a table with a write limit and a burst (the rate settles just under the
 * limit and few writes are refused), a service that refuses a share of
 * everything at random whatever the rate, in parts of many requests or
 * whole requests of few (the cuts are undone and the load keeps its
 * pace), growth while quiet, forgetting, and refusals too few to
 * cut. Time is the test's: 10-ms steps, answers in the step they are sent.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */

#include "dynamo/tablerate.h"

#define REQ 25.0     /* units a request */
#define STEP_MS 10.0

/* A service: a bucket of `limit` units/s holding `burst` units (limit 0:
 * none), and a share refused at random of every request (0: none). */
typedef struct service {
    double limit, burst, tokens, last;
    double random_share;
    bool whole;  /* a request refused at random is refused whole */
    uint64_t rng;
} service;

typedef struct tally {
    double sent, granted, refused;
} tally;

static double rnd(service *s)
{
    s->rng = s->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(s->rng >> 11) / 9007199254740992.0;
}

/* One request of REQ units at now: what the service grants. */
static double serve(service *s, double now)
{
    double g = REQ;
    if (s->limit > 0) {
        s->tokens += (now - s->last) / 1000.0 * s->limit;
        if (s->tokens > s->burst)
            s->tokens = s->burst;
        s->last = now;
        if (s->tokens < g)
            g = s->tokens > 0 ? (double)(long)s->tokens : 0;
        s->tokens -= g;
    }
    if (s->whole && rnd(s) < s->random_share)
        g = 0;
    else if (!s->whole && s->random_share > 0 && rnd(s) < s->random_share * 4)
        g -= REQ / 4; /* a quarter of the request handed back, at random */
    return g < 0 ? 0 : g;
}

/* Runs from `from` to `to` ms, offering `offered` units/s (sent as fast as
 * the learned rate allows, at most that), and adds what happened from
 * `count_from` on to *tl. */
static void run(el_trate *t, service *s, double offered, double from, double to,
                double count_from, tally *tl)
{
    double credit = 0;
    for (double now = from; now < to; now += STEP_MS) {
        credit += offered * STEP_MS / 1000.0;
        while (credit >= REQ && el_trate_wait_ms(t, REQ, now) == 0) {
            credit -= REQ;
            el_trate_take(t, REQ, now);
            double g = serve(s, now);
            if (g > 0)
                el_trate_granted(t, g, now);
            if (g < REQ)
                el_trate_refused(t, REQ - g, now);
            if (now >= count_from) {
                tl->sent += REQ;
                tl->granted += g;
                tl->refused += REQ - g;
            }
        }
        if (credit > REQ * 4)
            credit = REQ * 4; /* the loader does not bank what it could not send */
    }
}

static void test_no_refusal_no_rate(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    service s = { 0 };
    tally tl = { 0 };
    run(&t, &s, 50000, 0, 5000, 0, &tl);
    assert_true(el_trate_rate(&t, 5000) == 0);
    assert_true(tl.sent >= 0.99 * 50000 * 5);
    assert_int_equal(t.nr_cuts, 0);
}

static void test_settles_under_a_table_limit(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    /* 20,000 units/s with a second of burst, offered twice that */
    service s = { .limit = 20000, .burst = 20000, .tokens = 20000 };
    tally tl = { 0 };
    run(&t, &s, 40000, 0, 60000, 10000, &tl);
    double rate = tl.granted / 50.0;
    /* the last 50 s: near the limit, and few writes sent to be refused */
    assert_true(rate >= 0.95 * 20000);
    assert_true(rate <= 1.01 * 20000);
    assert_true(tl.refused <= 0.02 * tl.sent);
    assert_true(t.nr_cuts >= 2); /* it went on finding the limit as it crept */
    assert_int_equal(t.nr_undone, 0);
    double r = el_trate_rate(&t, 60000);
    assert_true(r > 0.85 * 20000 && r < 1.1 * 20000);
}

static void test_random_refusals_do_not_slow_the_load(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    /* no limit, 5 % of the units refused at random whatever is sent */
    service s = { .random_share = 0.05, .rng = 42 };
    tally tl = { 0 };
    run(&t, &s, 30000, 0, 60000, 0, &tl);
    /* cuts were tried and undone; the load sent what it offered but for
     * the few seconds of the trials */
    assert_true(t.nr_undone >= 1);
    assert_true(tl.sent >= 0.9 * 30000 * 60);
    tally late = { 0 };
    run(&t, &s, 30000, 60000, 90000, 60000, &late);
    assert_true(late.sent >= 0.9 * 30000 * 30);
}

static void test_few_requests_refused_at_random(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    /* 80 requests a second, 8 % of them refused whole at random: the
     * fault tests' pattern, where a 200-ms reading sees a dozen requests */
    service s = { .random_share = 0.08, .whole = true, .rng = 7 };
    tally tl = { 0 };
    run(&t, &s, 2000, 0, 120000, 0, &tl);
    assert_true(tl.sent >= 0.9 * 2000 * 120);
}

static void test_too_few_refusals_do_not_cut(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    for (double now = 0; now < 2000; now += 10)
        el_trate_granted(&t, 250, now); /* 25,000 units/s */
    el_trate_refused(&t, 25, 2000);     /* 0.1 % */
    assert_true(el_trate_rate(&t, 2000) == 0);
    assert_int_equal(t.nr_cuts, 0);
}

static void test_cut_creep_and_forget(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    for (double now = 0; now < 1000; now += 10)
        el_trate_granted(&t, 100, now); /* 10,000 units/s */
    /* one refusal is not enough to cut: three in a second are */
    el_trate_refused(&t, 400, 1000);
    el_trate_refused(&t, 300, 1000);
    assert_true(el_trate_rate(&t, 1000) == 0);
    el_trate_refused(&t, 300, 1000);    /* 9 % in all */
    double r0 = el_trate_rate(&t, 1000);
    assert_true(r0 > 0.94 * 10000 && r0 < 0.96 * 10000);
    /* at that rate a 100 ms bucket: 950 units, then one request a 100/r0 s */
    el_trate_take(&t, 950, 1000);
    assert_true(el_trate_wait_ms(&t, 95, 1000) > 9.0);
    /* quiet: 1 % a second after the first quiet second */
    double r10 = el_trate_rate(&t, 11000);
    assert_true(r10 > r0 * 1.08 && r10 < r0 * 1.12);
    /* forgotten a minute after the last refusal */
    assert_true(el_trate_rate(&t, 62000) == 0);
    assert_true(el_trate_wait_ms(&t, 1e6, 62000) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_refusal_no_rate),
        cmocka_unit_test(test_settles_under_a_table_limit),
        cmocka_unit_test(test_random_refusals_do_not_slow_the_load),
        cmocka_unit_test(test_few_requests_refused_at_random),
        cmocka_unit_test(test_too_few_refusals_do_not_cut),
        cmocka_unit_test(test_cut_creep_and_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
