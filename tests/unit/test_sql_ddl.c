/*
 * test_sql_ddl.c - CREATE TABLE read in each dialect's own grammar.
 *
 * Every key word of every dialect (the whole generated table) names a
 * column, quoted as that dialect's dump tool quotes it -- pg_dump leaves
 * unreserved key words bare and quotes the rest, sqlite3 .dump repeats the
 * text the table was made with (bare where sqlite accepts it), mariadb-dump
 * backquotes every name -- and the column list comes out whole; each
 * dialect's table-constraint forms are still constraints, not columns.
 * Also: PostgreSQL domains (nested, qualified or not) and CREATE TYPE
 * types resolve as the database has them; a column the rows name but the
 * CREATE TABLE lacks is reported with that CREATE TABLE's line and the
 * columns read from it.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strlen, strstr, strcmp */

#include "common/buf.h"
#include "formats/input.h"
#include "formats/sql_ddl.h"
#include "formats/sql_dump.h"
#include "formats/sql_keywords.h"

/* Reads sql (CREATE TABLE, DOMAIN or TYPE statements) into cat. */
static void read_ddl(el_sql_catalog *cat, el_sql_dialect dialect, const char *sql)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "mem.sql", &in, &d), EL_OK);
    el_sql_lex *lex = NULL;
    assert_int_equal(el_sql_lex_new(in, dialect, &lex), EL_OK);
    el_buf w1, w2;
    el_buf_init(&w1, EL_SQL_NAME_MAX);
    el_buf_init(&w2, EL_SQL_NAME_MAX);
    el_sql_tok tok;
    for (;;) {
        el_buf_reset(&w1);
        assert_int_equal(el_sql_lex_next(lex, &tok, &w1, &d), EL_OK);
        if (tok.kind == EL_TOK_EOF)
            break;
        if (tok.kind == EL_TOK_END)
            continue;
        assert_int_equal(tok.kind, EL_TOK_WORD); /* CREATE */
        el_buf_reset(&w1);
        assert_int_equal(el_sql_lex_next(lex, &tok, &w1, &d), EL_OK);
        const char *what = el_buf_str(&w1);
        el_err err;
        if (el_sql_word_is(what, "table"))
            err = el_sql_create_table(cat, lex, dialect, &w1, &w2, &d);
        else if (el_sql_word_is(what, "domain"))
            err = el_sql_create_domain(cat, lex, dialect, &w1, &w2, &d);
        else
            err = el_sql_create_type(cat, lex, dialect, &w1, &w2, &d);
        if (err)
            fail_msg("%s: %s", sql, d.msg);
    }
    el_buf_free(&w1);
    el_buf_free(&w2);
    el_sql_lex_free(lex);
    el_input_free(in);
}

/* The columns of table t as "a,b,c" ("-" when t was not remembered). */
static void columns_of(const el_sql_catalog *cat, const char *t, char *out, size_t n)
{
    const el_sql_table *def = el_sql_catalog_find(cat, NULL, t);
    size_t len = 0;
    out[0] = '\0';
    if (!def) {
        snprintf(out, n, "-");
        return;
    }
    for (size_t i = 0; i < def->ncols && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? "," : "", def->cols[i]);
}

