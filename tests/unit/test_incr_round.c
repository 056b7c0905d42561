/*
 * test_incr_round.c - the planning half of `load --incremental`
 * (pipeline/incr_round.h): a round never holds an item key twice and keeps
 * its rows in input order, the counter items rows touch and how many rows
 * touch each, the grouping into transactions within TransactWriteItems'
 * limits (100 actions, EL_INCR_TXN_MAX_BYTES), each transaction's body
 * (parsed back with yajl), its token and variant, member changes and
 * splits, and a reset that empties the round for the next one.
 *
 * The mapping is an edge "A#{a}" -> "T#{b}" with no index, a "pad"
 * attribute from column p (to give items a chosen size) and two counters:
 * followers on "U#{b}"/"P" and following on "U#{a}"/"P". Expected values
 * are computed here from the rows, never read back from the round.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free, strtoll */
#include <string.h>  /* memcmp, memset, strlen, strstr */

#include <yajl/yajl_tree.h>

#include "pipeline/incremental/incr_round.h"

/* ---- fixture ---- */

static const char *MAPPING =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"follows\","
    "\"pk\":\"A#{a}\",\"sk\":\"T#{b}\",\"index\":false,"
    "\"attributes\":{\"pad\":{\"column\":\"p\"}},"
    "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"P\",\"attribute\":\"followers\"},"
    "{\"pk\":\"U#{a}\",\"sk\":\"P\",\"attribute\":\"following\"}]}]}";

static char *col_names[] = { "a", "b", "p" };
static el_coltype col_types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };

typedef struct fx {
    el_mapping *m;
    el_schema schema;
    el_transform *t;
    incr_round r;
} fx;

/* MAPPING, or the same with an index ("index":true) */
static void fx_open_mapping(fx *f, bool index)
{
    char json[1024];
    const char *at = strstr(MAPPING, "\"index\":false");
    assert_non_null(at);
    int n = snprintf(json, sizeof json, "%.*s\"index\":%s%s", (int)(at - MAPPING), MAPPING,
                     index ? "true" : "false", at + strlen("\"index\":false"));
    assert_true(n > 0 && (size_t)n < sizeof json);
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(json, strlen(json), NULL, &f->m, &d))
        fail_msg("mapping: %s", d.msg);
    f->schema = (el_schema){ 3, col_names, col_types, NULL, NULL };
    if (el_source_bind(f->m->sources[0], &f->schema, &d))
        fail_msg("bind: %s", d.msg);
    assert_int_equal(el_transform_new(f->m, f->m->sources[0], &f->t), EL_OK);
    assert_int_equal(incr_round_init(&f->r), EL_OK);
}

static void fx_open(fx *f)
{
    fx_open_mapping(f, false);
}

static void fx_close(fx *f)
{
    incr_round_free(&f->r);
    el_transform_free(f->t);
    el_mapping_free(f->m);
}

/* Adds the row (a, b, pad of padlen 'x' bytes) at line/offset; returns
 * incr_round_add's result. a == NULL is a SQL NULL. */
static el_err add_pad(fx *f, const char *a, const char *b, size_t padlen, bool del,
                      uint64_t line, uint64_t offset, bool *repeat)
{
    static char pad[256 * 1024];
    if (!pad[0])
        memset(pad, 'x', sizeof pad);
    assert_true(padlen <= sizeof pad);
    el_value v[3] = { { a ? a : "", a ? strlen(a) : 0, a == NULL },
                      { b, strlen(b), false },
                      { pad, padlen, false } };
    el_row row = { 3, v, line, offset };
    el_diag d;
    el_diag_clear(&d);
    return incr_round_add(&f->r, f->m, f->m->sources[0], f->t, &row, del, repeat, &d);
}

/* A small row ("pad" = "x") that must be accepted. */
static void add_ok(fx *f, const char *a, const char *b, bool del, uint64_t n)
{
    bool repeat = true;
    assert_int_equal(add_pad(f, a, b, 1, del, n, 100 * n, &repeat), EL_OK);
    assert_false(repeat);
}

/* "PK\0SK" of an edge or counter item. */
static size_t item_key(char *buf, size_t cap, const char *pkp, const char *pk,
                       const char *skp, const char *sk)
{
    int n = snprintf(buf, cap, "%s%s%c%s%s", pkp, pk, '\0', skp, sk);
    assert_true(n > 0 && (size_t)n < cap);
    return (size_t)n;
}

static bool row_key_is(const incr_round *r, size_t i, const char *a, const char *b)
{
    char k[128];
    size_t kl = item_key(k, sizeof k, "A#", a, "T#", b);
    return r->rows[i].key_len == kl && memcmp(r->keys.data + r->rows[i].key_off, k, kl) == 0;
}

/* The round's index of counter item U#<id>/P, or SIZE_MAX. */
static size_t find_item(const incr_round *r, const char *id)
{
    char k[128];
    size_t kl = item_key(k, sizeof k, "U#", id, "", "P");
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < r->nitems; i++) {
        const incr_ckref *c = &r->cks[r->items[i].ck];
        if (c->item_len == kl && memcmp(r->ctext.data + c->off, k, kl) == 0) {
            assert_true(found == SIZE_MAX); /* one item per key */
            found = i;
        }
    }
    return found;
}

/* Rows of the round whose counters touch item it (each row once),
 * counted from the rows' own counter references. */
static size_t rows_touching(const incr_round *r, size_t it)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        bool hit = false;
        for (size_t k = 0; k < r->rows[i].nck; k++)
            hit |= r->cks[r->rows[i].ck_first + k].item == it;
        n += hit;
    }
    return n;
}

