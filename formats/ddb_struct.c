/*
 * ddb_struct.c - JSON texts to M/L/N/S/BOOL/NULL, delimited texts to SS/NS.
 *
 * DESIGN: the JSON goes through yajl's event parser, not its tree: the
 * events write DynamoDB JSON straight into the caller's buffer (no tree to
 * build and free recursively), and the yajl_number callback hands over the
 * number's raw text, so a number keeps the digits the database wrote and is
 * checked by the same rule as every N attribute (el_ddb_number_put). The
 * depth is checked as each container opens, so "[[[[..." stops at level 32
 * instead of costing a stack. Duplicate member names are found by sorting
 * each object's names when it closes (n log n, where a scan per name would
 * be quadratic in a hostile 400 KB object). Sets are sorted too, which both
 * collapses duplicates and costs nothing: a set has no order.
 */
#include "formats/ddb_struct.h"

#include <stdio.h>           /* snprintf */
#include <stdlib.h>          /* calloc, free, qsort */
#include <string.h>          /* memcmp, strlen */
#include <yajl/yajl_parse.h> /* the event parser */

#include "common/utf8.h"
#include "formats/ddb_item.h"  /* el_ddb_number_canon */
#include "formats/ddb_value.h" /* el_json_put_string, el_ddb_number_put */

/* A name or a member: bytes at off..off+len of some buffer. */
typedef struct span {
    const char *base;          /* set just before a sort: buffers move while filling */
    size_t off, len;
    size_t orig_off, orig_len; /* NS: the member as written (off/len: canonical) */
} span;

typedef struct frame {
    bool is_map;
    size_t count;      /* elements written so far */
    size_t names_at;   /* this map's first name in `names` (spans) */
    size_t text_at;    /* and its first byte in `text` */
} frame;

struct el_ddb_struct {
    el_buf text;   /* names of the open maps; NS: canonical members */
    el_buf spans;  /* span records into text (or into the set's input) */
    el_buf check;  /* NS: a member's number checked here before it is kept */
    char why[192];
    /* the JSON walk in progress */
    el_buf *out;
    frame stack[EL_DDB_MAX_CONTAINERS];
    size_t depth;
    size_t size, max_size;
    el_err err;        /* an el_buf failure, to be returned as it is */
    const char *fail;  /* a reason to reject, set by a callback that stops */
};

el_err el_ddb_struct_new(el_ddb_struct **out)
{
    el_ddb_struct *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return EL_ENOMEM;
    el_buf_init(&c->text, (size_t)-1 / 2);
    el_buf_init(&c->spans, (size_t)-1 / 2);
    el_buf_init(&c->check, (size_t)-1 / 2);
    return EL_OK;
}

void el_ddb_struct_free(el_ddb_struct *c)
{
    if (!c)
        return;
    el_buf_free(&c->text);
    el_buf_free(&c->spans);
    el_buf_free(&c->check);
    free(c);
}

static span *spans_at(el_ddb_struct *c, size_t i)
{
    return (span *)(void *)c->spans.data + i;
}

static size_t spans_count(const el_ddb_struct *c)
{
    return c->spans.len / sizeof(span);
}


static el_err span_push(el_ddb_struct *c, span s)
{
    return el_buf_append(&c->spans, &s, sizeof s);
}

/* Order of bytes, then of length: what qsort needs to bring equal ones
 * together. */
