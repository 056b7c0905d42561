/*
 * counters.h - backfilled counters: how many edges each
 * counter item has, computed exactly from the whole input, then written with
 * UpdateItem `SET #a = :n`.
 *
 *   el_counters *c;
 *   el_counters_new(mapping, &c);               // before reader threads start
 *   el_counters_add_row(c, src, &row, key, klen, &scratch);  // any thread
 *   ...every item of every source acknowledged...
 *   el_counters_write(c, &wo, &stats, &diag);   // one thread
 *   el_counters_free(c);
 *
 * Counting: each row of a source with counters adds 1 to every counter its
 * templates name, unless a row with the same item key (PK\0SK) was counted
 * before in this run: a duplicate row is the same edge, and the edge exists
 * once. A counter whose pk or sk template renders a NULL or empty
 * placeholder is skipped for that row (the row is not rejected for it).
 *
 * Memory (measured by test_counters, see docs/PERFORMANCE.md "Counters"):
 * each distinct edge costs one 16-byte fingerprint slot in an open-addressing
 * set kept at most 3/4 full (21-43 bytes an edge, about 32 on average);
 * each distinct counter costs a 32-byte slot (43-85 bytes) plus its key
 * text "PK\0SK\0attribute\0". The edge set holds 128-bit fingerprints, not
 * the keys: two distinct edges are confused (and one goes uncounted) only
 * if both 64-bit halves collide, with probability about n^2 / 2^129 (below
 * 1e-20 for a billion edges).
 *
 * Threads: el_counters_add_row may run on many threads at once (the tables
 * are split into 64 stripes, each with its own lock); everything else is
 * for one thread once the adders are done.
 */
#ifndef EL_COUNTERS_H
#define EL_COUNTERS_H

#include <stdatomic.h> /* atomic_int: the stop flag */
#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/clock.h"  /* el_clock */
#include "common/error.h"
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_driver.h"  /* el_ddb_transport */
#include "formats/reader.h"
#include "pipeline/flow/checkpoint.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rowloop.h" /* el_rowloop_observer */
#include "pipeline/flow/stats.h"     /* el_progress_fn, el_load_stats */

typedef struct el_counters el_counters;

/* Borrows m (must outlive the counter set). *out NULL on EL_ENOMEM. */
el_err el_counters_new(const el_mapping *m, el_counters **out) EL_MUST_USE;
void el_counters_free(el_counters *c);

/*
 * Counts one row of src (bound to the row's schema). key/klen is the row's
 * item key "PK\0SK" as el_transform_row renders it (the edge's identity for
 * duplicate detection). scratch is the caller's per-thread buffer for
 * rendering (its contents are replaced). A source without counters costs
 * nothing. Fails only with EL_ENOMEM / EL_ELIMIT (a counter key over the
 * DynamoDB key limits is EL_ELIMIT, diag names it).
 */
el_err el_counters_add_row(el_counters *c, const el_source *src, const el_row *row,
                           const char *key, size_t klen, el_buf *scratch,
                           el_diag *diag) EL_MUST_USE;

/*
 * Counting as a row loop's observer (pipeline/rows/rowloop.h): every row
 * that becomes an item is counted, also one a resumed run does not write
 * again. A tap is one reading thread's: it holds that thread's scratch.
 * With c NULL the tap observes nothing (its observer's fn is NULL).
 */
typedef struct el_counters_tap {
    el_counters *c;
    el_buf scratch;
    uint64_t rows; /* rows it counted */
} el_counters_tap;

void el_counters_tap_init(el_counters_tap *tap, el_counters *c);
el_rowloop_observer el_counters_tap_observer(el_counters_tap *tap);
void el_counters_tap_free(el_counters_tap *tap);

/* Renders one counter of a row: appends "PK\0SK\0attribute" to out and sets
 * *item_len to the bytes of "PK\0SK". *skip is true (and out unchanged) when
 * a pk/sk placeholder is NULL or empty: the row adds to no such counter.
 * EL_ELIMIT for keys over DynamoDB's limits, EL_ENOMEM; diag says which. */
el_err el_counter_render(const el_counter_spec *cs, const el_row *row, el_buf *out,
                         size_t *item_len, bool *skip, el_diag *diag) EL_MUST_USE;

/* Counts an edge by its rendered counter keys directly (for tests and for
 * callers that render themselves): ckeys[i] is "PK\0SK\0attribute" of
 * ckey_lens[i] bytes. Same duplicate rule as el_counters_add_row. */
el_err el_counters_add_keys(el_counters *c, const char *key, size_t klen,
                            const char *const *ckeys, const size_t *ckey_lens,
                            size_t n) EL_MUST_USE;

/* A 128-bit fingerprint of len bytes (two independent 64-bit hashes):
 * what the edge set stores, and what incremental.c derives request tokens
 * from. Deterministic on every machine. */
