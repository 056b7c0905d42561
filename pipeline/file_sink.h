/*
 * file_sink.h - the `--output DIR` sink (SPEC §6): items as DynamoDB JSON
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

#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

typedef struct el_file_sink el_file_sink;

typedef struct el_file_sink_opts {
    const char *dir;            /* created if missing */
    uint64_t part_max_items;    /* 0 = default (4,000,000) */
    uint64_t part_max_bytes;    /* uncompressed; 0 = default (1 GiB) */
    int zstd_level;             /* 0 = default (3) */
    const char *table;          /* recorded in the manifest */
} el_file_sink_opts;

el_err el_file_sink_new(const el_file_sink_opts *opts, el_file_sink **out,
                        el_diag *diag) EL_MUST_USE;

/* Appends one item; item_json is the item's attribute map ({"PK":{"S":..},..}). */
el_err el_file_sink_put(el_file_sink *s, const char *item_json, size_t len,
                        el_diag *diag) EL_MUST_USE;

/* Closes the last part and writes the manifest. */
el_err el_file_sink_finish(el_file_sink *s, el_diag *diag) EL_MUST_USE;

uint64_t el_file_sink_items(const el_file_sink *s);

void el_file_sink_free(el_file_sink *s);

#endif
