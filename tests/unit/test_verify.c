/*
 * test_verify.c - what verify names its mismatches, and the run itself on
 * a scripted DynamoDB: the items a load (dry run) makes of two sources that
 * share a hot index key are put into an in-memory table that answers
 * BatchGetItem and Query, and verify must find all of them there, the
 * shard directory item with the fan-in of both sources, every edge on its
 * shard (a hot key's edges checked together, whatever their source), and
 * must report what is changed behind its back: an edge left on the plain
 * key (what an earlier edgeload did to the second source's edges), a
 * directory with another fan-in, an item gone and one changed, read
 * through throttled BatchGetItem requests (a ThrottlingException, keys
 * left in UnprocessedKeys). Rows that cannot become items are counted
 * per source. The comparison of values is formats/ddb_item's
 * (test_ddb_item.c); the run against DynamoDB Local is
 * tests/integration/test_verify*.py.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fake_wire.h"
#include "helpers.h"

#include <curl/curl.h>      /* CURLcode for el_ddb_classify */
#include <stdio.h>          /* open_memstream, fopen */
#include <stdlib.h>         /* mkdtemp, free */
#include <string.h>         /* strlen, strcmp */
#include <unistd.h>         /* unlink, rmdir */
#include <yajl/yajl_tree.h> /* the scripted DynamoDB reads the requests */

#include "common/buf.h"
#include "dynamo/ddb_errors.h"  /* el_ddb_classify: the fake's answers as the client sees them */
#include "formats/ddb_value.h"  /* el_json_put_string */
#include "pipeline/load/loader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"
#include "pipeline/verify/verify.h"

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(el_verify_kind_name(EL_VERIFY_MISSING), "missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_DIFFERENT), "different");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_MISSING), "reverse-missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_REVERSE_EXTRA), "reverse-extra");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_COUNTER_MISSING), "counter-missing");
    assert_string_equal(el_verify_kind_name(EL_VERIFY_COUNTER_DIFFERENT), "counter-different");
}

/* ---- a scripted DynamoDB: one table, its index GSI1 ---- */

#define MAX_ITEMS 64

typedef struct item {
    char *pk, *sk, *ipk;  /* ipk NULL: not in the index */
    char *json;           /* the item as DynamoDB JSON */
} item;

typedef struct fake_ddb {
    el_fake_wire w;       /* first: the transport's callbacks take it */
    item items[MAX_ITEMS];
    size_t n;
    unsigned queries, gets;
    /* faults of the next BatchGetItem requests: refused with a
     * ThrottlingException, or answered with their second half of keys
     * in UnprocessedKeys */
    unsigned throttle_gets, partial_gets;
    unsigned throttled, unprocessed;  /* what the faults did */
} fake_ddb;

static item *find(fake_ddb *f, const char *pk, const char *sk)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->items[i].pk, pk) == 0 && strcmp(f->items[i].sk, sk) == 0)
            return &f->items[i];
    return NULL;
}

static const char *str_at(yajl_val v, const char *a, const char *b)
{
    const char *path[] = { a, b, NULL };
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s ? YAJL_GET_STRING(s) : NULL;
}

/* Adds one line of a dry run, {"Item":{...}}, to the table. */
static void put_line(fake_ddb *f, const char *line, size_t len)
{
    char *text = strndup(line, len);
    char err[256];
    yajl_val root = yajl_tree_parse(text, err, sizeof err);
    assert_non_null(root);
    const char *ip[] = { "Item", NULL };
    yajl_val it = yajl_tree_get(root, ip, yajl_t_object);
    assert_non_null(it);
    assert_true(f->n < MAX_ITEMS);
    item *x = &f->items[f->n++];
    x->pk = strdup(str_at(it, "PK", "S"));
    x->sk = strdup(str_at(it, "SK", "S"));
    const char *ipk = str_at(it, "GSI1PK", "S");
    x->ipk = ipk ? strdup(ipk) : NULL;
    const char *open = strchr(text, ':') + 1;           /* after "Item": */
    x->json = strndup(open, strlen(open) - 1);          /* without the last } */
    yajl_tree_free(root);
    free(text);
}

