/*
 * test_mapping.c - the mapping's JSON form (docs/mapping.md: the mapping file), its checks, the
 * flag-built form, and binding sources to an input's columns.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* fopen, snprintf */
#include <stdlib.h>  /* mkdtemp */
#include <string.h>  /* strlen, strstr */
#include <unistd.h>  /* unlink, rmdir */

#include "pipeline/rows/mapping.h"

/* The mapping example of docs/mapping.md without "hot" and "counters". */
static const char *spec_example =
    "{\n"
    "  \"table\": \"Graph\",\n"
    "  \"index\": {\"name\": \"GSI1\", \"pk\": \"GSI1PK\", \"sk\": \"GSI1SK\"},\n"
    "  \"sources\": [\n"
    "    {\n"
    "      \"name\": \"follows\",\n"
    "      \"input\": \"follows.sql.zst\",\n"
    "      \"source_table\": \"follows\",\n"
    "      \"pk\": \"ACTOR#{follower_id}\",\n"
    "      \"sk\": \"TARGET#{followee_id}\",\n"
    "      \"attributes\": {\n"
    "        \"createdAt\": {\"column\": \"created_at\", \"type\": \"epoch\"},\n"
    "        \"edgeType\":  {\"value\": \"FOLLOWS\"}\n"
    "      }\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"users\",\n"
    "      \"input\": \"users.csv\",\n"
    "      \"pk\": \"USER#{id}\", \"sk\": \"PROFILE\",\n"
    "      \"index\": false,\n"
    "      \"attributes\": \"*\"\n"
    "    }\n"
    "  ]\n"
    "}\n";

static el_mapping *parse_ok(const char *json)
{
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_mapping_parse(json, strlen(json), NULL, &m, &d);
    if (err)
        fail_msg("mapping refused: %s", d.msg);
    assert_non_null(m);
    return m;
}

static void parse_bad(const char *json, const char *part1, const char *part2)
{
    el_mapping *m = (el_mapping *)&m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_EUSAGE);
    assert_null(m);
    if (part1 && !strstr(d.msg, part1))
        fail_msg("message '%s' lacks '%s'", d.msg, part1);
    if (part2 && !strstr(d.msg, part2))
        fail_msg("message '%s' lacks '%s'", d.msg, part2);
}

/* A one-source mapping around a source body, for the error cases. */
static void source_bad(const char *body, const char *part1, const char *part2)
{
    char json[2048];
    snprintf(json, sizeof json, "{\"table\":\"T\",\"sources\":[{\"name\":\"s1\",%s}]}", body);
    parse_bad(json, part1, part2);
}

static el_mapping *source_ok(const char *body)
{
    static char json[2048];
    snprintf(json, sizeof json, "{\"table\":\"T\",\"sources\":[{\"name\":\"s1\",%s}]}", body);
    return parse_ok(json);
}

static void test_spec_example(void **state)
{
    (void)state;
    el_mapping *m = parse_ok(spec_example);
    assert_string_equal(m->table, "Graph");
    assert_string_equal(m->pk_attr, "PK");
    assert_string_equal(m->sk_attr, "SK");
    assert_string_equal(m->index_name, "GSI1");
    assert_string_equal(m->index_pk_attr, "GSI1PK");
    assert_string_equal(m->index_sk_attr, "GSI1SK");
    assert_null(m->base_dir);
    assert_int_equal(m->nsources, 2);

    const el_source *f = m->sources[0];
    assert_string_equal(f->name, "follows");
    assert_string_equal(f->input, "follows.sql.zst");
    assert_string_equal(f->source_table, "follows");
    assert_string_equal(el_template_text(f->pk), "ACTOR#{follower_id}");
    assert_string_equal(el_template_text(f->sk), "TARGET#{followee_id}");
    assert_null(f->index_pk);
    assert_null(f->index_sk);
    assert_true(f->index);
    assert_false(f->all_attrs);
    assert_int_equal(f->format, EL_FMT_AUTO);
    assert_int_equal(f->nattrs, 2);
    assert_string_equal(f->attrs[0].name, "createdAt");
    assert_int_equal(f->attrs[0].kind, EL_ATTR_COLUMN);
    assert_string_equal(f->attrs[0].column, "created_at");
    assert_int_equal(f->attrs[0].type, EL_TYPE_EPOCH);
    assert_string_equal(f->attrs[1].name, "edgeType");
    assert_int_equal(f->attrs[1].kind, EL_ATTR_VALUE);
    assert_string_equal(f->attrs[1].value, "FOLLOWS");
    assert_int_equal(f->attrs[1].type, EL_TYPE_AUTO);

    const el_source *u = m->sources[1];
    assert_string_equal(u->name, "users");
    assert_string_equal(u->input, "users.csv");
    assert_null(u->source_table);
    assert_false(u->index);
    assert_true(u->all_attrs);
    assert_int_equal(u->nattrs, 0);
    assert_string_equal(el_template_text(u->sk), "PROFILE");
    el_mapping_free(m);
    el_mapping_free(NULL);
}

