/*
 * key_counter.h - how often each distinct key was seen, exactly.
 *
 * el_key_counter counts the fan-in of every unsharded index partition key
 * ("TARGET#bob"), or the rows of every source node, for the shard plan
 * (shard_plan.h) and `edgeload plan`'s report. It is an open-addressing
 * hash table whose slots are 16 bytes (count, and a reference into an
 * arena that holds each distinct key once, length-prefixed). Measured at
 * 1,000,000 distinct keys of 15 bytes ("TARGET#u1234567"): 50.3 bytes per
 * distinct key, 16 in the arena (key + varint length) and 33.6 in slots
 * (load factor 0.48). The slot share is 16 / load: 21 to 43 bytes as the
 * table fills from 3/8 to 3/4 and doubles; so a key costs len + 1 + 21..43
 * bytes. See docs/SHARDING.md. Not thread-safe: count per thread and merge.
 *
 *   el_key_counter *c = el_key_counter_new();
 *   el_key_counter_add(c, "TARGET#bob", 10);         // per row
 *   el_key_counter_top(c, 20, top);                  // the report
 *   el_plan_add_counted(plan, counters, &d);         // the plan
 */
#ifndef EL_KEY_COUNTER_H
#define EL_KEY_COUNTER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

/* Longest key a counter or a plan holds (DynamoDB's partition key limit is
 * 2048 bytes; this leaves room for templates used as other keys). */
#define EL_KEY_MAX_LEN 65535u

typedef struct el_key_counter el_key_counter;

/* An empty counter; NULL when out of memory. Free with el_key_counter_free. */
el_key_counter *el_key_counter_new(void);
void el_key_counter_free(el_key_counter *c);

/* Counts one more occurrence of key[0..len) (any bytes). EL_ELIMIT for a
 * key longer than EL_KEY_MAX_LEN, EL_ENOMEM; the counter is unchanged on
 * failure. */
el_err el_key_counter_add(el_key_counter *c, const char *key, size_t len) EL_MUST_USE;

/* Counts n more occurrences (n may be 0: the key is then present with its
 * old count, or not added when new). */
el_err el_key_counter_add_n(el_key_counter *c, const char *key, size_t len,
                             uint64_t n) EL_MUST_USE;

/* Adds every count of from into into (from is unchanged): counting threads
 * each keep a counter and merge at the end. On EL_ENOMEM into holds part of
 * the sum. */
el_err el_key_counter_merge(el_key_counter *into, const el_key_counter *from) EL_MUST_USE;

/* The count of key, 0 when never added. */
uint64_t el_key_counter_get(const el_key_counter *c, const char *key, size_t len);

/* Distinct keys, and the sum of all counts. */
size_t el_key_counter_distinct(const el_key_counter *c);
uint64_t el_key_counter_total(const el_key_counter *c);

/* Bytes allocated by the counter (table + arena + the struct). */
size_t el_key_counter_memory(const el_key_counter *c);

/* A key and its count. key points into the counter's arena (not
 * NUL-terminated): valid until the counter is freed; adding keys does not
 * move it. */
typedef struct el_key_count {
    const char *key;
    size_t len;
    uint64_t count;
} el_key_count;

/*
 * Fills out[0..k) with the k keys of highest count, highest first; equal
 * counts in ascending byte order of the key (a prefix first), so the order
 * is the same on every run. Returns how many were filled (< k when the
 * counter holds fewer keys).
 */
size_t el_key_counter_top(const el_key_counter *c, size_t k, el_key_count *out);

/* Every key whose count is >= min, in el_key_counter_top's order. *out is
 * a new array the caller frees (NULL when *n is 0). EL_ENOMEM. */
el_err el_key_counter_at_least(const el_key_counter *c, uint64_t min, el_key_count **out,
                                size_t *n) EL_MUST_USE;

/* Walks every key once, in no particular order: *pos starts at 0; each
 * call fills *out (the key in the arena, as el_key_counter_top) and
 * returns true, until false at the end. The counter must not change
 * during the walk. */
bool el_key_counter_next(const el_key_counter *c, size_t *pos, el_key_count *out);

/*
 * Log-scale histogram: hist[b] = number of keys whose count is in
 * [2^b, 2^(b+1) - 1], i.e. buckets 1, 2-3, 4-7, 8-15, ...
 */
#define EL_KEY_HIST_BUCKETS 64
void el_key_counter_histogram(const el_key_counter *c, uint64_t hist[EL_KEY_HIST_BUCKETS]);

/* Negative when a ranks before b in el_key_counter_top's order: higher
 * count first, then the smaller key in byte order. */
int el_key_count_cmp(const el_key_count *a, const el_key_count *b);

#endif /* EL_KEY_COUNTER_H */
