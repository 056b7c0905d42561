/*
 * ddb_answers.c - what every DynamoDB answer says about capacity: the
 * ConsumedCapacity of BatchWriteItem, BatchGetItem, TransactWriteItems
 * (a list of entries), UpdateItem and Query (one entry); and the reasons a
 * TransactWriteItems was cancelled.
 *
 * DESIGN: the request driver needs the consumed units of every answer to
 * settle its budget, whatever the operation, and some answers are large
 * (a BatchGetItem brings up to 16 MB of items). So this is a streaming
 * parse (yajl's callbacks, no tree) that looks only at the path
 * ConsumedCapacity[i] and ignores everything else, values of items
 * included: an attribute that happens to be named CapacityUnits inside an
 * item is at another path and never counts.
 */
#include "dynamo/ddb_client.h"
#include "dynamo/ddb_internal.h"

#include <stdbool.h>         /* bool */
#include <stdio.h>           /* snprintf */
#include <stdlib.h>          /* strtod, malloc */
#include <string.h>          /* memcmp, strchr */
#include <yajl/yajl_parse.h> /* the streaming parser */
#include <yajl/yajl_tree.h>  /* the (small) cancellation answers */

#include "common/json_guard.h" /* EL_JSON_MAX_DEPTH */

/* What the parser knows of where it is. Depth 1 is the answer's object. */
typedef struct cc_scan {
    int depth;
    int cc_depth;        /* depth of the ConsumedCapacity value, 0 = not inside */
    int entry_depth;     /* depth of the entry object being read, 0 = none */
    bool key_is_cc;      /* the last key at depth 1 was ConsumedCapacity */
    int field;           /* the entry's field whose value comes next */
    int idx_depth;       /* inside GlobalSecondaryIndexes/LocalSecondaryIndexes: its depth */
    bool in_table;       /* inside the entry's Table object */
    bool idx_key_cu;     /* the last key inside an index's object was CapacityUnits */
    bool table_key_cu;
    /* the entry being read */
    bool has_cu, has_wcu, has_rcu;
    double cu, wcu, rcu, parts;
    double total;
    bool any_rcu, any_wcu;  /* some entry said ReadCapacityUnits / WriteCapacityUnits */
} cc_scan;

enum { F_NONE, F_CU, F_WCU, F_RCU, F_TABLE, F_INDEXES };

static bool key_is(const unsigned char *k, size_t n, const char *name)
{
    size_t len = strlen(name);
    return n == len && memcmp(k, name, n) == 0;
}

static void entry_begin(cc_scan *s)
{
    s->entry_depth = s->depth;
    s->has_cu = s->has_wcu = s->has_rcu = false;
    s->cu = s->wcu = s->rcu = s->parts = 0;
    s->field = F_NONE;
    s->idx_depth = 0;
    s->in_table = false;
}

/* An entry's total: CapacityUnits (with ReturnConsumedCapacity INDEXES it
 * includes the indexes), else the write or read total, else its parts. */
static void entry_end(cc_scan *s)
{
    s->total += s->has_cu ? s->cu : s->has_wcu ? s->wcu : s->has_rcu ? s->rcu : s->parts;
    s->entry_depth = 0;
}

static int on_number(void *ctx, const char *v, size_t n)
{
    cc_scan *s = ctx;
    char buf[64];
    if (!s->entry_depth || n >= sizeof buf)
        return 1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    double x = strtod(buf, NULL);
    if (s->depth == s->entry_depth) {
        if (s->field == F_CU) {
            s->cu = x;
            s->has_cu = true;
        } else if (s->field == F_WCU) {
            s->wcu = x;
            s->has_wcu = s->any_wcu = true;
        } else if (s->field == F_RCU) {
            s->rcu = x;
            s->has_rcu = s->any_rcu = true;
        }
        s->field = F_NONE;
    } else if (s->in_table && s->depth == s->entry_depth + 1 && s->table_key_cu) {
        s->parts += x;
        s->table_key_cu = false;
    } else if (s->idx_depth && s->depth == s->idx_depth + 1 && s->idx_key_cu) {
        s->parts += x;
        s->idx_key_cu = false;
    }
    return 1;
}

