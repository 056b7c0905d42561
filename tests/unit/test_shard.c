/*
 * test_shard.c - the shard rule of docs/SHARDING.md with exact expectations: count
 * at the threshold boundaries, FNV-1a-64 vectors, shard choice (the same
 * table as docs/SHARDING.md, computed independently in Python), suffix and
 * directory item rendering.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <string.h>  /* strlen, memcmp */

#include "pipeline/flow/chunk.h"
#include "pipeline/sharding/shard.h"

static void count_boundaries(void **state)
{
    (void)state;
    /* not hot below the threshold */
    assert_int_equal(el_shard_count(0, 10000, 32), 1);
    assert_int_equal(el_shard_count(1, 10000, 32), 1);
    assert_int_equal(el_shard_count(9999, 10000, 32), 1);
    /* reaching it makes it hot: ceil(1) = 1, raised to 2 */
    assert_int_equal(el_shard_count(10000, 10000, 32), 2);
    assert_int_equal(el_shard_count(10001, 10000, 32), 2);
    assert_int_equal(el_shard_count(19999, 10000, 32), 2);
    assert_int_equal(el_shard_count(20000, 10000, 32), 2);
    assert_int_equal(el_shard_count(20001, 10000, 32), 3);
    assert_int_equal(el_shard_count(30000, 10000, 32), 3);
    assert_int_equal(el_shard_count(99999, 10000, 32), 10);
    assert_int_equal(el_shard_count(320000, 10000, 32), 32);
    /* capped at max_shards */
    assert_int_equal(el_shard_count(320001, 10000, 32), 32);
    assert_int_equal(el_shard_count(5000000000ull, 10000, 32), 32);
    assert_int_equal(el_shard_count(UINT64_MAX, 10000, 32), 32);
    assert_int_equal(el_shard_count(UINT64_MAX, 1, 1000000), 1000000);
    assert_int_equal(el_shard_count(50000, 10000, 4), 4);
    assert_int_equal(el_shard_count(10000, 10000, 2), 2);
    assert_int_equal(el_shard_count(1000000, 10000, 2), 2);
    /* threshold 1: every key is hot */
    assert_int_equal(el_shard_count(1, 1, 32), 2);
    assert_int_equal(el_shard_count(3, 1, 32), 3);
    /* sharding off */
    assert_int_equal(el_shard_count(1000000, 0, 32), 1);
    assert_int_equal(el_shard_count(1000000, 10000, 1), 1);
    assert_int_equal(el_shard_count(1000000, 10000, 0), 1);
}

static void fnv_vectors(void **state)
{
    (void)state;
    /* the reference vectors of FNV-1a 64 (Fowler/Noll/Vo test suite) */
    assert_true(el_fnv1a64("", 0) == 0xcbf29ce484222325ull);
    assert_true(el_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(el_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
    /* and the keys of the shard table */
    assert_true(el_fnv1a64("ACTOR#alice", 11) == 0x24b6a412d97e45adull);
    assert_true(el_fnv1a64("ACTOR#bob", 9) == 0xfc1c46e23664b93aull);
}

/* The table of docs/SHARDING.md, computed with Python's int arithmetic. */
static const struct {
    const char *isk;
    size_t n;
    size_t shard;
} shard_table[] = {
    { "ACTOR#alice", 2, 1 },
    { "ACTOR#alice", 32, 13 },
    { "ACTOR#dave", 2, 1 },
    { "ACTOR#dave", 7, 3 },
    { "ACTOR#carol", 3, 2 },
    { "ACTOR#u1", 4, 1 },
    { "ACTOR#u2", 4, 0 },
    { "ACTOR#u3", 4, 3 },
    { "ACTOR#u1000000", 16, 9 },
    { "STU#a91", 5, 0 },
    { "ACTOR#zo\xc3\xab", 8, 2 },              /* ACTOR#zoë */
    { "ACTOR#\xe6\x97\xa5\xe6\x9c\xac", 10, 3 }, /* ACTOR#日本 */
    { "META", 32, 24 },
    { "ACTOR#bob", 32, 26 },
};

static void shard_choice(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof shard_table / sizeof *shard_table; i++) {
        size_t got = el_shard_of(shard_table[i].isk, strlen(shard_table[i].isk),
                                 shard_table[i].n);
        if (got != shard_table[i].shard)
            fail_msg("%s mod %zu: got %zu, want %zu", shard_table[i].isk, shard_table[i].n,
                     got, shard_table[i].shard);
    }
    /* one shard (not hot) or none: always 0 */
    assert_int_equal(el_shard_of("ACTOR#alice", 11, 1), 0);
    assert_int_equal(el_shard_of("ACTOR#alice", 11, 0), 0);
    /* only the given bytes count */
    assert_int_equal(el_shard_of("ACTOR#alicexyz", 11, 32), 13);
}

static void spread_is_even(void **state)
{
    (void)state;
    /* 100,000 followers over 8 shards: each within 5% of 12,500 */
    size_t count[8] = { 0 };
    el_buf b;
    el_buf_init(&b, 64);
    for (unsigned i = 0; i < 100000; i++) {
        el_buf_reset(&b);
        assert_int_equal(el_buf_printf(&b, "ACTOR#u%u", i), EL_OK);
        count[el_shard_of(b.data, b.len, 8)]++;
    }
    el_buf_free(&b);
    for (size_t k = 0; k < 8; k++) {
        assert_true(count[k] > 11875);
        assert_true(count[k] < 13125);
    }
}

static void suffix(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 64);
    assert_int_equal(el_shard_suffix(&b, "TARGET#bob", 10, 0), EL_OK);
    assert_string_equal(el_buf_str(&b), "TARGET#bob#0");
    el_buf_reset(&b);
    assert_int_equal(el_shard_suffix(&b, "TARGET#bobby", 10, 31), EL_OK);
    assert_string_equal(el_buf_str(&b), "TARGET#bob#31");
    /* appends */
    assert_int_equal(el_shard_suffix(&b, "X", 1, 1234567), EL_OK);
    assert_string_equal(el_buf_str(&b), "TARGET#bob#31X#1234567");
    /* a key that ends in '#' or a digit is not special */
    el_buf_reset(&b);
    assert_int_equal(el_shard_suffix(&b, "T#7", 3, 2), EL_OK);
    assert_string_equal(el_buf_str(&b), "T#7#2");
    el_buf_free(&b);

    /* at the cap: unchanged */
    el_buf small;
    el_buf_init(&small, 15);
    assert_int_equal(el_buf_puts(&small, "ab"), EL_OK);
    assert_int_equal(el_shard_suffix(&small, "TARGET#bob", 10, 10), EL_ELIMIT);
    assert_string_equal(el_buf_str(&small), "ab");
    assert_int_equal(el_shard_suffix(&small, "TARGET#bob", 10, 1), EL_OK);
    assert_string_equal(el_buf_str(&small), "abTARGET#bob#1");
    el_buf_free(&small);
}

