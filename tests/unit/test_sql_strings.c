/*
 * test_sql_strings.c - each dialect's string semantics (sql_strings.h),
 * with exact expectations: what each quote opens in each dialect (backslash
 * is an escape only in MySQL strings, PostgreSQL E'' strings and, with
 * standard_conforming_strings off, PostgreSQL '' strings), what every
 * escape stands for, COPY's escapes, UTF-8, sqlite's unistr(); and, through
 * the lexer, the same bytes read as each dialect.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/input.h"
#include "formats/sql_lex.h"
#include "formats/sql_strings.h"

static void quote_rules(void **state)
{
    (void)state;
    el_sql_quote q;
    /* mysql: '..' and ".." are strings with escapes, `..` a name */
    q = el_sql_quote_at(EL_SQL_MYSQL, '\'', 'a', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.escapes, EL_SQL_ESC_MYSQL);
    q = el_sql_quote_at(EL_SQL_MYSQL, '"', 'a', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.escapes, EL_SQL_ESC_MYSQL);
    q = el_sql_quote_at(EL_SQL_MYSQL, '`', 'a', true);
    assert_int_equal(q.kind, EL_TOK_QIDENT);
    assert_int_equal(q.escapes, EL_SQL_ESC_NONE);
    q = el_sql_quote_at(EL_SQL_MYSQL, 'N', '\'', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.prefix, 1);
    assert_int_equal(q.quote, '\'');
    assert_int_equal(el_sql_quote_at(EL_SQL_MYSQL, 'E', '\'', true).kind, EL_TOK_EOF);
    assert_int_equal(el_sql_quote_at(EL_SQL_MYSQL, 'x', 'y', true).kind, EL_TOK_EOF);

    /* postgres: standard strings by default, E'' with escapes, ".." a name */
    q = el_sql_quote_at(EL_SQL_POSTGRES, '\'', 'a', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.escapes, EL_SQL_ESC_NONE);
    q = el_sql_quote_at(EL_SQL_POSTGRES, '\'', 'a', false); /* standard_conforming_strings off */
    assert_int_equal(q.escapes, EL_SQL_ESC_PG);
    q = el_sql_quote_at(EL_SQL_POSTGRES, 'e', '\'', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.escapes, EL_SQL_ESC_PG);
    assert_int_equal(q.prefix, 1);
    q = el_sql_quote_at(EL_SQL_POSTGRES, 'N', '\'', true);
    assert_int_equal(q.escapes, EL_SQL_ESC_NONE);
    q = el_sql_quote_at(EL_SQL_POSTGRES, 'B', '\'', false);
    assert_int_equal(q.escapes, EL_SQL_ESC_NONE);
    q = el_sql_quote_at(EL_SQL_POSTGRES, '"', 'a', true);
    assert_int_equal(q.kind, EL_TOK_QIDENT);

    /* sqlite: '' only, backslash ordinary; "..", `..` names */
    q = el_sql_quote_at(EL_SQL_SQLITE, '\'', 'a', true);
    assert_int_equal(q.kind, EL_TOK_STRING);
    assert_int_equal(q.escapes, EL_SQL_ESC_NONE);
    assert_int_equal(el_sql_quote_at(EL_SQL_SQLITE, '"', 'a', true).kind, EL_TOK_QIDENT);
    assert_int_equal(el_sql_quote_at(EL_SQL_SQLITE, '`', 'a', true).kind, EL_TOK_QIDENT);
    assert_int_equal(el_sql_quote_at(EL_SQL_SQLITE, 'E', '\'', true).kind, EL_TOK_EOF);
    assert_int_equal(el_sql_quote_at(EL_SQL_SQLITE, 'N', '\'', true).kind, EL_TOK_EOF);
}

