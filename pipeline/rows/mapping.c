/*
 * mapping.c - the mapping model, its JSON form, and binding to inputs.
 *
 * DESIGN: the JSON file is parsed with yajl's tree API (mapping files are
 * small) and turned at once into the same structs the command-line flags
 * build, so validation and binding have one path. Unknown keys are errors:
 * a misspelt "atributes" silently ignored would load the wrong table.
 */
#include "pipeline/rows/mapping.h"

#include <errno.h>      /* errno for file errors */
#include <stdarg.h>     /* va_list for jerr */
#include <stdio.h>      /* FILE, fopen */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* strcmp, strdup */
#include <strings.h>    /* strcasecmp */
#include <yajl/yajl_tree.h> /* mapping files are small: the tree API is enough */

#include "common/json_guard.h"
#include "common/buf.h"
#include "common/file.h"

/* In el_attr_type's order. */
static const char *const type_names[] = { "auto", "S", "N",     "BOOL", "B",
                                          "NULL", "epoch", "json", "SS", "NS" };

const char *el_attr_type_name(el_attr_type t)
{
    return (size_t)t < sizeof type_names / sizeof *type_names ? type_names[t] : "?";
}

el_err el_attr_type_parse(const char *s, el_attr_type *out)
{
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
        if (strcasecmp(s, type_names[i]) == 0) {
            *out = (el_attr_type)i;
            return EL_OK;
        }
    }
    return EL_EUSAGE;
}

el_err el_mapping_new(el_mapping **out)
{
    el_mapping *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m)
        return EL_ENOMEM;
    m->pk_attr = strdup("PK");
    m->sk_attr = strdup("SK");
    m->index_name = strdup("GSI1");
    m->index_pk_attr = strdup("GSI1PK");
    m->index_sk_attr = strdup("GSI1SK");
    if (!m->pk_attr || !m->sk_attr || !m->index_name || !m->index_pk_attr || !m->index_sk_attr) {
        el_mapping_free(m);
        return EL_ENOMEM;
    }
    *out = m;
    return EL_OK;
}

void el_source_free(el_source *src)
{
    if (!src)
        return;
    free(src->name);
    free(src->input);
    free(src->source_table);
    free(src->null_string);
    for (size_t i = 0; i < src->ncolumns; i++)
        free(src->columns[i]);
    free(src->columns);
    el_template_free(src->pk);
    el_template_free(src->sk);
    el_template_free(src->index_pk);
    el_template_free(src->index_sk);
    for (size_t i = 0; i < src->nattrs; i++) {
        free(src->attrs[i].name);
        free(src->attrs[i].column);
        free(src->attrs[i].value);
        el_template_free(src->attrs[i].tpl);
    }
    free(src->attrs);
    for (size_t i = 0; i < src->ncounters; i++) {
        el_template_free(src->counters[i].pk);
        el_template_free(src->counters[i].sk);
        free(src->counters[i].attribute);
    }
    free(src->counters);
    free(src);
}

void el_mapping_free(el_mapping *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nsources; i++)
        el_source_free(m->sources[i]);
    free(m->sources);
    free(m->table);
    free(m->pk_attr);
    free(m->sk_attr);
    free(m->index_name);
    free(m->index_pk_attr);
    free(m->index_sk_attr);
    free(m->base_dir);
    el_table_settings_free(m->create_table);
    free(m);
}

el_err el_source_new(const char *name, el_source **out)
{
    el_source *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s || !(s->name = strdup(name))) {
        free(s);
        return EL_ENOMEM;
    }
    s->index = true;
    *out = s;
    return EL_OK;
}

el_err el_mapping_add_source(el_mapping *m, el_source *src)
{
    el_source **v = realloc(m->sources, (m->nsources + 1) * sizeof *v);
    if (!v) {
        el_source_free(src);
        return EL_ENOMEM;
    }
    m->sources = v;
    m->sources[m->nsources++] = src;
    return EL_OK;
}

