/*
 * sim_workload.h - the items of a simulated load: follow edges of a
 * skewed graph, as a mysqldump of follows(follower, followee) sorted by
 * its primary key gives them.
 *
 * Each edge becomes an item PK=ACTOR#<follower>, SK=TARGET#<followee>,
 * with the inverted index key GSI1PK=TARGET#<followee> (sharded
 * TARGET#<followee>#<k> when the target's fan-in reaches the threshold,
 * k = FNV-1a of the index sort key mod N, as edgeload shards). Followees
 * follow a Zipf law, so a few targets are hot; a share of rows repeat an
 * earlier edge later in the input (the later row must win). Sizes are
 * ~200 B, or spread from 100 B to 40 KB (log-uniform). A key may turn hot
 * midway: the second half of the input draws its targets from a rotated
 * ranking.
 */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/flow/chunk.h"

typedef struct sim_workload_cfg {
    size_t edges, users;
    double zipf_s;            /* skew of the followees */
    size_t shard_threshold;   /* 0: no sharding */
    size_t max_shards;
    bool mixed_sizes;         /* 100 B - 40 KB instead of ~200 B */
    double dup_share;         /* rows repeating an earlier edge */
    bool hot_midway;          /* the hottest target changes halfway */
    uint64_t seed;
} sim_workload_cfg;

typedef struct sim_workload {
    el_chunk **chunks;
    size_t nchunks;
    size_t nitems;            /* rows */
    size_t nkeys;             /* distinct item keys */
    double units_table;       /* write units in the table (one write per distinct key
                                 would do; every row is counted, as a load sends them) */
    double units_index;
    double max_key_units;     /* the most units any one partition key takes */
    char hottest[64];         /* that key */
} sim_workload;

/* Builds the items (aborts when out of memory: a test). */
void sim_workload_make(const sim_workload_cfg *cfg, sim_workload *out);
void sim_workload_free(sim_workload *w);

#endif
