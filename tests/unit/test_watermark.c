/* test_watermark.c - the low watermark under out-of-order acknowledgements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>

#include "pipeline/flow/watermark.h"

static void test_in_order(void **state)
{
    (void)state;
    el_watermark w;
    el_watermark_init(&w, 0);
    assert_int_equal(el_watermark_offset(&w), 0);
    assert_int_equal(el_watermark_read_to(&w), 0);
    assert_int_equal(el_watermark_received(&w, 0, 10, 100), EL_OK);
    assert_int_equal(el_watermark_received(&w, 1, 100, 200), EL_OK);
    assert_int_equal(el_watermark_offset(&w), 10);
    assert_int_equal(el_watermark_read_to(&w), 200); /* read that far, done to 10 */
    el_watermark_done(&w, 0);
    assert_int_equal(el_watermark_offset(&w), 100);
    el_watermark_done(&w, 1);
    assert_int_equal(el_watermark_offset(&w), 200); /* nothing outstanding */
    assert_false(el_watermark_complete(&w));
    el_watermark_eof(&w);
    assert_true(el_watermark_complete(&w));
    el_watermark_free(&w);
}

static void test_out_of_order_acks_hold_the_watermark(void **state)
{
    (void)state;
    el_watermark w;
    el_watermark_init(&w, 0);
    for (uint64_t s = 0; s < 4; s++)
        assert_int_equal(el_watermark_received(&w, s, s * 100, s * 100 + 90), EL_OK);
    el_watermark_done(&w, 2);
    el_watermark_done(&w, 3);
    el_watermark_done(&w, 1);
    /* chunk 0 is still out: nothing after its start is safe to skip */
    assert_int_equal(el_watermark_offset(&w), 0);
    el_watermark_eof(&w);
    assert_false(el_watermark_complete(&w));
    el_watermark_done(&w, 0);
    assert_true(el_watermark_complete(&w));
    assert_int_equal(el_watermark_offset(&w), 390);
    el_watermark_free(&w);
}

static void test_resume_floor(void **state)
{
    (void)state;
    el_watermark w;
    el_watermark_init(&w, 5000);
    assert_int_equal(el_watermark_offset(&w), 5000); /* nothing read yet */
    assert_int_equal(el_watermark_received(&w, 0, 5000, 6000), EL_OK);
    el_watermark_done(&w, 0);
    assert_int_equal(el_watermark_offset(&w), 6000);
    el_watermark_free(&w);
}

/* A random order of acknowledgements over many chunks, with more received
 * while older ones are out: the watermark is always the oldest one out. */
static void test_random_against_a_model(void **state)
{
    (void)state;
    enum { N = 3000 };
    static bool acked[N];
    el_watermark w;
    el_watermark_init(&w, 0);
    srand(7);
    uint64_t received = 0, nacked = 0;
    while (nacked < N) {
        if (received < N && (rand() % 3 || received == nacked)) {
            assert_int_equal(el_watermark_received(&w, received, received * 10,
                                                   received * 10 + 5), EL_OK);
            received++;
        } else {
            /* ack a random outstanding chunk */
            uint64_t k;
            do
                k = (uint64_t)rand() % received;
            while (acked[k]);
            acked[k] = true;
            nacked++;
            el_watermark_done(&w, k);
        }
        uint64_t oldest = received;
        for (uint64_t i = 0; i < received; i++)
            if (!acked[i]) {
                oldest = i;
                break;
            }
        uint64_t want = oldest < received ? oldest * 10 : (received ? received * 10 - 5 : 0);
        assert_int_equal(el_watermark_offset(&w), want);
    }
    el_watermark_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_out_of_order_acks_hold_the_watermark),
        cmocka_unit_test(test_resume_floor),
        cmocka_unit_test(test_random_against_a_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
