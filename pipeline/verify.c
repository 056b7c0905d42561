/*
 * verify.c - recompute the expected items, fetch them, compare.
 *
 * DESIGN: the expected items come from the very code that load runs (the
 * readers, el_source_bind and el_transform_row), so verify cannot disagree
 * with load about what an item should be. All inputs are read first, into a
 * keyed sample (pipeline/sample.h; unbounded in full mode), which gives the
 * "later row of a key wins" rule for free and means an input error stops
 * the run before any request is made. Only then are the items fetched, 100
 * keys a BatchGetItem, `concurrency` requests in flight on a curl multi
 * handle driven by the calling thread (as load's network stage, without its
 * threads: verify has nothing to overlap the requests with). The reverse
 * check is a handful of Queries, sent one after the other with el_ddb_call.
 * Full mode holds every distinct expected item in memory; --sample bounds it.
 *
 * Counters are counted while the items are read, by pipeline/counters.c
 * itself (the backfill's code: verify and the backfill cannot disagree on
 * what a count is), then their items go through the same batch loop as the
 * expected items: the loop works on a keyed set (el_sample) and only the
 * comparison and the report differ. Counter items are checked apart from
 * the expected items, in requests of their own, because a counter item is
 * often an entity item too and BatchGetItem refuses a key twice.
 *
 * Values are compared as DynamoDB means them, not as text: the table gives
 * back "1.5" for a number written as "1.50", and base64 may be spelt with
 * or without line breaks by other writers.
 */
#include "pipeline/verify.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free, qsort */
#include <string.h>  /* memcmp, strcmp, strlen */
#include <time.h>    /* nanosleep */

#include "common/json_guard.h"
#include "dynamo/ddb_errors.h"
#include "formats/ddb_value.h"
#include "common/backoff.h"
#include "pipeline/counters.h"
#include "pipeline/fanin.h"
#include "common/clock.h"  /* el_now_ms */
#include "pipeline/sample.h"
#include "pipeline/transform.h"

#define REQUEST_MAX (16u * 1024 * 1024)
#define RESPONSE_MAX (64u * 1024 * 1024)
#define REVERSE_SET_MAX (1024u * 1024 * 1024)

const char *el_verify_kind_name(el_verify_kind k)
{
    switch (k) {
    case EL_VERIFY_MISSING: return "missing";
    case EL_VERIFY_DIFFERENT: return "different";
    case EL_VERIFY_REVERSE_MISSING: return "reverse-missing";
    case EL_VERIFY_REVERSE_EXTRA: return "reverse-extra";
    case EL_VERIFY_COUNTER_MISSING: return "counter-missing";
    case EL_VERIFY_COUNTER_DIFFERENT: return "counter-different";
    }
    return "?";
}

/* ---- value comparison ---- */

el_err el_verify_number_canon(const char *s, size_t len, el_buf *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    char digits[128];
    size_t nd = 0, seen = 0;
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
        if (nd == 0 && c == '0') {
            if (point)
                exp--;
            continue;        /* leading zero */
        }
        if (nd == sizeof digits)
            return EL_EPARSE;
        digits[nd++] = c;
        if (point)
            exp--;
    }
    if (seen == 0)
        return EL_EPARSE;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        long e = 0;
        size_t start = i;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
            e = e * 10 + (s[i] - '0');
            if (e > 1000)
                return EL_EPARSE;
        }
        if (i == start)
            return EL_EPARSE;
        exp += eneg ? -e : e;
    }
    if (i != len)
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

static bool numbers_equal(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    el_buf x, y;
    el_buf_init(&x, 4096);
    el_buf_init(&y, 4096);
    bool eq = el_verify_number_canon(a, strlen(a), &x) == EL_OK &&
              el_verify_number_canon(b, strlen(b), &y) == EL_OK &&
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

static yajl_val member(yajl_val obj, const char *name)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], name) == 0)
            return obj->u.object.values[i];
    return NULL;
}

bool el_verify_values_equal(yajl_val a, yajl_val b)
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
        return numbers_equal(YAJL_GET_STRING(x), YAJL_GET_STRING(y));
    if (strcmp(type, "B") == 0)
        return binaries_equal(YAJL_GET_STRING(x), YAJL_GET_STRING(y));
    if (strcmp(type, "BOOL") == 0 || strcmp(type, "NULL") == 0)
        return (YAJL_IS_TRUE(x) && YAJL_IS_TRUE(y)) || (YAJL_IS_FALSE(x) && YAJL_IS_FALSE(y));
    if (strcmp(type, "SS") == 0)
        return sets_equal(x, y, strings_equal);
    if (strcmp(type, "NS") == 0)
        return sets_equal(x, y, numbers_equal);
    if (strcmp(type, "BS") == 0)
        return sets_equal(x, y, binaries_equal);
    if (strcmp(type, "L") == 0) {
        if (!YAJL_IS_ARRAY(x) || !YAJL_IS_ARRAY(y) || x->u.array.len != y->u.array.len)
            return false;
        for (size_t i = 0; i < x->u.array.len; i++)
            if (!el_verify_values_equal(x->u.array.values[i], y->u.array.values[i]))
                return false;
        return true;
    }
    if (strcmp(type, "M") == 0) {
        if (!YAJL_IS_OBJECT(x) || !YAJL_IS_OBJECT(y) || x->u.object.len != y->u.object.len)
            return false;
        for (size_t i = 0; i < x->u.object.len; i++)
            if (!el_verify_values_equal(x->u.object.values[i], member(y, x->u.object.keys[i])))
                return false;
        return true;
    }
    return false;
}

el_err el_verify_json_put(el_buf *out, yajl_val v)
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
            err = err ? err : el_verify_json_put(out, v->u.object.values[i]);
        }
        return err ? err : el_buf_putc(out, '}');
    case yajl_t_array:
        err = el_buf_putc(out, '[');
        for (size_t i = 0; !err && i < v->u.array.len; i++) {
            if (i)
                err = el_buf_putc(out, ',');
            err = err ? err : el_verify_json_put(out, v->u.array.values[i]);
        }
        return err ? err : el_buf_putc(out, ']');
    default:
        return EL_EINTERNAL;
    }
}

/* ---- the run ---- */

