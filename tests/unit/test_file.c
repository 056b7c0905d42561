/*
 * test_file.c - common/file.h: a small file read whole (within the
 * buffer's cap; with the message that names it when it fails), and the check that a file can be written before a run
 * writes it: a missing folder, a folder where a file belongs, a file where
 * a folder belongs, a path through a file, and an --output folder whose
 * parents do not exist yet. (As root, access() grants every write, so a
 * folder without write permission is not tested here.)
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>     /* fopen, snprintf */
#include <stdlib.h>    /* free, malloc, mkdtemp */
#include <string.h>    /* memset, strlen, strstr */
#include <sys/stat.h>  /* mkdir */
#include <unistd.h>    /* unlink, rmdir */

#include "common/file.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_file.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/f", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    return 0;
}

static void expect(const char *rel, bool is_dir, el_err want, const char *needle)
{
    char path[256];
    snprintf(path, sizeof path, "%s%s", rel[0] == '/' ? dir : "", rel); /* "/x": in dir */
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_file_check_writable(path, is_dir, &d);
    if (err != want)
        fail_msg("%s (dir %d): got %d (%s), want %d", path, is_dir, err, d.msg, want);
    if (needle && !strstr(d.msg, needle))
        fail_msg("%s: message '%s' lacks '%s'", path, d.msg, needle);
}

/* Writes the file dir/f of 10 bytes; its name into path. */
static void write_ten_bytes(char *path, size_t cap)
{
    snprintf(path, cap, "%s/f", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("0123456789", f);
    fclose(f);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[128];
    write_ten_bytes(path, sizeof path);
    el_buf b;
    int e;
    el_buf_init(&b, 100);
    assert_int_equal(el_read_file(path, &b, &e), EL_OK);
    assert_int_equal(b.len, 10);
    el_buf_free(&b);
    el_buf_init(&b, 5);
    assert_int_equal(el_read_file(path, &b, &e), EL_ELIMIT);
    el_buf_free(&b);
    el_buf_init(&b, 100);
    assert_int_equal(el_read_file("/nonexistent/x", &b, &e), EL_EIO);
    assert_int_not_equal(e, 0);
    el_buf_free(&b);
}

/* The named read frees the buffer on failure and says which file and why. */
static void test_read_named_file(void **state)
{
    (void)state;
    char path[128];
    write_ten_bytes(path, sizeof path);
    el_buf b;
    el_diag d;
    el_diag_clear(&d);
    el_buf_init(&b, 100);
    assert_int_equal(el_read_named_file("plan", path, "1 GB", &b, &d), EL_OK);
    assert_int_equal(b.len, 10);
    el_buf_free(&b);
    el_buf_init(&b, 5);
    assert_int_equal(el_read_named_file("plan", path, "4 bytes", &b, &d), EL_EUSAGE);
    assert_null(b.data);
    char want[256];
    snprintf(want, sizeof want, "cannot read plan %s: larger than 4 bytes", path);
    assert_string_equal(d.msg, want);
    el_buf_init(&b, 100);
    assert_int_equal(el_read_named_file("mapping", "/nonexistent/x", "16 MB", &b, &d), EL_EIO);
    assert_null(b.data);
    assert_string_equal(d.msg, "cannot open mapping /nonexistent/x: No such file or directory");
}

static void test_files(void **state)
{
    (void)state;
    char sub[128];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    /* a new file in a folder that exists, or an existing file */
    expect("/x.ckpt", false, EL_OK, NULL);
    expect("/sub/x.ckpt", false, EL_OK, NULL);
    expect("/f", false, EL_OK, NULL);
    expect("x-in-the-working-folder", false, EL_OK, NULL);
    /* a folder that does not exist */
    expect("/nodir/x.ckpt", false, EL_EUSAGE, "/nodir does not exist");
    expect("/nodir/deeper/x.ckpt", false, EL_EUSAGE, "/nodir/deeper does not exist");
    /* a folder where the file belongs */
    expect("/sub", false, EL_EUSAGE, "it is a folder");
    expect("/sub/", false, EL_EUSAGE, "it is a folder");
    /* a path through a file */
    expect("/f/x.ckpt", false, EL_EUSAGE, "/f is not a folder");
    expect("/f/y/x.ckpt", false, EL_EUSAGE, "a part of its path is a file");
    expect("", false, EL_EUSAGE, "empty");
}

static void test_folders(void **state)
{
    (void)state;
    /* an --output folder: made with its parents, so the nearest that
     * exists must take them */
    expect("/sub", true, EL_OK, NULL);
    expect("/out", true, EL_OK, NULL);
    expect("/new/er/out", true, EL_OK, NULL);
    expect("/f", true, EL_EUSAGE, "is not a folder");
    expect("/f/out", true, EL_EUSAGE, "/f is not a folder");
    expect("/f/a/out", true, EL_EUSAGE, "a part of its path is a file");
}

/* A path made with a suffix fits or is refused whole, never cut short. */
static void test_path_suffixed(void **state)
{
    (void)state;
    char out[EL_PATH_BYTES];
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_path_suffixed(out, "/tmp/run.ckpt", ".lock", &d), EL_OK);
    assert_string_equal(out, "/tmp/run.ckpt.lock");
    char *longest = malloc(EL_PATH_BYTES);
    assert_non_null(longest);
    memset(longest, 'a', EL_PATH_BYTES - 6);
    longest[EL_PATH_BYTES - 6] = '\0'; /* with ".lock" exactly EL_PATH_BYTES - 1 */
    assert_int_equal(el_path_suffixed(out, longest, ".lock", &d), EL_OK);
    assert_int_equal(strlen(out), EL_PATH_BYTES - 1);
    longest[EL_PATH_BYTES - 6] = 'a';
    longest[EL_PATH_BYTES - 5] = '\0'; /* one byte more */
    assert_int_equal(el_path_suffixed(out, longest, ".lock", &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "path too long"));
    free(longest);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_read_named_file),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_folders),
        cmocka_unit_test(test_path_suffixed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
