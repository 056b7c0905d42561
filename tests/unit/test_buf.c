/*
 * test_buf.c - el_buf: the cap is hard (len stays below max, a failed append
 * changes nothing), take hands the storage over, printf and truncate keep
 * the NUL terminator.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>  /* free */
#include <string.h>  /* memset, strlen */

#include "common/buf.h"

static void test_empty_buffer_reads_as_empty_string(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 100);
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_string_equal(el_buf_str(&b), "");
    el_buf_reset(&b);             /* reset of a never-used buffer is fine */
    el_buf_truncate(&b, 0);
    assert_string_equal(el_buf_str(&b), "");
    el_buf_free(&b);
    el_buf_free(&b);              /* twice is fine */
}

static void test_append_puts_putc(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1000);
    assert_int_equal(el_buf_append(&b, "ab", 2), EL_OK);
    assert_int_equal(el_buf_puts(&b, "cd"), EL_OK);
    assert_int_equal(el_buf_putc(&b, 'e'), EL_OK);
    assert_int_equal(el_buf_append(&b, "zz", 0), EL_OK);
    assert_int_equal(b.len, 5);
    assert_string_equal(el_buf_str(&b), "abcde");
    /* binary bytes, NULs included, are kept with len authoritative */
    assert_int_equal(el_buf_append(&b, "\0x", 2), EL_OK);
    assert_int_equal(b.len, 7);
    assert_memory_equal(b.data, "abcde\0x", 8);
    el_buf_free(&b);
}

static void test_cap_is_exact(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 10);          /* holds at most 9 bytes */
    assert_int_equal(el_buf_append(&b, "123456789", 9), EL_OK);
    assert_int_equal(b.len, 9);
    assert_int_equal(el_buf_putc(&b, 'x'), EL_ELIMIT);
    assert_int_equal(b.len, 9);
    assert_string_equal(el_buf_str(&b), "123456789");
    el_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(el_buf_str(&b), "");
    assert_int_equal(el_buf_append(&b, "1234567890", 10), EL_ELIMIT);
    assert_int_equal(b.len, 0);
    assert_string_equal(el_buf_str(&b), "");
    el_buf_free(&b);
}

static void test_limit_holds_once_room_is_allocated(void **state)
{
    (void)state;
    /* the inline writes skip the limit check while there is room, so the
     * room must never reach past the limit: not even the first 64 bytes of
     * a buffer smaller than that */
    el_buf b;
    el_buf_init(&b, 10);
    assert_int_equal(el_buf_putc(&b, 'a'), EL_OK);
    assert_true(b.cap <= 10);
    assert_int_equal(el_buf_append(&b, "123456789", 9), EL_ELIMIT);
    assert_int_equal(el_buf_append(&b, "12345678", 8), EL_OK);
    assert_int_equal(el_buf_putc(&b, 'z'), EL_ELIMIT);
    assert_int_equal(el_buf_puts(&b, ""), EL_OK);
    assert_int_equal(el_buf_reserve(&b, 0), EL_OK);
    assert_int_equal(el_buf_reserve(&b, 1), EL_ELIMIT);
    assert_string_equal(el_buf_str(&b), "a12345678");
    el_buf_free(&b);
    /* and many small writes across growths read back in order */
    el_buf_init(&b, 100000);
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(el_buf_putc(&b, (char)('a' + i % 26)), EL_OK);
        assert_int_equal(el_buf_puts(&b, "xy"), EL_OK);
    }
    assert_int_equal(b.len, 15000);
    assert_true(b.cap <= 100000);
    for (int i = 0; i < 5000; i++)
        assert_memory_equal(b.data + 3 * i, ((char[]){ (char)('a' + i % 26), 'x', 'y' }), 3);
    assert_int_equal(b.data[b.len], '\0');
    el_buf_free(&b);
}

static void test_failed_append_leaves_buffer_unchanged(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 4096);
    assert_int_equal(el_buf_puts(&b, "keep"), EL_OK);
    char big[5000];
    memset(big, 'x', sizeof big);
    assert_int_equal(el_buf_append(&b, big, sizeof big), EL_ELIMIT);
    assert_int_equal(el_buf_append(&b, big, 4092), EL_ELIMIT);  /* 4 + 4092 = max */
    assert_int_equal(b.len, 4);
    assert_string_equal(el_buf_str(&b), "keep");
    assert_int_equal(el_buf_append(&b, big, 4091), EL_OK);      /* 4095 = max - 1 */
    assert_int_equal(b.len, 4095);
    assert_int_equal(b.data[4095], '\0');
    assert_true(b.cap <= 4096);
    el_buf_free(&b);
}

