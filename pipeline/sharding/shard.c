/*
 * shard.c - shard count, shard choice, suffix and directory item.
 *
 * DESIGN: pure functions with no state, so the rule is tested with exact
 * expectations and an application in another language can repeat it from
 * docs/SHARDING.md. The hash is chunk.h's el_fnv1a64, the one FNV of the
 * code base, so the batcher's key hash and the shard choice cannot drift.
 */
#include "pipeline/sharding/shard.h"

#include <inttypes.h>  /* PRIu64 */
#include <string.h>    /* strlen */

#include "formats/ddb_value.h"
#include "pipeline/flow/chunk.h"

size_t el_shard_count(uint64_t fan_in, uint64_t threshold, size_t max_shards)
{
    if (threshold == 0 || max_shards < 2 || fan_in < threshold)
        return 1;
    uint64_t n = fan_in / threshold + (fan_in % threshold != 0);
    if (n > max_shards)
        n = max_shards;
    return n < 2 ? 2 : (size_t)n;
}

size_t el_shard_of(const char *index_sk, size_t len, size_t n)
{
    if (n <= 1)
        return 0;
    return (size_t)(el_fnv1a64(index_sk, len) % (uint64_t)n);
}

el_err el_shard_suffix(el_buf *out, const char *key, size_t len, size_t k)
{
    size_t mark = out->len;
    el_err err = el_buf_append(out, key, len);
    if (!err)
        err = el_buf_printf(out, "#%zu", k);
    if (err)
        el_buf_truncate(out, mark);
    return err;
}

/* DynamoDB's size of a number: 1 byte per two significant digits, plus 1. */
static size_t number_size(uint64_t v)
{
    size_t digits = 1;
    while (v >= 10) {
        v /= 10;
        digits++;
    }
    return (digits + 1) / 2 + 1;
}

el_err el_shard_directory_item(el_buf *json, el_buf *key, const char *pk_attr,
                               const char *sk_attr, const char *target, size_t len, size_t n,
                               uint64_t fan_in, size_t *item_size)
{
    size_t json_mark = json->len, key_mark = key->len;
    el_err err = el_buf_putc(json, '{');
    if (!err)
        err = el_json_put_string(json, pk_attr, strlen(pk_attr));
    if (!err)
        err = el_buf_puts(json, ":{\"S\":");
    if (!err)
        err = el_json_put_string(json, target, len);
    if (!err)
        err = el_buf_puts(json, "},");
    if (!err)
        err = el_json_put_string(json, sk_attr, strlen(sk_attr));
    if (!err)
        err = el_buf_printf(json, ":{\"S\":\"%s\"},\"shards\":{\"N\":\"%zu\"},"
                            "\"fanIn\":{\"N\":\"%" PRIu64 "\"}}", EL_SHARD_DIRECTORY_SK, n,
                            fan_in);
    if (!err)
        err = el_buf_append(key, target, len);
    if (!err)
        err = el_buf_putc(key, '\0');
    if (!err)
        err = el_buf_puts(key, EL_SHARD_DIRECTORY_SK);
    if (err) {
        el_buf_truncate(json, json_mark);
        el_buf_truncate(key, key_mark);
        return err;
    }
    *item_size = strlen(pk_attr) + len + strlen(sk_attr) + strlen(EL_SHARD_DIRECTORY_SK) +
                 strlen("shards") + number_size(n) + strlen("fanIn") + number_size(fan_in);
    return EL_OK;
}
