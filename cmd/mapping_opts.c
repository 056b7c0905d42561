/*
 * mapping_opts.c - the mapping and input options of load and verify.
 *
 * DESIGN: verify must recompute exactly the items load writes, so both
 * commands build their mapping here, from the same flags with the same
 * defaults; a difference between the two would make verify report items
 * that load never meant to write.
 */
#include "cmd/mapping_opts.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strchr, strcmp, strndup */

#include "cmd/cli.h"

/* Splits "NAME=REST[:TYPE]"; the type suffix counts only if it names a type. */
static bool split_spec(const char *opt, const char *arg, char **name, char **rest,
                       el_attr_type *type, el_attr_type dflt)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        cli_error("--%s needs NAME=%s[:TYPE], not '%s'", opt,
                  strcmp(opt, "attr") == 0 ? "COLUMN" : "VALUE", arg);
        return false;
    }
    *name = strndup(arg, (size_t)(eq - arg));
    const char *colon = strrchr(eq + 1, ':');
    *type = dflt;
    if (colon && el_attr_type_parse(colon + 1, type) == EL_OK)
        *rest = strndup(eq + 1, (size_t)(colon - eq - 1));
    else
        *rest = strdup(eq + 1);
    return *name && *rest;
}

char **split_columns(const char *s, size_t *n)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    char **v = calloc(cap + 1, sizeof *v);
    if (!v)
        return NULL;
    *n = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == '\0') {
            v[(*n)++] = strndup(start, (size_t)(p - start));
            if (!*p)
                break;
            start = p + 1;
        }
    }
    return v;
}

void mapping_args_free_columns(mapping_args *a)
{
    for (size_t i = 0; i < a->ncolumns; i++)
        free(a->columns[i]);
    free(a->columns);
    a->columns = NULL;
    a->ncolumns = 0;
}

bool mapping_args_init(mapping_args *a, int argc)
{
    *a = (mapping_args){ 0 };
    /* every argument is at most one input or one spec: argc bounds both */
    a->inputs = calloc((size_t)argc + 1, sizeof *a->inputs);
    a->attr_specs = calloc((size_t)argc + 1, sizeof *a->attr_specs);
    return a->inputs && a->attr_specs;
}

void mapping_args_free(mapping_args *a)
{
    if (a->attr_specs)
        for (size_t i = 0; i < a->nattr; i++)
            free(a->attr_specs[i]);
    free(a->attr_specs);
    a->attr_specs = NULL;
    a->nattr = 0;
    free(a->inputs);
    a->inputs = NULL;
    a->ninputs = 0;
    mapping_args_free_columns(a);
}

/* --counter PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE: the templates must not hold
 * a comma (the attribute is after the last comma, the pk before the first). */
static bool add_counter_flag(el_source *src, const char *spec)
{
    const char *c1 = strchr(spec, ','), *c2 = strrchr(spec, ',');
    if (!c1 || c1 == c2 || c1 == spec || c2[1] == '\0') {
        cli_error("--counter needs PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE, not '%s'", spec);
        return false;
    }
    char *pk = strndup(spec, (size_t)(c1 - spec));
    char *sk = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
    el_diag d;
    el_diag_clear(&d);
    bool ok = pk && sk;
    if (!ok)
        cli_error("out of memory");
    else if (el_source_add_counter(src, pk, sk, c2 + 1, &d)) {
        cli_error("--counter %s: %s", spec, d.msg);
        ok = false;
    }
    free(pk);
    free(sk);
    return ok;
}

static const char *const key_names[4] = { "pk", "sk", "index_pk", "index_sk" };

el_mapping *build_mapping(const mapping_args *a, int *rc)
{
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    *rc = EXIT_USAGE;
    if (!a->mapping_path && !a->any_flag) {
        cli_error("no mapping: give --mapping FILE, or --table, --pk and --sk (and --attr...) "
                  "for one source");
        return NULL;
    }
    if (a->mapping_path) {
        if (a->any_flag) {
            cli_error("give the mapping either with --mapping or with --pk/--sk/--attr... "
                      "flags, not both");
            return NULL;
        }
        if (el_mapping_load_file(a->mapping_path, &m, &d)) {
            cli_error("%s", d.msg);
            return NULL;
        }
    } else {
        el_source *src;
        if (el_mapping_new(&m) || el_source_new("input", &src) ||
            el_mapping_add_source(m, src)) {
            cli_error("out of memory");
            el_mapping_free(m);
            *rc = EXIT_FATAL;
            return NULL;
        }
        src->index = !a->no_index;
        src->all_attrs = a->all_columns;
        if (a->source_table)
            src->source_table = strdup(a->source_table);
        for (int k = 0; k < 4; k++) {
            if (a->keys[k] && el_source_set_key(src, key_names[k], a->keys[k], &d)) {
                cli_error("--%s: %s", k < 2 ? key_names[k] : k == 2 ? "index-pk" : "index-sk",
                          d.msg);
                el_mapping_free(m);
                return NULL;
            }
        }
        for (size_t i = 0; i < a->nattr; i++) {
            if (a->attr_specs[i][0] == 'k') {
                if (!add_counter_flag(src, a->attr_specs[i] + 1)) {
                    el_mapping_free(m);
                    return NULL;
                }
                continue;
            }
            bool is_const = a->attr_specs[i][0] == 'c';
            const char *spec = a->attr_specs[i] + 1;
            char *name = NULL, *rest = NULL;
            el_attr_type type;
            bool ok = split_spec(is_const ? "const" : "attr", spec, &name, &rest, &type,
                                 is_const ? EL_TYPE_S : EL_TYPE_AUTO);
            if (ok && el_source_add_attr(src, name, is_const ? EL_ATTR_VALUE : EL_ATTR_COLUMN,
                                         rest, type, &d)) {
                cli_error("--%s %s: %s", is_const ? "const" : "attr", spec, d.msg);
                ok = false;
            }
            free(name);
            free(rest);
            if (!ok) {
                el_mapping_free(m);
                return NULL;
            }
        }
    }
    if (a->table && (free(m->table), !(m->table = strdup(a->table)))) {
        el_mapping_free(m);
        return NULL;
    }
    if (a->index_name) {
        char pk[300], sk[300];
        snprintf(pk, sizeof pk, "%sPK", a->index_name);
        snprintf(sk, sizeof sk, "%sSK", a->index_name);
        free(m->index_name);
        free(m->index_pk_attr);
        free(m->index_sk_attr);
        m->index_name = strdup(a->index_name);
        m->index_pk_attr = strdup(pk);
        m->index_sk_attr = strdup(sk);
    }
    for (size_t i = 0; i < m->nsources; i++) {
        el_source *s = m->sources[i];
        if (!s->index)
            continue;
        if (a->hot_threshold)
            s->hot_threshold = (uint64_t)a->hot_threshold;
        if (a->max_shards)
            s->max_shards = (size_t)a->max_shards;
        else if (s->hot_threshold && !s->max_shards)
            s->max_shards = EL_DEFAULT_MAX_SHARDS;
    }
    if (el_mapping_check(m, &d)) {
        cli_error("%s", d.msg);
        el_mapping_free(m);
        return NULL;
    }
    *rc = EXIT_LOADED;
    return m;
}