static int on_scalar(void *ctx)
{
    cc_scan *s = ctx;
    if (s->entry_depth && s->depth == s->entry_depth)
        s->field = F_NONE;
    s->key_is_cc = false;
    return 1;
}

static int on_bool(void *ctx, int b)
{
    (void)b;
    return on_scalar(ctx);
}

static int on_string(void *ctx, const unsigned char *v, size_t n)
{
    (void)v;
    (void)n;
    return on_scalar(ctx);
}

static int on_map_key(void *ctx, const unsigned char *k, size_t n)
{
    cc_scan *s = ctx;
    if (s->depth == 1) {
        s->key_is_cc = key_is(k, n, "ConsumedCapacity");
        return 1;
    }
    if (!s->entry_depth)
        return 1;
    if (s->depth == s->entry_depth) {
        s->field = key_is(k, n, "CapacityUnits")        ? F_CU
                   : key_is(k, n, "WriteCapacityUnits") ? F_WCU
                   : key_is(k, n, "ReadCapacityUnits")  ? F_RCU
                   : key_is(k, n, "Table")              ? F_TABLE
                   : key_is(k, n, "GlobalSecondaryIndexes") ||
                           key_is(k, n, "LocalSecondaryIndexes")
                       ? F_INDEXES
                       : F_NONE;
    } else if (s->in_table && s->depth == s->entry_depth + 1) {
        s->table_key_cu = key_is(k, n, "CapacityUnits");
    } else if (s->idx_depth && s->depth == s->idx_depth + 1) {
        s->idx_key_cu = key_is(k, n, "CapacityUnits");
    }
    return 1;
}

static int on_start_map(void *ctx)
{
    cc_scan *s = ctx;
    s->depth++;
    if (s->depth > EL_JSON_MAX_DEPTH)
        return 0;
    if (s->depth == 2 && s->key_is_cc) {
        s->cc_depth = 2;
        entry_begin(s); /* ConsumedCapacity: {...}, one entry */
    } else if (s->cc_depth && s->depth == s->cc_depth + 1 && !s->entry_depth) {
        entry_begin(s); /* ConsumedCapacity: [{...}, ...] */
    } else if (s->entry_depth && s->depth == s->entry_depth + 1) {
        if (s->field == F_TABLE)
            s->in_table = true;
        else if (s->field == F_INDEXES)
            s->idx_depth = s->depth;
        s->field = F_NONE;
    }
    s->key_is_cc = false;
    return 1;
}

static int on_end_map(void *ctx)
{
    cc_scan *s = ctx;
    if (s->entry_depth && s->depth == s->entry_depth) {
        entry_end(s);
        if (s->cc_depth == s->depth)
            s->cc_depth = 0;
    } else if (s->in_table && s->depth == s->entry_depth + 1) {
        s->in_table = false;
    } else if (s->idx_depth && s->depth == s->idx_depth) {
        s->idx_depth = 0;
    }
    s->depth--;
    return 1;
}

static int on_start_array(void *ctx)
{
    cc_scan *s = ctx;
    s->depth++;
    if (s->depth > EL_JSON_MAX_DEPTH)
        return 0;
    if (s->depth == 2 && s->key_is_cc)
        s->cc_depth = 2;
    if (s->entry_depth && s->depth == s->entry_depth + 1)
        s->field = F_NONE;
    s->key_is_cc = false;
    return 1;
}

static int on_end_array(void *ctx)
{
    cc_scan *s = ctx;
    if (s->cc_depth == s->depth)
        s->cc_depth = 0;
    s->depth--;
    return 1;
}

