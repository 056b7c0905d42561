/*
 * test_input.c - el_input: plain, zstd and gzip, from memory and from files;
 * multi-frame and multi-member streams, truncation and corruption, peek
 * before read, and inputs far larger than the internal 256 KB buffers.
 *
 * Compressed data is made here with libzstd and zlib, so the tests depend on
 * no fixture file.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free, mkstemp */
#include <string.h>  /* memcmp, memcpy, strstr */
#include <unistd.h>  /* write, close, unlink */
#include <zlib.h>    /* gzip test data */
#include <zstd.h>    /* zstd test data */

#include "formats/input.h"

typedef struct blob {
    unsigned char *p;
    size_t len;
} blob;

static blob blob_cat(blob a, blob b)
{
    blob r = { malloc(a.len + b.len + 1), a.len + b.len };
    assert_non_null(r.p);
    memcpy(r.p, a.p, a.len);
    memcpy(r.p + a.len, b.p, b.len);
    return r;
}

/* Text that compresses but is not trivial: numbered CSV-ish lines. */
static blob make_text(size_t len)
{
    blob b = { malloc(len + 1), len };
    assert_non_null(b.p);
    size_t i = 0;
    for (unsigned n = 0; i < len; n++) {
        char line[64];
        int k = snprintf(line, sizeof line, "%u,user%u,TARGET#%u\n", n, n * 7919u, n % 977u);
        for (int j = 0; j < k && i < len; j++)
            b.p[i++] = (unsigned char)line[j];
    }
    return b;
}

/* Bytes that do not compress (so the compressed stream is large too). */
static blob make_noise(size_t len, uint64_t seed)
{
    blob b = { malloc(len + 1), len };
    assert_non_null(b.p);
    for (size_t i = 0; i < len; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        b.p[i] = (unsigned char)(seed >> 56);
    }
    return b;
}

static blob zstd_of(blob in, int checksum)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    assert_non_null(cc);
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)));
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, checksum)));
    size_t cap = ZSTD_compressBound(in.len);
    blob r = { malloc(cap + 1), 0 };
    assert_non_null(r.p);
    r.len = ZSTD_compress2(cc, r.p, cap, in.p, in.len);
    assert_false(ZSTD_isError(r.len));
    ZSTD_freeCCtx(cc);
    return r;
}

static blob gzip_of(blob in)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, (uLong)in.len) + 64;
    blob r = { malloc(cap), 0 };
    assert_non_null(r.p);
    z.next_in = in.p;
    z.avail_in = (uInt)in.len;
    z.next_out = r.p;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    r.len = cap - z.avail_out;
    deflateEnd(&z);
    return r;
}

static void blob_free(blob b) { free(b.p); }

/* Writes data to a fresh temporary file; path gets its name. */
static void temp_file(const void *data, size_t len, const char *suffix, char *path, size_t cap)
{
    snprintf(path, cap, "/tmp/el_test_input_XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    const unsigned char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        assert_true(n > 0);
        p += n;
        len -= (size_t)n;
    }
    close(fd);
}

/* Reads an input to its end in pieces of `step` bytes. Returns the final
 * error (EL_OK at a clean end) and the bytes read in *out. */
static el_err read_all(el_input *in, size_t step, blob *out, el_diag *d)
{
    size_t cap = 1 << 16;
    out->p = malloc(cap);
    out->len = 0;
    assert_non_null(out->p);
    unsigned char *tmp = malloc(step);
    assert_non_null(tmp);
    el_err err;
    for (;;) {
        size_t got = 12345;
        err = el_input_read(in, tmp, step, &got, d);
        if (err)
            break;
        assert_true(got <= step);
        if (got == 0)
            break;
        if (out->len + got > cap) {
            while (out->len + got > cap)
                cap *= 2;
            out->p = realloc(out->p, cap);
            assert_non_null(out->p);
        }
        memcpy(out->p + out->len, tmp, got);
        out->len += got;
    }
    free(tmp);
    return err;
}

static void expect_mem(const void *data, size_t len, el_compression comp, blob want,
                       size_t step)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(data, len, "mem", &in, &d), EL_OK);
    assert_non_null(in);
    assert_int_equal(el_input_compression(in), comp);
    assert_false(el_input_seekable(in));
    assert_int_equal(el_input_raw_size(in), len);
    blob got;
    assert_int_equal(read_all(in, step, &got, &d), EL_OK);
    assert_int_equal(got.len, want.len);
    assert_true(memcmp(got.p, want.p, want.len) == 0);
    assert_int_equal(el_input_raw_consumed(in), len);
    /* the end stays the end */
    unsigned char c;
    size_t n = 99;
    assert_int_equal(el_input_read(in, &c, 1, &n, &d), EL_OK);
    assert_int_equal(n, 0);
    blob_free(got);
    el_input_free(in);
}

