/*
 * test_incremental_engine.c - the engine of `load --incremental`
 * (pipeline/incremental/incremental.h) run whole over a small delta against
 * an in-memory DynamoDB that executes TransactWriteItems as DynamoDB does:
 * every condition of a transaction is checked before anything is written
 * (a failure cancels the whole transaction, with CancellationReasons in
 * action order), Put/Delete with attribute_not_exists / attribute_exists,
 * Update with ADD on counter attributes (an absent item or attribute
 * counts from 0), and the ClientRequestToken: a transaction sent again with
 * the token of one applied less than 10 minutes before is answered success
 * without being applied again (its ConsumedCapacity in read units only,
 * which is how the engine knows it as a replay), and with a different body
 * IdempotentParameterMismatchException.
 *
 * Faults are scripted per send of a transaction: throttling (the JSON error
 * bodies of ThrottlingException and ProvisionedThroughputExceededException),
 * a reply lost after the transaction was applied (a connection reset, a
 * 500), a cancellation for TransactionConflict. The answers are classified
 * by the client's own el_ddb_classify, as the real transport does. Time is
 * the fake's (fake_wire.h), so backoff costs nothing.
 *
 * Every scenario ends by comparing the table - the edge items and every
 * counter - with what the delta's rows make of the starting table, worked
 * out here row by row (a put of an absent edge adds it and moves both
 * counters by one, a delete of a present one removes it and moves them
 * back, anything else changes nothing).
 *
 * The incremental engine has no --checkpoint/--resume (cmd/cmd_load.c
 * refuses them with --incremental: applying the delta again is exact), so
 * there is no resume scenario; applying a delta twice is (test_rerun).
 * A Put that other rows of its round add to goes first (test_put_before_adds).
 * The run against DynamoDB Local is tests/integration/test_counters.py.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fake_table.h"
#include "fake_wire.h"
#include "helpers.h"

#include <curl/curl.h>       /* CURLcode for el_ddb_classify */
#include <stdio.h>           /* snprintf */
#include <stdlib.h>          /* calloc, free */
#include <string.h>          /* strcmp, memcmp, strndup */
#include <yajl/yajl_tree.h>  /* the fake reads the requests */

#include "common/buf.h"
#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h"   /* el_ddb_classify */
#include "pipeline/incremental/incremental.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"

/* ---- the delta and what it must do ---- */

typedef struct drow {
    const char *a, *b;
    char op;              /* 'P' or 'D' */
} drow;

#define MAX_USERS 64
#define MAX_EDGES 256

/* The table as the rows say it must end: edges, and each user's two counts. */
typedef struct model {
    struct { char a[16], b[16]; } edge[MAX_EDGES];
    size_t nedges;
    struct { char name[16]; long long followers, following; } user[MAX_USERS];
    size_t nusers;
    unsigned added, deleted, duplicates, absent;
} model;

static long long *count_of(model *m, const char *user, bool followers)
{
    size_t i = 0;
    while (i < m->nusers && strcmp(m->user[i].name, user) != 0)
        i++;
    if (i == m->nusers) {
        assert_true(m->nusers < MAX_USERS);
        snprintf(m->user[m->nusers].name, sizeof m->user[0].name, "%s", user);
        m->user[m->nusers].followers = m->user[m->nusers].following = 0;
        m->nusers++;
    }
    return followers ? &m->user[i].followers : &m->user[i].following;
}

static size_t edge_at(const model *m, const char *a, const char *b)
{
    for (size_t i = 0; i < m->nedges; i++)
        if (strcmp(m->edge[i].a, a) == 0 && strcmp(m->edge[i].b, b) == 0)
            return i;
    return (size_t)-1;
}

