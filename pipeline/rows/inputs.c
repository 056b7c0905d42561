/*
 * inputs.c - pairing inputs with sources, and opening them bound.
 *
 * DESIGN: load, verify, incremental and plan must agree on which file a
 * source reads, or verify would check items load never wrote; so the rule
 * and its messages are written once, here.
 */
#include "pipeline/rows/inputs.h"

#include <stdbool.h>  /* bool */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strcmp, strdup */

el_err el_inputs_pair(const el_mapping *m, const char *const *inputs, size_t n,
                      const el_reader_opts *cli, el_input_spec **out, size_t *nout,
                      el_diag *diag)
{
    *out = NULL;
    *nout = 0;
    size_t count = n ? n : m->nsources;
    if (n && m->nsources > 1 && n != m->nsources)
        return el_diag_set(diag, EL_EUSAGE,
                           "%zu inputs given for %zu sources: give one input per source, in the "
                           "mapping's order, or none to use each source's \"input\"",
                           n, m->nsources);
    el_input_spec *v = calloc(count ? count : 1, sizeof *v);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        el_source *src = m->sources[m->nsources == 1 ? 0 : i];
        const char *path = n ? inputs[i] : src->input;
        if (!path) {
            el_inputs_free(v, i);
            return el_diag_set(diag, EL_EUSAGE,
                               "source '%s' has no input: give it \"input\" in the mapping or "
                               "name the file on the command line", src->name);
        }
        v[i].src = src;
        v[i].ropts = el_source_reader_opts(src, cli);
        v[i].path = n ? strdup(path) : el_mapping_input_path(m, path);
        if (!v[i].path) {
            el_inputs_free(v, i);
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
    }
    *out = v;
    *nout = count;
    return EL_OK;
}

void el_inputs_free(el_input_spec *specs, size_t n)
{
    for (size_t i = 0; specs && i < n; i++)
        free(specs[i].path);
    free(specs);
}

static bool same_columns(const el_schema *a, const el_schema *b)
{
    if (a->ncols != b->ncols)
        return false;
    for (size_t i = 0; i < a->ncols; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

el_err el_input_open_bound(const el_input_spec *spec, el_reader **out, el_diag *diag)
{
    *out = NULL;
    el_reader_opts ro = spec->ropts;
    el_reader *r;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_reader_open(spec->path, &ro, &r, &d);
    if (err) {
        if (d.line)
            return el_diag_set(diag, err, "%s:%llu: %s", spec->path,
                               (unsigned long long)d.line, d.msg);
        /* input.c names the file in its own messages */
        return el_diag_set(diag, err, "%s", d.msg);
    }
    err = el_input_bind(spec, r, diag);
    if (err) {
        el_reader_free(r);
        return err;
    }
    *out = r;
    return EL_OK;
}

el_err el_input_bind(const el_input_spec *spec, const el_reader *r, el_diag *diag)
{
    el_source *s = spec->src;
    const el_schema *schema = el_reader_schema(r);
    if (s->bound && !same_columns(s->bound, schema))
        return el_diag_set(diag, EL_EUSAGE,
                           "%s: columns differ from the other inputs of source '%s'; inputs of "
                           "one source must have the same columns in the same order",
                           spec->path, s->name);
    el_diag d;
    el_diag_clear(&d);
    el_err err = s->bound ? EL_OK : el_source_bind(s, schema, &d);
    return err ? el_diag_set(diag, err, "%s: %s", spec->path, d.msg) : EL_OK;
}

void el_input_unbind(el_source *src, const el_reader *r)
{
    if (r && src->bound == el_reader_schema(r))
        src->bound = NULL;
}
