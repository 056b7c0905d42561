/*
 * test_load_engine.c - the load engine itself (el_load_run, what `edgeload
 * load` runs) over CSV inputs, against an in-memory DynamoDB: a scripted
 * transport that parses every BatchWriteItem, puts its items into a table
 * (PK/SK -> item) and answers as DynamoDB does. Whatever the table does to
 * the requests - part of a batch handed back in UnprocessedItems, a key
 * throttled (ProvisionedThroughputExceededException), a write applied whose
 * answer is lost (a reset, a 500), a run stopped part way and resumed from
 * its checkpoint - the table must end holding exactly the items the rows
 * make (computed here from the rows, not by the engine), and the run's
 * figures must agree with what the table saw. Time is virtual: the
 * transport's clock advances by what the driver waits for.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fake_wire.h"
#include "helpers.h"

#include <stdatomic.h>      /* the stop flag */
#include <stdio.h>          /* snprintf */
#include <stdlib.h>         /* free, qsort */
#include <string.h>         /* strcmp, strstr */
#include <time.h>           /* nanosleep */
#include <yajl/yajl_tree.h> /* the fake DynamoDB reads the requests */

#include "common/buf.h"
#include "common/clock.h"       /* el_now_ms */
#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h"  /* el_ddb_classify */
#include "formats/ddb_value.h"  /* el_json_put_string */
#include "pipeline/load/loader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"

/* ---- the fake DynamoDB: one table, Graph ---- */

#define MAX_ITEMS 4096
#define NROWS 3000 /* 6 chunks of 512 rows: a checkpoint moves by chunks */

typedef struct titem {
    char *key;    /* PK \x01 SK */
    char *canon;  /* every attribute, "name=T:value;" sorted by name */
} titem;

typedef struct fake {
    el_fake_wire w;           /* first: the transport's callbacks take it; its clock */
    titem items[MAX_ITEMS];
    size_t n;
    /* what it saw */
    unsigned requests;        /* BatchWriteItem sends */
    uint64_t items_received;  /* items in them */
    uint64_t items_applied;   /* put into the table (ConsumedCapacity of the answers) */
    unsigned partials, throttled, lost;
    uint64_t lost_items;      /* items of the requests whose answers were lost */
    /* what it does */
    unsigned partial_every;   /* every k-th request hands back its second half */
    const char *throttle_pk;  /* requests holding this PK are throttled ... */
    unsigned throttles_left;  /* ... this many times */
    unsigned lose_every;      /* every k-th request is applied, its answer lost ... */
    unsigned lost_left;       /* ... this many times */
    unsigned stop_after;      /* sets *stop at this request (0: never) */
    atomic_int *stop;
} fake;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "name=T:value;" of every attribute of item, sorted by name. */
static char *canon(yajl_val item)
{
    assert_true(YAJL_IS_OBJECT(item));
    size_t n = item->u.object.len;
    char **parts = calloc(n ? n : 1, sizeof *parts);
    assert_non_null(parts);
    for (size_t i = 0; i < n; i++) {
        yajl_val v = item->u.object.values[i];
        assert_true(YAJL_IS_OBJECT(v) && v->u.object.len == 1);
        const char *s = YAJL_GET_STRING(v->u.object.values[0]);
        assert_non_null(s);
        char buf[512];
        int w = snprintf(buf, sizeof buf, "%s=%s:%s;", item->u.object.keys[i],
                         v->u.object.keys[0], s);
        assert_true(w > 0 && (size_t)w < sizeof buf);
        parts[i] = strdup(buf);
    }
    qsort(parts, n, sizeof *parts, cmp_str);
    el_buf b;
    el_buf_init(&b, 1u << 20);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(el_buf_puts(&b, parts[i]), EL_OK);
        free(parts[i]);
    }
    free(parts);
    return el_buf_take(&b);
}

static const char *attr_s(yajl_val item, const char *name)
{
    const char *path[] = { name, "S", NULL };
    yajl_val s = yajl_tree_get(item, path, yajl_t_string);
    assert_non_null(s);
    return YAJL_GET_STRING(s);
}

