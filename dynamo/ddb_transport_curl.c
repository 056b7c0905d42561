/*
 * ddb_transport_curl.c - the request driver's transport over libcurl: each
 * request an el_ddb_req (a pooled easy handle, signed here), all of them on
 * one multi handle driven by curl_multi_socket_action over epoll
 * (netloop.h).
 *
 * DESIGN: a request's easy handle is made at its first send and reused for
 * its resends (re-signed with a fresh date, its body hashed once); it goes
 * back to the client's pool when the driver is done with the request.
 * Answers are collected with curl_multi_info_read after every wait and
 * handed to the driver one by one. A request that cannot be signed
 * (credentials that expired and could not be renewed) is never sent: it
 * is answered at the next wait with the signer's reason.
 */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"

#include <stdlib.h>  /* calloc, free, realloc */

#include "common/clock.h"     /* el_now_ms */
#include "dynamo/ddb_driver.h"
#include "dynamo/netloop.h"

typedef struct curl_transport {
    el_ddb *ddb;
    el_netloop *loop;
    CURLM *multi;
    el_ddb_op **unsent;        /* not signed, so not sent: answered at the next wait */
    size_t nunsent, capunsent;
} curl_transport;

static el_err t_send(void *self, el_ddb_op *op)
{
    curl_transport *t = self;
    el_ddb_req *req = el_ddb_op_transport(op);
    if (!req) {
        el_buf *body = el_ddb_op_take_body(op);
        el_err err = el_ddb_req_new(t->ddb, el_ddb_op_name(op), body, op, &req);
        if (err)
            return err;
        el_ddb_op_set_transport(op, req);
        size_t len;
        const char *b = el_ddb_req_body(req, &len);
        el_ddb_op_set_body_view(op, b, len);
    }
    if (!el_ddb_req_reset(req)) {
        if (t->nunsent == t->capunsent) {
            size_t cap = t->capunsent ? 2 * t->capunsent : 16;
            el_ddb_op **grown = realloc(t->unsent, cap * sizeof *grown);
            if (!grown)
                return EL_ENOMEM;
            t->unsent = grown;
            t->capunsent = cap;
        }
        t->unsent[t->nunsent++] = op;
        return EL_OK;
    }
    if (curl_multi_add_handle(t->multi, el_ddb_req_handle(req)) != CURLM_OK)
        return EL_ENET;
    return EL_OK;
}

/* Answers the requests t_send could not sign; true when there were any. */
static bool answer_unsent(curl_transport *t, el_ddb_driver *d)
{
    bool any = t->nunsent > 0;
    while (t->nunsent > 0) {
        el_ddb_op *op = t->unsent[--t->nunsent];
        el_ddb_result res;
        el_ddb_req_unsent(el_ddb_op_transport(op), &res);
        el_ddb_driver_complete(d, op, &res, NULL, 0);
    }
    return any;
}

static el_err t_wait(void *self, el_ddb_driver *d, int timeout_ms)
{
    curl_transport *t = self;
    bool answered = answer_unsent(t, d);
    /* start what was added (libcurl sets a 0 ms timer for a new transfer) */
    el_netloop_run_timers(t->loop);
    for (int round = 0; round < 2; round++) {
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(t->multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURLcode code = msg->data.result;
            CURL *easy = msg->easy_handle;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&req);
            curl_multi_remove_handle(t->multi, easy);
            el_ddb_op *op = el_ddb_req_user(req);
            el_ddb_result res;
            el_ddb_req_finish(req, code, &res);
            size_t len;
            const char *body = el_ddb_req_response(req, &len);
            answered = true;
            el_ddb_driver_complete(d, op, &res, body, len);
        }
        if (answered || round == 1)
            break;
        /* even with nothing to wait for (timeout 0), ready sockets must be
         * handed to libcurl here: nothing else reads them */
        el_err err = el_netloop_wait(t->loop, timeout_ms);
        if (err)
            return err;
    }
    return EL_OK;
}

static void t_cancel(void *self, el_ddb_op *op)
{
    curl_transport *t = self;
    el_ddb_req *req = el_ddb_op_transport(op);
    if (!req)
        return;
    for (size_t i = 0; i < t->nunsent; i++)
        if (t->unsent[i] == op) {
            t->unsent[i] = t->unsent[--t->nunsent];
            break;
        }
    /* harmless when the handle is not on the multi handle */
    curl_multi_remove_handle(t->multi, el_ddb_req_handle(req));
    el_ddb_req_free(req);
    el_ddb_op_set_transport(op, NULL);
    el_ddb_op_set_body_view(op, NULL, 0);
}

static void t_wakeup(void *self)
{
    curl_transport *t = self;
    el_netloop_wakeup(t->loop);
}

static double t_now(void *self)
{
    (void)self;
    return el_now_ms();
}

static void t_free(void *self)
{
    curl_transport *t = self;
    if (!t)
        return;
    el_netloop_free(t->loop);
    free(t->unsent);
    free(t);
}

el_err el_ddb_transport_curl(el_ddb *ddb, int connections, el_ddb_transport *out)
{
    curl_transport *t = calloc(1, sizeof *t);
    if (!t)
        return EL_ENOMEM;
    t->ddb = ddb;
    el_err err = el_netloop_new(&t->loop);
    if (err) {
        free(t);
        return err;
    }
    t->multi = el_netloop_multi(t->loop);
    curl_multi_setopt(t->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)connections);
    curl_multi_setopt(t->multi, CURLMOPT_MAXCONNECTS, (long)connections);
    *out = (el_ddb_transport){ .send = t_send, .wait = t_wait, .cancel = t_cancel,
                               .wakeup = t_wakeup, .now = t_now, .free = t_free, .self = t,
                               .skew = el_ddb_skew(ddb) };
    return EL_OK;
}

el_err el_ddb_driver_new(el_ddb *ddb, const el_ddb_driver_opts *o, el_ddb_driver **out,
                         el_diag *diag)
{
    *out = NULL;
    int connections = o && o->concurrency > 0 ? o->concurrency : EL_DEFAULT_CONCURRENCY;
    el_ddb_transport t;
    el_err err = el_ddb_transport_curl(ddb, connections, &t);
    if (err)
        return el_diag_set(diag, err, err == EL_EIO ? "cannot create the network event loop"
                                                    : "out of memory");
    return el_ddb_driver_new_with(&t, o, el_ddb_config(ddb), out, diag);
}
