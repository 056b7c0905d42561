/*
 * test_plan.c - the fan-in counter (exact counts through table growth,
 * top-k order with ties by key, histogram buckets, merge, limits, memory
 * per key) and the plan (hot keys from counts, lookups, JSON round trip,
 * atomic write, and every kind of malformed plan file refused).
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>    /* opendir: no temporary file left behind */
#include <stdio.h>     /* snprintf, fopen */
#include <stdlib.h>    /* mkdtemp, free */
#include <string.h>    /* strlen, strstr */
#include <unistd.h>    /* rmdir, unlink */

#include "pipeline/sharding/shard_plan.h"
#include "pipeline/sharding/shard.h"

static size_t keyname(char *buf, size_t cap, unsigned i)
{
    return (size_t)snprintf(buf, cap, "TARGET#u%u", i);
}

static void exact_counts(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    assert_non_null(c);
    assert_int_equal(el_key_counter_distinct(c), 0);
    assert_int_equal(el_key_counter_get(c, "x", 1), 0);
    /* key i is added (i % 7) + 1 times, interleaved, through many growths */
    char k[64];
    const unsigned n = 50000;
    for (unsigned round = 0; round < 7; round++)
        for (unsigned i = 0; i < n; i++)
            if (i % 7 >= round)
                assert_int_equal(el_key_counter_add(c, k, keyname(k, sizeof k, i)), EL_OK);
    assert_int_equal(el_key_counter_distinct(c), n);
    uint64_t want_total = 0;
    for (unsigned i = 0; i < n; i++) {
        want_total += i % 7 + 1;
        uint64_t got = el_key_counter_get(c, k, keyname(k, sizeof k, i));
        if (got != i % 7 + 1)
            fail_msg("%s: got %llu, want %u", k, (unsigned long long)got, i % 7 + 1);
    }
    assert_true(el_key_counter_total(c) == want_total);
    assert_int_equal(el_key_counter_get(c, "TARGET#u50000", 13), 0);
    assert_int_equal(el_key_counter_get(c, "TARGET#u1", 9), 2);
    /* a prefix of a key is another key */
    assert_int_equal(el_key_counter_get(c, "TARGET#u", 8), 0);
    el_key_counter_free(c);
    el_key_counter_free(NULL);
}

static void any_bytes_and_limits(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    assert_int_equal(el_key_counter_add(c, "", 0), EL_OK);
    assert_int_equal(el_key_counter_add(c, "a\0b", 3), EL_OK);
    assert_int_equal(el_key_counter_add(c, "a\0c", 3), EL_OK);
    assert_int_equal(el_key_counter_add(c, "a\0b", 3), EL_OK);
    assert_int_equal(el_key_counter_get(c, "", 0), 1);
    assert_int_equal(el_key_counter_get(c, "a\0b", 3), 2);
    assert_int_equal(el_key_counter_get(c, "a", 1), 0);
    /* long keys: varint lengths of 2 and 3 bytes */
    static char big[EL_KEY_MAX_LEN + 1];
    memset(big, 'x', sizeof big);
    assert_int_equal(el_key_counter_add(c, big, 200), EL_OK);
    assert_int_equal(el_key_counter_add(c, big, EL_KEY_MAX_LEN), EL_OK);
    assert_int_equal(el_key_counter_add(c, big, EL_KEY_MAX_LEN + 1), EL_ELIMIT);
    assert_int_equal(el_key_counter_get(c, big, 200), 1);
    assert_int_equal(el_key_counter_get(c, big, EL_KEY_MAX_LEN), 1);
    assert_int_equal(el_key_counter_get(c, big, EL_KEY_MAX_LEN + 1), 0);
    assert_int_equal(el_key_counter_distinct(c), 5);
    /* add_n */
    assert_int_equal(el_key_counter_add_n(c, "n", 1, 1000000000000ull), EL_OK);
    assert_int_equal(el_key_counter_add_n(c, "zero", 4, 0), EL_OK);
    assert_true(el_key_counter_get(c, "n", 1) == 1000000000000ull);
    assert_int_equal(el_key_counter_get(c, "zero", 4), 0);
    assert_int_equal(el_key_counter_distinct(c), 6);
    el_key_counter_free(c);
}

