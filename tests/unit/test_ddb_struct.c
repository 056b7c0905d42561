/*
 * test_ddb_struct.c - JSON texts to DynamoDB M/L/N/S/BOOL/NULL (every kind,
 * exact digits, DynamoDB's 32-level limit, invalid JSON, numbers out of range,
 * duplicate names, sizes by DynamoDB's rules), and delimited texts to SS/NS
 * (duplicates, empty sets, delimiters, invalid members).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strlen, strstr */

#include "formats/ddb_item.h"   /* the output parsed back */
#include "formats/ddb_struct.h"

#define BIG ((size_t)400 * 1024)

typedef struct fx {
    el_ddb_struct *c;
    el_buf out;
} fx;

static int setup(void **state)
{
    static fx f;
    if (el_ddb_struct_new(&f.c))
        return -1;
    el_buf_init(&f.out, 1 << 22);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    el_ddb_struct_free(f->c);
    el_buf_free(&f->out);
    return 0;
}

/* Converts json and checks the DynamoDB JSON and size it gives. */
static void json_is(fx *f, const char *in, const char *want, size_t want_size)
{
    el_buf_reset(&f->out);
    size_t size = 12345;
    const char *why = NULL;
    el_err err = el_ddb_struct_json(f->c, &f->out, in, strlen(in), BIG, &size, &why);
    if (err)
        fail_msg("'%s' refused: %s", in, why ? why : "?");
    assert_string_equal(el_buf_str(&f->out), want);
    assert_int_equal(size, want_size);
    /* and the output is JSON that parses */
    el_ddb_doc *doc = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_ddb_doc_parse(f->out.data, f->out.len, &doc, &d), EL_OK);
    el_ddb_doc_free(doc);
}

/* Converts json, expects a reject whose reason holds `because`, and the
 * buffer as it was. */
static void json_refused(fx *f, const char *in, size_t len, size_t max, const char *because)
{
    el_buf_reset(&f->out);
    assert_int_equal(el_buf_puts(&f->out, "KEEP"), EL_OK);
    size_t size = 7;
    const char *why = NULL;
    el_err err = el_ddb_struct_json(f->c, &f->out, in, len, max, &size, &why);
    if (err != EL_EREJECT)
        fail_msg("'%.*s' not refused (err %d, out %s)", (int)len, in, (int)err,
                 el_buf_str(&f->out));
    assert_non_null(why);
    if (!strstr(why, because))
        fail_msg("'%.*s': reason '%s' lacks '%s'", (int)len, in, why, because);
    assert_string_equal(el_buf_str(&f->out), "KEEP");
    assert_int_equal(size, 0);
}

#define REFUSED(f, lit, because) json_refused((f), (lit), sizeof(lit) - 1, BIG, (because))

static void test_json_scalars(void **state)
{
    fx *f = *state;
    json_is(f, "\"hi\"", "{\"S\":\"hi\"}", 2);
    json_is(f, "\"\"", "{\"S\":\"\"}", 0);
    json_is(f, "42", "{\"N\":\"42\"}", 2);       /* 2 digits: 1 byte + 1 */
    json_is(f, "-12345", "{\"N\":\"-12345\"}", 4); /* 5 digits: 3 + 1 */
    json_is(f, "true", "{\"BOOL\":true}", 1);
    json_is(f, "false", "{\"BOOL\":false}", 1);
    json_is(f, "null", "{\"NULL\":true}", 1);
    json_is(f, " \n 7 \t", "{\"N\":\"7\"}", 2);   /* blanks around are JSON's */
}

