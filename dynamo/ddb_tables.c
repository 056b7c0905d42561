/*
 * ddb_tables.c - the control plane: DescribeTable and CreateTable, each a
 * synchronous call retried as the AWS SDKs retry (up to AWS_MAX_ATTEMPTS),
 * and the wait until a new table and its index are ACTIVE.
 *
 * DESIGN: these run once per command, before any bulk request, on the
 * calling thread; a synchronous call (el_ddb_call) keeps them simple and
 * their messages precise ("table 'T' does not exist in <region> at
 * <endpoint>"), which is what a user reads first when the setup is wrong.
 */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"

#include <inttypes.h> /* PRIu64: throughput figures */
#include <stdint.h>   /* uintptr_t */
#include <string.h>   /* strcmp */

#include "common/backoff.h"    /* the one retry delay */
#include "common/clock.h"      /* el_now_ms, el_sleep_ms */
#include "dynamo/ddb_errors.h" /* the one-line explanations of refusals */

#define CONTROL_BACKOFF_BASE_MS 200.0
#define CONTROL_BACKOFF_CAP_MS 6400.0

/* Requests sent and resent, counted when the caller asks (create-table's
 * --stats-json). */
typedef struct sent_counts {
    unsigned long requests, retries;
} sent_counts;

/* el_ddb_call with the SDKs' retry of throttling and transient failures:
 * up to max_attempts (AWS_MAX_ATTEMPTS, default 5), the one backoff policy
 * of edgeload (capped exponential, full jitter: common/backoff.h) with a
 * 200 ms base, as the control plane is not worth hammering, and the wait
 * the service asks for within its bound; a clock refusal the answer set
 * the clock right for is sent again at once, once, not counted as an
 * attempt (aws/skew.h). res holds the last outcome; sent, when not NULL,
 * counts the sends. */
static el_err call_retrying(el_ddb *ddb, const char *op, const char *body, size_t len,
                            el_buf *response, el_ddb_result *res, sent_counts *sent,
                            el_diag *diag)
{
    const el_aws_config *cfg = el_ddb_config(ddb);
    int attempts = cfg->max_attempts > 0 ? cfg->max_attempts : 5;
    uint64_t rng = (uint64_t)el_now_ms() ^ (uint64_t)(uintptr_t)ddb;
    bool skew_resent = false;
    for (int attempt = 1;; attempt++) {
        if (response)
            el_buf_reset(response);
        if (sent) {
            sent->requests++;
            sent->retries += attempt > 1;
        }
        el_err err = el_ddb_call(ddb, op, body, len, response, res, diag);
        if (err && err != EL_ENET)
            return err;
        if (!skew_resent && el_ddb_skew_resend(el_ddb_skew(ddb), res)) {
            skew_resent = true; /* signed again with the corrected clock, at once */
            attempt--;
            continue;
        }
        bool retry = res->outcome == EL_DDB_THROTTLED || res->outcome == EL_DDB_TRANSIENT;
        if (!retry || attempt >= attempts)
            return err;
        double backoff = el_backoff_ms((unsigned)attempt, CONTROL_BACKOFF_BASE_MS,
                                       CONTROL_BACKOFF_CAP_MS, el_rand_unit(&rng));
        el_sleep_ms(el_backoff_hinted_ms(backoff, res->retry_after_ms));
    }
}

static bool is_credentials_error(const el_ddb_result *res)
{
    return res->outcome == EL_DDB_FATAL &&
           strcmp(res->error_type, "ResourceNotFoundException") != 0 &&
           res->http_status >= 400 && res->http_status < 500;
}

/* Turns a failed control-plane call into an error with a message. */
static el_err call_error(const el_ddb *ddb, const char *op, const el_ddb_result *res,
                         el_diag *diag)
{
    if (is_credentials_error(res))
        return el_ddb_fail(diag, res, el_ddb_config(ddb), op); /* one line to act on (ddb_errors.h) */
    if (res->http_status == 0)
        return el_diag_set(diag, EL_ENET, "%s request to %s failed: %s%s", op,
                           el_ddb_config(ddb)->endpoint, res->message, el_ddb_network_hint(res->message));
    /* a refused request (ValidationException: a bad table name, ...) is
     * the user's to fix, like any other usage error */
    el_err err = res->outcome == EL_DDB_REJECTED ? EL_EUSAGE : EL_ESERVICE;
    return el_diag_set(diag, err, "%s failed: %s%s%s%s%s%s", op,
                       res->error_type[0] ? res->error_type : "",
                       res->error_type[0] ? ": " : "", res->message,
                       res->request_id[0] ? " (request id " : "", res->request_id,
                       res->request_id[0] ? ")" : "");
}

