/*
 * s3_client.c - S3 requests over libcurl, signed by aws/sigv4.c (S3 rules).
 *
 * DESIGN: one function (s3_call_setup) turns a request description into a
 * curl easy handle with exactly the headers that were signed, so the
 * synchronous calls here and the multi-driven ranged GETs of s3_source.c
 * send the same bytes. Signing is ours, not CURLOPT_AWS_SIGV4: S3 wants
 * x-amz-content-sha256 signed and the path signed exactly as sent, and a
 * signer of our own is tested byte for byte against botocore
 * (tests/unit/test_sigv4.c) whatever the libcurl version. Each
 * synchronous call takes a fresh easy handle, so calls from several threads
 * never share one; the bodies they move are megabytes (parts, listings), so
 * a new connection per call costs little next to the transfer.
 *
 * Retries: connection errors, 5xx, SlowDown and RequestTimeout are retried
 * with capped exponential backoff and full jitter; a ranged GET that breaks
 * mid-body asks again from the first byte it has not got, so its buffer
 * gets every byte once.
 */
#include "s3/s3_internal.h"

#include <pthread.h>  /* the jitter state is shared by threads */
#include <stddef.h>   /* offsetof */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free, strtoull */
#include <string.h>   /* strlen, strcmp, strncmp, memcpy */
#include <strings.h>  /* strncasecmp for header names */
#include <time.h>     /* time, gmtime_r, nanosleep */

#include "aws/aws_http.h"   /* el_aws_http_setup, el_aws_http_hint */
#include "aws/endpoints.h"  /* the SDKs' endpoint rules, virtual-hosted buckets */
#include "aws/skew.h"       /* the signing clock */
#include "aws/sigv4.h"
#include "common/backoff.h"
#include "s3/s3_sign.h"

#define LIST_BODY_MAX (32u * 1024u * 1024u)
#define DEFAULT_ATTEMPTS 5
#define DEFAULT_BASE_MS 100.0
#define CONNECT_TIMEOUT_MS 10000L
/* A transfer that moves nothing for this long is dead (a stalled peer). */
#define LOW_SPEED_TIME_S 60L

struct el_s3 {
    const el_aws_config *cfg;
    char *endpoint;       /* scheme://host[:port], no trailing slash */
    char *scheme;         /* "http" or "https" */
    char *host;           /* host[:port] as the Host header says it */
    char *region;         /* the region requests are signed for ("aws-global": us-east-1) */
    bool custom;          /* not AWS's own endpoint: path-style always */
    int attempts;
    double base_ms;
    size_t read_part;     /* s3_source.c's part size, 0 = its default */
    int read_ahead;
    pthread_mutex_t rng_lock;
    uint64_t rng;
    bool global_init;
    el_sigv4 *signer;     /* S3's rules, the run's credential provider */
    el_skew *skew;        /* the clock requests are signed by (aws/skew.h) */
};

bool el_s3_is_url(const char *s)
{
    return s && strncmp(s, "s3://", 5) == 0;
}

