/*
 * test_counters_write.c - the counters writer (el_counters_write,
 * pipeline/counters/counters_write.c) run against an in-memory DynamoDB: a
 * scripted transport that parses every UpdateItem, applies its
 * `SET #a0 = :n0, ...` to a table of items (PK/SK -> numeric attributes) and
 * answers as DynamoDB does. Whatever the table does to the requests -
 * throttles a key for its first tries (ThrottlingException,
 * ProvisionedThroughputExceededException), applies an update and loses its
 * answer (a connection reset, a 500), refuses one (ValidationException) -
 * the table must end holding exactly the counts the edges make, computed
 * here from the edges, not by the engine; and the run's figures must agree
 * with what the table saw. The fake applies ADD as DynamoDB does, so a
 * writer that added instead of setting fails on the values (a lost answer
 * counted twice, a wrong count left wrong). A refused update and --resume
 * are covered too.
 *
 * Time is the fake's: its clock moves by what the driver waits for, so
 * backoff costs nothing. One scenario starts that clock far ahead of the
 * wall clock, as a transport's clock may be: the writer must schedule by
 * the driver's clock, not its own. A writer that spins or never ends fails
 * (the fake counts its idle waits and gives it a virtual hour) instead of
 * hanging the suite.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fake_table.h"
#include "fake_wire.h"

#include <curl/curl.h>       /* CURLcode for el_ddb_classify */
#include <stdio.h>           /* snprintf, sscanf */
#include <stdlib.h>          /* calloc, free, strtoll */
#include <string.h>          /* strcmp, strdup, strstr */
#include <yajl/yajl_tree.h>  /* the fake reads the requests */

#include "common/buf.h"
#include "common/clock.h"        /* el_now_ms: a clock ahead of it */
#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h"   /* el_ddb_classify */
#include "pipeline/counters/counters.h"

/* ---- the edges and the counts they make ---- */

typedef struct edge {
    const char *a, *b;   /* a follows b */
} edge;

#define MAX_USERS 64

/* Each user's followerCount and followingCount, from the distinct edges. */
typedef struct model {
    struct { char name[16]; long long followers, following; } user[MAX_USERS];
    size_t nusers;
    size_t items, attrs;  /* counter items and counter attributes (non-zero counts) */
} model;

static size_t user_at(model *m, const char *name)
{
    for (size_t i = 0; i < m->nusers; i++)
        if (strcmp(m->user[i].name, name) == 0)
            return i;
    assert_true(m->nusers < MAX_USERS);
    snprintf(m->user[m->nusers].name, sizeof m->user[0].name, "%s", name);
    m->user[m->nusers].followers = m->user[m->nusers].following = 0;
    return m->nusers++;
}

static void model_build(model *m, const edge *e, size_t n)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(e[j].a, e[i].a) == 0 && strcmp(e[j].b, e[i].b) == 0;
        if (seen)
            continue; /* the same edge again: it exists once */
        m->user[user_at(m, e[i].b)].followers++;
        m->user[user_at(m, e[i].a)].following++;
    }
    for (size_t u = 0; u < m->nusers; u++) {
        m->items++;
        m->attrs += (m->user[u].followers > 0) + (m->user[u].following > 0);
    }
}

/* The counters of the edges, through the counting API. */
static el_counters *count(const edge *e, size_t n)
{
    el_counters *c;
    assert_int_equal(el_counters_new(NULL, &c), EL_OK);
    for (size_t i = 0; i < n; i++) {
        char k[64], c1[64], c2[64];
        size_t kl = (size_t)snprintf(k, sizeof k, "A#%s%cT#%s", e[i].a, '\0', e[i].b);
        size_t l1 = (size_t)snprintf(c1, sizeof c1, "U#%s%cP%cfollowerCount", e[i].b, '\0',
                                     '\0');
        size_t l2 = (size_t)snprintf(c2, sizeof c2, "U#%s%cP%cfollowingCount", e[i].a, '\0',
                                     '\0');
        const char *keys[2] = { c1, c2 };
        size_t lens[2] = { l1, l2 };
        assert_int_equal(el_counters_add_keys(c, k, kl, keys, lens, 2), EL_OK);
    }
    return c;
}

/* 30 followers of a hot user (bob), a small circle that follows itself,
 * and duplicates of edges already given. */
#define MAX_EDGES 64
static char names[30][8];