static void top_order_and_ties(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    /* counts: b=5 a=5 ab=5 c=9 d=1 e=7 aa=5, and 100 keys of 1 */
    struct { const char *k; unsigned n; } in[] = {
        { "b", 5 }, { "a", 5 }, { "ab", 5 }, { "c", 9 }, { "d", 1 }, { "e", 7 }, { "aa", 5 },
    };
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        assert_int_equal(el_key_counter_add_n(c, in[i].k, strlen(in[i].k), in[i].n), EL_OK);
    char k[32];
    for (unsigned i = 0; i < 100; i++)
        assert_int_equal(el_key_counter_add(c, k, (size_t)snprintf(k, sizeof k, "z%03u", i)),
                         EL_OK);
    el_key_count top[20];
    size_t n = el_key_counter_top(c, 6, top);
    assert_int_equal(n, 6);
    const char *want[] = { "c", "e", "a", "aa", "ab", "b" };
    const unsigned wantn[] = { 9, 7, 5, 5, 5, 5 };
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(top[i].len, strlen(want[i]));
        assert_memory_equal(top[i].key, want[i], top[i].len);
        assert_int_equal(top[i].count, wantn[i]);
    }
    /* the cut falls inside a tie: the smallest keys win */
    n = el_key_counter_top(c, 4, top);
    assert_int_equal(n, 4);
    assert_memory_equal(top[3].key, "aa", 2);
    n = el_key_counter_top(c, 20, top);
    assert_int_equal(n, 20);
    assert_memory_equal(top[6].key, "d", 1);
    assert_memory_equal(top[7].key, "z000", 4);
    assert_memory_equal(top[19].key, "z012", 4);
    assert_int_equal(el_key_counter_top(c, 0, top), 0);
    el_key_counter_free(c);

    /* fewer keys than asked */
    c = el_key_counter_new();
    assert_int_equal(el_key_counter_top(c, 20, top), 0);
    assert_int_equal(el_key_counter_add(c, "only", 4), EL_OK);
    assert_int_equal(el_key_counter_top(c, 20, top), 1);
    assert_int_equal(top[0].count, 1);
    el_key_counter_free(c);
}

static void top_matches_sort(void **state)
{
    (void)state;
    /* many keys with colliding counts: top-20 equals a full sort's head */
    el_key_counter *c = el_key_counter_new();
    char k[32];
    for (unsigned i = 0; i < 20000; i++) {
        size_t len = (size_t)snprintf(k, sizeof k, "K%u", (i * 7919u) % 20000u);
        assert_int_equal(el_key_counter_add_n(c, k, len, (i * 31u) % 97u + 1), EL_OK);
    }
    el_key_count top[20], *all;
    size_t nall;
    assert_int_equal(el_key_counter_top(c, 20, top), 20);
    assert_int_equal(el_key_counter_at_least(c, 0, &all, &nall), EL_OK);
    assert_int_equal(nall, 20000);
    for (size_t i = 0; i < 20; i++) {
        assert_int_equal(top[i].count, all[i].count);
        assert_int_equal(top[i].len, all[i].len);
        assert_memory_equal(top[i].key, all[i].key, top[i].len);
    }
    for (size_t i = 1; i < nall; i++)
        assert_true(all[i - 1].count >= all[i].count);
    free(all);
    assert_int_equal(el_key_counter_at_least(c, 98, &all, &nall), EL_OK);
    assert_int_equal(nall, 0);
    assert_null(all);
    assert_int_equal(el_key_counter_at_least(c, 97, &all, &nall), EL_OK);
    assert_true(nall > 0);
    for (size_t i = 0; i < nall; i++)
        assert_int_equal(all[i].count, 97);
    free(all);
    el_key_counter_free(c);
}

static void histogram_buckets(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    const uint64_t counts[] = { 1, 1, 2, 3, 4, 7, 8, 15, 16, 1023, 1024, 1ull << 40 };
    char k[16];
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        assert_int_equal(el_key_counter_add_n(c, k, (size_t)snprintf(k, sizeof k, "k%zu", i),
                                               counts[i]), EL_OK);
    uint64_t h[EL_KEY_HIST_BUCKETS];
    el_key_counter_histogram(c, h);
    uint64_t want[EL_KEY_HIST_BUCKETS] = { 0 };
    want[0] = 2;  /* 1 */
    want[1] = 2;  /* 2-3 */
    want[2] = 2;  /* 4-7 */
    want[3] = 2;  /* 8-15 */
    want[4] = 1;  /* 16-31 */
    want[9] = 1;  /* 512-1023 */
    want[10] = 1; /* 1024-2047 */
    want[40] = 1;
    for (size_t b = 0; b < EL_KEY_HIST_BUCKETS; b++)
        if (h[b] != want[b])
            fail_msg("bucket %zu: got %llu, want %llu", b, (unsigned long long)h[b],
                     (unsigned long long)want[b]);
    el_key_counter_free(c);
}

static void merge(void **state)
{
    (void)state;
    el_key_counter *a = el_key_counter_new(), *b = el_key_counter_new();
    char k[32];
    for (unsigned i = 0; i < 3000; i++) {
        assert_int_equal(el_key_counter_add(a, k, keyname(k, sizeof k, i)), EL_OK);
        assert_int_equal(el_key_counter_add_n(b, k, keyname(k, sizeof k, i + 1500), 2), EL_OK);
    }
    assert_int_equal(el_key_counter_merge(a, b), EL_OK);
    assert_int_equal(el_key_counter_distinct(a), 4500);
    assert_int_equal(el_key_counter_total(a), 9000);
    assert_int_equal(el_key_counter_get(a, k, keyname(k, sizeof k, 0)), 1);
    assert_int_equal(el_key_counter_get(a, k, keyname(k, sizeof k, 2000)), 3);
    assert_int_equal(el_key_counter_get(a, k, keyname(k, sizeof k, 4400)), 2);
    assert_int_equal(el_key_counter_distinct(b), 3000);
    el_key_counter_free(a);
    el_key_counter_free(b);
}