/* ---- rounds ---- */

/* A repeated item key is refused with *repeat (nothing added, whatever its
 * op); the rows before it stay in input order with their line, offset, op
 * and token; after a reset the refused row starts the next round. */
static void repeated_key_starts_next_round(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    add_ok(&f, "1", "s", false, 1);
    add_ok(&f, "1", "t", false, 2);
    add_ok(&f, "2", "s", true, 3);
    size_t json = f.r.json.len, keys = f.r.keys.len, ctext = f.r.ctext.len;
    size_t ncks = f.r.ncks, nitems = f.r.nitems;
    size_t s = find_item(&f.r, "s");
    assert_true(s != SIZE_MAX);
    size_t s_rows = f.r.items[s].rows;
    assert_int_equal(s_rows, 2);
    for (int op = 0; op < 2; op++) { /* the same key as a put and as a delete */
        bool repeat = false;
        assert_int_equal(add_pad(&f, "1", "s", 1, op == 1, 9, 900, &repeat), EL_OK);
        assert_true(repeat);
        assert_int_equal(f.r.nrows, 3);
        assert_int_equal(f.r.json.len, json);
        assert_int_equal(f.r.keys.len, keys);
        assert_int_equal(f.r.ctext.len, ctext);
        assert_int_equal(f.r.ncks, ncks);
        assert_int_equal(f.r.nitems, nitems);
        assert_int_equal(f.r.items[s].rows, s_rows);
    }
    static const struct { const char *a, *b; bool del; } want[] = {
        { "1", "s", false }, { "1", "t", false }, { "2", "s", true },
    };
    for (size_t i = 0; i < 3; i++) {
        const incr_row *ir = &f.r.rows[i];
        assert_true(row_key_is(&f.r, i, want[i].a, want[i].b));
        assert_int_equal(ir->line, i + 1);
        assert_int_equal(ir->offset, 100 * (i + 1));
        assert_int_equal(ir->del, want[i].del);
        assert_false(ir->indexed); /* the source writes no index */
        char k[64];
        size_t kl = item_key(k, sizeof k, "A#", want[i].a, "T#", want[i].b);
        uint64_t tok[2];
        el_incr_row_token("Graph", want[i].del ? 'D' : 'P', k, kl, 100 * (i + 1), tok);
        assert_true(ir->tok[0] == tok[0] && ir->tok[1] == tok[1]);
        char js[128];
        int jl = snprintf(js, sizeof js, "{\"PK\":{\"S\":\"A#%s\"},\"SK\":{\"S\":\"T#%s\"},"
                          "\"pad\":{\"S\":\"x\"}}", want[i].a, want[i].b);
        assert_int_equal(ir->json_len, (size_t)jl);
        assert_memory_equal(f.r.json.data + ir->json_off, js, (size_t)jl);
    }
    /* the next round takes the carried row */
    incr_round_reset(&f.r);
    assert_int_equal(f.r.nrows, 0);
    assert_int_equal(f.r.nitems, 0);
    add_ok(&f, "1", "s", true, 9);
    assert_int_equal(f.r.nrows, 1);
    assert_true(row_key_is(&f.r, 0, "1", "s"));
    assert_true(f.r.rows[0].del);
    fx_close(&f);
}

/* A row the transform rejects (NULL key column) adds nothing and does not
 * block a later row. */
static void rejected_row_adds_nothing(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    add_ok(&f, "1", "s", false, 1);
    size_t json = f.r.json.len, keys = f.r.keys.len, ncks = f.r.ncks;
    bool repeat = true;
    assert_int_equal(add_pad(&f, NULL, "s", 1, false, 2, 200, &repeat), EL_EREJECT);
    assert_false(repeat);
    assert_int_equal(f.r.nrows, 1);
    assert_int_equal(f.r.json.len, json);
    assert_int_equal(f.r.keys.len, keys);
    assert_int_equal(f.r.ncks, ncks);
    assert_int_equal(f.r.items[find_item(&f.r, "s")].rows, 1);
    add_ok(&f, "2", "s", false, 3);
    assert_int_equal(f.r.items[find_item(&f.r, "s")].rows, 2);
    fx_close(&f);
}

/* Counter items are keyed by "PK\0SK" (not the attribute): followers of s
 * and the following of s land on one item. Each row references its
 * counters in the mapping's order. */
static void counter_items_and_row_counts(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    static const char *edges[][2] = {
        { "1", "s" }, { "2", "s" }, { "3", "s" }, { "1", "t" }, { "s", "u" }, { "4", "u" },
    };
    size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; i++)
        add_ok(&f, edges[i][0], edges[i][1], false, i + 1);
    assert_int_equal(f.r.nrows, n);
    /* distinct ids among a and b: 1 2 3 4 s t u */
    assert_int_equal(f.r.nitems, 7);
    static const struct { const char *id; size_t rows; } want[] = {
        { "s", 4 }, { "t", 1 }, { "u", 2 }, { "1", 2 }, { "2", 1 }, { "3", 1 }, { "4", 1 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t it = find_item(&f.r, want[i].id);
        if (it == SIZE_MAX)
            fail_msg("no counter item U#%s", want[i].id);
        assert_int_equal(f.r.items[it].rows, want[i].rows);
        assert_int_equal(rows_touching(&f.r, it), want[i].rows);
        assert_false(f.r.items[it].busy);
    }
    assert_int_equal(f.r.ncks, 2 * n);
    for (size_t i = 0; i < n; i++) {
        const incr_row *ir = &f.r.rows[i];
        assert_int_equal(ir->nck, 2);
        const incr_ckref *c0 = &f.r.cks[ir->ck_first], *c1 = &f.r.cks[ir->ck_first + 1];
        assert_int_equal(c0->item, find_item(&f.r, edges[i][1]));
        assert_int_equal(c1->item, find_item(&f.r, edges[i][0]));
        const char *a0 = f.r.ctext.data + c0->off + c0->item_len + 1;
        const char *a1 = f.r.ctext.data + c1->off + c1->item_len + 1;
        assert_int_equal(c0->len - c0->item_len - 1, strlen("followers"));
        assert_memory_equal(a0, "followers", strlen("followers"));
        assert_int_equal(c1->len - c1->item_len - 1, strlen("following"));
        assert_memory_equal(a1, "following", strlen("following"));
    }
    fx_close(&f);
}

