/*
 * test_table_settings.c - create-table's settings: flags, the mapping's
 * "create_table", the merge (a flag wins), the checks with the names the
 * user gave, and what reaches the CreateTable options.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strlen, strstr */

#include "pipeline/rows/mapping.h"
#include "pipeline/rows/table_settings.h"

static el_table_settings *from_json(const char *json, el_err want)
{
    char err[256];
    yajl_val v = yajl_tree_parse(json, err, sizeof err);
    if (!v)
        fail_msg("bad JSON in the test: %s", err);
    el_table_settings *s = el_table_settings_new();
    el_diag d;
    el_diag_clear(&d);
    el_err got = el_table_settings_from_json(s, v, &d);
    yajl_tree_free(v);
    if (got != want)
        fail_msg("from_json(%s): %d (%s), wanted %d", json, got, d.msg, want);
    return s;
}

/* The message of a check (or "" when it passes). */
static const char *check(const el_table_settings *s, bool has_index)
{
    static el_diag d;
    el_diag_clear(&d);
    if (el_table_settings_check(s, has_index, &d) == EL_OK)
        return "";
    return d.msg;
}

static void set_ok(el_table_settings *s, el_ts_field f, const char *text)
{
    el_diag d;
    el_diag_clear(&d);
    if (el_table_settings_set(s, f, text, &d) != EL_OK)
        fail_msg("set %d '%s': %s", f, text ? text : "(null)", d.msg);
}

static const char *set_bad(el_table_settings *s, el_ts_field f, const char *text)
{
    static el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_table_settings_set(s, f, text, &d), EL_EUSAGE);
    return d.msg;
}

static void test_flags(void **state)
{
    (void)state;
    el_table_settings *s = el_table_settings_new();
    set_ok(s, EL_TS_BILLING_MODE, "PROVISIONED");
    set_ok(s, EL_TS_WRITE_UNITS, "40000");
    set_ok(s, EL_TS_READ_UNITS, "1");
    set_ok(s, EL_TS_WARM, "40000,12000");
    set_ok(s, EL_TS_TABLE_CLASS, "STANDARD_INFREQUENT_ACCESS");
    set_ok(s, EL_TS_DELETION_PROTECTION, NULL);
    set_ok(s, EL_TS_TAG, "team=data");
    set_ok(s, EL_TS_TAG, "expr=a=b");   /* the first '=' splits */
    set_ok(s, EL_TS_TAG, "team=graph"); /* a key again: its new value */
    set_ok(s, EL_TS_TAG, "empty=");
    set_ok(s, EL_TS_PROJECTION, "KEYS_ONLY");
    assert_string_equal(s->billing_mode, "PROVISIONED");
    assert_true(s->table.write_units == 40000 && s->table.read_units == 1);
    assert_true(s->table.warm_write == 40000 && s->table.warm_read == 12000);
    assert_true(s->deletion_protection);
    assert_int_equal(s->ntags, 3);
    assert_string_equal(s->tags[0].key, "team");
    assert_string_equal(s->tags[0].value, "graph");
    assert_string_equal(s->tags[1].key, "expr");
    assert_string_equal(s->tags[1].value, "a=b");
    assert_string_equal(s->tags[2].value, "");
    set_ok(s, EL_TS_WARM, "5000"); /* the read figure goes with the pair */
    assert_true(s->table.warm_write == 5000 && s->table.warm_read == 0);
    assert_string_equal(check(s, true), "");

    /* bad values name the flag and what it takes */
    assert_non_null(strstr(set_bad(s, EL_TS_BILLING_MODE, "ON_DEMAND"),
                           "--billing-mode must be PAY_PER_REQUEST or PROVISIONED, not "
                           "'ON_DEMAND'"));
    const char *bad_units[] = {"0", "-1", "1.5", "4e4", "", "12x", "9007199254740993",
                               "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_units / sizeof bad_units[0]; i++)
        assert_non_null(strstr(set_bad(s, EL_TS_WRITE_UNITS, bad_units[i]),
                               "--write-units takes a whole number"));
    set_ok(s, EL_TS_MAX_READ, "9007199254740992"); /* 2^53, the largest */
    const char *bad_warm[] = {"", ",", "1,", ",1", "1,2,3", "0", "1,0", "a"};
    for (size_t i = 0; i < sizeof bad_warm / sizeof bad_warm[0]; i++)
        assert_non_null(strstr(set_bad(s, EL_TS_WARM, bad_warm[i]), "WRITE[,READ]"));
    assert_true(s->table.warm_write == 5000); /* a refused value changes nothing */
    assert_non_null(strstr(set_bad(s, EL_TS_TABLE_CLASS, "GLACIER"), "--table-class"));
    assert_non_null(strstr(set_bad(s, EL_TS_PROJECTION, "INCLUDE"), "ALL or KEYS_ONLY"));
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, "novalue"), "KEY=VALUE"));
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, "=v"), "1 to 128 characters"));
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, "aws:owner=me"), "begins with aws:"));
    char long_key[200], long_value[300];
    memset(long_key, 'k', 129);
    strcpy(long_key + 129, "=v");
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, long_key), "1 to 128 characters"));
    /* characters, not bytes: 128 two-byte characters are a good key */
    char utf8_key[300] = "";
    for (int i = 0; i < 128; i++)
        strcat(utf8_key, "\xC3\xA9");
    strcat(utf8_key, "=v");
    set_ok(s, EL_TS_TAG, utf8_key);
    strcpy(long_value, "k=");
    memset(long_value + 2, 'v', 257);
    long_value[259] = '\0';
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, long_value), "over 256 characters"));
    el_table_settings_free(s);

    /* at most 50 tags */
    s = el_table_settings_new();
    char tag[16];
    for (int i = 0; i < EL_TS_MAX_TAGS; i++) {
        snprintf(tag, sizeof tag, "k%d=v", i);
        set_ok(s, EL_TS_TAG, tag);
    }
    assert_non_null(strstr(set_bad(s, EL_TS_TAG, "one=more"), "at most 50 tags"));
    set_ok(s, EL_TS_TAG, "k7=again"); /* a key it has is no new tag */
    el_table_settings_free(s);
}

