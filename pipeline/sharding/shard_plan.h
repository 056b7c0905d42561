/*
 * shard_plan.h - the shard plan (docs/SHARDING.md): which index partition
 * keys are hot and how many shards each gets. The fan-in it is decided
 * from is counted by key_counter.h.
 *
 * el_plan is the decision: per mapping source its row count and the hot
 * threshold and max_shards it was counted with, and every hot key with
 * its fan-in, its shard count and each source's share of the fan-in. An
 * index partition key belongs to the index, not to a source: several
 * sources may write edges to TARGET#bob, and its fan-in is theirs
 * together, so a hot key is listed once, whichever source writes it, and
 * every source's edges to it go to its shards. The sources that share a
 * hot key must have the same hot settings (el_plan_add_hot refuses
 * others). It is written as JSON by `edgeload plan --plan-out FILE`
 * (shard_plan_file.c) and read back by `load --plan FILE`:
 *
 *   {"version":2,"sources":[
 *     {"name":"follows","rows":2000000,"threshold":10000,"max_shards":32},
 *     {"name":"likes","rows":500000,"threshold":10000,"max_shards":32}],
 *    "hot":[{"key":"TARGET#bob","fan_in":35000,"shards":4,
 *            "sources":{"follows":30000,"likes":5000}}, ...],
 *    "estimate":{...}}
 *
 * ("estimate": what `edgeload plan` estimated, pipeline/plan/estimate.h; kept
 * for people and scripts, not read back.)
 *
 * Lookups (el_plan_shards) are a hash probe, cheap enough for every row.
 */
#ifndef EL_SHARD_PLAN_H
#define EL_SHARD_PLAN_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "pipeline/sharding/key_counter.h"

/* ---- the plan ---- */

typedef struct el_plan el_plan;

/* What a plan says about one mapping source; owned by the plan. */
typedef struct el_plan_source {
    const char *name;
    uint64_t rows;        /* rows counted (index keys rendered) */
    uint64_t threshold;   /* 0: hot sharding off for this source */
    size_t max_shards;    /* 0 when threshold is 0 */
} el_plan_source;

/* One source's part of a hot key's fan-in. */
typedef struct el_plan_share {
    size_t source;        /* the plan source's index */
    uint64_t count;       /* its rows with this key, >= 1 */
} el_plan_share;

/* A hot key: an unsharded index partition key, its fan-in over every
 * source that writes it, its shard count. Owned by the plan; key is
 * NUL-terminated. */
typedef struct el_plan_hot {
    const char *key;
    size_t len;
    uint64_t fan_in;             /* the sum of the shares */
    size_t shards;
    const el_plan_share *shares; /* nshares >= 1, by source index, ascending */
    size_t nshares;
} el_plan_hot;

/* An empty plan; NULL when out of memory. */
el_plan *el_plan_new(void);
void el_plan_free(el_plan *p);

/*
 * Adds a source; *index (may be NULL) gets its index. threshold 0 turns hot
 * sharding off for it (then max_shards is stored as 0); otherwise
 * max_shards must be 2..65536. EL_EUSAGE for a duplicate or empty name or a
 * bad max_shards, EL_ENOMEM; diag says which.
 */
el_err el_plan_add_source(el_plan *p, const char *name, uint64_t rows, uint64_t threshold,
                          size_t max_shards, size_t *index, el_diag *diag) EL_MUST_USE;

/*
 * Adds a hot key written by the sources of shares[0..nshares) (copied),
 * its fan-in their sum. Checked as a loaded plan is: key non-empty, valid
 * UTF-8, at most EL_KEY_MAX_LEN bytes, not listed yet; at least one share,
 * sources ascending and known, each count from 1 to its source's rows;
 * every source of the key hot (threshold > 0) with the same threshold and
 * max_shards; fan-in >= that threshold; 2 <= shards <= max_shards.
 * EL_EUSAGE (diag says what, naming the key and the sources), EL_ENOMEM.
 */
