/*
 * round.c - a round of an incremental load: its rows, counter items,
 * groups and transaction bodies.
 *
 * DESIGN: a counter item is touched by one transaction in flight at a
 * time (incremental.c keeps that), so a hot item's rows are grouped into
 * few transactions with one ADD of their net change each, instead of many
 * transactions cancelling each other with TransactionConflict: every row
 * goes with the rows sharing its most shared counter item, up to 100
 * actions. Row and transaction tokens make a resend of the same work a
 * replay DynamoDB recognises (ClientRequestToken), never a second write.
 * Everything a round allocates is freed when it is reset.
 */
#include "pipeline/incremental/incr_round.h"

#include <stdio.h>    /* snprintf */
#include <stdint.h>   /* SIZE_MAX */
#include <stdlib.h>   /* calloc, free, malloc */
#include <string.h>   /* memcmp, memcpy, strlen */

#include "common/hash.h"       /* el_fnv1a64 */
#include "common/vec.h"        /* el_grow */
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/counters/counters.h" /* el_counter_render, el_counters_fingerprint */

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

/* ---- the round ---- */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    return el_grow(p, cap, need, size, 64);
}

void incr_round_reset(incr_round *r)
{
    for (size_t i = 0; i < r->ngroups; i++) {
        free(r->groups[i].m);
        free(r->groups[i].items);
        free(r->groups[i].puts);
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

void incr_round_free(incr_round *r)
{
    incr_round_reset(r);
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
static bool kset_insert(incr_round *r, uint64_t h)
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
static el_err item_of(incr_round *r, size_t k, size_t *out)
{
    const incr_ckref *c = &r->cks[k];
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
        const incr_item *it = &r->items[r->imap[j] - 1];
        const incr_ckref *o = &r->cks[it->ck];
        if (it->hash == h && o->item_len == c->item_len &&
            memcmp(r->ctext.data + o->off, key, c->item_len) == 0) {
            *out = r->imap[j] - 1;
            return EL_OK;
        }
        j = (j + 1) & (r->imap_cap - 1);
    }
    incr_item *v = grow(r->items, &r->items_cap, r->nitems + 1, sizeof *v);
    if (!v)
        return EL_ENOMEM;
    r->items = v;
    r->items[r->nitems] = (incr_item){ .hash = h, .ck = k };
    r->imap[j] = r->nitems + 1;
    *out = r->nitems++;
    return EL_OK;
}

el_err incr_round_init(incr_round *r)
{
    memset(r, 0, sizeof *r);
    el_buf_init(&r->json, (size_t)1 << 40);
    el_buf_init(&r->keys, (size_t)1 << 40);
    el_buf_init(&r->ctext, (size_t)1 << 40);
    r->kset_cap = 65536; /* a power of two over 2 * EL_INCR_ROUND_ROWS */
    r->kset = calloc(r->kset_cap, sizeof *r->kset);
    return r->kset ? EL_OK : EL_ENOMEM;
}

/* ---- rows ---- */

el_err incr_round_add(incr_round *r, const el_mapping *m, const el_source *src, el_transform *t,
                      const el_row *row, bool del, bool *repeat, el_diag *diag)
{
    *repeat = false;
    size_t jm = r->json.len, km = r->keys.len, size; /* DynamoDB's size of the item */
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_transform_row(t, row, &r->json, &r->keys, &size, &d);
    if (err == EL_EREJECT) {
        *diag = d;
        return err;
    }
    if (err)
        return el_diag_set(diag, err, "%s", el_strerror(err));
    return incr_round_add_item(r, m, src, row, jm, km, size, del, repeat, diag);
}

el_err incr_round_add_item(incr_round *r, const el_mapping *m, const el_source *src,
                           const el_row *row, size_t jm, size_t km, size_t size, bool del,
                           bool *repeat, el_diag *diag)
{
    *repeat = false;
    el_diag d;
    el_diag_clear(&d);
    el_err err;
    const char *key = r->keys.data + km;
    size_t klen = r->keys.len - km;
    if (!kset_insert(r, el_fnv1a64(key, klen))) {
        el_buf_truncate(&r->json, jm);
        el_buf_truncate(&r->keys, km);
        *repeat = true;
        return EL_OK;
    }
    incr_row *v = grow(r->rows, &r->rows_cap, r->nrows + 1, sizeof *v);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    r->rows = v;
    incr_row *ir = &r->rows[r->nrows];
    *ir = (incr_row){ .json_off = jm, .json_len = r->json.len - jm, .key_off = km,
                  .key_len = klen, .ck_first = r->ncks, .line = row->line,
                  .offset = row->offset, .del = del, .indexed = src->index,
                  .size = size };
    el_incr_row_token(m->table, del ? 'D' : 'P', key, klen, row->offset, ir->tok);
    for (size_t i = 0; i < src->ncounters; i++) {
        size_t mark = r->ctext.len, item_len;
        bool skip;
        err = el_counter_render(&src->counters[i], row, &r->ctext, &item_len, &skip, &d);
        if (err)
            return el_diag_at(diag, err, row->line, 0, row->offset, "%s", d.msg);
        if (skip)
            continue;
        err = el_buf_putc(&r->ctext, '\0');
        incr_ckref *cv = grow(r->cks, &r->cks_cap, r->ncks + 1, sizeof *cv);
        if (err || !cv)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        r->cks = cv;
        r->cks[r->ncks] = (incr_ckref){ .off = mark, .len = r->ctext.len - mark - 1,
                                   .item_len = item_len };
        size_t item;
        err = item_of(r, r->ncks, &item);
        if (err)
            return el_diag_set(diag, err, "out of memory");
        r->cks[r->ncks].item = item;
        bool counted = false; /* two counters of the row on one item: one row */
        for (size_t k = ir->ck_first; k < r->ncks && !counted; k++)
            counted = r->cks[k].item == item;
        if (!counted)
            r->items[item].rows++;
        r->ncks++;
        ir->nck++;
    }
    r->nrows++;
    return EL_OK;
}

/* ---- groups ---- */

static el_err new_group(incr_round *r)
{
    incr_group *v = grow(r->groups, &r->groups_cap, r->ngroups + 1, sizeof *v);
    if (!v)
        return EL_ENOMEM;
    r->groups = v;
    memset(&r->groups[r->ngroups], 0, sizeof *v);
    r->ngroups++;
    return EL_OK;
}

/* The counter item whose key is "PK\0SK" key/len, or SIZE_MAX: no row of
 * the round counts on it. */
static size_t find_item(const incr_round *r, const char *key, size_t len)
{
    if (!r->imap_cap)
        return SIZE_MAX;
    uint64_t h = el_fnv1a64(key, len);
    for (size_t j = (size_t)h & (r->imap_cap - 1); r->imap[j]; j = (j + 1) & (r->imap_cap - 1)) {
        const incr_item *it = &r->items[r->imap[j] - 1];
        const incr_ckref *o = &r->cks[it->ck];
        if (it->hash == h && o->item_len == len && memcmp(r->ctext.data + o->off, key, len) == 0)
            return r->imap[j] - 1;
    }
    return SIZE_MAX;
}

/* Sets g's member list (copied) and the counter items its rows touch. */
el_err incr_group_set_members(incr_round *r, incr_group *g, const size_t *m, size_t n)
{
    free(g->m);
    free(g->items);
    for (size_t i = 0; !g->done && i < g->nputs; i++)
        r->items[g->puts[i]].puts_pending--;
    free(g->puts);
    g->items = g->puts = NULL;
    g->nitems = g->nputs = 0;
    g->m = malloc((n ? n : 1) * sizeof *g->m);
    if (!g->m)
        return EL_ENOMEM;
    memcpy(g->m, m, n * sizeof *m);
    g->n = n;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        const incr_row *ir = &r->rows[m[i]];
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
    size_t pcap = 0;
    for (size_t i = 0; i < n; i++) {
        const incr_row *ir = &r->rows[m[i]];
        size_t own = find_item(r, r->keys.data + ir->key_off, ir->key_len);
        if (own == SIZE_MAX)
            continue;
        size_t *v = grow(g->puts, &pcap, g->nputs + 1, sizeof *v);
        if (!v)
            return EL_ENOMEM;
        g->puts = v;
        g->puts[g->nputs++] = own; /* a round holds an item key once: no repeats */
        r->items[own].puts_pending++;
    }
    return EL_OK;
}

void incr_group_finish(incr_round *r, incr_group *g)
{
    if (g->done)
        return;
    for (size_t i = 0; i < g->nputs; i++)
        r->items[g->puts[i]].puts_pending--;
    g->done = true;
}

bool incr_group_waits(const incr_round *r, const incr_group *g)
{
    if (g->nputs > 0)
        return false;
    for (size_t i = 0; i < g->nitems; i++)
        if (r->items[g->items[i]].puts_pending > 0)
            return true;
    return false;
}

/* True when row ir cannot join the transaction whose counter items carry
 * stamp and whose own items carry put, both == g: DynamoDB refuses a
 * transaction with two actions on one item, and a row's Put (or Delete)
 * of an item another row adds to is two. own: ir's item as a counter
 * item, or SIZE_MAX. */
static bool clashes(const incr_round *r, const incr_row *ir, size_t own, const size_t *stamp,
                    const size_t *put, size_t g)
{
    if (own != SIZE_MAX && (stamp[own] == g || put[own] == g))
        return true;
    for (size_t k = 0; k < ir->nck; k++)
        if (put[r->cks[ir->ck_first + k].item] == g)
            return true;
    return false;
}

/* The transactions that Put (or Delete) an item other rows add to go
 * first, each keeping the item busy while it runs: a Put's "not there
 * yet" condition would fail on an item a counter's ADD made first. A
 * stable reorder: the rest keep their order. */
static el_err puts_first(incr_round *r)
{
    size_t n = r->ngroups, at = 0;
    incr_group *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return EL_ENOMEM;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if ((r->groups[i].nputs > 0) == (pass == 0))
                v[at++] = r->groups[i];
    memcpy(r->groups, v, n * sizeof *v);
    free(v);
    return EL_OK;
}

/* Groups the round's rows: each row goes with the rows sharing its most
 * shared counter item, in transactions of at most 100 actions. */
el_err incr_round_group(incr_round *r, bool no_grouping)
{
    size_t n = r->nrows;
    size_t *key = malloc((n ? n : 1) * sizeof *key);   /* group item, or SIZE_MAX: alone */
    size_t *start = calloc(r->nitems + 2, sizeof *start);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t *stamp = calloc(r->nitems + 1, sizeof *stamp);
    size_t *cur = malloc(EL_DDB_TXN_MAX_ACTIONS * sizeof *cur);
    size_t *own = malloc((n ? n : 1) * sizeof *own);     /* row's item as a counter item */
    size_t *put = calloc(r->nitems + 1, sizeof *put);    /* gid + 1: a member writes it */
    el_err err = key && start && order && stamp && cur && own && put ? EL_OK : EL_ENOMEM;
    size_t nalone = 0;
    for (size_t i = 0; !err && i < n; i++) {
        const incr_row *ir = &r->rows[i];
        key[i] = SIZE_MAX;
        own[i] = find_item(r, r->keys.data + ir->key_off, ir->key_len);
        size_t best = 1;
        for (size_t k = 0; !no_grouping && k < ir->nck; k++) {
            size_t item = r->cks[ir->ck_first + k].item;
            if (item == own[i]) { /* counts on its own item: two actions on it */
                key[i] = SIZE_MAX;
                break;
            }
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
        const incr_row *ir = p < n ? &r->rows[row] : NULL;
        size_t add_items = 0;
        if (ir)
            for (size_t k = 0; k < ir->nck; k++)
                add_items += stamp[r->cks[ir->ck_first + k].item] != gid + 1;
        bool close = ncur > 0 &&
                     (!ir || key[row] == SIZE_MAX || key[row] != cur_key ||
                      ncur + 1 + distinct + add_items > EL_DDB_TXN_MAX_ACTIONS ||
                      bytes + ir->json_len > EL_INCR_TXN_MAX_BYTES ||
                      clashes(r, ir, own[row], stamp, put, gid + 1));
        if (close) {
            err = new_group(r);
            if (!err)
                err = incr_group_set_members(r, &r->groups[r->ngroups - 1], cur, ncur);
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
        if (own[row] != SIZE_MAX)
            put[own[row]] = gid + 1;
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
    free(own);
    free(put);
    return err ? err : puts_first(r);
}


el_err incr_round_split(incr_round *r, size_t gi)
{
    incr_group_finish(r, &r->groups[gi]);
    size_t n = r->groups[gi].n;
    for (size_t i = 0; i < n; i++) {
        size_t row = r->groups[gi].m[i]; /* re-read: new_group may move groups */
        el_err err = new_group(r);
        if (!err)
            err = incr_group_set_members(r, &r->groups[r->ngroups - 1], &row, 1);
        if (err)
            return err;
    }
    return EL_OK;
}

/* ---- transaction bodies ---- */

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

el_err incr_txn_body(const incr_round *r, const incr_group *g, const el_mapping *m,
                     uint64_t run_id, el_buf *b, double *wcu_out)
{
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"TransactItems\":[");
    double wcu = 0;
    size_t actions = 0;
    for (size_t i = 0; !err && i < g->n; i++) {
        const incr_row *ir = &r->rows[g->m[i]];
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
        /* a write costs one unit per started KB of the item, again in the
         * index; a delete costs by the size of the item it removes, which
         * is the row's item when the delta mirrors the table */
        double units = (double)((ir->size + 1023) / 1024);
        if (units < 1)
            units = 1;
        wcu += 2 * (ir->indexed ? 2 * units : units); /* in a transaction, twice */
        actions++;
    }
    attr_delta ad[EL_DDB_TXN_MAX_ACTIONS];
    for (size_t t = 0; !err && t < g->nitems; t++) {
        size_t item = g->items[t], na = 0;
        for (size_t i = 0; i < g->n; i++) {
            const incr_row *ir = &r->rows[g->m[i]];
            for (size_t k = 0; k < ir->nck; k++) {
                const incr_ckref *ck = &r->cks[ir->ck_first + k];
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
        const incr_ckref *ck = &r->cks[r->items[item].ck];
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
        wcu += 2; /* a counter item: small; what DynamoDB reports settles it */
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
    el_incr_txn_token((const uint64_t (*)[2])toks, g->n, run_id, g->variant, token);
    free(toks);
    err = err ? err : el_buf_printf(b, "],\"ClientRequestToken\":\"%s\","
                                       "\"ReturnConsumedCapacity\":\"TOTAL\"}", token);
    *wcu_out = wcu;
    return err;
}
