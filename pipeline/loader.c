/*
 * loader.c - running the load: reader threads, the chunk queue, and the
 * network stage on a curl multi handle driven over epoll (netloop.h).
 *
 * DESIGN: every input is opened on the calling thread before any thread
 * starts, so a missing file or an unknown column stops the run with nothing
 * written (exit 2). Reader threads own their reader and transform; they
 * share only the queue, the rejects file and the stats (atomics). The
 * network stage runs on the calling thread and is the only owner of the
 * batcher, the chunks after they are queued, and every request: no locks on
 * the hot path. An item is acknowledged exactly once: written, refused (to
 * the rejects file) or superseded by a later row of its key.
 */
#include "pipeline/loader.h"

#include <errno.h>     /* ENOENT: --resume without a checkpoint yet */
#include <pthread.h>   /* reader threads */
#include <stdatomic.h> /* stats shared between readers and the network stage */
#include <stdio.h>     /* snprintf, fwrite */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strcmp, memcmp */
#include "common/clock.h"   /* el_now_ms */
#include <unistd.h>    /* sysconf */

#include "common/buf.h"
#include "dynamo/ddb_errors.h"  /* one line for a refusal */
#include "formats/chunker.h" /* parallel reading: one input cut into parts */
#include "formats/ddb_value.h"
#include "common/backoff.h"
#include "pipeline/batcher.h"
#include "pipeline/checkpoint.h"
#include "pipeline/fanin.h"
#include "pipeline/plan.h"
#include "pipeline/chunk.h"
#include "pipeline/netloop.h" /* the network stage's event loop */
#include "pipeline/counters.h" /* COUNTERS hook: backfill counts (issue 7) */
#include "pipeline/file_sink.h"
#include "pipeline/queue.h"
#include "pipeline/ratectl.h"
#include "pipeline/reorder.h" /* parallel reading: parts delivered in input order */
#include "pipeline/shard.h"
#include "pipeline/transform.h"
#include "pipeline/watermark.h"
#include "common/vec.h"  /* el_grow */

#define QUEUE_CHUNKS 32
#define WINDOW_ITEMS 8192

/* Parallel reading of one input (issue 4): every reader thread takes the
 * next part from the chunker (under scan_mu: the cutting is sequential),
 * parses and transforms it into chunks, and puts the result in the reorder;
 * results are delivered (rejects written, chunks handed over) in part order,
 * so the next stage sees exactly what one thread reading the input gives. */
typedef struct split_job {
    el_chunker *ck;           /* under scan_mu */
    pthread_mutex_t scan_mu;
    uint64_t next_part;       /* under scan_mu: seq of the next part */
    bool scan_done;           /* under mu (set under scan_mu too) */
    el_reorder *ro;
    pthread_mutex_t mu;       /* guards active, closed, scan_done */
    int active;               /* threads working on this input */
    bool closed;              /* the last thread left: nobody may join */
    uint64_t chunk_seq;       /* deliverer only: seq of the next chunk handed over */
} split_job;

typedef struct input_ctx {
    char *path;               /* resolved path */
    split_job *split;         /* read in parts by several threads, or NULL */
    el_source *src;
    el_reader *reader;
    uint64_t resume_offset;   /* rows before this were done by an earlier run */
    bool resume_done;         /* the earlier run finished this input */
    atomic_uint_fast64_t raw_read; /* input bytes consumed, for progress */
    uint64_t raw_size;        /* input size, 0 when unknown */
    el_reader_opts ropts;     /* how it was opened (to count fan-in in a second pass) */
} input_ctx;

typedef struct run {
    const el_load_opts *o;
    input_ctx *inputs;
    size_t ninputs;
    atomic_size_t next_input;   /* next input a reader thread takes */
    atomic_int readers_left;    /* the last reader to finish closes the queue */
    el_queue *queue;
    atomic_bool abort;
    pthread_mutex_t mu;         /* guards err/diag, dry-run output and `loop` */
    el_err err;
    el_diag diag;
    atomic_uint_fast64_t rows_read;
    uint64_t job_hash;          /* identifies mapping + inputs in checkpoints */
    uint64_t base_written;      /* items written by the runs this one resumes */
    double t0;                  /* start of the run (ms) */
    bool resumed_fresh;         /* --resume found no checkpoint: started over */
    el_plan *plan;              /* hot keys and their shard counts, or NULL */
    el_netloop *loop;           /* network stage's event loop while it lives (under mu) */
    atomic_bool hungry;         /* network stage sleeps waiting for chunks */
    el_counters *counters;      /* COUNTERS hook: NULL when the mapping has none */
    uint64_t split_hash;        /* --split: this worker's parts, for job_hash */
} run;

/* Records the first fatal error and tells every stage to stop. */
static void fail(run *r, el_err err, const el_diag *d)
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
 * (woken by its own timeout, it finds the queue done) and frees its event
 * loop: it sets `loop` to NULL under mu first, so a reader never writes to
 * a closed eventfd. Taken only when the stage sleeps, not per chunk. */
static void wake_network(run *r)
{
    if (!atomic_exchange(&r->hungry, false))
        return;
    pthread_mutex_lock(&r->mu);
    if (r->loop)
        el_netloop_wakeup(r->loop);
    pthread_mutex_unlock(&r->mu);
}

static bool stopping(const run *r)
{
    return atomic_load(&r->abort) || (r->o->stop && *r->o->stop);
}

/* ---- reader threads ---- */

/* el_diag_clear per row cost a 1 KB memset (1 % of a row); the message's
 * first byte and the positions are all a reader or transform looks at. */
static inline void diag_reset(el_diag *d)
{
    d->msg[0] = '\0';
    d->line = d->column = d->offset = 0;
}

static el_err reject_row(run *r, size_t idx, input_ctx *in, const el_diag *why,
                         const el_row *row)
{
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
        fail(r, err, &d);
        return err;
    }
    return EL_OK;
}

static el_err dry_print(run *r, el_chunk *c)
{
    el_buf out;
    el_buf_init(&out, (size_t)256 * 1024 * 1024);
    /* sized once: {"Item":...}\n around each item's JSON */
    el_err err = el_buf_reserve(&out, c->json.len + c->nitems * 10);
    for (size_t i = 0; !err && i < c->nitems; i++) {
        err = el_buf_puts(&out, "{\"Item\":");
        if (!err)
            err = el_buf_append(&out, el_item_json(&c->items[i]), c->items[i].json_len);
        if (!err)
            err = el_buf_puts(&out, "}\n");
    }
    if (!err) {
        pthread_mutex_lock(&r->mu);
        if (fwrite(out.data ? out.data : "", 1, out.len, r->o->dry_out) != out.len)
            err = EL_EIO;
        pthread_mutex_unlock(&r->mu);
    }
    el_buf_free(&out);
    return err;
}

/* A new chunk for the input, its buffers sized like the last one's: growing
 * them from nothing by doubling cost a realloc and a copy of everything so
 * far several times per chunk (a tenth of the reader's time in a profile).
 * Sizing is only a hint: a failed reserve leaves the chunk to grow. */
static el_chunk *chunk_like(size_t input, size_t json_len, size_t keys_len)
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

/* Gives a chunk to the next stage (or prints it in a dry run and frees it). */
static el_err deliver_chunk(run *r, el_chunk *full)
{
    if (r->o->dry_run) {
        el_err err = dry_print(r, full);
        el_chunk_free(full);
        if (err) {
            el_diag d;
            el_diag_set(&d, err, "cannot write to standard output");
            fail(r, err, &d);
            return err;
        }
    } else if (!el_queue_push(r->queue, full)) {
        el_chunk_free(full);
        return EL_EINTR;
    } else {
        wake_network(r);
    }
    return EL_OK;
}

/* Hands a chunk to the next stage (or prints it in a dry run) and starts
 * the next one. An empty chunk is handed over only as the end marker. */
static el_err hand_over(run *r, el_chunk **c, size_t input, bool eof)
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
    el_err err = deliver_chunk(r, full);
    if (err)
        return err;
    if (eof)
        return EL_OK;
    *c = chunk_like(input, json_len, keys_len);
    if (!*c)
        return EL_ENOMEM;
    (*c)->seq = seq + 1;
    return EL_OK;
}

