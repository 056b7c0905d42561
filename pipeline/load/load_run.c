/*
 * load_run.c - setting up and running a load: inputs paired with sources
 * and opened, --split and --resume applied, the shard plan, the shard
 * directory items, the reader threads, the stage that takes the queue
 * (load_network.c or load_output.c), then the counters. The stages are in
 * pipeline/load_*.c (load_run.h lists them).
 *
 * DESIGN: every input is opened on the calling thread before any thread
 * starts, so a missing file or an unknown column stops the run with nothing
 * written (exit 2). Reader threads own their reader and transform; they
 * share only the queue, the rejects file and the stats (atomics). The
 * network stage runs on the calling thread and is the only owner of the
 * batcher, the chunks after they are queued, and every request: no locks on
 * the hot path. An item is acknowledged exactly once: written, refused (to
 * the rejects file) or superseded by a later row of its key.
 */
#include "pipeline/load/load_run.h"

#include <assert.h>    /* the figures add up, in debug builds */

#include <errno.h>     /* ENOENT: --resume without a checkpoint yet */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strcmp, strdup */
#include <unistd.h>    /* sysconf, access */

#include "common/file.h"   /* EL_PATH_BYTES */
#include "common/clock.h"      /* el_now_ms */
#include "common/lockfile.h"   /* one process per checkpoint */
#include "pipeline/flow/checkpoint.h"
#include "pipeline/rows/fanin.h"
#include "pipeline/rows/inputs.h"
#include "pipeline/rows/rejects.h"
#include "pipeline/sharding/shard.h"
#include "pipeline/rows/split.h"

/* Input bytes done for progress: up to the watermark (every row before it
 * is written, refused or superseded), the whole input once it is complete.
 * Offsets are bytes of the uncompressed stream; for a compressed input they
 * are turned into compressed bytes at the ratio read so far. */
static uint64_t bytes_done(const load_input *in, const el_watermark *w)
{
    uint64_t raw = atomic_load(&in->raw_read);
    if (!w)
        return raw; /* only counted: reading is the work */
    if (in->resume_done || el_watermark_complete(w))
        return in->raw_size ? in->raw_size : raw;
    uint64_t off = el_watermark_offset(w), to = el_watermark_read_to(w);
    if (in->compressed)
        off = to ? (uint64_t)((double)off * (double)raw / (double)to) : 0;
    return in->raw_size && off > in->raw_size ? in->raw_size : off;
}

/* A progress snapshot of the run, from the stage that owns st. */
void load_report(load_run *r, const el_load_stats *st, const el_watermark *tr, int window,
                 bool final)
{
    const el_load_opts *o = r->o;
    if (!o->progress)
        return;
    el_progress p = { .st = *st, .window = window, .final = final,
                      .phase = o->counters_only ? "counting" : NULL };
    p.st.rows_read = atomic_load(&r->rows_read);
    p.st.rejected = atomic_load(&r->rows_rejected);
    p.st.rejects_in_file = el_rejects_count(r->o->rejects);
    p.st.elapsed_s = (el_clock_now(r->o->clock) - r->t0) / 1000.0;
    for (size_t i = 0; i < r->ninputs; i++) {
        p.bytes_done += bytes_done(&r->inputs[i], tr ? &tr[i] : NULL);
        p.bytes_total += r->inputs[i].raw_size;
    }
    uint64_t ended = p.st.items_written + p.st.duplicates + p.st.rejected;
    p.rows_ahead = !o->counters_only && p.st.rows_read > ended ? p.st.rows_read - ended : 0;
    o->progress(&p, o->progress_user);
}

/* ---- setting up ---- */

/* Pairs every input with its source (pipeline/rows/inputs.h) and opens it, so
 * that schema errors stop the run before anything is written. */
static el_err open_inputs(load_run *r, el_diag *diag)
{
    const el_load_opts *o = r->o;
    el_input_spec *specs;
    size_t n;
    el_err err = el_inputs_pair(o->mapping, o->inputs, o->ninputs, &o->reader, &specs, &n, diag);
    if (err)
        return err;
    r->inputs = calloc(n ? n : 1, sizeof *r->inputs);
    if (!r->inputs) {
        el_inputs_free(specs, n);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        load_input *in = &r->inputs[i];
        in->path = specs[i].path; /* the run's now */
        specs[i].path = NULL;
        in->src = specs[i].src;
        in->ropts = specs[i].ropts;
        r->ninputs++;
    }
    el_inputs_free(specs, n);
    for (size_t i = 0; !err && i < r->ninputs; i++) {
        load_input *in = &r->inputs[i];
        el_input_spec spec = { in->path, in->src, in->ropts };
        err = el_input_open_bound(&spec, &in->reader, diag);
        if (!err) {
            in->raw_size = el_input_raw_size(el_reader_input(in->reader));
            in->compressed =
                el_input_compression(el_reader_input(in->reader)) != EL_COMP_NONE;
        }
    }
    return err;
}

