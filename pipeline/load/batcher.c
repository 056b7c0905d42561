/*
 * batcher.c - the send window: per-key FIFOs and a heap of ready rows.
 *
 * DESIGN: the window used to be an array scanned in order for each batch;
 * on sorted, skewed input (a celebrity in 17 % of the rows, one of its rows
 * allowed per batch) the scan walked thousands of blocked rows per batch.
 * Now every pending row sits in a node, and a node is in two FIFOs: the one
 * of its base-table partition key and the one of its index partition key.
 * A node is *ready* when it heads both; ready nodes wait in a min-heap by
 * arrival, so the oldest ready row goes first (a ring in the order rows
 * became ready let chains of rows waiting on each other's partition keys
 * lag tens of thousands of rows behind, pinning their chunks). A batch
 * pops ready nodes, defers those whose partition key is already in the batch (at most
 * the two successors each taken node promotes), and once no undeferred ready
 * node is left fills up with the deferred and newly promoted ones. Each node
 * is touched a bounded number of times per batch it takes part in, so a
 * batch costs O(batch size x log window) whatever the skew.
 *
 * Same-key rows: a key's later rows (while an earlier one still waits in
 * the window) form a chain behind the earlier row's node; when the node is
 * taken the latest row of the chain goes and the earlier ones are reported
 * superseded (the later row wins), as far as the batch's room, its byte
 * budget and the superseded array allow; the rest of the chain waits for
 * the key. A key with a row in flight (or waiting to be retried) is held:
 * new rows of it wait in the key's waiting list, outside the FIFOs, and
 * enter them when the key is released, so they block nobody.
 *
 * Tables: keys (by FNV hash of "PK\0SK": held count, waiting list, a hint
 * to the node to chain onto) and the two FIFO heads (by partition key hash)
 * are open-addressing tables with backward-shift deletion. Two keys with
 * one hash only make a row wait a little (held by hash), never a wrong
 * write: rows are chained only when their keys compare equal, and two rows
 * of one key never go in one batch. Everything a release may need is
 * allocated when rows are added, so release and form never allocate
 * (except form's partition-key set when asked for more than 25 items).
 */
#include "pipeline/load/batcher.h"
#include "common/vec.h"  /* el_grow */

#include <stdint.h>  /* uint32_t, UINT32_MAX */
#include <stdlib.h>  /* calloc, realloc, free */
#include <string.h>  /* memcmp */

#define NONE UINT32_MAX

enum { FREE, QUEUED, READY, WAITING, CHAIN };

typedef struct node {
    el_item *it;
    uint64_t seq;              /* order of arrival: ready nodes go oldest first */
    uint64_t pk, ipk;          /* the FIFOs it is in (ipk 0: none) */
    uint32_t chain_next;       /* later rows of the key (nodes holding only `it`) */
    uint32_t chain_tail;       /* last of the chain (the node itself when none) */
    uint32_t pk_next, ipk_next;
    uint32_t wait_next;        /* in its key's waiting list; free list link too */
    uint8_t state;
    uint8_t heads;             /* HEAD_PK | HEAD_IPK: heads those FIFOs */
    uint8_t gated;             /* the gate gave it a time (it was parked): it goes unasked */
    uint8_t parked;            /* its rows count among the parked, not the window's */
    uint32_t rows;             /* rows in it and its chain */
} node;

#define HEAD_PK 1
#define HEAD_IPK 2

typedef struct kent {          /* a key, by hash */
    uint64_t hash;
    uint32_t held;             /* rows in flight or waiting to retry */
    uint32_t nodes;            /* window nodes of this hash (queued or waiting) */
    uint32_t window;           /* the newest such node: where a new row chains */
    uint32_t wait_head, wait_tail;
    uint32_t batch_gen;        /* the form call that took a row of this hash */
    uint32_t batch_n;          /* how many rows that call took */
    uint8_t used;
} kent;

typedef struct fent {          /* a partition key's FIFO */
    uint64_t hash;
    uint32_t head, tail;
    uint8_t used;
} fent;

