/*
 * hex.c - bytes to lower-case hex (SigV4 wants lower case).
 */
#include "common/hex.h"

void el_hex_encode(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}
