/*
 * ddb_client.c - DynamoDB requests over libcurl, signed with SigV4.
 *
 * DESIGN: a bulk load sends tens of thousands of small requests, so what a
 * request costs beyond its bytes is kept small:
 *  - requests are pooled: el_ddb_req_free puts the request (its CURL easy
 *    handle, header storage and response buffer) back in the client's pool
 *    and el_ddb_req_new takes one from there, so an easy handle is set up
 *    once (options that never change) and a request only sets its body;
 *  - requests are signed here (aws/sigv4.c), not by libcurl's
 *    CURLOPT_AWS_SIGV4, which derives the signing key and re-parses every
 *    header at each transfer: the key is cached per day, the body is hashed
 *    once per request (a resend re-signs with a fresh date but keeps the
 *    hash), and the headers are a hand-linked curl_slist over storage in
 *    the request, so building them allocates nothing.
 * The synchronous calls use one easy handle of the client, signed the same
 * way, so both paths send byte-identical requests. The signed headers are
 * those botocore signs: content-type, host, x-amz-date, x-amz-target and,
 * with a session token, x-amz-security-token (tests/integration/
 * test_sigv4.py and tests/unit/test_sigv4.c check the two agree). The Host
 * header is sent explicitly, computed from the endpoint as botocore does
 * (lower case, default port left out), so the signed value is the sent one.
 *
 * Connections: the synchronous calls reuse one easy handle (and so its
 * connection); multi-driven requests share the multi handle's connection
 * cache. A CURLSH shares DNS answers and TLS sessions between all handles of
 * a client; it is locked, because the control plane may run on the main
 * thread while the network thread drives the multi handle. Connections are
 * not shared through it (libcurl documents that as unsafe across threads).
 *
 * Like botocore, a response whose x-amz-crc32 header does not match its
 * body is treated as a transient failure: a corrupted UnprocessedItems must
 * not be believed.
 */
#include "dynamo/ddb_client.h"

#include <pthread.h>  /* mutexes for the CURLSH */
#include <stdint.h>   /* uint32_t: the crc */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strlen, strcmp, explicit_bzero */
#include <strings.h>  /* strncasecmp for header names */
#include <time.h>     /* time_t: the signature's date */
#include <zlib.h>     /* crc32 of responses, as botocore checks x-amz-crc32 */

#include "dynamo/ddb_errors.h"    /* the one-line explanations of refusals */
#include "dynamo/ddb_internal.h"
#include "aws/aws_http.h"  /* el_aws_http_setup, el_aws_http_hint */
#include "aws/sigv4.h"
#include "aws/skew.h"      /* the signing clock */

#define EL_DDB_CONNECT_TIMEOUT_MS 10000L
#define EL_DDB_TOTAL_TIMEOUT_MS 120000L

/* What one transfer brings back; reset before each send. */
typedef struct xfer {
    el_buf resp;
    char errbuf[CURL_ERROR_SIZE];
    bool have_crc;
    uint32_t crc;
    char request_id[64];
    double retry_after_ms;     /* a Retry-After header (seconds), 0 when none */
    double amz_retry_after_ms; /* an x-amz-retry-after header (ms), -1 when none */
    unsigned sends;            /* libcurl's sends of the request (prereq_cb) */
} xfer;

/* Requests kept for reuse by a client; more are freed. */
#define EL_DDB_POOL_MAX 256
/* "X-Amz-Target: DynamoDB_20120810." + op */
#define TARGET_PREFIX "X-Amz-Target: DynamoDB_20120810."
#define MAX_OP 128

/* The headers of one request: a curl_slist linked by hand over storage of
 * its own and of the client (never given to curl_slist_free_all). */
typedef struct hdrs {
    struct curl_slist node[6];
    char target[sizeof TARGET_PREFIX + MAX_OP];   /* "X-Amz-Target: ..." */
    char date[16 + EL_SIGV4_DATE_SIZE];           /* "X-Amz-Date: ..." */
    char auth[640];                               /* "Authorization: ..." */
    char payload_hash[EL_SIGV4_HASH_SIZE];        /* of the body being sent */
    time_t signed_at;                             /* second of the signature, -1 none */
    long signed_offset;                           /* the signing clock's offset then */
    bool sign_failed;                             /* no valid signature: do not trust */
    el_cred *cred;                                /* the credentials signed with (a
                                                     reference; its token line is sent) */
} hdrs;

