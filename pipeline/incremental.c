/*
 * incremental.c - `load --incremental`: each row a conditional write in a
 * TransactWriteItems with its counter changes, several in flight.
 *
 * DESIGN: a delta is small next to a full dump, and the cost is in the
 * round trips, so one thread does everything: it reads a round of rows
 * (at most EL_INCR_ROUND_ROWS, no item key twice, never across inputs, so
 * rows of one key keep their input order and inputs their mapping order),
 * groups the round's rows by their most shared counter item, and drives
 * the round's transactions on a curl multi handle until every row is
 * applied, found a duplicate, or rejected; then the next round. A counter
 * item is touched by one transaction in flight at a time: a hot item's
 * transactions queue up instead of cancelling each other with
 * TransactionConflict, and each of them carries up to ~49 rows with one
 * ADD of their net change. Everything a round allocates (row text, counter
 * keys, groups) is freed when the round ends.
 */
#include "pipeline/incremental.h"

#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, realloc */
#include <string.h>   /* memcmp, strcmp, strlen */
#include <time.h>     /* clock_gettime: the run id */
#include <unistd.h>   /* getpid: the run id */
#include <yajl/yajl_tree.h> /* CancellationReasons, ConsumedCapacity */

#include "common/buf.h"
#include "dynamo/ddb_errors.h"  /* one line for a refusal */
#include "formats/ddb_value.h"
#include "common/backoff.h"
#include "common/hash.h"   /* el_fnv1a64 */
#include "pipeline/counters.h"
#include "common/clock.h"  /* el_now_ms */
#include "pipeline/plan.h"
#include "dynamo/ratectl.h"
#include "pipeline/transform.h"
#include "common/vec.h"  /* el_grow */

#define ROUND_JSON_BYTES (64u * 1024 * 1024)
#define TXN_MAX_BYTES (3u * 1024 * 1024)   /* under TransactWriteItems' 4 MB */

/* ---- tokens ---- */

void el_incr_row_token(const char *table, char op, const char *key, size_t klen,
                       uint64_t offset, uint64_t out[2])
{
    el_buf b;
    el_buf_init(&b, 1u << 20);
    unsigned char off[8];
    for (int i = 0; i < 8; i++)
        off[i] = (unsigned char)(offset >> (8 * i));
    char opb[2] = { op, '\0' };
    if (el_buf_puts(&b, "edgeload-row-v1") || el_buf_putc(&b, '\0') ||
        el_buf_append(&b, table, strlen(table) + 1) || el_buf_append(&b, opb, 2) ||
        el_buf_append(&b, key, klen) || el_buf_putc(&b, '\0') || el_buf_append(&b, off, 8)) {
        /* out of memory: a weaker token still works, conditions keep counts exact */
        el_counters_fingerprint(key, klen, out);
        out[0] ^= offset;
    } else {
        el_counters_fingerprint(b.data, b.len, out);
    }
    el_buf_free(&b);
}

