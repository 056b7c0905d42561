/*
 * error.h - the one error type of edgeload.
 *
 * Every library function that can fail returns an el_err (0 = success) and,
 * where the caller needs to tell a user what went wrong, fills an el_diag with
 * a message that says what is wrong first ("unterminated string", not
 * "error: ..."), no capital, no full stop, plus the position when known.
 * Library code never prints and never exits: cmd/ turns el_err into exit codes
 * and el_diag into the line the user reads.
 */
#ifndef EL_ERROR_H
#define EL_ERROR_H

#include <stdarg.h>  /* va_list for el_diag_vset */
#include <stdint.h>  /* uint64_t positions */

#define EL_MUST_USE __attribute__((warn_unused_result))

typedef enum el_err {
    EL_OK = 0,
    EL_EOF,        /* no more rows/data: not a failure */
    EL_EREJECT,    /* this row is bad; diag says why; the caller goes on */
    EL_ENOMEM,     /* allocation failed or a named size limit was reached */
    EL_EIO,        /* reading or writing a file failed */
    EL_EPARSE,     /* input could not be parsed (fatal for that input) */
    EL_ETRUNCATED, /* input ended in the middle of a record or frame */
    EL_EUSAGE,     /* bad option, mapping or configuration: nothing written */
    EL_ECONFIG,    /* AWS configuration (credentials, region) missing or bad */
    EL_ENET,       /* connection, DNS, TLS or timeout */
    EL_ESERVICE,   /* DynamoDB answered with an error */
    EL_ETABLE,     /* table missing or its schema does not fit the mapping */
    EL_ELIMIT,     /* a hard limit (400 KB item, ...) was exceeded */
    EL_EINTR,      /* interrupted by a signal */
    EL_EINTERNAL   /* a bug: an invariant did not hold */
} el_err;

/* A short, stable description of an error code ("out of memory"). */
const char *el_strerror(el_err err);

/*
 * Context for an error or a reject. msg holds the reason; line/column/offset
 * are 0 when unknown (line and column are 1-based, offset is a byte offset in
 * the uncompressed stream). The caller prefixes the input's name.
 */
typedef struct el_diag {
    char msg[1024];
    uint64_t line;
    uint64_t column;
    uint64_t offset;
} el_diag;

/* Clears msg and positions. d may be NULL (then every el_diag_* is a no-op). */
void el_diag_clear(el_diag *d);

/* Sets msg with printf formatting (truncated to fit) and returns err, so a
 * failure reads `return el_diag_set(d, EL_EPARSE, "bad %s", x);`. */
el_err el_diag_set(el_diag *d, el_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
el_err el_diag_vset(el_diag *d, el_err err, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Sets msg and the position in one call. */
el_err el_diag_at(el_diag *d, el_err err, uint64_t line, uint64_t column,
                  uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