struct el_ddb {
    const el_aws_config *cfg;
    char *url;                 /* endpoint + "/" */
    char *path, *query;        /* of url, as sent: signed */
    char *host_line;           /* "Host: <host[:port]>" as botocore computes it */
    char *type_line;           /* "Content-Type: application/x-amz-json-1.0" */
    el_sigv4 *signer;
    el_skew *skew;             /* the clock requests are signed by (aws/skew.h) */
    long connect_timeout_ms;
    long total_timeout_ms;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    bool locks_ready;
    bool global_init;
    /* idle requests for reuse (el_ddb_req_free/new may run on any thread) */
    pthread_mutex_t pool_mu;
    bool pool_ready;
    el_ddb_req *pool;
    size_t npool;
    /* el_ddb_call's handle and its state (one caller at a time). */
    CURL *sync;
    xfer sync_x;
    hdrs sync_h;
};

struct el_ddb_req {
    el_ddb *ddb;
    CURL *h;
    hdrs hd;
    el_buf body;               /* swapped with the caller's buffer */
    xfer x;
    void *user;
    el_ddb_req *next;          /* in the pool */
};

/* ---- plumbing ---- */

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *p)
{
    (void)h;
    (void)access;
    el_ddb *ddb = p;
    pthread_mutex_lock(&ddb->locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *p)
{
    (void)h;
    el_ddb *ddb = p;
    pthread_mutex_unlock(&ddb->locks[data]);
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *p)
{
    xfer *x = p;
    size_t n = size * nmemb;
    if (el_buf_append(&x->resp, data, n))
        return 0; /* curl fails the transfer with CURLE_WRITE_ERROR */
    return n;
}

/* Value of header `name` in line (case-insensitive name), trimmed; 0 = absent. */
static size_t header_value(const char *line, size_t n, const char *name, const char **value)
{
    size_t k = strlen(name);
    if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
        return 0;
    const char *v = line + k + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    *value = v;
    return (size_t)(end - v);
}

static size_t header_cb(char *line, size_t size, size_t nmemb, void *p)
{
    xfer *x = p;
    size_t n = size * nmemb;
    const char *v;
    size_t vlen;
    if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new response (after a 100 Continue, say): forget the last one's. */
        x->have_crc = false;
        x->request_id[0] = '\0';
        x->retry_after_ms = 0;
        x->amz_retry_after_ms = -1;
    } else if ((vlen = header_value(line, n, "x-amz-retry-after", &v)) > 0 && vlen < 16) {
        /* milliseconds, an integer (botocore ignores anything else) */
        char digits[16];
        memcpy(digits, v, vlen);
        digits[vlen] = '\0';
        char *end;
        long ms = strtol(digits, &end, 10);
        if (*end == '\0' && ms >= 0)
            x->amz_retry_after_ms = (double)ms;
    } else if ((vlen = header_value(line, n, "Retry-After", &v)) > 0 && vlen < 16) {
        /* delay-seconds (an HTTP-date is not what a throttling service sends) */
        char digits[16];
        memcpy(digits, v, vlen);
        digits[vlen] = '\0';
        char *end;
        double secs = strtod(digits, &end);
        if (*end == '\0' && secs > 0 && secs < 3600)
            x->retry_after_ms = secs * 1000.0;
    } else if ((vlen = header_value(line, n, "x-amz-crc32", &v)) > 0 && vlen < 16) {
        char digits[16];
        memcpy(digits, v, vlen);
        digits[vlen] = '\0';
        char *end;
        unsigned long crc = strtoul(digits, &end, 10);
        x->have_crc = *end == '\0' && crc <= 0xFFFFFFFFul;
        x->crc = (uint32_t)crc;
    } else if ((vlen = header_value(line, n, "x-amzn-RequestId", &v)) > 0) {
        snprintf(x->request_id, sizeof x->request_id, "%.*s", (int)vlen, v);
    }
    return n;
}

static void xfer_reset(xfer *x)
{
    el_buf_reset(&x->resp);
    x->errbuf[0] = '\0';
    x->have_crc = false;
    x->request_id[0] = '\0';
    x->retry_after_ms = 0;
    x->amz_retry_after_ms = -1;
    x->sends = 0;
}

static void xfer_init(xfer *x)
{
    el_buf_init(&x->resp, EL_DDB_MAX_RESPONSE);
    xfer_reset(x); /* the reset of an empty buffer is a no-op */
}

