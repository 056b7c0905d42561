/*
 * batcher.h - forming BatchWriteItem requests from pending items.
 *
 * The batcher holds a bounded window of items waiting to be sent and the
 * set of keys currently "held" by an item that is in flight or waiting to be
 * retried. It forms batches of at most 25 items (and at most a byte budget)
 * such that:
 *  - no two items in a batch have the same key: when two rows of one key
 *    meet, the later row wins and the earlier is reported as superseded (a
 *    duplicate);
 *  - an item whose key is held by an earlier item waits until that item is
 *    done, so the later row always lands last, whatever the concurrency;
 *  - items are spread over partition keys: a batch takes at most one item
 *    per base-table partition key and per index partition key while items
 *    of other keys are ready, and only then fills up with more of the same
 *    keys (interleaving, as DynamoDB's data-upload guidance asks). Rows of
 *    one partition key (base or index) leave in input order; an item is
 *    ready when it is the oldest pending row of both its partition keys;
 *  - forming a batch costs O(batch size), however skewed or sorted the
 *    input (per-key FIFOs and a heap of ready items, oldest first; no window scan).
 * Retries (UnprocessedItems) keep their key held and go first once due.
 *
 * Pure data structure: no threads, no I/O; the network stage owns it.
 */
#ifndef EL_BATCHER_H
#define EL_BATCHER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "dynamo/ddb_limits.h"   /* 25 items, 16 MB a request */
#include "pipeline/flow/chunk.h"

typedef struct el_batcher el_batcher;

/* Rows of paced keys the gate parks, outside the window, in windows: a
 * hot key's rows wait there for their time while the reader and the other
 * keys go on; past it the reader waits (memory stays bounded). */
#define EL_BATCHER_PARK_WINDOWS 64

/* window_max: how many fresh items the window holds (back-pressure).
 * spread: batches are spread over partition keys (interleaving, above);
 * false only for a benchmark's comparison, when batches take the window
 * in input order. NULL when out of memory. */
el_batcher *el_batcher_new(size_t window_max, bool spread);
void el_batcher_free(el_batcher *b);

/* True while the window has room for more fresh items. */
bool el_batcher_has_room(const el_batcher *b);

/* Adds a fresh item (not yet sent) at the window's tail. */
el_err el_batcher_add(el_batcher *b, el_item *it) EL_MUST_USE;

/* Puts back an item that was sent but not written; it keeps its key held
 * and becomes eligible at it->not_before. */
el_err el_batcher_retry(el_batcher *b, el_item *it) EL_MUST_USE;

/*
 * Forms a batch at time now (ms): due retries first, then window items in
 * order. Writes up to max_items item pointers to out and returns how many.
 * The batch's JSON stays within max_bytes, and its write units
 * (el_item_wcu) within max_units (<= 0: no limit) except that the first
 * item always fits that one: a capacity budget smaller than a batch of
 * large items then sends fewer items a request instead of overdrawing the
 * budget by 25 items at once.
 * Items superseded by a later row of the same key in this batch go to
 * superseded[] (*nsuperseded; room for max_superseded), already released: the
 * caller acknowledges them as duplicates, and they are the run's
 * duplicates, each row once: a row that waited for an earlier row of its
 * key in flight is written after it (it is no duplicate, though the table
 * keeps only it), and a row is a duplicate only when a later row of its key
 * replaces it before it is sent. So every row added ends exactly one way:
 * written (or refused), or here.
 */
size_t el_batcher_form(el_batcher *b, double now, size_t max_items, size_t max_bytes,
                       double max_units, el_item **out, el_item **superseded,
                       size_t max_superseded, size_t *nsuperseded);

/* The item is done (written, refused or given up): releases its key. */
void el_batcher_release(el_batcher *b, const el_item *it);

/* Items in the window, parked, plus waiting retries. */
size_t el_batcher_pending(const el_batcher *b);

/* Earliest not_before among waiting retries and earliest time a parked
 * row may go, or -1 when there are none. */
double el_batcher_next_due(const el_batcher *b);

/*
 * The gate: asked, as a batch is formed, when a fresh row may go (at most
 * once per row). A time <= now lets it go now; a later time is the row's,
 * reserved by the gate: the row is parked until then, out of its
 * partition keys' queues and out of the window, and then goes without
 * asking again. Its partition keys' later rows go on: each is asked in
 * its turn, so a paced key's rows keep their order (their times are
 * reserved in order) while a row that only shares the other partition key
 * does not wait for them, and the reader keeps filling the window. Per-key
 * pacing (pipeline/load/pacer.h) is such a gate. NULL (the default): every row
 * goes when ready. Retries are not asked: their not_before says when.
 */
typedef double (*el_batcher_gate_fn)(void *ctx, const el_item *it, double now);

/* A gate's time this far ahead or more is not reserved: the row is parked
 * until then and asked again (so that a paced key's rows take the rate it
 * has when their time nears, not the one it had when they arrived). */
#define EL_BATCHER_GATE_HORIZON_MS 1000.0
void el_batcher_set_gate(el_batcher *b, el_batcher_gate_fn fn, void *ctx);

/* For tests: how many pending rows el_batcher_form has examined so far
 * (taken, deferred or parked), a machine-independent measure of its work. */
unsigned long long el_batcher_visits(const el_batcher *b);

#endif
