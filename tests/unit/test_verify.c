/*
 * test_verify.c - what verify names its mismatches (the kinds the report
 * file and the summary use). The comparison itself is formats/ddb_item's
 * (test_ddb_item.c); the run is tested against DynamoDB Local
 * (tests/integration/test_verify*.py).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pipeline/verify.h"

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(el_verify_kind_name(EL_VERIFY_MISSING), "missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_DIFFERENT), "different");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_MISSING), "reverse-missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_EXTRA), "reverse-extra");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_COUNTER_MISSING), "counter-missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_COUNTER_DIFFERENT), "counter-different");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
