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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_default),
        cmocka_unit_test(fixture_variants),
        cmocka_unit_test(fixture_compressed_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
