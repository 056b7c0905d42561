/*
 * cred_imds.c - credentials of an EC2 instance's role from the instance
 * metadata service, IMDSv2: a session token (PUT /latest/api/token), then
 * the role's name and its credentials.
 *
 * DESIGN: this is the last place the chain looks, so on a laptop or a CI
 * runner off EC2 it is asked and does not answer: every call has a 1 s
 * timeout and is tried once (botocore's metadata_service_timeout and
 * num_attempts defaults), so "no credentials found" comes within a couple
 * of seconds. IMDSv1 (no token) is not used: IMDSv2 is what every EC2
 * instance serves, and the only kind an instance can be limited to.
 */
#include "aws/cred_source.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcspn, strcasecmp */
#include <strings.h> /* strcasecmp */

#include "aws/aws_http.h"
#include "aws/aws_internal.h"

#define TIMEOUT_MS 1000L
#define TOKEN_TTL "21600"
#define ROLES_PATH "/latest/meta-data/iam/security-credentials/"

typedef struct imds_source {
    el_cred_source base;
    const el_aws_config *net;
    char *endpoint;   /* no trailing slash */
} imds_source;

static void imds_destroy(el_cred_source *base)
{
    imds_source *s = (imds_source *)base;
    free(s->base.name);
    free(s->endpoint);
    free(s);
}

/* One call; EL_OK only for a 200 (whose body is in resp). */
static el_err imds_call(imds_source *s, const char *method, const char *path,
                        const char *header, el_http_resp *resp, el_diag *diag)
{
    char url[1024];
    snprintf(url, sizeof url, "%s%s", s->endpoint, path);
    const char *headers[] = {header, NULL};
    el_http_req req = {.method = method, .url = url, .headers = headers,
                       .connect_timeout_ms = TIMEOUT_MS, .timeout_ms = TIMEOUT_MS,
                       .max_body = 64 * 1024};
    el_err err = el_http_call(s->net, "EC2 instance metadata", &req, resp, diag);
    if (!err && resp->status != 200)
        err = el_diag_set(diag, EL_ECONFIG, "EC2 instance metadata: %s%s answered HTTP %ld%s",
                          s->endpoint, path, resp->status,
                          resp->status == 404 && strcmp(path, ROLES_PATH) == 0
                              ? " (the instance has no IAM role)" : "");
    return err;
}

static el_err imds_fetch(el_cred_source *base, el_cred **out, el_diag *diag)
{
    imds_source *s = (imds_source *)base;
    *out = NULL;
    el_http_resp resp;
    el_err err = imds_call(s, "PUT", "/latest/api/token",
                           "X-aws-ec2-metadata-token-ttl-seconds: " TOKEN_TTL, &resp, diag);
    char tline[512] = "";
    if (!err) {
        if (resp.body.len == 0 || resp.body.len > 256 || strpbrk(resp.body.data, "\r\n"))
            err = el_diag_set(diag, EL_ECONFIG, "EC2 instance metadata: the session token "
                              "answer is not a token");
        else
            snprintf(tline, sizeof tline, "X-aws-ec2-metadata-token: %s", resp.body.data);
    }
    el_http_resp_free(&resp);
    if (err)
        return err;
    char path[512];
    err = imds_call(s, "GET", ROLES_PATH, tline, &resp, diag);
    if (!err) {
        const char *roles = el_buf_str(&resp.body);
        size_t n = strcspn(roles, "\r\n");
        if (n == 0 || n > 128)
            err = el_diag_set(diag, EL_ECONFIG, "EC2 instance metadata: no IAM role name in "
                              "%s%s", s->endpoint, ROLES_PATH);
        else
            snprintf(path, sizeof path, ROLES_PATH "%.*s", (int)n, roles);
    }
    el_http_resp_free(&resp);
    if (!err)
        err = imds_call(s, "GET", path, tline, &resp, diag);
    if (!err) {
        static const el_cred_json_spec spec = {
            .access_key = "AccessKeyId", .secret_key = "SecretAccessKey", .token = "Token",
            .expiration = "Expiration", .need_token = true, .need_expiration = true};
        err = el_cred_from_json(el_buf_str(&resp.body), &spec, "EC2 instance metadata", out,
                                diag);
    }
    el_http_resp_free(&resp);
    explicit_bzero(tline, sizeof tline);
    return err;
}

el_err el_cred_imds(const el_cred_ctx *ctx, const char *profile, el_cred_source **out)
{
    *out = NULL;
    const char *off = el_cred_env(ctx, "AWS_EC2_METADATA_DISABLED");
    if (off && strcasecmp(off, "true") == 0)
        return EL_EOF;
    const char *ep = el_cred_env(ctx, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
    if (!ep)
        ep = el_cred_profile_get(ctx, profile, "ec2_metadata_service_endpoint");
    if (!ep) {
        const char *mode = el_cred_env(ctx, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
        if (!mode)
            mode = el_cred_profile_get(ctx, profile, "ec2_metadata_service_endpoint_mode");
        ep = mode && strcasecmp(mode, "IPv6") == 0 ? "http://[fd00:ec2::254]"
                                                   : "http://169.254.169.254";
    }
    if (strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "bad EC2 metadata endpoint '%s': it must start with http:// or "
                           "https://", ep);
    imds_source *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    s->base.fetch = imds_fetch;
    s->base.destroy = imds_destroy;
    s->net = ctx->net;
    size_t n = strlen(ep);
    while (n > 8 && ep[n - 1] == '/')
        n--;
    s->endpoint = el_aws_dup_n(ep, n);
    char name[600];
    snprintf(name, sizeof name, "the EC2 instance metadata service %.*s", (int)n, ep);
    s->base.name = el_aws_dup(name);
    if (!s->endpoint || !s->base.name) {
        imds_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    *out = &s->base;
    return EL_OK;
}
