/*
 * test_estimate.c - the estimate's arithmetic with exact expectations:
 * write units per started KB, index entries by projection, sums, the
 * hottest partition after sharding, the limits as a table describes them,
 * times, the sink's parts, costs, and the JSON parsing back.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>    /* fabs */
#include <stdio.h>   /* snprintf */
#include <string.h>  /* strcmp, strstr */
#include <yajl/yajl_tree.h>

#include "pipeline/plan/estimate.h"
#include "pipeline/output/file_sink.h"

static void test_wcu_per_started_kb(void **state)
{
    (void)state;
    assert_int_equal(el_estimate_wcu(0), 1);
    assert_int_equal(el_estimate_wcu(1), 1);
    assert_int_equal(el_estimate_wcu(1024), 1);
    assert_int_equal(el_estimate_wcu(1025), 2);
    assert_int_equal(el_estimate_wcu(2048), 2);
    assert_int_equal(el_estimate_wcu(409600), 400);
}

static void test_index_entry_by_projection(void **state)
{
    (void)state;
    assert_int_equal(el_projection_parse("KEYS_ONLY"), EL_PROJECT_KEYS_ONLY);
    assert_int_equal(el_projection_parse("INCLUDE"), EL_PROJECT_INCLUDE);
    assert_int_equal(el_projection_parse("ALL"), EL_PROJECT_ALL);
    assert_int_equal(el_projection_parse(NULL), EL_PROJECT_ALL);
    assert_int_equal(el_estimate_index_entry(EL_PROJECT_ALL, 3000, 40, 40), 3000);
    assert_int_equal(el_estimate_index_entry(EL_PROJECT_INCLUDE, 3000, 40, 40), 3000);
    assert_int_equal(el_estimate_index_entry(EL_PROJECT_KEYS_ONLY, 3000, 40, 44), 84);
}

static void test_sums(void **state)
{
    (void)state;
    el_estimate_writes a = { 0 }, b = { 0 };
    el_estimate_add_item(&a, 100, 100, 150);     /* 1 + 1 */
    el_estimate_add_item(&a, 1500, 1500, 1700);  /* 2 + 2 */
    el_estimate_add_item(&a, 5000, 0, 5200);     /* 5, no index */
    assert_int_equal(a.rows, 3);
    assert_int_equal(a.item_bytes, 6600);
    assert_int_equal(a.table_wcu, 8);
    assert_int_equal(a.index_writes, 2);
    assert_int_equal(a.index_wcu, 3);
    assert_int_equal(a.line_bytes, 150 + 1700 + 5200 + 3 * EL_FILE_SINK_LINE_OVERHEAD);
    snprintf(a.hot_table.key, sizeof a.hot_table.key, "A");
    a.hot_table.wcu = 5;
    el_estimate_add_item(&b, 10, 10, 20);
    snprintf(b.hot_table.key, sizeof b.hot_table.key, "B");
    b.hot_table.wcu = 7;
    el_estimate_add(&a, &b);
    assert_int_equal(a.rows, 4);
    assert_int_equal(a.table_wcu, 9);
    assert_string_equal(a.hot_table.key, "B");
    assert_string_equal(a.hot_index.key, "");
}

static void add_n(el_key_counter *c, const char *key, uint64_t n)
{
    assert_int_equal(el_key_counter_add_n(c, key, strlen(key), n), EL_OK);
}

/* A plan of one source with these hot settings, counted from rows. */
static el_plan *plan_of(const el_key_counter *rows, uint64_t threshold, size_t max_shards)
{
    el_plan *p = el_plan_new();
    el_diag d;
    assert_non_null(p);
    assert_int_equal(el_plan_add_source(p, "follows", el_key_counter_total(rows), threshold,
                                        max_shards, NULL, &d), EL_OK);
    const el_key_counter *targets[] = { rows };
    assert_int_equal(el_plan_add_counted(p, targets, &d), EL_OK);
    return p;
}

