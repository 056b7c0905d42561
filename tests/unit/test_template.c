/*
 * test_template.c - key and attribute templates: parsing literals,
 * placeholders and {{ }}, the usage errors, binding to a schema and
 * rendering rows (NULL and empty placeholders reported, not fatal).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>  /* malloc, free */
#include <stdbool.h>  /* bool */
#include <stdio.h>   /* snprintf */
#include <string.h>  /* strlen, strstr, memcpy */
#if defined(__SANITIZE_ADDRESS__)
#define EL_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EL_TEST_ASAN 1
#endif
#endif
#ifdef EL_TEST_ASAN
/* bytes in use: the sanitizer runtime's own count. clang ships its header,
 * GCC (12) does not, though its libasan exports the function */
#if defined(__has_include) && __has_include(<sanitizer/allocator_interface.h>)
#include <sanitizer/allocator_interface.h> /* __sanitizer_get_current_allocated_bytes */
#else
size_t __sanitizer_get_current_allocated_bytes(void);
#endif
#else
#include <malloc.h>  /* mallinfo2: bytes in use, glibc */
#endif

#include "pipeline/rows/template.h"

static char *col_names[] = { "follower_id", "followee_id", "created_at" };
static el_coltype col_types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
static const el_schema schema = { 3, col_names, col_types, NULL, NULL };

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
    el_schema s2 = { 2, names2, types2, NULL, NULL };
    assert_int_equal(el_template_bind(t, &s2, &d), EL_OK);
    assert_int_equal(el_template_ref_index(t, 0), 1);
    /* and names are case-sensitive */
    el_template *t2 = parse_ok("{Follower_id}");
    assert_int_equal(el_template_bind(t2, &schema, &d), EL_EUSAGE);
    /* no columns at all */
    el_schema none = { 0, NULL, NULL, NULL, NULL };
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

/* Bytes the allocator has handed out and not had back. */
static size_t heap_in_use(void)
{
#ifdef EL_TEST_ASAN
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd; /* small blocks + mmapped ones */
#endif
}

/* n bytes of `unit` repeated (a whole number of units), NUL-terminated. */
static char *repeat(const char *unit, size_t n)
{
    size_t ul = strlen(unit), count = n / ul;
    char *s = malloc(count * ul + 1);
    assert_non_null(s);
    for (size_t i = 0; i < count; i++)
        memcpy(s + i * ul, unit, ul);
    s[count * ul] = '\0';
    return s;
}

/* A hostile template's plan costs memory in proportion to its text: 1 MB
 * of any shape stays under 10 MB parsed and bound (an earlier version took
 * 50-70 MB; docs/LIMITS.md). */
static void test_memory_in_proportion_to_text(void **state)
{
    (void)state;
    const char *shapes[] = { "{follower_id}", "{a}", "x{a}", "{{{a}", "{{}}{a}", "{{" };
    char *names[] = { "a", "follower_id" };
    el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT };
    el_schema s = { 2, names, types, NULL, NULL };
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        char *text = repeat(shapes[k], 1024 * 1024);
        size_t before = heap_in_use();
        el_template *t = NULL;
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_template_parse(text, &t, &d);
        size_t cost = heap_in_use() - before;
        if (err == EL_OK) {
            assert_int_equal(el_template_bind(t, &s, &d), EL_OK);
            cost = heap_in_use() - before;
            /* every placeholder is there, in order */
            assert_string_equal(el_template_ref_name(t, el_template_nrefs(t) - 1),
                                strcmp(shapes[k], "{follower_id}") ? "a" : "follower_id");
        } else {
            /* 1 MB of braces is more literal text than a template may hold */
            assert_int_equal(err, EL_EUSAGE);
            assert_non_null(strstr(d.msg, "literal text"));
        }
        print_message("  %-14s 1 MB: %s, %zu placeholders, %zu bytes\n", shapes[k],
                      err ? "refused" : "parsed", t ? el_template_nrefs(t) : 0, cost);
        assert_true(cost < 10u * 1024 * 1024);
        el_template_free(t);
        free(text);
    }
}

