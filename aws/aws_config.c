/*
 * aws_config.c - resolving region, endpoint and credentials like the AWS CLI.
 *
 * DESIGN: the two shared files are parsed once (aws/ini.c), then each
 * setting is looked up in precedence order; the credentials last, by the
 * chain of aws/cred_chain.c, which needs the region, the TLS and the proxy
 * settings already resolved (its sources call STS and other endpoints).
 * The configuration owns the credential provider it made: every client of
 * a run signs with that one provider, so a renewal serves them all.
 *
 * Secrets pass through file buffers and parsed values; every such buffer is
 * wiped before it is freed, and no message ever includes a value read from a
 * credentials file (parse errors name the file and line only).
 */
#include "aws/aws_config.h"

#include <ctype.h>     /* isalnum */
#include <errno.h>     /* errno */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free, strtol, getenv */
#include <string.h>    /* strlen, strcmp, strncmp */
#include <strings.h>   /* strcasecmp */

#include "aws/aws_internal.h"  /* string helpers */
#include "aws/cred_source.h"   /* the credential chain */
#include "aws/endpoints.h"     /* the SDKs' endpoint rules */
#include "aws/ini.h"
#include "common/buf.h"

/* ---- resolution ---- */

typedef struct resolver {
    el_getenv_fn getenv_fn;
    const el_aws_opts *opts;
    el_diag *diag;
} resolver;

/* An environment variable, NULL when unset or empty. */
static const char *env(const resolver *r, const char *name)
{
    const char *v = r->getenv_fn(name);
    return v && *v ? v : NULL;
}

static const char *opt(const char *v)
{
    return v && *v ? v : NULL;
}

/* ~ and ~/x expand to HOME. *out is malloc'd. */
static el_err expand_home(const resolver *r, const char *path, char **out)
{
    const char *home = env(r, "HOME");
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home) {
        el_buf b;
        el_buf_init(&b, 8192);
        if (el_buf_puts(&b, home) || el_buf_puts(&b, path + 1)) {
            el_buf_free(&b);
            return el_diag_set(r->diag, EL_ENOMEM, "out of memory");
        }
        *out = el_buf_take(&b);
    } else {
        *out = el_aws_dup(path);
    }
    return *out ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

/* The path of a shared file: the variable if set, else ~/.aws/<name>.
 * *out is NULL when neither is known (no HOME). */
static el_err shared_path(const resolver *r, const char *var, const char *name, char **out)
{
    *out = NULL;
    const char *p = env(r, var);
    if (p)
        return expand_home(r, p, out);
    const char *home = env(r, "HOME");
    if (!home)
        return EL_OK;
    el_buf b;
    el_buf_init(&b, 8192);
    if (el_buf_printf(&b, "%s/.aws/%s", home, name)) {
        el_buf_free(&b);
        return el_diag_set(r->diag, EL_ENOMEM, "out of memory");
    }
    *out = el_buf_take(&b);
    return *out ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

/* Region names as botocore validates them: they end up in a URL and in the
 * signature scope, so anything else is refused early. */
static bool valid_region(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = isalnum(c) || (c == '-' && i > 0 && i + 1 < n);
        if (!ok)
            return false;
    }
    return true;
}

static el_err set_str(char **dst, const char *src, el_diag *diag)
{
    free(*dst);
    *dst = el_aws_dup(src);
    return *dst ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
}

/* A profile's setting from the config file. */
static const char *profile_get(const el_ini *cfg, const char *profile, const char *key)
{
    return el_ini_get(cfg, EL_INI_PROFILE, profile, key);
}

/* endpoint_url for dynamodb from the profile's `services` section, if any. */
static const char *services_endpoint(const el_ini *cfg, const char *profile)
{
    const char *services = profile_get(cfg, profile, "services");
    if (!services)
        return NULL;
    return el_ini_get(cfg, EL_INI_SERVICES, services, "dynamodb.endpoint_url");
}

static bool truthy(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 ||
                 strcmp(v, "TRUE") == 0 || strcmp(v, "1") == 0);
}

/* A true/false setting read from `where`. */
static el_err parse_bool(const resolver *r, const char *where, const char *v, bool *on)
{
    if (strcasecmp(v, "true") != 0 && strcasecmp(v, "false") != 0)
        return el_diag_set(r->diag, EL_ECONFIG, "bad %s '%s': it must be true or false", where,
                           v);
    *on = strcasecmp(v, "true") == 0;
    return EL_OK;
}

/* "KEY in FILE [profile P]", for messages. */
static void profile_where(const el_ini *cfg, const char *profile, const char *key, char *out,
                          size_t cap)
{
    snprintf(out, cap, "%s in %s [%s%s]", key, cfg->path ? cfg->path : "the config file",
             strcmp(profile, "default") ? "profile " : "", profile);
}

/* A use_*_endpoint setting: the environment's, else the profile's. *on is
 * left alone when neither is set. */
