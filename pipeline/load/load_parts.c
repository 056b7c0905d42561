/*
 * load_parts.c - parallel reading of one large CSV/TSV input: the chunker
 * (formats/chunker.h) cuts it at record boundaries, every free reader
 * thread parses and transforms the next part, and the reorder buffer hands
 * the parts' chunks and rejects over in input order.
 *
 * DESIGN: the next stage must see exactly what one thread reading the input
 * gives (chunk sequence numbers, rejects in input order), so the watermark
 * and the checkpoint work as for any input. A thread whose part is next in
 * order delivers its chunks as they fill instead of holding the whole part.
 */
#include "pipeline/load/load_run.h"

#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* memcpy */

#include "common/vec.h"        /* el_grow */
#include "formats/chunker.h"
#include "formats/input.h"
#include "pipeline/flow/reorder.h"
#include "pipeline/rows/transform.h"

/* Parallel reading of one input (issue 4): every reader thread takes the
 * next part from the chunker (under scan_mu: the cutting is sequential),
 * parses and transforms it into chunks, and puts the result in the reorder;
 * results are delivered (rejects written, chunks handed over) in part order,
 * so the next stage sees exactly what one thread reading the input gives. */
struct load_split {
    el_chunker *ck;           /* under scan_mu */
    pthread_mutex_t scan_mu;
    uint64_t next_part;       /* under scan_mu: seq of the next part */
    bool scan_done;           /* under mu (set under scan_mu too) */
    el_reorder *ro;
    pthread_mutex_t mu;       /* guards active, closed, scan_done */
    int active;               /* threads working on this input */
    bool closed;              /* the last thread left: nobody may join */
    uint64_t chunk_seq;       /* deliverer only: seq of the next chunk handed over */
};

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
static el_err open_part(const load_input *in, el_chunker_part *p, el_reader **rd, el_diag *d)
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
static el_err flush_result(load_run *r, size_t idx, load_split *j, part_result *res);

/* Parses and transforms one part into res. Once every part before it is
 * delivered, this thread claims the delivery of its own part and hands
 * chunks over as they fill (*head), instead of holding the whole part. */
static void parse_part(load_run *r, size_t idx, el_transform *t, el_counters_tap *tap,
                       el_chunker_part *p, part_result *res, bool *head)
{
    load_split *j = r->inputs[idx].split;
    *head = el_reorder_claim(j->ro, p->seq);
    load_input *in = &r->inputs[idx];
    el_diag d;
    el_diag_clear(&d);
    el_reader *rd = NULL;
    el_rowloop *loop = NULL;
    el_err err = open_part(in, p, &rd, &d);
    if (err) { /* worded as the loop words an error of the input */
        el_diag why = d;
        err = el_rowloop_wrap(in->path, err, &why, &d);
    }
    if (!err)
        err = load_rowloop(in, rd, t, tap, &loop);
    el_chunk *c = err ? NULL : el_chunk_new(idx);
    if (!err && !c)
        err = EL_ENOMEM;
    el_rowloop_row out;
    uint64_t told = tap->rows;
    while (!err && !load_stopping(r)) {
        err = el_rowloop_next(loop, &c->json, &c->keys, &out, &d);
        if (err == EL_EOF) {
            load_count_rows(r, NULL, tap, &told);
            err = EL_OK;
            break;
        }
        if (err)
            break;
        load_count_rows(r, &out, tap, &told);
        if (out.what != EL_ROWLOOP_ITEM) {
            /* held: its part's rejects are delivered in order, with its chunks */
            if (hold_reject(res, out.why, out.row))
                err = EL_ENOMEM;
        } else if (r->o->counters_only) { /* `edgeload counters`: counted, not written */
            el_buf_truncate(&c->json, out.json_mark);
            el_buf_truncate(&c->keys, out.key_mark);
            continue;
        } else {
            err = load_keep_item(c, out.json_mark, out.key_mark, out.size, out.row, t, in->src);
        }
        if (!err && load_chunk_full(c)) {
            err = keep_chunk(res, c);
            c = err ? c : load_chunk_like(idx, c->json.len, c->keys.len);
            if (!c)
                err = EL_ENOMEM;
            if (!err && !*head)
                *head = el_reorder_claim(j->ro, p->seq);
            if (!err && *head && flush_result(r, idx, j, res))
                break; /* stopped: the next stage is gone, or load_fail() said why */
        }
        if (err)
            el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
    }
    if (!err && c && c->nitems > 0) {
        err = keep_chunk(res, c);
        if (!err)
            c = NULL;
    }
    if (err == EL_ENOMEM && !d.msg[0])
        el_diag_set(&d, err, "%s: %s", in->path, el_strerror(err));
    el_chunk_free(c);
    el_rowloop_free(loop);
    el_reader_free(rd);
    if (err) {
        res->err = err;
        res->diag = d;
    }
}

/* Delivers what res holds so far (rejects to the rejects file, chunks to
 * the next stage) and empties it; for the thread delivering res's part. */
