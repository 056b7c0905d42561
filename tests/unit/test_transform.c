/*
 * test_transform.c - rows to the exact DynamoDB JSON of the README's edge and entity items, and
 * every reason a row is rejected (naming the column).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* strlen, strstr */

#include "pipeline/rows/transform.h"

/* ---- fixtures ---- */

typedef struct fx {
    el_mapping *m;
    el_schema schema;
    el_transform *t;
} fx;

/* Parses a one-source mapping (source body given) and binds it to columns. */
static void fx_open(fx *f, const char *mapping_json, size_t ncols, char **names,
                    el_coltype *types)
{
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_mapping_parse(mapping_json, strlen(mapping_json), NULL, &f->m, &d);
    if (err)
        fail_msg("mapping: %s", d.msg);
    f->schema = (el_schema){ ncols, names, types, NULL, NULL };
    err = el_source_bind(f->m->sources[0], &f->schema, &d);
    if (err)
        fail_msg("bind: %s", d.msg);
    assert_int_equal(el_transform_new(f->m, f->m->sources[0], &f->t), EL_OK);
}

static void fx_close(fx *f)
{
    el_transform_free(f->t);
    el_mapping_free(f->m);
}

typedef struct out {
    el_buf json, key;
    size_t size;
    el_diag d;
    el_err err;
} out;

/* Transforms one row of text values (NULL = SQL NULL) at line 7. */
static void run_row_len(fx *f, size_t n, const char *const *vals, const size_t *lens, out *o)
{
    el_value v[16];
    assert_true(n <= 16);
    for (size_t i = 0; i < n; i++) {
        v[i].data = vals[i] ? vals[i] : "";
        v[i].len = vals[i] ? (lens ? lens[i] : strlen(vals[i])) : 0;
        v[i].is_null = vals[i] == NULL;
    }
    el_row row = { n, v, 7, 700 };
    el_buf_init(&o->json, 16u << 20);
    el_buf_init(&o->key, 1u << 20);
    o->size = 0;
    el_diag_clear(&o->d);
    o->err = el_transform_row(f->t, &row, &o->json, &o->key, &o->size, &o->d);
}

static void run_row(fx *f, size_t n, const char *const *vals, out *o)
{
    run_row_len(f, n, vals, NULL, o);
}

static void out_free(out *o)
{
    el_buf_free(&o->json);
    el_buf_free(&o->key);
}

static void expect_item(fx *f, size_t n, const char *const *vals, const char *want_json,
                        const char *want_pk, const char *want_sk)
{
    out o;
    run_row(f, n, vals, &o);
    if (o.err)
        fail_msg("row rejected (%d): %s", o.err, o.d.msg);
    assert_string_equal(el_buf_str(&o.json), want_json);
    size_t pl = strlen(want_pk), sl = strlen(want_sk);
    assert_int_equal(o.key.len, pl + 1 + sl);
    assert_memory_equal(o.key.data, want_pk, pl);
    assert_int_equal(o.key.data[pl], '\0');
    assert_memory_equal(o.key.data + pl + 1, want_sk, sl);
    assert_true(o.size > 0);
    out_free(&o);
}

static void expect_reject(fx *f, size_t n, const char *const *vals, uint64_t column,
                          const char *part1, const char *part2)
{
    out o;
    run_row(f, n, vals, &o);
    assert_int_equal(o.err, EL_EREJECT);
    assert_int_equal(o.json.len, 0);
    assert_int_equal(o.key.len, 0);
    assert_int_equal(o.d.line, 7);
    assert_int_equal(o.d.offset, 700);
    assert_int_equal(o.d.column, column);
    if (part1 && !strstr(o.d.msg, part1))
        fail_msg("reason '%s' lacks '%s'", o.d.msg, part1);
    if (part2 && !strstr(o.d.msg, part2))
        fail_msg("reason '%s' lacks '%s'", o.d.msg, part2);
    out_free(&o);
}

#define V(...) (const char *const[]){ __VA_ARGS__ }