static void test_limits(void **state)
{
    (void)state;
    /* literal text up to the limit, braces counted unescaped */
    char *ok = repeat("{{", 2 * EL_TEMPLATE_MAX_LITERAL);
    el_template *t = parse_ok(ok);
    assert_true(el_template_is_literal(t));
    el_template_free(t);
    free(ok);
    char *over = repeat("x", EL_TEMPLATE_MAX_LITERAL + 1);
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_template_parse(over, &t, &d), EL_EUSAGE);
    assert_null(t);
    assert_non_null(strstr(d.msg, "65537 bytes of literal text"));
    free(over);
}

/* Binding many placeholders against a wide schema is linear: 300,000
 * placeholders against 10,000 columns (a quadratic bind took minutes). */
static void test_bind_wide_schema(void **state)
{
    (void)state;
    enum { NCOLS = 10000 };
    char **names = malloc(NCOLS * sizeof *names);
    el_coltype *types = calloc(NCOLS, sizeof *types);
    char *store = malloc(NCOLS * 8);
    assert_non_null(names);
    assert_non_null(types);
    assert_non_null(store);
    for (int i = 0; i < NCOLS; i++) {
        names[i] = store + i * 8;
        snprintf(names[i], 8, "c%d", i);
    }
    el_schema s = { NCOLS, names, types, NULL, NULL };
    char *text = repeat("{c9999}", 300000 * 7);
    el_template *t = parse_ok(text);
    assert_int_equal(el_template_bind(t, &s, NULL), EL_OK);
    assert_int_equal(el_template_nrefs(t), 300000);
    assert_int_equal(el_template_ref_index(t, 299999), 9999);
    el_template_free(t);
    free(text);
    free(store);
    free(types);
    free(names);
}

/* Whether two templates may render the same text, decided from their
 * literal text: each pair both ways. */
static void may_equal(const char *a, const char *b, bool want)
{
    el_template *x = parse_ok(a), *y = parse_ok(b);
    if (el_template_may_equal(x, y) != want || el_template_may_equal(y, x) != want)
        fail_msg("'%s' and '%s': may_equal should be %s", a, b, want ? "true" : "false");
    el_template_free(x);
    el_template_free(y);
}

static void test_may_equal(void **state)
{
    (void)state;
    /* different literal beginnings or ends never meet */
    may_equal("TARGET#{a}", "POST#{b}", false);
    may_equal("TARGET#{a}", "TARGETS#{b}", false);
    may_equal("{a}#F", "{b}#L", false);
    may_equal("T#{a}#x", "T#{b}#y", false);
    /* same shape, or one a prefix of the other: they may */
    may_equal("TARGET#{a}", "TARGET#{b}", true);
    may_equal("TARGET#{a}", "TARGET#{b}#x", true);
    may_equal("T#{a}", "T#{b}#{c}", true);
    may_equal("{a}", "POST#{b}", true);
    may_equal("{a}", "{b}", true);
    may_equal("U{a}", "USER#{b}", true);
    /* literal templates: equal text, or a text the other can render */
    may_equal("PROFILE", "PROFILE", true);
    may_equal("PROFILE", "META", false);
    may_equal("TARGET#bob", "TARGET#{b}", true);
    may_equal("TARGET#", "TARGET#{b}", false);     /* a placeholder is never empty */
    may_equal("TARGET#b", "TARGET#{b}", true);
    may_equal("T#bob#x", "T#{b}#x", true);
    may_equal("T#x", "T#{b}#x", false);            /* too short for "T#" + 1 + "#x" */
    may_equal("TARGET#bob", "POST#{b}", false);
    /* literal braces are literal text */
    may_equal("{{{a}", "{{{b}", true);
    may_equal("{{{a}", "}}{b}", false);
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
        cmocka_unit_test(test_memory_in_proportion_to_text),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_bind_wide_schema),
        cmocka_unit_test(test_may_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
