/*
 * sigv4.h - AWS Signature Version 4 (AWS4-HMAC-SHA256) for request headers.
 *
 * A signer signs for one region and service with the credentials of a
 * provider (aws/credentials.h), taken at signing time: a renewal of the
 * credentials during a long load is picked up by the next signature. The
 * signing key (four chained HMACs of the secret over date, region, service
 * and "aws4_request") depends only on the UTC date and the secret, so it
 * is derived once a day (and once per renewal) and cached; each request
 * then costs the SHA-256 of its canonical request and one HMAC. The payload
 * hash is a separate step so that a request resent with a fresh date (a
 * retry) hashes its body only once.
 *
 * The canonical request is what botocore builds (botocore.auth.SigV4Auth):
 * method, path, query string, the signed headers lower-cased, sorted, their
 * values trimmed with inner runs of white space collapsed to one space, the
 * signed header names, and the payload hash. x-amz-date is added by the
 * signer: the caller sends the returned date as the X-Amz-Date header. The
 * caller must send every header it passes, with the same value.
 *
 * S3 (el_sigv4_opts.s3): the path is signed exactly as sent (S3 neither
 * normalises it nor encodes it a second time), and x-amz-content-sha256
 * (the payload hash, or UNSIGNED-PAYLOAD) is signed: the caller sends it.
 *
 * Threads: one signer may sign on several threads at once (the cached key
 * is behind a mutex; the provider is thread-safe).
 *
 * Secrets: the secret key and the derived keys never leave the signer; they
 * are wiped when it is freed. Nothing here prints.
 */
#ifndef EL_SIGV4_H
#define EL_SIGV4_H

#include <stdbool.h> /* bool */
#include <stddef.h>  /* size_t */
#include <time.h>    /* time_t */

#include "common/buf.h"

#include "aws/aws_config.h"
#include "aws/credentials.h"
#include "common/error.h"

typedef struct el_sigv4 el_sigv4;

/* How a service wants its requests signed. */
typedef struct el_sigv4_opts {
    bool s3;             /* S3's rules (above) */
    const char *region;  /* el_sigv4_new_config: the scope's region when it is not the
                            configuration's (the endpoint rules sign "aws-global" for
                            us-east-1); NULL = cfg->region */
} el_sigv4_opts;

/* Headers a request may sign (those the signer adds included: x-amz-date,
 * x-amz-security-token, x-amz-content-sha256). */
#define EL_SIGV4_MAX_HEADERS 12
/* "YYYYMMDDTHHMMSSZ" and its NUL. */
#define EL_SIGV4_DATE_SIZE 17
/* 64 hex digits and a NUL. */
#define EL_SIGV4_HASH_SIZE 65

typedef struct el_sigv4_header {
    const char *name;   /* any case; distinct names (case-insensitively) */
    const char *value;  /* as sent */
} el_sigv4_header;

/* A signer of fixed keys (no session token: a caller that has one signs
 * and sends the X-Amz-Security-Token header itself with el_sigv4_sign).
 * Copies every string. Names the region and service of the credential scope
 * ("eu-west-1", "dynamodb"). EL_EUSAGE for an empty or over-long (> 128
 * bytes) region or service or access key, or a secret over 1 KB; EL_ENOMEM;
 * *out is NULL on failure. */
el_err el_sigv4_new(const char *access_key, const char *secret_key, const char *region,
                    const char *service, el_sigv4 **out) EL_MUST_USE;

/* A signer that takes its credentials from creds at each signature; borrows
 * creds, which must outlive it. opts NULL = the default rules. Errors as
 * el_sigv4_new. */
el_err el_sigv4_new_provider(el_creds *creds, const char *region, const char *service,
                             const el_sigv4_opts *opts, el_sigv4 **out) EL_MUST_USE;

/* The signer of a client made from cfg: cfg->creds (borrowed: cfg must
 * outlive the signer), or, for a configuration made by hand without a
 * provider, a provider of its fixed keys owned by the signer. Region from
 * opts->region, else cfg. Errors as el_sigv4_new. */