static void test_hottest_after_sharding(void **state)
{
    (void)state;
    el_key_counter *units = el_key_counter_new(), *rows = el_key_counter_new();
    assert_non_null(units);
    assert_non_null(rows);
    /* bob: 9,000 rows, 12,000 units; carol 3,000 rows, 5,000 units;
     * dave 900 rows, 4,000 units (large items); the rest small */
    add_n(rows, "TARGET#bob", 9000);
    add_n(units, "TARGET#bob", 12000);
    add_n(rows, "TARGET#carol", 3000);
    add_n(units, "TARGET#carol", 5000);
    add_n(rows, "TARGET#dave", 900);
    add_n(units, "TARGET#dave", 4000);
    for (int i = 0; i < 100; i++) {
        char k[32];
        snprintf(k, sizeof k, "TARGET#u%d", i);
        add_n(rows, k, 10);
        add_n(units, k, 10);
    }
    el_hot_partition h;
    /* no sharding: bob */
    assert_int_equal(el_estimate_hottest(units, NULL, &h), EL_OK);
    assert_string_equal(h.key, "TARGET#bob");
    assert_true(h.wcu == 12000);
    assert_int_equal(h.shards, 1);
    /* threshold 1,000: bob gets 9 shards (1,333 each), carol 3 (1,667
     * each); dave is not sharded and takes 4,000 */
    el_plan *p = plan_of(rows, 1000, 32);
    assert_int_equal(el_estimate_hottest(units, p, &h), EL_OK);
    assert_string_equal(h.key, "TARGET#dave");
    assert_true(h.wcu == 4000);
    el_plan_free(p);
    /* threshold 500: dave too (2 shards: 2,000); carol's 1,667 < 2,000 */
    p = plan_of(rows, 500, 32);
    assert_int_equal(el_estimate_hottest(units, p, &h), EL_OK);
    assert_string_equal(h.key, "TARGET#dave");
    assert_int_equal(h.shards, 2);
    assert_true(h.wcu == 2000);
    el_plan_free(p);
    /* at most 2 shards: bob's 6,000 a shard is the hottest */
    p = plan_of(rows, 500, 2);
    assert_int_equal(el_estimate_hottest(units, p, &h), EL_OK);
    assert_string_equal(h.key, "TARGET#bob");
    assert_true(h.wcu == 6000);
    /* the table's partitions (no plan) are never sharded */
    assert_int_equal(el_estimate_hottest(units, NULL, &h), EL_OK);
    assert_string_equal(h.key, "TARGET#bob");
    assert_true(h.wcu == 12000);
    /* nothing counted: no partition */
    el_key_counter *empty = el_key_counter_new();
    assert_int_equal(el_estimate_hottest(empty, p, &h), EL_OK);
    assert_string_equal(h.key, "");
    assert_true(h.wcu == 0);
    el_plan_free(p);
    el_key_counter_free(empty);
    el_key_counter_free(units);
    el_key_counter_free(rows);
}

static void test_limits_as_described(void **state)
{
    (void)state;
    el_write_limits l;
    el_estimate_default_limits(0, &l);
    assert_true(l.table_wcu == EL_DDB_DEFAULT_TABLE_WCU && l.index_wcu == l.table_wcu);
    assert_non_null(strstr(l.basis, "default"));
    el_estimate_default_limits(1000, &l);
    assert_true(l.table_wcu == 1000 && l.index_wcu == 1000);

    el_table_desc t;
    memset(&t, 0, sizeof t);
    snprintf(t.billing_mode, sizeof t.billing_mode, "PAY_PER_REQUEST");
    t.ngsi = 1;
    snprintf(t.gsi[0].name, sizeof t.gsi[0].name, "GSI1");
    snprintf(t.gsi[0].projection, sizeof t.gsi[0].projection, "KEYS_ONLY");
    /* on-demand, no maximum: the account's per-table maximum, or the default */
    el_ddb_limits lim = { 80000, 160000 };
    el_estimate_limits(&t, &lim, "GSI1", 0, &l);
    assert_true(l.table_wcu == 80000 && l.index_wcu == 80000);
    assert_int_equal(l.projection, EL_PROJECT_KEYS_ONLY);
    assert_non_null(strstr(l.basis, "DescribeLimits"));
    el_estimate_limits(&t, NULL, "GSI1", 0, &l);
    assert_true(l.table_wcu == EL_DDB_DEFAULT_TABLE_WCU);
    /* on-demand maxima set on the table and the index */
    t.max_write_units = 5000;
    t.gsi[0].max_write_units = 2500;
    el_estimate_limits(&t, &lim, "GSI1", 0, &l);
    assert_true(l.table_wcu == 5000 && l.index_wcu == 2500);
    /* provisioned */
    snprintf(t.billing_mode, sizeof t.billing_mode, "PROVISIONED");
    t.write_units = 300;
    t.gsi[0].write_units = 100;
    el_estimate_limits(&t, &lim, "GSI1", 0, &l);
    assert_true(l.table_wcu == 300 && l.index_wcu == 100);
    assert_non_null(strstr(l.basis, "provisioned"));
    /* an index of another name: the table's limit, projection ALL */
    el_estimate_limits(&t, &lim, "OTHER", 0, &l);
    assert_true(l.index_wcu == 300);
    assert_int_equal(l.projection, EL_PROJECT_ALL);
    /* --table-wcu wins */
    el_estimate_limits(&t, &lim, "GSI1", 7000, &l);
    assert_true(l.table_wcu == 7000 && l.index_wcu == 7000);
    assert_non_null(strstr(l.basis, "--table-wcu"));
}