void el_incr_txn_token(const uint64_t (*rows)[2], size_t n, uint64_t run_id, unsigned variant,
                       char out[33])
{
    uint64_t h[2] = { 0x6564676c6f6164ULL ^ variant, (uint64_t)n ^ run_id };
    for (size_t i = 0; i < n; i++) {
        unsigned char buf[32];
        for (int k = 0; k < 8; k++) {
            buf[k] = (unsigned char)(h[0] >> (8 * k));
            buf[8 + k] = (unsigned char)(h[1] >> (8 * k));
            buf[16 + k] = (unsigned char)(rows[i][0] >> (8 * k));
            buf[24 + k] = (unsigned char)(rows[i][1] >> (8 * k));
        }
        el_counters_fingerprint(buf, sizeof buf, h);
    }
    if (n == 0 || variant) {
        unsigned char buf[20];
        for (int k = 0; k < 8; k++) {
            buf[k] = (unsigned char)(h[0] >> (8 * k));
            buf[8 + k] = (unsigned char)(h[1] >> (8 * k));
        }
        for (int k = 0; k < 4; k++)
            buf[16 + k] = (unsigned char)(variant >> (8 * k));
        el_counters_fingerprint(buf, sizeof buf, h);
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

/* ---- a round of rows ---- */

typedef struct ckref {
    size_t off, len;          /* "PK\0SK\0attribute" in round.ctext */
    size_t item_len;          /* bytes of "PK\0SK" */
    size_t item;              /* index in round.items */
} ckref;

typedef struct irow {
    size_t json_off, json_len;
    size_t key_off, key_len;  /* "PK\0SK" in round.keys */
    size_t ck_first, nck;     /* round.cks[ck_first .. +nck) */
    uint64_t line, offset;
    uint64_t tok[2];
    bool del, indexed;
} irow;

typedef struct citem {
    uint64_t hash;
    size_t ck;                /* a ckref naming this item (for its key text) */
    size_t rows;              /* rows of the round that touch it */
    bool busy;                /* a transaction touching it is in flight */
} citem;

typedef struct group {
    size_t *m, n;             /* member rows, in order */
    size_t *items, nitems;    /* counter items touched */
    unsigned attempt, variant;
    double not_before, first_failure;
    el_ddb_req *req;
    double wcu_est;
    bool on_wire, done;
} group;

typedef struct round {
    el_buf json, keys, ctext;
    irow *rows;
    size_t nrows, rows_cap;
    ckref *cks;
    size_t ncks, cks_cap;
    citem *items;
    size_t nitems, items_cap;
    size_t *imap;             /* open addressing: item index + 1, 0 = empty */
    size_t imap_cap;
    uint64_t *kset;           /* item-key hashes of the round's rows, 0 = empty */
    size_t kset_cap;
    group *groups;
    size_t ngroups, groups_cap;
} round;

typedef struct input {
    char *path;
    el_source *src;
    el_reader *reader;
    size_t op_col;            /* (size_t)-1: no op column in this input */
} input;

typedef struct ictx {
    const el_incr_opts *o;
    el_incr_stats *st;
    double t0, last_progress; /* ms */
    /* how far the round being applied is, for the ETA: input bytes before
     * and after reading it, its rows, and rows settled before it */
    uint64_t round_bytes0, round_bytes1, round_settled0;
    size_t round_rows;
    const input *cur;         /* the input being applied */
    input *in;
    size_t nin;
    round rd;
    el_buf body;
    el_rate rate;
    uint64_t rng;
    CURLM *multi;
    size_t wire;
    uint64_t run_id;
    el_plan *plan;            /* --plan: index shards of hot targets, or NULL */
} ictx;

static bool stopped(const ictx *c)
{
    return c->o->stop && *c->o->stop;
}

void el_incr_load_stats(const el_incr_stats *st, el_load_stats *out)
{
    memset(out, 0, sizeof *out);
    out->rows_read = st->rows_read;
    out->items_written = st->added + st->deleted + st->replayed;
    out->duplicates = st->duplicates + st->absent;
    out->rejected = st->rejected;
    out->retries = st->retries;
    out->throttled = st->throttled;
    out->requests = st->requests;
    out->wcu_consumed = st->wcu_consumed;
    out->elapsed_s = st->elapsed_s;
}

/* Input bytes the readers have consumed (every input before the current
 * one is read whole). */
static uint64_t bytes_read(const ictx *c, uint64_t *total)
{
    uint64_t done = 0;
    if (total)
        *total = 0;
    for (size_t i = 0; i < c->nin; i++) {
        el_input *raw = c->in[i].reader ? el_reader_input(c->in[i].reader) : NULL;
        if (!raw)
            continue;
        done += el_input_raw_consumed(raw);
        if (total)
            *total += el_input_raw_size(raw);
    }
    return done;
}

/* Rows whose fate is known (rejects excepted: they never join a round). */
static uint64_t settled(const el_incr_stats *st)
{
    return st->added + st->deleted + st->duplicates + st->absent + st->replayed;
}

/* A progress snapshot, at most once a second unless final. A round is read
 * whole before it is applied, so the bytes reported are those before the
 * round plus the round's share of its bytes that is applied: the ETA
 * follows the writes, not the reading. For an uncompressed input the
 * round's bytes are its rows' offsets (the reader's buffer runs ahead of
 * them); for a compressed one, the compressed bytes read for it. */
static void report_progress(ictx *c, bool final)
{
    if (!c->o->progress)
        return;
    double now = el_now_ms();
    if (!final && now - c->last_progress < 1000.0)
        return;
    c->last_progress = now;
    c->st->elapsed_s = (now - c->t0) / 1000.0;
    el_progress p = { .final = final, .transactional = true,
                      .transactions = c->st->transactions, .window = el_rate_window(&c->rate) };
    el_incr_load_stats(c->st, &p.st);
    p.bytes_done = bytes_read(c, &p.bytes_total);
    if (!final && c->round_rows > 0) {
        uint64_t b0 = c->round_bytes0, b1 = c->round_bytes1;
        if (c->cur && el_input_compression(el_reader_input(c->cur->reader)) == EL_COMP_NONE) {
            uint64_t before = 0; /* inputs before this one are done */
            for (const input *i = c->in; i < c->cur; i++)
                before += el_input_raw_size(el_reader_input(i->reader));
            b0 = before + c->rd.rows[0].offset;
            b1 = before + c->rd.rows[c->round_rows - 1].offset;
        }
        double share = (double)(settled(c->st) - c->round_settled0) / (double)c->round_rows;
        share = share < 0 ? 0 : share > 1 ? 1 : share;
        p.bytes_done = b0 + (uint64_t)(share * (double)(b1 - b0));
    }
    c->o->progress(&p, c->o->progress_user);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    return el_grow(p, cap, need, size, 64);
}

static void round_reset(round *r)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        free(r->groups[i].m);
        free(r->groups[i].items);
        el_ddb_req_free(r->groups[i].req);
    }
    r->ngroups = 0;
    el_buf_reset(&r->json);
    el_buf_reset(&r->keys);
    el_buf_reset(&r->ctext);
    r->nrows = r->ncks = r->nitems = 0;
    if (r->imap)
        memset(r->imap, 0, r->imap_cap * sizeof *r->imap);
    if (r->kset)
        memset(r->kset, 0, r->kset_cap * sizeof *r->kset);
}

static void round_free(round *r)
{
    round_reset(r);
    el_buf_free(&r->json);
    el_buf_free(&r->keys);
    el_buf_free(&r->ctext);
    free(r->rows);
    free(r->cks);
    free(r->items);
    free(r->imap);
    free(r->kset);
    free(r->groups);
}

/* Inserts a key hash; false when it is in the round already (the round
 * must end before that row). Sized for EL_INCR_ROUND_ROWS at half load. */
static bool kset_insert(round *r, uint64_t h)
{
    if (!h)
        h = 1;
    size_t j = (size_t)h & (r->kset_cap - 1);
    while (r->kset[j]) {
        if (r->kset[j] == h)
            return false;
        j = (j + 1) & (r->kset_cap - 1);
    }
    r->kset[j] = h;
    return true;
}

