/*
 * sigv4.h - AWS Signature Version 4 (AWS4-HMAC-SHA256) for request headers.
 *
 * A signer holds one set of credentials for one region and service. The
 * signing key (four chained HMACs of the secret over date, region, service
 * and "aws4_request") depends only on the UTC date, so it is derived once a
 * day and cached; each request then costs the SHA-256 of its canonical
 * request and one HMAC. The payload hash is a separate step so that a
 * request resent with a fresh date (a retry) hashes its body only once.
 *
 * The canonical request is what botocore builds (botocore.auth.SigV4Auth):
 * method, path, query string, the signed headers lower-cased, sorted, their
 * values trimmed with inner runs of white space collapsed to one space, the
 * signed header names, and the payload hash. x-amz-date is added by the
 * signer: the caller sends the returned date as the X-Amz-Date header. The
 * caller must send every header it passes, with the same value.
 *
 * Threads: one signer may sign on several threads at once (the cached key
 * is behind a mutex).
 *
 * Secrets: the secret key and the derived keys never leave the signer; they
 * are wiped when it is freed. Nothing here prints.
 */
#ifndef EL_SIGV4_H
#define EL_SIGV4_H

#include <stddef.h>  /* size_t */
#include <time.h>    /* time_t */

#include "common/error.h"

typedef struct el_sigv4 el_sigv4;

/* Headers a request may sign (x-amz-date, added by the signer, included). */
#define EL_SIGV4_MAX_HEADERS 12
/* "YYYYMMDDTHHMMSSZ" and its NUL. */
#define EL_SIGV4_DATE_SIZE 17
/* 64 hex digits and a NUL. */
#define EL_SIGV4_HASH_SIZE 65

typedef struct el_sigv4_header {
    const char *name;   /* any case; distinct names (case-insensitively) */
    const char *value;  /* as sent */
} el_sigv4_header;

/* Copies every string. Names the region and service of the credential scope
 * ("eu-west-1", "dynamodb"). EL_EUSAGE for an empty or over-long (> 128
 * bytes) region or service or access key, or a secret over 1 KB; EL_ENOMEM;
 * *out is NULL on failure. */
el_err el_sigv4_new(const char *access_key, const char *secret_key, const char *region,
                    const char *service, el_sigv4 **out) EL_MUST_USE;

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

/* For tests: the signing key for a date ("YYYYMMDD"), as 64 hex digits. */
el_err el_sigv4_signing_key_hex(el_sigv4 *s, const char *date8,
                                char hex[EL_SIGV4_HASH_SIZE]) EL_MUST_USE;

/* For tests: how many times a signing key was derived (cache misses). */
unsigned long el_sigv4_derivations(el_sigv4 *s);

#endif
