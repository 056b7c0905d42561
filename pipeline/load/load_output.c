/*
 * load_output.c - the output stage (--output DIR, and --dry-run): takes the
 * network stage's place, writes every item to the file sink (file_sink.h)
 * or a dry run's spool (spool.h), and leaves each key once, the last row
 * winning, as a load through the API leaves the table.
 *
 * DESIGN: items go in queue order, each chunk freed once written, and each
 * item's key goes to the dedup (dedup.h) under the item's number. Parts are
 * written as the items come; at the end the dedup names the items a later
 * row of their key superseded, and the sink takes them out of the parts
 * that hold them (a part without one is not touched, so an input without
 * duplicates costs only the fingerprints), or the spool is copied to
 * standard output without them. DynamoDB's Import from S3 would otherwise
 * keep an arbitrary one of several items with one key, without counting
 * them. The sink is finished (its manifest written) only when the readers
 * ended and nothing failed or was interrupted, so a partial run never looks
 * complete.
 */
#include "pipeline/load/load_run.h"

#include <stdlib.h>   /* calloc, free */

#include "common/clock.h"
#include "pipeline/extmem/dedup.h"
#include "pipeline/extmem/spool.h"

/* Where sorted runs and the spool go: the output directory when it is a
 * local one (the disk the output goes to anyway), else the caller's
 * temporary directory or /tmp. */
static const char *spill_dir(const load_run *r)
{
    if (r->o->output_dir && !r->o->dry_run && !r->o->output_store)
        return r->o->output_dir;
    return r->o->tmp_dir && r->o->tmp_dir[0] ? r->o->tmp_dir : "/tmp";
}

static el_err next_drop(void *user, uint64_t *item, bool *got, el_diag *diag)
{
    return el_dedup_next_drop(user, item, got, diag);
}

/* One item to the sink, or as a line to the spool. */
static el_err put_item(el_file_sink *sink, el_spool *spool, const el_item *it, el_diag *diag)
{
    if (sink)
        return el_file_sink_put(sink, el_item_json(it), it->json_len, diag);
    el_err err = el_spool_write(spool, "{\"Item\":", 8, diag);
    if (!err)
        err = el_spool_write(spool, el_item_json(it), it->json_len, diag);
    if (!err)
        err = el_spool_write(spool, "}\n", 2, diag);
    return err;
}

/* Takes the network stage's place: every queued item goes to the sink (or,
 * with sink NULL, a dry run's spool), in queue order, and each chunk is
 * freed once written. The duplicates are taken out and the sink finished
 * (or the spool printed) only when the readers ended and nothing failed or
 * was interrupted; otherwise the caller frees the sink unfinished, which
 * leaves no manifest. On a reader's failure it returns EL_OK (r->err says
 * why). */
el_err load_output_stage(load_run *r, el_file_sink *sink, el_load_stats *st, el_diag *diag)
{
    el_dedup *dd = NULL;
    el_spool *spool = NULL;
    el_dedup_opts dopts = { .mem_max = r->o->dedup_memory, .dir = spill_dir(r), .keep_drops = true };
    el_err err = el_dedup_new(&dopts, &dd, diag);
    if (!err && !sink)
        err = el_spool_new(spill_dir(r), &spool, diag);
    uint64_t put = 0, directory = 0; /* items written; of them, shard directory items */
    /* how far each input's rows are written, for progress: a chunk is done
     * once its items are in the sink (one more for the shard directory) */
    el_watermark *tr = calloc(r->ninputs + 1, sizeof *tr);
    if (!err && !tr)
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; tr && i <= r->ninputs; i++)
        el_watermark_init(&tr[i], i < r->ninputs ? r->inputs[i].resume_offset : 0);
    void *p;
    double next_progress = el_clock_now(r->o->clock) + 1000.0;
    while (!err && !atomic_load(&r->abort) && el_queue_pop(r->queue, &p)) {
        el_chunk *c = p;
        el_watermark *w = &tr[c->input];
        if (c->eof)
            el_watermark_eof(w);
        else if (el_watermark_received(w, c->seq, c->start_offset, c->end_offset))
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        for (size_t i = 0; !err && i < c->nitems; i++) {
            const el_item *it = &c->items[i];
            err = put_item(sink, spool, it, diag);
            if (!err)
                err = el_dedup_add(dd, el_item_key(it), it->key_len, 0, diag);
            put += !err;
            directory += !err && c->input >= r->ninputs; /* from no row: counted apart */
        }
        if (!err && !c->eof)
            el_watermark_done(w, c->seq);
        el_chunk_free(c);
        st->items_written = put - directory;
        st->directory_items = directory;
        if (!err && r->o->stop && *r->o->stop)
            err = EL_EINTR;
        if (el_clock_now(r->o->clock) >= next_progress) {
            next_progress += 1000.0;
            load_report(r, st, tr, 0, false);
        }
    }
    if (!err && !atomic_load(&r->abort) && r->o->stop && *r->o->stop)
        err = EL_EINTR;
    if (!err && !atomic_load(&r->abort)) {
        uint64_t dropped = 0;
        err = el_dedup_finish(dd, diag);
        if (!err)
            err = sink ? el_file_sink_drop(sink, next_drop, dd, &dropped, diag)
                       : el_spool_copy(spool, r->o->dry_out, dd, &dropped, diag);
        if (!err && sink)
            err = el_file_sink_finish(sink, diag);
        st->duplicates = dropped;
        st->items_written = put - directory - dropped;
    }
    if (tr)
        load_report(r, st, tr, 0, true);
    for (size_t i = 0; tr && i <= r->ninputs; i++)
        el_watermark_free(&tr[i]);
    free(tr);
    el_spool_free(spool);
    el_dedup_free(dd);
    return err;
}