static void expect_columns(el_sql_dialect dialect, const char *sql, const char *want)
{
    el_sql_catalog *cat = el_sql_catalog_new();
    assert_non_null(cat);
    read_ddl(cat, dialect, sql);
    char got[4096];
    columns_of(cat, "t", got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("dialect %d: %s\n  columns %s, expected %s", (int)dialect, sql, got, want);
    el_sql_catalog_free(cat);
}

/* How the dialect's dump tool writes a column named w. */
static void quote_as_tool(el_sql_dialect dialect, const el_sql_keyword *k, char *out, size_t n)
{
    switch (dialect) {
    case EL_SQL_MYSQL: /* mariadb-dump: every name backquoted */
        snprintf(out, n, "`%s`", k->word);
        break;
    case EL_SQL_POSTGRES: /* pg_dump's fmtId: bare only if unreserved */
        snprintf(out, n, k->cls == EL_KW_UNRESERVED ? "%s" : "\"%s\"", k->word);
        break;
    case EL_SQL_SQLITE: /* .dump repeats the text: bare where sqlite takes it */
        snprintf(out, n, k->cls == EL_KW_UNRESERVED ? "%s" : "\"%s\"", k->word);
        break;
    }
}

static void every_keyword_names_a_column(void **state)
{
    (void)state;
    const el_sql_dialect all[] = {EL_SQL_MYSQL, EL_SQL_POSTGRES, EL_SQL_SQLITE};
    static const char *const type[] = {"int(11)", "integer", "INTEGER"};
    size_t total = 0;
    for (size_t di = 0; di < 3; di++) {
        el_sql_dialect dialect = all[di];
        size_t n;
        const el_sql_keyword *kw = el_sql_keywords(dialect, &n);
        assert_true(n > 100); /* the whole list, not a handful */
        for (size_t i = 0; i < n; i++) {
            char name[128], sql[512], want[256];
            quote_as_tool(dialect, &kw[i], name, sizeof name);
            /* first, in the middle with a constraint after it, and last */
            snprintf(sql, sizeof sql,
                     "CREATE TABLE t (%s %s NOT NULL, b text, %s %s DEFAULT NULL, c %s,\n"
                     "  PRIMARY KEY (b), CHECK (c > 0));",
                     name, type[di], "x", type[di], type[di]);
            snprintf(want, sizeof want, "%s,b,x,c", kw[i].word);
            expect_columns(dialect, sql, want);
            snprintf(sql, sizeof sql, "CREATE TABLE t (a %s, %s %s, UNIQUE (a));", type[di],
                     name, type[di]);
            snprintf(want, sizeof want, "a,%s", kw[i].word);
            expect_columns(dialect, sql, want);
            /* a word the dialect does not reserve is a column bare too */
            if (kw[i].cls == EL_KW_UNRESERVED || kw[i].cls == EL_KW_COLNAME) {
                snprintf(sql, sizeof sql, "CREATE TABLE t (a %s, %s %s);", type[di],
                         kw[i].word, type[di]);
                snprintf(want, sizeof want, "a,%s", kw[i].word);
                expect_columns(dialect, sql, want);
            }
            total++;
        }
    }
    assert_true(total > 1000);
}

static void constraints_are_not_columns(void **state)
{
    (void)state;
    static const char *const my[] = {
        "PRIMARY KEY (`a`)", "UNIQUE KEY `uk` (`a`)", "UNIQUE (`a`)", "UNIQUE INDEX (`a`)",
        "KEY `k` (`a`)", "INDEX `i` (`a`) USING BTREE", "KEY (`a`)", "FULLTEXT KEY `f` (`a`)",
        "FULLTEXT (`a`)", "SPATIAL INDEX `s` (`a`)", "SPATIAL KEY (`a`)",
        "CONSTRAINT `c` FOREIGN KEY (`a`) REFERENCES `x` (`y`) ON DELETE CASCADE",
        "FOREIGN KEY (`a`) REFERENCES `x` (`y`)", "CHECK (`a` > 0)",
        "CONSTRAINT `c` CHECK (`a` > 0)", "CONSTRAINT CHECK (a > 0)",
        "PERIOD FOR `p` (`a`, `b`)", "PERIOD FOR SYSTEM_TIME (`a`, `b`)",
        "primary key (a)", "unique key (a)", "key k (a)", "index (a)"};
    static const char *const pg[] = {
        "CONSTRAINT t_pkey PRIMARY KEY (a)", "PRIMARY KEY (a)", "UNIQUE (a)",
        "UNIQUE NULLS NOT DISTINCT (a)", "CHECK ((a > 0))", "CONSTRAINT c CHECK (a > 0)",
        "EXCLUDE USING gist (a WITH =)", "EXCLUDE (a WITH =)",
        "FOREIGN KEY (a) REFERENCES x(y)", "CONSTRAINT f FOREIGN KEY (a) REFERENCES x(y)",
        "LIKE other INCLUDING ALL", "like other"};
    static const char *const sq[] = {
        "PRIMARY KEY (a)", "PRIMARY KEY (a AUTOINCREMENT)", "UNIQUE (a)", "CHECK (a > 0)",
        "FOREIGN KEY (a) REFERENCES x(y)", "CONSTRAINT c UNIQUE (a)",
        "CONSTRAINT \"c\" CHECK (a > 0)", "primary key(a)"};
    const struct {
        el_sql_dialect d;
        const char *const *forms;
        size_t n;
        const char *type;
    } cases[] = {{EL_SQL_MYSQL, my, sizeof my / sizeof *my, "int"},
                 {EL_SQL_POSTGRES, pg, sizeof pg / sizeof *pg, "integer"},
                 {EL_SQL_SQLITE, sq, sizeof sq / sizeof *sq, "INTEGER"}};
    for (size_t c = 0; c < 3; c++) {
        for (size_t i = 0; i < cases[c].n; i++) {
            char sql[512];
            snprintf(sql, sizeof sql, "CREATE TABLE t (a %s, b %s, %s, z %s);", cases[c].type,
                     cases[c].type, cases[c].forms[i], cases[c].type);
            expect_columns(cases[c].d, sql, "a,b,z");
            snprintf(sql, sizeof sql, "CREATE TABLE t (a %s, b %s, %s);", cases[c].type,
                     cases[c].type, cases[c].forms[i]);
            expect_columns(cases[c].d, sql, "a,b");
        }
    }
}

/* The words that start a constraint in one dialect name a column, bare,
 * where another dialect's grammar (or this one's, before a type) says so. */
static void constraint_words_as_columns(void **state)
{
    (void)state;
    /* pg_dump 15 writes these bare (unreserved in PostgreSQL) */
    expect_columns(EL_SQL_POSTGRES,
                   "CREATE TABLE public.t (\n    id integer NOT NULL,\n    key text NOT NULL,\n"
                   "    value text,\n    fulltext tsvector NOT NULL,\n    index integer,\n"
                   "    spatial text,\n    period integer,\n    exclude text,\n"
                   "    \"primary\" boolean,\n    \"check\" numeric(10,2),\n"
                   "    \"unique\" text,\n    \"constraint\" text,\n    \"foreign\" text,\n"
                   "    \"like\" text,\n    CONSTRAINT c CHECK ((id > 0))\n);",
                   "id,key,value,fulltext,index,spatial,period,exclude,primary,check,unique,"
                   "constraint,foreign,like");
    expect_columns(EL_SQL_SQLITE,
                   "CREATE TABLE t (key TEXT PRIMARY KEY, value TEXT, fulltext TEXT,\n"
                   "  spatial TEXT, period INT, exclude TEXT, like TEXT, [index] INT,\n"
                   "  [primary] INT, \"check\" REAL, `unique` TEXT, UNIQUE (value));",
                   "key,value,fulltext,spatial,period,exclude,like,index,primary,check,unique");
    expect_columns(EL_SQL_MYSQL,
                   "CREATE TABLE t (`key` varchar(4), period int, exclude int, `fulltext` text,\n"
                   "  `index` int, KEY `key` (`key`), PERIOD FOR p (period, exclude));",
                   "key,period,exclude,fulltext,index");
    /* a type stops at a word of the grammar, not a column of that name */
    el_sql_catalog *cat = el_sql_catalog_new();
    read_ddl(cat, EL_SQL_POSTGRES, "CREATE TABLE t (key character varying(20) NOT NULL, "
                                   "index double precision DEFAULT 0);");
    const el_sql_table *t = el_sql_catalog_find(cat, NULL, "t");
    assert_non_null(t);
    assert_int_equal(t->ncols, 2);
    assert_string_equal(t->types[0], "character varying(20)");
    assert_string_equal(t->types[1], "double precision");
    assert_int_equal(t->line, 1);
    el_sql_catalog_free(cat);
}

static void domains_and_enums(void **state)
{
    (void)state;
    el_sql_catalog *cat = el_sql_catalog_new();
    read_ddl(cat, EL_SQL_POSTGRES,
             "CREATE DOMAIN public.year AS integer\n"
             "\tCONSTRAINT year_check CHECK (((VALUE >= 1901) AND (VALUE <= 2155)));\n"
             "CREATE DOMAIN app.recent_year AS public.year CONSTRAINT r CHECK ((VALUE >= 2000));\n"
             "CREATE DOMAIN app.newest AS app.recent_year;\n"
             "CREATE DOMAIN public.price AS numeric(10,2) NOT NULL DEFAULT 0;\n"
             "CREATE DOMAIN public.label AS character varying(20) COLLATE pg_catalog.\"C\";\n"
             "CREATE DOMAIN flag boolean;\n"
             "CREATE DOMAIN public.blob AS bytea;\n"
             "CREATE TYPE public.mood AS ENUM (\n    'sad',\n    'ok'\n);\n"
             "CREATE TYPE public.pair AS (a integer, b text);\n"
             "CREATE TYPE public.shell;\n");
    const el_sql_dialect pg = EL_SQL_POSTGRES;
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.year"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "year"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "Public.Year"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "app.recent_year"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "app.newest"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.price"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.label"), EL_COL_TEXT);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.flag"), EL_COL_BOOL);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.blob"), EL_COL_BINARY);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.mood"), EL_COL_TEXT);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.pair"), EL_COL_TEXT);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "public.year[]"), EL_COL_TEXT);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "integer"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "pg_catalog.int4"), EL_COL_NUMBER);
    assert_int_equal(el_sql_catalog_coltype(cat, pg, "other.unknown"), EL_COL_TEXT);
    el_sql_catalog_free(cat);

    /* without the domain, year is no number in PostgreSQL */
    el_sql_catalog *none = el_sql_catalog_new();
    assert_int_equal(el_sql_catalog_coltype(none, pg, "public.year"), EL_COL_TEXT);
    assert_int_equal(el_sql_catalog_coltype(none, EL_SQL_MYSQL, "year(4)"), EL_COL_NUMBER);
    el_sql_catalog_free(none);

    /* a domain declared in a loop (no database allows it) ends as text */
    el_sql_catalog *loop = el_sql_catalog_new();
    read_ddl(loop, pg, "CREATE DOMAIN a AS b; CREATE DOMAIN b AS a;");
    assert_int_equal(el_sql_catalog_coltype(loop, pg, "a"), EL_COL_TEXT);
    el_sql_catalog_free(loop);
}

