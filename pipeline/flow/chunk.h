/*
 * chunk.h - a block of transformed items from one input, the unit that
 * moves from a reader thread to the network stage.
 *
 * The chunk is an arena: the items' JSON and keys live in two buffers that
 * are freed in one go when the last item is acknowledged (`unacked` reaches
 * 0). A reader thread fills a chunk and pushes it on the queue; from then on
 * only the network stage touches it.
 */
#ifndef EL_CHUNK_H
#define EL_CHUNK_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint32_t, uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "common/hash.h"  /* el_fnv1a64: the keys' hashes */

typedef struct el_chunk el_chunk;

typedef struct el_item {
    el_chunk *chunk;
    uint32_t json_off, json_len; /* in chunk->json */
    uint32_t key_off, key_len;   /* "PK\0SK" in chunk->keys */
    uint32_t size;               /* DynamoDB item size */
    uint32_t attempts;           /* sends so far that did not write it */
    uint64_t hash;               /* FNV-1a-64 of the key */
    uint64_t pk_hash;            /* of the partition key alone (interleaving) */
    uint64_t ipk_hash;           /* of the index partition key, 0 = none */
    uint64_t line;               /* input line, for rejects */
    uint64_t offset;             /* input byte offset of the row */
    double not_before;           /* earliest time to resend (ms, monotonic) */
    unsigned indexed : 1;        /* carries index keys: costs an index write too */
} el_item;

struct el_chunk {
    size_t input;                /* index of the input it came from */
    el_buf json, keys;
    el_item *items;
    size_t nitems, cap;
    size_t unacked;              /* items not yet written, refused or superseded */
    size_t slot;                 /* network stage: index in its list of live chunks */
    uint64_t seq;                /* 0, 1, 2, ... per input, in reading order */
    uint64_t start_offset;       /* offset of the first row in the chunk */
    uint64_t end_offset;         /* just past the start of the last row: every row
                                    before it is in this chunk or an earlier one */
    bool eof;                    /* marker: the input has no more rows (no items) */
};

/* Items per chunk before a reader hands it over. */
#define EL_CHUNK_ITEMS 512

el_chunk *el_chunk_new(size_t input);
void el_chunk_free(el_chunk *c);

/* Registers the item whose JSON and key were just appended to c->json /
 * c->keys starting at json_mark / key_mark. */
el_err el_chunk_commit(el_chunk *c, size_t json_mark, size_t key_mark, size_t size,
                       uint64_t line, uint64_t offset) EL_MUST_USE;

static inline const char *el_item_json(const el_item *it)
{
    return it->chunk->json.data + it->json_off;
}

static inline const char *el_item_key(const el_item *it)
{
    return it->chunk->keys.data + it->key_off;
}

/* Write capacity units a put of the item costs, by DynamoDB's rules: one
 * per started KB of its size (attribute names and values), at least one,
 * in the table and again in the index when it carries index keys (an
 * estimate for an index that projects fewer attributes: what DynamoDB
 * reports as consumed settles the difference). */
static inline double el_item_wcu(const el_item *it)
{
    double units = (double)((it->size + 1023u) / 1024u);
    if (units < 1)
        units = 1;
    return it->indexed ? 2 * units : units;
}

#endif