typedef struct hent {          /* a ready node in the heap */
    uint64_t seq;
    uint32_t id;
} hent;

typedef struct pent {          /* a node the gate parked, by the time it may go */
    double due;
    uint32_t id;
} pent;

typedef struct uslot {         /* partition keys in the batch being formed */
    uint64_t hash;
    uint32_t gen;
} uslot;

struct el_batcher {
    node *nodes;
    uint32_t ncap, free_head;
    kent *keys;
    size_t kcap, kused;
    unsigned kbits;
    fent *pks, *ipks;
    size_t fcap, pkused, ipkused;
    unsigned fbits;
    hent *heap;                /* ready nodes, a min-heap by seq, capacity ncap */
    size_t nheap;
    pent *park;                /* nodes the gate parked, a min-heap by due, capacity ncap */
    size_t npark;
    el_batcher_gate_fn gate;
    void *gate_ctx;
    uint64_t next_seq;
    uint32_t *defer;           /* form's deferred nodes, capacity ncap */
    uslot *uset;
    size_t ucap;
    uint32_t gen;
    size_t live, max;          /* rows in the window; back-pressure limit */
    size_t parked, park_max;   /* rows of paced keys parked outside the window; their limit */
    el_item **retry;
    size_t nretry, retry_cap;
    double retry_min;          /* earliest not_before among the retries (any when none) */
    unsigned long long visits; /* nodes examined by form (tests) */
    bool spread;  /* false only for a benchmark's "interleaving off" run */
};

/* Fibonacci hashing: the slot of h in a table of 2^bits. */
static size_t home(uint64_t h, unsigned bits)
{
    return (size_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* ---- the key table ---- */

static size_t key_slot(const el_batcher *b, uint64_t h)
{
    size_t mask = b->kcap - 1, i = home(h, b->kbits);
    while (b->keys[i].used && b->keys[i].hash != h)
        i = (i + 1) & mask;
    return i;
}

static kent *key_find(el_batcher *b, uint64_t h)
{
    kent *k = &b->keys[key_slot(b, h)];
    return k->used ? k : NULL;
}

static el_err key_grow(el_batcher *b)
{
    kent *old = b->keys;
    size_t oldcap = b->kcap;
    kent *n = calloc(oldcap * 2, sizeof *n);
    if (!n)
        return EL_ENOMEM;
    b->keys = n;
    b->kcap = oldcap * 2;
    b->kbits++;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used)
            b->keys[key_slot(b, old[i].hash)] = old[i];
    free(old);
    return EL_OK;
}

/* The entry of h, created when absent. Grows the table (may fail). */
static el_err key_get(el_batcher *b, uint64_t h, kent **out)
{
    if ((b->kused + 1) * 2 > b->kcap && key_grow(b))
        return EL_ENOMEM;
    kent *k = &b->keys[key_slot(b, h)];
    if (!k->used) {
        k->used = 1;
        k->hash = h;
        k->held = k->nodes = k->batch_n = 0;
        k->batch_gen = 0;
        k->window = k->wait_head = k->wait_tail = NONE;
        b->kused++;
    }
    *out = k;
    return EL_OK;
}

/* Backward-shift deletion: no tombstones, so a long load never degrades. */
#define DELETE_SLOT(table, cap, bits, i)                                                \
    do {                                                                                \
        size_t mask_ = (cap) - 1, i_ = (i), j_ = (i);                                   \
        for (;;) {                                                                      \
            j_ = (j_ + 1) & mask_;                                                      \
            if (!(table)[j_].used)                                                      \
                break;                                                                  \
            size_t h_ = home((table)[j_].hash, (bits));                                 \
            bool between_ = i_ <= j_ ? (h_ > i_ && h_ <= j_) : (h_ > i_ || h_ <= j_);   \
            if (between_)                                                               \
                continue;                                                               \
            (table)[i_] = (table)[j_];                                                  \
            i_ = j_;                                                                    \
        }                                                                               \
        (table)[i_].used = 0;                                                           \
    } while (0)

static void key_maybe_delete(el_batcher *b, kent *k)
{
    if (k->held || k->nodes)
        return;
    DELETE_SLOT(b->keys, b->kcap, b->kbits, (size_t)(k - b->keys));
    b->kused--;
}

/* ---- the FIFO tables (capacity kept at >= 2 x node capacity by add) ---- */

static size_t fifo_slot(const fent *t, size_t cap, unsigned bits, uint64_t h)
{
    size_t mask = cap - 1, i = home(h, bits);
    while (t[i].used && t[i].hash != h)
        i = (i + 1) & mask;
    return i;
}

static fent *fifo_get(el_batcher *b, bool index, uint64_t h)
{
    fent *t = index ? b->ipks : b->pks;
    fent *f = &t[fifo_slot(t, b->fcap, b->fbits, h)];
    if (!f->used) {
        f->used = 1;
        f->hash = h;
        f->head = f->tail = NONE;
        (*(index ? &b->ipkused : &b->pkused))++;
    }
    return f;
}

static fent *fifo_find(el_batcher *b, bool index, uint64_t h)
{
    fent *t = index ? b->ipks : b->pks;
    fent *f = &t[fifo_slot(t, b->fcap, b->fbits, h)];
    return f->used ? f : NULL;
}

static void fifo_delete(el_batcher *b, bool index, fent *f)
{
    fent *t = index ? b->ipks : b->pks;
    DELETE_SLOT(t, b->fcap, b->fbits, (size_t)(f - t));
    (*(index ? &b->ipkused : &b->pkused))--;
}

static void fifo_rehash(const fent *old, size_t oldcap, fent *n, size_t cap, unsigned bits)
{
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used)
            n[fifo_slot(n, cap, bits, old[i].hash)] = old[i];
}

