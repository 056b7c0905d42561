/*
 * spool.h - lines held on disk until the end of a run, then copied out
 * with the superseded ones left out: how `--dry-run` prints each key once,
 * the last row winning, as `--output` writes it.
 *
 * The spool is one anonymous file (created in dir and unlinked at once, so
 * nothing is left behind however the process ends) written through a
 * 256 KB buffer; el_spool_copy reads it back in blocks and writes every
 * line (a line ends with '\n'; lines are numbered from 0 in write order)
 * whose number the dedup does not name as a duplicate. Memory: the two
 * blocks, whatever the spool's size.
 *
 * Single-threaded; the caller owns it.
 */
#ifndef EL_SPOOL_H
#define EL_SPOOL_H

#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */
#include <stdio.h>    /* FILE */

#include "common/error.h"
#include "pipeline/extmem/dedup.h"

typedef struct el_spool el_spool;

/* A spool whose file lives in dir (borrowed). EL_EIO (diag names dir),
 * EL_ENOMEM; *out NULL on failure. */
el_err el_spool_new(const char *dir, el_spool **out, el_diag *diag) EL_MUST_USE;

/* Appends n bytes (whole lines, or parts of them). EL_EIO. */
el_err el_spool_write(el_spool *s, const void *p, size_t n, el_diag *diag) EL_MUST_USE;

/* Copies the spool's lines to out, leaving out the lines whose numbers
 * el_dedup_next_drop gives (d finished, with keep_drops; NULL: none).
 * *dropped counts them. EL_EIO when the spool cannot be read back or out
 * not written (diag says which); EL_EINTERNAL when d names a line the spool
 * does not hold. Once only. */
el_err el_spool_copy(el_spool *s, FILE *out, el_dedup *d, uint64_t *dropped,
                     el_diag *diag) EL_MUST_USE;

/* Bytes written to the spool. */
uint64_t el_spool_bytes(const el_spool *s);

/* Frees the spool (its file goes with it); s may be NULL. */
void el_spool_free(el_spool *s);

#endif
