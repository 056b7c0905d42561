/*
 * load_output.c - the output stage (--output DIR): takes the network
 * stage's place and writes every item to the file sink (file_sink.h).
 *
 * DESIGN: items go in queue order, each chunk freed once written; the sink
 * is finished (its manifest written) only when the readers ended and
 * nothing failed or was interrupted, so a partial run never looks complete.
 */
#include "pipeline/load_internal.h"

#include "common/clock.h"

/* ---- the output stage (--output DIR) ---- */

/* Takes the network stage's place: every queued item goes to the file sink,
 * in queue order, and each chunk is freed once written. The sink is finished
 * (its manifest written) only when the readers ended and nothing failed or
 * was interrupted; otherwise the caller frees it unfinished, which leaves no
 * manifest. On a reader's failure it returns EL_OK (r->err says why). */
el_err load_output_stage(load_run *r, el_file_sink *sink, el_load_stats *st, el_diag *diag)
{
    void *p;
    el_err err = EL_OK;
    double next_progress = el_now_ms() + 1000.0;
    while (!err && !atomic_load(&r->abort) && el_queue_pop(r->queue, &p)) {
        el_chunk *c = p;
        for (size_t i = 0; !err && i < c->nitems; i++)
            err = el_file_sink_put(sink, el_item_json(&c->items[i]), c->items[i].json_len, diag);
        el_chunk_free(c);
        st->items_written = el_file_sink_items(sink);
        if (!err && r->o->stop && *r->o->stop)
            err = EL_EINTR;
        if (el_now_ms() >= next_progress) {
            next_progress += 1000.0;
            load_report(r, st, 0, false);
        }
    }
    if (!err && !atomic_load(&r->abort))
        err = r->o->stop && *r->o->stop ? EL_EINTR : el_file_sink_finish(sink, diag);
    load_report(r, st, 0, true);
    return err;
}

