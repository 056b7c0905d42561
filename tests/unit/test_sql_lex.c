/*
 * test_sql_lex.c - the shared SQL lexer: every literal and escape rule of
 * each dialect, comments, statement ends, DELIMITER, value overflow,
 * unterminated tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/sql_lex.h"

typedef struct lexer {
    el_input *in;
    el_sql_lex *lex;
    el_buf buf;
} lexer;

static void lx_open(lexer *l, el_sql_dialect dialect, const char *text, size_t max)
{
    el_diag d;
    assert_int_equal(el_input_open_mem(text, strlen(text), "t.sql", &l->in, &d), EL_OK);
    assert_int_equal(el_sql_lex_new(l->in, dialect, &l->lex), EL_OK);
    el_buf_init(&l->buf, max);
}

static void lx_close(lexer *l)
{
    el_sql_lex_free(l->lex);
    el_input_free(l->in);
    el_buf_free(&l->buf);
}

/* Next token; its text in l->buf. */
static el_sql_tok lx_next(lexer *l)
{
    el_sql_tok t;
    el_diag d;
    el_buf_reset(&l->buf);
    el_err err = el_sql_lex_next(l->lex, &t, &l->buf, &d);
    if (err)
        fail_msg("lex error %s: %s", el_strerror(err), d.msg);
    return t;
}

/* Asserts the next token's kind and exact bytes. */
static void expect_tok(lexer *l, el_sql_tok_kind kind, const char *bytes, size_t n)
{
    el_sql_tok t = lx_next(l);
    assert_int_equal(t.kind, kind);
    assert_int_equal(l->buf.len, n);
    assert_memory_equal(el_buf_str(&l->buf), bytes, n);
}

static void expect_punct(lexer *l, char c)
{
    el_sql_tok t = lx_next(l);
    assert_int_equal(t.kind, EL_TOK_PUNCT);
    assert_int_equal(t.punct, c);
}

#define S(lit) lit, sizeof(lit) - 1

static void mysql_escapes(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL,
            "'\\0\\'\\\"\\b\\n\\r\\t\\Z\\\\\\%\\_\\q' 'it''s' \"dq\\\"\"\"x\" '' N'nat'", 1024);
    expect_tok(&l, EL_TOK_STRING, S("\0'\"\b\n\r\t\x1a\\\\%\\_q"));
    expect_tok(&l, EL_TOK_STRING, S("it's"));
    expect_tok(&l, EL_TOK_STRING, S("dq\"\"x"));
    expect_tok(&l, EL_TOK_STRING, S(""));
    expect_tok(&l, EL_TOK_STRING, S("nat"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_EOF);
    lx_close(&l);
}

static void mysql_literals(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL,
            "0x00FFab X'0a0B' x'' 0xABC b'101' B'' 0b11 12 -3.5e-7 1e+300 .5 `id``x` _binary", 1024);
    expect_tok(&l, EL_TOK_HEX, S("\x00\xff\xab"));
    expect_tok(&l, EL_TOK_HEX, S("\x0a\x0b"));
    expect_tok(&l, EL_TOK_HEX, S(""));
    expect_tok(&l, EL_TOK_HEX, S("\x0a\xbc")); /* odd digits: leading zero */
    expect_tok(&l, EL_TOK_BITS, S("5"));
    expect_tok(&l, EL_TOK_BITS, S("0"));
    expect_tok(&l, EL_TOK_BITS, S("3"));
    expect_tok(&l, EL_TOK_NUMBER, S("12"));
    expect_punct(&l, '-');
    expect_tok(&l, EL_TOK_NUMBER, S("3.5e-7"));
    expect_tok(&l, EL_TOK_NUMBER, S("1e+300"));
    expect_tok(&l, EL_TOK_NUMBER, S(".5"));
    expect_tok(&l, EL_TOK_QIDENT, S("id`x"));
    expect_tok(&l, EL_TOK_WORD, S("_binary"));
    lx_close(&l);
}