void el_counters_fingerprint(const void *data, size_t len, uint64_t out[2]);

/* Distinct edges counted, rows skipped as duplicates, distinct counters. */
uint64_t el_counters_edges(const el_counters *c);
uint64_t el_counters_duplicates(const el_counters *c);
uint64_t el_counters_size(const el_counters *c);
/* Bytes held by the tables and key text (for the memory figures). */
size_t el_counters_memory(const el_counters *c);

/* The count of one counter, 0 when it was never counted. */
uint64_t el_counters_get(const el_counters *c, const char *pk, const char *sk,
                         const char *attribute);

/* One counter of the set, as el_counters_list hands it out. */
typedef struct el_counter_entry {
    const char *key;    /* "PK\0SK\0attribute", borrowed from the set */
    size_t len;         /* bytes of key, without a final NUL */
    size_t item_len;    /* bytes of "PK\0SK" (the counter item's key) */
    uint64_t count;
} el_counter_entry;

/*
 * Every counter of the set, sorted by key bytes, so the attributes of one
 * counter item are adjacent (what el_counters_write and verify group into
 * one request). *out is malloc'd (the caller frees it; the keys stay owned
 * by c and valid until el_counters_free or the next el_counters_add_*);
 * *n entries. EL_ENOMEM leaves *out NULL.
 */
el_err el_counters_list(const el_counters *c, el_counter_entry **out, size_t *n) EL_MUST_USE;

typedef struct el_counters_write_opts {
    el_ddb *ddb;                     /* where requests go, unless transport is given */
    const el_ddb_transport *transport; /* NULL: the real one over ddb; tests give a
                                        scripted one. Borrowed, unlike verify's and
                                        load's: the driver made on it does not free
                                        it (a load hands its own over), the caller
                                        does after the call */
    const el_clock *clock;           /* elapsed times and progress read from it;
                                        NULL: el_now_ms (common/clock.h) */
    const char *table;
    const char *pk_attr, *sk_attr;   /* "PK", "SK" */
    int concurrency;                 /* UpdateItem requests in flight (<= 0: EL_DEFAULT_CONCURRENCY) */
    double max_wcu;                  /* capacity units per second; 0 = no cap */
    double max_retry_time_s;         /* continuous non-throttle failure before giving up */
    const atomic_int *stop;          /* may be NULL; set by a signal handler: stop taking input */
    /* about once a second and once at the end: phase "writing-counters",
     * done/total counter items; may be NULL */
    el_progress_fn progress;
    void *progress_user;
    /* the run's figures when the counter phase starts (rows read, items
     * written, requests, units, seconds; borrowed, may be NULL): the
     * phase's reports carry on from them, so no line shows fewer than the
     * line before it */
    const el_load_stats *before;
    /* --checkpoint: every checkpoint_interval_s (<= 0: EL_CHECKPOINT_INTERVAL_S) and at the end,
     * base (the run's checkpoint: job and inputs; borrowed) is written to
     * checkpoint_path with how many counter items are written. NULL: none. */
    const char *checkpoint_path;
    const el_checkpoint *base;
    double checkpoint_interval_s;
    /* --resume: the counter phase of the run resumed (from its checkpoint).
     * When the counts are the same as then (their digest), its first
     * resume_done counter items are not written again. */
    bool resume;
    uint64_t resume_digest, resume_done;
} el_counters_write_opts;

typedef struct el_counters_stats {
    uint64_t counters;        /* counter attributes written (by this run) */
    uint64_t skipped;         /* counter items a resumed run had written already */
    bool counts_changed;      /* --resume: the counts differ from the run resumed, so
                                 every counter item was written again */
    uint64_t updates;         /* UpdateItem calls that succeeded (one per counter item) */
    uint64_t requests, retries, throttled;
    uint64_t refused;         /* counter items DynamoDB refused (4xx) */
    double wcu_consumed;
    double elapsed_s;
} el_counters_stats;

/*
 * Writes every counter: one UpdateItem per counter item, `SET #a0 = :n0,
 * #a1 = :n1 ...` for its attributes, through the request driver
 * (dynamo/ddb_driver.h: --concurrency in flight, its retry policy, the
 * --max-wcu budget; counters_write.c). SET is idempotent: writing again (rerun, resume) lands the same
 * values. Returns EL_OK when every counter was written; EL_ESERVICE when
 * some were refused (diag has the first reason; the others were written),
 * EL_ENET/EL_ESERVICE/EL_ECONFIG when the run gave up, EL_EINTR when
 * stopped. stats is filled in every case.
 */
el_err el_counters_write(el_counters *c, const el_counters_write_opts *o,
                         el_counters_stats *st, el_diag *diag) EL_MUST_USE;

/* A digest of every counter and its count (in key order): two runs over
 * the same rows give the same digest. Pure. */
uint64_t el_counters_digest(const el_counter_entry *e, size_t n);

#endif