static void put(fake *f, yajl_val item)
{
    char key[512];
    snprintf(key, sizeof key, "%s\x01%s", attr_s(item, "PK"), attr_s(item, "SK"));
    char *c = canon(item);
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->items[i].key, key) == 0) {
            free(f->items[i].canon);
            f->items[i].canon = c;
            return;
        }
    assert_true(f->n < MAX_ITEMS);
    f->items[f->n].key = strdup(key);
    f->items[f->n++].canon = c;
}

/* Appends item as DynamoDB JSON (every value a string: S or N). */
static void put_json(el_buf *b, yajl_val item)
{
    assert_int_equal(el_buf_puts(b, "{"), EL_OK);
    for (size_t i = 0; i < item->u.object.len; i++) {
        yajl_val v = item->u.object.values[i];
        const char *k = item->u.object.keys[i], *t = v->u.object.keys[0];
        const char *s = YAJL_GET_STRING(v->u.object.values[0]);
        assert_int_equal(el_buf_puts(b, i ? "," : ""), EL_OK);
        assert_int_equal(el_json_put_string(b, k, strlen(k)), EL_OK);
        assert_int_equal(el_buf_puts(b, ":{"), EL_OK);
        assert_int_equal(el_json_put_string(b, t, strlen(t)), EL_OK);
        assert_int_equal(el_buf_puts(b, ":"), EL_OK);
        assert_int_equal(el_json_put_string(b, s, strlen(s)), EL_OK);
        assert_int_equal(el_buf_puts(b, "}"), EL_OK);
    }
    assert_int_equal(el_buf_puts(b, "}"), EL_OK);
}

static const char throttle_body[] = EL_FAKE_PTE;
static const char server_error_body[] = EL_FAKE_SERVER_ERROR;

/* Applies one BatchWriteItem as the fake decides; the answer goes out at
 * the next wait. */
static el_err f_send(void *self, el_ddb_op *op)
{
    fake *f = self;
    yajl_val req = el_fake_wire_request(op, "BatchWriteItem");
    const char *ri[] = { "RequestItems", NULL };
    yajl_val tables = yajl_tree_get(req, ri, yajl_t_object);
    assert_non_null(tables);
    assert_int_equal(tables->u.object.len, 1);
    assert_string_equal(tables->u.object.keys[0], "Graph");
    yajl_val puts = tables->u.object.values[0];
    assert_true(YAJL_IS_ARRAY(puts));
    size_t n = puts->u.array.len;
    assert_true(n >= 1 && n <= 25);
    f->requests++;
    f->items_received += n;
    if (f->stop && f->stop_after && f->requests == f->stop_after)
        atomic_store(f->stop, 1);

    el_ddb_result result, *res = &result;
    memset(res, 0, sizeof *res);
    char *answer = NULL;
    bool throttle = false;
    if (f->throttle_pk && f->throttles_left > 0)
        for (size_t i = 0; i < n; i++) {
            const char *pp[] = { "PutRequest", "Item", NULL };
            yajl_val it = yajl_tree_get(puts->u.array.values[i], pp, yajl_t_object);
            assert_non_null(it);
            throttle = throttle || strcmp(attr_s(it, "PK"), f->throttle_pk) == 0;
        }
    if (throttle) {
        f->throttles_left--;
        f->throttled++;
        el_ddb_classify(CURLE_OK, 400, throttle_body, strlen(throttle_body), res);
        answer = strdup(throttle_body);
    } else {
        /* the first `applied` items are written, the rest handed back */
        size_t applied = n;
        if (f->partial_every && f->requests % f->partial_every == 0 && n > 1) {
            applied = n / 2;
            f->partials++;
        }
        el_buf b;
        el_buf_init(&b, 1u << 20);
        assert_int_equal(el_buf_puts(&b, "{\"UnprocessedItems\":{"), EL_OK);
        if (applied < n)
            assert_int_equal(el_buf_puts(&b, "\"Graph\":["), EL_OK);
        for (size_t i = 0; i < n; i++) {
            const char *pp[] = { "PutRequest", "Item", NULL };
            yajl_val it = yajl_tree_get(puts->u.array.values[i], pp, yajl_t_object);
            assert_non_null(it);
            if (i < applied) {
                put(f, it);
                continue;
            }
            assert_int_equal(el_buf_puts(&b, i > applied ? ",{\"PutRequest\":{\"Item\":"
                                                          : "{\"PutRequest\":{\"Item\":"),
                             EL_OK);
            put_json(&b, it);
            assert_int_equal(el_buf_puts(&b, "}}"), EL_OK);
        }
        f->items_applied += applied;
        assert_int_equal(el_buf_printf(&b, "%s},\"ConsumedCapacity\":[{\"TableName\":\"Graph\","
                                           "\"CapacityUnits\":%zu}]}",
                                       applied < n ? "]" : "", applied),
                         EL_OK);
        if (f->lose_every && f->lost_left > 0 && f->requests % f->lose_every == 0) {
            /* written, and the answer never arrives: a reset, or a 500 */
            f->lost_left--;
            f->lost_items += n;
            if (f->lost++ % 2 == 0) {
                el_ddb_classify(CURLE_RECV_ERROR, 0, "", 0, res);
                answer = strdup("");
            } else {
                el_ddb_classify(CURLE_OK, 500, server_error_body, strlen(server_error_body),
                                res);
                answer = strdup(server_error_body);
            }
            el_buf_free(&b);
        } else {
            el_ddb_classify(CURLE_OK, 200, b.data, b.len, res);
            answer = el_buf_take(&b);
        }
    }
    if (res->sends == 0)
        res->sends = 1;
    el_fake_wire_hold(&f->w, op, res, answer);
    yajl_tree_free(req);
    return EL_OK;
}