static void mysql_comments_and_delimiter(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL,
            "/*!40101 SET x=1 */;\n-- comment ; 'x\n# hash ;\n--\nA;\n"
            "DELIMITER ;;\nB; C;;\ndelimiter ;\nD -- not-a-comment-without-space\n;", 1024);
    assert_int_equal(lx_next(&l).kind, EL_TOK_END);
    expect_tok(&l, EL_TOK_WORD, S("A"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_END);
    expect_tok(&l, EL_TOK_WORD, S("B"));
    expect_punct(&l, ';');
    expect_tok(&l, EL_TOK_WORD, S("C"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_END);
    expect_tok(&l, EL_TOK_WORD, S("D"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_END); /* "--" then space: comment */
    assert_int_equal(lx_next(&l).kind, EL_TOK_EOF);
    lx_close(&l);
}

static void postgres_strings(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_POSTGRES,
            "'a\\b''c' E'\\b\\f\\n\\r\\t\\v\\101\\x41\\x4\\u00e9\\U0001F600\\q\\\\''' "
            "e'x' $$a;'b$$ $tag$ $$ $t $tag$ \"Quoted \"\"id\"\"\" B'101' $1", 1024);
    expect_tok(&l, EL_TOK_STRING, S("a\\b'c"));
    expect_tok(&l, EL_TOK_STRING, S("\b\f\n\r\t\vAA\x04\xc3\xa9\xf0\x9f\x98\x80q\\'"));
    expect_tok(&l, EL_TOK_STRING, S("x"));
    expect_tok(&l, EL_TOK_STRING, S("a;'b"));
    expect_tok(&l, EL_TOK_STRING, S(" $$ $t "));
    expect_tok(&l, EL_TOK_QIDENT, S("Quoted \"id\""));
    expect_tok(&l, EL_TOK_STRING, S("101"));
    expect_punct(&l, '$');
    lx_close(&l);
}

static void postgres_comments(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_POSTGRES,
            "\\restrict abc\n/* outer /* nested; */ still; */ A--x\n;\n\\connect db\nB;", 1024);
    expect_tok(&l, EL_TOK_WORD, S("A"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_END);
    expect_tok(&l, EL_TOK_WORD, S("B"));
    assert_int_equal(lx_next(&l).kind, EL_TOK_END);
    assert_int_equal(lx_next(&l).kind, EL_TOK_EOF);
    lx_close(&l);
}

static void sqlite_literals(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_SQLITE, "'a\\n''b' X'00fF' \"t\"\"q\" [br ack] `bt` b'1'", 1024);
    expect_tok(&l, EL_TOK_STRING, S("a\\n'b"));
    expect_tok(&l, EL_TOK_HEX, S("\x00\xff"));
    expect_tok(&l, EL_TOK_QIDENT, S("t\"q"));
    expect_tok(&l, EL_TOK_QIDENT, S("br ack"));
    expect_tok(&l, EL_TOK_QIDENT, S("bt"));
    expect_tok(&l, EL_TOK_WORD, S("b"));
    expect_tok(&l, EL_TOK_STRING, S("1"));
    lx_close(&l);
}

static void invalid_and_overflow(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL, "X'0g' X'abc' 'abcdefghij' 'ok'", 8);
    el_sql_tok t = lx_next(&l);
    assert_int_equal(t.kind, EL_TOK_HEX);
    assert_true(t.invalid);
    t = lx_next(&l);
    assert_true(t.invalid); /* odd digit count */
    t = lx_next(&l);
    assert_int_equal(t.kind, EL_TOK_STRING);
    assert_true(t.overflow);
    assert_int_equal(l.buf.len, 7); /* what fitted */
    t = lx_next(&l);
    assert_false(t.overflow);
    expect_tok(&l, EL_TOK_EOF, S(""));
    lx_close(&l);
}

static void unterminated(void **state)
{
    (void)state;
    static const char *const cases[] = {"SELECT 'abc", "SELECT \"abc", "/* never closed",
                                        "`id", "x'00", "b'10"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        lexer l;
        lx_open(&l, EL_SQL_MYSQL, cases[i], 1024);
        el_sql_tok t;
        el_diag d;
        el_err err;
        do {
            el_buf_reset(&l.buf);
            err = el_sql_lex_next(l.lex, &t, &l.buf, &d);
        } while (err == EL_OK && t.kind != EL_TOK_EOF);
        assert_int_equal(err, EL_ETRUNCATED);
        assert_non_null(strstr(d.msg, "unterminated"));
        assert_int_equal(d.line, 1);
        lx_close(&l);
    }
    lexer l;
    lx_open(&l, EL_SQL_POSTGRES, "\n\n  $q$ body", 1024);
    el_sql_tok t;
    el_diag d;
    assert_int_equal(el_sql_lex_next(l.lex, &t, &l.buf, &d), EL_ETRUNCATED);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.offset, 4);
    lx_close(&l);
}

static void positions(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL, "A\n 'x\ny' B", 1024);
    el_sql_tok t = lx_next(&l);
    assert_int_equal(t.line, 1);
    assert_int_equal(t.offset, 0);
    t = lx_next(&l);
    assert_int_equal(t.line, 2);
    assert_int_equal(t.offset, 3);
    t = lx_next(&l);
    assert_int_equal(t.line, 3);
    assert_int_equal(t.offset, 9);
    lx_close(&l);
}

static void header_trailer(void **state)
{
    (void)state;
    lexer l;
    lx_open(&l, EL_SQL_MYSQL, "-- MySQL dump 10.13\nA;\n-- Dump completed on x\n", 1024);
    while (lx_next(&l).kind != EL_TOK_EOF)
        ;
    assert_true(el_sql_lex_saw_header(l.lex));
    assert_true(el_sql_lex_saw_trailer(l.lex));
    lx_close(&l);
    lx_open(&l, EL_SQL_POSTGRES, "--\n-- PostgreSQL database dump\n--\nA;\n", 1024);
    while (lx_next(&l).kind != EL_TOK_EOF)
        ;
    assert_true(el_sql_lex_saw_header(l.lex));
    assert_false(el_sql_lex_saw_trailer(l.lex));
    lx_close(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mysql_escapes),
        cmocka_unit_test(mysql_literals),
        cmocka_unit_test(mysql_comments_and_delimiter),
        cmocka_unit_test(postgres_strings),
        cmocka_unit_test(postgres_comments),
        cmocka_unit_test(sqlite_literals),
        cmocka_unit_test(invalid_and_overflow),
        cmocka_unit_test(unterminated),
        cmocka_unit_test(positions),
        cmocka_unit_test(header_trailer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
