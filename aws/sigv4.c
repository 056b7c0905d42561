/*
 * sigv4.c - AWS Signature Version 4, the way botocore computes it.
 *
 * DESIGN: libcurl's CURLOPT_AWS_SIGV4 derives the signing key (four HMACs)
 * and rebuilds every string with its printf at each transfer; a bulk load
 * signs tens of thousands of requests a minute with one key a day. So the
 * key is cached per UTC date and secret (under a mutex: the control plane
 * and the network thread sign with one signer; a renewal of the
 * credentials changes the secret, and so derives a new key once), the
 * canonical request is streamed into SHA-256 piece by piece instead of
 * being assembled, and the payload hash is the caller's to compute once per
 * body. HMAC is built on the digest (RFC 2104) with one pre-fetched EVP_MD,
 * so no provider lookup happens per request. One signer serves every
 * service: S3's rules (the path as sent, x-amz-content-sha256 signed) are
 * an option, not a second implementation.
 */
#include "aws/sigv4.h"

#include <openssl/evp.h> /* SHA-256 */
#include <pthread.h>     /* the key cache's mutex */
#include <stdbool.h>     /* bool */
#include <stdio.h>       /* snprintf */
#include <stdlib.h>      /* calloc, free */
#include <string.h>      /* memcpy, strlen, explicit_bzero */

#include "common/hex.h"  /* el_hex_encode */

#define MAX_FIELD 128        /* region, service, access key */
#define MAX_SECRET 1024
#define MAX_NAME 64          /* a header name */
#define MAX_PATH 2048
#define MAX_QUERY_PAIRS 32
#define SHA256_LEN 32
#define SHA256_BLOCK 64

struct el_sigv4 {
    char region[MAX_FIELD + 1];
    char service[MAX_FIELD + 1];
    el_creds *creds;              /* borrowed, or owned when own_creds */
    bool own_creds;
    el_sigv4_opts opts;
    EVP_MD *sha256;               /* fetched once */
    pthread_mutex_t mu;           /* guards the cache and failure below */
    char key_date[9];             /* "YYYYMMDD" of key, "" = none yet */
    char *key_secret;             /* "AWS4" + the secret key was derived from; wiped */
    size_t key_secret_len;
    unsigned char key[SHA256_LEN];
    unsigned long derivations;
    char failure[512];            /* why the last signature failed */
};

static bool field_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > 0 && n <= MAX_FIELD;
}

static el_err signer_new(el_creds *creds, bool own, const char *region, const char *service,
                         const el_sigv4_opts *opts, el_sigv4 **out)
{
    *out = NULL;
    if (!field_ok(region) || !field_ok(service)) {
        if (own)
            el_creds_free(creds);
        return EL_EUSAGE;
    }
    el_sigv4 *s = calloc(1, sizeof *s);
    if (!s) {
        if (own)
            el_creds_free(creds);
        return EL_ENOMEM;
    }
    s->creds = creds;
    s->own_creds = own;
    if (opts)
        s->opts = *opts;
    s->opts.region = NULL; /* in s->region now; the pointer is the caller's */
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        if (own)
            el_creds_free(creds);
        free(s);
        return EL_ENOMEM;
    }
    memcpy(s->region, region, strlen(region) + 1);
    memcpy(s->service, service, strlen(service) + 1);
    s->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (!s->sha256) {
        el_sigv4_free(s);
        return EL_EINTERNAL;
    }
    *out = s;
    return EL_OK;
}

el_err el_sigv4_new(const char *access_key, const char *secret_key, const char *region,
                    const char *service, el_sigv4 **out)
{
    *out = NULL;
    if (!field_ok(access_key) || !secret_key || strlen(secret_key) > MAX_SECRET)
        return EL_EUSAGE;
    el_creds *c;
    el_err err = el_creds_new_static(access_key, secret_key, NULL, "fixed keys", &c);
    if (err)
        return err;
    return signer_new(c, true, region, service, NULL, out);
}

el_err el_sigv4_new_provider(el_creds *creds, const char *region, const char *service,
                             const el_sigv4_opts *opts, el_sigv4 **out)
{
    *out = NULL;
    if (!creds)
        return EL_EUSAGE;
    return signer_new(creds, false, region, service, opts, out);
}