/* Identifies the job a checkpoint belongs to: table, sources and inputs. */
static uint64_t job_hash(const load_run *r)
{
    const el_mapping *m = r->o->mapping;
    uint64_t h = el_checkpoint_hash(0, m->table, strlen(m->table) + 1);
    for (size_t i = 0; i < m->nsources; i++) {
        const el_source *s = m->sources[i];
        const el_template *t[] = { s->pk, s->sk, s->index_pk, s->index_sk };
        h = el_checkpoint_hash(h, s->name, strlen(s->name) + 1);
        for (size_t k = 0; k < 4; k++) {
            const char *text = t[k] ? el_template_text(t[k]) : "";
            h = el_checkpoint_hash(h, text, strlen(text) + 1);
        }
    }
    for (size_t i = 0; i < r->ninputs; i++)
        h = el_checkpoint_hash(h, r->inputs[i].path, strlen(r->inputs[i].path) + 1);
    if (r->o->split.count)
        h = el_checkpoint_hash(h, &r->split_hash, sizeof r->split_hash);
    if (r->o->counters_only) /* `edgeload counters`: another job than a load */
        h = el_checkpoint_hash(h, "counters", 8);
    return h;
}

/* --split I/N keeps this worker's part of each input (opened
 * already, for its schema): a byte range of a plain CSV/TSV file is opened
 * anew on that range, an input wholly in another part yields no rows. */
static el_err split_inputs(load_run *r, el_diag *diag)
{
    const el_load_opts *o = r->o;
    for (size_t s = 0; s < o->mapping->nsources; s++) {
        const el_source *src = o->mapping->sources[s];
        if (src->index && src->hot_threshold && !o->plan_path)
            return el_diag_set(diag, EL_EUSAGE,
                               "--split: source '%s' shards hot targets, and every worker must "
                               "shard the same keys: run 'edgeload plan --plan-out plan.json' "
                               "once over the whole input, then give each worker --plan "
                               "plan.json", src->name);
    }
    el_split_input *si = calloc(r->ninputs ? r->ninputs : 1, sizeof *si);
    el_split_part *parts = calloc(r->ninputs ? r->ninputs : 1, sizeof *parts);
    el_err err = si && parts ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < r->ninputs; i++) {
        load_input *in = &r->inputs[i];
        si[i] = el_split_input_of(in->path, &in->ropts, el_reader_format(in->reader),
                                  el_reader_input(in->reader));
    }
    if (!err)
        err = el_split_assign(&o->split, si, r->ninputs, parts, diag);
    uint64_t h = el_checkpoint_hash(0, &o->split.index, sizeof o->split.index);
    h = el_checkpoint_hash(h, &o->split.count, sizeof o->split.count);
    for (size_t i = 0; !err && i < r->ninputs; i++) {
        load_input *in = &r->inputs[i];
        el_split_part *p = &parts[i];
        uint64_t span[3] = { p->kind, p->range.start, p->range.end };
        h = el_checkpoint_hash(h, span, sizeof span);
        if (p->kind == EL_SPLIT_NONE)
            el_reader_skip_rest(in->reader);
        if (p->kind != EL_SPLIT_RANGE)
            continue;
        el_reader_opts ro = in->ropts;
        ro.format = p->format;
        el_reader *part;
        el_diag d;
        el_diag_clear(&d);
        err = el_reader_open_range(in->path, &ro, &p->range, &part, &d);
        if (err) {
            el_diag_set(diag, err, "%s: %s", in->path, d.msg);
            break;
        }
        const el_schema *old = el_reader_schema(in->reader);
        if (in->src->bound == old) /* the source borrows the schema it was bound to */
            err = el_source_bind(in->src, el_reader_schema(part), &d);
        el_reader_free(in->reader);
        in->reader = part;
        in->raw_size = el_input_raw_size(el_reader_input(part));
        if (err)
            el_diag_set(diag, err, "%s: %s", in->path, d.msg);
    }
    r->split_hash = h;
    free(si);
    free(parts);
    return err;
}