static void test_huge_request_does_not_overflow(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 100);
    assert_int_equal(el_buf_puts(&b, "x"), EL_OK);
    assert_int_equal(el_buf_reserve(&b, (size_t)-1), EL_ELIMIT);
    assert_int_equal(el_buf_reserve(&b, (size_t)-1 - 10), EL_ELIMIT);
    assert_int_equal(el_buf_reserve(&b, 98), EL_OK);
    assert_int_equal(el_buf_reserve(&b, 99), EL_ELIMIT);
    assert_int_equal(b.len, 1);
    el_buf_free(&b);
}

static void test_growth_keeps_contents(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1 << 20);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(el_buf_putc(&b, (char)('a' + i % 26)), EL_OK);
    assert_int_equal(b.len, 10000);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(b.data[i], 'a' + i % 26);
    assert_int_equal(b.data[10000], '\0');
    assert_true(b.cap > b.len);
    el_buf_free(&b);
    assert_null(b.data);
    /* reusable after free, with the same max */
    assert_int_equal(el_buf_puts(&b, "again"), EL_OK);
    assert_string_equal(el_buf_str(&b), "again");
    el_buf_free(&b);
}

static void test_take_hands_over_storage(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 100);
    assert_int_equal(el_buf_puts(&b, "owned"), EL_OK);
    const char *before = b.data;
    char *s = el_buf_take(&b);
    assert_ptr_equal(s, before);
    assert_string_equal(s, "owned");
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    assert_int_equal(b.cap, 0);
    assert_string_equal(el_buf_str(&b), "");
    /* the buffer works again and does not touch what was taken */
    assert_int_equal(el_buf_puts(&b, "new"), EL_OK);
    assert_string_equal(s, "owned");
    assert_string_equal(el_buf_str(&b), "new");
    free(s);
    el_buf_free(&b);
}

static void test_take_of_empty_gives_empty_string(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 100);
    char *s = el_buf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
    /* after a reset the old storage comes back as "" too */
    assert_int_equal(el_buf_puts(&b, "gone"), EL_OK);
    el_buf_reset(&b);
    s = el_buf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    free(s);
    el_buf_free(&b);
}

static void test_printf(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 64);
    assert_int_equal(el_buf_printf(&b, "%s=%d", "n", 42), EL_OK);
    assert_int_equal(el_buf_printf(&b, ",%llu", 18446744073709551615ull), EL_OK);
    assert_string_equal(el_buf_str(&b), "n=42,18446744073709551615");
    assert_int_equal(b.len, strlen("n=42,18446744073709551615"));
    assert_int_equal(el_buf_printf(&b, "%s", ""), EL_OK);
    assert_int_equal(b.len, 25);
    /* 25 + 39 = 64 reaches max: refused whole, nothing half-written */
    assert_int_equal(el_buf_printf(&b, "%039d", 7), EL_ELIMIT);
    assert_string_equal(el_buf_str(&b), "n=42,18446744073709551615");
    assert_int_equal(el_buf_printf(&b, "%038d", 7), EL_OK);
    assert_int_equal(b.len, 63);
    assert_int_equal(b.data[63], '\0');
    el_buf_free(&b);
}

static void test_printf_into_empty_buffer(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 16);
    assert_int_equal(el_buf_printf(&b, "%s", ""), EL_OK);
    assert_string_equal(el_buf_str(&b), "");
    assert_int_equal(el_buf_printf(&b, "%x", 255u), EL_OK);
    assert_string_equal(el_buf_str(&b), "ff");
    el_buf_free(&b);
}

static void test_truncate(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 100);
    assert_int_equal(el_buf_puts(&b, "abcdef"), EL_OK);
    el_buf_truncate(&b, 3);
    assert_int_equal(b.len, 3);
    assert_string_equal(el_buf_str(&b), "abc");
    el_buf_truncate(&b, 10);      /* longer than len: no change */
    assert_int_equal(b.len, 3);
    assert_string_equal(el_buf_str(&b), "abc");
    el_buf_truncate(&b, 3);
    assert_string_equal(el_buf_str(&b), "abc");
    assert_int_equal(el_buf_puts(&b, "XY"), EL_OK);
    assert_string_equal(el_buf_str(&b), "abcXY");
    el_buf_truncate(&b, 0);
    assert_int_equal(b.len, 0);
    assert_string_equal(el_buf_str(&b), "");
    el_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_buffer_reads_as_empty_string),
        cmocka_unit_test(test_append_puts_putc),
        cmocka_unit_test(test_cap_is_exact),
        cmocka_unit_test(test_limit_holds_once_room_is_allocated),
        cmocka_unit_test(test_failed_append_leaves_buffer_unchanged),
        cmocka_unit_test(test_huge_request_does_not_overflow),
        cmocka_unit_test(test_growth_keeps_contents),
        cmocka_unit_test(test_take_hands_over_storage),
        cmocka_unit_test(test_take_of_empty_gives_empty_string),
        cmocka_unit_test(test_printf),
        cmocka_unit_test(test_printf_into_empty_buffer),
        cmocka_unit_test(test_truncate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