/* ---- the ready heap: the oldest ready row first ---- */

static void heap_push(el_batcher *b, uint32_t id)
{
    hent e = { b->nodes[id].seq, id };
    size_t i = b->nheap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (b->heap[parent].seq <= e.seq)
            break;
        b->heap[i] = b->heap[parent];
        i = parent;
    }
    b->heap[i] = e;
}

static uint32_t heap_pop(el_batcher *b)
{
    uint32_t id = b->heap[0].id;
    hent last = b->heap[--b->nheap];
    size_t i = 0, n = b->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && b->heap[c + 1].seq < b->heap[c].seq)
            c++;
        if (last.seq <= b->heap[c].seq)
            break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    if (n)
        b->heap[i] = last;
    return id;
}

/* ---- the park: nodes the gate holds back, the earliest due first ---- */

static void park_push(el_batcher *b, uint32_t id, double due)
{
    pent e = { due, id };
    size_t i = b->npark++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (b->park[parent].due <= due)
            break;
        b->park[i] = b->park[parent];
        i = parent;
    }
    b->park[i] = e;
}

static uint32_t park_pop(el_batcher *b)
{
    uint32_t id = b->park[0].id;
    pent last = b->park[--b->npark];
    size_t i = 0, n = b->npark;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && b->park[c + 1].due < b->park[c].due)
            c++;
        if (last.due <= b->park[c].due)
            break;
        b->park[i] = b->park[c];
        i = c;
    }
    if (n)
        b->park[i] = last;
    return id;
}

/* ---- nodes ---- */

/* Makes room for one more node: doubles the node array, the heap, the
 * deferred array and the FIFO tables together (keeping the invariants that
 * release and form rely on: no allocation there). */