/* libcurl calls this right before it sends the request on a connection,
 * again when it resends it on a new one because a reused connection turned
 * out closed: the only way to count those resends. */
static int prereq_cb(void *user, char *remote_ip, char *local_ip, int remote_port,
                     int local_port)
{
    (void)remote_ip;
    (void)local_ip;
    (void)remote_port;
    (void)local_port;
    ((xfer *)user)->sends++;
    return CURL_PREREQFUNC_OK;
}

/* Sets the X-Amz-Target line of h for op. EL_EUSAGE when op is too long. */
static el_err set_target(hdrs *h, const char *op)
{
    size_t n = strlen(op);
    if (n >= MAX_OP)
        return EL_EUSAGE;
    memcpy(h->target, TARGET_PREFIX, sizeof TARGET_PREFIX - 1);
    memcpy(h->target + sizeof TARGET_PREFIX - 1, op, n + 1);
    return EL_OK;
}

/* Links h's header list: Host, Content-Type, X-Amz-Target, X-Amz-Date,
 * [X-Amz-Security-Token of the credentials signed with], Authorization. */
static void link_headers(const el_ddb *ddb, hdrs *h)
{
    char *lines[6];
    size_t n = 0;
    lines[n++] = ddb->host_line;
    lines[n++] = ddb->type_line;
    lines[n++] = h->target;
    lines[n++] = h->date;
    if (h->cred && el_cred_token_line(h->cred))
        lines[n++] = (char *)el_cred_token_line(h->cred); /* curl only reads it */
    lines[n++] = h->auth;
    for (size_t i = 0; i < n; i++) {
        h->node[i].data = lines[i];
        h->node[i].next = i + 1 < n ? &h->node[i + 1] : NULL;
    }
}

static const char *line_value(const char *line)
{
    const char *v = strchr(line, ':');
    return v ? v + 2 : "";
}

/* Signs the request whose body hash is in h, at the current second of the
 * client's signing clock (again only when that second changed since the
 * last signature: a corrected clock changes it), with the provider's
 * current credentials, whose session token it then sends. */
static void sign(el_ddb *ddb, hdrs *h)
{
    long offset;
    time_t now = el_skew_now(ddb->skew, &offset);
    if (h->signed_at == now && !h->sign_failed)
        return;
    h->signed_offset = offset;
    el_sigv4_header sh[3] = {
        {"Host", line_value(ddb->host_line)},
        {"Content-Type", line_value(ddb->type_line)},
        {"X-Amz-Target", line_value(h->target)},
    };
    char date[EL_SIGV4_DATE_SIZE];
    static const char auth_prefix[] = "Authorization: ";
    memcpy(h->auth, auth_prefix, sizeof auth_prefix);
    el_cred_release(h->cred);
    el_err err = el_sigv4_sign_request(ddb->signer, now, "POST", ddb->path, ddb->query, sh, 3,
                                       h->payload_hash, date, h->auth + sizeof auth_prefix - 1,
                                       sizeof h->auth - (sizeof auth_prefix - 1), &h->cred);
    h->sign_failed = err != EL_OK;
    h->signed_at = err ? -1 : now;
    snprintf(h->date, sizeof h->date, "X-Amz-Date: %s", date);
    link_headers(ddb, h); /* the token line is the new credentials' */
}

/* Hashes the body and signs: the headers are ready to send. A signature
 * that failed is h->sign_failed (the request is then not sent:
 * el_ddb_call and el_ddb_req_reset check it); only hashing fails here. */
static el_err sign_body(el_ddb *ddb, hdrs *h, const char *body, size_t len)
{
    el_err err = el_sigv4_payload_hash(body, len, h->payload_hash);
    if (err)
        return err;
    h->signed_at = -1;
    sign(ddb, h);
    return EL_OK;
}

/* The options that stay the same for every request made on h. */
static el_err easy_constant_setup(el_ddb *ddb, CURL *h, hdrs *hd, xfer *x, void *priv)
{
    CURLcode rc = CURLE_OK;
#define SET(opt, val) EL_CURL_SET(rc, h, opt, val)
    if (el_aws_http_setup(h, ddb->cfg, ddb->url, x->errbuf))
        rc = CURLE_FAILED_INIT;
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    SET(CURLOPT_POST, 1L);
    SET(CURLOPT_HTTPHEADER, &hd->node[0]);
    SET(CURLOPT_WRITEFUNCTION, write_cb);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_HEADERFUNCTION, header_cb);
    SET(CURLOPT_HEADERDATA, x);
    SET(CURLOPT_PRIVATE, priv);
    SET(CURLOPT_PREREQFUNCTION, prereq_cb);
    SET(CURLOPT_PREREQDATA, x);
    SET(CURLOPT_EXPECT_100_TIMEOUT_MS, 500L);
    if (ddb->share)
        SET(CURLOPT_SHARE, ddb->share);
