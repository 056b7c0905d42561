/*
 * credentials.h - AWS credentials: one immutable set (el_cred) and the
 * provider every client of a run signs with (el_creds), which renews sets
 * that expire in the background.
 *
 *   el_creds *p;                         // from el_aws_config_resolve
 *   el_cred *c;
 *   if (el_creds_get(p, time(NULL), &c, &d) == EL_OK) {
 *       ... sign with el_cred_access_key(c), el_cred_secret_key(c) ...
 *       el_cred_release(c);
 *   }
 *
 * A set is reference counted and never changes, so a request keeps the set
 * it was signed with (and sends that set's session token) while the
 * provider moves on to a new one: a renewal never pauses or mixes up the
 * requests in flight.
 *
 * Renewal: a set with an expiration is renewed by a thread of the provider
 * 5 minutes before it expires, as the AWS SDKs do; a set that lives 10
 * minutes or less from when it was fetched is renewed when half of the
 * life it can still sign in has passed (el_creds_refresh_at: a 20 s set
 * after 7 s). A failed renewal is
 * retried with capped exponential backoff and jitter while the current set
 * is still valid; once it has expired, el_creds_get fails with a message
 * naming the source, the expiry and the last error, so the requests that
 * would be signed with it fail instead (nothing is ever signed with an
 * expired set).
 *
 * Threads: el_creds_get, el_creds_redact and the el_cred accessors may run
 * on any thread at once; el_creds_free on one thread, after every user.
 *
 * Secrets: the secret key and the session token are wiped when the last
 * reference to their set goes. Nothing here prints.
 */
#ifndef EL_AWS_CREDENTIALS_H
#define EL_AWS_CREDENTIALS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <time.h>     /* time_t */

#include "common/error.h"

/* ---- one set of credentials ---- */

typedef struct el_cred el_cred;

/* Limits of what a set may hold (AWS's own are smaller). */
#define EL_CRED_MAX_KEY 128
#define EL_CRED_MAX_SECRET 1024
#define EL_CRED_MAX_TOKEN (16 * 1024)

/*
 * Copies the keys into a new set with one reference (the caller's).
 * session_token NULL or "" = none; expiration 0 = does not expire.
 * EL_EUSAGE for an empty or over-long key, secret or token, or one with a
 * control character (it would break the header it is sent in); EL_ENOMEM.
 * *out is NULL on failure.
 */
el_err el_cred_new(const char *access_key, const char *secret_key,
                   const char *session_token, time_t expiration, el_cred **out) EL_MUST_USE;

/* Another reference to c (returns c). */
el_cred *el_cred_ref(el_cred *c);

/* Drops a reference; the last one wipes and frees the set. NULL is a no-op. */
void el_cred_release(el_cred *c);

const char *el_cred_access_key(const el_cred *c);
const char *el_cred_secret_key(const el_cred *c);
/* NULL when the set has no session token. */
const char *el_cred_session_token(const el_cred *c);
/* "X-Amz-Security-Token: <token>" as a header line for libcurl, NULL when
 * the set has no token. Valid while the caller holds its reference. */
const char *el_cred_token_line(const el_cred *c);
/* When the set expires (seconds since the epoch), 0 = never. */
time_t el_cred_expiration(const el_cred *c);

/* ---- where sets come from ---- */

/*
 * A source fetches a fresh set each time it is asked: the environment or a
 * file (once), STS, IAM Identity Center, a credential_process, the
 * container or instance metadata endpoints (again at each renewal). A
 * source is only ever called by one thread at a time (the provider's).
 * `name` says where the credentials come from, for messages ("STS
 * AssumeRole arn:aws:iam::1:role/x (profile prod)"): owned by the source.
 * fetch returns EL_OK with a new set (one reference, the caller's) or an
 * error with diag saying what failed in one line that names the source and
 * never holds a secret. destroy frees the source (NULL-safe callers).
 */
typedef struct el_cred_source el_cred_source;
struct el_cred_source {
    char *name;
    el_err (*fetch)(el_cred_source *self, el_cred **out, el_diag *diag);
    void (*destroy)(el_cred_source *self);
};

/* ---- the provider ---- */

typedef struct el_creds el_creds;

/* A set is not used for signing in its last seconds. */
#define EL_CREDS_EXPIRY_MARGIN 5

/*
 * Takes src (also on failure: it is destroyed then), fetches the first set
 * at once (so a broken setup fails before any work starts: the source's
 * error is returned with its diag) and, when that set expires, starts the
 * renewal thread. *out NULL on failure.
 */
el_err el_creds_new(el_cred_source *src, el_creds **out, el_diag *diag) EL_MUST_USE;

/* A provider of keys that never change (environment, shared files). name
 * is copied ("environment"). Errors as el_cred_new. */
el_err el_creds_new_static(const char *access_key, const char *secret_key,
                           const char *session_token, const char *name,
                           el_creds **out) EL_MUST_USE;

/*
 * The current set (a new reference, the caller releases it). Fails only
 * when the current set has expired at `now` (or expires within
 * EL_CREDS_EXPIRY_MARGIN seconds: a request signed now must still be valid
 * when it arrives) and could not be renewed:
 * EL_ECONFIG with diag "credentials from <source> expired at <UTC time>
 * and could not be renewed: <last error>"; *out is NULL then.
 */
el_err el_creds_get(el_creds *p, time_t now, el_cred **out, el_diag *diag) EL_MUST_USE;

/* Where the credentials come from (the source's name). Borrowed. */
const char *el_creds_source(const el_creds *p);

/* Overwrites with '*' in s every copy of the secret key or session token of
 * the current and the previous set, and a cut-off start of one at the end
 * of s (messages are truncated to their buffers). For messages that quote
 * what was sent, as AWS's InvalidSignatureException does. */
void el_creds_redact(el_creds *p, char *s);

/* The same for one secret (a token a source sent, say): every copy, and a
 * cut-off start at the end; secrets under 4 bytes are left. */
void el_creds_redact_text(char *s, const char *secret);

/* Stops the renewal thread, releases the sets and destroys the source.
 * NULL is a no-op. */
void el_creds_free(el_creds *p);

/*
 * When to renew a set fetched at `now` that expires at `expiration`: 5
 * minutes before, or, when it lives 10 minutes or less from now, after
 * half of the time it may still sign in (its life less
 * EL_CREDS_EXPIRY_MARGIN; at least 1 s from now; now itself when that is
 * over). 0 for a set that does not expire. Pure.
 */
time_t el_creds_refresh_at(time_t now, time_t expiration);

/* For tests: how many renewals succeeded and failed so far. */
void el_creds_counts(el_creds *p, unsigned long *renewed, unsigned long *failed);

#endif
