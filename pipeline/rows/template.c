/*
 * template.c - parse once, render per row.
 *
 * DESIGN: a template is compiled into one array of placeholders, each
 * carrying the literal run that precedes it, plus the literal run after the
 * last one, so rendering a row is a loop of appends with no parsing.
 * Binding to a schema is separate from parsing because one mapping source
 * may be read from several inputs, each with its own column order.
 *
 * Memory is in proportion to the text, whatever its shape: the text is
 * scanned twice, once to check it and count what it holds, once to fill
 * arrays of exactly that size: the placeholders (12 bytes each), one block
 * with every literal run (unescaped) and every column name (NUL-terminated),
 * and the template as written. A placeholder takes at least 3 bytes of text
 * ("{a}"), so the plan costs at most about 6 bytes per byte of text (1 MB of
 * "{a}": 5.9 MB, measured in tests/unit/test_template.c). An earlier version
 * allocated each literal run and each name on its own, at least 64 bytes
 * apiece, and grew its array one element at a time: 50-70 MB for a 1 MB
 * template.
 */
#include "pipeline/rows/template.h"

#include <stdint.h>  /* uint32_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, malloc, free */
#include <string.h>  /* memcpy, strlen, strcmp */

#include "common/hash.h"  /* el_fnv1a64: the schema's names by hash, for bind */

#define NO_COL UINT32_MAX

typedef struct ref {
    uint32_t lit_len;          /* the literal run before the placeholder: it ends
                                  where the name starts, in t->text */
    uint32_t name_off;         /* the column name, NUL-terminated, in t->text */
    uint32_t col;              /* bound column index, NO_COL until bound */
} ref;

struct el_template {
    char *source;              /* as written */
    char *text;                /* literal runs and names */
    ref *refs;
    uint32_t nrefs;
    uint32_t tail_off, tail_len; /* the literal run after the last placeholder */
};

void el_template_free(el_template *t)
{
    if (!t)
        return;
    free(t->refs);
    free(t->text);
    free(t->source);
    free(t);
}

/* One scan of the text. With t->text NULL it only checks the syntax and
 * counts (*nrefs, *bytes: literal bytes plus names with their NULs); else it
 * fills t->text and t->refs, which have exactly that room. */
static el_err scan(const char *src, el_template *t, size_t *nrefs, size_t *bytes,
                   el_diag *diag)
{
    size_t nr = 0, used = 0, lit_start = 0, lit_total = 0;
    bool fill = t->text != NULL;
    for (size_t i = 0; src[i]; i++) {
        char c = src[i];
        if ((c == '{' && src[i + 1] == '{') || (c == '}' && src[i + 1] == '}')) {
            if (fill)
                t->text[used] = c;
            used++;
            lit_total++;
            i++;
        } else if (c == '{') {
            size_t j = i + 1;
            while (src[j] && src[j] != '}' && src[j] != '{')
                j++;
            if (src[j] != '}')
                return el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                                  "unclosed '{' at position %zu in template '%s' "
                                  "(write '{{' for a literal brace)", i + 1, src);
            if (j == i + 1)
                return el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                                  "empty placeholder '{}' at position %zu in template '%s'",
                                  i + 1, src);
            size_t name_len = j - i - 1;
            if (fill) {
                ref *r = &t->refs[nr];
                r->lit_len = (uint32_t)(used - lit_start);
                r->name_off = (uint32_t)used;
                r->col = NO_COL;
                memcpy(t->text + used, src + i + 1, name_len);
                t->text[used + name_len] = '\0';
            }
            used += name_len + 1;
            lit_start = used;
            nr++;
            i = j;
        } else if (c == '}') {
            return el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                              "unmatched '}' at position %zu in template '%s' "
                              "(write '}}' for a literal brace)", i + 1, src);
        } else {
            if (fill)
                t->text[used] = c;
            used++;
            lit_total++;
        }
    }
    if (lit_total > EL_TEMPLATE_MAX_LITERAL)
        return el_diag_set(diag, EL_EUSAGE,
                           "template '%.40s...' has %zu bytes of literal text, more than the "
                           "%u allowed", src, lit_total, (unsigned)EL_TEMPLATE_MAX_LITERAL);
    if (fill) {
        t->tail_off = (uint32_t)lit_start;
        t->tail_len = (uint32_t)(used - lit_start);
    }
    *nrefs = nr;
    *bytes = used;
    return EL_OK;
}

