/*
 * sample.h - a keyed uniform sample of fixed size over a stream in which
 * keys may repeat (reservoir sampling with seeded random priorities, also
 * known as bottom-k sampling).
 *
 * Each distinct key gets a priority, a seeded 64-bit hash of its bytes; the
 * sample is the k keys of smallest priority seen so far. So:
 *  - every k-subset of the distinct keys is equally likely (for a good hash),
 *    whatever the order or the number of repeats of each key;
 *  - a repeated key is either in the sample already (its value can be
 *    updated: "the later row wins") or will never enter it, because the
 *    admission threshold only ever falls: a key that is in the final sample
 *    was admitted at its first occurrence and saw every later one;
 *  - the same seed and stream give the same sample on every run and machine.
 * k = 0 keeps every key (a plain map, no eviction): verify's full mode.
 *
 * Each sampled key has a slot (0 .. el_sample_count()-1) with a value buffer
 * owned by the sample; a key admitted by evicting another takes over the
 * evicted key's slot (verdict EL_SAMPLE_NEW: reset the value).
 * Memory: O(number of slots), key bytes and values included.
 */
#ifndef EL_SAMPLE_H
#define EL_SAMPLE_H

#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"

typedef struct el_sample el_sample;

typedef enum el_sample_verdict {
    EL_SAMPLE_OUT = 0, /* not in the sample (and never will be) */
    EL_SAMPLE_NEW,     /* just admitted: the slot's value is stale, reset it */
    EL_SAMPLE_IN       /* already in the sample */
} el_sample_verdict;

/* k keys at most (0 = all keys); value_max caps each slot's value buffer
 * (el_buf max). NULL when out of memory. */
el_sample *el_sample_new(size_t k, uint64_t seed, size_t value_max);
void el_sample_free(el_sample *s);

/* Offers one occurrence of key[0..len). *slot is the key's slot unless
 * the verdict is EL_SAMPLE_OUT. EL_ENOMEM leaves the sample as it was. */
el_err el_sample_offer(el_sample *s, const void *key, size_t len, el_sample_verdict *verdict,
                       size_t *slot) EL_MUST_USE;

/* The slot of key, or (size_t)-1 when it is not in the sample. */
size_t el_sample_find(const el_sample *s, const void *key, size_t len);

/* Slots in use (<= k when k > 0). */
size_t el_sample_count(const el_sample *s);

/* The key of a slot, NUL-terminated (keys may hold NULs too: *len is
 * authoritative); borrowed, valid until the slot is taken over. */
const char *el_sample_key(const el_sample *s, size_t slot, size_t *len);

/* The value buffer of a slot (owned by the sample). */
el_buf *el_sample_value(el_sample *s, size_t slot);

/* The priority of key under seed (pure; smaller is kept). */
uint64_t el_sample_priority(uint64_t seed, const void *key, size_t len);

#endif
