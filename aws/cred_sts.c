/*
 * cred_sts.c - credentials from AWS STS: AssumeRole (signed with the
 * credentials of a source profile or credential_source) and
 * AssumeRoleWithWebIdentity (unsigned, with an OIDC token from a file:
 * EKS's IRSA, GitHub Actions, ...).
 *
 * DESIGN: STS speaks the query protocol: a form-encoded POST, an XML
 * answer. Only the four fields of <Credentials> (and <Error>'s Code and
 * Message) are read, with the bounded scanner of common/xml.h; the rest of
 * the answer is ignored. A fetch tries three times over a second or so
 * when STS throttles, answers 5xx or cannot be reached, since the first
 * fetch decides whether a run starts at all; the provider retries
 * renewals for longer. The web identity token is read from its file at
 * every fetch: Kubernetes rotates it. AssumeRole is signed by the source's
 * own clock (aws/skew.h): when STS refuses this machine's time, the
 * answer's Date sets it right and the fetch is sent again, once.
 */
#include "aws/cred_source.h"

#include <stdio.h>       /* snprintf */
#include <stdlib.h>      /* calloc, free */
#include <string.h>      /* strcmp, strlen, explicit_bzero */
#include <time.h>        /* time, nanosleep */
#include <curl/curl.h>   /* curl_url for the Host header */

#include "aws/aws_http.h"
#include "aws/aws_internal.h"
#include "aws/endpoints.h"  /* the SDKs' endpoint rules */
#include "aws/skew.h"       /* the signing clock */
#include "aws/sigv4.h"
#include "common/xml.h"

#define STS_VERSION "2011-06-15"
#define STS_ATTEMPTS 3
#define STS_MAX_ANSWER (256u * 1024u)
#define MAX_TOKEN_FILE (64u * 1024u)

typedef struct sts_source {
    el_cred_source base;
    const el_aws_config *net;
    char *url;           /* the endpoint + "/" */
    char *host_line;     /* "Host: ..." as sent and signed */
    char *host;          /* its value */
    char *path;          /* of url */
    char signing_region[64]; /* the region AssumeRole is signed for */
    char *role_arn;
    char *session_name;
    char *external_id;   /* NULL = none */
    long duration;       /* 0 = STS's default */
    char *token_file;    /* web identity: read at each fetch */
    el_creds *parent;    /* AssumeRole: the credentials it is signed with */
    el_sigv4 *signer;
    el_skew *skew;       /* the clock AssumeRole is signed by (aws/skew.h) */
} sts_source;

static void sts_destroy(el_cred_source *base)
{
    sts_source *s = (sts_source *)base;
    el_sigv4_free(s->signer);
    el_skew_free(s->skew);
    el_creds_free(s->parent);
    free(s->base.name);
    free(s->url);
    free(s->host_line);
    free(s->path);
    free(s->role_arn);
    free(s->session_name);
    el_aws_wipe_free(s->external_id);
    free(s->token_file);
    free(s);
}

/* ---- the answer ---- */

typedef struct sts_answer {
    char *ak, *sk, *token, *expiration;
    char code[64], message[400];
} sts_answer;

static el_err answer_leaf(void *user, const char *parent, uint64_t parent_id, const char *name,
                          const char *text, size_t len)
{
    (void)parent_id;
    sts_answer *a = user;
    char **field = NULL;
    if (strcmp(parent, "Credentials") == 0) {
        if (strcmp(name, "AccessKeyId") == 0)
            field = &a->ak;
        else if (strcmp(name, "SecretAccessKey") == 0)
            field = &a->sk;
        else if (strcmp(name, "SessionToken") == 0)
            field = &a->token;
        else if (strcmp(name, "Expiration") == 0)
            field = &a->expiration;
    } else if (strcmp(parent, "Error") == 0) {
        if (strcmp(name, "Code") == 0)
            snprintf(a->code, sizeof a->code, "%.*s", (int)len, text);
        else if (strcmp(name, "Message") == 0)
            snprintf(a->message, sizeof a->message, "%.*s", (int)len, text);
        return EL_OK;
    }
    if (!field)
        return EL_OK;
    el_aws_wipe_free(*field);
    *field = el_aws_dup_n(text, len);
    return *field ? EL_OK : EL_ENOMEM;
}

static void answer_clear(sts_answer *a)
{
    el_aws_wipe_free(a->ak);
    el_aws_wipe_free(a->sk);
    el_aws_wipe_free(a->token);
    free(a->expiration);
    memset(a, 0, sizeof *a);
}

