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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fixture_copy),
        cmocka_unit_test(fixture_inserts),
        cmocka_unit_test(fixture_compressed_auto),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