/* The explicit type table, a line for each kind (docs/types.md). */
static void type_table(void **state)
{
    (void)state;
    const el_sql_dialect my = EL_SQL_MYSQL, pg = EL_SQL_POSTGRES, sq = EL_SQL_SQLITE;
    assert_int_equal(el_sql_coltype(pg, "tsvector"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "uuid"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "interval"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "inet"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "money"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "point"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "text[]"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "integer[]"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(pg, "double precision"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(pg, "numeric(10,2)"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(pg, "boolean"), EL_COL_BOOL);
    assert_int_equal(el_sql_coltype(pg, "bytea"), EL_COL_BINARY);
    assert_int_equal(el_sql_coltype(pg, "bit(3)"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(my, "bit(3)"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(my, "year"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(sq, "year"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(my, "tinyint(1)"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(my, "long varbinary"), EL_COL_BINARY);
    assert_int_equal(el_sql_coltype(my, "enum('a','b')"), EL_COL_TEXT);
    assert_int_equal(el_sql_coltype(sq, "REAL"), EL_COL_NUMBER);
    assert_int_equal(el_sql_coltype(sq, "BLOB"), EL_COL_BINARY);
    assert_int_equal(el_sql_coltype(sq, NULL), EL_COL_TEXT);
}

/* Rows naming a column the CREATE TABLE lacks: the message names that
 * CREATE TABLE's line and the columns read from it. */
static void mismatch_names_the_create_table(void **state)
{
    (void)state;
    const char *sql = "SET standard_conforming_strings = on;\n"
                      "\n"
                      "CREATE TABLE public.settings (\n"
                      "    value text,\n"
                      "    CONSTRAINT c CHECK ((value <> ''))\n"
                      ");\n"
                      "INSERT INTO public.settings (key, value) VALUES ('a', 'b');\n";
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "dump.sql", &in, &d), EL_OK);
    el_reader_opts opts = {0};
    const el_reader_ops *ops = NULL;
    void *self = NULL;
    el_err err = el_sql_dump_open(in, EL_SQL_POSTGRES, &opts, &ops, &self, &d);
    if (!err) {
        el_row row;
        memset(&row, 0, sizeof row);
        err = ops->next(self, &row, &d);
        ops->free(self);
    } else {
        el_input_free(in);
    }
    assert_int_not_equal(err, EL_OK);
    if (!strstr(d.msg, "dump.sql:3") || !strstr(d.msg, "'key'") ||
        !strstr(d.msg, "columns value"))
        fail_msg("message: %s", d.msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_keyword_names_a_column),
        cmocka_unit_test(constraints_are_not_columns),
        cmocka_unit_test(constraint_words_as_columns),
        cmocka_unit_test(domains_and_enums),
        cmocka_unit_test(type_table),
        cmocka_unit_test(mismatch_names_the_create_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