static void test_counters(void **state)
{
    (void)state;
    /* "hot" is in test_mapping_hot.c; counting in test_counters.c */
    el_mapping *m = parse_ok("{\"table\":\"T\",\"sources\":[{\"name\":\"s1\","
                             "\"pk\":\"A#{a}\",\"sk\":\"B#{b}\",\"counters\":[{\"pk\":"
                             "\"USER#{b}\",\"sk\":\"PROFILE\",\"attribute\":\"followerCount\"}]}]}");
    assert_int_equal(m->sources[0]->ncounters, 1);
    assert_string_equal(el_template_text(m->sources[0]->counters[0].pk), "USER#{b}");
    assert_string_equal(el_template_text(m->sources[0]->counters[0].sk), "PROFILE");
    assert_string_equal(m->sources[0]->counters[0].attribute, "followerCount");
    assert_true(el_mapping_has_counters(m));
    el_mapping_free(m);
    source_bad("\"pk\":\"A#{a}\",\"sk\":\"B#{b}\",\"counters\":[{\"pk\":\"USER#{b}\","
               "\"attribute\":\"followerCount\"}]", "counter 1", "\"sk\"");
}

static void test_value_types(void **state)
{
    (void)state;
    el_mapping *m = source_ok("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{"
                              "\"n\":{\"value\":42},"
                              "\"f\":{\"value\":-1.5e3},"
                              "\"t\":{\"value\":true},"
                              "\"no\":{\"value\":false},"
                              "\"z\":{\"value\":null},"
                              "\"s\":{\"value\":\"42\"},"
                              "\"ns\":{\"value\":\"7\",\"type\":\"N\"},"
                              "\"sn\":{\"type\":\"S\",\"value\":42},"
                              "\"tpl\":{\"template\":\"{{x}}-{a}\",\"type\":\"s\"},"
                              "\"short\":\"col_a\"}");
    const el_source *s = m->sources[0];
    assert_int_equal(s->nattrs, 10);
    const struct { const char *name; el_attr_kind kind; const char *value; el_attr_type type; }
        want[] = {
            { "n", EL_ATTR_VALUE, "42", EL_TYPE_N },
            { "f", EL_ATTR_VALUE, "-1.5e3", EL_TYPE_N },
            { "t", EL_ATTR_VALUE, "true", EL_TYPE_BOOL },
            { "no", EL_ATTR_VALUE, "false", EL_TYPE_BOOL },
            { "z", EL_ATTR_VALUE, NULL, EL_TYPE_NULL },
            { "s", EL_ATTR_VALUE, "42", EL_TYPE_AUTO },
            { "ns", EL_ATTR_VALUE, "7", EL_TYPE_N },
            { "sn", EL_ATTR_VALUE, "42", EL_TYPE_S },   /* a given type wins, either order */
            { "tpl", EL_ATTR_TEMPLATE, NULL, EL_TYPE_S },
            { "short", EL_ATTR_COLUMN, NULL, EL_TYPE_AUTO },
        };
    for (size_t i = 0; i < 10; i++) {
        const el_attr_spec *a = &s->attrs[i];
        assert_string_equal(a->name, want[i].name);
        assert_int_equal(a->kind, want[i].kind);
        assert_int_equal(a->type, want[i].type);
        if (want[i].kind == EL_ATTR_VALUE) {
            if (want[i].value)
                assert_string_equal(a->value, want[i].value);
            else
                assert_null(a->value);
        }
    }
    assert_string_equal(el_template_text(s->attrs[8].tpl), "{{x}}-{a}");
    assert_string_equal(s->attrs[9].column, "col_a");
    el_mapping_free(m);
}

