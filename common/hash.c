/*
 * hash.c - FNV-1a 64-bit.
 *
 * DESIGN: the shard function is part of the data's contract (readers of
 * the table compute it too), so it is the textbook FNV-1a, byte by byte.
 */
#include "common/hash.h"

uint64_t el_fnv1a64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = EL_FNV1A64_INIT;
    for (size_t i = 0; i < len; i++)
        h = el_fnv1a64_step(h, p[i]);
    return h;
}
