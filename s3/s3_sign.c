/*
 * s3_sign.c - SigV4 for S3 with libcrypto.
 *
 * DESIGN: the canonical request is built in one capped buffer from the exact
 * header values the client sends, hashed, and signed with the day's derived
 * key. The derived key and every intermediate HMAC live on the stack and are
 * wiped before return, so the secret's descendants do not linger in freed
 * memory. The list of signed headers is fixed (host, range, the three
 * x-amz-*): that is all edgeload's S3 requests send that needs signing, and a
 * fixed list is what makes the order alphabetical without sorting.
 */
#include "s3/s3_sign.h"

#include <stdbool.h>       /* bool */
#include <stdio.h>         /* snprintf */
#include <string.h>        /* strlen, memcpy */

#include <openssl/crypto.h> /* OPENSSL_cleanse */
#include <openssl/evp.h>    /* SHA-256 */
#include <openssl/hmac.h>   /* HMAC-SHA256 */

#include "common/hex.h"  /* el_hex_encode */

#define CANON_MAX (64u * 1024u)

el_err el_s3_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32)
        return EL_EINTERNAL;
    el_hex_encode(md, 32, hex);
    return EL_OK;
}

static int hmac(const void *key, size_t klen, const void *msg, size_t mlen, unsigned char out[32])
{
    unsigned int olen = 0;
    return HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &olen) != NULL && olen == 32;
}

el_err el_s3_uri_encode(el_buf *out, const char *s, size_t len, int keep_slash)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                     (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~' ||
                     (c == '/' && keep_slash);
        el_err err;
        if (plain) {
            err = el_buf_putc(out, (char)c);
        } else {
            char esc[3] = { '%', "0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15] };
            err = el_buf_append(out, esc, 3);
        }
        if (err)
            return err;
    }
    return EL_OK;
}

el_err el_s3_sign(const el_s3_sign_req *r, el_buf *out, el_diag *diag)
{
    if (strlen(r->amz_date) != 16)
        return el_diag_set(diag, EL_EINTERNAL, "bad x-amz-date '%s'", r->amz_date);
    char day[9];
    memcpy(day, r->amz_date, 8);
    day[8] = '\0';
    const char *signed_headers = r->range
        ? (r->session_token ? "host;range;x-amz-content-sha256;x-amz-date;x-amz-security-token"
                            : "host;range;x-amz-content-sha256;x-amz-date")
        : (r->session_token ? "host;x-amz-content-sha256;x-amz-date;x-amz-security-token"
                            : "host;x-amz-content-sha256;x-amz-date");

    el_buf canon;
    el_buf_init(&canon, CANON_MAX);
    el_err err = el_buf_printf(&canon, "%s\n%s\n%s\nhost:%s\n", r->method, r->path,
                               r->query ? r->query : "", r->host);
    if (!err && r->range)
        err = el_buf_printf(&canon, "range:%s\n", r->range);
    if (!err)
        err = el_buf_printf(&canon, "x-amz-content-sha256:%s\nx-amz-date:%s\n",
                            r->payload_hash, r->amz_date);
    if (!err && r->session_token)
        err = el_buf_printf(&canon, "x-amz-security-token:%s\n", r->session_token);
    if (!err)
        err = el_buf_printf(&canon, "\n%s\n%s", signed_headers, r->payload_hash);
    char canon_hash[65];
    if (!err && el_s3_sha256_hex(canon.data, canon.len, canon_hash))
        err = EL_EINTERNAL;
    el_buf_free(&canon);
    if (err)
        return el_diag_set(diag, err, "cannot sign the request: %s", el_strerror(err));

    char scope[160];
    int n = snprintf(scope, sizeof scope, "%s/%s/s3/aws4_request", day, r->region);
    if (n < 0 || (size_t)n >= sizeof scope)
        return el_diag_set(diag, EL_ECONFIG, "region name too long");
    char sts[400];
    n = snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", r->amz_date, scope,
                 canon_hash);
    if (n < 0 || (size_t)n >= sizeof sts)
        return el_diag_set(diag, EL_EINTERNAL, "string to sign too long");

    /* kSecret = "AWS4" + secret; kDate, kRegion, kService, kSigning */
    size_t slen = strlen(r->secret_key);
    unsigned char k[32], k2[32], sig[32];
    char ksecret[256];
    if (slen + 4 >= sizeof ksecret)
        return el_diag_set(diag, EL_ECONFIG, "secret access key too long");
    memcpy(ksecret, "AWS4", 4);
    memcpy(ksecret + 4, r->secret_key, slen);
    int ok = hmac(ksecret, slen + 4, day, 8, k) &&
             hmac(k, 32, r->region, strlen(r->region), k2) &&
             hmac(k2, 32, "s3", 2, k) &&
             hmac(k, 32, "aws4_request", 12, k2) &&
             hmac(k2, 32, sts, strlen(sts), sig);
    OPENSSL_cleanse(ksecret, sizeof ksecret);
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(k2, sizeof k2);
    if (!ok)
        return el_diag_set(diag, EL_EINTERNAL, "HMAC-SHA256 failed");
    char sighex[65];
    el_hex_encode(sig, 32, sighex);
    err = el_buf_printf(out, "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
                        r->access_key, scope, signed_headers, sighex);
    if (err)
        return el_diag_set(diag, err, "cannot sign the request: %s", el_strerror(err));
    return EL_OK;
}