static el_err reserve_node(el_batcher *b)
{
    if (b->free_head != NONE)
        return EL_OK;
    uint32_t oldcap = b->ncap, cap = oldcap * 2;
    if (cap <= oldcap)
        return EL_ENOMEM;
    /* a larger node array is harmless if what follows fails */
    node *n = realloc(b->nodes, (size_t)cap * sizeof *n);
    if (!n)
        return EL_ENOMEM;
    b->nodes = n;
    size_t fcap = b->fcap < (size_t)cap * 2 ? b->fcap * 2 : b->fcap;
    hent *heap = malloc((size_t)cap * sizeof *heap);
    pent *park = malloc((size_t)cap * sizeof *park);
    uint32_t *defer = malloc((size_t)cap * sizeof *defer);
    fent *pks = fcap != b->fcap ? calloc(fcap, sizeof *pks) : NULL;
    fent *ipks = fcap != b->fcap ? calloc(fcap, sizeof *ipks) : NULL;
    if (!heap || !park || !defer || (fcap != b->fcap && (!pks || !ipks))) {
        free(heap);
        free(park);
        free(defer);
        free(pks);
        free(ipks);
        return EL_ENOMEM;
    }
    memcpy(heap, b->heap, b->nheap * sizeof *heap);
    memcpy(park, b->park, b->npark * sizeof *park);
    free(b->heap);
    free(b->park);
    free(b->defer);
    b->heap = heap;
    b->park = park;
    b->defer = defer;
    if (fcap != b->fcap) {
        unsigned bits = b->fbits + 1;
        fifo_rehash(b->pks, b->fcap, pks, fcap, bits);
        fifo_rehash(b->ipks, b->fcap, ipks, fcap, bits);
        free(b->pks);
        free(b->ipks);
        b->pks = pks;
        b->ipks = ipks;
        b->fcap = fcap;
        b->fbits = bits;
    }
    for (uint32_t i = oldcap; i < cap; i++) {
        b->nodes[i].state = FREE;
        b->nodes[i].wait_next = i + 1 < cap ? i + 1 : NONE;
    }
    b->free_head = oldcap;
    b->ncap = cap;
    return EL_OK;
}

static uint32_t node_alloc(el_batcher *b, el_item *it)
{
    uint32_t id = b->free_head;
    node *n = &b->nodes[id];
    b->free_head = n->wait_next;
    n->it = it;
    n->seq = b->next_seq++;
    n->pk = b->spread ? it->pk_hash : 0;
    n->ipk = b->spread ? it->ipk_hash : 0;
    n->chain_next = NONE;
    n->chain_tail = id;
    n->pk_next = n->ipk_next = n->wait_next = NONE;
    n->state = WAITING;
    n->heads = 0;
    n->gated = 0;
    n->parked = 0;
    n->rows = 1;
    return id;
}

static void node_free(el_batcher *b, uint32_t id)
{
    node *n = &b->nodes[id];
    n->state = FREE;
    n->it = NULL;
    n->wait_next = b->free_head;
    b->free_head = id;
}

/* Ready when it heads its FIFOs: then it joins the heap. */
static void check_ready(el_batcher *b, uint32_t id)
{
    node *n = &b->nodes[id];
    if (n->state == QUEUED && n->heads == (HEAD_PK | HEAD_IPK)) {
        n->state = READY;
        heap_push(b, id);
    }
}

static void fifo_append(el_batcher *b, uint32_t id)
{
    node *n = &b->nodes[id];
    n->pk_next = n->ipk_next = NONE;
    n->heads = n->ipk ? 0 : HEAD_IPK; /* no index FIFO: as if heading it */
    fent *f = fifo_get(b, false, n->pk);
    if (f->head == NONE) {
        f->head = id;
        n->heads |= HEAD_PK;
    } else {
        b->nodes[f->tail].pk_next = id;
    }
    f->tail = id;
    if (n->ipk) {
        f = fifo_get(b, true, n->ipk);
        if (f->head == NONE) {
            f->head = id;
            n->heads |= HEAD_IPK;
        } else {
            b->nodes[f->tail].ipk_next = id;
        }
        f->tail = id;
    }
    n->state = QUEUED;
    check_ready(b, id);
}

/* Takes a node that heads its FIFOs out of them; its successors may become
 * ready. */