/* A full round: EL_INCR_ROUND_ROWS distinct keys fit without a false
 * repeat, each of them again is a repeat, and after a reset the round
 * takes them all again. */
static void full_round(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    char a[32], b[32];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < EL_INCR_ROUND_ROWS; i++) {
            snprintf(a, sizeof a, "%zu", i);
            snprintf(b, sizeof b, "%zu", i % 97);
            bool repeat = true;
            assert_int_equal(add_pad(&f, a, b, 1, false, i + 1, i, &repeat), EL_OK);
            if (repeat)
                fail_msg("row %zu refused as a repeat", i);
        }
        assert_int_equal(f.r.nrows, EL_INCR_ROUND_ROWS);
        for (size_t i = 0; i < EL_INCR_ROUND_ROWS; i += 7) {
            snprintf(a, sizeof a, "%zu", i);
            snprintf(b, sizeof b, "%zu", i % 97);
            bool repeat = false;
            assert_int_equal(add_pad(&f, a, b, 1, true, 1, 1, &repeat), EL_OK);
            if (!repeat)
                fail_msg("row %zu taken twice", i);
        }
        assert_int_equal(f.r.nrows, EL_INCR_ROUND_ROWS);
        incr_round_reset(&f.r);
        assert_int_equal(f.r.nrows, 0);
        assert_int_equal(f.r.json.len, 0);
    }
    fx_close(&f);
}

/* ---- grouping ---- */

/* What every grouping must be: each row of the round in exactly one group
 * (groups not done), members in input order, each group's items the set
 * its rows touch, and TransactWriteItems' limits kept. */
static void check_groups(const incr_round *r)
{
    size_t *seen = calloc(r->nrows ? r->nrows : 1, sizeof *seen);
    bool *touch = calloc(r->nitems ? r->nitems : 1, sizeof *touch);
    assert_non_null(seen);
    assert_non_null(touch);
    for (size_t gi = 0; gi < r->ngroups; gi++) {
        const incr_group *g = &r->groups[gi];
        if (g->done)
            continue;
        assert_true(g->n >= 1);
        size_t bytes = 0;
        memset(touch, 0, r->nitems * sizeof *touch);
        for (size_t i = 0; i < g->n; i++) {
            assert_true(g->m[i] < r->nrows);
            if (i)
                assert_true(g->m[i - 1] < g->m[i]);
            seen[g->m[i]]++;
            const incr_row *ir = &r->rows[g->m[i]];
            bytes += ir->json_len;
            for (size_t k = 0; k < ir->nck; k++)
                touch[r->cks[ir->ck_first + k].item] = true;
        }
        size_t ntouch = 0;
        for (size_t it = 0; it < r->nitems; it++)
            ntouch += touch[it];
        assert_int_equal(g->nitems, ntouch);
        for (size_t j = 0; j < g->nitems; j++) {
            assert_true(touch[g->items[j]]);
            for (size_t k = 0; k < j; k++)
                assert_true(g->items[k] != g->items[j]);
        }
        assert_true(g->n + g->nitems <= EL_DDB_TXN_MAX_ACTIONS);
        assert_true(bytes <= EL_INCR_TXN_MAX_BYTES);
        assert_int_equal(g->variant, 0);
        assert_false(g->queued);
    }
    for (size_t i = 0; i < r->nrows; i++)
        if (seen[i] != 1)
            fail_msg("row %zu is in %zu groups", i, seen[i]);
    free(seen);
    free(touch);
}

/* The group holding row i (among groups not done). */
static const incr_group *group_of(const incr_round *r, size_t row)
{
    for (size_t gi = 0; gi < r->ngroups; gi++)
        for (size_t i = 0; !r->groups[gi].done && i < r->groups[gi].n; i++)
            if (r->groups[gi].m[i] == row)
                return &r->groups[gi];
    fail_msg("row %zu in no group", row);
    return NULL;
}

/* Each row goes with the rows sharing its most shared counter item; a row
 * whose counters no other row shares goes alone; no_grouping: one row a
 * transaction. */
