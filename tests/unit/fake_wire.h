/*
 * fake_wire.h - the wire under the scripted DynamoDB of the engine tests
 * (test_load_engine.c, test_incremental_engine.c, test_verify.c,
 * test_counters_write.c): each test's fake decides what a request does
 * to its table and what the answer is; the wire holds those answers until
 * the driver waits, hands them all back then, and keeps the virtual clock
 * the driver and the engine run on.
 *
 *   typedef struct fake { el_fake_wire w; ...the test's table... } fake;
 *   f_send:  req = el_fake_wire_request(op, "BatchWriteItem");
 *            ...apply it... el_fake_wire_answer(&f->w, op, CURLE_OK, 200, body);
 *            yajl_tree_free(req);
 *   f_wait:  el_fake_wire_deliver(&f->w, d, timeout_ms);
 *   transport: .wait = f_wait, .cancel = el_fake_wire_cancel,
 *              .now = el_fake_wire_now, .free = el_fake_wire_free,
 *              .wakeup = el_fake_wire_wakeup, .self = f
 *
 * The callbacks take self as the wire: the fake's first member must be it.
 * Header-only, as helpers.h: each test is one executable.
 */
#ifndef EL_TEST_FAKE_WIRE_H
#define EL_TEST_FAKE_WIRE_H

#include <stdlib.h> /* free */
#include <string.h> /* memset, strdup, strlen */

#include <curl/curl.h>       /* CURLcode */
#include <yajl/yajl_tree.h>  /* the fakes read the requests */

#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h" /* el_ddb_classify: answers read as the real transport's */

/* Answers DynamoDB gives, as its bodies say them */
#define EL_FAKE_THROTTLING                                                                 \
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ThrottlingException\","              \
    "\"message\":\"Rate of requests exceeds the allowed throughput.\"}"
#define EL_FAKE_PTE                                                                        \
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException\"," \
    "\"message\":\"The level of configured provisioned throughput for the table was "      \
    "exceeded. Consider increasing your provisioning level with the UpdateTable API.\"}"
#define EL_FAKE_SERVER_ERROR                                                               \
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#InternalServerError\","              \
    "\"message\":\"Internal server error\"}"

/* Requests in flight at once: more than any test's concurrency */
#define EL_FAKE_WIRE_MAX 256

typedef struct el_fake_wire {
    struct {
        el_ddb_op *op;
        el_ddb_result res;
        char *body; /* owned; NULL: an answer without a body (a reset) */
    } q[EL_FAKE_WIRE_MAX];
    size_t n;        /* answers held */
    double now;      /* virtual milliseconds */
    unsigned frees;  /* times the transport was freed */
} el_fake_wire;

/* The request op carries, parsed (free it with yajl_tree_free); its
 * operation must be `name` unless that is NULL. */
static inline yajl_val el_fake_wire_request(el_ddb_op *op, const char *name)
{
    if (name)
        assert_string_equal(el_ddb_op_name(op), name);
    size_t len;
    const char *raw = el_ddb_op_body(op, &len);
    char *text = strndup(raw, len), err[256];
    assert_non_null(text);
    yajl_val req = yajl_tree_parse(text, err, sizeof err);
    free(text);
    if (!req)
        fail_msg("%s request is not JSON: %s", el_ddb_op_name(op), err);
    return req;
}

/* Holds op's answer (res; body taken, may be NULL) until the next wait. */
static inline void el_fake_wire_hold(el_fake_wire *w, el_ddb_op *op, const el_ddb_result *res,
                                     char *body)
{
    assert_true(w->n < EL_FAKE_WIRE_MAX);
    w->q[w->n].op = op;
    w->q[w->n].res = *res;
    w->q[w->n++].body = body;
}

/* Holds the answer a real DynamoDB would give: curl's code, the HTTP
 * status and the body (copied; NULL: none), classified by the client. */
static inline void el_fake_wire_answer(el_fake_wire *w, el_ddb_op *op, CURLcode cc, long status,
                                       const char *body)
{
    el_ddb_result res;
    memset(&res, 0, sizeof res);
    el_ddb_classify(cc, status, body, body ? strlen(body) : 0, &res);
    res.sends = 1;
    el_fake_wire_hold(w, op, &res, body ? strdup(body) : NULL);
}

/* The driver waits: a millisecond passes when answers are held (they all
 * arrive now), else the whole timeout. */
static inline void el_fake_wire_deliver(el_fake_wire *w, el_ddb_driver *d, int timeout_ms)
{
    w->now += w->n ? 1 : timeout_ms;
    size_t n = w->n;
    w->n = 0;
    for (size_t i = 0; i < n; i++) {
        const char *body = w->q[i].body;
        el_ddb_driver_complete(d, w->q[i].op, &w->q[i].res, body, body ? strlen(body) : 0);
        free(w->q[i].body);
    }
}

/* Frees the answers still held (a test that stops early). */
static inline void el_fake_wire_clear(el_fake_wire *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->q[i].body);
    w->n = 0;
}

static inline void el_fake_wire_cancel(void *self, el_ddb_op *op)
{
    el_fake_wire *w = self;
    for (size_t i = 0; i < w->n; i++)
        if (w->q[i].op == op) {
            free(w->q[i].body);
            w->q[i] = w->q[--w->n];
            return;
        }
}

static inline double el_fake_wire_now(void *self)
{
    return ((el_fake_wire *)self)->now;
}

static inline void el_fake_wire_free(void *self)
{
    ((el_fake_wire *)self)->frees++;
}

static inline void el_fake_wire_wakeup(void *self)
{
    (void)self;
}

#endif