static void test_json(void **state)
{
    (void)state;
    el_table_settings *s = from_json(
        "{\"billing_mode\": \"PROVISIONED\", \"write_units\": 100, \"read_units\": 5,"
        " \"warm_throughput\": {\"write\": 40000, \"read\": 12000},"
        " \"table_class\": \"STANDARD\", \"deletion_protection\": true,"
        " \"tags\": {\"team\": \"data\", \"env\": \"prod\"}, \"projection\": \"KEYS_ONLY\","
        " \"index\": {\"write_units\": 50, \"warm_throughput\": {\"write\": 20000}}}",
        EL_OK);
    assert_string_equal(s->billing_mode, "PROVISIONED");
    assert_true(s->table.write_units == 100 && s->table.read_units == 5);
    assert_true(s->table.warm_write == 40000 && s->table.warm_read == 12000);
    assert_true(s->index.write_units == 50 && s->index.read_units == 0);
    assert_true(s->index.warm_write == 20000);
    assert_string_equal(s->table_class, "STANDARD");
    assert_true(s->deletion_protection);
    assert_int_equal(s->ntags, 2);
    assert_string_equal(s->tags[1].key, "env");
    assert_string_equal(s->projection, "KEYS_ONLY");
    assert_int_equal(s->from_flags, 0);
    assert_string_equal(check(s, true), "");

    /* the index's own figures, the table's elsewhere; the warm pair whole */
    el_create_table_opts o = {.projection = "ALL"};
    el_table_settings_apply(s, &o);
    assert_true(o.provisioned);
    assert_true(o.table_tp.write_units == 100 && o.table_tp.read_units == 5);
    assert_true(o.index_tp.write_units == 50 && o.index_tp.read_units == 5);
    assert_true(o.index_tp.warm_write == 20000 && o.index_tp.warm_read == 0);
    assert_string_equal(o.table_class, "STANDARD");
    assert_true(o.deletion_protection);
    assert_int_equal(o.ntags, 2);
    assert_string_equal(o.projection, "KEYS_ONLY");
    el_table_settings_free(s);

    /* wrong kinds and unknown keys, named as in the file */
    struct { const char *json, *says; } bad[] = {
        {"[]", "\"create_table\" must be an object"},
        {"{\"billing\": \"PROVISIONED\"}", "unknown key \"billing\""},
        {"{\"billing_mode\": \"provisioned\"}", "create_table.billing_mode must be"},
        {"{\"write_units\": \"100\"}", "create_table.write_units takes a whole number"},
        {"{\"write_units\": 1.5}", "create_table.write_units takes a whole number"},
        {"{\"write_units\": 0}", "create_table.write_units takes a whole number"},
        {"{\"warm_throughput\": 40000}", "create_table.warm_throughput must be an object"},
        {"{\"warm_throughput\": {}}", "create_table.warm_throughput must be an object"},
        {"{\"warm_throughput\": {\"writes\": 1}}", "unknown key \"writes\""},
        {"{\"warm_throughput\": {\"write\": -5}}", "create_table.warm_throughput.write takes"},
        {"{\"deletion_protection\": \"yes\"}", "deletion_protection must be true or false"},
        {"{\"tags\": [\"a\"]}", "create_table.tags must be an object"},
        {"{\"tags\": {\"a\": 1}}", "the value of tag 'a' must be a string"},
        {"{\"tags\": {\"aws:x\": \"1\"}}", "begins with aws:"},
        {"{\"index\": {\"table_class\": \"STANDARD\"}}", "create_table.index has an unknown key"},
        {"{\"index\": {\"max_write_units\": true}}", "create_table.index.max_write_units takes"},
        {"{\"index\": 5}", "create_table.index must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256];
        yajl_val v = yajl_tree_parse(bad[i].json, err, sizeof err);
        assert_non_null(v);
        el_table_settings *t = el_table_settings_new();
        el_diag d;
        el_diag_clear(&d);
        assert_int_equal(el_table_settings_from_json(t, v, &d), EL_EUSAGE);
        if (!strstr(d.msg, bad[i].says))
            fail_msg("%s: '%s' does not say '%s'", bad[i].json, d.msg, bad[i].says);
        el_table_settings_free(t);
        yajl_tree_free(v);
    }
}

/* A flag wins over the file, for the table's figure and the index's own. */
static void test_merge(void **state)
{
    (void)state;
    el_table_settings *file = from_json(
        "{\"billing_mode\": \"PROVISIONED\", \"write_units\": 100, \"read_units\": 5,"
        " \"warm_throughput\": {\"write\": 40000, \"read\": 12000},"
        " \"tags\": {\"team\": \"data\", \"env\": \"prod\"},"
        " \"index\": {\"write_units\": 50, \"read_units\": 2,"
        "            \"warm_throughput\": {\"write\": 20000}}}",
        EL_OK);
    el_table_settings *flags = el_table_settings_new();
    set_ok(flags, EL_TS_WRITE_UNITS, "300");
    set_ok(flags, EL_TS_WARM, "9000");
    set_ok(flags, EL_TS_TAG, "env=test");
    set_ok(flags, EL_TS_TAG, "owner=me");
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_table_settings_merge(file, flags, &d), EL_OK);
    assert_int_equal(el_table_settings_merge(file, NULL, &d), EL_OK);
    el_create_table_opts o = {0};
    el_table_settings_apply(file, &o);
    assert_true(o.provisioned);                   /* the file's, no flag */
    assert_true(o.table_tp.write_units == 300 && o.index_tp.write_units == 300);
    assert_true(o.table_tp.read_units == 5 && o.index_tp.read_units == 2);
    assert_true(o.table_tp.warm_write == 9000 && o.table_tp.warm_read == 0);
    assert_true(o.index_tp.warm_write == 9000 && o.index_tp.warm_read == 0);
    assert_int_equal(o.ntags, 3);
    assert_string_equal(o.tags[1].key, "env");
    assert_string_equal(o.tags[1].value, "test");
    assert_string_equal(o.tags[2].key, "owner");
    assert_string_equal(check(file, true), "");
    el_table_settings_free(flags);

    /* --billing-mode PAY_PER_REQUEST over a provisioned file: its units are
     * now refused, named as the file names them */
    flags = el_table_settings_new();
    set_ok(flags, EL_TS_BILLING_MODE, "PAY_PER_REQUEST");
    assert_int_equal(el_table_settings_merge(file, flags, &d), EL_OK);
    assert_string_equal(check(file, true),
                        "--write-units is a PROVISIONED table's capacity, but this one is "
                        "PAY_PER_REQUEST (--billing-mode): give --billing-mode PROVISIONED, "
                        "or --max-write-units N for an on-demand table's maximum");
    el_table_settings_free(flags);
    el_table_settings_free(file);
}