el_err el_s3_url_parse(const char *url, char **bucket, char **key, el_diag *diag)
{
    *bucket = *key = NULL;
    if (!el_s3_is_url(url))
        return el_diag_set(diag, EL_EUSAGE, "'%s' is not an s3:// URL", url);
    const char *b = url + 5;
    const char *slash = strchr(b, '/');
    size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    if (blen < 3 || blen > 63)
        return el_diag_set(diag, EL_EUSAGE, "%s: a bucket name has 3 to 63 characters", url);
    for (size_t i = 0; i < blen; i++) {
        char c = b[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            return el_diag_set(diag, EL_EUSAGE, "%s: '%c' cannot be in a bucket name", url, c);
    }
    const char *k = slash ? slash + 1 : "";
    if (strlen(k) > 1024)
        return el_diag_set(diag, EL_EUSAGE, "%s: an object key has at most 1024 bytes", url);
    *bucket = strndup(b, blen);
    *key = strdup(k);
    if (!*bucket || !*key) {
        free(*bucket);
        free(*key);
        *bucket = *key = NULL;
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    return EL_OK;
}

/* ---- the client ---- */

static const char *env(el_getenv_fn g, const char *name)
{
    const char *v = g ? g(name) : getenv(name);
    return v && v[0] ? v : NULL;
}

/* Splits "scheme://host[:port][/]" into the client's fields. */
static el_err set_endpoint(el_s3 *s3, const char *url, el_diag *diag)
{
    const char *sep = strstr(url, "://");
    if (!sep || (strncmp(url, "http", 4) != 0))
        return el_diag_set(diag, EL_EUSAGE,
                           "S3 endpoint '%s' is not an http:// or https:// URL", url);
    size_t slen = (size_t)(sep - url);
    if (!(slen == 4 || (slen == 5 && url[4] == 's')))
        return el_diag_set(diag, EL_EUSAGE,
                           "S3 endpoint '%s' is not an http:// or https:// URL", url);
    const char *h = sep + 3;
    size_t hlen = strcspn(h, "/?#");
    const char *rest = h + hlen;
    if (hlen == 0 || (rest[0] && strcmp(rest, "/") != 0))
        return el_diag_set(diag, EL_EUSAGE,
                           "S3 endpoint '%s': give scheme://host[:port] with no path", url);
    if (memchr(h, '@', hlen))
        return el_diag_set(diag, EL_EUSAGE, "S3 endpoint URL must not hold user information");
    s3->scheme = strndup(url, slen);
    /* a default port is left out of Host, as curl and botocore do */
    size_t keep = hlen;
    if (slen == 4 && hlen > 3 && strncmp(h + hlen - 3, ":80", 3) == 0)
        keep = hlen - 3;
    if (slen == 5 && hlen > 4 && strncmp(h + hlen - 4, ":443", 4) == 0)
        keep = hlen - 4;
    s3->host = strndup(h, keep);
    s3->endpoint = strndup(url, (size_t)(rest - url));
    if (!s3->scheme || !s3->host || !s3->endpoint)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    return EL_OK;
}

el_err el_s3_new(const el_aws_config *cfg, const char *cli_endpoint, el_getenv_fn getenv_fn,
                 el_s3 **out, el_diag *diag)
{
    *out = NULL;
    el_s3 *s3 = calloc(1, sizeof *s3);
    if (!s3)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    s3->cfg = cfg;
    s3->attempts = cfg->max_attempts > 0 ? cfg->max_attempts : DEFAULT_ATTEMPTS;
    s3->base_ms = DEFAULT_BASE_MS;
    s3->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)s3;
    pthread_mutex_init(&s3->rng_lock, NULL);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        free(s3);
        return el_diag_set(diag, EL_EINTERNAL, "libcurl initialisation failed");
    }
    s3->global_init = true;
    const char *ignore = env(getenv_fn, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
    bool use_env = !(ignore && strcasecmp(ignore, "true") == 0);
    const char *ep = cli_endpoint;
    if (!ep && use_env)
        ep = env(getenv_fn, "AWS_ENDPOINT_URL_S3");
    if (!ep && use_env)
        ep = env(getenv_fn, "AWS_ENDPOINT_URL");
    el_aws_endpoint rules;
    snprintf(rules.signing_region, sizeof rules.signing_region, "%s", cfg->region);
    s3->custom = ep != NULL;
    if (!ep) {
        el_diag d;
        el_diag_clear(&d);
        if (el_aws_endpoint_resolve("s3", cfg->region, cfg->use_fips, cfg->s3_dualstack, &rules,
                                    &d)) {
            el_s3_free(s3);
            return el_diag_set(diag, EL_ECONFIG, "%s: give an endpoint with --endpoint-url-s3, "
                               "or turn the variant off (%s)", d.msg, EL_AWS_VARIANT_SETTINGS);
        }
        ep = rules.url;
    }
    el_err err = set_endpoint(s3, ep, diag);
    if (!err && !(s3->region = strdup(rules.signing_region)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (err) {
        el_s3_free(s3);
        return err;
    }
    el_sigv4_opts s3_rules = {.s3 = true, .region = s3->region};
    if (el_skew_new("S3", cfg->wall_clock, cfg->wall_clock_user, cfg->on_skew, cfg->on_skew_user,
                    &s3->skew)) {
        el_s3_free(s3);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if ((err = el_sigv4_new_config(cfg, "s3", &s3_rules, &s3->signer))) {
        el_s3_free(s3);
        return el_diag_set(diag, err == EL_EUSAGE ? EL_ECONFIG : err,
                           "cannot set up request signing (region or keys too long)");
    }
    *out = s3;
    return EL_OK;
}

void el_s3_free(el_s3 *s3)
{
    if (!s3)
        return;
    free(s3->endpoint);
    free(s3->scheme);
    free(s3->host);
    free(s3->region);
    el_sigv4_free(s3->signer);
    el_skew_free(s3->skew);
    pthread_mutex_destroy(&s3->rng_lock);
    if (s3->global_init)
        curl_global_cleanup();
    free(s3);
}

const char *el_s3_endpoint(const el_s3 *s3) { return s3->endpoint; }
const char *el_s3_region(const el_s3 *s3) { return s3->region; }
int s3_attempts(const el_s3 *s3) { return s3->attempts; }

void el_s3_set_read_parts(el_s3 *s3, size_t part_size, int ahead)
{
    s3->read_part = part_size;
    s3->read_ahead = ahead;
}

void el_s3_read_parts(const el_s3 *s3, size_t *part_size, int *ahead)
{
    *part_size = s3->read_part;
    *ahead = s3->read_ahead;
}

void el_s3_set_retry(el_s3 *s3, int attempts, double base_ms)
{
    s3->attempts = attempts > 0 ? attempts : 1;
    s3->base_ms = base_ms > 0 ? base_ms : DEFAULT_BASE_MS;
}

void s3_backoff_sleep(el_s3 *s3, unsigned attempt)
{
    pthread_mutex_lock(&s3->rng_lock);
    double u = el_rand_unit(&s3->rng);
    pthread_mutex_unlock(&s3->rng_lock);
    double ms = el_backoff_ms(attempt, s3->base_ms, 10000.0, u);
    struct timespec ts = { (time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6) };
    nanosleep(&ts, NULL);
}

/* ---- one request ---- */

/* A bucket that can be a DNS label is addressed virtual-hosted on AWS. */
static bool virtual_host(const el_s3 *s3, const char *bucket)
{
    return !s3->custom && el_aws_s3_virtual_hostable(bucket);
}

static size_t header_cb(char *line, size_t size, size_t nmemb, void *p)
{
    s3_call *c = p;
    size_t n = size * nmemb;
    if (n > 5 && strncmp(line, "HTTP/", 5) == 0) {
        const char *sp = memchr(line, ' ', n);
        c->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        return n;
    }
    static const struct { const char *name; size_t off, cap; } want[] = {
        { "x-amz-bucket-region", offsetof(s3_call, bucket_region), sizeof ((s3_call *)0)->bucket_region },
        { "etag", offsetof(s3_call, etag), sizeof ((s3_call *)0)->etag },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t k = strlen(want[i].name);
        if (n <= k || line[k] != ':' || strncasecmp(line, want[i].name, k) != 0)
            continue;
        const char *v = line + k + 1, *end = line + n;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
            end--;
        size_t len = (size_t)(end - v);
        char *dst = (char *)c + want[i].off;
        if (len >= want[i].cap)
            len = want[i].cap - 1;
        memcpy(dst, v, len);
        dst[len] = '\0';
    }
    return n;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *p)
{
    s3_call *c = p;
    size_t n = size * nmemb;
    if (c->status >= 200 && c->status < 300) {
        if (!c->on_data)
            return n;
        size_t r = c->on_data(c->on_data_user, data, n);
        if (r != n)
            c->data_failed = true;
        return r;
    }
    size_t room = S3_ERR_BODY_MAX - 1 - c->err_body.len;
    if (el_buf_append(&c->err_body, data, n < room ? n : room))
        return 0;
    return n;
}

void s3_call_cleanup(s3_call *c)
{
    curl_slist_free_all(c->headers);
    c->headers = NULL;
    free(c->url);
    c->url = NULL;
    el_buf_free(&c->err_body);
}

static el_err add_header(struct curl_slist **l, const char *name, const char *v)
{
    char line[2200];
    int n = snprintf(line, sizeof line, "%s:%s%s", name, v[0] ? " " : "", v);
    if (n < 0 || (size_t)n >= sizeof line)
        return EL_ELIMIT;
    struct curl_slist *nl = curl_slist_append(*l, line);
    if (!nl)
        return EL_ENOMEM;
    *l = nl;
    return EL_OK;
}

#define SET(opt, val)                                     \
    do {                                                  \
        if (curl_easy_setopt(h, opt, val) != CURLE_OK)    \
            goto curl_fail;                               \
    } while (0)

el_err s3_call_setup(el_s3 *s3, CURL *h, s3_call *c, el_diag *diag)
{
    const el_aws_config *cfg = s3->cfg;
    c->h = h;
    c->status = 0;
    c->bucket_region[0] = c->etag[0] = c->errbuf[0] = '\0';
    c->data_failed = false;
    c->headers = NULL;
    c->url = NULL;
    el_buf_init(&c->err_body, S3_ERR_BODY_MAX);

    bool vhost = virtual_host(s3, c->bucket);
    el_buf path, host, url, auth;
    el_buf_init(&path, 8192);
    el_buf_init(&host, 512);
    el_buf_init(&url, 16384);
    el_buf_init(&auth, 1024);
    el_err err = EL_OK;
    if (vhost)
        err = el_buf_printf(&host, "%s.%s", c->bucket, s3->host);
    else
        err = el_buf_puts(&host, s3->host);
    if (!err && !vhost)
        err = el_buf_putc(&path, '/') || el_s3_uri_encode(&path, c->bucket, strlen(c->bucket), 0);
    if (!err && (c->key && c->key[0]))
        err = el_buf_putc(&path, '/') || el_s3_uri_encode(&path, c->key, strlen(c->key), 1);
    if (!err && path.len == 0)
        err = el_buf_putc(&path, '/');
    if (!err)
        err = el_buf_printf(&url, "%s://%s%s%s%s", s3->scheme, el_buf_str(&host),
                            el_buf_str(&path), c->query && c->query[0] ? "?" : "",
                            c->query ? c->query : "");
    char payload[65];
    if (!err) {
        if (c->body && c->body_len > 0) {
            if (el_s3_sha256_hex(c->body, c->body_len, payload))
                err = EL_EINTERNAL;
        } else {
            memcpy(payload, EL_S3_EMPTY_SHA256, 65);
        }
    }
    char date[20], range[64];
    time_t now = el_skew_now(s3->skew, &c->signed_offset);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
    if (c->has_range)
        snprintf(range, sizeof range, "bytes=%llu-%llu", (unsigned long long)c->range_first,
                 (unsigned long long)c->range_last);
    if (err) {
        el_diag_set(diag, err, "s3://%s/%s: request too large to build", c->bucket,
                    c->key ? c->key : "");
        goto out;
    }
    el_sigv4_header sh[2] = {{"Host", el_buf_str(&host)}, {"Range", range}};
    el_cred *cred = NULL;
    char amz_date[EL_SIGV4_DATE_SIZE], sig[1024];
    err = el_sigv4_sign_request(s3->signer, now, c->method, el_buf_str(&path),
                                c->query ? c->query : "", sh, c->has_range ? 2 : 1, payload,
                                amz_date, sig, sizeof sig, &cred);
    if (err) {
        char why[512];
        el_sigv4_failure(s3->signer, why, sizeof why);
        el_diag_set(diag, err, "s3://%s/%s: %s", c->bucket, c->key ? c->key : "",
                    why[0] ? why : "cannot sign the request");
        goto out;
    }
    err = el_buf_puts(&auth, sig);
    if (!err)
        err = add_header(&c->headers, "Host", el_buf_str(&host));
    if (!err)
        err = add_header(&c->headers, "x-amz-date", date);
    if (!err)
        err = add_header(&c->headers, "x-amz-content-sha256", payload);
    if (!err && c->has_range)
        err = add_header(&c->headers, "Range", range);
    if (!err && el_cred_session_token(cred))
        err = add_header(&c->headers, "x-amz-security-token", el_cred_session_token(cred));
    el_cred_release(cred);
    if (!err && c->if_match && c->if_match[0])
        err = add_header(&c->headers, "If-Match", c->if_match);
    if (!err)
        err = add_header(&c->headers, "Authorization", el_buf_str(&auth));
    if (!err)
        err = add_header(&c->headers, "Expect", "");
    if (!err && c->body)
        err = add_header(&c->headers, "Content-Type", "application/octet-stream");
    if (err) {
        el_diag_set(diag, err, "out of memory");
        goto out;
    }
    c->url = el_buf_take(&url);
    if (!c->url) {
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        goto out;
    }
    curl_easy_reset(h);
    if (el_aws_http_setup(h, cfg, c->url, c->errbuf))
        goto curl_fail;
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_HTTPHEADER, c->headers);
    SET(CURLOPT_HEADERFUNCTION, header_cb);
    SET(CURLOPT_HEADERDATA, c);
    SET(CURLOPT_WRITEFUNCTION, write_cb);
    SET(CURLOPT_WRITEDATA, c);
    SET(CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
    SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
    SET(CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME_S);
    /* the Range header is ours (signed); curl must not add its own */
    if (strcmp(c->method, "HEAD") == 0) {
        SET(CURLOPT_NOBODY, 1L);
    } else if (strcmp(c->method, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, c->method);
        if (c->body || strcmp(c->method, "DELETE") != 0) {
            SET(CURLOPT_POSTFIELDS, c->body ? (const char *)c->body : "");
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(c->body ? c->body_len : 0));
        }
    }
    err = EL_OK;
    goto out;
curl_fail:
    err = el_diag_set(diag, EL_EINTERNAL, "libcurl refused an option");
out:
    el_buf_free(&path);
    el_buf_free(&host);
    el_buf_free(&url);
    el_buf_free(&auth);
    if (err)
        s3_call_cleanup(c);
    return err;
}

static bool code_is(const el_s3_error_doc *d, const char *code)
{
    return strcmp(d->code, code) == 0;
}

el_err s3_call_result(el_s3 *s3, s3_call *c, CURLcode rc, bool *retry, el_diag *diag)
{
    const char *b = c->bucket, *k = c->key ? c->key : "";
    const char *sl = k[0] ? "/" : "";
    *retry = false;
    if (rc != CURLE_OK) {
        if (c->data_failed)
            return el_diag_set(diag, EL_EIO, "s3://%s%s%s: the answer does not fit (more bytes "
                               "than asked for, or over the size limit)", b, sl, k);
        const char *m = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
        const char *cert = el_aws_http_hint(m);
        *retry = cert == NULL; /* a certificate does not verify better a second time */
        return el_diag_set(diag, cert ? EL_ECONFIG : EL_ENET, "s3://%s%s%s: %s: %s%s", b, sl,
                           k, s3->endpoint, m, cert ? cert : "");
    }
    if (c->status >= 200 && c->status < 300)
        return EL_OK;
    el_s3_error_doc d;
    if (!el_s3_xml_error(c->err_body.data ? c->err_body.data : "", c->err_body.len, &d))
        memset(&d, 0, sizeof d);
    if (!c->skew_resent && el_skew_correct(s3->skew, d.code, d.message, c->status,
                                           el_aws_http_date(c->h), c->signed_offset)) {
        c->skew_resent = true;
        *retry = true;
        return el_diag_set(diag, EL_ENET, "s3://%s%s%s: S3 refused this machine's clock (%s): "
                           "signing again with S3's time", b, sl, k,
                           d.code[0] ? d.code : "HTTP 403");
    }
    if (code_is(&d, "RequestTimeTooSkewed"))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: this machine's clock is off, and S3 "
                           "refused the request even signed by the time of its own answers "
                           "(RequestTimeTooSkewed): set the clock right (e.g. with chrony or "
                           "systemd-timesyncd)", b, sl, k);
    const char *region = d.region[0] ? d.region : c->bucket_region;
    if (region[0] && strcmp(region, s3->region) != 0 &&
        (c->status == 301 || c->status == 400 || c->status == 403 ||
         code_is(&d, "PermanentRedirect") || code_is(&d, "AuthorizationHeaderMalformed")))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s: the bucket is in region %s, not %s: give "
                           "--region %s (or AWS_REGION=%s)", b, region, s3->region,
                           region, region);
    if (code_is(&d, "NoSuchBucket"))
        return el_diag_set(diag, EL_EIO, "s3://%s: no such bucket (at %s)", b, s3->endpoint);
    if (code_is(&d, "NoSuchKey") || (c->status == 404 && !d.code[0] && k[0]))
        return el_diag_set(diag, EL_EIO, "s3://%s/%s: no such key%s", b, k,
                           d.code[0] ? "" : " (or no such bucket)");
    if (code_is(&d, "NoSuchUpload"))
        return el_diag_set(diag, EL_EIO, "s3://%s/%s: the multipart upload is gone "
                           "(NoSuchUpload)", b, k);
    if (c->status == 403 && !d.code[0])   /* HEAD: no body to say more */
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: access denied (HTTP 403): a wrong "
                           "secret access key, or the credentials (%s) may not read it", b, sl,
                           k, s3->cfg->cred_source ? s3->cfg->cred_source : "as configured");
    if (code_is(&d, "AccessDenied"))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: access denied: the credentials (%s) "
                           "may not %s it", b, sl, k,
                           s3->cfg->cred_source ? s3->cfg->cred_source : "as configured",
                           strcmp(c->method, "GET") == 0 || strcmp(c->method, "HEAD") == 0
                               ? "read" : "write");
    if (code_is(&d, "InvalidAccessKeyId"))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: S3 does not know the access key ID "
                           "(InvalidAccessKeyId; keys from %s)", b, sl, k,
                           s3->cfg->cred_source ? s3->cfg->cred_source : "the configuration");
    if (code_is(&d, "SignatureDoesNotMatch"))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: the request signature does not match "
                           "(SignatureDoesNotMatch): wrong secret access key? (keys from %s)",
                           b, sl, k,
                           s3->cfg->cred_source ? s3->cfg->cred_source : "the configuration");
    if (code_is(&d, "ExpiredToken") || code_is(&d, "InvalidToken"))
        return el_diag_set(diag, EL_ECONFIG, "s3://%s%s%s: the session token is %s (%s)", b, sl,
                           k, code_is(&d, "ExpiredToken") ? "expired" : "invalid", d.code);
    if (c->status == 412 || code_is(&d, "PreconditionFailed"))
        return el_diag_set(diag, EL_EIO, "s3://%s/%s: the object changed while it was being "
                           "read (its ETag is not the one listed): run again", b, k);
    if (c->status == 416 || code_is(&d, "InvalidRange"))
        return el_diag_set(diag, EL_EIO, "s3://%s/%s: range not satisfiable (the object is "
                           "shorter than listed?)", b, k);
    *retry = c->status >= 500 || c->status == 429 || code_is(&d, "SlowDown") ||
             code_is(&d, "RequestTimeout") || code_is(&d, "InternalError") ||
             code_is(&d, "ServiceUnavailable");
    if (d.code[0])
        return el_diag_set(diag, *retry ? EL_ENET : EL_ESERVICE, "s3://%s%s%s: %s: %s (HTTP %ld)",
                           b, sl, k, d.code, d.message, c->status);
    return el_diag_set(diag, *retry ? EL_ENET : EL_ESERVICE, "s3://%s%s%s: HTTP %ld from %s", b,
                       sl, k, c->status, s3->endpoint);
}

