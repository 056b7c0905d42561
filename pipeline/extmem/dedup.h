/*
 * dedup.h - "the last row of a key wins", decided after the fact for a
 * stream of rows too long to hold: which rows were superseded by a later
 * row of the same key, with memory bounded whatever the input.
 *
 * Rows are numbered in the order they are added (0, 1, 2, ..., up to 2^40).
 * Each row's key is kept only as an 88-bit fingerprint (of SipHash-2-4-128
 * under a random key drawn for the run: no input can be made to collide,
 * and two of 10^9 distinct keys collide with probability ~2 x 10^-9), with
 * the row's number
 * and optionally a figure of the row's (its payload: the output bytes of
 * the item, say). el_dedup_finish sorts them by fingerprint
 * (pipeline/extmem/extsort.h: sorted runs on disk past the budget, merged), and
 * within each fingerprint every row but the highest-numbered is a
 * duplicate. Those rows' numbers are sorted again, so that
 * el_dedup_next_drop yields them in ascending order, ready to be skipped
 * in one pass over the rows as they were written.
 *
 *   el_dedup *d;
 *   el_dedup_new(&(el_dedup_opts){ .dir = "out", .keep_drops = true }, &d, &diag);
 *   for each row: el_dedup_add(d, key, key_len, 0, &diag);
 *   el_dedup_finish(d, &diag);
 *   while (el_dedup_next_drop(d, &row, &got, &diag) == EL_OK && got) ...skip row
 *
 * Cost: 16 bytes a row (24 with payload) through the sort, in memory up to
 * mem_max and on disk beyond (the spilled runs are anonymous files in dir,
 * gone when the dedup is freed or the process ends), plus 8 bytes a
 * duplicate through the second sort. Single-threaded; the caller owns it.
 */
#ifndef EL_DEDUP_H
#define EL_DEDUP_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

/* The default budget of the two sorts in memory (half each when the
 * duplicates' numbers are kept): 1 M rows a run of 16 MB. */
#define EL_DEDUP_DEFAULT_MEMORY ((size_t)32 << 20)

typedef struct el_dedup_opts {
    size_t mem_max;          /* bytes for records in memory; 0 = EL_DEDUP_DEFAULT_MEMORY */
    const char *dir;         /* where sorted runs spill (borrowed, copied); NULL = "." */
    bool keep_drops;         /* sort the duplicates' numbers for el_dedup_next_drop */
    bool with_payload;       /* keep each row's payload (el_dedup_kept_payload) */
    const uint64_t *hash_key; /* 2 words; NULL: drawn at random (tests give one) */
} el_dedup_opts;

typedef struct el_dedup el_dedup;

/* EL_ENOMEM, EL_EIO (no random key to be had); *out NULL on failure. */
el_err el_dedup_new(const el_dedup_opts *opts, el_dedup **out, el_diag *diag) EL_MUST_USE;

/* Adds the next row: its key's bytes (any, len may be 0) and its payload
 * (ignored without with_payload). EL_EIO when a run cannot be spilled (diag
 * names the directory), EL_ENOMEM, EL_ELIMIT past 2^40 rows; the dedup
 * refuses everything after a failure. */
el_err el_dedup_add(el_dedup *d, const void *key, size_t len, uint64_t payload,
                    el_diag *diag) EL_MUST_USE;

/* No more rows: finds the duplicates. The figures below are valid after it
 * succeeds. EL_EIO, EL_ENOMEM. */
el_err el_dedup_finish(el_dedup *d, el_diag *diag) EL_MUST_USE;

/* Rows added; rows superseded by a later row of their key; distinct keys
 * (rows - duplicates); the payloads of the rows that won, summed. */
uint64_t el_dedup_rows(const el_dedup *d);
uint64_t el_dedup_duplicates(const el_dedup *d);
uint64_t el_dedup_kept_payload(const el_dedup *d);

/* Runs the sorts wrote to disk, and their bytes (figures for a report). */
uint64_t el_dedup_runs_spilled(const el_dedup *d);
uint64_t el_dedup_bytes_spilled(const el_dedup *d);

/* The next superseded row's number, ascending; *got false after the last.
 * Only with keep_drops, after el_dedup_finish. EL_EIO. */
el_err el_dedup_next_drop(el_dedup *d, uint64_t *row, bool *got, el_diag *diag) EL_MUST_USE;

/* Frees everything (the runs on disk go with it); d may be NULL. */
void el_dedup_free(el_dedup *d);

#endif
