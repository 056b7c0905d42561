/*
 * hash.h - FNV-1a 64-bit, the one hash of edgeload.
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

#endif
