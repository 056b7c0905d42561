/*
 * utf8.h - UTF-8 validation as DynamoDB applies it (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF).
 */
#ifndef EL_UTF8_H
#define EL_UTF8_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

/* True when s[0..len) is valid UTF-8. On false, *bad (if not NULL) is the
 * byte index of the first invalid sequence. */
bool el_utf8_valid(const char *s, size_t len, size_t *bad);

#endif