static void test_source_options(void **state)
{
    (void)state;
    el_mapping *m = source_ok("\"pk\":\"STU#{student_id}\",\"sk\":\"ENROLL#CRS#{course_id}\","
                              "\"index_pk\":\"CRS#{course_id}\",\"index_sk\":\"STU#{student_id}\","
                              "\"format\":\"tsv\",\"delimiter\":\";\",\"null\":\"\\\\N\","
                              "\"escape\":\"\\\\\","
                              "\"columns\":[\"student_id\",\"course_id\",\"grade\"],"
                              "\"index\":true");
    const el_source *s = m->sources[0];
    assert_string_equal(el_template_text(s->index_pk), "CRS#{course_id}");
    assert_string_equal(el_template_text(s->index_sk), "STU#{student_id}");
    assert_int_equal(s->format, EL_FMT_TSV);
    assert_int_equal(s->delimiter, ';');
    assert_string_equal(s->null_string, "\\N");
    assert_int_equal(s->escape, '\\');
    el_reader_opts base = { .escape = '#', .null_string = "x" };
    el_reader_opts ro = el_source_reader_opts(s, &base);
    assert_int_equal(ro.escape, '\\');
    assert_string_equal(ro.null_string, "\\N");
    assert_int_equal(s->ncolumns, 3);
    assert_string_equal(s->columns[2], "grade");
    assert_true(s->index);
    el_mapping_free(m);

    /* top-level key names and a source without a name */
    m = parse_ok("{\"table\":\"T\",\"key\":{\"pk\":\"pk\",\"sk\":\"sk\"},"
                 "\"index\":{\"name\":\"Inv\",\"pk\":\"ipk\",\"sk\":\"isk\"},"
                 "\"sources\":[{\"pk\":\"A\",\"sk\":\"B\"},{\"pk\":\"C\",\"sk\":\"D\"}]}");
    assert_string_equal(m->pk_attr, "pk");
    assert_string_equal(m->sk_attr, "sk");
    assert_string_equal(m->index_name, "Inv");
    assert_string_equal(m->index_pk_attr, "ipk");
    assert_string_equal(m->sources[0]->name, "source1");
    assert_string_equal(m->sources[1]->name, "source2");
    el_mapping_free(m);
}

static void test_unknown_keys_are_named(void **state)
{
    (void)state;
    parse_bad("{\"table\":\"T\",\"tabel\":\"x\",\"sources\":[]}", "\"tabel\"", "unknown");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"atributes\":{}", "\"atributes\"", "s1");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"colunm\":\"c\"}}",
               "colunm", "'x'");
    parse_bad("{\"table\":\"T\",\"index\":{\"nam\":\"G\"},\"sources\":[]}", "\"nam\"", NULL);
}

static void test_structure_errors(void **state)
{
    (void)state;
    parse_bad("", "not valid JSON", NULL);
    parse_bad("{\"table\": \"T\",", "not valid JSON", NULL);
    parse_bad("{\"table\": 'T'}", "not valid JSON", NULL);
    parse_bad("[1,2]", "JSON object", NULL);
    parse_bad("{\"table\":\"T\",\"sources\":{}}", "\"sources\" must be a list", NULL);
    parse_bad("{\"table\":\"T\",\"sources\":[42]}", "source 1 must be an object", NULL);
    parse_bad("{\"table\":\"T\",\"sources\":[]}", "no sources", NULL);
    parse_bad("{\"table\":\"\",\"sources\":[{\"pk\":\"A\",\"sk\":\"B\"}]}", "table", NULL);
    parse_bad("{\"table\":7,\"sources\":[{\"pk\":\"A\",\"sk\":\"B\"}]}", "table", NULL);
    parse_bad("{\"index\":false,\"table\":\"T\",\"sources\":[{\"pk\":\"A\",\"sk\":\"B\"}]}",
              "\"index\" must be an object", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"index\":\"no\"", "\"index\" must be true or false",
               NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":[\"a\"]", "\"attributes\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":\"all\"", "\"attributes\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\",\"value\":\"v\"}}",
               "more than one", "'x'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"type\":\"N\"}}",
               "needs column, value or template", "'x'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\",\"type\":\"int\"}}",
               "unknown type", "'x'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"value\":[1]}}", "value must be",
               NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"\"}}",
               "names no column", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":7}", "must be an object", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"\":\"c\"}", "empty name", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"template\":\"{\"}}",
               "unclosed", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"format\":\"xml\"", "unknown format", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"delimiter\":\";;\"", "one character", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"escape\":\"\\\\\\\\\"", "\"escape\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"escape\":1", "\"escape\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"columns\":[]", "\"columns\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"columns\":[\"a\",1]", "\"columns\"", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"input\":5", "\"input\"", NULL);
    source_bad("\"pk\":7,\"sk\":\"B\"", "\"pk\"", NULL);
    source_bad("\"pk\":\"A{\",\"sk\":\"B\"", "unclosed", NULL);
}

