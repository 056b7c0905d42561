/*
 * ddb_item.c - DynamoDB JSON trees: parsing, walking, comparing values as
 * DynamoDB means them, writing them out.
 *
 * DESIGN: a thin, typed face over yajl's tree (an el_ddb_val is a yajl_val
 * node), so that the modules above need no JSON parser of their own and
 * cannot get DynamoDB's value rules wrong in their own way. Comparison
 * works on the canonical form of each type (numbers as decimal text
 * without leading or trailing zeros, binaries as decoded bytes, sets
 * without order), which is what DynamoDB stores.
 */
#include "formats/ddb_item.h"

#include <stdint.h>          /* uintptr_t */
#include <stdlib.h>          /* malloc, calloc, free */
#include <string.h>          /* memcmp, memcpy, strcmp, strlen */
#include <yajl/yajl_tree.h>  /* the tree */

#include "common/json_guard.h" /* EL_JSON_MAX_DEPTH */
#include "formats/ddb_value.h" /* el_json_put_string */

struct el_ddb_doc {
    yajl_val root;
};

/* An el_ddb_val is a yajl node; these two are the only casts. */
static yajl_val Y(const el_ddb_val *v)
{
    return (yajl_val)(void *)(uintptr_t)v;
}

static const el_ddb_val *V(yajl_val v)
{
    return (const el_ddb_val *)(void *)v;
}

el_err el_ddb_doc_parse(const char *json, size_t len, el_ddb_doc **out, el_diag *diag)
{
    *out = NULL;
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(json, len, EL_JSON_MAX_DEPTH, 0, &g))
        return el_diag_set(diag, EL_EPARSE, "%s", g.msg);
    char *copy = malloc(len + 1);
    el_ddb_doc *doc = calloc(1, sizeof *doc);
    if (!copy || !doc) {
        free(copy);
        free(doc);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (len)
        memcpy(copy, json, len);
    copy[len] = '\0';
    char err_text[128];
    doc->root = yajl_tree_parse(copy, err_text, sizeof err_text);
    free(copy);
    if (!doc->root) {
        free(doc);
        for (char *p = err_text; *p; p++)
            if (*p == '\n')
                *p = ' ';
        return el_diag_set(diag, EL_EPARSE, "not JSON: %.100s", err_text);
    }
    *out = doc;
    return EL_OK;
}

void el_ddb_doc_free(el_ddb_doc *doc)
{
    if (!doc)
        return;
    yajl_tree_free(doc->root);
    free(doc);
}

const el_ddb_val *el_ddb_doc_root(const el_ddb_doc *doc)
{
    return doc ? V(doc->root) : NULL;
}

static yajl_val member(yajl_val obj, const char *name);

const el_ddb_val *el_ddb_val_member(const el_ddb_val *v, const char *name)
{
    return V(member(Y(v), name));
}

size_t el_ddb_val_count(const el_ddb_val *v)
{
    yajl_val y = Y(v);
    if (YAJL_IS_OBJECT(y))
        return y->u.object.len;
    if (YAJL_IS_ARRAY(y))
        return y->u.array.len;
    return 0;
}

const el_ddb_val *el_ddb_val_at(const el_ddb_val *v, size_t i)
{
    yajl_val y = Y(v);
    if (YAJL_IS_OBJECT(y))
        return i < y->u.object.len ? V(y->u.object.values[i]) : NULL;
    if (YAJL_IS_ARRAY(y))
        return i < y->u.array.len ? V(y->u.array.values[i]) : NULL;
    return NULL;
}

const char *el_ddb_val_key(const el_ddb_val *v, size_t i)
{
    yajl_val y = Y(v);
    return YAJL_IS_OBJECT(y) && i < y->u.object.len ? y->u.object.keys[i] : NULL;
}

bool el_ddb_val_is_object(const el_ddb_val *v)
{
    return YAJL_IS_OBJECT(Y(v));
}

const char *el_ddb_val_string(const el_ddb_val *v)
{
    return YAJL_GET_STRING(Y(v));
}

const char *el_ddb_item_string(const el_ddb_val *item, const char *name)
{
    return YAJL_GET_STRING(member(member(Y(item), name), "S"));
}

/* ---- numbers ---- */