static size_t edges(edge *e)
{
    size_t n = 0;
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[0], "u%02d", i);
        e[n++] = (edge){ names[i], "bob" };
    }
    e[n++] = (edge){ "amy", "bob" };
    e[n++] = (edge){ "bob", "amy" };
    e[n++] = (edge){ "carl", "amy" };
    e[n++] = (edge){ "amy", "carl" };
    e[n++] = (edge){ "u00", "amy" };
    e[n++] = (edge){ "u05", "bob" };   /* again */
    e[n++] = (edge){ "bob", "amy" };   /* again */
    return n;
}

/* ---- the fake DynamoDB ---- */

#define MAX_KEYED 4

typedef enum fault {
    F_NONE = 0,
    F_THROTTLE,      /* 400 ThrottlingException, nothing applied */
    F_PTE,           /* 400 ProvisionedThroughputExceededException */
    F_LOST_RESET,    /* applied, then the connection reset: no answer */
    F_LOST_500,      /* applied, then a 500 */
    F_REFUSE         /* 400 ValidationException, nothing applied */
} fault;

typedef struct fake {
    el_fake_wire w;           /* first: the transport's callbacks take it */
    el_fake_table tab;
    /* faults by key: the first `tries` sends of the item keyed pk are
     * answered with `how` (F_THROTTLE/F_PTE alternate when how is F_THROTTLE
     * and alternate is set; F_REFUSE for every send) */
    struct keyfault { const char *pk; unsigned tries; fault how; bool alternate; unsigned seen; }
        keyed[MAX_KEYED];
    size_t nkeyed;
    unsigned lose;            /* bit k: the answer of the k-th update applied is lost */
    fault lose_how;           /* F_LOST_RESET or F_LOST_500 */
    unsigned sends, applied, faulted, throttled;
    unsigned idle_waits;      /* waits in a row that could not move the clock */
    double until;             /* a virtual hour after the first wait: a run still going
                                 then is stuck (fail rather than hang) */
} fake;

/* The attribute's value; *found false when the item has none. */
static long long get_attr(fake *f, const char *pk, const char *sk, const char *name,
                          bool *found)
{
    return el_fake_item_get(el_fake_table_find(&f->tab, pk, sk), name, found);
}

/* "SET #a0 = :n0, #a1 = :n1" on item x: every value lands as given,
 * whatever was there. The fake takes "ADD #a0 :n0, ..." too, as DynamoDB
 * does (adding to what is there, from 0): a writer that sent ADD would
 * fail these tests on the values, not on the fake. */
