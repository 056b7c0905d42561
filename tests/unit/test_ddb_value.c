/*
 * test_ddb_value.c - JSON string escaping, DynamoDB's number rule, base64
 * (RFC 4648 vectors), dates and timestamps to epoch seconds, booleans.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>  /* uint64_t */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* strlen */
#include <time.h>    /* timegm as a reference */

#include "formats/ddb_value.h"

/* ---- JSON strings ---- */

static void json_is(const char *in, size_t len, const char *want)
{
    el_buf b;
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_json_put_string(&b, in, len), EL_OK);
    assert_string_equal(el_buf_str(&b), want);
    assert_int_equal(b.len, strlen(want));
    el_buf_free(&b);
}

#define JSON_IS(lit, want) json_is((lit), sizeof(lit) - 1, (want))

static void test_json_plain_and_quotes(void **state)
{
    (void)state;
    JSON_IS("", "\"\"");
    JSON_IS("ACTOR#alice", "\"ACTOR#alice\"");
    JSON_IS("say \"hi\"", "\"say \\\"hi\\\"\"");
    JSON_IS("C:\\path\\", "\"C:\\\\path\\\\\"");
    JSON_IS("\\\"", "\"\\\\\\\"\"");
    JSON_IS("a/b", "\"a/b\"");         /* '/' needs no escape */
    JSON_IS("\x7f", "\"\x7f\"");       /* DEL is not a control character for JSON */
}

static void test_json_every_control_character(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 0x20; c++) {
        char in[3] = { 'x', (char)c, 'y' };
        char want[16];
        const char *shortform = NULL;
        switch (c) {
        case '\b': shortform = "\\b"; break;
        case '\t': shortform = "\\t"; break;
        case '\n': shortform = "\\n"; break;
        case '\f': shortform = "\\f"; break;
        case '\r': shortform = "\\r"; break;
        }
        if (shortform)
            snprintf(want, sizeof want, "\"x%sy\"", shortform);
        else
            snprintf(want, sizeof want, "\"x\\u%04xy\"", c);
        json_is(in, 3, want);
    }
    /* a run of them and text around */
    JSON_IS("a\x01\x02\x1f" "b\n", "\"a\\u0001\\u0002\\u001fb\\n\"");
}

static void test_json_utf8_passthrough(void **state)
{
    (void)state;
    JSON_IS("caf\xc3\xa9", "\"caf\xc3\xa9\"");
    JSON_IS("\xe2\x82\xac 5", "\"\xe2\x82\xac 5\"");
    JSON_IS("\xf0\x9f\x98\x80\xf0\x9f\x91\x8d", "\"\xf0\x9f\x98\x80\xf0\x9f\x91\x8d\"");
    JSON_IS("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");
}

static void test_json_appends_and_long_values(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_buf_puts(&b, "{\"S\":"), EL_OK);
    assert_int_equal(el_json_put_string(&b, "x\"", 2), EL_OK);
    assert_int_equal(el_buf_putc(&b, '}'), EL_OK);
    assert_string_equal(el_buf_str(&b), "{\"S\":\"x\\\"\"}");
    el_buf_free(&b);

    /* a value where every byte needs escaping grows sixfold */
    size_t n = 10000;
    char *in = malloc(n);
    assert_non_null(in);
    memset(in, 1, n);
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_json_put_string(&b, in, n), EL_OK);
    assert_int_equal(b.len, n * 6 + 2);
    assert_memory_equal(b.data + 1, "\\u0001\\u0001", 12);
    el_buf_free(&b);
    /* and is refused by a buffer too small for it */
    el_buf_init(&b, n * 2);
    assert_int_equal(el_json_put_string(&b, in, n), EL_ELIMIT);
    el_buf_free(&b);
    free(in);
}

/* The escaping rule byte by byte, as the reference for the encoder (which
 * tests 8 bytes at a time). */
static size_t json_reference(const unsigned char *in, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = in[i];
        const char *sf = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n"
                       : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b"
                       : c == '\f' ? "\\f" : NULL;
        if (sf) {
            out[n++] = sf[0];
            out[n++] = sf[1];
        } else if (c < 0x20) {
            memcpy(out + n, "\\u00", 4);
            out[n + 4] = hex[c >> 4];
            out[n + 5] = hex[c & 15];
            n += 6;
        } else {
            out[n++] = (char)c;
        }
    }
    out[n++] = '"';
    return n;
}

