/*
 * buf.h - a growable byte buffer with a hard maximum (after curl's dynbuf).
 *
 * Invariants: `data` is either NULL (nothing appended yet) or NUL-terminated
 * with `len` bytes before the NUL; `len < max`. An append that would reach
 * `max` fails with EL_ELIMIT and leaves the buffer as it was, so limits taken
 * from DynamoDB (400 KB item, 16 MB request) are enforced where bytes grow.
 *
 * Ownership: the buffer owns `data` until el_buf_take() hands it to the
 * caller ("you now own the storage; free() it").
 */
#ifndef EL_BUF_H
#define EL_BUF_H

#include <stddef.h>  /* size_t */
#include <string.h>  /* memcpy, strlen for the inline writes */

#include "common/error.h"

typedef struct el_buf {
    char *data;
    size_t len;
    size_t cap;
    size_t max;
} el_buf;

/* Sets up an empty buffer that may hold up to max-1 bytes. Allocates nothing. */
void el_buf_init(el_buf *b, size_t max);

/* Frees the storage; the buffer is empty again and may be reused. */
void el_buf_free(el_buf *b);

/* Empties the buffer but keeps its storage for reuse. */
void el_buf_reset(el_buf *b);

/* Makes room for n more bytes. EL_ENOMEM or EL_ELIMIT; unchanged on failure.
 * After it succeeds, n bytes and a NUL may be written at data + len without
 * another check (then add to len: that is what the helpers below do). */
static inline el_err el_buf_reserve(el_buf *b, size_t n) EL_MUST_USE;

/* The out-of-line part of el_buf_reserve: the limit check and the growth. */
el_err el_buf_grow(el_buf *b, size_t n) EL_MUST_USE;

static inline el_err el_buf_append(el_buf *b, const void *p, size_t n) EL_MUST_USE;
static inline el_err el_buf_puts(el_buf *b, const char *s) EL_MUST_USE;
static inline el_err el_buf_putc(el_buf *b, char c) EL_MUST_USE;
el_err el_buf_printf(el_buf *b, const char *fmt, ...) EL_MUST_USE
    __attribute__((format(printf, 2, 3)));

/* Removes the last n bytes (n <= len). */
void el_buf_truncate(el_buf *b, size_t newlen);

/* Returns the NUL-terminated contents ("" when empty) and leaves the buffer
 * empty: the caller now owns the storage and frees it with free(). Returns
 * NULL only when allocating the empty string fails. */
char *el_buf_take(el_buf *b);

/* Contents as a C string, "" when nothing was appended; valid until the next
 * change to the buffer. */
const char *el_buf_str(const el_buf *b);

/* The small writes are inline: a transform makes ~20 of them an item, and
 * when there is room (almost always) each is a compare and a copy. cap never
 * exceeds max, so room within cap is room within the limit too. */
static inline el_err el_buf_reserve(el_buf *b, size_t n)
{
    if (n < b->cap - b->len) /* cap 0 (nothing allocated) takes the slow path */
        return EL_OK;
    return el_buf_grow(b, n);
}

static inline el_err el_buf_append(el_buf *b, const void *p, size_t n)
{
    el_err err = el_buf_reserve(b, n);
    if (err)
        return err;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return EL_OK;
}

static inline el_err el_buf_puts(el_buf *b, const char *s)
{
    return el_buf_append(b, s, strlen(s)); /* a literal's length is a constant here */
}

static inline el_err el_buf_putc(el_buf *b, char c)
{
    el_err err = el_buf_reserve(b, 1);
    if (err)
        return err;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return EL_OK;
}

#endif
