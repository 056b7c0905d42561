/*
 * test_sql_dump.c - the statement layer's bookkeeping of tables: a dump
 * with 100,000 CREATE TABLEs (and rows in each) costs about one name
 * comparison per statement, a table declared twice keeps its last
 * definition, and the bounds stay (more than 4096 columns is refused);
 * the guard: a statement the dialect's tool cannot have written stops the
 * read with its line, whether it comes first or after rows.
 * The per-dialect value decoding is tested in test_{mysql,postgres,sqlite}_reader.c.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* strlen, strstr */

#include "common/buf.h"
#include "formats/sql_dump.h"

typedef struct opened {
    const el_reader_ops *ops;
    void *self;
} opened;

static el_err open_dump(const char *sql, size_t len, const char *table, opened *o, el_diag *d)
{
    el_input *in = NULL;
    el_diag_clear(d);
    assert_int_equal(el_input_open_mem(sql, len, "mem.sql", &in, d), EL_OK);
    el_reader_opts opts = {0};
    opts.source_table = table;
    el_err err = el_sql_dump_open(in, EL_SQL_MYSQL, &opts, &o->ops, &o->self, d);
    if (err)
        el_input_free(in);
    return err;
}

static void test_hundred_thousand_tables(void **state)
{
    (void)state;
    const size_t ntables = 100000;
    el_buf sql;
    el_buf_init(&sql, (size_t)64 << 20);
    assert_int_equal(el_buf_puts(&sql, "CREATE TABLE `tre` (`a` int);\n"), EL_OK);
    for (size_t i = 0; i + 1 < ntables; i++)
        assert_int_equal(el_buf_printf(&sql, "CREATE TABLE `t%zu` (`a` int, `b` varchar(9));\n"
                                       "INSERT INTO `t%zu` VALUES (%zu,'x');\n", i, i, i), EL_OK);
    /* declared again: the last definition wins */
    /* past MAX_TABLES (100,000) no CREATE TABLE is remembered */
    assert_int_equal(el_buf_puts(&sql, "CREATE TABLE `extra` (`a` int);\n"
                                       "INSERT INTO `extra` VALUES (1);\n"), EL_OK);
    /* declared again (even past the limit): the last definition wins */
    assert_int_equal(el_buf_puts(&sql, "CREATE TABLE `tre` (`c` int, `d` int, `e` text);\n"
                                       "INSERT INTO `tre` VALUES (1,2,'three');\n"), EL_OK);

    opened o;
    el_diag d;
    el_err err = open_dump(sql.data, sql.len, "t99998", &o, &d);
    if (err)
        fail_msg("open: %s", d.msg);
    const el_schema *s = o.ops->schema(o.self);
    assert_int_equal(s->ncols, 2);
    assert_string_equal(s->names[0], "a");
    assert_int_equal(s->types[0], EL_COL_NUMBER);
    el_row row;
    assert_int_equal(o.ops->next(o.self, &row, &d), EL_OK);
    assert_string_equal(row.values[0].data, "99998");
    assert_int_equal(o.ops->next(o.self, &row, &d), EL_EOF);
    /* 200,003 statements named a table: a quadratic scan would have made
     * about 10^10 comparisons; the hash indexes make a few per statement */
    uint64_t compares = el_sql_dump_name_compares(o.self);
    assert_true(compares < 4 * (2 * ntables + 4));
    o.ops->free(o.self);

    err = open_dump(sql.data, sql.len, "tre", &o, &d);
    if (err)
        fail_msg("open: %s", d.msg);
    s = o.ops->schema(o.self);
    assert_int_equal(s->ncols, 3);
    assert_string_equal(s->names[2], "e");
    assert_int_equal(o.ops->next(o.self, &row, &d), EL_OK);
    assert_string_equal(row.values[2].data, "three");
    assert_int_equal(o.ops->next(o.self, &row, &d), EL_EOF);
    o.ops->free(o.self);

    assert_int_equal(open_dump(sql.data, sql.len, "extra", &o, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "no column names"));

    /* a table that is not there: usage error naming some of the tables */
    assert_int_equal(open_dump(sql.data, sql.len, "nope", &o, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "t0"));
    el_buf_free(&sql);
}

static void test_same_name_in_two_schemas(void **state)
{
    (void)state;
    /* exact keys: "a.t", "b.t" and an unqualified "t" are three tables */
    const char *sql = "CREATE TABLE a.t (x int);\nCREATE TABLE b.t (y int, z int);\n"
                      "CREATE TABLE t (w text);\nINSERT INTO b.t VALUES (1,2);\n";
    opened o;
    el_diag d;
    assert_int_equal(open_dump(sql, strlen(sql), "b.t", &o, &d), EL_OK);
    const el_schema *s = o.ops->schema(o.self);
    assert_int_equal(s->ncols, 2);
    assert_string_equal(s->names[0], "y");
    o.ops->free(o.self);
}

static void test_too_many_columns_refused(void **state)
{
    (void)state;
    el_buf sql;
    el_buf_init(&sql, (size_t)16 << 20);
    assert_int_equal(el_buf_puts(&sql, "CREATE TABLE `wide` ("), EL_OK);
    for (int i = 0; i < 4097; i++)
        assert_int_equal(el_buf_printf(&sql, "%s`c%d` int", i ? ", " : "", i), EL_OK);
    assert_int_equal(el_buf_puts(&sql, ");\nINSERT INTO `wide` VALUES (1);\n"), EL_OK);
    opened o;
    el_diag d;
    assert_int_equal(open_dump(sql.data, sql.len, "wide", &o, &d), EL_ELIMIT);
    assert_non_null(strstr(d.msg, "4096"));
    el_buf_free(&sql);
}

