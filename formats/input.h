/*
 * input.h - a streaming byte source: a file or standard input, with .zst and
 * .gz decompressed transparently (detected by magic bytes, not by name).
 *
 * Readers pull decompressed bytes with el_input_read(); el_input_peek() lets
 * format detection look at the first bytes without consuming them. Memory is
 * bounded: one compressed and one decompressed block, whatever the file size.
 * Single-threaded: one thread owns an el_input at a time.
 */
#ifndef EL_INPUT_H
#define EL_INPUT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

typedef struct el_input el_input;

typedef enum el_compression {
    EL_COMP_NONE = 0,
    EL_COMP_ZSTD,
    EL_COMP_GZIP
} el_compression;

/* Opens path ("-" is standard input). On failure returns an error with diag
 * filled and *out NULL. The caller owns *out and frees it with el_input_free. */
el_err el_input_open(const char *path, el_input **out, el_diag *diag) EL_MUST_USE;

/* Wraps a memory buffer (not copied; must outlive the input). For tests and
 * fuzzing: the same decompression and detection as a file. */
el_err el_input_open_mem(const void *data, size_t len, const char *name,
                         el_input **out, el_diag *diag) EL_MUST_USE;

/* Opens a byte range of an uncompressed regular file (for `--split`,
 * pipeline/rows/split.h): the stream is the file's bytes [0, head) followed by its
 * bytes [start, end), read with pread, so a CSV reader sees its header row and
 * then this part's rows. Requires head <= start <= end <= the file's size.
 * No decompression and no detection: the caller knows the file is plain.
 * el_input_raw_size() is the stream's length (head + end - start). Ownership
 * and failure as el_input_open. */
el_err el_input_open_range(const char *path, uint64_t head, uint64_t start, uint64_t end,
                           el_input **out, el_diag *diag) EL_MUST_USE;

/* Reads up to n decompressed bytes into dst. *got = 0 means end of input.
 * A compressed stream that ends inside a frame gives EL_ETRUNCATED. */
el_err el_input_read(el_input *in, void *dst, size_t n, size_t *got, el_diag *diag) EL_MUST_USE;

/* Makes up to n bytes available without consuming them; *p points into the
 * input's own buffer, valid until the next read. *got < n only at the end. */
el_err el_input_peek(el_input *in, size_t n, const unsigned char **p, size_t *got,
                     el_diag *diag) EL_MUST_USE;

/* Name given at open ("-" shown as "<stdin>"). Owned by the input. */
const char *el_input_name(const el_input *in);

el_compression el_input_compression(const el_input *in);

/* Bytes consumed from the underlying file (compressed bytes), for progress. */
uint64_t el_input_raw_consumed(const el_input *in);

/* Size of the underlying file in bytes, or 0 when unknown (a pipe). */
uint64_t el_input_raw_size(const el_input *in);

/* True when the input can be opened again and read from the start (a regular
 * file); false for standard input and pipes. */
bool el_input_seekable(const el_input *in);

/* Closes the file and frees everything. NULL is a no-op. */
void el_input_free(el_input *in);

/* ---- byte sources other than files ----
 * formats/ stays free of the network: a source elsewhere (s3/) hands raw,
 * possibly compressed, bytes through these callbacks and gets the same
 * decompression, detection and peeking as a file. */

typedef struct el_input_source_ops {
    /* Reads up to n raw bytes into dst; *got = 0 means the end. */
    el_err (*read)(void *self, void *dst, size_t n, size_t *got, el_diag *diag);
    /* Frees self. */
    void (*free)(void *self);
} el_input_source_ops;

/* Opens an input on a source. Takes ownership of self (freed with
 * ops->free, on failure too). size: raw size, 0 when unknown; seekable:
 * the same name can be opened again and read from the start. */
el_err el_input_open_source(const char *name, const el_input_source_ops *ops, void *self,
                            uint64_t size, bool seekable, el_input **out,
                            el_diag *diag) EL_MUST_USE;

/* Opens names that are not files: a name starting with `prefix` ("s3://")
 * is opened by open(ctx, name, ...). Borrowed by whoever holds it. */
typedef struct el_input_opener {
    const char *prefix;
    el_err (*open)(void *ctx, const char *name, el_input **out, el_diag *diag);
    void *ctx;
} el_input_opener;

/* el_input_open, except that a path the opener claims goes to it. opener
 * may be NULL; an "s3://" path without one is EL_EUSAGE. */
el_err el_input_open_with(const char *path, const el_input_opener *opener, el_input **out,
                          el_diag *diag) EL_MUST_USE;

#endif
