/*
 * plan_count.c - the reading pass of `edgeload plan` (plan_count.h).
 *
 * DESIGN: every row is transformed into its item by the transform itself
 * (el_transform_row), so what is counted and sized is exactly what `load`
 * would write: the fan-in of the index key (counted for every row whose
 * keys are valid, as load's own counting pass counts them, so a plan made
 * here shards as that pass would) and each item's DynamoDB size, from which
 * pipeline/plan/estimate.h reckons its write units, its index entry, its
 * partition's share and its line in an import. Keys repeated across the
 * input are found with the dedup --output uses, so the import figures are
 * those of each key once. The shard plan is made of every source's fan-in
 * together (a key's fan-in is that of every source that writes it), and
 * the estimate shards by it: an index partition's units are every source's. Every input is opened (and its source bound)
 * before the first row is read: a bad path or schema stops the pass before
 * minutes of counting, and the progress has the total of input bytes.
 */
#include "pipeline/plan/plan_count.h"

#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* memset, strlen */

#include "common/buf.h"
#include "common/clock.h"       /* el_now_ms: progress once a second */
#include "pipeline/extmem/dedup.h"
#include "pipeline/output/file_sink.h" /* EL_FILE_SINK_LINE_OVERHEAD */
#include "pipeline/rows/inputs.h"
#include "pipeline/rows/rowloop.h"
#include "pipeline/rows/transform.h"

struct el_plan_count {
    const el_plan_count_opts *o;
    el_mapping *m;
    el_plan_source_count *sc;  /* one per mapping source */
    el_transform **t;          /* one per mapping source, made at its first input */
    el_dedup *dedup;           /* every item's key: the import writes each once */
    el_plan *plan;             /* made by el_plan_count_finish */
    el_key_counter *all_targets; /* the fan-in over every source, when several write the
                                     index (else the one source's is used) */
    el_part_count parts;       /* the parts --output would cut */
    el_buf json, keys;         /* the current row's item */
    /* progress */
    el_input_spec *specs;
    el_reader **readers;
    size_t nspecs;
    uint64_t rows_read, rejected;
    double t0, last_report;
};

static el_err count_fanin(el_plan_source_count *sc, const char *ipk, size_t ipk_len,
                          const char *isk, size_t isk_len)
{
    el_err err = el_key_counter_add(sc->targets, ipk, ipk_len);
    if (!err)
        err = el_key_counter_add(sc->sources, isk, isk_len);
    if (!err)
        sc->rows++;
    return err;
}

/* The index units start being counted apart from the fan-in. */
static el_err split_index_units(el_plan_source_count *sc)
{
    if (sc->index_units)
        return EL_OK;
    sc->index_units = el_key_counter_new();
    if (!sc->index_units)
        return EL_ENOMEM;
    return el_key_counter_merge(sc->index_units, sc->targets);
}

/* Counts what a row the transform refused still costs: load's own fan-in
 * pass counts its index keys when they are valid, and so does plan. */
static el_err count_refused(el_plan_count *c, size_t si, const el_row *row)
{
    el_plan_source_count *sc = &c->sc[si];
    if (!sc->src->index)
        return EL_OK;
    el_diag kd;
    el_diag_clear(&kd);
    const char *ipk, *isk;
    size_t ipk_len, isk_len;
    if (el_transform_index_keys(c->t[si], row, &ipk, &ipk_len, &isk, &isk_len, &kd))
        return EL_OK;
    el_err err = split_index_units(sc); /* a key counted that writes nothing */
    return err ? err : count_fanin(sc, ipk, ipk_len, isk, isk_len);
}

/* Counts what the item just made of a row (c->json, c->keys; size its
 * DynamoDB size) costs. */