typedef struct vrun {
    const el_verify_opts *o;
    const el_mapping *m;
    el_verify_stats *st;
    el_sample *items;      /* key "PK\0SK" -> expected item JSON */
    el_counters *counters; /* the counts, as the backfill computes them; or NULL */
    el_sample *ctrs;       /* counter item "PK\0SK" -> "attr\0count\0" pairs; or NULL */
    el_sample *cur;        /* the set the batch loop works on: items or ctrs */
    bool cur_counters;     /* cur is ctrs */
    el_buf proj;           /* ProjectionExpression + names of counter requests */
    el_sample *targets;    /* index pk -> expected keys, each as [u32 len][bytes] */
    el_plan *plan;         /* hot keys load shards, or NULL */
    uint64_t rng;
    el_buf req, resp, line, tmp;
} vrun;

static bool stopping(const vrun *v)
{
    return v->o->stop && *v->o->stop;
}

static void sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    time_t secs = (time_t)(ms / 1000);
    struct timespec ts = { secs, (long)((ms - (double)secs * 1000) * 1e6) };
    nanosleep(&ts, NULL);
}

/* ---- reading the inputs ---- */

static bool same_columns(const el_schema *a, const el_schema *b)
{
    if (a->ncols != b->ncols)
        return false;
    for (size_t i = 0; i < a->ncols; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

/* Opens an input, or (SPLIT hook) the byte range of it that is this part. */
static el_err open_input(vrun *v, el_source *s, const char *path, const el_split_part *part,
                         el_reader **r, el_diag *diag)
{
    el_reader_opts ro = el_source_reader_opts(s, &v->o->reader);
    el_diag d;
    el_diag_clear(&d);
    if (part && part->kind == EL_SPLIT_RANGE)
        ro.format = part->format;
    el_err err = part && part->kind == EL_SPLIT_RANGE
                     ? el_reader_open_range(path, &ro, &part->range, r, &d)
                     : el_reader_open(path, &ro, r, &d);
    if (err) {
        if (d.line)
            return el_diag_set(diag, err, "%s:%llu: %s", path, (unsigned long long)d.line, d.msg);
        return el_diag_set(diag, err, "%s", d.msg);
    }
    const el_schema *schema = el_reader_schema(*r);
    if (s->bound && !same_columns(s->bound, schema))
        return el_diag_set(diag, EL_EUSAGE,
                           "%s: columns differ from the other inputs of source '%s'; inputs of "
                           "one source must have the same columns in the same order", path,
                           s->name);
    if (!s->bound && (err = el_source_bind(s, schema, &d)))
        return el_diag_set(diag, err, "%s: %s", path, d.msg);
    return EL_OK;
}

/* The index partition key of an item's JSON, or NULL (no index attributes). */
static const char *index_pk_of(yajl_val item, const char *attr)
{
    return YAJL_GET_STRING(member(member(item, attr), "S"));
}

static el_err offer_target(vrun *v, const char *json, const char *key, size_t klen,
                           el_diag *diag)
{
    char err_text[128];
    yajl_val item = yajl_tree_parse(json, err_text, sizeof err_text);
    if (!item)
        return el_diag_set(diag, EL_EINTERNAL, "transform wrote JSON yajl cannot read: %s",
                           err_text);
    const char *ipk = index_pk_of(item, v->m->index_pk_attr);
    el_err err = EL_OK;
    if (ipk) {
        el_sample_verdict verdict;
        size_t slot;
        err = el_sample_offer(v->targets, ipk, strlen(ipk), &verdict, &slot);
        if (!err && verdict != EL_SAMPLE_OUT) {
            el_buf *set = el_sample_value(v->targets, slot);
            if (verdict == EL_SAMPLE_NEW)
                el_buf_reset(set);
            uint32_t n = (uint32_t)klen;
            err = el_buf_append(set, &n, sizeof n);
            err = err ? err : el_buf_append(set, key, klen);
        }
    }
    yajl_tree_free(item);
    if (err)
        el_diag_set(diag, err, "cannot keep the expected index entries: %s", el_strerror(err));
    return err;
}

static el_err read_input(vrun *v, el_source *src, const char *path, const el_split_part *part,
                         el_diag *diag)
{
    el_reader *r = NULL;
    el_transform *t = NULL;
    if (part && part->kind == EL_SPLIT_NONE)
        return EL_OK; /* SPLIT hook: another part's input */
    el_err err = open_input(v, src, path, part, &r, diag);
    if (!err && el_transform_new(v->m, src, &t))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err && v->plan)
        el_transform_set_plan(t, v->plan, el_plan_find_source(v->plan, src->name));
    el_buf json, key, cscratch;
    el_buf_init(&json, EL_DDB_MAX_ITEM_BYTES * 2);
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    el_buf_init(&cscratch, 1u << 20);
    while (!err) {
        if (stopping(v)) {
            err = el_diag_set(diag, EL_EINTR, "interrupted");
            break;
        }
        el_row row;
        el_diag d;
        el_diag_clear(&d);
        err = el_reader_next(r, &row, &d);
        if (err == EL_EOF) {
            err = EL_OK;
            break;
        }
        v->st->rows_read++;
        if (err == EL_EREJECT) {
            v->st->rejected++;
            err = EL_OK;
            continue;
        }
        if (err) {
            if (d.line)
                el_diag_at(diag, err, d.line, d.column, d.offset, "%s:%llu: %s", path,
                           (unsigned long long)d.line, d.msg);
            else
                el_diag_set(diag, err, "%s: %s", path, d.msg);
            break;
        }
        el_buf_reset(&json);
        el_buf_reset(&key);
        size_t size;
        err = el_transform_row(t, &row, &json, &key, &size, &d);
        if (err == EL_EREJECT) {
            v->st->rejected++;
            err = EL_OK;
            continue;
        }
        if (err) {
            el_diag_set(diag, err, "%s:%llu: %s", path, (unsigned long long)row.line,
                        el_strerror(err));
            break;
        }
        if (v->counters) { /* as the loader does: a transformed row counts */
            err = el_counters_add_row(v->counters, src, &row, key.data, key.len, &cscratch,
                                      &d);
            if (err) {
                el_diag_set(diag, err, "%s:%llu: %s", path, (unsigned long long)row.line,
                            d.msg);
                break;
            }
        }
        if (v->o->counters_only)
            continue;
        el_sample_verdict verdict;
        size_t slot;
        err = el_sample_offer(v->items, key.data, key.len, &verdict, &slot);
        if (!err && verdict != EL_SAMPLE_OUT) {
            el_buf *item = el_sample_value(v->items, slot);
            if (verdict == EL_SAMPLE_IN)
                v->st->duplicates++;
            el_buf_reset(item);
            err = el_buf_append(item, json.data, json.len);
        }
        if (err) {
            el_diag_set(diag, err, "cannot keep the expected items: %s", el_strerror(err));
            break;
        }
        if (v->targets && src->index)
            err = offer_target(v, el_buf_str(&json), key.data, key.len, diag);
    }
    el_buf_free(&json);
    el_buf_free(&key);
    el_buf_free(&cscratch);
    el_transform_free(t);
    /* the source borrows the schema it was bound to: not past the reader's
     * life (the next input of the source compared its columns with freed
     * memory); the column indices stay */
    if (r && src->bound == el_reader_schema(r))
        src->bound = NULL;
    el_reader_free(r);
    return err;
}

/* SPLIT hook: this part of each input, as load --split reads it (each input
 * opened once here for its format, compression and size). */
static el_err split_parts(vrun *v, const el_fanin_input *fin, size_t n, el_split_part **out,
                          el_diag *diag)
{
    if (v->o->reverse)
        return el_diag_set(diag, EL_EUSAGE, "--split checks a part's items only: no --reverse "
                           "(a part does not know every source of a target)");
    el_split_input *si = calloc(n ? n : 1, sizeof *si);
    el_split_part *parts = calloc(n ? n : 1, sizeof *parts);
    el_err err = si && parts ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        el_reader *r = NULL;
        el_diag d;
        el_diag_clear(&d);
        err = el_reader_open(fin[i].path, &fin[i].ropts, &r, &d);
        if (err) {
            el_diag_set(diag, err, "%s", d.msg);
            break;
        }
        si[i] = el_split_input_of(fin[i].path, &fin[i].ropts, el_reader_format(r),
                                  el_reader_input(r));
        el_reader_free(r);
    }
    if (!err)
        err = el_split_assign(&v->o->split, si, n, parts, diag);
    free(si);
    if (err) {
        free(parts);
        return err;
    }
    *out = parts;
    return EL_OK;
}