/* The index of the counter item of ckref k (added when new). */
static el_err item_of(round *r, size_t k, size_t *out)
{
    const ckref *c = &r->cks[k];
    const char *key = r->ctext.data + c->off;
    uint64_t h = el_fnv1a64(key, c->item_len);
    if ((r->nitems + 1) * 2 > r->imap_cap) {
        size_t cap = r->imap_cap ? r->imap_cap * 2 : 1024;
        size_t *v = calloc(cap, sizeof *v);
        if (!v)
            return EL_ENOMEM;
        for (size_t i = 0; i < r->nitems; i++) {
            size_t j = (size_t)r->items[i].hash & (cap - 1);
            while (v[j])
                j = (j + 1) & (cap - 1);
            v[j] = i + 1;
        }
        free(r->imap);
        r->imap = v;
        r->imap_cap = cap;
    }
    size_t j = (size_t)h & (r->imap_cap - 1);
    while (r->imap[j]) {
        const citem *it = &r->items[r->imap[j] - 1];
        const ckref *o = &r->cks[it->ck];
        if (it->hash == h && o->item_len == c->item_len &&
            memcmp(r->ctext.data + o->off, key, c->item_len) == 0) {
            *out = r->imap[j] - 1;
            return EL_OK;
        }
        j = (j + 1) & (r->imap_cap - 1);
    }
    citem *v = grow(r->items, &r->items_cap, r->nitems + 1, sizeof *v);
    if (!v)
        return EL_ENOMEM;
    r->items = v;
    r->items[r->nitems] = (citem){ .hash = h, .ck = k };
    r->imap[j] = r->nitems + 1;
    *out = r->nitems++;
    return EL_OK;
}

/* ---- inputs ---- */

static el_err open_inputs(ictx *c, el_diag *diag)
{
    const el_incr_opts *o = c->o;
    el_mapping *m = o->mapping;
    size_t n = o->ninputs ? o->ninputs : m->nsources;
    if (o->ninputs && m->nsources > 1 && o->ninputs != m->nsources)
        return el_diag_set(diag, EL_EUSAGE, "%zu inputs given for %zu sources: give one input "
                           "per source, in the mapping's order, or none", o->ninputs,
                           m->nsources);
    c->in = calloc(n ? n : 1, sizeof *c->in);
    if (!c->in)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    bool any_op = false;
    for (size_t i = 0; i < n; i++) {
        input *in = &c->in[c->nin];
        el_source *s = m->sources[m->nsources == 1 ? 0 : i];
        const char *path = o->ninputs ? o->inputs[i] : s->input;
        if (!path)
            return el_diag_set(diag, EL_EUSAGE, "source '%s' has no input: give it \"input\" "
                               "in the mapping or name the file on the command line", s->name);
        in->path = o->ninputs ? strdup(path) : el_mapping_input_path(m, path);
        if (!in->path)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        in->src = s;
        c->nin++;
        el_reader_opts ro = el_source_reader_opts(s, &o->reader);
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_reader_open(in->path, &ro, &in->reader, &d);
        if (err)
            return d.line ? el_diag_set(diag, err, "%s:%llu: %s", in->path,
                                        (unsigned long long)d.line, d.msg)
                          : el_diag_set(diag, err, "%s", d.msg);
        const el_schema *schema = el_reader_schema(in->reader);
        err = el_source_bind(s, schema, &d);
        if (err)
            return el_diag_set(diag, err, "%s: %s", in->path, d.msg);
        in->op_col = (size_t)-1;
        for (size_t k = 0; o->op_column && k < schema->ncols; k++)
            if (strcmp(schema->names[k], o->op_column) == 0)
                in->op_col = k;
        any_op |= in->op_col != (size_t)-1;
    }
    if (o->op_column && !any_op)
        return el_diag_set(diag, EL_EUSAGE, "--op-column '%s': no input has that column",
                           o->op_column);
    return EL_OK;
}

/* ---- reading a round ---- */

/* Records a bad row. EL_ELIMIT past --max-rejects, EL_EIO when the
 * rejects file cannot be written; diag says which. */
static el_err reject(ictx *c, const input *in, const el_diag *why, const el_row *row,
                     el_diag *diag)
{
    el_diag d;
    el_diag_clear(&d);
    c->st->rejected++;
    el_diag at = *why;
    at.line = row->line;
    at.offset = row->offset;
    el_err err = el_rejects_row(c->o->rejects, in->path, &at, el_reader_schema(in->reader), row,
                                &d);
    if (err)
        el_diag_set(diag, err, "%s", d.msg[0] ? d.msg : el_strerror(err));
    return err;
}

/* Adds the row just read to the round. *repeat: its key is in the round
 * already (nothing added; the row starts the next round). */
static el_err add_row(ictx *c, input *in, el_transform *t, const el_row *row, bool *repeat,
                      el_diag *diag)
{
    round *r = &c->rd;
    *repeat = false;
    size_t jm = r->json.len, km = r->keys.len, size; /* size: DynamoDB checks it */
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_transform_row(t, row, &r->json, &r->keys, &size, &d);
    (void)size;
    if (err == EL_EREJECT) {
        return reject(c, in, &d, row, diag);
    }
    if (err)
        return el_diag_set(diag, err, "%s: %s", in->path, el_strerror(err));
    const char *key = r->keys.data + km;
    size_t klen = r->keys.len - km;
    if (!kset_insert(r, el_fnv1a64(key, klen))) {
        el_buf_truncate(&r->json, jm);
        el_buf_truncate(&r->keys, km);
        *repeat = true;
        return EL_OK;
    }
    irow *v = grow(r->rows, &r->rows_cap, r->nrows + 1, sizeof *v);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    r->rows = v;
    irow *ir = &r->rows[r->nrows];
    bool del = false;
    if (in->op_col != (size_t)-1 && in->op_col < row->ncols) {
        const el_value *ov = &row->values[in->op_col];
        del = !ov->is_null && ov->len == 1 && (ov->data[0] == 'D' || ov->data[0] == 'd');
    }
    *ir = (irow){ .json_off = jm, .json_len = r->json.len - jm, .key_off = km,
                  .key_len = klen, .ck_first = r->ncks, .line = row->line,
                  .offset = row->offset, .del = del, .indexed = in->src->index };
    el_incr_row_token(c->o->mapping->table, del ? 'D' : 'P', key, klen, row->offset, ir->tok);
    for (size_t i = 0; i < in->src->ncounters; i++) {
        size_t mark = r->ctext.len, item_len;
        bool skip;
        err = el_counter_render(&in->src->counters[i], row, &r->ctext, &item_len, &skip, &d);
        if (err)
            return el_diag_set(diag, err, "%s:%llu: %s", in->path,
                               (unsigned long long)row->line, d.msg);
        if (skip)
            continue;
        err = el_buf_putc(&r->ctext, '\0');
        ckref *cv = grow(r->cks, &r->cks_cap, r->ncks + 1, sizeof *cv);
        if (err || !cv)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        r->cks = cv;
        r->cks[r->ncks] = (ckref){ .off = mark, .len = r->ctext.len - mark - 1,
                                   .item_len = item_len };
        size_t item;
        err = item_of(r, r->ncks, &item);
        if (err)
            return el_diag_set(diag, err, "out of memory");
        r->cks[r->ncks].item = item;
        r->items[item].rows++;
        r->ncks++;
        ir->nck++;
    }
    r->nrows++;
    return EL_OK;
}