static void fifo_remove_head(el_batcher *b, uint32_t id)
{
    node *n = &b->nodes[id];
    uint32_t next_pk = NONE, next_ipk = NONE;
    fent *f = fifo_find(b, false, n->pk);
    if (f && f->head == id) {
        f->head = n->pk_next;
        if (f->head == NONE)
            fifo_delete(b, false, f);
        else
            next_pk = f->head;
    }
    if (n->ipk) {
        f = fifo_find(b, true, n->ipk);
        if (f && f->head == id) {
            f->head = n->ipk_next;
            if (f->head == NONE)
                fifo_delete(b, true, f);
            else
                next_ipk = f->head;
        }
    }
    n->state = WAITING;
    n->heads = 0;
    if (next_pk != NONE) {
        b->nodes[next_pk].heads |= HEAD_PK;
        check_ready(b, next_pk);
    }
    if (next_ipk != NONE) {
        b->nodes[next_ipk].heads |= HEAD_IPK;
        check_ready(b, next_ipk);
    }
}

static void wait_on_key(el_batcher *b, kent *k, uint32_t id)
{
    node *n = &b->nodes[id];
    n->state = WAITING;
    n->wait_next = NONE;
    if (k->wait_head == NONE)
        k->wait_head = id;
    else
        b->nodes[k->wait_tail].wait_next = id;
    k->wait_tail = id;
}

/* ---- the API ---- */

el_batcher *el_batcher_new(size_t window_max, bool spread)
{
    el_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->max = window_max ? window_max : 1;
    b->park_max = b->max * EL_BATCHER_PARK_WINDOWS;
    b->spread = spread;
    b->ncap = 64;
    b->kcap = 256;
    b->kbits = 8;
    b->fcap = 256;
    b->fbits = 8;
    b->ucap = 256; /* 4 x the 2 partition keys of 25 items, rounded up */
    b->free_head = 0;
    b->nodes = malloc(b->ncap * sizeof *b->nodes);
    b->heap = malloc(b->ncap * sizeof *b->heap);
    b->park = malloc(b->ncap * sizeof *b->park);
    b->defer = malloc(b->ncap * sizeof *b->defer);
    b->keys = calloc(b->kcap, sizeof *b->keys);
    b->pks = calloc(b->fcap, sizeof *b->pks);
    b->ipks = calloc(b->fcap, sizeof *b->ipks);
    b->uset = calloc(b->ucap, sizeof *b->uset);
    if (!b->nodes || !b->heap || !b->park || !b->defer || !b->keys || !b->pks || !b->ipks || !b->uset) {
        el_batcher_free(b);
        return NULL;
    }
    for (uint32_t i = 0; i < b->ncap; i++) {
        b->nodes[i].state = FREE;
        b->nodes[i].wait_next = i + 1 < b->ncap ? i + 1 : NONE;
    }
    return b;
}

void el_batcher_free(el_batcher *b)
{
    if (!b)
        return;
    free(b->nodes);
    free(b->heap);
    free(b->park);
    free(b->defer);
    free(b->keys);
    free(b->pks);
    free(b->ipks);
    free(b->uset);
    free(b->retry);
    free(b);
}

bool el_batcher_has_room(const el_batcher *b)
{
    return b->live < b->max && b->parked < b->park_max;
}

static bool same_key(const el_item *a, const el_item *c)
{
    return a->hash == c->hash && a->key_len == c->key_len &&
           memcmp(el_item_key(a), el_item_key(c), a->key_len) == 0;
}

