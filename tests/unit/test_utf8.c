/*
 * test_utf8.c - el_utf8_valid: RFC 3629 as DynamoDB applies it, and the
 * index of the first bad sequence.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>  /* strlen, memset */

#include "common/utf8.h"

#define VALID(s) el_utf8_valid((s), sizeof(s) - 1, NULL)

static size_t bad_at(const char *s, size_t len)
{
    size_t bad = (size_t)-7;
    assert_false(el_utf8_valid(s, len, &bad));
    return bad;
}

#define BAD_AT(s) bad_at((s), sizeof(s) - 1)

static void test_ascii_and_empty(void **state)
{
    (void)state;
    assert_true(el_utf8_valid("", 0, NULL));
    assert_true(el_utf8_valid(NULL, 0, NULL));
    assert_true(VALID("a"));
    assert_true(VALID("hello, world: 0123456789 ~\x7f"));
    assert_true(VALID("with\0nul"));   /* U+0000 is valid UTF-8 */
}

static void test_valid_multibyte(void **state)
{
    (void)state;
    assert_true(VALID("\xc2\x80"));                 /* U+0080, smallest 2-byte */
    assert_true(VALID("caf\xc3\xa9"));              /* é */
    assert_true(VALID("\xdf\xbf"));                 /* U+07FF */
    assert_true(VALID("\xe0\xa0\x80"));             /* U+0800, smallest 3-byte */
    assert_true(VALID("\xe2\x82\xac"));             /* € */
    assert_true(VALID("\xed\x9f\xbf"));             /* U+D7FF, just below surrogates */
    assert_true(VALID("\xee\x80\x80"));             /* U+E000, just above */
    assert_true(VALID("\xef\xbf\xbf"));             /* U+FFFF */
    assert_true(VALID("\xf0\x90\x80\x80"));         /* U+10000, smallest 4-byte */
    assert_true(VALID("\xf0\x9f\x98\x80"));         /* 😀 */
    assert_true(VALID("\xf4\x8f\xbf\xbf"));         /* U+10FFFF, the last */
    assert_true(VALID("\xef\xbb\xbf" "BOM"));
    assert_true(VALID("mixed \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e and \xf0\x9f\x91\x8d!"));
}

static void test_overlongs_rejected(void **state)
{
    (void)state;
    assert_int_equal(BAD_AT("\xc0\x80"), 0);           /* NUL in 2 bytes */
    assert_int_equal(BAD_AT("ab\xc1\xbf"), 2);         /* U+007F in 2 bytes */
    assert_int_equal(BAD_AT("\xe0\x80\x80"), 0);       /* U+0000 in 3 */
    assert_int_equal(BAD_AT("x\xe0\x9f\xbf"), 1);      /* U+07FF in 3 */
    assert_int_equal(BAD_AT("\xf0\x80\x80\x80"), 0);   /* U+0000 in 4 */
    assert_int_equal(BAD_AT("\xf0\x8f\xbf\xbf"), 0);   /* U+FFFF in 4 */
}

static void test_surrogates_rejected(void **state)
{
    (void)state;
    assert_int_equal(BAD_AT("\xed\xa0\x80"), 0);       /* U+D800 */
    assert_int_equal(BAD_AT("ok\xed\xbf\xbf"), 2);     /* U+DFFF */
    /* a CESU-8 pair for U+1F600 */
    assert_int_equal(BAD_AT("\xed\xa0\xbd\xed\xb8\x80"), 0);
}

static void test_above_max_rejected(void **state)
{
    (void)state;
    assert_int_equal(BAD_AT("\xf4\x90\x80\x80"), 0);   /* U+110000 */
    assert_int_equal(BAD_AT("\xf5\x80\x80\x80"), 0);
    assert_int_equal(BAD_AT("\xf7\xbf\xbf\xbf"), 0);
    assert_int_equal(BAD_AT("\xf8\x88\x80\x80\x80"), 0);  /* old 5-byte form */
    assert_int_equal(BAD_AT("\xfc\x84\x80\x80\x80\x80"), 0);
    assert_int_equal(BAD_AT("\xfe"), 0);
    assert_int_equal(BAD_AT("\xff"), 0);
}

static void test_stray_and_truncated(void **state)
{
    (void)state;
    assert_int_equal(BAD_AT("\x80"), 0);               /* lone continuation */
    assert_int_equal(BAD_AT("abc\xbf"), 3);
    assert_int_equal(BAD_AT("\xc3"), 0);               /* cut 2-byte */
    assert_int_equal(BAD_AT("caf\xc3"), 3);
    assert_int_equal(BAD_AT("\xe2\x82"), 0);           /* cut 3-byte */
    assert_int_equal(BAD_AT("\xf0\x9f\x98"), 0);       /* cut emoji */
    assert_int_equal(BAD_AT("12345678\xf0\x9f"), 8);
    assert_int_equal(BAD_AT("\xc3("), 0);              /* continuation missing */
    assert_int_equal(BAD_AT("\xe2(\xa1"), 0);
    assert_int_equal(BAD_AT("\xf0\x9f\x98(x"), 0);
    /* latin-1 text, the usual reason for a reject */
    assert_int_equal(BAD_AT("Jos\xe9 Mar\xed" "a"), 3);
}

static void test_length_is_respected(void **state)
{
    (void)state;
    /* the validator must not read past len, even into a valid continuation */
    const char emoji[] = "\xf0\x9f\x98\x80";
    size_t bad = 99;
    assert_false(el_utf8_valid(emoji, 3, &bad));
    assert_int_equal(bad, 0);
    assert_true(el_utf8_valid(emoji, 4, NULL));
    assert_true(el_utf8_valid("ab\xff", 2, NULL));
}

static void test_bad_index_after_ascii_fast_path(void **state)
{
    (void)state;
    /* positions on both sides of the 8-byte fast path */
    char s[64];
    for (size_t pos = 0; pos < 40; pos++) {
        memset(s, 'a', sizeof s);
        s[pos] = (char)0xC0;       /* overlong lead */
        s[pos + 1] = (char)0x80;
        assert_int_equal(bad_at(s, sizeof s), pos);
        /* and a valid 2-byte there: everything passes */
        s[pos] = (char)0xC3;
        s[pos + 1] = (char)0xA9;
        assert_true(el_utf8_valid(s, sizeof s, NULL));
    }
    /* the first of two bad sequences is the one reported */
    assert_int_equal(BAD_AT("aaaaaaaaaa\xff\xfe"), 10);
    /* the index points at the start of the sequence, not at its bad byte */
    assert_int_equal(BAD_AT("aaaaaaaaa\xe2\x82("), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii_and_empty),
        cmocka_unit_test(test_valid_multibyte),
        cmocka_unit_test(test_overlongs_rejected),
        cmocka_unit_test(test_surrogates_rejected),
        cmocka_unit_test(test_above_max_rejected),
        cmocka_unit_test(test_stray_and_truncated),
        cmocka_unit_test(test_length_is_respected),
        cmocka_unit_test(test_bad_index_after_ascii_fast_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