static char *follow_names[] = { "follower_id", "followee_id", "created_at" };
static el_coltype text3[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };

static const char *follows_mapping =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"follows\","
    "\"pk\":\"ACTOR#{follower_id}\",\"sk\":\"TARGET#{followee_id}\","
    "\"attributes\":{\"createdAt\":{\"column\":\"created_at\",\"type\":\"epoch\"},"
    "\"edgeType\":{\"value\":\"FOLLOWS\"}}}]}";

/* ---- the README's items ---- */

static void test_follow_edge(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, follows_mapping, 3, follow_names, text3);
    expect_item(&f, 3, V("alice", "bob", "2024-06-20 16:13:20"),
                "{\"PK\":{\"S\":\"ACTOR#alice\"},\"SK\":{\"S\":\"TARGET#bob\"},"
                "\"GSI1PK\":{\"S\":\"TARGET#bob\"},\"GSI1SK\":{\"S\":\"ACTOR#alice\"},"
                "\"createdAt\":{\"N\":\"1718900000\"},\"edgeType\":{\"S\":\"FOLLOWS\"}}",
                "ACTOR#alice", "TARGET#bob");
    expect_item(&f, 3, V("alice", "carol", "1718900100"),
                "{\"PK\":{\"S\":\"ACTOR#alice\"},\"SK\":{\"S\":\"TARGET#carol\"},"
                "\"GSI1PK\":{\"S\":\"TARGET#carol\"},\"GSI1SK\":{\"S\":\"ACTOR#alice\"},"
                "\"createdAt\":{\"N\":\"1718900100\"},\"edgeType\":{\"S\":\"FOLLOWS\"}}",
                "ACTOR#alice", "TARGET#carol");
    expect_item(&f, 3, V("dave", "bob", "2024-06-20T16:16:40Z"),
                "{\"PK\":{\"S\":\"ACTOR#dave\"},\"SK\":{\"S\":\"TARGET#bob\"},"
                "\"GSI1PK\":{\"S\":\"TARGET#bob\"},\"GSI1SK\":{\"S\":\"ACTOR#dave\"},"
                "\"createdAt\":{\"N\":\"1718900200\"},\"edgeType\":{\"S\":\"FOLLOWS\"}}",
                "ACTOR#dave", "TARGET#bob");
    /* a bad timestamp rejects naming the column */
    expect_reject(&f, 3, V("dave", "bob", "yesterday"), 3, "created_at", "not a date");
    fx_close(&f);
}

/* An epoch's DynamoDB size is that of the number it becomes: a byte per two
 * significant digits, trailing zeros not significant, plus one. */
static void test_epoch_size(void **state)
{
    (void)state;
    static char *names[] = { "id", "ts" };
    static el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT };
    fx f;
    fx_open(&f,
            "{\"table\":\"Graph\",\"sources\":[{\"name\":\"e\",\"pk\":\"E#{id}\","
            "\"sk\":\"X\",\"index\":false,"
            "\"attributes\":{\"t\":{\"column\":\"ts\",\"type\":\"epoch\"}}}]}",
            2, names, types);
    static const struct {
        const char *ts, *n;
        size_t size;
    } cases[] = {
        { "1718900000", "1718900000", 4 },           /* 17189: 5 digits */
        { "1718900123", "1718900123", 6 },           /* 10 digits */
        { "1970-01-01 00:00:00", "0", 1 },
        { "1970-01-01 00:00:10", "10", 2 },
        { "1969-12-31 23:59:50", "-10", 2 },         /* the sign is not a digit */
        { "2024-01-01 00:00:00", "1704067200", 5 },  /* 17040672: 8 digits */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        out o;
        run_row(&f, 2, V("a", cases[i].ts), &o);
        assert_int_equal(o.err, EL_OK);
        char want[128];
        snprintf(want, sizeof want,
                 "{\"PK\":{\"S\":\"E#a\"},\"SK\":{\"S\":\"X\"},\"t\":{\"N\":\"%s\"}}",
                 cases[i].n);
        assert_string_equal(el_buf_str(&o.json), want);
        assert_int_equal(o.size, (2 + 3) + (2 + 1) + (1 + cases[i].size));
        out_free(&o);
    }
    fx_close(&f);
}

