/*
 * aws_internal.h - small helpers shared by the files of aws/ (not part of
 * its API).
 */
#ifndef EL_AWS_INTERNAL_H
#define EL_AWS_INTERNAL_H

#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* memcpy, strlen, explicit_bzero */

/* A malloc'd copy of the n bytes at s plus a NUL; NULL when out of memory. */
static inline char *el_aws_dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* A malloc'd copy of s; NULL for NULL or when out of memory. */
static inline char *el_aws_dup(const char *s)
{
    return s ? el_aws_dup_n(s, strlen(s)) : NULL;
}

/* Wipes then frees a string that may hold a secret. NULL is a no-op. */
static inline void el_aws_wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

#endif