el_err el_source_set_key(el_source *src, const char *which, const char *text, el_diag *diag)
{
    el_template **slot = strcmp(which, "pk") == 0         ? &src->pk
                         : strcmp(which, "sk") == 0       ? &src->sk
                         : strcmp(which, "index_pk") == 0 ? &src->index_pk
                         : strcmp(which, "index_sk") == 0 ? &src->index_sk
                                                          : NULL;
    if (!slot)
        return el_diag_set(diag, EL_EINTERNAL, "no key '%s'", which);
    el_template *t;
    el_err err = el_template_parse(text, &t, diag);
    if (err)
        return err;
    el_template_free(*slot);
    *slot = t;
    return EL_OK;
}

el_err el_source_add_attr(el_source *src, const char *name, el_attr_kind kind,
                          const char *text, el_attr_type type, el_diag *diag)
{
    if (!name[0])
        return el_diag_set(diag, EL_EUSAGE, "source '%s': an attribute has an empty name",
                           src->name);
    for (size_t i = 0; i < src->nattrs; i++)
        if (strcmp(src->attrs[i].name, name) == 0)
            return el_diag_set(diag, EL_EUSAGE, "source '%s': attribute '%s' given twice",
                               src->name, name);
    el_attr_spec *v = realloc(src->attrs, (src->nattrs + 1) * sizeof *v);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    src->attrs = v;
    el_attr_spec *a = &src->attrs[src->nattrs];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->type = type;
    a->col = (size_t)-1;
    a->name = strdup(name);
    if (!a->name)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    switch (kind) {
    case EL_ATTR_COLUMN:
        if (!text || !text[0])
            err = el_diag_set(diag, EL_EUSAGE, "source '%s': attribute '%s' names no column",
                              src->name, name);
        else if (!(a->column = strdup(text)))
            err = EL_ENOMEM;
        break;
    case EL_ATTR_VALUE:
        if (text && !(a->value = strdup(text)))
            err = EL_ENOMEM;
        break;
    case EL_ATTR_TEMPLATE:
        err = el_template_parse(text ? text : "", &a->tpl, diag);
        break;
    }
    if (err) {
        free(a->name);
        free(a->column);
        free(a->value);
        if (err == EL_ENOMEM)
            el_diag_set(diag, err, "out of memory");
        return err;
    }
    src->nattrs++;
    return EL_OK;
}