static void test_json_every_byte_at_every_position(void **state)
{
    (void)state;
    /* each byte value at each position of plain runs of 0..40 bytes (so
     * before, inside and after the 8-byte steps), after a prefix that puts
     * the value at every alignment */
    unsigned char in[48];
    char want[48 * 6 + 2];
    for (size_t len = 1; len <= 40; len++) {
        for (size_t pos = 0; pos < len; pos++) {
            for (unsigned c = 0; c < 256; c++) {
                for (size_t k = 0; k < len; k++)
                    in[k] = (unsigned char)('a' + k % 26);
                in[pos] = (unsigned char)c;
                size_t n = json_reference(in, len, want);
                el_buf b;
                el_buf_init(&b, 1 << 20);
                assert_int_equal(el_buf_puts(&b, "pre"), EL_OK);
                assert_int_equal(el_json_put_string(&b, (const char *)in, len), EL_OK);
                assert_int_equal(b.len, n + 3);
                assert_memory_equal(b.data + 3, want, n);
                assert_int_equal(b.data[b.len], '\0');
                el_buf_free(&b);
            }
        }
    }
}

static void test_json_random_against_reference(void **state)
{
    (void)state;
    /* random strings mixing plain text, UTF-8 (bytes >= 0x80, which the
     * 8-byte test must not take for controls) and bytes to escape */
    uint64_t x = 0x2545f4914f6cdd1dull;
    unsigned char in[200];
    char want[200 * 6 + 2];
    el_buf b;
    el_buf_init(&b, 1 << 20);
    for (int iter = 0; iter < 20000; iter++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = x % 200;
        unsigned mode = (unsigned)(x >> 32) % 4;
        for (size_t k = 0; k < len; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned r = (unsigned)(x >> 24);
            in[k] = mode == 0 ? (unsigned char)r                          /* any byte */
                  : mode == 1 ? (unsigned char)(0x80 | r)                 /* high bytes */
                  : r % 50 ? (unsigned char)('A' + r % 58)                /* mostly plain */
                  : (unsigned char)"\"\\\n\x01\x1f\x7f\x80\xff"[r % 8];
        }
        size_t n = json_reference(in, len, want);
        size_t mark = b.len;
        assert_int_equal(el_json_put_string(&b, (const char *)in, len), EL_OK);
        assert_int_equal(b.len - mark, n);
        assert_memory_equal(b.data + mark, want, n);
        if (b.len > 100000)
            el_buf_reset(&b);
    }
    el_buf_free(&b);
}

/* ---- numbers ---- */

static void number_ok(const char *in, const char *want)
{
    el_buf b;
    el_buf_init(&b, 4096);
    size_t size = 0;
    const char *why = NULL;
    el_err err = el_ddb_number_put(&b, in, strlen(in), &size, &why);
    if (err != EL_OK)
        fail_msg("'%s' rejected: %s", in, why ? why : "?");
    assert_string_equal(el_buf_str(&b), want);
    assert_true(size >= 1 && size <= 21);
    el_buf_free(&b);
}

static void number_bad(const char *in, const char *why_part)
{
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_buf_puts(&b, "keep"), EL_OK);
    size_t size = 0;
    const char *why = NULL;
    el_err err = el_ddb_number_put(&b, in, strlen(in), &size, &why);
    if (err != EL_EREJECT)
        fail_msg("'%s' accepted (%d), want a reject", in, err);
    assert_non_null(why);
    if (why_part && !strstr(why, why_part))
        fail_msg("'%s': reason '%s' lacks '%s'", in, why, why_part);
    assert_string_equal(el_buf_str(&b), "keep");    /* nothing appended */
    el_buf_free(&b);
}

