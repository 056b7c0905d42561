/*
 * fake_table.h - the table of the scripted DynamoDB in the engine tests
 * that write counters (test_incremental_engine.c, test_counters_write.c):
 * items by key with a few numeric attributes, and reading a request's
 * strings. What a request does to it stays each test's own.
 * Header-only, as helpers.h.
 */
#ifndef EL_TEST_FAKE_TABLE_H
#define EL_TEST_FAKE_TABLE_H

#include <stdbool.h> /* bool */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* free */
#include <string.h>  /* memset, strcmp, strdup */
#include <yajl/yajl_tree.h>

#define EL_FAKE_TABLE_MAX 512
#define EL_FAKE_ITEM_ATTRS 4

typedef struct el_fake_item {
    char *pk, *sk;
    bool put; /* written by a Put (an edge), not only by counter updates */
    struct { char name[32]; long long v; } attr[EL_FAKE_ITEM_ATTRS];
    size_t nattr;
} el_fake_item;

typedef struct el_fake_table {
    el_fake_item items[EL_FAKE_TABLE_MAX];
    size_t n;
} el_fake_table;

static inline el_fake_item *el_fake_table_find(el_fake_table *t, const char *pk, const char *sk)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->items[i].pk, pk) == 0 && strcmp(t->items[i].sk, sk) == 0)
            return &t->items[i];
    return NULL;
}

static inline el_fake_item *el_fake_table_find_or_add(el_fake_table *t, const char *pk,
                                                      const char *sk)
{
    el_fake_item *x = el_fake_table_find(t, pk, sk);
    if (x)
        return x;
    assert_true(t->n < EL_FAKE_TABLE_MAX);
    x = &t->items[t->n++];
    memset(x, 0, sizeof *x);
    x->pk = strdup(pk);
    x->sk = strdup(sk);
    return x;
}

/* Takes x out (the last item moves into its place). */
static inline void el_fake_table_remove(el_fake_table *t, el_fake_item *x)
{
    free(x->pk);
    free(x->sk);
    *x = t->items[--t->n];
}

static inline void el_fake_table_clear(el_fake_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->items[i].pk);
        free(t->items[i].sk);
    }
    t->n = 0;
}

/* x's attribute name; *found false (and 0) when it has none. */
static inline long long el_fake_item_get(const el_fake_item *x, const char *name, bool *found)
{
    for (size_t i = 0; x && i < x->nattr; i++)
        if (strcmp(x->attr[i].name, name) == 0) {
            *found = true;
            return x->attr[i].v;
        }
    *found = false;
    return 0;
}

static inline void el_fake_item_set(el_fake_item *x, const char *name, long long v)
{
    size_t i = 0;
    while (i < x->nattr && strcmp(x->attr[i].name, name) != 0)
        i++;
    if (i == x->nattr) {
        assert_true(x->nattr < EL_FAKE_ITEM_ATTRS);
        snprintf(x->attr[i].name, sizeof x->attr[0].name, "%s", name);
        x->nattr++;
    }
    x->attr[i].v = v;
}

/* The string at v's path a/b/c (b, c may be NULL: a shorter path), or NULL. */
static inline const char *el_fake_sget(yajl_val v, const char *a, const char *b, const char *c)
{
    const char *path[] = { a, b, c, NULL };
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s ? YAJL_GET_STRING(s) : NULL;
}

#endif