static el_err f_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    fake *f = self;
    if (f->w.n == 0 && timeout_ms > 0) {
        /* waiting for the readers (or a backoff): let them run a moment */
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
    el_fake_wire_deliver(&f->w, d, timeout_ms);
    return EL_OK;
}

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    /* the virtual clock starts far from the machine's: an engine that read
     * the machine's clock for a figure would be seen at once */
    f->w.now = 1000.0;
}

static void fake_clear(fake *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->items[i].key);
        free(f->items[i].canon);
    }
    f->n = 0;
}

/* ---- the job: follows, one source, with a weight ---- */

static char dir[64];

static const char mapping_json[] =
    "{\"table\":\"Graph\",\"sources\":["
    "{\"name\":\"f\",\"input\":\"f.csv\",\"pk\":\"U#{a}\",\"sk\":\"T#{b}\","
    "\"attributes\":{\"w\":{\"column\":\"w\"}}}]}";

/* Row i: user u<i>, target t<i % 37>, weight i*7. The last row repeats row
 * NROWS - 3's key with another weight: the last row of a key wins (the
 * earlier row is a duplicate, or is written first and then replaced,
 * depending on when the later one meets it: both are right). */
static void row(size_t i, char *a, char *b, char *w)
{
    if (i == NROWS - 1) {
        row(NROWS - 3, a, b, w);
        snprintf(w, 32, "%s", "999");
        return;
    }
    snprintf(a, 32, "u%zu", i);
    snprintf(b, 32, "t%zu", i % 37);
    snprintf(w, 32, "%zu", i * 7);
}

static int setup(void **state)
{
    (void)state;
    if (!el_test_mkdtemp(dir, sizeof dir, "test_load_engine"))
        return -1;
    el_buf b;
    el_buf_init(&b, 1u << 20);
    if (el_buf_puts(&b, "a,b,w\n"))
        return -1;
    for (size_t i = 0; i < NROWS; i++) {
        char a[32], t[32], w[32];
        row(i, a, t, w);
        if (el_buf_printf(&b, "%s,%s,%s\n", a, t, w))
            return -1;
    }
    char path[EL_TEST_PATH_MAX];
    snprintf(path, sizeof path, "%s/f.csv", dir);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(b.data, 1, b.len, fp) != b.len || fclose(fp))
        return -1;
    el_buf_free(&b);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