/* Pairs inputs with sources as load does and reads them in order. */
static el_err read_inputs(vrun *v, el_diag *diag)
{
    const el_verify_opts *o = v->o;
    el_mapping *m = o->mapping;
    size_t n = o->ninputs ? o->ninputs : m->nsources;
    if (o->ninputs && m->nsources > 1 && o->ninputs != m->nsources)
        return el_diag_set(diag, EL_EUSAGE,
                           "%zu inputs given for %zu sources: give one input per source, in the "
                           "mapping's order, or none to use each source's \"input\"",
                           o->ninputs, m->nsources);
    for (size_t i = 0; i < n; i++) {
        el_source *src = m->sources[m->nsources == 1 ? 0 : i];
        if (!o->ninputs && !src->input)
            return el_diag_set(diag, EL_EUSAGE,
                               "source '%s' has no input: give it \"input\" in the mapping or "
                               "name the file on the command line", src->name);
    }
    char **paths = calloc(n ? n : 1, sizeof *paths);
    el_fanin_input *fin = calloc(n ? n : 1, sizeof *fin);
    el_err err = paths && fin ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        el_source *src = m->sources[m->nsources == 1 ? 0 : i];
        paths[i] = o->ninputs ? strdup(o->inputs[i]) : el_mapping_input_path(m, src->input);
        if (!paths[i]) {
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
            break;
        }
        fin[i] = (el_fanin_input){ paths[i], src, el_source_reader_opts(src, &o->reader) };
        /* hot sources need their fan-in before the first item is computed,
         * and that needs every source bound to its columns: open each input
         * once to bind it (open_input does) */
        if (src->index && (src->hot_threshold || o->plan_path)) {
            el_reader *r = NULL;
            err = open_input(v, src, paths[i], NULL, &r, diag);
            el_reader_free(r);
            /* the column indices stay; the schema they came from is gone */
            src->bound = NULL;
        }
    }
    if (!err)
        err = el_fanin_plan(m, fin, n, o->plan_path, &v->plan, diag);
    el_split_part *parts = NULL;
    if (!err && o->split.count) /* SPLIT hook */
        err = split_parts(v, fin, n, &parts, diag);
    for (size_t i = 0; !err && i < n; i++)
        err = read_input(v, m->sources[m->nsources == 1 ? 0 : i], paths[i],
                         parts ? &parts[i] : NULL, diag);
    free(parts);
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
    free(fin);
    return err;
}

/* ---- requests ---- */

/* Decides what a failed call means: EL_OK when it is to be retried (counted;
 * *first_failure tracks how long non-throttle failures have lasted), else the
 * error that ends the run. */
static el_err failure(vrun *v, const char *op, const el_ddb_result *res, double *first_failure,
                      el_diag *diag)
{
    if (res->outcome == EL_DDB_FATAL) {
        if (strcmp(res->error_type, "ResourceNotFoundException") == 0)
            return el_diag_set(diag, EL_ETABLE, "%s: table '%s'%s%s not found: %s", op,
                               v->m->table, strcmp(op, "Query") == 0 ? " or index " : "",
                               strcmp(op, "Query") == 0 ? v->m->index_name : "", res->message);
        return el_ddb_fail(diag, res, el_ddb_config(v->o->ddb), op);
    }
    if (res->outcome == EL_DDB_REJECTED)
        return el_diag_set(diag, EL_ESERVICE, "%s refused: %s: %s", op, res->error_type,
                           res->message);
    double now = el_now_ms();
    if (res->outcome == EL_DDB_THROTTLED) {
        v->st->throttled++;
    } else {
        if (*first_failure == 0)
            *first_failure = now;
        else if ((now - *first_failure) / 1000.0 > v->o->max_retry_time_s)
            return el_diag_set(diag, res->http_status ? EL_ESERVICE : EL_ENET,
                               "%s failed for %.0f s, giving up: %s%s%s", op,
                               (now - *first_failure) / 1000.0, res->error_type,
                               res->error_type[0] ? ": " : "", res->message);
    }
    v->st->retries++;
    return EL_OK;
}

static double backoff(vrun *v, unsigned *attempt)
{
    double ms = el_backoff_ms(*attempt, EL_BACKOFF_BASE_MS, EL_BACKOFF_CAP_MS,
                              el_rand_unit(&v->rng));
    if (*attempt < 30)
        (*attempt)++;
    return ms;
}

/* One synchronous call (the reverse check's Queries) with retries:
 * throttling is retried for ever, other transient failures for
 * max_retry_time_s. The answer is in v->resp. */
static el_err call(vrun *v, const char *op, el_diag *diag)
{
    unsigned attempt = 0;
    double first_failure = 0;
    for (;;) {
        if (stopping(v))
            return el_diag_set(diag, EL_EINTR, "interrupted");
        el_ddb_result res;
        el_diag d;
        el_diag_clear(&d);
        el_buf_reset(&v->resp);
        v->st->requests++;
        el_err err = el_ddb_call(v->o->ddb, op, v->req.data, v->req.len, &v->resp, &res, &d);
        if (err == EL_ENOMEM)
            return el_diag_set(diag, err, "%s: out of memory", op);
        if (!err && res.outcome == EL_DDB_SUCCESS)
            return EL_OK;
        err = failure(v, op, &res, &first_failure, diag);
        if (err)
            return err;
        sleep_ms(backoff(v, &attempt));
    }
}

