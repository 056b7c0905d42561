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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_dump),
        cmocka_unit_test(fixture_compressed_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
