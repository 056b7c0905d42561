/*
 * test_postgres_reader.c - the pg_dump reader, on the fixture dumps made by
 * pg_dump (COPY, --inserts, --column-inserts, --rows-per-insert) and on
 * hand-written COPY blocks and statements for each rule.
 */
#include "sql_fixture.h"

static void fixture_copy(void **state)
{
    (void)state;
    check_fixture(EL_FMT_POSTGRES, "pg_copy.sql", "public.samples", "pg_copy.samples.expected");
    check_fixture(EL_FMT_POSTGRES, "pg_copy.sql", "follows", "pg.follows.expected");
    check_fixture(EL_FMT_POSTGRES, "pg_copy.sql", "app.Edge List", "pg.edge_list.expected");
}

static void fixture_inserts(void **state)
{
    (void)state;
    static const char *const dumps[] = {"pg_inserts.sql", "pg_column_inserts.sql",
                                        "pg_rows3.sql"};
    for (size_t i = 0; i < 3; i++) {
        check_fixture(EL_FMT_POSTGRES, dumps[i], "samples", "pg_inserts.samples.expected");
        check_fixture(EL_FMT_POSTGRES, dumps[i], "public.follows", "pg.follows.expected");
        check_fixture(EL_FMT_POSTGRES, dumps[i], "Edge List", "pg.edge_list.expected");
    }
}

static void fixture_compressed_auto(void **state)
{
    (void)state;
    check_fixture(EL_FMT_AUTO, "pg_copy.sql.zst", "samples", "pg_copy.samples.expected");
    check_fixture(EL_FMT_AUTO, "pg_copy.sql.gz", "follows", "pg.follows.expected");
}

static void copy_escapes(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_postgres_reader_open,
             "CREATE TABLE public.t (a text, b bytea, c boolean);\n"
             "COPY public.t (a, b, c) FROM stdin;\n"
             "\\b\\f\\n\\r\\t\\v\\\\\\101\\7\\x41\\x4g\\q\t\\\\x00ff\tt\n"
             "\\N\t\\N\t\\N\n"
             "\\\\N\t\\\\000\\\\\\\\a\tf\n"
             "\t\\\\x\t\\N\r\n"
             "\\.\n",
             NULL, &r);
    assert_int_equal(r.open_err, EL_OK);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rejects, 0);
    /* \x4g: one hex digit then 'g'; \q: q; bytea escape form \000 and \\ */
    assert_string_equal(el_buf_str(&r.text),
                        "x080C0A0D090B5C410741046771\tx00FF\tx74\n"
                        "NULL\tNULL\tNULL\n"
                        "x5C4E\tx005C61\tx66\n"
                        "x\tx\tNULL\n");
    mem_free(&r);
}

static void copy_bad_lines(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_postgres_reader_open,
             "CREATE TABLE t (a integer, b bytea);\nCOPY t (a, b) FROM stdin;\n"
             "1\n2\t\\\\xzz\n3\t\\\\x01\t9\n4\t\\\\x02\n\\.\n",
             NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rows, 1);
    assert_int_equal(r.rejects, 3);
    assert_non_null(strstr(r.diag.msg, "expected 2, got 1"));
    assert_int_equal(r.diag.line, 3);
    assert_string_equal(el_buf_str(&r.text), "x34\tx02\n");
    mem_free(&r);
    /* no "\." before the end: truncated */
    read_mem(el_postgres_reader_open,
             "CREATE TABLE t (a integer);\nCOPY t (a) FROM stdin;\n1\n2\n", NULL, &r);
    assert_int_equal(r.rows, 2);
    assert_int_equal(r.end_err, EL_ETRUNCATED);
    mem_free(&r);
    read_mem(el_postgres_reader_open,
             "CREATE TABLE t (a integer);\nCOPY t (a) FROM stdin;\n1\n2", NULL, &r);
    assert_int_equal(r.end_err, EL_ETRUNCATED);
    mem_free(&r);
}

static void inserts_and_casts(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_postgres_reader_open,
             "SET standard_conforming_strings = on;\n"
             "CREATE TABLE \"My Schema\".\"T\" (id integer, s text, b bytea, f boolean, "
             "n numeric(10,2));\n"
             "INSERT INTO \"My Schema\".\"T\" (id, s, b, f, n) OVERRIDING SYSTEM VALUE VALUES "
             "(1, 'a\\b', '\\x00ff', true, -1.50), (2, E'x\\ty\\\\z\\'', NULL, false, "
             "'NaN'::numeric), (3, 'c'::character varying(10), '\\x'::bytea, NULL, 1e5)"
             " ON CONFLICT DO NOTHING;\n",
             "My Schema.T", &r);
    assert_int_equal(r.open_err, EL_OK);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rejects, 0);
    assert_string_equal(el_buf_str(&r.text),
                        "x31\tx615C62\tx00FF\tx74727565\tx2D312E3530\n"
                        "x32\tx7809795C7A27\tNULL\tx66616C7365\tx4E614E\n"
                        "x33\tx63\tx\tNULL\tx316535\n");
    mem_free(&r);
}