static void test_number_forms(void **state)
{
    (void)state;
    number_ok("0", "0");
    number_ok("42", "42");
    number_ok("-17", "-17");
    number_ok("+5", "5");
    number_ok("-0", "-0");
    number_ok(".5", ".5");
    number_ok("5.", "5.");
    number_ok("-.25", "-.25");
    number_ok("1e5", "1e5");
    number_ok("1E+5", "1E+5");
    number_ok("-1.5E-3", "-1.5E-3");
    number_ok("007", "007");
    number_ok("1718900000", "1718900000");
}

static void test_number_garbage_rejected(void **state)
{
    (void)state;
    number_bad("", "not a number");
    number_bad("-", "not a number");
    number_bad("+", "not a number");
    number_bad(".", "not a number");
    number_bad("1e", "exponent");
    number_bad("1e+", "exponent");
    number_bad("1E-", "exponent");
    number_bad("abc", "not a number");
    number_bad(" 1", "not a number");
    number_bad("1 ", "not a number");
    number_bad("NaN", "not a number");
    number_bad("Infinity", "not a number");
    number_bad("-Infinity", "not a number");
    number_bad("1.2.3", "not a number");
    number_bad("1e5.5", "not a number");
    number_bad("0x10", "not a number");
    number_bad("--1", "not a number");
    number_bad("+-1", "not a number");
    number_bad("e5", "not a number");
    number_bad("1,5", "not a number");
}

static void test_number_precision(void **state)
{
    (void)state;
    /* 38 significant digits is DynamoDB's maximum */
    number_ok("12345678901234567890123456789012345678", "12345678901234567890123456789012345678");
    number_bad("123456789012345678901234567890123456789", "38 significant digits");
    number_ok("-1234567890123456789.0123456789012345678",
              "-1234567890123456789.0123456789012345678");
    number_bad("1234567890123456789.01234567890123456789", "38 significant digits");
    /* leading and trailing zeros are not significant */
    number_ok("00000000000012345678901234567890123456789012345678",
              "00000000000012345678901234567890123456789012345678");
    number_ok("1234567890123456789012345678901234567800000",
              "1234567890123456789012345678901234567800000");
    number_ok("0.0000000012345678901234567890123456789012345678000",
              "0.0000000012345678901234567890123456789012345678000");
    number_ok("1.5000000000000000000000000000000000000000000000",
              "1.5000000000000000000000000000000000000000000000");
    /* zeros in the middle are */
    number_bad("1000000000000000000000000000000000000001", "38 significant digits");
}

static void test_number_magnitude(void **state)
{
    (void)state;
    number_ok("9.9999999999999999999999999999999999999E+125",
              "9.9999999999999999999999999999999999999E+125");
    number_ok("-9.9999999999999999999999999999999999999E+125",
              "-9.9999999999999999999999999999999999999E+125");
    number_bad("1E+126", "magnitude");
    number_bad("10E+125", "magnitude");
    number_ok("100E+123", "100E+123");
    number_bad("1000E+123", "magnitude");
    number_ok("1E-130", "1E-130");
    number_ok("-1E-130", "-1E-130");
    number_bad("1E-131", "magnitude");
    number_bad("0.1E-130", "magnitude");
    number_ok("0.0000001E-123", "0.0000001E-123");
    number_bad("0.00000001E-123", "magnitude");
    number_ok("0E+999", "0E+999");               /* zero has no magnitude */
    number_bad("1E+99999999999999999999", "magnitude");
    number_bad("1E-99999999999999999999", "magnitude");
    /* 126 digits before the point is 1E+125: fine; 127 is not */
    char big[200];
    memset(big, '0', sizeof big);
    big[0] = '1';
    big[126] = '\0';
    number_ok(big, big);
    big[126] = '0';
    big[127] = '\0';
    number_bad(big, "magnitude");
}

static void test_number_size(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 4096);
    size_t size;
    const char *why;
    assert_int_equal(el_ddb_number_put(&b, "0", 1, &size, &why), EL_OK);
    assert_int_equal(size, 1);
    const char *n38 = "12345678901234567890123456789012345678";
    assert_int_equal(el_ddb_number_put(&b, n38, strlen(n38), &size, &why), EL_OK);
    assert_int_equal(size, 20);
    /* zeros that are not significant cost nothing */
    assert_int_equal(el_ddb_number_put(&b, "1000000", 7, &size, &why), EL_OK);
    assert_int_equal(size, 2);
    el_buf_free(&b);
}

