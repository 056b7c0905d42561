/*
 * verify_get.c - the forward check: every expected key fetched with
 * BatchGetItem (100 keys a request, consistent reads), through the request
 * driver (--concurrency in flight, its retry policy, the --max-rcu budget).
 *
 * DESIGN: the set of keys (v->cur: the expected items, or the counter
 * items) is cut into batches in key order; a request carries the keys of
 * its batch not yet answered. An answer settles the keys it returns
 * (compared) and those it neither returns nor leaves unprocessed (missing);
 * the unprocessed rest goes again in a new request after a backoff, and
 * counts as throttling. A batch is formed only when the driver could send
 * it at once, so the keys wait in the set, not in requests.
 */
#include "pipeline/verify/verify_run.h"

#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* memset, strlen */

#include "formats/ddb_value.h" /* el_json_put_string */

/* A request's keys: positions in v->cur. */
typedef struct batch {
    size_t slots[EL_VERIFY_BATCH_KEYS];
    size_t n;
    unsigned attempts;     /* requests of these keys answered with some unprocessed */
} batch;

/* Capacity units a consistent read of the expected item costs: one per
 * started 4 KB (the expected JSON's length is close to DynamoDB's size). */
static double read_units(const vrun *v, size_t slot)
{
    if (v->cur_counters)
        return 1; /* counter items: the projection returns a few attributes */
    size_t len = el_sample_value(v->cur, slot)->len;
    size_t units = (len + 4095) / 4096;
    return units ? (double)units : 1;
}

static el_err build_batch_get(vrun *v, const batch *b, double *units)
{
    el_buf *r = &v->req;
    el_buf_reset(r);
    *units = 0;
    el_err err = el_buf_puts(r, "{\"RequestItems\":{");
    err = err ? err : el_json_put_string(r, v->m->table, strlen(v->m->table));
    err = err ? err : el_buf_puts(r, ":{\"ConsistentRead\":true,\"Keys\":[");
    for (size_t i = 0; !err && i < b->n; i++) {
        size_t klen;
        const char *key = el_sample_key(v->cur, b->slots[i], &klen);
        if (i)
            err = el_buf_putc(r, ',');
        err = err ? err : verify_put_key(r, v, key, klen);
        *units += read_units(v, b->slots[i]);
    }
    err = err ? err : el_buf_putc(r, ']');
    if (!err && v->cur_counters)
        err = el_buf_append(r, v->proj.data, v->proj.len);
    return err ? err : el_buf_puts(r, "}},\"ReturnConsumedCapacity\":\"TOTAL\"}");
}

static el_ddb_verdict on_get(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                             void *ctx);

static el_err send_batch(vrun *v, const batch *b, el_diag *diag)
{
    double units;
    el_err err = build_batch_get(v, b, &units);
    void *user = NULL;
    if (!err)
        err = el_ddb_driver_submit(v->drv, "BatchGetItem", &v->req, units, on_get, v,
                                   sizeof *b, &user);
    if (err)
        return el_diag_set(diag, err, "BatchGetItem request: %s", el_strerror(err));
    memcpy(user, b, sizeof *b);
    return EL_OK;
}

/* Position in b of the slot whose key is key, or b->n. */
static size_t position_of(const vrun *v, const batch *b, const el_buf *key)
{
    size_t slot = el_sample_find(v->cur, key->data, key->len);
    for (size_t i = 0; slot != (size_t)-1 && i < b->n; i++)
        if (b->slots[i] == slot)
            return i;
    return b->n;
}

/* A key the answer settled: compared with the item returned, or (item
 * NULL) missing. */
static el_err settle(vrun *v, size_t slot, const el_buf *key, const el_ddb_val *item,
                     el_diag *diag)
{
    if (v->cur_counters) {
        v->st->counter_items++;
        return verify_compare_counters(v, key->data, key->len, el_sample_value(v->cur, slot),
                                       item, diag);
    }
    if (!item) {
        v->st->missing++;
        el_err err = verify_report_simple(v, EL_VERIFY_MISSING, key->data, key->len, NULL);
        return err ? el_diag_set(diag, err, "reporting: %s", el_strerror(err)) : EL_OK;
    }
    v->st->present++;
    bool same = true;
    el_err err = verify_compare_item(v, key->data, key->len,
                                     el_buf_str(el_sample_value(v->cur, slot)), item, &same,
                                     diag);
    if (!err && !same)
        v->st->different++;
    return err;
}