/* Runs c to completion with retries. before_retry (may be NULL) adjusts the
 * call between attempts (a ranged GET moves its first byte). */
static el_err run(el_s3 *s3, s3_call *c, void (*before_retry)(s3_call *, void *), void *user,
                  el_diag *diag)
{
    el_err err = EL_OK;
    CURL *h = curl_easy_init();
    if (!h)
        return el_diag_set(diag, EL_ENOMEM, "out of memory for a curl handle");
    for (int attempt = 0;; attempt++) {
        if (attempt > 0 && before_retry)
            before_retry(c, user);
        err = s3_call_setup(s3, h, c, diag);
        if (err)
            break;
        CURLcode rc = curl_easy_perform(h);
        bool retry;
        err = s3_call_result(s3, c, rc, &retry, diag);
        s3_call_cleanup(c);
        if (!err || !retry || attempt + 1 >= s3->attempts)
            break;
        s3_backoff_sleep(s3, (unsigned)attempt);
    }
    curl_easy_cleanup(h);
    return err;
}

static size_t to_buf(void *user, const char *p, size_t n)
{
    return el_buf_append(user, p, n) ? 0 : n;
}

/* ---- operations ---- */

static int cmp_obj(const void *a, const void *b)
{
    return strcmp(((const el_s3_object *)a)->key, ((const el_s3_object *)b)->key);
}