/* Applies a checkpoint: offsets to skip to, rejects already written. */
static el_err resume_from(load_run *r, el_diag *diag)
{
    el_checkpoint *cp;
    if (access(r->o->checkpoint_path, F_OK) != 0 && errno == ENOENT) {
        /* nothing to resume: the earlier run never got going. Start over. */
        r->resumed_fresh = true;
        return EL_OK;
    }
    el_err err = el_checkpoint_read(r->o->checkpoint_path, &cp, diag);
    if (err)
        return err;
    if (cp->job_hash != r->job_hash || cp->ninputs != r->ninputs) {
        el_checkpoint_free(cp);
        return el_diag_set(diag, EL_EUSAGE,
                           "checkpoint %s belongs to another job (different mapping or inputs); "
                           "run without --resume to start over", r->o->checkpoint_path);
    }
    uint64_t high[r->ninputs ? r->ninputs : 1];
    bool has[r->ninputs ? r->ninputs : 1];
    for (size_t i = 0; i < r->ninputs; i++) {
        load_input *in = &r->inputs[i];
        if (!el_input_seekable(el_reader_input(in->reader)) && !cp->inputs[i].done &&
            cp->inputs[i].offset > 0) {
            el_checkpoint_free(cp);
            return el_diag_set(diag, EL_EUSAGE, "%s: cannot resume standard input or a pipe; "
                               "give the file itself", in->path);
        }
        in->resume_done = cp->inputs[i].done;
        in->resume_offset = cp->inputs[i].offset;
        high[i] = cp->inputs[i].rejects_high;
        has[i] = cp->inputs[i].has_rejects;
    }
    r->base_written = cp->items_written;
    r->resume_counters = cp->has_counters;
    r->resume_counters_digest = cp->counters_digest;
    r->resume_counters_done = cp->counters_done;
    err = el_rejects_restore(r->o->rejects, cp->rejects_bytes, cp->rejected, high, has,
                             r->ninputs, diag);
    el_checkpoint_free(cp);
    return err;
}

/* The plan: from --plan FILE, or counted now when a source is hot. */
static el_err prepare_plan(load_run *r, el_diag *diag)
{
    el_fanin_input *in = calloc(r->ninputs ? r->ninputs : 1, sizeof *in);
    if (!in)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->ninputs; i++)
        in[i] = (el_fanin_input){ r->inputs[i].path, r->inputs[i].src, r->inputs[i].ropts };
    el_err err = el_fanin_plan(r->o->mapping, in, r->ninputs, r->o->plan_path, &r->plan, diag);
    free(in);
    return err;
}

/* One shard directory item per sharded key (PK=<key>, SK=#SHARDS, shards,
 * fanIn: the fan-in of every source together), as a chunk of their own,
 * written before the edges. */
static el_err directory_chunk(load_run *r, el_chunk **out, el_diag *diag)
{
    *out = NULL;
    if (!r->plan)
        return EL_OK;
    const el_mapping *m = r->o->mapping;
    el_chunk *c = el_chunk_new(r->ninputs);
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    for (size_t h = 0; !err && h < el_plan_nhot(r->plan); h++) {
        const el_plan_hot *hot = el_plan_get_hot(r->plan, h);
        size_t jm = c->json.len, km = c->keys.len, size;
        err = el_shard_directory_item(&c->json, &c->keys, m->pk_attr, m->sk_attr, hot->key,
                                      hot->len, hot->shards, hot->fan_in, &size);
        if (!err)
            err = el_chunk_commit(c, jm, km, size, 0, 0);
    }
    if (err || c->nitems == 0) {
        el_chunk_free(c);
        return err ? el_diag_set(diag, err, "out of memory") : EL_OK;
    }
    *out = c;
    return EL_OK;
}

