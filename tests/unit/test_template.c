/*
 * test_template.c - key and attribute templates: parsing literals,
 * placeholders and {{ }}, the usage errors, binding to a schema and
 * rendering rows (NULL and empty placeholders reported, not fatal).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>  /* strlen, strstr */

#include "pipeline/template.h"

static char *col_names[] = { "follower_id", "followee_id", "created_at" };
static el_coltype col_types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
static const el_schema schema = { 3, col_names, col_types, NULL };

static el_template *parse_ok(const char *text)
{
    el_template *t = NULL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_template_parse(text, &t, &d);
    if (err)
        fail_msg("'%s': %s", text, d.msg);
    assert_non_null(t);
    assert_string_equal(el_template_text(t), text);
    return t;
}

static void parse_bad(const char *text, uint64_t column, const char *msg_part)
{
    el_template *t = (el_template *)&t;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_template_parse(text, &t, &d), EL_EUSAGE);
    assert_null(t);
    assert_int_equal(d.column, column);
    if (!strstr(d.msg, msg_part))
        fail_msg("'%s': message '%s' lacks '%s'", text, d.msg, msg_part);
    assert_non_null(strstr(d.msg, text));   /* the template is quoted */
}

/* Renders t for a row of values (NULL pointer = SQL NULL). */
static void render_is(el_template *t, const char *const vals[3], const char *want,
                      size_t want_empty)
{
    el_value v[3];
    for (size_t i = 0; i < 3; i++) {
        v[i].data = vals[i] ? vals[i] : "";
        v[i].len = vals[i] ? strlen(vals[i]) : 0;
        v[i].is_null = vals[i] == NULL;
    }
    el_row row = { 3, v, 1, 0 };
    el_buf b;
    el_buf_init(&b, 4096);
    size_t empty = 12345;
    assert_int_equal(el_template_render(t, &row, &b, &empty), EL_OK);
    assert_string_equal(el_buf_str(&b), want);
    assert_int_equal(empty, want_empty);
    el_buf_free(&b);
}

static void test_literal(void **state)
{
    (void)state;
    el_template *t = parse_ok("PROFILE");
    assert_true(el_template_is_literal(t));
    assert_int_equal(el_template_nrefs(t), 0);
    assert_null(el_template_ref_name(t, 0));
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    const char *const vals[3] = { "a", "b", "c" };
    render_is(t, vals, "PROFILE", (size_t)-1);
    el_template_free(t);

    t = parse_ok("");
    assert_true(el_template_is_literal(t));
    render_is(t, vals, "", (size_t)-1);
    el_template_free(t);
    el_template_free(NULL);
}

static void test_placeholders(void **state)
{
    (void)state;
    el_template *t = parse_ok("ACTOR#{follower_id}");
    assert_false(el_template_is_literal(t));
    assert_int_equal(el_template_nrefs(t), 1);
    assert_string_equal(el_template_ref_name(t, 0), "follower_id");
    assert_int_equal(el_template_ref_index(t, 0), (size_t)-1);   /* not bound yet */
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    assert_int_equal(el_template_ref_index(t, 0), 0);
    const char *const vals[3] = { "alice", "bob", "1718900000" };
    render_is(t, vals, "ACTOR#alice", (size_t)-1);
    el_template_free(t);

    t = parse_ok("{followee_id}#{follower_id}:{created_at}{follower_id}");
    assert_int_equal(el_template_nrefs(t), 4);
    assert_string_equal(el_template_ref_name(t, 2), "created_at");
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    assert_int_equal(el_template_ref_index(t, 0), 1);
    assert_int_equal(el_template_ref_index(t, 2), 2);
    assert_int_equal(el_template_ref_index(t, 9), (size_t)-1);
    render_is(t, vals, "bob#alice:1718900000alice", (size_t)-1);
    el_template_free(t);

    /* names with spaces and UTF-8 are just names */
    t = parse_ok("X#{na me}/{caf\xc3\xa9}");
    assert_string_equal(el_template_ref_name(t, 0), "na me");
    assert_string_equal(el_template_ref_name(t, 1), "caf\xc3\xa9");
    el_template_free(t);
}

