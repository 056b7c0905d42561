/*
 * buf.c - el_buf, the capped growable buffer.
 *
 * DESIGN: growth doubles so appends are amortised O(1); the cap is checked
 * before any allocation so a hostile input cannot make us allocate past it.
 */
#include "common/buf.h"

#include <stdarg.h>  /* va_list for el_buf_printf */
#include <stdio.h>   /* vsnprintf */
#include <stdlib.h>  /* realloc, free */

void el_buf_init(el_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void el_buf_free(el_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void el_buf_reset(el_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

el_err el_buf_grow(el_buf *b, size_t n)
{
    if (n >= b->max || b->len >= b->max - n)
        return EL_ELIMIT;
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return EL_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > b->max / 2 ? b->max : cap * 2;
    if (cap > b->max)
        cap = b->max; /* the first 64 of a tiny buffer: el_buf_reserve relies on cap <= max */
    char *p = realloc(b->data, cap);
    if (!p)
        return EL_ENOMEM;
    b->data = p;
    b->cap = cap;
    return EL_OK;
}

el_err el_buf_printf(el_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return EL_EINTERNAL;
    el_err err = el_buf_reserve(b, (size_t)n);
    if (err)
        return err;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return EL_OK;
}

void el_buf_truncate(el_buf *b, size_t newlen)
{
    if (newlen < b->len) {
        b->len = newlen;
        b->data[newlen] = '\0';
    }
}

char *el_buf_take(el_buf *b)
{
    char *p = b->data;
    if (!p) {
        p = malloc(1);
        if (p)
            p[0] = '\0';
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

const char *el_buf_str(const el_buf *b)
{
    return b->data ? b->data : "";
}