/* {"Responses":{"Graph":[items]},"UnprocessedKeys":{}} for the keys asked. */
static char *batch_get(fake_ddb *f, yajl_val req)
{
    f->gets++;
    const char *ri[] = { "RequestItems", "Graph", "Keys", NULL };
    yajl_val keys = yajl_tree_get(req, ri, yajl_t_array);
    assert_non_null(keys);
    el_buf b;
    el_buf_init(&b, 1u << 20);
    assert_int_equal(el_buf_puts(&b, "{\"Responses\":{\"Graph\":["), EL_OK);
    bool first = true;
    size_t answered = keys->u.array.len;
    if (f->partial_gets && answered > 1) {
        f->partial_gets--;
        answered /= 2;
    }
    for (size_t i = 0; i < answered; i++) {
        yajl_val k = keys->u.array.values[i];
        item *x = find(f, str_at(k, "PK", "S"), str_at(k, "SK", "S"));
        if (!x)
            continue;
        assert_int_equal(el_buf_puts(&b, first ? "" : ","), EL_OK);
        assert_int_equal(el_buf_puts(&b, x->json), EL_OK);
        first = false;
    }
    assert_int_equal(el_buf_puts(&b, "]},\"UnprocessedKeys\":{"), EL_OK);
    if (answered < keys->u.array.len) {
        assert_int_equal(el_buf_puts(&b, "\"Graph\":{\"Keys\":["), EL_OK);
        for (size_t i = answered; i < keys->u.array.len; i++) {
            yajl_val k = keys->u.array.values[i];
            const char *pk = str_at(k, "PK", "S"), *sk = str_at(k, "SK", "S");
            assert_int_equal(el_buf_puts(&b, i > answered ? ",{\"PK\":{\"S\":" : "{\"PK\":{\"S\":"),
                             EL_OK);
            assert_int_equal(el_json_put_string(&b, pk, strlen(pk)), EL_OK);
            assert_int_equal(el_buf_puts(&b, "},\"SK\":{\"S\":"), EL_OK);
            assert_int_equal(el_json_put_string(&b, sk, strlen(sk)), EL_OK);
            assert_int_equal(el_buf_puts(&b, "}}"), EL_OK);
            f->unprocessed++;
        }
        assert_int_equal(el_buf_puts(&b, "]}"), EL_OK);
    }
    assert_int_equal(el_buf_puts(&b, "}}"), EL_OK);
    return el_buf_take(&b);
}

/* {"Items":[{"PK":..,"SK":..}],"Count":n} of the index key asked. */
static char *query(fake_ddb *f, yajl_val req)
{
    f->queries++;
    const char *v[] = { "ExpressionAttributeValues", ":v", "S", NULL };
    yajl_val wantv = yajl_tree_get(req, v, yajl_t_string);
    const char *want = wantv ? YAJL_GET_STRING(wantv) : NULL;
    assert_non_null(want);
    el_buf b;
    el_buf_init(&b, 1u << 20);
    assert_int_equal(el_buf_puts(&b, "{\"Items\":["), EL_OK);
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        item *x = &f->items[i];
        if (!x->ipk || strcmp(x->ipk, want) != 0)
            continue;
        assert_int_equal(el_buf_puts(&b, n++ ? ",{\"PK\":{\"S\":" : "{\"PK\":{\"S\":"), EL_OK);
        assert_int_equal(el_json_put_string(&b, x->pk, strlen(x->pk)), EL_OK);
        assert_int_equal(el_buf_puts(&b, "},\"SK\":{\"S\":"), EL_OK);
        assert_int_equal(el_json_put_string(&b, x->sk, strlen(x->sk)), EL_OK);
        assert_int_equal(el_buf_puts(&b, "}}"), EL_OK);
    }
    assert_int_equal(el_buf_printf(&b, "],\"Count\":%zu}", n), EL_OK);
    return el_buf_take(&b);
}