static void read_one(run *r, size_t idx)
{
    input_ctx *in = &r->inputs[idx];
    el_transform *t;
    el_diag d;
    el_diag_clear(&d);
    if (el_transform_new(r->o->mapping, in->src, &t)) {
        el_diag_set(&d, EL_ENOMEM, "out of memory");
        fail(r, EL_ENOMEM, &d);
        return;
    }
    if (r->plan)
        el_transform_set_plan(t, r->plan, el_plan_find_source(r->plan, in->src->name));
    el_chunk *c = el_chunk_new(idx);
    el_row row;
    el_err err = c ? EL_OK : EL_ENOMEM;
    el_input *raw = el_reader_input(in->reader);
    /* COUNTERS hook: counts need every row, so with counters an input done
     * by an earlier run is read again, and rows before the resume offset
     * (or every row, for `edgeload counters`) are counted but not written */
    el_buf cscratch;
    el_buf_init(&cscratch, 1u << 20);
    bool finished = in->resume_done && !r->counters;
    while (!err && !finished && !stopping(r)) {
        diag_reset(&d);
        err = el_reader_next(in->reader, &row, &d);
        if (err == EL_EOF) {
            err = EL_OK;
            finished = true;
            break;
        }
        if (err == EL_EREJECT) {
            if (row.offset < in->resume_offset || in->resume_done) {
                err = EL_OK; /* done before the checkpoint */
                continue;
            }
            atomic_fetch_add(&r->rows_read, 1);
            err = reject_row(r, idx, in, &d, &row);
            continue;
        }
        if (err) {
            el_diag wrapped;
            el_diag_clear(&wrapped);
            if (d.line)
                el_diag_at(&wrapped, err, d.line, d.column, d.offset, "%s:%llu: %s", in->path,
                           (unsigned long long)d.line, d.msg);
            else
                el_diag_set(&wrapped, err, "%s: %s", in->path, d.msg);
            fail(r, err, &wrapped);
            break;
        }
        /* COUNTERS hook: skip = written before the checkpoint (or not ours to write) */
        bool skip = row.offset < in->resume_offset || in->resume_done || r->o->counters_only;
        if (skip && !r->counters)
            continue; /* written before the checkpoint */
        if (!skip || r->o->counters_only)
            atomic_fetch_add(&r->rows_read, 1);
        size_t jm = c->json.len, km = c->keys.len, size;
        err = el_transform_row(t, &row, &c->json, &c->keys, &size, &d);
        if (err == EL_EREJECT) {
            /* rejected before the checkpoint: in the rejects file already */
            bool before = row.offset < in->resume_offset || in->resume_done;
            err = before ? EL_OK : reject_row(r, idx, in, &d, &row);
            continue;
        }
        if (!err && r->counters) { /* COUNTERS hook: count the row's edge */
            err = el_counters_add_row(r->counters, in->src, &row, c->keys.data + km,
                                      c->keys.len - km, &cscratch, &d);
            if (err) {
                fail(r, err, &d);
                break;
            }
        }
        if (skip) {
            el_buf_truncate(&c->json, jm);
            el_buf_truncate(&c->keys, km);
            continue;
        }
        if (!err) {
            err = el_chunk_commit(c, jm, km, size, row.line, row.offset);
            if (!err) {
                el_item *it = &c->items[c->nitems - 1];
                size_t ipk_len;
                const char *ipk = el_transform_last_index_pk(t, &ipk_len);
                it->indexed = in->src->index;
                it->ipk_hash = ipk ? el_fnv1a64(ipk, ipk_len) : 0;
            }
        }
        if (!err && (c->nitems >= EL_CHUNK_ITEMS || c->json.len > 4u * 1024 * 1024)) {
            atomic_store(&in->raw_read, el_input_raw_consumed(raw));
            err = hand_over(r, &c, idx, false);
        }
        if (err && err != EL_EINTR) {
            el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
            fail(r, err, &d);
        }
    }
    atomic_store(&in->raw_read, el_input_raw_consumed(raw));
    /* the last items, then the end marker that lets the checkpoint call the
     * input done; an input stopped early gets no marker */
    if (!err && c && finished && !stopping(r) && c->nitems > 0) {
        err = hand_over(r, &c, idx, false);
        if (err && err != EL_EINTR) {
            el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
            fail(r, err, &d);
        }
    }
    if (!err && c && finished && !stopping(r))
        hand_over(r, &c, idx, true);
    el_chunk_free(c);
    el_buf_free(&cscratch); /* COUNTERS hook */
    el_transform_free(t);
}

/* ---- parallel reading: one input in parts ---- */

/* A rejected row held until its part is delivered, so that the rejects file
 * gets rows in input order whatever thread parsed them. */
typedef struct held_reject {
    struct held_reject *next;
    el_diag why;
    el_row row;               /* values point into `bytes` */
    el_value *values;
    char *bytes;
} held_reject;

/* What one part became: its chunks and rejects in input order, and a fatal
 * error met after them (diag names the input). */
typedef struct part_result {
    el_chunk **chunks;
    size_t nchunks, cap;
    held_reject *rej, **rej_tail;
    el_err err;
    el_diag diag;
} part_result;

static void part_result_free(void *p)
{
    part_result *res = p;
    if (!res)
        return;
    for (size_t i = 0; i < res->nchunks; i++)
        el_chunk_free(res->chunks[i]);
    free(res->chunks);
    while (res->rej) {
        held_reject *h = res->rej;
        res->rej = h->next;
        free(h->values);
        free(h->bytes);
        free(h);
    }
    free(res);
}

static el_err hold_reject(part_result *res, const el_diag *why, const el_row *row)
{
    held_reject *h = calloc(1, sizeof *h);
    size_t total = 1;
    for (size_t i = 0; i < row->ncols; i++)
        total += row->values[i].len + 1;
    if (h) {
        h->values = calloc(row->ncols ? row->ncols : 1, sizeof *h->values);
        h->bytes = malloc(total);
    }
    if (!h || !h->values || !h->bytes) {
        if (h) {
            free(h->values);
            free(h->bytes);
        }
        free(h);
        return EL_ENOMEM;
    }
    char *p = h->bytes;
    for (size_t i = 0; i < row->ncols; i++) {
        const el_value *v = &row->values[i];
        if (v->len)
            memcpy(p, v->data, v->len);
        p[v->len] = '\0';
        h->values[i] = (el_value){ p, v->len, v->is_null };
        p += v->len + 1;
    }
    h->why = *why;
    h->row = *row;
    h->row.values = h->values;
    *res->rej_tail = h;
    res->rej_tail = &h->next;
    return EL_OK;
}

static el_err keep_chunk(part_result *res, el_chunk *c)
{
    el_chunk **v = el_grow(res->chunks, &res->cap, res->nchunks + 1, sizeof *v, 16);
    if (!v)
        return EL_ENOMEM;
    res->chunks = v;
    res->chunks[res->nchunks++] = c;
    return EL_OK;
}

/* A reader on part p; a tail part reads the input again from its offset. */
static el_err open_part(const input_ctx *in, el_chunker_part *p, el_reader **rd, el_diag *d)
{
    el_reader_part part = { .data = p->data, .len = p->len, .line = p->line,
                            .offset = p->offset, .schema = el_reader_schema(in->reader),
                            .skip_first = p->seq == 0 && !in->ropts.columns };
    p->data = NULL; /* the reader's now */
    if (p->tail) {
        el_err err = el_input_open(in->path, &part.in, d);
        unsigned char *skip = err ? NULL : malloc(64 * 1024);
        if (!err && !skip)
            err = el_diag_set(d, EL_ENOMEM, "out of memory");
        for (uint64_t left = p->offset; !err && left > 0;) {
            size_t got, n = left < 64 * 1024 ? (size_t)left : 64 * 1024;
            err = el_input_read(part.in, skip, n, &got, d);
            if (!err && got == 0)
                err = el_diag_set(d, EL_EIO, "%s: shorter than when it was read", in->path);
            left -= got;
        }
        free(skip);
        if (err) {
            el_input_free(part.in);
            return err;
        }
    }
    el_reader_opts ro = in->ropts;
    ro.format = el_reader_format(in->reader);
    return el_reader_open_part(&part, &ro, rd, d);
}

/* Parses and transforms one part into res, exactly as read_one treats the
 * same rows, except that rejects are held and chunks kept, not handed over. */
static el_err flush_result(run *r, size_t idx, split_job *j, part_result *res);

/* Parses and transforms one part into res. Once every part before it is
 * delivered, this thread claims the delivery of its own part and hands
 * chunks over as they fill (*head), instead of holding the whole part. */
