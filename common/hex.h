/*
 * hex.h - hexadecimal digits both ways, for the dump readers' blob
 * literals (X'..', 0x.., \x bytea), the signers' SHA-256 output and the
 * JSON encoder's \u escapes. Pure.
 */
#ifndef EL_HEX_H
#define EL_HEX_H

#include <stddef.h>  /* size_t */

/* The value of one hex digit (either case), or -1 when c is not one. */
static inline int el_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Lower-case hex of n bytes into out, which holds 2 * n + 1 bytes; NUL-terminated. */
void el_hex_encode(const unsigned char *p, size_t n, char *out);

#endif
