/*
 * skew.c - a client's signing clock, corrected by the service's Date.
 *
 * DESIGN: the offset is one atomic long of seconds (the Date header has
 * whole seconds), read at every signature on whatever thread signs and set
 * by compare-and-swap, so that of the many requests in flight that a
 * skewed clock gets refused at once, one moves the clock and reports it;
 * the others find it moved since they were signed and are signed again
 * without a report. The offset is measured as the Date header minus this
 * machine's clock when the answer is read, as the SDKs measure it: off by
 * the latency and the header's rounding, a second or two, well inside
 * AWS's five minutes.
 */
#include "aws/skew.h"

#include <stdatomic.h>  /* the offset */
#include <stdio.h>      /* snprintf */
#include <stdlib.h>     /* calloc, free, labs */
#include <string.h>     /* strcmp, strstr, memcmp */

#include "aws/aws_internal.h"  /* el_aws_utc_time */

/* A refusal that names the time is believed when the Date header is this
 * far from the clock signed by; one that may as well be a wrong secret
 * only this far (the Java SDK's 4 minutes, under AWS's 5). */
#define EXPLICIT_MIN_S 60
#define AMBIGUOUS_MIN_S 240

struct el_skew {
    char service[32];
    el_wall_clock_fn wall;
    void *wall_user;
    el_skew_report_fn report;
    void *report_user;
    atomic_long offset;
};

el_err el_skew_new(const char *service, el_wall_clock_fn wall, void *wall_user,
                   el_skew_report_fn report, void *report_user, el_skew **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return EL_ENOMEM;
    el_skew *s = *out;
    snprintf(s->service, sizeof s->service, "%s", service ? service : "");
    s->wall = wall;
    s->wall_user = wall_user;
    s->report = report;
    s->report_user = report_user;
    atomic_init(&s->offset, 0);
    return EL_OK;
}

void el_skew_free(el_skew *s)
{
    free(s);
}

static time_t wall_now(const el_skew *s)
{
    return s && s->wall ? s->wall(s->wall_user) : time(NULL);
}

time_t el_skew_now(el_skew *s, long *offset)
{
    long off = s ? atomic_load(&s->offset) : 0;
    if (offset)
        *offset = off;
    return wall_now(s) + off;
}

long el_skew_offset(el_skew *s)
{
    return s ? atomic_load(&s->offset) : 0;
}

typedef enum refusal { NOT_CLOCK, EXPLICIT, AMBIGUOUS } refusal;

static refusal kind_of(const char *code, const char *message, long http_status)
{
    code = code ? code : "";
    message = message ? message : "";
    if (strcmp(code, "RequestTimeTooSkewed") == 0 || strcmp(code, "RequestExpired") == 0 ||
        strcmp(code, "RequestInTheFuture") == 0 || strstr(message, "Signature expired") ||
        strstr(message, "Signature not yet current"))
        return EXPLICIT;
    if (strcmp(code, "InvalidSignatureException") == 0 ||
        strcmp(code, "SignatureDoesNotMatch") == 0 || strcmp(code, "AuthFailure") == 0 ||
        (!code[0] && (http_status == 401 || http_status == 403)))
        return AMBIGUOUS;
    return NOT_CLOCK;
}

bool el_skew_is_clock_refusal(const char *code, const char *message, long http_status)
{
    return kind_of(code, message, http_status) != NOT_CLOCK;
}

bool el_skew_correct(el_skew *s, const char *code, const char *message, long http_status,
                     time_t server_time, long signed_offset)
{
    refusal kind = s ? kind_of(code, message, http_status) : NOT_CLOCK;
    if (kind == NOT_CLOCK)
        return false;
    long cur = atomic_load(&s->offset);
    if (server_time > 0) {
        long measured = (long)(server_time - wall_now(s));
        long min = kind == EXPLICIT ? EXPLICIT_MIN_S : AMBIGUOUS_MIN_S;
        if (labs(measured - cur) >= min) {
            if (atomic_compare_exchange_strong(&s->offset, &cur, measured)) {
                if (s->report)
                    s->report(s->report_user, s->service, measured);
                return true;
            }
            /* another thread moved it first: cur is its offset now */
        }
    }
    return signed_offset != cur;
}

/* ---- the Date header ---- */

static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* n digits at *p as a number (advancing *p), -1 when they are not digits. */
static int digits(const char **p, const char *end, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (*p >= end || **p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

static bool expect(const char **p, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
        return false;
    *p += n;
    return true;
}

bool el_http_date_parse(const char *s, size_t len, time_t *out)
{
    const char *p = s, *end = s + len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        end--;
    /* "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate, RFC 9110 5.6.7): the
     * day name is not checked, the rest is */
    if (end - p != 29 || p[3] != ',' || p[4] != ' ')
        return false;
    p += 5;
    int day = digits(&p, end, 2), mon = -1;
    if (day < 1 || day > 31 || !expect(&p, end, " "))
        return false;
    for (int i = 0; i < 12; i++)
        if (memcmp(p, months[i], 3) == 0)
            mon = i;
    p += 3;
    if (mon < 0 || !expect(&p, end, " "))
        return false;
    int year = digits(&p, end, 4);
    if (year < 1970 || !expect(&p, end, " "))
        return false;
    int hh = digits(&p, end, 2), mm = -1, ss = -1;
    if (hh >= 0 && expect(&p, end, ":"))
        mm = digits(&p, end, 2);
    if (mm >= 0 && expect(&p, end, ":"))
        ss = digits(&p, end, 2);
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60 || !expect(&p, end, " GMT"))
        return false;
    return el_aws_utc_time(year, mon + 1, day, hh, mm, ss, out);
}
