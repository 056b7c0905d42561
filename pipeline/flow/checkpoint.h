/*
 * checkpoint.h - how far each input is acknowledged, saved so a crashed or
 * interrupted load can resume.
 *
 * For every input the file holds the byte offset below which every row is
 * done (its item acknowledged by DynamoDB, refused into the rejects file, or
 * superseded), whether the input is finished, and the highest offset whose
 * reject is already in the rejects file, together with the rejects file's
 * length at that moment: on resume the rejects file is cut back to that
 * length and rejects up to those offsets are not written twice. A hash of
 * the mapping and the input list guards against resuming a different job.
 *
 * Once every input is done, the counter phase (if any) records how many
 * counter items it has written.
 *
 * Writes are atomic: temporary file, fsync, rename, fsync of the directory.
 */
#ifndef EL_CHECKPOINT_H
#define EL_CHECKPOINT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

typedef struct el_checkpoint_input {
    char *path;
    uint64_t offset;        /* every row starting before this is done */
    bool done;              /* the whole input is done */
    uint64_t rejects_high;  /* rows at or below this offset have their reject written
                               (0 with has_rejects false: none) */
    bool has_rejects;
} el_checkpoint_input;

typedef struct el_checkpoint {
    uint64_t job_hash;      /* el_checkpoint_job_hash of mapping and inputs */
    size_t ninputs;
    el_checkpoint_input *inputs;
    uint64_t rejects_bytes; /* rejects file length at the checkpoint */
    uint64_t items_written; /* totals at the checkpoint, for the summary */
    uint64_t rejected;
    /* The counter phase (a load's with counters, `edgeload counters`): the
     * first counters_done counter items in key order are written, with the
     * counts whose digest (el_counters digest of every key and count) is
     * counters_digest. A resumed run that counts the same again skips them. */
    bool has_counters;
    uint64_t counters_digest;
    uint64_t counters_done;
} el_checkpoint;

/* Allocates a checkpoint with n inputs (paths copied later by the caller). */
el_checkpoint *el_checkpoint_new(size_t n);
void el_checkpoint_free(el_checkpoint *cp);

/* Atomically replaces path with cp. */
el_err el_checkpoint_write(const char *path, const el_checkpoint *cp, el_diag *diag) EL_MUST_USE;

/* Reads a checkpoint; EL_EUSAGE with a reason for a malformed file. */
el_err el_checkpoint_read(const char *path, el_checkpoint **out, el_diag *diag) EL_MUST_USE;

/* The same on the file's bytes in memory (need not be NUL-terminated);
 * name is only used in diag. For tests and fuzzing. */
el_err el_checkpoint_parse(const char *text, size_t len, const char *name,
                           el_checkpoint **out, el_diag *diag) EL_MUST_USE;

/* A checkpoint file larger than this is refused (it holds one short entry
 * per input). */
#define EL_CHECKPOINT_MAX_BYTES ((size_t)64 * 1024 * 1024)

/* How often a run saves its checkpoint when --checkpoint-interval does not
 * say (and at the end, always). */
#define EL_CHECKPOINT_INTERVAL_S 5

/* FNV-1a over the bytes given, chained: start with h = 0. */
uint64_t el_checkpoint_hash(uint64_t h, const void *data, size_t len);

#endif
