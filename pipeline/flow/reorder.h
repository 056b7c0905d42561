/*
 * reorder.h - putting results made out of order back in order: the ordered
 * merge of parallel reading (one input parsed in numbered parts by several
 * threads, its items entering the next stage in input order).
 *
 * Results are numbered 0, 1, 2, ...; each is put once, by any thread, in
 * any order. Delivery is done by whichever thread finds the next result
 * ready and nobody delivering: it takes results in order until the next is
 * not there yet, so no thread waits for another just to deliver.
 *
 *   worker:  el_reorder_wait_room(o, seq, 100)   // before making result seq
 *            ...make the result...
 *            el_reorder_put(o, seq, result);
 *            while (el_reorder_take(o, &res)) { deliver(res); el_reorder_done(o); }
 *
 * The window bounds memory: result seq may be made only once every result
 * before seq - window is delivered. Thread-safe.
 */
#ifndef EL_REORDER_H
#define EL_REORDER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

typedef struct el_reorder el_reorder;

/* At most `window` (>= 1) results between the next to deliver and the
 * newest. NULL on allocation failure. */
el_reorder *el_reorder_new(size_t window);

/* Frees the reorder and, with free_fn, every result still in it. NULL ok. */
void el_reorder_free(el_reorder *o, void (*free_fn)(void *));

/* Waits up to timeout_ms until result seq fits in the window. false: not
 * yet (timed out) or closed; the caller checks whether to stop and calls
 * again. */
bool el_reorder_wait_room(el_reorder *o, uint64_t seq, double timeout_ms);

/* Stores result seq (non-NULL; ownership passes to the reorder until taken).
 * seq must fit in the window (el_reorder_wait_room). */
void el_reorder_put(el_reorder *o, uint64_t seq, void *result);

/* true: the caller is now the deliverer, *result is the next result in
 * order (the caller owns it) and must call el_reorder_done after delivering
 * it. false: the next result is not ready or another thread is delivering
 * (and will deliver what the caller put). */
bool el_reorder_take(el_reorder *o, void **result);

/* Claims the delivery of result seq before it is made: true when seq is
 * the next to deliver and nobody is delivering. The caller then delivers
 * seq's contents as it makes them (no waiting for the whole result, less
 * memory), never puts seq, and calls el_reorder_done when seq is complete. */
bool el_reorder_claim(el_reorder *o, uint64_t seq);

/* The result taken is delivered: the next one may go; wakes waiters. */
void el_reorder_done(el_reorder *o);

/* Results delivered so far (the next seq to deliver). */
uint64_t el_reorder_delivered(el_reorder *o);

/* Wakes every waiter; from now on el_reorder_wait_room returns false. */
void el_reorder_close(el_reorder *o);

#endif