static void rows_group_by_most_shared_item(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    static const char *edges[][2] = {
        { "1", "s" }, { "9", "t" }, { "2", "s" }, { "9", "u" }, { "3", "s" },
        { "9", "v" }, { "9", "w" }, { "5", "x" }, { "6", "y" },
    };
    size_t n = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < n; i++)
        add_ok(&f, edges[i][0], edges[i][1], false, i + 1);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    /* followers of s: rows 0 2 4; following of 9: rows 1 3 5 6; 7, 8 alone */
    assert_int_equal(f.r.ngroups, 4);
    static const size_t star_s[] = { 0, 2, 4 }, star_9[] = { 1, 3, 5, 6 };
    const incr_group *gs = group_of(&f.r, 0), *g9 = group_of(&f.r, 1);
    assert_int_equal(gs->n, 3);
    assert_memory_equal(gs->m, star_s, sizeof star_s);
    assert_int_equal(gs->nitems, 4);            /* s, 1, 2, 3 */
    assert_int_equal(g9->n, 4);
    assert_memory_equal(g9->m, star_9, sizeof star_9);
    assert_int_equal(g9->nitems, 5);            /* 9, t, u, v, w */
    assert_int_equal(group_of(&f.r, 7)->n, 1);
    assert_int_equal(group_of(&f.r, 8)->n, 1);
    assert_true(group_of(&f.r, 7) != group_of(&f.r, 8));

    /* the same rows again, one row a transaction */
    incr_round_reset(&f.r);
    for (size_t i = 0; i < n; i++)
        add_ok(&f, edges[i][0], edges[i][1], false, i + 1);
    assert_int_equal(incr_round_group(&f.r, true), EL_OK);
    check_groups(&f.r);
    assert_int_equal(f.r.ngroups, n);
    for (size_t gi = 0; gi < n; gi++) {
        assert_int_equal(f.r.groups[gi].n, 1);
        assert_int_equal(f.r.groups[gi].nitems, 2);
    }
    fx_close(&f);
}

/* A transaction never holds two actions on one item (DynamoDB refuses
 * it): a row's Put of an item another row adds to goes in another
 * transaction, and a row that counts on its own item goes alone. Every
 * row adds to "ALL", so without the rule all would share one. */
static void no_two_actions_on_one_item(void **state)
{
    (void)state;
    static const char mapping[] =
        "{\"table\":\"Graph\",\"sources\":[{\"name\":\"s\",\"pk\":\"U#{a}\","
        "\"sk\":\"{b}\",\"index\":false,\"counters\":["
        "{\"pk\":\"U#{b}\",\"sk\":\"P\",\"attribute\":\"followers\"},"
        "{\"pk\":\"ALL\",\"sk\":\"P\",\"attribute\":\"rows\"}]}]}";
    fx f;
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(mapping, strlen(mapping), NULL, &f.m, &d))
        fail_msg("mapping: %s", d.msg);
    f.schema = (el_schema){ 3, col_names, col_types, NULL, NULL };
    assert_int_equal(el_source_bind(f.m->sources[0], &f.schema, &d), EL_OK);
    assert_int_equal(el_transform_new(f.m, f.m->sources[0], &f.t), EL_OK);
    assert_int_equal(incr_round_init(&f.r), EL_OK);
    /* row 0 puts U#x/P, which row 1 adds to; row 3 adds to U#P/P, its own */
    add_ok(&f, "x", "P", false, 1);
    add_ok(&f, "y", "x", false, 2);
    add_ok(&f, "z", "w", false, 3);
    add_ok(&f, "P", "P", false, 4);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    assert_true(group_of(&f.r, 0) != group_of(&f.r, 1));
    assert_int_equal(group_of(&f.r, 3)->n, 1);
    for (size_t gi = 0; gi < f.r.ngroups; gi++) {
        const incr_group *g = &f.r.groups[gi];
        for (size_t i = 0; i < g->n; i++) {
            const incr_row *ir = &f.r.rows[g->m[i]];
            const char *key = f.r.keys.data + ir->key_off;
            for (size_t k = 0; k < g->nitems; k++) {
                const incr_ckref *c = &f.r.cks[f.r.items[g->items[k]].ck];
                bool same = c->item_len == ir->key_len &&
                            memcmp(f.r.ctext.data + c->off, key, c->item_len) == 0;
                if (same && g->n > 1)
                    fail_msg("transaction %zu puts and adds to one item (row %zu)", gi, g->m[i]);
            }
        }
    }
    /* rows 1 and 2 still share the ALL counter's transaction */
    assert_true(group_of(&f.r, 1) == group_of(&f.r, 2));
    /* the Put of U#x/P goes before the ADD to it, and keeps it busy */
    const incr_group *g0 = group_of(&f.r, 0);
    assert_true(g0 < group_of(&f.r, 1));
    assert_int_equal(g0->nputs, 1);
    size_t x = SIZE_MAX;
    for (size_t i = 0; i < f.r.nitems; i++) {
        const incr_ckref *c = &f.r.cks[f.r.items[i].ck];
        if (c->item_len == 5 && memcmp(f.r.ctext.data + c->off, "U#x\0P", 5) == 0)
            x = i;
    }
    assert_true(x != SIZE_MAX);
    assert_int_equal(g0->puts[0], x);
    assert_int_equal(f.r.items[x].puts_pending, 1);
    /* the ADD to U#x/P waits until the Put is done; the Put never waits */
    incr_group *g1 = &f.r.groups[group_of(&f.r, 1) - f.r.groups];
    assert_true(incr_group_waits(&f.r, g1));
    assert_false(incr_group_waits(&f.r, g0));
    incr_group *put = &f.r.groups[g0 - f.r.groups];
    incr_group_finish(&f.r, put);
    incr_group_finish(&f.r, put); /* once is once */
    assert_int_equal(f.r.items[x].puts_pending, 0);
    assert_false(incr_group_waits(&f.r, g1));
    fx_close(&f);
}

/* A star: every row adds to the star's followers and to its own follower's
 * following, so a transaction of k rows has k + 1 + k actions: 49 rows at
 * most, and as many as fit. */