static el_err count_item(el_plan_count *c, size_t si, size_t size, el_diag *d)
{
    el_plan_source_count *sc = &c->sc[si];
    el_transform *t = c->t[si];
    const el_source *s = sc->src;
    el_err err;
    size_t key_size, index_key_size;
    el_transform_last_key_sizes(t, &key_size, &index_key_size);
    uint64_t entry = s->index ? el_estimate_index_entry(c->o->projection, size, key_size,
                                                        index_key_size)
                              : 0;
    el_estimate_add_item(&sc->est, size, entry, c->json.len);
    el_part_count_add(&c->parts, c->json.len);
    const char *key = el_buf_str(&c->keys); /* "PK\0SK": the partition key ends at the NUL */
    err = el_key_counter_add_n(sc->table_units, key, strlen(key), el_estimate_wcu(size));
    if (!err)
        err = el_dedup_add(c->dedup, c->keys.data, c->keys.len,
                           c->json.len + EL_FILE_SINK_LINE_OVERHEAD, d);
    if (!err && s->index) {
        size_t ipk_len, isk_len;
        const char *ipk = el_transform_last_index_pk(t, &ipk_len);
        const char *isk = el_transform_last_index_sk(t, &isk_len);
        uint64_t units = el_estimate_wcu(entry);
        if (units > 1)
            err = split_index_units(sc);
        if (!err)
            err = count_fanin(sc, ipk, ipk_len, isk, isk_len);
        if (!err && sc->index_units)
            err = el_key_counter_add_n(sc->index_units, ipk, ipk_len, units);
    }
    return err;
}

static void report(el_plan_count *c, bool final)
{
    const el_plan_count_opts *o = c->o;
    if (!o->progress)
        return;
    double now = el_clock_now(c->o->clock);
    if (!final && now - c->last_report < 1000.0)
        return;
    c->last_report = now;
    el_progress p = { .final = final, .phase = "counting" };
    for (size_t i = 0; i < c->nspecs; i++) {
        el_input *raw = c->readers[i] ? el_reader_input(c->readers[i]) : NULL;
        if (raw) {
            p.bytes_done += el_input_raw_consumed(raw);
            p.bytes_total += el_input_raw_size(raw);
        }
    }
    p.st.rows_read = c->rows_read;
    p.st.rejected = c->rejected;
    p.st.elapsed_s = (now - c->t0) / 1000.0;
    o->progress(&p, o->progress_user);
}

/* Reads the i-th input to its end (its source bound at its opening). */
static el_err count_input(el_plan_count *c, size_t i, el_diag *diag)
{
    const el_input_spec *spec = &c->specs[i];
    el_reader *rd = c->readers[i];
    size_t si = 0;
    while (c->m->sources[si] != spec->src)
        si++;
    el_plan_source_count *sc = &c->sc[si];
    el_err err;
    if (!c->t[si] && el_transform_new(c->m, spec->src, &c->t[si]))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_rowloop *loop = NULL;
    el_rowloop_opts lo = { .path = spec->path, .reader = rd, .transform = c->t[si],
                           .src = spec->src, .mode = EL_ROWLOOP_ITEMS };
    if (el_rowloop_new(&lo, &loop))
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_rowloop_row out;
    el_diag d;
    el_diag_clear(&d);
    for (;;) {
        el_buf_reset(&c->json);
        el_buf_reset(&c->keys);
        err = el_rowloop_next(loop, &c->json, &c->keys, &out, diag);
        if (err)
            break;
        c->rows_read++;
        if (out.what == EL_ROWLOOP_ITEM)
            err = count_item(c, si, out.size, &d);
        else if (out.what == EL_ROWLOOP_REJECT_ITEM)
            err = count_refused(c, si, out.row);
        if (!err && out.what != EL_ROWLOOP_ITEM) {
            sc->rejected++;
            c->rejected++;
            if (c->o->on_reject)
                c->o->on_reject(spec->path, out.why, c->o->reject_user);
        }
        if (err == EL_ENOMEM) {
            el_diag_set(diag, err, "%s: out of memory counting %zu distinct targets",
                        spec->path, el_key_counter_distinct(sc->targets));
            break;
        }
        if (err) {
            d.line = out.row->line;
            d.offset = out.row->offset;
            el_rowloop_wrap(spec->path, err, &d, diag);
            break;
        }
        if (c->o->stop && atomic_load(c->o->stop)) {
            err = el_diag_set(diag, EL_EINTR, "interrupted");
            break;
        }
        if ((c->rows_read & 1023) == 0)
            report(c, false);
    }
    el_rowloop_free(loop);
    if (err != EL_EOF)
        return err;
    sc->ninputs++;
    return EL_OK;
}

