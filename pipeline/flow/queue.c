/*
 * queue.c - bounded blocking queue (after zstd's POOL: a ring, one mutex,
 * two condition variables, a shutdown flag that broadcasts to everyone).
 *
 * Fields are touched only with `mu` held.
 */
#include "pipeline/flow/queue.h"

#include <pthread.h>  /* mutex and condition variables */
#include <stdlib.h>   /* calloc, free */

struct el_queue {
    pthread_mutex_t mu;
    pthread_cond_t not_full, not_empty;
    void **ring;
    size_t cap, head, len;
    bool closed;
};

el_queue *el_queue_new(size_t capacity)
{
    el_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->cap = capacity ? capacity : 1;
    q->ring = calloc(q->cap, sizeof *q->ring);
    if (!q->ring) {
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->not_full, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    return q;
}

void el_queue_free(el_queue *q)
{
    if (!q)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    free(q->ring);
    free(q);
}

bool el_queue_push(el_queue *q, void *item)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == q->cap && !q->closed)
        pthread_cond_wait(&q->not_full, &q->mu);
    bool ok = !q->closed;
    if (ok) {
        q->ring[(q->head + q->len) % q->cap] = item;
        q->len++;
        pthread_cond_signal(&q->not_empty);
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

static void take(el_queue *q, void **item)
{
    *item = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    pthread_cond_signal(&q->not_full);
}

bool el_queue_pop(el_queue *q, void **item)
{
    pthread_mutex_lock(&q->mu);
    while (q->len == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->mu);
    bool ok = q->len > 0;
    if (ok)
        take(q, item);
    pthread_mutex_unlock(&q->mu);
    return ok;
}

bool el_queue_try_pop(el_queue *q, void **item)
{
    pthread_mutex_lock(&q->mu);
    bool ok = q->len > 0;
    if (ok)
        take(q, item);
    pthread_mutex_unlock(&q->mu);
    return ok;
}

void el_queue_close(el_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->closed = true;
    pthread_cond_broadcast(&q->not_full);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->mu);
}

bool el_queue_done(el_queue *q)
{
    pthread_mutex_lock(&q->mu);
    bool done = q->closed && q->len == 0;
    pthread_mutex_unlock(&q->mu);
    return done;
}
