/*
 * test_plan_count.c - the reading pass of `edgeload plan`
 * (pipeline/plan/plan_count.h) on real CSV files of three sources: the
 * fan-in of each index key per source and over every source that writes
 * the index, the rows load would reject (and which of them still count in
 * the fan-in, as load's own counting pass counts them), the shard plan
 * made of those counts, the estimate's figures, the import's keys each
 * once, progress on the caller's clock, and a stop.
 *
 * The expected figures are worked out here from the rows by hand, not
 * from the engine's output.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdatomic.h> /* atomic_int: the stop flag */
#include <string.h>    /* strlen, strstr */

#include "pipeline/plan/plan_count.h"
#include "pipeline/sharding/key_counter.h"

static char dir[64];

/*
 * follows.csv, by line:
 *   2-4  u1..u3 -> bob               items, counted
 *   5    u4 -> bob, n not a number   rejected by the transform; its index
 *                                    keys are valid, so counted in the fan-in
 *   6    u5 -> amy                   item, counted
 *   7    u6 -> (empty)               rejected: no index key, not counted
 *   8    one column too many         rejected by the reader, not counted
 *   9    u1 -> bob again             item, counted; the same key as line 2
 */
static const char follows_csv[] = "a,b,n\n"
                                  "u1,bob,1\n"
                                  "u2,bob,2\n"
                                  "u3,bob,3\n"
                                  "u4,bob,x\n"
                                  "u5,amy,5\n"
                                  "u6,,6\n"
                                  "u7,bob,7,extra\n"
                                  "u1,bob,9\n";

/* likes.csv: the same index keys as follows (TARGET#bob, TARGET#amy) */
static const char likes_csv[] = "a,b\nu8,bob\nu9,bob\nu8,amy\n";

/* users.csv: entities, no index */
static const char users_csv[] = "id,name\nu1,Ann\nu2,Bo\n";

/* Threshold 3: bob's fan-in over both sources (4 + 1 + 2 = 7) makes
 * ceil(7 / 3) = 3 shards; amy's (2) stays below it. */
static const char mapping_json[] =
    "{\"table\":\"Graph\",\"index\":{\"name\":\"GSI1\",\"pk\":\"GSI1PK\",\"sk\":\"GSI1SK\"},"
    "\"sources\":["
    "{\"name\":\"users\",\"input\":\"users.csv\",\"pk\":\"ACTOR#{id}\",\"sk\":\"PROFILE\","
    "\"index\":false,\"attributes\":{\"name\":{\"column\":\"name\"}}},"
    "{\"name\":\"follows\",\"input\":\"follows.csv\",\"pk\":\"ACTOR#{a}\","
    "\"sk\":\"TARGET#{b}\",\"attributes\":{\"n\":{\"column\":\"n\",\"type\":\"N\"}},"
    "\"hot\":{\"threshold\":3,\"max_shards\":8}},"
    "{\"name\":\"likes\",\"input\":\"likes.csv\",\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\","
    "\"hot\":{\"threshold\":3,\"max_shards\":8}}]}";