static void star_groups_stay_under_100_actions(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    const size_t n = 1000;
    char a[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(a, sizeof a, "f%zu", i);
        add_ok(&f, a, "star", false, i + 1);
    }
    assert_int_equal(f.r.items[find_item(&f.r, "star")].rows, n);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    size_t per = (EL_DDB_TXN_MAX_ACTIONS - 1) / 2; /* 2k + 1 <= 100 */
    assert_int_equal(per, 49);
    assert_int_equal(f.r.ngroups, (n + per - 1) / per);
    for (size_t gi = 0; gi < f.r.ngroups; gi++) {
        size_t want = gi + 1 < f.r.ngroups ? per : n - per * (f.r.ngroups - 1);
        assert_int_equal(f.r.groups[gi].n, want);
        assert_int_equal(f.r.groups[gi].nitems, want + 1);
        assert_int_equal(f.r.groups[gi].m[0], gi * per); /* input order kept */
    }
    fx_close(&f);
}

/* The limit is 100 actions, not fewer: a follower of itself adds one
 * action (its row; its two counters are on the star's item), so it and
 * 49 followers make a transaction of exactly 100. */
static void a_transaction_may_hold_100_actions(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    add_ok(&f, "star", "star", false, 1);
    char a[32];
    for (size_t i = 0; i < 99; i++) {
        snprintf(a, sizeof a, "f%zu", i);
        add_ok(&f, a, "star", false, i + 2);
    }
    assert_int_equal(f.r.rows[0].nck, 2);
    assert_int_equal(f.r.cks[f.r.rows[0].ck_first].item, f.r.cks[f.r.rows[0].ck_first + 1].item);
    size_t star = find_item(&f.r, "star");
    assert_int_equal(rows_touching(&f.r, star), 100);
    assert_int_equal(f.r.items[star].rows, 100);  /* the follower of itself counts once */
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    const incr_group *g = group_of(&f.r, 0);
    assert_int_equal(g->n, 50);                  /* the star itself and f0..f48 */
    assert_int_equal(g->nitems, 50);             /* star, f0..f48 */
    assert_int_equal(g->n + g->nitems, EL_DDB_TXN_MAX_ACTIONS);
    assert_int_equal(f.r.ngroups, 3);            /* f49..f97, f98 */
    assert_int_equal(group_of(&f.r, 50)->n, 49);
    assert_int_equal(group_of(&f.r, 99)->n, 1);
    fx_close(&f);
}

/* Large rows of one star: a transaction's rows stay under
 * EL_INCR_TXN_MAX_BYTES, and each takes as many rows as fit. */
static void big_rows_stay_under_the_byte_cap(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    const size_t n = 40, padlen = 200000;
    char a[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(a, sizeof a, "f%02zu", i);
        bool repeat = true;
        assert_int_equal(add_pad(&f, a, "s", padlen, false, i + 1, i, &repeat), EL_OK);
        assert_false(repeat);
    }
    /* {"PK":{"S":"A#fNN"},"SK":{"S":"T#s"},"pad":{"S":"<pad>"}} */
    size_t row_json = strlen("{\"PK\":{\"S\":\"A#f00\"},\"SK\":{\"S\":\"T#s\"},\"pad\":{\"S\":\"\"}}") +
                      padlen;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(f.r.rows[i].json_len, row_json);
    size_t per = EL_INCR_TXN_MAX_BYTES / row_json;
    assert_true(per < (EL_DDB_TXN_MAX_ACTIONS - 1) / 2); /* bytes, not actions, decide */
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    assert_int_equal(f.r.ngroups, (n + per - 1) / per);
    for (size_t gi = 0; gi + 1 < f.r.ngroups; gi++)
        assert_int_equal(f.r.groups[gi].n, per);
    fx_close(&f);
}

/* ---- transaction bodies ---- */

static yajl_val parse(const el_buf *b)
{
    char err[256];
    yajl_val v = yajl_tree_parse(el_buf_str(b), err, sizeof err);
    if (!v)
        fail_msg("body is not JSON (%s): %s", err, el_buf_str(b));
    return v;
}

static const char *str_at(yajl_val v, const char **path)
{
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    if (!s)
        fail_msg("no string at %s...", path[0]);
    return YAJL_GET_STRING(s);
}

/* The key {"PK":{"S":pk},"SK":{"S":sk}} of a Put item, Delete or Update. */
static void check_key(yajl_val key, const char *pk, const char *sk)
{
    assert_non_null(key);
    assert_true(YAJL_IS_OBJECT(key));
    const char *ppk[] = { "PK", "S", NULL }, *psk[] = { "SK", "S", NULL };
    assert_string_equal(str_at(key, ppk), pk);
    assert_string_equal(str_at(key, psk), sk);
}

typedef struct want_update {
    const char *pk;
    const char *attr[2];
    long long delta[2];
    size_t nattr;
} want_update;

/* An Update action: its key, and attribute -> net change as ADD names
 * it, whatever the placeholders' numbering. */
static void check_update(yajl_val act, const want_update *w)
{
    const char *pkey[] = { "Update", "Key", NULL };
    check_key(yajl_tree_get(act, pkey, yajl_t_object), w->pk, "P");
    const char *ptab[] = { "Update", "TableName", NULL };
    assert_string_equal(str_at(act, ptab), "Graph");
    const char *pexp[] = { "Update", "UpdateExpression", NULL };
    const char *expr = str_at(act, pexp);
    assert_true(strncmp(expr, "ADD ", 4) == 0);
    const char *p = expr + 4;
    size_t got = 0;
    bool used[2] = { false, false };
    while (*p) {
        char name[16], val[16];
        int len = 0;
        if (sscanf(p, "%15s %15[^,]%n", name, val, &len) != 2)
            fail_msg("update expression: %s", expr);
        p += len;
        if (*p == ',')
            p++;
        while (*p == ' ')
            p++;
        const char *pn[] = { "Update", "ExpressionAttributeNames", name, NULL };
        const char *pv[] = { "Update", "ExpressionAttributeValues", val, "N", NULL };
        const char *attr = str_at(act, pn);
        long long delta = strtoll(str_at(act, pv), NULL, 10);
        size_t a = 0;
        while (a < w->nattr && strcmp(w->attr[a], attr) != 0)
            a++;
        if (a == w->nattr || used[a])
            fail_msg("unexpected ADD of %s on %s", attr, w->pk);
        used[a] = true;
        assert_int_equal(delta, w->delta[a]);
        got++;
    }
    assert_int_equal(got, w->nattr);
    const char *pnames[] = { "Update", "ExpressionAttributeNames", NULL };
    assert_int_equal(yajl_tree_get(act, pnames, yajl_t_object)->u.object.len, w->nattr);
}

