/*
 * queue.h - a bounded, blocking, closable FIFO of pointers between stages.
 *
 * Back-pressure is the point: when the network stage is slow, push blocks
 * and the readers stop reading, so memory stays flat on a 100 GB dump.
 * el_queue_close wakes every waiter; after it, push fails and pop drains
 * what is left, then reports closed. Thread-safe.
 */
#ifndef EL_QUEUE_H
#define EL_QUEUE_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/error.h"

typedef struct el_queue el_queue;

/* A queue holding at most capacity pointers. NULL on allocation failure. */
el_queue *el_queue_new(size_t capacity);
void el_queue_free(el_queue *q);

/* Blocks while full. Returns false (item not queued; caller still owns it)
 * when the queue is closed. */
bool el_queue_push(el_queue *q, void *item);

/* Blocks while empty and open. Returns false when closed and empty. */
bool el_queue_pop(el_queue *q, void **item);

/* Never blocks: false when nothing is queued right now. */
bool el_queue_try_pop(el_queue *q, void **item);

/* No more pushes; wakes all waiters. Idempotent. */
void el_queue_close(el_queue *q);

/* True once closed and drained. */
bool el_queue_done(el_queue *q);

#endif