static void test_number_empty_is_not_read(void **state)
{
    (void)state;
    /* len 0 at the very end of an allocation: nothing past it may be read */
    char *p = malloc(4);
    assert_non_null(p);
    memcpy(p, "+123", 4);
    el_buf b;
    el_buf_init(&b, 64);
    size_t size;
    const char *why = NULL;
    assert_int_equal(el_ddb_number_put(&b, p + 4, 0, &size, &why), EL_EREJECT);
    assert_int_equal(el_ddb_number_put(&b, p, 2, &size, &why), EL_OK);  /* "+1" */
    assert_string_equal(el_buf_str(&b), "1");
    el_buf_free(&b);
    free(p);
}

/* ---- base64 ---- */

static void b64_is(const char *in, size_t len, const char *want)
{
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_buf_puts(&b, "<"), EL_OK);
    assert_int_equal(el_base64_put(&b, in, len), EL_OK);
    assert_int_equal(el_buf_puts(&b, ">"), EL_OK);
    char w[256];
    snprintf(w, sizeof w, "<%s>", want);
    assert_string_equal(el_buf_str(&b), w);
    el_buf_free(&b);
}

static void test_base64_rfc4648_vectors(void **state)
{
    (void)state;
    b64_is("", 0, "");
    b64_is("f", 1, "Zg==");
    b64_is("fo", 2, "Zm8=");
    b64_is("foo", 3, "Zm9v");
    b64_is("foob", 4, "Zm9vYg==");
    b64_is("fooba", 5, "Zm9vYmE=");
    b64_is("foobar", 6, "Zm9vYmFy");
}

static void test_base64_binary(void **state)
{
    (void)state;
    b64_is("\xff\xfe\x00", 3, "//4A");
    b64_is("\x00", 1, "AA==");
    b64_is("\x00\x00", 2, "AAA=");
    b64_is("\xfb\xff", 2, "+/8=");
    b64_is("\x14\xfb\x9c\x03\xd9\x7e", 6, "FPucA9l+");
    /* all 256 byte values */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_base64_put(&b, all, sizeof all), EL_OK);
    assert_int_equal(b.len, 344);
    assert_memory_equal(b.data, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g", 44);
    assert_memory_equal(b.data + 336, "/P3+/w==", 8);
    el_buf_free(&b);
    /* too big for the buffer: refused */
    el_buf_init(&b, 8);
    assert_int_equal(el_base64_put(&b, "foobar", 6), EL_ELIMIT);
    el_buf_free(&b);
}

/* ---- epoch ---- */

static void epoch_is(const char *in, long long want)
{
    int64_t got = 0x7777;
    const char *why = NULL;
    if (!el_epoch_parse(in, strlen(in), &got, &why))
        fail_msg("'%s' refused: %s", in, why ? why : "?");
    if (got != want)
        fail_msg("'%s' gave %lld, want %lld", in, (long long)got, want);
}

static void epoch_bad(const char *in)
{
    int64_t got;
    const char *why = NULL;
    if (el_epoch_parse(in, strlen(in), &got, &why))
        fail_msg("'%s' accepted as %lld", in, (long long)got);
    assert_non_null(why);
}