static el_err resolve_variant(const resolver *r, const el_ini *cfg, const char *profile,
                              const char *var, const char *key, bool *on)
{
    char where[1024];
    const char *v = env(r, var);
    if (v)
        snprintf(where, sizeof where, "%s", var);
    else if ((v = opt(profile_get(cfg, profile, key))))
        profile_where(cfg, profile, key, where, sizeof where);
    else
        return EL_OK;
    return parse_bool(r, where, v, on);
}

/* FIPS and dual-stack; S3's dual-stack as botocore reads it: the profile's
 * s3 section first, then as for the others. */
static el_err resolve_variants(const resolver *r, const el_ini *cfg, el_aws_config *c)
{
    el_err err = resolve_variant(r, cfg, c->profile, "AWS_USE_FIPS_ENDPOINT",
                                 "use_fips_endpoint", &c->use_fips);
    if (!err)
        err = resolve_variant(r, cfg, c->profile, "AWS_USE_DUALSTACK_ENDPOINT",
                              "use_dualstack_endpoint", &c->use_dualstack);
    c->s3_dualstack = c->use_dualstack;
    const char *s3 = opt(profile_get(cfg, c->profile, "s3.use_dualstack_endpoint"));
    if (!err && s3) {
        char where[1024];
        profile_where(cfg, c->profile, "s3.use_dualstack_endpoint", where, sizeof where);
        err = parse_bool(r, where, s3, &c->s3_dualstack);
    }
    return err;
}

