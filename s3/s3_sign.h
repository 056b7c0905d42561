/*
 * s3_sign.h - Signature Version 4 for Amazon S3, and the URI encoding it
 * depends on. Pure: no network, no clock (the date is an argument), so the
 * signature is tested byte for byte against botocore's.
 *
 * S3's flavour of SigV4 (AWS "Authenticating Requests: Using the
 * Authorization Header"): the canonical URI is the path exactly as sent,
 * encoded once (never normalised or double-encoded as other services do);
 * every request carries x-amz-content-sha256, the hex SHA-256 of the body or
 * UNSIGNED-PAYLOAD, and signs it.
 */
#ifndef EL_S3_SIGN_H
#define EL_S3_SIGN_H

#include <stddef.h>  /* size_t */

#include "common/buf.h"
#include "common/error.h"

/* SHA-256 of an empty body, hex: the payload hash of GET, HEAD and DELETE. */
#define EL_S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define EL_S3_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

typedef struct el_s3_sign_req {
    const char *method;        /* "GET", "PUT", "POST", "DELETE", "HEAD" */
    const char *host;          /* the Host header sent, e.g. "127.0.0.1:9000" */
    const char *path;          /* URI-encoded path as sent, "/bucket/key" or "/key" */
    const char *query;         /* canonical query (sorted, encoded), "" for none */
    const char *payload_hash;  /* lowercase hex SHA-256, or UNSIGNED-PAYLOAD */
    const char *amz_date;      /* "YYYYMMDDTHHMMSSZ" (UTC) */
    const char *region;
    const char *access_key;
    const char *secret_key;
    const char *session_token; /* NULL = none; signed when given */
    const char *range;         /* Range header value, signed when given; NULL = none */
} el_s3_sign_req;

/*
 * Appends the value of the Authorization header to out ("AWS4-HMAC-SHA256
 * Credential=AK/DATE/REGION/s3/aws4_request, SignedHeaders=..., Signature=...").
 * Signed headers: host, range (when given), x-amz-content-sha256, x-amz-date,
 * x-amz-security-token (when given). The caller sends exactly those headers
 * with those values. EL_ENOMEM/EL_ELIMIT from the buffer, EL_EINTERNAL when
 * libcrypto fails. Nothing secret is ever written to diag.
 */
el_err el_s3_sign(const el_s3_sign_req *r, el_buf *out, el_diag *diag) EL_MUST_USE;

/*
 * Appends s (len bytes) URI-encoded as SigV4 wants: A-Z a-z 0-9 - _ . ~
 * as they are, every other byte %XX (uppercase hex); '/' kept when keep_slash
 * (object keys in paths), encoded otherwise (query values).
 */
el_err el_s3_uri_encode(el_buf *out, const char *s, size_t len, int keep_slash) EL_MUST_USE;

/* Hex SHA-256 of data into hex[65] (NUL-terminated). EL_EINTERNAL on failure. */
el_err el_s3_sha256_hex(const void *data, size_t len, char hex[65]) EL_MUST_USE;

#endif