static el_err put_key(el_buf *b, const vrun *v, const char *key, size_t klen)
{
    size_t pklen = strnlen(key, klen);
    const char *sk = pklen < klen ? key + pklen + 1 : "";
    size_t sklen = pklen < klen ? klen - pklen - 1 : 0;
    el_err err = el_buf_putc(b, '{');
    err = err ? err : el_json_put_string(b, v->m->pk_attr, strlen(v->m->pk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, key, pklen);
    err = err ? err : el_buf_puts(b, "},");
    err = err ? err : el_json_put_string(b, v->m->sk_attr, strlen(v->m->sk_attr));
    err = err ? err : el_buf_puts(b, ":{\"S\":");
    err = err ? err : el_json_put_string(b, sk, sklen);
    return err ? err : el_buf_puts(b, "}}");
}

/* CapacityUnits of ConsumedCapacity: an array (BatchGetItem) or an object (Query). */
static double consumed(yajl_val root)
{
    yajl_val cc = member(root, "ConsumedCapacity");
    size_t n = YAJL_IS_ARRAY(cc) ? cc->u.array.len : 1;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        yajl_val cu = member(YAJL_IS_ARRAY(cc) ? cc->u.array.values[i] : cc, "CapacityUnits");
        if (YAJL_IS_NUMBER(cu))
            total += YAJL_GET_DOUBLE(cu);
    }
    return total;
}

/* "PK\0SK" of an item or key object; false when it has no string keys. */
static bool key_of(const vrun *v, yajl_val item, el_buf *key)
{
    const char *pk = YAJL_GET_STRING(member(member(item, v->m->pk_attr), "S"));
    const char *sk = YAJL_GET_STRING(member(member(item, v->m->sk_attr), "S"));
    el_buf_reset(key);
    return pk && sk && el_buf_append(key, pk, strlen(pk) + 1) == EL_OK &&
           el_buf_append(key, sk, strlen(sk)) == EL_OK;
}

/* ---- reporting ---- */

static el_err begin_line(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                         const char *index_key)
{
    el_buf *b = &v->line;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"kind\":\"");
    err = err ? err : el_buf_puts(b, el_verify_kind_name(kind));
    err = err ? err : el_buf_puts(b, "\",\"key\":");
    size_t pklen = strnlen(key, klen);
    err = err ? err : el_buf_putc(b, '{');
    err = err ? err : el_json_put_string(b, v->m->pk_attr, strlen(v->m->pk_attr));
    err = err ? err : el_buf_putc(b, ':');
    err = err ? err : el_json_put_string(b, key, pklen);
    err = err ? err : el_buf_putc(b, ',');
    err = err ? err : el_json_put_string(b, v->m->sk_attr, strlen(v->m->sk_attr));
    err = err ? err : el_buf_putc(b, ':');
    err = err ? err
              : el_json_put_string(b, pklen < klen ? key + pklen + 1 : "",
                                   pklen < klen ? klen - pklen - 1 : 0);
    err = err ? err : el_buf_putc(b, '}');
    if (index_key) {
        err = err ? err : el_buf_puts(b, ",\"index_key\":");
        err = err ? err : el_json_put_string(b, index_key, strlen(index_key));
    }
    return err;
}

static void emit(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                 const char *index_key, const el_verify_attr_diff *diffs, size_t ndiffs,
                 bool item_present)
{
    if (!v->o->on_mismatch)
        return;
    el_buf pk, sk;
    size_t pklen = strnlen(key, klen);
    el_buf_init(&pk, klen + 2);
    el_buf_init(&sk, klen + 2);
    if (el_buf_append(&pk, key, pklen) ||
        (pklen < klen && el_buf_append(&sk, key + pklen + 1, klen - pklen - 1)))
        goto out;
    el_verify_mismatch mm = {
        .kind = kind, .pk = el_buf_str(&pk), .sk = el_buf_str(&sk), .index_key = index_key,
        .diffs = diffs, .ndiffs = ndiffs, .item_present = item_present,
        .json = el_buf_str(&v->line)
    };
    v->o->on_mismatch(v->o->user, &mm);
out:
    el_buf_free(&pk);
    el_buf_free(&sk);
}

static el_err report_simple(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                            const char *index_key)
{
    el_err err = begin_line(v, kind, key, klen, index_key);
    err = err ? err : el_buf_putc(&v->line, '}');
    if (!err)
        emit(v, kind, key, klen, index_key, NULL, 0, false);
    return err;
}

/* Compares an expected item with the table's; reports a difference. */
static el_err compare_item(vrun *v, const char *key, size_t klen, const char *expected_json,
                           yajl_val actual, bool *same, el_diag *diag)
{
    char err_text[128];
    yajl_val exp = yajl_tree_parse(expected_json, err_text, sizeof err_text);
    if (!YAJL_IS_OBJECT(exp)) {
        yajl_tree_free(exp);
        return el_diag_set(diag, EL_EINTERNAL, "expected item is not JSON: %s", err_text);
    }
    size_t n = exp->u.object.len, nd = 0;
    el_verify_attr_diff *diffs = calloc(n ? n : 1, sizeof *diffs);
    size_t *starts = calloc(n ? 2 * n : 1, sizeof *starts);
    el_err err = diffs && starts ? EL_OK : EL_ENOMEM;
    el_buf_reset(&v->tmp);
    for (size_t i = 0; !err && i < n; i++) {
        const char *name = exp->u.object.keys[i];
        yajl_val e = exp->u.object.values[i], a = member(actual, name);
        if (el_verify_values_equal(e, a))
            continue;
        diffs[nd].name = name;
        starts[2 * nd] = v->tmp.len;
        err = el_verify_json_put(&v->tmp, e);
        err = err ? err : el_buf_putc(&v->tmp, '\0');
        starts[2 * nd + 1] = a ? v->tmp.len : (size_t)-1;
        if (!err && a)
            err = el_verify_json_put(&v->tmp, a);
        err = err ? err : el_buf_putc(&v->tmp, '\0');
        nd++;
    }
    *same = nd == 0;
    if (!err && nd) {
        /* the tmp buffer is complete now: its pointers no longer move */
        for (size_t i = 0; i < nd; i++) {
            diffs[i].expected = v->tmp.data + starts[2 * i];
            diffs[i].actual = starts[2 * i + 1] == (size_t)-1 ? NULL
                                                              : v->tmp.data + starts[2 * i + 1];
        }
        err = begin_line(v, EL_VERIFY_DIFFERENT, key, klen, NULL);
        err = err ? err : el_buf_puts(&v->line, ",\"attributes\":{");
        for (size_t i = 0; !err && i < nd; i++) {
            if (i)
                err = el_buf_putc(&v->line, ',');
            err = err ? err : el_json_put_string(&v->line, diffs[i].name, strlen(diffs[i].name));
            err = err ? err : el_buf_puts(&v->line, ":{\"expected\":");
            err = err ? err : el_buf_puts(&v->line, diffs[i].expected);
            err = err ? err : el_buf_puts(&v->line, ",\"actual\":");
            err = err ? err : el_buf_puts(&v->line, diffs[i].actual ? diffs[i].actual : "null");
            err = err ? err : el_buf_putc(&v->line, '}');
        }
        err = err ? err : el_buf_puts(&v->line, "}}");
        if (!err)
            emit(v, EL_VERIFY_DIFFERENT, key, klen, NULL, diffs, nd, true);
    }
    free(diffs);
    free(starts);
    yajl_tree_free(exp);
    if (err)
        el_diag_set(diag, err, "comparing items: %s", el_strerror(err));
    return err;
}

