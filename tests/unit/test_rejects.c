/*
 * test_rejects.c - the rejects file: created on the first reject, one JSON
 * object per line (checked with yajl), bytes that are not UTF-8 escaped so
 * the line stays JSON, --max-rejects, and whole lines under threads.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>         /* several writers */
#include <stdio.h>           /* fopen, getline */
#include <stdlib.h>          /* mkdtemp, free */
#include <string.h>          /* strcmp, strlen */
#include <sys/stat.h>        /* stat */
#include <unistd.h>          /* unlink, rmdir */
#include <yajl/yajl_tree.h>  /* checking each line is JSON */

#include "pipeline/rows/rejects.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/el_test_rejects_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/rejects.jsonl", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Reads the file's lines, each parsed; returns how many (up to max). */
static size_t read_lines(yajl_val *out, size_t max)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0, n = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        assert_int_equal(line[len - 1], '\n');
        assert_null(memchr(line, '\n', (size_t)len - 1));   /* one object per line */
        char err[256];
        yajl_val v = yajl_tree_parse(line, err, sizeof err);
        if (!v)
            fail_msg("line %zu is not JSON: %s\n%s", n + 1, err, line);
        assert_true(YAJL_IS_OBJECT(v));
        if (n < max)
            out[n] = v;
        else
            yajl_tree_free(v);
        n++;
    }
    free(line);
    fclose(f);
    return n;
}

static yajl_val get(yajl_val obj, const char *k1, const char *k2)
{
    const char *p[] = { k1, k2, NULL };
    return yajl_tree_get(obj, p, yajl_t_any);
}

static const char *str(yajl_val obj, const char *k1, const char *k2)
{
    yajl_val v = get(obj, k1, k2);
    assert_non_null(v);
    assert_true(YAJL_IS_STRING(v));
    return YAJL_GET_STRING(v);
}

static long long num(yajl_val obj, const char *k1)
{
    yajl_val v = get(obj, k1, NULL);
    assert_non_null(v);
    assert_true(YAJL_IS_INTEGER(v));
    return YAJL_GET_INTEGER(v);
}

static char *names[] = { "id", "name", "photo" };
static el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_BINARY };
static const el_schema schema = { 3, names, types, NULL, NULL };

static void test_created_lazily(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new(path, -1);
    assert_non_null(r);
    assert_string_equal(el_rejects_path(r), path);
    assert_int_equal(el_rejects_count(r), 0);
    el_rejects_free(r);
    assert_false(exists(path));          /* a clean run leaves no file */
    r = el_rejects_new(path, -1);
    el_diag why;
    el_diag_clear(&why);
    el_diag_at(&why, EL_EREJECT, 3, 2, 40, "column 'name' is empty");
    el_value v[3] = { { "7", 1, false }, { "", 0, false }, { "", 0, true } };
    el_row row = { 3, v, 3, 40 };
    el_diag d;
    assert_int_equal(el_rejects_row(r, "users.csv", &why, &schema, &row, &d), EL_OK);
    assert_true(exists(path));
    assert_int_equal(el_rejects_count(r), 1);
    el_rejects_free(r);
    el_rejects_free(NULL);
}

static void test_row_line_shape(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new(path, -1);
    el_diag why, d;
    el_diag_clear(&why);
    el_diag_at(&why, EL_EREJECT, 12, 2, 345, "invalid UTF-8 in column 'name' at byte 4");
    el_value v[3] = { { "a91", 3, false },
                      { "Jos\xe9 \"q\" \\ \x01", 12, false },
                      { "\xff\x00\x10", 3, false } };
    el_row row = { 3, v, 12, 345 };
    assert_int_equal(el_rejects_row(r, "in\"put.csv", &why, &schema, &row, &d), EL_OK);
    /* a row with a NULL, an extra column and no column position */
    el_diag_clear(&why);
    el_diag_set(&why, EL_EREJECT, "wrong number of columns: expected 3, got 4");
    el_value w[4] = { { "1", 1, false }, { "", 0, true }, { "", 0, false }, { "x", 1, false } };
    el_row row2 = { 4, w, 13, 400 };
    assert_int_equal(el_rejects_row(r, "in\"put.csv", &why, &schema, &row2, &d), EL_OK);
    /* no row at all: the position comes from the diag */
    el_diag_clear(&why);
    el_diag_at(&why, EL_EREJECT, 99, 0, 1234, "cut");
    assert_int_equal(el_rejects_row(r, "x", &why, NULL, NULL, &d), EL_OK);
    el_rejects_free(r);

    yajl_val lines[3];
    assert_int_equal(read_lines(lines, 3), 3);
    yajl_val a = lines[0];
    assert_string_equal(str(a, "input", NULL), "in\"put.csv");
    assert_int_equal(num(a, "line"), 12);
    assert_int_equal(num(a, "offset"), 345);
    assert_int_equal(num(a, "column"), 2);
    assert_string_equal(str(a, "reason", NULL), "invalid UTF-8 in column 'name' at byte 4");
    assert_string_equal(str(a, "row", "id"), "a91");
    /* not UTF-8: each bad byte became \u00XX of its Latin-1 reading */
    assert_string_equal(str(a, "row", "name"), "Jos\xc3\xa9 \"q\" \\ \x01");
    yajl_val photo = get(a, "row", "photo");
    assert_true(YAJL_IS_OBJECT(photo));
    const char *pb[] = { "base64", NULL };
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(photo, pb, yajl_t_string)), "/wAQ");

    yajl_val b = lines[1];
    assert_null(get(b, "column", NULL));
    assert_int_equal(num(b, "line"), 13);
    yajl_val nul = get(b, "row", "name");
    assert_non_null(nul);
    assert_true(YAJL_IS_NULL(nul));
    yajl_val ph2 = get(b, "row", "photo");             /* empty is not NULL */
    assert_true(YAJL_IS_OBJECT(ph2));
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(ph2, pb, yajl_t_string)), "");
    assert_string_equal(str(b, "row", "column4"), "x");

    yajl_val c = lines[2];
    assert_int_equal(num(c, "line"), 99);
    assert_int_equal(num(c, "offset"), 1234);
    assert_null(get(c, "row", NULL));
    for (int i = 0; i < 3; i++)
        yajl_tree_free(lines[i]);
}

