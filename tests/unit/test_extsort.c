/*
 * test_extsort.c - the external sort: the in-place run sort against a
 * reference (random, dense, all-equal and skewed records), and whole sorts
 * in memory, with one merge pass and with many (a budget of 64 KB), each
 * compared record by record with the reference; nothing left on disk.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>  /* opendir: nothing left behind */
#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, qsort, mkdtemp */
#include <string.h>  /* memcmp */
#include <unistd.h>  /* rmdir */

#include "pipeline/extmem/extsort.h"

static size_t g_words;

static int ref_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (size_t i = 0; i < g_words; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

enum shape { RANDOM, DENSE, EQUAL, FEW_KEYS };

static uint64_t *make(size_t n, size_t words, enum shape shape)
{
    uint64_t *r = malloc(n * words * sizeof *r);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < words; w++) {
            uint64_t v = rnd();
            if (shape == DENSE && w == 0)
                v = v % (n * 2);               /* a sequence-like first word */
            else if (shape == EQUAL && w + 1 < words)
                v = 42;                        /* only the last word differs */
            else if (shape == FEW_KEYS && w + 1 < words)
                v = v % 3;
            r[i * words + w] = v;
        }
    return r;
}

static void check_sort_records(size_t n, size_t words, enum shape shape)
{
    uint64_t *a = make(n, words, shape);
    uint64_t *b = malloc(n * words * sizeof *b);
    assert_non_null(b);
    memcpy(b, a, n * words * sizeof *a);
    el_extsort_sort_records(a, n, words);
    g_words = words;
    qsort(b, n, words * sizeof *b, ref_cmp);
    assert_memory_equal(a, b, n * words * sizeof *a);
    free(a);
    free(b);
}

static void test_sort_records(void **state)
{
    (void)state;
    size_t sizes[] = { 0, 1, 2, 17, 33, 4095, 4096, 30000 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t words = 1; words <= 4; words++)
            for (int shape = RANDOM; shape <= FEW_KEYS; shape++)
                check_sort_records(sizes[i], words, (enum shape)shape);
}

static char *tmp_dir(void)
{
    char *d = strdup("/tmp/test_extsort_XXXXXX");
    assert_non_null(d);
    assert_non_null(mkdtemp(d));
    return d;
}

static void assert_empty_dir(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
            fail_msg("%s holds %s", path, e->d_name);
    closedir(d);
}

/* Sorts n records through the sorter with budget mem; returns runs written. */
static uint64_t check_sort(size_t n, size_t words, size_t mem, enum shape shape)
{
    char *dir = tmp_dir();
    uint64_t *recs = make(n, words, shape);
    el_extsort *s;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_extsort_new(words, mem, dir, &s, &d), EL_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(el_extsort_add(s, recs + i * words, &d), EL_OK);
    assert_int_equal(el_extsort_finish(s, &d), EL_OK);
    assert_empty_dir(dir); /* runs are anonymous files */
    g_words = words;
    qsort(recs, n, words * sizeof *recs, ref_cmp);
    uint64_t rec[4];
    bool got;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(el_extsort_next(s, rec, &got, &d), EL_OK);
        assert_true(got);
        assert_memory_equal(rec, recs + i * words, words * sizeof *rec);
    }
    assert_int_equal(el_extsort_next(s, rec, &got, &d), EL_OK);
    assert_false(got);
    assert_int_equal(el_extsort_count(s), n);
    uint64_t runs = el_extsort_runs_written(s);
    el_extsort_free(s);
    assert_empty_dir(dir);
    rmdir(dir);
    free(dir);
    free(recs);
    return runs;
}

static void test_in_memory(void **state)
{
    (void)state;
    assert_int_equal(check_sort(0, 3, 1 << 20, RANDOM), 0);
    assert_int_equal(check_sort(1, 1, 1 << 20, RANDOM), 0);
    assert_int_equal(check_sort(30000, 3, 1 << 20, RANDOM), 0);
}

static void test_one_merge_pass(void **state)
{
    (void)state;
    /* 200,000 x 24 bytes in 1 MB: 5 runs, one pass reads them all */
    uint64_t runs = check_sort(200000, 3, 1 << 20, RANDOM);
    assert_int_equal(runs, 5);
    check_sort(200000, 1, 1 << 20, DENSE);
    check_sort(100000, 3, 1 << 20, FEW_KEYS);
}

static void test_many_passes(void **state)
{
    (void)state;
    /* 64 KB: runs of 2,730 records, two read at a time: many passes */
    uint64_t runs = check_sort(60000, 3, 64 * 1024, RANDOM);
    print_message("  60,000 records in 64 KB: %llu runs written\n", (unsigned long long)runs);
    assert_true(runs > 40);
    check_sort(60000, 3, 64 * 1024, EQUAL);
    check_sort(30000, 4, 100 * 1024, RANDOM);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    el_extsort *s = (el_extsort *)&s;
    el_diag d;
    assert_int_equal(el_extsort_new(0, 1 << 20, "/tmp", &s, &d), EL_EUSAGE);
    assert_null(s);
    assert_int_equal(el_extsort_new(5, 1 << 20, "/tmp", &s, &d), EL_EUSAGE);
    el_extsort_free(NULL);
    /* a spill directory that does not exist: the first spill says so */
    assert_int_equal(el_extsort_new(1, 64 * 1024, "/nonexistent/x", &s, &d), EL_OK);
    el_err err = EL_OK;
    uint64_t v = 1;
    for (int i = 0; i < 100000 && !err; i++)
        err = el_extsort_add(s, &v, &d);
    assert_int_equal(err, EL_EIO);
    assert_non_null(strstr(d.msg, "/nonexistent/x"));
    assert_int_equal(el_extsort_add(s, &v, &d), EL_EIO);
    el_extsort_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_records),
        cmocka_unit_test(test_in_memory),
        cmocka_unit_test(test_one_merge_pass),
        cmocka_unit_test(test_many_passes),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