static void parse_part(run *r, size_t idx, el_transform *t, el_buf *cscratch,
                       el_chunker_part *p, part_result *res, bool *head)
{
    split_job *j = r->inputs[idx].split;
    *head = el_reorder_claim(j->ro, p->seq);
    input_ctx *in = &r->inputs[idx];
    el_diag d;
    el_diag_clear(&d);
    el_reader *rd = NULL;
    el_err err = open_part(in, p, &rd, &d);
    el_chunk *c = err ? NULL : el_chunk_new(idx);
    if (!err && !c)
        err = el_diag_set(&d, EL_ENOMEM, "out of memory");
    el_row row;
    while (!err && !stopping(r)) {
        diag_reset(&d);
        err = el_reader_next(rd, &row, &d);
        if (err == EL_EOF) {
            err = EL_OK;
            break;
        }
        bool before = row.offset < in->resume_offset || in->resume_done;
        if (err == EL_EREJECT) {
            err = EL_OK;
            if (before)
                continue; /* done before the checkpoint */
            atomic_fetch_add(&r->rows_read, 1);
            if (hold_reject(res, &d, &row))
                err = el_diag_set(&d, EL_ENOMEM, "out of memory");
            continue;
        }
        if (err)
            break;
        /* COUNTERS hook: skip = written before the checkpoint (or not ours to write) */
        bool skip = before || r->o->counters_only;
        if (skip && !r->counters)
            continue;
        if (!skip || r->o->counters_only)
            atomic_fetch_add(&r->rows_read, 1);
        size_t jm = c->json.len, km = c->keys.len, size;
        err = el_transform_row(t, &row, &c->json, &c->keys, &size, &d);
        if (err == EL_EREJECT) {
            err = EL_OK;
            if (!before && hold_reject(res, &d, &row))
                err = el_diag_set(&d, EL_ENOMEM, "out of memory");
            continue;
        }
        if (!err && r->counters) /* COUNTERS hook: count the row's edge */
            err = el_counters_add_row(r->counters, in->src, &row, c->keys.data + km,
                                      c->keys.len - km, cscratch, &d);
        if (err)
            break;
        if (skip) {
            el_buf_truncate(&c->json, jm);
            el_buf_truncate(&c->keys, km);
            continue;
        }
        err = el_chunk_commit(c, jm, km, size, row.line, row.offset);
        if (!err) {
            el_item *it = &c->items[c->nitems - 1];
            size_t ipk_len;
            const char *ipk = el_transform_last_index_pk(t, &ipk_len);
            it->indexed = in->src->index;
            it->ipk_hash = ipk ? el_fnv1a64(ipk, ipk_len) : 0;
        }
        if (!err && (c->nitems >= EL_CHUNK_ITEMS || c->json.len > 4u * 1024 * 1024)) {
            err = keep_chunk(res, c);
            c = err ? c : chunk_like(idx, c->json.len, c->keys.len);
            if (!c)
                err = EL_ENOMEM;
            if (!err && !*head)
                *head = el_reorder_claim(j->ro, p->seq);
            if (!err && *head && flush_result(r, idx, j, res))
                break; /* stopped: the next stage is gone, or fail() said why */
        }
        if (err)
            el_diag_set(&d, err, "%s", el_strerror(err));
    }
    if (!err && c && c->nitems > 0) {
        err = keep_chunk(res, c);
        if (!err)
            c = NULL;
    }
    el_chunk_free(c);
    el_reader_free(rd);
    if (err) {
        /* as read_one words it */
        res->err = err;
        el_diag_clear(&res->diag);
        if (d.line)
            el_diag_at(&res->diag, err, d.line, d.column, d.offset, "%s:%llu: %s", in->path,
                       (unsigned long long)d.line, d.msg);
        else
            el_diag_set(&res->diag, err, "%s: %s", in->path, d.msg);
    }
}

/* Delivers what res holds so far (rejects to the rejects file, chunks to
 * the next stage) and empties it; for the thread delivering res's part. */
static el_err flush_result(run *r, size_t idx, split_job *j, part_result *res)
{
    input_ctx *in = &r->inputs[idx];
    el_err err = EL_OK;
    while (res->rej) {
        held_reject *h = res->rej;
        if (!err && !stopping(r))
            err = reject_row(r, idx, in, &h->why, &h->row);
        res->rej = h->next;
        free(h->values);
        free(h->bytes);
        free(h);
    }
    res->rej_tail = &res->rej;
    for (size_t i = 0; i < res->nchunks; i++) {
        el_chunk *c = res->chunks[i];
        res->chunks[i] = NULL;
        if (err || stopping(r)) {
            el_chunk_free(c);
            continue;
        }
        c->seq = j->chunk_seq++;
        err = deliver_chunk(r, c);
    }
    res->nchunks = 0;
    return err;
}

/* Delivers the part's last contents and its error, and lets the next part go. */
static void finish_result(run *r, size_t idx, split_job *j, part_result *res)
{
    el_err err = flush_result(r, idx, j, res);
    if (!err && res->err && !stopping(r))
        fail(r, res->err, &res->diag);
    part_result_free(res);
    el_reorder_done(j->ro);
}

/* Delivers the results that are next in order, if nobody else is. */
static void deliver_ready(run *r, size_t idx, split_job *j)
{
    void *p;
    while (el_reorder_take(j->ro, &p))
        finish_result(r, idx, j, p);
}

/* One reader thread's share of a split input: take the next part, parse
 * it, put it in order, deliver what is ready; until the input is cut to
 * its end. The last thread to leave sends the input's end marker. */
static void read_parts(run *r, size_t idx)
{
    input_ctx *in = &r->inputs[idx];
    split_job *j = in->split;
    pthread_mutex_lock(&j->mu);
    bool join = !j->closed && !j->scan_done;
    if (join)
        j->active++;
    pthread_mutex_unlock(&j->mu);
    if (!join)
        return;
    el_diag d;
    el_diag_clear(&d);
    el_buf cscratch; /* COUNTERS hook */
    el_buf_init(&cscratch, 1u << 20);
    el_transform *t = NULL;
    if (el_transform_new(r->o->mapping, in->src, &t)) {
        el_diag_set(&d, EL_ENOMEM, "out of memory");
        fail(r, EL_ENOMEM, &d);
        t = NULL;
    } else if (r->plan) {
        el_transform_set_plan(t, r->plan, el_plan_find_source(r->plan, in->src->name));
    }
    while (t && !stopping(r)) {
        pthread_mutex_lock(&j->scan_mu);
        if (j->scan_done) {
            pthread_mutex_unlock(&j->scan_mu);
            break;
        }
        bool room = false;
        while (!stopping(r) && !(room = el_reorder_wait_room(j->ro, j->next_part, 100)))
            ;
        part_result *res = room ? calloc(1, sizeof *res) : NULL;
        if (!res) {
            pthread_mutex_unlock(&j->scan_mu);
            if (room) {
                el_diag_set(&d, EL_ENOMEM, "out of memory");
                fail(r, EL_ENOMEM, &d);
            }
            break;
        }
        res->rej_tail = &res->rej;
        bool head = false;
        el_chunker_part p;
        el_err err = el_chunker_next(j->ck, &p, &d);
        uint64_t seq = j->next_part;
        bool last = err != EL_OK || p.tail;
        if (err != EL_EOF)
            j->next_part++;
        if (last) {
            pthread_mutex_lock(&j->mu);
            j->scan_done = true;
            pthread_mutex_unlock(&j->mu);
        }
        atomic_store(&in->raw_read, el_input_raw_consumed(el_chunker_input(j->ck)));
        pthread_mutex_unlock(&j->scan_mu);
        if (err == EL_EOF) {
            free(res);
            break;
        }
        if (err) {
            /* delivered in order: the rows before it go first */
            res->err = err;
            el_diag_set(&res->diag, err, "%s: %s", in->path, d.msg);
        } else if (!p.tail && !r->counters && p.offset + p.len <= in->resume_offset) {
            free(p.data); /* every row of it was done before the checkpoint */
        } else {
            parse_part(r, idx, t, &cscratch, &p, res, &head);
        }
        if (head || el_reorder_claim(j->ro, seq))
            finish_result(r, idx, j, res);
        else
            el_reorder_put(j->ro, seq, res);
        deliver_ready(r, idx, j);
    }
    el_buf_free(&cscratch);
    el_transform_free(t);
    pthread_mutex_lock(&j->mu);
    bool last = --j->active == 0 && j->scan_done;
    if (last)
        j->closed = true;
    pthread_mutex_unlock(&j->mu);
    /* every part is delivered: the end marker that lets the checkpoint call
     * the input done (an input stopped early gets none) */
    if (last && !stopping(r)) {
        el_chunk *end = el_chunk_new(idx);
        if (!end) {
            el_diag_set(&d, EL_ENOMEM, "out of memory");
            fail(r, EL_ENOMEM, &d);
        } else {
            end->eof = true;
            (void)deliver_chunk(r, end);
        }
    }
}

static void *reader_main(void *arg)
{
    run *r = arg;
    for (;;) {
        size_t idx = atomic_load(&r->next_input);
        if (idx >= r->ninputs || stopping(r))
            break;
        if (r->inputs[idx].split) {
            /* every free thread helps with a split input */
            read_parts(r, idx);
            atomic_compare_exchange_strong(&r->next_input, &idx, idx + 1);
            continue;
        }
        if (atomic_compare_exchange_strong(&r->next_input, &idx, idx + 1))
            read_one(r, idx);
    }
    if (atomic_fetch_sub(&r->readers_left, 1) == 1) {
        el_queue_close(r->queue);
        wake_network(r);
    }
    return NULL;
}

/* ---- the network stage ---- */

typedef struct sendreq {
    el_ddb_req *req;
    el_item *items[EL_DDB_BATCH_ITEMS];
    size_t n;
    unsigned attempt;
    double wcu_estimate;     /* taken from the --max-wcu bucket when sent */
    double not_before;       /* resend time while waiting */
    size_t slot;             /* index in net.out while on the multi handle */
} sendreq;

