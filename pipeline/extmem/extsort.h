/*
 * extsort.h - sorting more fixed-size records than memory may hold: an
 * external merge sort with a stated memory budget.
 *
 * A record is 1 to EL_EXTSORT_MAX_WORDS 64-bit words, ordered word by word
 * (the first word first, as unsigned integers). Records gather in a buffer
 * of at most mem_max bytes; a full buffer is sorted in place and written to
 * disk as a sorted run. el_extsort_finish merges the runs (several passes
 * when there are more runs than the budget lets one pass read at once);
 * el_extsort_next then yields every record in ascending order. When nothing
 * was spilled the records never leave memory.
 *
 *   el_extsort *s;
 *   el_extsort_new(3, 64 << 20, "/tmp", &s, &d);
 *   for (...) el_extsort_add(s, rec, &d);
 *   el_extsort_finish(s, &d);
 *   bool got;
 *   while (el_extsort_next(s, rec, &got, &d) == EL_OK && got) ...
 *   el_extsort_free(s);
 *
 * Memory: the buffer (grown by doubling up to mem_max, so a small sort stays
 * small), and during the merge read buffers that share mem_max. Disk: each run is an
 * anonymous file created in dir and unlinked at once (mkstemp, unlink), so
 * nothing is left behind however the process ends; a merge pass briefly
 * holds its input and output runs, twice the records' size at most.
 *
 * Single-threaded; the caller owns it.
 */
#ifndef EL_EXTSORT_H
#define EL_EXTSORT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

#define EL_EXTSORT_MAX_WORDS 4

/* The least budget: a pass must read two runs and write one in buffers of
 * some size. */
#define EL_EXTSORT_MIN_MEMORY (64u * 1024u)

typedef struct el_extsort el_extsort;

/*
 * A sorter of records of `words` words (1..EL_EXTSORT_MAX_WORDS) using at
 * most mem_max bytes for records (at least EL_EXTSORT_MIN_MEMORY), spilling
 * runs into directory dir (borrowed: copied). EL_EUSAGE for a bad size,
 * EL_ENOMEM; *out NULL on failure. Nothing touches dir until the first
 * spill.
 */
el_err el_extsort_new(size_t words, size_t mem_max, const char *dir, el_extsort **out,
                      el_diag *diag) EL_MUST_USE;

/* Adds one record (copied). May spill a run: EL_EIO (diag names dir and the
 * system's reason), EL_ENOMEM. After a failure the sorter refuses further
 * calls with the same error. */
el_err el_extsort_add(el_extsort *s, const uint64_t *rec, el_diag *diag) EL_MUST_USE;

/* No more records: sorts what is in memory and merges the runs down to as
 * many as one pass may read. EL_EIO, EL_ENOMEM. */
el_err el_extsort_finish(el_extsort *s, el_diag *diag) EL_MUST_USE;

/* The next record in ascending order into rec (room for `words` words);
 * *got false at the end. Only after el_extsort_finish. EL_EIO when a run
 * cannot be read back. Equal records come out in no particular order. */
el_err el_extsort_next(el_extsort *s, uint64_t *rec, bool *got, el_diag *diag) EL_MUST_USE;

/* Records added; runs written to disk (every pass included); bytes written
 * to disk. For figures and tests. */
uint64_t el_extsort_count(const el_extsort *s);
uint64_t el_extsort_runs_written(const el_extsort *s);
uint64_t el_extsort_bytes_spilled(const el_extsort *s);

/* Frees everything and closes (so removes) the runs; s may be NULL. */
void el_extsort_free(el_extsort *s);

/* Sorts n records of `words` words in place, as a run is sorted: bytes of
 * the first word from its top significant bit bucket them in place
 * (American flag sort), each small bucket is then sorted by insertion or,
 * past 32 records, heapsort (so no input is quadratic). Allocates nothing.
 * Pure; for the sorter and its tests. */
void el_extsort_sort_records(uint64_t *recs, size_t n, size_t words);

#endif
