/*
 * test_fanin.c - the hot-key plan a load counts before its first write
 * (pipeline/rows/fanin.h), on real files: a key's fan-in is summed over every
 * source that writes it (two sources sharing a target shard it as one
 * source holding all its edges would), rows whose keys the load rejects
 * add nothing, standard input is refused with the way out (--plan), and a
 * plan file, when given, is what decides.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdio.h>   /* fopen, snprintf */
#include <stdlib.h>  /* mkdtemp, calloc, free */
#include <string.h>  /* strlen, strstr */
#include <unistd.h>  /* unlink, rmdir */

#include "pipeline/rows/fanin.h"
#include "pipeline/rows/inputs.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    el_test_write_file(dir, name, text);
}

static int setup(void **state)
{
    (void)state;
    if (!el_test_mkdtemp(dir, sizeof dir, "test_fanin"))
        return -1;
    /* a: 4 followers of bob, 2 of amy; b: 2 more of bob, 1 of amy, 2 of cat;
     * all: a and b in one file */
    write_file("a.csv", "a,b\nu1,bob\nu2,bob\nu3,bob\nu4,bob\nu5,amy\nu6,amy\n");
    write_file("b.csv", "a,b\nv1,bob\nv2,bob\nv3,amy\nv4,cat\nv5,cat\n");
    write_file("all.csv", "a,b\nu1,bob\nu2,bob\nu3,bob\nu4,bob\nu5,amy\nu6,amy\n"
                          "v1,bob\nv2,bob\nv3,amy\nv4,cat\nv5,cat\n");
    /* rows whose keys the load rejects (an empty target): no fan-in */
    write_file("keys.csv", "a,b\nk1,\nk2,\nk3,\nk4,dan\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

/* The plan of a mapping whose sources read `inputs` (mapping order), every
 * source with "hot": {"threshold": 3} unless hot is NULL (then `hot` is
 * spliced in as is, e.g. ""), counted or read from plan_path. */
static el_err plan_of(const char *const *inputs, size_t n, const char *hot,
                      const char *plan_path, el_plan **out, el_diag *d)
{
    char json[2048];
    size_t used = (size_t)snprintf(json, sizeof json, "{\"table\":\"Graph\",\"sources\":[");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"name\":\"s%zu\",\"input\":\"%s\",\"pk\":\"ACTOR#{a}\","
                                 "\"sk\":\"TARGET#{b}\"%s}", i ? "," : "", i, inputs[i],
                                 hot ? hot : ",\"hot\":{\"threshold\":3}");
    snprintf(json + used, sizeof json - used, "]}");
    el_mapping *m;
    el_diag_clear(d);
    if (el_mapping_parse(json, strlen(json), dir, &m, d))
        fail_msg("mapping: %s", d->msg);
    el_input_spec *specs;
    size_t nspecs;
    el_reader_opts ro = { 0 };
    assert_int_equal(el_inputs_pair(m, NULL, 0, &ro, &specs, &nspecs, d), EL_OK);
    el_fanin_input *in = calloc(nspecs, sizeof *in);
    for (size_t i = 0; i < nspecs; i++) {
        /* the sources bound to their columns, as load binds them */
        if (strcmp(specs[i].path, "-") != 0) {
            el_reader *r;
            assert_int_equal(el_input_open_bound(&specs[i], &r, d), EL_OK);
            el_input_unbind(specs[i].src, r);
            el_reader_free(r);
        }
        in[i] = (el_fanin_input){ specs[i].path, specs[i].src, specs[i].ropts };
    }
    el_err err = el_fanin_plan(m, in, nspecs, plan_path, out, d);
    free(in);
    el_inputs_free(specs, nspecs);
    el_mapping_free(m);
    return err;
}

static void test_fan_in_over_every_source(void **state)
{
    (void)state;
    el_plan *two, *one;
    el_diag d;
    const char *ab[] = { "a.csv", "b.csv" }, *all[] = { "all.csv" };
    assert_int_equal(plan_of(ab, 2, NULL, NULL, &two, &d), EL_OK);
    assert_int_equal(plan_of(all, 1, NULL, NULL, &one, &d), EL_OK);
    /* bob: 4 + 2; amy: 2 + 1 (neither alone reaches 3); cat: 2 */
    const el_plan_hot *bob = el_plan_lookup(two, "TARGET#bob", 10);
    const el_plan_hot *amy = el_plan_lookup(two, "TARGET#amy", 10);
    assert_non_null(bob);
    assert_non_null(amy);
    assert_int_equal(bob->fan_in, 6);
    assert_int_equal(bob->shards, 2);
    assert_int_equal(bob->nshares, 2);
    assert_int_equal(bob->shares[0].count, 4);
    assert_int_equal(bob->shares[1].count, 2);
    assert_int_equal(amy->fan_in, 3);
    assert_int_equal(amy->shards, 2);
    assert_null(el_plan_lookup(two, "TARGET#cat", 10));
    assert_int_equal(el_plan_nhot(two), 2);
    assert_int_equal(el_plan_get_source(two, 0)->rows, 6);
    assert_int_equal(el_plan_get_source(two, 1)->rows, 5);
    /* the same as one source holding every edge */
    assert_int_equal(el_plan_nhot(one), el_plan_nhot(two));
    for (size_t i = 0; i < el_plan_nhot(one); i++) {
        const el_plan_hot *h1 = el_plan_get_hot(one, i), *h2 = el_plan_get_hot(two, i);
        assert_string_equal(h1->key, h2->key);
        assert_int_equal(h1->fan_in, h2->fan_in);
        assert_int_equal(h1->shards, h2->shards);
    }
    el_plan_free(two);
    el_plan_free(one);
}

static void test_rejected_keys_add_nothing(void **state)
{
    (void)state;
    el_plan *p;
    el_diag d;
    /* keys.csv's 3 rows without a target are rejected by the load and
     * count nothing, not even as "TARGET#": only k4's row counts */
    const char *in[] = { "keys.csv", "a.csv" };
    assert_int_equal(plan_of(in, 2, NULL, NULL, &p, &d), EL_OK);
    assert_int_equal(el_plan_get_source(p, 0)->rows, 1);
    assert_null(el_plan_lookup(p, "TARGET#dan", 10));
    assert_null(el_plan_lookup(p, "TARGET#", 7));
    assert_int_equal(el_plan_shards(p, "TARGET#bob", 10), 2);
    el_plan_free(p);
}

static void test_no_hot_source_no_plan(void **state)
{
    (void)state;
    el_plan *p = (el_plan *)1;
    el_diag d;
    const char *ab[] = { "a.csv", "b.csv" };
    assert_int_equal(plan_of(ab, 2, "", NULL, &p, &d), EL_OK);
    assert_null(p);
}

static void test_standard_input_needs_a_plan(void **state)
{
    (void)state;
    el_plan *p;
    el_diag d;
    const char *in[] = { "a.csv", "-" };
    assert_int_equal(plan_of(in, 2, NULL, NULL, &p, &d), EL_EUSAGE);
    assert_null(p);
    assert_non_null(strstr(d.msg, "source 's1' has hot-target sharding"));
    assert_non_null(strstr(d.msg, "give --plan FILE"));
}

static void test_plan_file_decides(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/p.json", dir);
    write_file("p.json", "{\"version\":2,\"sources\":[{\"name\":\"s0\",\"rows\":6,"
                         "\"threshold\":3,\"max_shards\":4}],\"hot\":[{\"key\":\"TARGET#cat\","
                         "\"fan_in\":5,\"shards\":4,\"sources\":{\"s0\":5}}]}");
    el_plan *p;
    el_diag d;
    /* standard input is fine with a plan: nothing is counted */
    const char *in[] = { "-" };
    assert_int_equal(plan_of(in, 1, NULL, path, &p, &d), EL_OK);
    assert_int_equal(el_plan_shards(p, "TARGET#cat", 10), 4);
    assert_int_equal(el_plan_shards(p, "TARGET#bob", 10), 1);
    el_plan_free(p);
    /* a plan of the earlier, per-source kind is refused */
    write_file("p.json", "{\"version\":1,\"sources\":[]}");
    assert_int_equal(plan_of(in, 1, NULL, path, &p, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "make it again"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fan_in_over_every_source),
        cmocka_unit_test(test_rejected_keys_add_nothing),
        cmocka_unit_test(test_no_hot_source_no_plan),
        cmocka_unit_test(test_standard_input_needs_a_plan),
        cmocka_unit_test(test_plan_file_decides),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
