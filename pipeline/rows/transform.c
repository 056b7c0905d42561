/*
 * transform.c - rows to DynamoDB JSON items.
 *
 * DESIGN: the item is encoded once, here, as the exact bytes that will go in
 * the request (no intermediate attribute tree): the batcher only
 * concatenates. Keys are rendered into scratch buffers first because they
 * are needed twice (as PK/SK and, inverted, as the index keys) and must be
 * checked for emptiness and length before anything is appended. What does
 * not change from row to row (the key attributes' `{"PK":{"S":` openers,
 * each attribute's `,"name":`, a constant string attribute whole) is
 * encoded once in el_transform_new, so an item is a handful of appends
 * rather than ~40 small writes.
 */
#include "pipeline/rows/transform.h"

#include <stdarg.h>  /* va_list for reject */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strlen */

#include "common/utf8.h"
#include "formats/ddb_struct.h" /* json, SS and NS attributes */
#include "formats/ddb_value.h"
#include "pipeline/sharding/shard.h"

struct el_transform {
    const el_mapping *m;
    const el_source *src;
    el_buf pk, sk, ipk, isk; /* rendered keys */
    el_buf tmp;              /* rendered attribute templates */
    el_buf sharded;          /* the index pk with its shard suffix */
    el_ddb_struct *conv;     /* json, SS, NS values */
    const el_plan *plan;     /* hot keys to shard, or NULL */
    const el_buf *last_ipk;  /* index pk written into the last item, or NULL */
    const el_buf *last_isk;  /* and its index sk (either may be the pk's or sk's buffer) */
    size_t last_key_size;    /* DynamoDB size of its table key attributes */
    size_t last_index_key_size; /* and of its index key attributes, 0 without */
    /* pre-encoded fragments, in `pre` */
    el_buf pre;
    size_t key_off[4], key_len[4];  /* openers of PK, SK, index PK, index SK */
    size_t *attr_off, *attr_len;    /* `,"name":` of each src->attrs[i] */
    size_t *const_off, *const_len;  /* a whole constant S attribute, len 0: none */
    size_t *const_size;             /* its DynamoDB size */
    size_t *name_len;               /* strlen of each src->attrs[i].name */
    size_t key_names_size;          /* DynamoDB size of the key attributes' names */
    size_t table_key_names, index_key_names; /* its two parts */
};

/* Appends name as a JSON string between `before` and `after`, into t->pre,
 * and records where. */
static el_err pre_put(el_transform *t, const char *before, const char *name,
                      const char *after, size_t *off, size_t *len)
{
    *off = t->pre.len;
    el_err err = el_buf_puts(&t->pre, before);
    if (!err)
        err = el_json_put_string(&t->pre, name, strlen(name));
    if (!err)
        err = el_buf_puts(&t->pre, after);
    *len = t->pre.len - *off;
    return err;
}

