/*
 * test_mysql_reader.c - the mysqldump / mariadb-dump reader, on the fixture
 * dumps made by mariadb-dump (tests/fixtures/sql/make_fixtures.sh) and on
 * hand-written statements for each rule.
 */
#include "sql_fixture.h"

static void fixture_default(void **state)
{
    (void)state;
    check_fixture(EL_FMT_MYSQL, "mariadb_default.sql", "samples", "mariadb.samples.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_default.sql", "follows", "mariadb.follows.expected");
}

static void fixture_variants(void **state)
{
    (void)state;
    check_fixture(EL_FMT_MYSQL, "mariadb_complete.sql", "samples", "mariadb.samples.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_complete.sql", "fx.follows", "mariadb.follows.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_hexblob.sql", "samples", "mariadb.samples.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_single.sql", "samples", "mariadb.samples.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_single.sql", "follows", "mariadb.follows.expected");
    check_fixture(EL_FMT_MYSQL, "mariadb_replace.sql", NULL, "mariadb.samples.expected");
}

static void fixture_compressed_auto(void **state)
{
    (void)state;
    check_fixture(EL_FMT_AUTO, "mariadb_default.sql.zst", "samples", "mariadb.samples.expected");
    check_fixture(EL_FMT_AUTO, "mariadb_default.sql.gz", "follows", "mariadb.follows.expected");
}

static void values_and_escapes(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_mysql_reader_open,
             "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `s` varchar(10) DEFAULT NULL,\n"
             "  `b` bit(12) DEFAULT NULL,\n  `f` tinyint(1),\n  `bin` varbinary(4),\n"
             "  PRIMARY KEY (`id`), KEY `k` (`s`)\n) ENGINE=InnoDB;\n"
             "INSERT INTO `t` VALUES (1,'a\\0b\\'\\\"\\b\\n\\r\\t\\Z\\\\\\%\\_',b'101',1,0x00FF),\n"
             "(-2,'it''s',_binary '\\0\\n',0,_binary 'x'),(3.5e-3,NULL,0x0102,NULL,X'0a'),"
             "(4,'',b'0',true,'');\n",
             NULL, &r);
    assert_int_equal(r.open_err, EL_OK);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rejects, 0);
    assert_int_equal(r.rows, 4);
    /* row 1 */
    assert_non_null(strstr(el_buf_str(&r.text),
        "x31\tx610062272208" "0A0D091A5C5C255C5F\tx35\tx31\tx00FF\n"));
    /* row 2: _binary string in a bit column is a number: 0x000A = 10 */
    assert_non_null(strstr(el_buf_str(&r.text), "x2D32\tx69742773\tx3130\tx30\tx78\n"));
    /* row 3: 0x0102 = 258 */
    assert_non_null(strstr(el_buf_str(&r.text), "x332E35652D33\tNULL\tx323538\tNULL\tx0A\n"));
    assert_non_null(strstr(el_buf_str(&r.text), "x34\tx\tx30\tx74727565\tx\n"));
    mem_free(&r);
}

static void schema_types(void **state)
{
    (void)state;
    el_input *in;
    el_diag d;
    const char *sql = "CREATE TABLE t (a tinyint(1), b bit(1), c decimal(20,6) unsigned, "
                      "d double precision, e datetime, f blob, g enum('x','y'), h boolean, "
                      "`i` binary(16), j point, k interval_text);\nINSERT INTO t VALUES "
                      "(1,b'1',1,1,'x',NULL,'x',1,NULL,NULL,NULL);\n";
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "t.sql", &in, &d), EL_OK);
    const el_reader_ops *ops;
    void *self;
    el_reader_opts opts = {0};
    assert_int_equal(el_mysql_reader_open(in, &opts, &ops, &self, &d), EL_OK);
    const el_schema *s = ops->schema(self);
    assert_int_equal(s->ncols, 11);
    static const el_coltype want[] = {EL_COL_NUMBER, EL_COL_NUMBER, EL_COL_NUMBER,
                                      EL_COL_NUMBER, EL_COL_TEXT, EL_COL_BINARY,
                                      EL_COL_TEXT, EL_COL_BOOL, EL_COL_BINARY, EL_COL_TEXT,
                                      EL_COL_TEXT};
    for (size_t i = 0; i < 11; i++)
        assert_int_equal(s->types[i], want[i]);
    assert_string_equal(s->sql_types[0], "tinyint(1)");
    assert_string_equal(s->sql_types[1], "bit(1)");
    assert_string_equal(s->sql_types[2], "decimal(20,6) unsigned");
    assert_string_equal(s->sql_types[3], "double precision");
    assert_string_equal(s->sql_types[6], "enum('x','y')");
    assert_string_equal(s->names[8], "i");
    ops->free(self);
}