/* The ClientRequestToken of rows m[0..n) (their op, key and offset) at a
 * run and variant, computed from the rows' definitions. */
static void want_token(const char *const (*edges)[2], const bool *del, const uint64_t *off,
                       size_t n, uint64_t run_id, unsigned variant, char out[33])
{
    uint64_t toks[8][2];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        char k[64];
        size_t kl = item_key(k, sizeof k, "A#", edges[i][0], "T#", edges[i][1]);
        el_incr_row_token("Graph", del[i] ? 'D' : 'P', k, kl, off[i], toks[i]);
    }
    el_incr_txn_token((const uint64_t (*)[2])toks, n, run_id, variant, out);
}

/* Three rows of star s (two puts, a delete) and a follow of s by 4: one
 * transaction with a conditional Put/Delete per row and one ADD of the
 * net change per counter item, two attributes on s's item. */
static void txn_body_of_a_group(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    static const char *const edges[][2] = { { "1", "s" }, { "2", "s" }, { "3", "s" },
                                            { "s", "4" } };
    static const bool del[] = { false, false, true, false };
    const uint64_t off[] = { 100, 200, 300, 400 };
    for (size_t i = 0; i < 4; i++)
        add_ok(&f, edges[i][0], edges[i][1], del[i], i + 1);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    assert_int_equal(f.r.ngroups, 1); /* every row touches s */
    const incr_group *g = &f.r.groups[0];
    assert_int_equal(g->n, 4);
    el_buf b;
    el_buf_init(&b, EL_DDB_MAX_REQUEST_BYTES);
    assert_int_equal(el_buf_puts(&b, "stale"), EL_OK);
    double wcu = -1;
    assert_int_equal(incr_txn_body(&f.r, g, f.m, 42, &b, &wcu), EL_OK);
    yajl_val v = parse(&b);
    const char *pitems[] = { "TransactItems", NULL };
    yajl_val items = yajl_tree_get(v, pitems, yajl_t_array);
    assert_non_null(items);
    /* 4 rows; items s (followers +1, following +1), 1 +1, 2 +1, 3 -1, 4 followers +1 */
    assert_int_equal(items->u.array.len, 4 + 5);
    for (size_t i = 0; i < 4; i++) {
        yajl_val act = items->u.array.values[i];
        char pk[16], sk[16];
        snprintf(pk, sizeof pk, "A#%s", edges[i][0]);
        snprintf(sk, sizeof sk, "T#%s", edges[i][1]);
        const char *op = del[i] ? "Delete" : "Put";
        assert_int_equal(act->u.object.len, 1);
        assert_string_equal(act->u.object.keys[0], op);
        const char *pkey[] = { op, del[i] ? "Key" : "Item", NULL };
        yajl_val key = yajl_tree_get(act, pkey, yajl_t_object);
        check_key(key, pk, sk);
        if (!del[i]) {
            const char *ppad[] = { "pad", "S", NULL };
            assert_string_equal(str_at(key, ppad), "x");
        } else {
            assert_int_equal(key->u.object.len, 2);
        }
        const char *pcond[] = { op, "ConditionExpression", NULL };
        assert_string_equal(str_at(act, pcond),
                            del[i] ? "attribute_exists(#p)" : "attribute_not_exists(#p)");
        const char *pname[] = { op, "ExpressionAttributeNames", "#p", NULL };
        assert_string_equal(str_at(act, pname), "PK");
        const char *ptab[] = { op, "TableName", NULL };
        assert_string_equal(str_at(act, ptab), "Graph");
    }
    static const want_update wu[] = {
        { "U#s", { "followers", "following" }, { 1, 1 }, 2 },
        { "U#1", { "following" }, { 1 }, 1 },
        { "U#2", { "following" }, { 1 }, 1 },
        { "U#3", { "following" }, { -1 }, 1 },
        { "U#4", { "followers" }, { 1 }, 1 },
    };
    bool matched[5] = { false };
    for (size_t i = 4; i < items->u.array.len; i++) {
        yajl_val act = items->u.array.values[i];
        const char *ppk[] = { "Update", "Key", "PK", "S", NULL };
        const char *pk = str_at(act, ppk);
        size_t w = 0;
        while (w < 5 && strcmp(wu[w].pk, pk) != 0)
            w++;
        if (w == 5 || matched[w])
            fail_msg("unexpected update of %s", pk);
        matched[w] = true;
        check_update(act, &wu[w]);
    }
    const char *ptok[] = { "ClientRequestToken", NULL };
    char tok[33];
    want_token(edges, del, off, 4, 42, 0, tok);
    assert_string_equal(str_at(v, ptok), tok);
    const char *prcc[] = { "ReturnConsumedCapacity", NULL };
    assert_string_equal(str_at(v, prcc), "TOTAL");
    assert_int_equal(v->u.object.len, 3);
    /* each item is under 1 KB: 1 unit a row, 1 a counter item, twice */
    assert_true(wcu == 2.0 * (4 + 5));
    yajl_tree_free(v);

    /* after a cancellation: a new variant, a new token, the same actions */
    el_buf b1;
    el_buf_init(&b1, EL_DDB_MAX_REQUEST_BYTES);
    assert_int_equal(el_buf_append(&b1, b.data, b.len), EL_OK);
    f.r.groups[0].variant = 1;
    double wcu1 = -1;
    assert_int_equal(incr_txn_body(&f.r, &f.r.groups[0], f.m, 42, &b, &wcu1), EL_OK);
    char tok1[33];
    want_token(edges, del, off, 4, 42, 1, tok1);
    assert_string_not_equal(tok, tok1);
    const char *t0 = strstr(el_buf_str(&b1), tok), *t1 = strstr(el_buf_str(&b), tok1);
    assert_non_null(t0);
    assert_non_null(t1);
    assert_int_equal(t0 - b1.data, t1 - b.data);
    assert_memory_equal(b.data, b1.data, (size_t)(t1 - b.data));
    assert_string_equal(t1 + 32, t0 + 32);
    assert_true(wcu1 == wcu);
    /* another run: another token */
    f.r.groups[0].variant = 0;
    assert_int_equal(incr_txn_body(&f.r, &f.r.groups[0], f.m, 43, &b, &wcu1), EL_OK);
    char tok2[33];
    want_token(edges, del, off, 4, 43, 0, tok2);
    assert_string_not_equal(tok, tok2);
    assert_non_null(strstr(el_buf_str(&b), tok2));
    el_buf_free(&b1);
    el_buf_free(&b);
    fx_close(&f);
}