el_err el_sigv4_new_config(const el_aws_config *cfg, const char *service,
                           const el_sigv4_opts *opts, el_sigv4 **out)
{
    *out = NULL;
    const char *region = opts && opts->region ? opts->region : cfg->region;
    if (cfg->creds)
        return signer_new(cfg->creds, false, region, service, opts, out);
    if (!cfg->access_key || !cfg->secret_key || !field_ok(cfg->access_key) ||
        strlen(cfg->secret_key) > MAX_SECRET)
        return EL_EUSAGE;
    el_creds *c;
    el_err err = el_creds_new_static(cfg->access_key, cfg->secret_key, cfg->session_token,
                                     cfg->cred_source ? cfg->cred_source : "the configuration",
                                     &c);
    if (err)
        return err;
    return signer_new(c, true, region, service, opts, out);
}

void el_sigv4_free(el_sigv4 *s)
{
    if (!s)
        return;
    if (s->key_secret) {
        explicit_bzero(s->key_secret, s->key_secret_len);
        free(s->key_secret);
    }
    explicit_bzero(s->key, sizeof s->key);
    EVP_MD_free(s->sha256);
    pthread_mutex_destroy(&s->mu);
    if (s->own_creds)
        el_creds_free(s->creds);
    free(s);
}

/* ---- SHA-256 and HMAC on one EVP_MD_CTX ---- */

static bool digest(EVP_MD_CTX *ctx, const EVP_MD *md, const void *a, size_t alen,
                   const void *b, size_t blen, unsigned char out[SHA256_LEN])
{
    unsigned int n = 0;
    return EVP_DigestInit_ex(ctx, md, NULL) == 1 && EVP_DigestUpdate(ctx, a, alen) == 1 &&
           (!blen || EVP_DigestUpdate(ctx, b, blen) == 1) &&
           EVP_DigestFinal_ex(ctx, out, &n) == 1 && n == SHA256_LEN;
}