typedef struct net {
    run *r;
    el_batcher *b;
    el_netloop *loop;
    CURLM *multi;            /* the loop's */
    size_t inflight;
    sendreq **out;           /* requests on the multi handle (inflight of them) */
    size_t out_cap;
    el_chunk **chunks;       /* chunks taken from the queue, not yet freed */
    size_t nchunks, chunks_cap;
    /* Requests to resend after a backoff: a min-heap by not_before. Under
     * throttling thousands wait, and a list walked twice per wake-up (the
     * due ones, the next due time) had up to 30 % of a throttled load's
     * perf samples.
     * It has room for every live request, so queueing one never fails. */
    sendreq **waiting;
    size_t nwaiting;
    size_t nreqs, reqs_cap;  /* requests alive; the capacity of waiting */
    el_watermark *tr;        /* one per input, plus the shard directory's */
    el_load_stats *st;
    el_rate rate;
    uint64_t rng;
    double failing_since;    /* start of continuous non-throttle failure, 0 = none */
    double next_checkpoint, next_progress;
    el_checkpoint *cp;       /* reused for every write */
    el_buf body;
    /* A batch formed while the capacity budget could not pay for it: it
     * goes first once the budget allows (its items stay out of the
     * batcher, their keys held). */
    el_item *held[EL_DDB_BATCH_ITEMS];
    size_t nheld;
    double held_wcu;
} net;

static void ack(net *n, el_item *it, bool release)
{
    if (release)
        el_batcher_release(n->b, it);
    el_chunk *c = it->chunk;
    if (--c->unacked == 0) {
        /* every item acknowledged: the arena goes in one call */
        el_watermark_done(&n->tr[c->input], c->seq);
        el_chunk *last = n->chunks[--n->nchunks];
        n->chunks[c->slot] = last;
        last->slot = c->slot;
        el_chunk_free(c);
    }
}

static el_err write_checkpoint(net *n, el_diag *diag)
{
    run *r = n->r;
    el_checkpoint *cp = n->cp;
    uint64_t high[r->ninputs ? r->ninputs : 1];
    bool has[r->ninputs ? r->ninputs : 1];
    el_rejects_snapshot(r->o->rejects, &cp->rejects_bytes, &cp->rejected, high, has,
                        r->ninputs);
    for (size_t i = 0; i < r->ninputs; i++) {
        const el_watermark *w = &n->tr[i];
        el_checkpoint_input *in = &cp->inputs[i];
        in->done = r->inputs[i].resume_done || el_watermark_complete(w);
        in->offset = in->done ? 0 /* not used */ : el_watermark_offset(w);
        in->rejects_high = high[i];
        in->has_rejects = has[i];
    }
    cp->items_written = r->base_written + n->st->items_written;
    return el_checkpoint_write(r->o->checkpoint_path, cp, diag);
}

/* A progress snapshot of the run, from the stage that owns st. */
static void report_run(run *r, const el_load_stats *st, int window, bool final)
{
    const el_load_opts *o = r->o;
    if (!o->progress)
        return;
    el_progress p = { .st = *st, .window = window, .final = final };
    p.st.rows_read = atomic_load(&r->rows_read);
    p.st.rejected = el_rejects_count(r->o->rejects);
    p.st.elapsed_s = (el_now_ms() - r->t0) / 1000.0;
    for (size_t i = 0; i < r->ninputs; i++) {
        p.bytes_done += atomic_load(&r->inputs[i].raw_read);
        p.bytes_total += r->inputs[i].raw_size;
    }
    o->progress(&p, o->progress_user);
}

static void report(net *n, bool final)
{
    report_run(n->r, n->st, el_rate_window(&n->rate), final);
}

/* Puts a request on the multi handle and remembers it. */
static el_err start(net *n, sendreq *s)
{
    sendreq **v = el_grow(n->out, &n->out_cap, n->inflight + 1, sizeof *v, 64);
    if (!v)
        return EL_ENOMEM;
    n->out = v;
    el_ddb_req_reset(s->req);
    if (curl_multi_add_handle(n->multi, el_ddb_req_handle(s->req)) != CURLM_OK)
        return EL_ENET;
    s->slot = n->inflight;
    n->out[n->inflight++] = s;
    n->st->requests++;
    return EL_OK;
}

/* Takes a finished request off the multi handle. */
static void stop_req(net *n, sendreq *s)
{
    curl_multi_remove_handle(n->multi, el_ddb_req_handle(s->req));
    sendreq *last = n->out[--n->inflight];
    n->out[s->slot] = last;
    last->slot = s->slot;
}

static el_err build_body(net *n, el_item **items, size_t count)
{
    el_buf *b = &n->body;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"RequestItems\":{");
    if (!err)
        err = el_json_put_string(b, n->r->o->mapping->table, strlen(n->r->o->mapping->table));
    if (!err)
        err = el_buf_puts(b, ":[");
    for (size_t i = 0; !err && i < count; i++) {
        err = el_buf_puts(b, i ? ",{\"PutRequest\":{\"Item\":" : "{\"PutRequest\":{\"Item\":");
        if (!err)
            err = el_buf_append(b, el_item_json(items[i]), items[i]->json_len);
        if (!err)
            err = el_buf_puts(b, "}}");
    }
    if (!err)
        err = el_buf_puts(b, "]},\"ReturnConsumedCapacity\":\"INDEXES\"}");
    return err;
}

static void free_req(net *n, sendreq *s);

static el_err send_items(net *n, el_item **items, size_t count, unsigned attempt,
                         double wcu_estimate)
{
    sendreq **v = el_grow(n->waiting, &n->reqs_cap, n->nreqs + 1, sizeof *v, 64);
    if (!v)
        return EL_ENOMEM;
    n->waiting = v;
    sendreq *s = calloc(1, sizeof *s);
    if (!s)
        return EL_ENOMEM;
    memcpy(s->items, items, count * sizeof *items);
    s->n = count;
    s->attempt = attempt;
    s->wcu_estimate = wcu_estimate;
    el_err err = build_body(n, items, count);
    if (!err)
        err = el_ddb_req_new(n->r->o->ddb, "BatchWriteItem", &n->body, s, &s->req);
    if (err) {
        free(s);
        return err;
    }
    n->nreqs++;
    err = start(n, s);
    if (err)
        free_req(n, s);
    return err;
}

static void free_req(net *n, sendreq *s)
{
    n->nreqs--;
    el_ddb_req_free(s->req);
    free(s);
}

/* Queues s for a resend at s->not_before (room is kept by send_items). */
static void wait_push(net *n, sendreq *s)
{
    size_t i = n->nwaiting++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (n->waiting[up]->not_before <= s->not_before)
            break;
        n->waiting[i] = n->waiting[up];
        i = up;
    }
    n->waiting[i] = s;
}

/* Takes the waiting request due first (there is one). */
static sendreq *wait_pop(net *n)
{
    sendreq *top = n->waiting[0];
    sendreq *last = n->waiting[--n->nwaiting];
    size_t i = 0, len = n->nwaiting;
    if (len == 0)
        return top;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && n->waiting[c + 1]->not_before < n->waiting[c]->not_before)
            c++;
        if (last->not_before <= n->waiting[c]->not_before)
            break;
        n->waiting[i] = n->waiting[c];
        i = c;
    }
    n->waiting[i] = last;
    return top;
}

static bool key_matches(const el_item *it, const el_ddb_key *k)
{
    const char *key = el_item_key(it);
    size_t pklen = strlen(key); /* PK ends at the NUL */
    if (strlen(k->pk) != pklen || memcmp(key, k->pk, pklen) != 0)
        return false;
    const char *sk = key + pklen + 1;
    size_t sklen = it->key_len - pklen - 1;
    return k->sk && strlen(k->sk) == sklen && memcmp(sk, k->sk, sklen) == 0;
}

static void schedule_resend(net *n, sendreq *s, double now)
{
    s->attempt++;
    s->not_before = now + el_backoff_ms(s->attempt, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS,
                                        el_rand_unit(&n->rng));
    wait_push(n, s);
}

static el_err on_success(net *n, sendreq *s, double now)
{
    size_t len;
    const char *resp = el_ddb_req_response(s->req, &len);
    el_ddb_batch_result br;
    el_diag d;
    el_diag_clear(&d);
    const el_mapping *m = n->r->o->mapping;
    el_err err = el_ddb_parse_batch_write(resp, len, m->pk_attr, m->sk_attr, &br, &d);
    if (err) {
        /* An answer we cannot read is treated like a lost reply: resend. */
        n->st->retries++;
        schedule_resend(n, s, now);
        return EL_OK;
    }
    n->st->wcu_consumed += br.consumed_wcu;
    el_rate_settle(&n->rate, s->wcu_estimate, br.consumed_wcu);
    if (br.nunprocessed > 0)
        el_rate_on_throttle(&n->rate, now); /* unprocessed items are throttling too */
    else
        el_rate_on_success(&n->rate);
    for (size_t i = 0; i < s->n; i++) {
        el_item *it = s->items[i];
        bool unprocessed = false;
        for (size_t k = 0; k < br.nunprocessed && !unprocessed; k++)
            unprocessed = key_matches(it, &br.unprocessed[k]);
        if (unprocessed) {
            it->attempts++;
            it->not_before = now + el_backoff_ms(it->attempts, EL_BACKOFF_BASE_MS,
                                                 EL_BACKOFF_CAP_MS, el_rand_unit(&n->rng));
            n->st->retries++;
            err = el_batcher_retry(n->b, it);
            if (err)
                break;
        } else {
            n->st->items_written++;
            ack(n, it, true);
        }
    }
    el_ddb_batch_result_clear(&br);
    free_req(n, s);
    return err;
}