static int span_cmp(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int r = n ? memcmp(a->base + a->off, b->base + b->off, n) : 0;
    if (r)
        return r;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* As span_cmp, equal ones in the order they were written: the first of
 * equal NS members is the one kept, whatever qsort does. */
static int span_sort_cmp(const void *pa, const void *pb)
{
    int r = span_cmp(pa, pb);
    if (r)
        return r;
    const span *a = pa, *b = pb;
    return a->orig_off < b->orig_off ? -1 : a->orig_off > b->orig_off;
}

/* Sorts n spans from the i-th, all of them into base. */
static void spans_sort(el_ddb_struct *c, size_t i, size_t n, const char *base)
{
    span *v = spans_at(c, i);
    for (size_t k = 0; k < n; k++)
        v[k].base = base;
    qsort(v, n, sizeof *v, span_sort_cmp);
}

/* ---- JSON ---- */

/* Stops the parse: returns 0, which yajl takes as "cancelled". */
static int stop(el_ddb_struct *c, el_err err, const char *fail)
{
    if (err && !c->err)
        c->err = err;
    if (fail && !c->fail)
        c->fail = fail;
    return 0;
}

/* Before any value: the comma and the element's byte in an array (a map's
 * were written with its name), and the size check. */
static int before_value(el_ddb_struct *c, size_t value_size)
{
    if (c->depth) {
        frame *f = &c->stack[c->depth - 1];
        if (!f->is_map) {
            if (f->count++ && el_buf_putc(c->out, ','))
                return stop(c, EL_ENOMEM, NULL);
            c->size += 1;
        }
    }
    c->size += value_size;
    if (c->size > c->max_size)
        return stop(c, EL_OK, "the value is larger than an item may be");
    return 1;
}

static int on_put(el_ddb_struct *c, el_err err)
{
    return err ? stop(c, err, NULL) : 1;
}

static int cb_null(void *ctx)
{
    el_ddb_struct *c = ctx;
    return before_value(c, 1) && on_put(c, el_buf_puts(c->out, "{\"NULL\":true}"));
}

static int cb_boolean(void *ctx, int b)
{
    el_ddb_struct *c = ctx;
    return before_value(c, 1) &&
           on_put(c, el_buf_puts(c->out, b ? "{\"BOOL\":true}" : "{\"BOOL\":false}"));
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    el_ddb_struct *c = ctx;
    if (!before_value(c, 0))
        return 0;
    size_t mark = c->out->len, nsize = 0;
    const char *why = NULL;
    el_err err = el_buf_puts(c->out, "{\"N\":\"");
    if (!err)
        err = el_ddb_number_put(c->out, s, len, &nsize, &why);
    if (err == EL_EREJECT) {
        el_buf_truncate(c->out, mark);
        snprintf(c->why, sizeof c->why, "number %.*s%s: %s", len > 40 ? 40 : (int)len, s,
                 len > 40 ? "..." : "", why);
        return stop(c, EL_OK, c->why);
    }
    if (!err)
        err = el_buf_puts(c->out, "\"}");
    c->size += nsize;
    if (!err && c->size > c->max_size)
        return stop(c, EL_OK, "the value is larger than an item may be");
    return on_put(c, err);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    el_ddb_struct *c = ctx;
    if (!before_value(c, len))
        return 0;
    el_err err = el_buf_puts(c->out, "{\"S\":");
    if (!err)
        err = el_json_put_string(c->out, (const char *)s, len);
    if (!err)
        err = el_buf_putc(c->out, '}');
    return on_put(c, err);
}

static int open_container(el_ddb_struct *c, bool is_map)
{
    if (!before_value(c, 3))
        return 0;
    if (c->depth == EL_DDB_MAX_CONTAINERS)
        return stop(c, EL_OK, "nested deeper than DynamoDB's 32 levels (the attribute is the "
                              "first, so 31 objects or arrays one within another at most)");
    frame *f = &c->stack[c->depth++];
    f->is_map = is_map;
    f->count = 0;
    f->names_at = spans_count(c);
    f->text_at = c->text.len;
    return on_put(c, el_buf_puts(c->out, is_map ? "{\"M\":{" : "{\"L\":["));
}

static int cb_start_map(void *ctx)
{
    return open_container(ctx, true);
}

static int cb_start_array(void *ctx)
{
    return open_container(ctx, false);
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t len)
{
    el_ddb_struct *c = ctx;
    frame *f = &c->stack[c->depth - 1];
    span s = { .off = c->text.len, .len = len };
    el_err err = f->count++ ? el_buf_putc(c->out, ',') : EL_OK;
    if (!err)
        err = el_json_put_string(c->out, (const char *)key, len);
    if (!err)
        err = el_buf_putc(c->out, ':');
    if (!err)
        err = el_buf_append(&c->text, key, len);
    if (!err)
        err = span_push(c, s);
    c->size += 1 + len; /* the element's byte and its name */
    return on_put(c, err);
}

static int cb_end_map(void *ctx)
{
    el_ddb_struct *c = ctx;
    frame *f = &c->stack[c->depth - 1];
    size_t n = spans_count(c) - f->names_at;
    if (n > 1) {
        spans_sort(c, f->names_at, n, c->text.data);
        const span *names = spans_at(c, f->names_at);
        for (size_t i = 1; i < n; i++)
            if (span_cmp(&names[i - 1], &names[i]) == 0) {
                snprintf(c->why, sizeof c->why, "an object names member \"%.*s%s\" twice",
                         names[i].len > 40 ? 40 : (int)names[i].len,
                         c->text.data + names[i].off, names[i].len > 40 ? "..." : "");
                return stop(c, EL_OK, c->why);
            }
    }
    el_buf_truncate(&c->spans, f->names_at * sizeof(span));
    el_buf_truncate(&c->text, f->text_at);
    c->depth--;
    return on_put(c, el_buf_puts(c->out, "}}"));
}

static int cb_end_array(void *ctx)
{
    el_ddb_struct *c = ctx;
    c->depth--;
    return on_put(c, el_buf_puts(c->out, "]}"));
}

static const yajl_callbacks json_events = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number, /* the raw text: yajl_integer/yajl_double are never called */
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* yajl's reason, without its "parse error: " prefix or its newline, with
 * the byte (from 1) it stopped at. */
static const char *parse_why(el_ddb_struct *c, yajl_handle h, const char *s, size_t len)
{
    unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)s, len);
    const char *m = msg ? (const char *)msg : "invalid JSON";
    static const char prefix[] = "parse error: ";
    if (strncmp(m, prefix, sizeof prefix - 1) == 0)
        m += sizeof prefix - 1;
    size_t mlen = strlen(m);
    while (mlen && (m[mlen - 1] == '\n' || m[mlen - 1] == ' '))
        mlen--;
    size_t at = yajl_get_bytes_consumed(h);
    /* yajl counts the byte it stopped on as consumed */
    snprintf(c->why, sizeof c->why, "not JSON: %.*s (near byte %zu)",
             (int)(mlen > 100 ? 100 : mlen), m, at ? at : 1);
    if (msg)
        yajl_free_error(h, msg);
    return c->why;
}

