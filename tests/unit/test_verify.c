/*
 * test_verify.c - the pure parts of verify: number canonicalisation, the
 * semantic comparison of DynamoDB JSON values, and their re-serialisation
 * (what the report file shows).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>  /* strcmp, strlen */

#include "pipeline/verify.h"

static void canon_is(const char *in, const char *want)
{
    el_buf b;
    el_buf_init(&b, 4096);
    el_err err = el_verify_number_canon(in, strlen(in), &b);
    if (err != EL_OK)
        fail_msg("'%s' refused, wanted '%s'", in, want);
    if (strcmp(el_buf_str(&b), want) != 0)
        fail_msg("'%s' gave '%s', wanted '%s'", in, el_buf_str(&b), want);
    el_buf_free(&b);
}

static void canon_refuses(const char *in)
{
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_buf_puts(&b, "kept"), EL_OK);
    if (el_verify_number_canon(in, strlen(in), &b) != EL_EPARSE)
        fail_msg("'%s' accepted as '%s'", in, el_buf_str(&b));
    assert_string_equal(el_buf_str(&b), "kept");
    el_buf_free(&b);
}

static void test_number_canon(void **state)
{
    (void)state;
    canon_is("1.50", "1.5");
    canon_is("1.5", "1.5");
    canon_is("+7", "7");
    canon_is("007", "7");
    canon_is("100", "100");
    canon_is("1E2", "100");
    canon_is("1.5e+3", "1500");
    canon_is("15E-1", "1.5");
    canon_is(".5", "0.5");
    canon_is("5.", "5");
    canon_is("0.000120", "0.00012");
    canon_is("-0.0", "0");
    canon_is("-0", "0");
    canon_is("0E+10", "0");
    canon_is("-12.340", "-12.34");
    canon_is("1718900000", "1718900000");
    canon_is("1E-130", "0.0000000000000000000000000000000000000000000000000000000000000000000"
                       "000000000000000000000000000000000000000000000000000000000000001");
    canon_is("99999999999999999999999999999999999999", "99999999999999999999999999999999999999");
}

static void test_number_canon_refuses(void **state)
{
    (void)state;
    canon_refuses("");
    canon_refuses("-");
    canon_refuses(".");
    canon_refuses("1e");
    canon_refuses("1e+");
    canon_refuses("1.2.3");
    canon_refuses("abc");
    canon_refuses(" 1");
    canon_refuses("1 ");
    canon_refuses("0x10");
    canon_refuses("1e99999");
    canon_refuses("NaN");
}

/* Compares two attribute values given as JSON text. */
static bool eq(const char *a, const char *b)
{
    char e[128];
    yajl_val x = yajl_tree_parse(a, e, sizeof e), y = yajl_tree_parse(b, e, sizeof e);
    if (!x || !y)
        fail_msg("test JSON does not parse: %s / %s", a, b);
    bool r = el_verify_values_equal(x, y);
    bool r2 = el_verify_values_equal(y, x);
    if (r != r2)
        fail_msg("comparison not symmetric: %s / %s", a, b);
    yajl_tree_free(x);
    yajl_tree_free(y);
    return r;
}

static void test_values_scalars(void **state)
{
    (void)state;
    assert_true(eq("{\"S\":\"bob\"}", "{\"S\":\"bob\"}"));
    assert_false(eq("{\"S\":\"bob\"}", "{\"S\":\"Bob\"}"));
    assert_false(eq("{\"S\":\"bob\"}", "{\"S\":\"bob \"}"));
    assert_true(eq("{\"S\":\"\\u00e9\"}", "{\"S\":\"\xc3\xa9\"}"));
    assert_true(eq("{\"N\":\"1.50\"}", "{\"N\":\"1.5\"}"));
    assert_true(eq("{\"N\":\"100\"}", "{\"N\":\"1E2\"}"));
    assert_false(eq("{\"N\":\"1.5\"}", "{\"N\":\"1.05\"}"));
    assert_false(eq("{\"N\":\"1\"}", "{\"N\":\"-1\"}"));
    assert_false(eq("{\"N\":\"1\"}", "{\"N\":\"x\"}"));
    /* S and N are different types even with the same text */
    assert_false(eq("{\"N\":\"1\"}", "{\"S\":\"1\"}"));
    assert_true(eq("{\"BOOL\":true}", "{\"BOOL\":true}"));
    assert_false(eq("{\"BOOL\":true}", "{\"BOOL\":false}"));
    assert_true(eq("{\"NULL\":true}", "{\"NULL\":true}"));
    assert_false(eq("{\"NULL\":true}", "{\"BOOL\":true}"));
}

