/*
 * test_batcher.c - forming BatchWriteItem batches: at most 25 items, no
 * duplicate key in a batch (the later row wins), held keys make later rows
 * wait, retries go first when due, byte budgets, the window's room, and the
 * held-key table under colliding hash slots (backward-shift deletion),
 * a skewed sorted follow graph formed at O(1) work per row, and input order
 * kept per partition key. Also the chunk arena the items live in.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* memcmp, strlen */

#include "pipeline/load/batcher.h"

/* ---- helpers ---- */

/* A chunk whose item i has key "<keys[i]>\0SK" and JSON of json_len bytes. */
static el_chunk *make_chunk(size_t n, const char *const *keys, size_t json_len)
{
    el_chunk *c = el_chunk_new(3);
    assert_non_null(c);
    for (size_t i = 0; i < n; i++) {
        size_t jm = c->json.len, km = c->keys.len;
        for (size_t k = 0; k < json_len; k++)
            assert_int_equal(el_buf_putc(&c->json, (char)('a' + i % 26)), EL_OK);
        assert_int_equal(el_buf_puts(&c->keys, keys[i]), EL_OK);
        assert_int_equal(el_buf_putc(&c->keys, '\0'), EL_OK);
        assert_int_equal(el_buf_puts(&c->keys, "SK"), EL_OK);
        assert_int_equal(el_chunk_commit(c, jm, km, json_len, 100 + i, 1000 + i), EL_OK);
    }
    return c;
}

/* A chunk of n items with distinct keys "k0", "k1", ... */
static el_chunk *make_distinct(size_t n, size_t json_len)
{
    char **keys = malloc(n * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < n; i++) {
        keys[i] = malloc(24);
        assert_non_null(keys[i]);
        snprintf(keys[i], 24, "k%zu", i);
    }
    el_chunk *c = make_chunk(n, (const char *const *)keys, json_len);
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(keys);
    return c;
}

typedef struct formed {
    el_item *out[4096];
    el_item *sup[4096];
    size_t n, nsup;
} formed;

static void form(el_batcher *b, double now, size_t max_items, size_t max_bytes, formed *f)
{
    assert_true(max_items <= 4096);
    f->nsup = 777;
    f->n = el_batcher_form(b, now, max_items, max_bytes, 0, f->out, f->sup, 4096, &f->nsup);
    assert_true(f->n <= max_items);
    assert_true(f->nsup <= 4096);
}

#define BIG_BUDGET EL_DDB_MAX_REQUEST_BYTES

static bool same_item_key(const el_item *a, const el_item *b)
{
    return a->key_len == b->key_len && memcmp(el_item_key(a), el_item_key(b), a->key_len) == 0;
}

/* ---- chunk ---- */

static void test_chunk_commit_and_accessors(void **state)
{
    (void)state;
    const char *const keys[] = { "ACTOR#alice", "ACTOR#dave" };
    el_chunk *c = make_chunk(2, keys, 5);
    assert_int_equal(c->input, 3);
    assert_int_equal(c->nitems, 2);
    assert_int_equal(c->unacked, 2);
    el_item *it = &c->items[1];
    assert_ptr_equal(it->chunk, c);
    assert_int_equal(it->json_off, 5);
    assert_int_equal(it->json_len, 5);
    assert_memory_equal(el_item_json(it), "bbbbb", 5);
    assert_int_equal(it->key_len, strlen("ACTOR#dave") + 3);
    assert_memory_equal(el_item_key(it), "ACTOR#dave\0SK", it->key_len);
    assert_int_equal(it->line, 101);
    assert_int_equal(it->size, 5);
    assert_int_equal(it->attempts, 0);
    assert_int_equal(it->hash, el_fnv1a64("ACTOR#dave\0SK", it->key_len));
    el_chunk_free(c);
    el_chunk_free(NULL);
}