static el_err read_mem_expect_error(const void *data, size_t len, el_diag *d)
{
    el_input *in = NULL;
    el_diag_clear(d);
    el_err err = el_input_open_mem(data, len, "bad.bin", &in, d);
    if (err) {
        assert_null(in);
        return err;
    }
    blob got;
    err = read_all(in, 4096, &got, d);
    blob_free(got);
    el_input_free(in);
    return err;
}

/* ---- plain ---- */

static void test_plain_memory(void **state)
{
    (void)state;
    blob t = make_text(5000);
    expect_mem(t.p, t.len, EL_COMP_NONE, t, 100);
    expect_mem(t.p, t.len, EL_COMP_NONE, t, 1);
    blob_free(t);
    el_input *in;
    assert_int_equal(el_input_open_mem("x", 1, NULL, &in, NULL), EL_OK);
    assert_string_equal(el_input_name(in), "<memory>");
    el_input_free(in);
}

static void test_plain_empty_and_tiny(void **state)
{
    (void)state;
    blob none = { (unsigned char *)"", 0 };
    expect_mem("", 0, EL_COMP_NONE, none, 10);
    /* one byte of a magic is not a compressed stream */
    blob one = { (unsigned char *)"\x1f", 1 };
    expect_mem("\x1f", 1, EL_COMP_NONE, one, 10);
    blob three = { (unsigned char *)"\x28\xb5\x2f", 3 };
    expect_mem("\x28\xb5\x2f", 3, EL_COMP_NONE, three, 10);
}

static void test_plain_file(void **state)
{
    (void)state;
    blob t = make_text(300000);
    char path[64];
    temp_file(t.p, t.len, ".csv", path, sizeof path);
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open(path, &in, &d), EL_OK);
    assert_string_equal(el_input_name(in), path);
    assert_int_equal(el_input_compression(in), EL_COMP_NONE);
    assert_true(el_input_seekable(in));
    assert_int_equal(el_input_raw_size(in), t.len);
    blob got;
    assert_int_equal(read_all(in, 65536, &got, &d), EL_OK);
    assert_int_equal(got.len, t.len);
    assert_true(memcmp(got.p, t.p, t.len) == 0);
    assert_int_equal(el_input_raw_consumed(in), t.len);
    blob_free(got);
    el_input_free(in);
    unlink(path);
    blob_free(t);
}

static void test_open_missing_file(void **state)
{
    (void)state;
    el_input *in = (el_input *)&in;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open("/nonexistent/dir/x.csv", &in, &d), EL_EIO);
    assert_null(in);
    assert_non_null(strstr(d.msg, "/nonexistent/dir/x.csv"));
    el_input_free(NULL);
}

/* ---- zstd ---- */

static void test_zstd_memory_and_file(void **state)
{
    (void)state;
    blob t = make_text(100000);
    blob z = zstd_of(t, 0);
    expect_mem(z.p, z.len, EL_COMP_ZSTD, t, 4096);
    char path[64];
    temp_file(z.p, z.len, ".csv.zst", path, sizeof path);
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open(path, &in, &d), EL_OK);
    assert_int_equal(el_input_compression(in), EL_COMP_ZSTD);
    assert_int_equal(el_input_raw_size(in), z.len);
    blob got;
    assert_int_equal(read_all(in, 1000, &got, &d), EL_OK);
    assert_int_equal(got.len, t.len);
    assert_true(memcmp(got.p, t.p, t.len) == 0);
    assert_int_equal(el_input_raw_consumed(in), z.len);
    blob_free(got);
    el_input_free(in);
    unlink(path);
    blob_free(z);
    blob_free(t);
}

static void test_zstd_multi_frame(void **state)
{
    (void)state;
    blob a = make_text(70000), b = make_noise(30000, 7);
    blob za = zstd_of(a, 1), zb = zstd_of(b, 0);
    blob both = blob_cat(za, zb);
    blob want = blob_cat(a, b);
    expect_mem(both.p, both.len, EL_COMP_ZSTD, want, 3333);
    /* a frame of nothing in the middle changes nothing */
    blob empty = { (unsigned char *)"", 0 };
    blob ze = zstd_of(empty, 0);
    blob three = blob_cat(both, ze);
    expect_mem(three.p, three.len, EL_COMP_ZSTD, want, 65536);
    blob_free(three); blob_free(ze);
    blob_free(want); blob_free(both);
    blob_free(za); blob_free(zb); blob_free(a); blob_free(b);
}

