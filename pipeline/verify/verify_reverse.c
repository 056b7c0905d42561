/*
 * verify_reverse.c - the reverse check: for a sample of the index
 * partition keys in the input, Query the index and compare the (PK, SK)
 * pairs it lists with the expected ones.
 *
 * DESIGN: a GSI is eventually consistent, so a key that does not match at
 * first is asked again after reverse_recheck_ms and only the second answer
 * is reported. The sample is of unsharded index keys: a hot key's edges,
 * from every source that writes it, are one expected set, checked shard by
 * shard as a reader following its directory item would read them. The
 * Queries go one at a time through the request driver (el_ddb_driver_call):
 * a sample is small, and one at a time keeps a hot index partition from
 * being read in parallel by its own checker.
 *
 * Key sets, expected (verify_run.c) and listed (here), are one format:
 * [u32 shard][u32 len][bytes "PK\0SK"]..., the shard 0 in what a Query
 * lists.
 */
#include "pipeline/verify/verify_run.h"

#include <stdlib.h>  /* calloc, free, qsort */
#include <string.h>  /* memcmp, memcpy, strcmp, strndup */

#include "common/clock.h"      /* el_sleep_ms */
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/sharding/shard.h"    /* el_shard_suffix */

/* An item key "PK\0SK" in a key set, and the shard it goes to (0 when its
 * index key is not sharded, and in what a Query lists). */
typedef struct entry {
    const char *p;
    size_t len;
    uint32_t shard;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Sorts by key and removes duplicates; returns the new count. */
static size_t sort_unique(entry *k, size_t n)
{
    if (n == 0)
        return 0;
    qsort(k, n, sizeof *k, entry_cmp);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (entry_cmp(&k[i], &k[m - 1]) != 0)
            k[m++] = k[i];
    return m;
}

/* Splits a key set into entries (malloc'd; *n of them); NULL when out of
 * memory. */
static entry *split_set(const el_buf *set, size_t *n)
{
    uint32_t head[2]; /* shard, length */
    size_t cap = 0;
    for (size_t off = 0; off + sizeof head <= set->len; cap++) {
        memcpy(head, set->data + off, sizeof head);
        off += sizeof head + head[1];
    }
    entry *e = calloc(cap ? cap : 1, sizeof *e);
    *n = 0;
    for (size_t off = 0; e && off + sizeof head <= set->len;) {
        memcpy(head, set->data + off, sizeof head);
        e[(*n)++] = (entry){ set->data + off + sizeof head, head[1], head[0] };
        off += sizeof head + head[1];
    }
    return e;
}

static el_err build_query(vrun *v, const char *ipk, const el_buf *start)
{
    el_buf *b = &v->req;
    const el_mapping *m = v->m;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"TableName\":");
    err = err ? err : el_json_put_string(b, m->table, strlen(m->table));
    err = err ? err : el_buf_puts(b, ",\"IndexName\":");
    err = err ? err : el_json_put_string(b, m->index_name, strlen(m->index_name));
    err = err ? err : el_buf_puts(b, ",\"KeyConditionExpression\":\"#ipk = :v\","
                                     "\"ProjectionExpression\":\"#pk, #sk\","
                                     "\"ExpressionAttributeNames\":{\"#ipk\":");
    err = err ? err : el_json_put_string(b, m->index_pk_attr, strlen(m->index_pk_attr));
    err = err ? err : el_buf_puts(b, ",\"#pk\":");
    err = err ? err : el_json_put_string(b, m->pk_attr, strlen(m->pk_attr));
    err = err ? err : el_buf_puts(b, ",\"#sk\":");
    err = err ? err : el_json_put_string(b, m->sk_attr, strlen(m->sk_attr));
    err = err ? err : el_buf_puts(b, "},\"ExpressionAttributeValues\":{\":v\":{\"S\":");
    err = err ? err : el_json_put_string(b, ipk, strlen(ipk));
    err = err ? err : el_buf_puts(b, "}},\"ReturnConsumedCapacity\":\"TOTAL\"");
    if (start->len) {
        err = err ? err : el_buf_puts(b, ",\"ExclusiveStartKey\":");
        err = err ? err : el_buf_append(b, start->data, start->len);
    }
    return err ? err : el_buf_putc(b, '}');
}

