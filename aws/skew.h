/*
 * skew.h - the clock a client signs its requests by, set right by the
 * service's own time when the service refuses this machine's.
 *
 * AWS refuses a request whose signature's time is more than 5 minutes
 * (S3: 15) away from its own: InvalidSignatureException "Signature
 * expired" or "Signature not yet current", RequestTimeTooSkewed,
 * RequestExpired, RequestInTheFuture. A batch host with a drifting clock
 * (a container without NTP, a suspended VM) is common, so the SDKs do not
 * stop there: they take the offset from the answer's Date header, sign
 * again and retry, and sign every later request of that client with the
 * offset (the JavaScript and Java SDKs; botocore only estimates it for its
 * retry header). So does edgeload, with one el_skew per client (DynamoDB,
 * S3, an STS credential source), and each request is corrected at most
 * once (the caller keeps that flag): a refusal that survives the
 * correction is the caller's to report.
 *
 * When is an answer a clock refusal, and how far must the Date header be
 * from this clock before it is believed (el_skew_correct):
 *  - RequestTimeTooSkewed, RequestExpired, RequestInTheFuture, and any
 *    refusal whose message says "Signature expired" or "Signature not yet
 *    current": AWS says the time is wrong; corrected when the Date header
 *    is a minute or more away from the clock signed by;
 *  - InvalidSignatureException, SignatureDoesNotMatch, AuthFailure, and a
 *    401 or 403 without an error code (an S3 HEAD has no body): as likely a
 *    wrong secret; corrected only when the Date header is 4 minutes or more
 *    away (the Java SDK's threshold), so a wrong secret on a machine whose
 *    clock is right is not taken for a skew;
 *  - either, when the request was signed before another answer corrected
 *    the clock: signed again with the corrected one.
 *
 * The wall clock is injected (tests run a client whose clock is 10 minutes
 * off); the report callback hears of each correction, on the thread that
 * made it, so that cmd/ can say it once: nothing here prints.
 *
 * Threads: el_skew_now, el_skew_offset and el_skew_correct may run on any
 * thread at once (the offset is an atomic).
 */
#ifndef EL_AWS_SKEW_H
#define EL_AWS_SKEW_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <time.h>     /* time_t */

#include "common/error.h"

/* Seconds since the epoch, UTC, as time() says. */
typedef time_t (*el_wall_clock_fn)(void *user);

/* A client ("DynamoDB", "S3", "STS") now signs with offset_s seconds added
 * to this machine's clock (positive: the clock is behind the service's). */
typedef void (*el_skew_report_fn)(void *user, const char *service, long offset_s);

typedef struct el_skew el_skew;

/* A clock for the client named service (copied; "DynamoDB"), on wall
 * (NULL = time()) with an offset of 0, reporting corrections to report
 * (may be NULL). EL_ENOMEM, *out NULL. */
el_err el_skew_new(const char *service, el_wall_clock_fn wall, void *wall_user,
                   el_skew_report_fn report, void *report_user, el_skew **out) EL_MUST_USE;

/* NULL is a no-op. */
void el_skew_free(el_skew *s);

/* The time to sign with: the wall clock plus the offset. *offset (may be
 * NULL) gets the offset it used, for el_skew_correct. s NULL: time(). */
time_t el_skew_now(el_skew *s, long *offset);

/* The offset in seconds (0 until a correction; s NULL: 0). */
long el_skew_offset(el_skew *s);

/*
 * A request signed with signed_offset was refused with code (may be ""),
 * message and http_status, and the answer's Date header said server_time
 * (0 when it had none). True when the request should be signed again and
 * sent again: its refusal is a clock refusal (above) and either the offset
 * was corrected now (report is told) or it had been since the request was
 * signed. False for every other answer, and for a clock refusal that the
 * Date header does not explain. s NULL: false.
 */
bool el_skew_correct(el_skew *s, const char *code, const char *message, long http_status,
                     time_t server_time, long signed_offset);

/* True when code and message are a clock refusal of either kind above (for
 * the message a refusal that was not corrected gets). */
bool el_skew_is_clock_refusal(const char *code, const char *message, long http_status);

/* Parses an HTTP Date header's value ("Sun, 06 Nov 1994 08:49:37 GMT",
 * len bytes, surrounding blanks allowed) into *out. False for any other
 * form. */
bool el_http_date_parse(const char *s, size_t len, time_t *out);

#endif
