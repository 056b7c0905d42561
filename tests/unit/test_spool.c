/*
 * test_spool.c - the dry run's spool: lines copied back in order, the
 * duplicates a dedup names left out (lines longer than a block included),
 * nothing left on disk.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* open_memstream, snprintf */
#include <stdlib.h>  /* free, malloc */
#include <string.h>  /* memset, strlen */
#include <unistd.h>  /* rmdir */

#include "pipeline/extmem/spool.h"

static const uint64_t KEY[2] = { 7, 11 };

static void test_copy_leaves_out_duplicates(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_spool_XXXXXX";
    assert_non_null(mkdtemp(dir));
    el_spool *s;
    el_dedup *d;
    el_diag diag;
    el_diag_clear(&diag);
    assert_int_equal(el_spool_new(dir, &s, &diag), EL_OK);
    el_dedup_opts o = { .dir = dir, .keep_drops = true, .hash_key = KEY };
    assert_int_equal(el_dedup_new(&o, &d, &diag), EL_OK);
    /* 3,000 lines over 100 keys, one of 600 KB (longer than a block) */
    size_t n = 3000;
    char *big = malloc(600 * 1024 + 1);
    assert_non_null(big);
    memset(big, 'x', 600 * 1024);
    big[600 * 1024] = '\0';
    char line[128];
    for (size_t i = 0; i < n; i++) {
        unsigned key = (unsigned)(i * 7919 % 100);
        if (i == 2999)
            key = 1000; /* a key of its own, and the long line */
        snprintf(line, sizeof line, "{\"k\":%u,\"row\":%zu", key, i);
        assert_int_equal(el_spool_write(s, line, strlen(line), &diag), EL_OK);
        if (i == 2999 || i == 5)
            assert_int_equal(el_spool_write(s, big, strlen(big), &diag), EL_OK);
        assert_int_equal(el_spool_write(s, "}\n", 2, &diag), EL_OK);
        char k[16];
        int kl = snprintf(k, sizeof k, "%u", key);
        assert_int_equal(el_dedup_add(d, k, (size_t)kl, 0, &diag), EL_OK);
    }
    assert_int_equal(el_dedup_finish(d, &diag), EL_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    uint64_t dropped = 0;
    assert_int_equal(el_spool_copy(s, out, d, &dropped, &diag), EL_OK);
    fclose(out);
    assert_int_equal(dropped, n - 101);
    /* the survivors: the last row of each key, in input order */
    size_t lines = 0;
    char *p = text;
    unsigned last_row = 0;
    while (*p) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        unsigned key, row;
        assert_int_equal(sscanf(p, "{\"k\":%u,\"row\":%u", &key, &row), 2);
        assert_true(lines == 0 || row > last_row);
        if (key < 100)
            assert_true(row >= n - 1 - 100 && row < n - 1); /* the last 100 rows cover all keys */
        else
            assert_int_equal((size_t)(nl - p), strlen(line) + 600 * 1024 + 1);
        last_row = row;
        lines++;
        p = nl + 1;
    }
    assert_int_equal(lines, 101);
    free(text);
    el_dedup_free(d);
    el_spool_free(s);
    el_spool_free(NULL);
    free(big);
    assert_int_equal(rmdir(dir), 0);
}

static void test_copy_without_dedup(void **state)
{
    (void)state;
    el_spool *s;
    el_diag diag;
    assert_int_equal(el_spool_new("/tmp", &s, &diag), EL_OK);
    assert_int_equal(el_spool_write(s, "a\nb\n", 4, &diag), EL_OK);
    assert_int_equal(el_spool_bytes(s), 4);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    uint64_t dropped = 9;
    assert_int_equal(el_spool_copy(s, out, NULL, &dropped, &diag), EL_OK);
    fclose(out);
    assert_string_equal(text, "a\nb\n");
    assert_int_equal(dropped, 0);
    free(text);
    el_spool_free(s);
    assert_int_equal(el_spool_new("/nonexistent/dir", &s, &diag), EL_EIO);
    assert_null(s);
    assert_non_null(strstr(diag.msg, "/nonexistent/dir"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_leaves_out_duplicates),
        cmocka_unit_test(test_copy_without_dedup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