/* Control characters (a message is one line) become spaces. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20)
            *s = ' ';
}

/* ---- one call ---- */

static const char *action(const sts_source *s)
{
    return s->token_file ? "AssumeRoleWithWebIdentity" : "AssumeRole";
}

static el_err build_body(const sts_source *s, const char *token, el_buf *body)
{
    el_err err = el_cred_form_put(body, "Action", action(s));
    if (!err)
        err = el_cred_form_put(body, "Version", STS_VERSION);
    if (!err)
        err = el_cred_form_put(body, "RoleArn", s->role_arn);
    if (!err) {
        char name[80];
        const char *n = s->session_name;
        if (!n) {
            snprintf(name, sizeof name, "edgeload-%lld", (long long)time(NULL));
            n = name;
        }
        err = el_cred_form_put(body, "RoleSessionName", n);
    }
    if (!err && s->external_id)
        err = el_cred_form_put(body, "ExternalId", s->external_id);
    if (!err && s->duration > 0) {
        char d[24];
        snprintf(d, sizeof d, "%ld", s->duration);
        err = el_cred_form_put(body, "DurationSeconds", d);
    }
    if (!err && token)
        err = el_cred_form_put(body, "WebIdentityToken", token);
    return err;
}

#define FORM_TYPE "application/x-www-form-urlencoded; charset=utf-8"

/* One attempt. *retry: worth another (throttled, 5xx, no answer, and once
 * (*skew_resent) a refusal of the clock the answer's Date set right). */
static el_err call_once(sts_source *s, const char *body, size_t body_len, const char *token,
                        el_cred **out, bool *retry, bool *skew_resent, el_diag *diag)
{
    *retry = false;
    char what[600];
    snprintf(what, sizeof what, "STS %s of %s", action(s), s->role_arn);
    const char *headers[6];
    size_t nh = 0;
    char date_line[64], auth_line[700];
    el_cred *signer_cred = NULL;
    long offset = 0;
    headers[nh++] = s->host_line;
    headers[nh++] = "Content-Type: " FORM_TYPE;
    if (s->signer) {
        char hash[EL_SIGV4_HASH_SIZE], date[EL_SIGV4_DATE_SIZE];
        static const char prefix[] = "Authorization: ";
        memcpy(auth_line, prefix, sizeof prefix);
        el_sigv4_header sh[2] = {{"Host", s->host}, {"Content-Type", FORM_TYPE}};
        el_err err = el_sigv4_payload_hash(body, body_len, hash);
        if (!err)
            err = el_sigv4_sign_request(s->signer, el_skew_now(s->skew, &offset), "POST",
                                        s->path, "", sh, 2, hash,
                                        date, auth_line + sizeof prefix - 1,
                                        sizeof auth_line - (sizeof prefix - 1), &signer_cred);
        if (err) {
            char why[512];
            el_sigv4_failure(s->signer, why, sizeof why);
            return el_diag_set(diag, err == EL_ECONFIG ? EL_ECONFIG : EL_EINTERNAL,
                               "%s: cannot sign the request: %s", what,
                               why[0] ? why : el_strerror(err));
        }
        snprintf(date_line, sizeof date_line, "X-Amz-Date: %s", date);
        headers[nh++] = date_line;
        headers[nh++] = auth_line;
        if (el_cred_token_line(signer_cred))
            headers[nh++] = el_cred_token_line(signer_cred);
    }
    headers[nh] = NULL;
    el_http_req req = {.method = "POST", .url = s->url, .headers = headers, .body = body,
                       .body_len = body_len, .connect_timeout_ms = 5000, .timeout_ms = 15000,
                       .max_body = STS_MAX_ANSWER};
    el_http_resp resp;
    el_err err = el_http_call(s->net, what, &req, &resp, diag);
    explicit_bzero(auth_line, sizeof auth_line);
    el_cred_release(signer_cred);
    if (err) {
        *retry = err == EL_ENET;
        el_http_resp_free(&resp);
        return err;
    }
    sts_answer a = {0};
    el_err perr = el_xml_walk(el_buf_str(&resp.body), resp.body.len, answer_leaf, &a);
    if (resp.status != 200) {
        one_line(a.message);
        if (token)
            el_creds_redact_text(a.message, token);
        *retry = resp.status >= 500 || resp.status == 429 ||
                 strcmp(a.code, "Throttling") == 0 || strcmp(a.code, "ThrottlingException") == 0;
        if (s->signer && !*skew_resent &&
            el_skew_correct(s->skew, a.code, a.message, resp.status, resp.date, offset))
            *retry = *skew_resent = true; /* signed again by STS's time */
        err = el_diag_set(diag, EL_ECONFIG, "%s failed (HTTP %ld%s%s)%s%s", what, resp.status,
                          a.code[0] ? ", " : "", a.code, a.message[0] ? ": " : "", a.message);
        if (*retry)
            err = EL_ENET;
    } else if (perr || !a.ak || !a.sk || !a.token || !a.expiration) {
        err = el_diag_set(diag, EL_ECONFIG, "%s: the answer is not an STS %sResponse with "
                          "Credentials", what, action(s));
    } else {
        time_t exp;
        if (el_cred_parse_time(a.expiration, &exp))
            err = el_diag_set(diag, EL_ECONFIG, "%s: Expiration is not an ISO 8601 time", what);
        else if ((err = el_cred_new(a.ak, a.sk, a.token, exp, out)))
            el_diag_set(diag, EL_ECONFIG, "%s: the credentials in the answer are empty or too "
                        "long", what);
    }
    answer_clear(&a);
    el_http_resp_free(&resp);
    return err;
}

