/*
 * transform.h - one input row to one DynamoDB item: the edge or
 * entity item its source maps it to, with the index keys.
 *
 * The item is written as DynamoDB JSON ({"PK":{"S":"..."},...}) straight
 * into the caller's buffer, together with its key (PK bytes, NUL, SK bytes)
 * for duplicate detection and for matching UnprocessedItems. A row that
 * cannot become a valid item (empty key, invalid number, invalid UTF-8, over
 * 400 KB, ...) is EL_EREJECT with a reason that names the column.
 *
 * One el_transform per thread: it holds scratch buffers.
 */
#ifndef EL_TRANSFORM_H
#define EL_TRANSFORM_H

#include <stddef.h>   /* size_t */

#include "common/buf.h"
#include "common/error.h"
#include "dynamo/ddb_limits.h"   /* item and key sizes */
#include "formats/reader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/sharding/shard_plan.h"


typedef struct el_transform el_transform;

/* Borrows m and src (must outlive the transform); src must be bound to the
 * input's schema (el_source_bind). */
el_err el_transform_new(const el_mapping *m, const el_source *src, el_transform **out) EL_MUST_USE;
void el_transform_free(el_transform *t);

/*
 * Appends the item's JSON object to json and its key "PK\0SK" to key
 * (both left unchanged on reject or error). *item_size is DynamoDB's size
 * of the item. EL_EREJECT: diag->msg says why, naming the column; diag's
 * position is the row's.
 */
el_err el_transform_row(el_transform *t, const el_row *row, el_buf *json, el_buf *key,
                        size_t *item_size, el_diag *diag) EL_MUST_USE;

/*
 * Renders only the row's keys, exactly as el_transform_row does (same
 * templates, same rejects for empty, over-long or invalid-UTF-8 keys), and
 * points *ipk and *isk at the unsharded index partition key and the index sort
 * key (not NUL-terminated; ipk_len/isk_len bytes). The pointers are into t's
 * scratch buffers: valid until the next call on t. Attributes are not
 * rendered or checked. The source must write an index (EL_EINTERNAL if not).
 * This is what `edgeload plan` counts fan-in with.
 */
/* Hot targets: with a plan, the index partition key of an edge whose
 * unsharded key the plan lists with N > 1 shards becomes "<key>#<k>",
 * k = FNV-1a-64(index sort key) mod N (docs/SHARDING.md), whichever source
 * the edge comes from: a hot key is the index's. The plan is borrowed. */
void el_transform_set_plan(el_transform *t, const el_plan *plan);

/* Of the last item el_transform_row made: the DynamoDB size (names and
 * values) of its table key attributes, and of its index key attributes (0
 * when the source writes no index): what an index that projects KEYS_ONLY
 * holds of it (pipeline/plan/estimate.h). */
void el_transform_last_key_sizes(const el_transform *t, size_t *keys, size_t *index_keys);

/* The index partition key written into the last item (sharded if hot), or
 * NULL when the source writes no index. Valid until the next row. */
const char *el_transform_last_index_pk(const el_transform *t, size_t *len);

/* The index sort key written into the last item, or NULL as above. */
const char *el_transform_last_index_sk(const el_transform *t, size_t *len);

el_err el_transform_index_keys(el_transform *t, const el_row *row, const char **ipk,
                               size_t *ipk_len, const char **isk, size_t *isk_len,
                               el_diag *diag) EL_MUST_USE;

#endif