static el_err prepare_fragments(el_transform *t)
{
    const el_mapping *m = t->m;
    const el_source *src = t->src;
    el_err err = pre_put(t, "{", m->pk_attr, ":{\"S\":", &t->key_off[0], &t->key_len[0]);
    if (!err)
        err = pre_put(t, "},", m->sk_attr, ":{\"S\":", &t->key_off[1], &t->key_len[1]);
    if (!err && src->index) {
        err = pre_put(t, "},", m->index_pk_attr, ":{\"S\":", &t->key_off[2], &t->key_len[2]);
        if (!err)
            err = pre_put(t, "},", m->index_sk_attr, ":{\"S\":", &t->key_off[3],
                          &t->key_len[3]);
    }
    size_t n = src->nattrs ? src->nattrs : 1;
    t->attr_off = calloc(n, sizeof *t->attr_off);
    t->attr_len = calloc(n, sizeof *t->attr_len);
    t->const_off = calloc(n, sizeof *t->const_off);
    t->const_len = calloc(n, sizeof *t->const_len);
    t->const_size = calloc(n, sizeof *t->const_size);
    t->name_len = calloc(n, sizeof *t->name_len);
    if (!t->attr_off || !t->attr_len || !t->const_off || !t->const_len || !t->const_size ||
        !t->name_len)
        return EL_ENOMEM;
    t->table_key_names = strlen(m->pk_attr) + strlen(m->sk_attr);
    t->index_key_names = src->index ? strlen(m->index_pk_attr) + strlen(m->index_sk_attr) : 0;
    t->key_names_size = t->table_key_names + t->index_key_names;
    for (size_t i = 0; !err && i < src->nattrs; i++) {
        const el_attr_spec *a = &src->attrs[i];
        t->name_len[i] = strlen(a->name);
        err = pre_put(t, ",", a->name, ":", &t->attr_off[i], &t->attr_len[i]);
        size_t bad, vlen = a->value ? strlen(a->value) : 0;
        if (!err && a->kind == EL_ATTR_VALUE && a->value &&
            (a->type == EL_TYPE_AUTO || a->type == EL_TYPE_S) &&
            el_utf8_valid(a->value, vlen, &bad)) {
            t->const_off[i] = t->pre.len;
            err = el_buf_append(&t->pre, t->pre.data + t->attr_off[i], t->attr_len[i]);
            if (!err)
                err = el_buf_puts(&t->pre, "{\"S\":");
            if (!err)
                err = el_json_put_string(&t->pre, a->value, vlen);
            if (!err)
                err = el_buf_putc(&t->pre, '}');
            t->const_len[i] = t->pre.len - t->const_off[i];
            t->const_size[i] = strlen(a->name) + vlen;
        }
    }
    return err;
}

el_err el_transform_new(const el_mapping *m, const el_source *src, el_transform **out)
{
    el_transform *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return EL_ENOMEM;
    t->m = m;
    t->src = src;
    el_buf_init(&t->pk, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->sk, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->ipk, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->isk, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->tmp, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->sharded, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&t->pre, (size_t)-1 / 2);
    el_err err = el_ddb_struct_new(&t->conv);
    if (!err)
        err = prepare_fragments(t);
    if (err) {
        el_transform_free(t);
        return err;
    }
    *out = t;
    return EL_OK;
}

void el_transform_free(el_transform *t)
{
    if (!t)
        return;
    el_buf_free(&t->pk);
    el_buf_free(&t->sk);
    el_buf_free(&t->ipk);
    el_buf_free(&t->isk);
    el_buf_free(&t->tmp);
    el_buf_free(&t->sharded);
    el_buf_free(&t->pre);
    el_ddb_struct_free(t->conv);
    free(t->attr_off);
    free(t->attr_len);
    free(t->const_off);
    free(t->const_len);
    free(t->const_size);
    free(t->name_len);
    free(t);
}

static const char *colname(const el_transform *t, size_t col)
{
    const el_schema *s = t->src->bound;
    return s && col < s->ncols ? s->names[col] : "?";
}