static void test_json_containers(void **state)
{
    fx *f = *state;
    json_is(f, "{}", "{\"M\":{}}", 3);
    json_is(f, "[]", "{\"L\":[]}", 3);
    /* map 3; "a": 1 + 1 + N(1) 2 = 4; "b": 1 + 1 + L(3 + (1+1) + (1+1) + (1+2)) = 12 */
    json_is(f, "{\"a\":1,\"b\":[true,null,\"xy\"]}",
            "{\"M\":{\"a\":{\"N\":\"1\"},\"b\":{\"L\":[{\"BOOL\":true},{\"NULL\":true},"
            "{\"S\":\"xy\"}]}}}",
            19);
    /* PostgreSQL's jsonb text: blanks after ':' and ',' */
    json_is(f, "{\"k\": [1, {\"x\": \"y\"}]}",
            "{\"M\":{\"k\":{\"L\":[{\"N\":\"1\"},{\"M\":{\"x\":{\"S\":\"y\"}}}]}}}",
            /* 3 + (1+1+ (3 + (1+2) + (1 + 3 + (1+1+1)))) */
            3 + 1 + 1 + 3 + 3 + 1 + 3 + 3);
    json_is(f, "[[],{}]", "{\"L\":[{\"L\":[]},{\"M\":{}}]}", 3 + 4 + 4);
}

static void test_json_strings_escaped(void **state)
{
    fx *f = *state;
    /* a"bé<newline>: 6 bytes; é from \u00e9 and as UTF-8 alike */
    json_is(f, "\"a\\\"b\\u00e9\\n\"", "{\"S\":\"a\\\"b\xc3\xa9\\n\"}", 6);
    json_is(f, "\"\xc3\xa9\"", "{\"S\":\"\xc3\xa9\"}", 2);
    json_is(f, "\"\\ud83d\\ude00\"", "{\"S\":\"\xf0\x9f\x98\x80\"}", 4); /* a surrogate pair */
    json_is(f, "{\"na\\\"me\":\"v\"}", "{\"M\":{\"na\\\"me\":{\"S\":\"v\"}}}", 3 + 1 + 5 + 1);
}

static void test_json_numbers_exact(void **state)
{
    fx *f = *state;
    json_is(f, "1.50", "{\"N\":\"1.50\"}", 2); /* digits kept, size of "15" */
    json_is(f, "0.1", "{\"N\":\"0.1\"}", 2);
    json_is(f, "12345678901234567890123456789012345678",
            "{\"N\":\"12345678901234567890123456789012345678\"}", 20);
    json_is(f, "9007199254740993", "{\"N\":\"9007199254740993\"}", 9); /* not 2^53's double */
    json_is(f, "-1.5e-3", "{\"N\":\"-1.5e-3\"}", 2);
    json_is(f, "9.9999999999999999999999999999999999999E+125",
            "{\"N\":\"9.9999999999999999999999999999999999999E+125\"}", 20);
    json_is(f, "1E-130", "{\"N\":\"1E-130\"}", 2);
    json_is(f, "0", "{\"N\":\"0\"}", 1);
    json_is(f, "[100000000000000000000000000000000000000000]",
            "{\"L\":[{\"N\":\"100000000000000000000000000000000000000000\"}]}", 3 + 1 + 2);
}

static void test_json_numbers_out_of_range(void **state)
{
    fx *f = *state;
    REFUSED(f, "123456789012345678901234567890123456789", "38 significant digits");
    REFUSED(f, "1E126", "9.99E+125");
    REFUSED(f, "{\"a\":[1,-1e-131]}", "1E-130");
    REFUSED(f, "[1, 10000000000000000000000000000000000000000000000000000000000000000000000000000"
               "000000000000000000000000000000000000000000000000000000000]",
            "9.99E+125");
}

static void test_json_depth(void **state)
{
    fx *f = *state;
    char in[200], want[400];
    /* 31 arrays one within another: accepted, 31 levels of L under the
     * attribute's own level */
    size_t n = 0, w = 0;
    for (int i = 0; i < 31; i++)
        in[n++] = '[';
    for (int i = 0; i < 31; i++)
        in[n++] = ']';
    in[n] = '\0';
    for (int i = 0; i < 31; i++)
        w += (size_t)snprintf(want + w, sizeof want - w, "{\"L\":[");
    for (int i = 0; i < 31; i++)
        w += (size_t)snprintf(want + w, sizeof want - w, "]}");
    json_is(f, in, want, 31 * 3 + 30); /* each list 3, each nested one an element byte */
    assert_int_equal(EL_DDB_MAX_CONTAINERS, 31);
    /* 32: refused, as DynamoDB refuses it, also with nothing inside */
    json_refused(f, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 65, BIG,
                 "deeper than DynamoDB's 32 levels");
    json_refused(f, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 64, BIG,
                 "32 levels");
    /* maps count the same; an unclosed deep text stops at level 32 too */
    n = 0;
    for (int i = 0; i < 32; i++)
        n += (size_t)snprintf(in + n, sizeof in - n, "{\"a\":");
    json_refused(f, in, n, BIG, "32 levels");
    /* 31 mixed: accepted */
    n = 0;
    for (int i = 0; i < 31; i++)
        n += (size_t)snprintf(in + n, sizeof in - n, i % 2 ? "{\"a\":" : "[");
    n += (size_t)snprintf(in + n, sizeof in - n, "true");
    for (int i = 30; i >= 0; i--)
        in[n++] = i % 2 ? '}' : ']';
    el_buf_reset(&f->out);
    size_t size;
    const char *why;
    assert_int_equal(el_ddb_struct_json(f->c, &f->out, in, n, BIG, &size, &why), EL_OK);
}

