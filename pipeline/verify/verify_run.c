/*
 * verify_run.c - recompute the expected items, fetch them, compare.
 *
 * DESIGN: the expected items come from the very code that load runs (the
 * readers, el_source_bind and el_transform_row), so verify cannot disagree
 * with load about what an item should be. All inputs are read first, into a
 * keyed sample (pipeline/extmem/sample.h; unbounded in full mode), which gives the
 * "later row of a key wins" rule for free and means an input error stops
 * the run before any request is made. Only then are the items fetched, 100
 * keys a BatchGetItem, through the request driver (verify_get.c), and the
 * reverse check's Queries sent (verify_reverse.c). Full mode holds every
 * distinct expected item in memory; --sample bounds it.
 *
 * Counters are counted while the items are read, by pipeline/counters/counters.c
 * itself (the backfill's code: verify and the backfill cannot disagree on
 * what a count is), then their items go through the same batch loop as the
 * expected items: the loop works on a keyed set (el_sample) and only the
 * comparison and the report differ. Counter items are checked apart from
 * the expected items, in requests of their own, because a counter item is
 * often an entity item too and BatchGetItem refuses a key twice.
 *
 * Values are compared as DynamoDB means them (formats/ddb_item.h;
 * verify_report.c), not as text.
 */
#include "pipeline/verify/verify_run.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcmp, strlen, strnlen */

#include "common/clock.h"      /* el_now_ms */
#include "formats/ddb_value.h" /* el_json_put_string */
#include "pipeline/rows/fanin.h"
#include "pipeline/rows/inputs.h"
#include "pipeline/rows/rowloop.h"
#include "pipeline/sharding/shard.h"     /* el_shard_of, el_shard_directory_item */
#include "pipeline/rows/transform.h"

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

bool verify_stopping(const vrun *v)
{
    return v->o->stop && *v->o->stop;
}

uint64_t verify_settled(const vrun *v)
{
    return v->cur_counters ? v->st->counter_items : v->st->present + v->st->missing;
}

void verify_progress(vrun *v, const char *phase, uint64_t done, uint64_t total, bool final)
{
    if (!v->o->progress)
        return;
    double now = el_clock_now(v->o->clock);
    if (!final && phase == v->phase && now - v->last_report < 1000.0)
        return;
    v->last_report = now;
    v->phase = phase;
    el_progress p = { .final = final, .phase = phase, .done = done, .total = total,
                      .reads = true, .window = v->drv ? el_ddb_driver_window(v->drv) : 0 };
    const el_verify_stats *st = v->st;
    p.st.rows_read = st->rows_read;
    p.st.rejected = st->rejected;
    p.st.duplicates = st->duplicates;
    if (v->drv) {
        const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(v->drv);
        p.st.requests = ds->requests;
        p.st.retries = ds->resends + st->retries;
        p.st.throttled = ds->throttled;
        p.st.wcu_consumed = ds->consumed; /* read units: p.reads */
    }
    p.st.elapsed_s = (now - v->t0) / 1000.0;
    v->o->progress(&p, v->o->progress_user);
}

el_err verify_put_key(el_buf *b, const vrun *v, const char *key, size_t klen)
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

bool verify_key_of(const vrun *v, const el_ddb_val *item, el_buf *key)
{
    const char *pk = el_ddb_item_string(item, v->m->pk_attr);
    const char *sk = el_ddb_item_string(item, v->m->sk_attr);
    el_buf_reset(key);
    return pk && sk && el_buf_append(key, pk, strlen(pk) + 1) == EL_OK &&
           el_buf_append(key, sk, strlen(sk)) == EL_OK;
}

/* ---- reading the inputs ---- */

/* Opens an input, or (--split) the byte range of it that is this part,
 * bound to its source. */
static el_err open_input(const el_input_spec *spec, const el_split_part *part, el_reader **r,
                         el_diag *diag)
{
    if (!part || part->kind != EL_SPLIT_RANGE)
        return el_input_open_bound(spec, r, diag);
    el_input_spec range = *spec;
    range.ropts.format = part->format;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_reader_open_range(spec->path, &range.ropts, &part->range, r, &d);
    if (err)
        return el_diag_set(diag, err, "%s", d.msg);
    if ((err = el_input_bind(spec, *r, diag))) {
        el_reader_free(*r);
        *r = NULL;
    }
    return err;
}

/* Keeps the item key under its unsharded index partition key (the reverse
 * check's sample), with the shard the item goes to: a hot key's edges,
 * from every source, are checked on its shards together. */
