/*
 * incremental.h - applying a delta with exact counters:
 * `edgeload load --incremental`.
 *
 * Every row becomes a conditional write inside a TransactWriteItems together
 * with the counter changes it causes:
 *   - a put row: Put of the item with attribute_not_exists(PK), and
 *     ADD attr :+1 on each counter item its source names;
 *   - a delete row (op_column's value is "D"): Delete of the item with
 *     attribute_exists(PK), and ADD attr :-1.
 * A transaction cancelled because a row's condition failed means the edge
 * already existed (put) or was already gone (delete): the row is counted as
 * a duplicate and no count changes. So applying a delta twice, or again
 * after a crash, leaves every count exact.
 *
 * Hot counter items: rows of one round (up to EL_INCR_ROUND_ROWS rows of an
 * input, with no item key twice) that hit the same counter item are grouped
 * into one transaction of up to 100 actions: their conditional puts/deletes
 * plus ONE `ADD attr :k` on the shared counter item (k = the group's net
 * change) and one ADD on each other counter item. Two transactions touching
 * the same counter item are never in flight together, so a star's followers
 * are applied 49 at a time instead of one at a time, and never conflict
 * with each other. When a grouped transaction is cancelled, the
 * CancellationReasons name the rows whose condition failed: those are
 * duplicates, and the rest is sent again as a smaller group (with its own
 * net ADD). A cancellation without usable reasons splits the group into
 * one transaction per row.
 *
 * Idempotency: every transaction carries a ClientRequestToken derived from
 * its rows (el_incr_row_token: table, op, item key and the row's offset)
 * and the run's id, so a resend after a lost reply is recognised by
 * DynamoDB (it answers success without writing again, for 10 minutes; such
 * answers are counted as "replayed"). The run id is in the token on
 * purpose: a token that a later run of the same delta would send again is
 * wrong when the delta touches one key twice. Delta "x: put, x: delete",
 * run 1 puts and deletes x; run 2, within 10 minutes, puts x again (it is
 * absent), then sends the delete with run 1's token: DynamoDB replays run
 * 1's success without deleting, and x and its counters stay one too high
 * (the integration test caught exactly this). Across runs the conditions
 * alone keep the counts exact: a row already applied is a duplicate.
 *
 * Order: inputs are applied one after another (entity sources first when
 * the mapping lists them first) and, within an input, rows of the same item
 * key in input order (a round ends before a key repeats).
 * Rows of every source are conditional puts: existing entity items are not
 * replaced (their counters would be lost).
 */
#ifndef EL_INCREMENTAL_H
#define EL_INCREMENTAL_H

#include <stdatomic.h> /* atomic_int: the stop flag */
#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/clock.h"  /* el_clock */
#include "common/error.h"
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_driver.h"   /* el_ddb_transport */
#include "dynamo/ddb_limits.h"   /* EL_DDB_TXN_MAX_ACTIONS */
#include "formats/reader.h"
#include "pipeline/flow/stats.h"    /* el_progress: the same reports as a load */
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"

typedef struct el_incr_opts {
    el_mapping *mapping;
    el_reader_opts reader;
    const char *const *inputs;    /* positional inputs, or NULL for each source's "input" */
    size_t ninputs;
    el_ddb *ddb;                  /* where requests go, unless transport is given */
    const el_ddb_transport *transport; /* NULL: the real one over ddb; tests give a
                                     scripted one, taken: its free is called when the
                                     run ends, whatever happened */
    el_rejects *rejects;
    int concurrency;              /* transactions in flight (<= 0: EL_DEFAULT_CONCURRENCY) */
    double max_wcu;               /* 0 = no cap; a transaction costs 2 WCU per write */
    double max_retry_time_s;
    const atomic_int *stop;       /* may be NULL; set by a signal handler: stop taking input */
    const char *op_column;        /* NULL: every row is a put; else "D" rows delete */
    bool no_grouping;             /* one transaction per row (for comparison) */
    uint64_t run_id;              /* in every token; 0: made from the clock and pid */
    const char *plan_path;        /* shard plan (`edgeload plan --plan-out`) so edges of
                                     hot targets get the same index shards as the
                                     backfill; NULL: index keys unsharded */
    /* called about once a second and once at the end (final), on the
     * calling thread, with the figures of a load (el_incr_load_stats) and
     * transactional set; may be NULL */
    el_progress_fn progress;
    void *progress_user;
    const el_clock *clock;        /* elapsed times and progress intervals are read
                                     from it; NULL: el_now_ms (common/clock.h) */
} el_incr_opts;

typedef struct el_incr_stats {
    uint64_t rows_read;
    uint64_t added;           /* put rows whose item was new */
    uint64_t deleted;         /* delete rows whose item existed */
    uint64_t duplicates;      /* put rows whose item existed (no count changed) */
    uint64_t absent;          /* delete rows whose item was already gone */
    uint64_t replayed;        /* rows of transactions DynamoDB answered as replays */
    uint64_t rejected;
    uint64_t transactions;    /* transactions that succeeded */
    uint64_t requests, retries, throttled, conflicts, splits;
    double wcu_consumed;
    double elapsed_s;
} el_incr_stats;

/*
 * Applies the inputs. Returns EL_OK when every row was applied, found a
 * duplicate or rejected; EL_EUSAGE for mapping/input errors found before
 * writing (an --op-column no input has is one); EL_EINTR when stopped;
 * other errors when the run gave up (diag says why). stats filled always.
 */
el_err el_incr_run(const el_incr_opts *o, el_incr_stats *st, el_diag *diag) EL_MUST_USE;

/* The figures of a load that an incremental run's stats amount to, for the
 * progress lines, the summary and --stats-json: rows_read, rejected,
 * retries, throttled, requests, wcu_consumed and elapsed_s as they are;
 * items_written = added + deleted + replayed (rows whose write took
 * effect); duplicates = duplicates + absent (rows that changed nothing).
 * Pure. */
void el_incr_load_stats(const el_incr_stats *st, el_load_stats *out);

#endif