static void test_json_invalid(void **state)
{
    fx *f = *state;
    REFUSED(f, "", "empty");
    REFUSED(f, "   ", "blank");
    REFUSED(f, "{\"a\":}", "not JSON");
    REFUSED(f, "[1,2", "not JSON");
    REFUSED(f, "tru", "not JSON");
    REFUSED(f, "{\"a\":1} x", "not JSON");
    REFUSED(f, "{\"a\":1}{}", "not JSON");
    REFUSED(f, "'single'", "not JSON");
    REFUSED(f, "{a:1}", "not JSON");
    REFUSED(f, "[1,]", "not JSON");
    REFUSED(f, "01", "not JSON");
    REFUSED(f, "NaN", "not JSON");
    REFUSED(f, "\"\xff\"", "not JSON");             /* invalid UTF-8 in a string */
    REFUSED(f, "[1] // comment", "not JSON");
    /* the reason says where */
    REFUSED(f, "[1,2,x]", "(near byte 6)");
    REFUSED(f, "{\"a\":}", "(near byte 6)");
}

static void test_json_duplicate_names(void **state)
{
    fx *f = *state;
    REFUSED(f, "{\"a\":1,\"b\":2,\"a\":3}", "member \"a\" twice");
    REFUSED(f, "[{\"x\":{\"q\":1,\"q\":1}}]", "\"q\" twice");
    /* the same name in different objects is fine */
    json_is(f, "{\"a\":{\"x\":1},\"b\":{\"x\":2},\"x\":3}",
            "{\"M\":{\"a\":{\"M\":{\"x\":{\"N\":\"1\"}}},\"b\":{\"M\":{\"x\":{\"N\":\"2\"}}},"
            "\"x\":{\"N\":\"3\"}}}",
            3 + (2 + 3 + 4) + (2 + 3 + 4) + 4);
    /* a name that is a prefix of another is not the same */
    json_is(f, "{\"ab\":1,\"a\":2}", "{\"M\":{\"ab\":{\"N\":\"1\"},\"a\":{\"N\":\"2\"}}}",
            3 + 5 + 4);
}

static void test_json_max_size(void **state)
{
    fx *f = *state;
    json_refused(f, "\"abcdef\"", 8, 5, "larger than an item");
    json_refused(f, "[\"ab\",\"cd\"]", 11, 8, "larger than an item");
    el_buf_reset(&f->out);
    size_t size;
    const char *why;
    assert_int_equal(el_ddb_struct_json(f->c, &f->out, "\"abcde\"", 7, 5, &size, &why), EL_OK);
    assert_int_equal(size, 5);
}

static void test_json_reuse_after_reject(void **state)
{
    fx *f = *state;
    /* a reject in the middle of a map leaves nothing behind for the next value */
    REFUSED(f, "{\"a\":{\"b\":[1,{\"c\":1e999}]}}", "9.99E+125");
    json_is(f, "{\"a\":1}", "{\"M\":{\"a\":{\"N\":\"1\"}}}", 7);
}

/* ---- sets ---- */

static void set_is(fx *f, const char *in, char delim, bool numbers, const char *want,
                   size_t want_size)
{
    el_buf_reset(&f->out);
    size_t size = 999;
    const char *why = NULL;
    el_err err = el_ddb_struct_set(f->c, &f->out, in, strlen(in), delim, numbers, BIG, &size,
                                   &why);
    if (err)
        fail_msg("'%s' refused: %s", in, why ? why : "?");
    assert_string_equal(el_buf_str(&f->out), want);
    assert_int_equal(size, want_size);
}