static void apply_update(fake *f, el_fake_item *x, yajl_val req)
{
    const char *expr = el_fake_sget(req, "UpdateExpression", NULL, NULL);
    assert_non_null(expr);
    bool add = strncmp(expr, "ADD ", 4) == 0;
    if (!add && strncmp(expr, "SET ", 4) != 0)
        fail_msg("neither SET nor ADD: %s", expr);
    char *copy = strdup(expr + 4), *save = NULL;
    for (char *part = strtok_r(copy, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        char name[32], value[32];
        assert_int_equal(sscanf(part, add ? " %31s %31s" : " %31s = %31s", name, value), 2);
        const char *attr = el_fake_sget(req, "ExpressionAttributeNames", name, NULL);
        const char *n = el_fake_sget(req, "ExpressionAttributeValues", value, "N");
        assert_non_null(attr);
        assert_non_null(n);
        bool had;
        long long was = get_attr(f, x->pk, x->sk, attr, &had);
        el_fake_item_set(x, attr, (add ? was : 0) + strtoll(n, NULL, 10));
    }
    free(copy);
}

static const char THROTTLE[] = EL_FAKE_THROTTLING;
static const char PTE[] = EL_FAKE_PTE;
static const char REFUSED[] =
    "{\"__type\":\"com.amazon.coral.validation#ValidationException\","
    "\"message\":\"Item size has exceeded the maximum allowed size\"}";

/* The fault scripted for this send of the item keyed pk. */
static fault keyed_fault(fake *f, const char *pk)
{
    for (size_t i = 0; i < f->nkeyed; i++) {
        if (strcmp(f->keyed[i].pk, pk) != 0)
            continue;
        unsigned seen = f->keyed[i].seen++;
        if (f->keyed[i].how == F_REFUSE)
            return F_REFUSE;
        if (seen >= f->keyed[i].tries)
            return F_NONE;
        return f->keyed[i].alternate && seen % 2 ? F_PTE : f->keyed[i].how;
    }
    return F_NONE;
}

static el_err f_send(void *self, el_ddb_op *op)
{
    fake *f = self;
    yajl_val req = el_fake_wire_request(op, "UpdateItem");
    f->sends++;
    assert_string_equal(el_fake_sget(req, "TableName", NULL, NULL), "Graph");
    assert_string_equal(el_fake_sget(req, "ReturnConsumedCapacity", NULL, NULL), "TOTAL");
    assert_null(el_fake_sget(req, "ConditionExpression", NULL, NULL));
    const char *pk = el_fake_sget(req, "Key", "PK", "S"), *sk = el_fake_sget(req, "Key", "SK", "S");
    assert_non_null(pk);
    assert_non_null(sk);
    fault fl = keyed_fault(f, pk);
    if (fl == F_THROTTLE || fl == F_PTE || fl == F_REFUSE) {
        f->faulted++;
        f->throttled += fl != F_REFUSE;
        el_fake_wire_answer(&f->w, op, CURLE_OK, 400, fl == F_THROTTLE ? THROTTLE : fl == F_PTE ? PTE : REFUSED);
        goto out;
    }
    apply_update(f, el_fake_table_find_or_add(&f->tab, pk, sk), req);
    f->applied++;
    if (f->applied <= 32 && (f->lose & (1u << (f->applied - 1))))
        fl = f->lose_how;
    if (fl == F_LOST_RESET) {
        f->faulted++;
        el_fake_wire_answer(&f->w, op, CURLE_RECV_ERROR, 0, NULL);
    } else if (fl == F_LOST_500) {
        f->faulted++;
        el_fake_wire_answer(&f->w, op, CURLE_OK, 500, EL_FAKE_SERVER_ERROR);
    } else {
        el_fake_wire_answer(&f->w, op, CURLE_OK, 200,
               "{\"ConsumedCapacity\":{\"TableName\":\"Graph\",\"CapacityUnits\":1.0}}");
    }
out:
    yajl_tree_free(req);
    return EL_OK;
}

static el_err f_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    fake *f = self;
    if (f->w.n == 0 && timeout_ms < 0)
        fail_msg("the writer waits for ever with nothing in flight");
    /* nothing answered and no time to pass: the caller spins on a clock
     * that cannot move (fail rather than hang) */
    if (f->w.n == 0 && timeout_ms == 0) {
        if (++f->idle_waits > 100000)
            fail_msg("the writer spins: 100000 waits of 0 ms with nothing in flight, "
                     "clock %.0f", f->w.now);
    } else {
        f->idle_waits = 0;
    }
    if (f->until == 0)
        f->until = f->w.now + 3600 * 1000.0;
    if (f->w.now > f->until)
        fail_msg("the writer is still going after a virtual hour, %zu counter items in "
                 "the table", f->tab.n);
    el_fake_wire_deliver(&f->w, d, timeout_ms);
    return EL_OK;
}

static void fake_free(fake *f)
{
    el_fake_table_clear(&f->tab);
    el_fake_wire_clear(&f->w);
    free(f);
}

/* The fake's table holds exactly the model's counts: every counter item,
 * each non-zero count, nothing else counted (other attributes the table
 * had are the caller's to check). */
static void assert_table(fake *f, const model *m)
{
    size_t counter_items = 0;
    for (size_t i = 0; i < f->tab.n; i++) {
        el_fake_item *x = &f->tab.items[i];
        assert_true(strncmp(x->pk, "U#", 2) == 0);
        assert_string_equal(x->sk, "P");
        counter_items++;
    }
    assert_int_equal(counter_items, m->items);
    for (size_t u = 0; u < m->nusers; u++) {
        char pk[32];
        snprintf(pk, sizeof pk, "U#%s", m->user[u].name);
        bool has_fo, has_fg;
        long long fo = get_attr(f, pk, "P", "followerCount", &has_fo);
        long long fg = get_attr(f, pk, "P", "followingCount", &has_fg);
        /* a counter no edge names is not written */
        assert_int_equal(has_fo, m->user[u].followers > 0);
        assert_int_equal(has_fg, m->user[u].following > 0);
        if (fo != m->user[u].followers || fg != m->user[u].following)
            fail_msg("%s: followerCount %lld followingCount %lld, the edges make %lld and %lld",
                     pk, fo, fg, m->user[u].followers, m->user[u].following);
    }
}

/* ---- running the writer ---- */

typedef struct seen_progress {
    unsigned calls, finals;
    uint64_t done, total;
    bool phase_ok;
} seen_progress;

static void on_progress(const el_progress *p, void *user)
{
    seen_progress *s = user;
    s->calls++;
    s->finals += p->final;
    s->done = p->done;
    s->total = p->total;
    s->phase_ok = p->phase && strcmp(p->phase, "writing-counters") == 0;
}