static el_err count_new(const el_plan_count_opts *o, el_plan_count **out, el_diag *diag)
{
    el_plan_count *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    c->o = o;
    c->m = o->mapping;
    c->t0 = c->last_report = el_clock_now(o->clock);
    size_t n = c->m->nsources;
    c->sc = calloc(n ? n : 1, sizeof *c->sc);
    c->t = calloc(n ? n : 1, sizeof *c->t);
    if (!c->sc || !c->t)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        el_plan_source_count *sc = &c->sc[i];
        sc->src = c->m->sources[i];
        sc->targets = el_key_counter_new();
        sc->sources = el_key_counter_new();
        sc->table_units = el_key_counter_new();
        if (!sc->targets || !sc->sources || !sc->table_units)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_part_count_init(&c->parts, 0, 0);
    el_buf_init(&c->json, 2 * EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&c->keys, EL_DDB_MAX_ITEM_BYTES);
    el_dedup_opts dopts = { .mem_max = o->dedup_memory,
                            .dir = o->tmp_dir && o->tmp_dir[0] ? o->tmp_dir : "/tmp",
                            .with_payload = true };
    return el_dedup_new(&dopts, &c->dedup, diag);
}

el_err el_plan_count_run(const el_plan_count_opts *o, el_plan_count **out, el_diag *diag)
{
    el_plan_count *c;
    el_err err = count_new(o, &c, diag);
    if (!err)
        err = el_inputs_pair(c->m, o->inputs, o->ninputs, &o->reader, &c->specs, &c->nspecs,
                             diag);
    if (!err && !(c->readers = calloc(c->nspecs ? c->nspecs : 1, sizeof *c->readers)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    /* the first input of a source binds it (the reader stays open to the
     * end, its schema bound), the others must have its columns */
    for (size_t i = 0; !err && i < c->nspecs; i++)
        err = el_input_open_bound(&c->specs[i], &c->readers[i], diag);
    for (size_t i = 0; !err && i < c->nspecs; i++)
        err = count_input(c, i, diag);
    if (c)
        report(c, true);
    *out = c;
    return err;
}

const el_plan_source_count *el_plan_count_source(const el_plan_count *c, size_t i)
{
    return &c->sc[i];
}

size_t el_plan_count_nsources(const el_plan_count *c)
{
    return c->m->nsources;
}

/* The shard plan of the counted fan-in: a plan source per source that
 * writes the index, and the hot keys over all of them. */
static el_err make_plan(el_plan_count *c, el_diag *diag)
{
    size_t n = c->m->nsources;
    const el_key_counter **targets = calloc(n ? n : 1, sizeof *targets);
    c->plan = el_plan_new();
    if (!targets || !c->plan) {
        free(targets);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_err err = EL_OK;
    for (size_t i = 0; !err && i < n; i++) {
        const el_plan_source_count *sc = &c->sc[i];
        if (!sc->src->index)
            continue;
        targets[el_plan_nsources(c->plan)] = sc->targets;
        err = el_plan_add_source(c->plan, sc->src->name, sc->rows, sc->src->hot_threshold,
                                 sc->src->max_shards, NULL, diag);
    }
    if (!err)
        err = el_plan_add_counted(c->plan, targets, diag);
    free(targets);
    return err;
}

/* Adds every source's counter that writes the index (of units when it keeps
 * them apart, else of fan-in) into *all; *all stays NULL when fewer than
 * two sources write the index (the one source's counter is the sum). */
static el_err merge_index(const el_plan_count *c, bool units, el_key_counter **all)
{
    size_t nindex = 0;
    for (size_t i = 0; i < c->m->nsources; i++)
        nindex += c->sc[i].src->index;
    *all = NULL;
    if (nindex < 2)
        return EL_OK;
    if (!(*all = el_key_counter_new()))
        return EL_ENOMEM;
    el_err err = EL_OK;
    for (size_t i = 0; !err && i < c->m->nsources; i++) {
        const el_plan_source_count *sc = &c->sc[i];
        if (sc->src->index)
            err = el_key_counter_merge(*all, units && sc->index_units ? sc->index_units
                                                                       : sc->targets);
    }
    return err;
}

/* The counter of a partition key's units of every source that writes the
 * index, whichever holds it: all, or the one source's. */
static const el_key_counter *index_counter(const el_plan_count *c, const el_key_counter *all,
                                            bool units)
{
    if (all)
        return all;
    for (size_t i = 0; i < c->m->nsources; i++)
        if (c->sc[i].src->index)
            return units && c->sc[i].index_units ? c->sc[i].index_units : c->sc[i].targets;
    return NULL;
}

el_err el_plan_count_finish(el_plan_count *c, el_estimate_writes *total,
                            el_import_estimate *imp, el_diag *diag)
{
    memset(total, 0, sizeof *total);
    memset(imp, 0, sizeof *imp);
    el_err err = make_plan(c, diag);
    if (err)
        return err;
    size_t n = c->m->nsources;
    el_key_counter *all = n > 1 ? el_key_counter_new() : NULL, *all_units = NULL;
    if (n > 1 && !all)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        el_plan_source_count *sc = &c->sc[i];
        err = el_estimate_hottest(sc->table_units, NULL, &sc->est.hot_table);
        if (!err && sc->src->index)
            err = el_estimate_hottest(sc->index_units ? sc->index_units : sc->targets, c->plan,
                                      &sc->est.hot_index);
        if (!err && all)
            err = el_key_counter_merge(all, sc->table_units);
        el_estimate_add(total, &sc->est);
    }
    if (!err && all)
        err = el_estimate_hottest(all, NULL, &total->hot_table);
    el_key_counter_free(all);
    /* an index partition takes the writes of every source that writes its
     * key: the total's hottest is found on their sum */
    if (!err)
        err = merge_index(c, false, &c->all_targets);
    bool split_units = false;
    for (size_t i = 0; i < n; i++)
        split_units |= c->sc[i].index_units != NULL;
    if (!err && split_units)
        err = merge_index(c, true, &all_units);
    const el_key_counter *units = split_units ? index_counter(c, all_units, true)
                                               : index_counter(c, c->all_targets, false);
    if (!err && units)
        err = el_estimate_hottest(units, c->plan, &total->hot_index);
    el_key_counter_free(all_units);
    if (err)
        return el_diag_set(diag, err, "out of memory finding the hottest partition");
    err = el_dedup_finish(c->dedup, diag);
    if (err)
        return err;
    imp->items = el_dedup_rows(c->dedup) - el_dedup_duplicates(c->dedup);
    imp->bytes = el_dedup_kept_payload(c->dedup);
    imp->objects = c->parts.parts;
    imp->part_items = c->parts.max_items;
    imp->part_bytes = c->parts.max_bytes;
    return EL_OK;
}

el_plan *el_plan_count_plan(const el_plan_count *c)
{
    return c->plan;
}

const el_key_counter *el_plan_count_targets(const el_plan_count *c)
{
    return index_counter(c, c->all_targets, false);
}

void el_plan_count_free(el_plan_count *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->readers && i < c->nspecs; i++) {
        if (c->readers[i])
            el_input_unbind(c->specs[i].src, c->readers[i]);
        el_reader_free(c->readers[i]);
    }
    free(c->readers);
    el_inputs_free(c->specs, c->nspecs);
    for (size_t i = 0; c->sc && i < c->m->nsources; i++) {
        el_key_counter_free(c->sc[i].targets);
        el_key_counter_free(c->sc[i].sources);
        el_key_counter_free(c->sc[i].table_units);
        el_key_counter_free(c->sc[i].index_units);
        if (c->t)
            el_transform_free(c->t[i]);
    }
    free(c->sc);
    free(c->t);
    el_dedup_free(c->dedup);
    el_plan_free(c->plan);
    el_key_counter_free(c->all_targets);
    el_buf_free(&c->json);
    el_buf_free(&c->keys);
    free(c);
}
