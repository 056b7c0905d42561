/*
 * file_sink.h - the `--output DIR` sink: items as DynamoDB JSON
 * lines ({"Item":{...}}), zstd-compressed, in parts of bounded size, plus a
 * manifest — the format DynamoDB's Import from S3 accepts.
 *
 * Every part and the manifest are written atomically: a temporary name in
 * DIR, fsync, rename; the directory is fsynced after each rename. A sink
 * freed without el_file_sink_finish removes its temporary files and writes
 * no manifest, so a crashed run never looks complete.
 *
 * Single-threaded: the loader's output stage owns it.
 */
#ifndef EL_FILE_SINK_H
#define EL_FILE_SINK_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "common/object_store.h"  /* where the parts go when not to files */

typedef struct el_file_sink el_file_sink;

/* A part's default bounds (DynamoDB's import guidance: about 4,000,000
 * items of under 1 KB an object, proportionally fewer for larger items;
 * an import reads at most 50,000 objects), and the bytes a line adds to an
 * item's JSON: {"Item": before, }\n after. */
#define EL_FILE_SINK_PART_ITEMS 4000000u
#define EL_FILE_SINK_PART_BYTES ((uint64_t)1 << 30)
#define EL_FILE_SINK_LINE_OVERHEAD 10u

/* The sink's rule: whether a part holding `items` lines of `bytes` so far
 * is closed before a line of `line` bytes (a part always takes at least one
 * line). Pure; plan's estimate counts parts with it. */
static inline bool el_file_sink_part_full(uint64_t items, uint64_t bytes, uint64_t line,
                                          uint64_t max_items, uint64_t max_bytes)
{
    return items > 0 && (items + 1 > max_items || bytes + line > max_bytes);
}

typedef struct el_file_sink_opts {
    const char *dir;            /* created if missing; with store: the location's
                                   name for messages (s3://bucket/prefix/) */
    const el_object_store *store; /* NULL = files under dir; borrowed */
    uint64_t part_max_items;    /* 0 = EL_FILE_SINK_PART_ITEMS */
    uint64_t part_max_bytes;    /* uncompressed; 0 = EL_FILE_SINK_PART_BYTES */
    int zstd_level;             /* 0 = default (1) */
    const char *table;          /* recorded in the manifest */
} el_file_sink_opts;

/*
 * Creates DIR (and DIR/data) if missing. Fails with EL_EUSAGE when DIR
 * already holds a manifest.json or data/part-* files (the output of another
 * run; two runs never mix in one directory), EL_EIO when the directory
 * cannot be created. On failure *out is NULL. Nothing is written to DIR/data
 * until the first put.
 */
el_err el_file_sink_new(const el_file_sink_opts *opts, el_file_sink **out,
                        el_diag *diag) EL_MUST_USE;

/*
 * Appends one item; item_json is the item's attribute map ({"PK":{"S":..},..}),
 * copied (the caller keeps it). The line goes to the open part, or to a new
 * part when the open one would exceed part_max_items or part_max_bytes (a
 * part always takes at least one item). EL_EIO on a write failure (diag names
 * the file); after any failure the sink refuses further puts and finish.
 */
el_err el_file_sink_put(el_file_sink *s, const char *item_json, size_t len,
                        el_diag *diag) EL_MUST_USE;

/* Tells the next item to take out: *item its number (items are numbered
 * from 0 in put order), *got false when there is none. */
typedef el_err (*el_file_sink_next_fn)(void *user, uint64_t *item, bool *got, el_diag *diag);

/*
 * Takes items out of the parts already written, after the last put and
 * before finish: the items next() names, in ascending order (duplicates
 * superseded by a later item of their key, pipeline/extmem/dedup.h). The open part
 * is closed first. Each part holding such an item is read back (from the
 * file, or the store's read op), decompressed, and written again without
 * it, replacing the old part atomically (a temporary file renamed over it;
 * the store's object written again under its name); a part left with no
 * item is removed (the store's remove op), and the manifest lists the parts
 * that remain under their names. Parts without such an item are not
 * touched. *dropped counts the items taken out. EL_EIO when a part cannot
 * be read back or written; EL_EINTERNAL when next() names an item not put
 * or out of order. After it, puts are refused; finish writes the manifest.
 */
el_err el_file_sink_drop(el_file_sink *s, el_file_sink_next_fn next, void *user,
                         uint64_t *dropped, el_diag *diag) EL_MUST_USE;

/* Closes the last part and writes DIR/manifest.json (format, compression,
 * table, item_count, and per part its path, items, bytes, uncompressed_bytes
 * and sha256 of the file). With no item put, the manifest lists no part.
 * Calling it again after success does nothing. */
el_err el_file_sink_finish(el_file_sink *s, el_diag *diag) EL_MUST_USE;

/* Items put so far (the open part included), less those taken out. */
uint64_t el_file_sink_items(const el_file_sink *s);

/* Parts closed and renamed to their final names so far. */
size_t el_file_sink_parts(const el_file_sink *s);

/* Frees the sink; s may be NULL. Without a successful finish, the open
 * part's temporary file is removed and no manifest is written (parts already
 * closed stay, complete but unlisted). */
void el_file_sink_free(el_file_sink *s);

#endif
