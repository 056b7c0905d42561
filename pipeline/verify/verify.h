/*
 * verify.h - `edgeload verify`: are the items the inputs map to in the
 * table, with the attributes the mapping gives them?
 *
 *   1. read every input with the same readers and the same el_transform as
 *      load, keeping the expected item of each key (the later row of a
 *      duplicate key wins: inputs in the given order, rows in file order);
 *      with `sample` > 0 only a uniform sample of the distinct keys is kept
 *      (pipeline/extmem/sample.h), so memory is bounded by the sample;
 *   2. fetch them with BatchGetItem (100 keys a request, ConsistentRead,
 *      UnprocessedKeys resent with backoff) and compare: an item is present
 *      when its key is found, and different when any attribute of the
 *      expected item is absent or not equal in the table (attributes the
 *      mapping does not write are ignored; values compared by
 *      el_verify_values_equal);
 *   3. when the mapping has counters, count them from the same
 *      rows with the backfill's own code (pipeline/counters/counters.h: a duplicate
 *      row counts once, a rejected row not at all), fetch the counter items
 *      the same way (ProjectionExpression: the keys and the counter
 *      attributes) and compare each counter attribute with its count: an
 *      absent item or attribute is "counter-missing", another value
 *      "counter-different". With `sample` > 0 a uniform sample of `sample`
 *      counter items is checked (the counting itself needs every row: its
 *      memory is the backfill's, see counters.h); `no_counters` skips it,
 *      `counters_only` checks nothing else (no item is kept then);
 *   4. with `reverse` > 0, Query the index for that many sampled index
 *      partition keys (uniform over the distinct unsharded ones in the
 *      input) and check that the items listed are exactly the expected ones
 *      (a key that does not match is queried again after
 *      reverse_recheck_ms, because the index is only eventually
 *      consistent). A hot key is checked whole: its expected edges, from
 *      every source, each on the shard it goes to, every shard queried,
 *      and the plain key too (where nothing may be listed).
 *
 * With a hot-key plan (counted as load counts it, or --plan), every hot
 * key's shard directory item (PK=<key>, SK=#SHARDS, shards, fanIn) is an
 * expected item too: its fanIn is the fan-in over every source.
 *
 * Rows that cannot become items (rejected by the reader or the transform,
 * as load rejects them) are counted, in total and per source: they are not
 * in the table, and the caller decides whether that is a failure.
 *
 * Every request goes through the request driver (dynamo/ddb_driver.h):
 * BatchGetItem `concurrency` at a time, the reverse check's Queries one at a
 * time, all paced by max_rcu.
 */
#ifndef EL_VERIFY_H
#define EL_VERIFY_H

#include <stdatomic.h> /* atomic_int: the stop flag */
#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/clock.h"  /* el_clock */
#include "common/error.h"
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_driver.h"  /* el_ddb_transport */
#include "dynamo/ddb_limits.h"  /* BatchGetItem's 100 keys */
#include "formats/reader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/split.h"   /* el_split: --split I/N */
#include "pipeline/flow/stats.h"   /* el_progress_fn */

#define EL_VERIFY_BATCH_KEYS EL_DDB_BATCH_GET_KEYS
/* BatchGetItem requests in flight when --concurrency is not given */
#define EL_VERIFY_DEFAULT_CONCURRENCY 8
#define EL_VERIFY_DEFAULT_SEED 20240611  /* plain digits: cmd/ prints it in --help */

typedef enum el_verify_kind {
    EL_VERIFY_MISSING = 0,     /* expected item not in the table */
    EL_VERIFY_DIFFERENT,       /* present, some mapped attribute differs */
    EL_VERIFY_REVERSE_MISSING, /* expected item not listed under its index key */
    EL_VERIFY_REVERSE_EXTRA,   /* listed under the index key but not expected */
    EL_VERIFY_COUNTER_MISSING, /* counter item, or its counter attribute, absent */
    EL_VERIFY_COUNTER_DIFFERENT/* counter attribute present with another value */
} el_verify_kind;

/* "missing", "different", "reverse-missing", "reverse-extra",
 * "counter-missing", "counter-different". */
const char *el_verify_kind_name(el_verify_kind k);

typedef struct el_verify_attr_diff {
    const char *name;
    const char *expected;  /* DynamoDB JSON of the value, e.g. {"N":"1.5"} */
    const char *actual;    /* NULL when the table's item lacks the attribute */
} el_verify_attr_diff;

/* One mismatch, handed to the callback; everything is borrowed for the
 * duration of the call. */
