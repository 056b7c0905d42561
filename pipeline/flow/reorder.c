/*
 * reorder.c - the ordered merge of parallel reading.
 *
 * DESIGN: a ring of `window` slots indexed by seq mod window, one mutex and
 * one condition variable. The deliverer role is a flag, not a thread: the
 * thread that puts the next result (or finishes delivering one) delivers
 * whatever is ready in order, outside the lock, so a slow delivery (a full
 * queue downstream: back-pressure) blocks only the deliverer, and the other
 * threads keep parsing until the window is full.
 */
#include "pipeline/flow/reorder.h"

#include <pthread.h>  /* the lock and the wait for room */
#include <stdlib.h>   /* calloc, free */
#include <time.h>     /* clock_gettime for timed waits */

struct el_reorder {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* signalled when `next` moves or on close */
    void **slots;           /* slots[seq % window]: put, not yet taken */
    size_t window;
    uint64_t next;          /* next seq to deliver */
    bool delivering;        /* a thread holds result `next` */
    bool closed;
};

el_reorder *el_reorder_new(size_t window)
{
    if (window == 0)
        window = 1;
    el_reorder *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->slots = calloc(window, sizeof *o->slots);
    if (!o->slots) {
        free(o);
        return NULL;
    }
    o->window = window;
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    return o;
}

void el_reorder_free(el_reorder *o, void (*free_fn)(void *))
{
    if (!o)
        return;
    for (size_t i = 0; i < o->window; i++)
        if (o->slots[i] && free_fn)
            free_fn(o->slots[i]);
    free(o->slots);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o);
}

bool el_reorder_wait_room(el_reorder *o, uint64_t seq, double timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    long ns = until.tv_nsec + (long)(timeout_ms * 1e6);
    until.tv_sec += ns / 1000000000L;
    until.tv_nsec = ns % 1000000000L;
    pthread_mutex_lock(&o->mu);
    bool room;
    while (!(room = seq < o->next + o->window) && !o->closed)
        if (pthread_cond_timedwait(&o->cv, &o->mu, &until) != 0)
            break;
    room = room && !o->closed;
    pthread_mutex_unlock(&o->mu);
    return room;
}

void el_reorder_put(el_reorder *o, uint64_t seq, void *result)
{
    pthread_mutex_lock(&o->mu);
    o->slots[seq % o->window] = result;
    pthread_mutex_unlock(&o->mu);
}

bool el_reorder_take(el_reorder *o, void **result)
{
    pthread_mutex_lock(&o->mu);
    void **slot = &o->slots[o->next % o->window];
    bool mine = !o->delivering && *slot != NULL;
    if (mine) {
        o->delivering = true;
        *result = *slot;
        *slot = NULL;
    }
    pthread_mutex_unlock(&o->mu);
    return mine;
}

bool el_reorder_claim(el_reorder *o, uint64_t seq)
{
    pthread_mutex_lock(&o->mu);
    bool mine = !o->delivering && o->next == seq;
    if (mine)
        o->delivering = true;
    pthread_mutex_unlock(&o->mu);
    return mine;
}

void el_reorder_done(el_reorder *o)
{
    pthread_mutex_lock(&o->mu);
    o->next++;
    o->delivering = false;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

uint64_t el_reorder_delivered(el_reorder *o)
{
    pthread_mutex_lock(&o->mu);
    uint64_t n = o->next;
    pthread_mutex_unlock(&o->mu);
    return n;
}

void el_reorder_close(el_reorder *o)
{
    pthread_mutex_lock(&o->mu);
    o->closed = true;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}
