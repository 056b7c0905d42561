/*
 * s3_source.h - an S3 object as an el_input: streamed with several ranged
 * GETs in flight, so one large object is read in parallel parts.
 *
 * The object (or a byte range of it) is cut into parts of part_size bytes
 * (default 8 MiB); up to `ahead` parts (default 4) are being fetched or wait
 * to be read at any time, so memory is part_size * ahead per open input
 * whatever the object's size. Bytes of the part being read are handed on as
 * they arrive. A transfer that breaks (connection reset, timeout, 5xx)
 * starts again at the first byte its part has not got, after a backoff,
 * up to the client's attempts per break: never a duplicate, never a gap.
 * Every GET carries If-Match with the object's ETag, so an object replaced
 * while being read fails instead of mixing two versions.
 *
 * The input's name is the s3:// URL, so messages, rejects and checkpoints
 * name it; it is seekable (it can be opened again), which lets the
 * hot-target counting pass read it twice.
 */
#ifndef EL_S3_SOURCE_H
#define EL_S3_SOURCE_H

#include <stddef.h>  /* size_t */
#include <stdint.h>  /* uint64_t */

#include "formats/input.h"
#include "s3/s3.h"

typedef struct el_s3_source_opts {
    size_t part_size;  /* 0 = 8 MiB */
    int ahead;         /* parts in flight or buffered; 0 = 4 */
} el_s3_source_opts;

/*
 * Opens bytes [start, end) of s3://bucket/key (end 0 = to the object's end)
 * as an input named url. size and etag as listed (size 0 with etag NULL =
 * ask with a HEAD). opts may be NULL. The s3 client must outlive the input.
 */
el_err el_s3_input_open_range(el_s3 *s3, const char *url, uint64_t size, const char *etag,
                              uint64_t start, uint64_t end, const el_s3_source_opts *opts,
                              el_input **out, el_diag *diag) EL_MUST_USE;

/* The whole object named by url ("s3://bucket/key"), sized with a HEAD. */
el_err el_s3_input_open(el_s3 *s3, const char *url, el_input **out, el_diag *diag) EL_MUST_USE;

/* An opener for el_reader_opts.opener: "s3://" names go to el_s3_input_open.
 * The opener borrows s3. */
void el_s3_opener_init(el_input_opener *op, el_s3 *s3);

#endif