/* ---- counters ---- */

/* Reports one counter attribute: absent (actual NULL) or different. */
static el_err report_counter(vrun *v, const char *key, size_t klen, const char *attr,
                             const char *count, yajl_val actual, bool item_present)
{
    el_verify_kind kind = actual ? EL_VERIFY_COUNTER_DIFFERENT : EL_VERIFY_COUNTER_MISSING;
    el_buf_reset(&v->tmp);
    el_err err = el_buf_puts(&v->tmp, "{\"N\":\"");
    err = err ? err : el_buf_puts(&v->tmp, count);
    err = err ? err : el_buf_puts(&v->tmp, "\"}");
    err = err ? err : el_buf_putc(&v->tmp, '\0');
    size_t at = v->tmp.len;
    if (actual)
        err = err ? err : el_verify_json_put(&v->tmp, actual);
    err = err ? err : el_buf_putc(&v->tmp, '\0');
    err = err ? err : begin_line(v, kind, key, klen, NULL);
    err = err ? err : el_buf_puts(&v->line, ",\"attributes\":{");
    err = err ? err : el_json_put_string(&v->line, attr, strlen(attr));
    err = err ? err : el_buf_puts(&v->line, ":{\"expected\":");
    err = err ? err : el_buf_puts(&v->line, v->tmp.data);
    err = err ? err : el_buf_puts(&v->line, ",\"actual\":");
    err = err ? err : el_buf_puts(&v->line, actual ? v->tmp.data + at : "null");
    err = err ? err : el_buf_puts(&v->line, item_present ? "}},\"item_present\":true}"
                                                       : "}},\"item_present\":false}");
    if (err)
        return err;
    el_verify_attr_diff diff = { attr, v->tmp.data, actual ? v->tmp.data + at : NULL };
    emit(v, kind, key, klen, NULL, &diff, 1, item_present);
    return EL_OK;
}

/* Checks every counter attribute expected on one counter item (expected:
 * "attr\0count\0" pairs); item NULL when the item is absent. */
static el_err compare_counters(vrun *v, const char *key, size_t klen, const el_buf *expected,
                               yajl_val item, el_diag *diag)
{
    el_err err = EL_OK;
    for (size_t off = 0; !err && off < expected->len;) {
        const char *attr = expected->data + off;
        const char *count = attr + strlen(attr) + 1;
        off = (size_t)(count - expected->data) + strlen(count) + 1;
        v->st->counters_expected++;
        yajl_val actual = item ? member(item, attr) : NULL;
        if (!actual) {
            v->st->counters_missing++;
            err = report_counter(v, key, klen, attr, count, NULL, item != NULL);
            continue;
        }
        const char *n = YAJL_GET_STRING(member(actual, "N"));
        if (YAJL_IS_OBJECT(actual) && actual->u.object.len == 1 && numbers_equal(n, count)) {
            v->st->counters_present++;
            continue;
        }
        v->st->counters_different++;
        err = report_counter(v, key, klen, attr, count, actual, true);
    }
    if (err)
        el_diag_set(diag, err, "reporting counters: %s", el_strerror(err));
    return err;
}

/* The counter items to check, from the counts: every one, or a uniform
 * sample of `sample` of them (a keyed sample over the counter items). */
static el_err collect_counters(vrun *v, el_diag *diag)
{
    el_counter_entry *e = NULL;
    size_t n = 0;
    v->ctrs = el_sample_new((size_t)v->o->sample, v->o->seed ^ 0xC0C0C0C0C0C0C0C0ull,
                            (size_t)1 << 30);
    el_err err = v->ctrs ? el_counters_list(v->counters, &e, &n) : EL_ENOMEM;
    char num[24];
    for (size_t i = 0; !err && i < n; i++) {
        el_sample_verdict verdict;
        size_t slot;
        err = el_sample_offer(v->ctrs, e[i].key, e[i].item_len, &verdict, &slot);
        if (err || verdict == EL_SAMPLE_OUT)
            continue;
        el_buf *val = el_sample_value(v->ctrs, slot);
        if (verdict == EL_SAMPLE_NEW)
            el_buf_reset(val);
        snprintf(num, sizeof num, "%llu", (unsigned long long)e[i].count);
        err = el_buf_append(val, e[i].key + e[i].item_len + 1, e[i].len - e[i].item_len - 1);
        err = err ? err : el_buf_putc(val, '\0');
        err = err ? err : el_buf_append(val, num, strlen(num) + 1);
    }
    free(e);
    v->st->counter_edges = el_counters_edges(v->counters);
    v->st->counter_duplicates = el_counters_duplicates(v->counters);
    /* the projection: keys and every counter attribute of the mapping */
    el_buf *p = &v->proj;
    size_t total = 0, na = 0;
    for (size_t i = 0; i < v->m->nsources; i++)
        total += v->m->sources[i]->ncounters;
    const char **names = calloc(total ? total : 1, sizeof *names);
    err = err ? err : names ? EL_OK : EL_ENOMEM;
    for (size_t i = 0; !err && i < v->m->nsources; i++) {
        const el_source *s = v->m->sources[i];
        for (size_t j = 0; j < s->ncounters; j++) {
            const char *a = s->counters[j].attribute;
            bool seen = strcmp(a, v->m->pk_attr) == 0 || strcmp(a, v->m->sk_attr) == 0;
            for (size_t k = 0; k < na && !seen; k++)
                seen = strcmp(names[k], a) == 0;
            if (!seen)
                names[na++] = a; /* a path twice is a ValidationException */
        }
    }
    err = err ? err : el_buf_puts(p, ",\"ProjectionExpression\":\"#k0, #k1");
    for (size_t i = 0; !err && i < na; i++)
        err = el_buf_printf(p, ", #c%zu", i);
    err = err ? err : el_buf_puts(p, "\",\"ExpressionAttributeNames\":{\"#k0\":");
    err = err ? err : el_json_put_string(p, v->m->pk_attr, strlen(v->m->pk_attr));
    err = err ? err : el_buf_puts(p, ",\"#k1\":");
    err = err ? err : el_json_put_string(p, v->m->sk_attr, strlen(v->m->sk_attr));
    for (size_t i = 0; !err && i < na; i++) {
        err = el_buf_printf(p, ",\"#c%zu\":", i);
        err = err ? err : el_json_put_string(p, names[i], strlen(names[i]));
    }
    err = err ? err : el_buf_putc(p, '}');
    free(names);
    if (err)
        el_diag_set(diag, err, "cannot keep the expected counters: %s", el_strerror(err));
    return err;
}

