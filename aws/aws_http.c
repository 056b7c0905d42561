/*
 * aws_http.c - bounded synchronous HTTP calls for the credential sources.
 *
 * DESIGN: these calls are rare (one at start, one per renewal) and each may
 * run on a different thread, so each makes its own easy handle and frees it
 * after: nothing is shared with the clients' connection pools, which the
 * pipeline's threads own. The timeouts are the caller's: the instance
 * metadata service gets one second (a laptop off EC2 must not wait), STS a
 * few.
 */
#include "aws/aws_http.h"

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strchr, strncmp, explicit_bzero */

#include "aws/skew.h"  /* el_http_date_parse */

#define DEFAULT_CONNECT_MS 5000L
#define DEFAULT_TOTAL_MS 20000L
#define DEFAULT_MAX_BODY (1024u * 1024u)

static size_t write_cb(char *data, size_t size, size_t nmemb, void *p)
{
    el_buf *b = p;
    size_t n = size * nmemb;
    return el_buf_append(b, data, n) ? 0 : n;
}

void el_http_url_for_message(const char *url, char *out, size_t cap)
{
    const char *start = url;
    const char *scheme_end = strstr(url, "://");
    const char *host = scheme_end ? scheme_end + 3 : url;
    const char *at = NULL;
    for (const char *p = host; *p && *p != '/' && *p != '?'; p++)
        if (*p == '@')
            at = p;
    size_t qlen = strcspn(url, "?#");
    if (at) {
        snprintf(out, cap, "%.*s%.*s", (int)(host - start), start,
                 (int)(qlen - (size_t)(at + 1 - url)), at + 1);
    } else {
        snprintf(out, cap, "%.*s", (int)qlen, url);
    }
}

el_err el_aws_http_proxy(CURL *h, const el_aws_config *cfg, const char *url)
{
    if (!cfg || !cfg->http_proxy || strncmp(url, "http://", 7) != 0)
        return EL_OK;
    return curl_easy_setopt(h, CURLOPT_PROXY, cfg->http_proxy) == CURLE_OK ? EL_OK
                                                                          : EL_EINTERNAL;
}

el_err el_aws_http_setup(CURL *h, const el_aws_config *cfg, const char *url, char *errbuf)
{
    bool verify = !cfg || cfg->verify_ssl;
    CURLcode rc = CURLE_OK;
#define SET(opt, val) EL_CURL_SET(rc, h, opt, val)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_USERAGENT, "edgeload/" EDGELOAD_VERSION);
    SET(CURLOPT_ERRORBUFFER, errbuf);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_SSL_VERIFYPEER, verify ? 1L : 0L);
    SET(CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
    if (cfg && cfg->ca_bundle)
        SET(CURLOPT_CAINFO, cfg->ca_bundle);
#undef SET
    if (rc != CURLE_OK)
        return EL_EINTERNAL;
    return el_aws_http_proxy(h, cfg, url);
}

const char *el_aws_http_hint(const char *curl_message)
{
    if (curl_message && strstr(curl_message, "407") &&
        (strstr(curl_message, "proxy") || strstr(curl_message, "CONNECT")))
        return " (the proxy refused its credentials: check the user and password in "
               "HTTPS_PROXY or HTTP_PROXY)";
    if (!curl_message || !strstr(curl_message, "certificate"))
        return NULL;
    return " (the server's certificate is not signed by a CA this machine trusts: give "
           "its CA with AWS_CA_BUNDLE or ca_bundle in the profile, or skip the check with "
           "--no-verify-ssl)";
}

time_t el_aws_http_date(CURL *h)
{
    struct curl_header *hd;
    time_t t;
    if (curl_easy_header(h, "Date", 0, CURLH_HEADER, -1, &hd) != CURLHE_OK ||
        !el_http_date_parse(hd->value, strlen(hd->value), &t))
        return 0;
    return t;
}

void el_http_resp_free(el_http_resp *resp)
{
    if (resp->body.data)
        explicit_bzero(resp->body.data, resp->body.cap);
    el_buf_free(&resp->body);
}

el_err el_http_call(const el_aws_config *cfg, const char *what, const el_http_req *req,
                    el_http_resp *resp, el_diag *diag)
{
    resp->status = 0;
    resp->date = 0;
    el_buf_init(&resp->body, req->max_body ? req->max_body : DEFAULT_MAX_BODY);
    char where[512];
    el_http_url_for_message(req->url, where, sizeof where);
    CURL *h = curl_easy_init();
    if (!h)
        return el_diag_set(diag, EL_ENOMEM, "%s: out of memory", what);
    struct curl_slist *hdrs = NULL;
    for (size_t i = 0; req->headers && req->headers[i]; i++) {
        struct curl_slist *n = curl_slist_append(hdrs, req->headers[i]);
        if (!n) {
            curl_slist_free_all(hdrs);
            curl_easy_cleanup(h);
            return el_diag_set(diag, EL_ENOMEM, "%s: out of memory", what);
        }
        hdrs = n;
    }
    /* no "Expect: 100-continue" round trip for these small bodies */
    struct curl_slist *n = curl_slist_append(hdrs, "Expect:");
    if (n)
        hdrs = n;
    char errbuf[CURL_ERROR_SIZE] = "";
    CURLcode rc = CURLE_OK;
#define SET(opt, val) EL_CURL_SET(rc, h, opt, val)
    if (el_aws_http_setup(h, cfg, req->url, errbuf))
        rc = CURLE_FAILED_INIT;
    SET(CURLOPT_HTTPHEADER, hdrs);
    SET(CURLOPT_WRITEFUNCTION, write_cb);
    SET(CURLOPT_WRITEDATA, &resp->body);
    SET(CURLOPT_CONNECTTIMEOUT_MS,
        req->connect_timeout_ms > 0 ? req->connect_timeout_ms : DEFAULT_CONNECT_MS);
    SET(CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : DEFAULT_TOTAL_MS);
    if (strcmp(req->method, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, req->method);
        SET(CURLOPT_POSTFIELDS, req->body ? req->body : "");
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->body_len : 0));
    }
#undef SET
    el_err err = EL_OK;
    if (rc != CURLE_OK) {
        err = el_diag_set(diag, EL_EINTERNAL, "%s: libcurl refused an option", what);
    } else {
        rc = curl_easy_perform(h);
        if (rc == CURLE_WRITE_ERROR) {
            err = el_diag_set(diag, EL_ENET, "%s: the answer of %s is too large", what, where);
        } else if (rc != CURLE_OK) {
            const char *m = errbuf[0] ? errbuf : curl_easy_strerror(rc);
            const char *hint = el_aws_http_hint(m);
            err = el_diag_set(diag, hint ? EL_ECONFIG : EL_ENET, "%s: cannot reach %s: %s%s",
                              what, where, m, hint ? hint : "");
        } else if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status) != CURLE_OK) {
            resp->status = 0;
        } else {
            resp->date = el_aws_http_date(h);
        }
    }
    for (struct curl_slist *l = hdrs; l; l = l->next)
        explicit_bzero(l->data, strlen(l->data)); /* copies of tokens */
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return err;
}