static el_err offer_target(vrun *v, el_transform *t, const el_row *row, const char *key,
                           size_t klen, el_diag *diag)
{
    const char *ipk, *isk;
    size_t ipk_len, isk_len;
    el_diag kd;
    el_diag_clear(&kd);
    /* the row became an item: its keys render */
    el_err err = el_transform_index_keys(t, row, &ipk, &ipk_len, &isk, &isk_len, &kd);
    if (err)
        return el_diag_set(diag, EL_EINTERNAL, "index keys of an item: %s", kd.msg);
    size_t n = v->plan ? el_plan_shards(v->plan, ipk, ipk_len) : 1;
    el_sample_verdict verdict;
    size_t slot;
    err = el_sample_offer(v->targets, ipk, ipk_len, &verdict, &slot);
    if (!err && verdict != EL_SAMPLE_OUT) {
        el_buf *set = el_sample_value(v->targets, slot);
        if (verdict == EL_SAMPLE_NEW)
            el_buf_reset(set);
        uint32_t head[2] = { (uint32_t)el_shard_of(isk, isk_len, n), (uint32_t)klen };
        err = el_buf_append(set, head, sizeof head);
        err = err ? err : el_buf_append(set, key, klen);
    }
    if (err)
        el_diag_set(diag, err, "cannot keep the expected index entries: %s", el_strerror(err));
    return err;
}

/* A row of src that cannot become an item: counted, and by its source. */
static void count_reject(vrun *v, const el_source *src)
{
    v->st->rejected++;
    if (!v->o->rejected_by_source)
        return;
    for (size_t i = 0; i < v->m->nsources; i++)
        if (v->m->sources[i] == src)
            v->o->rejected_by_source[i]++;
}

static el_err read_input(vrun *v, const el_input_spec *spec, const el_split_part *part,
                         el_diag *diag)
{
    el_reader *r = NULL;
    el_transform *t = NULL;
    el_source *src = spec->src;
    const char *path = spec->path;
    if (part && part->kind == EL_SPLIT_NONE)
        return EL_OK; /* --split: another part's input */
    el_err err = open_input(spec, part, &r, diag);
    if (!err && el_transform_new(v->m, src, &t))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err && v->plan)
        el_transform_set_plan(t, v->plan);
    el_buf json, key;
    el_buf_init(&json, EL_DDB_MAX_ITEM_BYTES * 2);
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    /* as the loader does: a row that becomes an item counts */
    el_counters_tap tap;
    el_counters_tap_init(&tap, v->counters);
    el_rowloop *loop = NULL;
    el_rowloop_opts lo = { .path = path, .reader = r, .transform = t, .src = src,
                           .mode = EL_ROWLOOP_ITEMS, .observer = el_counters_tap_observer(&tap) };
    if (!err && el_rowloop_new(&lo, &loop))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    while (!err) {
        if (verify_stopping(v)) {
            err = el_diag_set(diag, EL_EINTR, "interrupted");
            break;
        }
        el_rowloop_row out;
        el_buf_reset(&json);
        el_buf_reset(&key);
        err = el_rowloop_next(loop, &json, &key, &out, diag);
        if (err == EL_EOF) {
            err = EL_OK;
            break;
        }
        if (err)
            break;
        if ((++v->st->rows_read & 1023) == 0)
            verify_progress(v, "reading", 0, 0, false);
        if (out.what != EL_ROWLOOP_ITEM) {
            count_reject(v, src);
            continue;
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
            err = offer_target(v, t, out.row, key.data, key.len, diag);
    }
    el_rowloop_free(loop);
    el_counters_tap_free(&tap);
    el_buf_free(&json);
    el_buf_free(&key);
    el_transform_free(t);
    /* the source borrows the schema it was bound to: not past the reader's
     * life (the next input of the source compared its columns with freed
     * memory); the column indices stay */
    el_input_unbind(src, r);
    el_reader_free(r);
    return err;
}

/* --split I/N: this part of each input, as load --split reads it (each input
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

/* The shard directory item of every hot key, as load writes it before the
 * rows (a row of the same key, should there be one, wins as in the load). */
static el_err expect_directories(vrun *v, el_diag *diag)
{
    el_buf json, key;
    el_buf_init(&json, EL_DDB_MAX_ITEM_BYTES);
    el_buf_init(&key, EL_DDB_MAX_PK_BYTES + EL_DDB_MAX_SK_BYTES + 2);
    el_err err = EL_OK;
    for (size_t h = 0; !err && h < el_plan_nhot(v->plan); h++) {
        const el_plan_hot *hot = el_plan_get_hot(v->plan, h);
        size_t size, slot;
        el_sample_verdict verdict;
        el_buf_reset(&json);
        el_buf_reset(&key);
        err = el_shard_directory_item(&json, &key, v->m->pk_attr, v->m->sk_attr, hot->key,
                                      hot->len, hot->shards, hot->fan_in, &size);
        err = err ? err : el_sample_offer(v->items, key.data, key.len, &verdict, &slot);
        if (!err && verdict != EL_SAMPLE_OUT) {
            el_buf *item = el_sample_value(v->items, slot);
            el_buf_reset(item);
            err = el_buf_append(item, json.data, json.len);
        }
        v->st->directories++;
    }
    el_buf_free(&json);
    el_buf_free(&key);
    if (err)
        el_diag_set(diag, err, "cannot keep the expected shard directory items: %s",
                    el_strerror(err));
    return err;
}