static void test_fnv1a64_vectors(void **state)
{
    (void)state;
    /* the reference values of FNV-1a 64 */
    assert_true(el_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    assert_true(el_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(el_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

/* ---- batches ---- */

static void test_at_most_25_in_order(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(60, 10);
    el_batcher *b = el_batcher_new(100, true);
    assert_non_null(b);
    for (size_t i = 0; i < 60; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    assert_int_equal(el_batcher_pending(b), 60);
    formed f;
    size_t seen = 0;
    size_t sizes[] = { 25, 25, 10, 0 };
    for (size_t round = 0; round < 4; round++) {
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_int_equal(f.n, sizes[round]);
        assert_int_equal(f.nsup, 0);
        for (size_t i = 0; i < f.n; i++)
            assert_ptr_equal(f.out[i], &c->items[seen++]);   /* FIFO */
    }
    assert_int_equal(el_batcher_pending(b), 0);
    assert_true(el_batcher_next_due(b) < 0);
    el_batcher_free(b);
    el_batcher_free(NULL);
    el_chunk_free(c);
}

static void test_duplicate_in_batch_later_row_wins(void **state)
{
    (void)state;
    const char *const keys[] = { "A", "B", "A", "C", "A" };
    el_chunk *c = make_chunk(5, keys, 10);
    el_batcher *b = el_batcher_new(100, true);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 3);
    assert_ptr_equal(f.out[0], &c->items[4]);   /* the last "A" row, in A's place */
    assert_ptr_equal(f.out[1], &c->items[1]);
    assert_ptr_equal(f.out[2], &c->items[3]);
    assert_int_equal(f.nsup, 2);
    assert_ptr_equal(f.sup[0], &c->items[0]);
    assert_ptr_equal(f.sup[1], &c->items[2]);
    assert_int_equal(el_batcher_pending(b), 0);
    /* the batch's keys are held; a release frees them */
    for (size_t i = 0; i < f.n; i++)
        el_batcher_release(b, f.out[i]);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_held_key_waits_and_counts_once(void **state)
{
    (void)state;
    const char *const keys[] = { "A", "B", "A", "C" };
    el_chunk *c = make_chunk(4, keys, 10);
    el_batcher *b = el_batcher_new(100, true);
    assert_int_equal(el_batcher_add(b, &c->items[0]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);                 /* A is now in flight */
    for (size_t i = 1; i < 4; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 2);                 /* B and C go, the second A waits */
    assert_ptr_equal(f.out[0], &c->items[1]);
    assert_ptr_equal(f.out[1], &c->items[3]);
    assert_int_equal(f.nsup, 0);
    assert_int_equal(el_batcher_pending(b), 1);
    for (int k = 0; k < 3; k++) {             /* still waiting */
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_int_equal(f.n, 0);
        assert_int_equal(f.nsup, 0);
    }
    el_batcher_release(b, &c->items[1]);     /* another key: no change */
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 0);
    el_batcher_release(b, &c->items[0]);
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[2]); /* written after A: no duplicate */
    assert_int_equal(f.nsup, 0);
    assert_int_equal(el_batcher_pending(b), 0);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_retries_first_when_due_and_keep_key(void **state)
{
    (void)state;
    const char *const keys[] = { "R", "X", "R", "Y", "Z" };
    el_chunk *c = make_chunk(5, keys, 10);
    el_batcher *b = el_batcher_new(100, true);
    assert_int_equal(el_batcher_add(b, &c->items[0]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    /* UnprocessedItems: back it comes, due at t=100 */
    el_item *r = &c->items[0];
    r->attempts = 1;
    r->not_before = 100;
    assert_int_equal(el_batcher_retry(b, r), EL_OK);
    assert_true(el_batcher_next_due(b) == 100);
    assert_int_equal(el_batcher_pending(b), 1);
    for (size_t i = 1; i < 4; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    form(b, 50, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);   /* not before its time */
    assert_int_equal(f.n, 2);
    assert_ptr_equal(f.out[0], &c->items[1]);
    assert_ptr_equal(f.out[1], &c->items[3]);
    assert_int_equal(f.nsup, 0);                        /* the later R waits on the retry */
    assert_int_equal(el_batcher_add(b, &c->items[4]), EL_OK);
    form(b, 100, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 2);
    assert_ptr_equal(f.out[0], r);                      /* retries go first */
    assert_ptr_equal(f.out[1], &c->items[4]);
    assert_true(el_batcher_next_due(b) < 0);
    /* the later R still waits until the retried one is done */
    form(b, 200, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 0);
    assert_int_equal(f.nsup, 0);
    el_batcher_release(b, r);
    form(b, 200, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[2]);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_next_due_after_partial_takes(void **state)
{
    (void)state;
    /* retries left behind by a full batch or by the byte budget, and those
     * not yet due, all count for the next due time */
    enum { N = 6 };
    el_chunk *c = make_distinct(N, 10);
    el_batcher *b = el_batcher_new(N, true);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, N);
    double due[N] = { 40, 10, 500, 30, 20, 900 };
    for (size_t i = 0; i < N; i++) {
        c->items[i].not_before = due[i];
        assert_int_equal(el_batcher_retry(b, &c->items[i]), EL_OK);
    }
    assert_true(el_batcher_next_due(b) == 10);
    form(b, 5, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f); /* none due yet */
    assert_int_equal(f.n, 0);
    assert_true(el_batcher_next_due(b) == 10);
    form(b, 100, 1, BIG_BUDGET, &f);                /* 4 due, room for 1 */
    assert_int_equal(f.n, 1);
    double taken = f.out[0]->not_before;
    assert_true(taken <= 100);
    double want = 500;
    for (size_t i = 0; i < N; i++)
        if (c->items[i].not_before <= 100 && c->items[i].not_before != taken &&
            c->items[i].not_before < want)
            want = c->items[i].not_before;
    assert_true(el_batcher_next_due(b) == want);
    form(b, 100, EL_DDB_BATCH_ITEMS, 1, &f);        /* due, but over the byte budget */
    assert_int_equal(f.n, 0);
    assert_true(el_batcher_next_due(b) == want);
    form(b, 100, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 3);
    assert_true(el_batcher_next_due(b) == 500);
    /* an earlier retry added later (unprocessed again) becomes the next due */
    f.out[0]->not_before = 450;
    assert_int_equal(el_batcher_retry(b, f.out[0]), EL_OK);
    assert_true(el_batcher_next_due(b) == 450);
    form(b, 10000, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 3);
    assert_true(el_batcher_next_due(b) < 0);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_next_due_is_earliest(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(3, 10);
    el_batcher *b = el_batcher_new(10, true);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 3);
    double due[] = { 300, 120, 250 };
    for (size_t i = 0; i < 3; i++) {
        c->items[i].not_before = due[i];
        assert_int_equal(el_batcher_retry(b, &c->items[i]), EL_OK);
    }
    assert_true(el_batcher_next_due(b) == 120);
    form(b, 260, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 2);                   /* 120 and 250 are due, 300 is not */
    assert_true(el_batcher_next_due(b) == 300);
    form(b, 1000, 1, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[0]);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_byte_budget(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(10, 1000);
    el_batcher *b = el_batcher_new(100, true);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    size_t budget = 3 * (1000 + 64);
    form(b, 0, EL_DDB_BATCH_ITEMS, budget, &f);
    assert_int_equal(f.n, 3);
    form(b, 0, EL_DDB_BATCH_ITEMS, budget - 1, &f);
    assert_int_equal(f.n, 2);
    form(b, 0, EL_DDB_BATCH_ITEMS, 500, &f);    /* nothing fits */
    assert_int_equal(f.n, 0);
    assert_int_equal(el_batcher_pending(b), 5);
    el_batcher_free(b);
    el_chunk_free(c);
}

/* Items of 3 KB with index keys cost 6 units each (3 started KB, table
 * and index): a unit budget of 20 takes 3 of them; a budget below one item
 * still sends that one item alone, never none. */
static void test_unit_budget(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(10, 100);
    for (size_t i = 0; i < 10; i++) {
        c->items[i].size = 3000;
        c->items[i].indexed = 1;
    }
    assert_true(el_item_wcu(&c->items[0]) == 6.0);
    el_batcher *b = el_batcher_new(100, true);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    el_item *out[EL_DDB_BATCH_ITEMS], *sup[EL_DDB_BATCH_ITEMS];
    size_t nsup;
    size_t n = el_batcher_form(b, 0, EL_DDB_BATCH_ITEMS, EL_DDB_MAX_REQUEST_BYTES, 20, out, sup,
                               EL_DDB_BATCH_ITEMS, &nsup);
    assert_int_equal(n, 3);
    n = el_batcher_form(b, 0, EL_DDB_BATCH_ITEMS, EL_DDB_MAX_REQUEST_BYTES, 5.5, out, sup,
                        EL_DDB_BATCH_ITEMS, &nsup);
    assert_int_equal(n, 1);
    n = el_batcher_form(b, 0, EL_DDB_BATCH_ITEMS, EL_DDB_MAX_REQUEST_BYTES, 0, out, sup,
                        EL_DDB_BATCH_ITEMS, &nsup);
    assert_int_equal(n, 6); /* no unit budget: everything left */
    c->items[0].size = 100;
    c->items[0].indexed = 0;
    assert_true(el_item_wcu(&c->items[0]) == 1.0);
    c->items[0].size = 0;
    assert_true(el_item_wcu(&c->items[0]) == 1.0); /* never less than one unit */
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_byte_budget_holds_when_a_later_row_is_bigger(void **state)
{
    (void)state;
    /* X (1000 B), A small, then A again but large: replacing the small A by
     * the large one must not take the batch past its budget */
    el_chunk *c = el_chunk_new(0);
    const char *keys[] = { "X", "A", "A" };
    size_t lens[] = { 1000, 100, 1000 };
    for (size_t i = 0; i < 3; i++) {
        size_t jm = c->json.len, km = c->keys.len;
        for (size_t k = 0; k < lens[i]; k++)
            assert_int_equal(el_buf_putc(&c->json, 'j'), EL_OK);
        assert_int_equal(el_buf_puts(&c->keys, keys[i]), EL_OK);
        assert_int_equal(el_chunk_commit(c, jm, km, lens[i], i, i), EL_OK);
    }
    el_batcher *b = el_batcher_new(10, true);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    size_t budget = (1000 + 64) + (100 + 64);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, budget, &f);
    size_t bytes = 0;
    for (size_t i = 0; i < f.n; i++)
        bytes += f.out[i]->json_len + 64;
    assert_true(bytes <= budget);
    /* every row is accounted for: sent, superseded, or still pending */
    assert_int_equal(f.n + f.nsup + el_batcher_pending(b), 3);
    for (size_t i = 0; i < f.n; i++)
        el_batcher_release(b, f.out[i]);
    formed g;
    form(b, 0, EL_DDB_BATCH_ITEMS, budget, &g);
    if (f.nsup == 0) {
        /* the large A was left for later and goes once the small one is done */
        assert_int_equal(g.n, 1);
        assert_ptr_equal(g.out[0], &c->items[2]);
    }
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_many_rows_of_one_key(void **state)
{
    (void)state;
    /* 60 rows of one key in a row: the superseded list has room for
     * max_items only, and every row must end up sent or superseded once */
    size_t n = 60;
    const char **keys = malloc(n * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = "SAME";
    el_chunk *c = make_chunk(n, keys, 10);
    free(keys);
    el_batcher *b = el_batcher_new(100, true);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    /* exactly max_items slots, on the heap so ASan sees an overrun */
    el_item **out = malloc(EL_DDB_BATCH_ITEMS * sizeof *out);
    el_item **sup = malloc(EL_DDB_BATCH_ITEMS * sizeof *sup);
    assert_non_null(out);
    assert_non_null(sup);
    unsigned char *seen = calloc(n, 1);
    assert_non_null(seen);
    el_item *last_sent = NULL;
    for (int round = 0; round < 20 && el_batcher_pending(b) > 0; round++) {
        size_t nsup;
        size_t k = el_batcher_form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, 0, out, sup,
                                   EL_DDB_BATCH_ITEMS, &nsup);
        assert_true(k <= 1);                    /* one key: one item per batch */
        assert_true(nsup <= EL_DDB_BATCH_ITEMS);
        for (size_t i = 0; i < nsup; i++) {
            size_t idx = (size_t)(sup[i] - c->items);
            assert_int_equal(seen[idx], 0);
            seen[idx] = 1;
        }
        for (size_t i = 0; i < k; i++) {
            size_t idx = (size_t)(out[i] - c->items);
            assert_int_equal(seen[idx], 0);
            seen[idx] = 2;
            /* later rows go later */
            assert_true(!last_sent || out[i] > last_sent);
            last_sent = out[i];
            el_batcher_release(b, out[i]);
        }
    }
    assert_int_equal(el_batcher_pending(b), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_not_equal(seen[i], 0);
    assert_int_equal(seen[n - 1], 2);           /* the last row is the one written last */
    assert_ptr_equal(last_sent, &c->items[n - 1]);
    free(seen);
    free(out);
    free(sup);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_window_room(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(10, 10);
    el_batcher *b = el_batcher_new(3, true);
    assert_true(el_batcher_has_room(b));
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    assert_false(el_batcher_has_room(b));
    formed f;
    form(b, 0, 2, BIG_BUDGET, &f);
    assert_int_equal(f.n, 2);
    assert_true(el_batcher_has_room(b));
    assert_int_equal(el_batcher_pending(b), 1);
    /* retries do not take window room */
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(el_batcher_retry(b, f.out[i]), EL_OK);
    assert_true(el_batcher_has_room(b));
    assert_int_equal(el_batcher_pending(b), 3);
    /* many add/form cycles: the window compacts and stays in order */
    size_t next = 3;
    for (int cycle = 0; cycle < 50; cycle++) {
        while (el_batcher_has_room(b) && next < 10)
            assert_int_equal(el_batcher_add(b, &c->items[next++]), EL_OK);
        form(b, 1e9, 1, BIG_BUDGET, &f);
        for (size_t i = 0; i < f.n; i++)
            el_batcher_release(b, f.out[i]);
    }
    assert_int_equal(el_batcher_pending(b), 0);
    el_batcher_free(b);
    el_chunk_free(c);
    /* window_max 0 still lets one item in */
    b = el_batcher_new(0, true);
    assert_true(el_batcher_has_room(b));
    el_batcher_free(b);
}

static void test_window_grows_past_max(void **state)
{
    (void)state;
    /* adding past max (the caller ignored has_room) still works */
    el_chunk *c = make_distinct(100, 4);
    el_batcher *b = el_batcher_new(4, true);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    assert_int_equal(el_batcher_pending(b), 100);
    formed f;
    size_t got = 0;
    while (el_batcher_pending(b)) {
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        for (size_t i = 0; i < f.n; i++)
            assert_ptr_equal(f.out[i], &c->items[got++]);
    }
    assert_int_equal(got, 100);
    el_batcher_free(b);
    el_chunk_free(c);
}

/* ---- the held-key table ---- */

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_held_keys_with_colliding_slots(void **state)
{
    (void)state;
    /* N holders whose hashes collide on their low bits (the table's home
     * slot) in clusters, some at the table's end so probe chains wrap, a few
     * sharing one hash outright; enough of them to make the table grow.
     * Each holder has a probe: another key with the same hash, which must
     * wait while that hash is held. After every release, in random order,
     * exactly the probes whose hash is no longer held come out. */
    enum { N = 600 };
    static const uint64_t homes[] = { 0, 1, 2, 5, 1023, 1022, 2047, 2046, 4095 };
    const size_t nhomes = sizeof homes / sizeof *homes;
    char **keys = malloc(2 * N * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < 2 * N; i++) {
        keys[i] = malloc(16);
        assert_non_null(keys[i]);
        snprintf(keys[i], 16, "%c%zu", i < N ? 'H' : 'P', i % N);
    }
    el_chunk *c = make_chunk(2 * N, (const char *const *)keys, 4);
    static uint64_t hashes[N];
    for (size_t i = 0; i < N; i++) {
        if (i % 50 == 49)
            hashes[i] = hashes[i - 1];         /* same hash, different key */
        else
            hashes[i] = homes[i % nhomes] | ((uint64_t)(i + 1) << 20);
        c->items[i].hash = hashes[i];          /* holder i */
        c->items[N + i].hash = hashes[i];      /* probe i */
    }
    el_batcher *b = el_batcher_new(4 * N, true);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed *f = malloc(sizeof *f);
    assert_non_null(f);
    /* all holders go in one batch: distinct keys, nothing held yet */
    form(b, 0, N, BIG_BUDGET, f);
    assert_int_equal(f->n, N);
    static unsigned held[N];                   /* holders in flight per hash, by index */
    for (size_t i = 0; i < N; i++) {
        held[i] = 0;
        for (size_t k = 0; k < N; k++)
            held[i] += hashes[k] == hashes[i];
    }
    /* every probe waits */
    for (size_t i = 0; i < N; i++)
        assert_int_equal(el_batcher_add(b, &c->items[N + i]), EL_OK);
    form(b, 0, N, BIG_BUDGET, f);
    assert_int_equal(f->n, 0);
    assert_int_equal(f->nsup, 0);

    static size_t order[N];
    for (size_t i = 0; i < N; i++)
        order[i] = i;
    for (size_t i = N - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() % (i + 1));
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    static unsigned char probe_out[N];
    memset(probe_out, 0, sizeof probe_out);
    for (size_t step = 0; step < N; step++) {
        size_t h = order[step];
        el_batcher_release(b, &c->items[h]);
        for (size_t k = 0; k < N; k++)
            if (hashes[k] == hashes[h])
                held[k]--;
        form(b, 0, N, BIG_BUDGET, f);
        for (size_t i = 0; i < f->n; i++) {
            size_t idx = (size_t)(f->out[i] - c->items);
            assert_true(idx >= N);
            size_t who = idx - N;
            if (held[who] != 0)
                fail_msg("step %zu: probe %zu came out while its hash is held", step, who);
            assert_int_equal(probe_out[who], 0);
            probe_out[who] = 1;
        }
        /* two probes of one hash both free: one goes, the other waits on it */
        for (size_t i = 0; i < f->n; i++)
            el_batcher_release(b, f->out[i]);
        for (int again = 0; again < 2; again++) {
            form(b, 0, N, BIG_BUDGET, f);
            for (size_t i = 0; i < f->n; i++) {
                size_t who = (size_t)(f->out[i] - c->items) - N;
                assert_int_equal(held[who], 0);
                assert_int_equal(probe_out[who], 0);
                probe_out[who] = 1;
                el_batcher_release(b, f->out[i]);
            }
        }
        for (size_t k = 0; k < N; k++)
            if (held[k] == 0 && !probe_out[k])
                fail_msg("step %zu: probe %zu still waits, its hash is free", step, k);
    }
    assert_int_equal(el_batcher_pending(b), 0);
    free(f);
    el_batcher_free(b);
    el_chunk_free(c);
    for (size_t i = 0; i < 2 * N; i++)
        free(keys[i]);
    free(keys);
}

static void test_release_of_unheld_key_is_harmless(void **state)
{
    (void)state;
    el_chunk *c = make_distinct(2, 4);
    el_batcher *b = el_batcher_new(4, true);
    el_batcher_release(b, &c->items[0]);       /* never held */
    assert_int_equal(el_batcher_add(b, &c->items[0]), EL_OK);
    formed f;
    form(b, 0, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    el_batcher_release(b, &c->items[0]);
    el_batcher_release(b, &c->items[0]);       /* twice */
    assert_int_equal(el_batcher_add(b, &c->items[1]), EL_OK);
    form(b, 0, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    el_batcher_free(b);
    el_chunk_free(c);
}

/* ---- interleaving ---- */

/* n items sorted by partition key: item i has PK "P<i / per_pk>", SK "S<i>",
 * and, when with_index, index PK "T<i % ntargets>". */
static el_chunk *make_sorted(size_t n, size_t per_pk, bool with_index, size_t ntargets)
{
    el_chunk *c = el_chunk_new(0);
    assert_non_null(c);
    for (size_t i = 0; i < n; i++) {
        size_t jm = c->json.len, km = c->keys.len;
        assert_int_equal(el_buf_puts(&c->json, "{}"), EL_OK);
        assert_int_equal(el_buf_printf(&c->keys, "P%zu", i / per_pk), EL_OK);
        assert_int_equal(el_buf_putc(&c->keys, '\0'), EL_OK);
        assert_int_equal(el_buf_printf(&c->keys, "S%zu", i), EL_OK);
        assert_int_equal(el_chunk_commit(c, jm, km, 2, i, i), EL_OK);
        if (with_index) {
            char t[32];
            int len = snprintf(t, sizeof t, "T%zu", i % ntargets);
            c->items[i].ipk_hash = el_fnv1a64(t, (size_t)len);
        }
    }
    return c;
}

static void test_interleave_spreads_sorted_input(void **state)
{
    (void)state;
    /* 40 partition keys with 20 rows each, sorted: a naive batch would be
     * 20 rows of P0 and 5 of P1 */
    el_chunk *c = make_sorted(800, 20, false, 0);
    el_batcher *b = el_batcher_new(4096, true);
    for (size_t i = 0; i < c->nitems; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    bool sent[800] = { false };
    formed f;
    size_t nsent = 0, batches = 0;
    while (nsent < 800) {
        /* partition keys still waiting before this batch */
        bool waiting[40] = { false };
        for (size_t i = 0; i < 800; i++)
            if (!sent[i])
                waiting[i / 20] = true;
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_true(f.n > 0);
        bool in_batch[40] = { false }, repeated = false;
        for (size_t i = 0; i < f.n; i++) {
            size_t row = (size_t)f.out[i]->line;
            assert_false(sent[row]);
            sent[row] = true;
            repeated |= in_batch[row / 20];
            in_batch[row / 20] = true;
        }
        /* a key twice in a batch only when no other key was waiting */
        if (repeated)
            for (size_t p = 0; p < 40; p++)
                assert_true(!waiting[p] || in_batch[p]);
        for (size_t i = 0; i < f.n; i++)
            el_batcher_release(b, f.out[i]);
        nsent += f.n;
        batches++;
    }
    assert_int_equal(batches, 32); /* 800 / 25: spreading never costs a batch */
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_interleave_first_batches_have_distinct_keys(void **state)
{
    (void)state;
    el_chunk *c = make_sorted(800, 20, false, 0);
    el_batcher *b = el_batcher_new(4096, true);
    for (size_t i = 0; i < c->nitems; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    /* with 40 keys waiting, each of the first batches has 25 distinct keys */
    for (int round = 0; round < 10; round++) {
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_int_equal(f.n, 25);
        for (size_t i = 0; i < f.n; i++)
            for (size_t j = i + 1; j < f.n; j++)
                assert_true(f.out[i]->pk_hash != f.out[j]->pk_hash);
        for (size_t i = 0; i < f.n; i++)
            el_batcher_release(b, f.out[i]);
    }
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_interleave_index_keys_too(void **state)
{
    (void)state;
    /* every row has its own base partition, but only 5 index partitions:
     * a batch takes one row per index partition while others wait */
    el_chunk *c = make_sorted(100, 1, true, 5);
    el_batcher *b = el_batcher_new(4096, true);
    for (size_t i = 0; i < c->nitems; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    /* 5 distinct index keys, then the batch fills up: only index keys
     * already in the batch are left */
    assert_int_equal(f.n, 25);
    uint64_t seen[5];
    size_t nseen = 0;
    for (size_t i = 0; i < 5; i++) {
        for (size_t k = 0; k < nseen; k++)
            assert_true(seen[k] != f.out[i]->ipk_hash);
        seen[nseen++] = f.out[i]->ipk_hash;
    }
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_interleave_keeps_row_order_of_a_key(void **state)
{
    (void)state;
    /* rows of one key (PK "P0", SK "S") with another key of the same
     * partition in between: the later row of the key must never be sent
     * before the earlier one, even when spreading passes rows over */
    el_chunk *c = el_chunk_new(0);
    const char *sks[] = { "A", "X", "A", "B", "A" };
    for (size_t i = 0; i < 5; i++) {
        size_t jm = c->json.len, km = c->keys.len;
        assert_int_equal(el_buf_printf(&c->json, "{%zu}", i), EL_OK);
        assert_int_equal(el_buf_puts(&c->keys, "P0"), EL_OK);
        assert_int_equal(el_buf_putc(&c->keys, '\0'), EL_OK);
        assert_int_equal(el_buf_puts(&c->keys, sks[i]), EL_OK);
        assert_int_equal(el_chunk_commit(c, jm, km, 3, i, i), EL_OK);
    }
    el_batcher *b = el_batcher_new(64, true);
    for (size_t i = 0; i < c->nitems; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    /* all of one partition: the batch fills with the later rows winning:
     * A (row 4), X, B; rows 0 and 2 superseded */
    assert_int_equal(f.n, 3);
    assert_int_equal(f.nsup, 2);
    for (size_t i = 0; i < f.n; i++)
        if (el_item_key(f.out[i])[3] == 'A')
            assert_int_equal(f.out[i]->line, 4);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_duplicates_counted_once_per_row(void **state)
{
    (void)state;
    /* A1 goes before A2 and A3 arrive; they wait for it, then meet in one
     * batch where A3 replaces A2: A1 and A3 written, A2 the one duplicate.
     * Every row ends one way: 3 rows = 2 sent + 1 superseded. */
    const char *const keys[] = { "A", "A", "A" };
    el_chunk *c = make_chunk(3, keys, 10);
    el_batcher *b = el_batcher_new(100, true);
    assert_int_equal(el_batcher_add(b, &c->items[0]), EL_OK);
    formed f;
    size_t dups = 0, sent = 0;
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    sent += f.n;
    dups += f.nsup;
    el_item *a1 = f.out[0];
    assert_ptr_equal(a1, &c->items[0]);
    for (size_t i = 1; i < 3; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 0);
    dups += f.nsup;
    el_batcher_release(b, a1);
    form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[2]);
    assert_int_equal(f.nsup, 1);
    assert_ptr_equal(f.sup[0], &c->items[1]);
    sent += f.n;
    dups += f.nsup;
    assert_int_equal(dups, 1);
    assert_int_equal(sent + dups, 3);
    el_batcher_release(b, f.out[0]);
    el_batcher_free(b);
    el_chunk_free(c);
}

/* A chain of one key's rows goes at once even into a batch with one place
 * left: its rows supersede each other without taking places, so none is
 * left to wait for the key at the back of the FIFOs (holding its chunk and
 * the checkpoint's watermark back). */
static void test_chain_goes_whole_into_last_place(void **state)
{
    (void)state;
    const char *const keys[] = { "A", "A", "A", "A" };
    el_chunk *c = make_chunk(4, keys, 10);
    el_batcher *b = el_batcher_new(100, true);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    formed f;
    form(b, 0, 1, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[3]);
    assert_int_equal(f.nsup, 3);
    assert_int_equal(el_batcher_pending(b), 0);
    el_batcher_release(b, f.out[0]);
    el_batcher_free(b);
    el_chunk_free(c);
}

/* Every row added comes out exactly once, sent or superseded, however its
 * key's rows meet: near (in one batch), waiting on a row in flight, or
 * resent after a retry; 30 rows of 10 keys x 3, and 20,000 rows with many
 * repeats, sent with keys held for a while (released a few batches later). */
static void check_every_row_once(size_t nrows, size_t nkeys, unsigned lag)
{
    char **names = calloc(nrows, sizeof *names);
    assert_non_null(names);
    uint64_t x = 99;
    for (size_t i = 0; i < nrows; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        names[i] = malloc(24);
        assert_non_null(names[i]);
        size_t k = nrows == 30 ? i % 10 : (x & 3) && i ? (size_t)((x >> 8) % 8) : (x >> 12) % nkeys;
        snprintf(names[i], 24, "K%zu", k);
    }
    el_chunk *c = make_chunk(nrows, (const char *const *)names, 10);
    el_batcher *b = el_batcher_new(nrows, true);
    formed *f = malloc(sizeof *f);
    assert_non_null(f);
    unsigned char *seen = calloc(nrows, 1);
    assert_non_null(seen);
    el_item **flight = calloc(nrows, sizeof *flight);
    unsigned *age = calloc(nrows, sizeof *age);
    assert_non_null(flight);
    assert_non_null(age);
    size_t nflight = 0, added = 0, sent = 0, dups = 0;
    for (int round = 0; round < 100000 && (added < nrows || el_batcher_pending(b) || nflight);
         round++) {
        for (int k = 0; k < 40 && added < nrows; k++)
            assert_int_equal(el_batcher_add(b, &c->items[added++]), EL_OK);
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, f);
        for (size_t i = 0; i < f->nsup; i++) {
            size_t idx = (size_t)(f->sup[i] - c->items);
            assert_int_equal(seen[idx]++, 0);
            dups++;
        }
        for (size_t i = 0; i < f->n; i++) {
            size_t idx = (size_t)(f->out[i] - c->items);
            assert_int_equal(seen[idx]++, 0);
            sent++;
            flight[nflight] = f->out[i];
            age[nflight++] = 0;
        }
        /* answers come back `lag` rounds later */
        for (size_t i = 0; i < nflight;) {
            if (age[i]++ >= lag) {
                el_batcher_release(b, flight[i]);
                flight[i] = flight[--nflight];
                age[i] = age[nflight];
            } else {
                i++;
            }
        }
    }
    assert_int_equal(sent + dups, nrows);
    for (size_t i = 0; i < nrows; i++)
        assert_int_equal(seen[i], 1);
    if (nrows == 30)
        print_message("  30 rows, 10 keys x 3: %zu sent, %zu duplicates\n", sent, dups);
    else
        print_message("  %zu rows over few keys, lag %u: %zu sent, %zu duplicates\n", nrows, lag,
                      sent, dups);
    for (size_t i = 0; i < nrows; i++)
        free(names[i]);
    free(names);
    free(seen);
    free(flight);
    free(age);
    free(f);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_every_row_ends_once(void **state)
{
    (void)state;
    check_every_row_once(30, 10, 0);
    check_every_row_once(20000, 5000, 0);
    check_every_row_once(20000, 5000, 3);
}

/* A follow graph like scripts/bench.sh's: sorted by follower, every
 * follower following the "celebrities" T0..T3 with probability 0.8, 0.4,
 * 0.2, 0.1 and 1..6 other targets (T4 ... skewed towards small numbers).
 * Item: PK "A<follower>", SK "T<target>", index PK "T<target>". */
static uint64_t graph_rng = 0x9e3779b97f4a7c15ull;

static double graph_unit(void)
{
    graph_rng ^= graph_rng << 13;
    graph_rng ^= graph_rng >> 7;
    graph_rng ^= graph_rng << 17;
    return (double)(graph_rng >> 11) / 9007199254740992.0;
}

static el_chunk *make_follow_graph(size_t rows, size_t ntargets)
{
    static const double celeb[4] = {0.8, 0.4, 0.2, 0.1};
    el_chunk *c = el_chunk_new(0);
    assert_non_null(c);
    size_t n = 0;
    for (size_t f = 0; n < rows; f++) {
        size_t targets[16], nt = 0;
        for (size_t k = 0; k < 4; k++)
            if (graph_unit() < celeb[k])
                targets[nt++] = k;
        size_t more = 1 + (size_t)(graph_unit() * 6);
        for (size_t m = 0; m < more; m++) {
            /* 1/x-ish over T4.. */
            size_t t = 4 + (size_t)((double)(ntargets - 4) * graph_unit() * graph_unit() *
                                    graph_unit());
            bool dup = false;
            for (size_t i = 0; i < nt; i++)
                dup |= targets[i] == t;
            if (!dup)
                targets[nt++] = t;
        }
        for (size_t i = 0; i < nt && n < rows; i++, n++) {
            size_t jm = c->json.len, km = c->keys.len;
            assert_int_equal(el_buf_puts(&c->json, "{}"), EL_OK);
            assert_int_equal(el_buf_printf(&c->keys, "A%zu", f), EL_OK);
            assert_int_equal(el_buf_putc(&c->keys, '\0'), EL_OK);
            assert_int_equal(el_buf_printf(&c->keys, "T%zu", targets[i]), EL_OK);
            assert_int_equal(el_chunk_commit(c, jm, km, 2, n, n), EL_OK);
            char t[32];
            int len = snprintf(t, sizeof t, "T%zu", targets[i]);
            c->items[n].ipk_hash = el_fnv1a64(t, (size_t)len);
        }
    }
    return c;
}

static void test_skewed_sorted_input_is_cheap(void **state)
{
    (void)state;
    /* The window fills with rows of the four celebrity index keys, of
     * which a batch takes one each while others are ready: the old window
     * scan then examined ~2,000 blocked rows per batch. Driven like the
     * network stage: the window topped up to 8,192, 16 batches in flight,
     * the oldest acknowledged first. */
    enum { ROWS = 60000, INFLIGHT = 16 };
    el_chunk *c = make_follow_graph(ROWS, 12000);
    el_batcher *b = el_batcher_new(8192, true);
    assert_non_null(b);
    static el_item *flight[INFLIGHT][EL_DDB_BATCH_ITEMS];
    static size_t flight_n[INFLIGHT];
    static unsigned char sent[ROWS];
    memset(sent, 0, sizeof sent);
    size_t next = 0, head = 0, nflight = 0, nsent = 0, batches = 0, short_batches = 0;
    while (nsent < ROWS) {
        while (el_batcher_has_room(b) && next < ROWS)
            assert_int_equal(el_batcher_add(b, &c->items[next++]), EL_OK);
        if (nflight == INFLIGHT) {
            /* the oldest batch is answered */
            for (size_t i = 0; i < flight_n[head]; i++)
                el_batcher_release(b, flight[head][i]);
            head = (head + 1) % INFLIGHT;
            nflight--;
        }
        size_t pending = el_batcher_pending(b);
        formed f;
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_int_equal(f.nsup, 0);
        if (f.n == 0) {
            assert_true(nflight > 0); /* nothing ready only while batches fly */
            for (size_t i = 0; i < flight_n[head]; i++)
                el_batcher_release(b, flight[head][i]);
            head = (head + 1) % INFLIGHT;
            nflight--;
            continue;
        }
        batches++;
        if (f.n < EL_DDB_BATCH_ITEMS && pending >= EL_DDB_BATCH_ITEMS)
            short_batches++;
        for (size_t i = 0; i < f.n; i++) {
            size_t row = (size_t)f.out[i]->line;
            assert_int_equal(sent[row], 0);
            sent[row] = 1;
            for (size_t j = 0; j < i; j++)
                assert_false(same_item_key(f.out[i], f.out[j]));
        }
        /* the celebrity index keys are spread: with others ready, at most
         * one row of T0 in a batch unless the batch was filled up */
        size_t t0 = 0;
        uint64_t h0 = el_fnv1a64("T0", 2);
        for (size_t i = 0; i < f.n; i++)
            t0 += f.out[i]->ipk_hash == h0;
        if (t0 > 1)
            assert_int_equal(f.n, EL_DDB_BATCH_ITEMS);
        size_t slot = (head + nflight) % INFLIGHT;
        memcpy(flight[slot], f.out, f.n * sizeof *f.out);
        flight_n[slot] = f.n;
        nflight++;
        nsent += f.n;
    }
    assert_int_equal(el_batcher_pending(b), 0);
    /* every row once; batches full whenever 25 rows were pending */
    assert_true(short_batches * 100 <= batches);
    /* O(1) per row: each row examined a few times at most (the window scan
     * examined thousands) */
    unsigned long long visits = el_batcher_visits(b);
    if (visits > 4ull * ROWS)
        fail_msg("%llu rows examined for %d rows", visits, ROWS);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_partition_key_order_kept(void **state)
{
    (void)state;
    /* rows of one base or index partition key leave in input order */
    enum { ROWS = 5000 };
    el_chunk *c = make_follow_graph(ROWS, 800);
    el_batcher *b = el_batcher_new(1024, true);
    size_t next = 0, nsent = 0;
    unsigned char *gone = calloc(ROWS, 1);
    assert_non_null(gone);
    while (nsent < ROWS) {
        while (el_batcher_has_room(b) && next < ROWS)
            assert_int_equal(el_batcher_add(b, &c->items[next++]), EL_OK);
        formed f;
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_true(f.n > 0);
        for (size_t i = 0; i < f.n; i++) {
            const el_item *it = f.out[i];
            /* every earlier row of the same pk or ipk already went */
            for (size_t r = 0; r < (size_t)it->line; r++)
                if (c->items[r].pk_hash == it->pk_hash || c->items[r].ipk_hash == it->ipk_hash)
                    assert_int_not_equal(gone[r], 0);
            gone[it->line] = 1;
            el_batcher_release(b, f.out[i]);
        }
        nsent += f.n;
    }
    free(gone);
    el_batcher_free(b);
    el_chunk_free(c);
}

static void test_uniform_input_stays_in_order(void **state)
{
    (void)state;
    /* Random keys (no skew): many rows wait behind an older row of their
     * base or index partition key. The oldest ready row must go first, or
     * chains of such waits leave rows (and the chunks they pin) tens of
     * thousands of rows behind: the oldest pending row may lag the newest
     * by about the window, no more. */
    enum { ROWS = 40000, USERS = 8000, WINDOW = 2048, INFLIGHT = 16 };
    el_chunk *c = el_chunk_new(0);
    assert_non_null(c);
    for (size_t i = 0; i < ROWS; i++) {
        size_t jm = c->json.len, km = c->keys.len;
        size_t f = (size_t)(graph_unit() * USERS), t = (size_t)(graph_unit() * USERS);
        assert_int_equal(el_buf_puts(&c->json, "{}"), EL_OK);
        assert_int_equal(el_buf_printf(&c->keys, "A%zu", f), EL_OK);
        assert_int_equal(el_buf_putc(&c->keys, '\0'), EL_OK);
        assert_int_equal(el_buf_printf(&c->keys, "T%zu#%zu", t, i), EL_OK);
        assert_int_equal(el_chunk_commit(c, jm, km, 2, i, i), EL_OK);
        char tb[32];
        int len = snprintf(tb, sizeof tb, "T%zu", t);
        c->items[i].ipk_hash = el_fnv1a64(tb, (size_t)len);
    }
    el_batcher *b = el_batcher_new(WINDOW, true);
    static el_item *flight[INFLIGHT][EL_DDB_BATCH_ITEMS];
    static size_t flight_n[INFLIGHT];
    static unsigned char sent[ROWS];
    memset(sent, 0, sizeof sent);
    size_t next = 0, head = 0, nflight = 0, nsent = 0, oldest = 0, max_lag = 0;
    while (nsent < ROWS) {
        while (el_batcher_has_room(b) && next < ROWS)
            assert_int_equal(el_batcher_add(b, &c->items[next++]), EL_OK);
        if (nflight == INFLIGHT) {
            for (size_t i = 0; i < flight_n[head]; i++)
                el_batcher_release(b, flight[head][i]);
            head = (head + 1) % INFLIGHT;
            nflight--;
        }
        formed f;
        form(b, 0, EL_DDB_BATCH_ITEMS, BIG_BUDGET, &f);
        assert_true(f.n > 0 || nflight > 0);
        size_t slot = (head + nflight) % INFLIGHT;
        memcpy(flight[slot], f.out, f.n * sizeof *f.out);
        flight_n[slot] = f.n;
        nflight++;
        for (size_t i = 0; i < f.n; i++)
            sent[f.out[i]->line] = 1;
        nsent += f.n;
        while (oldest < ROWS && sent[oldest])
            oldest++;
        if (next - oldest > max_lag)
            max_lag = next - oldest;
    }
    if (max_lag > WINDOW + 2 * EL_DDB_BATCH_ITEMS * INFLIGHT)
        fail_msg("the oldest pending row lagged %zu rows behind (window %d)", max_lag, WINDOW);
    el_batcher_free(b);
    el_chunk_free(c);
}


/* ---- the gate (per-key pacing) ---- */

typedef struct gate_state {
    const char *slow;          /* rows of this partition key go one per 10 ms */
    double next;
    int asked;
} gate_state;

static double slow_gate(void *ctx, const el_item *it, double now)
{
    gate_state *g = ctx;
    g->asked++;
    if (strcmp(el_item_key(it), g->slow) != 0)
        return now;
    double t = g->next > now ? g->next : now;
    g->next = t + 10;
    return t;
}

/* A gated row waits in the park until its time, the other keys go at
 * once, the row's later rows of its partition key are asked in their turn
 * (each given its own later time, so they keep their order), and a parked
 * row is not asked again when its time comes. */
static void test_gate_parks_paced_rows(void **state)
{
    (void)state;
    const char *keys[] = { "hot", "a", "hot", "b", "hot", "c" };
    el_chunk *c = make_chunk(6, keys, 10);
    /* distinct sort keys: three rows of partition key "hot" */
    el_batcher *b = el_batcher_new(100, true);
    gate_state g = { .slow = "hot", .next = 0 };
    el_batcher_set_gate(b, slow_gate, &g);
    for (size_t i = 0; i < 6; i++) {
        c->items[i].hash = i + 1; /* distinct item keys, as distinct SKs would give */
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    }
    formed f;
    form(b, 0, 25, BIG_BUDGET, &f);
    /* the first "hot" row's time is now (0): it goes with a, b, c; the
     * other two were asked and parked for 10 and 20 */
    assert_int_equal(f.n, 4);
    int hot = 0;
    for (size_t i = 0; i < f.n; i++)
        hot += strcmp(el_item_key(f.out[i]), "hot") == 0;
    assert_int_equal(hot, 1);
    assert_int_equal(g.asked, 6);
    for (size_t i = 0; i < f.n; i++)
        el_batcher_release(b, f.out[i]);
    form(b, 5, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 0);
    assert_true(el_batcher_next_due(b) == 10);
    form(b, 10, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[2]); /* in input order */
    assert_int_equal(g.asked, 6); /* taken without asking the gate again */
    el_batcher_release(b, f.out[0]);
    assert_true(el_batcher_next_due(b) == 20);
    form(b, 20, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[4]);
    el_batcher_release(b, f.out[0]);
    assert_int_equal(el_batcher_pending(b), 0);
    assert_true(el_batcher_next_due(b) < 0);
    el_batcher_free(b);
    el_chunk_free(c);
}

static double far_gate(void *ctx, const el_item *it, double now)
{
    gate_state *g = ctx;
    g->asked++;
    if (strcmp(el_item_key(it), g->slow) != 0)
        return now;
    return now + EL_BATCHER_GATE_HORIZON_MS * 2; /* beyond the horizon: ask again */
}

/* Rows of a paced key wait outside the window: a window of 3 holding
 * three parked rows still has room, and a row that shares its other
 * partition key with a parked row does not wait for it. A time beyond the
 * horizon is no reservation: the row is asked again then. */
static void test_parked_rows_leave_the_window(void **state)
{
    (void)state;
    const char *keys[] = { "hot", "hot", "hot", "a" };
    el_chunk *c = make_chunk(4, keys, 10);
    el_batcher *b = el_batcher_new(3, true);
    gate_state g = { .slow = "hot" };
    el_batcher_set_gate(b, far_gate, &g);
    for (size_t i = 0; i < 3; i++) {
        c->items[i].hash = i + 1;
        c->items[i].ipk_hash = 100 + i; /* each its own index key */
        assert_int_equal(el_batcher_add(b, &c->items[i]), EL_OK);
    }
    assert_false(el_batcher_has_room(b));
    formed f;
    form(b, 0, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 0);
    assert_int_equal(g.asked, 3);
    assert_true(el_batcher_has_room(b)); /* all three parked, out of the window */
    /* "a" shares index key 100 with the first parked row */
    c->items[3].hash = 4;
    c->items[3].ipk_hash = 100;
    assert_int_equal(el_batcher_add(b, &c->items[3]), EL_OK);
    form(b, 1, 25, BIG_BUDGET, &f);
    assert_int_equal(f.n, 1);
    assert_ptr_equal(f.out[0], &c->items[3]);
    el_batcher_release(b, f.out[0]);
    assert_int_equal(el_batcher_pending(b), 3);
    /* at their time they are asked again (the gate said "later", not a time) */
    double due = el_batcher_next_due(b);
    assert_true(due == 2 * EL_BATCHER_GATE_HORIZON_MS);
    form(b, due, 25, BIG_BUDGET, &f);
    assert_int_equal(g.asked, 7); /* and "a" once */
    el_batcher_free(b);
    el_chunk_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duplicates_counted_once_per_row),
        cmocka_unit_test(test_every_row_ends_once),
        cmocka_unit_test(test_chain_goes_whole_into_last_place),
        cmocka_unit_test(test_interleave_spreads_sorted_input),
        cmocka_unit_test(test_interleave_first_batches_have_distinct_keys),
        cmocka_unit_test(test_interleave_index_keys_too),
        cmocka_unit_test(test_interleave_keeps_row_order_of_a_key),
        cmocka_unit_test(test_chunk_commit_and_accessors),
        cmocka_unit_test(test_fnv1a64_vectors),
        cmocka_unit_test(test_at_most_25_in_order),
        cmocka_unit_test(test_duplicate_in_batch_later_row_wins),
        cmocka_unit_test(test_held_key_waits_and_counts_once),
        cmocka_unit_test(test_retries_first_when_due_and_keep_key),
        cmocka_unit_test(test_next_due_is_earliest),
        cmocka_unit_test(test_next_due_after_partial_takes),
        cmocka_unit_test(test_byte_budget),
        cmocka_unit_test(test_unit_budget),
        cmocka_unit_test(test_byte_budget_holds_when_a_later_row_is_bigger),
        cmocka_unit_test(test_many_rows_of_one_key),
        cmocka_unit_test(test_window_room),
        cmocka_unit_test(test_window_grows_past_max),
        cmocka_unit_test(test_held_keys_with_colliding_slots),
        cmocka_unit_test(test_release_of_unheld_key_is_harmless),
        cmocka_unit_test(test_skewed_sorted_input_is_cheap),
        cmocka_unit_test(test_partition_key_order_kept),
        cmocka_unit_test(test_uniform_input_stays_in_order),
        cmocka_unit_test(test_gate_parks_paced_rows),
        cmocka_unit_test(test_parked_rows_leave_the_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
