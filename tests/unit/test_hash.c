/*
 * test_hash.c - FNV-1a-64 (the shard function: exact values any language
 * reproduces) and SipHash-2-4-128 (the reference implementation's
 * vectors_sip128: key 00..0f, message 00..(n-1)).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <string.h>  /* memcmp */

#include "common/hash.h"

static void test_fnv1a64(void **state)
{
    (void)state;
    /* the published FNV test values */
    assert_true(el_fnv1a64("", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(el_fnv1a64("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(el_fnv1a64("foobar", 6) == UINT64_C(0x85944171f73967e8));
}

/* The tag as bytes, little-endian words as the reference writes them. */
static void tag_bytes(const uint64_t out[2], unsigned char b[16])
{
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++)
            b[8 * w + i] = (unsigned char)(out[w] >> (8 * i));
}

static void test_siphash128_reference_vectors(void **state)
{
    (void)state;
    static const unsigned char want[][16] = {
        { 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93 },
        { 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45 },
        { 0x81, 0x77, 0x22, 0x8d, 0xa4, 0xa4, 0x5d, 0xc7, 0xfc, 0xa3, 0x8b, 0xde, 0xf6, 0x0a, 0xff, 0xe4 },
        { 0x9c, 0x70, 0xb6, 0x0c, 0x52, 0x67, 0xa9, 0x4e, 0x5f, 0x33, 0xb6, 0xb0, 0x29, 0x85, 0xed, 0x51 },
    };
    unsigned char k[16], msg[64];
    for (int i = 0; i < 16; i++)
        k[i] = (unsigned char)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (unsigned char)i;
    uint64_t key[2] = { 0, 0 };
    for (int w = 0; w < 2; w++)
        for (int i = 7; i >= 0; i--)
            key[w] = (key[w] << 8) | k[8 * w + i];
    for (size_t n = 0; n < sizeof want / sizeof *want; n++) {
        uint64_t out[2];
        unsigned char got[16];
        el_siphash128(key, msg, n, out);
        tag_bytes(out, got);
        assert_memory_equal(got, want[n], 16);
    }
}

static void test_siphash128_every_length_differs(void **state)
{
    (void)state;
    /* lengths 0..63 cover every tail size and several whole words; no two
     * prefixes of one message share a tag, and another key changes all */
    unsigned char msg[64];
    for (int i = 0; i < 64; i++)
        msg[i] = (unsigned char)(i * 7);
    uint64_t k1[2] = { 1, 2 }, k2[2] = { 1, 3 }, tags[64][2];
    for (size_t n = 0; n < 64; n++) {
        el_siphash128(k1, msg, n, tags[n]);
        uint64_t other[2];
        el_siphash128(k2, msg, n, other);
        assert_false(other[0] == tags[n][0] && other[1] == tags[n][1]);
        for (size_t m = 0; m < n; m++)
            assert_false(tags[m][0] == tags[n][0] && tags[m][1] == tags[n][1]);
        uint64_t again[2];
        el_siphash128(k1, msg, n, again);
        assert_memory_equal(again, tags[n], sizeof again);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnv1a64),
        cmocka_unit_test(test_siphash128_reference_vectors),
        cmocka_unit_test(test_siphash128_every_length_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
