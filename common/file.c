/*
 * file.c - whole-file reads into a capped buffer.
 *
 * DESIGN: the cap of the caller's el_buf is the file-size limit, so each
 * kind of file keeps its own stated bound (16 MB mapping, 1 GB plan) and a
 * hostile file fails cleanly instead of exhausting memory.
 */
#include "common/file.h"

#include <errno.h>  /* errno */
#include <stdio.h>  /* fopen, fread */

el_err el_read_file(const char *path, el_buf *out, int *errnum)
{
    *errnum = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *errnum = errno;
        return EL_EIO;
    }
    char tmp[65536];
    size_t n;
    el_err err = EL_OK;
    while (!err && (n = fread(tmp, 1, sizeof tmp, f)) > 0)
        err = el_buf_append(out, tmp, n);
    if (!err && ferror(f)) {
        *errnum = errno;
        err = EL_EIO;
    }
    fclose(f);
    return err == EL_ENOMEM ? EL_ELIMIT : err;
}