/* HMAC-SHA-256 (RFC 2104). */
static bool hmac(EVP_MD_CTX *ctx, const EVP_MD *md, const void *key, size_t klen,
                 const void *msg, size_t mlen, unsigned char out[SHA256_LEN])
{
    unsigned char k[SHA256_BLOCK] = {0}, pad[SHA256_BLOCK], inner[SHA256_LEN];
    bool ok = true;
    if (klen > SHA256_BLOCK)
        ok = digest(ctx, md, key, klen, NULL, 0, k);
    else
        memcpy(k, key, klen);
    for (size_t i = 0; i < SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x36;
    ok = ok && digest(ctx, md, pad, SHA256_BLOCK, msg, mlen, inner);
    for (size_t i = 0; i < SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x5c;
    ok = ok && digest(ctx, md, pad, SHA256_BLOCK, inner, SHA256_LEN, out);
    explicit_bzero(k, sizeof k);
    explicit_bzero(pad, sizeof pad);
    return ok;
}

static bool derive_key(el_sigv4 *s, EVP_MD_CTX *ctx, const char *ksecret, size_t klen,
                       const char *date8, unsigned char key[SHA256_LEN])
{
    unsigned char a[SHA256_LEN], b[SHA256_LEN];
    bool ok = hmac(ctx, s->sha256, ksecret, klen, date8, 8, a) &&
              hmac(ctx, s->sha256, a, SHA256_LEN, s->region, strlen(s->region), b) &&
              hmac(ctx, s->sha256, b, SHA256_LEN, s->service, strlen(s->service), a) &&
              hmac(ctx, s->sha256, a, SHA256_LEN, "aws4_request", 12, key);
    explicit_bzero(a, sizeof a);
    explicit_bzero(b, sizeof b);
    return ok;
}

/* The signing key of date8 and secret, from the cache or derived (and
 * cached). */
static bool signing_key(el_sigv4 *s, EVP_MD_CTX *ctx, const char *secret, const char *date8,
                        unsigned char key[SHA256_LEN])
{
    size_t slen = strlen(secret);
    if (slen > MAX_SECRET)
        return false;
    char ksecret[4 + MAX_SECRET];
    memcpy(ksecret, "AWS4", 4);
    memcpy(ksecret + 4, secret, slen);
    size_t klen = 4 + slen;
    bool ok = true;
    pthread_mutex_lock(&s->mu);
    bool hit = s->key_date[0] && memcmp(s->key_date, date8, 8) == 0 && s->key_secret &&
               s->key_secret_len == klen && memcmp(s->key_secret, ksecret, klen) == 0;
    if (!hit) {
        if (!s->key_secret || s->key_secret_len != klen) {
            if (s->key_secret) {
                explicit_bzero(s->key_secret, s->key_secret_len);
                free(s->key_secret);
            }
            s->key_secret = malloc(klen);
            s->key_secret_len = s->key_secret ? klen : 0;
        }
        ok = s->key_secret && derive_key(s, ctx, ksecret, klen, date8, s->key);
        if (ok) {
            memcpy(s->key_secret, ksecret, klen);
            memcpy(s->key_date, date8, 8);
            s->key_date[8] = '\0';
            s->derivations++;
        } else {
            s->key_date[0] = '\0';
        }
    }
    if (ok)
        memcpy(key, s->key, SHA256_LEN);
    pthread_mutex_unlock(&s->mu);
    explicit_bzero(ksecret, klen);
    return ok;
}

el_err el_sigv4_payload_hash(const void *payload, size_t len, char hex[EL_SIGV4_HASH_SIZE])
{
    unsigned char md[SHA256_LEN];
    unsigned int n = 0;
    hex[0] = '\0';
    /* EVP_Digest fetches SHA-256 per call: fine once per request body */
    if (EVP_Digest(len ? payload : "", len, md, &n, EVP_sha256(), NULL) != 1 ||
        n != SHA256_LEN)
        return EL_EINTERNAL;
    el_hex_encode(md, SHA256_LEN, hex);
    return EL_OK;
}

/* ---- the canonical request ---- */

static void put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
}

void el_sigv4_format_date(time_t now, char out[EL_SIGV4_DATE_SIZE])
{
    struct tm tm;
    if (!gmtime_r(&now, &tm))
        memset(&tm, 0, sizeof tm);
    unsigned year = (unsigned)(tm.tm_year + 1900);
    put2(out, year / 100);
    put2(out + 2, year % 100);
    put2(out + 4, (unsigned)tm.tm_mon + 1);
    put2(out + 6, (unsigned)tm.tm_mday);
    out[8] = 'T';
    put2(out + 9, (unsigned)tm.tm_hour);
    put2(out + 11, (unsigned)tm.tm_min);
    put2(out + 13, (unsigned)tm.tm_sec);
    out[15] = 'Z';
    out[16] = '\0';
}

typedef struct canon_header {
    char name[MAX_NAME + 1];   /* lower case */
    size_t name_len;
    const char *value;
} canon_header;

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Feeds value with leading/trailing white space dropped and inner runs of
 * it collapsed to one space (botocore: ' '.join(value.split())). */
static bool update_trimmed(EVP_MD_CTX *ctx, const char *v)
{
    bool first = true;
    while (*v) {
        while (*v && is_space(*v))
            v++;
        const char *start = v;
        while (*v && !is_space(*v))
            v++;
        if (v == start)
            break;
        if ((!first && EVP_DigestUpdate(ctx, " ", 1) != 1) ||
            EVP_DigestUpdate(ctx, start, (size_t)(v - start)) != 1)
            return false;
        first = false;
    }
    return true;
}

static bool unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == '~';
}

/* botocore's _normalize_url_path: dot segments and empty segments removed,
 * then every byte but unreserved ones and '/' percent-encoded. */
static bool canonical_path(const char *path, char *out, size_t cap)
{
    char segs[MAX_PATH];
    size_t plen = strlen(path);
    if (plen >= sizeof segs)
        return false;
    if (plen == 0) {
        memcpy(out, "/", 2);
        return true;
    }
    /* remove_dot_segments, on a list of segment offsets */
    size_t starts[MAX_PATH / 2 + 1], lens[MAX_PATH / 2 + 1], nseg = 0;
    memcpy(segs, path, plen + 1);
    for (size_t i = 0; i <= plen;) {
        size_t j = i;
        while (j < plen && segs[j] != '/')
            j++;
        size_t len = j - i;
        if (len == 2 && segs[i] == '.' && segs[i + 1] == '.') {
            if (nseg)
                nseg--;
        } else if (len && !(len == 1 && segs[i] == '.')) {
            starts[nseg] = i;
            lens[nseg++] = len;
        }
        i = j + 1;
    }
    char norm[MAX_PATH + 2];
    size_t n = 0;
    if (path[0] == '/')
        norm[n++] = '/';
    for (size_t k = 0; k < nseg; k++) {
        if (k)
            norm[n++] = '/';
        memcpy(norm + n, segs + starts[k], lens[k]);
        n += lens[k];
    }
    if (path[plen - 1] == '/' && nseg)
        norm[n++] = '/';
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)norm[i];
        if (unreserved(c) || c == '/') {
            if (o + 1 >= cap)
                return false;
            out[o++] = (char)c;
        } else {
            if (o + 3 >= cap)
                return false;
            out[o++] = '%';
            out[o++] = "0123456789ABCDEF"[c >> 4];
            out[o++] = "0123456789ABCDEF"[c & 15];
        }
    }
    out[o] = '\0';
    return true;
}

