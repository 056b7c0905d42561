/*
 * file.h - reading a small file (mapping, plan, checkpoint) whole.
 */
#ifndef EL_FILE_H
#define EL_FILE_H

#include <stddef.h>  /* size_t */

#include "common/buf.h"
#include "common/error.h"

/*
 * Appends the contents of path to out (initialised by the caller, whose
 * maximum bounds the file). Returns EL_OK; EL_EIO when the file cannot be
 * opened or read, with *errnum the errno (0 when unknown); EL_ELIMIT when
 * it is larger than out allows. On failure out holds what was read and the
 * caller frees it as always.
 */
el_err el_read_file(const char *path, el_buf *out, int *errnum) EL_MUST_USE;

#endif
