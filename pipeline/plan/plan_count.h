/*
 * plan_count.h - the reading pass of `edgeload plan`: every row of every
 * input transformed into the item load would write, the fan-in of each
 * index partition key counted, and each item's write units, index entry,
 * partition share and import line added to the estimate.
 *
 * The counts are plain data the caller reads after el_plan_count_run (one
 * el_plan_source_count per mapping source, in the mapping's order) and
 * turns into a report, a plan file (el_plan_count_plan) and figures.
 * Inputs are paired with sources and bound as load binds them
 * (pipeline/rows/inputs.h). Single-threaded; nothing printed.
 */
#ifndef EL_PLAN_COUNT_H
#define EL_PLAN_COUNT_H

#include <stdatomic.h> /* the stop flag */
#include <stddef.h>    /* size_t */
#include <stdint.h>    /* uint64_t */

#include "common/clock.h"  /* el_clock */
#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/plan/estimate.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/sharding/shard_plan.h"
#include "pipeline/flow/stats.h"    /* el_progress_fn, el_reject_fn */

typedef struct el_plan_source_count {
    const el_source *src;
    el_key_counter *targets;     /* fan-in per index partition key */
    el_key_counter *sources;     /* rows per index sort key */
    el_key_counter *table_units; /* write units per table partition key */
    el_key_counter *index_units; /* write units per index partition key; NULL while they
                                     are the fan-in (every entry one unit, no key counted
                                     that wrote nothing) */
    el_estimate_writes est;       /* what its items cost */
    uint64_t rows;                /* rows counted for the fan-in */
    uint64_t rejected;            /* rows load would reject */
    size_t ninputs;               /* inputs read */
} el_plan_source_count;

typedef struct el_plan_count_opts {
    el_mapping *mapping;          /* its sources are bound to the inputs while they are read */
    el_reader_opts reader;        /* format options from the command line */
    const char *const *inputs;    /* named on the command line, or NULL: each source's */
    size_t ninputs;
    el_projection projection;     /* the index's, for its entries' size */
    size_t dedup_memory;          /* key fingerprints in memory; 0: the default */
    const char *tmp_dir;          /* where the key sort spills; NULL: "/tmp" */
    const el_clock *clock;        /* progress intervals read from it; NULL: el_now_ms */
    el_progress_fn progress;      /* phase "counting", input bytes done of all; may be NULL */
    void *progress_user;
    el_reject_fn on_reject;       /* a row not counted (load would reject it); may be NULL */
    void *reject_user;
    const atomic_int *stop;       /* set: stop reading (EL_EINTR); may be NULL */
} el_plan_count_opts;

typedef struct el_plan_count el_plan_count;

/*
 * Reads every input. *out gets the counts (free with el_plan_count_free),
 * also on failure when some were made (NULL otherwise). Errors name the
 * input and line: pairing (EL_EUSAGE), reading, EL_ENOMEM with how many
 * distinct targets were being counted, EL_EINTR when stopped.
 */
el_err el_plan_count_run(const el_plan_count_opts *o, el_plan_count **out,
                         el_diag *diag) EL_MUST_USE;

/* The counts of the mapping's i-th source. */
const el_plan_source_count *el_plan_count_source(const el_plan_count *c, size_t i);
size_t el_plan_count_nsources(const el_plan_count *c);

/*
 * Sums it all: the shard plan of the counted fan-in (every source that
 * writes the index: a key's fan-in is theirs together), each source's
 * hottest partitions after that plan, the total (whose table partitions are
 * every source's together: entities and edges share partition keys, and
 * whose index partitions are too) and the import of each key once. Call
 * once, after a successful run. EL_EUSAGE when sources with different hot
 * settings share a hot key (el_plan_add_counted), EL_ENOMEM, the dedup's
 * errors.
 */
el_err el_plan_count_finish(el_plan_count *c, el_estimate_writes *total,
                            el_import_estimate *imp, el_diag *diag) EL_MUST_USE;

/* After el_plan_count_finish: the shard plan (the caller may give it an
 * estimate, el_plan_set_estimate, and write it), owned by c. */
el_plan *el_plan_count_plan(const el_plan_count *c);

/* After el_plan_count_finish: the fan-in of every index partition key over
 * every source that writes the index, owned by c; NULL when none does. */
const el_key_counter *el_plan_count_targets(const el_plan_count *c);

void el_plan_count_free(el_plan_count *c);

#endif
