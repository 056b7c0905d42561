/*
 * batcher.c - the send window and the held-key set.
 *
 * DESIGN: held keys are tracked by their 64-bit FNV hash in a linear-probing
 * table with counts and backward-shift deletion (no tombstones, so a long
 * load never degrades it). Two different keys with one hash only make an
 * item wait a little: never a wrong write. The window is an array with a
 * moving head; items taken from the middle leave holes that the head skips
 * and that compaction removes.
 */
#include "pipeline/batcher.h"

#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* memcmp, memmove */

/* A batch scans at most this many window entries: blocked items near the
 * head must not make every batch cost the whole window. */
#define SCAN_LIMIT 2048

typedef struct slot {
    uint64_t hash;
    uint32_t count;  /* 0 = empty */
} slot;

struct el_batcher {
    slot *held;
    size_t held_cap, held_used;
    el_item **win;
    size_t win_cap, head, tail, live, max;
    el_item **retry;
    size_t nretry, retry_cap;
    uint64_t tmp[SCAN_LIMIT];  /* keys held only during one spreading scan */
    size_t ntmp;
};

el_batcher *el_batcher_new(size_t window_max)
{
    el_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->max = window_max ? window_max : 1;
    b->held_cap = 1024;
    b->held = calloc(b->held_cap, sizeof *b->held);
    b->win_cap = b->max * 2;
    b->win = calloc(b->win_cap, sizeof *b->win);
    if (!b->held || !b->win) {
        el_batcher_free(b);
        return NULL;
    }
    return b;
}

void el_batcher_free(el_batcher *b)
{
    if (!b)
        return;
    free(b->held);
    free(b->win);
    free(b->retry);
    free(b);
}

static size_t find(const el_batcher *b, uint64_t h)
{
    size_t mask = b->held_cap - 1;
    size_t i = (size_t)h & mask;
    while (b->held[i].count && b->held[i].hash != h)
        i = (i + 1) & mask;
    return i;
}

static bool is_held(const el_batcher *b, uint64_t h)
{
    return b->held[find(b, h)].count > 0;
}

static el_err grow_held(el_batcher *b)
{
    size_t oldcap = b->held_cap;
    slot *old = b->held;
    slot *n = calloc(oldcap * 2, sizeof *n);
    if (!n)
        return EL_ENOMEM;
    b->held = n;
    b->held_cap = oldcap * 2;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].count)
            b->held[find(b, old[i].hash)] = old[i];
    free(old);
    return EL_OK;
}

static el_err hold(el_batcher *b, uint64_t h)
{
    if ((b->held_used + 1) * 2 > b->held_cap && grow_held(b))
        return EL_ENOMEM;
    size_t i = find(b, h);
    if (!b->held[i].count) {
        b->held[i].hash = h;
        b->held_used++;
    }
    b->held[i].count++;
    return EL_OK;
}

static void release_hash(el_batcher *b, uint64_t hash)
{
    size_t mask = b->held_cap - 1;
    size_t i = find(b, hash);
    if (!b->held[i].count)
        return;
    if (--b->held[i].count)
        return;
    b->held_used--;
    /* backward-shift deletion keeps every probe chain unbroken */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!b->held[j].count)
            break;
        size_t home = (size_t)b->held[j].hash & mask;
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between)
            continue;
        b->held[i] = b->held[j];
        i = j;
    }
    b->held[i].count = 0;
}

void el_batcher_release(el_batcher *b, const el_item *it)
{
    release_hash(b, it->hash);
}

bool el_batcher_has_room(const el_batcher *b)
{
    return b->live < b->max;
}

el_err el_batcher_add(el_batcher *b, el_item *it)
{
    if (b->tail == b->win_cap) {
        /* compact: drop holes and the consumed head */
        size_t n = 0;
        for (size_t i = b->head; i < b->tail; i++)
            if (b->win[i])
                b->win[n++] = b->win[i];
        b->head = 0;
        b->tail = n;
        if (b->tail == b->win_cap) {
            el_item **w = realloc(b->win, b->win_cap * 2 * sizeof *w);
            if (!w)
                return EL_ENOMEM;
            b->win = w;
            b->win_cap *= 2;
        }
    }
    b->win[b->tail++] = it;
    b->live++;
    return EL_OK;
}

el_err el_batcher_retry(el_batcher *b, el_item *it)
{
    if (b->nretry == b->retry_cap) {
        size_t cap = b->retry_cap ? b->retry_cap * 2 : 64;
        el_item **v = realloc(b->retry, cap * sizeof *v);
        if (!v)
            return EL_ENOMEM;
        b->retry = v;
        b->retry_cap = cap;
    }
    b->retry[b->nretry++] = it;
    return EL_OK;
}

static bool same_key(const el_item *a, const el_item *c)
{
    return a->hash == c->hash && a->key_len == c->key_len &&
           memcmp(el_item_key(a), el_item_key(c), a->key_len) == 0;
}

static bool in_set(const uint64_t *set, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == h)
            return true;
    return false;
}

/* One batch being formed: its items and the partition keys they touch. */
typedef struct forming {
    el_item **out;
    size_t n, max_items, bytes, max_bytes, first_new;
    uint64_t pks[EL_DDB_BATCH_ITEMS * 2];   /* base-table and index partition keys */
    size_t npks;
} forming;

