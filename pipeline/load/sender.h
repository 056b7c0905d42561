/*
 * sender.h - items to DynamoDB as BatchWriteItem: a window of items formed
 * into batches (batcher.h), handed to the request driver
 * (dynamo/ddb_driver.h), and every answer judged item by item.
 *
 * The sender is the part of a load between the items and the network: it
 * decides which items go together, reads what DynamoDB did with each of
 * them, puts back what was handed back, splits a refused batch to find
 * the item DynamoDB refuses, and paces the partition keys DynamoDB
 * throttles on their own (pacer.h). It is told nothing about inputs,
 * chunks, checkpoints or rejects files: each item it was given ends in
 * exactly one call of the `done` callback (written, superseded by a later
 * row of its key, or refused), and the caller does the bookkeeping.
 *
 * It takes its driver from the caller, so the same code runs over libcurl
 * in a load and over a simulated DynamoDB in virtual time in the tests
 * (tests/sim/).
 *
 * Threads: the driver's thread only. Ownership: the sender borrows the
 * driver and the configuration's strings (both must outlive it) and the
 * items until their `done` call.
 */
#ifndef EL_SENDER_H
#define EL_SENDER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "dynamo/ddb_driver.h"
#include "pipeline/load/batcher.h"   /* EL_DDB_BATCH_ITEMS */
#include "pipeline/flow/chunk.h"     /* el_item */
#include "pipeline/flow/stats.h"     /* el_throttle_figures */

typedef struct el_sender el_sender;

/* What became of an item. */
typedef enum el_sent {
    EL_SENT_WRITTEN = 0,  /* DynamoDB acknowledged the write */
    EL_SENT_SUPERSEDED,   /* a later row of its key replaced it before it was sent */
    EL_SENT_REFUSED       /* DynamoDB refused it alone (reason says why) */
} el_sent;

/* Called once per item; reason is set for EL_SENT_REFUSED only. An error
 * stops the run (the driver's step returns it, with diag). */
typedef el_err (*el_sender_done_fn)(void *ctx, el_item *it, el_sent how, const char *reason,
                                    el_diag *diag);

typedef struct el_sender_cfg {
    const char *table;          /* the table the items go to */
    const char *pk_attr, *sk_attr; /* its key attributes (sk_attr NULL: none) */
    const char *index_pk_attr;  /* the index's partition key attribute, NULL: none */
    size_t window_items;        /* fresh items held to form batches from */
    bool no_pacing;             /* benchmarks: no per-key pacing */
    bool no_interleave;         /* benchmarks: batches take the window in input order */
    el_sender_done_fn done;
    void *ctx;
} el_sender_cfg;

/* A sender on drv (borrowed). EL_ENOMEM; *out NULL on failure. */
el_err el_sender_new(el_ddb_driver *drv, const el_sender_cfg *cfg, el_sender **out) EL_MUST_USE;

/* Frees the sender; items not done are left to the caller. NULL: no-op. */
void el_sender_free(el_sender *s);

/* True while the window has room for more fresh items. */
bool el_sender_has_room(const el_sender *s);

/* Adds a fresh item (borrowed until its done call). EL_ENOMEM. */
el_err el_sender_add(el_sender *s, el_item *it) EL_MUST_USE;

/* Forms batches and submits them while the driver could send them at
 * once. EL_ENOMEM, or an error of the done callback (diag says why). */
el_err el_sender_fill(el_sender *s, el_diag *diag) EL_MUST_USE;

/* Items given and not done (in the window, waiting, or in flight). */
size_t el_sender_pending(const el_sender *s);

/* When an item put back or paced becomes due (driver ms), -1 if none. */
double el_sender_next_due(const el_sender *s);

/* Housekeeping now and then (forgets keys no longer throttled). */
void el_sender_tick(el_sender *s, double now);

/* The run's throttling figures as of now (items sent and refused, keys
 * paced, the driver's figures by reason and its learned rate), and
 * retries: items put back to be sent again. */
void el_sender_figures(const el_sender *s, el_throttle_figures *t, uint64_t *item_retries);

/* What held the load back, in words, for the summary ("" when nothing
 * did): the cause of most refusals, or the budget when the load ran at
 * it (max_wcu, elapsed_s and consumed say whether it did). */
void el_sender_limited_by(const el_sender *s, double max_wcu, double elapsed_s,
                          double consumed, char *out, size_t len);

/* A request's items, as the driver keeps them with the request (its
 * el_ddb_op_user): for transports that look at what was sent (the
 * simulated DynamoDB of the tests). */
typedef struct el_sender_batch {
    el_item *items[EL_DDB_BATCH_ITEMS];
    size_t n;
    unsigned counted;         /* sends of it counted in items_sent so far */
} el_sender_batch;

#endif