typedef struct query_pair {
    const char *key, *value;
    size_t klen, vlen;
} query_pair;

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static int cmp_pair(const query_pair *a, const query_pair *b)
{
    int c = cmp_bytes(a->key, a->klen, b->key, b->klen);
    return c ? c : cmp_bytes(a->value, a->vlen, b->value, b->vlen);
}

/* The query string with its pairs sorted by key, then value (botocore's
 * _canonical_query_string_url: the text as sent, not re-encoded). */
static bool update_query(EVP_MD_CTX *ctx, const char *query)
{
    if (!query || !*query)
        return true;
    query_pair p[MAX_QUERY_PAIRS];
    size_t n = 0;
    for (const char *q = query;;) {
        if (n == MAX_QUERY_PAIRS)
            return false;
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', len);
        p[n].key = q;
        p[n].klen = eq ? (size_t)(eq - q) : len;
        p[n].value = eq ? eq + 1 : "";
        p[n].vlen = eq ? len - p[n].klen - 1 : 0;
        /* insertion sort: a handful of pairs at most */
        size_t k = n++;
        while (k > 0 && cmp_pair(&p[k], &p[k - 1]) < 0) {
            query_pair t = p[k];
            p[k] = p[k - 1];
            p[k - 1] = t;
            k--;
        }
        if (!amp)
            break;
        q = amp + 1;
    }
    for (size_t i = 0; i < n; i++)
        if ((i && EVP_DigestUpdate(ctx, "&", 1) != 1) ||
            EVP_DigestUpdate(ctx, p[i].key, p[i].klen) != 1 ||
            EVP_DigestUpdate(ctx, "=", 1) != 1 ||
            EVP_DigestUpdate(ctx, p[i].value, p[i].vlen) != 1)
            return false;
    return true;
}

/* Lower-cased, sorted copies of the header names (the signer's own, x-amz-date
 * and what extra holds, added). */
static el_err sort_headers(const el_sigv4_header *headers, size_t n,
                           const el_sigv4_header *extra, size_t nextra, canon_header *h,
                           size_t *nh)
{
    if (n + nextra > EL_SIGV4_MAX_HEADERS)
        return EL_EUSAGE;
    for (size_t i = 0; i < n + nextra; i++) {
        const char *name = i < n ? headers[i].name : extra[i - n].name;
        size_t len = name ? strlen(name) : 0;
        if (len == 0 || len > MAX_NAME)
            return EL_EUSAGE;
        canon_header c;
        for (size_t k = 0; k < len; k++) {
            char ch = name[k];
            c.name[k] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
        }
        c.name[len] = '\0';
        c.name_len = len;
        c.value = i < n ? headers[i].value : extra[i - n].value;
        if (!c.value)
            return EL_EUSAGE;
        size_t k = i;
        while (k > 0 && strcmp(c.name, h[k - 1].name) < 0) {
            h[k] = h[k - 1];
            k--;
        }
        if (k > 0 && strcmp(c.name, h[k - 1].name) == 0)
            return EL_EUSAGE; /* the caller's header list repeats a name */
        h[k] = c;
    }
    *nh = n + nextra;
    return EL_OK;
}

static void set_failure(el_sigv4 *s, const char *msg)
{
    size_t n = strnlen(msg, sizeof s->failure - 1); /* cut to fit: a result message */
    pthread_mutex_lock(&s->mu);
    memcpy(s->failure, msg, n);
    s->failure[n] = '\0';
    pthread_mutex_unlock(&s->mu);
}

/* Signs with c; with_token: c's session token is signed as
 * x-amz-security-token. */
