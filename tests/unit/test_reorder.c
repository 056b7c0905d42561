/*
 * test_reorder.c - the ordered merge: results put out of order come out in
 * order, one deliverer at a time, the window bounds how far ahead a result
 * may be made, close wakes waiters, and many threads deliver 0..N-1 in order.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>    /* the stress test's workers */
#include <stdatomic.h>  /* their shared counter */
#include <stdint.h>     /* uintptr_t */
#include <stdlib.h>     /* malloc, free */

#include "pipeline/flow/reorder.h"

#define P(n) ((void *)(uintptr_t)(n))

static void test_in_order(void **state)
{
    (void)state;
    el_reorder *o = el_reorder_new(4);
    assert_non_null(o);
    void *res;
    assert_false(el_reorder_take(o, &res)); /* nothing yet */
    el_reorder_put(o, 1, P(11));
    assert_false(el_reorder_take(o, &res)); /* 0 is missing */
    el_reorder_put(o, 2, P(12));
    el_reorder_put(o, 0, P(10));
    assert_true(el_reorder_take(o, &res));
    assert_ptr_equal(res, P(10));
    /* one deliverer at a time */
    assert_false(el_reorder_take(o, &res));
    el_reorder_done(o);
    assert_true(el_reorder_take(o, &res));
    assert_ptr_equal(res, P(11));
    el_reorder_done(o);
    assert_true(el_reorder_take(o, &res));
    assert_ptr_equal(res, P(12));
    el_reorder_done(o);
    assert_false(el_reorder_take(o, &res));
    assert_int_equal(el_reorder_delivered(o), 3);
    el_reorder_free(o, NULL);
}

static void test_claim(void **state)
{
    (void)state;
    el_reorder *o = el_reorder_new(4);
    void *res;
    assert_false(el_reorder_claim(o, 1)); /* 0 first */
    assert_true(el_reorder_claim(o, 0));
    el_reorder_put(o, 1, P(11));
    assert_false(el_reorder_take(o, &res)); /* 0 is being delivered */
    assert_false(el_reorder_claim(o, 0));
    el_reorder_done(o);
    assert_true(el_reorder_take(o, &res));
    assert_ptr_equal(res, P(11));
    assert_false(el_reorder_claim(o, 2)); /* 1 is being delivered */
    el_reorder_done(o);
    assert_true(el_reorder_claim(o, 2));
    el_reorder_done(o);
    assert_int_equal(el_reorder_delivered(o), 3);
    el_reorder_free(o, NULL);
}

static void test_window_and_close(void **state)
{
    (void)state;
    el_reorder *o = el_reorder_new(2);
    assert_true(el_reorder_wait_room(o, 0, 1));
    assert_true(el_reorder_wait_room(o, 1, 1));
    assert_false(el_reorder_wait_room(o, 2, 20)); /* 0 not delivered: times out */
    el_reorder_put(o, 0, P(1));
    void *res;
    assert_true(el_reorder_take(o, &res));
    el_reorder_done(o);
    assert_true(el_reorder_wait_room(o, 2, 1));
    el_reorder_close(o);
    assert_false(el_reorder_wait_room(o, 1, 1000)); /* closed: no wait */
    el_reorder_free(o, NULL);
}

static void test_free_leftovers(void **state)
{
    (void)state;
    el_reorder *o = el_reorder_new(3);
    el_reorder_put(o, 1, malloc(16));
    el_reorder_put(o, 2, malloc(16));
    el_reorder_free(o, free); /* ASan: nothing leaks */
}

#define N 20000
typedef struct stress {
    el_reorder *o;
    atomic_uint next;
    unsigned out[N];
    unsigned nout;           /* only the deliverer touches it */
} stress;

static void *worker(void *arg)
{
    stress *s = arg;
    for (;;) {
        unsigned seq = atomic_fetch_add(&s->next, 1);
        if (seq >= N)
            break;
        while (!el_reorder_wait_room(s->o, seq, 50))
            ;
        void *res;
        if (seq % 2 && el_reorder_claim(s->o, seq)) {
            s->out[s->nout++] = seq; /* delivered while "made" */
            el_reorder_done(s->o);
        } else {
            el_reorder_put(s->o, seq, P(seq + 1));
        }
        while (el_reorder_take(s->o, &res)) {
            s->out[s->nout++] = (unsigned)(uintptr_t)res - 1;
            el_reorder_done(s->o);
        }
    }
    return NULL;
}

static void test_threads_deliver_in_order(void **state)
{
    (void)state;
    static stress s;
    s.o = el_reorder_new(5);
    atomic_store(&s.next, 0);
    s.nout = 0;
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, &s), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(s.nout, N);
    for (unsigned i = 0; i < N; i++)
        assert_int_equal(s.out[i], i);
    el_reorder_free(s.o, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_claim),
        cmocka_unit_test(test_window_and_close),
        cmocka_unit_test(test_free_leftovers),
        cmocka_unit_test(test_threads_deliver_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