static el_err describe(el_ddb *ddb, const char *table, el_table_desc *out, sent_counts *sent,
                       el_diag *diag)
{
    el_buf body, resp;
    el_ddb_result res;
    el_buf_init(&body, 4096);
    el_buf_init(&resp, EL_DDB_MAX_RESPONSE);
    memset(out, 0, sizeof *out);
    el_err err = el_buf_puts(&body, "{\"TableName\":");
    if (!err)
        err = el_ddb_json_put_string(&body, table);
    if (!err)
        err = el_buf_putc(&body, '}');
    if (err) {
        err = el_diag_set(diag, EL_EUSAGE, "table name too long");
        goto done;
    }
    err = call_retrying(ddb, "DescribeTable", body.data, body.len, &resp, &res, sent, diag);
    if (err)
        goto done;
    if (res.outcome == EL_DDB_SUCCESS) {
        err = el_ddb_parse_table_desc(resp.data, resp.len, out, diag);
    } else if (strcmp(res.error_type, "ResourceNotFoundException") == 0) {
        char line[sizeof diag->msg];
        el_ddb_explain_missing_table(table, el_ddb_config(ddb), line, sizeof line);
        err = el_diag_set(diag, EL_ETABLE, "%s", line);
    } else {
        err = call_error(ddb, "DescribeTable", &res, diag);
    }
done:
    el_buf_free(&body);
    el_buf_free(&resp);
    return err;
}

el_err el_ddb_describe_table(el_ddb *ddb, const char *table, el_table_desc *out,
                             el_diag *diag)
{
    return describe(ddb, table, out, NULL, diag);
}

el_err el_ddb_describe_limits(el_ddb *ddb, el_ddb_limits *out, el_diag *diag)
{
    el_buf resp;
    el_ddb_result res;
    el_buf_init(&resp, EL_DDB_MAX_RESPONSE);
    memset(out, 0, sizeof *out);
    el_err err = call_retrying(ddb, "DescribeLimits", "{}", 2, &resp, &res, NULL, diag);
    if (!err)
        err = res.outcome == EL_DDB_SUCCESS ? el_ddb_parse_limits(resp.data, resp.len, out, diag)
                                            : call_error(ddb, "DescribeLimits", &res, diag);
    el_buf_free(&resp);
    return err;
}

static el_err put_attr_def(el_buf *b, const char *name, bool *first)
{
    el_err err = el_buf_puts(b, *first ? "{\"AttributeName\":" : ",{\"AttributeName\":");
    *first = false;
    if (!err)
        err = el_ddb_json_put_string(b, name);
    return err ? err : el_buf_puts(b, ",\"AttributeType\":\"S\"}");
}

static el_err put_key_schema(el_buf *b, const char *pk, const char *sk)
{
    el_err err = el_buf_puts(b, "[{\"AttributeName\":");
    if (!err)
        err = el_ddb_json_put_string(b, pk);
    if (!err)
        err = el_buf_puts(b, ",\"KeyType\":\"HASH\"}");
    if (!err && sk && sk[0]) {
        err = el_buf_puts(b, ",{\"AttributeName\":");
        if (!err)
            err = el_ddb_json_put_string(b, sk);
        if (!err)
            err = el_buf_puts(b, ",\"KeyType\":\"RANGE\"}");
    }
    return err ? err : el_buf_putc(b, ']');
}

/* ,"Name":{"A":a,"B":b} with the members that are not 0; nothing when both
 * are. */
static el_err put_pair(el_buf *b, const char *name, const char *a_name, uint64_t a,
                       const char *b_name, uint64_t bv)
{
    if (!a && !bv)
        return EL_OK;
    el_err err = el_buf_printf(b, ",\"%s\":{", name);
    if (!err && a)
        err = el_buf_printf(b, "\"%s\":%" PRIu64, a_name, a);
    if (!err && bv)
        err = el_buf_printf(b, "%s\"%s\":%" PRIu64, a ? "," : "", b_name, bv);
    return err ? err : el_buf_putc(b, '}');
}

/* A table's or an index's ProvisionedThroughput, WarmThroughput and
 * OnDemandThroughput, each only when given. */