static void directory_item(void **state)
{
    (void)state;
    el_buf json, key;
    el_buf_init(&json, 1024);
    el_buf_init(&key, 1024);
    size_t size = 0;
    assert_int_equal(el_buf_puts(&json, "x"), EL_OK);
    assert_int_equal(el_shard_directory_item(&json, &key, "PK", "SK", "TARGET#bob", 10, 4,
                                              35000, &size), EL_OK);
    assert_string_equal(el_buf_str(&json),
                        "x{\"PK\":{\"S\":\"TARGET#bob\"},\"SK\":{\"S\":\"#SHARDS\"},"
                        "\"shards\":{\"N\":\"4\"},\"fanIn\":{\"N\":\"35000\"}}");
    assert_int_equal(key.len, 10 + 1 + 7);
    assert_memory_equal(key.data, "TARGET#bob\0#SHARDS", 18);
    /* PK 2+10, SK 2+7, shards 6+(1 digit: 2), fanIn 5+(5 digits: 4) */
    assert_int_equal(size, 12 + 9 + 8 + 9);

    /* quotes in the key are escaped */
    el_buf_reset(&json);
    el_buf_reset(&key);
    assert_int_equal(el_shard_directory_item(&json, &key, "pk", "sk", "T#\"q\"", 5, 32,
                                              1000000, &size), EL_OK);
    assert_string_equal(el_buf_str(&json),
                        "{\"pk\":{\"S\":\"T#\\\"q\\\"\"},\"sk\":{\"S\":\"#SHARDS\"},"
                        "\"shards\":{\"N\":\"32\"},\"fanIn\":{\"N\":\"1000000\"}}");
    el_buf_free(&json);
    el_buf_free(&key);

    /* a full buffer leaves both unchanged */
    el_buf_init(&json, 40);
    el_buf_init(&key, 1024);
    assert_int_equal(el_buf_puts(&json, "keep"), EL_OK);
    assert_int_equal(el_buf_puts(&key, "keep"), EL_OK);
    assert_int_equal(el_shard_directory_item(&json, &key, "PK", "SK", "TARGET#bob", 10, 4,
                                              35000, &size), EL_ELIMIT);
    assert_string_equal(el_buf_str(&json), "keep");
    assert_string_equal(el_buf_str(&key), "keep");
    el_buf_free(&json);
    el_buf_free(&key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(count_boundaries),
        cmocka_unit_test(fnv_vectors),
        cmocka_unit_test(shard_choice),
        cmocka_unit_test(spread_is_even),
        cmocka_unit_test(suffix),
        cmocka_unit_test(directory_item),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