/* A refused batch: split it to find the item DynamoDB refuses. */
static el_err on_rejected(net *n, sendreq *s, const el_ddb_result *res)
{
    el_err err = EL_OK;
    if (s->n > 1) {
        size_t half = s->n / 2;
        err = send_items(n, s->items, half, 0, 0);
        if (!err)
            err = send_items(n, s->items + half, s->n - half, 0, 0);
    } else {
        el_item *it = s->items[0];
        el_diag d;
        el_diag_clear(&d);
        char reason[700];
        snprintf(reason, sizeof reason, "DynamoDB refused the item: %s: %s", res->error_type,
                 res->message);
        size_t idx = it->chunk->input;
        const char *path = idx < n->r->ninputs ? n->r->inputs[idx].path : "<shard directory>";
        err = el_rejects_item_from(n->r->o->rejects, idx, it->offset, path, it->line, reason,
                                   el_item_json(it), it->json_len, &d);
        if (n->r->o->on_reject) {
            el_diag at;
            el_diag_at(&at, EL_EREJECT, it->line, 0, it->offset, "%s", reason);
            n->r->o->on_reject(path, &at, n->r->o->reject_user);
        }
        ack(n, it, true);
        if (err) {
            free_req(n, s);
            fail(n->r, err, &d);
            return err;
        }
    }
    free_req(n, s);
    return err;
}

static el_err on_done(net *n, sendreq *s, CURLcode code)
{
    el_ddb_result res;
    double now = el_now_ms();
    el_ddb_req_finish(s->req, code, &res);
    switch (res.outcome) {
    case EL_DDB_SUCCESS:
        n->failing_since = 0;
        return on_success(n, s, now);
    case EL_DDB_THROTTLED:
        n->st->throttled++;
        n->st->retries++;
        el_rate_on_throttle(&n->rate, now);
        schedule_resend(n, s, now);
        return EL_OK;
    case EL_DDB_TRANSIENT:
        if (n->failing_since == 0)
            n->failing_since = now;
        if (now - n->failing_since > n->r->o->max_retry_time_s * 1000.0) {
            el_diag d;
            el_diag_set(&d, EL_ENET, "giving up after %.0f s of continuous failures; last: %s%s%s",
                        n->r->o->max_retry_time_s, res.error_type,
                        res.error_type[0] ? ": " : "", res.message);
            free_req(n, s); /* its items stay unacknowledged: nothing is claimed written */
            fail(n->r, EL_ENET, &d);
            return EL_ENET;
        }
        n->st->retries++;
        schedule_resend(n, s, now);
        return EL_OK;
    case EL_DDB_REJECTED:
        n->failing_since = 0;
        return on_rejected(n, s, &res);
    case EL_DDB_FATAL:
        break;
    }
    el_diag d; /* one line to act on: expired token, wrong region... (ddb_errors.h) */
    (void)el_ddb_fail(&d, &res, el_ddb_config(n->r->o->ddb), "BatchWriteItem");
    free_req(n, s);
    fail(n->r, EL_ESERVICE, &d);
    return EL_ESERVICE;
}

/* Takes one chunk from the queue into the window (an end marker only
 * updates its input's tracker). */
static el_err take_chunk(net *n, el_chunk *c)
{
    el_watermark *w = &n->tr[c->input];
    el_err err = EL_OK;
    if (c->eof)
        el_watermark_eof(w);
    else
        err = el_watermark_received(w, c->seq, c->start_offset, c->end_offset);
    if (err || c->eof) {
        el_chunk_free(c);
        return err;
    }
    el_chunk **v = el_grow(n->chunks, &n->chunks_cap, n->nchunks + 1, sizeof *v, 64);
    if (!v) {
        el_chunk_free(c);
        return EL_ENOMEM;
    }
    n->chunks = v;
    c->slot = n->nchunks;
    n->chunks[n->nchunks++] = c;
    for (size_t i = 0; i < c->nitems; i++) {
        err = el_batcher_add(n->b, &c->items[i]);
        if (err)
            return err;
    }
    return EL_OK;
}

/* Takes chunks from the queue while the window has room. block: wait for
 * one when there is nothing else to do. */
static el_err pull(net *n, bool block)
{
    void *p;
    while (el_batcher_has_room(n->b)) {
        bool got = block ? el_queue_pop(n->r->queue, &p) : el_queue_try_pop(n->r->queue, &p);
        if (!got)
            break;
        block = false;
        el_err err = take_chunk(n, p);
        if (err)
            return err;
    }
    return EL_OK;
}

/* Forms and sends batches while the window and the capacity budget allow.
 * *wait_ms gets how long the budget wants us to wait (0 = not limited).
 * With a budget, a batch is formed first and then paid for: its cost is
 * known only once its items are chosen, and a batch is never sent on
 * credit it does not have (a batch larger than the whole bucket waits for
 * a full bucket; el_batcher_form keeps batches within one bucket unless a
 * single item is larger). */
static el_err fill_window(net *n, double now, double *wait_ms)
{
    el_item *sup[EL_DDB_BATCH_ITEMS];
    bool budget = n->rate.wcu_per_s > 0;
    *wait_ms = 0;
    while ((int)n->inflight < el_rate_window(&n->rate)) {
        if (n->nheld == 0) {
            size_t nsup, blocked;
            size_t cnt = el_batcher_form(n->b, now, EL_DDB_BATCH_ITEMS,
                                         EL_DDB_MAX_REQUEST_BYTES,
                                         budget ? n->rate.capacity : 0, n->held, sup, &nsup,
                                         &blocked);
            n->st->duplicates += blocked;
            for (size_t i = 0; i < nsup; i++)
                ack(n, sup[i], false);
            if (cnt == 0)
                return EL_OK;
            n->nheld = cnt;
            n->held_wcu = 0;
            for (size_t i = 0; i < cnt; i++)
                n->held_wcu += el_item_wcu(n->held[i]);
        }
        if (budget) {
            double w = el_rate_wait_ms(&n->rate, n->held_wcu, now);
            if (w > 0) {
                *wait_ms = w;
                return EL_OK;
            }
            (void)el_rate_take(&n->rate, n->held_wcu, now);
        }
        unsigned attempt = 0;
        for (size_t i = 0; i < n->nheld; i++)
            if (n->held[i]->attempts > attempt)
                attempt = n->held[i]->attempts;
        size_t cnt = n->nheld;
        n->nheld = 0;
        el_err err = send_items(n, n->held, cnt, attempt, n->held_wcu);
        if (err)
            return err;
    }
    return EL_OK;
}

#define DRAIN_MS 30000.0