/* What the table takes at once: a new on-demand table's 4,000 write units
 * a second when not asked or not reported, else its WarmThroughput. */
static void test_warm_as_described(void **state)
{
    (void)state;
    el_write_limits l;
    el_estimate_default_limits(0, &l);
    assert_false(l.described);
    assert_true(l.warm_table_wcu == EL_DDB_NEW_TABLE_WARM_WCU && l.warm_index_wcu == 4000);
    el_table_desc t;
    memset(&t, 0, sizeof t);
    snprintf(t.billing_mode, sizeof t.billing_mode, "PAY_PER_REQUEST");
    t.ngsi = 1;
    snprintf(t.gsi[0].name, sizeof t.gsi[0].name, "GSI1");
    el_estimate_limits(&t, NULL, "GSI1", 0, &l); /* none reported (DynamoDB Local) */
    assert_true(l.described);
    assert_true(l.warm_table_wcu == 4000 && l.warm_index_wcu == 4000);
    t.warm.write_units = 25000;
    t.gsi[0].warm.write_units = 12000;
    el_estimate_limits(&t, NULL, "GSI1", 0, &l);
    assert_true(l.warm_table_wcu == 25000 && l.warm_index_wcu == 12000);
    el_estimate_limits(&t, NULL, "OTHER", 0, &l); /* no such index: the table's */
    assert_true(l.warm_index_wcu == 25000);
}

/* The rate a load can use: its units over its least time, at most the
 * limit, whole; advised only past the table's warm figure and a minute. */
static void test_warm_advice(void **state)
{
    (void)state;
    el_write_limits l = { .table_wcu = 40000, .index_wcu = 40000, .warm_table_wcu = 4000,
                          .warm_index_wcu = 4000 };
    el_warm_advice a;
    /* 4.8 M units each: 120 s at the limit, 1200 s at 4,000 */
    el_estimate_writes w = { .table_wcu = 4800000, .index_wcu = 4800000 };
    el_estimate_warm(&w, &l, &a);
    assert_true(a.table_wcu == 40000 && a.index_wcu == 40000);
    assert_true(a.cold_s == 1200);
    assert_true(a.needed);
    /* the hottest partition holds it to 300 s: 16,000 a second is all it can use */
    snprintf(w.hot_index.key, sizeof w.hot_index.key, "TARGET#bob");
    w.hot_index.wcu = 300000;
    el_estimate_warm(&w, &l, &a);
    assert_true(a.table_wcu == 16000 && a.index_wcu == 16000);
    assert_true(a.needed);
    /* a third of the units in the index: a third of the rate, rounded up */
    el_estimate_writes w3 = { .table_wcu = 4800000, .index_wcu = 1600001 };
    el_estimate_warm(&w3, &l, &a);
    assert_true(a.table_wcu == 40000 && a.index_wcu == 13334);
    /* under a minute even at 4,000 a second: not worth it */
    el_estimate_writes small = { .table_wcu = 200000, .index_wcu = 200000 };
    el_estimate_warm(&small, &l, &a);
    assert_true(a.table_wcu == 40000 && a.cold_s == 50);
    assert_false(a.needed);
    /* a limit at or below what the table takes at once: nothing to warm */
    el_write_limits low = { .table_wcu = 3000, .index_wcu = 3000, .warm_table_wcu = 4000,
                            .warm_index_wcu = 4000 };
    el_estimate_writes w2 = { .table_wcu = 4800000, .index_wcu = 4800000 };
    el_estimate_warm(&w2, &low, &a);
    assert_true(a.table_wcu == 3000);
    assert_false(a.needed);
    /* a table already warm for it */
    el_write_limits warm = l;
    warm.warm_table_wcu = warm.warm_index_wcu = 40000;
    el_estimate_warm(&w2, &warm, &a);
    assert_false(a.needed);
    /* nothing to write */
    el_estimate_writes none = { 0 };
    el_estimate_warm(&none, &l, &a);
    assert_true(a.table_wcu == 0 && a.cold_s == 0);
    assert_false(a.needed);
}

static void test_time(void **state)
{
    (void)state;
    el_estimate_writes w = { .table_wcu = 400000, .index_wcu = 200000 };
    snprintf(w.hot_index.key, sizeof w.hot_index.key, "TARGET#bob");
    w.hot_index.wcu = 30000;
    el_write_limits l = { .table_wcu = 40000, .index_wcu = 10000 };
    el_estimate_time t;
    el_estimate_time_of(&w, &l, &t);
    assert_true(t.table_s == 10 && t.index_s == 20 && t.at_limit_s == 20);
    assert_true(t.floor_s == 30 && t.least_s == 30);
}