/* One row, applied to the model as the delta promises. */
static void model_apply(model *m, const drow *r)
{
    size_t at = edge_at(m, r->a, r->b);
    if (r->op == 'P') {
        if (at != (size_t)-1) {
            m->duplicates++;
            return;
        }
        assert_true(m->nedges < MAX_EDGES);
        snprintf(m->edge[m->nedges].a, sizeof m->edge[0].a, "%s", r->a);
        snprintf(m->edge[m->nedges].b, sizeof m->edge[0].b, "%s", r->b);
        m->nedges++;
        m->added++;
        ++*count_of(m, r->b, true);
        ++*count_of(m, r->a, false);
    } else {
        if (at == (size_t)-1) {
            m->absent++;
            return;
        }
        m->edge[at] = m->edge[--m->nedges];
        m->deleted++;
        --*count_of(m, r->b, true);
        --*count_of(m, r->a, false);
    }
}

/* ---- the fake DynamoDB ---- */

#define MAX_TOKENS 512
#define MAX_FAULTS 64
#define TOKEN_WINDOW_MS (10 * 60 * 1000.0)

typedef enum fault {
    F_NONE = 0,
    F_THROTTLE,               /* 400 ThrottlingException, nothing applied */
    F_PTE,                    /* 400 ProvisionedThroughputExceededException */
    F_LOST_RESET,             /* applied, then the connection reset: no answer */
    F_LOST_500,               /* applied, then a 500 */
    F_CONFLICT                /* cancelled: TransactionConflict on the first action */
} fault;

typedef struct fake {
    el_fake_wire w;           /* first: the transport's callbacks take it */
    el_fake_table tab;
    struct { char *token; char *body; double at; } tok[MAX_TOKENS];
    size_t ntok;
    fault faults[MAX_FAULTS]; /* by transaction send, 0-based */
    unsigned sends, applied, replays, cancelled, faulted, mismatches, invalid;
    bool no_idempotency;      /* to show the lost-reply test fails without tokens */
    unsigned lose;            /* bit k: the reply of the k-th transaction applied is lost */
    fault lose_how;           /* F_LOST_RESET or F_LOST_500 */
} fake;

/* The key of an action: Put's Item, Delete's and Update's Key. */
static void key_of(yajl_val act, const char *kind, const char **pk, const char **sk)
{
    const char *where = strcmp(kind, "Put") == 0 ? "Item" : "Key";
    *pk = el_fake_sget(act, where, "PK", "S");
    *sk = el_fake_sget(act, where, "SK", "S");
    assert_non_null(*pk);
    assert_non_null(*sk);
}

static void add_attr(el_fake_item *x, const char *name, long long d)
{
    bool had;
    el_fake_item_set(x, name, el_fake_item_get(x, name, &had) + d);
}

/* "ADD #c0 :d0, #c1 :d1" on item x. */
static void apply_update(el_fake_item *x, yajl_val act)
{
    const char *expr = el_fake_sget(act, "UpdateExpression", NULL, NULL);
    assert_non_null(expr);
    assert_true(strncmp(expr, "ADD ", 4) == 0);
    char *copy = strdup(expr + 4), *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char name[32], value[32];
        assert_int_equal(sscanf(part, " %31s %31s", name, value), 2);
        const char *attr = el_fake_sget(act, "ExpressionAttributeNames", name, NULL);
        const char *n = el_fake_sget(act, "ExpressionAttributeValues", value, "N");
        assert_non_null(attr);
        assert_non_null(n);
        add_attr(x, attr, strtoll(n, NULL, 10));
    }
    free(copy);
}

