/*
 * template.c - parse once, render per row.
 *
 * DESIGN: a template is compiled into a list of parts, each a literal run or
 * a column reference, so rendering a row is a loop of appends with no
 * parsing. Binding to a schema is separate from parsing because one mapping
 * source may be read from several inputs, each with its own column order.
 */
#include "pipeline/template.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strlen, strcmp */

typedef struct part {
    bool is_ref;
    char *text;      /* literal text, or the column name */
    size_t len;
    size_t col;      /* bound column index */
} part;

struct el_template {
    char *source;
    part *parts;
    size_t nparts;
};

void el_template_free(el_template *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nparts; i++)
        free(t->parts[i].text);
    free(t->parts);
    free(t->source);
    free(t);
}

static el_err add_part(el_template *t, bool is_ref, el_buf *text)
{
    if (!is_ref && text->len == 0)
        return EL_OK;
    part *p = realloc(t->parts, (t->nparts + 1) * sizeof *p);
    if (!p)
        return EL_ENOMEM;
    t->parts = p;
    part *np = &t->parts[t->nparts];
    np->is_ref = is_ref;
    np->len = text->len;
    np->col = (size_t)-1;
    np->text = el_buf_take(text);
    if (!np->text)
        return EL_ENOMEM;
    t->nparts++;
    return EL_OK;
}

el_err el_template_parse(const char *text, el_template **out, el_diag *diag)
{
    *out = NULL;
    el_template *t = calloc(1, sizeof *t);
    if (!t || !(t->source = strdup(text))) {
        free(t);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_buf cur;
    el_buf_init(&cur, 64 * 1024);
    el_err err = EL_OK;
    for (size_t i = 0; text[i] && !err; i++) {
        char c = text[i];
        if (c == '{' && text[i + 1] == '{') {
            err = el_buf_putc(&cur, '{');
            i++;
        } else if (c == '}' && text[i + 1] == '}') {
            err = el_buf_putc(&cur, '}');
            i++;
        } else if (c == '{') {
            const char *end = strchr(text + i + 1, '}');
            const char *open = strchr(text + i + 1, '{');
            if (!end || (open && open < end)) {
                err = el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                                 "unclosed '{' at position %zu in template '%s' "
                                 "(write '{{' for a literal brace)", i + 1, text);
                break;
            }
            if (end == text + i + 1) {
                err = el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                                 "empty placeholder '{}' at position %zu in template '%s'",
                                 i + 1, text);
                break;
            }
            err = add_part(t, false, &cur);
            if (!err)
                err = el_buf_append(&cur, text + i + 1, (size_t)(end - text - i - 1));
            if (!err)
                err = add_part(t, true, &cur);
            i = (size_t)(end - text);
        } else if (c == '}') {
            err = el_diag_at(diag, EL_EUSAGE, 0, i + 1, 0,
                             "unmatched '}' at position %zu in template '%s' "
                             "(write '}}' for a literal brace)", i + 1, text);
        } else {
            err = el_buf_putc(&cur, c);
        }
    }
    if (!err)
        err = add_part(t, false, &cur);
    el_buf_free(&cur);
    if (err) {
        if (err == EL_ENOMEM || err == EL_ELIMIT)
            el_diag_set(diag, err, "template too large or out of memory");
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
}

el_err el_template_bind(el_template *t, const el_schema *schema, el_diag *diag)
{
    for (size_t i = 0; i < t->nparts; i++) {
        part *p = &t->parts[i];
        if (!p->is_ref)
            continue;
        p->col = (size_t)-1;
        for (size_t c = 0; c < schema->ncols; c++) {
            if (strcmp(schema->names[c], p->text) == 0) {
                p->col = c;
                break;
            }
        }
        if (p->col == (size_t)-1) {
            char cols[700];
            el_schema_list_columns(schema, cols, sizeof cols);
            return el_diag_set(diag, EL_EUSAGE,
                               "unknown column '%s' in template '%s'; the input has columns: %s",
                               p->text, t->source, cols);
        }
    }
    return EL_OK;
}

el_err el_template_render(const el_template *t, const el_row *row, el_buf *out,
                          size_t *empty_col)
{
    *empty_col = (size_t)-1;
    for (size_t i = 0; i < t->nparts; i++) {
        const part *p = &t->parts[i];
        el_err err;
        if (!p->is_ref) {
            err = el_buf_append(out, p->text, p->len);
        } else {
            const el_value *v = p->col < row->ncols ? &row->values[p->col] : NULL;
            if (!v || v->is_null || v->len == 0) {
                if (*empty_col == (size_t)-1)
                    *empty_col = p->col;
                continue;
            }
            err = el_buf_append(out, v->data, v->len);
        }
        if (err)
            return err;
    }
    return EL_OK;
}

const char *el_template_text(const el_template *t) { return t->source; }

bool el_template_is_literal(const el_template *t)
{
    for (size_t i = 0; i < t->nparts; i++)
        if (t->parts[i].is_ref)
            return false;
    return true;
}

size_t el_template_nrefs(const el_template *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nparts; i++)
        n += t->parts[i].is_ref;
    return n;
}

static const part *nth_ref(const el_template *t, size_t i)
{
    for (size_t k = 0; k < t->nparts; k++)
        if (t->parts[k].is_ref && i-- == 0)
            return &t->parts[k];
    return NULL;
}

const char *el_template_ref_name(const el_template *t, size_t i)
{
    const part *p = nth_ref(t, i);
    return p ? p->text : NULL;
}

size_t el_template_ref_index(const el_template *t, size_t i)
{
    const part *p = nth_ref(t, i);
    return p ? p->col : (size_t)-1;
}
