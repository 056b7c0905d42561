/*
 * sim_run.h - one simulated load: a workload (sim_workload.h) through the
 * real sender, batcher, pacer and request driver to the simulated service
 * (sim_service.h), in virtual time, and its score against the scenario's
 * floor.
 *
 * The floor is what a client that knew every limit could do: the largest
 * of (units / rate) over the table, the index and each partition key (the
 * time to write them when the rate changes during the run), the budget,
 * and the client's own (requests in flight x items a request / latency),
 * divided by (1 - the share of requests faulted at random).
 */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_service.h"
#include "sim_workload.h"

/* The client side's policy. */
typedef enum sim_policy {
    SIM_EDGELOAD = 0,     /* edgeload as it is */
    SIM_SDK_ADAPTIVE      /* the AWS SDKs' adaptive retry mode (sim_adaptive.h) */
} sim_policy;

typedef struct sim_scenario {
    char name[96];
    sim_workload_cfg work;
    sim_service_cfg svc;
    double latency_ms, jitter_ms;
    int concurrency;
    double max_wcu;           /* 0: no budget */
    sim_policy policy;
    bool no_pacing, no_table_rate;  /* edgeload with a mechanism switched off */
    /* what the scenario is held to */
    bool capacity_limited;    /* a limit binds: wall/floor and refused share goals */
    bool random_faults;       /* faults at random: the wall/floor goal for them */
} sim_scenario;

typedef struct sim_score {
    double wall_s, floor_s, ratio;
    const char *floor_by;     /* "table", "index", "key", "budget", "client" */
    double refused_share;     /* items refused / items sent */
    uint64_t items_sent, items_refused, requests;
    uint64_t keys_paced;
    bool exact;               /* every key ends with its last row, and no item refused */
    bool finished;            /* not stopped by the virtual time limit */
    double table_rate;        /* the learned rate at the end (units/s) */
} sim_score;

/* Runs the scenario (deterministic for its seeds). */
void sim_run(const sim_scenario *sc, sim_score *out);

#endif