static void answer_cancelled(fake *f, el_ddb_op *op, const char *const *codes, size_t n)
{
    el_buf b;
    el_buf_init(&b, 1u << 20);
    assert_int_equal(el_buf_puts(&b, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                                     "TransactionCanceledException\",\"message\":\"Transaction "
                                     "cancelled, please refer cancellation reasons for "
                                     "specific reasons ["), EL_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(el_buf_printf(&b, "%s%s", i ? ", " : "", codes[i]), EL_OK);
    assert_int_equal(el_buf_puts(&b, "]\",\"CancellationReasons\":["), EL_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(el_buf_printf(&b, "%s{\"Code\":\"%s\"%s}", i ? "," : "", codes[i],
                                       strcmp(codes[i], "ConditionalCheckFailed") == 0
                                           ? ",\"Message\":\"The conditional request failed\""
                                           : ""), EL_OK);
    assert_int_equal(el_buf_puts(&b, "]}"), EL_OK);
    char *body = el_buf_take(&b);
    el_fake_wire_answer(&f->w, op, CURLE_OK, 400, body);
    free(body);
}

/* Executes one TransactWriteItems body: 0 and the units written, or the
 * cancellation codes (per action) when a condition failed. */
static bool execute(fake *f, yajl_val req, const char **codes, size_t *ncodes, int *units)
{
    const char *ti[] = { "TransactItems", NULL };
    yajl_val acts = yajl_tree_get(req, ti, yajl_t_array);
    assert_non_null(acts);
    size_t n = acts->u.array.len;
    assert_true(n >= 1 && n <= 100);
    *ncodes = n;
    bool ok = true;
    /* every condition first, on the table as it is */
    for (size_t i = 0; i < n; i++) {
        yajl_val a = acts->u.array.values[i];
        assert_true(YAJL_IS_OBJECT(a) && a->u.object.len == 1);
        const char *kind = a->u.object.keys[0];
        yajl_val act = a->u.object.values[0];
        assert_string_equal(el_fake_sget(act, "TableName", NULL, NULL), "Graph");
        const char *pk, *sk;
        key_of(act, kind, &pk, &sk);
        /* one action per item in a transaction, or DynamoDB refuses it */
        for (size_t j = 0; j < i; j++) {
            yajl_val b = acts->u.array.values[j];
            const char *pk2, *sk2;
            key_of(b->u.object.values[0], b->u.object.keys[0], &pk2, &sk2);
            if (strcmp(pk, pk2) == 0 && strcmp(sk, sk2) == 0)
                f->invalid++;
        }
        codes[i] = "None";
        if (strcmp(kind, "Update") == 0) {
            assert_null(el_fake_sget(act, "ConditionExpression", NULL, NULL));
            continue;
        }
        const char *cond = el_fake_sget(act, "ConditionExpression", NULL, NULL);
        assert_non_null(cond);
        assert_string_equal(el_fake_sget(act, "ExpressionAttributeNames", "#p", NULL), "PK");
        el_fake_item *x = el_fake_table_find(&f->tab, pk, sk);
        bool exists = x != NULL;
        if (strcmp(kind, "Put") == 0)
            assert_string_equal(cond, "attribute_not_exists(#p)");
        else if (strcmp(kind, "Delete") == 0)
            assert_string_equal(cond, "attribute_exists(#p)");
        else
            fail_msg("unexpected action %s", kind);
        if (exists != (strcmp(kind, "Delete") == 0)) {
            codes[i] = "ConditionalCheckFailed";
            ok = false;
        }
    }
    if (!ok)
        return false;
    *units = 0;
    for (size_t i = 0; i < n; i++) {
        yajl_val a = acts->u.array.values[i];
        const char *kind = a->u.object.keys[0];
        yajl_val act = a->u.object.values[0];
        const char *pk, *sk;
        key_of(act, kind, &pk, &sk);
        if (strcmp(kind, "Put") == 0) {
            el_fake_item *x = el_fake_table_find_or_add(&f->tab, pk, sk);
            x->put = true;
        } else if (strcmp(kind, "Delete") == 0) {
            el_fake_table_remove(&f->tab, el_fake_table_find(&f->tab, pk, sk));
        } else {
            apply_update(el_fake_table_find_or_add(&f->tab, pk, sk), act);
        }
        *units += 2;
    }
    f->applied++;
    return true;
}

static el_err f_send(void *self, el_ddb_op *op)
{
    fake *f = self;
    yajl_val req = el_fake_wire_request(op, "TransactWriteItems");
    size_t len;
    const char *body = el_ddb_op_body(op, &len);
    fault fl = f->sends < MAX_FAULTS ? f->faults[f->sends] : F_NONE;
    f->sends++;
    const char *token = el_fake_sget(req, "ClientRequestToken", NULL, NULL);
    assert_non_null(token);
    assert_true(strlen(token) >= 1 && strlen(token) <= 36);
    if (fl == F_THROTTLE || fl == F_PTE) {
        f->faulted++;
        el_fake_wire_answer(&f->w, op, CURLE_OK, 400,
                            fl == F_THROTTLE ? EL_FAKE_THROTTLING : EL_FAKE_PTE);
        goto out;
    }
    /* the token: within its window, the same body is a replay, another a
     * mismatch */
    for (size_t i = 0; !f->no_idempotency && i < f->ntok; i++) {
        if (strcmp(f->tok[i].token, token) != 0 || f->w.now - f->tok[i].at > TOKEN_WINDOW_MS)
            continue;
        if (strlen(f->tok[i].body) == len && memcmp(f->tok[i].body, body, len) == 0) {
            f->replays++;
            el_fake_wire_answer(&f->w, op, CURLE_OK, 200,
                   "{\"ConsumedCapacity\":[{\"TableName\":\"Graph\",\"CapacityUnits\":2.0,"
                   "\"ReadCapacityUnits\":2.0}]}");
        } else {
            f->mismatches++;
            el_fake_wire_answer(&f->w, op, CURLE_OK, 400,
                   "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                   "IdempotentParameterMismatchException\",\"message\":\"The request uses the "
                   "same client token as a previous, but non-identical request.\"}");
        }
        goto out;
    }
    const char *codes[100];
    size_t ncodes;
    int units = 0;
    if (fl == F_CONFLICT) {
        f->faulted++;
        const char *ti[] = { "TransactItems", NULL };
        yajl_val acts = yajl_tree_get(req, ti, yajl_t_array);
        ncodes = acts->u.array.len;
        for (size_t i = 0; i < ncodes; i++)
            codes[i] = i == 0 ? "TransactionConflict" : "None";
        f->cancelled++;
        answer_cancelled(f, op, codes, ncodes);
        goto out;
    }
    if (!execute(f, req, codes, &ncodes, &units)) {
        f->cancelled++;
        answer_cancelled(f, op, codes, ncodes);
        goto out;
    }
    assert_true(f->ntok < MAX_TOKENS);
    f->tok[f->ntok].token = strdup(token);
    f->tok[f->ntok].body = strndup(body, len);
    f->tok[f->ntok++].at = f->w.now;
    if (f->applied <= 32 && (f->lose & (1u << (f->applied - 1))))
        fl = f->lose_how;
    if (fl == F_LOST_RESET) {
        f->faulted++;
        el_fake_wire_answer(&f->w, op, CURLE_RECV_ERROR, 0, NULL);
    } else if (fl == F_LOST_500) {
        f->faulted++;
        el_fake_wire_answer(&f->w, op, CURLE_OK, 500, EL_FAKE_SERVER_ERROR);
    } else {
        char ok[200];
        snprintf(ok, sizeof ok,
                 "{\"ConsumedCapacity\":[{\"TableName\":\"Graph\",\"CapacityUnits\":%d.0,"
                 "\"WriteCapacityUnits\":%d.0}]}", units, units);
        el_fake_wire_answer(&f->w, op, CURLE_OK, 200, ok);
    }
out:
    yajl_tree_free(req);
    return EL_OK;
}

static el_err f_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    fake *f = self;
    if (f->w.n == 0 && timeout_ms < 0)
        fail_msg("the engine waits for ever with nothing in flight");
    el_fake_wire_deliver(&f->w, d, timeout_ms);
    return EL_OK;
}

static void fake_clear(fake *f)
{
    el_fake_table_clear(&f->tab);
    for (size_t i = 0; i < f->ntok; i++) {
        free(f->tok[i].token);
        free(f->tok[i].body);
    }
    el_fake_wire_clear(&f->w);
    free(f);
}

/* The table before the delta: edges, with the counts they make. */
static void seed(fake *f, model *m, const drow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char pk[64], sk[64];
        snprintf(pk, sizeof pk, "A#%s", rows[i].a);
        snprintf(sk, sizeof sk, "T#%s", rows[i].b);
        el_fake_table_find_or_add(&f->tab, pk, sk)->put = true;
        snprintf(pk, sizeof pk, "U#%s", rows[i].b);
        add_attr(el_fake_table_find_or_add(&f->tab, pk, "P"), "followers", 1);
        snprintf(pk, sizeof pk, "U#%s", rows[i].a);
        add_attr(el_fake_table_find_or_add(&f->tab, pk, "P"), "following", 1);
        model_apply(m, &rows[i]);
    }
    m->added = 0;
}

