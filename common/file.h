/*
 * file.h - reading a small file (mapping, plan, checkpoint) whole,
 * checking before a run that the files it will write can be written, and
 * the room for a path the tool makes itself.
 */
#ifndef EL_FILE_H
#define EL_FILE_H

#include <stdbool.h> /* bool */
#include <stddef.h>  /* size_t */

#include "common/buf.h"
#include "common/error.h"

/* Room for a path the tool makes itself (a lock or a temporary file beside
 * a file it was given, a file in a folder it was given): Linux's PATH_MAX.
 * A longer one is refused with a message, never cut short. */
#define EL_PATH_BYTES 4096

/* out = path followed by suffix ("run.ckpt" ".lock"). EL_EUSAGE, diag
 * naming the path, when it does not fit in EL_PATH_BYTES. */
el_err el_path_suffixed(char out[EL_PATH_BYTES], const char *path, const char *suffix,
                        el_diag *diag) EL_MUST_USE;

/*
 * Appends the contents of path to out (initialised by the caller, whose
 * maximum bounds the file). Returns EL_OK; EL_EIO when the file cannot be
 * opened or read, with *errnum the errno (0 when unknown); EL_ELIMIT when
 * it is larger than out allows. On failure out holds what was read and the
 * caller frees it as always.
 */
el_err el_read_file(const char *path, el_buf *out, int *errnum) EL_MUST_USE;

/*
 * el_read_file for a file the user named, whose failure is told to the user:
 * `what` is the file's kind and `cap` the maximum of out in words. On
 * failure out is freed and diag names the file: EL_EIO, "cannot open plan
 * p.json: No such file or directory" (open or read failed); EL_EUSAGE,
 * "cannot read plan p.json: larger than 1 GB" (over out's maximum).
 */
el_err el_read_named_file(const char *what, const char *path, const char *cap, el_buf *out,
                          el_diag *diag) EL_MUST_USE;

/*
 * Checks that path can be written as the tool writes its files: a file is
 * written beside path and renamed over it, or path is created, so its
 * folder must exist, be a folder, and let files be created in it; path
 * itself, when it exists, must not be a folder and must be writable. With
 * dir true, path is a folder the tool creates (with its missing parents)
 * and fills: when it exists it must be a writable folder, else its nearest
 * existing ancestor must be. Nothing is created. EL_EUSAGE with diag
 * saying what is wrong ("folder /tmp/nodir does not exist"), without the
 * path's own name (the caller says which file it is).
 */
el_err el_file_check_writable(const char *path, bool dir, el_diag *diag) EL_MUST_USE;

#endif
