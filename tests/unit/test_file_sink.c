/*
 * test_file_sink.c - the `--output DIR` sink: parts read back with libzstd
 * line for line, the manifest parsed with yajl and its SHA-256 recomputed,
 * part limits by items and by bytes, an unfinished sink leaving neither a
 * manifest nor a temporary file, and a used directory refused.
 *
 * Every test works in its own mkdtemp directory, removed afterwards.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <dirent.h>    /* listing what the sink left */
#include <stdbool.h>   /* bool */
#include <stdio.h>     /* fopen, snprintf */
#include <stdlib.h>    /* mkdtemp, free */
#include <string.h>    /* memcmp, strcmp */
#include <sys/stat.h>  /* stat, mkdir */
#include <unistd.h>    /* unlink, rmdir */

#include <openssl/evp.h>   /* recomputing SHA-256 */
#include <yajl/yajl_tree.h>
#include <zstd.h>

#include "pipeline/output/file_sink.h"

/* ---- helpers ---- */

static char root[256];

static int setup(void **state)
{
    (void)state;
    return el_test_mkdtemp(root, sizeof root, "el_file_sink") ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(root);
}

static void path_in(char *out, size_t cap, const char *rel)
{
    int n = snprintf(out, cap, "%s/%s", root, rel);
    assert_true(n > 0 && (size_t)n < cap);
}