/* Every (PK, SK) the index lists under ipk, appended to the key set got.
 * A Query of a GSI is an eventually consistent read: its budget estimate
 * is half a unit (the answer's ConsumedCapacity settles it). */
static el_err query_index(vrun *v, const char *ipk, el_buf *got, el_diag *diag)
{
    el_buf start, key;
    el_buf_init(&start, 64 * 1024);
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    el_err err = EL_OK;
    do {
        err = build_query(v, ipk, &start);
        if (err) {
            el_diag_set(diag, err, "Query request: %s", el_strerror(err));
            break;
        }
        el_buf_reset(&v->resp);
        err = el_ddb_driver_call(v->drv, "Query", &v->req, 0.5, &v->resp, diag);
        if (err)
            break;
        el_ddb_query_answer q;
        err = el_ddb_parse_query(v->resp.data, v->resp.len, &q, diag);
        if (err) {
            if (err != EL_ENOMEM)
                err = EL_ESERVICE;
            break;
        }
        for (size_t i = 0; !err && i < el_ddb_val_count(q.items); i++) {
            if (!verify_key_of(v, el_ddb_val_at(q.items, i), &key))
                continue;
            uint32_t head[2] = { 0, (uint32_t)key.len };
            err = el_buf_append(got, head, sizeof head);
            err = err ? err : el_buf_append(got, key.data, key.len);
        }
        el_buf_reset(&start);
        if (!err && q.last_key)
            err = el_ddb_val_put(&start, q.last_key);
        el_ddb_doc_free(q.doc);
        if (err)
            el_diag_set(diag, err, "Query: %s", el_strerror(err));
    } while (!err && start.len > 0);
    el_buf_free(&start);
    el_buf_free(&key);
    return err;
}

/* In full mode the final item of a key decides its index key: a key whose
 * later row moved it to another index partition is not expected under
 * ipk. */
static bool still_under(const vrun *v, const entry *k, const char *ipk)
{
    if (v->o->sample)
        return true;
    size_t slot = el_sample_find(v->items, k->p, k->len);
    if (slot == (size_t)-1)
        return false;
    const el_buf *json = el_sample_value(v->items, slot);
    el_ddb_doc *doc;
    el_diag d;
    el_diag_clear(&d);
    if (el_ddb_doc_parse(json->data, json->len, &doc, &d))
        return false;
    const char *now = el_ddb_item_string(el_ddb_doc_root(doc), v->m->index_pk_attr);
    bool same = now && strcmp(now, ipk) == 0;
    el_ddb_doc_free(doc);
    return same;
}

/* Compares the expected keys exp[0..ne) (sorted, unique) with what the
 * index lists under qkey; counts the mismatches in *mismatches and, with
 * `report`, reports them. */