/* The fake's table is exactly the model's: the same edges, nothing else
 * put, and every counter the model's (an absent one is 0). */
static void assert_table(fake *f, model *m)
{
    size_t edges = 0;
    for (size_t i = 0; i < f->tab.n; i++) {
        el_fake_item *x = &f->tab.items[i];
        if (strncmp(x->pk, "A#", 2) == 0) {
            assert_true(x->put);
            assert_int_equal(x->nattr, 0);
            assert_true(strncmp(x->sk, "T#", 2) == 0);
            if (edge_at(m, x->pk + 2, x->sk + 2) == (size_t)-1)
                fail_msg("edge %s -> %s should not be there", x->pk, x->sk);
            edges++;
            continue;
        }
        /* a counter item: U#user P, only ADDs */
        assert_true(strncmp(x->pk, "U#", 2) == 0);
        assert_string_equal(x->sk, "P");
        assert_false(x->put);
        for (size_t k = 0; k < x->nattr; k++) {
            bool followers = strcmp(x->attr[k].name, "followers") == 0;
            assert_true(followers || strcmp(x->attr[k].name, "following") == 0);
            long long want = *count_of(m, x->pk + 2, followers);
            if (x->attr[k].v != want)
                fail_msg("%s %s: %lld, the rows make %lld", x->pk, x->attr[k].name,
                         x->attr[k].v, want);
        }
    }
    assert_int_equal(edges, m->nedges);
    /* and every count the model has is in the table */
    for (size_t u = 0; u < m->nusers; u++) {
        char pk[64];
        snprintf(pk, sizeof pk, "U#%s", m->user[u].name);
        el_fake_item *x = el_fake_table_find(&f->tab, pk, "P");
        long long fo = 0, fg = 0;
        for (size_t k = 0; x && k < x->nattr; k++) {
            if (strcmp(x->attr[k].name, "followers") == 0)
                fo = x->attr[k].v;
            else
                fg = x->attr[k].v;
        }
        if (fo != m->user[u].followers || fg != m->user[u].following)
            fail_msg("%s: followers %lld following %lld, the rows make %lld and %lld", pk, fo,
                     fg, m->user[u].followers, m->user[u].following);
    }
}