static bool exists(const char *rel)
{
    char p[512];
    path_in(p, sizeof p, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

/* Reads a whole file; *len its size. The caller frees. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    assert_non_null(b);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap);
            assert_non_null(b);
        }
    }
    fclose(f);
    *len = n;
    return b;
}

/* Decompresses a whole zstd file (frame of unknown content size). */
static char *unzstd(const unsigned char *src, size_t len, size_t *outlen)
{
    ZSTD_DCtx *d = ZSTD_createDCtx();
    assert_non_null(d);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap + 1);
    assert_non_null(out);
    ZSTD_inBuffer in = { src, len, 0 };
    size_t ret = 1;
    while (in.pos < in.size) {
        if (cap - n < ZSTD_DStreamOutSize()) {
            cap *= 2;
            out = realloc(out, cap + 1);
            assert_non_null(out);
        }
        ZSTD_outBuffer o = { out + n, cap - n, 0 };
        ret = ZSTD_decompressStream(d, &o, &in);
        assert_false(ZSTD_isError(ret));
        n += o.pos;
    }
    assert_int_equal(ret, 0); /* the frame ended: the part is complete */
    ZSTD_freeDCtx(d);
    out[n] = '\0';
    *outlen = n;
    return out;
}

static void sha256_hex(const unsigned char *p, size_t n, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    assert_int_equal(EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL), 1);
    assert_int_equal(mdlen, 32);
    for (unsigned i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* The item JSON of item i: varied length so lines differ. */
static void item_json(size_t i, char *out, size_t cap)
{
    snprintf(out, cap,
             "{\"PK\":{\"S\":\"ACTOR#u%zu\"},\"SK\":{\"S\":\"TARGET#t%zu\"},"
             "\"n\":{\"N\":\"%zu\"},\"pad\":{\"S\":\"%.*s\"}}",
             i, i * 7 % 13, i * 31, (int)(i % 40), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

static el_file_sink *open_sink(const char *rel, uint64_t items, uint64_t bytes)
{
    char dir[512];
    path_in(dir, sizeof dir, rel);
    el_file_sink_opts o = { .dir = dir, .part_max_items = items, .part_max_bytes = bytes,
                            .table = "Graph" };
    el_file_sink *s = NULL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_file_sink_new(&o, &s, &d);
    if (err)
        fail_msg("el_file_sink_new: %s", d.msg);
    assert_non_null(s);
    return s;
}

static void put_items(el_file_sink *s, size_t from, size_t to)
{
    char j[512];
    el_diag d;
    el_diag_clear(&d);
    for (size_t i = from; i < to; i++) {
        item_json(i, j, sizeof j);
        el_err err = el_file_sink_put(s, j, strlen(j), &d);
        if (err)
            fail_msg("put %zu: %s", i, d.msg);
    }
}

/* Names in a directory starting with '.' other than . and .. */
static size_t hidden_files(const char *rel)
{
    char p[512];
    path_in(p, sizeof p, rel);
    DIR *dir = opendir(p);
    if (!dir)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, ".edgeload.lock") != 0) /* the run's lock: stays, by design */
            n++;
    closedir(dir);
    return n;
}

static size_t count_entries(const char *rel)
{
    char p[512];
    path_in(p, sizeof p, rel);
    DIR *dir = opendir(p);
    assert_non_null(dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(dir);
    return n;
}

static yajl_val load_manifest(const char *outrel)
{
    char rel[300], p[512], err[256];
    snprintf(rel, sizeof rel, "%s/manifest.json", outrel);
    path_in(p, sizeof p, rel);
    size_t len;
    unsigned char *text = slurp(p, &len);
    char *z = malloc(len + 1);
    assert_non_null(z);
    memcpy(z, text, len);
    z[len] = '\0';
    free(text);
    yajl_val v = yajl_tree_parse(z, err, sizeof err);
    if (!v)
        fail_msg("manifest does not parse: %s\n%s", err, z);
    free(z);
    return v;
}

static yajl_val field(yajl_val obj, const char *name)
{
    const char *path[] = { name, NULL };
    yajl_val v = yajl_tree_get(obj, path, yajl_t_any);
    if (!v)
        fail_msg("manifest has no \"%s\"", name);
    return v;
}

static long long num(yajl_val obj, const char *name)
{
    yajl_val v = field(obj, name);
    assert_true(YAJL_IS_INTEGER(v));
    return YAJL_GET_INTEGER(v);
}

static const char *str(yajl_val obj, const char *name)
{
    yajl_val v = field(obj, name);
    assert_true(YAJL_IS_STRING(v));
    return YAJL_GET_STRING(v);
}

/*
 * Checks a finished output directory against items [0, nitems): the manifest
 * agrees with the files (sizes, SHA-256, counts), every part decompresses to
 * exactly the expected lines in order, and no temporary file is left.
 * Returns the number of parts; max_items/max_bytes (0 = unchecked) bound
 * every part.
 */
static size_t check_output_kept(const char *outrel, size_t nitems, uint64_t max_items,
                                uint64_t max_bytes, const bool *kept);

static size_t check_output(const char *outrel, size_t nitems, uint64_t max_items,
                           uint64_t max_bytes)
{
    return check_output_kept(outrel, nitems, max_items, max_bytes, NULL);
}

/* The same for items [0, nitems) of which only those with kept[i] remain
 * (kept NULL: all); the parts' names then need not run 0, 1, 2, ... */
static size_t check_output_kept(const char *outrel, size_t nitems, uint64_t max_items,
                                uint64_t max_bytes, const bool *kept)
{
    size_t nkept = 0;
    for (size_t i = 0; i < nitems; i++)
        nkept += !kept || kept[i];
    yajl_val m = load_manifest(outrel);
    assert_string_equal(str(m, "format"), "DYNAMODB_JSON");
    assert_string_equal(str(m, "compression"), "ZSTD");
    assert_string_equal(str(m, "table"), "Graph");
    assert_int_equal(num(m, "item_count"), (long long)nkept);
    assert_non_null(strstr(str(m, "created_by"), "edgeload "));
    yajl_val parts = field(m, "parts");
    assert_true(YAJL_IS_ARRAY(parts));
    size_t nparts = YAJL_GET_ARRAY(parts)->len;
    size_t next = 0;
    char expect[600], j[512];
    for (size_t k = 0; k < nparts; k++) {
        yajl_val p = YAJL_GET_ARRAY(parts)->values[k];
        char want_path[64], rel[400], full[512];
        snprintf(want_path, sizeof want_path, "data/part-%05zu.json.zst", k);
        if (kept)
            snprintf(want_path, sizeof want_path, "%s", str(p, "path"));
        assert_string_equal(str(p, "path"), want_path);
        snprintf(rel, sizeof rel, "%s/%s", outrel, want_path);
        path_in(full, sizeof full, rel);
        size_t zlen, ulen;
        unsigned char *z = slurp(full, &zlen);
        assert_int_equal(num(p, "bytes"), (long long)zlen);
        char hex[65];
        sha256_hex(z, zlen, hex);
        assert_string_equal(str(p, "sha256"), hex);
        char *u = unzstd(z, zlen, &ulen);
        assert_int_equal(num(p, "uncompressed_bytes"), (long long)ulen);
        long long items = num(p, "items");
        assert_true(items > 0);
        if (max_items)
            assert_true((uint64_t)items <= max_items);
        if (max_bytes && items > 1)
            assert_true(ulen <= max_bytes);
        /* the lines, exactly */
        char *line = u;
        for (long long i = 0; i < items; i++) {
            char *nl = strchr(line, '\n');
            assert_non_null(nl);
            while (kept && !kept[next])
                next++;
            item_json(next++, j, sizeof j);
            snprintf(expect, sizeof expect, "{\"Item\":%s}", j);
            assert_int_equal((size_t)(nl - line), strlen(expect));
            assert_memory_equal(line, expect, strlen(expect));
            line = nl + 1;
        }
        assert_int_equal(*line, '\0'); /* nothing after the last line */
        free(u);
        free(z);
    }
    while (kept && next < nitems && !kept[next])
        next++;
    assert_int_equal(next, nitems);
    /* only the parts: no temporary files, nothing unlisted */
    char data[300];
    snprintf(data, sizeof data, "%s/data", outrel);
    assert_int_equal(count_entries(data), nparts);
    assert_int_equal(hidden_files(data), 0);
    assert_int_equal(hidden_files(outrel), 0);
    yajl_tree_free(m);
    return nparts;
}

/* ---- tests ---- */

static void parts_by_items(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 7, 0);
    put_items(s, 0, 50);
    assert_int_equal(el_file_sink_items(s), 50);
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    assert_int_equal(el_file_sink_parts(s), 8);
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 50, 7, 0), 8); /* 7 parts of 7, one of 1 */
}

