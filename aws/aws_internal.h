/*
 * aws_internal.h - small helpers shared by the files of aws/ (not part of
 * its API).
 */
#ifndef EL_AWS_INTERNAL_H
#define EL_AWS_INTERNAL_H

#include <stdbool.h> /* bool */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* memcpy, strlen, explicit_bzero */
#include <time.h>    /* struct tm, timegm */

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

/* The time_t of a UTC date and time (month 1 to 12), as AWS's time stamps
 * and Date headers give it, into *out; false (and *out untouched) when the
 * system cannot represent it. The fields are checked by the caller. */
static inline bool el_aws_utc_time(int year, int month, int day, int hour, int min, int sec,
                                   time_t *out)
{
    struct tm tm = {0};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *out = t;
    return true;
}

#endif
