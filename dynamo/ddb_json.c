/*
 * ddb_json.c - reading DynamoDB's JSON responses and writing JSON strings.
 *
 * DESIGN: responses are small next to the requests (a BatchWriteItem answer
 * holds at most the items it did not write), so they are parsed into a yajl
 * tree and read with yajl_tree_get paths; that keeps each reader a short
 * walk over named fields. Parse errors never quote the body: it may hold
 * row data.
 */
#include "dynamo/ddb_client.h"

#include <stdio.h>           /* snprintf */
#include <stdlib.h>          /* malloc, free, strtod */
#include <string.h>          /* memcpy, strlen, strcmp */
#include <yajl/yajl_tree.h>  /* yajl_tree_parse, yajl_tree_get */

#include "common/json_guard.h"
#include "dynamo/ddb_internal.h"

el_err el_ddb_json_put_string(el_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    el_err err = el_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; !err && *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            err = el_buf_append(b, esc, 2);
        } else if (c < 0x20) {
            char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            err = el_buf_append(b, esc, 6);
        } else {
            err = el_buf_putc(b, (char)c);
        }
    }
    return err ? err : el_buf_putc(b, '"');
}

/* yajl_tree_parse needs a NUL-terminated string. */
static el_err parse_tree(const char *body, size_t len, const char *what, yajl_val *root,
                         el_diag *diag)
{
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(body, len, EL_JSON_MAX_DEPTH, 0, &g))
        return el_diag_set(diag, EL_EPARSE, "the %s response is refused: %s", what, g.msg);
    char *copy = malloc(len + 1);
    if (!copy)
        return el_diag_set(diag, EL_ENOMEM, "out of memory parsing the %s response", what);
    if (len)
        memcpy(copy, body, len);
    copy[len] = '\0';
    *root = yajl_tree_parse(copy, NULL, 0);
    free(copy);
    if (!*root || !YAJL_IS_OBJECT(*root)) {
        yajl_tree_free(*root);
        *root = NULL;
        return el_diag_set(diag, EL_EPARSE, "the %s response is not a JSON object", what);
    }
    return EL_OK;
}

static yajl_val get(yajl_val v, const char *key)
{
    const char *path[] = {key, NULL};
    return yajl_tree_get(v, path, yajl_t_any);
}

static double number(yajl_val v)
{
    return YAJL_IS_NUMBER(v) ? strtod(YAJL_GET_NUMBER(v), NULL) : 0.0;
}

static void copy_field(char *dst, size_t cap, yajl_val v)
{
    const char *s = YAJL_GET_STRING(v);
    snprintf(dst, cap, "%s", s ? s : "");
}

/* ---- BatchWriteItem ---- */

/* The string form of a key attribute value ({"S": "x"}, or N/B, which are
 * strings in DynamoDB JSON too). NULL when absent or of another shape. */
static const char *key_value(yajl_val item, const char *name)
{
    yajl_val attr = get(item, name);
    if (!YAJL_IS_OBJECT(attr))
        return NULL;
    static const char *const types[] = {"S", "N", "B"};
    for (size_t i = 0; i < 3; i++) {
        const char *s = YAJL_GET_STRING(get(attr, types[i]));
        if (s)
            return s;
    }
    return NULL;
}

/* One ConsumedCapacity entry: CapacityUnits is the total of table and
 * indexes; older/other shapes give only the parts. */
static double entry_capacity(yajl_val e)
{
    yajl_val cu = get(e, "CapacityUnits");
    if (YAJL_IS_NUMBER(cu))
        return number(cu);
    yajl_val wcu = get(e, "WriteCapacityUnits");
    if (YAJL_IS_NUMBER(wcu))
        return number(wcu);
    double sum = number(get(get(e, "Table"), "CapacityUnits"));
    static const char *const idx[] = {"GlobalSecondaryIndexes", "LocalSecondaryIndexes"};
    for (size_t k = 0; k < 2; k++) {
        yajl_val map = get(e, idx[k]);
        if (!YAJL_IS_OBJECT(map))
            continue;
        for (size_t i = 0; i < map->u.object.len; i++)
            sum += number(get(map->u.object.values[i], "CapacityUnits"));
    }
    return sum;
}

void el_ddb_batch_result_clear(el_ddb_batch_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nunprocessed; i++) {
        free(r->unprocessed[i].pk);
        free(r->unprocessed[i].sk);
    }
    free(r->unprocessed);
    memset(r, 0, sizeof *r);
}

