/*
 * watermark.c - the per-input low watermark.
 *
 * DESIGN: a ring of spans in receive order; acknowledgements mark spans
 * done and the head advances past done spans, so the watermark is always
 * the head's start. Memory is bounded by the chunks in flight (the queue
 * and the batcher's window), not by the input's size.
 */
#include "pipeline/flow/watermark.h"
#include "common/vec.h"  /* el_grow */

#include <stdlib.h>  /* realloc, free */
#include <string.h>  /* memmove */

void el_watermark_init(el_watermark *w, uint64_t floor)
{
    memset(w, 0, sizeof *w);
    w->floor = floor;
    w->read_to = floor;
}

void el_watermark_free(el_watermark *w)
{
    free(w->e);
    w->e = NULL;
    w->cap = w->n = w->head = 0;
}

el_err el_watermark_received(el_watermark *w, uint64_t seq, uint64_t start, uint64_t end)
{
    if (w->n == 0) {
        w->head = 0;
        w->base_seq = seq;
    }
    if (w->head + w->n == w->cap) {
        if (w->head > 0) {
            memmove(w->e, w->e + w->head, w->n * sizeof *w->e);
            w->head = 0;
        } else {
            struct el_wm_span *v = el_grow(w->e, &w->cap, w->cap + 1, sizeof *v, 16);
            if (!v)
                return EL_ENOMEM;
            w->e = v;
        }
    }
    w->e[w->head + w->n++] = (struct el_wm_span){ start, false };
    if (end > w->read_to)
        w->read_to = end;
    return EL_OK;
}

void el_watermark_eof(el_watermark *w)
{
    w->eof = true;
}

void el_watermark_done(el_watermark *w, uint64_t seq)
{
    w->e[w->head + (seq - w->base_seq)].done = true;
    while (w->n > 0 && w->e[w->head].done) {
        w->head++;
        w->n--;
        w->base_seq++;
    }
}

bool el_watermark_complete(const el_watermark *w)
{
    return w->eof && w->n == 0;
}

uint64_t el_watermark_offset(const el_watermark *w)
{
    return w->n > 0 ? w->e[w->head].start : w->read_to;
}

uint64_t el_watermark_read_to(const el_watermark *w)
{
    return w->read_to;
}