/* Bytes per distinct key at 1M keys (the figure in docs/SHARDING.md). */
static void memory_per_key(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    char k[32];
    for (unsigned i = 0; i < 1000000; i++)
        assert_int_equal(el_key_counter_add(c, k, (size_t)snprintf(k, sizeof k,
                                                                    "TARGET#u%07u", i)), EL_OK);
    assert_int_equal(el_key_counter_distinct(c), 1000000);
    double per_key = (double)el_key_counter_memory(c) / 1e6;
    print_message("counter: 1,000,000 distinct 15-byte keys in %zu bytes = %.1f bytes/key\n",
                  el_key_counter_memory(c), per_key);
    assert_true(per_key > 16 + 16);  /* at least key + slot */
    assert_true(per_key < 64);
    el_key_counter_free(c);
}

static void walk_every_key_once(void **state)
{
    (void)state;
    el_key_counter *c = el_key_counter_new();
    char k[64];
    for (unsigned i = 0; i < 3000; i++)
        assert_int_equal(el_key_counter_add_n(c, k, keyname(k, sizeof k, i), i + 1), EL_OK);
    el_key_counter *seen = el_key_counter_new();
    size_t pos = 0, n = 0;
    el_key_count e;
    while (el_key_counter_next(c, &pos, &e)) {
        assert_true(e.count == el_key_counter_get(c, e.key, e.len));
        assert_int_equal(el_key_counter_add(seen, e.key, e.len), EL_OK);
        n++;
    }
    assert_int_equal(n, 3000);
    assert_int_equal(el_key_counter_distinct(seen), 3000);
    assert_false(el_key_counter_next(c, &pos, &e)); /* stays at the end */
    el_key_counter *empty = el_key_counter_new();
    pos = 0;
    assert_false(el_key_counter_next(empty, &pos, &e));
    el_key_counter_free(empty);
    el_key_counter_free(seen);
    el_key_counter_free(c);
}

/* ---- the plan ---- */

static void add_n(el_key_counter *c, const char *key, uint64_t n)
{
    assert_int_equal(el_key_counter_add_n(c, key, strlen(key), n), EL_OK);
}

/* follows and likes write the same index: bob's fan-in is both's (30,000
 * + 5,000), dan reaches the threshold only with both (6,000 + 4,000), eve
 * not even so (5,000 + 4,999); users is not hot. */
static el_plan *sample_plan(void)
{
    el_plan *p = el_plan_new();
    el_key_counter *f = el_key_counter_new(), *l = el_key_counter_new(),
                    *u = el_key_counter_new();
    el_diag d;
    el_diag_clear(&d);
    assert_non_null(p);
    add_n(f, "TARGET#bob", 30000);
    add_n(f, "TARGET#star", 1000000);
    add_n(f, "TARGET#amy", 10000);
    add_n(f, "TARGET#cat", 9999);
    add_n(f, "TARGET#zo\xc3\xab \"q\"", 20001);
    add_n(f, "TARGET#dan", 6000);
    add_n(f, "TARGET#eve", 5000);
    add_n(l, "TARGET#bob", 5000);
    add_n(l, "TARGET#dan", 4000);
    add_n(l, "TARGET#eve", 4999);
    add_n(l, "TARGET#fay", 12000);
    add_n(u, "USER#x", 12);
    size_t s0, s1, s2;
    assert_int_equal(el_plan_add_source(p, "follows", el_key_counter_total(f), 10000, 32, &s0,
                                        &d), EL_OK);
    assert_int_equal(el_plan_add_source(p, "likes", el_key_counter_total(l), 10000, 32, &s1,
                                        &d), EL_OK);
    assert_int_equal(el_plan_add_source(p, "users", 12, 0, 32, &s2, &d), EL_OK);
    assert_int_equal(s0, 0);
    assert_int_equal(s1, 1);
    assert_int_equal(s2, 2);
    const el_key_counter *targets[] = { f, l, u };
    assert_int_equal(el_plan_add_counted(p, targets, &d), EL_OK);
    el_key_counter_free(f);
    el_key_counter_free(l);
    el_key_counter_free(u);
    return p;
}