static int on_null(void *ctx)
{
    return on_scalar(ctx);
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

static bool scan(const char *body, size_t len, cc_scan *s)
{
    yajl_handle h = yajl_alloc(&callbacks, NULL, s);
    if (!h)
        return false;
    bool ok = yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok &&
              yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

double el_ddb_answer_units(const char *body, size_t len, bool *all_done)
{
    double fast;
    *all_done = el_ddb_batch_write_all_done(body, len, &fast);
    if (*all_done)
        return fast; /* nearly every BatchWriteItem answer: no parser at all */
    cc_scan s = { 0 };
    return scan(body, len, &s) ? s.total : 0;
}

double el_ddb_consumed_units(const char *body, size_t len)
{
    bool all_done;
    return el_ddb_answer_units(body, len, &all_done);
}

bool el_ddb_txn_replayed(const char *body, size_t len)
{
    cc_scan s = { 0 };
    return scan(body, len, &s) && s.any_rcu && !s.any_wcu;
}

/* ---- TransactionCanceledException ---- */

/* Copies the "Code" of each CancellationReasons entry (the list is in the
 * transaction's order; an entry without a code is "None"). */
el_err el_ddb_cancellation_codes(const char *body, size_t len, const char *message,
                                 el_ddb_cancel_code *codes, size_t max, size_t *n)
{
    *n = 0;
    el_diag g;
    el_diag_clear(&g);
    yajl_val root = NULL;
    if (len && !el_json_guard(body, len, EL_JSON_MAX_DEPTH, 0, &g)) {
        char *copy = malloc(len + 1);
        if (!copy)
            return EL_ENOMEM;
        memcpy(copy, body, len);
        copy[len] = '\0';
        root = yajl_tree_parse(copy, NULL, 0);
        free(copy);
    }
    yajl_val reasons = root ? yajl_tree_get(root, (const char *[]){ "CancellationReasons", NULL },
                                            yajl_t_array)
                            : NULL;
    if (reasons) {
        for (size_t i = 0; i < reasons->u.array.len && *n < max; i++) {
            yajl_val code = yajl_tree_get(reasons->u.array.values[i],
                                          (const char *[]){ "Code", NULL }, yajl_t_string);
            snprintf(codes[(*n)++].code, sizeof codes[0].code, "%s",
                     code ? YAJL_GET_STRING(code) : "None");
        }
        yajl_tree_free(root);
        return EL_OK;
    }
    yajl_tree_free(root);
    /* no list to read: the message has the codes, "... [ConditionalCheckFailed, None]" */
    const char *lb = message ? strchr(message, '[') : NULL;
    for (const char *p = lb ? lb + 1 : NULL; p && *p && *p != ']' && *n < max;) {
        const char *e = p + strcspn(p, ",]");
        snprintf(codes[(*n)++].code, sizeof codes[0].code, "%.*s", (int)(e - p), p);
        p = *e == ',' ? e + 1 + (e[1] == ' ') : e;
    }
    return EL_OK;
}

/* ---- BatchGetItem and Query ---- */

static el_err parse_object(const char *body, size_t len, const char *what, el_ddb_doc **doc,
                           el_diag *diag)
{
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_ddb_doc_parse(body, len, doc, &d);
    if (err)
        return el_diag_set(diag, err, "the %s answer is refused: %s", what, d.msg);
    if (!el_ddb_val_is_object(el_ddb_doc_root(*doc))) {
        el_ddb_doc_free(*doc);
        *doc = NULL;
        return el_diag_set(diag, EL_EPARSE, "the %s answer is not a JSON object", what);
    }
    return EL_OK;
}

el_err el_ddb_parse_batch_get(const char *body, size_t len, const char *table,
                              el_ddb_get_answer *out, el_diag *diag)
{
    memset(out, 0, sizeof *out);
    el_err err = parse_object(body, len, "BatchGetItem", &out->doc, diag);
    if (err)
        return err;
    const el_ddb_val *root = el_ddb_doc_root(out->doc);
    out->items = el_ddb_val_member(el_ddb_val_member(root, "Responses"), table);
    out->unprocessed = el_ddb_val_member(
        el_ddb_val_member(el_ddb_val_member(root, "UnprocessedKeys"), table), "Keys");
    return EL_OK;
}

el_err el_ddb_parse_query(const char *body, size_t len, el_ddb_query_answer *out,
                          el_diag *diag)
{
    memset(out, 0, sizeof *out);
    el_err err = parse_object(body, len, "Query", &out->doc, diag);
    if (err)
        return err;
    const el_ddb_val *root = el_ddb_doc_root(out->doc);
    out->items = el_ddb_val_member(root, "Items");
    out->last_key = el_ddb_val_member(root, "LastEvaluatedKey");
    if (!el_ddb_val_is_object(out->last_key))
        out->last_key = NULL;
    return EL_OK;
}

/* ---- ThrottlingReasons ---- */

static const char *const reason_names[EL_THR_COUNT] = {
    [EL_THR_TABLE_READ_KEY_RANGE] = "TableReadKeyRangeThroughputExceeded",
    [EL_THR_TABLE_WRITE_KEY_RANGE] = "TableWriteKeyRangeThroughputExceeded",
    [EL_THR_INDEX_READ_KEY_RANGE] = "IndexReadKeyRangeThroughputExceeded",
    [EL_THR_INDEX_WRITE_KEY_RANGE] = "IndexWriteKeyRangeThroughputExceeded",
    [EL_THR_TABLE_READ_PROVISIONED] = "TableReadProvisionedThroughputExceeded",
    [EL_THR_TABLE_WRITE_PROVISIONED] = "TableWriteProvisionedThroughputExceeded",
    [EL_THR_INDEX_READ_PROVISIONED] = "IndexReadProvisionedThroughputExceeded",
    [EL_THR_INDEX_WRITE_PROVISIONED] = "IndexWriteProvisionedThroughputExceeded",
    [EL_THR_TABLE_READ_ACCOUNT] = "TableReadAccountLimitExceeded",
    [EL_THR_TABLE_WRITE_ACCOUNT] = "TableWriteAccountLimitExceeded",
    [EL_THR_INDEX_READ_ACCOUNT] = "IndexReadAccountLimitExceeded",
    [EL_THR_INDEX_WRITE_ACCOUNT] = "IndexWriteAccountLimitExceeded",
    [EL_THR_TABLE_READ_MAX_ON_DEMAND] = "TableReadMaxOnDemandThroughputExceeded",
    [EL_THR_TABLE_WRITE_MAX_ON_DEMAND] = "TableWriteMaxOnDemandThroughputExceeded",
    [EL_THR_INDEX_READ_MAX_ON_DEMAND] = "IndexReadMaxOnDemandThroughputExceeded",
    [EL_THR_INDEX_WRITE_MAX_ON_DEMAND] = "IndexWriteMaxOnDemandThroughputExceeded",
    [EL_THR_OTHER] = "Other",
};

const char *el_ddb_throttle_reason_name(el_ddb_throttle_reason r)
{
    return r < EL_THR_COUNT ? reason_names[r] : "Other";
}

el_ddb_throttle_reason el_ddb_throttle_reason_parse(const char *name)
{
    for (int r = 0; r < EL_THR_OTHER; r++)
        if (strcmp(reason_names[r], name) == 0)
            return (el_ddb_throttle_reason)r;
    return EL_THR_OTHER;
}

unsigned el_ddb_throttling_reasons(const char *body, size_t len, char *resource, size_t cap)
{
    if (cap)
        resource[0] = '\0';
    if (!body || !len || len > 65536)
        return 0; /* a throttling answer is a short error body */
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(body, len, EL_JSON_MAX_DEPTH, 0, &g))
        return 0;
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, body, len);
    copy[len] = '\0';
    yajl_val root = yajl_tree_parse(copy, NULL, 0);
    free(copy);
    yajl_val list = root ? yajl_tree_get(root, (const char *[]){ "ThrottlingReasons", NULL },
                                         yajl_t_array)
                         : NULL;
    unsigned mask = 0;
    for (size_t i = 0; list && i < list->u.array.len; i++) {
        yajl_val e = list->u.array.values[i];
        yajl_val r = yajl_tree_get(e, (const char *[]){ "reason", NULL }, yajl_t_string);
        yajl_val res = yajl_tree_get(e, (const char *[]){ "resource", NULL }, yajl_t_string);
        if (!r)
            continue;
        mask |= 1u << el_ddb_throttle_reason_parse(YAJL_GET_STRING(r));
        if (res && cap && !resource[0])
            snprintf(resource, cap, "%s", YAJL_GET_STRING(res));
    }
    yajl_tree_free(root);
    return mask;
}