static void test_missing_keys_and_table(void **state)
{
    (void)state;
    source_bad("\"sk\":\"B\"", "no pk template", "s1");
    source_bad("\"pk\":\"A\"", "no sk template", "s1");
    parse_bad("{\"sources\":[{\"pk\":\"A\",\"sk\":\"B\"}]}", "no table given", NULL);
}

static void test_attribute_named_like_a_key(void **state)
{
    (void)state;
    const char *keys[] = { "PK", "SK", "GSI1PK", "GSI1SK" };
    for (size_t i = 0; i < 4; i++) {
        char body[256];
        snprintf(body, sizeof body, "\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"%s\":\"c\"}",
                 keys[i]);
        char want[32];
        snprintf(want, sizeof want, "'%s'", keys[i]);
        source_bad(body, want, "key attribute");
    }
    /* with renamed keys, the new names are the protected ones */
    parse_bad("{\"table\":\"T\",\"index\":{\"pk\":\"inv\"},\"sources\":[{\"pk\":\"A\",\"sk\":\"B\","
              "\"attributes\":{\"inv\":\"c\"}}]}", "'inv'", NULL);
    el_mapping *m = parse_ok("{\"table\":\"T\",\"index\":{\"pk\":\"inv\"},\"sources\":[{\"pk\":\"A\","
                             "\"sk\":\"B\",\"attributes\":{\"GSI1PK\":\"c\"}}]}");
    el_mapping_free(m);
}

static void test_duplicates(void **state)
{
    (void)state;
    parse_bad("{\"table\":\"T\",\"sources\":[{\"name\":\"a\",\"pk\":\"A\",\"sk\":\"B\"},"
              "{\"name\":\"a\",\"pk\":\"A\",\"sk\":\"B\"}]}", "two sources", "'a'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":\"c\",\"x\":\"d\"}", "twice",
               "'x'");
    /* a key given twice: the later one counts, nothing leaks or overflows */
    el_mapping *m = source_ok("\"pk\":\"A\",\"sk\":\"B\",\"columns\":[\"a\",\"b\",\"c\"],"
                              "\"columns\":[\"x\"],\"input\":\"one.csv\",\"input\":\"two.csv\","
                              "\"pk\":\"C\"");
    const el_source *s = m->sources[0];
    assert_int_equal(s->ncolumns, 1);
    assert_string_equal(s->columns[0], "x");
    assert_string_equal(s->input, "two.csv");
    assert_string_equal(el_template_text(s->pk), "C");
    el_mapping_free(m);
}

static void test_load_file_sets_base_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/el_test_mapping_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/graph.json", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(spec_example, 1, strlen(spec_example), f), strlen(spec_example));
    fclose(f);
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_load_file(path, &m, &d), EL_OK);
    assert_string_equal(m->base_dir, dir);
    assert_string_equal(m->sources[0]->input, "follows.sql.zst");  /* kept as written */
    el_mapping_free(m);

    /* errors name the file */
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("{\"table\":\"T\",\"sources\":[{\"pk\":\"A\",\"sk\":\"B\",\"oops\":1}]}", f);
    fclose(f);
    assert_int_equal(el_mapping_load_file(path, &m, &d), EL_EUSAGE);
    assert_null(m);
    assert_non_null(strstr(d.msg, path));
    assert_non_null(strstr(d.msg, "\"oops\""));
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("{not json", f);
    fclose(f);
    assert_int_equal(el_mapping_load_file(path, &m, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, path));
    assert_non_null(strstr(d.msg, "not valid JSON"));
    assert_null(strchr(d.msg, '\n'));
    unlink(path);
    assert_int_equal(el_mapping_load_file(path, &m, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "cannot open"));
    assert_null(m);
    rmdir(dir);

    /* a parse from memory keeps the base_dir it was given */
    assert_int_equal(el_mapping_parse(spec_example, strlen(spec_example), "/data", &m, &d),
                     EL_OK);
    assert_string_equal(m->base_dir, "/data");
    el_mapping_free(m);
}

