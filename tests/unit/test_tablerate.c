/*
 * test_tablerate.c - the learned table rate against small simulated
 * services, answer by answer: a table with a limit and a second of burst
 * (the rate settles under the limit, few units refused), a service that
 * refuses a share at random whatever the rate, in parts or whole requests
 * (the cut is undone, the share becomes the noise, the load keeps its
 * pace), both at once (the limit found over the noise), capacity that
 * doubles (found again within seconds), refusals too few to cut, and
 * forgetting. Time is the test's: 1-ms steps, answers 10 ms after their
 * sends. The whole matrix of services is tests/sim/.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */

#include "dynamo/tablerate.h"

#define REQ 25.0     /* units a request */
#define LAT 10.0     /* ms from a send to its answer */
#define MAXQ 4096

/* A service: a bucket of `limit` units/s holding a second of it (limit 0:
 * none), and a share refused at random of every request (0: none). */
typedef struct service {
    double limit, tokens, last;
    double random_share;
    bool whole;  /* a request refused at random is refused whole */
    uint64_t rng;
} service;

typedef struct tally {
    double sent, granted, refused;
} tally;

typedef struct pending {
    double sent_at, granted;
} pending;

static double rnd(service *s)
{
    s->rng = s->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(s->rng >> 11) / 9007199254740992.0;
}

/* One request of REQ units arriving at now: what the service grants. */
static double serve(service *s, double now)
{
    double g = REQ;
    if (s->whole && rnd(s) < s->random_share)
        return 0;
    if (!s->whole && s->random_share > 0 && rnd(s) < s->random_share * 4)
        g -= REQ / 4; /* a quarter of the request handed back, at random */
    if (s->limit > 0) {
        s->tokens += (now - s->last) / 1000.0 * s->limit;
        if (s->tokens > s->limit)
            s->tokens = s->limit;
        s->last = now;
        if (s->tokens < g)
            g = s->tokens > 0 ? (double)(long)s->tokens : 0;
        s->tokens -= g;
    }
    return g;
}

/* Runs from `from` to `to` ms offering `offered` units/s (sent as fast as
 * the learned rate allows, at most that) and adds what was sent from
 * `count_from` on to *tl. */
static void run(el_trate *t, service *s, double offered, double from, double to,
                double count_from, tally *tl)
{
    static pending q[MAXQ];
    size_t head = 0, n = 0;
    double credit = 0;
    for (double now = from; now < to; now += 1) {
        while (n && q[head].sent_at + LAT <= now) {
            pending *p = &q[head];
            el_trate_answer(t, p->sent_at, p->granted, REQ - p->granted, now);
            head = (head + 1) % MAXQ;
            n--;
        }
        credit += offered / 1000.0;
        while (credit >= REQ && n < MAXQ && el_trate_wait_ms(t, REQ, now) == 0) {
            credit -= REQ;
            el_trate_take(t, REQ, now);
            double g = serve(s, now + LAT / 2);
            q[(head + n++) % MAXQ] = (pending){ now, g };
            if (now >= count_from) {
                tl->sent += REQ;
                tl->granted += g;
                tl->refused += REQ - g;
            }
        }
        if (credit > 10 * REQ)
            credit = 10 * REQ; /* what could not go is not sent later at once */
    }
}

static void test_table_limit_found_and_held(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    service s = { .limit = 20000, .tokens = 20000 };
    tally warm = { 0 }, tl = { 0 };
    run(&t, &s, 40000, 0, 10000, 0, &warm);
    run(&t, &s, 40000, 10000, 40000, 10000, &tl);
    double granted = tl.granted / 30.0;
    assert_true(granted > 0.85 * 20000);
    assert_true(granted <= (30 * 20000 + 20000) / 30.0); /* the rate, and one burst at most */
    assert_true(tl.refused / tl.sent < 0.03);
    el_trate_figures f = el_trate_figures_get(&t, 40000);
    assert_true(f.rate > 0.8 * 20000 && f.rate < 1.6 * 20000);
    assert_true(f.cuts >= 1);
    assert_int_equal(f.undone, 0);
}

static void keeps_pace_under_chance(bool whole, double share)
{
    el_trate t;
    el_trate_init(&t);
    service s = { .random_share = share, .whole = whole, .rng = 7 };
    tally tl = { 0 };
    run(&t, &s, 20000, 0, 30000, 0, &tl);
    /* what chance refuses is refused at any rate: the load keeps 90 % of
     * its pace, and the share becomes the noise */
    assert_true(tl.sent / 30.0 > 0.9 * 20000);
    el_trate_figures f = el_trate_figures_get(&t, 30000);
    assert_true(f.noise > share * 0.5 && f.noise < share * 2);
    assert_true(f.undone >= f.cuts - 1); /* a kept cut at most, and one it grew out of */
}

static void test_random_refusals_in_parts_are_noise(void **state)
{
    (void)state;
    keeps_pace_under_chance(false, 0.05);
}

static void test_random_whole_refusals_are_noise(void **state)
{
    (void)state;
    keeps_pace_under_chance(true, 0.08);
}