static void test_days_from_civil(void **state)
{
    (void)state;
    assert_int_equal(el_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(el_days_from_civil(1970, 1, 2), 1);
    assert_int_equal(el_days_from_civil(1969, 12, 31), -1);
    assert_int_equal(el_days_from_civil(2000, 3, 1), 11017);
    assert_int_equal(el_days_from_civil(2024, 6, 20), 19894);
    assert_int_equal(el_days_from_civil(1, 1, 1), -719162);
}

static void test_epoch_dates_and_timestamps(void **state)
{
    (void)state;
    epoch_is("1970-01-01", 0);
    epoch_is("2024-06-20", 1718841600);
    epoch_is("2024-06-20 16:13:20", 1718900000);     /* a UTC timestamp: its epoch seconds */
    epoch_is("2024-06-20T16:13:20", 1718900000);
    epoch_is("2024-06-20t16:13:20", 1718900000);
    epoch_is("2024-06-20 16:15", 1718900100);
    epoch_is("2024-06-20 16:16:40", 1718900200);
    epoch_is("2038-01-19 03:14:08", 2147483648LL);   /* past 32 bits */
    epoch_is("9999-12-31 23:59:59", 253402300799LL);
}

static void test_epoch_fractions(void **state)
{
    (void)state;
    epoch_is("2024-06-20 16:13:20.000", 1718900000);
    epoch_is("2024-06-20 16:13:20.999999", 1718900000);
    epoch_is("2024-06-20T16:13:20.5Z", 1718900000);
    epoch_is("2024-06-20 16:13:20,25", 1718900000);
    /* the floor stays in its second before 1970 too */
    epoch_is("1969-12-31 23:59:59.5", -1);
    epoch_bad("2024-06-20 16:13:20.");
    epoch_bad("2024-06-20 16:13.5");
}

static void test_epoch_zones(void **state)
{
    (void)state;
    epoch_is("2024-06-20T16:13:20Z", 1718900000);
    epoch_is("2024-06-20T16:13:20z", 1718900000);
    epoch_is("2024-06-20 16:13:20+00", 1718900000);  /* PostgreSQL's timestamptz */
    epoch_is("2024-06-20 16:13:20-00", 1718900000);
    epoch_is("2024-06-20 16:13:20+00:00", 1718900000);
    epoch_is("2024-06-20T21:43:20+05:30", 1718900000);
    epoch_is("2024-06-20T21:43:20+0530", 1718900000);
    epoch_is("2024-06-20T08:13:20-0800", 1718900000);
    epoch_is("2024-06-20T08:13:20-08:00", 1718900000);
    epoch_is("2024-06-20 18:13:20+02", 1718900000);
    epoch_is("2024-06-20 16:13:20.123456+00", 1718900000);
    epoch_is("2024-06-20 16:13:20 +00", 1718900000);
    epoch_is("2024-06-21 01:13:20+09", 1718900000);  /* across midnight */
    epoch_is("1970-01-01 00:00:00+01", -3600);
    /* PostgreSQL prints seconds in old zones' offsets: +00:53:28 */
    epoch_is("1900-01-01 00:53:28+00:53:28", -2208988800LL);
    epoch_bad("2024-06-20T16:13:20+5");
    epoch_bad("2024-06-20T16:13:20+24");
    epoch_bad("2024-06-20T16:13:20+05:60");
    epoch_bad("2024-06-20T16:13:20+0575");
    epoch_is("2024-06-20T16:13:20+14:00", 1718900000 - 14 * 3600);
    epoch_is("2024-06-20T16:13:20-12:00", 1718900000 + 12 * 3600);
    epoch_bad("2024-06-20T16:13:20+");
    epoch_bad("2024-06-20T16:13:20Q");
}

static void test_epoch_before_1970(void **state)
{
    (void)state;
    epoch_is("1969-12-31 23:59:59", -1);
    epoch_is("1969-12-31", -86400);
    epoch_is("1900-01-01", -2208988800LL);
    epoch_is("1600-03-01 00:00:00Z", -11670912000LL);
    epoch_is("0001-01-01", -62135596800LL);
}

static void test_epoch_leap_days(void **state)
{
    (void)state;
    epoch_is("2024-02-29", 1709164800);
    epoch_is("2000-02-29", 951782400);
    epoch_is("2024-03-01", 1709251200);
    epoch_is("2024-12-31", 1735603200);
    epoch_bad("2023-02-29");
    epoch_bad("2100-02-29");                 /* divisible by 100, not by 400 */
    epoch_bad("1900-02-29 12:00:00");
    epoch_bad("2024-02-30");
}

static void test_epoch_invalid_dates(void **state)
{
    (void)state;
    epoch_bad("2024-13-01");
    epoch_bad("2024-00-10");
    epoch_bad("2024-01-00");
    epoch_bad("2024-01-32");
    epoch_bad("2024-04-31");
    epoch_bad("2024-06-31");
    epoch_bad("2024-09-31");
    epoch_bad("2024-11-31");
    epoch_is("2024-01-31", 1706659200);
    epoch_is("2024-07-31", 1722384000);
    epoch_bad("2024-06-20 25:00:00");
    epoch_bad("2024-06-20 12:60:00");
    epoch_bad("2024-06-20 12:00:61");
    epoch_is("2024-06-20 24:00:00", 1718928000);     /* ISO 8601's end of day */
    epoch_is("2016-12-31 23:59:60Z", 1483228800);    /* a leap second */
    epoch_bad("2024-06-20 24:30:00");
    epoch_bad("2024-06-20 24:00:01");
    epoch_bad("");
    epoch_bad("-");
    epoch_bad("abc");
    epoch_bad("2024-6-20");
    epoch_bad("2024/06/20");
    epoch_bad("20-06-2024");
    epoch_bad("2024-06-20X");
    epoch_bad("2024-06-20 16");
    epoch_bad("2024-06-20 16:1");
    epoch_bad("2024-06-20T");
    epoch_bad("12.5");
    epoch_bad("1e9");
}

static void test_epoch_bare_integers(void **state)
{
    (void)state;
    epoch_is("0", 0);
    epoch_is("1718900000", 1718900000);
    epoch_is("-5", -5);
    epoch_is("-86400", -86400);
    epoch_is("253402300799", 253402300799LL);
    epoch_is("00042", 42);
    epoch_bad("+5");
    epoch_bad("5 ");
    epoch_bad(" 5");
}

static void test_epoch_common_shape_matches_general_parser(void **state)
{
    (void)state;
    /* "YYYY-MM-DD HH:MM:SS" (also with T/t, or a final Z/z) takes a shortcut;
     * the same instant with ".0" or "+00:00" after it does not: both must
     * agree on every value, valid or not (month 13, Feb 30, hour 24, second
     * 60, a wrong byte among the digits; the separators stay, as text such
     * as "2024-04-13-22:13:21" is a date and a zone offset to the parser) */
    uint64_t rs = 0x853c49e6748fea9bull;
    static const char seps[] = " Tt";
    for (int iter = 0; iter < 200000; iter++) {
        rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
        int y = (int)(rs % 10000), mo = (int)((rs >> 14) % 14), d = (int)((rs >> 18) % 33);
        int h = (int)((rs >> 24) % 26), mi = (int)((rs >> 30) % 61), sec = (int)((rs >> 36) % 62);
        char txt[40], other[48];
        int n = snprintf(txt, sizeof txt, "%04d-%02d-%02d%c%02d:%02d:%02d", y, mo, d,
                         seps[(rs >> 44) % 3], h, mi, sec);
        if ((rs >> 46) % 16 == 0) { /* a wrong byte where a digit goes */
            static const int digit_at[] = { 0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18 };
            txt[digit_at[(rs >> 50) % 14]] = (char)"x/:- 9"[(rs >> 54) % 6];
        }
        bool z = (rs >> 58) % 3 == 0;
        if (z)
            txt[n++] = (rs >> 60) & 1 ? 'Z' : 'z', txt[n] = '\0';
        for (int form = 0; form < 2; form++) {
            snprintf(other, sizeof other, "%.*s%s", z ? n - 1 : n, txt,
                     form ? "+00:00" : z ? ".0Z" : ".0");
            int64_t a = 0, b = 0;
            const char *wa = NULL, *wb = NULL;
            bool oka = el_epoch_parse(txt, (size_t)n, &a, &wa);
            bool okb = el_epoch_parse(other, strlen(other), &b, &wb);
            if (oka != okb || (oka && a != b) || (!oka && strcmp(wa, wb) != 0))
                fail_msg("'%s' -> %d %lld (%s), '%s' -> %d %lld (%s)", txt, oka, (long long)a,
                         oka ? "" : wa, other, okb, (long long)b, okb ? "" : wb);
        }
    }
}

static void test_epoch_matches_timegm(void **state)
{
    (void)state;
    /* every day from 1900 to 2100 at a varying time and zone, against the C
     * library's own UTC conversion */
    uint64_t rs = 88172645463325252ull;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    for (int y = 1900; y <= 2100; y++) {
        for (int m = 1; m <= 12; m++) {
            for (int d = 1; d <= 31; d++) {
                memset(&tm, 0, sizeof tm);
                tm.tm_year = y - 1900;
                tm.tm_mon = m - 1;
                tm.tm_mday = d;
                rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
                int hh = (int)(rs % 24), mi = (int)((rs >> 8) % 60), ss = (int)((rs >> 16) % 60);
                tm.tm_hour = hh;
                tm.tm_min = mi;
                tm.tm_sec = ss;
                int offmin = (int)((rs >> 24) % (2 * 14 * 60 + 1)) - 14 * 60;
                time_t want = timegm(&tm);
                char txt[64];
                snprintf(txt, sizeof txt, "%04d-%02d-%02d%c%02d:%02d:%02d%c%02d:%02d", y, m, d,
                         (rs >> 40) & 1 ? 'T' : ' ', hh, mi, ss, offmin < 0 ? '-' : '+',
                         abs(offmin) / 60,
                         abs(offmin) % 60);
                int64_t got;
                const char *why;
                bool ok = el_epoch_parse(txt, strlen(txt), &got, &why);
                if (tm.tm_mday != d) {          /* timegm normalised a day that does not exist */
                    if (ok)
                        fail_msg("'%s' accepted", txt);
                    continue;
                }
                if (!ok)
                    fail_msg("'%s' refused: %s", txt, why);
                if (got != (int64_t)want - (int64_t)offmin * 60)
                    fail_msg("'%s': %lld, want %lld", txt, (long long)got,
                             (long long)want - (long long)offmin * 60);
            }
        }
    }
}

/* ---- booleans ---- */

static void test_bool_parse(void **state)
{
    (void)state;
    const char *yes[] = { "true", "TRUE", "True", "t", "T", "yes", "YES", "y", "Y",
                          "on", "ON", "1" };
    const char *no[] = { "false", "FALSE", "False", "f", "F", "no", "NO", "n", "N",
                         "off", "Off", "0" };
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_int_equal(el_bool_parse(yes[i], strlen(yes[i])), 1);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_int_equal(el_bool_parse(no[i], strlen(no[i])), 0);
    assert_int_equal(el_bool_parse("\1", 1), 1);    /* MySQL bit(1) as a raw byte */
    assert_int_equal(el_bool_parse("\0", 1), 0);
    const char *neither[] = { "", "2", "-1", "tru", "truex", "yes!", " t", "t ", "10",
                              "nope", "01" };
    for (size_t i = 0; i < sizeof neither / sizeof *neither; i++)
        assert_int_equal(el_bool_parse(neither[i], strlen(neither[i])), -1);
    /* length, not the NUL, ends the text */
    assert_int_equal(el_bool_parse("trueish", 4), 1);
    assert_int_equal(el_bool_parse("fx", 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_plain_and_quotes),
        cmocka_unit_test(test_json_every_control_character),
        cmocka_unit_test(test_json_utf8_passthrough),
        cmocka_unit_test(test_json_appends_and_long_values),
        cmocka_unit_test(test_json_every_byte_at_every_position),
        cmocka_unit_test(test_json_random_against_reference),
        cmocka_unit_test(test_number_forms),
        cmocka_unit_test(test_number_garbage_rejected),
        cmocka_unit_test(test_number_precision),
        cmocka_unit_test(test_number_magnitude),
        cmocka_unit_test(test_number_size),
        cmocka_unit_test(test_number_empty_is_not_read),
        cmocka_unit_test(test_base64_rfc4648_vectors),
        cmocka_unit_test(test_base64_binary),
        cmocka_unit_test(test_days_from_civil),
        cmocka_unit_test(test_epoch_dates_and_timestamps),
        cmocka_unit_test(test_epoch_fractions),
        cmocka_unit_test(test_epoch_zones),
        cmocka_unit_test(test_epoch_before_1970),
        cmocka_unit_test(test_epoch_leap_days),
        cmocka_unit_test(test_epoch_invalid_dates),
        cmocka_unit_test(test_epoch_bare_integers),
        cmocka_unit_test(test_epoch_matches_timegm),
        cmocka_unit_test(test_epoch_common_shape_matches_general_parser),
        cmocka_unit_test(test_bool_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