/* ---- forward check: BatchGetItem, several in flight ---- */

/* One batch of up to 100 keys and its request. A batch lives until every
 * key is found or known missing; unprocessed keys are resent in a new
 * request of the same batch after a backoff. */
typedef struct batch {
    size_t slots[EL_VERIFY_BATCH_KEYS];
    bool done[EL_VERIFY_BATCH_KEYS];
    size_t n, left;
    el_ddb_req *req;       /* the request on the multi handle, or NULL */
    unsigned attempt;
    double not_before;     /* no resend before this time (ms) */
    double first_failure;
} batch;

static el_err build_batch_get(vrun *v, const batch *b)
{
    el_buf *r = &v->req;
    el_buf_reset(r);
    el_err err = el_buf_puts(r, "{\"RequestItems\":{");
    err = err ? err : el_json_put_string(r, v->m->table, strlen(v->m->table));
    err = err ? err : el_buf_puts(r, ":{\"ConsistentRead\":true,\"Keys\":[");
    bool first = true;
    for (size_t i = 0; !err && i < b->n; i++) {
        if (b->done[i])
            continue;
        size_t klen;
        const char *key = el_sample_key(v->cur, b->slots[i], &klen);
        if (!first)
            err = el_buf_putc(r, ',');
        first = false;
        err = err ? err : put_key(r, v, key, klen);
    }
    err = err ? err : el_buf_putc(r, ']');
    if (!err && v->cur_counters)
        err = el_buf_append(r, v->proj.data, v->proj.len);
    return err ? err : el_buf_puts(r, "}},\"ReturnConsumedCapacity\":\"TOTAL\"}");
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

/* A successful answer: compares what came back, counts as missing what is
 * neither returned nor unprocessed, and schedules the unprocessed rest. */
static el_err on_batch_answer(vrun *v, batch *b, const char *body, el_diag *diag)
{
    char err_text[128];
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(body, strlen(body), EL_JSON_MAX_DEPTH, 0, &g))
        return el_diag_set(diag, EL_ESERVICE, "BatchGetItem answer refused: %s", g.msg);
    yajl_val root = yajl_tree_parse(body, err_text, sizeof err_text);
    if (!YAJL_IS_OBJECT(root)) {
        yajl_tree_free(root);
        return el_diag_set(diag, EL_ESERVICE, "BatchGetItem answer is not JSON: %s", err_text);
    }
    el_buf key;
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    el_err err = EL_OK;
    v->st->rcu_consumed += consumed(root);
    yajl_val items = member(member(root, "Responses"), v->m->table);
    for (size_t i = 0; !err && YAJL_IS_ARRAY(items) && i < items->u.array.len; i++) {
        yajl_val item = items->u.array.values[i];
        if (!key_of(v, item, &key))
            continue;
        size_t pos = position_of(v, b, &key);
        if (pos == b->n || b->done[pos])
            continue;
        b->done[pos] = true;
        b->left--;
        if (v->cur_counters) {
            v->st->counter_items++;
            err = compare_counters(v, key.data, key.len, el_sample_value(v->cur, b->slots[pos]),
                                   item, diag);
            continue;
        }
        v->st->present++;
        bool same = true;
        err = compare_item(v, key.data, key.len,
                           el_buf_str(el_sample_value(v->cur, b->slots[pos])), item, &same,
                           diag);
        if (!err && !same)
            v->st->different++;
    }
    bool unprocessed[EL_VERIFY_BATCH_KEYS] = { false };
    size_t nun = 0;
    yajl_val keys = member(member(member(root, "UnprocessedKeys"), v->m->table), "Keys");
    for (size_t i = 0; YAJL_IS_ARRAY(keys) && i < keys->u.array.len; i++) {
        if (!key_of(v, keys->u.array.values[i], &key))
            continue;
        size_t pos = position_of(v, b, &key);
        if (pos < b->n && !b->done[pos] && !unprocessed[pos]) {
            unprocessed[pos] = true;
            nun++;
        }
    }
    yajl_tree_free(root);
    el_buf_free(&key);
    for (size_t i = 0; !err && i < b->n; i++) {
        if (b->done[i] || unprocessed[i])
            continue;
        b->done[i] = true;
        b->left--;
        size_t klen;
        const char *k = el_sample_key(v->cur, b->slots[i], &klen);
        if (v->cur_counters) {
            v->st->counter_items++;
            err = compare_counters(v, k, klen, el_sample_value(v->cur, b->slots[i]), NULL, diag);
            continue;
        }
        v->st->missing++;
        err = report_simple(v, EL_VERIFY_MISSING, k, klen, NULL);
        if (err)
            el_diag_set(diag, err, "reporting: %s", el_strerror(err));
    }
    if (!err && nun > 0) {
        v->st->retries++;
        b->not_before = el_now_ms() + backoff(v, &b->attempt);
    }
    return err;
}

static el_err send_batch(vrun *v, CURLM *multi, batch *b, el_diag *diag)
{
    el_err err = build_batch_get(v, b);
    if (!err)
        err = el_ddb_req_new(v->o->ddb, "BatchGetItem", &v->req, b, &b->req);
    if (err)
        return el_diag_set(diag, err, "BatchGetItem request: %s", el_strerror(err));
    el_ddb_req_reset(b->req);
    if (curl_multi_add_handle(multi, el_ddb_req_handle(b->req)) != CURLM_OK) {
        el_ddb_req_free(b->req);
        b->req = NULL;
        return el_diag_set(diag, EL_ENET, "cannot start a transfer");
    }
    v->st->requests++;
    return EL_OK;
}