el_err el_source_add_counter(el_source *src, const char *pk, const char *sk,
                             const char *attribute, el_diag *diag)
{
    if (!attribute || !attribute[0])
        return el_diag_set(diag, EL_EUSAGE, "source '%s': a counter needs an attribute name",
                           src->name);
    el_counter_spec *v = realloc(src->counters, (src->ncounters + 1) * sizeof *v);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    src->counters = v;
    el_counter_spec *c = &v[src->ncounters];
    memset(c, 0, sizeof *c);
    el_err err = el_template_parse(pk, &c->pk, diag);
    if (!err)
        err = el_template_parse(sk, &c->sk, diag);
    if (!err && !(c->attribute = strdup(attribute)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (err) {
        el_template_free(c->pk);
        el_template_free(c->sk);
        free(c->attribute);
        return err;
    }
    src->ncounters++;
    return EL_OK;
}

bool el_mapping_has_counters(const el_mapping *m)
{
    for (size_t i = 0; m && i < m->nsources; i++)
        if (m->sources[i]->ncounters > 0)
            return true;
    return false;
}

/* "hot threshold T, max_shards M" or "no hot settings", for messages. */
static const char *hot_settings(const el_source *s, char *buf, size_t cap)
{
    if (s->hot_threshold)
        snprintf(buf, cap, "hot threshold %llu, max_shards %zu",
                 (unsigned long long)s->hot_threshold, s->max_shards);
    else
        snprintf(buf, cap, "no hot settings");
    return buf;
}

/* A hot index key is the index's, not a source's: every source's edges to
 * it go to its shards, and its fan-in is all of theirs (pipeline/sharding/shard_plan.h).
 * So sources whose index keys may meet must shard them by the same
 * settings; whether they do meet is known only from the data, whether
 * they may is known from the templates (el_template_may_equal). Deciding
 * it here, before any reading, also lets the counting pass read only the
 * hot sources. */
static el_err check_hot_sharing(const el_mapping *m, el_diag *diag)
{
    for (size_t i = 0; i < m->nsources; i++) {
        const el_source *a = m->sources[i];
        if (!a->index)
            continue;
        for (size_t j = i + 1; j < m->nsources; j++) {
            const el_source *b = m->sources[j];
            if (!b->index || (a->hot_threshold == b->hot_threshold &&
                              (!a->hot_threshold || a->max_shards == b->max_shards)))
                continue;
            const el_template *ta = a->index_pk ? a->index_pk : a->sk;
            const el_template *tb = b->index_pk ? b->index_pk : b->sk;
            if (!el_template_may_equal(ta, tb))
                continue;
            char sa[80], sb[80];
            return el_diag_set(diag, EL_EUSAGE,
                               "sources '%s' and '%s' may write the same index partition key "
                               "('%s' and '%s') but shard hot keys differently (%s; %s): a hot "
                               "key's edges from both must go to the same shards, so give both "
                               "the same \"hot\" settings, or index keys that cannot meet (a "
                               "different literal prefix)", a->name, b->name,
                               el_template_text(ta), el_template_text(tb),
                               hot_settings(a, sa, sizeof sa), hot_settings(b, sb, sizeof sb));
        }
    }
    return EL_OK;
}

el_err el_mapping_check(const el_mapping *m, el_diag *diag)
{
    if (!m->table || !m->table[0])
        return el_diag_set(diag, EL_EUSAGE, "no table given (--table, or \"table\" in the mapping)");
    if (m->nsources == 0)
        return el_diag_set(diag, EL_EUSAGE, "the mapping has no sources");
    const char *keys[] = { m->pk_attr, m->sk_attr, m->index_pk_attr, m->index_sk_attr };
    for (size_t i = 0; i < m->nsources; i++) {
        const el_source *s = m->sources[i];
        if (!s->pk)
            return el_diag_set(diag, EL_EUSAGE, "source '%s' has no pk template (--pk)", s->name);
        if (!s->sk)
            return el_diag_set(diag, EL_EUSAGE, "source '%s' has no sk template (--sk)", s->name);
        for (size_t a = 0; a < s->nattrs; a++)
            for (size_t k = 0; k < 4; k++)
                if (strcmp(s->attrs[a].name, keys[k]) == 0)
                    return el_diag_set(diag, EL_EUSAGE,
                                       "source '%s': attribute '%s' would overwrite a key "
                                       "attribute", s->name, keys[k]);
        for (size_t a = 0; a < s->ncounters; a++)
            for (size_t k = 0; k < 4; k++)
                if (strcmp(s->counters[a].attribute, keys[k]) == 0)
                    return el_diag_set(diag, EL_EUSAGE,
                                       "source '%s': counter attribute '%s' is a key attribute",
                                       s->name, keys[k]);
        if (s->hot_threshold && !s->index)
            return el_diag_set(diag, EL_EUSAGE, "source '%s': hot sharding applies to the "
                               "index partition key, but the source writes no index", s->name);
        if (s->hot_threshold && (s->max_shards < 2 || s->max_shards > EL_MAX_MAX_SHARDS))
            return el_diag_set(diag, EL_EUSAGE, "source '%s': max shards must be from 2 to %d",
                               s->name, EL_MAX_MAX_SHARDS);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->sources[j]->name, s->name) == 0)
                return el_diag_set(diag, EL_EUSAGE, "two sources are named '%s'", s->name);
    }
    return check_hot_sharing(m, diag);
}

