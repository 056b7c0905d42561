/*
 * test_inputs.c - the one pairing of inputs with sources (positional inputs
 * override "input", one per source or all to a single source; relative
 * "input" paths are the mapping file's), and binding a source to its
 * inputs' columns (the same columns in the same order, or a clear refusal).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdio.h>   /* fopen, snprintf */
#include <stdlib.h>  /* mkdtemp */
#include <string.h>  /* strstr, strlen */
#include <unistd.h>  /* unlink, rmdir */

#include "pipeline/rows/inputs.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    el_test_write_file(dir, name, text);
}

static el_mapping *two_sources(void)
{
    const char *json =
        "{\"table\":\"G\",\"sources\":["
        "{\"name\":\"users\",\"input\":\"users.csv\",\"pk\":\"U#{id}\",\"sk\":\"P\",\"index\":false},"
        "{\"name\":\"follows\",\"input\":\"f.csv\",\"pk\":\"A#{a}\",\"sk\":\"T#{b}\"}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), dir, &m, &d), EL_OK);
    return m;
}

static void test_mapping_inputs_relative_to_mapping(void **state)
{
    (void)state;
    el_mapping *m = two_sources();
    el_reader_opts ro = { 0 };
    el_input_spec *v;
    size_t n;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_inputs_pair(m, NULL, 0, &ro, &v, &n, &d), EL_OK);
    assert_int_equal(n, 2);
    char want[128];
    snprintf(want, sizeof want, "%s/users.csv", dir);
    assert_string_equal(v[0].path, want);
    assert_ptr_equal(v[1].src, m->sources[1]);
    el_inputs_free(v, n);
    el_mapping_free(m);
}

static void test_positional_inputs(void **state)
{
    (void)state;
    el_mapping *m = two_sources();
    el_reader_opts ro = { 0 };
    el_input_spec *v;
    size_t n;
    el_diag d;
    el_diag_clear(&d);
    const char *two[] = { "a.csv", "b.csv" };
    assert_int_equal(el_inputs_pair(m, two, 2, &ro, &v, &n, &d), EL_OK);
    assert_string_equal(v[1].path, "b.csv"); /* as given, not the mapping's */
    assert_ptr_equal(v[1].src, m->sources[1]);
    el_inputs_free(v, n);
    const char *three[] = { "a", "b", "c" };
    assert_int_equal(el_inputs_pair(m, three, 3, &ro, &v, &n, &d), EL_EUSAGE);
    assert_null(v);
    assert_non_null(strstr(d.msg, "3 inputs given for 2 sources"));
    el_mapping_free(m);
}

static void test_single_source_takes_every_input(void **state)
{
    (void)state;
    const char *json = "{\"table\":\"G\",\"sources\":[{\"name\":\"f\",\"pk\":\"A#{a}\","
                       "\"sk\":\"T#{b}\"}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    el_reader_opts ro = { 0 };
    el_input_spec *v;
    size_t n;
    /* no "input" and none named: say what to give */
    assert_int_equal(el_inputs_pair(m, NULL, 0, &ro, &v, &n, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "source 'f' has no input"));
    const char *three[] = { "1.csv", "2.csv", "3.csv" };
    assert_int_equal(el_inputs_pair(m, three, 3, &ro, &v, &n, &d), EL_OK);
    assert_int_equal(n, 3);
    assert_ptr_equal(v[2].src, m->sources[0]);
    el_inputs_free(v, n);
    el_mapping_free(m);
}

static void test_bind_same_columns(void **state)
{
    (void)state;
    write_file("x1.csv", "a,b\n1,2\n");
    write_file("x2.csv", "a,b\n3,4\n");
    write_file("x3.csv", "b,a\n5,6\n");
    const char *json = "{\"table\":\"G\",\"sources\":[{\"name\":\"f\",\"pk\":\"A#{a}\","
                       "\"sk\":\"T#{b}\"}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    char p1[128], p2[128], p3[128];
    snprintf(p1, sizeof p1, "%s/x1.csv", dir);
    snprintf(p2, sizeof p2, "%s/x2.csv", dir);
    snprintf(p3, sizeof p3, "%s/x3.csv", dir);
    const char *paths[] = { p1, p2, p3 };
    el_reader_opts ro = { 0 };
    el_input_spec *v;
    size_t n;
    assert_int_equal(el_inputs_pair(m, paths, 3, &ro, &v, &n, &d), EL_OK);
    el_reader *r1, *r2, *r3;
    assert_int_equal(el_input_open_bound(&v[0], &r1, &d), EL_OK);
    assert_ptr_equal(m->sources[0]->bound, el_reader_schema(r1));
    assert_int_equal(el_input_open_bound(&v[1], &r2, &d), EL_OK);
    assert_int_equal(el_input_open_bound(&v[2], &r3, &d), EL_EUSAGE);
    assert_null(r3);
    assert_non_null(strstr(d.msg, "columns differ from the other inputs of source 'f'"));
    assert_non_null(strstr(d.msg, "x3.csv"));
    el_input_unbind(m->sources[0], r1);
    assert_null(m->sources[0]->bound);
    el_reader_free(r1);
    el_reader_free(r2);
    /* a file that is not there is named */
    el_input_spec missing = { "/nonexistent/in.csv", m->sources[0], ro };
    assert_int_not_equal(el_input_open_bound(&missing, &r3, &d), EL_OK);
    assert_non_null(strstr(d.msg, "/nonexistent/in.csv"));
    el_inputs_free(v, n);
    el_mapping_free(m);
    for (int i = 1; i <= 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/x%d.csv", dir, i);
        unlink(p);
    }
}

static int setup(void **state)
{
    (void)state;
    return el_test_mkdtemp(dir, sizeof dir, "test_inputs") ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapping_inputs_relative_to_mapping),
        cmocka_unit_test(test_positional_inputs),
        cmocka_unit_test(test_single_source_takes_every_input),
        cmocka_unit_test(test_bind_same_columns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