/* Reads `sql` as `dialect` to the first error; returns it (EL_EOF: none). */
static el_err read_as(el_sql_dialect dialect, const char *sql, const char *why, size_t *rows,
                      el_diag *d)
{
    el_input *in = NULL;
    const el_reader_ops *ops;
    void *self;
    el_diag_clear(d);
    *rows = 0;
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "mem.sql", &in, d), EL_OK);
    el_reader_opts opts = {0};
    opts.format_why = why;
    el_err err = el_sql_dump_open(in, dialect, &opts, &ops, &self, d);
    if (err) {
        el_input_free(in);
        return err;
    }
    el_row row;
    while ((err = ops->next(self, &row, d)) == EL_OK || err == EL_EREJECT)
        (*rows)++;
    ops->free(self);
    return err;
}

static void expect_stop(el_sql_dialect dialect, const char *sql, uint64_t line,
                        const char *what, size_t rows_before)
{
    el_diag d;
    size_t rows;
    el_err err = read_as(dialect, sql, NULL, &rows, &d);
    if (err != EL_EPARSE || d.line != line || !strstr(d.msg, what) || rows != rows_before)
        fail_msg("dialect %d, %s: err %d line %llu rows %zu: %s", (int)dialect, sql, (int)err,
                 (unsigned long long)d.line, rows, d.msg);
}

static void test_guard(void **state)
{
    (void)state;
    expect_stop(EL_SQL_MYSQL, "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n", 1, "'PRAGMA'", 0);
    expect_stop(EL_SQL_POSTGRES, "\n\nPRAGMA foreign_keys=OFF;\n", 3, "'PRAGMA'", 0);
    expect_stop(EL_SQL_MYSQL, "--\n-- PostgreSQL database dump\n--\n\n\\restrict AbC\n", 5,
                "'\\restrict'", 0);
    expect_stop(EL_SQL_SQLITE, "\\connect db\n", 1, "'\\connect'", 0);
    expect_stop(EL_SQL_MYSQL, "SET statement_timeout = 0;\n", 1, "statement_timeout", 0);
    expect_stop(EL_SQL_SQLITE, "SET NAMES utf8;\n", 1, "'SET NAMES'", 0);
    expect_stop(EL_SQL_SQLITE, "/*!40101 SET NAMES utf8 */;\n", 1, "/*!40101", 0);
    expect_stop(EL_SQL_POSTGRES, "CREATE TABLE t (a int);\n/*M!999999\\- sandbox */\n", 2,
                "/*M!999999", 0);
    expect_stop(EL_SQL_POSTGRES, "INSERT INTO `t` VALUES (1);\n", 1, "`t`", 0);
    expect_stop(EL_SQL_POSTGRES, "LOCK TABLES t WRITE;\n", 1, "'LOCK TABLES'", 0);
    /* after rows: those already read stay read, the rest of the dump is refused */
    expect_stop(EL_SQL_MYSQL, "CREATE TABLE t (a int);\nINSERT INTO t VALUES (1),(2);\n"
                              "COPY t (a) FROM stdin;\n3\n\\.\n", 3, "'COPY'", 2);

    /* the message says how the dialect was chosen, and what to give instead */
    el_diag d;
    size_t rows;
    assert_int_equal(read_as(EL_SQL_MYSQL, "PRAGMA foreign_keys=OFF;\n", NULL, &rows, &d),
                     EL_EPARSE);
    assert_non_null(strstr(d.msg, "read as mysql (--format mysql)"));
    assert_non_null(strstr(d.msg, "if sqlite3 .dump wrote it, read it with --format sqlite"));
    assert_int_equal(read_as(EL_SQL_SQLITE, "SET x = 1;\n", "detected from 'X' at line 7",
                             &rows, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "read as sqlite (detected from 'X' at line 7)"));
    assert_non_null(strstr(d.msg, "--format mysql or --format postgres"));

    /* each dialect's own statements pass */
    const char *own[] = {
        "-- MySQL dump\n/*!40101 SET NAMES utf8 */;\nLOCK TABLES `t` WRITE;\n"
        "CREATE TABLE `t` (a int);\nINSERT INTO `t` VALUES (1);\nUNLOCK TABLES;\n"
        "SET @x = 1;\n-- Dump completed\n",
        "\\restrict x\nSET standard_conforming_strings = on;\n"
        "SELECT pg_catalog.set_config('search_path', '', false);\nCREATE TABLE t (a int);\n"
        "COPY public.t (a) FROM stdin;\n1\n\\.\nCOMMENT ON TABLE t IS 'x';\n",
        "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t(a);\n"
        "INSERT INTO t VALUES(1);\nCOMMIT;\n"};
    for (el_sql_dialect k = EL_SQL_MYSQL; k <= EL_SQL_SQLITE; k++) {
        el_err err = read_as(k, own[k], NULL, &rows, &d);
        if (err != EL_EOF || rows != 1)
            fail_msg("dialect %d, own statements: err %d rows %zu: %s", (int)k, (int)err, rows,
                     d.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hundred_thousand_tables),
        cmocka_unit_test(test_same_name_in_two_schemas),
        cmocka_unit_test(test_too_many_columns_refused),
        cmocka_unit_test(test_guard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