typedef struct el_verify_mismatch {
    el_verify_kind kind;
    const char *pk, *sk;          /* the item's key (NUL-terminated) */
    const char *index_key;        /* reverse kinds: the index partition key; else NULL */
    const el_verify_attr_diff *diffs; /* EL_VERIFY_DIFFERENT; the counter kinds: one
                                     diff, the counter attribute ({"N":..} expected) */
    size_t ndiffs;
    bool item_present;            /* counter kinds: whether the counter item exists */
    const char *json;             /* the whole mismatch as one JSON object, no newline:
                                     {"kind":..,"key":{"PK":..,"SK":..},
                                      "attributes":{NAME:{"expected":..,"actual":..}},
                                      "index_key":..}; the counter kinds add
                                     "item_present":true|false */
} el_verify_mismatch;

typedef struct el_verify_stats {
    uint64_t rows_read;
    uint64_t rejected;        /* rows that cannot become items (the reader or the
                                 transform refuses them, as load does): not in the table */
    uint64_t directories;     /* shard directory items expected (in `expected`): one per
                                 hot key of the plan, fanIn over every source */
    uint64_t duplicates;      /* rows of a key seen before (among kept keys) */
    uint64_t distinct;        /* distinct keys in the input (full mode only; else 0) */
    uint64_t expected;        /* items checked */
    uint64_t present;
    uint64_t missing;
    uint64_t different;
    uint64_t reverse_keys;    /* index partition keys queried */
    uint64_t reverse_expected;/* items expected under them */
    uint64_t reverse_missing;
    uint64_t reverse_extra;
    uint64_t counter_items;   /* counter items checked (0 without counters) */
    uint64_t counters_expected; /* counter attributes checked */
    uint64_t counters_present;  /* ... present with the expected count */
    uint64_t counters_missing;  /* ... whose item or attribute is absent */
    uint64_t counters_different;/* ... with another value */
    uint64_t counter_edges;   /* distinct edges counted */
    uint64_t counter_duplicates; /* rows whose edge was counted already */
    uint64_t requests;        /* BatchGetItem and Query requests, retries included */
    uint64_t retries;
    uint64_t throttled;
    double rcu_consumed;
    double elapsed_s;
} el_verify_stats;

typedef struct el_verify_opts {
    el_mapping *mapping;          /* sources are bound to their inputs here */
    el_reader_opts reader;        /* format options from the command line */
    const char *const *inputs;    /* positional inputs overriding "input", or NULL */
    size_t ninputs;
    el_ddb *ddb;                  /* where requests go, unless transport is given */
    const el_ddb_transport *transport; /* NULL: the real one over ddb; tests give a
                                     scripted one, taken: its free is called when the
                                     run ends, whatever happened */
    const char *plan_path;        /* hot keys as load used them (--plan); NULL: counted
                                     for sources with "hot", as load does */
    el_split split;               /* --split I/N: check only the items of this part's
                                     rows (the parts of load --split); count 0 = all.
                                     No reverse check and no counter check with a split
                                     (a part knows neither every source of a target
                                     nor a count's total): counters are not checked,
                                     --reverse and counters_only are EL_EUSAGE */
    uint64_t sample;              /* 0: every expected item */
    uint64_t seed;                /* for the samples */
    uint64_t reverse;             /* index partition keys to Query (0: none) */
    bool no_counters;             /* do not check the mapping's counters */
    bool counters_only;           /* check the counters and no item (EL_EUSAGE when
                                     the mapping has no counters or with reverse) */
    int concurrency;              /* BatchGetItem requests in flight; <= 0: 1 */
    double reverse_recheck_ms;    /* index keys that do not match are queried again
                                     after this long (index reads are eventually
                                     consistent); <= 0: report the first answer */
    double max_retry_time_s;      /* continuous non-throttle failure before giving up */
    double max_rcu;               /* read capacity units per second (--max-rcu); 0 = none */
    /* about once a second and at the end, on the calling thread: the phase
     * ("reading", "checking-items", "checking-counters", "checking-index"),
     * keys checked of how many; may be NULL */
    el_progress_fn progress;
    void *progress_user;
    const el_clock *clock;        /* elapsed times and progress intervals are read
                                     from it; NULL: el_now_ms (common/clock.h) */
    const atomic_int *stop;       /* may be NULL; set by a signal handler: stop taking input */
    /* called for every mismatch, in the order found; may be NULL */
    void (*on_mismatch)(void *user, const el_verify_mismatch *mm);
    void *user;
    /* NULL, or mapping->nsources counts (zeroed by the caller) to which the
     * rows of each source that cannot become items are added */
    uint64_t *rejected_by_source;
} el_verify_opts;

/*
 * Runs the verification. EL_OK when every check was made (the stats say
 * whether all matched); EL_EUSAGE for mapping/input errors found before
 * any request; EL_ETABLE when the table or index is missing; EL_ECONFIG for
 * refused credentials; EL_EINTR when stopped; other errors when a request
 * could not be completed (diag says why). stats is filled in every case.
 */
el_err el_verify_run(const el_verify_opts *opts, el_verify_stats *stats,
                     el_diag *diag) EL_MUST_USE;

#endif