static void test_entity_without_index(void **state)
{
    (void)state;
    static char *names[] = { "id", "name", "email" };
    fx f;
    fx_open(&f,
            "{\"table\":\"Graph\",\"sources\":[{\"name\":\"students\",\"pk\":\"STU#{id}\","
            "\"sk\":\"PROFILE\",\"index\":false,"
            "\"attributes\":{\"name\":\"name\",\"email\":{\"column\":\"email\"}}}]}",
            3, names, text3);
    out o;
    run_row(&f, 3, V("a91", "Ann", "a@x"), &o);
    assert_int_equal(o.err, EL_OK);
    assert_string_equal(el_buf_str(&o.json),
                        "{\"PK\":{\"S\":\"STU#a91\"},\"SK\":{\"S\":\"PROFILE\"},"
                        "\"name\":{\"S\":\"Ann\"},\"email\":{\"S\":\"a@x\"}}");
    /* DynamoDB's size: attribute names plus value bytes */
    assert_int_equal(o.size, (2 + 7) + (2 + 7) + (4 + 3) + (5 + 3));
    out_free(&o);
    fx_close(&f);
}

static void test_course_with_index_templates(void **state)
{
    (void)state;
    static char *names[] = { "id", "title", "credits" };
    fx f;
    fx_open(&f,
            "{\"table\":\"Graph\",\"sources\":[{\"name\":\"courses\",\"pk\":\"CRS#{id}\","
            "\"sk\":\"META\",\"index_pk\":\"CRS#{id}\",\"index_sk\":\"META\","
            "\"attributes\":{\"title\":\"title\",\"credits\":{\"column\":\"credits\","
            "\"type\":\"N\"}}}]}",
            3, names, text3);
    expect_item(&f, 3, V("math204", "Linear \"Algebra\"", "4"),
                "{\"PK\":{\"S\":\"CRS#math204\"},\"SK\":{\"S\":\"META\"},"
                "\"GSI1PK\":{\"S\":\"CRS#math204\"},\"GSI1SK\":{\"S\":\"META\"},"
                "\"title\":{\"S\":\"Linear \\\"Algebra\\\"\"},\"credits\":{\"N\":\"4\"}}",
                "CRS#math204", "META");
    fx_close(&f);
}

static void test_enrollment_edge(void **state)
{
    (void)state;
    static char *names[] = { "student_id", "course_id", "grade", "enrolled_on" };
    static el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
    fx f;
    fx_open(&f,
            "{\"table\":\"Graph\",\"sources\":[{\"name\":\"enrollments\","
            "\"pk\":\"STU#{student_id}\",\"sk\":\"ENROLL#CRS#{course_id}\","
            "\"index_pk\":\"CRS#{course_id}\",\"index_sk\":\"STU#{student_id}\","
            "\"attributes\":{\"grade\":\"grade\",\"enrolledOn\":\"enrolled_on\"}}]}",
            4, names, types);
    expect_item(&f, 4, V("a91", "math204", "A-", "2024-01-15"),
                "{\"PK\":{\"S\":\"STU#a91\"},\"SK\":{\"S\":\"ENROLL#CRS#math204\"},"
                "\"GSI1PK\":{\"S\":\"CRS#math204\"},\"GSI1SK\":{\"S\":\"STU#a91\"},"
                "\"grade\":{\"S\":\"A-\"},\"enrolledOn\":{\"S\":\"2024-01-15\"}}",
                "STU#a91", "ENROLL#CRS#math204");
    /* SQL NULL omits the attribute, empty text is an empty S */
    expect_item(&f, 4, V("a91", "cs101", NULL, ""),
                "{\"PK\":{\"S\":\"STU#a91\"},\"SK\":{\"S\":\"ENROLL#CRS#cs101\"},"
                "\"GSI1PK\":{\"S\":\"CRS#cs101\"},\"GSI1SK\":{\"S\":\"STU#a91\"},"
                "\"enrolledOn\":{\"S\":\"\"}}",
                "STU#a91", "ENROLL#CRS#cs101");
    fx_close(&f);
}