static el_err run(fake *f, el_counters *c, el_counters_stats *st, el_diag *d,
                  seen_progress *sp)
{
    el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = el_fake_wire_cancel,
                           .wakeup = el_fake_wire_wakeup, .now = el_fake_wire_now, .free = el_fake_wire_free, .self = f };
    el_counters_write_opts o = { .transport = &t, .table = "Graph", .pk_attr = "PK",
                                 .sk_attr = "SK", .concurrency = 4, .max_retry_time_s = 30,
                                 .progress = on_progress, .progress_user = sp };
    el_diag_clear(d);
    memset(sp, 0, sizeof *sp);
    unsigned frees = f->w.frees;
    el_err err = el_counters_write(c, &o, st, d);
    assert_int_equal(f->w.frees, frees); /* borrowed: the caller frees it */
    assert_int_equal(f->w.n, 0);
    return err;
}

static void run_ok(fake *f, el_counters *c, el_counters_stats *st, const model *m)
{
    el_diag d;
    seen_progress sp;
    unsigned sends = f->sends;
    el_err err = run(f, c, st, &d, &sp);
    if (err)
        fail_msg("counters: %s: %s", el_strerror(err), d.msg);
    /* the figures the writer fills, against what the table saw */
    assert_int_equal(st->updates, m->items);
    assert_int_equal(st->counters, m->attrs);
    assert_int_equal(st->requests, f->sends - sends);
    assert_int_equal(st->refused + st->skipped, 0);
    assert_false(st->counts_changed);
    assert_true(st->wcu_consumed == (double)m->items); /* 1.0 per answered update */
    assert_true(st->retries >= st->throttled);
    assert_true(st->elapsed_s >= 0);
    /* and what it reported: a final line with every counter item done */
    assert_int_equal(sp.finals, 1);
    assert_true(sp.phase_ok);
    assert_int_equal(sp.done, m->items);
    assert_int_equal(sp.total, m->items);
}

/* 1. a clean run: one UpdateItem per counter item, the table exact */
static void test_clean(void **state)
{
    (void)state;
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    el_counters_stats st;
    run_ok(f, c, &st, &m);
    assert_table(f, &m);
    assert_int_equal(m.items, 33);   /* 30 u.., amy, bob, carl */
    assert_int_equal(m.attrs, 36);   /* u00..u29, amy, bob, carl following; amy, bob, carl followed */
    assert_int_equal(f->sends, m.items);
    assert_int_equal(f->applied, m.items);
    assert_int_equal(st.retries + st.throttled, 0);
    /* the hot user's count, spelled out */
    bool has;
    assert_int_equal(get_attr(f, "U#bob", "P", "followerCount", &has), 31);
    assert_int_equal(get_attr(f, "U#amy", "P", "followerCount", &has), 3);
    el_counters_free(c);
    fake_free(f);
}

/* 2. answers lost after the update was applied: sent again, and SET lands
 * the same value twice */
static void lost(fault how)
{
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->lose = 1u << 0 | 1u << 2 | 1u << 7;
    f->lose_how = how;
    el_counters_stats st;
    run_ok(f, c, &st, &m);
    assert_table(f, &m);
    assert_int_equal(f->faulted, 3);
    assert_int_equal(f->applied, m.items + 3); /* three applied twice */
    assert_int_equal(f->sends, m.items + 3);
    assert_int_equal(st.retries, 3);
    assert_int_equal(st.throttled, 0);
    el_counters_free(c);
    fake_free(f);
}

static void test_lost_reply_reset(void **state)
{
    (void)state;
    lost(F_LOST_RESET);
}

static void test_lost_reply_500(void **state)
{
    (void)state;
    lost(F_LOST_500);
}

/* 3. throttled keys: resent until they go, counted as retries and
 * throttles. clock: where the fake's clock starts. */
static void throttled(double clock)
{
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->w.now = clock;
    f->keyed[f->nkeyed++] = (struct keyfault){ .pk = "U#bob", .tries = 5,
                                                  .how = F_THROTTLE, .alternate = true };
    f->keyed[f->nkeyed++] = (struct keyfault){ .pk = "U#u17", .tries = 2, .how = F_PTE };
    el_counters_stats st;
    run_ok(f, c, &st, &m);
    assert_table(f, &m);
    assert_int_equal(f->throttled, 7);
    assert_int_equal(st.throttled, 7);
    assert_int_equal(st.retries, 7);
    assert_int_equal(f->sends, m.items + 7);
    assert_int_equal(f->applied, m.items);
    assert_true(f->w.now - clock < 60 * 1000.0); /* virtual: backoff slept nothing */
    el_counters_free(c);
    fake_free(f);
}

static void test_throttled(void **state)
{
    (void)state;
    throttled(0);
}

/* The transport's clock is not the wall clock: one far ahead of it must
 * not make the writer wait for a moment already past (a spin). */