el_err el_plan_add_hot(el_plan *p, const char *key, size_t len, size_t shards,
                       const el_plan_share *shares, size_t nshares, el_diag *diag) EL_MUST_USE;

/*
 * Adds every key whose fan-in, summed over the counters of every source,
 * reaches its sources' threshold, with el_shard_count's shard count,
 * highest fan-in first (ties by key). targets[i] is the fan-in counter of
 * plan source i, or NULL for a source not counted (it shares no hot key).
 * A key written by sources with different hot settings whose fan-in
 * reaches the lower threshold is EL_EUSAGE (which of them would decide its
 * shards?); el_mapping_check refuses such mappings before any reading.
 * EL_ENOMEM.
 */
el_err el_plan_add_counted(el_plan *p, const el_key_counter *const *targets,
                           el_diag *diag) EL_MUST_USE;

size_t el_plan_nsources(const el_plan *p);

/* The i-th source (i < el_plan_nsources), NULL past them; valid until the
 * plan changes. */
const el_plan_source *el_plan_get_source(const el_plan *p, size_t i);

/* Index of the source with that name, or EL_PLAN_NO_SOURCE. */
#define EL_PLAN_NO_SOURCE ((size_t)-1)
size_t el_plan_find_source(const el_plan *p, const char *name);

/* Hot keys, in the order added (file order; counted: highest fan-in
 * first), and the i-th (NULL past them); valid until the plan changes. */
size_t el_plan_nhot(const el_plan *p);
const el_plan_hot *el_plan_get_hot(const el_plan *p, size_t i);

/* The hot entry of key[0..len), NULL when the key is not hot. Valid until
 * the plan changes. */
const el_plan_hot *el_plan_lookup(const el_plan *p, const char *key, size_t len);

/* Shard count of key: its hot entry's shards, else 1. */
size_t el_plan_shards(const el_plan *p, const char *key, size_t len);

/* ---- the plan file (shard_plan_file.c) ---- */

/* The version written and read. Version 1 (fan-in counted per source) is
 * refused with a message to make the plan again. */
#define EL_PLAN_VERSION 2

/* Keeps a copy of json (one JSON object: `edgeload plan`'s estimate,
 * pipeline/plan/estimate.h) to be written as the plan file's "estimate" member.
 * el_plan_load accepts the member and does not read it: a plan decides
 * where items go, an estimate decides nothing. EL_ENOMEM. */
el_err el_plan_set_estimate(el_plan *p, const char *json) EL_MUST_USE;

/* The estimate kept, or NULL. */
const char *el_plan_estimate(const el_plan *p);

/*
 * Writes the plan as JSON to path atomically: a temporary file in the same
 * directory, fsync, rename over path, fsync of the directory. On failure
 * path is untouched and the temporary file removed. EL_EIO (diag names the
 * file and the system's reason), EL_ENOMEM.
 */
el_err el_plan_write(const el_plan *p, const char *path, el_diag *diag) EL_MUST_USE;

/* Renders the plan's JSON (what el_plan_write writes) into a new
 * NUL-terminated string the caller frees. NULL when out of memory. */
char *el_plan_to_json(const el_plan *p);

/*
 * Reads a plan file. Everything is validated: the version, the types and
 * ranges of every field, unknown keys refused, hot keys as el_plan_add_hot
 * checks them, each key's "fan_in" the sum of its "sources". EL_EUSAGE with
 * diag saying the file and the field ("p.json: hot[3] 'TARGET#bob':
 * \"shards\" 40 is not from 2 to max_shards 32"); EL_EIO when it cannot be
 * read. *out is NULL on failure.
 */
el_err el_plan_load(const char *path, el_plan **out, el_diag *diag) EL_MUST_USE;

/* The same on JSON text in memory (json must be NUL-terminated at len). */
el_err el_plan_parse(const char *json, size_t len, el_plan **out, el_diag *diag) EL_MUST_USE;

#endif