el_err el_ddb_struct_json(el_ddb_struct *c, el_buf *out, const char *s, size_t len,
                          size_t max_size, size_t *size, const char **why)
{
    *size = 0;
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    if (i == len) {
        *why = len ? "blank, not JSON" : "empty, not JSON";
        return EL_EREJECT;
    }
    c->out = out;
    c->depth = 0;
    c->size = 0;
    c->max_size = max_size;
    c->err = EL_OK;
    c->fail = NULL;
    el_buf_reset(&c->spans);
    el_buf_reset(&c->text);
    size_t mark = out->len;
    yajl_handle h = yajl_alloc(&json_events, NULL, c);
    if (!h)
        return EL_ENOMEM;
    yajl_status st = yajl_parse(h, (const unsigned char *)s, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    el_err err = EL_OK;
    if (c->err)
        err = c->err;
    else if (c->fail) {
        *why = c->fail;
        err = EL_EREJECT;
    } else if (st != yajl_status_ok) {
        *why = parse_why(c, h, s, len);
        err = EL_EREJECT;
    }
    yajl_free(h);
    c->out = NULL;
    if (err) {
        el_buf_truncate(out, mark);
        return err;
    }
    *size = c->size;
    return EL_OK;
}

/* ---- sets ---- */

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* Records one member: SS as it is (off/len into s), NS checked and its
 * canonical text kept in c->text for the sort. */
static el_err add_member(el_ddb_struct *c, const char *s, size_t off, size_t len, bool numbers,
                         const char **why)
{
    span m = { .off = off, .len = len, .orig_off = off, .orig_len = len };
    if (!numbers) {
        size_t bad;
        if (!el_utf8_valid(s + off, len, &bad)) {
            snprintf(c->why, sizeof c->why, "invalid UTF-8 at byte %zu of the value",
                     off + bad + 1);
            *why = c->why;
            return EL_EREJECT;
        }
        return span_push(c, m);
    }
    size_t nsize;
    const char *nwhy = NULL;
    el_buf_reset(&c->check);
    el_err err = el_ddb_number_put(&c->check, s + off, len, &nsize, &nwhy);
    if (err == EL_EREJECT) {
        snprintf(c->why, sizeof c->why, "member '%.*s%s' is not a DynamoDB number: %s",
                 len > 40 ? 40 : (int)len, s + off, len > 40 ? "..." : "", nwhy);
        *why = c->why;
        return err;
    }
    m.off = c->text.len;
    if (!err)
        err = el_ddb_number_canon(s + off, len, &c->text);
    m.len = c->text.len - m.off;
    if (err == EL_EPARSE) { /* el_ddb_number_put took it: cannot happen */
        *why = "not a number";
        return EL_EREJECT;
    }
    return err ? err : span_push(c, m);
}

el_err el_ddb_struct_set(el_ddb_struct *c, el_buf *out, const char *s, size_t len, char delim,
                         bool numbers, size_t max_size, size_t *size, const char **why)
{
    *size = 0;
    el_buf_reset(&c->spans);
    el_buf_reset(&c->text);
    el_err err = EL_OK;
    for (size_t start = 0; !err && start <= len;) {
        size_t end = start;
        while (end < len && s[end] != delim)
            end++;
        size_t a = start, b = end;
        if (numbers) {
            while (a < b && is_blank(s[a]))
                a++;
            while (b > a && is_blank(s[b - 1]))
                b--;
        }
        if (b > a)
            err = add_member(c, s, a, b - a, numbers, why);
        start = end + 1;
    }
    if (err)
        return err;
    size_t n = spans_count(c);
    if (n == 0)
        return EL_OK;
    spans_sort(c, 0, n, numbers ? c->text.data : s);
    const span *m = spans_at(c, 0);
    size_t mark = out->len, total = 0;
    err = el_buf_puts(out, numbers ? "{\"NS\":[" : "{\"SS\":[");
    for (size_t i = 0; !err && i < n; i++) {
        if (i && span_cmp(&m[i - 1], &m[i]) == 0)
            continue;
        if (i)
            err = el_buf_putc(out, ',');
        if (err)
            break;
        if (numbers) {
            size_t nsize;
            const char *nwhy;
            err = el_buf_putc(out, '"');
            if (!err)
                err = el_ddb_number_put(out, s + m[i].orig_off, m[i].orig_len, &nsize, &nwhy);
            if (!err)
                err = el_buf_putc(out, '"');
            total += nsize;
        } else {
            err = el_json_put_string(out, s + m[i].off, m[i].len);
            total += m[i].len;
        }
        if (!err && total > max_size) {
            *why = "the set is larger than an item may be";
            err = EL_EREJECT;
        }
    }
    if (!err)
        err = el_buf_puts(out, "]}");
    if (err) {
        el_buf_truncate(out, mark);
        return err;
    }
    *size = total;
    return EL_OK;
}
