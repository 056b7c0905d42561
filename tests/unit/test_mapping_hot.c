/*
 * test_mapping_hot.c - the "hot" key of a mapping source (docs/mapping.md: hot targets; docs/SHARDING.md):
 * defaults, bounds, and the errors a user sees. (mapping.c's other keys
 * are tested in test_mapping.c, counters in test_counters.c.)
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strlen, strstr */

#include "pipeline/rows/mapping.h"

/* A one-source mapping whose source ends with `extra` (", \"hot\": ..."). */
static el_err parse_with(const char *extra, el_mapping **m, el_diag *d)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"table\":\"Graph\",\"sources\":[{\"name\":\"follows\","
             "\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\"%s}]}", extra);
    el_diag_clear(d);
    return el_mapping_parse(json, strlen(json), NULL, m, d);
}

static void expect_error(const char *extra, const char *needle)
{
    el_mapping *m = NULL;
    el_diag d;
    el_err err = parse_with(extra, &m, &d);
    assert_int_equal(err, EL_EUSAGE);
    assert_null(m);
    if (!strstr(d.msg, needle))
        fail_msg("for %s: message '%s' lacks '%s'", extra, d.msg, needle);
}

static void no_hot_is_off(void **state)
{
    (void)state;
    el_mapping *m;
    el_diag d;
    assert_int_equal(parse_with("", &m, &d), EL_OK);
    assert_int_equal(m->sources[0]->hot_threshold, 0);
    assert_int_equal(m->sources[0]->max_shards, 0);
    el_mapping_free(m);
}

static void threshold_and_default_max(void **state)
{
    (void)state;
    el_mapping *m;
    el_diag d;
    assert_int_equal(parse_with(",\"hot\":{\"threshold\":10000}", &m, &d), EL_OK);
    assert_int_equal(m->sources[0]->hot_threshold, 10000);
    assert_int_equal(m->sources[0]->max_shards, EL_DEFAULT_MAX_SHARDS);
    assert_int_equal(EL_DEFAULT_MAX_SHARDS, 32);
    el_mapping_free(m);

    assert_int_equal(parse_with(",\"hot\":{\"max_shards\":8,\"threshold\":1}", &m, &d), EL_OK);
    assert_int_equal(m->sources[0]->hot_threshold, 1);
    assert_int_equal(m->sources[0]->max_shards, 8);
    el_mapping_free(m);

    assert_int_equal(parse_with(",\"hot\":{\"threshold\":5000000000,\"max_shards\":65536}", &m,
                                &d), EL_OK);
    assert_true(m->sources[0]->hot_threshold == 5000000000ull);
    assert_int_equal(m->sources[0]->max_shards, 65536);
    el_mapping_free(m);

    assert_int_equal(parse_with(",\"hot\":{\"threshold\":3,\"max_shards\":2}", &m, &d), EL_OK);
    assert_int_equal(m->sources[0]->max_shards, 2);
    el_mapping_free(m);
}

static void hot_with_explicit_index_keys(void **state)
{
    (void)state;
    el_mapping *m;
    el_diag d;
    assert_int_equal(parse_with(",\"index_pk\":\"T#{b}\",\"hot\":{\"threshold\":7},"
                                "\"index\":true", &m, &d), EL_OK);
    assert_int_equal(m->sources[0]->hot_threshold, 7);
    el_mapping_free(m);
}

static void bad_hot(void **state)
{
    (void)state;
    expect_error(",\"hot\":10000", "\"hot\" must be an object");
    expect_error(",\"hot\":{}", "needs a \"threshold\"");
    expect_error(",\"hot\":{\"max_shards\":8}", "needs a \"threshold\"");
    expect_error(",\"hot\":{\"threshold\":0}", "\"threshold\" must be a positive integer");
    expect_error(",\"hot\":{\"threshold\":-5}", "\"threshold\" must be a positive integer");
    expect_error(",\"hot\":{\"threshold\":1.5}", "\"threshold\" must be a positive integer");
    expect_error(",\"hot\":{\"threshold\":\"100\"}", "\"threshold\" must be a positive integer");
    expect_error(",\"hot\":{\"threshold\":100,\"max_shards\":1}",
                 "\"max_shards\" must be an integer from 2 to 65536");
    expect_error(",\"hot\":{\"threshold\":100,\"max_shards\":65537}",
                 "\"max_shards\" must be an integer from 2 to 65536");
    expect_error(",\"hot\":{\"threshold\":100,\"max_shards\":true}",
                 "\"max_shards\" must be an integer from 2 to 65536");
    expect_error(",\"hot\":{\"threshold\":100,\"shards\":4}",
                 "\"hot\" has an unknown key \"shards\"");
    /* the message names the source */
    expect_error(",\"hot\":{}", "source 'follows'");
}

static void hot_needs_an_index(void **state)
{
    (void)state;
    expect_error(",\"index\":false,\"hot\":{\"threshold\":100}", "writes no index");
    expect_error(",\"hot\":{\"threshold\":100},\"index\":false", "writes no index");
}