static void exact_multiple_makes_no_empty_part(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 10, 0);
    put_items(s, 0, 30);
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK); /* again: nothing happens */
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 30, 10, 0), 3);
}

static void parts_by_bytes(void **state)
{
    (void)state;
    /* lines are about 100-140 bytes: 400 bytes hold 2-3 of them */
    el_file_sink *s = open_sink("out", 0, 400);
    put_items(s, 0, 40);
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    size_t nparts = check_output("out", 40, 0, 400);
    assert_true(nparts >= 40 / 3);
    assert_true(nparts <= 40 / 2 + 1);
}

static void item_larger_than_byte_limit_gets_its_own_part(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 0, 50);
    put_items(s, 0, 3);   /* every line is over 50 bytes */
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 3, 1, 0), 3);
}

static void item_larger_than_staging_buffer(void **state)
{
    (void)state;
    size_t big = ZSTD_CStreamInSize() * 2 + 123;
    char *j = malloc(big + 64);
    assert_non_null(j);
    int n = snprintf(j, 64, "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"},\"v\":{\"S\":\"");
    memset(j + n, 'q', big);
    memcpy(j + n + big, "\"}}", 4);
    size_t len = strlen(j);
    el_file_sink *s = open_sink("out", 0, 0);
    el_diag d;
    assert_int_equal(el_file_sink_put(s, "{\"PK\":{\"S\":\"x\"}}", 16, &d), EL_OK);
    assert_int_equal(el_file_sink_put(s, j, len, &d), EL_OK);
    assert_int_equal(el_file_sink_put(s, "{\"PK\":{\"S\":\"y\"}}", 16, &d), EL_OK);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    char p[512];
    path_in(p, sizeof p, "out/data/part-00000.json.zst");
    size_t zlen, ulen;
    unsigned char *z = slurp(p, &zlen);
    char *u = unzstd(z, zlen, &ulen);
    assert_int_equal(ulen, len + 10 + 2 * (16 + 10));
    assert_memory_equal(u, "{\"Item\":{\"PK\":{\"S\":\"x\"}}}\n{\"Item\":", 34);
    assert_memory_equal(u + 34, j, len);
    assert_string_equal(u + 34 + len, "}\n{\"Item\":{\"PK\":{\"S\":\"y\"}}}\n");
    free(u);
    free(z);
    free(j);
}