static el_err reject(const el_row *row, size_t col, el_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static el_err reject(const el_row *row, size_t col, el_diag *diag, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    el_diag_vset(diag, EL_EREJECT, fmt, ap);
    va_end(ap);
    if (diag) {
        diag->line = row->line;
        diag->offset = row->offset;
        diag->column = col == (size_t)-1 ? 0 : col + 1;
    }
    return EL_EREJECT;
}

/* Renders a key template; empty placeholders or an empty result reject. */
static el_err render_key(el_transform *t, const el_template *tpl, const el_row *row,
                         el_buf *out, const char *what, size_t max, el_diag *diag)
{
    el_buf_reset(out);
    size_t empty;
    el_err err = el_template_render(tpl, row, out, &empty);
    if (err == EL_ELIMIT)
        return reject(row, (size_t)-1, diag, "%s is longer than %zu bytes", what, max);
    if (err)
        return err;
    if (empty != (size_t)-1)
        return reject(row, empty, diag, "%s: column '%s' is %s", what, colname(t, empty),
                      empty < row->ncols && row->values[empty].is_null ? "NULL" : "empty");
    if (out->len == 0)
        return reject(row, (size_t)-1, diag, "%s is empty", what);
    if (out->len > max)
        return reject(row, (size_t)-1, diag, "%s is %zu bytes, more than DynamoDB's %zu", what,
                      out->len, max);
    size_t bad;
    if (!el_utf8_valid(out->data, out->len, &bad)) {
        /* name the column the bad bytes came from, not just the key */
        for (size_t i = 0; i < el_template_nrefs(tpl); i++) {
            size_t col = el_template_ref_index(tpl, i);
            const el_value *v = &row->values[col];
            if (!el_utf8_valid(v->data, v->len, &bad))
                return reject(row, col, diag,
                              "invalid UTF-8 in column '%s' at byte %zu of the value (used in %s)",
                              colname(t, col), bad + 1, what);
        }
        return reject(row, (size_t)-1, diag, "%s is not valid UTF-8 (byte %zu)", what, bad + 1);
    }
    return EL_OK;
}

static el_err put_name(el_buf *json, const char *name, bool first)
{
    el_err err = first ? EL_OK : el_buf_putc(json, ',');
    if (!err)
        err = el_json_put_string(json, name, strlen(name));
    if (!err)
        err = el_buf_putc(json, ':');
    return err;
}

/* Decimal digits of v; the per-item path of every epoch attribute, where
 * el_buf_printf's two vsnprintf calls cost more than the rest of the item.
 * *size gets DynamoDB's size of it as a number: a byte per two significant
 * digits (trailing zeros are not significant), plus one, as
 * el_ddb_number_put sizes a number's text. (An epoch was taken as 21 bytes,
 * the most an int64 can need: an item of epochs looked up to 15 bytes an
 * attribute larger than DynamoDB makes it.) Counted on the digits just
 * written: a second pass of divisions by ten was 107 instructions an item
 * of an edge load (callgrind), 0.7 % of it. */
static el_err put_int64(el_buf *json, int64_t v, size_t *size)
{
    char digits[24];
    size_t n = sizeof digits;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t sig_end = sizeof digits;
    while (sig_end > n && digits[sig_end - 1] == '0')
        sig_end--;
    *size = (sig_end - n + 1) / 2 + 1;
    if (v < 0)
        digits[--n] = '-';
    return el_buf_append(json, digits + n, sizeof digits - n);
}

static el_attr_type auto_type(el_coltype c)
{
    switch (c) {
    case EL_COL_NUMBER: return EL_TYPE_N;
    case EL_COL_BOOL: return EL_TYPE_BOOL;
    case EL_COL_BINARY: return EL_TYPE_B;
    case EL_COL_TEXT: break;
    }
    return EL_TYPE_S;
}

/*
 * Appends one attribute, named name (name_len bytes). col is the source
 * column ((size_t)-1 for literals), ctype its column type. Sets *size to the
 * attribute's DynamoDB size, 0 when the attribute is omitted (SQL NULL).
 */
/* A json, SS or NS value, appended whole ({"M":...}, {"SS":[...]}); an empty
 * set appends nothing and leaves *vsize 0. */
static el_err put_struct(el_transform *t, const el_row *row, el_buf *json, el_attr_type type,
                         char delim, size_t col, const char *where, const char *cname,
                         const char *data, size_t len, size_t *vsize, el_diag *diag)
{
    const char *why = NULL;
    el_err err;
    if (type == EL_TYPE_JSON)
        err = el_ddb_struct_json(t->conv, json, data, len, EL_DDB_MAX_ITEM_BYTES, vsize, &why);
    else
        err = el_ddb_struct_set(t->conv, json, data, len, delim ? delim : EL_SET_DELIMITER,
                                type == EL_TYPE_NS, EL_DDB_MAX_ITEM_BYTES, vsize, &why);
    if (err == EL_EREJECT)
        return reject(row, col, diag, "%s '%s' as %s: %s", where, cname,
                      type == EL_TYPE_JSON ? "json" : type == EL_TYPE_SS ? "SS" : "NS", why);
    return err;
}

static el_err put_attr(el_transform *t, const el_row *row, el_buf *json, const char *name,
                       size_t name_len, const char *pre, size_t pre_len, el_attr_type type,
                       char delim, el_coltype ctype, size_t col, const char *data, size_t len,
                       bool is_null, bool *first, size_t *size, el_diag *diag)
{
    *size = 0;
    if (is_null && type != EL_TYPE_NULL)
        return EL_OK;
    size_t mark = json->len;
    /* pre: the `,"name":` bytes, encoded once (only when not first) */
    el_err err = pre && !*first ? el_buf_append(json, pre, pre_len)
                                : put_name(json, name, *first);
    size_t vsize = 0;
    bool closed = false; /* the value wrote its own closing brace */
    if (!err && is_null) {
        err = el_buf_puts(json, "{\"NULL\":true}");
        vsize = 1;
    } else if (!err) {
        if (type == EL_TYPE_AUTO || type == EL_TYPE_NULL)
            type = auto_type(ctype);
        const char *where = col == (size_t)-1 ? "value" : "column";
        const char *cname = col == (size_t)-1 ? name : colname(t, col);
        switch (type) {
        case EL_TYPE_S: {
            size_t bad;
            if (!el_utf8_valid(data, len, &bad)) {
                el_buf_truncate(json, mark);
                return reject(row, col, diag, "invalid UTF-8 in %s '%s' at byte %zu of the value",
                              where, cname, bad + 1);
            }
            err = el_buf_puts(json, "{\"S\":");
            if (!err)
                err = el_json_put_string(json, data, len);
            vsize = len;
            break;
        }
        case EL_TYPE_N:
        case EL_TYPE_EPOCH: {
            const char *why = NULL;
            err = el_buf_puts(json, "{\"N\":\"");
            if (!err && type == EL_TYPE_EPOCH) {
                int64_t secs;
                if (!el_epoch_parse(data, len, &secs, &why)) {
                    el_buf_truncate(json, mark);
                    return reject(row, col, diag, "%s '%s': %s", where, cname, why);
                }
                err = put_int64(json, secs, &vsize);
            } else if (!err) {
                err = el_ddb_number_put(json, data, len, &vsize, &why);
                if (err == EL_EREJECT) {
                    el_buf_truncate(json, mark);
                    return reject(row, col, diag, "invalid number in %s '%s': %s", where, cname,
                                  why);
                }
            }
            if (!err)
                err = el_buf_putc(json, '"');
            break;
        }
        case EL_TYPE_BOOL: {
            int b = el_bool_parse(data, len);
            if (b < 0) {
                el_buf_truncate(json, mark);
                return reject(row, col, diag, "%s '%s' is not a boolean (true/false, t/f, 1/0)",
                              where, cname);
            }
            err = el_buf_puts(json, b ? "{\"BOOL\":true" : "{\"BOOL\":false");
            vsize = 1;
            break;
        }
        case EL_TYPE_B:
            err = el_buf_puts(json, "{\"B\":\"");
            if (!err)
                err = el_base64_put(json, data, len);
            if (!err)
                err = el_buf_putc(json, '"');
            vsize = len;
            break;
        case EL_TYPE_JSON:
        case EL_TYPE_SS:
        case EL_TYPE_NS:
            err = put_struct(t, row, json, type, delim, col, where, cname, data, len, &vsize,
                             diag);
            if (!err && vsize == 0 && type != EL_TYPE_JSON) {
                /* no members: DynamoDB has no empty set, the attribute is left out */
                el_buf_truncate(json, mark);
                return EL_OK;
            }
            closed = true;
            break;
        case EL_TYPE_AUTO:
        case EL_TYPE_NULL:
            break;
        }
        if (!err && !closed)
            err = el_buf_putc(json, '}');
    }
    if (err) {
        el_buf_truncate(json, mark);
        return err;
    }
    *first = false;
    *size = name_len + vsize;
    return EL_OK;
}

/* Renders PK, SK and (with an index) the index keys into t's buffers and
 * points *ipk and *isk at the index keys: the inversion (the index's partition
 * key is the edge's target) unless index_pk/index_sk are given. */
static el_err render_keys(el_transform *t, const el_row *row, const el_buf **ipk,
                          const el_buf **isk, el_diag *diag)
{
    const el_mapping *m = t->m;
    const el_source *src = t->src;
    el_err err = render_key(t, src->pk, row, &t->pk, m->pk_attr, EL_DDB_MAX_PK_BYTES, diag);
    if (!err)
        err = render_key(t, src->sk, row, &t->sk, m->sk_attr, EL_DDB_MAX_SK_BYTES, diag);
    if (!err && src->index) {
        if (src->index_pk)
            err = render_key(t, src->index_pk, row, &t->ipk, m->index_pk_attr,
                             EL_DDB_MAX_PK_BYTES, diag);
        if (!err && src->index_sk)
            err = render_key(t, src->index_sk, row, &t->isk, m->index_sk_attr,
                             EL_DDB_MAX_SK_BYTES, diag);
    }
    *ipk = src->index_pk ? &t->ipk : &t->sk;
    *isk = src->index_sk ? &t->isk : &t->pk;
    return err;
}

void el_transform_set_plan(el_transform *t, const el_plan *plan)
{
    t->plan = plan;
}

void el_transform_last_key_sizes(const el_transform *t, size_t *keys, size_t *index_keys)
{
    *keys = t->last_key_size;
    *index_keys = t->last_index_key_size;
}

const char *el_transform_last_index_pk(const el_transform *t, size_t *len)
{
    if (!t->last_ipk) {
        *len = 0;
        return NULL;
    }
    *len = t->last_ipk->len;
    return t->last_ipk->data;
}

const char *el_transform_last_index_sk(const el_transform *t, size_t *len)
{
    if (!t->last_isk) {
        *len = 0;
        return NULL;
    }
    *len = t->last_isk->len;
    return t->last_isk->data;
}

el_err el_transform_index_keys(el_transform *t, const el_row *row, const char **ipk,
                               size_t *ipk_len, const char **isk, size_t *isk_len,
                               el_diag *diag)
{
    if (!t->src->index)
        return el_diag_set(diag, EL_EINTERNAL, "source '%s' writes no index", t->src->name);
    const el_buf *p, *s;
    el_err err = render_keys(t, row, &p, &s, diag);
    if (err)
        return err;
    *ipk = p->data;
    *ipk_len = p->len;
    *isk = s->data;
    *isk_len = s->len;
    return EL_OK;
}

/* "attributes": "*" copies every column, but never over a key attribute or
 * an attribute the mapping names itself: an item with a name twice is not
 * one DynamoDB can take (or it would take the column's value as the key). */
static bool star_skips(const el_transform *t, const char *name)
{
    const el_mapping *m = t->m;
    const el_source *src = t->src;
    if (strcmp(name, m->pk_attr) == 0 || strcmp(name, m->sk_attr) == 0)
        return true;
    if (src->index && (strcmp(name, m->index_pk_attr) == 0 ||
                       strcmp(name, m->index_sk_attr) == 0))
        return true;
    for (size_t i = 0; i < src->nattrs; i++)
        if (strcmp(name, src->attrs[i].name) == 0)
            return true;
    return false;
}

el_err el_transform_row(el_transform *t, const el_row *row, el_buf *json, el_buf *key,
                        size_t *item_size, el_diag *diag)
{
    const el_source *src = t->src;
    const el_buf *ipk, *isk;
    el_err err = render_keys(t, row, &ipk, &isk, diag);
    if (err)
        return err;
    if (src->index && t->plan) {
        /* a hot target: its edges spread over N index partitions */
        size_t n = el_plan_shards(t->plan, ipk->data, ipk->len);
        if (n > 1) {
            el_buf_reset(&t->sharded);
            err = el_shard_suffix(&t->sharded, ipk->data, ipk->len,
                                  el_shard_of(isk->data, isk->len, n));
            if (err)
                return el_diag_set(diag, err, "out of memory");
            ipk = &t->sharded;
        }
    }
    t->last_ipk = src->index ? ipk : NULL;
    t->last_isk = src->index ? isk : NULL;

    size_t json_mark = json->len, key_mark = key->len;
    size_t total = 0, sz = 0;
    bool first = false;
    const char *pre = t->pre.data;
    err = el_buf_append(json, pre + t->key_off[0], t->key_len[0]);
    if (!err)
        err = el_json_put_string(json, t->pk.data, t->pk.len);
    if (!err)
        err = el_buf_append(json, pre + t->key_off[1], t->key_len[1]);
    if (!err)
        err = el_json_put_string(json, t->sk.data, t->sk.len);
    total += t->key_names_size + t->pk.len + t->sk.len;
    t->last_key_size = t->table_key_names + t->pk.len + t->sk.len;
    t->last_index_key_size = 0;
    if (!err && src->index) {
        err = el_buf_append(json, pre + t->key_off[2], t->key_len[2]);
        if (!err)
            err = el_json_put_string(json, ipk->data, ipk->len);
        if (!err)
            err = el_buf_append(json, pre + t->key_off[3], t->key_len[3]);
        if (!err)
            err = el_json_put_string(json, isk->data, isk->len);
        total += ipk->len + isk->len;
        t->last_index_key_size = t->index_key_names + ipk->len + isk->len;
    }
    if (!err)
        err = el_buf_putc(json, '}');
    const el_schema *schema = src->bound;
    if (!err && src->all_attrs) {
        for (size_t c = 0; !err && c < row->ncols && c < schema->ncols; c++) {
            const el_value *v = &row->values[c];
            if (star_skips(t, schema->names[c]))
                continue;
            err = put_attr(t, row, json, schema->names[c], strlen(schema->names[c]), NULL, 0,
                           EL_TYPE_AUTO, 0, schema->types[c], c, v->data, v->len, v->is_null,
                           &first, &sz, diag);
            total += sz;
        }
    }
    for (size_t i = 0; !err && i < src->nattrs; i++) {
        const el_attr_spec *a = &src->attrs[i];
        const char *apre = pre + t->attr_off[i];
        size_t alen = t->attr_len[i];
        sz = 0;
        switch (a->kind) {
        case EL_ATTR_COLUMN: {
            const el_value *v = &row->values[a->col];
            err = put_attr(t, row, json, a->name, t->name_len[i], apre, alen, a->type,
                           a->delimiter, schema->types[a->col], a->col, v->data, v->len, v->is_null, &first,
                           &sz, diag);
            break;
        }
        case EL_ATTR_VALUE:
            if (t->const_len[i] && !first) {
                /* the same bytes on every item */
                err = el_buf_append(json, pre + t->const_off[i], t->const_len[i]);
                sz = t->const_size[i];
                break;
            }
            err = put_attr(t, row, json, a->name, t->name_len[i], apre, alen, a->type,
                           a->delimiter, EL_COL_TEXT, (size_t)-1, a->value ? a->value : "",
                           a->value ? strlen(a->value) : 0, a->value == NULL, &first, &sz, diag);
            break;
        case EL_ATTR_TEMPLATE: {
            size_t empty;
            el_buf_reset(&t->tmp);
            err = el_template_render(a->tpl, row, &t->tmp, &empty);
            if (err == EL_ELIMIT)
                err = reject(row, (size_t)-1, diag, "attribute '%s' is larger than an item",
                             a->name);
            if (!err)
                err = put_attr(t, row, json, a->name, t->name_len[i], apre, alen, a->type,
                               a->delimiter, EL_COL_TEXT, (size_t)-1, el_buf_str(&t->tmp), t->tmp.len, false,
                               &first, &sz, diag);
            break;
        }
        }
        total += sz;
    }
    if (!err)
        err = el_buf_putc(json, '}');
    if (!err && total > EL_DDB_MAX_ITEM_BYTES)
        err = reject(row, (size_t)-1, diag, "item is %zu bytes, more than DynamoDB's 400 KB",
                     total);
    if (!err) {
        err = el_buf_append(key, t->pk.data, t->pk.len);
        if (!err)
            err = el_buf_putc(key, '\0');
        if (!err)
            err = el_buf_append(key, t->sk.data, t->sk.len);
    }
    if (err) {
        el_buf_truncate(json, json_mark);
        el_buf_truncate(key, key_mark);
        if (err == EL_ENOMEM || err == EL_ELIMIT)
            return el_diag_set(diag, err, "out of memory building an item");
        return err;
    }
    *item_size = total;
    return EL_OK;
}