static void functions_and_meta_skipped(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_postgres_reader_open,
             "\\restrict k\nCREATE FUNCTION f() RETURNS void AS $body$\n"
             "BEGIN INSERT INTO t VALUES (99); END; $body$ LANGUAGE plpgsql;\n"
             "CREATE TABLE t (a integer);\n/* COPY t (a) FROM stdin; */\n"
             "COMMENT ON TABLE t IS 'COPY t FROM stdin;';\n"
             "COPY t (a) FROM stdin;\n1\n\\.\n\\unrestrict k\n",
             NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x31\n");
    mem_free(&r);
}

static void several_tables(void **state)
{
    (void)state;
    mem_result r;
    char *path = fixture_path("pg_copy.sql");
    size_t len;
    char *text = slurp(path, &len);
    read_mem(el_postgres_reader_open, text, NULL, &r);
    assert_int_equal(r.end_err, EL_EUSAGE);
    assert_non_null(strstr(r.diag.msg, "app.Edge List"));
    assert_non_null(strstr(r.diag.msg, "public.follows"));
    mem_free(&r);
    /* an empty table chosen: its schema, no rows */
    read_mem(el_postgres_reader_open, text, "empty_t", &r);
    assert_int_equal(r.open_err, EL_OK);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rows, 0);
    mem_free(&r);
    free(text);
    free(path);
}

static void truncated_fixture_everywhere(void **state)
{
    (void)state;
    size_t len;
    char *path = fixture_path("../../fuzz/corpus/fuzz_postgres/pg_copy.sql");
    char *text = slurp(path, &len);
    const char *trailer = strstr(text, "-- PostgreSQL database dump complete");
    assert_non_null(trailer);
    for (size_t cut = 40; cut < (size_t)(trailer - text); cut += 89) {
        char saved = text[cut];
        text[cut] = '\0';
        mem_result r;
        read_mem(el_postgres_reader_open, text, "samples", &r);
        el_err e = r.open_err ? r.open_err : r.end_err;
        if (e != EL_ETRUNCATED)
            fail_msg("cut at %zu: %s (%s)", cut, el_strerror(e), r.diag.msg);
        mem_free(&r);
        text[cut] = saved;
    }
    free(text);
    free(path);
}

static void old_style_strings(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_postgres_reader_open,
             "SET standard_conforming_strings = off;\nCREATE TABLE t (a text);\n"
             "INSERT INTO t VALUES ('a\\\\b\\n''c');\n"
             "SET standard_conforming_strings TO on;\nINSERT INTO t VALUES ('a\\\\b');\n",
             NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x615C620A2763\nx615C5C62\n");
    mem_free(&r);
}

static void declared_types(void **state)
{
    (void)state;
    char *path = fixture_path("pg_copy.sql");
    el_reader_opts opts = {0};
    opts.format = EL_FMT_POSTGRES;
    opts.source_table = "samples";
    el_reader *r;
    el_diag d;
    assert_int_equal(el_reader_open(path, &opts, &r, &d), EL_OK);
    const el_schema *s = el_reader_schema(r);
    static const char *const want[] = {
        "integer", "text", "smallint", "bigint", "numeric(20,6)", "double precision", "real",
        "boolean", "timestamp without time zone", "timestamp with time zone", "date",
        "character varying(40)", "bytea", "jsonb"};
    assert_int_equal(s->ncols, 14);
    for (size_t i = 0; i < 14; i++)
        assert_string_equal(s->sql_types[i], want[i]);
    el_reader_free(r);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_copy),
        cmocka_unit_test(fixture_inserts),
        cmocka_unit_test(fixture_compressed_auto),
        cmocka_unit_test(copy_escapes),
        cmocka_unit_test(copy_bad_lines),
        cmocka_unit_test(inserts_and_casts),
        cmocka_unit_test(functions_and_meta_skipped),
        cmocka_unit_test(several_tables),
        cmocka_unit_test(truncated_fixture_everywhere),
        cmocka_unit_test(old_style_strings),
        cmocka_unit_test(declared_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