el_err el_source_bind(el_source *src, const el_schema *schema, el_diag *diag)
{
    el_template *tpls[] = { src->pk, src->sk, src->index_pk, src->index_sk };
    for (size_t i = 0; i < 4; i++) {
        if (!tpls[i])
            continue;
        el_err err = el_template_bind(tpls[i], schema, diag);
        if (err)
            return err;
    }
    for (size_t i = 0; i < src->nattrs; i++) {
        el_attr_spec *a = &src->attrs[i];
        if (a->kind == EL_ATTR_TEMPLATE) {
            el_err err = el_template_bind(a->tpl, schema, diag);
            if (err)
                return err;
        } else if (a->kind == EL_ATTR_COLUMN) {
            a->col = (size_t)-1;
            for (size_t c = 0; c < schema->ncols; c++)
                if (strcmp(schema->names[c], a->column) == 0)
                    a->col = c;
            if (a->col == (size_t)-1) {
                char cols[700];
                el_schema_list_columns(schema, cols, sizeof cols);
                return el_diag_set(diag, EL_EUSAGE,
                                   "unknown column '%s' for attribute '%s' of source '%s'; "
                                   "the input has columns: %s", a->column, a->name, src->name,
                                   cols);
            }
        }
    }
    for (size_t i = 0; i < src->ncounters; i++) {
        el_err err = el_template_bind(src->counters[i].pk, schema, diag);
        if (!err)
            err = el_template_bind(src->counters[i].sk, schema, diag);
        if (err)
            return err;
    }
    src->bound = schema;
    return EL_OK;
}

char *el_mapping_input_path(const el_mapping *m, const char *path)
{
    if (!m->base_dir || path[0] == '/' || strcmp(path, "-") == 0 || strncmp(path, "s3://", 5) == 0)
        return strdup(path);
    el_buf b;
    el_buf_init(&b, 1u << 20);
    if (el_buf_printf(&b, "%s/%s", m->base_dir, path)) {
        el_buf_free(&b);
        return NULL;
    }
    return el_buf_take(&b);
}

el_reader_opts el_source_reader_opts(const el_source *s, const el_reader_opts *base)
{
    el_reader_opts ro = *base;
    if (s->format != EL_FMT_AUTO)
        ro.format = s->format;
    if (s->delimiter)
        ro.delimiter = s->delimiter;
    if (s->null_string)
        ro.null_string = s->null_string;
    if (s->escape)
        ro.escape = s->escape;
    if (s->columns) {
        ro.columns = (const char *const *)s->columns;
        ro.ncolumns = s->ncolumns;
    }
    if (s->source_table)
        ro.source_table = s->source_table;
    return ro;
}

/* ---- the JSON form ---- */

typedef struct jctx {
    el_diag *diag;
} jctx;

