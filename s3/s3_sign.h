/*
 * s3_sign.h - what S3's flavour of SigV4 needs from a request: its payload
 * hash constants and the URI encoding of paths and query values. The
 * signature itself is aws/sigv4.h's, with el_sigv4_opts.s3 (the path
 * signed exactly as sent, x-amz-content-sha256 signed), tested byte for
 * byte against botocore in tests/unit/test_sigv4.c.
 */
#ifndef EL_S3_SIGN_H
#define EL_S3_SIGN_H

#include <stddef.h>  /* size_t */

#include "aws/sigv4.h"
#include "common/buf.h"
#include "common/error.h"

/* SHA-256 of an empty body, hex: the payload hash of GET, HEAD and DELETE. */
#define EL_S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define EL_S3_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"

/*
 * Appends s (len bytes) URI-encoded as SigV4 wants: A-Z a-z 0-9 - _ . ~
 * as they are, every other byte %XX (uppercase hex); '/' kept when keep_slash
 * (object keys in paths), encoded otherwise (query values).
 */
static inline el_err el_s3_uri_encode(el_buf *out, const char *s, size_t len,
                                      int keep_slash) EL_MUST_USE;
static inline el_err el_s3_uri_encode(el_buf *out, const char *s, size_t len, int keep_slash)
{
    return el_sigv4_uri_encode(out, s, len, keep_slash != 0);
}

/* Hex SHA-256 of data into hex[65] (NUL-terminated). EL_EINTERNAL on failure. */
static inline el_err el_s3_sha256_hex(const void *data, size_t len, char hex[65]) EL_MUST_USE;
static inline el_err el_s3_sha256_hex(const void *data, size_t len, char hex[65])
{
    return el_sigv4_payload_hash(data, len, hex);
}

#endif