static el_err on_batch_done(vrun *v, CURLM *multi, batch *b, CURLcode code, el_diag *diag)
{
    el_ddb_result res;
    el_ddb_req_finish(b->req, code, &res);
    curl_multi_remove_handle(multi, el_ddb_req_handle(b->req));
    el_err err;
    if (res.outcome == EL_DDB_SUCCESS) {
        size_t len;
        b->first_failure = 0;
        err = on_batch_answer(v, b, el_ddb_req_response(b->req, &len), diag);
    } else {
        err = failure(v, "BatchGetItem", &res, &b->first_failure, diag);
        if (!err)
            b->not_before = el_now_ms() + backoff(v, &b->attempt);
    }
    el_ddb_req_free(b->req);
    b->req = NULL;
    return err;
}

/* Keeps up to `concurrency` batches in flight until every key of v->cur
 * (the expected items, or the counter items) is found or known missing. */
static el_err check_set(vrun *v, el_diag *diag)
{
    size_t count = el_sample_count(v->cur), next = 0;
    size_t nb = v->o->concurrency > 0 ? (size_t)v->o->concurrency : 1;
    batch *bs = calloc(nb, sizeof *bs);
    CURLM *multi = curl_multi_init();
    el_err err = bs && multi ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err) {
        curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)nb);
        curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)nb);
    }
    while (!err) {
        if (stopping(v)) {
            err = el_diag_set(diag, EL_EINTR, "interrupted");
            break;
        }
        double now = el_now_ms(), due = -1;
        size_t busy = 0;
        for (size_t i = 0; !err && i < nb; i++) {
            batch *b = &bs[i];
            if (b->req) {
                busy++;
                continue;
            }
            if (b->left == 0 && next < count) {
                memset(b, 0, sizeof *b);
                while (b->n < EL_VERIFY_BATCH_KEYS && next < count)
                    b->slots[b->n++] = next++;
                b->left = b->n;
            }
            if (b->left == 0)
                continue;
            busy++;
            if (b->not_before > now) {
                if (due < 0 || b->not_before < due)
                    due = b->not_before;
                continue;
            }
            err = send_batch(v, multi, b, diag);
        }
        if (err || busy == 0)
            break;
        int running;
        curl_multi_perform(multi, &running);
        CURLMsg *msg;
        int left;
        while (!err && (msg = curl_multi_info_read(multi, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            el_ddb_req *req = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&req);
            err = on_batch_done(v, multi, el_ddb_req_user(req), msg->data.result, diag);
        }
        if (err)
            break;
        int timeout = 100;
        if (due >= 0 && due - now < timeout)
            timeout = due > now ? (int)(due - now) + 1 : 0;
        curl_multi_poll(multi, NULL, 0, timeout, NULL);
    }
    for (size_t i = 0; bs && i < nb; i++) {
        if (bs[i].req) {
            curl_multi_remove_handle(multi, el_ddb_req_handle(bs[i].req));
            el_ddb_req_free(bs[i].req);
        }
    }
    free(bs);
    if (multi)
        curl_multi_cleanup(multi);
    return err;
}

/* ---- reverse check: Query the index ---- */

typedef struct keyref {
    const char *p;
    size_t len;
} keyref;

static int keyref_cmp(const void *a, const void *b)
{
    const keyref *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Sorts and removes duplicates; returns the new count. */
static size_t sort_unique(keyref *k, size_t n)
{
    if (n == 0)
        return 0;
    qsort(k, n, sizeof *k, keyref_cmp);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (keyref_cmp(&k[i], &k[m - 1]) != 0)
            k[m++] = k[i];
    return m;
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

/* Every (PK, SK) the index lists under ipk, appended to got as [u32][bytes]. */
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
        err = call(v, "Query", diag);
        if (err)
            break;
        char err_text[128];
        el_diag g;
        el_diag_clear(&g);
        if (el_json_guard(el_buf_str(&v->resp), v->resp.len, EL_JSON_MAX_DEPTH, 0, &g)) {
            err = el_diag_set(diag, EL_ESERVICE, "Query answer refused: %s", g.msg);
            break;
        }
        yajl_val root = yajl_tree_parse(el_buf_str(&v->resp), err_text, sizeof err_text);
        if (!YAJL_IS_OBJECT(root)) {
            yajl_tree_free(root);
            err = el_diag_set(diag, EL_ESERVICE, "Query answer is not JSON: %s", err_text);
            break;
        }
        v->st->rcu_consumed += consumed(root);
        yajl_val items = member(root, "Items");
        for (size_t i = 0; !err && YAJL_IS_ARRAY(items) && i < items->u.array.len; i++) {
            if (!key_of(v, items->u.array.values[i], &key))
                continue;
            uint32_t n = (uint32_t)key.len;
            err = el_buf_append(got, &n, sizeof n);
            err = err ? err : el_buf_append(got, key.data, key.len);
        }
        el_buf_reset(&start);
        yajl_val last = member(root, "LastEvaluatedKey");
        if (!err && YAJL_IS_OBJECT(last))
            err = el_verify_json_put(&start, last);
        yajl_tree_free(root);
        if (err)
            el_diag_set(diag, err, "Query: %s", el_strerror(err));
    } while (!err && start.len > 0);
    el_buf_free(&start);
    el_buf_free(&key);
    return err;
}

/* Splits a [u32 len][bytes]... buffer into refs (malloc'd; *n entries). */
static keyref *split_set(const el_buf *set, size_t *n)
{
    size_t cap = 0;
    for (size_t off = 0; off + 4 <= set->len;) {
        uint32_t len;
        memcpy(&len, set->data + off, sizeof len);
        off += sizeof len + len;
        cap++;
    }
    keyref *k = calloc(cap ? cap : 1, sizeof *k);
    *n = 0;
    if (!k)
        return NULL;
    for (size_t off = 0; off + 4 <= set->len;) {
        uint32_t len;
        memcpy(&len, set->data + off, sizeof len);
        k[(*n)++] = (keyref){ set->data + off + sizeof len, len };
        off += sizeof len + len;
    }
    return k;
}

/* In full mode the final item of a key decides its index key: a key whose
 * later row moved it to another index partition is not expected here. */
