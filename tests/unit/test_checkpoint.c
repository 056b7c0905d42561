/* test_checkpoint.c - checkpoint files: round trip, atomic replace, bad files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/flow/checkpoint.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return el_test_mkdtemp(dir, sizeof dir, "el-ckpt") ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

static void path_in(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static void test_round_trip(void **state)
{
    (void)state;
    char path[128];
    path_in(path, sizeof path, "ck.json");
    el_checkpoint *cp = el_checkpoint_new(3);
    assert_non_null(cp);
    cp->job_hash = 0xfedcba9876543210ull;
    cp->rejects_bytes = 12345;
    cp->items_written = 9000000000ull;
    cp->rejected = 7;
    const char *paths[] = { "a.csv", "dir/b \"quoted\".sql.zst", "-" };
    for (int i = 0; i < 3; i++)
        cp->inputs[i].path = strdup(paths[i]);
    cp->inputs[0].offset = 4000000000000ull;
    cp->inputs[1].done = true;
    cp->inputs[2].offset = 17;
    cp->inputs[2].has_rejects = true;
    cp->inputs[2].rejects_high = 16;
    el_diag d;
    assert_int_equal(el_checkpoint_write(path, cp, &d), EL_OK);
    el_checkpoint *back;
    assert_int_equal(el_checkpoint_read(path, &back, &d), EL_OK);
    assert_true(back->job_hash == cp->job_hash);
    assert_true(back->rejects_bytes == 12345);
    assert_true(back->items_written == 9000000000ull);
    assert_true(back->rejected == 7);
    assert_int_equal(back->ninputs, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal(back->inputs[i].path, paths[i]);
    assert_true(back->inputs[0].offset == 4000000000000ull);
    assert_false(back->inputs[0].done);
    assert_false(back->inputs[0].has_rejects);
    assert_true(back->inputs[1].done);
    assert_true(back->inputs[2].has_rejects);
    assert_true(back->inputs[2].rejects_high == 16);
    /* no temporary file is left behind */
    char tmp[160];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0);
    el_checkpoint_free(back);
    el_checkpoint_free(cp);
}

static void test_rewrite_replaces(void **state)
{
    (void)state;
    char path[128];
    path_in(path, sizeof path, "ck2.json");
    el_checkpoint *cp = el_checkpoint_new(1);
    cp->inputs[0].path = strdup("x");
    el_diag d;
    for (uint64_t off = 0; off < 50; off++) {
        cp->inputs[0].offset = off;
        assert_int_equal(el_checkpoint_write(path, cp, &d), EL_OK);
    }
    el_checkpoint *back;
    assert_int_equal(el_checkpoint_read(path, &back, &d), EL_OK);
    assert_true(back->inputs[0].offset == 49);
    el_checkpoint_free(back);
    el_checkpoint_free(cp);
}

static void bad(const char *text, const char *why)
{
    char path[128];
    path_in(path, sizeof path, "bad.json");
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    el_checkpoint *cp = (el_checkpoint *)1;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_checkpoint_read(path, &cp, &d), EL_EUSAGE);
    assert_null(cp);
    assert_non_null(strstr(d.msg, why));
}

static void test_malformed_files(void **state)
{
    (void)state;
    bad("", "not usable");
    bad("[1,2]", "not a JSON object");
    bad("{\"job\":\"1\"}", "no \"inputs\"");
    bad("{\"job\":\"1\",\"inputs\":[{\"path\":\"a\"}],\"rejects_bytes\":0}", "an input lacks");
    bad("{\"job\":\"1\",\"inputs\":[],\"rejects_bytes\":-4}", "rejects_bytes");
    el_checkpoint *cp;
    el_diag d;
    assert_int_equal(el_checkpoint_read("/nonexistent/ck.json", &cp, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "cannot read checkpoint"));
}

static void test_hash_is_fnv1a_and_chains(void **state)
{
    (void)state;
    assert_true(el_checkpoint_hash(0, "", 0) == 0xcbf29ce484222325ull);
    assert_true(el_checkpoint_hash(0, "a", 1) == 0xaf63dc4c8601ec8cull);
    uint64_t h = el_checkpoint_hash(0, "foo", 3);
    assert_true(el_checkpoint_hash(h, "bar", 3) == 0x85944171f73967e8ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_rewrite_replaces),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_hash_is_fnv1a_and_chains),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