/* ---- grouping ---- */

static el_err new_group(round *r, size_t **out_m)
{
    group *v = grow(r->groups, &r->groups_cap, r->ngroups + 1, sizeof *v);
    if (!v)
        return EL_ENOMEM;
    r->groups = v;
    memset(&r->groups[r->ngroups], 0, sizeof *v);
    *out_m = NULL;
    r->ngroups++;
    return EL_OK;
}

/* Sets g's member list (copied) and the counter items its rows touch. */
static el_err set_members(round *r, group *g, const size_t *m, size_t n)
{
    free(g->m);
    free(g->items);
    g->items = NULL;
    g->nitems = 0;
    g->m = malloc((n ? n : 1) * sizeof *g->m);
    if (!g->m)
        return EL_ENOMEM;
    memcpy(g->m, m, n * sizeof *m);
    g->n = n;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        const irow *ir = &r->rows[m[i]];
        for (size_t k = 0; k < ir->nck; k++) {
            size_t item = r->cks[ir->ck_first + k].item;
            bool seen = false;
            for (size_t j = 0; j < g->nitems && !seen; j++)
                seen = g->items[j] == item;
            if (seen)
                continue;
            size_t *v = grow(g->items, &cap, g->nitems + 1, sizeof *v);
            if (!v)
                return EL_ENOMEM;
            g->items = v;
            g->items[g->nitems++] = item;
        }
    }
    return EL_OK;
}

/* Groups the round's rows: each row goes with the rows sharing its most
 * shared counter item, in transactions of at most 100 actions. */
static el_err form_groups(ictx *c)
{
    round *r = &c->rd;
    size_t n = r->nrows;
    size_t *key = malloc((n ? n : 1) * sizeof *key);   /* group item, or SIZE_MAX: alone */
    size_t *start = calloc(r->nitems + 2, sizeof *start);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t *stamp = calloc(r->nitems + 1, sizeof *stamp);
    size_t *cur = malloc(EL_DDB_TXN_MAX_ACTIONS * sizeof *cur);
    el_err err = key && start && order && stamp && cur ? EL_OK : EL_ENOMEM;
    size_t nalone = 0;
    for (size_t i = 0; !err && i < n; i++) {
        const irow *ir = &r->rows[i];
        key[i] = SIZE_MAX;
        size_t best = 1;
        for (size_t k = 0; !c->o->no_grouping && k < ir->nck; k++) {
            size_t item = r->cks[ir->ck_first + k].item;
            if (r->items[item].rows > best) {
                best = r->items[item].rows;
                key[i] = item;
            }
        }
        if (key[i] == SIZE_MAX)
            nalone++;
        else
            start[key[i] + 1]++;
    }
    /* counting sort: rows of item 0, item 1, ..., then the rows alone */
    for (size_t i = 0; !err && i < r->nitems; i++)
        start[i + 1] += start[i];
    size_t alone_at = n - nalone;
    for (size_t i = 0; !err && i < n; i++)
        order[key[i] == SIZE_MAX ? alone_at++ : start[key[i]]++] = i;
    size_t ncur = 0, gid = 0, distinct = 0, bytes = 0, cur_key = SIZE_MAX;
    for (size_t p = 0; !err && p <= n; p++) {
        size_t row = p < n ? order[p] : SIZE_MAX;
        const irow *ir = p < n ? &r->rows[row] : NULL;
        size_t add_items = 0;
        if (ir)
            for (size_t k = 0; k < ir->nck; k++)
                add_items += stamp[r->cks[ir->ck_first + k].item] != gid + 1;
        bool close = ncur > 0 &&
                     (!ir || key[row] == SIZE_MAX || key[row] != cur_key ||
                      ncur + 1 + distinct + add_items > EL_DDB_TXN_MAX_ACTIONS ||
                      bytes + ir->json_len > TXN_MAX_BYTES);
        if (close) {
            size_t *unused;
            err = new_group(r, &unused);
            if (!err)
                err = set_members(r, &r->groups[r->ngroups - 1], cur, ncur);
            ncur = 0;
            distinct = 0;
            bytes = 0;
            gid++;
            add_items = 0;
            if (ir)
                for (size_t k = 0; k < ir->nck; k++)
                    add_items += stamp[r->cks[ir->ck_first + k].item] != gid + 1;
        }
        if (!ir || err)
            continue;
        cur[ncur++] = row;
        cur_key = key[row];
        bytes += ir->json_len;
        for (size_t k = 0; k < ir->nck; k++) {
            size_t item = r->cks[ir->ck_first + k].item;
            if (stamp[item] != gid + 1) {
                stamp[item] = gid + 1;
                distinct++;
            }
        }
        (void)add_items;
    }
    free(key);
    free(start);
    free(order);
    free(stamp);
    free(cur);
    return err;
}