/* A successful answer: compares what came back, counts as missing what is
 * neither returned nor unprocessed, and sends the unprocessed rest again. */
static el_err on_answer(vrun *v, const batch *b, const el_ddb_answer *a, el_diag *diag)
{
    el_ddb_get_answer g;
    el_err err = el_ddb_parse_batch_get(a->body, a->len, v->m->table, &g, diag);
    if (err)
        return err == EL_ENOMEM ? err : el_diag_set(diag, EL_ESERVICE, "%s", diag->msg);
    el_buf key;
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    bool settled[EL_VERIFY_BATCH_KEYS] = { false }, unprocessed[EL_VERIFY_BATCH_KEYS] = { false };
    for (size_t i = 0; !err && i < el_ddb_val_count(g.items); i++) {
        const el_ddb_val *item = el_ddb_val_at(g.items, i);
        if (!verify_key_of(v, item, &key))
            continue;
        size_t pos = position_of(v, b, &key);
        if (pos == b->n || settled[pos])
            continue;
        settled[pos] = true;
        err = settle(v, b->slots[pos], &key, item, diag);
    }
    batch rest = { .attempts = b->attempts + 1 };
    for (size_t i = 0; i < el_ddb_val_count(g.unprocessed); i++) {
        if (!verify_key_of(v, el_ddb_val_at(g.unprocessed, i), &key))
            continue;
        size_t pos = position_of(v, b, &key);
        if (pos < b->n && !settled[pos] && !unprocessed[pos]) {
            unprocessed[pos] = true;
            rest.slots[rest.n++] = b->slots[pos];
        }
    }
    el_ddb_doc_free(g.doc);
    for (size_t i = 0; !err && i < b->n; i++) {
        if (settled[i] || unprocessed[i])
            continue;
        size_t klen;
        const char *k = el_sample_key(v->cur, b->slots[i], &klen);
        el_buf_reset(&key);
        err = el_buf_append(&key, k, klen);
        err = err ? err : settle(v, b->slots[i], &key, NULL, diag);
    }
    el_buf_free(&key);
    if (!err && rest.n > 0) {
        /* unprocessed keys are throttling: a new request of them, later */
        v->st->retries++;
        double units = 0;
        for (size_t i = 0; i < rest.n; i++)
            units += read_units(v, rest.slots[i]);
        el_ddb_driver_note_refused(v->drv, units);
        err = send_batch(v, &rest, diag);
    }
    return err;
}

static el_ddb_verdict on_get(el_ddb_driver *d, el_ddb_op *op, const el_ddb_answer *a,
                             void *ctx)
{
    vrun *v = ctx;
    const batch *b = el_ddb_op_user(op);
    el_diag why;
    el_diag_clear(&why);
    el_err err = a->res.outcome == EL_DDB_SUCCESS
                     ? on_answer(v, b, a, &why)
                     : el_diag_set(&why, EL_ESERVICE, "BatchGetItem refused: %s: %s",
                                   a->res.error_type, a->res.message);
    if (!err)
        return EL_DDB_DONE;
    el_ddb_driver_fail(d, err, &why);
    return EL_DDB_STOP;
}

el_err verify_check_set(vrun *v, el_diag *diag)
{
    size_t count = el_sample_count(v->cur), next = 0;
    el_err err = EL_OK;
    while (!err) {
        if (verify_stopping(v))
            return el_diag_set(diag, EL_EINTR, "interrupted");
        while (!err && next < count && el_ddb_driver_wants(v->drv)) {
            batch b = { .n = 0 };
            while (b.n < EL_VERIFY_BATCH_KEYS && next < count)
                b.slots[b.n++] = next++;
            err = send_batch(v, &b, diag);
        }
        if (err || (next >= count && el_ddb_driver_pending(v->drv) == 0))
            break;
        err = el_ddb_driver_step(v->drv, el_ddb_driver_now(v->drv) + 1000, diag);
        verify_progress(v, v->cur_counters ? "checking-counters" : "checking-items",
                        verify_settled(v), count, false);
    }
    return err;
}