static void test_item_line_shape(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new(path, -1);
    el_diag d;
    const char *item = "{\"PK\":{\"S\":\"ACTOR#alice\"},\"SK\":{\"S\":\"TARGET#bob\"}}";
    assert_int_equal(el_rejects_item(r, "follows.csv", 5, "ValidationException: bad \xff",
                                     item, strlen(item), &d), EL_OK);
    assert_int_equal(el_rejects_count(r), 1);
    el_rejects_free(r);
    yajl_val l[1];
    assert_int_equal(read_lines(l, 1), 1);
    assert_string_equal(str(l[0], "input", NULL), "follows.csv");
    assert_int_equal(num(l[0], "line"), 5);
    assert_string_equal(str(l[0], "reason", NULL), "ValidationException: bad \xc3\xbf");
    const char *pk[] = { "item", "PK", "S", NULL };
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(l[0], pk, yajl_t_string)), "ACTOR#alice");
    yajl_tree_free(l[0]);
}

static void test_max_rejects(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new(path, 2);
    el_diag why, d;
    el_diag_clear(&why);
    el_diag_set(&why, EL_EREJECT, "bad");
    el_value v[1] = { { "x", 1, false } };
    el_row row = { 1, v, 1, 0 };
    assert_int_equal(el_rejects_row(r, "i", &why, NULL, &row, &d), EL_OK);
    assert_int_equal(el_rejects_row(r, "i", &why, NULL, &row, &d), EL_OK);
    el_diag_clear(&d);
    assert_int_equal(el_rejects_row(r, "i", &why, NULL, &row, &d), EL_ELIMIT);
    assert_non_null(strstr(d.msg, "more than 2"));
    assert_int_equal(el_rejects_count(r), 3);
    el_rejects_free(r);
    yajl_val l[3];
    assert_int_equal(read_lines(l, 3), 3);       /* the row past the limit is still written */
    for (int i = 0; i < 3; i++)
        yajl_tree_free(l[i]);
    unlink(path);

    r = el_rejects_new(path, 0);                 /* --max-rejects 0: the first one aborts */
    assert_int_equal(el_rejects_item(r, "i", 1, "x", "{}", 2, &d), EL_ELIMIT);
    el_rejects_free(r);
}

static void test_unwritable_path(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new("/nonexistent/dir/rejects.jsonl", -1);
    el_diag why, d;
    el_diag_clear(&why);
    el_diag_clear(&d);
    el_value v[1] = { { "x", 1, false } };
    el_row row = { 1, v, 1, 0 };
    assert_int_equal(el_rejects_row(r, "i", &why, NULL, &row, &d), EL_EIO);
    assert_non_null(strstr(d.msg, "/nonexistent/dir/rejects.jsonl"));
    assert_int_equal(el_rejects_count(r), 0);
    el_rejects_free(r);
}

typedef struct writer {
    el_rejects *r;
    int id;
    int failures;
} writer;

static void *write_many(void *arg)
{
    writer *w = arg;
    char val[3000];
    memset(val, 'a' + w->id, sizeof val);
    el_value v[2] = { { val, sizeof val, false }, { "\xfe\xff", 2, false } };
    el_row row = { 2, v, 0, 0 };
    el_diag why, d;
    el_diag_clear(&why);
    el_diag_set(&why, EL_EREJECT, "writer %d", w->id);
    for (int i = 0; i < 200; i++) {
        row.line = (uint64_t)i + 1;
        if (el_rejects_row(w->r, "t", &why, NULL, &row, &d) != EL_OK)
            w->failures++;
    }
    return NULL;
}

static void test_threads_write_whole_lines(void **state)
{
    (void)state;
    el_rejects *r = el_rejects_new(path, -1);
    writer w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (writer){ r, i, 0 };
        assert_int_equal(pthread_create(&t[i], NULL, write_many, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(el_rejects_count(r), 800);
    el_rejects_free(r);
    assert_int_equal(read_lines(NULL, 0), 800);   /* every line parses on its own */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_created_lazily, setup, teardown),
        cmocka_unit_test_setup_teardown(test_row_line_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_item_line_shape, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_rejects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_write_whole_lines, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
