/*
 * test_counters.c - the backfill aggregation (pipeline/counters/counters.h): a
 * duplicate edge counts once, counters per attribute and item, NULL/empty
 * placeholders skip a counter, parallel adders give exact totals, and the
 * memory per distinct edge and per counter (printed: docs/PERFORMANCE.md).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h> /* parallel adders */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* free */
#include <string.h>  /* strlen */

#include "pipeline/counters/counters.h"
#include "pipeline/rows/mapping.h"

/* "PK\0SK" of an edge into buf; returns its length. */
static size_t edge_key(char *buf, size_t cap, const char *a, const char *b)
{
    int n = snprintf(buf, cap, "ACTOR#%s%cTARGET#%s", a, '\0', b);
    return (size_t)n;
}

static size_t ckey(char *buf, size_t cap, const char *user, const char *attr)
{
    int n = snprintf(buf, cap, "USER#%s%cPROFILE%c%s", user, '\0', '\0', attr);
    return (size_t)n;
}

static void add_edge(el_counters *c, const char *a, const char *b)
{
    char k[128], c1[128], c2[128];
    size_t kl = edge_key(k, sizeof k, a, b);
    size_t l1 = ckey(c1, sizeof c1, b, "followerCount");
    size_t l2 = ckey(c2, sizeof c2, a, "followingCount");
    const char *keys[2] = { c1, c2 };
    size_t lens[2] = { l1, l2 };
    assert_int_equal(el_counters_add_keys(c, k, kl, keys, lens, 2), EL_OK);
}

static void duplicates_count_once(void **state)
{
    (void)state;
    el_counters *c;
    assert_int_equal(el_counters_new(NULL, &c), EL_OK);
    add_edge(c, "alice", "bob");
    add_edge(c, "alice", "carol");
    add_edge(c, "dave", "bob");
    add_edge(c, "alice", "bob");   /* the same edge again */
    add_edge(c, "dave", "bob");
    assert_int_equal(el_counters_edges(c), 3);
    assert_int_equal(el_counters_duplicates(c), 2);
    assert_int_equal(el_counters_size(c), 4); /* bob, carol followers; alice, dave following */
    assert_int_equal(el_counters_get(c, "USER#bob", "PROFILE", "followerCount"), 2);
    assert_int_equal(el_counters_get(c, "USER#carol", "PROFILE", "followerCount"), 1);
    assert_int_equal(el_counters_get(c, "USER#alice", "PROFILE", "followingCount"), 2);
    assert_int_equal(el_counters_get(c, "USER#dave", "PROFILE", "followingCount"), 1);
    assert_int_equal(el_counters_get(c, "USER#bob", "PROFILE", "followingCount"), 0);
    assert_int_equal(el_counters_get(c, "USER#nobody", "PROFILE", "followerCount"), 0);
    el_counters_free(c);
    el_counters_free(NULL);
}

/* The listing verify checks the table against: sorted by key bytes, the
 * attributes of one counter item adjacent, item_len covering "PK\0SK". */
static void list_is_sorted_and_grouped(void **state)
{
    (void)state;
    el_counters *c;
    assert_int_equal(el_counters_new(NULL, &c), EL_OK);
    add_edge(c, "alice", "bob");
    add_edge(c, "bob", "alice");
    add_edge(c, "carol", "bob");
    add_edge(c, "carol", "bob"); /* duplicate: counted once */
    el_counter_entry *e = NULL;
    size_t n = 0;
    assert_int_equal(el_counters_list(c, &e, &n), EL_OK);
    assert_int_equal(n, 5);
    static const struct {
        const char *pk, *attr;
        uint64_t count;
    } want[] = {
        {"USER#alice", "followerCount", 1}, {"USER#alice", "followingCount", 1},
        {"USER#bob", "followerCount", 2}, {"USER#bob", "followingCount", 1},
        {"USER#carol", "followingCount", 1},
    };
    for (size_t i = 0; i < n; i++) {
        size_t pklen = strlen(want[i].pk);
        assert_int_equal(e[i].item_len, pklen + 1 + strlen("PROFILE"));
        assert_memory_equal(e[i].key, want[i].pk, pklen + 1);
        assert_string_equal(e[i].key + pklen + 1, "PROFILE");
        assert_int_equal(e[i].len, e[i].item_len + 1 + strlen(want[i].attr));
        assert_memory_equal(e[i].key + e[i].item_len + 1, want[i].attr, strlen(want[i].attr));
        assert_int_equal(e[i].count, want[i].count);
    }
    free(e);
    el_counters *empty;
    assert_int_equal(el_counters_new(NULL, &empty), EL_OK);
    assert_int_equal(el_counters_list(empty, &e, &n), EL_OK);
    assert_int_equal(n, 0);
    assert_non_null(e);
    free(e);
    el_counters_free(empty);
    el_counters_free(c);
}

