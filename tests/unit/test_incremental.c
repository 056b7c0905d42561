/*
 * test_incremental.c - the ClientRequestToken derivation of `load
 * --incremental` (pipeline/incremental/incremental.h): deterministic within a run, at
 * most 36 characters, and different whenever the transaction could differ
 * or belongs to another run.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>   /* isxdigit */
#include <string.h>  /* strlen, strcmp */

#include "pipeline/incremental/incr_round.h"   /* the tokens */
#include "pipeline/incremental/incremental.h"

static const char KEY[] = "ACTOR#alice\0TARGET#bob";
#define KLEN (sizeof KEY - 1)

static void row_tokens(void **state)
{
    (void)state;
    uint64_t a[2], b[2], c[2];
    el_incr_row_token("Graph", 'P', KEY, KLEN, 100, a);
    el_incr_row_token("Graph", 'P', KEY, KLEN, 100, b);
    assert_true(a[0] == b[0] && a[1] == b[1]);          /* same row, same token */
    el_incr_row_token("Graph", 'D', KEY, KLEN, 100, c);  /* op */
    assert_false(a[0] == c[0] && a[1] == c[1]);
    el_incr_row_token("Graph", 'P', KEY, KLEN, 101, c);  /* another row of the same key */
    assert_false(a[0] == c[0] && a[1] == c[1]);
    el_incr_row_token("Graph2", 'P', KEY, KLEN, 100, c); /* table */
    assert_false(a[0] == c[0] && a[1] == c[1]);
    el_incr_row_token("Graph", 'P', KEY, KLEN - 1, 100, c); /* key */
    assert_false(a[0] == c[0] && a[1] == c[1]);
}

static void txn_tokens(void **state)
{
    (void)state;
    uint64_t rows[3][2];
    el_incr_row_token("G", 'P', KEY, KLEN, 1, rows[0]);
    el_incr_row_token("G", 'P', KEY, KLEN, 2, rows[1]);
    el_incr_row_token("G", 'D', KEY, KLEN, 3, rows[2]);
    char t1[33], t2[33], t3[33], t4[33], t5[33];
    el_incr_txn_token((const uint64_t (*)[2])rows, 3, 42, 0, t1);
    el_incr_txn_token((const uint64_t (*)[2])rows, 3, 42, 0, t2);
    assert_string_equal(t1, t2);
    assert_int_equal(strlen(t1), 32);                   /* DynamoDB allows 36 */
    for (size_t i = 0; i < 32; i++)
        assert_true(isxdigit((unsigned char)t1[i]) && !isupper((unsigned char)t1[i]));
    el_incr_txn_token((const uint64_t (*)[2])rows, 3, 42, 1, t3);  /* resend after a cancel */
    assert_string_not_equal(t1, t3);
    el_incr_txn_token((const uint64_t (*)[2])rows, 2, 42, 0, t4);  /* fewer rows */
    assert_string_not_equal(t1, t4);
    uint64_t swapped[3][2];
    memcpy(swapped[0], rows[1], sizeof rows[1]);
    memcpy(swapped[1], rows[0], sizeof rows[0]);
    memcpy(swapped[2], rows[2], sizeof rows[2]);
    el_incr_txn_token((const uint64_t (*)[2])swapped, 3, 42, 0, t5); /* other order, other body */
    assert_string_not_equal(t1, t5);
    char t6[33];
    el_incr_txn_token((const uint64_t (*)[2])rows, 3, 43, 0, t6); /* another run */
    assert_string_not_equal(t1, t6);
}

/* The figures an incremental run shows as a load's (progress, summary,
 * --stats-json). */
static void load_stats_of_a_delta(void **state)
{
    (void)state;
    el_incr_stats st = { .rows_read = 100, .added = 50, .deleted = 10, .duplicates = 20,
                         .absent = 5, .replayed = 3, .rejected = 12, .transactions = 40,
                         .requests = 55, .retries = 15, .throttled = 4, .conflicts = 2,
                         .splits = 1, .wcu_consumed = 250.5, .elapsed_s = 2.5 };
    el_load_stats ls;
    memset(&ls, 0x55, sizeof ls);
    el_incr_load_stats(&st, &ls);
    assert_int_equal(ls.rows_read, 100);
    assert_int_equal(ls.items_written, 63);   /* added + deleted + replayed */
    assert_int_equal(ls.duplicates, 25);      /* existed already + already absent */
    assert_int_equal(ls.rejected, 12);
    assert_int_equal(ls.retries, 15);
    assert_int_equal(ls.throttled, 4);
    assert_int_equal(ls.requests, 55);
    assert_int_equal(ls.counters_written, 0);
    assert_int_equal(ls.directory_items, 0);
    assert_true(ls.wcu_consumed == 250.5 && ls.elapsed_s == 2.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(row_tokens),
        cmocka_unit_test(txn_tokens),
        cmocka_unit_test(load_stats_of_a_delta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
