/*
 * test_sample.c - the keyed bottom-k sample verify draws its items and
 * index keys from: exactly the k smallest priorities, independent of order
 * and repeats, the later occurrences of a sampled key all seen, uniform
 * over seeds, deterministic for one seed.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h> /* bool */
#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* qsort */
#include <string.h>  /* strcmp */

#include "pipeline/extmem/sample.h"

static void key_name(char *buf, size_t n, unsigned i)
{
    snprintf(buf, n, "ACTOR#u%u|TARGET#t%u", i, i * 7u);
}

static el_sample_verdict offer(el_sample *s, const char *k, size_t *slot)
{
    el_sample_verdict v;
    assert_int_equal(el_sample_offer(s, k, strlen(k), &v, slot), EL_OK);
    return v;
}

static void test_unbounded_keeps_all(void **state)
{
    (void)state;
    el_sample *s = el_sample_new(0, 1, 1024);
    assert_non_null(s);
    char k[64];
    size_t slot;
    for (unsigned i = 0; i < 5000; i++) {
        key_name(k, sizeof k, i);
        assert_int_equal(offer(s, k, &slot), EL_SAMPLE_NEW);
        assert_int_equal(slot, i);
        assert_int_equal(el_buf_printf(el_sample_value(s, slot), "v%u", i), EL_OK);
    }
    assert_int_equal(el_sample_count(s), 5000);
    for (unsigned i = 0; i < 5000; i += 7) {
        key_name(k, sizeof k, i);
        assert_int_equal(offer(s, k, &slot), EL_SAMPLE_IN);
        assert_int_equal(slot, i);
        assert_int_equal(el_sample_find(s, k, strlen(k)), i);
        size_t len;
        assert_string_equal(el_sample_key(s, slot, &len), k);
        assert_int_equal(len, strlen(k));
    }
    assert_int_equal(el_sample_find(s, "nope", 4), (size_t)-1);
    assert_string_equal(el_buf_str(el_sample_value(s, 4999)), "v4999");
    el_sample_free(s);
    el_sample_free(NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The sample is exactly the k keys of smallest priority. */
static void test_bounded_is_bottom_k(void **state)
{
    (void)state;
    enum { N = 3000, K = 50 };
    uint64_t seed = 99, prios[N];
    el_sample *s = el_sample_new(K, seed, 1024);
    assert_non_null(s);
    char k[64];
    size_t slot;
    for (unsigned i = 0; i < N; i++) {
        key_name(k, sizeof k, i);
        prios[i] = el_sample_priority(seed, k, strlen(k));
        offer(s, k, &slot);
        assert_true(el_sample_count(s) <= K);
    }
    assert_int_equal(el_sample_count(s), K);
    qsort(prios, N, sizeof *prios, cmp_u64);
    for (unsigned i = 0; i < N; i++) {
        key_name(k, sizeof k, i);
        uint64_t p = el_sample_priority(seed, k, strlen(k));
        bool in = el_sample_find(s, k, strlen(k)) != (size_t)-1;
        assert_int_equal(in, p <= prios[K - 1]);
    }
    el_sample_free(s);
}

/* Repeats: a key in the final sample saw every one of its occurrences
 * (NEW once, then IN), so "the later row wins" holds for sampled keys; and
 * the result does not depend on how often or in which order keys come. */
static void test_repeats_and_order(void **state)
{
    (void)state;
    enum { N = 400, K = 20 };
    unsigned occurrences[N] = { 0 };
    el_sample *a = el_sample_new(K, 7, 1024), *b = el_sample_new(K, 7, 1024);
    assert_non_null(a);
    assert_non_null(b);
    uint64_t rng = 12345;
    char k[64];
    size_t slot;
    for (unsigned step = 0; step < 5000; step++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = (unsigned)(rng >> 33) % N;
        occurrences[i]++;
        key_name(k, sizeof k, i);
        el_sample_verdict v = offer(a, k, &slot);
        if (v == EL_SAMPLE_NEW)
            el_buf_reset(el_sample_value(a, slot));
        if (v != EL_SAMPLE_OUT)
            assert_int_equal(el_buf_putc(el_sample_value(a, slot), 'x'), EL_OK);
    }
    /* b: each key a saw, once, in reverse order */
    for (unsigned i = N; i-- > 0;) {
        if (!occurrences[i])
            continue;
        key_name(k, sizeof k, i);
        offer(b, k, &slot);
    }
    unsigned distinct_seen = 0;
    for (unsigned i = 0; i < N; i++)
        distinct_seen += occurrences[i] > 0;
    assert_true(distinct_seen > K);
    assert_int_equal(el_sample_count(a), K);
    for (size_t sl = 0; sl < K; sl++) {
        size_t len;
        const char *key = el_sample_key(a, sl, &len);
        unsigned i;
        assert_int_equal(sscanf(key, "ACTOR#u%u", &i), 1);
        /* every occurrence of the sampled key was recorded */
        assert_int_equal(el_sample_value(a, sl)->len, occurrences[i]);
        /* b, given the same distinct keys without repeats and in another
         * order, samples the same keys */
        assert_int_not_equal(el_sample_find(b, key, len), (size_t)-1);
    }
    el_sample_free(a);
    el_sample_free(b);
}

static void test_eviction_reuses_slot(void **state)
{
    (void)state;
    el_sample *s = el_sample_new(1, 3, 64);
    assert_non_null(s);
    char k[64];
    size_t slot, admitted = 0;
    for (unsigned i = 0; i < 200; i++) {
        key_name(k, sizeof k, i);
        el_sample_verdict v = offer(s, k, &slot);
        if (v == EL_SAMPLE_NEW) {
            assert_int_equal(slot, 0);
            admitted++;
        }
    }
    /* a new minimum every time: about ln(200) ~ 5.3 admissions */
    assert_true(admitted >= 1 && admitted < 30);
    assert_int_equal(el_sample_count(s), 1);
    el_sample_free(s);
}

/* Every key is in the sample k/n of the time over seeds. */
static void test_uniform_over_seeds(void **state)
{
    (void)state;
    enum { N = 20, K = 5, SEEDS = 4000 };
    unsigned hits[N] = { 0 };
    char k[64];
    size_t slot;
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        el_sample *s = el_sample_new(K, seed, 64);
        assert_non_null(s);
        for (unsigned i = 0; i < N; i++) {
            key_name(k, sizeof k, i);
            offer(s, k, &slot);
        }
        for (unsigned i = 0; i < N; i++) {
            key_name(k, sizeof k, i);
            hits[i] += el_sample_find(s, k, strlen(k)) != (size_t)-1;
        }
        el_sample_free(s);
    }
    for (unsigned i = 0; i < N; i++) {
        double f = (double)hits[i] / SEEDS;
        if (f < 0.22 || f > 0.28)
            fail_msg("key %u sampled %.3f of the time, expected 0.25", i, f);
    }
}

static void test_deterministic(void **state)
{
    (void)state;
    char k[64];
    size_t slot;
    unsigned same_as_seed1 = 0;
    el_sample *s[3] = { el_sample_new(10, 1, 64), el_sample_new(10, 1, 64),
                        el_sample_new(10, 2, 64) };
    for (int j = 0; j < 3; j++) {
        assert_non_null(s[j]);
        for (unsigned i = 0; i < 1000; i++) {
            key_name(k, sizeof k, i);
            offer(s[j], k, &slot);
        }
    }
    for (size_t sl = 0; sl < 10; sl++) {
        size_t len;
        const char *key = el_sample_key(s[0], sl, &len);
        assert_int_not_equal(el_sample_find(s[1], key, len), (size_t)-1);
        same_as_seed1 += el_sample_find(s[2], key, len) != (size_t)-1;
    }
    assert_true(same_as_seed1 < 5);
    assert_int_equal(el_sample_priority(1, "abc", 3), el_sample_priority(1, "abc", 3));
    assert_int_not_equal(el_sample_priority(1, "abc", 3), el_sample_priority(2, "abc", 3));
    assert_int_not_equal(el_sample_priority(1, "abc", 3), el_sample_priority(1, "abd", 3));
    for (int j = 0; j < 3; j++)
        el_sample_free(s[j]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unbounded_keeps_all),
        cmocka_unit_test(test_bounded_is_bottom_k),
        cmocka_unit_test(test_repeats_and_order),
        cmocka_unit_test(test_eviction_reuses_slot),
        cmocka_unit_test(test_uniform_over_seeds),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
