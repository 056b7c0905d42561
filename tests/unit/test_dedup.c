/*
 * test_dedup.c - the last row of a key wins: which rows are duplicates,
 * their numbers in ascending order, the payloads of the winners; in memory
 * and past a tiny budget (many spilled runs), against a reference computed
 * directly.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, mkdtemp */
#include <string.h>  /* strlen */
#include <unistd.h>  /* rmdir */

#include "pipeline/extmem/dedup.h"

static const uint64_t KEY[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

static el_dedup *make(size_t mem, const char *dir, bool payload)
{
    el_dedup *d;
    el_diag diag;
    el_diag_clear(&diag);
    el_dedup_opts o = { .mem_max = mem, .dir = dir, .keep_drops = true,
                        .with_payload = payload, .hash_key = KEY };
    assert_int_equal(el_dedup_new(&o, &d, &diag), EL_OK);
    return d;
}

static void test_small(void **state)
{
    (void)state;
    el_dedup *d = make(0, "/tmp", true);
    const char *keys[] = { "a", "b", "a", "c", "b", "a", "", "" };
    el_diag diag;
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(el_dedup_add(d, keys[i], strlen(keys[i]), 100 + i, &diag), EL_OK);
    assert_int_equal(el_dedup_finish(d, &diag), EL_OK);
    assert_int_equal(el_dedup_rows(d), 8);
    assert_int_equal(el_dedup_duplicates(d), 4);
    /* winners: a@5, b@4, c@3, ""@7 */
    assert_int_equal(el_dedup_kept_payload(d), 105 + 104 + 103 + 107);
    uint64_t want[] = { 0, 1, 2, 6 }, row;
    bool got;
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(el_dedup_next_drop(d, &row, &got, &diag), EL_OK);
        assert_true(got);
        assert_int_equal(row, want[i]);
    }
    assert_int_equal(el_dedup_next_drop(d, &row, &got, &diag), EL_OK);
    assert_false(got);
    assert_int_equal(el_dedup_runs_spilled(d), 0);
    el_dedup_free(d);
    el_dedup_free(NULL);
}

static void test_no_rows(void **state)
{
    (void)state;
    el_dedup *d = make(0, "/tmp", false);
    el_diag diag;
    assert_int_equal(el_dedup_finish(d, &diag), EL_OK);
    assert_int_equal(el_dedup_duplicates(d), 0);
    uint64_t row;
    bool got = true;
    assert_int_equal(el_dedup_next_drop(d, &row, &got, &diag), EL_OK);
    assert_false(got);
    el_dedup_free(d);
}

/* n rows over `keys` distinct keys, near and far apart, through a budget
 * of mem bytes; checked against the last occurrence of each key. */
static void check_random(size_t n, size_t keys, size_t mem)
{
    char dir[] = "/tmp/test_dedup_XXXXXX";
    assert_non_null(mkdtemp(dir));
    el_dedup *d = make(mem, dir, true);
    uint64_t *k = calloc(n, sizeof *k);
    int64_t *last = calloc(keys, sizeof *last);
    assert_non_null(k);
    assert_non_null(last);
    uint64_t x = 12345;
    el_diag diag;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* half the rows repeat the key of a row just before (near), the
         * rest draw any key (far apart) */
        k[i] = (i > 0 && (x & 1)) ? k[i - 1 - (x >> 1) % (i < 8 ? i : 8)] : (x >> 8) % keys;
        char buf[32];
        int len = snprintf(buf, sizeof buf, "PK#%llu", (unsigned long long)k[i]);
        assert_int_equal(el_dedup_add(d, buf, (size_t)len, i, &diag), EL_OK);
    }
    assert_int_equal(el_dedup_finish(d, &diag), EL_OK);
    for (size_t i = 0; i < keys; i++)
        last[i] = -1;
    for (size_t i = 0; i < n; i++)
        last[k[i]] = (int64_t)i;
    uint64_t dups = 0, kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (last[k[i]] != (int64_t)i)
            dups++;
        else
            kept += i;
    }
    assert_int_equal(el_dedup_duplicates(d), dups);
    assert_int_equal(el_dedup_kept_payload(d), kept);
    uint64_t row;
    bool got;
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (last[k[i]] == (int64_t)i)
            continue;
        assert_int_equal(el_dedup_next_drop(d, &row, &got, &diag), EL_OK);
        assert_true(got);
        assert_int_equal(row, i);
        seen++;
    }
    assert_int_equal(el_dedup_next_drop(d, &row, &got, &diag), EL_OK);
    assert_false(got);
    assert_int_equal(seen, dups);
    print_message("  %zu rows, %zu keys, %zu bytes: %llu duplicates, %llu runs spilled\n", n,
                  keys, mem, (unsigned long long)dups,
                  (unsigned long long)el_dedup_runs_spilled(d));
    if (mem && mem < n * 16)
        assert_true(el_dedup_runs_spilled(d) > 0);
    el_dedup_free(d);
    assert_int_equal(rmdir(dir), 0); /* nothing left in it */
    free(k);
    free(last);
}

static void test_random_in_memory(void **state)
{
    (void)state;
    check_random(50000, 20000, 0);
}

static void test_random_spilled(void **state)
{
    (void)state;
    check_random(200000, 60000, 128 * 1024);
    check_random(100000, 100, 128 * 1024);       /* few keys, many repeats */
    check_random(100000, 1000000, 256 * 1024);   /* mostly distinct */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small),
        cmocka_unit_test(test_no_rows),
        cmocka_unit_test(test_random_in_memory),
        cmocka_unit_test(test_random_spilled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