static void no_items_no_parts(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 0, 0);
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 0, 0, 0), 0);
}

static void free_without_finish_leaves_no_manifest(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 7, 0);
    put_items(s, 0, 20);   /* two parts closed, a third open */
    assert_true(hidden_files("out/data") == 1);   /* the open part's temporary file */
    el_file_sink_free(s);
    assert_false(exists("out/manifest.json"));
    assert_int_equal(hidden_files("out/data"), 0);
    assert_int_equal(hidden_files("out"), 0);
    assert_true(exists("out/data/part-00000.json.zst"));
    assert_true(exists("out/data/part-00001.json.zst"));
    assert_false(exists("out/data/part-00002.json.zst"));
}

static void free_null_is_a_no_op(void **state)
{
    (void)state;
    el_file_sink_free(NULL);
}

static void refuses_a_used_directory(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 0, 0);
    put_items(s, 0, 5);
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);

    char dir[512];
    path_in(dir, sizeof dir, "out");
    el_file_sink_opts o = { .dir = dir, .table = "Graph" };
    s = (el_file_sink *)&o;   /* must be reset to NULL on failure */
    el_diag_clear(&d);
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_EUSAGE);
    assert_null(s);
    assert_non_null(strstr(d.msg, "manifest.json"));

    /* parts without a manifest (a crashed run) are refused too */
    char p[512];
    path_in(p, sizeof p, "out/manifest.json");
    assert_int_equal(unlink(p), 0);
    el_diag_clear(&d);
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "part-00000.json.zst"));
    assert_null(s);
}

static void refuses_leftover_temporary_part(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "out");
    assert_int_equal(mkdir(p, 0777), 0);
    path_in(p, sizeof p, "out/data");
    assert_int_equal(mkdir(p, 0777), 0);
    path_in(p, sizeof p, "out/data/.part-00000.json.zst.tmp");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    path_in(p, sizeof p, "out");
    el_file_sink_opts o = { .dir = p };
    el_file_sink *s = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_EUSAGE);
    assert_null(s);
    assert_true(exists("out/data/.part-00000.json.zst.tmp")); /* not ours: left alone */
}

static void accepts_unrelated_files_and_creates_parents(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "a");
    assert_int_equal(mkdir(p, 0777), 0);
    path_in(p, sizeof p, "a/README");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    el_file_sink *s = open_sink("a/", 0, 0);   /* an existing dir with another file */
    put_items(s, 0, 3);
    el_diag d;
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(check_output("a", 3, 0, 0), 1);

    s = open_sink("x/y/z", 0, 0);   /* missing parents are created */
    put_items(s, 0, 4);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(check_output("x/y/z", 4, 0, 0), 1);
}

static void refuses_a_file_as_directory(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "plain");
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    el_file_sink_opts o = { .dir = p };
    el_file_sink *s = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_not_equal(el_file_sink_new(&o, &s, &d), EL_OK);
    assert_null(s);
    assert_non_null(strstr(d.msg, "plain"));
}

/* The drop iterator over a list of item numbers. */
typedef struct drop_list {
    const uint64_t *v;
    size_t n, i;
} drop_list;

static el_err next_drop(void *user, uint64_t *item, bool *got, el_diag *diag)
{
    (void)diag;
    drop_list *l = user;
    *got = l->i < l->n;
    if (*got)
        *item = l->v[l->i++];
    return EL_OK;
}

static void part_sha(const char *rel, char hex[65])
{
    char full[512];
    path_in(full, sizeof full, rel);
    size_t len;
    unsigned char *z = slurp(full, &len);
    sha256_hex(z, len, hex);
    free(z);
}

