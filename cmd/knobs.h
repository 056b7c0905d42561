/*
 * knobs.h - the environment variables that tune a run without being
 * options: test and benchmark switches, and where temporary files go.
 *
 * The library below cmd/ reads no environment; these are read here, once,
 * and handed down as option fields (el_load_opts, el_plan_count_opts).
 *   EDGELOAD_BENCH_NO_PACING      per-key pacing off (and the learned table rate)
 *   EDGELOAD_BENCH_NO_TABLE_RATE  the learned table rate off
 *   EDGELOAD_BENCH_NO_INTERLEAVE  the batcher takes rows in arrival order
 *   EDGELOAD_PART_BYTES           the size of a part of one input read in parallel
 *   EDGELOAD_DEDUP_MEMORY         bytes of key fingerprints held in memory
 *   TMPDIR                        where sorted runs spill
 * The first three are benchmark switches (scripts/bench.sh), the next two
 * test knobs: a small value makes a small input take the paths of a big one.
 */
#ifndef EL_CMD_KNOBS_H
#define EL_CMD_KNOBS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

typedef struct cmd_knobs {
    bool no_pacing;
    bool no_table_rate;
    bool no_interleave;
    size_t part_bytes;      /* 0: the reader's default */
    size_t dedup_memory;    /* 0: the default */
    const char *tmp_dir;    /* NULL: /tmp */
} cmd_knobs;

/* Reads the variables above from the process environment. */
void cmd_knobs_read(cmd_knobs *k);

#endif