static void test_parts_as_the_sink_cuts_them(void **state)
{
    (void)state;
    el_part_count c;
    el_part_count_init(&c, 3, 0);
    for (int i = 0; i < 7; i++)
        el_part_count_add(&c, 90);
    assert_int_equal(c.parts, 3);
    /* by bytes: lines of 100 in parts of at most 250 bytes: two a part */
    el_part_count_init(&c, 0, 250);
    for (int i = 0; i < 5; i++)
        el_part_count_add(&c, 100 - EL_FILE_SINK_LINE_OVERHEAD);
    assert_int_equal(c.parts, 3);
    /* a line larger than a part gets one of its own */
    el_part_count_init(&c, 0, 250);
    el_part_count_add(&c, 10);
    el_part_count_add(&c, 1000);
    el_part_count_add(&c, 10);
    assert_int_equal(c.parts, 3);
    el_part_count_init(&c, 0, 0);
    assert_int_equal(c.max_items, EL_FILE_SINK_PART_ITEMS);
    assert_int_equal(c.parts, 0);
}

static void test_costs(void **state)
{
    (void)state;
    el_estimate_writes w = { .table_wcu = 3000000, .index_wcu = 1000000 };
    assert_true(fabs(el_estimate_api_usd(&w, 1.25) - 5.0) < 1e-9);
    assert_true(el_estimate_api_usd(&w, 0) == -1);
    el_import_estimate imp = { .bytes = (uint64_t)3 << 30 };
    assert_true(fabs(el_estimate_import_usd(&imp, 0.15) - 0.45) < 1e-9);
    assert_true(el_estimate_import_usd(&imp, -1) == -1);
}

static void test_json(void **state)
{
    (void)state;
    el_estimate_writes a = { 0 }, total = { 0 };
    el_estimate_add_item(&a, 1500, 1500, 1600);
    snprintf(a.hot_table.key, sizeof a.hot_table.key, "ACTOR#\"q\"");
    a.hot_table.wcu = 2;
    a.hot_table.shards = 1;
    el_estimate_add(&total, &a);
    el_write_limits l;
    el_estimate_default_limits(0, &l);
    el_import_estimate imp = { 1, 1610, 1, EL_FILE_SINK_PART_ITEMS, EL_FILE_SINK_PART_BYTES };
    el_estimate_named src[] = { { "follows", &a } };
    el_buf b;
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_estimate_json(&b, &l, src, 1, &total, &imp, 1.25, 0), EL_OK);
    char err[256];
    yajl_val v = yajl_tree_parse(b.data, err, sizeof err);
    if (!v)
        fail_msg("not JSON: %s\n%s", err, b.data);
    const char *p_wcu[] = { "total", "wcu", NULL };
    assert_true(YAJL_GET_INTEGER(yajl_tree_get(v, p_wcu, yajl_t_number)) == 4);
    const char *p_key[] = { "sources", NULL };
    yajl_val s = yajl_tree_get(v, p_key, yajl_t_array);
    assert_non_null(s);
    const char *p_hot[] = { "hottest_table_partition", "key", NULL };
    assert_string_equal(YAJL_GET_STRING(yajl_tree_get(s->u.array.values[0], p_hot,
                                                      yajl_t_string)), "ACTOR#\"q\"");
    const char *p_imp[] = { "import", "import_usd", NULL };
    assert_true(YAJL_IS_NULL(yajl_tree_get(v, p_imp, yajl_t_any)));
    const char *p_warm[] = { "warm_throughput", "warm_table_wcu", NULL };
    assert_true(YAJL_GET_INTEGER(yajl_tree_get(v, p_warm, yajl_t_number)) == 4000);
    const char *p_need[] = { "warm_throughput", "needed", NULL };
    assert_true(YAJL_IS_FALSE(yajl_tree_get(v, p_need, yajl_t_any)));
    const char *p_api[] = { "total", "api_usd", NULL };
    assert_true(fabs(YAJL_GET_DOUBLE(yajl_tree_get(v, p_api, yajl_t_number)) - 5e-6) < 1e-9);
    yajl_tree_free(v);
    el_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wcu_per_started_kb),
        cmocka_unit_test(test_index_entry_by_projection),
        cmocka_unit_test(test_sums),
        cmocka_unit_test(test_hottest_after_sharding),
        cmocka_unit_test(test_limits_as_described),
        cmocka_unit_test(test_warm_as_described),
        cmocka_unit_test(test_warm_advice),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_parts_as_the_sink_cuts_them),
        cmocka_unit_test(test_costs),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