el_err el_batcher_add(el_batcher *b, el_item *it)
{
    kent *k;
    if (reserve_node(b) || key_get(b, it->hash, &k))
        return EL_ENOMEM;
    if (k->window != NONE && same_key(b->nodes[k->window].it, it)) {
        /* an earlier row of the key still waits: chain behind it */
        node *w = &b->nodes[k->window];
        uint32_t id = node_alloc(b, it);
        b->nodes[id].state = CHAIN; /* only `it` and chain_next are used */
        b->nodes[w->chain_tail].chain_next = id;
        w->chain_tail = id;
        w->rows++;
        if (w->parked)
            b->parked++;
        else
            b->live++;
        return EL_OK;
    }
    uint32_t id = node_alloc(b, it);
    k->nodes++;
    k->window = id;
    /* Into the FIFOs in its place even when an earlier row of the key is
     * in flight: by the time it heads them that row is usually done; if
     * not, key_allows parks it then. Parked at once, it re-entered the
     * FIFOs behind every row that came meanwhile and held its chunk (and
     * the checkpoint's watermark, and the progress shown) back until the
     * end of a load whose keys repeat far apart. */
    fifo_append(b, id);
    b->live++;
    return EL_OK;
}

el_err el_batcher_retry(el_batcher *b, el_item *it)
{
    el_item **v = el_grow(b->retry, &b->retry_cap, b->nretry + 1, sizeof *v, 64);
    if (!v)
        return EL_ENOMEM;
    b->retry = v;
    if (b->nretry == 0 || it->not_before < b->retry_min)
        b->retry_min = it->not_before;
    b->retry[b->nretry++] = it;
    return EL_OK;
}

void el_batcher_release(el_batcher *b, const el_item *it)
{
    kent *k = key_find(b, it->hash);
    if (!k || !k->held)
        return;
    if (--k->held == 0) {
        /* rows that waited for the key join the FIFOs, in order */
        uint32_t id = k->wait_head;
        k->wait_head = k->wait_tail = NONE;
        while (id != NONE) {
            uint32_t next = b->nodes[id].wait_next;
            b->nodes[id].wait_next = NONE;
            fifo_append(b, id);
            id = next;
        }
    }
    key_maybe_delete(b, k);
}

/* ---- forming a batch ---- */

/* The set of partition keys (base and index alike) in the batch. */
static bool uset_prepare(el_batcher *b, size_t max_items)
{
    size_t need = 256;
    while (need < max_items * 8)
        need *= 2;
    if (need > b->ucap) {
        uslot *u = calloc(need, sizeof *u);
        if (!u)
            return false;
        free(b->uset);
        b->uset = u;
        b->ucap = need;
    }
    return true;
}

