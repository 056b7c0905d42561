/*
 * sample.c - bottom-k sampling: a max-heap of the k smallest priorities and
 * a chained hash table from key to slot.
 *
 * DESIGN: a textbook reservoir (replace slot j with probability k/n) counts
 * occurrences, so a key repeated in the input would be drawn more often and
 * its later rows could not be tied to the sampled one; a priority that is a
 * function of the key makes sampling a property of the distinct keys, which
 * is what verify checks (one item per key, the later row winning).
 */
#include "pipeline/extmem/sample.h"

#include <stdbool.h> /* bool */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* memcmp, memcpy */

typedef struct slot {
    char *key;
    size_t len;
    uint64_t prio;
    size_t heap_pos;   /* index in heap (bounded samples only) */
    size_t next;       /* next slot in the same bucket, or NONE */
    el_buf value;
} slot;

#define NONE ((size_t)-1)

struct el_sample {
    size_t k;          /* 0: unbounded */
    uint64_t seed;
    size_t value_max;
    slot *slots;
    size_t nslots, cap;
    size_t *heap;      /* slot ids, max-heap on (prio, key) */
    size_t *buckets;   /* nbuckets heads */
    size_t nbuckets;   /* power of two */
};

uint64_t el_sample_priority(uint64_t seed, const void *key, size_t len)
{
    /* FNV-1a over the seed's bytes then the key, then splitmix64's finaliser
     * so that nearby keys get unrelated priorities */
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) {
        h ^= (seed >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

el_sample *el_sample_new(size_t k, uint64_t seed, size_t value_max)
{
    el_sample *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->k = k;
    s->seed = seed;
    s->value_max = value_max;
    s->nbuckets = 64;
    s->buckets = malloc(s->nbuckets * sizeof *s->buckets);
    if (!s->buckets) {
        el_sample_free(s);
        return NULL;
    }
    for (size_t i = 0; i < s->nbuckets; i++)
        s->buckets[i] = NONE;
    return s;
}

void el_sample_free(el_sample *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nslots; i++) {
        free(s->slots[i].key);
        el_buf_free(&s->slots[i].value);
    }
    free(s->slots);
    free(s->heap);
    free(s->buckets);
    free(s);
}

/* The bucket of a key: the priority's low bits are as good a hash as any. */
static size_t bucket_of(const el_sample *s, uint64_t prio)
{
    return (size_t)(prio >> 7) & (s->nbuckets - 1);
}

static size_t find(const el_sample *s, const void *key, size_t len, uint64_t prio)
{
    for (size_t i = s->buckets[bucket_of(s, prio)]; i != NONE; i = s->slots[i].next) {
        const slot *sl = &s->slots[i];
        if (sl->prio == prio && sl->len == len && memcmp(sl->key, key, len) == 0)
            return i;
    }
    return NONE;
}

size_t el_sample_find(const el_sample *s, const void *key, size_t len)
{
    return find(s, key, len, el_sample_priority(s->seed, key, len));
}

static void unlink_slot(el_sample *s, size_t id)
{
    size_t *p = &s->buckets[bucket_of(s, s->slots[id].prio)];
    while (*p != id)
        p = &s->slots[*p].next;
    *p = s->slots[id].next;
}

static void link_slot(el_sample *s, size_t id)
{
    size_t b = bucket_of(s, s->slots[id].prio);
    s->slots[id].next = s->buckets[b];
    s->buckets[b] = id;
}

static el_err grow_buckets(el_sample *s)
{
    size_t n = s->nbuckets * 2;
    size_t *b = malloc(n * sizeof *b);
    if (!b)
        return EL_ENOMEM;
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = n;
    for (size_t i = 0; i < n; i++)
        b[i] = NONE;
    for (size_t i = 0; i < s->nslots; i++)
        link_slot(s, i);
    return EL_OK;
}

/* (pa, ka) ranks above (pb, kb): larger priority, ties broken by the key bytes. */
static bool ranks_above(uint64_t pa, const char *ka, size_t la, uint64_t pb, const char *kb,
                        size_t lb)
{
    if (pa != pb)
        return pa > pb;
    int c = memcmp(ka, kb, la < lb ? la : lb);
    return c != 0 ? c > 0 : la > lb;
}

static bool above(const el_sample *s, size_t a, size_t b)
{
    const slot *x = &s->slots[a], *y = &s->slots[b];
    return ranks_above(x->prio, x->key, x->len, y->prio, y->key, y->len);
}

static void heap_set(el_sample *s, size_t pos, size_t id)
{
    s->heap[pos] = id;
    s->slots[id].heap_pos = pos;
}

static void sift_up(el_sample *s, size_t pos)
{
    size_t id = s->heap[pos];
    while (pos > 0) {
        size_t parent = (pos - 1) / 2;
        if (!above(s, id, s->heap[parent]))
            break;
        heap_set(s, pos, s->heap[parent]);
        pos = parent;
    }
    heap_set(s, pos, id);
}

static void sift_down(el_sample *s, size_t pos)
{
    size_t n = s->nslots, id = s->heap[pos];
    for (;;) {
        size_t c = 2 * pos + 1;
        if (c >= n)
            break;
        if (c + 1 < n && above(s, s->heap[c + 1], s->heap[c]))
            c++;
        if (!above(s, s->heap[c], id))
            break;
        heap_set(s, pos, s->heap[c]);
        pos = c;
    }
    heap_set(s, pos, id);
}

el_err el_sample_offer(el_sample *s, const void *key, size_t len, el_sample_verdict *verdict,
                       size_t *slot_out)
{
    uint64_t prio = el_sample_priority(s->seed, key, len);
    *verdict = EL_SAMPLE_OUT;
    size_t id = find(s, key, len, prio);
    if (id != NONE) {
        *verdict = EL_SAMPLE_IN;
        *slot_out = id;
        return EL_OK;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return EL_ENOMEM;
    memcpy(copy, key, len);
    copy[len] = '\0';
    if (s->k && s->nslots == s->k) {
        /* full: the newcomer replaces the largest priority if it is smaller */
        id = s->heap[0];
        const slot *top = &s->slots[id];
        bool admit = ranks_above(top->prio, top->key, top->len, prio, copy, len);
        if (!admit) {
            free(copy);
            return EL_OK;
        }
        unlink_slot(s, id);
        free(s->slots[id].key);
        s->slots[id].key = copy;
        s->slots[id].len = len;
        s->slots[id].prio = prio;
        link_slot(s, id);
        sift_down(s, 0);
        *verdict = EL_SAMPLE_NEW;
        *slot_out = id;
        return EL_OK;
    }
    if (s->nslots == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        if (s->k && cap > s->k)
            cap = s->k;
        slot *ns = realloc(s->slots, cap * sizeof *ns);
        if (!ns) {
            free(copy);
            return EL_ENOMEM;
        }
        s->slots = ns;
        if (s->k) {
            size_t *nh = realloc(s->heap, cap * sizeof *nh);
            if (!nh) {
                free(copy);
                return EL_ENOMEM;
            }
            s->heap = nh;
        }
        s->cap = cap;
    }
    if (s->nslots + 1 > s->nbuckets && grow_buckets(s)) {
        free(copy);
        return EL_ENOMEM;
    }
    id = s->nslots++;
    slot *sl = &s->slots[id];
    sl->key = copy;
    sl->len = len;
    sl->prio = prio;
    el_buf_init(&sl->value, s->value_max);
    link_slot(s, id);
    if (s->k) {
        s->heap[id] = id;
        sl->heap_pos = id;
        sift_up(s, id);
    }
    *verdict = EL_SAMPLE_NEW;
    *slot_out = id;
    return EL_OK;
}

size_t el_sample_count(const el_sample *s)
{
    return s->nslots;
}

const char *el_sample_key(const el_sample *s, size_t slot_id, size_t *len)
{
    *len = s->slots[slot_id].len;
    return s->slots[slot_id].key;
}

el_buf *el_sample_value(el_sample *s, size_t slot_id)
{
    return &s->slots[slot_id].value;
}