el_err el_template_parse(const char *text, el_template **out, el_diag *diag)
{
    *out = NULL;
    size_t len = strlen(text);
    if (len > EL_TEMPLATE_MAX_TEXT)
        return el_diag_set(diag, EL_EUSAGE, "template '%.40s...' is %zu bytes, more than the "
                           "%u allowed", text, len, (unsigned)EL_TEMPLATE_MAX_TEXT);
    el_template probe = { 0 };
    size_t nrefs, bytes;
    el_err err = scan(text, &probe, &nrefs, &bytes, diag);
    if (err)
        return err;
    el_template *t = calloc(1, sizeof *t);
    if (t) {
        t->source = malloc(len + 1);
        t->text = malloc(bytes + 1); /* + 1: never malloc(0) */
        t->refs = nrefs ? malloc(nrefs * sizeof *t->refs) : NULL;
    }
    if (!t || !t->source || !t->text || (nrefs && !t->refs)) {
        el_template_free(t);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    memcpy(t->source, text, len + 1);
    t->nrefs = (uint32_t)nrefs;
    err = scan(text, t, &nrefs, &bytes, diag);
    if (err) { /* the first scan accepted it: cannot happen */
        el_template_free(t);
        return err;
    }
    *out = t;
    return EL_OK;
}

void el_schema_list_columns(const el_schema *schema, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < schema->ncols && used < len; i++) {
        int n = snprintf(out + used, len - used, "%s%s", i ? ", " : "", schema->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    if (schema->ncols == 0)
        snprintf(out, len, "(none)");
    if (schema->origin) {
        size_t at = strlen(out);
        snprintf(out + at, len - at, " (as edgeload read %s)", schema->origin);
    }
}

/* The schema's column names by hash (open addressing; slots hold index + 1,
 * 0 = empty), so binding costs O(columns + placeholders), not their
 * product: a template of many placeholders against a wide table. The first
 * of two equal names wins, as a linear search would give. */
typedef struct name_index {
    uint32_t *slot;
    size_t mask;
} name_index;

static el_err name_index_build(name_index *ix, const el_schema *schema)
{
    size_t cap = 16;
    while (cap < schema->ncols * 2)
        cap *= 2;
    ix->slot = calloc(cap, sizeof *ix->slot);
    ix->mask = cap - 1;
    if (!ix->slot)
        return EL_ENOMEM;
    for (size_t c = 0; c < schema->ncols; c++) {
        const char *name = schema->names[c];
        size_t i = (size_t)el_fnv1a64(name, strlen(name)) & ix->mask;
        bool dup = false;
        while (ix->slot[i] && !(dup = strcmp(schema->names[ix->slot[i] - 1], name) == 0))
            i = (i + 1) & ix->mask;
        if (!dup)
            ix->slot[i] = (uint32_t)c + 1;
    }
    return EL_OK;
}

static uint32_t name_index_find(const name_index *ix, const el_schema *schema, const char *name)
{
    size_t i = (size_t)el_fnv1a64(name, strlen(name)) & ix->mask;
    for (; ix->slot[i]; i = (i + 1) & ix->mask)
        if (strcmp(schema->names[ix->slot[i] - 1], name) == 0)
            return ix->slot[i] - 1;
    return NO_COL;
}

el_err el_template_bind(el_template *t, const el_schema *schema, el_diag *diag)
{
    if (t->nrefs == 0)
        return EL_OK;
    name_index ix;
    if (name_index_build(&ix, schema))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    for (uint32_t i = 0; i < t->nrefs; i++) {
        ref *r = &t->refs[i];
        const char *name = t->text + r->name_off;
        r->col = name_index_find(&ix, schema, name);
        if (r->col == NO_COL) {
            char cols[700];
            el_schema_list_columns(schema, cols, sizeof cols);
            err = el_diag_set(diag, EL_EUSAGE,
                              "unknown column '%s' in template '%s'; the input has columns: %s",
                              name, t->source, cols);
            break;
        }
    }
    free(ix.slot);
    return err;
}

el_err el_template_render(const el_template *t, const el_row *row, el_buf *out,
                          size_t *empty_col)
{
    *empty_col = (size_t)-1;
    el_err err = EL_OK;
    for (uint32_t i = 0; i < t->nrefs; i++) {
        const ref *r = &t->refs[i];
        if (r->lit_len) {
            err = el_buf_append(out, t->text + r->name_off - r->lit_len, r->lit_len);
            if (err)
                return err;
        }
        const el_value *v = r->col < row->ncols ? &row->values[r->col] : NULL;
        if (!v || v->is_null || v->len == 0) {
            if (*empty_col == (size_t)-1)
                *empty_col = r->col == NO_COL ? (size_t)-1 : r->col;
            continue;
        }
        err = el_buf_append(out, v->data, v->len);
        if (err)
            return err;
    }
    return t->tail_len ? el_buf_append(out, t->text + t->tail_off, t->tail_len) : EL_OK;
}

const char *el_template_text(const el_template *t) { return t->source; }

/* The literal text before the first placeholder (all of it when there is
 * none), and after the last one. */
static const char *head_of(const el_template *t, size_t *len)
{
    *len = t->nrefs ? t->refs[0].lit_len : t->tail_len;
    return t->nrefs ? t->text : t->text + t->tail_off;
}

static const char *tail_of(const el_template *t, size_t *len)
{
    *len = t->tail_len;
    return t->text + t->tail_off;
}

/* Bytes of literal text in t. */
static size_t literal_bytes(const el_template *t)
{
    size_t n = t->tail_len;
    for (uint32_t i = 0; i < t->nrefs; i++)
        n += t->refs[i].lit_len;
    return n;
}

bool el_template_may_equal(const el_template *a, const el_template *b)
{
    size_t ha, hb, ta, tb;
    const char *pa = head_of(a, &ha), *pb = head_of(b, &hb);
    if (memcmp(pa, pb, ha < hb ? ha : hb) != 0)
        return false;
    const char *sa = tail_of(a, &ta), *sb = tail_of(b, &tb);
    size_t n = ta < tb ? ta : tb;
    if (memcmp(sa + ta - n, sb + tb - n, n) != 0)
        return false;
    if (a->nrefs == 0 && b->nrefs == 0)
        return ha == hb;
    if (a->nrefs == 0 || b->nrefs == 0) {
        const el_template *lit = a->nrefs ? b : a, *other = a->nrefs ? a : b;
        if (lit->tail_len < literal_bytes(other) + other->nrefs)
            return false;
    }
    return true;
}

bool el_template_is_literal(const el_template *t)
{
    return t->nrefs == 0;
}

size_t el_template_nrefs(const el_template *t)
{
    return t->nrefs;
}

const char *el_template_ref_name(const el_template *t, size_t i)
{
    return i < t->nrefs ? t->text + t->refs[i].name_off : NULL;
}

size_t el_template_ref_index(const el_template *t, size_t i)
{
    return i < t->nrefs && t->refs[i].col != NO_COL ? t->refs[i].col : (size_t)-1;
}