static void test_limit_found_over_noise(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    service s = { .limit = 20000, .tokens = 20000, .random_share = 0.04, .rng = 3 };
    tally warm = { 0 }, tl = { 0 };
    run(&t, &s, 40000, 0, 10000, 0, &warm);
    run(&t, &s, 40000, 10000, 30000, 10000, &tl);
    /* sent near the limit, refused little beyond the noise */
    assert_true(tl.sent / 20.0 < 1.25 * 20000);
    assert_true(tl.granted / 20.0 > 0.8 * 20000);
    el_trate_figures f = el_trate_figures_get(&t, 30000);
    assert_true(f.rate > 0);
}

static void test_capacity_that_comes_is_found(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    service s = { .limit = 10000, .tokens = 10000 };
    tally warm = { 0 }, tl = { 0 };
    run(&t, &s, 40000, 0, 10000, 0, &warm);
    assert_true(el_trate_figures_get(&t, 10000).rate < 15000);
    /* another tenant leaves: twice the capacity; found within ten seconds */
    s.limit = 20000;
    run(&t, &s, 40000, 10000, 20000, 10000, &warm);
    run(&t, &s, 40000, 20000, 30000, 20000, &tl);
    assert_true(tl.granted / 10.0 > 0.8 * 20000);
}

static void test_few_refusals_do_not_cut(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    /* one refused unit in a thousand: within the margin of the noise */
    for (int i = 0; i < 2000; i++)
        el_trate_answer(&t, i, i % 1000 == 999 ? REQ - 1 : REQ, i % 1000 == 999 ? 1 : 0, i + LAT);
    el_trate_figures f = el_trate_figures_get(&t, 2010);
    assert_int_equal(f.cuts, 0);
    assert_true(f.rate == 0);
    assert_true(el_trate_wait_ms(&t, 1e9, 2010) == 0);
}

static void test_forgotten_after_a_quiet_minute(void **state)
{
    (void)state;
    el_trate t;
    el_trate_init(&t);
    service s = { .limit = 20000, .tokens = 20000 };
    tally tl = { 0 };
    run(&t, &s, 40000, 0, 5000, 0, &tl);
    assert_true(el_trate_figures_get(&t, 5000).rate > 0);
    /* nothing sent for a minute */
    assert_true(el_trate_figures_get(&t, 70000).rate == 0);
}

/* A cut lowers the rate: never to more than it was. A client that sends
 * a refused request again at once, a table of 800 units/s with a second
 * of burst, requests of 50 units, 8 in flight, refusals answered in 1 ms
 * and grants in 20-60 ms: the first second's unpaced sends were many, and
 * the floor of a cut (a quarter of what went in the last second) lay
 * above the rate it cut, which then rose at the cut: in 22 of these 200
 * runs before the floor was bounded by the rate. Checked at every cut. */
static void test_a_cut_never_raises_the_rate(void **state)
{
    (void)state;
    enum { WINDOW = 8 };
    const double req = 50, limit = 800;
    uint64_t rng = 0;
    for (int seed = 1; seed <= 200; seed++) {
        rng = (uint64_t)seed * 7919;
        el_trate t;
        el_trate_init(&t);
        struct flight {
            double sent_at, due, granted;
            bool live;
        } q[WINDOW] = { 0 };
        double tokens = limit, last = 0, done = 0;
        uint64_t cuts = 0;
        for (double now = 0; now < 30000 && done < 8000; now += 1) {
            for (int i = 0; i < WINDOW; i++) {
                if (!q[i].live || q[i].due > now)
                    continue;
                q[i].live = false;
                double rate = t.rate;
                el_trate_answer(&t, q[i].sent_at, q[i].granted, req - q[i].granted, now);
                if (t.nr_cuts != cuts && rate > 0)
                    assert_true(t.rate <= rate);
                cuts = t.nr_cuts;
                done += q[i].granted;
            }
            for (int i = 0; i < WINDOW; i++) {
                if (q[i].live || el_trate_wait_ms(&t, req, now) > 0)
                    continue;
                el_trate_take(&t, req, now);
                tokens += (now - last) / 1000.0 * limit;
                tokens = tokens > limit ? limit : tokens;
                last = now;
                bool granted = tokens >= req;
                tokens -= granted ? req : 0;
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                double lat = granted ? 20 + 40 * (double)(rng >> 11) / 9007199254740992.0 : 1;
                q[i] = (struct flight){ now, now + lat, granted ? req : 0, true };
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_limit_found_and_held),
        cmocka_unit_test(test_random_refusals_in_parts_are_noise),
        cmocka_unit_test(test_random_whole_refusals_are_noise),
        cmocka_unit_test(test_limit_found_over_noise),
        cmocka_unit_test(test_capacity_that_comes_is_found),
        cmocka_unit_test(test_few_refusals_do_not_cut),
        cmocka_unit_test(test_forgotten_after_a_quiet_minute),
        cmocka_unit_test(test_a_cut_never_raises_the_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