static void test_null_type(void **state)
{
    (void)state;
    static char *names[] = { "id", "x", "y" };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"x\":{\"column\":\"x\",\"type\":\"NULL\"},"
            "\"y\":{\"column\":\"y\"},\"z\":{\"value\":null}}}]}",
            3, names, text3);
    expect_item(&f, 3, V("1", NULL, NULL),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"x\":{\"NULL\":true},"
                "\"z\":{\"NULL\":true}}",
                "K#1", "S");
    /* a type NULL column with a value is typed as auto */
    expect_item(&f, 3, V("1", "v", "w"),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"x\":{\"S\":\"v\"},"
                "\"y\":{\"S\":\"w\"},\"z\":{\"NULL\":true}}",
                "K#1", "S");
    fx_close(&f);
}

/* ---- rejects ---- */

static void test_empty_or_null_keys_reject(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, follows_mapping, 3, follow_names, text3);
    expect_reject(&f, 3, V("", "bob", "1"), 1, "'follower_id'", "empty");
    expect_reject(&f, 3, V("alice", NULL, "1"), 2, "'followee_id'", "NULL");
    fx_close(&f);

    /* a key that renders to nothing at all */
    static char *names[] = { "a", "b", "c" };
    fx_open(&f, "{\"table\":\"T\",\"sources\":[{\"pk\":\"{a}\",\"sk\":\"x\"}]}", 3, names,
            text3);
    expect_reject(&f, 3, V("", "b", "c"), 1, "PK", "'a'");
    fx_close(&f);
}

static void test_invalid_number_rejects(void **state)
{
    (void)state;
    static char *names[] = { "id", "qty", "c" };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\","
            "\"attributes\":{\"quantity\":{\"column\":\"qty\",\"type\":\"N\"}}}]}",
            3, names, text3);
    expect_reject(&f, 3, V("1", "12abc", "x"), 2, "invalid number", "'qty'");
    expect_reject(&f, 3, V("1", "123456789012345678901234567890123456789", "x"), 2,
                  "38 significant digits", "'qty'");
    expect_reject(&f, 3, V("1", "", "x"), 2, "'qty'", NULL);
    expect_item(&f, 3, V("1", "+12.50", "x"),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"GSI1PK\":{\"S\":\"S\"},"
                "\"GSI1SK\":{\"S\":\"K#1\"},\"quantity\":{\"N\":\"12.50\"}}",
                "K#1", "S");
    fx_close(&f);

    /* a constant that is not a number names the attribute */
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\","
            "\"attributes\":{\"w\":{\"value\":\"heavy\",\"type\":\"N\"}}}]}",
            3, names, text3);
    expect_reject(&f, 3, V("1", "2", "3"), 0, "invalid number", "'w'");
    fx_close(&f);
}

static void test_invalid_utf8_rejects(void **state)
{
    (void)state;
    static char *names[] = { "id", "name", "c" };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"name\":\"name\",\"label\":{\"template\":\"<{c}>\"}}}]}",
            3, names, text3);
    expect_reject(&f, 3, V("1", "Jos\xe9", "c"), 2, "invalid UTF-8", "'name'");
    expect_reject(&f, 3, V("1", "ok", "\xff"), 0, "invalid UTF-8", "'label'");
    /* a key names the column the bad bytes came from */
    expect_reject(&f, 3, V("\xc3\x28", "ok", "c"), 1, "invalid UTF-8 in column 'id'", "PK");
    expect_item(&f, 3, V("\xf0\x9f\x98\x80", "Jos\xc3\xa9", "c"),
                "{\"PK\":{\"S\":\"K#\xf0\x9f\x98\x80\"},\"SK\":{\"S\":\"S\"},"
                "\"name\":{\"S\":\"Jos\xc3\xa9\"},\"label\":{\"S\":\"<c>\"}}",
                "K#\xf0\x9f\x98\x80", "S");
    fx_close(&f);
}