static el_err jerr(jctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static el_err jerr(jctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    el_diag_vset(c->diag, EL_EUSAGE, fmt, ap);
    va_end(ap);
    return EL_EUSAGE;
}

static const char *jstr(yajl_val v)
{
    return YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

static el_err parse_attr(jctx *c, el_source *s, const char *name, yajl_val spec)
{
    if (YAJL_IS_STRING(spec))
        return el_source_add_attr(s, name, EL_ATTR_COLUMN, jstr(spec), EL_TYPE_AUTO, c->diag);
    if (!YAJL_IS_OBJECT(spec))
        return jerr(c, "attribute '%s' of source '%s' must be an object such as "
                       "{\"column\": \"c\"}", name, s->name);
    el_attr_kind kind = EL_ATTR_COLUMN;
    const char *text = NULL;
    bool have = false;
    el_attr_type type = EL_TYPE_AUTO;
    bool type_given = false;
    const char *delimiter = NULL;
    for (size_t i = 0; i < spec->u.object.len; i++) {
        const char *k = spec->u.object.keys[i];
        yajl_val v = spec->u.object.values[i];
        if (strcmp(k, "type") == 0) {
            if (!jstr(v) || el_attr_type_parse(jstr(v), &type))
                return jerr(c, "attribute '%s': unknown type (use S, N, BOOL, B, NULL, epoch, "
                               "json, SS, NS or auto) in source '%s'", name, s->name);
            type_given = true;
            continue;
        }
        if (strcmp(k, "delimiter") == 0) {
            delimiter = jstr(v);
            if (!delimiter || strlen(delimiter) != 1)
                return jerr(c, "attribute '%s' of source '%s': \"delimiter\" must be one "
                               "character, such as \";\"", name, s->name);
            continue;
        }
        el_attr_kind kk;
        if (strcmp(k, "column") == 0)
            kk = EL_ATTR_COLUMN;
        else if (strcmp(k, "value") == 0)
            kk = EL_ATTR_VALUE;
        else if (strcmp(k, "template") == 0)
            kk = EL_ATTR_TEMPLATE;
        else
            return jerr(c, "attribute '%s' has an unknown key \"%s\" (expected column, "
                           "value, template, type or delimiter) in source '%s'", name, k,
                        s->name);
        if (have)
            return jerr(c, "attribute '%s' of source '%s' gives more than one of column, "
                           "value and template", name, s->name);
        have = true;
        kind = kk;
        if (kk == EL_ATTR_VALUE && !YAJL_IS_STRING(v)) {
            if (YAJL_IS_NUMBER(v)) {
                text = v->u.number.r;
                if (!type_given)
                    type = EL_TYPE_N;
            } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
                text = YAJL_IS_TRUE(v) ? "true" : "false";
                if (!type_given)
                    type = EL_TYPE_BOOL;
            } else if (YAJL_IS_NULL(v)) {
                text = NULL;
                type = EL_TYPE_NULL;
            } else {
                return jerr(c, "attribute '%s' of source '%s': value must be a string, "
                               "number, boolean or null", name, s->name);
            }
        } else {
            if (!jstr(v))
                return jerr(c, "attribute '%s' of source '%s': expected a string", name,
                            s->name);
            text = jstr(v);
        }
    }
    if (!have)
        return jerr(c, "attribute '%s' of source '%s' needs column, value or template", name,
                    s->name);
    if (delimiter && type != EL_TYPE_SS && type != EL_TYPE_NS)
        return jerr(c, "attribute '%s' of source '%s': \"delimiter\" is for the set types "
                       "SS and NS, not %s", name, s->name, el_attr_type_name(type));
    el_err err = el_source_add_attr(s, name, kind, text, type, c->diag);
    if (!err && delimiter)
        s->attrs[s->nattrs - 1].delimiter = delimiter[0];
    return err;
}

/* "hot": {"threshold": N, "max_shards": M}; M defaults to 32. */
static el_err parse_hot(jctx *c, el_source *s, yajl_val v)
{
    if (!YAJL_IS_OBJECT(v))
        return jerr(c, "source '%s': \"hot\" must be an object {\"threshold\": N, "
                       "\"max_shards\": M}", s->name);
    bool have_threshold = false;
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *k = v->u.object.keys[i];
        yajl_val x = v->u.object.values[i];
        bool is_threshold = strcmp(k, "threshold") == 0;
        if (!is_threshold && strcmp(k, "max_shards") != 0)
            return jerr(c, "source '%s': \"hot\" has an unknown key \"%s\" (expected "
                           "threshold, max_shards)", s->name, k);
        long long n = YAJL_IS_INTEGER(x) ? YAJL_GET_INTEGER(x) : 0;
        if (is_threshold && n < 1)
            return jerr(c, "source '%s': hot \"threshold\" must be a positive integer",
                        s->name);
        if (!is_threshold && (n < 2 || n > EL_MAX_MAX_SHARDS))
            return jerr(c, "source '%s': hot \"max_shards\" must be an integer from 2 to %d",
                        s->name, EL_MAX_MAX_SHARDS);
        if (is_threshold) {
            s->hot_threshold = (uint64_t)n;
            have_threshold = true;
        } else {
            s->max_shards = (size_t)n;
        }
    }
    if (!have_threshold)
        return jerr(c, "source '%s': \"hot\" needs a \"threshold\"", s->name);
    if (s->max_shards == 0)
        s->max_shards = EL_DEFAULT_MAX_SHARDS;
    return EL_OK;
}