static el_err sign_with(el_sigv4 *s, const el_cred *c, bool with_token, time_t now,
                        const char *method, const char *path, const char *query,
                        const el_sigv4_header *headers, size_t n, const char *payload_hash,
                        char amz_date[EL_SIGV4_DATE_SIZE], char *auth, size_t auth_cap)
{
    canon_header h[EL_SIGV4_MAX_HEADERS];
    size_t nh = 0;
    char cpath[3 * MAX_PATH + 1];
    char date[EL_SIGV4_DATE_SIZE];
    el_sigv4_format_date(now, date);
    el_sigv4_header extra[3];
    size_t nextra = 0;
    extra[nextra++] = (el_sigv4_header){"x-amz-date", date};
    if (s->opts.s3)
        extra[nextra++] = (el_sigv4_header){"x-amz-content-sha256", payload_hash};
    if (with_token && el_cred_session_token(c))
        extra[nextra++] = (el_sigv4_header){"x-amz-security-token", el_cred_session_token(c)};
    el_err err = sort_headers(headers, n, extra, nextra, h, &nh);
    if (err)
        return err;
    const char *cp = cpath;
    if (s->opts.s3)
        cp = path && *path ? path : "/"; /* as sent: S3 signs the path it gets */
    else if (!canonical_path(path ? path : "", cpath, sizeof cpath))
        return EL_EUSAGE;

    /* SignedHeaders, also part of the canonical request */
    char signed_names[EL_SIGV4_MAX_HEADERS * (MAX_NAME + 1)];
    size_t sl = 0;
    for (size_t i = 0; i < nh; i++) {
        if (i)
            signed_names[sl++] = ';';
        memcpy(signed_names + sl, h[i].name, h[i].name_len);
        sl += h[i].name_len;
    }
    signed_names[sl] = '\0';

    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return EL_ENOMEM;
    err = EL_EINTERNAL;
    unsigned char md[SHA256_LEN], key[SHA256_LEN], sig[SHA256_LEN];
    unsigned int mdlen = 0;
    bool ok = EVP_DigestInit_ex(ctx, s->sha256, NULL) == 1 &&
              EVP_DigestUpdate(ctx, method, strlen(method)) == 1 &&
              EVP_DigestUpdate(ctx, "\n", 1) == 1 &&
              EVP_DigestUpdate(ctx, cp, strlen(cp)) == 1 &&
              EVP_DigestUpdate(ctx, "\n", 1) == 1;
    if (ok && !update_query(ctx, query)) {
        err = EL_EUSAGE;
        ok = false;
    }
    ok = ok && EVP_DigestUpdate(ctx, "\n", 1) == 1;
    for (size_t i = 0; ok && i < nh; i++)
        ok = EVP_DigestUpdate(ctx, h[i].name, h[i].name_len) == 1 &&
             EVP_DigestUpdate(ctx, ":", 1) == 1 && update_trimmed(ctx, h[i].value) &&
             EVP_DigestUpdate(ctx, "\n", 1) == 1;
    ok = ok && EVP_DigestUpdate(ctx, "\n", 1) == 1 &&
         EVP_DigestUpdate(ctx, signed_names, sl) == 1 &&
         EVP_DigestUpdate(ctx, "\n", 1) == 1 &&
         EVP_DigestUpdate(ctx, payload_hash, strlen(payload_hash)) == 1 &&
         EVP_DigestFinal_ex(ctx, md, &mdlen) == 1 && mdlen == SHA256_LEN;

    /* StringToSign: algorithm, date, scope, hash of the canonical request */
    char sts[64 + EL_SIGV4_DATE_SIZE + 3 * (MAX_FIELD + 1) + 2 * SHA256_LEN];
    int stslen = 0;
    if (ok) {
        char crhex[EL_SIGV4_HASH_SIZE];
        el_hex_encode(md, SHA256_LEN, crhex);
        stslen = snprintf(sts, sizeof sts, "AWS4-HMAC-SHA256\n%s\n%.8s/%s/%s/aws4_request\n%s",
                          date, date, s->region, s->service, crhex);
        ok = stslen > 0 && (size_t)stslen < sizeof sts;
    }
    ok = ok && signing_key(s, ctx, el_cred_secret_key(c), date, key) &&
         hmac(ctx, s->sha256, key, SHA256_LEN, sts, (size_t)stslen, sig);
    explicit_bzero(key, sizeof key);
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        if (err == EL_EINTERNAL)
            set_failure(s, "cannot sign the request (libcrypto)");
        return err;
    }
    char sighex[EL_SIGV4_HASH_SIZE];
    el_hex_encode(sig, SHA256_LEN, sighex);
    int w = snprintf(auth, auth_cap,
                     "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request, "
                     "SignedHeaders=%s, Signature=%s",
                     el_cred_access_key(c), date, s->region, s->service, signed_names,
                     sighex);
    if (w < 0 || (size_t)w >= auth_cap) {
        if (auth_cap)
            auth[0] = '\0';
        return EL_ELIMIT;
    }
    memcpy(amz_date, date, EL_SIGV4_DATE_SIZE);
    return EL_OK;
}