static void test_bool_and_binary(void **state)
{
    (void)state;
    static char *names[] = { "id", "active", "blob" };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"active\":{\"column\":\"active\",\"type\":\"BOOL\"},"
            "\"blob\":{\"column\":\"blob\",\"type\":\"B\"},"
            "\"on\":{\"value\":true},\"off\":{\"value\":false}}}]}",
            3, names, text3);
    expect_item(&f, 3, V("1", "t", "foobar"),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"active\":{\"BOOL\":true},"
                "\"blob\":{\"B\":\"Zm9vYmFy\"},\"on\":{\"BOOL\":true},\"off\":{\"BOOL\":false}}",
                "K#1", "S");
    expect_item(&f, 3, V("1", "f", ""),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"active\":{\"BOOL\":false},"
                "\"blob\":{\"B\":\"\"},\"on\":{\"BOOL\":true},\"off\":{\"BOOL\":false}}",
                "K#1", "S");
    expect_reject(&f, 3, V("1", "maybe", "x"), 2, "not a boolean", "'active'");
    /* binary bytes, NULs included */
    out o;
    size_t lens[] = { 1, 1, 3 };
    run_row_len(&f, 3, V("1", "1", "\xff\x00\xfe"), lens, &o);
    assert_int_equal(o.err, EL_OK);
    assert_non_null(strstr(el_buf_str(&o.json), "\"blob\":{\"B\":\"/wD+\"}"));
    out_free(&o);
    fx_close(&f);
}

static void test_auto_types_from_schema(void **state)
{
    (void)state;
    static char *names[] = { "id", "n", "b", "bin", "txt" };
    static el_coltype types[] = { EL_COL_TEXT, EL_COL_NUMBER, EL_COL_BOOL, EL_COL_BINARY,
                                  EL_COL_TEXT };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":\"*\"}]}",
            5, names, types);
    expect_item(&f, 5, V("1", "42.5", "true", "hi", "7"),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"id\":{\"S\":\"1\"},"
                "\"n\":{\"N\":\"42.5\"},\"b\":{\"BOOL\":true},\"bin\":{\"B\":\"aGk=\"},"
                "\"txt\":{\"S\":\"7\"}}",
                "K#1", "S");
    /* NULLs are left out, and a bad value in a number column rejects */
    expect_item(&f, 5, V("1", NULL, NULL, NULL, NULL),
                "{\"PK\":{\"S\":\"K#1\"},\"SK\":{\"S\":\"S\"},\"id\":{\"S\":\"1\"}}", "K#1", "S");
    expect_reject(&f, 5, V("1", "x1", "t", "", ""), 2, "'n'", NULL);
    fx_close(&f);
}

