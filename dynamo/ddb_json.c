/*
 * ddb_json.c - reading DynamoDB's JSON responses and writing JSON strings.
 *
 * DESIGN: responses are small next to the requests (a BatchWriteItem answer
 * holds at most the items it did not write), so they are parsed into a yajl
 * tree and read with yajl_tree_get paths; that keeps each reader a short
 * walk over named fields. Parse errors never quote the body: it may hold
 * row data. The one exception is the answer of nearly every BatchWriteItem,
 * "nothing unprocessed" plus capacity totals: a scan that recognises
 * exactly that shape (and gives up on anything else, which then goes to
 * the tree) costs a few hundred instructions instead of a tree per answer.
 */
#include "dynamo/ddb_client.h"

#include <stdbool.h>         /* the all-done scanner's answers */
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

/* ---- BatchWriteItem: the all-done answer, without a tree ---- */

/* A cursor over text that need not be NUL-terminated. */
typedef struct scan {
    const char *p, *end;
} scan;

/* Nesting the scanner follows inside a ConsumedCapacity entry (the index
 * maps are 2 levels deep); anything deeper goes to the tree parse. */
#define SCAN_MAX_DEPTH 4

static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* Consumes c after optional whitespace. */
static bool scan_char(scan *s, char c)
{
    skip_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

static bool is_digit(scan *s)
{
    return s->p < s->end && *s->p >= '0' && *s->p <= '9';
}

/* A string of printable ASCII without escapes (table, index and field
 * names are): anything else (escapes, UTF-8 that yajl would validate) is
 * left to the tree parse. */
static bool scan_plain_string(scan *s, const char **str, size_t *len)
{
    if (!scan_char(s, '"'))
        return false;
    const char *start = s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return false;
        s->p++;
    }
    if (s->p == s->end)
        return false;
    *str = start;
    *len = (size_t)(s->p - start);
    s->p++;
    return true;
}

static bool scan_key(scan *s, const char **key, size_t *len)
{
    return scan_plain_string(s, key, len) && scan_char(s, ':');
}

static bool key_is(const char *key, size_t len, const char *name)
{
    return strlen(name) == len && memcmp(key, name, len) == 0;
}

/* A number by RFC 8259's grammar; *v as strtod reads the same text, which
 * is what number() does with yajl's copy of it. */
static bool scan_number(scan *s, double *v)
{
    skip_ws(s);
    const char *start = s->p;
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (!is_digit(s))
        return false;
    if (*s->p++ != '0')
        while (is_digit(s))
            s->p++;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!is_digit(s))
            return false;
        while (is_digit(s))
            s->p++;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!is_digit(s))
            return false;
        while (is_digit(s))
            s->p++;
    }
    char text[64];
    size_t n = (size_t)(s->p - start);
    if (n >= sizeof text)
        return false;
    memcpy(text, start, n);
    text[n] = '\0';
    if (v)
        *v = strtod(text, NULL);
    return true;
}