#undef SET
    return rc == CURLE_OK ? EL_OK : EL_EINTERNAL;
}

/* The options of one request: its body (must outlive the transfer) and the
 * client's current timeouts. */
static el_err easy_request_setup(const el_ddb *ddb, CURL *h, const char *body, size_t len)
{
    /* No "Expect:" header of ours: bodies over 1 MB get curl's own unsigned
     * "Expect: 100-continue", as botocore leaves expect unsigned too. */
    if (curl_easy_setopt(h, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ddb->connect_timeout_ms) != CURLE_OK ||
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ddb->total_timeout_ms) != CURLE_OK)
        return EL_EINTERNAL;
    return EL_OK;
}

/* "Host: " + the endpoint's host as botocore's _host_from_url gives it
 * (lower case, IPv6 in brackets, port only when not the scheme's default),
 * plus the URL's path and query. */
static el_err parse_endpoint(el_ddb *ddb)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *scheme = NULL, *path = NULL, *query = NULL;
    el_err err = EL_ECONFIG;
    if (!u)
        return EL_ENOMEM;
    if (curl_url_set(u, CURLUPART_URL, ddb->url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
        goto done;
    if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
        port = NULL;
    if (curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK)
        query = NULL;
    for (char *p = host; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    bool default_port = !port || (strcmp(scheme, "http") == 0 && strcmp(port, "80") == 0) ||
                        (strcmp(scheme, "https") == 0 && strcmp(port, "443") == 0);
    el_buf b;
    el_buf_init(&b, 8192);
    if (el_buf_printf(&b, "Host: %s%s%s", host, default_port ? "" : ":",
                      default_port ? "" : port) ||
        !(ddb->host_line = el_buf_take(&b))) {
        el_buf_free(&b);
        goto done;
    }
    ddb->path = strdup(path);
    ddb->query = strdup(query ? query : "");
    err = ddb->path && ddb->query ? EL_OK : EL_ENOMEM;
done:
    curl_free(host);
    curl_free(port);
    curl_free(scheme);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    return err;
}

/* ---- the client ---- */

el_err el_ddb_new(const el_aws_config *cfg, el_ddb **out, el_diag *diag)
{
    *out = NULL;
    if (!cfg || !cfg->region || !cfg->endpoint ||
        (!cfg->creds && (!cfg->access_key || !cfg->secret_key)))
        return el_diag_set(diag, EL_ECONFIG, "incomplete AWS configuration");
    el_ddb *ddb = calloc(1, sizeof *ddb);
    if (!ddb)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    ddb->cfg = cfg;
    ddb->connect_timeout_ms = EL_DDB_CONNECT_TIMEOUT_MS;
    ddb->total_timeout_ms = EL_DDB_TOTAL_TIMEOUT_MS;
    xfer_init(&ddb->sync_x);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_EINTERNAL, "libcurl failed to initialise");
    }
    ddb->global_init = true;

    el_buf url;
    el_buf_init(&url, 8192);
    if (el_buf_puts(&url, cfg->endpoint) || el_buf_putc(&url, '/')) {
        el_buf_free(&url);
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ECONFIG, "endpoint URL too long");
    }
    ddb->url = el_buf_take(&url);
    if (!ddb->url) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_err err = parse_endpoint(ddb);
    if (err) {
        el_ddb_free(ddb);
        return el_diag_set(diag, err, "cannot use endpoint URL '%s'", cfg->endpoint);
    }
    el_sigv4_opts scope = {.region = cfg->signing_region};
    err = el_sigv4_new_config(cfg, "dynamodb", &scope, &ddb->signer);
    if (err) {
        el_ddb_free(ddb);
        return err == EL_EUSAGE
                   ? el_diag_set(diag, EL_ECONFIG, "region name, access key or secret key too long")
                   : el_diag_set(diag, err, "cannot set up request signing");
    }
    if (el_skew_new("DynamoDB", cfg->wall_clock, cfg->wall_clock_user, cfg->on_skew,
                    cfg->on_skew_user, &ddb->skew)) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    ddb->type_line = strdup("Content-Type: application/x-amz-json-1.0");
    if (!ddb->type_line) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (pthread_mutex_init(&ddb->pool_mu, NULL) != 0) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    ddb->pool_ready = true;

    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&ddb->locks[i], NULL);
    ddb->locks_ready = true;
    ddb->share = curl_share_init();
    if (!ddb->share || curl_share_setopt(ddb->share, CURLSHOPT_LOCKFUNC, share_lock) ||
        curl_share_setopt(ddb->share, CURLSHOPT_UNLOCKFUNC, share_unlock) ||
        curl_share_setopt(ddb->share, CURLSHOPT_USERDATA, ddb) ||
        curl_share_setopt(ddb->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) ||
        curl_share_setopt(ddb->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION)) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_EINTERNAL, "libcurl share handle failed");
    }
    ddb->sync = curl_easy_init();
    if (!ddb->sync) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_ENOMEM, "libcurl handle allocation failed");
    }
    ddb->sync_h.signed_at = -1;
    link_headers(ddb, &ddb->sync_h);
    if (easy_constant_setup(ddb, ddb->sync, &ddb->sync_h, &ddb->sync_x, NULL)) {
        el_ddb_free(ddb);
        return el_diag_set(diag, EL_EINTERNAL, "libcurl refused an option");
    }
    *out = ddb;
    return EL_OK;
}