static void test_star_never_repeats_a_name(void **state)
{
    (void)state;
    /* columns named like the key attributes, the index's, or an attribute
     * the mapping gives itself are not copied a second time */
    static char *names[] = { "id", "PK", "SK", "GSI1PK", "note", "other" };
    static el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT,
                                  EL_COL_TEXT, EL_COL_TEXT };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"U#{id}\",\"sk\":\"P\",\"attributes\":\"*\"},"
            "{\"name\":\"x\",\"pk\":\"A\",\"sk\":\"B\"}]}",
            6, names, types);
    expect_item(&f, 6, V("1", "x", "y", "z", "n", "o"),
                "{\"PK\":{\"S\":\"U#1\"},\"SK\":{\"S\":\"P\"},\"GSI1PK\":{\"S\":\"P\"},"
                "\"GSI1SK\":{\"S\":\"U#1\"},\"id\":{\"S\":\"1\"},\"note\":{\"S\":\"n\"},"
                "\"other\":{\"S\":\"o\"}}",
                "U#1", "P");
    fx_close(&f);
    /* an explicit attribute wins over the column copy; without an index its
     * attribute names are free */
    el_diag d;
    el_mapping *m;
    const char *json =
        "{\"table\":\"T\",\"sources\":[{\"pk\":\"U#{id}\",\"sk\":\"P\",\"index\":false,"
        "\"attributes\":\"*\"}]}";
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    assert_int_equal(el_source_add_attr(m->sources[0], "note", EL_ATTR_VALUE, "fixed",
                                        EL_TYPE_S, &d), EL_OK);
    f.m = m;
    f.schema = (el_schema){ 6, names, types, NULL, NULL };
    assert_int_equal(el_source_bind(m->sources[0], &f.schema, &d), EL_OK);
    assert_int_equal(el_transform_new(m, m->sources[0], &f.t), EL_OK);
    expect_item(&f, 6, V("1", "x", "y", "z", "n", "o"),
                "{\"PK\":{\"S\":\"U#1\"},\"SK\":{\"S\":\"P\"},\"id\":{\"S\":\"1\"},"
                "\"GSI1PK\":{\"S\":\"z\"},\"other\":{\"S\":\"o\"},\"note\":{\"S\":\"fixed\"}}",
                "U#1", "P");
    fx_close(&f);
}

static void test_item_over_400k_rejects(void **state)
{
    (void)state;
    static char *names[] = { "id", "a", "b" };
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"a\":\"a\",\"b\":\"b\"}}]}",
            3, names, text3);
    size_t n = 210 * 1024;
    char *big = malloc(n + 1);
    assert_non_null(big);
    memset(big, 'x', n);
    big[n] = '\0';
    expect_reject(&f, 3, V("1", big, big), 0, "more than DynamoDB's 400 KB", NULL);
    fx_close(&f);
    /* a template attribute bigger than an item */
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"ab\":{\"template\":\"{a}{b}\"}}}]}",
            3, names, text3);
    expect_reject(&f, 3, V("1", big, big), 0, "'ab'", "larger than an item");
    fx_close(&f);
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"pk\":\"K#{id}\",\"sk\":\"S\",\"index\":false,"
            "\"attributes\":{\"a\":\"a\",\"b\":\"b\"}}]}",
            3, names, text3);
    /* one of them alone fits */
    out o;
    run_row(&f, 3, V("1", big, NULL), &o);
    assert_int_equal(o.err, EL_OK);
    assert_int_equal(o.size, (2 + 3) + (2 + 1) + 1 + n);
    out_free(&o);
    free(big);
    fx_close(&f);
}

static void test_key_length_limits(void **state)
{
    (void)state;
    static char *names[] = { "id", "s", "c" };
    fx f;
    fx_open(&f, "{\"table\":\"T\",\"sources\":[{\"pk\":\"{id}\",\"sk\":\"{s}\"}]}", 3, names,
            text3);
    char pk[2050], sk[1030];
    memset(pk, 'p', sizeof pk);
    memset(sk, 's', sizeof sk);
    pk[2048] = '\0';
    sk[1024] = '\0';
    out o;
    run_row(&f, 3, V(pk, sk, "c"), &o);   /* exactly at DynamoDB's limits */
    assert_int_equal(o.err, EL_OK);
    out_free(&o);
    pk[2048] = 'p';
    pk[2049] = '\0';
    expect_reject(&f, 3, V(pk, sk, "c"), 0, "PK", "2048");
    pk[2048] = '\0';
    sk[1024] = 's';
    sk[1025] = '\0';
    expect_reject(&f, 3, V(pk, sk, "c"), 0, "SK", "1024");
    fx_close(&f);
}