static const char sample_json[] =
    "{\"version\":2,\"sources\":[\n"
    "{\"name\":\"follows\",\"rows\":1081000,\"threshold\":10000,\"max_shards\":32},\n"
    "{\"name\":\"likes\",\"rows\":25999,\"threshold\":10000,\"max_shards\":32},\n"
    "{\"name\":\"users\",\"rows\":12,\"threshold\":0,\"max_shards\":0}\n"
    "],\"hot\":[\n"
    "  {\"key\":\"TARGET#star\",\"fan_in\":1000000,\"shards\":32,"
    "\"sources\":{\"follows\":1000000}},\n"
    "  {\"key\":\"TARGET#bob\",\"fan_in\":35000,\"shards\":4,"
    "\"sources\":{\"follows\":30000,\"likes\":5000}},\n"
    "  {\"key\":\"TARGET#zo\xc3\xab \\\"q\\\"\",\"fan_in\":20001,\"shards\":3,"
    "\"sources\":{\"follows\":20001}},\n"
    "  {\"key\":\"TARGET#fay\",\"fan_in\":12000,\"shards\":2,\"sources\":{\"likes\":12000}},\n"
    "  {\"key\":\"TARGET#amy\",\"fan_in\":10000,\"shards\":2,\"sources\":{\"follows\":10000}},\n"
    "  {\"key\":\"TARGET#dan\",\"fan_in\":10000,\"shards\":2,"
    "\"sources\":{\"follows\":6000,\"likes\":4000}}\n"
    "]}\n";

static void check_sample(const el_plan *p)
{
    assert_int_equal(el_plan_nsources(p), 3);
    size_t f = el_plan_find_source(p, "follows");
    assert_int_equal(f, 0);
    assert_int_equal(el_plan_find_source(p, "likes"), 1);
    assert_int_equal(el_plan_find_source(p, "users"), 2);
    assert_true(el_plan_find_source(p, "nope") == EL_PLAN_NO_SOURCE);
    const el_plan_source *s = el_plan_get_source(p, f);
    assert_string_equal(s->name, "follows");
    assert_int_equal(s->rows, 1081000);
    assert_int_equal(s->threshold, 10000);
    assert_int_equal(s->max_shards, 32);
    assert_int_equal(el_plan_nhot(p), 6);
    assert_string_equal(el_plan_get_hot(p, 0)->key, "TARGET#star");
    assert_null(el_plan_get_hot(p, 6));
    assert_int_equal(el_plan_shards(p, "TARGET#star", 11), 32);
    assert_int_equal(el_plan_shards(p, "TARGET#bob", 10), 4);
    assert_int_equal(el_plan_shards(p, "TARGET#amy", 10), 2);
    assert_int_equal(el_plan_shards(p, "TARGET#zo\xc3\xab \"q\"", 15), 3);
    assert_int_equal(el_plan_shards(p, "TARGET#dan", 10), 2);
    assert_int_equal(el_plan_shards(p, "TARGET#fay", 10), 2);
    assert_int_equal(el_plan_shards(p, "TARGET#cat", 10), 1);
    assert_int_equal(el_plan_shards(p, "TARGET#eve", 10), 1);
    assert_int_equal(el_plan_shards(p, "TARGET#bo", 9), 1);
    assert_int_equal(el_plan_shards(p, "USER#x", 6), 1);
    /* bob: both sources' edges, each source's share */
    const el_plan_hot *h = el_plan_lookup(p, "TARGET#bob", 10);
    assert_non_null(h);
    assert_int_equal(h->fan_in, 35000);
    assert_int_equal(h->nshares, 2);
    assert_int_equal(h->shares[0].source, 0);
    assert_int_equal(h->shares[0].count, 30000);
    assert_int_equal(h->shares[1].source, 1);
    assert_int_equal(h->shares[1].count, 5000);
    h = el_plan_lookup(p, "TARGET#fay", 10);
    assert_int_equal(h->nshares, 1);
    assert_int_equal(h->shares[0].source, 1);
    assert_null(el_plan_lookup(p, "TARGET#cat", 10));
    s = el_plan_get_source(p, 2);
    assert_int_equal(s->threshold, 0);
    assert_int_equal(s->max_shards, 0);
    assert_null(el_plan_get_source(p, 3));
}

static void plan_from_counts(void **state)
{
    (void)state;
    el_plan *p = sample_plan();
    check_sample(p);
    char *json = el_plan_to_json(p);
    assert_non_null(json);
    assert_string_equal(json, sample_json);
    free(json);
    el_plan_free(p);
    el_plan_free(NULL);
}

/* A plan counted from nsrc sources "s0", "s1", ...: source s has
 * counts[s * n + i] rows of keys[i], threshold thr[s] and max_shards
 * max[s]. *out is NULL when el_plan_add_counted fails (returned). */
static el_err plan_of(const char *const *keys, const uint64_t *counts, size_t n,
                      const uint64_t *thr, const size_t *max, size_t nsrc, el_plan **out,
                      el_diag *d)
{
    el_plan *p = el_plan_new();
    el_key_counter *c[4] = { NULL, NULL, NULL, NULL };
    assert_true(nsrc <= 4);
    for (size_t s = 0; s < nsrc; s++) {
        char name[8];
        snprintf(name, sizeof name, "s%zu", s);
        c[s] = el_key_counter_new();
        for (size_t i = 0; i < n; i++)
            if (counts[s * n + i])
                add_n(c[s], keys[i], counts[s * n + i]);
        assert_int_equal(el_plan_add_source(p, name, el_key_counter_total(c[s]), thr[s],
                                            max[s], NULL, d), EL_OK);
    }
    el_err err = el_plan_add_counted(p, (const el_key_counter *const *)c, d);
    for (size_t s = 0; s < nsrc; s++)
        el_key_counter_free(c[s]);
    if (err) {
        el_plan_free(p);
        p = NULL;
    }
    *out = p;
    return err;
}