el_err el_s3_list(el_s3 *s3, const char *bucket, const char *prefix, size_t max_objects,
                  el_s3_list_page *out, el_diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!max_objects)
        max_objects = 10000000;
    char *token = NULL;
    el_buf body, query;
    el_buf_init(&body, LIST_BODY_MAX);
    el_buf_init(&query, 8192);
    el_err err = EL_OK;
    for (unsigned pages = 0; !err; pages++) {
        el_buf_reset(&body);
        el_buf_reset(&query);
        if (token)
            err = el_buf_puts(&query, "continuation-token=") ||
                  el_s3_uri_encode(&query, token, strlen(token), 0) || el_buf_putc(&query, '&');
        if (!err)
            err = el_buf_puts(&query, "list-type=2");
        if (!err && prefix && prefix[0])
            err = el_buf_puts(&query, "&prefix=") ||
                  el_s3_uri_encode(&query, prefix, strlen(prefix), 0);
        if (err) {
            el_diag_set(diag, err, "s3://%s/%s: listing request too large", bucket, prefix);
            break;
        }
        s3_call c = { .method = "GET", .bucket = bucket, .key = NULL,
                      .query = el_buf_str(&query), .on_data = to_buf, .on_data_user = &body };
        err = run(s3, &c, NULL, NULL, diag);
        if (err)
            break;
        el_s3_list_page page;
        err = el_s3_xml_list(body.data ? body.data : "", body.len, &page, diag);
        if (err) {
            el_diag_set(diag, err, "s3://%s/%s: %s", bucket, prefix, diag ? diag->msg : "");
            break;
        }
        for (size_t i = 0; !err && i < page.n; i++) {
            if (out->n == max_objects) {
                err = el_diag_set(diag, EL_ELIMIT, "s3://%s/%s: more than %zu objects", bucket,
                                  prefix, max_objects);
                break;
            }
            if (out->n == out->cap) {
                size_t cap = out->cap ? out->cap * 2 : 64;
                el_s3_object *v = realloc(out->objects, cap * sizeof *v);
                if (!v) {
                    err = el_diag_set(diag, EL_ENOMEM, "out of memory");
                    break;
                }
                out->objects = v;
                out->cap = cap;
            }
            out->objects[out->n++] = page.objects[i];
            page.objects[i].key = page.objects[i].etag = NULL;
        }
        free(token);
        token = NULL;
        if (!err && page.truncated) {
            token = page.next_token;
            page.next_token = NULL;
        }
        el_s3_list_page_clear(&page);
        if (!token || pages > 100000)
            break;
    }
    free(token);
    el_buf_free(&body);
    el_buf_free(&query);
    if (err) {
        el_s3_list_page_clear(out);
        return err;
    }
    if (out->n > 1)
        qsort(out->objects, out->n, sizeof *out->objects, cmp_obj);
    return EL_OK;
}