static void counters_must_be_a_list(void **state)
{
    (void)state;
    expect_error(",\"counters\":{}", "\"counters\" must be a list");
}

static void check_on_flag_built_mapping(void **state)
{
    (void)state;
    /* cmd/ fills the fields from --hot-threshold/--max-shards */
    el_mapping *m;
    el_source *s;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_new(&m), EL_OK);
    assert_int_equal(el_source_new("input", &s), EL_OK);
    assert_int_equal(el_mapping_add_source(m, s), EL_OK);
    m->table = strdup("Graph");
    assert_int_equal(el_source_set_key(s, "pk", "A#{a}", &d), EL_OK);
    assert_int_equal(el_source_set_key(s, "sk", "B#{b}", &d), EL_OK);
    assert_int_equal(s->hot_threshold, 0);
    assert_int_equal(s->max_shards, 0);
    assert_int_equal(el_mapping_check(m, &d), EL_OK);
    s->hot_threshold = 10;
    s->max_shards = 1;
    assert_int_equal(el_mapping_check(m, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "max shards must be from 2 to 65536"));
    s->max_shards = 2;
    assert_int_equal(el_mapping_check(m, &d), EL_OK);
    s->index = false;
    assert_int_equal(el_mapping_check(m, &d), EL_EUSAGE);
    el_mapping_free(m);
}

/* Two sources; the second's sk template and extra keys are given. */
static el_err parse_two(const char *first_extra, const char *second_sk, const char *second_extra,
                        el_mapping **m, el_diag *d)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"table\":\"Graph\",\"sources\":["
             "{\"name\":\"follows\",\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\"%s},"
             "{\"name\":\"likes\",\"pk\":\"ACTOR#{a}\",\"sk\":\"%s\"%s}]}",
             first_extra, second_sk, second_extra);
    el_diag_clear(d);
    *m = NULL;
    return el_mapping_parse(json, strlen(json), NULL, m, d);
}

static void expect_two(const char *first_extra, const char *second_sk, const char *second_extra,
                       el_err want, const char *needle)
{
    el_mapping *m;
    el_diag d;
    el_err err = parse_two(first_extra, second_sk, second_extra, &m, &d);
    if (err != want)
        fail_msg("%s / %s%s: got %d (%s), want %d", first_extra, second_sk, second_extra, err,
                 d.msg, want);
    if (needle && !strstr(d.msg, needle))
        fail_msg("message '%s' lacks '%s'", d.msg, needle);
    el_mapping_free(m);
}

/* A hot index key's edges go to its shards from every source that writes
 * it, so sources whose index keys may meet must shard by the same rule. */
static void sources_sharing_index_keys(void **state)
{
    (void)state;
    const char *hot3 = ",\"hot\":{\"threshold\":3}";
    /* the same settings: fine */
    expect_two(hot3, "TARGET#{b}", hot3, EL_OK, NULL);
    expect_two("", "TARGET#{b}", "", EL_OK, NULL);
    /* different settings on keys that may meet: refused, naming both */
    expect_two(hot3, "TARGET#{b}", ",\"hot\":{\"threshold\":5}", EL_EUSAGE,
               "sources 'follows' and 'likes' may write the same index partition key "
               "('TARGET#{b}' and 'TARGET#{b}') but shard hot keys differently (hot threshold "
               "3, max_shards 32; hot threshold 5, max_shards 32)");
    expect_two(hot3, "TARGET#{b}", ",\"hot\":{\"threshold\":3,\"max_shards\":8}", EL_EUSAGE,
               "max_shards 8");
    expect_two(hot3, "TARGET#{b}", "", EL_EUSAGE, "no hot settings");
    expect_two(hot3, "{b}", "", EL_EUSAGE, "same \"hot\" settings");
    /* an explicit index_pk is what is compared, not the sk */
    expect_two(hot3, "POST#{b}", ",\"index_pk\":\"TARGET#{b}\"", EL_EUSAGE, "'TARGET#{b}'");
    expect_two(hot3, "TARGET#{b}", ",\"index_pk\":\"LIKED#{b}\"", EL_OK, NULL);
    /* keys that cannot meet: each its own settings */
    expect_two(hot3, "POST#{b}", "", EL_OK, NULL);
    expect_two(hot3, "POST#{b}", ",\"hot\":{\"threshold\":9}", EL_OK, NULL);
    /* a source that writes no index shares no index key */
    expect_two(hot3, "TARGET#{b}", ",\"index\":false", EL_OK, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_hot_is_off),
        cmocka_unit_test(threshold_and_default_max),
        cmocka_unit_test(hot_with_explicit_index_keys),
        cmocka_unit_test(bad_hot),
        cmocka_unit_test(hot_needs_an_index),
        cmocka_unit_test(counters_must_be_a_list),
        cmocka_unit_test(check_on_flag_built_mapping),
        cmocka_unit_test(sources_sharing_index_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
