/*
 * utf8.c - strict UTF-8 validation.
 *
 * DESIGN: an ASCII fast path eight bytes at a time (the common case for keys
 * and CSV text), then a table-free decoder for multi-byte sequences that
 * rejects overlong forms, surrogates and code points above U+10FFFF.
 */
#include "common/utf8.h"

#include <stdint.h>  /* uint64_t for the ASCII fast path */
#include <string.h>  /* memcpy */

bool el_utf8_valid(const char *str, size_t len, size_t *bad)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        if (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & 0x8080808080808080ull) == 0) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            n = 2; cp = c & 0x1F; min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 3; cp = c & 0x0F; min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 4; cp = c & 0x07; min = 0x10000;
        } else {
            goto invalid;
        }
        if (i + n > len)
            goto invalid;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                goto invalid;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            goto invalid;
        i += n;
    }
    return true;
invalid:
    if (bad)
        *bad = i;
    return false;
}
