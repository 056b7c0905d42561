/*
 * cred_sso.c - credentials from AWS IAM Identity Center (SSO): the access
 * token `aws sso login` caches, exchanged at the portal for the role's
 * credentials (GetRoleCredentials).
 *
 * DESIGN: edgeload never logs in itself (that needs a browser); it reads
 * the token cache the AWS CLI writes, ~/.aws/sso/cache/<sha1>.json, where
 * the name hashed is the sso-session's name (the `sso_session` form) or the
 * start URL (the legacy form), as botocore's SSOTokenLoader computes it.
 * The cache is read again at every fetch, so a user who runs `aws sso
 * login` again while a long load runs lets its next renewal succeed. An
 * expired or refused token is an error that says which command fixes it.
 * The token is not refreshed with its refresh token (the CLI does that when
 * it runs).
 */
#include "aws/cred_source.h"

#include <openssl/evp.h>  /* SHA-1 of the cache key */
#include <stdio.h>        /* snprintf */
#include <stdlib.h>       /* calloc, free */
#include <string.h>       /* strcmp, strlen */
#include <time.h>         /* time */
#include <yajl/yajl_tree.h>

#include "aws/aws_http.h"
#include "aws/aws_internal.h"
#include "aws/sigv4.h"     /* el_sigv4_uri_encode */
#include "common/hex.h"   /* el_hex_encode */

#define MAX_CACHE_FILE (64u * 1024u)

typedef struct sso_source {
    el_cred_source base;
    const el_aws_config *net;
    char *profile;
    char *cache_path;    /* ~/.aws/sso/cache/<sha1>.json */
    char *url;           /* portal + /federation/credentials?... */
} sso_source;

static void sso_destroy(el_cred_source *base)
{
    sso_source *s = (sso_source *)base;
    free(s->base.name);
    free(s->profile);
    free(s->cache_path);
    free(s->url);
    free(s);
}

/* accessToken and expiresAt of the cache file; messages say what to run. */
static el_err read_token(const sso_source *s, char **token, el_diag *diag)
{
    *token = NULL;
    char *text;
    el_diag d;
    el_diag_clear(&d);
    if (el_cred_read_file(s->cache_path, MAX_CACHE_FILE, "SSO token cache", &text, &d))
        return el_diag_set(diag, EL_ECONFIG,
                           "no IAM Identity Center (SSO) token for profile '%s' in %s: run "
                           "aws sso login --profile %s", s->profile, s->cache_path, s->profile);
    yajl_val root = yajl_tree_parse(text, NULL, 0);
    el_aws_wipe_free(text);
    const char *tp[] = {"accessToken", NULL}, *ep[] = {"expiresAt", NULL};
    yajl_val tok = root ? yajl_tree_get(root, tp, yajl_t_string) : NULL;
    yajl_val exp = root ? yajl_tree_get(root, ep, yajl_t_string) : NULL;
    time_t when = 0;
    el_err err = EL_OK;
    if (!tok || !exp || !tok->u.string[0] || el_cred_parse_time(exp->u.string, &when)) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "the IAM Identity Center (SSO) token cache %s of profile '%s' has no "
                          "accessToken and expiresAt: run aws sso login --profile %s",
                          s->cache_path, s->profile, s->profile);
    } else if (when <= time(NULL)) {
        char at[40];
        struct tm tm;
        gmtime_r(&when, &tm);
        strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
        err = el_diag_set(diag, EL_ECONFIG,
                          "the IAM Identity Center (SSO) session of profile '%s' expired at %s: "
                          "run aws sso login --profile %s", s->profile, at, s->profile);
    } else if (!(*token = el_aws_dup(tok->u.string))) {
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (tok)
        explicit_bzero(tok->u.string, strlen(tok->u.string));
    yajl_tree_free(root);
    return err;
}

static el_err sso_fetch(el_cred_source *base, el_cred **out, el_diag *diag)
{
    sso_source *s = (sso_source *)base;
    *out = NULL;
    char *token;
    el_err err = read_token(s, &token, diag);
    if (err)
        return err;
    static const char prefix[] = "x-amz-sso_bearer_token: ";
    size_t tl = strlen(token);
    char *line = malloc(sizeof prefix + tl);
    if (!line) {
        el_aws_wipe_free(token);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, token, tl + 1);
    const char *headers[] = {line, NULL};
    el_http_req req = {.method = "GET", .url = s->url, .headers = headers,
                       .connect_timeout_ms = 5000, .timeout_ms = 15000};
    el_http_resp resp;
    err = el_http_call(s->net, "IAM Identity Center GetRoleCredentials", &req, &resp, diag);
    el_aws_wipe_free(line);
    if (!err) {
        if (resp.status == 401 || resp.status == 403) {
            err = el_diag_set(diag, EL_ECONFIG,
                              "the IAM Identity Center (SSO) token of profile '%s' was refused "
                              "(HTTP %ld): run aws sso login --profile %s", s->profile,
                              resp.status, s->profile);
        } else if (resp.status != 200) {
            err = el_diag_set(diag, resp.status >= 500 || resp.status == 429 ? EL_ENET
                                                                            : EL_ECONFIG,
                              "IAM Identity Center GetRoleCredentials for profile '%s' failed "
                              "(HTTP %ld)", s->profile, resp.status);
        } else {
            static const el_cred_json_spec spec = {
                .object = "roleCredentials", .access_key = "accessKeyId",
                .secret_key = "secretAccessKey", .token = "sessionToken",
                .expiration = "expiration", .expiration_ms = true, .need_token = true,
                .need_expiration = true};
            err = el_cred_from_json(el_buf_str(&resp.body), &spec,
                                    "IAM Identity Center GetRoleCredentials", out, diag);
        }
    }
    el_http_resp_free(&resp);
    el_aws_wipe_free(token);
    return err;
}