el_err el_ddb_number_canon(const char *s, size_t len, el_buf *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    char digits[128];
    size_t nd = 0, seen = 0;
    size_t zeros = 0;        /* zeros after the last digit kept, kept only if one follows */
    long exp = 0;            /* value = digits * 10^exp */
    bool point = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && !point) {
            point = true;
            continue;
        }
        if (c < '0' || c > '9')
            break;
        seen++;
        if (point)
            exp--;
        if (c == '0') {
            zeros += nd > 0; /* a leading zero counts for nothing */
            continue;
        }
        if (nd + zeros + 1 > sizeof digits)
            return EL_EPARSE;
        memset(digits + nd, '0', zeros);
        nd += zeros;
        zeros = 0;
        digits[nd++] = c;
    }
    if (seen == 0)
        return EL_EPARSE;
    exp += (long)zeros;      /* trailing zeros: "1.500" is 15 * 10^-1 */
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        long e = 0;
        size_t start = i;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < 100000)
                e = e * 10 + (s[i] - '0');
        if (i == start)
            return EL_EPARSE;
        exp += eneg ? -e : e;
    }
    if (i != len)
        return EL_EPARSE;
    /* zero is "0" whatever its exponent; any other number past 10^+-1000
     * is none DynamoDB holds (and would be that many zeros to write) */
    if (nd > 0 && (exp > 1000 || exp < -1000))
        return EL_EPARSE;
    while (nd > 0 && digits[nd - 1] == '0') {
        nd--;
        exp++;
    }
    size_t mark = out->len;
    el_err err = EL_OK;
    if (nd == 0)
        return el_buf_putc(out, '0');
    if (neg)
        err = el_buf_putc(out, '-');
    if (exp >= 0) {
        if (!err)
            err = el_buf_append(out, digits, nd);
        for (long z = 0; !err && z < exp; z++)
            err = el_buf_putc(out, '0');
    } else {
        long point_at = (long)nd + exp;   /* digits before the point */
        if (point_at > 0) {
            err = err ? err : el_buf_append(out, digits, (size_t)point_at);
            err = err ? err : el_buf_putc(out, '.');
            err = err ? err : el_buf_append(out, digits + point_at, nd - (size_t)point_at);
        } else {
            err = err ? err : el_buf_puts(out, "0.");
            for (long z = 0; !err && z < -point_at; z++)
                err = el_buf_putc(out, '0');
            err = err ? err : el_buf_append(out, digits, nd);
        }
    }
    if (err)
        el_buf_truncate(out, mark);
    return err;
}

bool el_ddb_numbers_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    el_buf x, y;
    el_buf_init(&x, 4096);
    el_buf_init(&y, 4096);
    bool eq = el_ddb_number_canon(a, strlen(a), &x) == EL_OK &&
              el_ddb_number_canon(b, strlen(b), &y) == EL_OK &&
              strcmp(el_buf_str(&x), el_buf_str(&y)) == 0;
    el_buf_free(&x);
    el_buf_free(&y);
    return eq;
}

static int b64_digit(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

/* Decodes base64 (padding optional, whitespace skipped) into a malloc'd
 * buffer; NULL when the text is not base64 or memory runs out. */
static unsigned char *b64_decode(const char *s, size_t *outlen)
{
    size_t len = strlen(s);
    unsigned char *out = malloc(len / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t n = 0;
    unsigned acc = 0, bits = 0;
    bool pad = false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad = true;
            continue;
        }
        int d = b64_digit(c);
        if (d < 0 || pad) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *outlen = n;
    return out;
}

static bool binaries_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    if (strcmp(a, b) == 0)
        return true;
    size_t la, lb;
    unsigned char *x = b64_decode(a, &la), *y = b64_decode(b, &lb);
    bool eq = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return eq;
}

typedef bool (*scalar_eq)(const char *a, const char *b);

static bool strings_equal(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Sets (SS, NS, BS): same size, and every element of a has an equal one in
 * b (DynamoDB sets have no duplicates). */
static bool sets_equal(yajl_val a, yajl_val b, scalar_eq eq)
{
    if (!YAJL_IS_ARRAY(a) || !YAJL_IS_ARRAY(b) || a->u.array.len != b->u.array.len)
        return false;
    for (size_t i = 0; i < a->u.array.len; i++) {
        bool found = false;
        for (size_t j = 0; j < b->u.array.len && !found; j++)
            found = eq(YAJL_GET_STRING(a->u.array.values[i]),
                       YAJL_GET_STRING(b->u.array.values[j]));
        if (!found)
            return false;
    }
    return true;
}

/* ---- trees ---- */

static yajl_val member(yajl_val obj, const char *name)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], name) == 0)
            return obj->u.object.values[i];
    return NULL;
}

