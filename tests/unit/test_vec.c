/* test_vec.c - el_grow: capacities, contents kept, failure leaves the array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/vec.h"

static void first_capacity_then_doubling(void **state)
{
    (void)state;
    int *a = NULL;
    size_t cap = 0;
    int *v = el_grow(a, &cap, 1, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    a = v;
    for (int i = 0; i < 4; i++)
        a[i] = i;
    /* room already there: same pointer, same capacity */
    assert_ptr_equal(el_grow(a, &cap, 4, sizeof *a, 4), a);
    assert_int_equal(cap, 4);
    v = el_grow(a, &cap, 5, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 8);
    a = v;
    for (int i = 0; i < 4; i++)
        assert_int_equal(a[i], i);
    /* a need far past the capacity doubles until it fits */
    v = el_grow(a, &cap, 100, sizeof *v, 4);
    assert_non_null(v);
    assert_int_equal(cap, 128);
    a = v;
    for (int i = 0; i < 4; i++)
        assert_int_equal(a[i], i);
    free(a);
}

static void zero_first_means_one(void **state)
{
    (void)state;
    size_t cap = 0;
    char *v = el_grow(NULL, &cap, 3, 1, 0);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    free(v);
}

static void overflow_fails_and_keeps_the_array(void **state)
{
    (void)state;
    size_t cap = 2;
    long *a = malloc(2 * sizeof *a);
    assert_non_null(a);
    a[0] = 7;
    a[1] = 9;
    /* elements * size past SIZE_MAX */
    assert_null(el_grow(a, &cap, SIZE_MAX / 4, sizeof *a, 2));
    assert_int_equal(cap, 2);
    /* a capacity that cannot double any more */
    assert_null(el_grow(a, &cap, SIZE_MAX, 1, 2));
    assert_int_equal(cap, 2);
    assert_int_equal(a[0], 7);
    assert_int_equal(a[1], 9);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_capacity_then_doubling),
        cmocka_unit_test(zero_first_means_one),
        cmocka_unit_test(overflow_fails_and_keeps_the_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
