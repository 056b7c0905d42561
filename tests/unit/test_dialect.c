/*
 * test_dialect.c - which tool wrote a dump (el_sql_sniff) and the table of
 * statements per dialect behind both it and the readers' guard: decided by
 * the preamble only, never by rows holding another tool's markers; by the
 * first statements' syntax where no tool is named; ambiguous (candidates
 * named) or contradictory where they do not tell; CSV left to CSV.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/dialect.h"

static el_sniff sniff(const char *text)
{
    el_sniff s;
    el_sql_sniff((const unsigned char *)text, strlen(text), &s);
    return s;
}

#define ASSERT_SNIFF(text, fmt)                                         \
    do {                                                                \
        el_sniff s_ = sniff(text);                                      \
        if (s_.format != (fmt) || s_.ambiguous)                         \
            fail_msg("%s: got format %d ambiguous %d (evidence '%s')",  \
                     #text, s_.format, s_.ambiguous, s_.evidence);      \
    } while (0)

static void tool_headers_decide(void **state)
{
    (void)state;
    ASSERT_SNIFF("-- MySQL dump 10.13  Distrib 8.0.36\n", EL_FMT_MYSQL);
    ASSERT_SNIFF("-- MariaDB dump 10.19\n", EL_FMT_MYSQL);
    ASSERT_SNIFF("/*M!999999\\- enable the sandbox mode */\n-- MariaDB dump\n", EL_FMT_MYSQL);
    ASSERT_SNIFF("/*!40101 SET @saved_cs_client = @@character_set_client */;\n"
                 "CREATE TABLE t (a text);\n", EL_FMT_MYSQL);
    ASSERT_SNIFF("--\n-- PostgreSQL database dump\n--\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("\\restrict abc\n\nSET statement_timeout = 0;\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("SET standard_conforming_strings = on;\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("SELECT pg_catalog.set_config('search_path', '', false);\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n", EL_FMT_SQLITE);
    ASSERT_SNIFF("BEGIN TRANSACTION;\nCREATE TABLE t(a);\n", EL_FMT_SQLITE);
    /* a BOM first */
    ASSERT_SNIFF("\xEF\xBB\xBF-- PostgreSQL database dump\n", EL_FMT_POSTGRES);

    el_sniff s = sniff("\n\n-- PostgreSQL database dump\n");
    assert_int_equal(s.line, 3);
    assert_string_equal(s.evidence, "-- PostgreSQL database dump");
    s = sniff("PRAGMA foreign_keys=OFF;\n");
    assert_int_equal(s.line, 1);
    assert_string_equal(s.evidence, "PRAGMA foreign_keys");
}

/* The issue's class of bug: another tool's markers in the rows (or in a
 * string of the preamble) never decide. */
static void data_never_decides(void **state)
{
    (void)state;
    ASSERT_SNIFF("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"
                 "CREATE TABLE t(id INTEGER, v TEXT);\n"
                 "INSERT INTO t VALUES(1,'/*!40101 SET NAMES latin1 */');\n"
                 "INSERT INTO t VALUES(2,'-- MySQL dump');\n", EL_FMT_SQLITE);
    ASSERT_SNIFF("--\n-- PostgreSQL database dump\n--\n"
                 "COPY public.t (v) FROM stdin;\n/*!40101 SET NAMES latin1 */\n\\.\n",
                 EL_FMT_POSTGRES);
    /* no header: the data statement's header counts, its values never */
    ASSERT_SNIFF("CREATE TABLE \"t\" (v text);\n"
                 "INSERT INTO public.t VALUES ('`x` ENGINE=InnoDB /*!40101 */');\n",
                 EL_FMT_POSTGRES);
    /* markers inside preamble strings, comments and dollar bodies */
    ASSERT_SNIFF("CREATE TABLE t (v text DEFAULT '-- MySQL dump /*!40101 x */');\n"
                 "COMMENT ON TABLE t IS 'PRAGMA foreign_keys=OFF;';\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("CREATE FUNCTION f() RETURNS text AS $body$ SELECT '-- MySQL dump' $body$;\n"
                 "SELECT 1;\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("/* -- MySQL dump */ CREATE TABLE t (a int) ENGINE=InnoDB;\n", EL_FMT_MYSQL);
    /* what follows the first data statement is never read */
    el_sniff s = sniff("CREATE TABLE t (a text);\nINSERT INTO t VALUES ('x');\n"
                       "-- PostgreSQL database dump\n");
    assert_true(s.ambiguous);
}

static void syntax_decides(void **state)
{
    (void)state;
    ASSERT_SNIFF("CREATE TABLE `t` (a int);", EL_FMT_MYSQL);
    ASSERT_SNIFF("INSERT INTO `t` VALUES (1,'a\\'b');", EL_FMT_MYSQL);
    ASSERT_SNIFF("CREATE TABLE t (a int) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;", EL_FMT_MYSQL);
    ASSERT_SNIFF("LOCK TABLES t WRITE;\nINSERT INTO t VALUES (1);", EL_FMT_MYSQL);
    ASSERT_SNIFF("SET @x = 1;\n", EL_FMT_MYSQL);
    ASSERT_SNIFF("INSERT INTO public.t VALUES (1);", EL_FMT_POSTGRES);
    ASSERT_SNIFF("CREATE TABLE t (a int DEFAULT '1'::integer);", EL_FMT_POSTGRES);
    ASSERT_SNIFF("ALTER TABLE t OWNER TO bob;", EL_FMT_POSTGRES);
    ASSERT_SNIFF("COPY t (a) FROM stdin;\n1\n\\.\n", EL_FMT_POSTGRES);
    ASSERT_SNIFF("CREATE TABLE t (a text DEFAULT E'x\\'y');", EL_FMT_POSTGRES);
    ASSERT_SNIFF("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT);", EL_FMT_SQLITE);
    ASSERT_SNIFF("INSERT OR REPLACE INTO t VALUES (1);", EL_FMT_SQLITE);
    /* several pieces narrow together: "..." names are not MySQL's, SET not sqlite's */
    ASSERT_SNIFF("SET x = 1;\nCREATE TABLE \"t\" (a int);\n", EL_FMT_POSTGRES);
    el_sniff s = sniff("SET NAMES utf8;\nCREATE TABLE \"t\" (a int);\n");
    assert_int_equal(s.format, EL_FMT_POSTGRES);
    assert_int_equal(s.line, 2);
    assert_string_equal(s.evidence, "\"t\"");
}

static void ambiguous_names_candidates(void **state)
{
    (void)state;
    el_sniff s = sniff("CREATE TABLE t (id int, v text);\nINSERT INTO t VALUES (1, 'a');\n");
    assert_int_equal(s.format, EL_FMT_AUTO);
    assert_true(s.ambiguous);
    assert_int_equal(s.candidates, EL_DIALECT_ALL);
    s = sniff("INSERT INTO t VALUES(1);");
    assert_true(s.ambiguous);
    s = sniff("CREATE TABLE \"t\" (a int);\n");
    assert_true(s.ambiguous);
    assert_int_equal(s.candidates, EL_DIALECT_POSTGRES | EL_DIALECT_SQLITE);
    s = sniff("SET NAMES utf8;\n");
    assert_int_equal(s.candidates, EL_DIALECT_MYSQL | EL_DIALECT_POSTGRES);
    /* a string whose end depends on the dialect stops the scan there */
    s = sniff("CREATE TABLE t (v text DEFAULT 'a\\');\nCREATE TABLE `u` (a int);\n");
    assert_true(s.ambiguous);
    assert_int_equal(s.candidates, EL_DIALECT_ALL);
    /* contradiction: both pieces named */
    s = sniff("CREATE TABLE `t` (a int DEFAULT '1'::integer);");
    assert_true(s.ambiguous);
    assert_int_equal(s.candidates, 0);
    assert_string_equal(s.evidence2, "`t`");
    assert_string_equal(s.evidence, "'::' cast");

    char list[64];
    el_sql_dialect_list(EL_DIALECT_ALL, " or ", list, sizeof list);
    assert_string_equal(list, "mysql, postgres or sqlite");
    el_sql_dialect_list(EL_DIALECT_POSTGRES | EL_DIALECT_SQLITE, " and ", list, sizeof list);
    assert_string_equal(list, "postgres and sqlite");
}

static void not_sql(void **state)
{
    (void)state;
    const char *texts[] = {"id,name\n1,alice\n", "", "create,drop\n1,2\n",
                           "\"id\",\"v\"\n1,\"x\"\n", "# comment\nx\n", "insert\tvalue\n"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        el_sniff s = sniff(texts[i]);
        if (s.format != EL_FMT_AUTO || s.ambiguous)
            fail_msg("'%s' taken for SQL", texts[i]);
    }
    (void)texts;
}

static void statement_table(void **state)
{
    (void)state;
    bool tool;
    assert_int_equal(el_sql_dialects_of("PRAGMA", "foreign_keys", &tool), EL_DIALECT_SQLITE);
    assert_true(tool);
    assert_int_equal(el_sql_dialects_of("copy", "", &tool), EL_DIALECT_POSTGRES);
    assert_false(tool);
    assert_int_equal(el_sql_dialects_of("SET", "standard_conforming_strings", &tool),
                     EL_DIALECT_POSTGRES);
    assert_true(tool);
    assert_int_equal(el_sql_dialects_of("set", "@", &tool), EL_DIALECT_MYSQL);
    assert_int_equal(el_sql_dialects_of("set", "names", &tool),
                     EL_DIALECT_MYSQL | EL_DIALECT_POSTGRES);
    assert_int_equal(el_sql_dialects_of("lock", "tables", &tool), EL_DIALECT_MYSQL);
    assert_int_equal(el_sql_dialects_of("lock", "table", &tool),
                     EL_DIALECT_MYSQL | EL_DIALECT_POSTGRES);
    assert_int_equal(el_sql_dialects_of("begin", "transaction", &tool),
                     EL_DIALECT_POSTGRES | EL_DIALECT_SQLITE);
    assert_int_equal(el_sql_dialects_of("replace", "into", &tool),
                     EL_DIALECT_MYSQL | EL_DIALECT_SQLITE);
    assert_int_equal(el_sql_dialects_of("select", "pg_catalog", &tool), EL_DIALECT_POSTGRES);
    assert_int_equal(el_sql_dialects_of("select", "1", &tool), EL_DIALECT_ALL);
    assert_int_equal(el_sql_dialects_of("insert", "into", &tool), EL_DIALECT_ALL);
    assert_int_equal(el_sql_dialects_of("create", "table", &tool), EL_DIALECT_ALL);
    assert_string_equal(el_sql_tool_name(EL_FMT_POSTGRES), "pg_dump");
}

/* Bytes cut anywhere never read past the end (ASan watches) nor crash. */
static void every_prefix(void **state)
{
    (void)state;
    const char *dump = "\xEF\xBB\xBF/* x */ -- c\nSET @a = 'q''\\'';\nCREATE TABLE `t` "
                       "(a text DEFAULT E'x', b text DEFAULT $q$ $ $q$);\n\\restrict\n"
                       "INSERT INTO \"t\" VALUES ('a');";
    size_t n = strlen(dump);
    for (size_t k = 0; k <= n; k++) {
        unsigned char *copy = malloc(k ? k : 1);
        assert_non_null(copy);
        memcpy(copy, dump, k);
        el_sniff s;
        el_sql_sniff(copy, k, &s);
        free(copy);
    }
}

/* sqlite's [bracket] names are sqlite evidence; PostgreSQL's array bounds
 * (after a word) and bracket text inside strings are not. */
static void brackets_are_sqlite(void **state)
{
    (void)state;
    ASSERT_SNIFF("CREATE TABLE [order items] ([key] TEXT, [value] INTEGER);\n"
                 "INSERT INTO [order items] VALUES('a', 1);\n", EL_FMT_SQLITE);
    ASSERT_SNIFF("CREATE TABLE t ([it's] TEXT, b INTEGER);\nINSERT INTO t VALUES('x', 1);\n",
                 EL_FMT_SQLITE);
    /* a script whose names are bracketed and whose data says nothing more */
    ASSERT_SNIFF("BEGIN;\nCREATE TABLE [t] ([a] TEXT);\nINSERT INTO [t] VALUES('[x]');\nCOMMIT;\n",
                 EL_FMT_SQLITE);
    el_sniff s = sniff("CREATE TABLE t (a text[], b integer[3]);\nINSERT INTO t VALUES (1);\n");
    assert_true(s.format != EL_FMT_SQLITE);
    assert_true((s.candidates & EL_DIALECT_POSTGRES) != 0 || s.format == EL_FMT_POSTGRES);
    s = sniff("CREATE TABLE t (a text DEFAULT '[b]');\nINSERT INTO t VALUES (1);\n");
    assert_true(s.format != EL_FMT_SQLITE);
    /* brackets beside backticks: contradictory, never decided as either */
    s = sniff("CREATE TABLE `t` ([a] int);\nINSERT INTO t VALUES (1);\n");
    assert_true(s.ambiguous);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tool_headers_decide),
        cmocka_unit_test(data_never_decides),
        cmocka_unit_test(syntax_decides),
        cmocka_unit_test(ambiguous_names_candidates),
        cmocka_unit_test(not_sql),
        cmocka_unit_test(statement_table),
        cmocka_unit_test(every_prefix),
        cmocka_unit_test(brackets_are_sqlite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