/* ---- running the engine ---- */

static char dir[64];

static const char MAPPING[] =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"follows\",\"input\":\"delta.csv\","
    "\"pk\":\"A#{a}\",\"sk\":\"T#{b}\",\"index\":false,"
    "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"P\",\"attribute\":\"followers\"},"
    "{\"pk\":\"U#{a}\",\"sk\":\"P\",\"attribute\":\"following\"}]}]}";

/* the mapping run() parses: MAPPING unless a test sets another */
static const char *mapping_json = MAPPING;

static int setup(void **state)
{
    (void)state;
    return el_test_mkdtemp(dir, sizeof dir, "test_incremental_engine") ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

static void write_delta(const drow *rows, size_t n)
{
    el_buf b;
    el_buf_init(&b, 1u << 20);
    assert_int_equal(el_buf_puts(&b, "a,b,op\n"), EL_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(el_buf_printf(&b, "%s,%s,%c\n", rows[i].a, rows[i].b, rows[i].op),
                         EL_OK);
    char path[EL_TEST_PATH_MAX];
    el_test_write(el_test_path(path, dir, "delta.csv"), b.data, b.len);
    el_buf_free(&b);
}

/* Runs the engine over the delta in dir against f; returns its error. */
static el_err run(fake *f, bool no_grouping, uint64_t run_id, el_incr_stats *st, el_diag *d)
{
    el_mapping *m;
    el_diag_clear(d);
    if (el_mapping_parse(mapping_json, strlen(mapping_json), dir, &m, d))
        fail_msg("mapping: %s", d->msg);
    char rpath[EL_TEST_PATH_MAX];
    el_rejects *rej = el_rejects_new(el_test_path(rpath, dir, "rejects.jsonl"), -1);
    assert_non_null(rej);
    el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = el_fake_wire_cancel,
                           .wakeup = el_fake_wire_wakeup, .now = el_fake_wire_now, .free = el_fake_wire_free, .self = f };
    el_clock clock = { .now_ms = el_fake_wire_now, .self = f };
    el_incr_opts o = { .mapping = m, .transport = &t, .clock = &clock, .rejects = rej,
                       .concurrency = 4, .max_retry_time_s = 30, .op_column = "op",
                       .no_grouping = no_grouping, .run_id = run_id };
    unsigned frees = f->w.frees;
    double t0 = f->w.now;
    el_err err = el_incr_run(&o, st, d);
    /* the run's time is the clock it was given: the driver's virtual time */
    assert_true(st->elapsed_s == (f->w.now - t0) / 1000.0);
    assert_int_equal(f->w.frees, frees + 1); /* the transport is the run's, freed once */
    assert_int_equal(f->w.n, 0);
    el_rejects_free(rej);
    el_mapping_free(m);
    return err;
}

static void run_ok(fake *f, bool no_grouping, uint64_t run_id, el_incr_stats *st)
{
    el_diag d;
    el_err err = run(f, no_grouping, run_id, st, &d);
    if (err)
        fail_msg("incremental: %s: %s", el_strerror(err), d.msg);
    assert_int_equal(f->invalid, 0);
    assert_int_equal(f->mismatches, 0);
}

/* A delta: 30 new followers of a hot target (bob), a few of others, and
 * deletes of edges the table had. No row repeats a key or hits an edge
 * in the wrong state. */
#define NDELTA 40
static char names[NDELTA][16];

static size_t clean_delta(drow *rows, drow *seeded, size_t *nseeded)
{
    size_t n = 0, s = 0;
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[0], "u%02d", i);
        rows[n++] = (drow){ names[i], "bob", 'P' };
    }
    rows[n++] = (drow){ "u00", "amy", 'P' };
    rows[n++] = (drow){ "u01", "amy", 'P' };
    rows[n++] = (drow){ "bob", "amy", 'P' };
    /* edges the table had, deleted: carl loses 2 of 3 followers */
    seeded[s++] = (drow){ "v1", "carl", 'P' };
    seeded[s++] = (drow){ "v2", "carl", 'P' };
    seeded[s++] = (drow){ "v3", "carl", 'P' };
    rows[n++] = (drow){ "v1", "carl", 'D' };
    rows[n++] = (drow){ "v2", "carl", 'D' };
    rows[n++] = (drow){ "v3", "amy", 'P' };
    *nseeded = s;
    return n;
}