/* One escape: the bytes after the backslash, what they stand for, how many taken. */
static void unesc(el_sql_escapes esc, const char *after, const char *want, size_t want_len,
                  size_t want_took, bool want_invalid)
{
    unsigned char out[4];
    size_t outlen = 99;
    bool invalid = false;
    size_t took = el_sql_unescape(esc, (const unsigned char *)after, strlen(after), out,
                                  &outlen, &invalid);
    if (took != want_took || outlen != want_len || memcmp(out, want, want_len) != 0 ||
        invalid != want_invalid)
        fail_msg("escape %d '\\%s': took %zu (want %zu), %zu bytes (want %zu), invalid %d",
                 (int)esc, after, took, want_took, outlen, want_len, invalid);
}

static void mysql_escapes(void **state)
{
    (void)state;
    el_sql_escapes m = EL_SQL_ESC_MYSQL;
    unesc(m, "0", "\0", 1, 1, false);
    unesc(m, "b", "\b", 1, 1, false);
    unesc(m, "n", "\n", 1, 1, false);
    unesc(m, "r", "\r", 1, 1, false);
    unesc(m, "t", "\t", 1, 1, false);
    unesc(m, "Z", "\x1A", 1, 1, false);
    unesc(m, "\\", "\\", 1, 1, false);
    unesc(m, "'", "'", 1, 1, false);
    unesc(m, "\"", "\"", 1, 1, false);
    unesc(m, "%", "\\%", 2, 1, false);
    unesc(m, "_", "\\_", 2, 1, false);
    unesc(m, "U", "U", 1, 1, false); /* C:\Users read as MySQL loses its backslash */
    unesc(m, "x41", "x", 1, 1, false);
    unesc(m, "N", "N", 1, 1, false);
    unesc(m, "", "", 0, 0, false);
}

static void postgres_escapes(void **state)
{
    (void)state;
    el_sql_escapes e = EL_SQL_ESC_PG, c = EL_SQL_ESC_PG_COPY;
    for (int k = 0; k < 2; k++) {
        el_sql_escapes x = k ? c : e;
        unesc(x, "b", "\b", 1, 1, false);
        unesc(x, "f", "\f", 1, 1, false);
        unesc(x, "n", "\n", 1, 1, false);
        unesc(x, "r", "\r", 1, 1, false);
        unesc(x, "t", "\t", 1, 1, false);
        unesc(x, "v", "\v", 1, 1, false);
        unesc(x, "\\", "\\", 1, 1, false);
        unesc(x, "'", "'", 1, 1, false);
        unesc(x, "101x", "A", 1, 3, false);
        unesc(x, "08", "\0", 1, 1, false);
        unesc(x, "7", "\7", 1, 1, false);
        unesc(x, "477", "\x3F", 1, 3, false); /* 0477 & 0xFF */
        unesc(x, "x41", "A", 1, 3, false);
        unesc(x, "x4g", "\x04", 1, 2, false);
        unesc(x, "xg", "x", 1, 1, false);
        unesc(x, "q", "q", 1, 1, false);
        unesc(x, "Z", "Z", 1, 1, false);
    }
    unesc(e, "u00e9", "\xC3\xA9", 2, 5, false);
    unesc(e, "U0001F600", "\xF0\x9F\x98\x80", 4, 9, false);
    unesc(e, "u12", "", 0, 3, true);        /* too few digits: invalid, digits taken */
    unesc(e, "uD800", "", 0, 5, true);      /* a surrogate */
    unesc(e, "U00110000", "", 0, 9, true);  /* beyond U+10FFFF */
    unesc(c, "u00e9", "u", 1, 1, false);    /* COPY has no \u */
    unesc(EL_SQL_ESC_NONE, "n", "", 0, 0, false);
}

