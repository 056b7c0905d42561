/*
 * transform.h - one input row to one DynamoDB item (SPEC §1-§2).
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
#include "formats/reader.h"
#include "pipeline/mapping.h"

/* DynamoDB's limits (Service quotas, "Items" and "Attributes"). */
#define EL_DDB_MAX_ITEM_BYTES (400u * 1024u)
#define EL_DDB_MAX_PK_BYTES 2048u
#define EL_DDB_MAX_SK_BYTES 1024u

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

#endif