static void fan_in_across_sources(void **state)
{
    (void)state;
    const char *keys[] = { "TARGET#bob", "TARGET#amy" };
    const uint64_t thr3[] = { 3, 3 };
    const size_t max32[] = { 32, 32 };
    el_diag d;
    el_plan *two, *one;
    /* the case: a.csv 4 edges to bob, b.csv 2; threshold 3 */
    const uint64_t split[] = { 4, 0, 2, 0 };
    assert_int_equal(plan_of(keys, split, 2, thr3, max32, 2, &two, &d), EL_OK);
    /* one source holding all six */
    const uint64_t whole[] = { 6, 0 };
    assert_int_equal(plan_of(keys, whole, 2, thr3, max32, 1, &one, &d), EL_OK);
    const el_plan_hot *h2 = el_plan_lookup(two, "TARGET#bob", 10);
    const el_plan_hot *h1 = el_plan_lookup(one, "TARGET#bob", 10);
    assert_non_null(h2);
    assert_non_null(h1);
    assert_int_equal(h2->fan_in, 6);
    assert_int_equal(h2->fan_in, h1->fan_in);
    assert_int_equal(h2->shards, 2);
    assert_int_equal(h2->shards, h1->shards);
    assert_int_equal(el_plan_nhot(two), 1);
    el_plan_free(two);
    el_plan_free(one);
    /* hot only together: 2 + 2 at threshold 3; amy 1 + 1 is not */
    const uint64_t halves[] = { 2, 1, 2, 1 };
    assert_int_equal(plan_of(keys, halves, 2, thr3, max32, 2, &two, &d), EL_OK);
    assert_int_equal(el_plan_shards(two, "TARGET#bob", 10), 2);
    assert_int_equal(el_plan_lookup(two, "TARGET#bob", 10)->fan_in, 4);
    assert_int_equal(el_plan_shards(two, "TARGET#amy", 10), 1);
    el_plan_free(two);
    /* 13 + 12 = 25 at threshold 3: ceil(25 / 3) = 9 shards, where each
     * alone would make 5 and 4 */
    const uint64_t many[] = { 13, 0, 12, 0 };
    assert_int_equal(plan_of(keys, many, 2, thr3, max32, 2, &two, &d), EL_OK);
    assert_int_equal(el_plan_shards(two, "TARGET#bob", 10), 9);
    el_plan_free(two);
}

static void sources_sharing_a_key_agree(void **state)
{
    (void)state;
    const char *keys[] = { "TARGET#bob", "TARGET#amy" };
    el_diag d;
    el_plan *p;
    const uint64_t counts[] = { 4, 1, 2, 0 };
    /* different thresholds: which would decide bob's shards? */
    const uint64_t thr[] = { 3, 5 };
    const size_t max[] = { 32, 32 };
    el_diag_clear(&d);
    assert_int_equal(plan_of(keys, counts, 2, thr, max, 2, &p, &d), EL_EUSAGE);
    assert_null(p);
    assert_non_null(strstr(d.msg, "index key 'TARGET#bob' is written by sources 's0' "
                                  "(hot threshold 3, max_shards 32) and 's1' (hot threshold 5, "
                                  "max_shards 32)"));
    assert_non_null(strstr(d.msg, "need the same \"hot\" settings"));
    /* different max_shards */
    const uint64_t thr3[] = { 3, 3 };
    const size_t max8[] = { 32, 8 };
    assert_int_equal(plan_of(keys, counts, 2, thr3, max8, 2, &p, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "max_shards 8"));
    /* a hot source and one without hot settings */
    const uint64_t thr_off[] = { 3, 0 };
    assert_int_equal(plan_of(keys, counts, 2, thr_off, max, 2, &p, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "'s1' (no \"hot\" settings)"));
    /* a shared key below every threshold decides nothing: no conflict */
    const uint64_t few[] = { 1, 1, 1, 0 };
    assert_int_equal(plan_of(keys, few, 2, thr, max, 2, &p, &d), EL_OK);
    assert_int_equal(el_plan_nhot(p), 0);
    el_plan_free(p);
    /* keys the sources do not share: each its own settings */
    const uint64_t apart[] = { 4, 0, 0, 9 };
    assert_int_equal(plan_of(keys, apart, 2, thr, max8, 2, &p, &d), EL_OK);
    assert_int_equal(el_plan_shards(p, "TARGET#bob", 10), 2);
    assert_int_equal(el_plan_shards(p, "TARGET#amy", 10), 2);
    el_plan_free(p);
}

static char tmpdir[64];