/* Rows through a parsed mapping: templates, NULL and empty placeholders. */
static void rows_through_templates(void **state)
{
    (void)state;
    const char *json =
        "{\"table\":\"G\",\"sources\":[{\"name\":\"f\",\"pk\":\"A#{a}\",\"sk\":\"T#{b}\","
        "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"PROFILE\",\"attribute\":\"followers\"},"
        "{\"pk\":\"U#{a}\",\"sk\":\"{g}\",\"attribute\":\"following\"}]}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    el_source *s = m->sources[0];
    assert_int_equal(s->ncounters, 2);
    assert_string_equal(s->counters[1].attribute, "following");
    char *names[3] = { "a", "b", "g" };
    el_coltype types[3] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
    el_schema schema = { 3, names, types, NULL, NULL };
    assert_int_equal(el_source_bind(s, &schema, &d), EL_OK);
    el_counters *c;
    assert_int_equal(el_counters_new(m, &c), EL_OK);
    el_buf scratch;
    el_buf_init(&scratch, 4096);
    struct { const char *a, *b, *g; bool gnull; } rows[] = {
        { "x", "y", "P", false },
        { "x", "z", "P", false },
        { "w", "y", "", false },    /* empty: no "following" counter for w */
        { "v", "y", NULL, true },   /* NULL: likewise */
        { "x", "y", "P", false },   /* duplicate edge */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        el_value v[3] = { { rows[i].a, strlen(rows[i].a), false },
                          { rows[i].b, strlen(rows[i].b), false },
                          { rows[i].g ? rows[i].g : "", rows[i].g ? strlen(rows[i].g) : 0,
                            rows[i].gnull } };
        el_row row = { 3, v, i + 2, i * 10 };
        char key[64];
        size_t kl = (size_t)snprintf(key, sizeof key, "A#%s%cT#%s", rows[i].a, '\0', rows[i].b);
        assert_int_equal(el_counters_add_row(c, s, &row, key, kl, &scratch, &d), EL_OK);
    }
    assert_int_equal(el_counters_get(c, "U#y", "PROFILE", "followers"), 3);
    assert_int_equal(el_counters_get(c, "U#z", "PROFILE", "followers"), 1);
    assert_int_equal(el_counters_get(c, "U#x", "P", "following"), 2);
    assert_int_equal(el_counters_get(c, "U#w", "", "following"), 0);
    assert_int_equal(el_counters_get(c, "U#v", "", "following"), 0);
    assert_int_equal(el_counters_size(c), 3);
    assert_int_equal(el_counters_duplicates(c), 1);
    el_buf_free(&scratch);
    el_counters_free(c);
    el_mapping_free(m);
}

static void bad_counter_specs(void **state)
{
    (void)state;
    const char *bad[] = {
        "\"counters\":{}", "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"P\"}]",
        "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"P\",\"attribute\":\"\"}]",
        "\"counters\":[{\"pk\":\"U#{b\",\"sk\":\"P\",\"attribute\":\"n\"}]",
        "\"counters\":[{\"pk\":\"U\",\"sk\":\"P\",\"attribute\":\"n\",\"x\":1}]",
        "\"counters\":[{\"pk\":\"U\",\"sk\":\"P\",\"attribute\":\"GSI1PK\"}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"table\":\"G\",\"sources\":[{\"pk\":\"A#{a}\","
                 "\"sk\":\"T#{b}\",%s}]}", bad[i]);
        el_mapping *m = NULL;
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_mapping_parse(json, strlen(json), NULL, &m, &d);
        if (!err)
            err = el_mapping_check(m, &d);
        if (err != EL_EUSAGE)
            fail_msg("accepted: %s", bad[i]);
        assert_true(strstr(d.msg, "counter") != NULL);
        el_mapping_free(m);
    }
}