static el_err sts_fetch(el_cred_source *base, el_cred **out, el_diag *diag)
{
    sts_source *s = (sts_source *)base;
    *out = NULL;
    char *token = NULL;
    el_err err;
    if (s->token_file) {
        char what[600];
        snprintf(what, sizeof what, "web identity token for %s", s->role_arn);
        if ((err = el_cred_read_file(s->token_file, MAX_TOKEN_FILE, what, &token, diag)))
            return err;
    }
    el_buf body;
    el_buf_init(&body, 2 * MAX_TOKEN_FILE + 64 * 1024);
    err = build_body(s, token, &body);
    if (err) {
        el_diag_set(diag, err, "STS %s: request too large", action(s));
    } else {
        bool skew_resent = false;
        for (int attempt = 0; attempt < STS_ATTEMPTS; attempt++) {
            bool retry;
            err = call_once(s, el_buf_str(&body), body.len, token, out, &retry, &skew_resent,
                            diag);
            if (!err || !retry)
                break;
            struct timespec ts = {0, (long)(200000000L << attempt)};
            nanosleep(&ts, NULL);
        }
    }
    if (body.data)
        explicit_bzero(body.data, body.cap);
    el_buf_free(&body);
    el_aws_wipe_free(token);
    return err;
}

/* ---- set-up ---- */

static bool truthy(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0);
}