static el_err compare_listing(vrun *v, const char *qkey, const entry *exp, size_t ne,
                              bool report, size_t *mismatches, el_diag *diag)
{
    el_buf got;
    el_buf_init(&got, VERIFY_REVERSE_SET_MAX);
    size_t na = 0;
    entry *act = NULL;
    el_err err = query_index(v, qkey, &got, diag);
    if (!err && !(act = split_set(&got, &na)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err)
        na = sort_unique(act, na);
    size_t i = 0, j = 0;
    while (!err && (i < ne || j < na)) {
        int c = i == ne ? 1 : j == na ? -1 : entry_cmp(&exp[i], &act[j]);
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        (*mismatches)++;
        if (!report) {
            i += c < 0;
            j += c > 0;
        } else if (c < 0) {
            v->st->reverse_missing++;
            err = verify_report_simple(v, EL_VERIFY_REVERSE_MISSING, exp[i].p, exp[i].len, qkey);
            i++;
        } else {
            v->st->reverse_extra++;
            err = verify_report_simple(v, EL_VERIFY_REVERSE_EXTRA, act[j].p, act[j].len, qkey);
            j++;
        }
        if (err)
            el_diag_set(diag, err, "reporting: %s", el_strerror(err));
    }
    free(act);
    el_buf_free(&got);
    return err;
}

/* Queries one sampled index key and compares. A hot key (n shards in the
 * plan) is read as a reader of the directory reads it: every shard
 * "<key>#0" ... "<key>#<n-1>", each holding exactly the expected edges
 * that go to it, whichever source they come from; and the plain key, which
 * must list nothing (an edge left there is one the readers miss). With
 * `report` false it only sets *mismatches (a first look, see
 * check_targets); with `report` true it also counts and reports them.
 * *expected: the items expected under the key. */
static el_err check_target(vrun *v, size_t slot, bool report, size_t *expected,
                           size_t *mismatches, el_diag *diag)
{
    *mismatches = 0;
    *expected = 0;
    size_t ilen;
    const char *ikey = el_sample_key(v->targets, slot, &ilen);
    size_t n = v->plan ? el_plan_shards(v->plan, ikey, ilen) : 1;
    el_buf qkey;
    el_buf_init(&qkey, EL_DDB_MAX_PK_BYTES + 32);
    size_t ne = 0;
    entry *all = split_set(el_sample_value(v->targets, slot), &ne);
    entry *exp = calloc(ne ? ne : 1, sizeof *exp);
    el_err err = all && exp ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    /* shard q of n (n > 1), then the plain key (q == n, or the only one) */
    for (size_t q = n > 1 ? 0 : n; !err && q <= n; q++) {
        el_buf_reset(&qkey);
        err = q < n ? el_shard_suffix(&qkey, ikey, ilen, q) : el_buf_append(&qkey, ikey, ilen);
        if (err) {
            el_diag_set(diag, err, "out of memory");
            break;
        }
        size_t kept = 0;
        for (size_t i = 0; i < ne; i++)
            if ((n == 1 || all[i].shard == q) && still_under(v, &all[i], el_buf_str(&qkey)))
                exp[kept++] = all[i];
        kept = sort_unique(exp, kept);
        *expected += kept;
        err = compare_listing(v, el_buf_str(&qkey), exp, kept, report, mismatches, diag);
    }
    free(all);
    free(exp);
    el_buf_free(&qkey);
    return err;
}

/* Index keys are only eventually consistent: an item written a moment ago
 * may not be listed yet. So every sampled key is looked at once, and those
 * that do not match are queried again after reverse_recheck_ms; only that
 * second answer is reported. Matching keys are counted from the first. */
el_err verify_check_targets(vrun *v, el_diag *diag)
{
    size_t n = el_sample_count(v->targets), nbad = 0;
    size_t *bad = calloc(n ? n : 1, sizeof *bad);
    if (!bad)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    bool recheck = v->o->reverse_recheck_ms > 0;
    for (size_t i = 0; !err && i < n; i++) {
        size_t ne, mism;
        verify_progress(v, "checking-index", i, n, false);
        err = check_target(v, i, !recheck, &ne, &mism, diag);
        if (err || (recheck && mism)) {
            bad[nbad++] = i;
            continue;
        }
        v->st->reverse_keys++;
        v->st->reverse_expected += ne;
    }
    if (!err && nbad)
        el_sleep_ms(v->o->reverse_recheck_ms);
    for (size_t i = 0; !err && i < nbad; i++) {
        size_t ne, mism;
        err = check_target(v, bad[i], true, &ne, &mism, diag);
        if (!err) {
            v->st->reverse_keys++;
            v->st->reverse_expected += ne;
        }
    }
    free(bad);
    return err;
}