static void plan_file_round_trip(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_plan.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/p.json", tmpdir);
    el_plan *p = sample_plan();
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_plan_write(p, path, &d), EL_OK);
    /* and again over the old file */
    assert_int_equal(el_plan_write(p, path, &d), EL_OK);
    el_plan_free(p);
    /* only p.json in the directory: the temporary file was renamed */
    DIR *dir = opendir(tmpdir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dir)))
        if (e->d_name[0] != '.') {
            files++;
            assert_string_equal(e->d_name, "p.json");
        }
    closedir(dir);
    assert_int_equal(files, 1);

    el_plan *q;
    assert_int_equal(el_plan_load(path, &q, &d), EL_OK);
    check_sample(q);
    char *json = el_plan_to_json(q);
    assert_string_equal(json, sample_json);
    free(json);
    el_plan_free(q);

    /* with an estimate, which is written and not read back */
    p = sample_plan();
    assert_int_equal(el_plan_set_estimate(p, "{\"items\":7}"), EL_OK);
    json = el_plan_to_json(p);
    assert_non_null(strstr(json, "],\n\"estimate\":{\"items\":7}}\n"));
    assert_int_equal(el_plan_parse(json, strlen(json), &q, &d), EL_OK);
    assert_null(el_plan_estimate(q));
    check_sample(q);
    el_plan_free(q);
    free(json);
    el_plan_free(p);

    /* a directory that does not exist: EL_EIO naming the file, nothing left */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/no/such/dir/p.json", tmpdir);
    p = sample_plan();
    assert_int_equal(el_plan_write(p, bad, &d), EL_EIO);
    assert_non_null(strstr(d.msg, "no/such/dir/p.json"));
    el_plan_free(p);
    assert_int_equal(el_plan_load(bad, &q, &d), EL_EIO);
    assert_null(q);
    assert_non_null(strstr(d.msg, "cannot open plan"));
    unlink(path);
    rmdir(tmpdir);
}

static void expect_bad(const char *json, const char *needle)
{
    el_plan *p = (el_plan *)1;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_parse(json, strlen(json), &p, &d);
    if (err != EL_EUSAGE)
        fail_msg("accepted: %s", json);
    assert_null(p);
    if (!strstr(d.msg, needle))
        fail_msg("for %s: message '%s' lacks '%s'", json, d.msg, needle);
}

/* Two sources f and g (rows 100 and 50, threshold 10, max_shards 4) and
 * the hot list `hot`. */
#define PLAN(hot) "{\"version\":2,\"sources\":[{\"name\":\"f\",\"rows\":100,\"threshold\":10," \
                  "\"max_shards\":4},{\"name\":\"g\",\"rows\":50,\"threshold\":10," \
                  "\"max_shards\":4}],\"hot\":[" hot "]}"
#define SRC(fields) "{\"version\":2,\"sources\":[" fields "],\"hot\":[]}"