/* The items the rows make, sorted: "PK\x01SK|canon". */
static char **expected(size_t *n)
{
    char **e = calloc(NROWS, sizeof *e);
    assert_non_null(e);
    size_t k = 0;
    for (size_t i = 0; i < NROWS; i++) {
        char a[32], t[32], w[32], buf[512];
        row(i, a, t, w);
        snprintf(buf, sizeof buf, "U#%s\x01T#%s|GSI1PK=S:T#%s;GSI1SK=S:U#%s;PK=S:U#%s;SK=S:T#%s;"
                 "w=S:%s;", a, t, t, a, a, t, w);
        size_t keylen = (size_t)(strchr(buf, '|') - buf);
        size_t j = 0;
        while (j < k && strncmp(e[j], buf, keylen + 1) != 0)
            j++;
        if (j < k) { /* a later row of the same key replaces it */
            free(e[j]);
            e[j] = strdup(buf);
        } else {
            e[k++] = strdup(buf);
        }
    }
    qsort(e, k, sizeof *e, cmp_str);
    *n = k;
    return e;
}

/* The table must hold exactly the expected items. */
static void assert_table_exact(const fake *f)
{
    size_t n;
    char **e = expected(&n);
    assert_int_equal(n, NROWS - 1);
    char **got = calloc(f->n ? f->n : 1, sizeof *got);
    assert_non_null(got);
    for (size_t i = 0; i < f->n; i++) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s|%s", f->items[i].key, f->items[i].canon);
        got[i] = strdup(buf);
    }
    qsort(got, f->n, sizeof *got, cmp_str);
    assert_int_equal(f->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(got[i], e[i]);
        free(got[i]);
        free(e[i]);
    }
    free(got);
    free(e);
}

typedef struct runopts {
    const char *checkpoint;
    bool resume;
    atomic_int *stop;
} runopts;

static el_err load(fake *f, const runopts *ro, el_load_stats *st, el_diag *d)
{
    el_mapping *m;
    el_diag_clear(d);
    if (el_mapping_parse(mapping_json, strlen(mapping_json), dir, &m, d))
        fail_msg("mapping: %s", d->msg);
    char rpath[EL_TEST_PATH_MAX];
    el_rejects *rej = el_rejects_new(el_test_path(rpath, dir, "rejects.jsonl"), -1);
    assert_non_null(rej);
    el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = el_fake_wire_cancel, .now = el_fake_wire_now,
                           .free = el_fake_wire_free, .self = f };
    el_clock clock = { .now_ms = el_fake_wire_now, .self = f };
    el_load_opts o = { .mapping = m, .threads = 1, .concurrency = 4, .transport = &t,
                       .clock = &clock, .rejects = rej, .max_retry_time_s = 60,
                       .checkpoint_path = ro ? ro->checkpoint : NULL,
                       .resume = ro && ro->resume, .stop = ro ? ro->stop : NULL };
    unsigned frees = f->w.frees;
    double t0 = f->w.now;
    el_err err = el_load_run(&o, st, d);
    /* the run's time is the clock it was given: the driver's virtual time */
    assert_true(st->elapsed_s == (f->w.now - t0) / 1000.0);
    assert_int_equal(f->w.frees, frees + 1); /* taken: freed once, whatever happened */
    assert_int_equal(f->w.n, 0);      /* nothing left unanswered */
    el_rejects_free(rej);
    el_mapping_free(m);
    return err;
}

/* The figures of a complete run agree with what the table saw. */
static void assert_figures(const fake *f, const el_load_stats *st)
{
    assert_int_equal(st->rows_read, NROWS);
    assert_int_equal(st->rejected, 0);
    /* the last row of the repeated key is written; the earlier one either
     * superseded (a duplicate) or written before it */
    assert_true(st->duplicates <= 1);
    assert_int_equal(st->items_written + st->duplicates, NROWS);
    assert_int_equal(st->requests, f->requests);
    assert_int_equal(st->throttled, f->throttled);
    /* every item of every request the table received, the driver's own
     * resends (after a lost answer or a throttle) included */
    assert_int_equal(st->thr.items_sent, f->items_received);
    /* units: those the answers reported (a lost answer reports none) */
    uint64_t reported = f->items_applied - f->lost_items;
    assert_true(st->wcu_consumed == (double)reported);
}