/* "counters": [{"pk": TPL, "sk": TPL, "attribute": NAME}, ...] */
static el_err parse_counters(jctx *c, el_source *s, yajl_val v)
{
    if (!YAJL_IS_ARRAY(v))
        return jerr(c, "source '%s': \"counters\" must be a list of {\"pk\", \"sk\", "
                       "\"attribute\"} objects", s->name);
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val o = v->u.array.values[i];
        if (!YAJL_IS_OBJECT(o))
            return jerr(c, "source '%s': counter %zu must be an object {\"pk\", \"sk\", "
                           "\"attribute\"}", s->name, i + 1);
        const char *f[3] = { NULL, NULL, NULL };
        static const char *const names[3] = { "pk", "sk", "attribute" };
        for (size_t j = 0; j < o->u.object.len; j++) {
            size_t which = 3;
            for (size_t n = 0; n < 3; n++)
                if (strcmp(o->u.object.keys[j], names[n]) == 0)
                    which = n;
            if (which == 3)
                return jerr(c, "source '%s': counter %zu has an unknown key \"%s\" (expected "
                               "pk, sk, attribute)", s->name, i + 1, o->u.object.keys[j]);
            if (!(f[which] = jstr(o->u.object.values[j])))
                return jerr(c, "source '%s': counter %zu: \"%s\" must be a string", s->name,
                            i + 1, names[which]);
        }
        for (size_t n = 0; n < 3; n++)
            if (!f[n])
                return jerr(c, "source '%s': counter %zu needs \"%s\"", s->name, i + 1,
                            names[n]);
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_source_add_counter(s, f[0], f[1], f[2], &d);
        if (err)
            return el_diag_set(c->diag, err, "source '%s': counter %zu: %s", s->name, i + 1,
                               d.msg);
    }
    return EL_OK;
}