/* Both signing entry points: the provider's current credentials, then the
 * signature; *cred (when cred is not NULL) keeps a reference to them. */
static el_err sign_current(el_sigv4 *s, bool with_token, time_t now, const char *method,
                           const char *path, const char *query, const el_sigv4_header *headers,
                           size_t n, const char *payload_hash,
                           char amz_date[EL_SIGV4_DATE_SIZE], char *auth, size_t auth_cap,
                           el_cred **cred)
{
    amz_date[0] = '\0';
    if (auth_cap)
        auth[0] = '\0';
    if (cred)
        *cred = NULL;
    el_cred *c;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_creds_get(s->creds, now, &c, &d);
    if (err) {
        set_failure(s, d.msg);
        return err;
    }
    err = sign_with(s, c, with_token, now, method, path, query, headers, n, payload_hash,
                    amz_date, auth, auth_cap);
    if (err || !cred)
        el_cred_release(c);
    else
        *cred = c;
    return err;
}

el_err el_sigv4_sign_request(el_sigv4 *s, time_t now, const char *method, const char *path,
                             const char *query, const el_sigv4_header *headers, size_t n,
                             const char *payload_hash, char amz_date[EL_SIGV4_DATE_SIZE],
                             char *auth, size_t auth_cap, el_cred **cred)
{
    return sign_current(s, true, now, method, path, query, headers, n, payload_hash, amz_date,
                        auth, auth_cap, cred);
}

el_err el_sigv4_sign(el_sigv4 *s, time_t now, const char *method, const char *path,
                     const char *query, const el_sigv4_header *headers, size_t n,
                     const char *payload_hash, char amz_date[EL_SIGV4_DATE_SIZE], char *auth,
                     size_t auth_cap)
{
    return sign_current(s, false, now, method, path, query, headers, n, payload_hash, amz_date,
                        auth, auth_cap, NULL);
}

void el_sigv4_failure(el_sigv4 *s, char *out, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    snprintf(out, cap, "%s", s->failure);
    pthread_mutex_unlock(&s->mu);
}

void el_sigv4_redact(el_sigv4 *s, char *msg)
{
    el_creds_redact(s->creds, msg);
}

el_err el_sigv4_uri_encode(el_buf *out, const char *str, size_t len, bool keep_slash)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)str[i];
        el_err err;
        if (unreserved(c) || (c == '/' && keep_slash)) {
            err = el_buf_putc(out, (char)c);
        } else {
            char esc[3] = {'%', "0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15]};
            err = el_buf_append(out, esc, 3);
        }
        if (err)
            return err;
    }
    return EL_OK;
}

el_err el_sigv4_signing_key_hex(el_sigv4 *s, const char *date8, char hex[EL_SIGV4_HASH_SIZE])
{
    unsigned char key[SHA256_LEN];
    hex[0] = '\0';
    if (!date8 || strlen(date8) != 8)
        return EL_EUSAGE;
    el_cred *c;
    if (el_creds_get(s->creds, time(NULL), &c, NULL))
        return EL_ECONFIG;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx) {
        el_cred_release(c);
        return EL_ENOMEM;
    }
    bool ok = signing_key(s, ctx, el_cred_secret_key(c), date8, key);
    EVP_MD_CTX_free(ctx);
    el_cred_release(c);
    if (!ok)
        return EL_EINTERNAL;
    el_hex_encode(key, SHA256_LEN, hex);
    explicit_bzero(key, sizeof key);
    return EL_OK;
}

unsigned long el_sigv4_derivations(el_sigv4 *s)
{
    pthread_mutex_lock(&s->mu);
    unsigned long n = s->derivations;
    pthread_mutex_unlock(&s->mu);
    return n;
}