el_err el_ddb_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? EL_OK : EL_EINTERNAL;
}

void el_ddb_global_cleanup(void)
{
    curl_global_cleanup();
}

void el_ddb_set_timeouts(el_ddb *ddb, long connect_ms, long total_ms)
{
    ddb->connect_timeout_ms = connect_ms > 0 ? connect_ms : EL_DDB_CONNECT_TIMEOUT_MS;
    ddb->total_timeout_ms = total_ms > 0 ? total_ms : EL_DDB_TOTAL_TIMEOUT_MS;
}

const el_aws_config *el_ddb_config(const el_ddb *ddb)
{
    return ddb->cfg;
}

el_skew *el_ddb_skew(el_ddb *ddb)
{
    return ddb->skew;
}

static void req_destroy(el_ddb_req *req);

void el_ddb_free(el_ddb *ddb)
{
    if (!ddb)
        return;
    while (ddb->pool) {
        el_ddb_req *r = ddb->pool;
        ddb->pool = r->next;
        req_destroy(r);
    }
    if (ddb->pool_ready)
        pthread_mutex_destroy(&ddb->pool_mu);
    if (ddb->sync)
        curl_easy_cleanup(ddb->sync);
    if (ddb->share)
        curl_share_cleanup(ddb->share);
    if (ddb->locks_ready)
        for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
            pthread_mutex_destroy(&ddb->locks[i]);
    el_buf_free(&ddb->sync_x.resp);
    explicit_bzero(ddb->sync_h.auth, sizeof ddb->sync_h.auth);
    el_cred_release(ddb->sync_h.cred);
    el_sigv4_free(ddb->signer);
    el_skew_free(ddb->skew);
    free(ddb->type_line);
    free(ddb->host_line);
    free(ddb->path);
    free(ddb->query);
    free(ddb->url);
    if (ddb->global_init)
        curl_global_cleanup();
    free(ddb);
}

/* Fills res from a finished transfer on h, signed as hd says. write_cb is
 * the only source of CURLE_WRITE_ERROR: the response outgrew
 * EL_DDB_MAX_RESPONSE. Messages are what the service or curl said; AWS's
 * InvalidSignatureException quotes the canonical request, session token
 * included, so the secret key and the token are redacted from them before
 * anyone can print them. */
