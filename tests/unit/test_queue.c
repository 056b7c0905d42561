/*
 * test_queue.c - the bounded blocking queue: FIFO order, push blocking while
 * full, close waking blocked pushers and poppers, draining after close.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>    /* the other side of the queue */
#include <stdatomic.h>  /* flags the threads set */
#include <stdint.h>     /* uintptr_t */
#include <time.h>       /* nanosleep */

#include "pipeline/flow/queue.h"

#define P(n) ((void *)(uintptr_t)(n))

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void test_fifo(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(8);
    assert_non_null(q);
    void *it;
    assert_false(el_queue_try_pop(q, &it));
    for (uintptr_t round = 0; round < 5; round++) {   /* wraps the ring */
        for (uintptr_t i = 1; i <= 6; i++)
            assert_true(el_queue_push(q, P(round * 100 + i)));
        for (uintptr_t i = 1; i <= 6; i++) {
            assert_true(el_queue_pop(q, &it));
            assert_ptr_equal(it, P(round * 100 + i));
        }
    }
    assert_true(el_queue_push(q, P(7)));
    assert_true(el_queue_try_pop(q, &it));
    assert_ptr_equal(it, P(7));
    assert_false(el_queue_try_pop(q, &it));
    assert_false(el_queue_done(q));
    el_queue_free(q);
    el_queue_free(NULL);
}

typedef struct pusher {
    el_queue *q;
    void *item;
    atomic_int done;
    bool ok;
} pusher;

static void *push_thread(void *arg)
{
    pusher *p = arg;
    p->ok = el_queue_push(p->q, p->item);
    atomic_store(&p->done, 1);
    return NULL;
}

typedef struct popper {
    el_queue *q;
    void *item;
    atomic_int done;
    bool ok;
} popper;

static void *pop_thread(void *arg)
{
    popper *p = arg;
    p->ok = el_queue_pop(p->q, &p->item);
    atomic_store(&p->done, 1);
    return NULL;
}

static void test_push_blocks_while_full(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(2);
    assert_true(el_queue_push(q, P(1)));
    assert_true(el_queue_push(q, P(2)));
    pusher p = { q, P(3), 0, false };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, push_thread, &p), 0);
    sleep_ms(50);
    assert_int_equal(atomic_load(&p.done), 0);     /* full: still blocked */
    void *it;
    assert_true(el_queue_pop(q, &it));
    assert_ptr_equal(it, P(1));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(p.ok);
    assert_true(el_queue_pop(q, &it));
    assert_ptr_equal(it, P(2));
    assert_true(el_queue_pop(q, &it));
    assert_ptr_equal(it, P(3));
    el_queue_free(q);
}

static void test_zero_capacity_means_one(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(0);
    assert_true(el_queue_push(q, P(1)));
    pusher p = { q, P(2), 0, false };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, push_thread, &p), 0);
    sleep_ms(30);
    assert_int_equal(atomic_load(&p.done), 0);
    void *it;
    assert_true(el_queue_pop(q, &it));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(el_queue_pop(q, &it));
    assert_ptr_equal(it, P(2));
    el_queue_free(q);
}

static void test_pop_blocks_until_push(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(4);
    popper p = { q, NULL, 0, false };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pop_thread, &p), 0);
    sleep_ms(30);
    assert_int_equal(atomic_load(&p.done), 0);
    assert_true(el_queue_push(q, P(9)));
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(p.ok);
    assert_ptr_equal(p.item, P(9));
    el_queue_free(q);
}

static void test_close_wakes_blocked_pop(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(4);
    popper p[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        p[i] = (popper){ q, P(77), 0, true };
        assert_int_equal(pthread_create(&t[i], NULL, pop_thread, &p[i]), 0);
    }
    sleep_ms(30);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atomic_load(&p[i].done), 0);
    el_queue_close(q);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_false(p[i].ok);
        assert_ptr_equal(p[i].item, P(77));        /* untouched */
    }
    assert_true(el_queue_done(q));
    el_queue_free(q);
}