static bool scan_word(scan *s, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

/* Steps over one value of the shapes a ConsumedCapacity entry holds. */
static bool scan_skip(scan *s, int depth)
{
    skip_ws(s);
    if (s->p == s->end || depth > SCAN_MAX_DEPTH)
        return false;
    const char *str;
    size_t len;
    switch (*s->p) {
    case '"':
        return scan_plain_string(s, &str, &len);
    case 't':
        return scan_word(s, "true");
    case 'f':
        return scan_word(s, "false");
    case 'n':
        return scan_word(s, "null");
    case '{':
        s->p++;
        if (scan_char(s, '}'))
            return true;
        do {
            if (!scan_key(s, &str, &len) || !scan_skip(s, depth + 1))
                return false;
        } while (scan_char(s, ','));
        return scan_char(s, '}');
    case '[':
        s->p++;
        if (scan_char(s, ']'))
            return true;
        do {
            if (!scan_skip(s, depth + 1))
                return false;
        } while (scan_char(s, ','));
        return scan_char(s, ']');
    default:
        return scan_number(s, NULL);
    }
}

/* One ConsumedCapacity entry with its total, CapacityUnits, given once;
 * entries without it are summed from their parts by the tree parse. */
static bool scan_entry(scan *s, double *units)
{
    bool have = false;
    if (!scan_char(s, '{'))
        return false;
    do {
        const char *key;
        size_t len;
        if (!scan_key(s, &key, &len))
            return false;
        if (key_is(key, len, "CapacityUnits")) {
            if (have || !scan_number(s, units))
                return false;
            have = true;
        } else if (!scan_skip(s, 1)) {
            return false;
        }
    } while (scan_char(s, ','));
    return scan_char(s, '}') && have;
}

bool el_ddb_batch_write_all_done(const char *body, size_t len, double *consumed_wcu)
{
    scan s = { body, body + len };
    bool seen_unprocessed = false, seen_capacity = false;
    double sum = 0; /* summed in the tree parse's order: the same double */
    if (!scan_char(&s, '{'))
        return false;
    if (!scan_char(&s, '}')) {
        do {
            const char *key;
            size_t klen;
            if (!scan_key(&s, &key, &klen))
                return false;
            if (key_is(key, klen, "UnprocessedItems") && !seen_unprocessed) {
                seen_unprocessed = true;
                if (!scan_char(&s, '{') || !scan_char(&s, '}'))
                    return false;
            } else if (key_is(key, klen, "ConsumedCapacity") && !seen_capacity) {
                seen_capacity = true;
                if (!scan_char(&s, '['))
                    return false;
                if (!scan_char(&s, ']')) {
                    do {
                        double units;
                        if (!scan_entry(&s, &units))
                            return false;
                        sum += units;
                    } while (scan_char(&s, ','));
                    if (!scan_char(&s, ']'))
                        return false;
                }
            } else {
                return false; /* another field, or one given twice */
            }
        } while (scan_char(&s, ','));
        if (!scan_char(&s, '}'))
            return false;
    }
    skip_ws(&s);
    if (s.p != s.end)
        return false;
    *consumed_wcu = sum;
    return true;
}

el_err el_ddb_parse_batch_write(const char *body, size_t len, const char *pk_name,
                                const char *sk_name, el_ddb_batch_result *out,
                                el_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (el_ddb_batch_write_all_done(body, len, &out->consumed_wcu))
        return EL_OK;
    return el_ddb_parse_batch_write_tree(body, len, pk_name, sk_name, out, diag);
}

el_err el_ddb_parse_batch_write_tree(const char *body, size_t len, const char *pk_name,
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

static void read_warm(yajl_val w, el_warm_desc *out)
{
    copy_field(out->status, sizeof out->status, get(w, "Status"));
    out->write_units = number(get(w, "WriteUnitsPerSecond"));
    out->read_units = number(get(w, "ReadUnitsPerSecond"));
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
        out->gsi[i].write_units =
            number(get(get(g, "ProvisionedThroughput"), "WriteCapacityUnits"));
        out->gsi[i].max_write_units =
            number(get(get(g, "OnDemandThroughput"), "MaxWriteRequestUnits"));
        if (out->gsi[i].max_write_units < 0) /* -1: no maximum set */
            out->gsi[i].max_write_units = 0;
        read_warm(get(g, "WarmThroughput"), &out->gsi[i].warm);
        out->ngsi++;
    }
    out->write_units = number(get(get(t, "ProvisionedThroughput"), "WriteCapacityUnits"));
    out->max_write_units = number(get(get(t, "OnDemandThroughput"), "MaxWriteRequestUnits"));
    if (out->max_write_units < 0)
        out->max_write_units = 0;
    read_warm(get(t, "WarmThroughput"), &out->warm);
    yajl_tree_free(root);
    if (!out->key.pk[0])
        return el_diag_set(diag, EL_EPARSE, "the DescribeTable response has no key schema");
    return EL_OK;
}

el_err el_ddb_parse_limits(const char *body, size_t len, el_ddb_limits *out, el_diag *diag)
{
    memset(out, 0, sizeof *out);
    yajl_val root;
    el_err err = parse_tree(body, len, "DescribeLimits", &root, diag);
    if (err)
        return err;
    out->table_max_wcu = number(get(root, "TableMaxWriteCapacityUnits"));
    out->account_max_wcu = number(get(root, "AccountMaxWriteCapacityUnits"));
    yajl_tree_free(root);
    return EL_OK;
}
