/*
 * test_lockfile.c - one holder at a time: a second taker is refused with
 * the holder named (pid, host, start time), the lock is free again once
 * released, and a lock file left behind by a holder that is gone blocks
 * nobody.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf, fopen */
#include <stdlib.h>  /* mkdtemp */
#include <string.h>  /* strstr */
#include <unistd.h>  /* getpid, unlink, rmdir */

#include "common/lockfile.h"

static void test_one_holder(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_lockfile.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/x.lock", dir);
    el_diag d;
    el_diag_clear(&d);
    el_lockfile *a = NULL, *b = NULL;
    assert_int_equal(el_lockfile_take(path, "checkpoint x", &a, &d), EL_OK);
    assert_non_null(a);
    /* a second open file description conflicts, even in this process */
    assert_int_equal(el_lockfile_take(path, "checkpoint x", &b, &d), EL_EUSAGE);
    assert_null(b);
    char want[64];
    snprintf(want, sizeof want, "checkpoint x is in use by edgeload pid %ld on host ",
             (long)getpid());
    assert_non_null(strstr(d.msg, want));
    assert_non_null(strstr(d.msg, " since 20"));
    assert_non_null(strstr(d.msg, path));
    el_lockfile_free(a);
    /* released: free again, and the stale text in the file does not matter */
    assert_int_equal(el_lockfile_take(path, "checkpoint x", &b, &d), EL_OK);
    el_lockfile_free(b);
    el_lockfile_free(NULL);
    /* a lock file nobody can create is an I/O error, not a refusal */
    assert_int_equal(el_lockfile_take("/nonexistent-dir/x.lock", "x", &a, &d), EL_EIO);
    assert_null(a);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_holder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