static void bad_tuples_resume(void **state)
{
    (void)state;
    mem_result r;
    /* wrong arity, then a value over 400 KB, then good rows again */
    size_t big = 410 * 1024;
    char *sql = malloc(big + 512);
    assert_non_null(sql);
    int n = snprintf(sql, 512, "CREATE TABLE t (a int, b text);\n"
                               "INSERT INTO t VALUES (1,'x'),(2),(3,'y',4),(5,'");
    memset(sql + n, 'z', big);
    snprintf(sql + n + big, 512, "'),(6,'ok');\nINSERT INTO t VALUES (7,'q');\n");
    read_mem(el_mysql_reader_open, sql, NULL, &r);
    assert_int_equal(r.open_err, EL_OK);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rows, 3);
    assert_int_equal(r.rejects, 3);
    assert_non_null(strstr(r.diag.msg, "expected 2, got 1"));
    assert_int_equal(r.diag.line, 2);
    mem_free(&r);

    /* the oversized value names its column */
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "t.sql", &in, &d), EL_OK);
    const el_reader_ops *ops;
    void *self;
    el_reader_opts opts = {0};
    assert_int_equal(el_mysql_reader_open(in, &opts, &ops, &self, &d), EL_OK);
    el_row row;
    assert_int_equal(ops->next(self, &row, &d), EL_OK);
    assert_int_equal(ops->next(self, &row, &d), EL_EREJECT);
    assert_int_equal(ops->next(self, &row, &d), EL_EREJECT);
    assert_non_null(strstr(d.msg, "expected 2, got 3"));
    assert_int_equal(ops->next(self, &row, &d), EL_EREJECT);
    assert_non_null(strstr(d.msg, "column 'b'"));
    assert_non_null(strstr(d.msg, "400 KB"));
    assert_int_equal(row.values[0].len, 1);
    assert_int_equal(ops->next(self, &row, &d), EL_OK);
    assert_string_equal(row.values[1].data, "ok");
    ops->free(self);
    free(sql);
}

static void syntax_error_skips_statement(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_mysql_reader_open,
             "CREATE TABLE t (a int);\nINSERT INTO t VALUES (1),(2 3),(4);\n"
             "INSERT INTO t VALUES (5);\n", NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_int_equal(r.rows, 2);
    assert_int_equal(r.rejects, 1);
    assert_int_equal(r.diag.line, 2);
    assert_string_equal(el_buf_str(&r.text), "x31\nx35\n");
    mem_free(&r);
}

static void truncated_is_never_success(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "CREATE TABLE t (a text);\nINSERT INTO t VALUES ('abc",   /* in a string */
        "CREATE TABLE t (a text);\nINSERT INTO t VALUES ('a'),",  /* between tuples */
        "CREATE TABLE t (a text);\nINSERT INTO t VALUES ('a')",   /* no ';' */
        "-- MySQL dump 10.13\nCREATE TABLE t (a text);\nINSERT INTO t VALUES ('a');\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mem_result r;
        read_mem(el_mysql_reader_open, cases[i], NULL, &r);
        el_err e = r.open_err ? r.open_err : r.end_err;
        if (e != EL_ETRUNCATED)
            fail_msg("case %zu: %s (%s)", i, el_strerror(e), r.diag.msg);
        assert_true(r.diag.line >= 1);
        mem_free(&r);
    }
}

static void truncated_fixture_everywhere(void **state)
{
    (void)state;
    /* the fixture without its 100 KB row, cut every 97 bytes */
    size_t len;
    char *path = fixture_path("../../fuzz/corpus/fuzz_mysql/mariadb_default.sql");
    char *text = slurp(path, &len);
    const char *trailer = strstr(text, "-- Dump completed");
    const char *header = strstr(text, "-- MariaDB dump");
    assert_non_null(trailer);
    assert_non_null(header);
    for (size_t cut = (size_t)(header - text) + 20; cut < (size_t)(trailer - text); cut += 97) {
        char saved = text[cut];
        text[cut] = '\0';
        mem_result r;
        read_mem(el_mysql_reader_open, text, "samples", &r);
        el_err e = r.open_err ? r.open_err : r.end_err;
        if (e != EL_ETRUNCATED)
            fail_msg("cut at %zu: %s (%s)", cut, el_strerror(e), r.diag.msg);
        mem_free(&r);
        text[cut] = saved;
    }
    free(text);
    free(path);
}

