/*
 * load_read.c - the reader threads of a load: each takes the next input,
 * reads its rows, transforms them into items and hands them over in chunks
 * to the next stage; rejected rows go to the rejects file.
 *
 * DESIGN: a reader owns its reader and transform; it shares with the other
 * threads only the queue, the rejects file and the atomics of load_run, so
 * rows flow without locks. An input split into parts is read by every free
 * thread together (load_parts.c). With counters in the mapping every row is
 * counted, also those a resumed run does not write again (counts need the
 * whole input).
 */
#include "pipeline/load/load_run.h"

#include <stdio.h>     /* fwrite */
#include <stdlib.h>    /* malloc */

#include "common/buf.h"
#include "common/hash.h"       /* el_fnv1a64: the index partition key's hash */
#include "pipeline/rows/rejects.h"
#include "pipeline/rows/transform.h"

/* Records the first fatal error and tells every stage to stop. */
void load_fail(load_run *r, el_err err, const el_diag *d)
{
    pthread_mutex_lock(&r->mu);
    if (!r->err) {
        r->err = err;
        if (d)
            r->diag = *d;
    }
    pthread_mutex_unlock(&r->mu);
    atomic_store(&r->abort, true);
    el_queue_close(r->queue);
}

/* Wakes the network stage when it sleeps waiting for chunks. Under mu,
 * because the stage may end between our exchange of `hungry` and the wakeup
 * (woken by its own timeout, it finds the queue done) and frees its
 * driver: it sets `drv` to NULL under mu first, so a reader never writes to
 * a closed eventfd. Taken only when the stage sleeps, not per chunk. */
void load_wake_network(load_run *r)
{
    if (!atomic_exchange(&r->hungry, false))
        return;
    pthread_mutex_lock(&r->mu);
    if (r->drv)
        el_ddb_driver_wakeup(r->drv);
    pthread_mutex_unlock(&r->mu);
}

bool load_stopping(const load_run *r)
{
    return atomic_load(&r->abort) || (r->o->stop && *r->o->stop);
}

/* ---- reader threads ---- */

el_err load_reject_row(load_run *r, size_t idx, load_input *in, const el_diag *why,
                         const el_row *row)
{
    atomic_fetch_add(&r->rows_rejected, 1);
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_rejects_row_from(r->o->rejects, idx, in->path, why,
                                     el_reader_schema(in->reader), row, &d);
    if (r->o->on_reject) {
        el_diag at = *why;
        at.line = row->line;
        at.offset = row->offset;
        r->o->on_reject(in->path, &at, r->o->reject_user);
    }
    if (err) {
        load_fail(r, err, &d);
        return err;
    }
    return EL_OK;
}

el_err load_rowloop(const load_input *in, el_reader *rd, el_transform *t, el_counters_tap *tap,
                    el_rowloop **out)
{
    el_rowloop_opts lo = { .path = in->path, .reader = rd, .transform = t, .src = in->src,
                           .mode = EL_ROWLOOP_ITEMS, .resume_offset = in->resume_offset,
                           .resume_done = in->resume_done,
                           .observer = el_counters_tap_observer(tap) };
    return el_rowloop_new(&lo, out);
}

void load_count_rows(load_run *r, const el_rowloop_row *out, const el_counters_tap *tap,
                     uint64_t *told)
{
    uint64_t n = out ? 1 : 0;
    if (r->o->counters_only) {
        /* reading is the whole job: a row counted before the resume point
         * was read as much as one after it */
        n = (out && out->what != EL_ROWLOOP_ITEM) + (tap->rows - *told);
        *told = tap->rows;
    }
    if (n)
        atomic_fetch_add(&r->rows_read, n);
}

/* A new chunk for the input, its buffers sized like the last one's: growing
 * them from nothing by doubling cost a realloc and a copy of everything so
 * far several times per chunk (a tenth of the reader's time in a profile).
 * Sizing is only a hint: a failed reserve leaves the chunk to grow. */
el_chunk *load_chunk_like(size_t input, size_t json_len, size_t keys_len)
{
    el_chunk *c = el_chunk_new(input);
    if (!c || json_len == 0)
        return c;
    if (el_buf_reserve(&c->json, json_len + json_len / 8) ||
        el_buf_reserve(&c->keys, keys_len + keys_len / 8))
        return c;
    c->items = malloc(EL_CHUNK_ITEMS * sizeof *c->items);
    c->cap = c->items ? EL_CHUNK_ITEMS : 0;
    return c;
}

el_err load_keep_item(el_chunk *c, size_t json_mark, size_t key_mark, size_t size,
                      const el_row *row, const el_transform *t, const el_source *src)
{
    el_err err = el_chunk_commit(c, json_mark, key_mark, size, row->line, row->offset);
    if (!err) {
        el_item *it = &c->items[c->nitems - 1];
        size_t ipk_len;
        const char *ipk = el_transform_last_index_pk(t, &ipk_len);
        it->indexed = src->index;
        it->ipk_hash = ipk ? el_fnv1a64(ipk, ipk_len) : 0;
    }
    return err;
}