static void expect(model *m, const drow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_apply(m, &rows[i]);
}

/* a. a clean delta, grouped and one transaction per row */
static void clean(bool no_grouping)
{
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    el_incr_stats st;
    run_ok(f, no_grouping, 7, &st);
    assert_table(f, &m);
    assert_int_equal(st.rows_read, n);
    assert_int_equal(st.added, m.added);
    assert_int_equal(st.deleted, m.deleted);
    assert_int_equal(m.added, 34);
    assert_int_equal(m.deleted, 2);
    assert_int_equal(st.duplicates + st.absent + st.replayed + st.rejected, 0);
    assert_int_equal(f->cancelled + f->replays, 0);
    assert_int_equal(st.transactions, f->applied);
    if (no_grouping)
        assert_int_equal(f->applied, n);
    else
        assert_true(f->applied < n); /* bob's followers went together */
    fake_clear(f);
}

static void test_clean_grouped(void **state)
{
    (void)state;
    clean(false);
}

static void test_clean_per_row(void **state)
{
    (void)state;
    clean(true);
}

/* b. throttled transactions: resent until they go, applied once */
static void test_throttled(void **state)
{
    (void)state;
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    for (int i = 0; i < 6; i++)
        f->faults[i] = i % 2 ? F_PTE : F_THROTTLE;
    el_incr_stats st;
    run_ok(f, false, 7, &st);
    assert_table(f, &m);
    assert_int_equal(f->faulted, 6);
    assert_int_equal(st.throttled, 6);
    assert_true(st.retries >= 6);
    assert_int_equal(st.requests, f->sends);
    assert_int_equal(st.added, m.added);
    assert_int_equal(st.deleted, m.deleted);
    assert_int_equal(st.replayed + st.duplicates + st.absent + st.rejected, 0);
    assert_true(f->w.now < 60 * 1000.0); /* virtual: backoff slept nothing */
    fake_clear(f);
}