static void test_buffers_append_and_are_restored_on_reject(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, follows_mapping, 3, follow_names, text3);
    el_buf json, key;
    el_buf_init(&json, 1 << 20);
    el_buf_init(&key, 1 << 20);
    assert_int_equal(el_buf_puts(&json, "PREV"), EL_OK);
    assert_int_equal(el_buf_append(&key, "K1\0S1", 5), EL_OK);
    el_value v[3] = { { "alice", 5, false }, { "bob", 3, false }, { "nope", 4, false } };
    el_row row = { 3, v, 2, 10 };
    size_t size = 99;
    el_diag d;
    assert_int_equal(el_transform_row(f.t, &row, &json, &key, &size, &d), EL_EREJECT);
    assert_string_equal(el_buf_str(&json), "PREV");
    assert_int_equal(key.len, 5);
    assert_int_equal(size, 99);
    v[2] = (el_value){ "0", 1, false };
    assert_int_equal(el_transform_row(f.t, &row, &json, &key, &size, &d), EL_OK);
    const char head[] = "PREV{\"PK\":{\"S\":\"ACTOR#alice\"}";
    assert_memory_equal(json.data, head, sizeof head - 1);
    assert_int_equal(key.len, 5 + strlen("ACTOR#alice") + 1 + strlen("TARGET#bob"));
    assert_memory_equal(key.data, "K1\0S1ACTOR#alice\0TARGET#bob", key.len);
    el_buf_free(&json);
    el_buf_free(&key);
    fx_close(&f);
}

static void test_renamed_key_attributes(void **state)
{
    (void)state;
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"key\":{\"pk\":\"pk\",\"sk\":\"sk\"},"
            "\"index\":{\"name\":\"Inv\",\"pk\":\"ipk\",\"sk\":\"isk\"},"
            "\"sources\":[{\"pk\":\"A#{follower_id}\",\"sk\":\"B#{followee_id}\","
            "\"attributes\":{\"at\":{\"template\":\"{created_at}!\"}}}]}",
            3, follow_names, text3);
    expect_item(&f, 3, V("x", "y", "z"),
                "{\"pk\":{\"S\":\"A#x\"},\"sk\":{\"S\":\"B#y\"},\"ipk\":{\"S\":\"B#y\"},"
                "\"isk\":{\"S\":\"A#x\"},\"at\":{\"S\":\"z!\"}}",
                "A#x", "B#y");
    fx_close(&f);
}

/* ---- json, SS and NS ---- */

static char *struct_names[] = { "id", "doc", "tags", "nums" };
static el_coltype struct_types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };

static const char *struct_mapping =
    "{\"table\":\"T\",\"sources\":[{\"name\":\"s\",\"pk\":\"ID#{id}\",\"sk\":\"X\","
    "\"index\":false,\"attributes\":{"
    "\"doc\":{\"column\":\"doc\",\"type\":\"json\"},"
    "\"tags\":{\"column\":\"tags\",\"type\":\"SS\"},"
    "\"nums\":{\"column\":\"nums\",\"type\":\"NS\",\"delimiter\":\";\"}}}]}";

#define STRUCT_KEYS "{\"PK\":{\"S\":\"ID#1\"},\"SK\":{\"S\":\"X\"}"

static void test_json_and_sets(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, struct_mapping, 4, struct_names, struct_types);
    expect_item(&f, 4, V("1", "{\"a\":[1.50,\"x\",true,null],\"b\":{}}", "b,a,b", "2;1.0;1"),
                STRUCT_KEYS ",\"doc\":{\"M\":{\"a\":{\"L\":[{\"N\":\"1.50\"},{\"S\":\"x\"},"
                "{\"BOOL\":true},{\"NULL\":true}]},\"b\":{\"M\":{}}}},"
                "\"tags\":{\"SS\":[\"a\",\"b\"]},\"nums\":{\"NS\":[\"1.0\",\"2\"]}}",
                "ID#1", "X");
    /* the size: keys PK 2 + 4, SK 2 + 1; doc 3 + M(3 + a(1+1 + L(3 + 4*1 + 2+1+1+1))
     * + b(1+1+3)) = 3 + 3 + 14 + 5; tags 4 + 2; nums 4 + 2 + 2 */
    out o;
    run_row(&f, 4, V("1", "{\"a\":[1.50,\"x\",true,null],\"b\":{}}", "b,a,b", "2;1.0;1"), &o);
    assert_int_equal(o.err, EL_OK);
    assert_int_equal(o.size, 6 + 3 + (3 + 3 + 14 + 5) + 6 + 8);
    out_free(&o);
    /* empty sets and a NULL json leave their attributes out */
    expect_item(&f, 4, V("1", NULL, "", ";;"), STRUCT_KEYS "}", "ID#1", "X");
    expect_item(&f, 4, V("1", "\"s\"", ",", "7"),
                STRUCT_KEYS ",\"doc\":{\"S\":\"s\"},\"nums\":{\"NS\":[\"7\"]}}", "ID#1", "X");
    fx_close(&f);
}