static void test_attr_type_names(void **state)
{
    (void)state;
    const char *names[] = { "auto", "S", "N", "BOOL", "B", "NULL", "epoch", "json", "SS", "NS" };
    for (el_attr_type t = EL_TYPE_AUTO; t <= EL_TYPE_NS; t++) {
        el_attr_type got;
        assert_string_equal(el_attr_type_name(t), names[t]);
        assert_int_equal(el_attr_type_parse(names[t], &got), EL_OK);
        assert_int_equal(got, t);
    }
    el_attr_type got;
    assert_int_equal(el_attr_type_parse("bool", &got), EL_OK);
    assert_int_equal(got, EL_TYPE_BOOL);
    assert_int_equal(el_attr_type_parse("EPOCH", &got), EL_OK);
    assert_int_equal(got, EL_TYPE_EPOCH);
    assert_int_equal(el_attr_type_parse("JSON", &got), EL_OK);
    assert_int_equal(got, EL_TYPE_JSON);
    assert_int_equal(el_attr_type_parse("ss", &got), EL_OK);
    assert_int_equal(got, EL_TYPE_SS);
    assert_int_equal(el_attr_type_parse("jsonb", &got), EL_EUSAGE);
    assert_int_equal(el_attr_type_parse("SET", &got), EL_EUSAGE);
    assert_int_equal(el_attr_type_parse("string", &got), EL_EUSAGE);
    assert_int_equal(el_attr_type_parse("", &got), EL_EUSAGE);
    assert_string_equal(el_attr_type_name((el_attr_type)99), "?");
}

static void test_flags_form_and_bind(void **state)
{
    (void)state;
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_new(&m), EL_OK);
    assert_int_equal(el_mapping_check(m, &d), EL_EUSAGE);       /* no table */
    m->table = strdup("Graph");
    assert_int_equal(el_mapping_check(m, &d), EL_EUSAGE);       /* no sources */
    assert_non_null(strstr(d.msg, "no sources"));
    el_source *s;
    assert_int_equal(el_source_new("cli", &s), EL_OK);
    assert_true(s->index);
    assert_int_equal(el_source_set_key(s, "pk", "ACTOR#{follower_id}", &d), EL_OK);
    assert_int_equal(el_source_set_key(s, "sk", "TARGET#{followee_id}", &d), EL_OK);
    assert_int_equal(el_source_set_key(s, "sk", "TARGET#{followee_id}", &d), EL_OK); /* replace */
    assert_int_equal(el_source_set_key(s, "pk2", "x", &d), EL_EINTERNAL);
    assert_int_equal(el_source_set_key(s, "index_pk", "{oops", &d), EL_EUSAGE);
    assert_null(s->index_pk);
    assert_int_equal(el_source_add_attr(s, "createdAt", EL_ATTR_COLUMN, "created_at",
                                        EL_TYPE_EPOCH, &d), EL_OK);
    assert_int_equal(el_source_add_attr(s, "edgeType", EL_ATTR_VALUE, "FOLLOWS", EL_TYPE_S, &d),
                     EL_OK);
    assert_int_equal(el_source_add_attr(s, "label", EL_ATTR_TEMPLATE, "{follower_id}->{nope}",
                                        EL_TYPE_AUTO, &d), EL_OK);
    assert_int_equal(el_source_add_attr(s, "createdAt", EL_ATTR_COLUMN, "x", EL_TYPE_S, &d),
                     EL_EUSAGE);
    assert_non_null(strstr(d.msg, "twice"));
    assert_int_equal(el_source_add_attr(s, "bad", EL_ATTR_TEMPLATE, "}", EL_TYPE_S, &d),
                     EL_EUSAGE);
    assert_int_equal(s->nattrs, 3);
    assert_int_equal(el_mapping_add_source(m, s), EL_OK);
    assert_int_equal(el_mapping_check(m, &d), EL_OK);

    char *names[] = { "follower_id", "followee_id", "created_at" };
    el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
    el_schema schema = { 3, names, types, NULL, NULL };
    /* the template attribute names a column the input lacks */
    assert_int_equal(el_source_bind(s, &schema, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "'nope'"));
    assert_non_null(strstr(d.msg, "follower_id, followee_id, created_at"));
    assert_int_equal(el_source_add_attr(s, "label2", EL_ATTR_COLUMN, "missing", EL_TYPE_S, &d),
                     EL_OK);
    char *names2[] = { "follower_id", "followee_id", "created_at", "nope" };
    el_coltype types2[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
    el_schema schema2 = { 4, names2, types2, NULL, NULL };
    assert_int_equal(el_source_bind(s, &schema2, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "'missing'"));
    assert_non_null(strstr(d.msg, "'label2'"));
    assert_non_null(strstr(d.msg, "created_at, nope"));
    el_mapping_free(m);
}