/* c. replies lost after the transaction was applied: the resend carries
 * the same token and DynamoDB answers it as a replay, nothing twice */
static void lost(fault how, bool no_grouping)
{
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    f->lose = 1u << 0 | 1u << 2; /* the first and the third applied (of 3 when grouped) */
    f->lose_how = how;
    el_incr_stats st;
    run_ok(f, no_grouping, 7, &st);
    assert_table(f, &m);
    assert_int_equal(f->faulted, 2);
    assert_int_equal(f->replays, 2);
    assert_true(st.replayed >= 2);
    /* every row took effect once: fresh or as a replay */
    assert_int_equal(st.added + st.deleted + st.replayed, m.added + m.deleted);
    assert_int_equal(st.duplicates + st.absent + st.rejected, 0);
    fake_clear(f);
}

static void test_lost_reply_reset(void **state)
{
    (void)state;
    lost(F_LOST_RESET, false);
}

static void test_lost_reply_500(void **state)
{
    (void)state;
    lost(F_LOST_500, false);
    lost(F_LOST_500, true);
}

/* Without tokens honoured, the same fault must break the counts: the test
 * above can fail. */
static void test_lost_reply_needs_tokens(void **state)
{
    (void)state;
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    f->no_idempotency = true;
    f->lose = 1u << 0;
    f->lose_how = F_LOST_500;
    el_incr_stats st;
    run_ok(f, true, 7, &st);
    /* the first row's put was applied, its resend cancelled as a duplicate:
     * the conditions keep the table right, the figures are wrong */
    assert_table(f, &m);
    assert_int_equal(f->replays, 0);
    assert_int_equal(st.duplicates, 1);
    assert_int_equal(st.added, m.added - 1);
    fake_clear(f);
}

/* d. cancellations: rows whose condition fails (an edge the table already
 * has, a delete of one it has not) are duplicates and change no count;
 * the rest of their group is applied; a TransactionConflict is sent
 * again, later, with a new token */
static void test_cancelled(void **state)
{
    (void)state;
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    /* the table already has three of bob's new followers */
    seeded[nseeded++] = (drow){ "u03", "bob", 'P' };
    seeded[nseeded++] = (drow){ "u17", "bob", 'P' };
    seeded[nseeded++] = (drow){ "u29", "bob", 'P' };
    rows[n++] = (drow){ "w1", "carl", 'D' };   /* never there */
    rows[n++] = (drow){ "v1", "carl", 'D' };   /* deleted above: gone by now */
    rows[n++] = (drow){ "v1", "carl", 'P' };   /* and back */
    rows[n++] = (drow){ "u00", "amy", 'P' };   /* again */
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    f->faults[1] = F_CONFLICT;
    f->faults[3] = F_CONFLICT;
    el_incr_stats st;
    run_ok(f, false, 7, &st);
    assert_table(f, &m);
    assert_int_equal(m.duplicates, 4);
    assert_int_equal(m.absent, 2);
    assert_int_equal(st.duplicates, m.duplicates);
    assert_int_equal(st.absent, m.absent);
    assert_int_equal(st.added, m.added);
    assert_int_equal(st.deleted, m.deleted);
    assert_int_equal(st.conflicts, 2);
    assert_int_equal(st.rejected + st.replayed, 0);
    assert_true(f->cancelled >= 2 + 1);
    fake_clear(f);
}

/* Applying a delta twice (a crashed run done again, another run id, the
 * first run's tokens still in their window): the second changes nothing. */
