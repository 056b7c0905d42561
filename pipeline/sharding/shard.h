/*
 * shard.h - the hot-target shard rule (docs/SHARDING.md),
 * as pure functions.
 *
 * A target (an unsharded index partition key such as "TARGET#bob") whose
 * fan-in reaches the source's hot threshold is spread over N index
 * partitions "TARGET#bob#0" ... "TARGET#bob#<N-1>". Which one an edge goes
 * to depends only on the edge's index sort key, so the choice is the same on
 * every run, machine and split of the input, and any language can repeat it
 * (docs/SHARDING.md has the test vectors):
 *
 *   N = el_shard_count(fan_in, threshold, max_shards)
 *   k = el_shard_of(index_sk, strlen(index_sk), N)   FNV-1a-64(bytes) mod N
 *   index pk = "<key>#<k>"                           el_shard_suffix
 *
 * Every sharded key also gets one directory item (PK=<key>, SK=#SHARDS,
 * shards=N, fanIn=count) so readers know how many partitions to Query.
 */
#ifndef EL_SHARD_H
#define EL_SHARD_H

#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"

/* A hot source's shard count: the default when a threshold is given
 * without max_shards, and the most a mapping or plan file may ask for. */
#define EL_DEFAULT_MAX_SHARDS 32
#define EL_MAX_MAX_SHARDS 65536

/* The sort key value of every shard directory item. */
#define EL_SHARD_DIRECTORY_SK "#SHARDS"

/*
 * Number of index partitions for a key with this fan-in: 1 (not hot) when
 * fan_in < threshold, else min(max_shards, ceil(fan_in / threshold)) but at
 * least 2. threshold 0 means hot sharding is off, and so does max_shards < 2
 * (there is no room for two shards): both return 1.
 */
size_t el_shard_count(uint64_t fan_in, uint64_t threshold, size_t max_shards);

/*
 * The shard (0 .. n-1) of an edge whose index sort key is index_sk[0..len):
 * FNV-1a-64 of those bytes (UTF-8, no terminator) mod n. n <= 1 gives 0.
 */
size_t el_shard_of(const char *index_sk, size_t len, size_t n);

/*
 * Appends "<key>#<k>" (k in decimal) to out. Fails with EL_ELIMIT/EL_ENOMEM
 * from the buffer, which is then unchanged.
 */
el_err el_shard_suffix(el_buf *out, const char *key, size_t len, size_t k) EL_MUST_USE;

/*
 * Appends the shard directory item of key as DynamoDB JSON to json
 *   {"<pk_attr>":{"S":"<key>"},"<sk_attr>":{"S":"#SHARDS"},
 *    "shards":{"N":"<n>"},"fanIn":{"N":"<fan_in>"}}
 * and its key "<key>\0#SHARDS" to key, the same shapes el_transform_row
 * produces, and sets *item_size to DynamoDB's size of the item. The item has
 * no index attributes: it must not show up among a shard's edges. key must
 * be valid UTF-8 (it is a rendered key). On failure both buffers are
 * unchanged.
 */
el_err el_shard_directory_item(el_buf *json, el_buf *key, const char *pk_attr,
                               const char *sk_attr, const char *target, size_t len, size_t n,
                               uint64_t fan_in, size_t *item_size) EL_MUST_USE;

#endif