static int setup(void **state)
{
    (void)state;
    if (!el_test_mkdtemp(dir, sizeof dir, "test_plan_count"))
        return -1;
    el_test_write_file(dir, "follows.csv", follows_csv);
    el_test_write_file(dir, "likes.csv", likes_csv);
    el_test_write_file(dir, "users.csv", users_csv);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

/* What the callbacks saw. */
typedef struct seen {
    char rejects[8][1200]; /* "path line column: message" */
    size_t nrejects;
    el_progress last;     /* the last progress report */
    size_t reports;
    double clock_ms;      /* the caller's clock */
} seen;

static void on_reject(const char *input, const el_diag *why, void *user)
{
    seen *s = user;
    assert_true(s->nrejects < 8);
    const char *base = strrchr(input, '/');
    snprintf(s->rejects[s->nrejects++], sizeof s->rejects[0], "%s %llu %llu: %s",
             base ? base + 1 : input, (unsigned long long)why->line,
             (unsigned long long)why->column, why->msg);
}

static void on_progress(const el_progress *p, void *user)
{
    seen *s = user;
    s->last = *p;
    s->reports++;
    s->clock_ms += 1500; /* every report finds 1.5 s more on the clock */
}

static double clock_now(void *self)
{
    return ((seen *)self)->clock_ms;
}

typedef struct run {
    el_mapping *m;
    el_plan_count *c;
    seen s;
    el_clock clock;
    el_plan_count_opts o;
} run;

static el_err run_count(run *r, const atomic_int *stop, el_diag *d)
{
    memset(r, 0, sizeof *r);
    el_diag_clear(d);
    if (el_mapping_parse(mapping_json, strlen(mapping_json), dir, &r->m, d))
        fail_msg("mapping: %s", d->msg);
    r->s.clock_ms = 1e6;
    r->clock = (el_clock){ .now_ms = clock_now, .self = &r->s };
    r->o = (el_plan_count_opts){ .mapping = r->m, .projection = EL_PROJECT_ALL,
                                 .tmp_dir = dir, .clock = &r->clock,
                                 .progress = on_progress, .progress_user = &r->s,
                                 .on_reject = on_reject, .reject_user = &r->s, .stop = stop };
    return el_plan_count_run(&r->o, &r->c, d);
}

/* A whole count, which must succeed. */
static void run_ok(run *r)
{
    el_diag d;
    if (run_count(r, NULL, &d))
        fail_msg("count: %s", d.msg);
}

static void run_free(run *r)
{
    el_plan_count_free(r->c);
    el_mapping_free(r->m);
}

static uint64_t count_of(const el_key_counter *c, const char *key)
{
    return el_key_counter_get(c, key, strlen(key));
}

/* The mapping's sources in its order. */
enum { USERS, FOLLOWS, LIKES };

static void test_counts_per_source(void **state)
{
    (void)state;
    run r;
    run_ok(&r);
    assert_int_equal(el_plan_count_nsources(r.c), 3);

    const el_plan_source_count *f = el_plan_count_source(r.c, FOLLOWS);
    assert_int_equal(f->ninputs, 1);
    assert_int_equal(f->rows, 6);     /* lines 2-6 and 9: valid index keys */
    assert_int_equal(f->rejected, 3); /* lines 5, 7, 8 */
    assert_int_equal(f->est.rows, 5); /* lines 2-4, 6, 9 became items */
    assert_int_equal(f->est.index_writes, 5);
    assert_int_equal(count_of(f->targets, "TARGET#bob"), 5);
    assert_int_equal(count_of(f->targets, "TARGET#amy"), 1);
    assert_int_equal(el_key_counter_distinct(f->targets), 2);
    assert_int_equal(count_of(f->sources, "ACTOR#u1"), 2); /* lines 2 and 9 */
    assert_int_equal(count_of(f->sources, "ACTOR#u4"), 1); /* the rejected line 5 */
    assert_int_equal(count_of(f->sources, "ACTOR#u6"), 0);
    assert_int_equal(count_of(f->sources, "ACTOR#u7"), 0);
    /* a table partition's units: the items written to it (one unit each) */
    assert_int_equal(count_of(f->table_units, "ACTOR#u1"), 2);
    assert_int_equal(count_of(f->table_units, "ACTOR#u4"), 0);

    const el_plan_source_count *l = el_plan_count_source(r.c, LIKES);
    assert_int_equal(l->rows, 3);
    assert_int_equal(l->rejected, 0);
    assert_int_equal(count_of(l->targets, "TARGET#bob"), 2);
    assert_int_equal(count_of(l->targets, "TARGET#amy"), 1);

    const el_plan_source_count *u = el_plan_count_source(r.c, USERS);
    assert_int_equal(u->est.rows, 2);
    assert_int_equal(u->est.index_writes, 0);
    assert_int_equal(u->rows, 0); /* writes no index: no fan-in */
    assert_int_equal(el_key_counter_distinct(u->targets), 0);
    assert_int_equal(count_of(u->table_units, "ACTOR#u1"), 1);
    run_free(&r);
}

static void test_rejects_name_their_place(void **state)
{
    (void)state;
    run r;
    run_ok(&r);
    assert_int_equal(r.s.nrejects, 3);
    /* in the order of the file, each with its line; a column where the
     * reader or the transform knows it */
    assert_non_null(strstr(r.s.rejects[0], "follows.csv 5 "));
    assert_non_null(strstr(r.s.rejects[1], "follows.csv 7 "));
    assert_non_null(strstr(r.s.rejects[2], "follows.csv 8 "));
    assert_null(strstr(r.s.rejects[0], " 5 0:")); /* the bad n: column 3 */
    assert_non_null(strstr(r.s.rejects[0], " 5 3:"));
    for (size_t i = 0; i < r.s.nrejects; i++)
        assert_true(strlen(strchr(r.s.rejects[i], ':')) > 3); /* a message */
    run_free(&r);
}

static void test_plan_over_every_source(void **state)
{
    (void)state;
    run r;
    run_ok(&r);
    el_estimate_writes total;
    el_import_estimate imp;
    el_diag d;
    if (el_plan_count_finish(r.c, &total, &imp, &d))
        fail_msg("finish: %s", d.msg);

    /* the fan-in of a key is that of every source writing it */
    const el_key_counter *all = el_plan_count_targets(r.c);
    assert_non_null(all);
    assert_int_equal(count_of(all, "TARGET#bob"), 7);
    assert_int_equal(count_of(all, "TARGET#amy"), 2);

    const el_plan *p = el_plan_count_plan(r.c);
    assert_int_equal(el_plan_nsources(p), 2); /* users writes no index */
    assert_int_equal(el_plan_nhot(p), 1);
    const el_plan_hot *bob = el_plan_lookup(p, "TARGET#bob", 10);
    assert_non_null(bob);
    assert_int_equal(bob->fan_in, 7);
    assert_int_equal(bob->shards, 3);
    assert_int_equal(el_plan_shards(p, "TARGET#bob", 10), 3);
    assert_null(el_plan_lookup(p, "TARGET#amy", 10));

    /* every item of every source once, and the import each key once: line
     * 9 of follows is line 2's key again */
    assert_int_equal(total.rows, 2 + 5 + 3);
    assert_int_equal(total.index_writes, 5 + 3);
    assert_int_equal(total.table_wcu, 10); /* small items: a unit each */
    assert_int_equal(imp.items, 9);
    assert_true(imp.bytes > 0 && imp.bytes < total.line_bytes + 10 * 10);
    /* the hottest index partition after sharding, in units: the rejected
     * line 5 counts in bob's fan-in but writes no entry, so bob's entries
     * are follows' 4 and likes' 2 over 3 shards, 2 a shard, as many as
     * amy's unsharded 2; in follows alone, bob's 4 over 3 shards lead */
    assert_true(total.hot_index.wcu == 2.0);
    const el_plan_source_count *f = el_plan_count_source(r.c, FOLLOWS);
    assert_string_equal(f->est.hot_index.key, "TARGET#bob");
    assert_int_equal(f->est.hot_index.shards, 3);
    assert_true(f->est.hot_index.wcu > 1.33 && f->est.hot_index.wcu < 1.34);
    /* the table's hottest partition: ACTOR#u1, a profile and two edges */
    assert_string_equal(total.hot_table.key, "ACTOR#u1");
    assert_true(total.hot_table.wcu == 3.0);
    run_free(&r);
}

static void test_progress_on_the_callers_clock(void **state)
{
    (void)state;
    run r;
    run_ok(&r);
    assert_true(r.s.reports >= 1);
    assert_true(r.s.last.final);
    assert_string_equal(r.s.last.phase, "counting");
    /* every row read, reader's rejects included: 8 + 3 + 2 */
    assert_int_equal(r.s.last.st.rows_read, 13);
    assert_int_equal(r.s.last.st.rejected, 3);
    assert_int_equal(r.s.last.bytes_done, r.s.last.bytes_total);
    assert_int_equal(r.s.last.bytes_total,
                     strlen(follows_csv) + strlen(likes_csv) + strlen(users_csv));
    /* the clock is the caller's: 1.5 s a report, none at the last */
    assert_true(r.s.last.st.elapsed_s == 1.5 * (double)(r.s.reports - 1));
    run_free(&r);
}

static void test_stop(void **state)
{
    (void)state;
    atomic_int stop = 1;
    run r;
    el_diag d;
    assert_int_equal(run_count(&r, &stop, &d), EL_EINTR);
    /* stopped after its first row */
    assert_int_equal(r.s.last.st.rows_read, 1);
    run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_per_source),
        cmocka_unit_test(test_rejects_name_their_place),
        cmocka_unit_test(test_plan_over_every_source),
        cmocka_unit_test(test_progress_on_the_callers_clock),
        cmocka_unit_test(test_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