static char *dup_s(const char *s)
{
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

el_err el_ddb_parse_batch_write(const char *body, size_t len, const char *pk_name,
                                const char *sk_name, el_ddb_batch_result *out,
                                el_diag *diag)
{
    memset(out, 0, sizeof *out);
    yajl_val root;
    el_err err = parse_tree(body, len, "BatchWriteItem", &root, diag);
    if (err)
        return err;
    bool has_sk = sk_name && sk_name[0];

    yajl_val cc = get(root, "ConsumedCapacity");
    if (YAJL_IS_ARRAY(cc)) {
        for (size_t i = 0; i < cc->u.array.len; i++)
            out->consumed_wcu += entry_capacity(cc->u.array.values[i]);
    } else if (YAJL_IS_OBJECT(cc)) {
        out->consumed_wcu = entry_capacity(cc);
    }

    yajl_val un = get(root, "UnprocessedItems");
    if (un && !YAJL_IS_OBJECT(un) && !YAJL_IS_NULL(un)) {
        err = el_diag_set(diag, EL_EPARSE, "UnprocessedItems is not an object");
        goto done;
    }
    size_t total = 0;
    for (size_t t = 0; YAJL_IS_OBJECT(un) && t < un->u.object.len; t++) {
        yajl_val list = un->u.object.values[t];
        if (!YAJL_IS_ARRAY(list)) {
            err = el_diag_set(diag, EL_EPARSE, "UnprocessedItems of table '%s' is not a list",
                              un->u.object.keys[t]);
            goto done;
        }
        total += list->u.array.len;
    }
    if (total == 0)
        goto done;
    out->unprocessed = calloc(total, sizeof *out->unprocessed);
    if (!out->unprocessed) {
        err = el_diag_set(diag, EL_ENOMEM, "out of memory parsing UnprocessedItems");
        goto done;
    }
    for (size_t t = 0; t < un->u.object.len; t++) {
        yajl_val list = un->u.object.values[t];
        for (size_t i = 0; i < list->u.array.len; i++) {
            yajl_val w = list->u.array.values[i];
            yajl_val key = get(get(w, "PutRequest"), "Item");
            bool is_delete = false;
            if (!YAJL_IS_OBJECT(key)) {
                key = get(get(w, "DeleteRequest"), "Key");
                is_delete = true;
            }
            const char *pk = YAJL_IS_OBJECT(key) ? key_value(key, pk_name) : NULL;
            const char *sk = has_sk && pk ? key_value(key, sk_name) : NULL;
            if (!pk || (has_sk && !sk)) {
                err = el_diag_set(diag, EL_EPARSE,
                                  "unprocessed write %zu has no string key '%s'", i,
                                  pk ? sk_name : pk_name);
                goto done;
            }
            el_ddb_key *k = &out->unprocessed[out->nunprocessed];
            k->is_delete = is_delete;
            k->pk = dup_s(pk);
            k->sk = sk ? dup_s(sk) : NULL;
            out->nunprocessed++;
            if (!k->pk || (sk && !k->sk)) {
                err = el_diag_set(diag, EL_ENOMEM, "out of memory parsing UnprocessedItems");
                goto done;
            }
        }
    }
done:
    yajl_tree_free(root);
    if (err)
        el_ddb_batch_result_clear(out);
    return err;
}

/* ---- DescribeTable / CreateTable ---- */

static void read_key_schema(yajl_val schema, yajl_val attr_defs, el_key_schema *k)
{
    memset(k, 0, sizeof *k);
    if (!YAJL_IS_ARRAY(schema))
        return;
    for (size_t i = 0; i < schema->u.array.len; i++) {
        yajl_val e = schema->u.array.values[i];
        const char *name = YAJL_GET_STRING(get(e, "AttributeName"));
        const char *kt = YAJL_GET_STRING(get(e, "KeyType"));
        if (!name || !kt)
            continue;
        const char *type = "";
        for (size_t j = 0; YAJL_IS_ARRAY(attr_defs) && j < attr_defs->u.array.len; j++) {
            yajl_val d = attr_defs->u.array.values[j];
            const char *dn = YAJL_GET_STRING(get(d, "AttributeName"));
            const char *dt = YAJL_GET_STRING(get(d, "AttributeType"));
            if (dn && dt && strcmp(dn, name) == 0)
                type = dt;
        }
        if (strcmp(kt, "HASH") == 0) {
            snprintf(k->pk, sizeof k->pk, "%s", name);
            snprintf(k->pk_type, sizeof k->pk_type, "%s", type);
        } else if (strcmp(kt, "RANGE") == 0) {
            snprintf(k->sk, sizeof k->sk, "%s", name);
            snprintf(k->sk_type, sizeof k->sk_type, "%s", type);
        }
    }
}

el_err el_ddb_parse_table_desc(const char *body, size_t len, el_table_desc *out,
                               el_diag *diag)
{
    memset(out, 0, sizeof *out);
    yajl_val root;
    el_err err = parse_tree(body, len, "DescribeTable", &root, diag);
    if (err)
        return err;
    yajl_val t = get(root, "Table");
    if (!YAJL_IS_OBJECT(t))
        t = get(root, "TableDescription");
    if (!YAJL_IS_OBJECT(t)) {
        yajl_tree_free(root);
        return el_diag_set(diag, EL_EPARSE, "the DescribeTable response has no Table");
    }
    yajl_val defs = get(t, "AttributeDefinitions");
    copy_field(out->status, sizeof out->status, get(t, "TableStatus"));
    read_key_schema(get(t, "KeySchema"), defs, &out->key);
    copy_field(out->billing_mode, sizeof out->billing_mode,
               get(get(t, "BillingModeSummary"), "BillingMode"));
    if (!out->billing_mode[0])
        snprintf(out->billing_mode, sizeof out->billing_mode, "PROVISIONED");
    yajl_val gsis = get(t, "GlobalSecondaryIndexes");
    for (size_t i = 0; YAJL_IS_ARRAY(gsis) && i < gsis->u.array.len && i < EL_DDB_MAX_GSI;
         i++) {
        yajl_val g = gsis->u.array.values[i];
        copy_field(out->gsi[i].name, sizeof out->gsi[i].name, get(g, "IndexName"));
        copy_field(out->gsi[i].status, sizeof out->gsi[i].status, get(g, "IndexStatus"));
        copy_field(out->gsi[i].projection, sizeof out->gsi[i].projection,
                   get(get(g, "Projection"), "ProjectionType"));
        read_key_schema(get(g, "KeySchema"), defs, &out->gsi[i].key);
        out->ngsi++;
    }
    yajl_tree_free(root);
    if (!out->key.pk[0])
        return el_diag_set(diag, EL_EPARSE, "the DescribeTable response has no key schema");
    return EL_OK;
}