static el_err parse_source(jctx *c, el_mapping *m, yajl_val v, size_t idx)
{
    if (!YAJL_IS_OBJECT(v)) {
        char n[32];
        snprintf(n, sizeof n, "%zu", idx + 1);
        return jerr(c, "source %s must be an object", n);
    }
    const char *name = jstr(yajl_tree_get(v, (const char *[]){ "name", NULL }, yajl_t_string));
    char defname[32];
    snprintf(defname, sizeof defname, "source%zu", idx + 1);
    el_source *s;
    if (el_source_new(name ? name : defname, &s))
        return el_diag_set(c->diag, EL_ENOMEM, "out of memory");
    el_err err = el_mapping_add_source(m, s);
    if (err)
        return el_diag_set(c->diag, err, "out of memory");
    for (size_t i = 0; i < v->u.object.len && !err; i++) {
        const char *k = v->u.object.keys[i];
        yajl_val x = v->u.object.values[i];
        if (strcmp(k, "name") == 0) {
            if (!jstr(x))
                err = jerr(c, "source %s: \"name\" must be a string", s->name);
        } else if (strcmp(k, "input") == 0 || strcmp(k, "source_table") == 0 ||
                   strcmp(k, "null") == 0) {
            if (!jstr(x)) {
                err = jerr(c, "source '%s': \"%s\" must be a string", s->name, k);
                break;
            }
            char *dup = strdup(jstr(x));
            if (!dup)
                return el_diag_set(c->diag, EL_ENOMEM, "out of memory");
            char **slot = k[0] == 'i' ? &s->input : k[0] == 's' ? &s->source_table
                                                                 : &s->null_string;
            free(*slot);
            *slot = dup;
        } else if (strcmp(k, "format") == 0) {
            if (!jstr(x) || el_format_parse(jstr(x), &s->format))
                err = jerr(c, "source '%s': unknown format (csv, tsv, mysql, postgres, sqlite, "
                              "auto)", s->name);
        } else if (strcmp(k, "delimiter") == 0) {
            if (!jstr(x) || strlen(jstr(x)) != 1)
                err = jerr(c, "source '%s': \"delimiter\" must be one character", s->name);
            else
                s->delimiter = jstr(x)[0];
        } else if (strcmp(k, "escape") == 0) {
            /* "\\" in JSON is one backslash; "" is none */
            if (!jstr(x) || strlen(jstr(x)) > 1 || jstr(x)[0] == '\n' || jstr(x)[0] == '\r')
                err = jerr(c, "source '%s': \"escape\" must be one character", s->name);
            else
                s->escape = jstr(x)[0];
        } else if (strcmp(k, "columns") == 0) {
            if (!YAJL_IS_ARRAY(x) || x->u.array.len == 0) {
                err = jerr(c, "source '%s': \"columns\" must be a list of names", s->name);
                break;
            }
            for (size_t j = 0; j < s->ncolumns; j++) /* a repeated key: the last wins */
                free(s->columns[j]);
            free(s->columns);
            s->ncolumns = 0;
            s->columns = calloc(x->u.array.len, sizeof(char *));
            if (!s->columns)
                return el_diag_set(c->diag, EL_ENOMEM, "out of memory");
            for (size_t j = 0; j < x->u.array.len && !err; j++) {
                if (!jstr(x->u.array.values[j]))
                    err = jerr(c, "source '%s': \"columns\" must be a list of names",
                               s->name);
                else if (!(s->columns[s->ncolumns++] = strdup(jstr(x->u.array.values[j]))))
                    return el_diag_set(c->diag, EL_ENOMEM, "out of memory");
            }
        } else if (strcmp(k, "pk") == 0 || strcmp(k, "sk") == 0 || strcmp(k, "index_pk") == 0 ||
                   strcmp(k, "index_sk") == 0) {
            if (!jstr(x))
                err = jerr(c, "source '%s': \"%s\" must be a template string", s->name, k);
            else
                err = el_source_set_key(s, k, jstr(x), c->diag);
        } else if (strcmp(k, "index") == 0) {
            if (YAJL_IS_FALSE(x))
                s->index = false;
            else if (YAJL_IS_TRUE(x))
                s->index = true;
            else
                err = jerr(c, "source '%s': \"index\" must be true or false", s->name);
        } else if (strcmp(k, "attributes") == 0) {
            if (jstr(x) && strcmp(jstr(x), "*") == 0) {
                s->all_attrs = true;
            } else if (YAJL_IS_OBJECT(x)) {
                for (size_t j = 0; j < x->u.object.len && !err; j++)
                    err = parse_attr(c, s, x->u.object.keys[j], x->u.object.values[j]);
            } else {
                err = jerr(c, "source '%s': \"attributes\" must be an object or \"*\"",
                           s->name);
            }
        } else if (strcmp(k, "hot") == 0) {
            err = parse_hot(c, s, x);
        } else if (strcmp(k, "counters") == 0) {
            err = parse_counters(c, s, x);
        } else {
            err = jerr(c, "source '%s' has an unknown key \"%s\"", s->name, k);
        }
    }
    return err;
}

static el_err set_str(char **slot, const char *v)
{
    char *d = strdup(v);
    if (!d)
        return EL_ENOMEM;
    free(*slot);
    *slot = d;
    return EL_OK;
}