static bool still_under(const vrun *v, const keyref *k, const char *ipk)
{
    if (v->o->sample)
        return true;
    size_t slot = el_sample_find(v->items, k->p, k->len);
    if (slot == (size_t)-1)
        return false;
    const char *json = el_buf_str(el_sample_value(v->items, slot));
    yajl_val item = yajl_tree_parse(json, NULL, 0);
    const char *now = index_pk_of(item, v->m->index_pk_attr);
    bool same = now && strcmp(now, ipk) == 0;
    yajl_tree_free(item);
    return same;
}

/* Queries one sampled index key and compares. With `report` false it only
 * sets *mismatches (a first look, see check_targets); with `report` true it
 * also counts and reports them. *expected: the items expected under the key. */
static el_err check_target(vrun *v, size_t slot, bool report, size_t *expected,
                           size_t *mismatches, el_diag *diag)
{
    *mismatches = 0;
    *expected = 0;
    size_t ilen;
    const char *ikey = el_sample_key(v->targets, slot, &ilen);
    char *ipk = strndup(ikey, ilen);
    el_buf got;
    el_buf_init(&got, REVERSE_SET_MAX);
    size_t ne = 0, na = 0;
    keyref *exp = NULL, *act = NULL;
    el_err err = ipk ? EL_OK : EL_ENOMEM;
    err = err ? err : query_index(v, ipk, &got, diag);
    if (!err) {
        exp = split_set(el_sample_value(v->targets, slot), &ne);
        act = split_set(&got, &na);
        if (!exp || !act)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (!err) {
        size_t kept = 0;
        for (size_t i = 0; i < ne; i++)
            if (still_under(v, &exp[i], ipk))
                exp[kept++] = exp[i];
        ne = sort_unique(exp, kept);
        na = sort_unique(act, na);
        *expected = ne;
        size_t i = 0, j = 0;
        while (!err && (i < ne || j < na)) {
            int c = i == ne ? 1 : j == na ? -1 : keyref_cmp(&exp[i], &act[j]);
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
                err = report_simple(v, EL_VERIFY_REVERSE_MISSING, exp[i].p, exp[i].len, ipk);
                i++;
            } else {
                v->st->reverse_extra++;
                err = report_simple(v, EL_VERIFY_REVERSE_EXTRA, act[j].p, act[j].len, ipk);
                j++;
            }
        }
        if (err)
            el_diag_set(diag, err, "reporting: %s", el_strerror(err));
    }
    free(exp);
    free(act);
    el_buf_free(&got);
    free(ipk);
    return err;
}

/* Index keys are only eventually consistent: an item written a moment ago
 * may not be listed yet. So every sampled key is looked at once, and those
 * that do not match are queried again after reverse_recheck_ms; only that
 * second answer is reported. Matching keys are counted from the first. */
static el_err check_targets(vrun *v, el_diag *diag)
{
    size_t n = el_sample_count(v->targets), nbad = 0;
    size_t *bad = calloc(n ? n : 1, sizeof *bad);
    if (!bad)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    bool recheck = v->o->reverse_recheck_ms > 0;
    for (size_t i = 0; !err && i < n; i++) {
        size_t ne, mism;
        err = check_target(v, i, !recheck, &ne, &mism, diag);
        if (err || (recheck && mism)) {
            bad[nbad++] = i;
            continue;
        }
        v->st->reverse_keys++;
        v->st->reverse_expected += ne;
    }
    if (!err && nbad)
        sleep_ms(v->o->reverse_recheck_ms);
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

el_err el_verify_run(const el_verify_opts *o, el_verify_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_now_ms();
    vrun v;
    memset(&v, 0, sizeof v);
    v.o = o;
    v.m = o->mapping;
    v.st = st;
    v.rng = o->seed ^ 0x5DEECE66Dull;
    el_buf_init(&v.req, REQUEST_MAX);
    el_buf_init(&v.resp, RESPONSE_MAX);
    el_buf_init(&v.line, RESPONSE_MAX);
    el_buf_init(&v.tmp, RESPONSE_MAX);
    el_buf_init(&v.proj, REQUEST_MAX);
    el_err err = EL_OK;
    bool any_index = false;
    for (size_t i = 0; i < v.m->nsources; i++)
        any_index |= v.m->sources[i]->index;
    v.items = el_sample_new((size_t)o->sample, o->seed, EL_DDB_MAX_ITEM_BYTES * 2);
    if (o->reverse && any_index)
        v.targets = el_sample_new((size_t)o->reverse, o->seed ^ 0xA5A5A5A5A5A5A5A5ull,
                                  REVERSE_SET_MAX);
    if (!v.items || (o->reverse && any_index && !v.targets))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err && o->reverse && !any_index)
        err = el_diag_set(diag, EL_EUSAGE,
                          "--reverse needs a source that writes index attributes; every "
                          "source of this mapping has \"index\": false");
    if (!err && o->counters_only && (o->no_counters || !el_mapping_has_counters(v.m)))
        err = el_diag_set(diag, EL_EUSAGE, "--counters-only: the mapping has no counters to "
                          "check (\"counters\" in a source, or --counter)");
    if (!err && o->counters_only && o->reverse)
        err = el_diag_set(diag, EL_EUSAGE, "--counters-only checks no item: drop --reverse");
    if (!err && o->counters_only && o->split.count) /* SPLIT hook */
        err = el_diag_set(diag, EL_EUSAGE, "--counters-only needs the whole input: no --split");
    /* SPLIT hook: a part's counts are not the totals: no counter check */
    if (!err && !o->no_counters && !o->split.count && el_mapping_has_counters(v.m) &&
        el_counters_new(v.m, &v.counters))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    err = err ? err : read_inputs(&v, diag);
    if (!err && !o->sample)
        st->distinct = el_sample_count(v.items);
    if (!err && v.counters)
        err = collect_counters(&v, diag);
    /* the counts are in ctrs now: their memory goes before the requests */
    el_counters_free(v.counters);
    v.counters = NULL;
    v.cur = v.items;
    st->expected = el_sample_count(v.items);
    err = err ? err : check_set(&v, diag);
    if (!err && v.ctrs) {
        v.cur = v.ctrs;
        v.cur_counters = true;
        err = check_set(&v, diag);
    }
    if (!err && v.targets)
        err = check_targets(&v, diag);
    el_sample_free(v.items);
    el_sample_free(v.ctrs);
    el_sample_free(v.targets);
    el_plan_free(v.plan);
    el_buf_free(&v.req);
    el_buf_free(&v.resp);
    el_buf_free(&v.line);
    el_buf_free(&v.tmp);
    el_buf_free(&v.proj);
    st->elapsed_s = (el_now_ms() - t0) / 1000.0;
    return err;
}