/* ---- transactions ---- */

static el_err put_key(el_buf *b, const el_mapping *m, const char *key, size_t klen)
{
    size_t pklen = strnlen(key, klen);
    const char *sk = pklen < klen ? key + pklen + 1 : "";
    size_t sklen = pklen < klen ? klen - pklen - 1 : 0;
    el_err err = el_buf_putc(b, '{');
    err = err ? err : el_json_put_string(b, m->pk_attr, strlen(m->pk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, key, pklen);
    err = err ? err : el_buf_puts(b, "},");
    err = err ? err : el_json_put_string(b, m->sk_attr, strlen(m->sk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, sk, sklen);
    return err ? err : el_buf_puts(b, "}}");
}

typedef struct attr_delta {
    const char *name;
    size_t len;
    long long delta;
} attr_delta;

static el_err build_txn(ictx *c, group *g)
{
    round *r = &c->rd;
    const el_mapping *m = c->o->mapping;
    el_buf *b = &c->body;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"TransactItems\":[");
    double wcu = 0;
    size_t actions = 0;
    for (size_t i = 0; !err && i < g->n; i++) {
        const irow *ir = &r->rows[g->m[i]];
        err = el_buf_puts(b, i ? "," : "");
        if (ir->del) {
            err = err ? err : el_buf_puts(b, "{\"Delete\":{\"Key\":");
            err = err ? err : put_key(b, m, r->keys.data + ir->key_off, ir->key_len);
            err = err ? err : el_buf_puts(b, ",\"ConditionExpression\":\"attribute_exists(#p)\"");
        } else {
            err = err ? err : el_buf_puts(b, "{\"Put\":{\"Item\":");
            err = err ? err : el_buf_append(b, r->json.data + ir->json_off, ir->json_len);
            err = err ? err : el_buf_puts(b, ",\"ConditionExpression\":"
                                             "\"attribute_not_exists(#p)\"");
        }
        err = err ? err : el_buf_puts(b, ",\"ExpressionAttributeNames\":{\"#p\":");
        err = err ? err : el_json_put_string(b, m->pk_attr, strlen(m->pk_attr));
        err = err ? err : el_buf_puts(b, "},\"TableName\":");
        err = err ? err : el_json_put_string(b, m->table, strlen(m->table));
        err = err ? err : el_buf_puts(b, "}}");
        wcu += ir->indexed ? 4 : 2;
        actions++;
    }
    attr_delta ad[EL_DDB_TXN_MAX_ACTIONS];
    for (size_t t = 0; !err && t < g->nitems; t++) {
        size_t item = g->items[t], na = 0;
        for (size_t i = 0; i < g->n; i++) {
            const irow *ir = &r->rows[g->m[i]];
            for (size_t k = 0; k < ir->nck; k++) {
                const ckref *ck = &r->cks[ir->ck_first + k];
                if (ck->item != item)
                    continue;
                const char *name = r->ctext.data + ck->off + ck->item_len + 1;
                size_t len = ck->len - ck->item_len - 1, a = 0;
                while (a < na && !(ad[a].len == len && memcmp(ad[a].name, name, len) == 0))
                    a++;
                if (a == na) {
                    if (na == EL_DDB_TXN_MAX_ACTIONS)
                        continue; /* more attributes than that on one item: not a mapping */
                    ad[na++] = (attr_delta){ name, len, 0 };
                }
                ad[a].delta += ir->del ? -1 : 1;
            }
        }
        size_t used = 0;
        for (size_t a = 0; a < na; a++)
            used += ad[a].delta != 0;
        if (used == 0)
            continue; /* the group's changes to this item cancel out */
        const ckref *ck = &r->cks[r->items[item].ck];
        err = el_buf_puts(b, actions ? ",{\"Update\":{\"Key\":" : "{\"Update\":{\"Key\":");
        err = err ? err : put_key(b, m, r->ctext.data + ck->off, ck->item_len);
        err = err ? err : el_buf_puts(b, ",\"UpdateExpression\":\"ADD ");
        for (size_t a = 0, k = 0; !err && a < na; a++)
            if (ad[a].delta)
                err = el_buf_printf(b, "%s#c%zu :d%zu", k++ ? ", " : "", a, a);
        err = err ? err : el_buf_puts(b, "\",\"ExpressionAttributeNames\":{");
        for (size_t a = 0, k = 0; !err && a < na; a++) {
            if (!ad[a].delta)
                continue;
            err = el_buf_printf(b, "%s\"#c%zu\":", k++ ? "," : "", a);
            err = err ? err : el_json_put_string(b, ad[a].name, ad[a].len);
        }
        err = err ? err : el_buf_puts(b, "},\"ExpressionAttributeValues\":{");
        for (size_t a = 0, k = 0; !err && a < na; a++)
            if (ad[a].delta)
                err = el_buf_printf(b, "%s\":d%zu\":{\"N\":\"%lld\"}", k++ ? "," : "", a,
                                    ad[a].delta);
        err = err ? err : el_buf_puts(b, "},\"TableName\":");
        err = err ? err : el_json_put_string(b, m->table, strlen(m->table));
        err = err ? err : el_buf_puts(b, "}}");
        wcu += 2;
        actions++;
    }
    char token[33];
    uint64_t (*toks)[2] = malloc((g->n ? g->n : 1) * sizeof *toks);
    if (!toks)
        return EL_ENOMEM;
    for (size_t i = 0; i < g->n; i++) {
        toks[i][0] = r->rows[g->m[i]].tok[0];
        toks[i][1] = r->rows[g->m[i]].tok[1];
    }
    el_incr_txn_token((const uint64_t (*)[2])toks, g->n, c->run_id, g->variant, token);
    free(toks);
    err = err ? err : el_buf_printf(b, "],\"ClientRequestToken\":\"%s\","
                                       "\"ReturnConsumedCapacity\":\"TOTAL\"}", token);
    g->wcu_est = wcu;
    if (err)
        return err;
    el_ddb_req_free(g->req);
    g->req = NULL;
    return el_ddb_req_new(c->o->ddb, "TransactWriteItems", b, (void *)(uintptr_t)(g - r->groups),
                          &g->req);
}

/* ConsumedCapacity of a TransactWriteItems answer; *replay when DynamoDB
 * reported only reads (the answer to a token it had seen: nothing written). */
static double txn_consumed(yajl_val root, bool *replay)
{
    *replay = false;
    yajl_val cc = yajl_tree_get(root, (const char *[]){ "ConsumedCapacity", NULL }, yajl_t_array);
    double units = 0;
    bool reads = false, writes = false;
    for (size_t i = 0; cc && i < cc->u.array.len; i++) {
        yajl_val e = cc->u.array.values[i];
        yajl_val u = yajl_tree_get(e, (const char *[]){ "CapacityUnits", NULL }, yajl_t_number);
        if (u)
            units += YAJL_GET_DOUBLE(u);
        reads |= yajl_tree_get(e, (const char *[]){ "ReadCapacityUnits", NULL },
                               yajl_t_number) != NULL;
        writes |= yajl_tree_get(e, (const char *[]){ "WriteCapacityUnits", NULL },
                                yajl_t_number) != NULL;
    }
    *replay = reads && !writes;
    return units;
}

static yajl_val parse_body(const char *body, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, body, len);
    copy[len] = '\0';
    yajl_val v = yajl_tree_parse(copy, NULL, 0);
    free(copy);
    return v;
}