el_err el_sigv4_new_config(const el_aws_config *cfg, const char *service,
                           const el_sigv4_opts *opts, el_sigv4 **out) EL_MUST_USE;

/* Wipes the secret and the cached key. NULL is a no-op. */
void el_sigv4_free(el_sigv4 *s);

/* hex = lower-case hex SHA-256 of payload (len may be 0, payload then may
 * be NULL). EL_EINTERNAL if libcrypto fails. */
el_err el_sigv4_payload_hash(const void *payload, size_t len,
                             char hex[EL_SIGV4_HASH_SIZE]) EL_MUST_USE;

/* Formats a time as "YYYYMMDDTHHMMSSZ" (UTC). */
void el_sigv4_format_date(time_t now, char out[EL_SIGV4_DATE_SIZE]);

/*
 * Signs one request made at `now` (seconds since the epoch, UTC).
 *  method "POST", path "/" (already URI-encoded as sent: it is normalised
 *  and encoded as botocore does for non-S3 services), query "" or the
 *  query string as sent (its pairs are sorted), headers[n] the headers to
 *  sign (host among them; not x-amz-date), payload_hash from
 *  el_sigv4_payload_hash.
 * Writes the X-Amz-Date value to amz_date and the whole Authorization header
 * value ("AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...")
 * to auth (NUL-terminated).
 * Errors: EL_EUSAGE for too many headers, a duplicate or empty name, or a
 * name over 64 bytes; EL_ELIMIT when auth_cap is too small; EL_EINTERNAL if
 * libcrypto fails. On error amz_date and auth are "".
 */
el_err el_sigv4_sign(el_sigv4 *s, time_t now, const char *method, const char *path,
                     const char *query, const el_sigv4_header *headers, size_t n,
                     const char *payload_hash, char amz_date[EL_SIGV4_DATE_SIZE], char *auth,
                     size_t auth_cap) EL_MUST_USE;

/*
 * As el_sigv4_sign, with the provider's current credentials, which it also
 * hands back: when they have a session token, x-amz-security-token is
 * signed with it (the caller must not pass that header, and must send
 * el_cred_token_line(*cred)). *cred is a reference the caller releases
 * (NULL on failure); cred may be NULL when the caller needs none.
 * Besides el_sigv4_sign's errors: EL_ECONFIG when the credentials have
 * expired and could not be renewed (el_sigv4_failure says why).
 */
el_err el_sigv4_sign_request(el_sigv4 *s, time_t now, const char *method, const char *path,
                             const char *query, const el_sigv4_header *headers, size_t n,
                             const char *payload_hash, char amz_date[EL_SIGV4_DATE_SIZE],
                             char *auth, size_t auth_cap, el_cred **cred) EL_MUST_USE;

/* Why the last signature that failed did (one line, no secret): the
 * credentials' expiry and renewal error, or "cannot sign the request
 * (libcrypto)". "" when none failed. */
void el_sigv4_failure(el_sigv4 *s, char *out, size_t cap);

/* Scrubs the secret keys and session tokens the signer signs with from s
 * (el_creds_redact). */
void el_sigv4_redact(el_sigv4 *s, char *msg);

/* SigV4's URI encoding, appended to out: A-Z a-z 0-9 - _ . ~ as they are,
 * every other byte %XX (upper-case hex); '/' kept when keep_slash (paths),
 * encoded otherwise (query values). EL_ENOMEM/EL_ELIMIT from the buffer. */
el_err el_sigv4_uri_encode(el_buf *out, const char *s, size_t len,
                           bool keep_slash) EL_MUST_USE;

/* For tests: the signing key for a date ("YYYYMMDD"), as 64 hex digits. */
el_err el_sigv4_signing_key_hex(el_sigv4 *s, const char *date8,
                                char hex[EL_SIGV4_HASH_SIZE]) EL_MUST_USE;

/* For tests: how many times a signing key was derived (cache misses). */
unsigned long el_sigv4_derivations(el_sigv4 *s);

#endif