static el_err resolve_endpoint(const resolver *r, const el_ini *cfg, el_aws_config *c)
{
    const char *from = "--endpoint-url";
    const char *url = opt(r->opts->endpoint_url);
    bool ignore_configured = truthy(env(r, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
        truthy(profile_get(cfg, c->profile, "ignore_configured_endpoint_urls"));
    if (!url && !ignore_configured) {
        if ((url = env(r, "AWS_ENDPOINT_URL_DYNAMODB")))
            from = "AWS_ENDPOINT_URL_DYNAMODB";
        else if ((url = env(r, "AWS_ENDPOINT_URL")))
            from = "AWS_ENDPOINT_URL";
        else if ((url = opt(services_endpoint(cfg, c->profile))))
            from = "the services section of the config file";
        else if ((url = opt(profile_get(cfg, c->profile, "endpoint_url"))))
            from = "endpoint_url in the config file";
    }
    el_buf b;
    el_buf_init(&b, 4096);
    el_err err;
    if (url) {
        if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
            return el_diag_set(r->diag, EL_ECONFIG,
                               "bad endpoint URL '%s' from %s: it must start with "
                               "http:// or https://", url, from);
        }
        size_t n = strlen(url);
        while (n > 8 && url[n - 1] == '/')
            n--;
        err = el_buf_append(&b, url, n);
        if (!err)
            err = set_str(&c->signing_region, c->region, r->diag);
    } else {
        el_aws_endpoint ep;
        el_diag d;
        el_diag_clear(&d);
        if ((err = el_aws_endpoint_resolve("dynamodb", c->region, c->use_fips, c->use_dualstack,
                                           &ep, &d)))
            return el_diag_set(r->diag, err, "%s: give an endpoint with --endpoint-url, or turn "
                               "the variant off (%s)", d.msg, EL_AWS_VARIANT_SETTINGS);
        err = el_buf_puts(&b, ep.url);
        if (!err)
            err = set_str(&c->signing_region, ep.signing_region, r->diag);
    }
    if (err) {
        el_buf_free(&b);
        return err == EL_ENOMEM ? err : el_diag_set(r->diag, EL_ECONFIG, "endpoint URL too long");
    }
    c->endpoint = el_buf_take(&b);
    return c->endpoint ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

static el_err resolve_attempts(const resolver *r, const el_ini *cfg, el_aws_config *c)
{
    const char *from = "AWS_MAX_ATTEMPTS";
    const char *v = env(r, "AWS_MAX_ATTEMPTS");
    if (!v) {
        v = opt(profile_get(cfg, c->profile, "max_attempts"));
        from = "max_attempts in the config file";
    }
    if (!v)
        return EL_OK;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 1000)
        return el_diag_set(r->diag, EL_ECONFIG,
                           "bad %s '%s': it must be a whole number from 1 to 1000", from, v);
    c->max_attempts = (int)n;
    return EL_OK;
}

static const char *process_env(const char *name)
{
    return getenv(name);
}

el_err el_aws_config_resolve(const el_aws_opts *opts, el_getenv_fn getenv_fn,
                             el_aws_config **out, char *warning, size_t warning_len,
                             el_diag *diag)
{
    static const el_aws_opts no_opts = {0};
    resolver r = {getenv_fn ? getenv_fn : process_env, opts ? opts : &no_opts, diag};
    el_ini creds = {0}, cfg = {0};
    char *path = NULL;
    el_err err;
    *out = NULL;
    if (warning && warning_len)
        warning[0] = '\0';

    el_aws_config *c = calloc(1, sizeof *c);
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    c->verify_ssl = !r.opts->no_verify_ssl;
    c->on_skew = r.opts->on_skew;
    c->on_skew_user = r.opts->on_skew_user;

    /* Profile first: every file lookup depends on it. */
    bool explicit_profile = opt(r.opts->profile) != NULL;
    const char *profile = opt(r.opts->profile);
    if (!profile)
        profile = env(&r, "AWS_PROFILE");
    if (!profile)
        profile = env(&r, "AWS_DEFAULT_PROFILE");
    bool named_profile = profile != NULL;
    if (!profile)
        profile = "default";
    if ((err = set_str(&c->profile, profile, diag)))
        goto fail;

    if ((err = shared_path(&r, "AWS_SHARED_CREDENTIALS_FILE", "credentials", &path)))
        goto fail;
    if (path) {
        err = el_ini_load(&creds, path, false, diag);
        free(path);
        path = NULL;
        if (err)
            goto fail;
    }
    if ((err = shared_path(&r, "AWS_CONFIG_FILE", "config", &path)))
        goto fail;
    if (path) {
        err = el_ini_load(&cfg, path, true, diag);
        free(path);
        path = NULL;
        if (err)
            goto fail;
    }

    if (named_profile && strcmp(profile, "default") != 0 &&
        !el_ini_has_section(&creds, EL_INI_PROFILE, profile) &&
        !el_ini_has_section(&cfg, EL_INI_PROFILE, profile)) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "profile '%s' not found: looked in %s and %s", profile,
                          creds.path ? creds.path : "(no credentials file)",
                          cfg.path ? cfg.path : "(no config file)");
        goto fail;
    }

    const char *region = opt(r.opts->region);
    const char *region_from = "--region";
    if (!region && (region = env(&r, "AWS_REGION")))
        region_from = "AWS_REGION";
    if (!region && (region = env(&r, "AWS_DEFAULT_REGION")))
        region_from = "AWS_DEFAULT_REGION";
    if (!region && (region = opt(profile_get(&cfg, profile, "region"))))
        region_from = "region in the config file";
    if (!region) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "no region: use --region, AWS_REGION or AWS_DEFAULT_REGION, or "
                          "set region in %s [%s%s]",
                          cfg.path ? cfg.path : "~/.aws/config",
                          strcmp(profile, "default") ? "profile " : "", profile);
        goto fail;
    }
    if (!valid_region(region)) {
        err = el_diag_set(diag, EL_ECONFIG, "bad region '%s' from %s", region, region_from);
        goto fail;
    }
    if ((err = set_str(&c->region, region, diag)))
        goto fail;
    char region_where[1024];
    if (strcmp(region_from, "region in the config file") == 0)
        profile_where(&cfg, profile, "region", region_where, sizeof region_where);
    else
        snprintf(region_where, sizeof region_where, "%s", region_from);
    if ((err = set_str(&c->region_source, region_where, diag)))
        goto fail;

    if ((err = resolve_variants(&r, &cfg, c)))
        goto fail;
    if ((err = resolve_endpoint(&r, &cfg, c)))
        goto fail;
    if ((err = resolve_attempts(&r, &cfg, c)))
        goto fail;
    const char *ca = env(&r, "AWS_CA_BUNDLE");
    if (!ca)
        ca = opt(profile_get(&cfg, profile, "ca_bundle"));
    if (ca && (err = expand_home(&r, ca, &c->ca_bundle)))
        goto fail;

    if (!env(&r, "http_proxy") && env(&r, "HTTP_PROXY") &&
        (err = set_str(&c->http_proxy, env(&r, "HTTP_PROXY"), diag)))
        goto fail;

    el_cred_ctx cctx = {r.getenv_fn, &creds, &cfg, c->region, c, diag};
    if ((err = el_cred_chain_resolve(&cctx, profile, explicit_profile, &c->creds, warning,
                                     warning_len)))
        goto fail;
    if ((err = set_str(&c->cred_source, el_creds_source(c->creds), diag)))
        goto fail;

    el_ini_clear(&creds);
    el_ini_clear(&cfg);
    *out = c;
    return EL_OK;

fail:
    el_ini_clear(&creds);
    el_ini_clear(&cfg);
    el_aws_config_free(c);
    return err;
}

el_aws_config *el_aws_config_ref(el_aws_config *cfg)
{
    cfg->extra_refs++;
    return cfg;
}

void el_aws_config_free(el_aws_config *cfg)
{
    if (!cfg)
        return;
    if (cfg->extra_refs > 0) {
        cfg->extra_refs--;
        return;
    }
    el_creds_free(cfg->creds); /* first: its sources use the settings below */
    free(cfg->region);
    free(cfg->endpoint);
    free(cfg->signing_region);
    free(cfg->profile);
    el_aws_wipe_free(cfg->access_key);
    el_aws_wipe_free(cfg->secret_key);
    el_aws_wipe_free(cfg->session_token);
    free(cfg->cred_source);
    free(cfg->region_source);
    free(cfg->ca_bundle);
    el_aws_wipe_free(cfg->http_proxy); /* may hold a proxy password */
    explicit_bzero(cfg, sizeof *cfg);
    free(cfg);
}