static void note_pks(forming *f, const el_item *it)
{
    if (f->npks < sizeof f->pks / sizeof *f->pks)
        f->pks[f->npks++] = it->pk_hash;
    if (it->ipk_hash && f->npks < sizeof f->pks / sizeof *f->pks)
        f->pks[f->npks++] = it->ipk_hash;
}

/*
 * One scan of the window. With spread, an item whose base-table or index
 * partition key is already in the batch is passed over (and its key held
 * for the rest of the scan, so no later row of that key overtakes it), to
 * be taken by a later batch or by the second, non-spreading scan.
 * Returns true when it passed something over.
 */
static bool scan(el_batcher *b, forming *f, bool spread, el_item **superseded,
                 size_t *nsuperseded, size_t *blocked_dups)
{
    size_t scanned = 0;
    bool passed = false;
    for (size_t i = b->head; i < b->tail && f->n < f->max_items && scanned < SCAN_LIMIT; i++) {
        el_item *it = b->win[i];
        if (!it)
            continue;
        scanned++;
        /* a later row of a key already in this batch replaces it */
        size_t dup = (size_t)-1;
        for (size_t k = f->first_new; k < f->n; k++)
            if (same_key(f->out[k], it)) {
                dup = k;
                break;
            }
        if (dup != (size_t)-1) {
            /* superseded[] has room for max_items, and replacing a row by a
             * larger one must keep the batch within max_bytes. Otherwise stop
             * here: this row then waits for the key, and lands after it. */
            if (*nsuperseded == f->max_items ||
                f->bytes - (f->out[dup]->json_len + 64) + it->json_len + 64 > f->max_bytes)
                break;
            superseded[(*nsuperseded)++] = f->out[dup];
            if (!it->dup_counted) { /* a repeated row counts once */
                it->dup_counted = 1;
                (*blocked_dups)++;
            }
            f->bytes -= f->out[dup]->json_len + 64;
            f->out[dup] = it;
            f->bytes += it->json_len + 64;
            b->win[i] = NULL;
            b->live--;
            continue;
        }
        if (is_held(b, it->hash)) {
            if (!it->dup_counted) {
                it->dup_counted = 1;
                (*blocked_dups)++;
            }
            continue;
        }
        if (spread && (in_set(f->pks, f->npks, it->pk_hash) ||
                       (it->ipk_hash && in_set(f->pks, f->npks, it->ipk_hash)))) {
            if (b->ntmp < SCAN_LIMIT && hold(b, it->hash) == EL_OK) {
                b->tmp[b->ntmp++] = it->hash;
                passed = true;
            }
            continue;
        }
        if (f->bytes + it->json_len + 64 > f->max_bytes)
            break;
        f->out[f->n++] = it;
        f->bytes += it->json_len + 64;
        note_pks(f, it);
        b->win[i] = NULL;
        b->live--;
    }
    return passed;
}

size_t el_batcher_form(el_batcher *b, double now, size_t max_items, size_t max_bytes,
                       el_item **out, el_item **superseded, size_t *nsuperseded,
                       size_t *blocked_dups)
{
    forming f = { .out = out, .max_items = max_items, .max_bytes = max_bytes };
    *nsuperseded = 0;
    *blocked_dups = 0;
    /* due retries first: they already hold their keys */
    for (size_t i = 0; i < b->nretry && f.n < max_items;) {
        el_item *it = b->retry[i];
        if (it->not_before <= now && f.bytes + it->json_len + 64 <= max_bytes) {
            out[f.n++] = it;
            f.bytes += it->json_len + 64;
            note_pks(&f, it);
            b->retry[i] = b->retry[--b->nretry];
        } else {
            i++;
        }
    }
    f.first_new = f.n;
    /* First spread the batch over as many partition keys as the window
     * offers (DynamoDB's guidance for uploads: sorted input must not hit
     * one partition at a time); then, if room is left, fill it with what
     * was passed over, since only keys already in the batch are waiting. */
    bool passed = scan(b, &f, true, superseded, nsuperseded, blocked_dups);
    while (b->ntmp)
        release_hash(b, b->tmp[--b->ntmp]);
    if (passed && f.n < max_items)
        scan(b, &f, false, superseded, nsuperseded, blocked_dups);
    size_t n = f.n;
    /* new items take their keys (after the scans, so in-batch duplicates are
     * resolved by replacement rather than blocking) */
    for (size_t k = f.first_new; k < n; k++)
        if (hold(b, out[k]->hash)) {
            /* out of memory for the key table: send fewer items this time */
            for (size_t j = k; j < n; j++) {
                el_err err = el_batcher_add(b, out[j]);
                (void)err;
            }
            n = k;
            break;
        }
    while (b->head < b->tail && !b->win[b->head])
        b->head++;
    if (b->head == b->tail)
        b->head = b->tail = 0;
    return n;
}

size_t el_batcher_pending(const el_batcher *b)
{
    return b->live + b->nretry;
}

double el_batcher_next_due(const el_batcher *b)
{
    double due = -1;
    for (size_t i = 0; i < b->nretry; i++)
        if (due < 0 || b->retry[i]->not_before < due)
            due = b->retry[i]->not_before;
    return due;
}