static void test_zstd_truncated(void **state)
{
    (void)state;
    blob t = make_noise(50000, 3);
    blob z = zstd_of(t, 0);
    el_diag d;
    /* cut inside the data, inside the header, and right after the magic */
    assert_int_equal(read_mem_expect_error(z.p, z.len / 2, &d), EL_ETRUNCATED);
    assert_non_null(strstr(d.msg, "bad.bin"));
    assert_int_equal(read_mem_expect_error(z.p, z.len - 1, &d), EL_ETRUNCATED);
    assert_int_equal(read_mem_expect_error(z.p, 6, &d), EL_ETRUNCATED);
    assert_int_equal(read_mem_expect_error(z.p, 4, &d), EL_ETRUNCATED);
    /* a complete frame followed by a cut one */
    blob two = blob_cat(z, z);
    assert_int_equal(read_mem_expect_error(two.p, z.len + z.len / 3, &d), EL_ETRUNCATED);
    blob_free(two);
    blob_free(z);
    blob_free(t);
}

static void test_zstd_corrupt(void **state)
{
    (void)state;
    el_diag d;
    /* a valid magic and a frame header with its reserved bit set */
    const unsigned char junk[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x08, 0x00, 0x01, 0x00,
                                   0x00, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41 };
    assert_int_equal(read_mem_expect_error(junk, sizeof junk, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "zstd"));
    /* a good header and a block of the reserved type 3 */
    const unsigned char junk2[] = { 0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x00, 0x07, 0x00,
                                    0x00, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41 };
    assert_int_equal(read_mem_expect_error(junk2, sizeof junk2, &d), EL_EPARSE);
    /* a checksummed frame with a flipped byte in the middle */
    blob t = make_text(60000);
    blob z = zstd_of(t, 1);
    z.p[z.len / 2] ^= 0x55;
    assert_int_equal(read_mem_expect_error(z.p, z.len, &d), EL_EPARSE);
    blob_free(z);
    /* garbage after a complete frame */
    blob z2 = zstd_of(t, 0);
    blob tail = { (unsigned char *)"garbage!", 8 };
    blob bad = blob_cat(z2, tail);
    assert_int_equal(read_mem_expect_error(bad.p, bad.len, &d), EL_EPARSE);
    blob_free(bad);
    blob_free(z2);
    blob_free(t);
}

/* ---- gzip ---- */

static void test_gzip_memory_and_file(void **state)
{
    (void)state;
    blob t = make_text(120000);
    blob g = gzip_of(t);
    expect_mem(g.p, g.len, EL_COMP_GZIP, t, 777);
    char path[64];
    temp_file(g.p, g.len, ".csv.gz", path, sizeof path);
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open(path, &in, &d), EL_OK);
    assert_int_equal(el_input_compression(in), EL_COMP_GZIP);
    assert_true(el_input_seekable(in));
    blob got;
    assert_int_equal(read_all(in, 65536, &got, &d), EL_OK);
    assert_int_equal(got.len, t.len);
    assert_true(memcmp(got.p, t.p, t.len) == 0);
    assert_int_equal(el_input_raw_consumed(in), g.len);
    blob_free(got);
    el_input_free(in);
    unlink(path);
    blob_free(g);
    blob_free(t);
}

static void test_gzip_concatenated_members(void **state)
{
    (void)state;
    blob a = make_text(40000), b = make_noise(20000, 11), c = make_text(10);
    blob ga = gzip_of(a), gb = gzip_of(b), gc = gzip_of(c);
    blob gab = blob_cat(ga, gb), gall = blob_cat(gab, gc);
    blob ab = blob_cat(a, b), all = blob_cat(ab, c);
    expect_mem(gall.p, gall.len, EL_COMP_GZIP, all, 5000);
    blob_free(gall); blob_free(gab); blob_free(all); blob_free(ab);
    blob_free(ga); blob_free(gb); blob_free(gc);
    blob_free(a); blob_free(b); blob_free(c);
}