static void release(ictx *c, group *g)
{
    for (size_t i = 0; i < g->nitems; i++)
        c->rd.items[g->items[i]].busy = false;
}

static void backoff(ictx *c, group *g, double now)
{
    g->not_before = now + el_backoff_ms(g->attempt, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS,
                                        el_rand_unit(&c->rng));
    if (g->attempt < 30)
        g->attempt++;
}

static el_err reject_member(ictx *c, const irow *ir, const input *in, const el_ddb_result *res,
                            el_diag *diag)
{
    char reason[700];
    snprintf(reason, sizeof reason, "DynamoDB refused the transaction: %s: %s", res->error_type,
             res->message);
    el_diag d;
    el_diag_clear(&d);
    c->st->rejected++;
    el_err err = el_rejects_item(c->o->rejects, in->path, ir->line, reason,
                                 c->rd.json.data + ir->json_off, ir->json_len, &d);
    if (err)
        return el_diag_set(diag, err, "%s", d.msg);
    return EL_OK;
}

/* One transaction per member of g (g is done). */
static el_err split(ictx *c, size_t gi)
{
    round *r = &c->rd;
    c->st->splits++;
    r->groups[gi].done = true;
    size_t n = r->groups[gi].n;
    for (size_t i = 0; i < n; i++) {
        size_t row = r->groups[gi].m[i]; /* re-read: new_group may move groups */
        size_t *unused;
        el_err err = new_group(r, &unused);
        if (!err)
            err = set_members(r, &r->groups[r->ngroups - 1], &row, 1);
        if (err)
            return err;
    }
    return EL_OK;
}

static bool is_conflict(const char *code)
{
    return strcmp(code, "TransactionConflict") == 0 || strcmp(code, "ThrottlingError") == 0 ||
           strcmp(code, "ProvisionedThroughputExceeded") == 0 ||
           strcmp(code, "RequestLimitExceeded") == 0 || strcmp(code, "Throttling") == 0;
}

/* A TransactionCanceledException for group gi. */
static el_err on_cancelled(ictx *c, size_t gi, const input *in, const el_ddb_result *res,
                           double now, el_diag *diag)
{
    round *r = &c->rd;
    group *g = &r->groups[gi];
    size_t len;
    const char *body = el_ddb_req_response(g->req, &len);
    yajl_val root = parse_body(body, len);
    yajl_val reasons = root ? yajl_tree_get(root, (const char *[]){ "CancellationReasons", NULL },
                                            yajl_t_array)
                            : NULL;
    bool conflict = false, throttle = false;
    size_t nfailed = 0;
    bool *failed = calloc(g->n ? g->n : 1, sizeof *failed);
    if (!failed) {
        yajl_tree_free(root);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; reasons && i < reasons->u.array.len; i++) {
        yajl_val code = yajl_tree_get(reasons->u.array.values[i], (const char *[]){ "Code", NULL },
                                      yajl_t_string);
        const char *s = code ? YAJL_GET_STRING(code) : "";
        if (is_conflict(s)) {
            conflict = true;
            throttle |= strcmp(s, "TransactionConflict") != 0;
        } else if (strcmp(s, "ConditionalCheckFailed") == 0 && i < g->n) {
            failed[i] = true;
            nfailed++;
        }
    }
    if (!reasons) {
        /* no body to read: the message lists the codes, "[ConditionalCheckFailed, None]" */
        const char *lb = strchr(res->message, '[');
        size_t i = 0;
        for (const char *p = lb ? lb + 1 : NULL; p && *p && *p != ']'; i++) {
            const char *e = p + strcspn(p, ",]");
            size_t l = (size_t)(e - p);
            if (l == 22 && memcmp(p, "ConditionalCheckFailed", 22) == 0 && i < g->n) {
                failed[i] = true;
                nfailed++;
            } else if (l == 19 && memcmp(p, "TransactionConflict", 19) == 0) {
                conflict = true;
            }
            p = *e == ',' ? e + 1 + (e[1] == ' ') : e;
        }
    }
    yajl_tree_free(root);
    el_err err = EL_OK;
    if (conflict) {
        /* someone else touched an item: the same rows again, later */
        c->st->conflicts++;
        c->st->retries++;
        if (throttle) {
            c->st->throttled++;
            el_rate_on_throttle(&c->rate, now);
        }
        g->variant++;
        backoff(c, g, now);
        err = build_txn(c, g);
    } else if (nfailed > 0) {
        /* those rows' conditions failed: duplicates; the rest goes again */
        size_t keep = 0;
        for (size_t i = 0; i < g->n; i++) {
            const irow *ir = &r->rows[g->m[i]];
            if (failed[i]) {
                if (ir->del)
                    c->st->absent++;
                else
                    c->st->duplicates++;
            } else {
                g->m[keep++] = g->m[i];
            }
        }
        if (keep == 0) {
            g->done = true;
        } else {
            c->st->retries++;
            size_t *m = malloc(keep * sizeof *m);
            err = m ? EL_OK : EL_ENOMEM;
            if (!err) {
                memcpy(m, g->m, keep * sizeof *m);
                err = set_members(r, g, m, keep);
                free(m);
            }
            g->variant++;
            g->attempt = 0;
            g->not_before = 0;
            if (!err)
                err = build_txn(c, g);
        }
    } else if (g->n > 1) {
        err = split(c, gi);
    } else {
        err = reject_member(c, &r->rows[g->m[0]], in, res, diag);
        r->groups[gi].done = true;
    }
    free(failed);
    if (err && !diag->msg[0])
        el_diag_set(diag, err, "out of memory");
    return err;
}