static void test_clean_load(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    el_load_stats st;
    el_diag d;
    if (load(&f, NULL, &st, &d))
        fail_msg("load: %s", d.msg);
    assert_table_exact(&f);
    assert_figures(&f, &st);
    /* nothing refused: every item sent once (in batches of at most 25: a
     * batch may go short while the reader is behind) */
    assert_int_equal(f.items_received, st.items_written);
    assert_int_equal(f.items_applied, st.items_written);
    assert_int_equal(st.thr.items_refused, 0);
    assert_int_equal(st.retries, 0);
    assert_true(f.requests >= (st.items_written + 24) / 25);
    fake_clear(&f);
}

static void test_partial_batches(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    f.partial_every = 3;
    el_load_stats st;
    el_diag d;
    if (load(&f, NULL, &st, &d))
        fail_msg("load: %s", d.msg);
    assert_true(f.partials > 3);
    assert_table_exact(&f);
    assert_figures(&f, &st);
    /* the items handed back were sent again: exactly them */
    assert_int_equal(f.items_received - f.items_applied, st.thr.items_refused);
    assert_true(st.thr.items_refused > 0);
    assert_true(st.wcu_consumed == (double)f.items_applied);
    fake_clear(&f);
}

static void test_throttled_key(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    f.throttle_pk = "U#u100";
    f.throttles_left = 4;
    el_load_stats st;
    el_diag d;
    if (load(&f, NULL, &st, &d))
        fail_msg("load: %s", d.msg);
    assert_int_equal(f.throttled, 4);
    assert_int_equal(st.throttled, 4);
    assert_int_equal(st.thr.unspecified, 4); /* the answers named no reason */
    assert_table_exact(&f);
    assert_figures(&f, &st);
    assert_int_equal(f.items_received - f.items_applied, st.thr.items_refused);
    assert_true(st.thr.items_refused >= 4);
    fake_clear(&f);
}

static void test_lost_replies(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    f.lose_every = 4;
    f.lost_left = 4;
    el_load_stats st;
    el_diag d;
    if (load(&f, NULL, &st, &d))
        fail_msg("load: %s", d.msg);
    assert_int_equal(f.lost, 4);
    assert_table_exact(&f); /* the puts sent again landed on the same items */
    assert_figures(&f, &st);
    /* a lost request is sent again whole: the table saw its items twice */
    assert_int_equal(f.items_applied, st.items_written + f.lost_items);
    assert_true(st.retries >= 4);
    fake_clear(&f);
}

static void test_stopped_then_resumed(void **state)
{
    (void)state;
    char cp[EL_TEST_PATH_MAX];
    el_test_path(cp, dir, "load.ckpt");
    atomic_int stop = 0;
    fake f;
    fake_init(&f);
    f.stop = &stop;
    f.stop_after = 40; /* 1000 of the 3000 rows */
    runopts ro = { .checkpoint = cp, .stop = &stop };
    el_load_stats st1, st2;
    el_diag d;
    assert_int_equal(load(&f, &ro, &st1, &d), EL_EINTR);
    unsigned first = f.requests;
    assert_true(first >= 40);
    assert_true(f.n > 0 && f.n < NROWS - 1); /* stopped part way */
    assert_int_equal(st1.items_written, f.n);

    atomic_store(&stop, 0);
    f.stop_after = 0;
    f.requests = 0;
    f.items_received = 0;
    ro.resume = true;
    if (load(&f, &ro, &st2, &d))
        fail_msg("resume: %s", d.msg);
    assert_table_exact(&f);
    /* only the rest was sent: fewer requests than a whole load, and what
     * both runs sent at most what a whole load sends and a few batches */
    unsigned whole = (NROWS + 24) / 25;
    assert_true(f.requests < whole);
    assert_true(f.requests + first <= whole + 2 * (512 / 25 + 1));
    /* the rows from the checkpoint on (a chunk's rows are done together:
     * some written by the first run are read and written again) */
    assert_true(st2.rows_read < NROWS);
    assert_int_equal(st2.items_written + st2.duplicates, st2.rows_read);
    assert_true(st1.items_written + st2.items_written >= NROWS - 1);
    assert_int_equal(st2.requests, f.requests);
    fake_clear(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_load),
        cmocka_unit_test(test_partial_batches),
        cmocka_unit_test(test_throttled_key),
        cmocka_unit_test(test_lost_replies),
        cmocka_unit_test(test_stopped_then_resumed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