static void set_refused(fx *f, const char *in, bool numbers, size_t max, const char *because)
{
    el_buf_reset(&f->out);
    assert_int_equal(el_buf_puts(&f->out, "KEEP"), EL_OK);
    size_t size = 7;
    const char *why = NULL;
    assert_int_equal(el_ddb_struct_set(f->c, &f->out, in, strlen(in), ',', numbers, max, &size,
                                       &why),
                     EL_EREJECT);
    if (!why || !strstr(why, because))
        fail_msg("'%s': reason '%s' lacks '%s'", in, why ? why : "(none)", because);
    assert_string_equal(el_buf_str(&f->out), "KEEP");
}

static void test_ss(void **state)
{
    fx *f = *state;
    set_is(f, "red,green,blue", ',', false, "{\"SS\":[\"blue\",\"green\",\"red\"]}", 12);
    set_is(f, "b,a,b,a", ',', false, "{\"SS\":[\"a\",\"b\"]}", 2); /* duplicates collapse */
    set_is(f, "solo", ',', false, "{\"SS\":[\"solo\"]}", 4);
    set_is(f, "a,,b,", ',', false, "{\"SS\":[\"a\",\"b\"]}", 2); /* empty members skipped */
    set_is(f, " a,a", ',', false, "{\"SS\":[\" a\",\"a\"]}", 3); /* kept byte for byte */
    set_is(f, "x;y,z;x", ';', false, "{\"SS\":[\"x\",\"y,z\"]}", 4);
    set_is(f, "q\"t|\xc3\xa9", '|', false, "{\"SS\":[\"q\\\"t\",\"\xc3\xa9\"]}", 5);
    set_is(f, "ab,a", ',', false, "{\"SS\":[\"a\",\"ab\"]}", 3);
    /* no members: nothing written, size 0 (the attribute is omitted) */
    set_is(f, "", ',', false, "", 0);
    set_is(f, ",,,", ',', false, "", 0);
    set_refused(f, "ok,\xff\xfe", false, BIG, "invalid UTF-8 at byte 4");
    set_refused(f, "abc,def", false, 5, "larger than an item");
}

static void test_ns(void **state)
{
    fx *f = *state;
    /* 1.5 and 1.50 are one number; the first written is kept; '+' dropped */
    set_is(f, "1.5, 1.50,2, +3", ',', true, "{\"NS\":[\"1.5\",\"2\",\"3\"]}", 6);
    set_is(f, "1.50,1.5", ',', true, "{\"NS\":[\"1.50\"]}", 2);
    set_is(f, "10;2;-7", ';', true, "{\"NS\":[\"-7\",\"10\",\"2\"]}", 6);
    set_is(f, "1e2,100,100.0", ',', true, "{\"NS\":[\"1e2\"]}", 2);
    set_is(f, "12345678901234567890123456789012345678", ',', true,
           "{\"NS\":[\"12345678901234567890123456789012345678\"]}", 20);
    set_is(f, " , ", ',', true, "", 0);
    set_is(f, "", ',', true, "", 0);
    set_refused(f, "1,x", true, BIG, "member 'x' is not a DynamoDB number");
    set_refused(f, "1,1e126", true, BIG, "9.99E+125");
    set_refused(f, "1,123456789012345678901234567890123456789", true, BIG, "38 significant");
    set_refused(f, "1,2 3", true, BIG, "not a number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_scalars),
        cmocka_unit_test(test_json_containers),
        cmocka_unit_test(test_json_strings_escaped),
        cmocka_unit_test(test_json_numbers_exact),
        cmocka_unit_test(test_json_numbers_out_of_range),
        cmocka_unit_test(test_json_depth),
        cmocka_unit_test(test_json_invalid),
        cmocka_unit_test(test_json_duplicate_names),
        cmocka_unit_test(test_json_max_size),
        cmocka_unit_test(test_json_reuse_after_reject),
        cmocka_unit_test(test_ss),
        cmocka_unit_test(test_ns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