static uslot *uset_slot(el_batcher *b, uint64_t h)
{
    size_t mask = b->ucap - 1, i = (size_t)(h * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (b->uset[i].gen == b->gen && b->uset[i].hash != h)
        i = (i + 1) & mask;
    return &b->uset[i];
}

static bool uset_has(el_batcher *b, uint64_t h)
{
    return uset_slot(b, h)->gen == b->gen;
}

static void uset_add(el_batcher *b, uint64_t h)
{
    uslot *s = uset_slot(b, h);
    s->hash = h;
    s->gen = b->gen;
}

typedef struct forming {
    double now;
    el_item **out;
    size_t n, max_items, bytes, max_bytes, first_new;
    double units, max_units;     /* write units taken, their limit (<= 0: none) */
    el_item **superseded;
    size_t *nsuperseded, max_superseded;
    bool spread;
} forming;

/* Whether one more item fits the byte budget and the unit budget (the
 * first item always fits the unit budget: one item is the least a request
 * can carry). */
static bool fits(const forming *f, const el_item *it)
{
    if (f->bytes + it->json_len + 64 > f->max_bytes)
        return false;
    return f->n == 0 || f->max_units <= 0 || f->units + el_item_wcu(it) <= f->max_units;
}

static void put(forming *f, el_item *it)
{
    f->out[f->n++] = it;
    f->bytes += it->json_len + 64;
    if (f->max_units > 0) /* only fits() reads it, and only then */
        f->units += el_item_wcu(it);
}

static void note_pks(el_batcher *b, forming *f, const el_item *it)
{
    if (!f->spread)
        return;
    uset_add(b, it->pk_hash);
    if (it->ipk_hash)
        uset_add(b, it->ipk_hash);
}

/* Whether a row of this key is already in the batch (only asked when a row
 * with the same hash was taken by this call: a rare collision or a key's
 * waiting rows). */
static bool key_in_batch(const forming *f, const el_item *it)
{
    for (size_t i = f->first_new; i < f->n; i++)
        if (same_key(f->out[i], it))
            return true;
    return false;
}

/* May node id's row go in this batch as far as its key is concerned? When
 * not, it is parked on its key (out of the FIFOs) and false returned. */
static bool key_allows(el_batcher *b, forming *f, uint32_t id, kent *k)
{
    if (k->held == 0)
        return true;
    /* held only by rows this batch took (a colliding hash): fine unless
     * it is the same key */
    if (k->batch_gen == b->gen && k->held == k->batch_n && !key_in_batch(f, b->nodes[id].it))
        return true;
    fifo_remove_head(b, id);
    wait_on_key(b, k, id);
    return false;
}

/* Puts node id's row (or the latest row of its chain that the batch allows)
 * in the batch. The caller checked that the first row fits. */
static void take(el_batcher *b, forming *f, uint32_t id, kent *k)
{
    node *n = &b->nodes[id];
    el_item *cur = n->it;
    uint32_t next = n->chain_next, tail = n->chain_tail;
    size_t rows = 1;
    /* the later row wins, as far as superseded[] has room and the byte
     * budget allows (a superseded row takes no place in the batch). What is
     * left of the chain waits for the key and re-enters the FIFOs behind
     * the rows that arrived meanwhile, holding its chunk (and the
     * checkpoint's watermark) back: so the whole chain goes at once
     * whenever it can (a test of 5,000 rows with 40 index partition keys
     * had the first chunk pinned to the end of the load when a chain met a
     * batch with one place left). */
    while (next != NONE && *f->nsuperseded < f->max_superseded) {
        el_item *later = b->nodes[next].it;
        if (!fits(f, later))
            break;
        f->superseded[(*f->nsuperseded)++] = cur;
        cur = later;
        uint32_t after = b->nodes[next].chain_next;
        node_free(b, next);
        next = after;
        rows++;
    }
    put(f, cur);
    note_pks(b, f, cur);
    fifo_remove_head(b, id);
    size_t rest = n->rows - rows;
    if (n->parked) {
        /* what is left of its chain waits for the key in the window */
        b->parked -= n->rows;
        b->live += rest;
    } else {
        b->live -= rows;
    }
    if (k->batch_gen != b->gen) {
        k->batch_gen = b->gen;
        k->batch_n = 0;
    }
    k->batch_n++;
    k->held++;
    bool newest = k->window == id;
    node_free(b, id);
    k->nodes--;
    if (next != NONE) {
        /* the rest of the chain waits for the key as a node of its own */
        node *r = &b->nodes[next];
        r->rows = (uint32_t)rest;
        r->parked = 0;
        r->pk = b->spread ? r->it->pk_hash : 0;
        r->ipk = b->spread ? r->it->ipk_hash : 0;
        r->chain_tail = tail;
        r->pk_next = r->ipk_next = NONE;
        k->nodes++;
        if (newest)
            k->window = next;
        wait_on_key(b, k, next);
    } else if (newest) {
        k->window = NONE;
    }
}

/* Pops ready nodes into the batch; with f->spread, a node whose partition
 * key is already in the batch is deferred instead. Stops when the batch is
 * full, nothing is ready, or a row does not fit the byte budget (false). */
static bool fill(el_batcher *b, forming *f, size_t *ndefer, size_t *di)
{
    while (f->n < f->max_items) {
        uint32_t id;
        if (!f->spread && *di < *ndefer)
            id = b->defer[(*di)++];
        else if (b->nheap)
            id = heap_pop(b);
        else
            break;
        b->visits++;
        node *n = &b->nodes[id];
        kent *k = key_find(b, n->it->hash);
        if (!key_allows(b, f, id, k))
            continue;
        if (f->spread && (uset_has(b, n->it->pk_hash) ||
                          (n->it->ipk_hash && uset_has(b, n->it->ipk_hash)))) {
            b->defer[(*ndefer)++] = id;
            continue;
        }
        if (!fits(f, n->it)) {
            heap_push(b, id);
            return false;
        }
        if (b->gate && !n->gated) {
            /* a paced key: the gate reserved a time for this row; until
             * then it waits in the park, out of its partition keys' queues
             * (their later rows go on) and out of the window (the reader
             * goes on) */
            double due = b->gate(b->gate_ctx, n->it, f->now);
            if (due > f->now) {
                n->gated = due < f->now + EL_BATCHER_GATE_HORIZON_MS;
                fifo_remove_head(b, id);
                n->parked = 1;
                b->live -= n->rows;
                b->parked += n->rows;
                park_push(b, id, due);
                continue;
            }
        }
        take(b, f, id, k);
    }
    return true;
}

size_t el_batcher_form(el_batcher *b, double now, size_t max_items, size_t max_bytes,
                       double max_units, el_item **out, el_item **superseded,
                       size_t max_superseded, size_t *nsuperseded)
{
    forming f = { .now = now, .out = out, .max_items = max_items, .max_bytes = max_bytes,
                  .max_units = max_units, .superseded = superseded,
                  .nsuperseded = nsuperseded, .max_superseded = max_superseded };
    *nsuperseded = 0;
    if (++b->gen == 0) {
        /* 2^32 batches: forget the old generation tags */
        for (size_t i = 0; i < b->ucap; i++)
            b->uset[i].gen = 0;
        for (size_t i = 0; i < b->kcap; i++)
            b->keys[i].batch_gen = 0;
        b->gen = 1;
    }
    f.spread = b->spread && uset_prepare(b, max_items);
    /* parked rows whose time has come are ready again, by age */
    while (b->npark > 0 && b->park[0].due <= now)
        heap_push(b, park_pop(b));
    /* due retries first: they already hold their keys. Under throttling
     * thousands may wait; the list is walked only when one is due (the
     * walk also finds the next earliest, for el_batcher_next_due) */
    if (b->nretry > 0 && b->retry_min <= now) {
        double min = 0;
        size_t left = 0;
        for (size_t i = 0; i < b->nretry;) {
            el_item *it = b->retry[i];
            if (f.n < max_items && it->not_before <= now && fits(&f, it)) {
                put(&f, it);
                note_pks(b, &f, it);
                b->retry[i] = b->retry[--b->nretry];
            } else {
                if (left++ == 0 || it->not_before < min)
                    min = it->not_before;
                i++;
            }
        }
        b->retry_min = min;
    }
    f.first_new = f.n;
    /* First spread the batch over as many partition keys as are ready
     * (DynamoDB's guidance for uploads: sorted input must not hit one
     * partition at a time); then, if room is left, fill it with what was
     * deferred and what taking rows made ready, since only keys already in
     * the batch are waiting. */
    size_t ndefer = 0, di = 0;
    bool fits = fill(b, &f, &ndefer, &di);
    if (fits && f.spread && f.n < max_items) {
        f.spread = false;
        fill(b, &f, &ndefer, &di);
    }
    /* what was deferred and not taken is ready again, by age */
    while (ndefer > di)
        heap_push(b, b->defer[--ndefer]);
    return f.n;
}

size_t el_batcher_pending(const el_batcher *b)
{
    return b->live + b->parked + b->nretry;
}

double el_batcher_next_due(const el_batcher *b)
{
    double due = b->nretry > 0 ? b->retry_min : -1;
    if (b->npark > 0 && (due < 0 || b->park[0].due < due))
        due = b->park[0].due;
    return due;
}

void el_batcher_set_gate(el_batcher *b, el_batcher_gate_fn fn, void *ctx)
{
    b->gate = fn;
    b->gate_ctx = ctx;
}

unsigned long long el_batcher_visits(const el_batcher *b)
{
    return b->visits;
}