/* Pairs inputs with sources as load does and reads them in order. */
static el_err read_inputs(vrun *v, el_diag *diag)
{
    const el_verify_opts *o = v->o;
    el_mapping *m = o->mapping;
    el_input_spec *specs;
    size_t n;
    el_err err = el_inputs_pair(m, o->inputs, o->ninputs, &o->reader, &specs, &n, diag);
    if (err)
        return err;
    el_fanin_input *fin = calloc(n ? n : 1, sizeof *fin);
    if (!fin)
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < n; i++) {
        el_source *src = specs[i].src;
        fin[i] = (el_fanin_input){ specs[i].path, src, specs[i].ropts };
        /* hot sources need their fan-in before the first item is computed,
         * and that needs every source bound to its columns: open each input
         * once to bind it */
        if (src->index && (src->hot_threshold || o->plan_path)) {
            el_reader *r = NULL;
            err = el_input_open_bound(&specs[i], &r, diag);
            el_input_unbind(src, r); /* the column indices stay */
            el_reader_free(r);
        }
    }
    if (!err)
        err = el_fanin_plan(m, fin, n, o->plan_path, &v->plan, diag);
    if (!err && v->plan && !o->counters_only)
        err = expect_directories(v, diag);
    el_split_part *parts = NULL;
    if (!err && o->split.count) /* --split I/N: this part only */
        err = split_parts(v, fin, n, &parts, diag);
    for (size_t i = 0; !err && i < n; i++)
        err = read_input(v, &specs[i], parts ? &parts[i] : NULL, diag);
    free(parts);
    free(fin);
    el_inputs_free(specs, n);
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

el_err el_verify_run(const el_verify_opts *o, el_verify_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_clock_now(o->clock);
    vrun v = { .o = o, .m = o->mapping, .st = st, .t0 = t0, .last_report = t0 };
    el_buf_init(&v.req, VERIFY_REQUEST_MAX);
    el_buf_init(&v.resp, VERIFY_RESPONSE_MAX);
    el_buf_init(&v.line, VERIFY_RESPONSE_MAX);
    el_buf_init(&v.tmp, VERIFY_RESPONSE_MAX);
    el_buf_init(&v.proj, VERIFY_REQUEST_MAX);
    el_err err = EL_OK;
    bool any_index = false;
    for (size_t i = 0; i < v.m->nsources; i++)
        any_index |= v.m->sources[i]->index;
    v.items = el_sample_new((size_t)o->sample, o->seed, EL_DDB_MAX_ITEM_BYTES * 2);
    if (o->reverse && any_index)
        v.targets = el_sample_new((size_t)o->reverse, o->seed ^ 0xA5A5A5A5A5A5A5A5ull,
                                  VERIFY_REVERSE_SET_MAX);
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
    if (!err && o->counters_only && o->split.count) /* counts need every part */
        err = el_diag_set(diag, EL_EUSAGE, "--counters-only needs the whole input: no --split");
    /* --split: a part's counts are not the totals: no counter check */
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
    bool transport_taken = false; /* by the driver, also when making it fails */
    if (!err) {
        transport_taken = true;
        el_ddb_driver_opts dopts = { .concurrency = o->concurrency > 0 ? o->concurrency : 1,
                                     .units_per_s = o->max_rcu,
                                     .max_retry_time_s = o->max_retry_time_s };
        err = o->transport ? el_ddb_driver_new_with(o->transport, &dopts, NULL, &v.drv, diag)
                           : el_ddb_driver_new(o->ddb, &dopts, &v.drv, diag);
    }
    err = err ? err : verify_check_set(&v, diag);
    if (!err && v.ctrs) {
        v.cur = v.ctrs;
        v.cur_counters = true;
        err = verify_check_set(&v, diag);
    }
    if (!err && v.targets)
        err = verify_check_targets(&v, diag);
    verify_progress(&v, v.phase ? v.phase : "reading", 0, 0, true); /* ends a bar's line */
    if (v.drv) {
        const el_ddb_driver_stats *ds = el_ddb_driver_stats_get(v.drv);
        st->requests = ds->requests;
        st->retries += ds->resends;
        st->throttled = ds->throttled;
        st->rcu_consumed = ds->consumed;
    }
    el_ddb_driver_free(v.drv);
    if (o->transport && !transport_taken && o->transport->free)
        o->transport->free(o->transport->self);
    el_sample_free(v.items);
    el_sample_free(v.ctrs);
    el_sample_free(v.targets);
    el_plan_free(v.plan);
    el_buf_free(&v.req);
    el_buf_free(&v.resp);
    el_buf_free(&v.line);
    el_buf_free(&v.tmp);
    el_buf_free(&v.proj);
    st->elapsed_s = (el_clock_now(o->clock) - t0) / 1000.0;
    return err;
}