el_err el_s3_head(el_s3 *s3, const char *bucket, const char *key, uint64_t *size, char *etag,
                  size_t etag_cap, el_diag *diag)
{
    s3_call c = { .method = "HEAD", .bucket = bucket, .key = key };
    *size = 0;
    CURL *h = curl_easy_init();
    if (!h)
        return el_diag_set(diag, EL_ENOMEM, "out of memory for a curl handle");
    el_err err = EL_OK;
    for (int attempt = 0;; attempt++) {
        err = s3_call_setup(s3, h, &c, diag);
        if (err)
            break;
        CURLcode rc = curl_easy_perform(h);
        bool retry;
        err = s3_call_result(s3, &c, rc, &retry, diag);
        if (!err) {
            curl_off_t len = -1;
            curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
            *size = len > 0 ? (uint64_t)len : 0;
            if (etag && etag_cap)
                snprintf(etag, etag_cap, "%s", c.etag);
        }
        s3_call_cleanup(&c);
        if (!err || !retry || attempt + 1 >= s3->attempts)
            break;
        s3_backoff_sleep(s3, (unsigned)attempt);
    }
    curl_easy_cleanup(h);
    return err;
}

typedef struct range_ctx {
    el_buf *out;
    size_t base_len;   /* out->len before the first byte of the range */
    uint64_t start;
} range_ctx;

