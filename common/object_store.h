/*
 * object_store.h - somewhere other than a local directory to put the
 * output of `--output`: the interface between the file sink
 * (pipeline/output/file_sink.h), which writes parts and a manifest, and a store
 * that keeps them (s3/s3_store.h: s3://bucket/prefix/).
 *
 * Its own header so that a store does not depend on the pipeline that
 * uses it. The ops are called from one thread (the sink's).
 */
#ifndef EL_OBJECT_STORE_H
#define EL_OBJECT_STORE_H

#include <stddef.h>  /* size_t */
#include <stdint.h>  /* uint64_t: offsets in objects */

#include "common/error.h"

/*
 * An object is streamed in with write and appears, whole, only at commit;
 * abort leaves nothing. Names are relative: "data/part-00000.json.zst",
 * "manifest.json".
 */
typedef struct el_object_store_ops {
    /* EL_EUSAGE when the location already holds a run's manifest or parts. */
    el_err (*check_unused)(void *self, el_diag *diag);
    el_err (*open)(void *self, const char *name, void **obj, el_diag *diag);
    el_err (*write)(void *obj, const void *p, size_t n, el_diag *diag);
    /* Makes the object visible and frees obj (on failure too). */
    el_err (*commit)(void *obj, el_diag *diag);
    /* Frees obj; nothing appears. */
    void (*abort)(void *obj);
    /* Reads bytes [off, off + n) of the committed object `name` into dst;
     * *got is n unless the object is shorter. For writing a part again
     * without some of its items; may be NULL (then parts cannot be). */
    el_err (*read)(void *self, const char *name, uint64_t off, void *dst, size_t n,
                   size_t *got, el_diag *diag);
    /* Removes the committed object `name` (no error when there is none);
     * may be NULL, with read. */
    el_err (*remove)(void *self, const char *name, el_diag *diag);
} el_object_store_ops;

typedef struct el_object_store {
    const el_object_store_ops *ops;
    void *self;
} el_object_store;

#endif