static el_err f_send(void *self, el_ddb_op *op)
{
    fake_ddb *f = self;
    yajl_val req = el_fake_wire_request(op, NULL);
    const char *name = el_ddb_op_name(op);
    el_ddb_result res;
    char *answer;
    if (strcmp(name, "BatchGetItem") == 0 && f->throttle_gets) {
        f->throttle_gets--;
        f->throttled++;
        answer = strdup(EL_FAKE_THROTTLING);
        memset(&res, 0, sizeof res);
        el_ddb_classify(CURLE_OK, 400, answer, strlen(answer), &res);
    } else {
        answer = strcmp(name, "Query") == 0 ? query(f, req) : batch_get(f, req);
        res = (el_ddb_result){ .outcome = EL_DDB_SUCCESS, .http_status = 200 };
    }
    res.sends = 1;
    el_fake_wire_hold(&f->w, op, &res, answer);
    assert_true(strcmp(name, "Query") == 0 || strcmp(name, "BatchGetItem") == 0);
    yajl_tree_free(req);
    return EL_OK;
}

static el_err f_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    fake_ddb *f = self;
    el_fake_wire_deliver(&f->w, d, timeout_ms);
    return EL_OK;
}

static void fake_free(fake_ddb *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->items[i].pk);
        free(f->items[i].sk);
        free(f->items[i].ipk);
        free(f->items[i].json);
    }
    f->n = 0;
}

/* ---- the job: two sources of follows, one more of rejects ---- */

static char dir[64];

static void write_file(const char *name, const char *text)
{
    el_test_write_file(dir, name, text);
}

/* a.csv: 4 followers of bob and 1 of amy; b.csv: 2 more of bob; c.csv: rows
 * whose target is empty (no key: they cannot become items). Threshold 3:
 * bob (4 + 2 = 6) gets 2 shards, amy stays plain. */
static const char mapping_json[] =
    "{\"table\":\"Graph\",\"sources\":["
    "{\"name\":\"a\",\"input\":\"a.csv\",\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\","
    "\"hot\":{\"threshold\":3}},"
    "{\"name\":\"b\",\"input\":\"b.csv\",\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\","
    "\"hot\":{\"threshold\":3}},"
    "{\"name\":\"c\",\"input\":\"c.csv\",\"pk\":\"ACTOR#{a}\",\"sk\":\"TARGET#{b}\","
    "\"hot\":{\"threshold\":3}}]}";

static int setup(void **state)
{
    (void)state;
    if (!el_test_mkdtemp(dir, sizeof dir, "test_verify"))
        return -1;
    write_file("a.csv", "a,b\nu1,bob\nu2,bob\nu3,bob\nu4,bob\nu5,amy\n");
    write_file("b.csv", "a,b\nv1,bob\nv2,bob\n");
    write_file("c.csv", "a,b\nw1,\nw2,\nw3,\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

static el_mapping *mapping(void)
{
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(mapping_json, strlen(mapping_json), dir, &m, &d))
        fail_msg("mapping: %s", d.msg);
    return m;
}

/* The table as a load leaves it: the items of a dry run. */
static void load_into(fake_ddb *f)
{
    el_mapping *m = mapping();
    char rpath[128];
    snprintf(rpath, sizeof rpath, "%s/rejects.jsonl", dir);
    el_rejects *rej = el_rejects_new(rpath, -1);
    char *printed = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&printed, &len);
    el_load_opts o = { .mapping = m, .threads = 1, .dry_run = true, .dry_out = out,
                       .rejects = rej };
    el_load_stats st;
    el_diag d;
    el_diag_clear(&d);
    if (el_load_run(&o, &st, &d))
        fail_msg("load: %s", d.msg);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(st.rejected, 3);
    assert_int_equal(st.directory_items, 1);
    for (char *line = printed, *nl; (nl = strchr(line, '\n')); line = nl + 1)
        put_line(f, line, (size_t)(nl - line));
    assert_int_equal(f->n, 8); /* 7 edges and bob's directory */
    free(printed);
    el_rejects_free(rej);
    el_mapping_free(m);
}

typedef struct seen {
    unsigned n;
    el_verify_kind kind[16];
    char pk[16][64], index_key[16][64], attr[16][32];
} seen;

static void on_mismatch(void *user, const el_verify_mismatch *mm)
{
    seen *s = user;
    assert_true(s->n < 16);
    s->kind[s->n] = mm->kind;
    snprintf(s->pk[s->n], sizeof s->pk[0], "%s", mm->pk);
    snprintf(s->index_key[s->n], sizeof s->index_key[0], "%s",
             mm->index_key ? mm->index_key : "");
    snprintf(s->attr[s->n], sizeof s->attr[0], "%s", mm->ndiffs ? mm->diffs[0].name : "");
    s->n++;
}

