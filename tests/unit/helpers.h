/*
 * helpers.h - what unit tests share: a scratch directory per test file,
 * writing and reading its files, removing it whole. Header-only (each
 * tests/unit/test_*.c is its own executable); include it after cmocka.h,
 * whose assertions it uses: a helper that cannot do its job fails the test
 * that called it, with the path.
 */
#ifndef EL_TEST_HELPERS_H
#define EL_TEST_HELPERS_H

#include <ftw.h>       /* nftw (FTW_DEPTH, FTW_PHYS: _GNU_SOURCE, set by CMake) */
#include <stdio.h>     /* FILE, snprintf, remove */
#include <stdlib.h>    /* mkdtemp, malloc */
#include <string.h>    /* strlen */
#include <sys/stat.h>  /* struct stat, chmod */

/* Size of a path buffer for a file in a scratch directory. */
#define EL_TEST_PATH_MAX 512

/* Makes a new directory /tmp/<name>.XXXXXX into dir (cap bytes). Returns
 * dir, or NULL (errno set) when it cannot: setup functions return -1. */
static inline char *el_test_mkdtemp(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "/tmp/%s.XXXXXX", name);
    return mkdtemp(dir);
}

/* dir/name into out (EL_TEST_PATH_MAX bytes); fails the test if cut. */
static inline const char *el_test_path(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, EL_TEST_PATH_MAX, "%s/%s", dir, name);
    assert_true(n > 0 && n < EL_TEST_PATH_MAX);
    return out;
}

/* Writes len bytes to path (created or truncated); fails the test on any
 * error, short write and close included. */
static inline void el_test_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot create %s", path);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Writes text to dir/name. */
static inline void el_test_write_file(const char *dir, const char *name, const char *text)
{
    char path[EL_TEST_PATH_MAX];
    el_test_write(el_test_path(path, dir, name), text, strlen(text));
}

/* Writes text to dir/name and gives it mode (0600: a credentials file). */
static inline void el_test_write_file_mode(const char *dir, const char *name,
                                           const char *text, mode_t mode)
{
    char path[EL_TEST_PATH_MAX];
    el_test_write(el_test_path(path, dir, name), text, strlen(text));
    assert_int_equal(chmod(path, mode), 0);
}

/* The whole of path, NUL-terminated, malloc'd (free it); *len its bytes
 * when len is not NULL. Fails the test when it cannot be read. */
static inline char *el_test_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    size_t got;
    while ((got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *t = realloc(s, cap * 2);
            assert_non_null(t);
            s = t;
            cap *= 2;
        }
    }
    assert_int_equal(ferror(f), 0);
    fclose(f);
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

static inline int el_test_rm_entry(const char *path, const struct stat *sb, int flag,
                                   struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Removes dir and everything below it (links are removed, not followed).
 * 0, or -1 when something could not be removed. */
static inline int el_test_rm_tree(const char *dir)
{
    return nftw(dir, el_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* EL_TEST_HELPERS_H */