static void test_rerun(void **state)
{
    (void)state;
    drow rows[64], seeded[8];
    size_t nseeded;
    size_t n = clean_delta(rows, seeded, &nseeded);
    rows[n++] = (drow){ "x1", "dan", 'P' };
    rows[n++] = (drow){ "x1", "dan", 'D' };
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    model m = { 0 };
    seed(f, &m, seeded, nseeded);
    expect(&m, rows, n);
    write_delta(rows, n);
    el_incr_stats st;
    run_ok(f, false, 7, &st);
    assert_table(f, &m);
    unsigned applied = f->applied;
    model again = m;
    again.added = again.deleted = again.duplicates = again.absent = 0;
    expect(&again, rows, n);
    /* x1 -> dan is put again and deleted again: the model says so too */
    run_ok(f, false, 8, &st);
    assert_table(f, &again);
    assert_int_equal(st.added, again.added);
    assert_int_equal(st.deleted, again.deleted);
    assert_int_equal(st.duplicates, again.duplicates);
    assert_int_equal(st.absent, again.absent);
    assert_int_equal(st.replayed, 0);
    assert_true(f->applied > applied);
    fake_clear(f);
}

/* g. a Put of an item that other rows of its round add to goes before
 * their ADDs, even when a conflict cancels it and it is sent again: bob's
 * profile row Puts U#bob/P (attribute_not_exists), the follow rows ADD to
 * its followers. Had an ADD gone first, it would make the item, bob's Put
 * would fail its condition, count as a duplicate and leave its own
 * counter (zed's followers) unmoved. (A throttle would not show it: the
 * throttled transaction stays with the driver, its items busy; a
 * cancelled one goes back to the round, and the ADDs must wait for it.
 * With incr_group_waits always false, this test fails.) */
static const char PROFILE_MAPPING[] =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"people\",\"input\":\"delta.csv\","
    "\"pk\":\"U#{a}\",\"sk\":\"{s}\",\"index\":false,"
    "\"counters\":[{\"pk\":\"U#{b}\",\"sk\":\"P\",\"attribute\":\"followers\"}]}]}";

static void test_put_before_adds(void **state)
{
    (void)state;
    enum { FOLLOWERS = 12 };
    el_buf b;
    el_buf_init(&b, 1u << 16);
    assert_int_equal(el_buf_puts(&b, "a,b,s,op\n"), EL_OK);
    for (int i = 0; i < FOLLOWERS; i++) /* u<i>'s follow row: Puts U#u<i>/E */
        assert_int_equal(el_buf_printf(&b, "u%02d,bob,E,P\n", i), EL_OK);
    assert_int_equal(el_buf_puts(&b, "bob,zed,P,P\n"), EL_OK); /* bob's profile */
    char path[EL_TEST_PATH_MAX];
    el_test_write(el_test_path(path, dir, "delta.csv"), b.data, b.len);
    el_buf_free(&b);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->faults[0] = F_CONFLICT; /* the first transaction sent, bob's: cancelled */
    mapping_json = PROFILE_MAPPING;
    el_incr_stats st;
    run_ok(f, false, 7, &st);
    mapping_json = MAPPING;
    assert_int_equal(f->faulted, 1);
    assert_int_equal(st.added, FOLLOWERS + 1);
    assert_int_equal(st.duplicates + st.rejected + st.replayed, 0);
    el_fake_item *bob = el_fake_table_find(&f->tab, "U#bob", "P");
    assert_non_null(bob);
    assert_true(bob->put);
    bool had;
    assert_int_equal(el_fake_item_get(bob, "followers", &had), FOLLOWERS);
    el_fake_item *zed = el_fake_table_find(&f->tab, "U#zed", "P");
    assert_non_null(zed);
    assert_int_equal(el_fake_item_get(zed, "followers", &had), 1);
    assert_int_equal(f->tab.n, FOLLOWERS + 2);
    fake_clear(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean_grouped),
        cmocka_unit_test(test_clean_per_row),
        cmocka_unit_test(test_throttled),
        cmocka_unit_test(test_lost_reply_reset),
        cmocka_unit_test(test_lost_reply_500),
        cmocka_unit_test(test_lost_reply_needs_tokens),
        cmocka_unit_test(test_cancelled),
        cmocka_unit_test(test_rerun),
        cmocka_unit_test(test_put_before_adds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