/* Gives a chunk to the next stage (the network stage, or the output stage
 * of --output and --dry-run). */
el_err load_deliver_chunk(load_run *r, el_chunk *full)
{
    if (!el_queue_push(r->queue, full)) {
        el_chunk_free(full);
        return EL_EINTR;
    } else {
        load_wake_network(r);
    }
    return EL_OK;
}

/* Hands a chunk to the next stage and starts the next one. An empty chunk is handed over only as the end marker. */
static el_err hand_over(load_run *r, el_chunk **c, size_t input, bool eof)
{
    el_chunk *full = *c;
    *c = NULL;
    full->eof = eof;
    if (full->nitems == 0 && !eof) {
        *c = full;
        return EL_OK;
    }
    uint64_t seq = full->seq;
    size_t json_len = full->json.len, keys_len = full->keys.len;
    el_err err = load_deliver_chunk(r, full);
    if (err)
        return err;
    if (eof)
        return EL_OK;
    *c = load_chunk_like(input, json_len, keys_len);
    if (!*c)
        return EL_ENOMEM;
    (*c)->seq = seq + 1;
    return EL_OK;
}

/* The rows of one input into chunks, to the next stage. */
static void read_one(load_run *r, size_t idx)
{
    load_input *in = &r->inputs[idx];
    el_transform *t;
    el_diag d;
    el_diag_clear(&d);
    if (el_transform_new(r->o->mapping, in->src, &t)) {
        el_diag_set(&d, EL_ENOMEM, "out of memory");
        load_fail(r, EL_ENOMEM, &d);
        return;
    }
    if (r->plan)
        el_transform_set_plan(t, r->plan);
    el_counters_tap tap;
    el_counters_tap_init(&tap, r->counters);
    el_rowloop *loop = NULL;
    el_err err = load_rowloop(in, in->reader, t, &tap, &loop);
    el_chunk *c = err ? NULL : el_chunk_new(idx);
    if (!err && !c)
        err = EL_ENOMEM;
    el_input *raw = el_reader_input(in->reader);
    /* counts need every row: with counters an input done by an earlier run
     * is read again (the loop shows its rows to the counters only) */
    bool finished = in->resume_done && !r->counters;
    el_rowloop_row out;
    uint64_t told = 0; /* the tap's rows counted in rows_read */
    while (!err && !finished && !load_stopping(r)) {
        err = el_rowloop_next(loop, &c->json, &c->keys, &out, &d);
        if (err == EL_EOF) {
            load_count_rows(r, NULL, &tap, &told);
            err = EL_OK;
            finished = true;
            break;
        }
        if (err) {
            load_fail(r, err, &d);
            break;
        }
        load_count_rows(r, &out, &tap, &told);
        if (out.what != EL_ROWLOOP_ITEM) {
            err = load_reject_row(r, idx, in, out.why, out.row);
            continue;
        }
        if (r->o->counters_only) { /* `edgeload counters`: counted, not written */
            el_buf_truncate(&c->json, out.json_mark);
            el_buf_truncate(&c->keys, out.key_mark);
            continue;
        }
        err = load_keep_item(c, out.json_mark, out.key_mark, out.size, out.row, t, in->src);
        if (!err && load_chunk_full(c)) {
            atomic_store(&in->raw_read, el_input_raw_consumed(raw));
            err = hand_over(r, &c, idx, false);
        }
        if (err && err != EL_EINTR) {
            el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
            load_fail(r, err, &d);
        }
    }
    if (err == EL_ENOMEM && !c) {
        el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
        load_fail(r, err, &d);
    }
    atomic_store(&in->raw_read, el_input_raw_consumed(raw));
    /* the last items, then the end marker that lets the checkpoint call the
     * input done; an input stopped early gets no marker */
    if (!err && c && finished && !load_stopping(r) && c->nitems > 0) {
        err = hand_over(r, &c, idx, false);
        if (err && err != EL_EINTR) {
            el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
            load_fail(r, err, &d);
        }
    }
    if (!err && c && finished && !load_stopping(r))
        hand_over(r, &c, idx, true);
    el_chunk_free(c);
    el_rowloop_free(loop);
    el_counters_tap_free(&tap);
    el_transform_free(t);
}

void *load_reader_main(void *arg)
{
    load_run *r = arg;
    for (;;) {
        size_t idx = atomic_load(&r->next_input);
        if (idx >= r->ninputs || load_stopping(r))
            break;
        if (r->inputs[idx].split) {
            /* every free thread helps with a split input */
            load_read_parts(r, idx);
            atomic_compare_exchange_strong(&r->next_input, &idx, idx + 1);
            continue;
        }
        if (atomic_compare_exchange_strong(&r->next_input, &idx, idx + 1))
            read_one(r, idx);
    }
    if (atomic_fetch_sub(&r->readers_left, 1) == 1) {
        el_queue_close(r->queue);
        load_wake_network(r);
    }
    return NULL;
}