/* A put and a delete on one star: its net change is 0, so no Update of
 * it; the other counter items still get theirs. Item sizes over 1 KB cost
 * a unit per started KB. */
static void cancelling_changes_and_units(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    bool repeat;
    const size_t pad1 = 3000, pad2 = 1;
    assert_int_equal(add_pad(&f, "1", "s", pad1, false, 1, 10, &repeat), EL_OK);
    assert_false(repeat);
    assert_int_equal(add_pad(&f, "2", "s", pad2, true, 2, 20, &repeat), EL_OK);
    assert_false(repeat);
    /* DynamoDB's size: attribute names and values */
    size_t size1 = strlen("PK") + strlen("A#1") + strlen("SK") + strlen("T#s") + strlen("pad") +
                   pad1;
    size_t size2 = size1 - pad1 + pad2;
    assert_int_equal(f.r.rows[0].size, size1);
    assert_int_equal(f.r.rows[1].size, size2);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    assert_int_equal(f.r.ngroups, 1);
    const incr_group *g = &f.r.groups[0];
    assert_int_equal(g->nitems, 3); /* s stays busy with the group, though unchanged */
    el_buf b;
    el_buf_init(&b, EL_DDB_MAX_REQUEST_BYTES);
    double wcu = 0;
    assert_int_equal(incr_txn_body(&f.r, g, f.m, 7, &b, &wcu), EL_OK);
    yajl_val v = parse(&b);
    const char *pitems[] = { "TransactItems", NULL };
    yajl_val items = yajl_tree_get(v, pitems, yajl_t_array);
    assert_non_null(items);
    assert_int_equal(items->u.array.len, 2 + 2);
    static const want_update wu[] = {
        { "U#1", { "following" }, { 1 }, 1 },
        { "U#2", { "following" }, { -1 }, 1 },
    };
    for (size_t i = 2; i < 4; i++) {
        const char *ppk[] = { "Update", "Key", "PK", "S", NULL };
        const char *pk = str_at(items->u.array.values[i], ppk);
        assert_string_not_equal(pk, "U#s");
        check_update(items->u.array.values[i], strcmp(pk, "U#1") == 0 ? &wu[0] : &wu[1]);
    }
    double units1 = (double)((size1 + 1023) / 1024); /* 3 */
    assert_true(units1 == 3);
    assert_true(wcu == 2 * (units1 + 1) + 2 * 2);
    yajl_tree_free(v);
    el_buf_free(&b);
    fx_close(&f);
}

/* A source that writes the index: a write costs its units again in the
 * index, a delete likewise. */
static void indexed_rows_cost_twice(void **state)
{
    (void)state;
    fx f;
    fx_open_mapping(&f, true);
    bool repeat;
    const size_t pad = 1500;
    assert_int_equal(add_pad(&f, "1", "s", pad, false, 1, 10, &repeat), EL_OK);
    assert_false(repeat);
    assert_true(f.r.rows[0].indexed);
    /* PK, SK, pad, and the index keys GSI1PK = T#s, GSI1SK = A#1 */
    size_t size = strlen("PK") + strlen("A#1") + strlen("SK") + strlen("T#s") +
                  strlen("pad") + pad + strlen("GSI1PK") + strlen("T#s") + strlen("GSI1SK") +
                  strlen("A#1");
    assert_int_equal(f.r.rows[0].size, size);
    double units = (double)((size + 1023) / 1024);
    assert_true(units == 2);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    assert_int_equal(f.r.ngroups, 1);
    el_buf b;
    el_buf_init(&b, EL_DDB_MAX_REQUEST_BYTES);
    double wcu = 0;
    assert_int_equal(incr_txn_body(&f.r, &f.r.groups[0], f.m, 1, &b, &wcu), EL_OK);
    assert_true(wcu == 2 * (2 * units) + 2 * 2); /* the row in table and index; s and 1 */
    yajl_val v = parse(&b);
    const char *pitems[] = { "TransactItems", NULL };
    yajl_val items = yajl_tree_get(v, pitems, yajl_t_array);
    const char *pgsi[] = { "Put", "Item", "GSI1PK", "S", NULL };
    assert_string_equal(str_at(items->u.array.values[0], pgsi), "T#s");
    yajl_tree_free(v);
    el_buf_free(&b);
    fx_close(&f);
}