static void malformed_plans(void **state)
{
    (void)state;
    /* the good base first */
    el_plan *p;
    el_diag d;
    const char *good = PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":4,"
                            "\"sources\":{\"g\":10,\"f\":30}}");
    assert_int_equal(el_plan_parse(good, strlen(good), &p, &d), EL_OK);
    assert_int_equal(el_plan_shards(p, "T#a", 3), 4);
    /* the shares in the sources' order, whatever the file's */
    assert_int_equal(el_plan_get_hot(p, 0)->shares[0].source, 0);
    assert_int_equal(el_plan_get_hot(p, 0)->shares[0].count, 30);
    el_plan_free(p);
    const char *empty = "{\"version\":2,\"sources\":[],\"hot\":[]}";
    assert_int_equal(el_plan_parse(empty, strlen(empty), &p, &d), EL_OK);
    assert_int_equal(el_plan_nsources(p), 0);
    el_plan_free(p);
    /* members in any order */
    const char *reordered = "{\"hot\":[],\"sources\":[],\"estimate\":{},\"version\":2}";
    assert_int_equal(el_plan_parse(reordered, strlen(reordered), &p, &d), EL_OK);
    el_plan_free(p);

    expect_bad("", "not valid JSON");
    expect_bad("{\"version\":2,", "not valid JSON");
    expect_bad("[1]", "must be a JSON object");
    expect_bad("{\"sources\":[],\"hot\":[]}", "no \"version\"");
    expect_bad("{\"version\":1,\"sources\":[]}", "made by an earlier edgeload that counted "
                                                 "fan-in per source");
    expect_bad("{\"version\":1,\"sources\":[]}", "edgeload plan --plan-out FILE");
    expect_bad("{\"version\":3,\"sources\":[],\"hot\":[]}", "unsupported plan \"version\"");
    expect_bad("{\"version\":\"2\",\"sources\":[],\"hot\":[]}", "unsupported plan \"version\"");
    expect_bad("{\"version\":2,\"hot\":[]}", "no \"sources\"");
    expect_bad("{\"version\":2,\"sources\":[]}", "no \"hot\"");
    expect_bad("{\"version\":2,\"sources\":{},\"hot\":[]}", "\"sources\" must be a list");
    expect_bad("{\"version\":2,\"sources\":[],\"hot\":{}}", "\"hot\" must be a list");
    expect_bad("{\"version\":2,\"sources\":[],\"hot\":[],\"extra\":1}", "unknown key \"extra\"");
    expect_bad("{\"version\":2,\"sources\":[],\"hot\":[],\"estimate\":[]}",
               "\"estimate\" must be an object");
    expect_bad(SRC("7"), "sources[0] must be an object");
    expect_bad(SRC("{\"rows\":1,\"threshold\":0,\"max_shards\":0}"), "sources[0]: needs \"name\"");
    expect_bad(SRC("{\"name\":\"\"}"), "\"name\" must be a non-empty");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"max_shards\":4}"),
               "source 'f': needs \"threshold\"");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":-1,\"threshold\":1,\"max_shards\":4}"),
               "\"rows\" must be a non-negative integer");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1.5,\"threshold\":1,\"max_shards\":4}"),
               "\"rows\" must be a non-negative integer");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"threshold\":1,\"max_shards\":1}"),
               "\"max_shards\" must be an integer from 2");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"threshold\":1,\"max_shards\":99999999999}"),
               "\"max_shards\" must be an integer");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"threshold\":0,\"max_shards\":4}"),
               "\"max_shards\" must be 0 when");
    /* a version-1 source, with its own hot list */
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"threshold\":0,\"max_shards\":0,\"hot\":[]}"),
               "unknown key \"hot\"");
    expect_bad(SRC("{\"name\":\"f\",\"rows\":1,\"threshold\":0,\"max_shards\":0},"
                   "{\"name\":\"f\",\"rows\":1,\"threshold\":0,\"max_shards\":0}"),
               "source 'f' is given twice");
    expect_bad(PLAN("\"T#a\""), "hot[0]: must be an object");
    expect_bad(PLAN("{\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40}}"),
               "hot[0]: needs \"key\"");
    expect_bad(PLAN("{\"key\":\"T#a\",\"shards\":4,\"sources\":{\"f\":40}}"),
               "hot[0]: needs \"fan_in\"");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"sources\":{\"f\":40}}"),
               "hot[0]: needs \"shards\"");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":4}"), "hot[0]: needs \"sources\"");
    expect_bad(PLAN("{\"key\":7,\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40}}"),
               "\"key\" must be a string");
    expect_bad(PLAN("{\"key\":\"\",\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40}}"),
               "\"key\" is empty");
    expect_bad(PLAN("{\"key\":\"T#a\\u0000b\",\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40}}"),
               "\\u0000");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":9,\"shards\":2,\"sources\":{\"f\":9}}"),
               "the fan-in 9 of 'T#a' is below the threshold 10");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":101,\"shards\":2,\"sources\":{\"f\":101}}"),
               "source 'f' has 101 rows of 'T#a', not from 1 to its 100 rows");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{\"f\":0,"
                    "\"g\":40}}"), "source 'f' has 0 rows of 'T#a'");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{\"f\":30}}"),
               "hot[0] 'T#a': \"fan_in\" 40 is not the sum of its \"sources\" (30)");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{}}"),
               "\"sources\" must be an object");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":[\"f\"]}"),
               "\"sources\" must be an object");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{\"h\":40}}"),
               "\"sources\" names 'h', which is not in \"sources\"");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{\"f\":\"40\"}}"),
               "the rows of source 'f' must be a non-negative integer");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,\"sources\":{\"f\":20,"
                    "\"f\":20}}"), "names source 'f' twice");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":1,\"sources\":{\"f\":40}}"),
               "\"shards\" 1 of 'T#a' is not from 2 to max_shards 4");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":5,\"sources\":{\"f\":40}}"),
               "is not from 2 to max_shards 4");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":\"4\",\"sources\":{\"f\":40}}"),
               "\"shards\" must be a non-negative integer");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40},"
                    "\"k\":1}"), "hot[0]: unknown key \"k\"");
    expect_bad(PLAN("{\"key\":\"T#a\",\"fan_in\":40,\"shards\":4,\"sources\":{\"f\":40}},"
                    "{\"key\":\"T#a\",\"fan_in\":30,\"shards\":3,\"sources\":{\"g\":30}}"),
               "hot[1]: \"key\" 'T#a' is listed twice");
    /* the sources of a key must agree on their hot settings */
    expect_bad("{\"version\":2,\"sources\":[{\"name\":\"f\",\"rows\":100,\"threshold\":10,"
               "\"max_shards\":4},{\"name\":\"g\",\"rows\":50,\"threshold\":20,"
               "\"max_shards\":4}],\"hot\":[{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,"
               "\"sources\":{\"f\":20,\"g\":20}}]}",
               "index key 'T#a' is written by sources 'f' (hot threshold 10, max_shards 4) and "
               "'g' (hot threshold 20, max_shards 4)");
    expect_bad("{\"version\":2,\"sources\":[{\"name\":\"f\",\"rows\":100,\"threshold\":0,"
               "\"max_shards\":0}],\"hot\":[{\"key\":\"T#a\",\"fan_in\":40,\"shards\":2,"
               "\"sources\":{\"f\":40}}]}",
               "'T#a' is listed hot, but hot sharding is off (\"threshold\" 0) in source 'f'");
}

