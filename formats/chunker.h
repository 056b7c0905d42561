/*
 * chunker.h - cutting one CSV/TSV input into parts at record boundaries, so
 * that several threads can parse it (issue 4: parallel reading).
 *
 * The chunker reads the input sequentially (decompressed bytes: a .zst or
 * .gz input is decompressed here, on whichever thread calls next, and parsed
 * elsewhere) and cuts it into parts of about `target` bytes. A part ends
 * just after the last '\n' in it at which libcsv's state machine is back to
 * ROW_NOT_BEGUN, tracked from the first byte of the input with exactly
 * libcsv's rules (quotes only open a field at its start, "" inside quotes,
 * a quote inside an unquoted field is data, CR or LF end a record outside
 * quotes). So a quoted field with embedded newlines is never cut, and every
 * part begins at the start of a line where a CSV reader starts fresh:
 * el_reader_open_part() parses it with the line number and byte offset the
 * chunker counted, giving the same rows, lines and offsets as reading the
 * whole input with el_reader_open().
 *
 *   el_chunker *ck;  el_chunker_part p;
 *   el_chunker_new(in, &opts, &ck, &d);
 *   while ((err = el_chunker_next(ck, &p, &d)) == EL_OK) {
 *       ... parse p.data[0..p.len) from line p.line, offset p.offset ...
 *       free(p.data);
 *   }                              // err == EL_EOF: no more parts
 *   el_chunker_free(ck);
 *
 * A record longer than the target makes its part longer (the part grows
 * until a boundary); past `max_part` bytes without a boundary (an unclosed
 * quote, a huge record) the chunker gives up cutting: the last part is a
 * "tail" with no data, meaning "read the rest of the input from offset,
 * streaming", which keeps memory bounded.
 *
 * A UTF-8 byte order mark at the start is skipped (the first part's offset
 * is then 3), as the CSV reader does. Single-threaded: one thread at a time.
 */
#ifndef EL_CHUNKER_H
#define EL_CHUNKER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "formats/input.h"

typedef struct el_chunker el_chunker;

typedef struct el_chunker_opts {
    char delimiter;        /* field delimiter (',' or '\t'); not CR, LF or the quote */
    unsigned char quote;   /* '"' for CSV; 0xFF for TSV (what csv_reader.c gives libcsv) */
    size_t target;         /* part size to aim for; 0 = EL_CHUNKER_TARGET */
    size_t max_part;       /* largest part before giving up: 0 = EL_CHUNKER_MAX_PART */
} el_chunker_opts;

#define EL_CHUNKER_TARGET ((size_t)1 << 20)
#define EL_CHUNKER_MAX_PART ((size_t)64 << 20)

typedef struct el_chunker_part {
    unsigned char *data;   /* the part's bytes; the caller owns them (free()); NULL for a tail */
    size_t len;
    uint64_t seq;          /* 0, 1, 2, ... */
    uint64_t offset;       /* byte offset of data[0] in the (decompressed) input */
    uint64_t line;         /* 1-based line number of data[0] */
    bool tail;             /* no boundary within max_part: the rest of the input,
                              from offset (at line `line`), is to be read streaming;
                              this is the last part */
} el_chunker_part;

/* Takes ownership of `in` (also on failure) and reads from its current
 * position, which must be the start of the input. opts is copied.
 * EL_EUSAGE when the delimiter is CR, LF or the quote. */
el_err el_chunker_new(el_input *in, const el_chunker_opts *opts, el_chunker **out,
                      el_diag *diag) EL_MUST_USE;

/* The next part. EL_OK: *part filled (its data is the caller's). EL_EOF:
 * no more parts. Other errors are the input's (EL_EIO, EL_ETRUNCATED for a
 * cut compressed stream) or EL_ENOMEM; the chunker is then unusable. */
el_err el_chunker_next(el_chunker *c, el_chunker_part *part, el_diag *diag) EL_MUST_USE;

/* Decompressed bytes handed out in parts so far (progress). */
uint64_t el_chunker_offset(const el_chunker *c);

/* The input (for its name and el_input_raw_consumed). */
el_input *el_chunker_input(el_chunker *c);

void el_chunker_free(el_chunker *c);

/*
 * The boundary scanner itself, for the chunker and for tests: runs libcsv's
 * state machine over data[0..len) from *state (0 = ROW_NOT_BEGUN, the state
 * at the start of the input and after every boundary), leaving the state
 * after the last byte in *state. *boundary gets the position just past the
 * last '\n' at which the state is ROW_NOT_BEGUN (0 when there is none), and
 * *lines the number of '\n' bytes in data[0..*boundary).
 */
void el_chunker_scan(const unsigned char *data, size_t len, char delimiter,
                     unsigned char quote, int *state, size_t *boundary, uint64_t *lines);

#endif