static void finish(const el_ddb *ddb, CURL *h, const hdrs *hd, CURLcode code, const xfer *x,
                   el_ddb_result *res)
{
    long status = 0;
    if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
        status = 0;
    el_ddb_classify(code, status, x->resp.data, x->resp.len, res);
    snprintf(res->request_id, sizeof res->request_id, "%s", x->request_id);
    res->sends = x->sends;
    res->server_time = code == CURLE_OK ? el_aws_http_date(h) : 0;
    res->clock_offset = hd->signed_offset;
    if (res->outcome == EL_DDB_THROTTLED || res->outcome == EL_DDB_TRANSIENT)
        res->retry_after_ms = x->amz_retry_after_ms >= 0 ? x->amz_retry_after_ms
                                                         : x->retry_after_ms;
    if (code == CURLE_OK && x->have_crc &&
        (uint32_t)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)el_buf_str(&x->resp),
                        (uInt)x->resp.len) != x->crc) {
        res->outcome = EL_DDB_TRANSIENT;
        snprintf(res->error_type, sizeof res->error_type, "%s", "");
        snprintf(res->message, sizeof res->message,
                 "response body does not match its x-amz-crc32 checksum");
    } else if (code == CURLE_WRITE_ERROR) {
        res->outcome = EL_DDB_FATAL;
        snprintf(res->message, sizeof res->message,
                 "response larger than %u bytes: is the endpoint DynamoDB?",
                 EL_DDB_MAX_RESPONSE);
    } else if (code != CURLE_OK && x->errbuf[0]) {
        snprintf(res->message, sizeof res->message, "%s", x->errbuf);
    }
    el_sigv4_redact(ddb->signer, res->message);
    el_sigv4_redact(ddb->signer, res->error_type);
}

/* One line a newcomer can act on: where to look after a network failure
 * (curl's message says what happened). */
const char *el_ddb_network_hint(const char *curl_message)
{
    const char *cert = el_aws_http_hint(curl_message);
    if (cert)
        return cert;
    if (strstr(curl_message, "resolve"))
        return " (check --endpoint-url and --region: the host name does not resolve)";
    if (strstr(curl_message, "SSL") || strstr(curl_message, "TLS") ||
        strstr(curl_message, "certificate"))
        return " (TLS failed: an http:// endpoint given as https://, or a certificate the "
               "system does not trust; see AWS_CA_BUNDLE)";
    if (strstr(curl_message, "connect"))
        return " (nothing answers there: is the endpoint right and running?)";
    if (strstr(curl_message, "imed out"))
        return " (no answer in time: network or endpoint down?)";
    return "";
}

el_err el_ddb_call(el_ddb *ddb, const char *op, const char *body, size_t len,
                   el_buf *response, el_ddb_result *res, el_diag *diag)
{
    memset(res, 0, sizeof *res);
    res->outcome = EL_DDB_TRANSIENT;
    el_err err = set_target(&ddb->sync_h, op);
    if (!err)
        err = sign_body(ddb, &ddb->sync_h, body, len);
    if (!err && ddb->sync_h.sign_failed) {
        el_sigv4_failure(ddb->signer, res->message, sizeof res->message);
        res->outcome = EL_DDB_FATAL;
        return el_diag_set(diag, EL_ECONFIG, "cannot sign the %s request: %s", op, res->message);
    }
    if (err)
        return el_diag_set(diag, err, "cannot build the %s request", op);
    xfer_reset(&ddb->sync_x);
    err = easy_request_setup(ddb, ddb->sync, body, len);
    if (err)
        return el_diag_set(diag, err, "cannot set up the %s request", op);
    CURLcode code = curl_easy_perform(ddb->sync);
    finish(ddb, ddb->sync, &ddb->sync_h, code, &ddb->sync_x, res);
    if (response && ddb->sync_x.resp.len &&
        el_buf_append(response, ddb->sync_x.resp.data, ddb->sync_x.resp.len))
        return el_diag_set(diag, EL_ENOMEM, "%s response too large for the buffer", op);
    if (code != CURLE_OK)
        return el_diag_set(diag, EL_ENET, "%s request to %s failed: %s%s", op,
                           ddb->cfg->endpoint, res->message, el_ddb_network_hint(res->message));
    return EL_OK;
}

static void req_destroy(el_ddb_req *req)
{
    if (req->h)
        curl_easy_cleanup(req->h);
    el_buf_free(&req->body);
    explicit_bzero(req->hd.auth, sizeof req->hd.auth);
    el_cred_release(req->hd.cred);
    el_buf_free(&req->x.resp);
    free(req);
}

/* A request from the pool, or a new one with its easy handle set up. */
static el_ddb_req *req_get(el_ddb *ddb)
{
    pthread_mutex_lock(&ddb->pool_mu);
    el_ddb_req *req = ddb->pool;
    if (req) {
        ddb->pool = req->next;
        ddb->npool--;
    }
    pthread_mutex_unlock(&ddb->pool_mu);
    if (req)
        return req;
    req = calloc(1, sizeof *req);
    if (!req)
        return NULL;
    req->ddb = ddb;
    xfer_init(&req->x);
    el_buf_init(&req->body, 1);
    link_headers(ddb, &req->hd);
    req->h = curl_easy_init();
    if (!req->h || easy_constant_setup(ddb, req->h, &req->hd, &req->x, req)) {
        req_destroy(req);
        return NULL;
    }
    return req;
}

