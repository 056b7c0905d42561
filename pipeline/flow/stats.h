/*
 * stats.h - the figures of a run and the progress snapshots the commands
 * print: what load, counters and load --incremental report, in one shape,
 * so the summary, the progress lines and --stats-json say the same.
 *
 * Plain data: no functions, no allocation. The stage that owns a run's
 * figures fills a snapshot and hands it to the el_progress_fn it was given
 * (on its own thread); the callback copies what it keeps.
 */
#ifndef EL_STATS_H
#define EL_STATS_H

#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"  /* el_diag */
#include "dynamo/ddb_client.h" /* EL_THR_COUNT: throttling reasons */
#include "dynamo/tablerate.h"  /* el_trate_figures */

/* Throttling by its cause: the answers by DynamoDB's ThrottlingReasons
 * (one answer may give several), what per-key pacing did, and in a word
 * what held the run back. */
typedef struct el_throttle_figures {
    uint64_t by_reason[EL_THR_COUNT]; /* throttling answers naming each reason */
    uint64_t unspecified;     /* throttling answers that named none */
    uint64_t items_refused;   /* items sent and not written: UnprocessedItems and the items
                                 of throttled requests (sent again) */
    uint64_t items_sent;      /* items in requests sent, resends included */
    uint64_t keys_paced;      /* partition keys the run paced on their own */
    uint64_t paced_now;       /* ... paced at this moment */
    el_trate_figures learned; /* the rate learned from the table's refusals, at the end */
    char limited_by[200];     /* "index key range TARGET#bob#3", "table write limit",
                                 "the --max-wcu budget", ...; "" when nothing did */
} el_throttle_figures;

/*
 * The figures of one run add up: at the end of a complete run every row
 * read is exactly one of written, duplicate or rejected,
 *
 *     rows_read == items_written + duplicates + rejected,
 *
 * (el_load_stats_add_up) and the items that come from no row (shard
 * directory items, counter updates) are counted apart. After --resume they
 * are this run's: the rows it read (from the checkpoint on) and what became
 * of them; rejects_in_file says what the rejects file holds for the job.
 */
typedef struct el_load_stats {
    uint64_t rows_read;
    uint64_t items_written;   /* items from rows, acknowledged by DynamoDB (written to the
                                 parts, printed in a dry run) */
    uint64_t duplicates;      /* rows superseded by a later row of the same key */
    uint64_t rejected;        /* rows of this run rejected (by the reader, the mapping or
                                 DynamoDB) */
    uint64_t rejects_in_file; /* rows in the rejects file: after --resume of the whole job,
                                 each once however often it was met */
    uint64_t retries;         /* items or requests sent again */
    uint64_t throttled;       /* throttling answers */
    uint64_t requests;        /* requests sent, retries included */
    uint64_t directory_items; /* shard directory items (one per hot target) written: items
                                 from no row, not in items_written */
    double wcu_consumed;      /* sum of ConsumedCapacity */
    double elapsed_s;
    el_throttle_figures thr;
    /* counters (issue 7), 0 without counters in the mapping */
    uint64_t counters_written;   /* counter attributes SET */
    uint64_t counter_edges;      /* distinct edges counted */
    uint64_t counter_duplicates; /* rows whose edge was counted already */
    uint64_t counters_skipped;   /* --resume: counter items the run resumed had written */
    bool counts_changed;         /* --resume: the counts differ from that run's: all rewritten */
} el_load_stats;

/* A snapshot for progress reports, taken about once a second by the
 * network stage. */
typedef struct el_progress {
    el_load_stats st;
    uint64_t bytes_done;      /* input bytes whose rows are done: acknowledged by DynamoDB
                                 (the checkpoint's position), or written by --output; for
                                 .zst/.gz the compressed bytes read up to that position */
    uint64_t bytes_total;     /* sum of input sizes; 0 when unknown (stdin) */
    uint64_t rows_ahead;      /* rows read and not done yet: in the queue, the window,
                                 in flight */
    int window;               /* requests allowed in flight right now */
    bool final;
    bool transactional;       /* load --incremental: st counts its rows, and: */
    uint64_t transactions;    /* transactions that succeeded (--incremental) */
    /* A phase other than a load's writing of rows, one word: "counting" and
     * "writing-counters" (edgeload counters), "reading", "checking-items",
     * "checking-counters", "checking-index" (verify); NULL for a load. With
     * total > 0 the phase's progress is done of total (counters written,
     * keys checked), else the input bytes as for a load. */
    const char *phase;
    uint64_t done, total;
    bool reads;               /* the capacity in st.wcu_consumed is read units (verify) */
} el_progress;

typedef void (*el_progress_fn)(const el_progress *p, void *user);

/* Whether the figures add up (the invariant above). */
static inline bool el_load_stats_add_up(const el_load_stats *st)
{
    return st->rows_read == st->items_written + st->duplicates + st->rejected;
}

/* Told about every rejected row (input path, the reason with its line,
 * column and offset), from any thread, after it is in the rejects file. */
typedef void (*el_reject_fn)(const char *input, const el_diag *why, void *user);

#endif
