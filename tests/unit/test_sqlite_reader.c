/*
 * test_sqlite_reader.c - the sqlite3 .dump reader, on the fixture dump made
 * by sqlite3 and on hand-written statements for each rule.
 */
#include "sql_fixture.h"

static void fixture_dump(void **state)
{
    (void)state;
    check_fixture(EL_FMT_SQLITE, "sqlite.sql", "samples", "sqlite.samples.expected");
    check_fixture(EL_FMT_SQLITE, "sqlite.sql", "follows", "sqlite.follows.expected");
}

static void fixture_compressed_auto(void **state)
{
    (void)state;
    check_fixture(EL_FMT_AUTO, "sqlite.sql.zst", "samples", "sqlite.samples.expected");
    check_fixture(EL_FMT_AUTO, "sqlite.sql.gz", "follows", "sqlite.follows.expected");
}

static void expressions(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_sqlite_reader_open,
             "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"
             "CREATE TABLE IF NOT EXISTS \"t\" ([a] INTEGER, `b` TEXT, c BLOB, d REAL);\n"
             "INSERT INTO t VALUES(1,replace(replace('x\\r\\ny\\n','\\r',char(13)),'\\n',"
             "char(10)),X'00FF',1.0000000000000000047e+300);\n"
             "INSERT INTO t VALUES(2,char(26085,26412),x'',-2.5000000000000001556e-10);\n"
             "INSERT INTO t VALUES(3,unistr('caf\\u00e9 \\+01F600 \\\\'),NULL,0.1);\n"
             "INSERT INTO t VALUES(4,replace('abab','ab',''),NULL,-0.0);\n"
             "COMMIT;\n",
             NULL, &r);
    assert_int_equal(r.open_err, EL_OK);
    if (r.end_err != EL_EOF)
        fail_msg("%s", r.diag.msg);
    assert_int_equal(r.rejects, 0);
    assert_string_equal(el_buf_str(&r.text),
                        "x31\tx780D0A790A\tx00FF\tx31652B333030\n"
                        "x32\txE697A5E69CAC\tx\tx2D322E35652D3130\n"
                        "x33\tx636166C3A920F09F9880205C\tNULL\tx302E31\n"
                        "x34\tx\tNULL\tx2D302E30\n");
    mem_free(&r);
}

static void truncated(void **state)
{
    (void)state;
    mem_result r;
    /* a complete statement, but no COMMIT: cut short */
    read_mem(el_sqlite_reader_open,
             "BEGIN TRANSACTION;\nCREATE TABLE t (a);\nINSERT INTO t VALUES(1);\n", NULL, &r);
    assert_int_equal(r.rows, 1);
    assert_int_equal(r.end_err, EL_ETRUNCATED);
    mem_free(&r);
    read_mem(el_sqlite_reader_open,
             "BEGIN TRANSACTION;\nCREATE TABLE t (a);\nINSERT INTO t VALUES(replace('a", NULL,
             &r);
    assert_int_equal(r.open_err ? r.open_err : r.end_err, EL_ETRUNCATED);
    mem_free(&r);
    /* bad function use is a reject, and the next statement is read */
    read_mem(el_sqlite_reader_open,
             "CREATE TABLE t (a);\nINSERT INTO t VALUES(replace('a'));\n"
             "INSERT INTO t VALUES(2);\n", NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rejects, 1);
    assert_string_equal(el_buf_str(&r.text), "x32\n");
    mem_free(&r);
}

static void internal_tables_ignored(void **state)
{
    (void)state;
    mem_result r;
    const char *sql = "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n"
                      "CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);\n"
                      "INSERT INTO t VALUES(1,'a');\n"
                      "DELETE FROM sqlite_sequence;\n"
                      "INSERT INTO sqlite_sequence VALUES('t',1);\n"
                      "ANALYZE sqlite_schema;\nINSERT INTO sqlite_stat1 VALUES('t',NULL,'1');\n"
                      "COMMIT;\n";
    read_mem(el_sqlite_reader_open, sql, NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x31\tx61\n");
    mem_free(&r);
    /* asked for by name it is read, but .dump never declares its columns */
    read_mem(el_sqlite_reader_open, sql, "sqlite_sequence", &r);
    assert_int_equal(r.open_err, EL_EUSAGE);
    assert_non_null(strstr(r.diag.msg, "no column names"));
    mem_free(&r);
}

static void name_case_folded(void **state)
{
    (void)state;
    el_input *in;
    el_diag d;
    const char *sql = "CREATE TABLE Foo (a INTEGER, b BLOB);\nINSERT INTO \"foo\" VALUES(1,X'41');\n";
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "t.sql", &in, &d), EL_OK);
    el_reader_opts opts = {0};
    const el_reader_ops *ops;
    void *self;
    assert_int_equal(el_sqlite_reader_open(in, &opts, &ops, &self, &d), EL_OK);
    const el_schema *s = ops->schema(self);
    assert_int_equal(s->ncols, 2);
    assert_int_equal(s->types[0], EL_COL_NUMBER);
    assert_int_equal(s->types[1], EL_COL_BINARY);
    el_row row;
    assert_int_equal(ops->next(self, &row, &d), EL_OK);
    assert_int_equal(row.values[1].len, 1);
    assert_int_equal(ops->next(self, &row, &d), EL_EOF);
    ops->free(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_dump),
        cmocka_unit_test(fixture_compressed_auto),
        cmocka_unit_test(expressions),
        cmocka_unit_test(truncated),
        cmocka_unit_test(internal_tables_ignored),
        cmocka_unit_test(name_case_folded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
