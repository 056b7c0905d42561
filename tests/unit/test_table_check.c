/*
 * test_table_check.c - the one table check every command runs: key schema
 * names and types, the index when the mapping writes it (or the command
 * queries it), and the create-table command each refusal names.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strstr, strlen */

#include "pipeline/rows/table_check.h"

static const char *with_index =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"f\",\"pk\":\"A#{a}\",\"sk\":\"B#{b}\"}]}";
static const char *no_index =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"u\",\"pk\":\"U#{a}\",\"sk\":\"P\","
    "\"index\":false}]}";

static el_mapping *mapping(const char *json)
{
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), ".", &m, &d), EL_OK);
    return m;
}

static void keys(el_key_schema *k, const char *pk, const char *pkt, const char *sk,
                 const char *skt)
{
    snprintf(k->pk, sizeof k->pk, "%s", pk);
    snprintf(k->pk_type, sizeof k->pk_type, "%s", pkt);
    snprintf(k->sk, sizeof k->sk, "%s", sk);
    snprintf(k->sk_type, sizeof k->sk_type, "%s", skt);
}

/* The table edgeload create-table makes: PK/SK strings, GSI1 on GSI1PK/GSI1SK. */
static void good_table(el_table_desc *t, bool index)
{
    memset(t, 0, sizeof *t);
    keys(&t->key, "PK", "S", "SK", "S");
    if (index) {
        t->ngsi = 1;
        snprintf(t->gsi[0].name, sizeof t->gsi[0].name, "GSI1");
        keys(&t->gsi[0].key, "GSI1PK", "S", "GSI1SK", "S");
    }
}

static el_err check(const el_table_desc *t, const el_mapping *m, unsigned need, el_diag *d)
{
    el_diag_clear(d);
    return el_table_check(t, m, need, "http://127.0.0.1:8000", "us-east-1", d);
}

static void test_fitting_table(void **state)
{
    (void)state;
    el_mapping *m = mapping(with_index);
    el_table_desc t;
    el_diag d;
    good_table(&t, true);
    assert_int_equal(check(&t, m, EL_TABLE_KEYS | EL_TABLE_INDEX_IF_WRITTEN, &d), EL_OK);
    assert_int_equal(check(&t, m, EL_TABLE_KEYS | EL_TABLE_INDEX, &d), EL_OK);
    el_mapping_free(m);
}

static void test_key_names_and_types(void **state)
{
    (void)state;
    el_mapping *m = mapping(with_index);
    el_table_desc t;
    el_diag d;
    good_table(&t, true);
    keys(&t.key, "id", "S", "", "");
    assert_int_equal(check(&t, m, EL_TABLE_KEYS, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "(id S, no sort key)"));
    assert_non_null(strstr(d.msg, "(PK S, SK S)"));
    assert_non_null(strstr(d.msg, "edgeload create-table --table Graph --index-name GSI1 "
                                  "--endpoint-url http://127.0.0.1:8000 --region us-east-1"));
    keys(&t.key, "PK", "N", "SK", "S"); /* right names, a number key */
    assert_int_equal(check(&t, m, EL_TABLE_KEYS, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "PK N"));
    el_mapping_free(m);
}

static void test_index_when_written(void **state)
{
    (void)state;
    el_mapping *m = mapping(with_index), *plain = mapping(no_index);
    el_table_desc t;
    el_diag d;
    good_table(&t, false);
    unsigned load = EL_TABLE_KEYS | EL_TABLE_INDEX_IF_WRITTEN;
    /* the mapping writes GSI1 keys: a table without the index is refused */
    assert_int_equal(check(&t, m, load, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "has no index GSI1 (GSI1PK, GSI1SK)"));
    assert_non_null(strstr(d.msg, "--no-index"));
    /* a mapping that writes no index attributes needs none */
    assert_int_equal(check(&t, plain, load, &d), EL_OK);
    /* keys only (counters): the index does not matter */
    assert_int_equal(check(&t, m, EL_TABLE_KEYS, &d), EL_OK);
    /* verify --reverse queries the index whatever the sources write */
    assert_int_equal(check(&t, plain, EL_TABLE_KEYS | EL_TABLE_INDEX, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "to query"));
    el_mapping_free(m);
    el_mapping_free(plain);
}

static void test_index_key_types(void **state)
{
    (void)state;
    el_mapping *m = mapping(with_index);
    el_table_desc t;
    el_diag d;
    good_table(&t, true);
    keys(&t.gsi[0].key, "GSI1PK", "S", "GSI1SK", "N");
    assert_int_equal(check(&t, m, EL_TABLE_KEYS | EL_TABLE_INDEX_IF_WRITTEN, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "index GSI1 of table Graph has keys (GSI1PK S, GSI1SK N)"));
    el_mapping_free(m);
}

static void test_create_hint(void **state)
{
    (void)state;
    el_mapping *plain = mapping(no_index);
    char hint[300];
    el_table_create_hint(plain, NULL, NULL, hint, sizeof hint);
    assert_string_equal(hint, "edgeload create-table --table Graph --no-index");
    char tiny[10];
    el_table_create_hint(plain, NULL, NULL, tiny, sizeof tiny); /* truncated, terminated */
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    el_mapping_free(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fitting_table),
        cmocka_unit_test(test_key_names_and_types),
        cmocka_unit_test(test_index_when_written),
        cmocka_unit_test(test_index_key_types),
        cmocka_unit_test(test_create_hint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
