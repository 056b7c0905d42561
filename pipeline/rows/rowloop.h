/*
 * rowloop.h - the one loop every engine reads its rows with: read a row,
 * transform it into its item, and say what became of it.
 *
 *   el_rowloop *l;
 *   el_rowloop_new(&opts, &l);
 *   while ((err = el_rowloop_next(l, &json, &keys, &out, &diag)) == EL_OK) {
 *       if (out.what != EL_ROWLOOP_ITEM) { ...reject out.row for *out.why... }
 *       else { ...the item is json[out.json_mark..], keys[out.key_mark..]... }
 *   }
 *   // EL_EOF: every row read; anything else stops the input, diag says why
 *   el_rowloop_free(l);
 *
 * What the loop does for every engine (load, its parts of a split input,
 * verify, plan, the fan-in pass, load --incremental), so that none of them
 * words an error or treats a resumed input differently:
 * - Errors that stop the input name it and the place: "path:line:column:
 *   message" (the column where the reader knows it, "path:line: message"
 *   where it knows only the line, "path: message" before the first row).
 * - A row that cannot become an item is handed back as a reject
 *   (EL_ROWLOOP_REJECT_PARSE: the reader could not read it;
 *   EL_ROWLOOP_REJECT_ITEM: the transform refused it) with why it was
 *   refused, its line and byte offset set; the caller decides where it goes.
 * - Resume: a row that starts before opts.resume_offset (or any row, with
 *   opts.resume_done) was done by an earlier run. It is not handed back; it
 *   is only shown to the observer, since counts need the whole input; with
 *   no observer it is not even transformed.
 * - The observer sees every row that becomes an item, before the resume
 *   point or not, after the item is made and before it is handed back (the
 *   counters: pipeline/counters/counters.h). An error it returns stops the
 *   input like any other.
 *
 * With EL_ROWLOOP_INDEX_KEYS the rows are not made into items: only their
 * index keys are rendered (el_transform_index_keys), for the passes that
 * count fan-in; out.ipk/out.isk point at them, and json and keys may be
 * NULL.
 *
 * Threads: a loop is one thread's; its reader and transform are borrowed
 * and must be that thread's while the loop lives.
 */
#ifndef EL_ROWLOOP_H
#define EL_ROWLOOP_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/transform.h"

typedef struct el_rowloop el_rowloop;

typedef enum el_rowloop_mode {
    EL_ROWLOOP_ITEMS,      /* each row becomes its item (el_transform_row) */
    EL_ROWLOOP_INDEX_KEYS, /* only each row's index keys are rendered */
} el_rowloop_mode;

/* Sees a row that became an item: key is its "PK\0SK". */
typedef struct el_rowloop_observer {
    el_err (*fn)(void *user, const el_source *src, const el_row *row, const char *key,
                 size_t key_len, el_diag *diag);
    void *user;
} el_rowloop_observer;

typedef struct el_rowloop_opts {
    const char *path;          /* the input's name in messages */
    el_reader *reader;         /* borrowed */
    el_transform *transform;   /* borrowed */
    const el_source *src;      /* the source the transform makes items of */
    el_rowloop_mode mode;
    uint64_t resume_offset;    /* rows starting before this byte were done before */
    bool resume_done;          /* every row was done before */
    el_rowloop_observer observer; /* fn NULL: none */
} el_rowloop_opts;

typedef enum el_rowloop_what {
    EL_ROWLOOP_ITEM,          /* the row became an item */
    EL_ROWLOOP_REJECT_PARSE,  /* the reader could not read the row */
    EL_ROWLOOP_REJECT_ITEM,   /* the row read, but cannot become an item */
} el_rowloop_what;

typedef struct el_rowloop_row {
    el_rowloop_what what;
    const el_row *row;     /* until the next call on the loop */
    const el_diag *why;    /* rejects: why, with the row's line, column and offset */
    size_t json_mark;      /* ITEM: its JSON is json[json_mark..], */
    size_t key_mark;       /* its "PK\0SK" keys[key_mark..], */
    size_t size;           /* and DynamoDB's size of it */
    const char *ipk, *isk; /* INDEX_KEYS: the unsharded index keys, in the */
    size_t ipk_len, isk_len; /* transform's scratch until its next call */
} el_rowloop_row;

/* Borrows everything opts points at (opts itself is copied). EL_ENOMEM. */
el_err el_rowloop_new(const el_rowloop_opts *opts, el_rowloop **out) EL_MUST_USE;
void el_rowloop_free(el_rowloop *l);

/*
 * The next row that is not before the resume point, its item appended to
 * json and its key to keys (ITEMS mode; nothing appended for a reject).
 * EL_OK with *out; EL_EOF after the last row; any other error stops the
 * input, and diag says where (see above).
 */
el_err el_rowloop_next(el_rowloop *l, el_buf *json, el_buf *keys, el_rowloop_row *out,
                       el_diag *diag) EL_MUST_USE;

/*
 * Makes the item of the row el_rowloop_next last handed back once more,
 * into other buffers (a row put off to a later batch whose buffers were
 * emptied since). The observer does not see it again. Same returns as
 * el_rowloop_next, never EL_EOF.
 */
el_err el_rowloop_again(el_rowloop *l, el_buf *json, el_buf *keys, el_rowloop_row *out,
                        el_diag *diag) EL_MUST_USE;

/* "path:line:column: message" (as far as d knows the place) into diag,
 * with d's position: how the loop words an error of the input. */
el_err el_rowloop_wrap(const char *path, el_err err, const el_diag *d, el_diag *diag);

#endif