static void range_resume(s3_call *c, void *user)
{
    range_ctx *r = user;
    c->range_first = r->start + (r->out->len - r->base_len);
}

el_err el_s3_get_range(el_s3 *s3, const char *bucket, const char *key, uint64_t start,
                       uint64_t end, const char *etag, el_buf *out, el_diag *diag)
{
    if (end <= start)
        return EL_OK;
    range_ctx r = { out, out->len, start };
    s3_call c = { .method = "GET", .bucket = bucket, .key = key, .has_range = true,
                  .range_first = start, .range_last = end - 1, .if_match = etag,
                  .on_data = to_buf, .on_data_user = out };
    el_err err = run(s3, &c, range_resume, &r, diag);
    if (!err && out->len - r.base_len != end - start)
        err = el_diag_set(diag, EL_EIO, "s3://%s/%s: got %zu bytes of a %llu-byte range",
                          bucket, key, out->len - r.base_len,
                          (unsigned long long)(end - start));
    return err;
}

el_err el_s3_put(el_s3 *s3, const char *bucket, const char *key, const void *data, size_t len,
                 el_diag *diag)
{
    s3_call c = { .method = "PUT", .bucket = bucket, .key = key, .body = data ? data : "",
                  .body_len = len };
    return run(s3, &c, NULL, NULL, diag);
}

