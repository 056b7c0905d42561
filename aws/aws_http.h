/*
 * aws_http.h - the few HTTP calls credential sources make (STS, IAM
 * Identity Center, the container and instance metadata endpoints), on a
 * libcurl easy handle of their own, and the proxy rule every client of
 * edgeload applies.
 *
 * A call is synchronous and bounded: a connect and a total timeout, an
 * answer of at most max_body bytes. TLS is verified as the configuration
 * says (verify_ssl, ca_bundle); proxies as libcurl reads them from the
 * environment (https_proxy/HTTPS_PROXY, http_proxy, no_proxy/NO_PROXY),
 * plus HTTP_PROXY in capitals for http:// URLs, which the AWS CLI honours
 * and libcurl does not (el_aws_http_proxy).
 *
 * Secrets: the answer body is wiped when it is freed (it holds keys); a
 * request's headers (tokens) are never put in a message. Messages name the
 * URL without its query string.
 *
 * Threads: any thread; each call has its own handle.
 */
#ifndef EL_AWS_HTTP_H
#define EL_AWS_HTTP_H

#include <stdbool.h>    /* bool */
#include <stddef.h>     /* size_t */
#include <time.h>       /* time_t */
#include <curl/curl.h>  /* CURL */

#include "aws/aws_config.h"
#include "common/buf.h"
#include "common/error.h"

typedef struct el_http_req {
    const char *method;          /* "GET", "PUT", "POST" */
    const char *url;
    const char *const *headers;  /* "Name: value" lines, NULL-terminated; NULL = none */
    const char *body;            /* NULL = none */
    size_t body_len;
    long connect_timeout_ms;     /* <= 0: 5 s */
    long timeout_ms;             /* <= 0: 20 s */
    size_t max_body;             /* 0: 1 MB */
} el_http_req;

typedef struct el_http_resp {
    long status;                 /* 0: no HTTP answer */
    el_buf body;                 /* NUL-terminated; wiped and freed by el_http_resp_free */
    time_t date;                 /* the answer's Date header, 0 when none (aws/skew.h) */
} el_http_resp;

/*
 * Makes the request with cfg's TLS and proxy settings (cfg may be NULL:
 * verified, the system's CA). EL_OK when an HTTP answer came (any status:
 * the caller reads resp->status and body); EL_ENET when none did, with diag
 * "<what>: cannot reach <url>: <curl's message>"; EL_ENOMEM. `what` names
 * the source for the message ("container credentials"). resp is
 * initialised here; free it with el_http_resp_free in every case.
 */
el_err el_http_call(const el_aws_config *cfg, const char *what, const el_http_req *req,
                    el_http_resp *resp, el_diag *diag) EL_MUST_USE;

/* Wipes and frees the answer. */
void el_http_resp_free(el_http_resp *resp);

/* Sets a libcurl option on h unless an earlier one failed: rc (a CURLcode
 * variable) keeps the first failure, checked once after the last option. */
#define EL_CURL_SET(rc, h, opt, val)                                            \
    do {                                                                        \
        if ((rc) == CURLE_OK)                                                   \
            (rc) = curl_easy_setopt((h), (opt), (val));                         \
    } while (0)

/*
 * What every client of edgeload sets the same way on a handle for url:
 * the URL, no signals, edgeload's User-Agent, curl's message into errbuf
 * (CURL_ERROR_SIZE bytes, living as long as the transfer), no redirects,
 * TCP keep-alive, TLS verified as cfg says (cfg NULL: verified, the
 * system's CAs) and the proxy rule below. EL_EINTERNAL if libcurl refuses.
 */
el_err el_aws_http_setup(CURL *h, const el_aws_config *cfg, const char *url,
                         char *errbuf) EL_MUST_USE;

/*
 * Applies the proxy rule to h for url: for an http:// URL, when http_proxy
 * is not set and HTTP_PROXY is (cfg->http_proxy), that proxy; otherwise
 * nothing (libcurl's own environment handling). NO_PROXY applies either
 * way (libcurl checks it for every proxy). EL_EINTERNAL if libcurl refuses.
 */
el_err el_aws_http_proxy(CURL *h, const el_aws_config *cfg, const char *url) EL_MUST_USE;

/* For a transfer that failed with curl_message: when it is a certificate
 * that does not verify, or a proxy that refuses its credentials (407), the
 * hint that fixes it (" (the server's certificate is not signed by a CA
 * this machine trusts: ...AWS_CA_BUNDLE... --no-verify-ssl)"), else NULL.
 * Retrying such a failure cannot help. */
const char *el_aws_http_hint(const char *curl_message);

/* The Date header of the answer a transfer on h got (seconds since the
 * epoch), 0 when it had none or one of another form: the service's time,
 * by which a client's signing clock is set right (aws/skew.h). */
time_t el_aws_http_date(CURL *h);

/* Appends url to out without its query string or user info (for messages). */
void el_http_url_for_message(const char *url, char *out, size_t cap);

#endif