static void test_gzip_truncated(void **state)
{
    (void)state;
    blob t = make_noise(50000, 5);
    blob g = gzip_of(t);
    el_diag d;
    assert_int_equal(read_mem_expect_error(g.p, g.len / 2, &d), EL_ETRUNCATED);
    assert_non_null(strstr(d.msg, "bad.bin"));
    assert_int_equal(read_mem_expect_error(g.p, g.len - 4, &d), EL_ETRUNCATED); /* no size */
    assert_int_equal(read_mem_expect_error(g.p, 10, &d), EL_ETRUNCATED);      /* header only */
    assert_int_equal(read_mem_expect_error(g.p, 2, &d), EL_ETRUNCATED);
    blob two = blob_cat(g, g);
    assert_int_equal(read_mem_expect_error(two.p, g.len + 100, &d), EL_ETRUNCATED);
    blob_free(two);
    blob_free(g);
    blob_free(t);
}

static void test_gzip_corrupt(void **state)
{
    (void)state;
    el_diag d;
    const unsigned char junk[] = { 0x1F, 0x8B, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
    assert_int_equal(read_mem_expect_error(junk, sizeof junk, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "gzip"));
    /* a flipped byte in the middle: bad code or bad CRC, either way a parse error */
    blob t = make_text(80000);
    blob g = gzip_of(t);
    g.p[g.len / 2] ^= 0xFF;
    assert_int_equal(read_mem_expect_error(g.p, g.len, &d), EL_EPARSE);
    blob_free(g);
    /* a wrong CRC in the trailer */
    blob g2 = gzip_of(t);
    g2.p[g2.len - 6] ^= 0x01;
    assert_int_equal(read_mem_expect_error(g2.p, g2.len, &d), EL_EPARSE);
    blob_free(g2);
    blob_free(t);
}

/* ---- peek ---- */

static void test_peek_then_read(void **state)
{
    (void)state;
    blob t = make_text(400000);
    blob z = zstd_of(t, 0), g = gzip_of(t);
    const blob *srcs[] = { &t, &z, &g };
    for (size_t s = 0; s < 3; s++) {
        el_input *in;
        el_diag d;
        assert_int_equal(el_input_open_mem(srcs[s]->p, srcs[s]->len, "p", &in, &d), EL_OK);
        const unsigned char *p;
        size_t got;
        assert_int_equal(el_input_peek(in, 4, &p, &got, &d), EL_OK);
        assert_int_equal(got, 4);
        assert_memory_equal(p, t.p, 4);
        /* a bigger peek still starts at the beginning */
        assert_int_equal(el_input_peek(in, 64 * 1024, &p, &got, &d), EL_OK);
        assert_int_equal(got, 64 * 1024);
        assert_memory_equal(p, t.p, 64 * 1024);
        /* peeks are capped at the buffer, never more than asked */
        assert_int_equal(el_input_peek(in, 10u << 20, &p, &got, &d), EL_OK);
        assert_true(got >= 64 * 1024 && got <= 256 * 1024);
        assert_memory_equal(p, t.p, got);
        /* reading consumes from the start, then a peek sees what follows */
        unsigned char buf[10];
        assert_int_equal(el_input_read(in, buf, 10, &got, &d), EL_OK);
        assert_int_equal(got, 10);
        assert_memory_equal(buf, t.p, 10);
        assert_int_equal(el_input_peek(in, 3, &p, &got, &d), EL_OK);
        assert_int_equal(got, 3);
        assert_memory_equal(p, t.p + 10, 3);
        blob rest;
        assert_int_equal(read_all(in, 9999, &rest, &d), EL_OK);
        assert_int_equal(rest.len, t.len - 10);
        assert_true(memcmp(rest.p, t.p + 10, rest.len) == 0);
        blob_free(rest);
        el_input_free(in);
    }
    blob_free(z); blob_free(g); blob_free(t);
}

static void test_peek_past_end(void **state)
{
    (void)state;
    blob t = { (unsigned char *)"a,b\n1,2\n", 8 };
    blob z = zstd_of(t, 0), g = gzip_of(t);
    const blob *srcs[] = { &t, &z, &g };
    for (size_t s = 0; s < 3; s++) {
        el_input *in;
        el_diag d;
        assert_int_equal(el_input_open_mem(srcs[s]->p, srcs[s]->len, "p", &in, &d), EL_OK);
        const unsigned char *p;
        size_t got;
        assert_int_equal(el_input_peek(in, 1000, &p, &got, &d), EL_OK);
        assert_int_equal(got, 8);
        assert_memory_equal(p, "a,b\n1,2\n", 8);
        assert_int_equal(el_input_peek(in, 1000, &p, &got, &d), EL_OK);
        assert_int_equal(got, 8);
        blob all;
        assert_int_equal(read_all(in, 3, &all, &d), EL_OK);
        assert_int_equal(all.len, 8);
        blob_free(all);
        assert_int_equal(el_input_peek(in, 10, &p, &got, &d), EL_OK);
        assert_int_equal(got, 0);
        el_input_free(in);
    }
    blob_free(z); blob_free(g);
}

static void test_peek_of_truncated_stream_reports_it(void **state)
{
    (void)state;
    blob t = make_noise(2000, 9);
    blob z = zstd_of(t, 0);
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open_mem(z.p, z.len - 10, "cut.zst", &in, &d), EL_OK);
    const unsigned char *p;
    size_t got;
    assert_int_equal(el_input_peek(in, 64 * 1024, &p, &got, &d), EL_ETRUNCATED);
    el_input_free(in);
    blob_free(z);
    blob_free(t);
}