static void table_choice(void **state)
{
    (void)state;
    const char *sql = "CREATE TABLE a (x int);\nCREATE TABLE b (y int);\n"
                      "INSERT INTO a VALUES (1);\nINSERT INTO b VALUES (2);\n"
                      "INSERT INTO a VALUES (3);\n";
    mem_result r;
    read_mem(el_mysql_reader_open, sql, NULL, &r);
    assert_int_equal(r.end_err, EL_EUSAGE);
    assert_non_null(strstr(r.diag.msg, "a, b"));
    mem_free(&r);
    read_mem(el_mysql_reader_open, sql, "b", &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x32\n");
    mem_free(&r);
    read_mem(el_mysql_reader_open, sql, "A", &r); /* case-insensitive fallback */
    assert_string_equal(el_buf_str(&r.text), "x31\nx33\n");
    mem_free(&r);
    read_mem(el_mysql_reader_open, sql, "nope", &r);
    assert_int_equal(r.open_err, EL_EUSAGE);
    assert_non_null(strstr(r.diag.msg, "nope"));
    assert_non_null(strstr(r.diag.msg, "a, b"));
    mem_free(&r);
    /* column list order differs from the table; REPLACE and IGNORE forms */
    read_mem(el_mysql_reader_open,
             "CREATE TABLE t (a int, b int);\nREPLACE INTO t (b, a) VALUES (1, 2);\n"
             "INSERT IGNORE INTO t VALUES (3, 4) ON DUPLICATE KEY UPDATE a=a;\n",
             NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x32\tx31\nx33\tx34\n");
    mem_free(&r);
}

static void procedure_bodies_skipped(void **state)
{
    (void)state;
    mem_result r;
    read_mem(el_mysql_reader_open,
             "CREATE TABLE t (a int);\nDELIMITER ;;\nCREATE PROCEDURE p()\nBEGIN\n"
             "  INSERT INTO t VALUES (99);\nEND ;;\nDELIMITER ;\nINSERT INTO t VALUES (1);\n",
             NULL, &r);
    assert_int_equal(r.end_err, EL_EOF);
    assert_string_equal(el_buf_str(&r.text), "x31\n");
    mem_free(&r);
}

static void data_only_dump(void **state)
{
    (void)state;
    const char *sql = "LOCK TABLES `t` WRITE;\nINSERT INTO `t` VALUES (1,'a'),(2,'b');\n"
                      "UNLOCK TABLES;\n";
    mem_result r;
    read_mem(el_mysql_reader_open, sql, NULL, &r);
    assert_int_equal(r.open_err, EL_EUSAGE);
    assert_non_null(strstr(r.diag.msg, "--complete-insert"));
    mem_free(&r);
    /* names given by the caller (--columns) */
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "t.sql", &in, &d), EL_OK);
    const char *names[] = {"id", "name"};
    el_reader_opts opts = {0};
    opts.columns = names;
    opts.ncolumns = 2;
    const el_reader_ops *ops;
    void *self;
    assert_int_equal(el_mysql_reader_open(in, &opts, &ops, &self, &d), EL_OK);
    const el_schema *s = ops->schema(self);
    assert_int_equal(s->ncols, 2);
    assert_string_equal(s->names[1], "name");
    assert_null(s->sql_types[1]);
    el_row row;
    assert_int_equal(ops->next(self, &row, &d), EL_OK);
    assert_int_equal(ops->next(self, &row, &d), EL_OK);
    assert_string_equal(row.values[1].data, "b");
    assert_int_equal(ops->next(self, &row, &d), EL_EOF);
    ops->free(self);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_default),
        cmocka_unit_test(fixture_variants),
        cmocka_unit_test(fixture_compressed_auto),
        cmocka_unit_test(values_and_escapes),
        cmocka_unit_test(schema_types),
        cmocka_unit_test(bad_tuples_resume),
        cmocka_unit_test(syntax_error_skips_statement),
        cmocka_unit_test(truncated_is_never_success),
        cmocka_unit_test(truncated_fixture_everywhere),
        cmocka_unit_test(table_choice),
        cmocka_unit_test(procedure_bodies_skipped),
        cmocka_unit_test(data_only_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