static el_err network_stage(run *r, el_load_stats *st, el_diag *diag)
{
    net n = { .r = r, .st = st, .rng = (uint64_t)el_now_ms() ^ 0x5eed };
    el_buf_init(&n.body, EL_DDB_MAX_REQUEST_BYTES);
    n.b = el_batcher_new(WINDOW_ITEMS);
    el_err lerr = el_netloop_new(&n.loop);
    n.multi = n.loop ? el_netloop_multi(n.loop) : NULL;
    pthread_mutex_lock(&r->mu);
    r->loop = n.loop;
    pthread_mutex_unlock(&r->mu);
    /* one tracker per input, plus one for the shard directory items */
    n.tr = calloc(r->ninputs + 1, sizeof *n.tr);
    for (size_t i = 0; n.tr && i <= r->ninputs; i++)
        el_watermark_init(&n.tr[i], i < r->ninputs ? r->inputs[i].resume_offset : 0);
    el_err err = lerr ? lerr : (n.b && n.tr) ? EL_OK : EL_ENOMEM;
    const el_load_opts *o = r->o;
    int concurrency = o->concurrency > 0 ? o->concurrency : 16;
    double now = el_now_ms();
    el_rate_init(&n.rate, concurrency, o->max_wcu, now);
    double interval = (o->checkpoint_interval_s > 0 ? o->checkpoint_interval_s : 5) * 1000.0;
    n.next_checkpoint = now + interval;
    n.next_progress = now + 1000.0;
    if (!err && o->checkpoint_path) {
        n.cp = el_checkpoint_new(r->ninputs);
        if (!n.cp)
            err = EL_ENOMEM;
        for (size_t i = 0; !err && i < r->ninputs; i++)
            if (!(n.cp->inputs[i].path = strdup(r->inputs[i].path)))
                err = EL_ENOMEM;
        if (!err)
            n.cp->job_hash = r->job_hash;
    }
    if (!err) {
        curl_multi_setopt(n.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)concurrency);
        curl_multi_setopt(n.multi, CURLMOPT_MAXCONNECTS, (long)concurrency);
    }
    if (err)
        el_diag_set(diag, err, lerr == EL_EIO ? "cannot create the network event loop"
                                              : "out of memory");
    /* a checkpoint from the first moment: a kill before the first interval
     * still leaves one to resume from */
    if (!err && n.cp)
        err = write_checkpoint(&n, diag);
    double drain_until = 0;
    while (!err) {
        now = el_now_ms();
        bool stop = (o->stop && *o->stop) || atomic_load(&r->abort);
        if (stop && drain_until == 0) {
            /* stop taking input; let what is on the wire finish */
            drain_until = now + DRAIN_MS;
            atomic_store(&r->abort, true);
            el_queue_close(r->queue);
        }
        if (drain_until) {
            if (n.inflight == 0 || now > drain_until)
                break;
        } else {
            bool idle = el_batcher_pending(n.b) == 0 && n.nheld == 0 && n.inflight == 0 &&
                        n.nwaiting == 0;
            if (idle && el_queue_done(r->queue))
                break;
            err = pull(&n, idle);
            if (err) {
                el_diag_set(diag, err, "out of memory");
                break;
            }
            now = el_now_ms();
            /* resend requests whose backoff has passed; a resend costs
             * capacity again (a throttled or failed request consumed
             * nothing that was counted) */
            while (n.nwaiting > 0 && n.waiting[0]->not_before <= now &&
                   (int)n.inflight < el_rate_window(&n.rate)) {
                if (n.rate.wcu_per_s > 0) {
                    if (el_rate_wait_ms(&n.rate, n.waiting[0]->wcu_estimate, now) > 0)
                        break;
                    (void)el_rate_take(&n.rate, n.waiting[0]->wcu_estimate, now);
                }
                sendreq *s = wait_pop(&n);
                err = start(&n, s);
                if (err) {
                    free_req(&n, s);
                    break;
                }
            }
        }
        double budget_wait = 0;
        if (!err && !drain_until)
            err = fill_window(&n, now, &budget_wait);
        if (err) {
            el_diag_set(diag, err, "%s", el_strerror(err));
            break;
        }
        /* start what fill_window and the resends added (libcurl sets a 0 ms
         * timer for a new transfer); answers arrive in el_netloop_wait */
        el_netloop_run_timers(n.loop);
        CURLMsg *msg;
        int left;
        bool answered = false;
        while (!err && (msg = curl_multi_info_read(n.multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            answered = true;
            CURLcode code = msg->data.result;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&req);
            sendreq *s = el_ddb_req_user(req);
            stop_req(&n, s);
            err = on_done(&n, s, code);
        }
        if (err) {
            /* on_done recorded the reason with fail() */
            break;
        }
        now = el_now_ms();
        if (n.cp && now >= n.next_checkpoint) {
            n.next_checkpoint = now + interval;
            err = write_checkpoint(&n, diag);
            if (err)
                break;
        }
        if (now >= n.next_progress) {
            n.next_progress = now + 1000.0;
            report(&n, false);
        }
        /* Sleep until a transfer moves, a retry or the capacity budget is
         * due, a checkpoint or progress report is due, or (when there is
         * room for more) a reader hands over a chunk: readers wake us with
         * el_netloop_wakeup only when `hungry` says we wait for them. */
        double timeout = 1000;
        if (budget_wait > 0 && budget_wait < timeout)
            timeout = budget_wait;
        /* A due retry or resend counts only when it can go: with every
         * slot of the window taken, only an answer frees one, and its
         * socket wakes us (counting it made this loop turn at timeout 0
         * while throttled rows waited behind a full window). Not while
         * draining: nothing is sent. Retried rows go through the capacity
         * budget too: while it makes us wait, its wait is the timeout. */
        bool can_send = !drain_until && (int)n.inflight < el_rate_window(&n.rate);
        double due = can_send && budget_wait <= 0 ? el_batcher_next_due(n.b) : -1;
        if (can_send && n.nwaiting > 0 && (due < 0 || n.waiting[0]->not_before < due))
            due = n.waiting[0]->not_before;
        if (n.cp && (due < 0 || n.next_checkpoint < due))
            due = n.next_checkpoint;
        if (due < 0 || n.next_progress < due)
            due = n.next_progress;
        if (due - now < timeout)
            timeout = due > now ? due - now : 0;
        if (n.inflight == 0 && n.nwaiting == 0 && n.nheld == 0 &&
            el_batcher_pending(n.b) == 0 && el_queue_done(r->queue))
            continue; /* all done: the loop's top ends it */
        if (answered && !drain_until && (int)n.inflight < el_rate_window(&n.rate))
            continue; /* an answer freed a slot: send again before sleeping */
        bool room = (int)n.inflight < el_rate_window(&n.rate) && el_batcher_has_room(n.b);
        if (room && !drain_until && !el_queue_done(r->queue)) {
            atomic_store(&r->hungry, true);
            /* a chunk may have come between pull() and now: then don't sleep */
            void *peek;
            if (el_queue_try_pop(r->queue, &peek)) {
                atomic_store(&r->hungry, false);
                err = take_chunk(&n, peek);
                if (err)
                    break;
                continue;
            }
        }
        /* even with nothing to wait for (timeout 0), ready sockets must be
         * handed to libcurl here: nothing else reads them */
        err = el_netloop_wait(n.loop, timeout > 0 ? (int)timeout + 1 : 0);
        atomic_store(&r->hungry, false);
        if (err) {
            el_diag_set(diag, err, "waiting for the network failed");
            break;
        }
    }
    bool interrupted = !err && o->stop && *o->stop;
    /* Requests still out are dropped: their items were never acknowledged,
     * so nothing is counted as written that was not, and the checkpoint's
     * watermark stays below them. */
    while (n.inflight) {
        sendreq *s = n.out[n.inflight - 1];
        stop_req(&n, s);
        free_req(&n, s);
    }
    if (n.cp) {
        el_diag cd;
        el_diag_clear(&cd);
        el_err cerr = write_checkpoint(&n, &cd);
        if (cerr && !err) {
            err = cerr;
            *diag = cd;
        }
    }
    report(&n, true);
    while (n.nwaiting > 0)
        free_req(&n, wait_pop(&n));
    free(n.waiting);
    for (size_t i = 0; i < n.nchunks; i++)
        el_chunk_free(n.chunks[i]);
    if (n.tr)
        for (size_t i = 0; i <= r->ninputs; i++)
            el_watermark_free(&n.tr[i]);
    free(n.tr);
    free(n.chunks);
    free(n.out);
    el_checkpoint_free(n.cp);
    pthread_mutex_lock(&r->mu); /* no reader wakes it from now on (wake_network) */
    r->loop = NULL;
    pthread_mutex_unlock(&r->mu);
    el_netloop_free(n.loop);
    el_batcher_free(n.b);
    el_buf_free(&n.body);
    if (!err && interrupted)
        return EL_EINTR;
    return err;
}

/* ---- the output stage (--output DIR) ---- */

/* Takes the network stage's place: every queued item goes to the file sink,
 * in queue order, and each chunk is freed once written. The sink is finished
 * (its manifest written) only when the readers ended and nothing failed or
 * was interrupted; otherwise the caller frees it unfinished, which leaves no
 * manifest. On a reader's failure it returns EL_OK (r->err says why). */
static el_err output_stage(run *r, el_file_sink *sink, el_load_stats *st, el_diag *diag)
{
    void *p;
    el_err err = EL_OK;
    double next_progress = el_now_ms() + 1000.0;
    while (!err && !atomic_load(&r->abort) && el_queue_pop(r->queue, &p)) {
        el_chunk *c = p;
        for (size_t i = 0; !err && i < c->nitems; i++)
            err = el_file_sink_put(sink, el_item_json(&c->items[i]), c->items[i].json_len, diag);
        el_chunk_free(c);
        st->items_written = el_file_sink_items(sink);
        if (!err && r->o->stop && *r->o->stop)
            err = EL_EINTR;
        if (el_now_ms() >= next_progress) {
            next_progress += 1000.0;
            report_run(r, st, 0, false);
        }
    }
    if (!err && !atomic_load(&r->abort))
        err = r->o->stop && *r->o->stop ? EL_EINTR : el_file_sink_finish(sink, diag);
    report_run(r, st, 0, true);
    return err;
}

/* ---- setting up ---- */

/* Pairs every input with its source: positional inputs override the
 * mapping's "input" (one per source in order, or all to a single source). */
static el_err plan_inputs(run *r, el_diag *diag)
{
    const el_load_opts *o = r->o;
    el_mapping *m = o->mapping;
    size_t n = o->ninputs ? o->ninputs : m->nsources;
    if (o->ninputs && m->nsources > 1 && o->ninputs != m->nsources)
        return el_diag_set(diag, EL_EUSAGE,
                           "%zu inputs given for %zu sources: give one input per source, in the "
                           "mapping's order, or none to use each source's \"input\"",
                           o->ninputs, m->nsources);
    r->inputs = calloc(n ? n : 1, sizeof *r->inputs);
    if (!r->inputs)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        el_source *src = m->sources[m->nsources == 1 ? 0 : i];
        const char *path = o->ninputs ? o->inputs[i] : src->input;
        if (!path)
            return el_diag_set(diag, EL_EUSAGE,
                               "source '%s' has no input: give it \"input\" in the mapping or "
                               "name the file on the command line", src->name);
        r->inputs[i].src = src;
        r->inputs[i].path = o->ninputs ? strdup(path) : el_mapping_input_path(m, path);
        if (!r->inputs[i].path)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        r->ninputs++;
    }
    return EL_OK;
}