static el_err put_throughput(el_buf *b, const el_ddb_throughput *t)
{
    el_err err = put_pair(b, "ProvisionedThroughput", "ReadCapacityUnits", t->read_units,
                          "WriteCapacityUnits", t->write_units);
    if (!err)
        err = put_pair(b, "WarmThroughput", "ReadUnitsPerSecond", t->warm_read,
                       "WriteUnitsPerSecond", t->warm_write);
    if (!err)
        err = put_pair(b, "OnDemandThroughput", "MaxReadRequestUnits", t->max_read,
                       "MaxWriteRequestUnits", t->max_write);
    return err;
}

static el_err put_tags(el_buf *b, const el_ddb_tag *tags, size_t n)
{
    el_err err = n ? el_buf_puts(b, ",\"Tags\":[") : EL_OK;
    for (size_t i = 0; !err && i < n; i++) {
        err = el_buf_puts(b, i ? ",{\"Key\":" : "{\"Key\":");
        if (!err)
            err = el_ddb_json_put_string(b, tags[i].key);
        if (!err)
            err = el_buf_puts(b, ",\"Value\":");
        if (!err)
            err = el_ddb_json_put_string(b, tags[i].value);
        if (!err)
            err = el_buf_putc(b, '}');
    }
    return !err && n ? el_buf_putc(b, ']') : err;
}

/* The CreateTable body: string keys, the billing mode and throughput, the
 * optional GSI with its own, class, deletion protection and tags. Key
 * attributes shared between table and index are defined once. */
el_err el_ddb_create_table_body(const el_create_table_opts *o, el_buf *b)
{
    const char *pk = o->pk ? o->pk : "PK";
    const char *sk = o->sk ? o->sk : "SK";
    const char *ipk = o->index_pk ? o->index_pk : "GSI1PK";
    const char *isk = o->index_sk ? o->index_sk : "GSI1SK";
    const char *proj = o->projection ? o->projection : "ALL";
    const char *names[4] = {pk, sk, o->index_name ? ipk : "", o->index_name ? isk : ""};
    bool first = true;
    el_err err = el_buf_puts(b, "{\"TableName\":");
    if (!err)
        err = el_ddb_json_put_string(b, o->table);
    if (!err)
        err = el_buf_printf(b, ",\"BillingMode\":\"%s\",\"AttributeDefinitions\":[",
                            o->provisioned ? "PROVISIONED" : "PAY_PER_REQUEST");
    for (size_t i = 0; !err && i < 4; i++) {
        bool dup = !names[i][0];
        for (size_t j = 0; !dup && j < i; j++)
            dup = strcmp(names[i], names[j]) == 0;
        if (!dup)
            err = put_attr_def(b, names[i], &first);
    }
    if (!err)
        err = el_buf_puts(b, "],\"KeySchema\":");
    if (!err)
        err = put_key_schema(b, pk, sk);
    if (!err)
        err = put_throughput(b, &o->table_tp);
    if (!err && o->index_name) {
        err = el_buf_puts(b, ",\"GlobalSecondaryIndexes\":[{\"IndexName\":");
        if (!err)
            err = el_ddb_json_put_string(b, o->index_name);
        if (!err)
            err = el_buf_puts(b, ",\"KeySchema\":");
        if (!err)
            err = put_key_schema(b, ipk, isk);
        if (!err)
            err = el_buf_puts(b, ",\"Projection\":{\"ProjectionType\":");
        if (!err)
            err = el_ddb_json_put_string(b, proj);
        if (!err)
            err = el_buf_putc(b, '}');
        if (!err)
            err = put_throughput(b, &o->index_tp);
        if (!err)
            err = el_buf_puts(b, "}]");
    }
    if (!err && o->table_class) {
        err = el_buf_puts(b, ",\"TableClass\":");
        if (!err)
            err = el_ddb_json_put_string(b, o->table_class);
    }
    if (!err && o->deletion_protection)
        err = el_buf_puts(b, ",\"DeletionProtectionEnabled\":true");
    if (!err)
        err = put_tags(b, o->tags, o->ntags);
    return err ? err : el_buf_putc(b, '}');
}

/* Where the description lists the index named, -1 when it does not. */
static int index_at(const el_table_desc *d, const char *index_name)
{
    for (size_t i = 0; index_name && i < d->ngsi; i++)
        if (strcmp(d->gsi[i].name, index_name) == 0)
            return (int)i;
    return -1;
}

/* A warm throughput is ready when DescribeTable reports none (an endpoint
 * that keeps none) or reports it ACTIVE. */