static void test_bind_resolves_columns(void **state)
{
    (void)state;
    el_mapping *m = parse_ok(spec_example);
    el_source *f = m->sources[0];
    char *names[] = { "created_at", "followee_id", "follower_id" };
    el_coltype types[] = { EL_COL_TEXT, EL_COL_TEXT, EL_COL_TEXT };
    el_schema schema = { 3, names, types, NULL, NULL };
    el_diag d;
    assert_int_equal(el_source_bind(f, &schema, &d), EL_OK);
    assert_ptr_equal(f->bound, &schema);
    assert_int_equal(f->attrs[0].col, 0);
    assert_int_equal(el_template_ref_index(f->pk, 0), 2);
    assert_int_equal(el_template_ref_index(f->sk, 0), 1);
    /* the users source wants {id}, which this input lacks */
    assert_int_equal(el_source_bind(m->sources[1], &schema, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "'id'"));
    el_mapping_free(m);
}

static void test_struct_types_and_delimiter(void **state)
{
    (void)state;
    const char *json =
        "{\"table\":\"T\",\"sources\":[{\"name\":\"s\",\"pk\":\"A\",\"sk\":\"B\","
        "\"attributes\":{\"doc\":{\"column\":\"doc\",\"type\":\"json\"},"
        "\"tags\":{\"type\":\"SS\",\"column\":\"tags\"},"
        "\"nums\":{\"column\":\"nums\",\"delimiter\":\";\",\"type\":\"NS\"},"
        "\"lit\":{\"value\":\"[1,2]\",\"type\":\"json\"}}}]}";
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_mapping_parse(json, strlen(json), NULL, &m, &d), EL_OK);
    const el_source *s = m->sources[0];
    assert_int_equal(s->nattrs, 4);
    assert_int_equal(s->attrs[0].type, EL_TYPE_JSON);
    assert_int_equal(s->attrs[0].delimiter, 0);
    assert_int_equal(s->attrs[1].type, EL_TYPE_SS);
    assert_int_equal(s->attrs[1].delimiter, 0); /* EL_SET_DELIMITER then */
    assert_int_equal(s->attrs[2].type, EL_TYPE_NS);
    assert_int_equal(s->attrs[2].delimiter, ';');
    assert_int_equal(s->attrs[3].type, EL_TYPE_JSON);
    assert_int_equal(s->attrs[3].kind, EL_ATTR_VALUE);
    assert_string_equal(s->attrs[3].value, "[1,2]");
    el_mapping_free(m);
    assert_int_equal(EL_SET_DELIMITER, ',');

    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\","
               "\"type\":\"N\",\"delimiter\":\";\"}}",
               "\"delimiter\" is for the set types", "not N");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\","
               "\"delimiter\":\";\"}}",
               "\"delimiter\" is for the set types", "'x'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\","
               "\"type\":\"SS\",\"delimiter\":\";;\"}}",
               "must be one character", "'x'");
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\","
               "\"type\":\"SS\",\"delimiter\":\"\"}}",
               "must be one character", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\","
               "\"type\":\"NS\",\"delimiter\":44}}",
               "must be one character", NULL);
    source_bad("\"pk\":\"A\",\"sk\":\"B\",\"attributes\":{\"x\":{\"column\":\"c\",\"type\":\"set\"}}",
               "json, SS, NS", "'x'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_struct_types_and_delimiter),
        cmocka_unit_test(test_spec_example),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_source_options),
        cmocka_unit_test(test_unknown_keys_are_named),
        cmocka_unit_test(test_structure_errors),
        cmocka_unit_test(test_missing_keys_and_table),
        cmocka_unit_test(test_attribute_named_like_a_key),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_load_file_sets_base_dir),
        cmocka_unit_test(test_attr_type_names),
        cmocka_unit_test(test_flags_form_and_bind),
        cmocka_unit_test(test_bind_resolves_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
