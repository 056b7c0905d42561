/*
 * test_chunk.c - el_chunk_commit: an item's offsets, lengths and its two
 * hashes (the whole key, PK NUL SK, and its PK alone), which the commit
 * computes in one pass, against el_fnv1a64 over each; and FNV-1a's own
 * published test values.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>  /* strlen */

#include "pipeline/flow/chunk.h"

static void test_fnv1a64_known_values(void **state)
{
    (void)state;
    /* the FNV authors' test vectors for FNV-1a 64 */
    assert_true(el_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    assert_true(el_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(el_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

static void commit_key(el_chunk *c, const char *key, size_t key_len, size_t pk_len)
{
    size_t jm = c->json.len, km = c->keys.len;
    assert_int_equal(el_buf_puts(&c->json, "{}"), EL_OK);
    assert_int_equal(el_buf_append(&c->keys, key, key_len), EL_OK);
    assert_int_equal(el_chunk_commit(c, jm, km, 2, 7, 70), EL_OK);
    const el_item *it = &c->items[c->nitems - 1];
    assert_int_equal(it->key_len, key_len);
    assert_int_equal(it->json_len, 2);
    assert_memory_equal(el_item_key(it), key, key_len);
    assert_true(it->hash == el_fnv1a64(key, key_len));
    assert_true(it->pk_hash == el_fnv1a64(key, pk_len));
}

static void test_commit_hashes_key_and_partition_key(void **state)
{
    (void)state;
    el_chunk *c = el_chunk_new(0);
    assert_non_null(c);
    commit_key(c, "ACTOR#alice\0TARGET#bob", 22, 11);
    commit_key(c, "P\0", 2, 1);                 /* empty SK */
    commit_key(c, "X", 1, 1);                   /* no SK at all: the PK is the key */
    commit_key(c, "A\0B\0C", 5, 1);             /* the PK ends at the first NUL */
    commit_key(c, "", 0, 0);
    /* many, across the items array's growth */
    for (int i = 0; i < 300; i++) {
        char k[64];
        size_t pk = (size_t)(i % 40) + 1;
        memset(k, 'a' + i % 26, pk);
        k[pk] = '\0';
        memset(k + pk + 1, 'z', (size_t)i % 20);
        commit_key(c, k, pk + 1 + (size_t)i % 20, pk);
    }
    assert_int_equal(c->nitems, 305);
    el_chunk_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv1a64_known_values),
        cmocka_unit_test(test_commit_hashes_key_and_partition_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