static void test_values_binary(void **state)
{
    (void)state;
    assert_true(eq("{\"B\":\"AAEC/w==\"}", "{\"B\":\"AAEC/w==\"}"));
    /* the same bytes spelt with line breaks or without padding */
    assert_true(eq("{\"B\":\"AAEC/w==\"}", "{\"B\":\"AAEC\\n/w\"}"));
    assert_false(eq("{\"B\":\"AAEC/w==\"}", "{\"B\":\"AAEC/g==\"}"));
    assert_false(eq("{\"B\":\"AAEC\"}", "{\"B\":\"AAECAA==\"}"));
    assert_false(eq("{\"B\":\"AAEC/w==\"}", "{\"B\":\"!!!\"}"));
    assert_false(eq("{\"B\":\"AAEC\"}", "{\"S\":\"AAEC\"}"));
}

static void test_values_collections(void **state)
{
    (void)state;
    assert_true(eq("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"b\",\"a\"]}"));
    assert_false(eq("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"a\"]}"));
    assert_false(eq("{\"SS\":[\"a\",\"b\"]}", "{\"SS\":[\"a\",\"c\"]}"));
    assert_true(eq("{\"NS\":[\"1.0\",\"2\"]}", "{\"NS\":[\"2\",\"1\"]}"));
    assert_true(eq("{\"BS\":[\"AA==\"]}", "{\"BS\":[\"AA\"]}"));
    assert_true(eq("{\"L\":[{\"N\":\"1.0\"},{\"S\":\"x\"}]}", "{\"L\":[{\"N\":\"1\"},{\"S\":\"x\"}]}"));
    assert_false(eq("{\"L\":[{\"N\":\"1\"},{\"S\":\"x\"}]}", "{\"L\":[{\"S\":\"x\"},{\"N\":\"1\"}]}"));
    assert_true(eq("{\"M\":{\"a\":{\"N\":\"1\"},\"b\":{\"S\":\"y\"}}}",
                   "{\"M\":{\"b\":{\"S\":\"y\"},\"a\":{\"N\":\"1.00\"}}}"));
    assert_false(eq("{\"M\":{\"a\":{\"N\":\"1\"}}}", "{\"M\":{\"a\":{\"N\":\"1\"},\"b\":{\"S\":\"y\"}}}"));
    assert_false(eq("{\"M\":{\"a\":{\"N\":\"1\"}}}", "{\"M\":{\"c\":{\"N\":\"1\"}}}"));
}

static void test_values_malformed(void **state)
{
    (void)state;
    assert_false(eq("{\"S\":\"a\",\"N\":\"1\"}", "{\"S\":\"a\",\"N\":\"1\"}"));
    assert_false(eq("{}", "{}"));
    assert_false(eq("[]", "[]"));
    assert_false(eq("{\"X\":\"a\"}", "{\"X\":\"a\"}"));
    assert_false(eq("{\"S\":1}", "{\"S\":1}"));
    char e[64];
    yajl_val x = yajl_tree_parse("{\"S\":\"a\"}", e, sizeof e);
    assert_false(el_verify_values_equal(x, NULL));
    assert_false(el_verify_values_equal(NULL, x));
    yajl_tree_free(x);
}

static void test_json_put_round_trip(void **state)
{
    (void)state;
    const char *in = "{\"M\":{\"q\\\"uote\":{\"S\":\"line\\nbreak \\u00e9\"},"
                     "\"l\":{\"L\":[{\"BOOL\":false},{\"NULL\":true},{\"N\":\"-1.5\"}]}},"
                     "\"n\":12}";
    char e[64];
    yajl_val v = yajl_tree_parse(in, e, sizeof e);
    assert_non_null(v);
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_verify_json_put(&b, v), EL_OK);
    assert_string_equal(el_buf_str(&b),
                        "{\"M\":{\"q\\\"uote\":{\"S\":\"line\\nbreak \xc3\xa9\"},"
                        "\"l\":{\"L\":[{\"BOOL\":false},{\"NULL\":true},{\"N\":\"-1.5\"}]}},"
                        "\"n\":12}");
    el_buf_free(&b);
    yajl_tree_free(v);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(el_verify_kind_name(EL_VERIFY_MISSING), "missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_DIFFERENT), "different");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_MISSING), "reverse-missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_EXTRA), "reverse-extra");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_number_canon),
        cmocka_unit_test(test_number_canon_refuses),
        cmocka_unit_test(test_values_scalars),
        cmocka_unit_test(test_values_binary),
        cmocka_unit_test(test_values_collections),
        cmocka_unit_test(test_values_malformed),
        cmocka_unit_test(test_json_put_round_trip),
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
