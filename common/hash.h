/*
 * hash.h - FNV-1a 64-bit, the one hash of edgeload's tables and shards, and
 * SipHash-2-4-128 for fingerprints that must not collide.
 *
 * It picks a hot target's shard (k = FNV-1a-64(index sort key) mod N; see
 * docs/SHARDING.md), so it must give the same value on every run, machine
 * and language: bytes in, no seed, no platform dependence. The same
 * function keys the batcher's and the counters' hash tables, where its
 * speed on short keys matters more than its spread (counters mix it
 * further).
 */
#ifndef EL_HASH_H
#define EL_HASH_H

#include <stddef.h>  /* size_t */
#include <stdint.h>  /* uint64_t */

/* The offset basis: start here, step each byte; el_fnv1a64(p, n) is the
 * steps over p[0..n). */
#define EL_FNV1A64_INIT UINT64_C(0xcbf29ce484222325)

static inline uint64_t el_fnv1a64_step(uint64_t h, unsigned char byte)
{
    return (h ^ byte) * UINT64_C(0x100000001b3);
}

/* FNV-1a 64-bit of len bytes (data may be NULL when len is 0). Pure. */
uint64_t el_fnv1a64(const void *data, size_t len);

/*
 * SipHash-2-4 with a 128-bit tag (Aumasson and Bernstein; the reference
 * implementation's vectors_sip128 in tests/unit/test_hash.c): a keyed
 * pseudo-random function, for fingerprints that stand for a key when the
 * key itself is not kept (pipeline/extmem/dedup.h). Under a secret random key no
 * input can be made to collide on purpose, which FNV-1a (and unkeyed fast
 * hashes) cannot promise. key[0] and key[1] are the key's bytes 0-7 and
 * 8-15, little-endian; out[0] and out[1] the tag's bytes 0-7 and 8-15,
 * likewise. Pure.
 */
void el_siphash128(const uint64_t key[2], const void *data, size_t len, uint64_t out[2]);

#endif