static void test_literal_braces(void **state)
{
    (void)state;
    el_template *t = parse_ok("{{literal}}");
    assert_true(el_template_is_literal(t));
    const char *const vals[3] = { "alice", "bob", "x" };
    render_is(t, vals, "{literal}", (size_t)-1);
    el_template_free(t);

    t = parse_ok("{{{follower_id}}}");
    assert_int_equal(el_template_nrefs(t), 1);
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    render_is(t, vals, "{alice}", (size_t)-1);
    el_template_free(t);

    t = parse_ok("a}}b{{c{followee_id}}}");
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    render_is(t, vals, "a}b{cbob}", (size_t)-1);
    el_template_free(t);
}

static void test_parse_errors(void **state)
{
    (void)state;
    parse_bad("ACTOR#{follower_id", 7, "unclosed");
    parse_bad("{", 1, "unclosed");
    parse_bad("a{b{c}", 2, "unclosed");
    parse_bad("x{}", 2, "empty placeholder");
    parse_bad("{}", 1, "empty placeholder");
    parse_bad("a}", 2, "unmatched");
    parse_bad("}", 1, "unmatched");
    parse_bad("{a}}x", 4, "unmatched");
    parse_bad("{{x}", 4, "unmatched");
}

static void test_bind_unknown_column_lists_columns(void **state)
{
    (void)state;
    el_template *t = parse_ok("USER#{user_id}");
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_template_bind(t, &schema, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "unknown column 'user_id'"));
    assert_non_null(strstr(d.msg, "USER#{user_id}"));
    assert_non_null(strstr(d.msg, "follower_id, followee_id, created_at"));
    /* a later bind against a schema that has it works */
    char *names2[] = { "x", "user_id" };
    el_coltype types2[] = { EL_COL_TEXT, EL_COL_TEXT };
    el_schema s2 = { 2, names2, types2, NULL };
    assert_int_equal(el_template_bind(t, &s2, &d), EL_OK);
    assert_int_equal(el_template_ref_index(t, 0), 1);
    /* and names are case-sensitive */
    el_template *t2 = parse_ok("{Follower_id}");
    assert_int_equal(el_template_bind(t2, &schema, &d), EL_EUSAGE);
    /* no columns at all */
    el_schema none = { 0, NULL, NULL, NULL };
    assert_int_equal(el_template_bind(t2, &none, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "(none)"));
    el_template_free(t2);
    el_template_free(t);
}

static void test_list_columns_truncates(void **state)
{
    (void)state;
    char out[16];
    el_schema_list_columns(&schema, out, sizeof out);
    assert_int_equal(strlen(out), sizeof out - 1);
    assert_memory_equal(out, "follower_id, fo", 15);
    char big[200];
    el_schema_list_columns(&schema, big, sizeof big);
    assert_string_equal(big, "follower_id, followee_id, created_at");
}

static void test_render_null_and_empty(void **state)
{
    (void)state;
    el_template *t = parse_ok("A#{follower_id}#{followee_id}#{created_at}");
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    const char *const null_mid[3] = { "alice", NULL, "x" };
    render_is(t, null_mid, "A#alice##x", 1);       /* rendering goes on */
    const char *const empty_first[3] = { "", "bob", NULL };
    render_is(t, empty_first, "A##bob#", 0);       /* the first one is reported */
    const char *const all[3] = { "a", "b", "c" };
    render_is(t, all, "A#a#b#c", (size_t)-1);
    el_template_free(t);
}

static void test_render_appends_and_respects_cap(void **state)
{
    (void)state;
    el_template *t = parse_ok("K#{follower_id}");
    assert_int_equal(el_template_bind(t, &schema, NULL), EL_OK);
    el_value v[3] = { { "0123456789", 10, false }, { "", 0, true }, { "", 0, true } };
    el_row row = { 3, v, 1, 0 };
    el_buf b;
    el_buf_init(&b, 14);
    assert_int_equal(el_buf_puts(&b, ">"), EL_OK);
    size_t empty;
    assert_int_equal(el_template_render(t, &row, &b, &empty), EL_OK);
    assert_string_equal(el_buf_str(&b), ">K#0123456789");
    el_buf_reset(&b);
    assert_int_equal(el_buf_puts(&b, ">>"), EL_OK);
    assert_int_equal(el_template_render(t, &row, &b, &empty), EL_ELIMIT);
    el_buf_free(&b);
    el_template_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal),
        cmocka_unit_test(test_placeholders),
        cmocka_unit_test(test_literal_braces),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_bind_unknown_column_lists_columns),
        cmocka_unit_test(test_list_columns_truncates),
        cmocka_unit_test(test_render_null_and_empty),
        cmocka_unit_test(test_render_appends_and_respects_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