static el_err flush_result(load_run *r, size_t idx, load_split *j, part_result *res)
{
    load_input *in = &r->inputs[idx];
    el_err err = EL_OK;
    while (res->rej) {
        held_reject *h = res->rej;
        if (!err && !load_stopping(r))
            err = load_reject_row(r, idx, in, &h->why, &h->row);
        res->rej = h->next;
        free(h->values);
        free(h->bytes);
        free(h);
    }
    res->rej_tail = &res->rej;
    for (size_t i = 0; i < res->nchunks; i++) {
        el_chunk *c = res->chunks[i];
        res->chunks[i] = NULL;
        if (err || load_stopping(r)) {
            el_chunk_free(c);
            continue;
        }
        c->seq = j->chunk_seq++;
        err = load_deliver_chunk(r, c);
    }
    res->nchunks = 0;
    return err;
}

/* Delivers the part's last contents and its error, and lets the next part go. */
static void finish_result(load_run *r, size_t idx, load_split *j, part_result *res)
{
    el_err err = flush_result(r, idx, j, res);
    if (!err && res->err && !load_stopping(r))
        load_fail(r, res->err, &res->diag);
    part_result_free(res);
    el_reorder_done(j->ro);
}

/* Delivers the results that are next in order, if nobody else is. */
static void deliver_ready(load_run *r, size_t idx, load_split *j)
{
    void *p;
    while (el_reorder_take(j->ro, &p))
        finish_result(r, idx, j, p);
}

/* One reader thread's share of a split input: take the next part, parse
 * it, put it in order, deliver what is ready; until the input is cut to
 * its end. The last thread to leave sends the input's end marker. */
void load_read_parts(load_run *r, size_t idx)
{
    load_input *in = &r->inputs[idx];
    load_split *j = in->split;
    pthread_mutex_lock(&j->mu);
    bool join = !j->closed && !j->scan_done;
    if (join)
        j->active++;
    pthread_mutex_unlock(&j->mu);
    if (!join)
        return;
    el_diag d;
    el_diag_clear(&d);
    el_counters_tap tap;
    el_counters_tap_init(&tap, r->counters);
    el_transform *t = NULL;
    if (el_transform_new(r->o->mapping, in->src, &t)) {
        el_diag_set(&d, EL_ENOMEM, "out of memory");
        load_fail(r, EL_ENOMEM, &d);
        t = NULL;
    } else if (r->plan) {
        el_transform_set_plan(t, r->plan);
    }
    while (t && !load_stopping(r)) {
        pthread_mutex_lock(&j->scan_mu);
        if (j->scan_done) {
            pthread_mutex_unlock(&j->scan_mu);
            break;
        }
        bool room = false;
        while (!load_stopping(r) && !(room = el_reorder_wait_room(j->ro, j->next_part, 100)))
            ;
        part_result *res = room ? calloc(1, sizeof *res) : NULL;
        if (!res) {
            pthread_mutex_unlock(&j->scan_mu);
            if (room) {
                el_diag_set(&d, EL_ENOMEM, "out of memory");
                load_fail(r, EL_ENOMEM, &d);
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
            parse_part(r, idx, t, &tap, &p, res, &head);
        }
        if (head || el_reorder_claim(j->ro, seq))
            finish_result(r, idx, j, res);
        else
            el_reorder_put(j->ro, seq, res);
        deliver_ready(r, idx, j);
    }
    el_counters_tap_free(&tap);
    el_transform_free(t);
    pthread_mutex_lock(&j->mu);
    bool last = --j->active == 0 && j->scan_done;
    if (last)
        j->closed = true;
    pthread_mutex_unlock(&j->mu);
    /* every part is delivered: the end marker that lets the checkpoint call
     * the input done (an input stopped early gets none) */
    if (last && !load_stopping(r)) {
        el_chunk *end = el_chunk_new(idx);
        if (!end) {
            el_diag_set(&d, EL_ENOMEM, "out of memory");
            load_fail(r, EL_ENOMEM, &d);
        } else {
            end->eof = true;
            (void)load_deliver_chunk(r, end);
        }
    }
}

/* Parallel reading: an input is cut into parts for several threads when
 * it is CSV or TSV without --escape (a backslash escape could hide a quote
 * from the scanner), can be opened again (not a pipe), and is larger than a
 * part (the caller's part_bytes, else EL_CHUNKER_TARGET). */

el_err load_start_split(load_run *r, load_input *in, size_t threads, el_diag *diag)
{
    el_format f = el_reader_format(in->reader);
    bool tsv = f == EL_FMT_TSV;
    char delim = in->ropts.delimiter ? in->ropts.delimiter : (tsv ? '\t' : ',');
    unsigned char quote = tsv ? 0xFF : '"';
    size_t target = r->o->part_bytes ? r->o->part_bytes : EL_CHUNKER_TARGET;
    if ((f != EL_FMT_CSV && !tsv) || in->ropts.escape || delim == '\n' || delim == '\r' ||
        (unsigned char)delim == quote || !el_input_seekable(el_reader_input(in->reader)) ||
        in->raw_size <= target || (in->resume_done && !r->counters))
        return EL_OK;
    /* A --split worker reads byte ranges (or nothing) of its inputs through
     * el_reader_open_range; the chunker reads whole files, so the two do not
     * combine yet: a split worker parses each of its ranges on one thread. */
    if (r->o->split.count)
        return EL_OK;
    load_split *j = calloc(1, sizeof *j);
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

void load_free_split(load_split *j)
{
    if (!j)
        return;
    el_chunker_free(j->ck);
    el_reorder_free(j->ro, part_result_free);
    pthread_mutex_destroy(&j->scan_mu);
    pthread_mutex_destroy(&j->mu);
    free(j);
}
