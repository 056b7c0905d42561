/*
 * rowloop.c - read, transform, reject: the one row loop (rowloop.h).
 *
 * DESIGN: the loop is on every engine's hot path (a load's reader threads
 * run it per row), so it allocates nothing per row, resets its diag
 * without clearing the whole message buffer, and skips rows before the
 * resume point without transforming them when nobody observes them.
 */
#include "pipeline/rows/rowloop.h"

#include <stdlib.h>  /* calloc, free */

struct el_rowloop {
    el_rowloop_opts o;
    el_row row;   /* the last row read */
    el_diag d;    /* the reader's or transform's word on it */
};

el_err el_rowloop_new(const el_rowloop_opts *opts, el_rowloop **out)
{
    el_rowloop *l = calloc(1, sizeof *l);
    *out = l;
    if (!l)
        return EL_ENOMEM;
    l->o = *opts;
    return EL_OK;
}

void el_rowloop_free(el_rowloop *l)
{
    free(l);
}

/* el_diag_clear per row cost a 1 KB memset (1 % of a row in a load); the
 * message's first byte and the positions are all a reader or transform
 * looks at. */
static void diag_reset(el_diag *d)
{
    d->msg[0] = '\0';
    d->line = d->column = d->offset = 0;
}

el_err el_rowloop_wrap(const char *path, el_err err, const el_diag *d, el_diag *diag)
{
    const char *msg = d->msg[0] ? d->msg : el_strerror(err);
    if (d->line && d->column)
        return el_diag_at(diag, err, d->line, d->column, d->offset, "%s:%llu:%llu: %s", path,
                          (unsigned long long)d->line, (unsigned long long)d->column, msg);
    if (d->line)
        return el_diag_at(diag, err, d->line, 0, d->offset, "%s:%llu: %s", path,
                          (unsigned long long)d->line, msg);
    return el_diag_set(diag, err, "%s: %s", path, msg);
}

/* A reject's why carries the row's place where the transform left it out. */
static void place(el_rowloop *l)
{
    if (!l->d.line) {
        l->d.line = l->row.line;
        l->d.offset = l->row.offset;
    }
}

/* Makes the item (or the index keys) of l->row. EL_EREJECT: l->d says why. */
static el_err make(el_rowloop *l, el_buf *json, el_buf *keys, el_rowloop_row *out)
{
    if (l->o.mode == EL_ROWLOOP_INDEX_KEYS)
        return el_transform_index_keys(l->o.transform, &l->row, &out->ipk, &out->ipk_len,
                                       &out->isk, &out->isk_len, &l->d);
    out->json_mark = json->len;
    out->key_mark = keys->len;
    return el_transform_row(l->o.transform, &l->row, json, keys, &out->size, &l->d);
}

/* Fills out for l->row, its item made (err EL_OK) or refused (EL_EREJECT);
 * any other err is wrapped into diag and returned. */
static el_err answer(el_rowloop *l, el_err err, el_rowloop_row *out, el_diag *diag)
{
    out->row = &l->row;
    out->why = &l->d;
    if (err == EL_EREJECT) {
        place(l);
        out->what = EL_ROWLOOP_REJECT_ITEM;
        return EL_OK;
    }
    if (err) {
        if (!l->d.line) {
            l->d.line = l->row.line;
            l->d.offset = l->row.offset;
        }
        return el_rowloop_wrap(l->o.path, err, &l->d, diag);
    }
    out->what = EL_ROWLOOP_ITEM;
    return EL_OK;
}

el_err el_rowloop_next(el_rowloop *l, el_buf *json, el_buf *keys, el_rowloop_row *out,
                       el_diag *diag)
{
    const el_rowloop_opts *o = &l->o;
    const el_rowloop_observer *ob = &o->observer;
    for (;;) {
        diag_reset(&l->d);
        el_err err = el_reader_next(o->reader, &l->row, &l->d);
        if (err == EL_EOF)
            return EL_EOF;
        if (err && err != EL_EREJECT)
            return el_rowloop_wrap(o->path, err, &l->d, diag);
        bool before = o->resume_done || l->row.offset < o->resume_offset;
        if (err == EL_EREJECT) {
            if (before)
                continue; /* in the rejects file of the run that did it */
            place(l);
            out->what = EL_ROWLOOP_REJECT_PARSE;
            out->row = &l->row;
            out->why = &l->d;
            return EL_OK;
        }
        if (before && !ob->fn)
            continue;
        bool items = o->mode == EL_ROWLOOP_ITEMS; /* json and keys are NULL otherwise */
        size_t jm = items ? json->len : 0, km = items ? keys->len : 0;
        err = make(l, json, keys, out);
        if (!err && ob->fn && items) {
            err = ob->fn(ob->user, o->src, &l->row, keys->data + km, keys->len - km, &l->d);
            if (err)
                return answer(l, err == EL_EREJECT ? EL_EINTERNAL : err, out, diag);
        }
        if (before) {
            /* done by an earlier run: counted, not written again */
            if (items) {
                el_buf_truncate(json, jm);
                el_buf_truncate(keys, km);
            }
            if (err && err != EL_EREJECT)
                return answer(l, err, out, diag);
            continue;
        }
        if (err)
            return answer(l, err, out, diag);
        out->what = EL_ROWLOOP_ITEM; /* the common case, without a call */
        out->row = &l->row;
        out->why = &l->d;
        return EL_OK;
    }
}

el_err el_rowloop_again(el_rowloop *l, el_buf *json, el_buf *keys, el_rowloop_row *out,
                        el_diag *diag)
{
    diag_reset(&l->d);
    return answer(l, make(l, json, keys, out), out, diag);
}