static void malformed_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_plan_bad.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{\"version\":2,\"sources\":[]}\0junk", 32), 32);
    close(fd);
    el_plan *p;
    el_diag d;
    assert_int_equal(el_plan_load(path, &p, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "holds a NUL byte"));
    FILE *f = fopen(path, "w");
    fputs("{\"version\":2,\"sources\":[{\"name\":\"f\"}],\"hot\":[]}", f);
    fclose(f);
    assert_int_equal(el_plan_load(path, &p, &d), EL_EUSAGE);
    /* the message starts with the file */
    assert_non_null(strstr(d.msg, "plan /tmp/test_plan_bad."));
    assert_non_null(strstr(d.msg, "source 'f': needs \"rows\""));
    unlink(path);
}

static void add_hot_checks(void **state)
{
    (void)state;
    el_plan *p = el_plan_new();
    el_diag d;
    size_t s, t;
    assert_int_equal(el_plan_add_source(p, "", 1, 0, 0, &s, &d), EL_EUSAGE);
    assert_int_equal(el_plan_add_source(p, "f", 100, 10, 1, &s, &d), EL_EUSAGE);
    assert_int_equal(el_plan_add_source(p, "f", 100000, 10, 8, &s, &d), EL_OK);
    assert_int_equal(el_plan_add_source(p, "g", 100000, 10, 8, &t, &d), EL_OK);
    el_plan_share one = { s, 20 };
    assert_int_equal(el_plan_add_hot(p, "T#\xff", 3, 2, &one, 1, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "UTF-8"));
    assert_int_equal(el_plan_add_hot(p, "T#a", 3, 2, &one, 0, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "names no source"));
    assert_int_equal(el_plan_add_hot(p, "T#a", 3, 2, &one, 1, &d), EL_OK);
    assert_int_equal(el_plan_add_hot(p, "T#a", 3, 2, &one, 1, &d), EL_EUSAGE);
    el_plan_share bad = { 5, 20 };
    assert_int_equal(el_plan_add_hot(p, "T#b", 3, 2, &bad, 1, &d), EL_EINTERNAL);
    /* shares in source order, each source once */
    el_plan_share backwards[] = { { t, 10 }, { s, 10 } };
    assert_int_equal(el_plan_add_hot(p, "T#b", 3, 2, backwards, 2, &d), EL_EUSAGE);
    el_plan_share both[] = { { s, 10 }, { t, 10 } };
    assert_int_equal(el_plan_add_hot(p, "T#b", 3, 2, both, 2, &d), EL_OK);
    assert_int_equal(el_plan_lookup(p, "T#b", 3)->fan_in, 20);
    /* many hot keys: the lookup table grows */
    char k[32];
    for (unsigned i = 0; i < 5000; i++)
        assert_int_equal(el_plan_add_hot(p, k, (size_t)snprintf(k, sizeof k, "K%u", i),
                                         2 + i % 7, &one, 1, &d), EL_OK);
    for (unsigned i = 0; i < 5000; i++)
        assert_int_equal(el_plan_shards(p, k, (size_t)snprintf(k, sizeof k, "K%u", i)),
                         2 + i % 7);
    assert_int_equal(el_plan_nhot(p), 5002);
    el_plan_free(p);
}

/* Damaged copies of a good plan are refused or read, never crash (ASan
 * builds check the memory side). Deterministic: a fixed LCG. */
static void mutated_plans(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    char buf[sizeof sample_json];
    size_t accepted = 0;
    for (int i = 0; i < 5000; i++) {
        memcpy(buf, sample_json, sizeof buf);
        int flips = 1 + i % 3;
        for (int f = 0; f < flips; f++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(seed >> 33) % (sizeof buf - 1);
            static const char alphabet[] = "{}[]\",:0129-\"x \\u";
            buf[at] = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
        }
        el_plan *p;
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_plan_parse(buf, strlen(buf), &p, &d);
        if (err == EL_OK) {
            accepted++;
            char *json = el_plan_to_json(p);
            assert_non_null(json);
            free(json);
            el_plan_free(p);
        } else {
            assert_int_equal(err, EL_EUSAGE);
            assert_null(p);
            assert_true(d.msg[0] != '\0');
        }
    }
    print_message("mutated plans: %zu of 5000 still valid\n", accepted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_counts),
        cmocka_unit_test(any_bytes_and_limits),
        cmocka_unit_test(top_order_and_ties),
        cmocka_unit_test(top_matches_sort),
        cmocka_unit_test(histogram_buckets),
        cmocka_unit_test(merge),
        cmocka_unit_test(memory_per_key),
        cmocka_unit_test(walk_every_key_once),
        cmocka_unit_test(plan_from_counts),
        cmocka_unit_test(fan_in_across_sources),
        cmocka_unit_test(sources_sharing_a_key_agree),
        cmocka_unit_test(plan_file_round_trip),
        cmocka_unit_test(malformed_plans),
        cmocka_unit_test(malformed_file),
        cmocka_unit_test(add_hot_checks),
        cmocka_unit_test(mutated_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