static bool same_columns(const el_schema *a, const el_schema *b)
{
    if (a->ncols != b->ncols)
        return false;
    for (size_t i = 0; i < a->ncols; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

static el_err open_inputs(run *r, el_diag *diag)
{
    for (size_t i = 0; i < r->ninputs; i++) {
        input_ctx *in = &r->inputs[i];
        const el_source *s = in->src;
        el_reader_opts ro = el_source_reader_opts(s, &r->o->reader);
        el_diag d;
        el_diag_clear(&d);
        in->ropts = ro;
        el_err err = el_reader_open(in->path, &ro, &in->reader, &d);
        if (err) {
            if (d.line)
                return el_diag_set(diag, err, "%s:%llu: %s", in->path,
                                   (unsigned long long)d.line, d.msg);
            /* input.c names the file in its own messages */
            return el_diag_set(diag, err, "%s", d.msg);
        }
        in->raw_size = el_input_raw_size(el_reader_input(in->reader));
        const el_schema *schema = el_reader_schema(in->reader);
        if (s->bound && !same_columns(s->bound, schema))
            return el_diag_set(diag, EL_EUSAGE,
                               "%s: columns differ from the other inputs of source '%s'; "
                               "inputs of one source must have the same columns in the same "
                               "order", in->path, s->name);
        if (!s->bound) {
            err = el_source_bind(in->src, schema, &d);
            if (err)
                return el_diag_set(diag, err, "%s: %s", in->path, d.msg);
        }
    }
    return EL_OK;
}

/* Identifies the job a checkpoint belongs to: table, sources and inputs. */
static uint64_t job_hash(const run *r)
{
    const el_mapping *m = r->o->mapping;
    uint64_t h = el_checkpoint_hash(0, m->table, strlen(m->table) + 1);
    for (size_t i = 0; i < m->nsources; i++) {
        const el_source *s = m->sources[i];
        const el_template *t[] = { s->pk, s->sk, s->index_pk, s->index_sk };
        h = el_checkpoint_hash(h, s->name, strlen(s->name) + 1);
        for (size_t k = 0; k < 4; k++) {
            const char *text = t[k] ? el_template_text(t[k]) : "";
            h = el_checkpoint_hash(h, text, strlen(text) + 1);
        }
    }
    for (size_t i = 0; i < r->ninputs; i++)
        h = el_checkpoint_hash(h, r->inputs[i].path, strlen(r->inputs[i].path) + 1);
    if (r->o->split.count)
        h = el_checkpoint_hash(h, &r->split_hash, sizeof r->split_hash);
    return h;
}

/* SPLIT hook: --split I/N keeps this worker's part of each input (opened
 * already, for its schema): a byte range of a plain CSV/TSV file is opened
 * anew on that range, an input wholly in another part yields no rows. */
static el_err split_inputs(run *r, el_diag *diag)
{
    const el_load_opts *o = r->o;
    for (size_t s = 0; s < o->mapping->nsources; s++) {
        const el_source *src = o->mapping->sources[s];
        if (src->index && src->hot_threshold && !o->plan_path)
            return el_diag_set(diag, EL_EUSAGE,
                               "--split: source '%s' shards hot targets, and every worker must "
                               "shard the same keys: run 'edgeload plan --plan-out plan.json' "
                               "once over the whole input, then give each worker --plan "
                               "plan.json", src->name);
    }
    el_split_input *si = calloc(r->ninputs ? r->ninputs : 1, sizeof *si);
    el_split_part *parts = calloc(r->ninputs ? r->ninputs : 1, sizeof *parts);
    el_err err = si && parts ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < r->ninputs; i++) {
        input_ctx *in = &r->inputs[i];
        si[i] = el_split_input_of(in->path, &in->ropts, el_reader_format(in->reader),
                                  el_reader_input(in->reader));
    }
    if (!err)
        err = el_split_assign(&o->split, si, r->ninputs, parts, diag);
    uint64_t h = el_checkpoint_hash(0, &o->split.index, sizeof o->split.index);
    h = el_checkpoint_hash(h, &o->split.count, sizeof o->split.count);
    for (size_t i = 0; !err && i < r->ninputs; i++) {
        input_ctx *in = &r->inputs[i];
        el_split_part *p = &parts[i];
        uint64_t span[3] = { p->kind, p->range.start, p->range.end };
        h = el_checkpoint_hash(h, span, sizeof span);
        if (p->kind == EL_SPLIT_NONE)
            el_reader_skip_rest(in->reader);
        if (p->kind != EL_SPLIT_RANGE)
            continue;
        el_reader_opts ro = in->ropts;
        ro.format = p->format;
        el_reader *part;
        el_diag d;
        el_diag_clear(&d);
        err = el_reader_open_range(in->path, &ro, &p->range, &part, &d);
        if (err) {
            el_diag_set(diag, err, "%s: %s", in->path, d.msg);
            break;
        }
        const el_schema *old = el_reader_schema(in->reader);
        if (in->src->bound == old) /* the source borrows the schema it was bound to */
            err = el_source_bind(in->src, el_reader_schema(part), &d);
        el_reader_free(in->reader);
        in->reader = part;
        in->raw_size = el_input_raw_size(el_reader_input(part));
        if (err)
            el_diag_set(diag, err, "%s: %s", in->path, d.msg);
    }
    r->split_hash = h;
    free(si);
    free(parts);
    return err;
}

/* Applies a checkpoint: offsets to skip to, rejects already written. */
static el_err resume_from(run *r, el_diag *diag)
{
    el_checkpoint *cp;
    if (access(r->o->checkpoint_path, F_OK) != 0 && errno == ENOENT) {
        /* nothing to resume: the earlier run never got going. Start over. */
        r->resumed_fresh = true;
        return EL_OK;
    }
    el_err err = el_checkpoint_read(r->o->checkpoint_path, &cp, diag);
    if (err)
        return err;
    if (cp->job_hash != r->job_hash || cp->ninputs != r->ninputs) {
        el_checkpoint_free(cp);
        return el_diag_set(diag, EL_EUSAGE,
                           "checkpoint %s belongs to another job (different mapping or inputs); "
                           "run without --resume to start over", r->o->checkpoint_path);
    }
    uint64_t high[r->ninputs ? r->ninputs : 1];
    bool has[r->ninputs ? r->ninputs : 1];
    for (size_t i = 0; i < r->ninputs; i++) {
        input_ctx *in = &r->inputs[i];
        if (!el_input_seekable(el_reader_input(in->reader)) && !cp->inputs[i].done &&
            cp->inputs[i].offset > 0) {
            el_checkpoint_free(cp);
            return el_diag_set(diag, EL_EUSAGE, "%s: cannot resume standard input or a pipe; "
                               "give the file itself", in->path);
        }
        in->resume_done = cp->inputs[i].done;
        in->resume_offset = cp->inputs[i].offset;
        high[i] = cp->inputs[i].rejects_high;
        has[i] = cp->inputs[i].has_rejects;
    }
    r->base_written = cp->items_written;
    err = el_rejects_restore(r->o->rejects, cp->rejects_bytes, cp->rejected, high, has,
                             r->ninputs, diag);
    el_checkpoint_free(cp);
    return err;
}

/* The plan: from --plan FILE, or counted now when a source is hot. */
static el_err prepare_plan(run *r, el_diag *diag)
{
    el_fanin_input *in = calloc(r->ninputs ? r->ninputs : 1, sizeof *in);
    if (!in)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->ninputs; i++)
        in[i] = (el_fanin_input){ r->inputs[i].path, r->inputs[i].src, r->inputs[i].ropts };
    el_err err = el_fanin_plan(r->o->mapping, in, r->ninputs, r->o->plan_path, &r->plan, diag);
    free(in);
    return err;
}

/* One shard directory item per sharded key (PK=<key>, SK=#SHARDS, shards,
 * fanIn), as a chunk of their own, written before the edges. */
static el_err directory_chunk(run *r, el_chunk **out, el_diag *diag)
{
    *out = NULL;
    if (!r->plan)
        return EL_OK;
    const el_mapping *m = r->o->mapping;
    el_chunk *c = el_chunk_new(r->ninputs);
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    for (size_t s = 0; !err && s < el_plan_nsources(r->plan); s++) {
        const el_plan_source *ps = el_plan_get_source(r->plan, s);
        for (size_t h = 0; !err && h < ps->nhot; h++) {
            const el_plan_hot *hot = &ps->hot[h];
            if (hot->shards < 2)
                continue;
            size_t jm = c->json.len, km = c->keys.len, size;
            err = el_shard_directory_item(&c->json, &c->keys, m->pk_attr, m->sk_attr, hot->key,
                                          hot->len, hot->shards, hot->fan_in, &size);
            if (!err)
                err = el_chunk_commit(c, jm, km, size, 0, 0);
        }
    }
    if (err || c->nitems == 0) {
        el_chunk_free(c);
        return err ? el_diag_set(diag, err, "out of memory") : EL_OK;
    }
    *out = c;
    return EL_OK;
}

/* Parallel reading: an input is cut into parts for several threads when
 * it is CSV or TSV without --escape (a backslash escape could hide a quote
 * from the scanner), can be opened again (not a pipe), and is larger than a
 * part. EDGELOAD_PART_BYTES (a test knob) sets the part size. */
