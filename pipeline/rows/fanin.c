/*
 * fanin.c - the hot-key plan of a load: read, or counted in a first pass.
 *
 * DESIGN: the index keys are rendered by the transform itself
 * (el_transform_index_keys), so what is counted is exactly what the load
 * writes; rows the load would reject for their keys add no fan-in. Each
 * input is opened anew (a second reader) rather than rewound, which keeps
 * readers free of seeking.
 *
 * The fan-in of a key is counted over every source that writes it (shard_plan.h):
 * each hot source keeps its own counter while the others are read, and the
 * plan sums them. So the memory is that of every hot source's distinct
 * keys at once (docs/SHARDING.md, "Memory per distinct key").
 */
#include "pipeline/rows/fanin.h"

#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcmp */

#include "pipeline/rows/rowloop.h"
#include "pipeline/rows/transform.h"

/* Counts the fan-in of every unsharded index key of one source's input:
 * a second pass over a seekable file, before anything is written. */
static el_err count_input(el_transform *t, const el_fanin_input *in, el_key_counter *counter,
                          uint64_t *rows, el_diag *diag)
{
    el_input *raw = NULL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = EL_OK;
    if (strcmp(in->path, "-") != 0) {
        err = el_input_open_with(in->path, in->ropts.opener, &raw, &d);
        if (err)
            return el_diag_set(diag, err, "%s", d.msg);
        if (!el_input_seekable(raw)) {
            el_input_free(raw);
            raw = NULL;
        }
    }
    if (!raw)
        return el_diag_set(diag, EL_EUSAGE,
                           "%s: source '%s' has hot-target sharding, which needs the fan-in "
                           "before the first write; standard input cannot be read twice: make "
                           "a plan with 'edgeload plan --plan-out FILE' and give --plan FILE",
                           in->path, in->src->name);
    el_reader *rd;
    err = el_reader_open_input(raw, &in->ropts, &rd, &d);
    if (err)
        return el_diag_set(diag, err, "%s: %s", in->path, d.msg);
    el_rowloop *loop = NULL;
    el_rowloop_opts lo = { .path = in->path, .reader = rd, .transform = t, .src = in->src,
                           .mode = EL_ROWLOOP_INDEX_KEYS };
    if (el_rowloop_new(&lo, &loop)) {
        el_reader_free(rd);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_rowloop_row out;
    while (!(err = el_rowloop_next(loop, NULL, NULL, &out, diag))) {
        if (out.what != EL_ROWLOOP_ITEM)
            continue; /* the load rejects this row; it adds no fan-in */
        (*rows)++;
        err = el_key_counter_add(counter, out.ipk, out.ipk_len);
        if (err) {
            el_diag_set(diag, err, "out of memory counting fan-in");
            break;
        }
    }
    if (err == EL_EOF)
        err = EL_OK;
    el_rowloop_free(loop);
    el_reader_free(rd);
    return err;
}

/* Counts each hot source's inputs into a counter of its own, then decides
 * the hot keys over all of them together: a key's fan-in is every source's
 * edges to it. Sources without hot settings are not read: the mapping
 * check (el_mapping_check) has made sure they write no index key a hot
 * source writes. */
static el_err count_fan_in(const el_mapping *m, const el_fanin_input *inputs, size_t n,
                           el_plan *plan, el_diag *diag)
{
    el_key_counter **counters = calloc(m->nsources ? m->nsources : 1, sizeof *counters);
    if (!counters)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    for (size_t s = 0; !err && s < m->nsources; s++) {
        el_source *src = m->sources[s];
        if (!src->index || src->hot_threshold == 0)
            continue;
        el_transform *t = NULL;
        size_t k = el_plan_nsources(plan); /* the plan source it becomes */
        counters[k] = el_key_counter_new();
        if (!counters[k] || el_transform_new(m, src, &t)) {
            el_transform_free(t);
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
            break;
        }
        uint64_t rows = 0;
        for (size_t i = 0; !err && i < n; i++)
            if (inputs[i].src == src)
                err = count_input(t, &inputs[i], counters[k], &rows, diag);
        el_transform_free(t);
        if (!err)
            err = el_plan_add_source(plan, src->name, rows, src->hot_threshold,
                                     src->max_shards, NULL, diag);
    }
    if (!err)
        err = el_plan_add_counted(plan, (const el_key_counter *const *)counters, diag);
    for (size_t s = 0; s < m->nsources; s++)
        el_key_counter_free(counters[s]);
    free(counters);
    return err;
}

el_err el_fanin_plan(const el_mapping *m, const el_fanin_input *inputs, size_t n,
                     const char *plan_path, el_plan **out, el_diag *diag)
{
    *out = NULL;
    if (plan_path)
        return el_plan_load(plan_path, out, diag);
    bool hot = false;
    for (size_t s = 0; s < m->nsources; s++)
        hot |= m->sources[s]->index && m->sources[s]->hot_threshold > 0;
    if (!hot)
        return EL_OK;
    el_plan *plan = el_plan_new();
    if (!plan)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = count_fan_in(m, inputs, n, plan, diag);
    if (err) {
        el_plan_free(plan);
        return err;
    }
    *out = plan;
    return EL_OK;
}