static void test_check(void **state)
{
    (void)state;
    el_table_settings *s = el_table_settings_new();
    assert_string_equal(check(s, true), ""); /* nothing given: on-demand, as before */
    set_ok(s, EL_TS_READ_UNITS, "5");
    assert_string_equal(check(s, true),
                        "--read-units is a PROVISIONED table's capacity, but this one is "
                        "PAY_PER_REQUEST (the default): give --billing-mode PROVISIONED, or "
                        "--max-read-units N for an on-demand table's maximum");
    set_ok(s, EL_TS_BILLING_MODE, "PROVISIONED");
    assert_string_equal(check(s, true),
                        "--billing-mode PROVISIONED needs the table's capacity: --write-units "
                        "N and --read-units N (the index takes the same unless "
                        "create_table.index gives its own)");
    set_ok(s, EL_TS_WRITE_UNITS, "10");
    assert_string_equal(check(s, true), "");
    set_ok(s, EL_TS_MAX_WRITE, "100");
    assert_string_equal(check(s, true),
                        "--max-write-units is an on-demand table's maximum, but "
                        "--billing-mode makes this one PROVISIONED: its capacity is "
                        "--write-units and --read-units");
    el_table_settings_free(s);

    /* named as the file names them, the index's own included */
    s = from_json("{\"max_write_units\": 100, \"warm_throughput\": {\"write\": 1}}", EL_OK);
    assert_string_equal(check(s, true), "");
    el_table_settings_free(s);
    s = from_json("{\"billing_mode\": \"PROVISIONED\", \"write_units\": 1, \"read_units\": 1,"
                  " \"index\": {\"max_read_units\": 3}}", EL_OK);
    assert_string_equal(check(s, true),
                        "create_table.index.max_read_units is an on-demand table's maximum, "
                        "but create_table.billing_mode makes this one PROVISIONED: its "
                        "capacity is --write-units and --read-units");
    el_table_settings_free(s);
    s = from_json("{\"index\": {\"write_units\": 3}}", EL_OK);
    assert_non_null(strstr(check(s, true), "create_table.index.write_units is a PROVISIONED "
                                           "table's capacity, but this one is PAY_PER_REQUEST "
                                           "(the default)"));
    assert_string_equal(check(s, false), "create_table.index.write_units gives the index its "
                                         "own throughput, but the table gets no index "
                                         "(--no-index)");
    el_table_settings_free(s);
}