static el_err on_txn_done(ictx *c, size_t gi, const input *in, CURLcode code, el_diag *diag)
{
    round *r = &c->rd;
    group *g = &r->groups[gi];
    el_ddb_result res;
    el_ddb_req_finish(g->req, code, &res);
    release(c, g);
    double now = el_now_ms();
    switch (res.outcome) {
    case EL_DDB_SUCCESS: {
        size_t len;
        const char *body = el_ddb_req_response(g->req, &len);
        yajl_val root = parse_body(body, len);
        bool replay = false;
        double units = root ? txn_consumed(root, &replay) : 0;
        yajl_tree_free(root);
        c->st->wcu_consumed += units;
        el_rate_settle(&c->rate, g->wcu_est, units);
        el_rate_on_success(&c->rate);
        c->st->transactions++;
        for (size_t i = 0; i < g->n; i++) {
            if (replay)
                c->st->replayed++;
            else if (r->rows[g->m[i]].del)
                c->st->deleted++;
            else
                c->st->added++;
        }
        g->done = true;
        return EL_OK;
    }
    case EL_DDB_THROTTLED:
        c->st->throttled++;
        c->st->retries++;
        el_rate_on_throttle(&c->rate, now);
        backoff(c, g, now);
        return EL_OK;
    case EL_DDB_TRANSIENT:
        if (g->first_failure == 0)
            g->first_failure = now;
        else if (now - g->first_failure > c->o->max_retry_time_s * 1000.0)
            return el_diag_set(diag, res.http_status ? EL_ESERVICE : EL_ENET,
                               "TransactWriteItems failed for %.0f s, giving up: %s%s%s",
                               (now - g->first_failure) / 1000.0, res.error_type,
                               res.error_type[0] ? ": " : "", res.message);
        c->st->retries++;
        backoff(c, g, now); /* same token: a lost reply is answered as a replay */
        return EL_OK;
    case EL_DDB_REJECTED:
        g->first_failure = 0;
        if (strcmp(res.error_type, "TransactionCanceledException") == 0)
            return on_cancelled(c, gi, in, &res, now, diag);
        if (strcmp(res.error_type, "TransactionInProgressException") == 0) {
            c->st->retries++;
            backoff(c, g, now); /* the first send is still being applied: ask again */
            return EL_OK;
        }
        if (strcmp(res.error_type, "IdempotentParameterMismatchException") == 0) {
            c->st->retries++;
            g->variant++;
            el_err err = build_txn(c, g);
            return err ? el_diag_set(diag, err, "out of memory") : EL_OK;
        }
        if (g->n > 1) {
            el_err err = split(c, gi);
            return err ? el_diag_set(diag, err, "out of memory") : EL_OK;
        }
        g->done = true;
        return reject_member(c, &r->rows[g->m[0]], in, &res, diag);
    case EL_DDB_FATAL:
        break;
    }
    return el_ddb_fail(diag, &res, el_ddb_config(c->o->ddb), "TransactWriteItems");
}