/* ---- large ---- */

static void test_large_inputs(void **state)
{
    (void)state;
    /* text expands from small compressed blocks; noise makes the compressed
     * side itself bigger than the raw buffer */
    blob text = make_text(700000);
    blob noise = make_noise(600000, 42);
    blob zeros = { calloc(1, 1200000), 1200000 };
    assert_non_null(zeros.p);
    const blob *plain[] = { &text, &noise, &zeros };
    for (size_t i = 0; i < 3; i++) {
        blob z = zstd_of(*plain[i], 1), g = gzip_of(*plain[i]);
        expect_mem(plain[i]->p, plain[i]->len, EL_COMP_NONE, *plain[i], 100000);
        expect_mem(z.p, z.len, EL_COMP_ZSTD, *plain[i], 7777);
        expect_mem(g.p, g.len, EL_COMP_GZIP, *plain[i], 300000);
        char path[64];
        temp_file(z.p, z.len, ".zst", path, sizeof path);
        el_input *in;
        el_diag d;
        assert_int_equal(el_input_open(path, &in, &d), EL_OK);
        blob got;
        assert_int_equal(read_all(in, 65536, &got, &d), EL_OK);
        assert_int_equal(got.len, plain[i]->len);
        assert_true(memcmp(got.p, plain[i]->p, got.len) == 0);
        blob_free(got);
        el_input_free(in);
        unlink(path);
        blob_free(z);
        blob_free(g);
    }
    blob_free(text); blob_free(noise); blob_free(zeros);
}

static void test_magic_decides_not_the_name(void **state)
{
    (void)state;
    blob t = make_text(1000);
    blob g = gzip_of(t);
    char path[64];
    temp_file(g.p, g.len, ".csv", path, sizeof path);   /* misnamed */
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open(path, &in, &d), EL_OK);
    assert_int_equal(el_input_compression(in), EL_COMP_GZIP);
    blob got;
    assert_int_equal(read_all(in, 100, &got, &d), EL_OK);
    assert_int_equal(got.len, t.len);
    blob_free(got);
    el_input_free(in);
    unlink(path);
    temp_file(t.p, t.len, ".csv.zst", path, sizeof path);   /* plain, named .zst */
    assert_int_equal(el_input_open(path, &in, &d), EL_OK);
    assert_int_equal(el_input_compression(in), EL_COMP_NONE);
    el_input_free(in);
    unlink(path);
    blob_free(g);
    blob_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_memory),
        cmocka_unit_test(test_plain_empty_and_tiny),
        cmocka_unit_test(test_plain_file),
        cmocka_unit_test(test_open_missing_file),
        cmocka_unit_test(test_zstd_memory_and_file),
        cmocka_unit_test(test_zstd_multi_frame),
        cmocka_unit_test(test_zstd_truncated),
        cmocka_unit_test(test_zstd_corrupt),
        cmocka_unit_test(test_gzip_memory_and_file),
        cmocka_unit_test(test_gzip_concatenated_members),
        cmocka_unit_test(test_gzip_truncated),
        cmocka_unit_test(test_gzip_corrupt),
        cmocka_unit_test(test_peek_then_read),
        cmocka_unit_test(test_peek_past_end),
        cmocka_unit_test(test_peek_of_truncated_stream_reports_it),
        cmocka_unit_test(test_large_inputs),
        cmocka_unit_test(test_magic_decides_not_the_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