el_err el_ddb_req_new(el_ddb *ddb, const char *op, el_buf *body, void *user,
                      el_ddb_req **out)
{
    *out = NULL;
    el_ddb_req *req = req_get(ddb);
    if (!req)
        return EL_ENOMEM;
    req->user = user;
    req->next = NULL;
    xfer_reset(&req->x);
    el_err err = set_target(&req->hd, op);
    if (err) {
        el_ddb_req_free(req);
        return err;
    }
    /* the body's storage moves to the request and the request's previous
     * (empty) storage to the caller's buffer, so neither side allocates
     * again for the next request */
    el_buf mine = req->body;
    req->body = *body;
    body->data = mine.data;
    body->cap = mine.cap;
    body->len = 0;
    if (body->data)
        body->data[0] = '\0';
    if (!req->body.data) {
        /* an empty body: an empty string */
        el_buf_init(&req->body, 2);
        if (el_buf_append(&req->body, "", 0)) {
            el_ddb_req_free(req);
            return EL_ENOMEM;
        }
    }
    err = sign_body(ddb, &req->hd, req->body.data, req->body.len);
    if (!err)
        err = easy_request_setup(ddb, req->h, req->body.data, req->body.len);
    if (err) {
        el_ddb_req_free(req);
        return err;
    }
    *out = req;
    return EL_OK;
}

CURL *el_ddb_req_handle(el_ddb_req *req)
{
    return req->h;
}

bool el_ddb_req_reset(el_ddb_req *req)
{
    xfer_reset(&req->x);
    sign(req->ddb, &req->hd); /* a fresh date when the second changed */
    return !req->hd.sign_failed;
}

void el_ddb_req_unsent(el_ddb_req *req, el_ddb_result *res)
{
    memset(res, 0, sizeof *res);
    res->outcome = EL_DDB_FATAL;
    el_sigv4_failure(req->ddb->signer, res->message, sizeof res->message);
}

void el_ddb_req_finish(el_ddb_req *req, CURLcode code, el_ddb_result *res)
{
    finish(req->ddb, req->h, &req->hd, code, &req->x, res);
    if (req->hd.sign_failed) {
        /* only signed requests are sent (el_ddb_req_reset); this keeps
         * the answer to an unsigned one from ever being believed */
        el_ddb_req_unsent(req, res);
    }
}

const char *el_ddb_req_response(const el_ddb_req *req, size_t *len)
{
    if (len)
        *len = req->x.resp.len;
    return el_buf_str(&req->x.resp);
}

const char *el_ddb_req_body(const el_ddb_req *req, size_t *len)
{
    if (len)
        *len = req->body.len;
    return el_buf_str(&req->body);
}

void *el_ddb_req_user(const el_ddb_req *req)
{
    return req->user;
}

void el_ddb_req_free(el_ddb_req *req)
{
    if (!req)
        return;
    el_ddb *ddb = req->ddb;
    req->user = NULL;
    explicit_bzero(req->hd.auth, sizeof req->hd.auth);
    el_cred_release(req->hd.cred);
    req->hd.cred = NULL;
    req->hd.signed_at = -1;
    req->hd.sign_failed = false;
    /* the handle must not point at a body that may go away */
    curl_easy_setopt(req->h, CURLOPT_POSTFIELDS, NULL);
    if (req->body.cap > EL_DDB_POOL_KEEP_BUFFER)
        el_buf_free(&req->body);
    else
        el_buf_reset(&req->body);
    if (req->x.resp.cap > EL_DDB_POOL_KEEP_BUFFER)
        el_buf_free(&req->x.resp);
    else
        el_buf_reset(&req->x.resp);
    pthread_mutex_lock(&ddb->pool_mu);
    bool keep = ddb->npool < EL_DDB_POOL_MAX;
    if (keep) {
        req->next = ddb->pool;
        ddb->pool = req;
        ddb->npool++;
    }
    pthread_mutex_unlock(&ddb->pool_mu);
    if (!keep)
        req_destroy(req);
}
