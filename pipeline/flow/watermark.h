/*
 * watermark.h - how far one input is acknowledged: the low watermark a
 * checkpoint records.
 *
 * Chunks of an input are received in reading order (seq 0, 1, 2, ...) and
 * acknowledged in any order. The watermark is the start offset of the
 * oldest chunk not yet acknowledged; with none outstanding, the end of the
 * last chunk received; once the input's end was seen and everything is
 * acknowledged, the input is done. Every row starting before the watermark
 * is written, refused or superseded, so a resumed run may skip it.
 *
 * Pure bookkeeping: owned by the network stage's thread.
 */
#ifndef EL_WATERMARK_H
#define EL_WATERMARK_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

typedef struct el_watermark {
    struct el_wm_span {
        uint64_t start;
        bool done;
    } *e;
    size_t head, n, cap;     /* outstanding spans are e[head .. head+n) */
    uint64_t base_seq;       /* seq of e[head] */
    uint64_t read_to;        /* end offset of the last chunk received */
    uint64_t floor;          /* where reading started (a resumed run's offset) */
    bool eof;
} el_watermark;

/* An empty tracker for an input read from offset `floor` on. */
void el_watermark_init(el_watermark *w, uint64_t floor);
void el_watermark_free(el_watermark *w);

/* A chunk of rows [start, end) arrived with number seq (the next in order). */
el_err el_watermark_received(el_watermark *w, uint64_t seq, uint64_t start,
                             uint64_t end) EL_MUST_USE;

/* The input has no more rows. */
void el_watermark_eof(el_watermark *w);

/* Every item of chunk seq is acknowledged. */
void el_watermark_done(el_watermark *w, uint64_t seq);

/* True when the input's end was seen and every chunk is acknowledged. */
bool el_watermark_complete(const el_watermark *w);

/* Every row starting before this offset is done. */
uint64_t el_watermark_offset(const el_watermark *w);

/* The end of the last chunk received (where reading has got to). */
uint64_t el_watermark_read_to(const el_watermark *w);

#endif