static bool values_equal(yajl_val a, yajl_val b)
{
    if (!YAJL_IS_OBJECT(a) || !YAJL_IS_OBJECT(b) || a->u.object.len != 1 ||
        b->u.object.len != 1)
        return false;
    const char *type = a->u.object.keys[0];
    if (strcmp(type, b->u.object.keys[0]) != 0)
        return false;
    yajl_val x = a->u.object.values[0], y = b->u.object.values[0];
    if (strcmp(type, "S") == 0)
        return strings_equal(YAJL_GET_STRING(x), YAJL_GET_STRING(y));
    if (strcmp(type, "N") == 0)
        return el_ddb_numbers_equal(YAJL_GET_STRING(x), YAJL_GET_STRING(y));
    if (strcmp(type, "B") == 0)
        return binaries_equal(YAJL_GET_STRING(x), YAJL_GET_STRING(y));
    if (strcmp(type, "BOOL") == 0 || strcmp(type, "NULL") == 0)
        return (YAJL_IS_TRUE(x) && YAJL_IS_TRUE(y)) || (YAJL_IS_FALSE(x) && YAJL_IS_FALSE(y));
    if (strcmp(type, "SS") == 0)
        return sets_equal(x, y, strings_equal);
    if (strcmp(type, "NS") == 0)
        return sets_equal(x, y, el_ddb_numbers_equal);
    if (strcmp(type, "BS") == 0)
        return sets_equal(x, y, binaries_equal);
    if (strcmp(type, "L") == 0) {
        if (!YAJL_IS_ARRAY(x) || !YAJL_IS_ARRAY(y) || x->u.array.len != y->u.array.len)
            return false;
        for (size_t i = 0; i < x->u.array.len; i++)
            if (!values_equal(x->u.array.values[i], y->u.array.values[i]))
                return false;
        return true;
    }
    if (strcmp(type, "M") == 0) {
        if (!YAJL_IS_OBJECT(x) || !YAJL_IS_OBJECT(y) || x->u.object.len != y->u.object.len)
            return false;
        for (size_t i = 0; i < x->u.object.len; i++)
            if (!values_equal(x->u.object.values[i], member(y, x->u.object.keys[i])))
                return false;
        return true;
    }
    return false;
}

static el_err json_put(el_buf *out, yajl_val v)
{
    el_err err = EL_OK;
    if (!v)
        return el_buf_puts(out, "null");
    switch (v->type) {
    case yajl_t_string:
        return el_json_put_string(out, v->u.string, strlen(v->u.string));
    case yajl_t_number:
        return el_buf_puts(out, YAJL_GET_NUMBER(v));
    case yajl_t_true: return el_buf_puts(out, "true");
    case yajl_t_false: return el_buf_puts(out, "false");
    case yajl_t_null: return el_buf_puts(out, "null");
    case yajl_t_object:
        err = el_buf_putc(out, '{');
        for (size_t i = 0; !err && i < v->u.object.len; i++) {
            if (i)
                err = el_buf_putc(out, ',');
            const char *k = v->u.object.keys[i];
            err = err ? err : el_json_put_string(out, k, strlen(k));
            err = err ? err : el_buf_putc(out, ':');
            err = err ? err : json_put(out, v->u.object.values[i]);
        }
        return err ? err : el_buf_putc(out, '}');
    case yajl_t_array:
        err = el_buf_putc(out, '[');
        for (size_t i = 0; !err && i < v->u.array.len; i++) {
            if (i)
                err = el_buf_putc(out, ',');
            err = err ? err : json_put(out, v->u.array.values[i]);
        }
        return err ? err : el_buf_putc(out, ']');
    default:
        return EL_EINTERNAL;
    }
}


bool el_ddb_values_equal(const el_ddb_val *expected, const el_ddb_val *actual)
{
    return values_equal(Y(expected), Y(actual));
}

el_err el_ddb_val_put(el_buf *out, const el_ddb_val *v)
{
    return json_put(out, Y(v));
}
