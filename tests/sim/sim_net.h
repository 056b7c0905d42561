/*
 * sim_net.h - the request driver's transport to the simulated DynamoDB, in
 * virtual time.
 *
 * A request sent at t arrives at the service half a latency later (the
 * service applies it then) and its answer comes back after the other half;
 * a latency is base + a uniform draw of jitter. Time moves only in wait:
 * to the next event, or by the timeout when none comes sooner. Nothing
 * sleeps; a second of load costs what its events cost.
 *
 * The requests must be the sender's (their user state an el_sender_batch):
 * the service reads the items from there instead of parsing the body.
 */
#ifndef SIM_NET_H
#define SIM_NET_H

#include <stdint.h>

#include "dynamo/ddb_driver.h"
#include "sim_service.h"

typedef struct sim_net sim_net;

/* A transport over svc (borrowed); the driver frees it (transport.free). */
el_ddb_transport sim_net_transport(sim_service *svc, double latency_ms, double jitter_ms,
                                   uint64_t seed, sim_net **out);

/* Virtual now (ms). */
double sim_net_now(const sim_net *n);

/* Requests sent, and the most in flight at once. */
uint64_t sim_net_sends(const sim_net *n);
size_t sim_net_max_inflight(const sim_net *n);

#endif