static bool warm_ready(const el_warm_desc *w)
{
    return !w->status[0] || strcmp(w->status, "ACTIVE") == 0;
}

/* The table, every index and their warm throughput ACTIVE, and the index
 * asked for listed. */
static bool table_ready(const el_table_desc *d, const char *index_name)
{
    if (strcmp(d->status, "ACTIVE") != 0 || !warm_ready(&d->warm))
        return false;
    for (size_t i = 0; i < d->ngsi; i++)
        if (strcmp(d->gsi[i].status, "ACTIVE") != 0 || !warm_ready(&d->gsi[i].warm))
            return false;
    return !index_name || index_at(d, index_name) >= 0;
}

el_err el_ddb_create_table(el_ddb *ddb, const el_create_table_opts *opts,
                           el_create_table_figures *fig, el_diag *diag)
{
    el_create_table_figures unused;
    if (!fig)
        fig = &unused;
    memset(fig, 0, sizeof *fig);
    sent_counts sent = {0, 0};
    if (!opts->table || !opts->table[0])
        return el_diag_set(diag, EL_EUSAGE, "no table name");
    if (opts->projection && strcmp(opts->projection, "ALL") != 0 &&
        strcmp(opts->projection, "KEYS_ONLY") != 0)
        return el_diag_set(diag, EL_EUSAGE, "bad projection '%s': expected ALL or KEYS_ONLY",
                           opts->projection);
    el_buf body, resp;
    el_ddb_result res;
    el_buf_init(&body, 1u << 20);
    el_buf_init(&resp, EL_DDB_MAX_RESPONSE);
    el_err err = el_ddb_create_table_body(opts, &body);
    if (err) {
        err = el_diag_set(diag, EL_EUSAGE, "table or attribute names too long");
        goto done;
    }
    err = call_retrying(ddb, "CreateTable", body.data, body.len, &resp, &res, &sent, diag);
    if (err)
        goto done;
    if (res.outcome != EL_DDB_SUCCESS) {
        if (strcmp(res.error_type, "ResourceInUseException") == 0)
            err = el_diag_set(diag, EL_ETABLE, "table '%s' already exists in %s at %s",
                              opts->table, el_ddb_config(ddb)->region, el_ddb_config(ddb)->endpoint);
        else
            err = call_error(ddb, "CreateTable", &res, diag);
        goto done;
    }

    int wait_s = opts->wait_seconds > 0 ? opts->wait_seconds : EL_DDB_CREATE_WAIT_DEFAULT;
    double start = el_now_ms();
    double delay_ms = 200;
    el_table_desc desc;
    for (;;) {
        err = describe(ddb, opts->table, &desc, &sent, diag);
        fig->polls++;
        fig->wait_ms = el_now_ms() - start;
        /* Right after CreateTable, DescribeTable may not see the table yet. */
        if (err && err != EL_ETABLE)
            goto done;
        int gi = err ? -1 : index_at(&desc, opts->index_name);
        if (!err) {
            fig->warm = desc.warm;
            if (gi >= 0)
                fig->index_warm = desc.gsi[gi].warm;
        }
        if (!err && table_ready(&desc, opts->index_name))
            break;
        if (opts->on_wait) {
            el_table_wait seen = {
                .table = err ? "" : desc.status,
                .table_warm = err ? "" : desc.warm.status,
                .index = gi >= 0 ? desc.gsi[gi].status : "",
                .index_warm = gi >= 0 ? desc.gsi[gi].warm.status : "",
            };
            opts->on_wait(opts->user, &seen, fig->wait_ms);
        }
        if (!err && strcmp(desc.status, "ACTIVE") == 0 && opts->index_name && gi < 0) {
            err = el_diag_set(diag, EL_ETABLE, "table '%s' is ACTIVE but has no index '%s'",
                              opts->table, opts->index_name);
            goto done;
        }
        if (el_now_ms() - start >= wait_s * 1000.0) {
            err = el_diag_set(diag, EL_ETABLE, "table '%s' is not ACTIVE after %d s (status %s)",
                              opts->table, wait_s, err ? "not visible" : desc.status);
            goto done;
        }
        el_sleep_ms(delay_ms);
        if (delay_ms < 5000)
            delay_ms *= 2;
    }
    el_diag_clear(diag);
done:
    fig->requests = sent.requests;
    fig->retries = sent.retries;
    el_buf_free(&body);
    el_buf_free(&resp);
    return err;
}

/* ---- multi-driven requests ---- */

/* Frees a request for good (not to the pool). */
