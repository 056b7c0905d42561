/*
 * hash.c - FNV-1a 64-bit and SipHash-2-4-128.
 *
 * DESIGN: the shard function is part of the data's contract (readers of
 * the table compute it too), so it is the textbook FNV-1a, byte by byte.
 * SipHash is the reference algorithm word by word (8 bytes a step, read
 * little-endian whatever the machine), checked against the reference
 * vectors.
 */
#include "common/hash.h"

#include <string.h>  /* memcpy: unaligned loads */

uint64_t el_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = EL_FNV1A64_INIT;
    for (size_t i = 0; i < len; i++)
        h = el_fnv1a64_step(h, p[i]);
    return h;
}

static inline uint64_t rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

/* Eight bytes as a little-endian word: one load on a little-endian
 * machine (the memcpy is how C says an unaligned load). */
static inline uint64_t load_le64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

#define SIPROUND                                                                        \
    do {                                                                                \
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);                       \
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                          \
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                          \
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);                       \
    } while (0)

void el_siphash128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2])
{
    const unsigned char *p = data;
    uint64_t v0 = key[0] ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = key[1] ^ UINT64_C(0x646f72616e646f6d) ^ 0xee; /* 0xee: the 128-bit tag */
    uint64_t v2 = key[0] ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = key[1] ^ UINT64_C(0x7465646279746573);
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(p + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    unsigned char tail[8] = { 0 };
    if (len % 8)
        memcpy(tail, p + whole, len % 8); /* the last 1..7 bytes, zero-padded */
    b |= load_le64(tail);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    /* finalisation: 4 rounds for each half of the 128-bit output, after
     * the constant that tells the halves apart */
    for (int half = 0; half < 2; half++) {
        if (half == 0)
            v2 ^= 0xee;
        else
            v1 ^= 0xdd;
        for (int r = 0; r < 4; r++)
            SIPROUND;
        out[half] = v0 ^ v1 ^ v2 ^ v3;
    }
}
