/*
 * cred_container.c - credentials from the container credentials endpoint:
 * ECS tasks and AWS Batch jobs (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, on
 * 169.254.170.2), EKS Pod Identity and other agents
 * (AWS_CONTAINER_CREDENTIALS_FULL_URI with an authorization token).
 *
 * DESIGN: the SDKs send the authorization token only to an endpoint that
 * cannot be someone else's: an https URL, a loopback address, or the
 * addresses ECS and EKS run their agents on; so does this. The token file
 * (AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE, which EKS rotates) is read at
 * every fetch and wins over AWS_CONTAINER_AUTHORIZATION_TOKEN, as in
 * botocore. A fetch tries three times, 2 s each, a second apart (botocore's
 * numbers).
 */
#include "aws/cred_source.h"

#include <arpa/inet.h>  /* inet_pton */
#include <stdio.h>      /* snprintf */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* strchr, strcmp, strlen */
#include <time.h>       /* nanosleep */
#include <curl/curl.h>  /* curl_url to read the host */

#include "aws/aws_http.h"
#include "aws/aws_internal.h"

#define ECS_HOST "169.254.170.2"
#define ATTEMPTS 3
#define MAX_TOKEN (16u * 1024u)

typedef struct container_source {
    el_cred_source base;
    const el_aws_config *net;
    char *url;
    char *token;        /* AWS_CONTAINER_AUTHORIZATION_TOKEN, NULL = none */
    char *token_file;   /* wins over token; read at each fetch */
} container_source;

static void container_destroy(el_cred_source *base)
{
    container_source *s = (container_source *)base;
    free(s->base.name);
    free(s->url);
    el_aws_wipe_free(s->token);
    free(s->token_file);
    free(s);
}

static bool allowed_host(const char *host)
{
    static const char *const hosts[] = {ECS_HOST, "169.254.170.23", "fd00:ec2::23",
                                        "[fd00:ec2::23]", "localhost"};
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++)
        if (strcmp(host, hosts[i]) == 0)
            return true;
    unsigned char a[16];
    if (inet_pton(AF_INET, host, a) == 1)
        return a[0] == 127;
    char h6[64];
    size_t n = strlen(host);
    if (n > 2 && n < sizeof h6 && host[0] == '[' && host[n - 1] == ']') {
        memcpy(h6, host + 1, n - 2);
        h6[n - 2] = '\0';
        host = h6;
    }
    if (inet_pton(AF_INET6, host, a) == 1) {
        static const unsigned char loop6[16] = {[15] = 1};
        return memcmp(a, loop6, 16) == 0;
    }
    return false;
}

el_err el_cred_container_url(const char *relative, const char *full, char **out,
                             el_diag *diag)
{
    *out = NULL;
    if (relative) {
        size_t n = strlen(relative);
        *out = malloc(sizeof "http://" ECS_HOST + n + 1);
        if (!*out)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        snprintf(*out, sizeof "http://" ECS_HOST + n + 1, "http://" ECS_HOST "%s%s",
                 relative[0] == '/' ? "" : "/", relative);
        return EL_OK;
    }
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    el_err err = EL_OK;
    if (!u || curl_url_set(u, CURLUPART_URL, full, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "AWS_CONTAINER_CREDENTIALS_FULL_URI '%s' is not a URL", full);
    } else if (strcmp(scheme, "https") != 0 &&
               !(strcmp(scheme, "http") == 0 && allowed_host(host))) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "AWS_CONTAINER_CREDENTIALS_FULL_URI '%s' is refused: credentials are "
                          "fetched over http only from a loopback address or the ECS/EKS "
                          "agents' (169.254.170.2, 169.254.170.23, fd00:ec2::23); use https",
                          full);
    } else if (!(*out = el_aws_dup(full))) {
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return err;
}

static el_err container_fetch(el_cred_source *base, el_cred **out, el_diag *diag)
{
    container_source *s = (container_source *)base;
    *out = NULL;
    char *file_token = NULL;
    el_err err;
    if (s->token_file &&
        (err = el_cred_read_file(s->token_file, MAX_TOKEN, "container credentials "
                                 "(AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)", &file_token, diag)))
        return err;
    const char *token = file_token ? file_token : s->token;
    char *auth = NULL;
    if (token) {
        if (strchr(token, '\r') || strchr(token, '\n')) {
            el_aws_wipe_free(file_token);
            return el_diag_set(diag, EL_ECONFIG, "container credentials: the authorization "
                               "token holds a line break");
        }
        size_t n = strlen(token) + sizeof "Authorization: ";
        if ((auth = malloc(n)))
            snprintf(auth, n, "Authorization: %s", token);
    }
    el_aws_wipe_free(file_token);
    if (token && !auth)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    const char *headers[] = {"Accept: application/json", auth, NULL};
    el_http_req req = {.method = "GET", .url = s->url, .headers = headers,
                       .connect_timeout_ms = 2000, .timeout_ms = 2000};
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
        if (attempt) {
            struct timespec ts = {1, 0};
            nanosleep(&ts, NULL);
        }
        el_http_resp resp;
        err = el_http_call(s->net, "container credentials", &req, &resp, diag);
        if (!err && resp.status != 200) {
            char where[512];
            el_http_url_for_message(s->url, where, sizeof where);
            err = el_diag_set(diag, resp.status >= 500 ? EL_ENET : EL_ECONFIG,
                              "container credentials: %s answered HTTP %ld%s", where,
                              resp.status, resp.status == 401 || resp.status == 403
                                  ? " (check AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE))" : "");
        } else if (!err) {
            static const el_cred_json_spec spec = {
                .access_key = "AccessKeyId", .secret_key = "SecretAccessKey",
                .token = "Token", .expiration = "Expiration", .need_token = true,
                .need_expiration = true};
            err = el_cred_from_json(el_buf_str(&resp.body), &spec, "container credentials",
                                    out, diag);
        }
        el_http_resp_free(&resp);
        if (err != EL_ENET)
            break;
    }
    el_aws_wipe_free(auth);
    return err;
}

el_err el_cred_container(const el_cred_ctx *ctx, el_cred_source **out)
{
    *out = NULL;
    const char *rel = el_cred_env(ctx, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char *full = el_cred_env(ctx, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    if (!rel && !full)
        return EL_EOF;
    container_source *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    s->base.fetch = container_fetch;
    s->base.destroy = container_destroy;
    s->net = ctx->net;
    el_err err = el_cred_container_url(rel, full, &s->url, ctx->diag);
    if (err) {
        container_destroy(&s->base);
        return err;
    }
    const char *tf = el_cred_env(ctx, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    const char *tok = el_cred_env(ctx, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
    char where[512], name[700];
    el_http_url_for_message(s->url, where, sizeof where);
    snprintf(name, sizeof name, "the container credentials endpoint %s (%s)", where,
             rel ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
                 : "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    s->base.name = el_aws_dup(name);
    s->token_file = el_aws_dup(tf);
    s->token = tf ? NULL : el_aws_dup(tok);
    if (!s->base.name || (tf && !s->token_file) || (!tf && tok && !s->token)) {
        container_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    *out = &s->base;
    return EL_OK;
}