/* A setting of the profile, or of its sso-session (which must agree). */
static el_err sso_setting(const el_cred_ctx *ctx, const char *profile, const char *session,
                          const char *key, const char **out)
{
    const char *p = el_cred_profile_get(ctx, profile, key);
    const char *v = session && ctx->cfg ? el_ini_get(ctx->cfg, EL_INI_SSO_SESSION, session, key)
                                        : NULL;
    if (v && !*v)
        v = NULL;
    if (p && v && strcmp(p, v) != 0)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' and its sso-session '%s' set different %s", profile,
                           session, key);
    *out = v ? v : p;
    return EL_OK;
}

el_err el_cred_sso(const el_cred_ctx *ctx, const char *profile, el_cred_source **out)
{
    *out = NULL;
    const char *account = el_cred_profile_get(ctx, profile, "sso_account_id");
    const char *role = el_cred_profile_get(ctx, profile, "sso_role_name");
    if (!account && !role)
        return EL_EOF;
    const char *session = el_cred_profile_get(ctx, profile, "sso_session");
    if (session && (!ctx->cfg || !el_ini_has_section(ctx->cfg, EL_INI_SSO_SESSION, session)))
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' names sso_session '%s', but the config file has no "
                           "[sso-session %s] section", profile, session, session);
    const char *start_url, *sso_region;
    el_err err = sso_setting(ctx, profile, session, "sso_start_url", &start_url);
    if (!err)
        err = sso_setting(ctx, profile, session, "sso_region", &sso_region);
    if (err)
        return err;
    const char *missing = !account ? "sso_account_id" : !role ? "sso_role_name"
                        : !start_url ? "sso_start_url" : !sso_region ? "sso_region" : NULL;
    if (missing)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' is set up for IAM Identity Center (SSO) but has no %s%s",
                           profile, missing, session ? " (nor its sso-session)" : "");
    const char *home = el_cred_env(ctx, "HOME");
    if (!home)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' uses IAM Identity Center (SSO), whose token cache is "
                           "in ~/.aws/sso/cache, but HOME is not set", profile);

    /* the cache file: sha1 of the session name, or of the start URL */
    const char *key = session ? session : start_url;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(key, strlen(key), md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen != 20)
        return el_diag_set(ctx->diag, EL_EINTERNAL, "SHA-1 failed (libcrypto)");
    char hex[41];
    el_hex_encode(md, 20, hex);

    sso_source *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    s->base.fetch = sso_fetch;
    s->base.destroy = sso_destroy;
    s->net = ctx->net;
    el_buf b;
    el_buf_init(&b, 16384);
    err = el_buf_printf(&b, "%s/.aws/sso/cache/%s.json", home, hex);
    s->cache_path = err ? NULL : el_buf_take(&b);
    el_buf_free(&b);

    const char *portal = el_cred_env(ctx, "AWS_ENDPOINT_URL_SSO");
    if (!portal)
        portal = el_cred_env(ctx, "AWS_ENDPOINT_URL");
    el_buf_init(&b, 16384);
    if (portal) {
        size_t n = strlen(portal);
        while (n > 8 && portal[n - 1] == '/')
            n--;
        err = el_buf_append(&b, portal, n);
    } else {
        err = el_buf_printf(&b, "https://portal.sso.%s.amazonaws.com%s", sso_region,
                            strncmp(sso_region, "cn-", 3) == 0 ? ".cn" : "");
    }
    if (!err)
        err = el_buf_puts(&b, "/federation/credentials?account_id=");
    if (!err)
        err = el_sigv4_uri_encode(&b, account, strlen(account), false);
    if (!err)
        err = el_buf_puts(&b, "&role_name=");
    if (!err)
        err = el_sigv4_uri_encode(&b, role, strlen(role), false);
    s->url = err ? NULL : el_buf_take(&b);
    el_buf_free(&b);

    char name[1024];
    snprintf(name, sizeof name, "IAM Identity Center role %s in account %s (profile %s)", role,
             account, profile);
    s->base.name = el_aws_dup(name);
    s->profile = el_aws_dup(profile);
    if (!s->cache_path || !s->url || !s->base.name || !s->profile) {
        sso_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    *out = &s->base;
    return EL_OK;
}
