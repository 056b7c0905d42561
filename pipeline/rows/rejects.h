/*
 * rejects.h - the rejects file: one JSON line per rejected row
 * {"input":..., "line":N, "offset":N, "column":N, "reason":..., "row":{...}}
 * where "row" maps column names to values (null for SQL NULL), or "item" is
 * the DynamoDB JSON for rows the service refused.
 *
 * The file is created (or emptied) on the first reject, so a clean run
 * leaves none and an old run's rejects are never mixed in; only a resumed
 * run (el_rejects_restore) appends.
 * Thread-safe: readers and the network stage write to one el_rejects.
 */
#ifndef EL_REJECTS_H
#define EL_REJECTS_H

#include <stdbool.h> /* bool */
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

/*
 * Resuming (checkpoint.h): the rejects of each input are tracked by row
 * offset. el_rejects_track(r, n) enables tracking for inputs 0..n-1;
 * el_rejects_row_from / el_rejects_item_from record which input a reject
 * belongs to. el_rejects_snapshot reads, under the lock, the file length, the
 * rows it holds and
 * each input's highest rejected offset (has[i] false: none yet).
 * el_rejects_restore cuts the file back to `bytes` and skips, from then on,
 * rejects of input i at offsets <= high[i] (they are in the file already).
 */
el_err el_rejects_track(el_rejects *r, size_t ninputs) EL_MUST_USE;
el_err el_rejects_row_from(el_rejects *r, size_t input_idx, const char *input,
                           const el_diag *why, const el_schema *schema, const el_row *row,
                           el_diag *diag) EL_MUST_USE;
el_err el_rejects_item_from(el_rejects *r, size_t input_idx, uint64_t offset, const char *input,
                            uint64_t line, const char *reason, const char *item_json,
                            size_t item_len, el_diag *diag) EL_MUST_USE;
void el_rejects_snapshot(el_rejects *r, uint64_t *bytes, uint64_t *count, uint64_t *high,
                         bool *has, size_t n);
el_err el_rejects_restore(el_rejects *r, uint64_t bytes, uint64_t count, const uint64_t *high,
                          const bool *has,
                          size_t n, el_diag *diag) EL_MUST_USE;

uint64_t el_rejects_count(el_rejects *r);
/* The path, whether or not anything was written. */
const char *el_rejects_path(const el_rejects *r);

#endif