static size_t part_bytes(void)
{
    const char *env = getenv("EDGELOAD_PART_BYTES");
    long v = env ? strtol(env, NULL, 10) : 0;
    return v > 0 ? (size_t)v : EL_CHUNKER_TARGET;
}

static el_err start_split(run *r, input_ctx *in, size_t threads, el_diag *diag)
{
    el_format f = el_reader_format(in->reader);
    bool tsv = f == EL_FMT_TSV;
    char delim = in->ropts.delimiter ? in->ropts.delimiter : (tsv ? '\t' : ',');
    unsigned char quote = tsv ? 0xFF : '"';
    size_t target = part_bytes();
    if ((f != EL_FMT_CSV && !tsv) || in->ropts.escape || delim == '\n' || delim == '\r' ||
        (unsigned char)delim == quote || !el_input_seekable(el_reader_input(in->reader)) ||
        in->raw_size <= target || (in->resume_done && !r->counters))
        return EL_OK;
    /* A --split worker reads byte ranges (or nothing) of its inputs through
     * el_reader_open_range; the chunker reads whole files, so the two do not
     * combine yet: a split worker parses each of its ranges on one thread. */
    if (r->o->split.count)
        return EL_OK;
    split_job *j = calloc(1, sizeof *j);
    if (!j)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_input *raw;
    el_err err = el_input_open(in->path, &raw, diag);
    el_chunker_opts co = { .delimiter = delim, .quote = quote, .target = target };
    if (!err)
        err = el_chunker_new(raw, &co, &j->ck, diag);
    if (!err && !(j->ro = el_reorder_new(threads + 2)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (err) {
        el_chunker_free(j->ck);
        free(j);
        return err;
    }
    pthread_mutex_init(&j->scan_mu, NULL);
    pthread_mutex_init(&j->mu, NULL);
    in->split = j;
    return EL_OK;
}

static void free_split(split_job *j)
{
    if (!j)
        return;
    el_chunker_free(j->ck);
    el_reorder_free(j->ro, part_result_free);
    pthread_mutex_destroy(&j->scan_mu);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

el_err el_load_run(const el_load_opts *o, el_load_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_now_ms();
    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.t0 = t0;
    pthread_mutex_init(&r.mu, NULL);
    el_err err = plan_inputs(&r, diag);
    if (!err)
        err = open_inputs(&r, diag);
    if (!err && o->split.count) /* SPLIT hook */
        err = split_inputs(&r, diag);
    if (!err)
        err = prepare_plan(&r, diag);
    el_file_sink *sink = NULL; /* --output: opened first, so a used DIR reads nothing */
    if (!err && o->output_dir && !o->dry_run) {
        el_file_sink_opts so = { .dir = o->output_dir, .part_max_items = o->output_part_items,
                                 .table = o->mapping->table, .store = o->output_store };
        err = el_file_sink_new(&so, &sink, diag);
    }
    if (!err) {
        r.job_hash = job_hash(&r);
        if (el_rejects_track(o->rejects, r.ninputs))
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (!err && o->resume) {
        if (!o->checkpoint_path || o->dry_run)
            err = el_diag_set(diag, EL_EUSAGE, "--resume needs --checkpoint FILE (and a real load)");
        else
            err = resume_from(&r, diag);
    }
    if (!err && o->counters_only && (o->dry_run || o->output_dir || o->checkpoint_path))
        err = el_diag_set(diag, EL_EUSAGE, "counters only: no --dry-run, --output or "
                          "--checkpoint");
    if (!err && !o->dry_run && !o->output_dir && !o->split.count /* SPLIT hook */ &&
        el_mapping_has_counters(o->mapping) &&
        el_counters_new(o->mapping, &r.counters)) /* COUNTERS hook: before readers start */
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err) {
        r.queue = el_queue_new(QUEUE_CHUNKS);
        if (!r.queue)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_chunk *dir = NULL;
    if (!err)
        err = directory_chunk(&r, &dir, diag);
    if (!err && dir) {
        st->directory_items = dir->nitems;
        if (o->dry_run) {
            err = dry_print(&r, dir);
            el_chunk_free(dir);
        } else if (!el_queue_push(r.queue, dir)) {
            el_chunk_free(dir);
        }
    }
    pthread_t *threads = NULL;
    size_t nthreads = 0;
    if (!err) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        size_t want = o->threads > 0 ? (size_t)o->threads : (size_t)(cores > 0 ? cores : 1);
        bool split = false;
        /* Cutting one input into parts pays only when reading is the
         * bottleneck and a core is free for a second reader. Against
         * DynamoDB one reader outruns the network stage ~5x, and parts
         * parsed ahead of their turn only held memory and cost CPU (null
         * endpoint, 800k rows, 2 cores: 76 vs 26 MB peak, 3.35 vs 2.8 us an
         * item). With --output or --dry-run on 2 cores, one reader and the
         * sink (or stdout) already use both: 1 M rows took 0.47 s with one
         * reader and 0.48-0.61 s with two, at twice the memory. So by
         * default parts are cut only for --output/--dry-run on more than 2
         * cores; an explicit --threads N > 1 always cuts them. Several
         * inputs are read at once either way. */
        bool may_split = o->threads > 0 || ((o->dry_run || o->output_dir) && cores > 2);
        for (size_t i = 0; !err && may_split && want > 1 && i < r.ninputs; i++) {
            err = start_split(&r, &r.inputs[i], want, diag);
            split = split || r.inputs[i].split;
        }
        if (want > r.ninputs && !split)
            want = r.ninputs;
        threads = err ? NULL : calloc(want ? want : 1, sizeof *threads);
        if (!err && !threads)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        atomic_store(&r.readers_left, (int)want);
        if (want == 0)
            el_queue_close(r.queue);
        for (size_t i = 0; !err && i < want; i++) {
            if (pthread_create(&threads[i], NULL, reader_main, &r) != 0) {
                /* the threads that did start finish the work */
                if (atomic_fetch_sub(&r.readers_left, (int)(want - i)) == (int)(want - i))
                    el_queue_close(r.queue);
                if (i == 0)
                    err = el_diag_set(diag, EL_ENOMEM, "cannot start a reader thread");
                break;
            }
            nthreads++;
        }
    }
    el_err net_err = EL_OK;
    el_diag net_diag;
    el_diag_clear(&net_diag);
    if (!err && !o->dry_run) {
        net_err = sink ? output_stage(&r, sink, st, &net_diag) : network_stage(&r, st, &net_diag);
        if (net_err && net_err != EL_EINTR)
            fail(&r, net_err, &net_diag);
    }
    if (!o->dry_run && r.queue) {
        /* the network stage is over: readers still blocked on a full queue
         * (after an error or interrupt) must not wait for it */
        atomic_store(&r.abort, true);
        el_queue_close(r.queue);
    }
    for (size_t i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    el_file_sink_free(sink); /* unfinished after a failure: no manifest */
    if (r.queue) {
        /* chunks queued after the network stage stopped */
        void *p;
        while (el_queue_try_pop(r.queue, &p))
            el_chunk_free(p);
    }
    if (!err && r.err) {
        err = r.err;
        *diag = r.diag;
    }
    if (!err && (net_err == EL_EINTR || (o->stop && *o->stop))) {
        err = EL_EINTR;
        el_diag_set(diag, err, "interrupted%s", o->checkpoint_path ? "; checkpoint saved" : "");
    }
    if (!err && r.counters) {
        /* COUNTERS hook: every item of every source is acknowledged; now the
         * counts, SET idempotently (entities, edges, then counters) */
        el_counters_write_opts wo = {
            .ddb = o->ddb, .table = o->mapping->table, .pk_attr = o->mapping->pk_attr,
            .sk_attr = o->mapping->sk_attr, .concurrency = o->concurrency,
            .max_wcu = o->max_wcu, .max_retry_time_s = o->max_retry_time_s, .stop = o->stop
        };
        el_counters_stats cst;
        err = el_counters_write(r.counters, &wo, &cst, diag);
        st->counters_written = cst.counters;
        st->counter_edges = el_counters_edges(r.counters);
        st->counter_duplicates = el_counters_duplicates(r.counters);
        st->requests += cst.requests;
        st->retries += cst.retries;
        st->throttled += cst.throttled;
        st->wcu_consumed += cst.wcu_consumed;
    }
    el_counters_free(r.counters); /* COUNTERS hook */
    st->rows_read = atomic_load(&r.rows_read);
    /* the rows in the rejects file: after --resume those of the runs before
     * too (the job as a whole had them, and its exit status, 3, says so),
     * each once however often a row was met */
    st->rejected = el_rejects_count(o->rejects);
    if (o->dry_run)
        st->items_written = st->rows_read - st->rejected;
    st->elapsed_s = (el_now_ms() - t0) / 1000.0;
    for (size_t i = 0; i < r.ninputs; i++) {
        free_split(r.inputs[i].split);
        el_reader_free(r.inputs[i].reader);
        free(r.inputs[i].path);
    }
    free(r.inputs);
    el_plan_free(r.plan);
    el_queue_free(r.queue);
    pthread_mutex_destroy(&r.mu);
    return err;
}