typedef struct worker {
    el_counters *c;
    int id;
} worker;

/* Every worker adds edges u<i> -> star<i % 10> for i in 0..19999: all of
 * them the same edges, so each counts once whoever adds it first. */
static void *adder(void *arg)
{
    worker *w = arg;
    for (int k = 0; k < 20000; k++) {
        int i = (k + w->id * 7919) % 20000;
        char a[32], b[32];
        snprintf(a, sizeof a, "u%d", i);
        snprintf(b, sizeof b, "star%d", i % 10);
        char key[128], c1[128];
        size_t kl = edge_key(key, sizeof key, a, b);
        size_t l1 = ckey(c1, sizeof c1, b, "followerCount");
        const char *keys[1] = { c1 };
        if (el_counters_add_keys(w->c, key, kl, keys, &l1, 1) != EL_OK)
            return arg;
    }
    return NULL;
}

static void parallel_adders_are_exact(void **state)
{
    (void)state;
    el_counters *c;
    assert_int_equal(el_counters_new(NULL, &c), EL_OK);
    pthread_t t[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ c, i };
        assert_int_equal(pthread_create(&t[i], NULL, adder, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        assert_null(ret);
    }
    assert_int_equal(el_counters_edges(c), 20000);
    assert_int_equal(el_counters_duplicates(c), 60000);
    for (int s = 0; s < 10; s++) {
        char pk[32];
        snprintf(pk, sizeof pk, "USER#star%d", s);
        assert_int_equal(el_counters_get(c, pk, "PROFILE", "followerCount"), 2000);
    }
    el_counters_free(c);
}

/* Memory per distinct edge and per counter, printed for the docs. */
static void memory_figures(void **state)
{
    (void)state;
    el_counters *c;
    assert_int_equal(el_counters_new(NULL, &c), EL_OK);
    size_t base = el_counters_memory(c);
    const int edges = 1000000;
    for (int i = 0; i < edges; i++) {
        char key[64];
        size_t kl = (size_t)snprintf(key, sizeof key, "ACTOR#%d%cTARGET#%d", i, '\0', i % 977);
        assert_int_equal(el_counters_add_keys(c, key, kl, NULL, NULL, 0), EL_OK);
    }
    size_t with_edges = el_counters_memory(c);
    double per_edge = (double)(with_edges - base) / edges;
    const int counters = 200000;
    for (int i = 0; i < counters; i++) {
        char key[64], ck[64];
        size_t kl = (size_t)snprintf(key, sizeof key, "X#%d%cY", i, '\0');
        size_t cl = ckey(ck, sizeof ck, key + 2, "followerCount");
        const char *keys[1] = { ck };
        assert_int_equal(el_counters_add_keys(c, key, kl, keys, &cl, 1), EL_OK);
    }
    size_t total = el_counters_memory(c);
    /* the counters' share: total minus the edges' share at the new edge count */
    double per_counter = ((double)total - (double)with_edges -
                          per_edge * counters) / counters;
    print_message("memory: %.1f bytes per distinct edge (1M edges), ~%.1f bytes per counter "
                  "(200k counters, keys of ~30 bytes); total %.1f MB\n", per_edge, per_counter,
                  (double)total / 1e6);
    assert_true(per_edge >= 16 && per_edge <= 48);
    assert_int_equal(el_counters_size(c), counters);
    el_counters_free(c);
}

static void fingerprint_is_stable(void **state)
{
    (void)state;
    uint64_t a[2], b[2], x[2];
    el_counters_fingerprint("ACTOR#a\0TARGET#b", 16, a);
    el_counters_fingerprint("ACTOR#a\0TARGET#b", 16, b);
    el_counters_fingerprint("ACTOR#a\0TARGET#c", 16, x);
    assert_true(a[0] == b[0] && a[1] == b[1]);
    assert_true(a[0] != x[0] && a[1] != x[1]);
    el_counters_fingerprint("", 0, x);
    assert_true(x[0] != a[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(duplicates_count_once),
        cmocka_unit_test(list_is_sorted_and_grouped),
        cmocka_unit_test(rows_through_templates),
        cmocka_unit_test(bad_counter_specs),
        cmocka_unit_test(parallel_adders_are_exact),
        cmocka_unit_test(memory_figures),
        cmocka_unit_test(fingerprint_is_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
