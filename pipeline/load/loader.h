/*
 * loader.h - the load pipeline: readers -> transform -> batcher -> network.
 *
 *   reader threads (--threads of them: one per input at a time, or all
 *   together on a large CSV/TSV input cut into parts at record boundaries,
 *   whose chunks are handed over in input order: formats/chunker.h)
 *     read rows, transform them into items, put items into chunks
 *   a bounded queue of chunks (back-pressure to the readers)
 *   the network stage (the calling thread)
 *     forms BatchWriteItem requests (batcher.h) and hands them to the
 *     request driver (dynamo/ddb_driver.h: --concurrency in flight, the
 *     --max-wcu budget, throttled or failed requests resent with backoff),
 *     puts unprocessed items back, bisects refused batches to find the bad
 *     item, and acknowledges each item exactly once.
 *
 * With output_dir, an output stage takes the network stage's place and
 * writes the items to zstd-compressed DynamoDB JSON parts and a manifest
 * (pipeline/output/file_sink.h); no client is needed. With dry_run, the same stage
 * prints them as {"Item":{...}} lines to dry_out instead, at the end of the
 * run. Either way each key is written once, the last row of a key winning
 * as a load through the API leaves it (the rows it superseded are the
 * run's duplicates); the manifest is written only when the whole run
 * succeeded.
 */
#ifndef EL_LOADER_H
#define EL_LOADER_H

#include <stdatomic.h> /* atomic_int: the stop flag */
#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */
#include <stdio.h>    /* FILE for dry-run output */

#include "common/clock.h"  /* el_clock */
#include "common/error.h"
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_driver.h"  /* el_ddb_transport */
#include "formats/reader.h"
#include "pipeline/output/file_sink.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"
#include "pipeline/rows/split.h"
#include "pipeline/flow/stats.h"   /* el_load_stats, el_progress */

typedef struct el_load_opts {
    el_mapping *mapping;          /* sources are bound to their inputs here */
    el_reader_opts reader;        /* format options from the command line */
    const char *const *inputs;    /* positional inputs overriding "input", or NULL */
    size_t ninputs;
    int threads;                  /* reader threads; <= 0: number of cores (and then
                                     one input is cut into parts for parallel
                                     parsing only with --output or --dry-run
                                     on more than 2 cores) */
    int concurrency;              /* requests in flight */
    bool dry_run;
    FILE *dry_out;                /* where dry-run lines go */
    el_ddb *ddb;                  /* NULL only with dry_run (or with transport) */
    const el_ddb_transport *transport; /* NULL: the real one over ddb; tests give a
                                     scripted one, taken: its free is called once
                                     when el_load_run returns, whatever happened.
                                     The network stage and the counter phase each
                                     make a driver on it, and neither driver frees
                                     it (one transport, two drivers in turn) */
    const el_clock *clock;        /* elapsed times and progress read from it;
                                     NULL: el_now_ms (common/clock.h) */
    el_rejects *rejects;
    double max_retry_time_s;      /* continuous non-throttle failure before giving up */
    const atomic_int *stop;       /* set by a signal handler: stop taking input.
                                     An atomic, not a volatile sig_atomic_t: the
                                     reader threads read it while the handler
                                     writes it on whichever thread the signal
                                     hit, a data race unless atomic (and a
                                     lock-free atomic is safe to store from a
                                     handler, C11 7.14.1.1) */
    double max_wcu;               /* write capacity units per second; 0 = no cap */
    const char *checkpoint_path;  /* NULL: no checkpoint */
    double checkpoint_interval_s; /* how often it is rewritten (default 5) */
    bool resume;                  /* continue from checkpoint_path */
    const char *plan_path;        /* hot keys from `edgeload plan --plan-out`; NULL:
                                     counted here for sources with "hot" */
    el_progress_fn progress;      /* called about once a second; may be NULL */
    void *progress_user;
    el_reject_fn on_reject;       /* may be NULL */
    void *reject_user;
    /* Counters (issue 7): when the mapping has counters, every row is
     * counted (rows before a resume offset too: counts need the whole
     * input) and, after every item is acknowledged, the counters are SET
     * (pipeline/counters/counters.h). counters_only: count and SET, write no item
     * (`edgeload counters`). */
    bool counters_only;
    const char *output_dir;       /* --output: write files (file_sink.h), not DynamoDB */
    uint64_t output_part_items;   /* items per part file; 0 = the sink's default */
    /* --split I/N (pipeline/rows/split.h): read only this worker's part of the
     * inputs; count 0 = everything. With a split, a source with "hot" needs
     * plan_path (every worker must shard the same keys; EL_EUSAGE without),
     * counters are not counted or written (a part's counts are not the
     * totals: one `edgeload counters` run over the whole input sets them),
     * and the checkpoint belongs to this part only. */
    el_split split;
    const el_object_store *output_store; /* with output_dir "s3://...": where the parts
                                            go (s3/s3_store.h); NULL = files. Borrowed */
    /* Tuning the caller reads from wherever it likes (cmd/knobs.h: the
     * environment); the library reads no environment. */
    size_t part_bytes;            /* a part of one input read in parallel; 0: default */
    size_t dedup_memory;          /* key fingerprints in memory for --output; 0: default */
    const char *tmp_dir;          /* where sorted runs spill without a local
                                     --output directory; NULL: /tmp */
    /* Benchmark switches (scripts/bench.sh), not user options: without
     * per-key pacing every throttle is resent by the driver; without the
     * learned table rate (dynamo/tablerate.h), or without either,
     * refusals only shrink the window of requests in flight; without
     * interleaving the batcher takes rows in arrival order. */
    bool bench_no_pacing;         /* implies bench_no_table_rate */
    bool bench_no_table_rate;
    bool bench_no_interleave;
} el_load_opts;

/*
 * Opens every input (so schema errors stop the run before anything is
 * written), binds the mapping's sources, then runs the pipeline.
 * With checkpoint_path, the checkpoint is rewritten every interval and at
 * the end, whatever the outcome; with resume, rows before each input's
 * checkpointed offset are skipped (and inputs marked done are not read).
 * On EL_EINTR the stage stops taking input, lets requests in flight finish
 * (up to 30 s), and writes the checkpoint.
 * Returns EL_OK when every row was written or rejected; EL_EUSAGE for
 * mapping/input errors found before writing; EL_EINTR when stopped by the
 * flag; other errors when the run was aborted (diag says why). stats is
 * filled in every case.
 */
el_err el_load_run(const el_load_opts *opts, el_load_stats *stats, el_diag *diag) EL_MUST_USE;

#endif