el_err el_load_run(const el_load_opts *o, el_load_stats *st, el_diag *diag)
{
    memset(st, 0, sizeof *st);
    double t0 = el_clock_now(o->clock);
    load_run r = { .o = o, .t0 = t0 };
    pthread_mutex_init(&r.mu, NULL);
    /* one process per checkpoint, from before the first read to the end */
    el_lockfile *lock = NULL;
    el_err err = EL_OK;
    if (o->checkpoint_path && !o->dry_run) {
        char lpath[EL_PATH_BYTES], what[EL_PATH_BYTES + 16];
        snprintf(what, sizeof what, "checkpoint %s", o->checkpoint_path);
        err = el_path_suffixed(lpath, o->checkpoint_path, ".lock", diag);
        if (!err)
            err = el_lockfile_take(lpath, what, &lock, diag);
    }
    if (!err)
        err = open_inputs(&r, diag);
    if (!err && o->split.count) /* --split I/N: this worker's part */
        err = split_inputs(&r, diag);
    if (!err)
        err = prepare_plan(&r, diag);
    el_file_sink *sink = NULL; /* --output: opened first, so a used DIR reads nothing */
    if (!err && o->output_dir && !o->dry_run) {
        el_file_sink_opts so = { .dir = o->output_dir, .part_max_items = o->output_part_items,
                                 .table = o->mapping->table, .store = o->output_store };
        err = el_file_sink_new(&so, &sink, diag);
    }
    if (!err) {
        r.job_hash = job_hash(&r);
        if (el_rejects_track(o->rejects, r.ninputs))
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (!err && o->resume) {
        if (!o->checkpoint_path || o->dry_run)
            err = el_diag_set(diag, EL_EUSAGE, "--resume needs --checkpoint FILE (and a real load)");
        else
            err = resume_from(&r, diag);
    }
    if (!err && o->counters_only && (o->dry_run || o->output_dir))
        err = el_diag_set(diag, EL_EUSAGE, "counters only: no --dry-run or --output");
    if (!err && !o->dry_run && !o->output_dir && !o->split.count /* a part counts no totals */ &&
        el_mapping_has_counters(o->mapping) &&
        el_counters_new(o->mapping, &r.counters)) /* before the readers start */
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err) {
        r.queue = el_queue_new(LOAD_QUEUE_CHUNKS);
        if (!r.queue)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_chunk *dir = NULL;
    if (!err)
        err = directory_chunk(&r, &dir, diag);
    if (!err && dir) {
        if (!el_queue_push(r.queue, dir))
            el_chunk_free(dir);
    }
    pthread_t *threads = NULL;
    size_t nthreads = 0;
    if (!err) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        size_t want = o->threads > 0 ? (size_t)o->threads : (size_t)(cores > 0 ? cores : 1);
        bool split = false;
        /* Cutting one input into parts pays only when reading is the
         * bottleneck and a core is free for a second reader. Against
         * DynamoDB one reader outruns the network stage ~5x, and parts
         * parsed ahead of their turn only held memory and cost CPU (null
         * endpoint, 800k rows, 2 cores: 76 vs 26 MB peak, 3.35 vs 2.8 us an
         * item). With --output or --dry-run on 2 cores, one reader and the
         * sink (or stdout) already use both: 1 M rows took 0.47 s with one
         * reader and 0.48-0.61 s with two, at twice the memory. So by
         * default parts are cut only for --output/--dry-run on more than 2
         * cores; an explicit --threads N > 1 always cuts them. Several
         * inputs are read at once either way. */
        bool may_split = o->threads > 0 || ((o->dry_run || o->output_dir) && cores > 2);
        for (size_t i = 0; !err && may_split && want > 1 && i < r.ninputs; i++) {
            err = load_start_split(&r, &r.inputs[i], want, diag);
            split = split || r.inputs[i].split;
        }
        if (want > r.ninputs && !split)
            want = r.ninputs;
        threads = err ? NULL : calloc(want ? want : 1, sizeof *threads);
        if (!err && !threads)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        atomic_store(&r.readers_left, (int)want);
        if (want == 0)
            el_queue_close(r.queue);
        for (size_t i = 0; !err && i < want; i++) {
            if (pthread_create(&threads[i], NULL, load_reader_main, &r) != 0) {
                /* the threads that did start finish the work */
                if (atomic_fetch_sub(&r.readers_left, (int)(want - i)) == (int)(want - i))
                    el_queue_close(r.queue);
                if (i == 0)
                    err = el_diag_set(diag, EL_ENOMEM, "cannot start a reader thread");
                break;
            }
            nthreads++;
        }
    }
    el_err net_err = EL_OK;
    el_diag net_diag;
    el_diag_clear(&net_diag);
    if (!err) {
        /* a dry run is an output stage without a sink: it prints */
        net_err = sink || o->dry_run ? load_output_stage(&r, sink, st, &net_diag)
                                     : load_network_stage(&r, st, &net_diag);
        if (net_err && net_err != EL_EINTR)
            load_fail(&r, net_err, &net_diag);
    }
    if (r.queue) {
        /* the network stage is over: readers still blocked on a full queue
         * (after an error or interrupt) must not wait for it */
        atomic_store(&r.abort, true);
        el_queue_close(r.queue);
    }
    for (size_t i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    el_file_sink_free(sink); /* unfinished after a failure: no manifest */
    if (r.queue) {
        /* chunks queued after the network stage stopped */
        void *p;
        while (el_queue_try_pop(r.queue, &p))
            el_chunk_free(p);
    }
    if (!err && r.err) {
        err = r.err;
        *diag = r.diag;
    }
    if (!err && (net_err == EL_EINTR || (o->stop && *o->stop))) {
        err = EL_EINTR;
        el_diag_set(diag, err, "interrupted%s", o->checkpoint_path ? "; checkpoint saved" : "");
    }
    if (!err && r.counters) {
        /* every item of every source is acknowledged; now the
         * counts, SET idempotently (entities, edges, then counters) */
        el_counters_write_opts wo = {
            .ddb = o->ddb, .transport = o->transport, .clock = o->clock,
            .table = o->mapping->table,
            .pk_attr = o->mapping->pk_attr, .sk_attr = o->mapping->sk_attr,
            .concurrency = o->concurrency, .max_wcu = o->max_wcu,
            .max_retry_time_s = o->max_retry_time_s, .stop = o->stop,
            .progress = o->progress, .progress_user = o->progress_user,
            .checkpoint_interval_s = o->checkpoint_interval_s,
            .resume = r.resume_counters, .resume_digest = r.resume_counters_digest,
            .resume_done = r.resume_counters_done,
        };
        /* the counter phase extends the checkpoint the network stage left
         * (every input done) with how far the counters are written */
        el_checkpoint *base = NULL;
        if (o->checkpoint_path)
            err = el_checkpoint_read(o->checkpoint_path, &base, diag);
        wo.checkpoint_path = base ? o->checkpoint_path : NULL;
        wo.base = base;
        /* the phase's progress lines go on from the run's figures */
        el_load_stats before = *st;
        before.rows_read = atomic_load(&r.rows_read);
        before.rejected = atomic_load(&r.rows_rejected);
        before.rejects_in_file = el_rejects_count(o->rejects);
        before.elapsed_s = (el_clock_now(o->clock) - r.t0) / 1000.0;
        wo.before = &before;
        el_counters_stats cst;
        memset(&cst, 0, sizeof cst);
        if (!err)
            err = el_counters_write(r.counters, &wo, &cst, diag);
        el_checkpoint_free(base);
        st->counters_skipped = cst.skipped;
        st->counts_changed = cst.counts_changed;
        st->counters_written = cst.counters;
        st->counter_edges = el_counters_edges(r.counters);
        st->counter_duplicates = el_counters_duplicates(r.counters);
        st->requests += cst.requests;
        st->retries += cst.retries;
        st->throttled += cst.throttled;
        st->wcu_consumed += cst.wcu_consumed;
    }
    el_counters_free(r.counters);
    st->rows_read = atomic_load(&r.rows_read);
    st->rejected = atomic_load(&r.rows_rejected);
    /* the rows in the rejects file: after --resume those of the runs before
     * too (the job as a whole had them, and its exit status, 3, says so),
     * each once however often a row was met */
    st->rejects_in_file = el_rejects_count(o->rejects);
    /* Every row read ended one way (stats.h); `edgeload counters` writes no
     * item, its rows are only counted. */
    assert(err || o->counters_only || el_load_stats_add_up(st));
    st->elapsed_s = (el_clock_now(o->clock) - t0) / 1000.0;
    for (size_t i = 0; i < r.ninputs; i++) {
        load_free_split(r.inputs[i].split);
        el_reader_free(r.inputs[i].reader);
        free(r.inputs[i].path);
    }
    free(r.inputs);
    el_plan_free(r.plan);
    el_queue_free(r.queue);
    el_lockfile_free(lock);
    pthread_mutex_destroy(&r.mu);
    /* taken (loader.h): the drivers made on it are gone */
    if (o->transport && o->transport->free)
        o->transport->free(o->transport->self);
    return err;
}

