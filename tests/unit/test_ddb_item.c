/*
 * test_ddb_item.c - DynamoDB JSON read back: number canonicalisation, the
 * semantic comparison of attribute values (what verify compares), their
 * re-serialisation (what its report shows), and walking a parsed tree.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>  /* strcmp, strlen */

#include "formats/ddb_item.h"

static void canon_is(const char *in, const char *want)
{
    el_buf b;
    el_buf_init(&b, 4096);
    el_err err = el_ddb_number_canon(in, strlen(in), &b);
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
    if (el_ddb_number_canon(in, strlen(in), &b) != EL_EPARSE)
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
    /* what el_ddb_number_put takes, a json attribute may write: zero with any
     * exponent, and more trailing or leading zeros than digits kept */
    canon_is("0e022222", "0");
    canon_is("-0.0E-99999", "0");
    char big[400];
    memset(big, '0', sizeof big);
    big[0] = '1';
    big[1] = '.';
    big[300] = '\0';
    canon_is(big, "1");              /* 1.000... with 298 zeros */
    memcpy(big + 300, "e-1", 4);
    canon_is(big, "0.1");
    big[1] = '0';
    memcpy(big + 300, "e-299", 6);
    canon_is(big, "1");              /* 1 and 299 zeros, times 10^-299 */
    memcpy(big, "0.", 2);
    memcpy(big + 299, "7e300", 6);   /* 0.000...7 (297 zeros), times 10^300 */
    canon_is(big, "700");
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
    canon_refuses("1e1001");
    canon_refuses("1e-1001");
    canon_refuses("NaN");
}

/* Compares two attribute values given as JSON text. */
static bool eq(const char *a, const char *b)
{
    el_ddb_doc *x = NULL, *y = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_ddb_doc_parse(a, strlen(a), &x, &d) || el_ddb_doc_parse(b, strlen(b), &y, &d))
        fail_msg("test JSON does not parse: %s / %s", a, b);
    bool r = el_ddb_values_equal(el_ddb_doc_root(x), el_ddb_doc_root(y));
    bool r2 = el_ddb_values_equal(el_ddb_doc_root(y), el_ddb_doc_root(x));
    if (r != r2)
        fail_msg("comparison not symmetric: %s / %s", a, b);
    el_ddb_doc_free(x);
    el_ddb_doc_free(y);
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
    el_ddb_doc *x;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_ddb_doc_parse("{\"S\":\"a\"}", 9, &x, &d), EL_OK);
    assert_false(el_ddb_values_equal(el_ddb_doc_root(x), NULL));
    assert_false(el_ddb_values_equal(NULL, el_ddb_doc_root(x)));
    el_ddb_doc_free(x);
}

static void test_json_put_round_trip(void **state)
{
    (void)state;
    const char *in = "{\"M\":{\"q\\\"uote\":{\"S\":\"line\\nbreak \\u00e9\"},"
                     "\"l\":{\"L\":[{\"BOOL\":false},{\"NULL\":true},{\"N\":\"-1.5\"}]}},"
                     "\"n\":12}";
    el_ddb_doc *v;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_ddb_doc_parse(in, strlen(in), &v, &d), EL_OK);
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_ddb_val_put(&b, el_ddb_doc_root(v)), EL_OK);
    assert_string_equal(el_buf_str(&b),
                        "{\"M\":{\"q\\\"uote\":{\"S\":\"line\\nbreak \xc3\xa9\"},"
                        "\"l\":{\"L\":[{\"BOOL\":false},{\"NULL\":true},{\"N\":\"-1.5\"}]}},"
                        "\"n\":12}");
    el_buf_free(&b);
    el_ddb_doc_free(v);
}

static void test_walk_and_refuse(void **state)
{
    (void)state;
    const char *in = "{\"Item\":{\"PK\":{\"S\":\"ACTOR#a\"},\"n\":{\"N\":\"3\"}},\"L\":[1,2]}";
    el_ddb_doc *doc;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_ddb_doc_parse(in, strlen(in), &doc, &d), EL_OK);
    const el_ddb_val *root = el_ddb_doc_root(doc);
    assert_true(el_ddb_val_is_object(root));
    assert_int_equal(el_ddb_val_count(root), 2);
    assert_string_equal(el_ddb_val_key(root, 1), "L");
    assert_int_equal(el_ddb_val_count(el_ddb_val_at(root, 1)), 2);
    const el_ddb_val *item = el_ddb_val_member(root, "Item");
    assert_string_equal(el_ddb_item_string(item, "PK"), "ACTOR#a");
    assert_null(el_ddb_item_string(item, "n"));      /* an N, not an S */
    assert_null(el_ddb_item_string(item, "absent"));
    assert_null(el_ddb_val_member(el_ddb_val_at(root, 1), "x")); /* not an object */
    assert_null(el_ddb_val_at(root, 9));
    assert_null(el_ddb_val_string(item));
    el_ddb_doc_free(doc);
    /* not JSON; nested too deep (refused before parsing) */
    assert_int_equal(el_ddb_doc_parse("{\"a\":", 5, &doc, &d), EL_EPARSE);
    assert_null(doc);
    char deep[600];
    for (int i = 0; i < 300; i++) {
        deep[i] = '[';
        deep[300 + i] = ']';
    }
    assert_int_equal(el_ddb_doc_parse(deep, sizeof deep, &doc, &d), EL_EPARSE);
    assert_null(doc);
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
        cmocka_unit_test(test_walk_and_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