/* Runs verify with --reverse 10 on the table f holds. */
static void verify(fake_ddb *f, el_verify_stats *st, seen *s, uint64_t rejected[3])
{
    el_mapping *m = mapping();
    el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = el_fake_wire_cancel, .now = el_fake_wire_now,
                           .self = f };
    memset(s, 0, sizeof *s);
    memset(rejected, 0, 3 * sizeof *rejected);
    el_clock clock = { .now_ms = el_fake_wire_now, .self = f };
    el_verify_opts o = { .mapping = m, .transport = &t, .clock = &clock, .reverse = 10,
                         .seed = 1, .concurrency = 2, .max_retry_time_s = 5, .on_mismatch = on_mismatch,
                         .user = s, .rejected_by_source = rejected };
    el_diag d;
    el_diag_clear(&d);
    double t0 = f->w.now;
    if (el_verify_run(&o, st, &d))
        fail_msg("verify: %s", d.msg);
    /* the run's time is the clock it was given: the driver's virtual time */
    assert_true(st->elapsed_s == (f->w.now - t0) / 1000.0);
    el_mapping_free(m);
}

static void test_hot_key_of_two_sources(void **state)
{
    (void)state;
    fake_ddb f = { 0 };
    load_into(&f);
    /* what the load wrote: bob's directory counts both sources, and b's
     * edges are on bob's shards like a's */
    item *dirent = find(&f, "TARGET#bob", "#SHARDS");
    assert_non_null(dirent);
    assert_non_null(strstr(dirent->json, "\"shards\":{\"N\":\"2\"}"));
    assert_non_null(strstr(dirent->json, "\"fanIn\":{\"N\":\"6\"}"));
    assert_null(dirent->ipk);
    for (size_t i = 0; i < f.n; i++)
        if (f.items[i].ipk && strcmp(f.items[i].sk, "TARGET#bob") == 0)
            assert_true(strcmp(f.items[i].ipk, "TARGET#bob#0") == 0 ||
                        strcmp(f.items[i].ipk, "TARGET#bob#1") == 0);
    assert_string_equal(find(&f, "ACTOR#v1", "TARGET#bob")->ipk, "TARGET#bob#0");
    assert_string_equal(find(&f, "ACTOR#u5", "TARGET#amy")->ipk, "TARGET#amy");

    el_verify_stats st;
    seen s;
    uint64_t rejected[3];
    verify(&f, &st, &s, rejected);
    assert_int_equal(s.n, 0);
    assert_int_equal(st.rows_read, 10);
    assert_int_equal(st.expected, 8);
    assert_int_equal(st.directories, 1);
    assert_int_equal(st.present, 8);
    assert_int_equal(st.missing + st.different, 0);
    /* two index keys: bob (its 2 shards and the plain key) and amy */
    assert_int_equal(st.reverse_keys, 2);
    assert_int_equal(st.reverse_expected, 7);
    assert_int_equal(f.queries, 4);
    assert_int_equal(st.reverse_missing + st.reverse_extra, 0);
    /* c's rows cannot become items: counted, and as c's */
    assert_int_equal(st.rejected, 3);
    assert_int_equal(rejected[0], 0);
    assert_int_equal(rejected[1], 0);
    assert_int_equal(rejected[2], 3);
    fake_free(&f);
}

static void test_edge_left_on_the_plain_key(void **state)
{
    (void)state;
    fake_ddb f = { 0 };
    load_into(&f);
    /* what edgeload did before fan-in was counted across sources: b's
     * edge to bob under the plain key, where a reader of the directory
     * never looks */
    item *x = find(&f, "ACTOR#v1", "TARGET#bob");
    free(x->ipk);
    x->ipk = strdup("TARGET#bob");
    el_verify_stats st;
    seen s;
    uint64_t rejected[3];
    verify(&f, &st, &s, rejected);
    assert_int_equal(st.reverse_missing, 1);
    assert_int_equal(st.reverse_extra, 1);
    assert_int_equal(s.n, 2);
    bool missing_on_shard = false, extra_on_plain = false;
    for (unsigned i = 0; i < s.n; i++) {
        assert_string_equal(s.pk[i], "ACTOR#v1");
        missing_on_shard |= s.kind[i] == EL_VERIFY_REVERSE_MISSING &&
                            strcmp(s.index_key[i], "TARGET#bob#0") == 0;
        extra_on_plain |= s.kind[i] == EL_VERIFY_REVERSE_EXTRA &&
                          strcmp(s.index_key[i], "TARGET#bob") == 0;
    }
    assert_true(missing_on_shard);
    assert_true(extra_on_plain);
    /* the base table holds the item as expected: the forward check is
     * content (the index attribute is not what was changed in the JSON) */
    assert_int_equal(st.missing, 0);
    fake_free(&f);
}