/* The mapping file holds "create_table"; every command parses it, a bad one
 * is a mapping error naming the file's key. */
static void test_in_mapping(void **state)
{
    (void)state;
    const char *json =
        "{\"table\": \"Graph\", \"create_table\": {\"warm_throughput\": {\"write\": 40000}},"
        " \"sources\": [{\"name\": \"s\", \"pk\": \"A#{a}\", \"sk\": \"B#{b}\"}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    assert_non_null(m->create_table);
    assert_true(m->create_table->table.warm_write == 40000);
    el_mapping_free(m);
    const char *none = "{\"table\": \"Graph\", \"sources\": [{\"name\": \"s\", \"pk\": \"A#{a}\","
                       " \"sk\": \"B#{b}\"}]}";
    assert_int_equal(el_mapping_parse(none, strlen(none), NULL, &m, &d), EL_OK);
    assert_null(m->create_table);
    el_mapping_free(m);
    const char *twice = "{\"table\": \"G\", \"create_table\": {\"write_units\": 1},"
                        " \"create_table\": {\"read_units\": 2}, \"sources\": [{\"name\": \"s\","
                        " \"pk\": \"A#{a}\", \"sk\": \"B#{b}\"}]}";
    assert_int_equal(el_mapping_parse(twice, strlen(twice), NULL, &m, &d), EL_OK);
    assert_true(m->create_table->table.write_units == 0);
    assert_true(m->create_table->table.read_units == 2);
    el_mapping_free(m);
    const char *bad = "{\"table\": \"G\", \"create_table\": {\"warm\": 1}, \"sources\": []}";
    assert_int_equal(el_mapping_parse(bad, strlen(bad), NULL, &m, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "\"create_table\" has an unknown key \"warm\""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_in_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