static void test_close_wakes_blocked_push(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(1);
    assert_true(el_queue_push(q, P(1)));
    pusher p[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        p[i] = (pusher){ q, P(10 + i), 0, true };
        assert_int_equal(pthread_create(&t[i], NULL, push_thread, &p[i]), 0);
    }
    sleep_ms(30);
    el_queue_close(q);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_false(p[i].ok);                     /* not queued; caller still owns it */
    }
    /* what was queued before the close is still there */
    void *it;
    assert_false(el_queue_done(q));
    assert_true(el_queue_pop(q, &it));
    assert_ptr_equal(it, P(1));
    assert_false(el_queue_pop(q, &it));
    assert_true(el_queue_done(q));
    el_queue_free(q);
}

static void test_drain_after_close(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(8);
    for (uintptr_t i = 1; i <= 5; i++)
        assert_true(el_queue_push(q, P(i)));
    el_queue_close(q);
    el_queue_close(q);                              /* idempotent */
    assert_false(el_queue_push(q, P(99)));
    assert_false(el_queue_done(q));
    void *it;
    for (uintptr_t i = 1; i <= 5; i++) {
        assert_true(i % 2 ? el_queue_pop(q, &it) : el_queue_try_pop(q, &it));
        assert_ptr_equal(it, P(i));
    }
    assert_true(el_queue_done(q));
    assert_false(el_queue_pop(q, &it));             /* returns at once */
    assert_false(el_queue_try_pop(q, &it));
    el_queue_free(q);
}

typedef struct mpmc {
    el_queue *q;
    uintptr_t base, n;
    uintptr_t sum;
    bool out_of_order;   /* set by the consumer; cmocka asserts belong to the main thread */
} mpmc;

static void *producer(void *arg)
{
    mpmc *m = arg;
    for (uintptr_t i = 0; i < m->n; i++)
        if (!el_queue_push(m->q, P(m->base + i)))
            break;
    return NULL;
}

static void *consumer(void *arg)
{
    mpmc *m = arg;
    void *it;
    uintptr_t last[4] = { 0, 0, 0, 0 };
    while (el_queue_pop(m->q, &it)) {
        uintptr_t v = (uintptr_t)it;
        uintptr_t who = v / 1000000 - 1;
        /* per producer, items come out in the order they went in */
        if (who >= 4 || v <= last[who])
            m->out_of_order = true;
        else
            last[who] = v;
        m->sum += v;
    }
    return NULL;
}

static void test_many_threads_lose_nothing(void **state)
{
    (void)state;
    el_queue *q = el_queue_new(3);
    mpmc prod[4], cons = { q, 0, 0, 0, false };
    pthread_t tp[4], tc;
    uintptr_t want = 0;
    assert_int_equal(pthread_create(&tc, NULL, consumer, &cons), 0);
    for (uintptr_t i = 0; i < 4; i++) {
        prod[i] = (mpmc){ q, (i + 1) * 1000000 + 1, 2000, 0, false };
        for (uintptr_t k = 0; k < 2000; k++)
            want += prod[i].base + k;
        assert_int_equal(pthread_create(&tp[i], NULL, producer, &prod[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(tp[i], NULL), 0);
    el_queue_close(q);
    assert_int_equal(pthread_join(tc, NULL), 0);
    assert_true(cons.sum == want);
    assert_false(cons.out_of_order);
    assert_true(el_queue_done(q));
    el_queue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo),
        cmocka_unit_test(test_push_blocks_while_full),
        cmocka_unit_test(test_zero_capacity_means_one),
        cmocka_unit_test(test_pop_blocks_until_push),
        cmocka_unit_test(test_close_wakes_blocked_pop),
        cmocka_unit_test(test_close_wakes_blocked_push),
        cmocka_unit_test(test_drain_after_close),
        cmocka_unit_test(test_many_threads_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