static void utf8_and_unistr(void **state)
{
    (void)state;
    unsigned char u[4];
    assert_int_equal(el_sql_utf8(0x41, u), 1);
    assert_int_equal(el_sql_utf8(0xFEFF, u), 3);
    assert_memory_equal(u, "\xEF\xBB\xBF", 3);
    assert_int_equal(el_sql_utf8(0x10FFFF, u), 4);
    assert_int_equal(el_sql_utf8(0xDFFF, u), 0);
    assert_int_equal(el_sql_utf8(0x110000, u), 0);

    el_buf b;
    bool bad = false;
    el_buf_init(&b, 1024);
    const char *in = "a\\0041\\u00e9\\+01F600\\U0001F389\\\\z";
    assert_int_equal(el_sql_sqlite_unistr(in, strlen(in), &b, &bad), EL_OK);
    assert_false(bad);
    assert_string_equal(el_buf_str(&b), "aA\xC3\xA9\xF0\x9F\x98\x80\xF0\x9F\x8E\x89\\z");
    el_buf_reset(&b);
    assert_int_equal(el_sql_sqlite_unistr("\\12", 3, &b, &bad), EL_OK);
    assert_true(bad);
    bad = false;
    el_buf_reset(&b);
    assert_int_equal(el_sql_sqlite_unistr("\\D800", 5, &b, &bad), EL_OK);
    assert_true(bad);
    el_buf_free(&b);
}

/* The same literal bytes, read by each dialect's lexer. */
static void lex_string(el_sql_dialect dialect, const char *text, el_sql_tok_kind kind,
                       const char *want)
{
    el_input *in;
    el_sql_lex *lex;
    el_diag d;
    el_buf b;
    el_sql_tok tok;
    assert_int_equal(el_input_open_mem(text, strlen(text), "t.sql", &in, &d), EL_OK);
    assert_int_equal(el_sql_lex_new(in, dialect, &lex), EL_OK);
    el_buf_init(&b, 1024);
    assert_int_equal(el_sql_lex_next(lex, &tok, &b, &d), EL_OK);
    if (tok.kind != kind || strcmp(el_buf_str(&b), want) != 0)
        fail_msg("dialect %d, %s: kind %d, '%s' (want '%s')", (int)dialect, text, tok.kind,
                 el_buf_str(&b), want);
    el_buf_free(&b);
    el_sql_lex_free(lex);
    el_input_free(in);
}

static void same_bytes_each_dialect(void **state)
{
    (void)state;
    const char *path = "'C:\\Users\\me\\new folder\\table.txt'";
    lex_string(EL_SQL_MYSQL, path, EL_TOK_STRING, "C:Usersme\new folder\table.txt");
    lex_string(EL_SQL_POSTGRES, path, EL_TOK_STRING, "C:\\Users\\me\\new folder\\table.txt");
    lex_string(EL_SQL_SQLITE, path, EL_TOK_STRING, "C:\\Users\\me\\new folder\\table.txt");
    lex_string(EL_SQL_POSTGRES, "E'C:\\\\x\\101'", EL_TOK_STRING, "C:\\xA");
    lex_string(EL_SQL_POSTGRES, "'ends with\\'", EL_TOK_STRING, "ends with\\");
    lex_string(EL_SQL_SQLITE, "'ends with\\'", EL_TOK_STRING, "ends with\\");
    lex_string(EL_SQL_MYSQL, "'it\\'s'", EL_TOK_STRING, "it's");
    lex_string(EL_SQL_POSTGRES, "'it''s'", EL_TOK_STRING, "it's");
    lex_string(EL_SQL_POSTGRES, "$t$ \\n '' $$ $t$", EL_TOK_STRING, " \\n '' $$ ");
    lex_string(EL_SQL_MYSQL, "\"a\\\"b\"", EL_TOK_STRING, "a\"b");
    lex_string(EL_SQL_POSTGRES, "\"a\"\"b\"", EL_TOK_QIDENT, "a\"b");
    lex_string(EL_SQL_SQLITE, "\"a\\b\"", EL_TOK_QIDENT, "a\\b");
    lex_string(EL_SQL_MYSQL, "N'\\t'", EL_TOK_STRING, "\t");
    lex_string(EL_SQL_POSTGRES, "N'\\t'", EL_TOK_STRING, "\\t");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quote_rules),
        cmocka_unit_test(mysql_escapes),
        cmocka_unit_test(postgres_escapes),
        cmocka_unit_test(utf8_and_unistr),
        cmocka_unit_test(same_bytes_each_dialect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