static void test_json_and_sets_reject(void **state)
{
    (void)state;
    fx f;
    fx_open(&f, struct_mapping, 4, struct_names, struct_types);
    expect_reject(&f, 4, V("1", "{\"a\":", "", ""), 2, "column 'doc' as json", "not JSON");
    expect_reject(&f, 4, V("1", "", "", ""), 2, "column 'doc'", "empty, not JSON");
    expect_reject(&f, 4, V("1", "[1e200]", "", ""), 2, "column 'doc'", "9.99E+125");
    expect_reject(&f, 4, V("1", "{\"k\":1,\"k\":2}", "", ""), 2, "'doc'", "twice");
    expect_reject(&f, 4, V("1", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                           "", ""),
                  2, "'doc'", "32 levels");
    expect_reject(&f, 4, V("1", NULL, "a", "1;two"), 4, "column 'nums' as NS",
                  "member 'two' is not a DynamoDB number");
    expect_reject(&f, 4, V("1", NULL, "a,\xff", NULL), 3, "column 'tags' as SS", "UTF-8");
    fx_close(&f);
}

static void test_json_value_and_template(void **state)
{
    (void)state;
    fx f;
    fx_open(&f,
            "{\"table\":\"T\",\"sources\":[{\"name\":\"s\",\"pk\":\"ID#{id}\",\"sk\":\"X\","
            "\"index\":false,\"attributes\":{"
            "\"c\":{\"value\":\"{\\\"v\\\":2}\",\"type\":\"json\"},"
            "\"t\":{\"template\":\"[{id}]\",\"type\":\"json\"},"
            "\"s\":{\"template\":\"{id}|x\",\"type\":\"SS\",\"delimiter\":\"|\"}}}]}",
            4, struct_names, struct_types);
    expect_item(&f, 4, V("1", NULL, NULL, NULL),
                STRUCT_KEYS ",\"c\":{\"M\":{\"v\":{\"N\":\"2\"}}},\"t\":{\"L\":[{\"N\":\"1\"}]},"
                "\"s\":{\"SS\":[\"1\",\"x\"]}}",
                "ID#1", "X");
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_and_sets),
        cmocka_unit_test(test_json_and_sets_reject),
        cmocka_unit_test(test_json_value_and_template),
        cmocka_unit_test(test_follow_edge),
        cmocka_unit_test(test_entity_without_index),
        cmocka_unit_test(test_epoch_size),
        cmocka_unit_test(test_course_with_index_templates),
        cmocka_unit_test(test_enrollment_edge),
        cmocka_unit_test(test_null_type),
        cmocka_unit_test(test_empty_or_null_keys_reject),
        cmocka_unit_test(test_invalid_number_rejects),
        cmocka_unit_test(test_invalid_utf8_rejects),
        cmocka_unit_test(test_bool_and_binary),
        cmocka_unit_test(test_auto_types_from_schema),
        cmocka_unit_test(test_star_never_repeats_a_name),
        cmocka_unit_test(test_item_over_400k_rejects),
        cmocka_unit_test(test_key_length_limits),
        cmocka_unit_test(test_buffers_append_and_are_restored_on_reject),
        cmocka_unit_test(test_renamed_key_attributes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