/* ---- member changes, splits, reset ---- */

/* New members (the rows left after some turned out duplicates) recompute
 * the items the group touches; a split makes one transaction per member,
 * appended, the original marked done. Everything is freed by a reset and
 * the round's free (LeakSanitizer in CI). */
static void set_members_split_and_reset(void **state)
{
    (void)state;
    fx f;
    fx_open(&f);
    static const char *edges[][2] = { { "1", "s" }, { "2", "s" }, { "3", "s" }, { "4", "s" } };
    for (size_t i = 0; i < 4; i++)
        add_ok(&f, edges[i][0], edges[i][1], false, i + 1);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    assert_int_equal(f.r.ngroups, 1);
    const size_t keep[] = { 1, 3 };
    assert_int_equal(incr_group_set_members(&f.r, &f.r.groups[0], keep, 2), EL_OK);
    incr_group *g = &f.r.groups[0];
    assert_int_equal(g->n, 2);
    assert_memory_equal(g->m, keep, sizeof keep);
    assert_int_equal(g->nitems, 3); /* s, 2, 4 */
    size_t want_items[] = { find_item(&f.r, "s"), find_item(&f.r, "2"), find_item(&f.r, "4") };
    for (size_t i = 0; i < 3; i++) {
        bool in = false;
        for (size_t j = 0; j < g->nitems; j++)
            in |= g->items[j] == want_items[i];
        assert_true(in);
    }
    el_buf b;
    el_buf_init(&b, EL_DDB_MAX_REQUEST_BYTES);
    double wcu;
    g->variant = 2;
    assert_int_equal(incr_txn_body(&f.r, g, f.m, 5, &b, &wcu), EL_OK);
    yajl_val v = parse(&b);
    const char *pitems[] = { "TransactItems", NULL };
    yajl_val items = yajl_tree_get(v, pitems, yajl_t_array);
    assert_int_equal(items->u.array.len, 2 + 3);
    static const want_update wu[] = {
        { "U#s", { "followers" }, { 2 }, 1 },
        { "U#2", { "following" }, { 1 }, 1 },
        { "U#4", { "following" }, { 1 }, 1 },
    };
    bool matched[3] = { false };
    for (size_t i = 2; i < 5; i++) {
        const char *ppk[] = { "Update", "Key", "PK", "S", NULL };
        const char *pk = str_at(items->u.array.values[i], ppk);
        size_t w = 0;
        while (w < 3 && strcmp(wu[w].pk, pk) != 0)
            w++;
        if (w == 3 || matched[w])
            fail_msg("unexpected update of %s", pk);
        matched[w] = true;
        check_update(items->u.array.values[i], &wu[w]);
    }
    const char *ptok[] = { "ClientRequestToken", NULL };
    char tok[33];
    const char *const kept[][2] = { { "2", "s" }, { "4", "s" } };
    const bool del[] = { false, false };
    const uint64_t off[] = { 200, 400 };
    want_token(kept, del, off, 2, 5, 2, tok);
    assert_string_equal(str_at(v, ptok), tok);
    yajl_tree_free(v);

    assert_int_equal(incr_round_split(&f.r, 0), EL_OK);
    assert_int_equal(f.r.ngroups, 3);
    assert_true(f.r.groups[0].done);
    for (size_t gi = 1; gi < 3; gi++) {
        const incr_group *s = &f.r.groups[gi];
        assert_false(s->done);
        assert_int_equal(s->variant, 0);
        assert_int_equal(s->n, 1);
        assert_int_equal(s->m[0], keep[gi - 1]);
        assert_int_equal(s->nitems, 2);
    }
    incr_round_reset(&f.r);
    assert_int_equal(f.r.ngroups, 0);
    assert_int_equal(f.r.nrows, 0);
    assert_int_equal(f.r.ncks, 0);
    assert_int_equal(f.r.nitems, 0);
    assert_int_equal(f.r.json.len, 0);
    assert_int_equal(f.r.keys.len, 0);
    assert_int_equal(f.r.ctext.len, 0);
    /* the next round: the same keys are new again, counts start over */
    for (size_t i = 0; i < 4; i++)
        add_ok(&f, edges[i][0], edges[i][1], false, i + 1);
    assert_int_equal(f.r.nitems, 5);
    assert_int_equal(f.r.items[find_item(&f.r, "s")].rows, 4);
    assert_int_equal(incr_round_group(&f.r, false), EL_OK);
    check_groups(&f.r);
    assert_int_equal(f.r.ngroups, 1);
    el_buf_free(&b);
    fx_close(&f); /* frees the groups of this round */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(repeated_key_starts_next_round),
        cmocka_unit_test(rejected_row_adds_nothing),
        cmocka_unit_test(counter_items_and_row_counts),
        cmocka_unit_test(full_round),
        cmocka_unit_test(rows_group_by_most_shared_item),
        cmocka_unit_test(star_groups_stay_under_100_actions),
        cmocka_unit_test(a_transaction_may_hold_100_actions),
        cmocka_unit_test(big_rows_stay_under_the_byte_cap),
        cmocka_unit_test(txn_body_of_a_group),
        cmocka_unit_test(cancelling_changes_and_units),
        cmocka_unit_test(indexed_rows_cost_twice),
        cmocka_unit_test(set_members_split_and_reset),
        cmocka_unit_test(no_two_actions_on_one_item),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