static void test_directory_of_one_source(void **state)
{
    (void)state;
    fake_ddb f = { 0 };
    load_into(&f);
    /* a directory counting only a's edges, as before */
    item *dirent = find(&f, "TARGET#bob", "#SHARDS");
    char *fixed = strdup(dirent->json);
    char *at = strstr(fixed, "\"fanIn\":{\"N\":\"6\"}");
    assert_non_null(at);
    at[strlen("\"fanIn\":{\"N\":\"")] = '4';
    free(dirent->json);
    dirent->json = fixed;
    el_verify_stats st;
    seen s;
    uint64_t rejected[3];
    verify(&f, &st, &s, rejected);
    assert_int_equal(st.different, 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.kind[0], EL_VERIFY_DIFFERENT);
    assert_string_equal(s.pk[0], "TARGET#bob");
    assert_string_equal(s.attr[0], "fanIn");
    /* and without it the directory is missing */
    free(dirent->pk);
    dirent->pk = strdup("gone");
    verify(&f, &st, &s, rejected);
    assert_int_equal(st.missing, 1);
    assert_int_equal(s.kind[0], EL_VERIFY_MISSING);
    assert_string_equal(s.pk[0], "TARGET#bob");
    fake_free(&f);
}

/* A table with an edge gone and an edge changed, read through throttled
 * BatchGetItem requests (refused, then answered in part with the rest in
 * UnprocessedKeys): verify reports both and nothing else, every item read
 * once in the end. */
static void test_missing_different_throttled(void **state)
{
    (void)state;
    fake_ddb f = { 0 };
    load_into(&f);
    /* u2 -> bob is gone */
    item *gone = find(&f, "ACTOR#u2", "TARGET#bob");
    assert_non_null(gone);
    free(gone->pk);
    gone->pk = strdup("ACTOR#gone");
    /* u5 -> amy has another value of an attribute: its index key */
    item *x = find(&f, "ACTOR#u5", "TARGET#amy");
    char *at = strstr(x->json, "\"GSI1PK\":{\"S\":\"TARGET#amy\"}");
    assert_non_null(at);
    at[strlen("\"GSI1PK\":{\"S\":\"TARGET#")] = 'e'; /* TARGET#emy */
    f.throttle_gets = 2;
    f.partial_gets = 2;
    el_verify_stats st;
    seen s;
    uint64_t rejected[3];
    verify(&f, &st, &s, rejected);
    assert_int_equal(st.expected, 8);
    assert_int_equal(st.present, 7);    /* the changed one is present, and different */
    assert_int_equal(st.missing, 1);
    assert_int_equal(st.different, 1);
    assert_int_equal(st.throttled, 2);
    assert_true(st.retries >= 2 + 2);   /* two refused, two answered in part */
    assert_int_equal(st.requests, f.gets + f.throttled + f.queries);
    bool missing = false, different = false;
    for (unsigned i = 0; i < s.n; i++) {
        missing |= s.kind[i] == EL_VERIFY_MISSING && strcmp(s.pk[i], "ACTOR#u2") == 0;
        different |= s.kind[i] == EL_VERIFY_DIFFERENT && strcmp(s.pk[i], "ACTOR#u5") == 0 &&
                     strcmp(s.attr[i], "GSI1PK") == 0;
    }
    assert_true(missing);
    assert_true(different);
    assert_int_equal(f.throttled, 2);   /* the faults happened */
    assert_true(f.unprocessed >= 2);
    fake_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_hot_key_of_two_sources),
        cmocka_unit_test(test_edge_left_on_the_plain_key),
        cmocka_unit_test(test_directory_of_one_source),
        cmocka_unit_test(test_missing_different_throttled),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