/* Drives the round's transactions until each is done. */
static el_err apply_round(ictx *c, const input *in, el_diag *diag)
{
    round *r = &c->rd;
    el_err err = form_groups(c);
    if (err)
        return el_diag_set(diag, err, "out of memory");
    size_t first = 0;
    while (!err) {
        if (stopped(c))
            return el_diag_set(diag, EL_EINTR, "interrupted");
        while (first < r->ngroups && r->groups[first].done)
            first++;
        if (first == r->ngroups && c->wire == 0)
            break;
        double now = el_now_ms(), due = -1;
        for (size_t gi = first; gi < r->ngroups && (int)c->wire < el_rate_window(&c->rate);
             gi++) {
            group *g = &r->groups[gi];
            if (g->done || g->on_wire)
                continue;
            if (g->not_before > now) {
                if (due < 0 || g->not_before < due)
                    due = g->not_before;
                continue;
            }
            bool busy = false;
            for (size_t i = 0; i < g->nitems && !busy; i++)
                busy = r->items[g->items[i]].busy;
            if (busy)
                continue;
            if (!g->req) {
                err = build_txn(c, g);
                if (err) {
                    el_diag_set(diag, err, "TransactWriteItems request: %s", el_strerror(err));
                    break;
                }
            }
            if (c->o->max_wcu > 0 && !el_rate_take(&c->rate, g->wcu_est, now)) {
                double wait = now + el_rate_wait_ms(&c->rate, g->wcu_est, now);
                if (due < 0 || wait < due)
                    due = wait;
                break;
            }
            el_ddb_req_reset(g->req);
            if (curl_multi_add_handle(c->multi, el_ddb_req_handle(g->req)) != CURLM_OK) {
                err = el_diag_set(diag, EL_ENET, "cannot start a transfer");
                break;
            }
            for (size_t i = 0; i < g->nitems; i++)
                r->items[g->items[i]].busy = true;
            g->on_wire = true;
            c->wire++;
            c->st->requests++;
        }
        if (err)
            break;
        int running;
        curl_multi_perform(c->multi, &running);
        CURLMsg *msg;
        int left;
        while (!err && (msg = curl_multi_info_read(c->multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&req);
            size_t gi = (size_t)(uintptr_t)el_ddb_req_user(req);
            curl_multi_remove_handle(c->multi, msg->easy_handle);
            r->groups[gi].on_wire = false;
            c->wire--;
            err = on_txn_done(c, gi, in, msg->data.result, diag);
            if (r->groups[gi].done) {
                el_ddb_req_free(r->groups[gi].req);
                r->groups[gi].req = NULL;
            }
        }
        if (err)
            break;
        report_progress(c, false);
        int timeout = 100;
        now = el_now_ms();
        if (due >= 0 && due - now < timeout)
            timeout = due > now ? (int)(due - now) + 1 : 0;
        curl_multi_poll(c->multi, NULL, 0, timeout, NULL);
    }
    return err;
}

static el_err apply_input(ictx *c, input *in, el_diag *diag)
{
    el_transform *t;
    if (el_transform_new(c->o->mapping, in->src, &t))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (c->plan)
        el_transform_set_plan(t, c->plan, el_plan_find_source(c->plan, in->src->name));
    el_row row;
    bool carry = false, eof = false;
    el_err err = EL_OK;
    while (!err && !eof) {
        round_reset(&c->rd);
        c->round_bytes0 = bytes_read(c, NULL);
        c->round_settled0 = settled(c->st);
        while (!err && c->rd.nrows < EL_INCR_ROUND_ROWS && c->rd.json.len < ROUND_JSON_BYTES) {
            el_diag d;
            el_diag_clear(&d);
            if (!carry) {
                err = el_reader_next(in->reader, &row, &d);
                if (err == EL_EOF) {
                    err = EL_OK;
                    eof = true;
                    break;
                }
                if (err == EL_EREJECT) {
                    c->st->rows_read++;
                    err = reject(c, in, &d, &row, diag);
                    continue;
                }
                if (err) {
                    el_diag_set(diag, err, "%s:%llu: %s", in->path, (unsigned long long)d.line,
                                d.msg);
                    break;
                }
                c->st->rows_read++;
            }
            bool repeat;
            err = add_row(c, in, t, &row, &repeat, diag);
            carry = repeat;
            if (repeat)
                break;
        }
        c->round_bytes1 = bytes_read(c, NULL);
        c->round_rows = c->rd.nrows;
        c->cur = in;
        if (!err && c->rd.nrows > 0)
            err = apply_round(c, in, diag);
        c->round_rows = 0;
        if (stopped(c) && !err)
            err = el_diag_set(diag, EL_EINTR, "interrupted");
    }
    el_transform_free(t);
    return err;
}

el_err el_incr_run(const el_incr_opts *o, el_incr_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_now_ms();
    ictx c = { .o = o, .st = st, .rng = (uint64_t)t0 ^ 0x1c4eULL, .run_id = o->run_id,
               .t0 = t0, .last_progress = t0 };
    if (!c.run_id) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
                        ((uint64_t)getpid() << 32);
        c.run_id = el_rand_next(&seed);
    }
    el_buf_init(&c.rd.json, (size_t)1 << 40);
    el_buf_init(&c.rd.keys, (size_t)1 << 40);
    el_buf_init(&c.rd.ctext, (size_t)1 << 40);
    el_buf_init(&c.body, 16u * 1024 * 1024);
    c.rd.kset_cap = 65536; /* a power of two over 2 * EL_INCR_ROUND_ROWS */
    c.rd.kset = calloc(c.rd.kset_cap, sizeof *c.rd.kset);
    int conc = o->concurrency > 0 ? o->concurrency : 16;
    el_rate_init(&c.rate, conc, o->max_wcu, t0);
    c.multi = curl_multi_init();
    el_err err = c.rd.kset && c.multi ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err) {
        curl_multi_setopt(c.multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)conc);
        curl_multi_setopt(c.multi, CURLMOPT_MAXCONNECTS, (long)conc);
        err = open_inputs(&c, diag);
    }
    if (!err && o->plan_path)
        err = el_plan_load(o->plan_path, &c.plan, diag);
    for (size_t i = 0; !err && i < c.nin; i++)
        err = apply_input(&c, &c.in[i], diag);
    if (c.nin > 0)
        report_progress(&c, true); /* ends a bar's line before the summary */
    /* transactions still out (error, interrupt) are dropped: the rows were
     * not counted, and applying the delta again is exact */
    for (size_t i = 0; i < c.rd.ngroups; i++)
        if (c.rd.groups[i].on_wire)
            curl_multi_remove_handle(c.multi, el_ddb_req_handle(c.rd.groups[i].req));
    round_free(&c.rd);
    for (size_t i = 0; i < c.nin; i++) {
        el_reader_free(c.in[i].reader);
        free(c.in[i].path);
    }
    free(c.in);
    el_plan_free(c.plan);
    if (c.multi)
        curl_multi_cleanup(c.multi);
    el_buf_free(&c.body);
    st->elapsed_s = (el_now_ms() - t0) / 1000.0;
    return err;
}
