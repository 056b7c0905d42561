/*
 * error.c - el_strerror and el_diag helpers.
 *
 * DESIGN: diagnostics are fixed-size buffers owned by the caller, so reporting
 * an error never allocates (it may be reporting an allocation failure).
 */
#include "common/error.h"

#include <stdio.h>   /* vsnprintf */
#include <string.h>  /* memset */

const char *el_strerror(el_err err)
{
    switch (err) {
    case EL_OK: return "success";
    case EL_EOF: return "end of input";
    case EL_EREJECT: return "row rejected";
    case EL_ENOMEM: return "out of memory";
    case EL_EIO: return "input/output error";
    case EL_EPARSE: return "parse error";
    case EL_ETRUNCATED: return "input truncated";
    case EL_EUSAGE: return "usage error";
    case EL_ECONFIG: return "configuration error";
    case EL_ENET: return "network error";
    case EL_ESERVICE: return "service error";
    case EL_ETABLE: return "table does not fit the mapping";
    case EL_ELIMIT: return "limit exceeded";
    case EL_EINTR: return "interrupted";
    case EL_EINTERNAL: return "internal error";
    }
    return "unknown error";
}

void el_diag_clear(el_diag *d)
{
    if (d)
        memset(d, 0, sizeof *d);
}

el_err el_diag_vset(el_diag *d, el_err err, const char *fmt, va_list ap)
{
    if (d)
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    return err;
}

el_err el_diag_set(el_diag *d, el_err err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    el_diag_vset(d, err, fmt, ap);
    va_end(ap);
    return err;
}

el_err el_diag_at(el_diag *d, el_err err, uint64_t line, uint64_t column,
                  uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    if (d) {
        d->line = line;
        d->column = column;
        d->offset = offset;
    }
    va_start(ap, fmt);
    el_diag_vset(d, err, fmt, ap);
    va_end(ap);
    return err;
}