el_err el_s3_delete(el_s3 *s3, const char *bucket, const char *key, el_diag *diag)
{
    s3_call c = { .method = "DELETE", .bucket = bucket, .key = key };
    el_err err = run(s3, &c, NULL, NULL, diag);
    return err == EL_EIO && strstr(diag ? diag->msg : "", "no such key") ? EL_OK : err;
}

el_err el_s3_mpu_create(el_s3 *s3, const char *bucket, const char *key, char **upload_id,
                        el_diag *diag)
{
    *upload_id = NULL;
    el_buf body;
    el_buf_init(&body, 1u << 20);
    s3_call c = { .method = "POST", .bucket = bucket, .key = key, .query = "uploads=",
                  .body = "", .body_len = 0, .on_data = to_buf, .on_data_user = &body };
    el_err err = run(s3, &c, NULL, NULL, diag);
    char id[1024];
    if (!err && el_s3_xml_find(body.data ? body.data : "", body.len, "UploadId", id, sizeof id))
        err = el_diag_set(diag, EL_ESERVICE, "s3://%s/%s: no UploadId in the answer to "
                          "CreateMultipartUpload", bucket, key);
    if (!err && !(*upload_id = strdup(id)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_buf_free(&body);
    return err;
}

static el_err upload_query(el_buf *q, int part_no, const char *upload_id)
{
    el_err err = EL_OK;
    if (part_no > 0)
        err = el_buf_printf(q, "partNumber=%d&", part_no);
    return err || el_buf_puts(q, "uploadId=") ||
           el_s3_uri_encode(q, upload_id, strlen(upload_id), 0) ? EL_ENOMEM : EL_OK;
}

el_err el_s3_mpu_part(el_s3 *s3, const char *bucket, const char *key, const char *upload_id,
                      int part_no, const void *data, size_t len, char **etag, el_diag *diag)
{
    *etag = NULL;
    el_buf q;
    el_buf_init(&q, 4096);
    if (upload_query(&q, part_no, upload_id)) {
        el_buf_free(&q);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s3_call c = { .method = "PUT", .bucket = bucket, .key = key, .query = el_buf_str(&q),
                  .body = data ? data : "", .body_len = len };
    /* run() cleans the call up; keep the ETag header it saw */
    el_err err = EL_OK;
    CURL *h = curl_easy_init();
    if (!h)
        err = el_diag_set(diag, EL_ENOMEM, "out of memory for a curl handle");
    for (int attempt = 0; h && !err; attempt++) {
        err = s3_call_setup(s3, h, &c, diag);
        if (err)
            break;
        bool retry;
        err = s3_call_result(s3, &c, curl_easy_perform(h), &retry, diag);
        s3_call_cleanup(&c);
        if (!err) {
            if (!c.etag[0])
                err = el_diag_set(diag, EL_ESERVICE, "s3://%s/%s: part %d uploaded without an "
                                  "ETag", bucket, key, part_no);
            else if (!(*etag = strdup(c.etag)))
                err = el_diag_set(diag, EL_ENOMEM, "out of memory");
            break;
        }
        if (!retry || attempt + 1 >= s3->attempts)
            break;
        err = EL_OK;
        s3_backoff_sleep(s3, (unsigned)attempt);
    }
    curl_easy_cleanup(h);
    el_buf_free(&q);
    return err;
}

static el_err xml_escape(el_buf *b, const char *s)
{
    el_err err = EL_OK;
    for (; !err && *s; s++) {
        switch (*s) {
        case '&': err = el_buf_puts(b, "&amp;"); break;
        case '<': err = el_buf_puts(b, "&lt;"); break;
        case '>': err = el_buf_puts(b, "&gt;"); break;
        case '"': err = el_buf_puts(b, "&quot;"); break;
        default: err = el_buf_putc(b, *s);
        }
    }
    return err;
}

el_err el_s3_mpu_complete(el_s3 *s3, const char *bucket, const char *key, const char *upload_id,
                          char *const *etags, size_t n, el_diag *diag)
{
    el_buf q, body, resp;
    el_buf_init(&q, 4096);
    el_buf_init(&body, 4u << 20);
    el_buf_init(&resp, 1u << 20);
    el_err err = upload_query(&q, 0, upload_id);
    if (!err)
        err = el_buf_puts(&body, "<CompleteMultipartUpload>");
    for (size_t i = 0; !err && i < n; i++) {
        err = el_buf_printf(&body, "<Part><PartNumber>%zu</PartNumber><ETag>", i + 1);
        if (!err)
            err = xml_escape(&body, etags[i]);
        if (!err)
            err = el_buf_puts(&body, "</ETag></Part>");
    }
    if (!err)
        err = el_buf_puts(&body, "</CompleteMultipartUpload>");
    if (err) {
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    } else {
        s3_call c = { .method = "POST", .bucket = bucket, .key = key, .query = el_buf_str(&q),
                      .body = body.data, .body_len = body.len, .on_data = to_buf,
                      .on_data_user = &resp };
        err = run(s3, &c, NULL, NULL, diag);
        el_s3_error_doc d;
        if (!err && el_s3_xml_error(resp.data ? resp.data : "", resp.len, &d))
            err = el_diag_set(diag, EL_ESERVICE, "s3://%s/%s: CompleteMultipartUpload: %s: %s",
                              bucket, key, d.code, d.message);
    }
    el_buf_free(&q);
    el_buf_free(&body);
    el_buf_free(&resp);
    return err;
}

el_err el_s3_mpu_abort(el_s3 *s3, const char *bucket, const char *key, const char *upload_id,
                       el_diag *diag)
{
    el_buf q;
    el_buf_init(&q, 4096);
    el_err err = upload_query(&q, 0, upload_id);
    if (err) {
        el_buf_free(&q);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s3_call c = { .method = "DELETE", .bucket = bucket, .key = key, .query = el_buf_str(&q) };
    err = run(s3, &c, NULL, NULL, diag);
    el_buf_free(&q);
    return err;
}
