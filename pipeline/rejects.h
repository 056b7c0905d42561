/*
 * rejects.h - the rejects file: one JSON line per rejected row
 * {"input":..., "line":N, "offset":N, "column":N, "reason":..., "row":{...}}
 * where "row" maps column names to values (null for SQL NULL), or "item" is
 * the DynamoDB JSON for rows the service refused.
 *
 * The file is created on the first reject, so a clean run leaves none.
 * Thread-safe: readers and the network stage write to one el_rejects.
 */
#ifndef EL_REJECTS_H
#define EL_REJECTS_H

#include <stdint.h>  /* uint64_t */

#include "common/error.h"
#include "formats/reader.h"

typedef struct el_rejects el_rejects;

/* max_rejects < 0: no limit. Copies path. NULL on allocation failure. */
el_rejects *el_rejects_new(const char *path, long max_rejects);
void el_rejects_free(el_rejects *r);

/* Records a bad row. Returns EL_ELIMIT once more than max_rejects rows were
 * rejected (the row is still written), EL_EIO when the file cannot be
 * written (diag says why). */
el_err el_rejects_row(el_rejects *r, const char *input, const el_diag *why,
                      const el_schema *schema, const el_row *row, el_diag *diag) EL_MUST_USE;

/* Records an item DynamoDB refused (item_json is its DynamoDB JSON). */
el_err el_rejects_item(el_rejects *r, const char *input, uint64_t line, const char *reason,
                       const char *item_json, size_t item_len, el_diag *diag) EL_MUST_USE;

uint64_t el_rejects_count(el_rejects *r);
/* The path, whether or not anything was written. */
const char *el_rejects_path(const el_rejects *r);

#endif