el_err el_cred_sts_endpoint(const el_cred_ctx *ctx, const char *profile, char **out,
                            char signing_region[64])
{
    *out = NULL;
    snprintf(signing_region, 64, "%s", ctx->region);
    const char *url = NULL;
    bool ignore = truthy(el_cred_env(ctx, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
                  truthy(el_cred_profile_get(ctx, profile, "ignore_configured_endpoint_urls"));
    if (!ignore) {
        url = el_cred_env(ctx, "AWS_ENDPOINT_URL_STS");
        if (!url)
            url = el_cred_env(ctx, "AWS_ENDPOINT_URL");
        const char *services = el_cred_profile_get(ctx, profile, "services");
        if (!url && services && ctx->cfg)
            url = el_ini_get(ctx->cfg, EL_INI_SERVICES, services, "sts.endpoint_url");
        if (!url)
            url = el_cred_profile_get(ctx, profile, "endpoint_url");
    }
    el_aws_endpoint rules;
    if (!url || !*url) {
        bool fips = ctx->net && ctx->net->use_fips;
        bool dualstack = ctx->net && ctx->net->use_dualstack;
        el_diag d;
        el_diag_clear(&d);
        if (el_aws_endpoint_resolve("sts", ctx->region, fips, dualstack, &rules, &d))
            return el_diag_set(ctx->diag, EL_ECONFIG, "%s: give an endpoint with "
                               "AWS_ENDPOINT_URL_STS, or turn the variant off (%s)", d.msg,
                               EL_AWS_VARIANT_SETTINGS);
        url = rules.url;
        snprintf(signing_region, 64, "%s", rules.signing_region);
    }
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "bad STS endpoint URL '%s': it must start with http:// or https://",
                           url);
    size_t n = strlen(url);
    while (n > 8 && url[n - 1] == '/')
        n--;
    *out = el_aws_dup_n(url, n);
    return *out ? EL_OK : el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
}

/* url, path and the Host line (as botocore computes Host: lower case, no
 * default port). */
static el_err set_endpoint(sts_source *s, const char *endpoint, el_diag *diag)
{
    size_t n = strlen(endpoint);
    s->url = malloc(n + 2);
    if (!s->url)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    memcpy(s->url, endpoint, n);
    memcpy(s->url + n, "/", 2);
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *scheme = NULL, *path = NULL;
    el_err err = EL_OK;
    if (!u || curl_url_set(u, CURLUPART_URL, s->url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
        err = el_diag_set(diag, EL_ECONFIG, "bad STS endpoint URL '%s'", endpoint);
    } else {
        if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
            port = NULL;
        for (char *p = host; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        bool dflt = !port || (strcmp(scheme, "http") == 0 && strcmp(port, "80") == 0) ||
                    (strcmp(scheme, "https") == 0 && strcmp(port, "443") == 0);
        size_t cap = strlen(host) + (port ? strlen(port) : 0) + 16;
        s->host_line = malloc(cap);
        s->path = el_aws_dup(path);
        if (!s->host_line || !s->path) {
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        } else {
            snprintf(s->host_line, cap, "Host: %s%s%s", host, dflt ? "" : ":",
                     dflt ? "" : port);
            s->host = s->host_line + 6;
        }
    }
    curl_free(host);
    curl_free(port);
    curl_free(scheme);
    curl_free(path);
    curl_url_cleanup(u);
    return err;
}

static el_err sts_new(const el_cred_ctx *ctx, const char *profile, sts_source **out)
{
    *out = NULL;
    sts_source *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    s->base.fetch = sts_fetch;
    s->base.destroy = sts_destroy;
    s->net = ctx->net;
    char *endpoint;
    const el_aws_config *n = ctx->net;
    if (el_skew_new("STS", n ? n->wall_clock : NULL, n ? n->wall_clock_user : NULL,
                    n ? n->on_skew : NULL, n ? n->on_skew_user : NULL, &s->skew)) {
        sts_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    el_err err = el_cred_sts_endpoint(ctx, profile, &endpoint, s->signing_region);
    if (!err) {
        err = set_endpoint(s, endpoint, ctx->diag);
        free(endpoint);
    }
    if (err) {
        sts_destroy(&s->base);
        return err;
    }
    *out = s;
    return EL_OK;
}

el_err el_cred_web_identity(const el_cred_ctx *ctx, const char *profile,
                            const char *token_file, const char *role_arn,
                            const char *session_name, const char *where,
                            el_cred_source **out)
{
    *out = NULL;
    sts_source *s;
    el_err err = sts_new(ctx, profile, &s);
    if (err)
        return err;
    char name[1024];
    snprintf(name, sizeof name, "STS AssumeRoleWithWebIdentity %s (%s)", role_arn, where);
    s->base.name = el_aws_dup(name);
    s->role_arn = el_aws_dup(role_arn);
    s->session_name = el_aws_dup(session_name);
    err = el_cred_expand_home(ctx, token_file, &s->token_file);
    if (!err && (!s->base.name || !s->role_arn || (session_name && !s->session_name)))
        err = el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    if (err) {
        sts_destroy(&s->base);
        return err;
    }
    *out = &s->base;
    return EL_OK;
}

el_err el_cred_assume_role(const el_cred_ctx *ctx, const char *profile,
                           const el_role_opts *role, el_creds *parent,
                           el_cred_source **out)
{
    *out = NULL;
    sts_source *s;
    el_err err = sts_new(ctx, profile, &s);
    if (err) {
        el_creds_free(parent);
        return err;
    }
    s->parent = parent;
    char name[1024];
    snprintf(name, sizeof name, "STS AssumeRole %s (profile %s, with credentials from %s)",
             role->role_arn, profile, el_creds_source(parent));
    s->base.name = el_aws_dup(name);
    s->role_arn = el_aws_dup(role->role_arn);
    s->session_name = el_aws_dup(role->session_name);
    s->external_id = el_aws_dup(role->external_id);
    s->duration = role->duration_seconds;
    if (!s->base.name || !s->role_arn || (role->session_name && !s->session_name) ||
        (role->external_id && !s->external_id)) {
        sts_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    if ((err = el_sigv4_new_provider(parent, s->signing_region, "sts", NULL, &s->signer))) {
        sts_destroy(&s->base);
        return el_diag_set(ctx->diag, err, "cannot set up signing for STS");
    }
    *out = &s->base;
    return EL_OK;
}
