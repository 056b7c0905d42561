/*
 * sim_matrix.h - the scenarios rate control is proven on, and their goals.
 *
 * The matrix: {no limit, table limit, hot keys, hot keys with sharding,
 * table limit and hot keys} x {no faults, ~20 % random faults, 30 % random
 * partial batches} x {ThrottlingReasons given, not given} x {~200 B
 * items, 100 B - 40 KB}; then capacity that changes during the run
 * (another tenant takes half the table for a while; an on-demand table
 * growing to twice its peak; a key that turns hot midway), a --max-wcu
 * budget below the table's limit, and latencies of 1 ms and 50 ms.
 *
 * Goals: where capacity binds, wall <= 1.10 x the floor with <= 3 % of
 * the items sent refused; where faults come at random, wall <= 1.25 x the
 * floor; every load exact.
 */
#ifndef SIM_MATRIX_H
#define SIM_MATRIX_H

#include <stddef.h>

#include "sim_run.h"

#define SIM_GOAL_CAPACITY_RATIO 1.10
#define SIM_GOAL_CAPACITY_REFUSED 0.03
#define SIM_GOAL_FAULTS_RATIO 1.25

/* Fills out[0..max) with the matrix's scenarios (all, or those whose name
 * starts with `filter`); returns how many. */
size_t sim_matrix(sim_scenario *out, size_t max, const char *filter);

/* Why the scenario is known to miss a goal, NULL when it is not. */
const char *sim_known_miss(const sim_scenario *sc);

/* Whether a score meets its scenario's goals; why (when not) says which. */
bool sim_goal_met(const sim_scenario *sc, const sim_score *s, char *why, size_t len);

#endif
