/*
 * file.c - whole-file reads into a capped buffer, and the check that a
 * file can be written before a run begins.
 *
 * DESIGN: the cap of the caller's el_buf is the file-size limit, so each
 * kind of file keeps its own stated bound (16 MB mapping, 1 GB plan) and a
 * hostile file fails cleanly instead of exhausting memory. The writable
 * check asks the system (stat, access) rather than creating a file and
 * removing it: a check must not leave anything behind, nor replace a file
 * a run resumes from.
 */
#include "common/file.h"

#include <errno.h>    /* errno */
#include <stdio.h>    /* fopen, fread */
#include <stdlib.h>   /* malloc, free */
#include <string.h>   /* strrchr, strerror */
#include <sys/stat.h> /* stat */
#include <unistd.h>   /* access */

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

el_err el_read_named_file(const char *what, const char *path, const char *cap, el_buf *out,
                          el_diag *diag)
{
    int errnum;
    el_err err = el_read_file(path, out, &errnum);
    if (!err)
        return EL_OK;
    el_buf_free(out);
    if (err == EL_EIO)
        return el_diag_set(diag, EL_EIO, "cannot open %s %s: %s", what, path, strerror(errnum));
    return el_diag_set(diag, EL_EUSAGE, "cannot read %s %s: larger than %s", what, path, cap);
}

/* The folder that holds path: "." for a bare name, "/" for "/x". A new
 * string the caller frees; NULL when out of memory. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    while (slash > path && slash[-1] == '/')
        slash--;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* path is an existing folder files can be created in; else diag says why. */
static el_err writable_folder(const char *path, el_diag *diag)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return el_diag_set(diag, EL_EUSAGE, "folder %s %s", path,
                           errno == ENOENT    ? "does not exist"
                           : errno == ENOTDIR ? "does not exist (a part of its path is a file)"
                                              : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return el_diag_set(diag, EL_EUSAGE, "%s is not a folder", path);
    if (access(path, W_OK | X_OK) != 0)
        return el_diag_set(diag, EL_EUSAGE, "folder %s is not writable (%s)", path,
                           strerror(errno));
    return EL_OK;
}

el_err el_file_check_writable(const char *path, bool dir, el_diag *diag)
{
    if (!path[0])
        return el_diag_set(diag, EL_EUSAGE, "the name is empty");
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT && errno != ENOTDIR) /* ENOTDIR: the folder says it */
        return el_diag_set(diag, EL_EUSAGE, "%s", strerror(errno));
    if (exists && dir)
        return writable_folder(path, diag);
    if (exists && S_ISDIR(st.st_mode))
        return el_diag_set(diag, EL_EUSAGE, "it is a folder");
    if (exists && access(path, W_OK) != 0)
        return el_diag_set(diag, EL_EUSAGE, "it is not writable (%s)", strerror(errno));
    char *folder = folder_of(path);
    if (!folder)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = EL_OK;
    if (dir) {
        /* the folder is created with its parents: the nearest that exists
         * must take them */
        struct stat fs;
        while (strcmp(folder, "/") != 0 && strcmp(folder, ".") != 0 &&
               stat(folder, &fs) != 0 && errno == ENOENT) {
            char *up = folder_of(folder);
            free(folder);
            if (!(folder = up))
                return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
    }
    err = writable_folder(folder, diag);
    free(folder);
    return err;
}

el_err el_path_suffixed(char out[EL_PATH_BYTES], const char *path, const char *suffix,
                        el_diag *diag)
{
    int n = snprintf(out, EL_PATH_BYTES, "%s%s", path, suffix);
    if (n < 0 || n >= EL_PATH_BYTES)
        return el_diag_set(diag, EL_EUSAGE, "path too long (over %d bytes with \"%s\"): %s",
                           EL_PATH_BYTES - 1, suffix, path);
    return EL_OK;
}