static void test_throttled_clock_ahead(void **state)
{
    (void)state;
    throttled(el_now_ms() + 1e12);
}

/* 4. a table whose counters hold wrong values (a run over other rows, a
 * hand edit): the run sets them right, and leaves the item's other
 * attributes alone; a second run changes nothing */
static void test_wrong_values_corrected(void **state)
{
    (void)state;
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    el_fake_item_set(el_fake_table_find_or_add(&f->tab, "U#bob", "P"), "followerCount", 999);
    el_fake_item_set(el_fake_table_find_or_add(&f->tab, "U#bob", "P"), "postCount", 7);
    el_fake_item_set(el_fake_table_find_or_add(&f->tab, "U#amy", "P"), "followingCount", -4);
    el_counters_stats st;
    run_ok(f, c, &st, &m);
    bool has;
    assert_int_equal(get_attr(f, "U#bob", "P", "postCount", &has), 7);
    assert_true(has);
    /* the rest of the table is the model's */
    el_fake_item *bob = el_fake_table_find(&f->tab, "U#bob", "P");
    for (size_t i = 0; i < bob->nattr; i++)
        if (strcmp(bob->attr[i].name, "postCount") == 0)
            bob->attr[i] = bob->attr[--bob->nattr];
    assert_table(f, &m);
    assert_int_equal(get_attr(f, "U#bob", "P", "followerCount", &has), 31);
    assert_int_equal(get_attr(f, "U#amy", "P", "followingCount", &has), 2);
    /* again, over the table it wrote */
    run_ok(f, c, &st, &m);
    assert_table(f, &m);
    assert_int_equal(f->applied, 2 * m.items);
    el_counters_free(c);
    fake_free(f);
}

/* A refused update: the others are written, the run says which failed. */
static void test_refused(void **state)
{
    (void)state;
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->keyed[f->nkeyed++] = (struct keyfault){ .pk = "U#carl", .how = F_REFUSE };
    el_counters_stats st;
    el_diag d;
    seen_progress sp;
    assert_int_equal(run(f, c, &st, &d, &sp), EL_ESERVICE);
    assert_non_null(strstr(d.msg, "U#carl"));
    assert_non_null(strstr(d.msg, "ValidationException"));
    assert_int_equal(st.refused, 1);
    assert_int_equal(st.updates, m.items - 1);
    assert_int_equal(st.counters, m.attrs - 2);   /* carl's two */
    assert_int_equal(st.retries, 0);              /* a refusal is not sent again */
    assert_int_equal(f->sends, m.items);
    assert_null(el_fake_table_find(&f->tab, "U#carl", "P"));
    assert_int_equal(f->tab.n, m.items - 1);
    el_counters_free(c);
    fake_free(f);
}

/* --resume with the same counts: the counter items the run resumed had
 * written are not sent again; with other counts every one is. */
static void test_resume(void **state)
{
    (void)state;
    edge e[MAX_EDGES];
    size_t n = edges(e);
    model m;
    model_build(&m, e, n);
    el_counters *c = count(e, n);
    el_counter_entry *list;
    size_t nlist;
    assert_int_equal(el_counters_list(c, &list, &nlist), EL_OK);
    uint64_t digest = el_counters_digest(list, nlist);
    free(list);
    for (int same = 0; same < 2; same++) {
        fake *f = calloc(1, sizeof *f);
        assert_non_null(f);
        el_ddb_transport t = { .send = f_send, .wait = f_wait, .cancel = el_fake_wire_cancel,
                               .wakeup = el_fake_wire_wakeup, .now = el_fake_wire_now, .free = el_fake_wire_free, .self = f };
        el_counters_write_opts o = { .transport = &t, .table = "Graph", .pk_attr = "PK",
                                     .sk_attr = "SK", .concurrency = 4, .resume = true,
                                     .resume_digest = same ? digest : digest + 1,
                                     .resume_done = 10 };
        el_counters_stats st;
        el_diag d;
        assert_int_equal(el_counters_write(c, &o, &st, &d), EL_OK);
        assert_int_equal(st.skipped, same ? 10 : 0);
        assert_int_equal(st.counts_changed, !same);
        assert_int_equal(st.updates, same ? m.items - 10 : m.items);
        assert_int_equal(f->sends, st.updates);
        assert_int_equal(f->tab.n, st.updates);
        fake_free(f);
    }
    el_counters_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_lost_reply_reset),
        cmocka_unit_test(test_lost_reply_500),
        cmocka_unit_test(test_throttled),
        cmocka_unit_test(test_throttled_clock_ahead),
        cmocka_unit_test(test_wrong_values_corrected),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_resume),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
