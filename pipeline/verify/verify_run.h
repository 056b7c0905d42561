/*
 * verify_run.h - what the files of `edgeload verify` share: the run
 * and the helpers that build keys and report mismatches. For verify*.c
 * only; the API is pipeline/verify/verify.h.
 *
 *   verify_run.c          the run: reading the inputs, the expected counters
 *   verify_get.c      the forward check: BatchGetItem of every expected key
 *   verify_reverse.c  the reverse check: Query of sampled index keys
 *   verify_report.c   comparing what came back, and the report lines
 */
#ifndef EL_VERIFY_RUN_H
#define EL_VERIFY_RUN_H

#include "dynamo/ddb_driver.h"
#include "formats/ddb_item.h"
#include "pipeline/counters/counters.h"
#include "pipeline/sharding/shard_plan.h"
#include "pipeline/extmem/sample.h"
#include "dynamo/ddb_limits.h"
#include "pipeline/rows/transform.h"
#include "pipeline/verify/verify.h"

#define VERIFY_REQUEST_MAX EL_DDB_MAX_REQUEST_BYTES
#define VERIFY_RESPONSE_MAX (64u * 1024 * 1024)
#define VERIFY_REVERSE_SET_MAX (1024u * 1024 * 1024)

typedef struct vrun {
    const el_verify_opts *o;
    const el_mapping *m;
    el_verify_stats *st;
    el_sample *items;      /* key "PK\0SK" -> expected item JSON */
    el_counters *counters; /* the counts, as the backfill computes them; or NULL */
    el_sample *ctrs;       /* counter item "PK\0SK" -> "attr\0count\0" pairs; or NULL */
    el_sample *cur;        /* the set the batch loop works on: items or ctrs */
    bool cur_counters;     /* cur is ctrs */
    el_buf proj;           /* ProjectionExpression + names of counter requests */
    el_sample *targets;    /* unsharded index pk -> its expected keys, a key set
                              (verify_reverse.c): [u32 shard][u32 len][bytes]... */
    el_plan *plan;         /* hot keys load shards, or NULL */
    el_ddb_driver *drv;    /* every request, paced by --max-rcu */
    double t0, last_report;    /* ms: the run's start, the last progress report */
    const char *phase;     /* the phase last reported */
    el_buf req, resp, line, tmp;
} vrun;


/* Interrupted by a signal. */
bool verify_stopping(const vrun *v);

/* A progress report of phase (done of total; 0 of 0 for the reading), at
 * most once a second unless final or the phase changed. */
void verify_progress(vrun *v, const char *phase, uint64_t done, uint64_t total, bool final);

/* Keys of the current set settled so far (present and missing items, or
 * counter items checked). */
uint64_t verify_settled(const vrun *v);

/* Appends {"PK":{"S":..},"SK":{"S":..}} for key "PK\0SK". */
el_err verify_put_key(el_buf *b, const vrun *v, const char *key, size_t klen) EL_MUST_USE;

/* "PK\0SK" of an item or key; false when it has no string keys. */
bool verify_key_of(const vrun *v, const el_ddb_val *item, el_buf *key);

/* Reports a missing item or a reverse mismatch (index_key NULL for the
 * forward kinds). */
el_err verify_report_simple(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                            const char *index_key) EL_MUST_USE;

/* Compares the expected item's JSON with the table's item; reports and
 * sets *same false when a mapped attribute differs. */
el_err verify_compare_item(vrun *v, const char *key, size_t klen, const char *expected_json,
                           const el_ddb_val *actual, bool *same, el_diag *diag) EL_MUST_USE;

/* Checks every counter attribute expected on one counter item (expected:
 * "attr\0count\0" pairs); item NULL when the item is absent. */
el_err verify_compare_counters(vrun *v, const char *key, size_t klen, const el_buf *expected,
                               const el_ddb_val *item, el_diag *diag) EL_MUST_USE;

/* Fetches every key of v->cur (the expected items, or the counter items)
 * with BatchGetItem and compares (verify_get.c). */
el_err verify_check_set(vrun *v, el_diag *diag) EL_MUST_USE;

/* The reverse check over the sampled index keys (verify_reverse.c). */
el_err verify_check_targets(vrun *v, el_diag *diag) EL_MUST_USE;

#endif
