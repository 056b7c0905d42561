/*
 * load_run.h - what the stages of one load share: the run, its
 * inputs, and the few helpers every stage calls. For pipeline/load/load_run.c and
 * its pipeline/load_*.c files only; the API is pipeline/load/loader.h.
 *
 *   load_run.c          setting up: inputs, plan, checkpoint, threads; the run
 *   load_read.c       reader threads: one input at a time, rows to chunks
 *   load_parts.c      one large CSV/TSV input cut into parts for several threads
 *   load_network.c    the network stage: chunks to the sender (sender.h), acknowledgements,
 *                     checkpoints, progress
 *   load_output.c     the output stage (--output DIR, --dry-run) in the network
 *                     stage's place: each key once, the last row winning
 *
 * Threads: the reader threads and the stage that consumes the queue (the
 * calling thread) share a load_run. Fields say who may touch them; what is
 * not marked is set before the threads start and read-only after.
 */
#ifndef EL_LOAD_RUN_H
#define EL_LOAD_RUN_H

#include <pthread.h>   /* the run's mutex */
#include <stdatomic.h> /* figures and flags shared between threads */
#include <stdbool.h>   /* bool */
#include <stdint.h>    /* uint64_t */

#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/flow/chunk.h"
#include "pipeline/counters/counters.h"
#include "pipeline/output/file_sink.h"
#include "pipeline/load/loader.h"
#include "dynamo/ddb_driver.h"
#include "pipeline/sharding/shard_plan.h"
#include "pipeline/flow/queue.h"
#include "pipeline/rows/rowloop.h"
#include "pipeline/rows/transform.h" /* load_keep_item reads the index key it made */
#include "pipeline/flow/watermark.h"

#define LOAD_QUEUE_CHUNKS 32   /* chunks between the readers and the next stage */
#define LOAD_WINDOW_ITEMS 8192 /* items the network stage holds to form batches from */

/* One input cut into parts for several reader threads (load_parts.c). */
typedef struct load_split load_split;

typedef struct load_input {
    char *path;               /* resolved path */
    load_split *split;         /* read in parts by several threads, or NULL */
    el_source *src;
    el_reader *reader;
    uint64_t resume_offset;   /* rows before this were done by an earlier run */
    bool resume_done;         /* the earlier run finished this input */
    atomic_uint_fast64_t raw_read; /* input bytes consumed, for progress */
    uint64_t raw_size;        /* input size, 0 when unknown */
    bool compressed;          /* .zst/.gz: offsets are not file bytes */
    el_reader_opts ropts;     /* how it was opened (to count fan-in in a second pass) */
} load_input;

typedef struct load_run {
    const el_load_opts *o;
    load_input *inputs;
    size_t ninputs;
    atomic_size_t next_input;   /* next input a reader thread takes */
    atomic_int readers_left;    /* the last reader to finish closes the queue */
    el_queue *queue;
    atomic_bool abort;
    pthread_mutex_t mu;         /* guards err/diag, dry-run output and `drv` */
    el_err err;
    el_diag diag;
    atomic_uint_fast64_t rows_read;
    atomic_uint_fast64_t rows_rejected; /* rows of this run that ended rejected (any stage) */
    uint64_t job_hash;          /* identifies mapping + inputs in checkpoints */
    uint64_t base_written;      /* items written by the runs this one resumes */
    bool resume_counters;       /* the run resumed had begun its counter phase: */
    uint64_t resume_counters_digest, resume_counters_done;
    double t0;                  /* start of the run (ms) */
    bool resumed_fresh;         /* --resume found no checkpoint: started over */
    el_plan *plan;              /* hot keys and their shard counts, or NULL */
    el_ddb_driver *drv;         /* the network stage's request driver while it lives (under mu) */
    atomic_bool hungry;         /* network stage sleeps waiting for chunks */
    el_counters *counters;      /* the readers count into it; NULL when the mapping has none */
    uint64_t split_hash;        /* --split: this worker's parts, for job_hash */
} load_run;

/* Records the first fatal error and tells every stage to stop. Any thread. */
void load_fail(load_run *r, el_err err, const el_diag *d);

/* Wakes the network stage when it sleeps waiting for chunks. Any thread. */
void load_wake_network(load_run *r);

/* True once the run is failing or interrupted: stop taking input. */
bool load_stopping(const load_run *r);

/* Writes a rejected row to the rejects file and tells o->on_reject; a
 * failure to write it fails the run (and is returned). Any reader thread. */
el_err load_reject_row(load_run *r, size_t idx, load_input *in, const el_diag *why,
                       const el_row *row) EL_MUST_USE;

/* The row loop over an input (rd: its reader, or one part's) with the
 * input's resume point and the counters tap as its observer. */
el_err load_rowloop(const load_input *in, el_reader *rd, el_transform *t, el_counters_tap *tap,
                    el_rowloop **out) EL_MUST_USE;

/* Adds to rows_read what the loop's answer out reads (NULL at the end of
 * the input): the row itself; for `edgeload counters` the rows tap counted
 * since *told instead, plus a reject. */
void load_count_rows(load_run *r, const el_rowloop_row *out, const el_counters_tap *tap,
                     uint64_t *told);

/* A new chunk for the input with buffers sized like the last one's; NULL
 * when out of memory. The caller owns it. */
el_chunk *load_chunk_like(size_t input, size_t json_len, size_t keys_len);

/* Keeps the item just transformed into c (its JSON from json_mark, its key
 * from key_mark: el_chunk_commit) with what the network stage and the
 * output need of it: whether its source writes the index and the hash of
 * its index partition key (hot-key pacing, partition estimates). */
el_err load_keep_item(el_chunk *c, size_t json_mark, size_t key_mark, size_t size,
                      const el_row *row, const el_transform *t, const el_source *src) EL_MUST_USE;

/* True when c is full: a chunk's worth of items, or 4 MB of JSON. */
static inline bool load_chunk_full(const el_chunk *c)
{
    return c->nitems >= EL_CHUNK_ITEMS || c->json.len > 4u * 1024 * 1024;
}

/* Gives a full chunk to the next stage; takes ownership of it, also on
 * failure. EL_EINTR when the queue was closed (the run is stopping:
 * callers that only hand over an end marker may ignore it). */
el_err load_deliver_chunk(load_run *r, el_chunk *full);

/* A progress snapshot of the run to o->progress, from the stage that owns
 * st. tr: that stage's watermark of each input (the position up to which
 * its rows are done), or NULL when rows are only counted (`edgeload
 * counters`: reading is the work). */
void load_report(load_run *r, const el_load_stats *st, const el_watermark *tr, int window,
                 bool final);

/* A reader thread (pthread start routine; arg is the load_run): takes
 * inputs one by one until none is left, and the last one to finish closes
 * the queue. */
void *load_reader_main(void *arg);

/* One reader thread's share of input idx, cut into parts (load_parts.c). */
void load_read_parts(load_run *r, size_t idx);

/* Sets in->split when the input is worth cutting into parts for `threads`
 * readers (CSV/TSV without --escape, seekable, larger than a part); leaves
 * it NULL otherwise. */
el_err load_start_split(load_run *r, load_input *in, size_t threads, el_diag *diag) EL_MUST_USE;
void load_free_split(load_split *j);

/* The stage that takes the queue: to DynamoDB, or to the --output sink. */
el_err load_network_stage(load_run *r, el_load_stats *st, el_diag *diag) EL_MUST_USE;
el_err load_output_stage(load_run *r, el_file_sink *sink, el_load_stats *st,
                         el_diag *diag) EL_MUST_USE;

#endif
