/*
 * test_input_bomb.c - decompression bombs through the input layer: a few
 * hundred KB of zstd frames / gzip members that expand to GBs are streamed
 * with flat memory (peak RSS grows by less than 32 MB while every byte is
 * read), and a bomb cut short is EL_ETRUNCATED, not a hang.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/input.h"

#define UNIT ((size_t)1 << 20) /* 1 MB of 'a' a frame/member */

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* copies of one compressed unit, back to back */
static unsigned char *repeat(const unsigned char *one, size_t n, size_t copies, size_t *len)
{
    unsigned char *out = malloc(n * copies);
    assert_non_null(out);
    for (size_t i = 0; i < copies; i++)
        memcpy(out + i * n, one, n);
    *len = n * copies;
    return out;
}

static unsigned char *zstd_unit(size_t *n)
{
    char *plain = malloc(UNIT);
    assert_non_null(plain);
    memset(plain, 'a', UNIT);
    size_t cap = ZSTD_compressBound(UNIT);
    unsigned char *c = malloc(cap);
    assert_non_null(c);
    *n = ZSTD_compress(c, cap, plain, UNIT, 19);
    assert_false(ZSTD_isError(*n));
    free(plain);
    return c;
}

static unsigned char *gzip_unit(size_t *n)
{
    unsigned char *plain = malloc(UNIT);
    assert_non_null(plain);
    memset(plain, 'a', UNIT);
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&z, UNIT) + 64;
    unsigned char *c = malloc(cap);
    assert_non_null(c);
    z.next_in = plain;
    z.avail_in = (uInt)UNIT;
    z.next_out = c;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *n = cap - z.avail_out;
    deflateEnd(&z);
    free(plain);
    return c;
}

/* Reads everything; returns the decompressed byte count, *err the last error. */
static uint64_t drain(el_input *in, el_err *err)
{
    static unsigned char buf[65536];
    uint64_t total = 0;
    size_t got;
    el_diag d;
    while ((*err = el_input_read(in, buf, sizeof buf, &got, &d)) == EL_OK && got > 0) {
        if (total == 0)
            assert_int_equal(buf[0], 'a');
        total += got;
    }
    return total;
}

static void check_bomb(unsigned char *one, size_t n, size_t copies, el_compression comp)
{
    size_t len;
    unsigned char *bomb = repeat(one, n, copies, &len);
    free(one);
    el_input *in;
    el_diag d;
    assert_int_equal(el_input_open_mem(bomb, len, "bomb", &in, &d), EL_OK);
    assert_int_equal(el_input_compression(in), comp);
    long before = peak_rss_kb();
    el_err err;
    uint64_t total = drain(in, &err);
    long after = peak_rss_kb();
    assert_int_equal(err, EL_OK);
    assert_true(total == (uint64_t)copies * UNIT);
    print_message("%zu KB compressed -> %llu MB: peak RSS grew %ld KB\n", len / 1024,
                  (unsigned long long)(total >> 20), after - before);
    assert_true(after - before < 32 * 1024);
    el_input_free(in);

    /* the same bomb cut in the middle of a frame/member */
    assert_int_equal(el_input_open_mem(bomb, len - n / 2, "cut", &in, &d), EL_OK);
    total = drain(in, &err);
    assert_int_equal(err, EL_ETRUNCATED);
    el_input_free(in);
    free(bomb);
}

static void zstd_bomb_streams_flat(void **state)
{
    (void)state;
    size_t n;
    unsigned char *one = zstd_unit(&n);
    check_bomb(one, n, 4096, EL_COMP_ZSTD); /* 4 GB */
}

static void gzip_bomb_streams_flat(void **state)
{
    (void)state;
    size_t n;
    unsigned char *one = gzip_unit(&n);
    check_bomb(one, n, 1024, EL_COMP_GZIP); /* 1 GB */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zstd_bomb_streams_flat),
        cmocka_unit_test(gzip_bomb_streams_flat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