el_err el_mapping_parse(const char *json, size_t len, const char *base_dir, el_mapping **out,
                        el_diag *diag)
{
    *out = NULL;
    jctx c = { diag };
    /* bounded before yajl builds the tree: see json_guard.h */
    yajl_val root;
    if (el_json_tree_parse(json, len, EL_MAPPING_MAX_DEPTH, EL_MAPPING_MAX_VALUES, "mapping",
                           &root, diag))
        return EL_EUSAGE;
    el_mapping *m;
    el_err err = el_mapping_new(&m);
    if (err) {
        yajl_tree_free(root);
        return el_diag_set(diag, err, "out of memory");
    }
    if (base_dir && set_str(&m->base_dir, base_dir))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err && !YAJL_IS_OBJECT(root))
        err = el_diag_set(diag, EL_EUSAGE, "mapping must be a JSON object");
    for (size_t i = 0; !err && i < root->u.object.len; i++) {
        const char *k = root->u.object.keys[i];
        yajl_val v = root->u.object.values[i];
        if (strcmp(k, "table") == 0) {
            if (!jstr(v) || !jstr(v)[0])
                err = el_diag_set(diag, EL_EUSAGE, "mapping: \"table\" must be a table name");
            else if (set_str(&m->table, jstr(v)))
                err = EL_ENOMEM;
        } else if (strcmp(k, "index") == 0) {
            if (!YAJL_IS_OBJECT(v)) {
                err = el_diag_set(diag, EL_EUSAGE,
                                  "mapping: \"index\" must be an object {\"name\", \"pk\", \"sk\"}");
                break;
            }
            for (size_t j = 0; !err && j < v->u.object.len; j++) {
                const char *ik = v->u.object.keys[j];
                const char *iv = jstr(v->u.object.values[j]);
                char **slot = strcmp(ik, "name") == 0 ? &m->index_name
                              : strcmp(ik, "pk") == 0 ? &m->index_pk_attr
                              : strcmp(ik, "sk") == 0 ? &m->index_sk_attr
                                                      : NULL;
                if (!slot || !iv || !iv[0])
                    err = el_diag_set(diag, EL_EUSAGE, "mapping: index key \"%s\" is unknown or "
                                      "not a non-empty string (expected name, pk, sk)", ik);
                else if (set_str(slot, iv))
                    err = EL_ENOMEM;
            }
        } else if (strcmp(k, "key") == 0) {
            /* extension: the table's own key attribute names (default PK/SK) */
            const char *pk = jstr(yajl_tree_get(v, (const char *[]){ "pk", NULL }, yajl_t_string));
            const char *sk = jstr(yajl_tree_get(v, (const char *[]){ "sk", NULL }, yajl_t_string));
            if (!YAJL_IS_OBJECT(v) || !pk || !sk || !pk[0] || !sk[0])
                err = el_diag_set(diag, EL_EUSAGE, "mapping: \"key\" must be {\"pk\": \"PK\", "
                                  "\"sk\": \"SK\"}");
            else if (set_str(&m->pk_attr, pk) || set_str(&m->sk_attr, sk))
                err = EL_ENOMEM;
        } else if (strcmp(k, "create_table") == 0) {
            /* only create-table reads it; every command checks it alike */
            el_table_settings_free(m->create_table); /* a key given twice: the last */
            m->create_table = el_table_settings_new();
            if (!m->create_table)
                err = EL_ENOMEM;
            else
                err = el_table_settings_from_json(m->create_table, v, diag);
        } else if (strcmp(k, "sources") == 0) {
            if (!YAJL_IS_ARRAY(v)) {
                err = el_diag_set(diag, EL_EUSAGE, "mapping: \"sources\" must be a list");
                break;
            }
            for (size_t j = 0; !err && j < v->u.array.len; j++)
                err = parse_source(&c, m, v->u.array.values[j], j);
        } else {
            err = el_diag_set(diag, EL_EUSAGE, "mapping has an unknown key \"%s\"", k);
        }
    }
    yajl_tree_free(root);
    if (err == EL_ENOMEM)
        el_diag_set(diag, err, "out of memory");
    if (!err)
        err = el_mapping_check(m, diag);
    if (err) {
        el_mapping_free(m);
        return err;
    }
    *out = m;
    return EL_OK;
}

el_err el_mapping_load_file(const char *path, el_mapping **out, el_diag *diag)
{
    *out = NULL;
    el_buf b;
    el_buf_init(&b, EL_MAPPING_MAX_BYTES);
    /* a mapping that cannot be read is refused like a wrong one: nothing ran */
    if (el_read_named_file("mapping", path, "16 MB", &b, diag))
        return EL_EUSAGE;
    char *dir = strdup(path);
    if (!dir) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        slash[slash == dir ? 1 : 0] = '\0';
    else
        memcpy(dir, ".", 2); /* fits: path is not empty, so dir has 2 bytes */
    el_diag inner;
    el_diag_clear(&inner);
    el_err err = el_mapping_parse(el_buf_str(&b), b.len, dir, out, &inner);
    if (err)
        el_diag_set(diag, err, "%s: %s", path, inner.msg);
    free(dir);
    el_buf_free(&b);
    return err;
}
