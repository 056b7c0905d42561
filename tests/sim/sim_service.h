/*
 * sim_service.h - a model of DynamoDB's BatchWriteItem for the simulator:
 * what the service does with a batch at the moment it arrives.
 *
 * Capacity is token buckets, as DynamoDB documents it: one for the table's
 * writes, one for the index's, and one per partition key of the table and
 * of the index (a partition serves at most 1,000 write units a second),
 * each with its burst. An item is written when every bucket it draws on
 * has its units (one per started KB, in the table and again in the index
 * for an item with index keys); the items that do not fit are handed back
 * in UnprocessedItems, and a batch of which nothing fits is refused whole
 * with ProvisionedThroughputExceededException (ThrottlingReasons naming
 * the buckets that refused, when the scenario gives reasons).
 *
 * Faults at random, a share of requests each: throttles that name no
 * reason, 500s before and after the write, 503 with an HTML body,
 * connection resets, replies lost after the write, replies cut in half;
 * and a share of batches that hand back a random part of their items.
 *
 * Capacity may change during a run: the table's rate follows a schedule
 * (another tenant taking a share of it for a while), or grows as an
 * on-demand table does, to twice its peak after a delay.
 *
 * The table itself is a map from item key to the last version written,
 * for the exactness check. Pure: time is an argument (ms); no sockets, no
 * sleeps. Single-threaded.
 */
#ifndef SIM_SERVICE_H
#define SIM_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "pipeline/flow/chunk.h"

/* A change of the table's capacity at a time: from at_s on, the table's
 * rate is `factor` times its configured rate. */
typedef struct sim_step {
    double at_s, factor;
} sim_step;

typedef struct sim_service_cfg {
    const char *table;
    double table_wcu, table_burst_s;  /* 0: no limit */
    double index_wcu, index_burst_s;  /* 0: no limit */
    double key_wcu, key_burst_s;      /* per partition key, table and index; 0: none */
    bool reasons;                     /* whole-request throttles name their reasons */
    /* random faults: shares of requests (disjoint) */
    double f_throttle, f_500, f_500_applied, f_503, f_reset, f_lost, f_truncated;
    double f_partial;                 /* share of batches handing back a random part */
    /* capacity over time */
    sim_step steps[4];
    size_t nsteps;
    bool on_demand;                   /* table rate = max(table_wcu, 2 x peak) */
    double on_demand_delay_s;         /* the peak that counts is this old */
    double on_demand_max;             /* the most it grows to */
    uint64_t seed;
} sim_service_cfg;

typedef struct sim_service sim_service;

/* How a request ended, as a transport would see it. */
typedef enum sim_end {
    SIM_HTTP = 0,     /* an HTTP answer: status, body */
    SIM_RESET,        /* the connection was reset before an answer */
    SIM_NO_REPLY      /* the connection closed without an answer (after the write) */
} sim_end;

typedef struct sim_reply {
    sim_end end;
    long status;
    el_buf body;      /* owned by the reply (sim_reply_clear) */
} sim_reply;

sim_service *sim_service_new(const sim_service_cfg *cfg);
void sim_service_free(sim_service *s);

/* A BatchWriteItem of items[0..n) arrives at now (ms). */
void sim_service_batch(sim_service *s, el_item *const *items, size_t n, double now,
                       sim_reply *out);

void sim_reply_clear(sim_reply *r);

/* The last version (the item's input line) written for the key of `it`,
 * 0 when none. */
uint64_t sim_service_version(const sim_service *s, const el_item *it);

/* Distinct item keys written. */
size_t sim_service_items(const sim_service *s);

/* Figures of what the service saw. */
typedef struct sim_service_stats {
    uint64_t requests, items_in, items_written, items_back, whole_throttles;
    uint64_t faults;         /* requests given a random fault */
    uint64_t back_table, back_index, back_table_key, back_index_key; /* items handed back, by
                                                                     the bucket that refused */
    double units_table, units_index;
} sim_service_stats;
void sim_service_stats_get(const sim_service *s, sim_service_stats *out);

/* The table's rate at now (its schedule or on-demand growth). */
double sim_service_table_rate(sim_service *s, double now);

#endif