static void drop_rewrites_only_the_parts_concerned(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 7, 0);
    put_items(s, 0, 50);
    el_diag d;
    el_diag_clear(&d);
    /* parts of 7: part 0 loses 1 and 3, part 1 (7..13) loses all, part 2
     * loses 20 (its last), part 7 (49) loses its only item; parts 3-6 are
     * not touched */
    uint64_t v[] = { 1, 3, 7, 8, 9, 10, 11, 12, 13, 20, 49 };
    drop_list l = { v, sizeof v / sizeof *v, 0 };
    /* the closed parts before: part 4 must come out byte for byte the same */
    char before[65], after[65];
    uint64_t dropped = 0;
    assert_int_equal(el_file_sink_drop(s, next_drop, &l, &dropped, &d), EL_OK);
    assert_int_equal(dropped, l.n);
    assert_int_equal(el_file_sink_items(s), 50 - l.n);
    assert_int_equal(el_file_sink_put(s, "{}", 2, &d), EL_EINTERNAL);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    assert_int_equal(el_file_sink_parts(s), 6);
    el_file_sink_free(s);
    bool kept[50];
    for (size_t i = 0; i < 50; i++)
        kept[i] = true;
    for (size_t i = 0; i < l.n; i++)
        kept[v[i]] = false;
    assert_int_equal(check_output_kept("out", 50, 7, 0, kept), 6);
    assert_false(exists("out/data/part-00001.json.zst"));
    assert_false(exists("out/data/part-00007.json.zst"));
    /* an untouched part is what a run without drops writes */
    el_file_sink *t = open_sink("ref", 7, 0);
    put_items(t, 0, 50);
    assert_int_equal(el_file_sink_finish(t, &d), EL_OK);
    el_file_sink_free(t);
    part_sha("ref/data/part-00004.json.zst", before);
    part_sha("out/data/part-00004.json.zst", after);
    assert_string_equal(before, after);
    part_sha("ref/data/part-00000.json.zst", before);
    part_sha("out/data/part-00000.json.zst", after);
    assert_string_not_equal(before, after);
}

static void drop_nothing_changes_nothing(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 10, 0);
    put_items(s, 0, 25);
    el_diag d;
    drop_list l = { NULL, 0, 0 };
    uint64_t dropped = 1;
    assert_int_equal(el_file_sink_drop(s, next_drop, &l, &dropped, &d), EL_OK);
    assert_int_equal(dropped, 0);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 25, 10, 0), 3);
}

static void drop_everything_and_bad_lists(void **state)
{
    (void)state;
    el_file_sink *s = open_sink("out", 4, 0);
    put_items(s, 0, 9);
    el_diag d;
    uint64_t all[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, dropped;
    drop_list l = { all, 9, 0 };
    assert_int_equal(el_file_sink_drop(s, next_drop, &l, &dropped, &d), EL_OK);
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    assert_int_equal(el_file_sink_parts(s), 0);
    el_file_sink_free(s);
    assert_int_equal(check_output("out", 0, 0, 0), 0);
    /* out of order, and past the end: refused, and nothing is finished */
    uint64_t bad[] = { 5, 2 };
    s = open_sink("bad1", 4, 0);
    put_items(s, 0, 9);
    l = (drop_list){ bad, 2, 0 };
    assert_int_equal(el_file_sink_drop(s, next_drop, &l, &dropped, &d), EL_EINTERNAL);
    assert_int_equal(el_file_sink_finish(s, &d), EL_EINTERNAL);
    el_file_sink_free(s);
    assert_false(exists("bad1/manifest.json"));
    uint64_t past[] = { 9 };
    s = open_sink("bad2", 4, 0);
    put_items(s, 0, 9);
    l = (drop_list){ past, 1, 0 };
    assert_int_equal(el_file_sink_drop(s, next_drop, &l, &dropped, &d), EL_EINTERNAL);
    assert_non_null(strstr(d.msg, "never put"));
    el_file_sink_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(parts_by_items, setup, teardown),
        cmocka_unit_test_setup_teardown(drop_rewrites_only_the_parts_concerned, setup, teardown),
        cmocka_unit_test_setup_teardown(drop_nothing_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(drop_everything_and_bad_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(exact_multiple_makes_no_empty_part, setup, teardown),
        cmocka_unit_test_setup_teardown(parts_by_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(item_larger_than_byte_limit_gets_its_own_part, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(item_larger_than_staging_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(no_items_no_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(free_without_finish_leaves_no_manifest, setup, teardown),
        cmocka_unit_test(free_null_is_a_no_op),
        cmocka_unit_test_setup_teardown(refuses_a_used_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_leftover_temporary_part, setup, teardown),
        cmocka_unit_test_setup_teardown(accepts_unrelated_files_and_creates_parents, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(refuses_a_file_as_directory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
