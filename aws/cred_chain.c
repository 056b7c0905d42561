/*
 * cred_chain.c - which source a run's credentials come from, in the order
 * botocore's default chain looks (aws_config.h lists it).
 *
 * DESIGN: the chain is a sequence of "does this apply?" checks over the
 * environment and the profile's merged settings; the first that applies
 * makes a source and the provider fetches from it at once, so a source that
 * applies but fails (an STS refusal, an expired SSO session) stops the
 * resolve with its own message instead of falling through to a source the
 * user did not mean. Only the last two, the container and instance
 * metadata endpoints, are tried by asking: the container one only when its
 * variables say so, the instance metadata service with 1 s timeouts.
 * Every place looked at is listed in the "no credentials found" message.
 *
 * Roles: a profile's role_arn is assumed with the credentials of its
 * source_profile, resolved by the same steps (a source profile that itself
 * has role_arn and no keys is assumed in turn, at most MAX_ROLE_DEPTH roles
 * deep, a loop refused) or of its credential_source. mfa_serial is refused:
 * a batch job has nobody to type the code.
 */
#include "aws/cred_source.h"

#include <errno.h>    /* errno */
#include <stdarg.h>   /* va_list for place */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* strtol */
#include <string.h>   /* strcmp, strcasecmp */
#include <strings.h>  /* strcasecmp */

#define MAX_ROLE_DEPTH 5
#define PLACES_MAX 2048

typedef struct places {
    char text[PLACES_MAX];
    size_t used;
} places;

static void place(places *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void place(places *p, const char *fmt, ...)
{
    if (!p || p->used >= sizeof p->text)
        return;
    if (p->used) {
        int w = snprintf(p->text + p->used, sizeof p->text - p->used, ", ");
        if (w > 0)
            p->used += (size_t)w;
        if (p->used >= sizeof p->text)
            return;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(p->text + p->used, sizeof p->text - p->used, fmt, ap);
    va_end(ap);
    if (w > 0)
        p->used += (size_t)w;
}

static bool profile_exists(const el_cred_ctx *ctx, const char *profile)
{
    return (ctx->creds && el_ini_has_section(ctx->creds, EL_INI_PROFILE, profile)) ||
           (ctx->cfg && el_ini_has_section(ctx->cfg, EL_INI_PROFILE, profile));
}

static bool has_static_keys(const el_cred_ctx *ctx, const char *profile)
{
    return el_cred_profile_get(ctx, profile, "aws_access_key_id") ||
           el_cred_profile_get(ctx, profile, "aws_secret_access_key");
}

/* A source made (or EL_EOF), turned into the provider. *src is read only
 * after `made` is known: the caller's call that made it ran first. */
static el_err start(const el_cred_ctx *ctx, el_err made, el_cred_source *const *src,
                    el_creds **out)
{
    if (made)
        return made;
    return el_creds_new(*src, out, ctx->diag);
}

/* The keys of one file's section, when it has any. */
static el_err file_keys(const el_cred_ctx *ctx, const el_ini *f, const char *profile,
                        bool config_file, el_creds **out, places *pl, char *warning,
                        size_t warning_len)
{
    char where[1024];
    if (!f || !f->path) {
        place(pl, config_file ? "the config file (HOME and AWS_CONFIG_FILE unset)"
                              : "the shared credentials file (HOME and "
                                "AWS_SHARED_CREDENTIALS_FILE unset)");
        return EL_EOF;
    }
    if (!config_file || strcmp(profile, "default") == 0)
        snprintf(where, sizeof where, "%s [%s]", f->path, profile);
    else
        snprintf(where, sizeof where, "%s [profile %s]", f->path, profile);
    const char *ak = el_ini_get(f, EL_INI_PROFILE, profile, "aws_access_key_id");
    const char *sk = el_ini_get(f, EL_INI_PROFILE, profile, "aws_secret_access_key");
    const char *tok = el_ini_get(f, EL_INI_PROFILE, profile, "aws_session_token");
    if (!tok || !*tok)
        tok = el_ini_get(f, EL_INI_PROFILE, profile, "aws_security_token");
    ak = ak && *ak ? ak : NULL;
    sk = sk && *sk ? sk : NULL;
    if (!ak && !sk) {
        place(pl, "%s%s", where, f->present ? "" : " (no such file)");
        return EL_EOF;
    }
    if (!ak || !sk)
        return el_diag_set(ctx->diag, EL_ECONFIG, "partial credentials in %s: %s is missing",
                           where, ak ? "aws_secret_access_key" : "aws_access_key_id");
    el_err err = el_creds_new_static(ak, sk, tok && *tok ? tok : NULL, where, out);
    if (err == EL_EUSAGE)
        return el_diag_set(ctx->diag, EL_ECONFIG, "the keys in %s are too long or hold control "
                           "characters", where);
    if (err)
        return el_diag_set(ctx->diag, err, "out of memory");
    if (warning && warning_len && f->exposed)
        snprintf(warning, warning_len,
                 "credentials file %s is readable by group or others (mode %04o); "
                 "run chmod 600 %s", f->path, f->mode, f->path);
    return EL_OK;
}

static el_err env_keys(const el_cred_ctx *ctx, el_creds **out, bool required)
{
    const char *ak = el_cred_env(ctx, "AWS_ACCESS_KEY_ID");
    const char *sk = el_cred_env(ctx, "AWS_SECRET_ACCESS_KEY");
    if (!ak && !sk)
        return required ? el_diag_set(ctx->diag, EL_ECONFIG,
                                      "credential_source Environment: AWS_ACCESS_KEY_ID and "
                                      "AWS_SECRET_ACCESS_KEY are not set")
                        : EL_EOF;
    if (!ak || !sk)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "partial credentials in the environment: %s is not set",
                           ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    const char *tok = el_cred_env(ctx, "AWS_SESSION_TOKEN");
    if (!tok)
        tok = el_cred_env(ctx, "AWS_SECURITY_TOKEN");
    el_err err = el_creds_new_static(ak, sk, tok, "environment", out);
    if (err == EL_EUSAGE)
        return el_diag_set(ctx->diag, EL_ECONFIG, "the keys in the environment are too long "
                           "or hold control characters");
    return err ? el_diag_set(ctx->diag, err, "out of memory") : EL_OK;
}

static el_err profile_creds(const el_cred_ctx *ctx, const char *profile, bool allow_role,
                            bool env_web_identity, const char **visited, size_t nvisited,
                            el_creds **out, places *pl, char *warning, size_t warning_len);

/* Web identity from the environment (when allowed) or the profile. */
static el_err web_identity(const el_cred_ctx *ctx, const char *profile, bool from_env,
                           el_creds **out)
{
    const char *file = from_env ? el_cred_env(ctx, "AWS_WEB_IDENTITY_TOKEN_FILE") : NULL;
    const char *arn = from_env ? el_cred_env(ctx, "AWS_ROLE_ARN") : NULL;
    const char *name = from_env ? el_cred_env(ctx, "AWS_ROLE_SESSION_NAME") : NULL;
    const char *where = "AWS_WEB_IDENTITY_TOKEN_FILE";
    if (!file) {
        file = el_cred_profile_get(ctx, profile, "web_identity_token_file");
        where = "profile";
    }
    if (!file)
        return EL_EOF;
    if (!arn)
        arn = el_cred_profile_get(ctx, profile, "role_arn");
    if (!name)
        name = el_cred_profile_get(ctx, profile, "role_session_name");
    char w[300];
    if (strcmp(where, "profile") == 0)
        snprintf(w, sizeof w, "web_identity_token_file of profile %s", profile);
    else
        snprintf(w, sizeof w, "%s", where);
    if (!arn)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "%s is set but no role to assume: set AWS_ROLE_ARN or role_arn in "
                           "profile '%s'", w, profile);
    el_cred_source *src;
    return start(ctx, el_cred_web_identity(ctx, profile, file, arn, name, w, &src), &src, out);
}

/* The credentials a role of `profile` is assumed with. */
static el_err role_source(const el_cred_ctx *ctx, const char *profile, const char **visited,
                          size_t nvisited, el_creds **out)
{
    const char *sp = el_cred_profile_get(ctx, profile, "source_profile");
    const char *cs = el_cred_profile_get(ctx, profile, "credential_source");
    if (sp && cs)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' sets both source_profile and credential_source: keep "
                           "one", profile);
    if (!sp && !cs)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' has role_arn but neither source_profile nor "
                           "credential_source to assume it with", profile);
    if (cs) {
        el_cred_source *src = NULL;
        el_err err;
        if (strcasecmp(cs, "Environment") == 0)
            return env_keys(ctx, out, true);
        if (strcasecmp(cs, "EcsContainer") == 0) {
            err = el_cred_container(ctx, &src);
            if (err == EL_EOF)
                return el_diag_set(ctx->diag, EL_ECONFIG,
                                   "credential_source EcsContainer of profile '%s': neither "
                                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor _FULL_URI is set",
                                   profile);
            return start(ctx, err, &src, out);
        }
        if (strcasecmp(cs, "Ec2InstanceMetadata") == 0) {
            err = el_cred_imds(ctx, profile, &src);
            if (err == EL_EOF)
                return el_diag_set(ctx->diag, EL_ECONFIG,
                                   "credential_source Ec2InstanceMetadata of profile '%s', but "
                                   "AWS_EC2_METADATA_DISABLED is true", profile);
            return start(ctx, err, &src, out);
        }
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "credential_source '%s' of profile '%s' is not one of Environment, "
                           "Ec2InstanceMetadata, EcsContainer", cs, profile);
    }
    if (!profile_exists(ctx, sp))
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "source_profile '%s' of profile '%s' is in neither shared file", sp,
                           profile);
    bool seen = false;
    for (size_t i = 0; i < nvisited; i++)
        seen = seen || strcmp(visited[i], sp) == 0;
    bool self = strcmp(sp, profile) == 0;
    if (seen && !(self && has_static_keys(ctx, sp))) {
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "source_profile '%s' of profile '%s' leads back to a profile already "
                           "in the chain (a loop)", sp, profile);
    }
    if (nvisited >= MAX_ROLE_DEPTH)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s': roles are chained more than %d deep through "
                           "source_profile", visited[0], MAX_ROLE_DEPTH);
    const char *chain[MAX_ROLE_DEPTH + 1];
    memcpy(chain, visited, nvisited * sizeof *chain);
    chain[nvisited] = sp;
    /* botocore: a source profile with keys, or without a role of its own,
     * gives its credentials by the profile steps; one with only a role is
     * assumed in turn */
    bool role_again = !self && !has_static_keys(ctx, sp) &&
                      el_cred_profile_get(ctx, sp, "role_arn") &&
                      !el_cred_profile_get(ctx, sp, "web_identity_token_file");
    el_err err = profile_creds(ctx, sp, role_again, false, chain, nvisited + 1, out, NULL,
                               NULL, 0);
    if (err == EL_EOF)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "source_profile '%s' of profile '%s' has no credentials", sp,
                           profile);
    return err;
}

static el_err assume_role(const el_cred_ctx *ctx, const char *profile, const char **visited,
                          size_t nvisited, el_creds **out)
{
    el_role_opts role = {0};
    role.role_arn = el_cred_profile_get(ctx, profile, "role_arn");
    if (el_cred_profile_get(ctx, profile, "mfa_serial"))
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "profile '%s' sets mfa_serial: edgeload runs unattended and cannot "
                           "ask for an MFA code; use a profile without mfa_serial, or run with "
                           "the exported session of `aws configure export-credentials --profile "
                           "%s --format env`", profile, profile);
    role.session_name = el_cred_profile_get(ctx, profile, "role_session_name");
    role.external_id = el_cred_profile_get(ctx, profile, "external_id");
    const char *d = el_cred_profile_get(ctx, profile, "duration_seconds");
    if (d) {
        char *end;
        errno = 0;
        long v = strtol(d, &end, 10);
        if (errno || end == d || *end || v < 900 || v > 43200)
            return el_diag_set(ctx->diag, EL_ECONFIG,
                               "duration_seconds '%s' of profile '%s' is not a number of "
                               "seconds from 900 to 43200", d, profile);
        role.duration_seconds = v;
    }
    el_creds *parent;
    el_err err = role_source(ctx, profile, visited, nvisited, &parent);
    if (err)
        return err;
    el_cred_source *src;
    return start(ctx, el_cred_assume_role(ctx, profile, &role, parent, &src), &src, out);
}

/* Steps 2 to 7 for one profile. EL_EOF when none applies. */
static el_err profile_creds(const el_cred_ctx *ctx, const char *profile, bool allow_role,
                            bool env_web_identity, const char **visited, size_t nvisited,
                            el_creds **out, places *pl, char *warning, size_t warning_len)
{
    el_err err;
    if (allow_role && el_cred_profile_get(ctx, profile, "role_arn") &&
        !el_cred_profile_get(ctx, profile, "web_identity_token_file"))
        return assume_role(ctx, profile, visited, nvisited, out);
    if ((err = web_identity(ctx, profile, env_web_identity, out)) != EL_EOF)
        return err;
    el_cred_source *src;
    if ((err = el_cred_sso(ctx, profile, &src)) != EL_EOF)
        return start(ctx, err, &src, out);
    if ((err = file_keys(ctx, ctx->creds, profile, false, out, pl, warning, warning_len)) !=
        EL_EOF)
        return err;
    const char *cmd = el_cred_profile_get(ctx, profile, "credential_process");
    if (cmd)
        return start(ctx, el_cred_process(ctx, profile, cmd, &src), &src, out);
    return file_keys(ctx, ctx->cfg, profile, true, out, pl, warning, warning_len);
}

el_err el_cred_chain_resolve(const el_cred_ctx *ctx, const char *profile,
                             bool explicit_profile, el_creds **out, char *warning,
                             size_t warning_len)
{
    *out = NULL;
    places pl = {.used = 0};
    pl.text[0] = '\0';
    el_err err;
    if (!explicit_profile) {
        if ((err = env_keys(ctx, out, false)) != EL_EOF)
            return err;
        place(&pl, "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    }
    const char *visited[1] = {profile};
    err = profile_creds(ctx, profile, true, !explicit_profile, visited, 1, out, &pl, warning,
                        warning_len);
    if (err != EL_EOF)
        return err;

    el_cred_source *src;
    if ((err = el_cred_container(ctx, &src)) != EL_EOF)
        return start(ctx, err, &src, out);
    place(&pl, "the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
               "and _FULL_URI not set)");
    err = el_cred_imds(ctx, profile, &src);
    if (err == EL_EOF) {
        place(&pl, "the EC2 instance metadata service (AWS_EC2_METADATA_DISABLED=true)");
    } else if (err) {
        return err;
    } else {
        el_diag d;
        el_diag_clear(&d);
        char name[600];
        snprintf(name, sizeof name, "%s", src->name);
        err = el_creds_new(src, out, &d);
        if (err != EL_ENET) {
            if (err)
                el_diag_set(ctx->diag, err, "%s", d.msg);
            return err;
        }
        place(&pl, "%s (no answer within 1 s)", name);
    }
    const char *sso = el_cred_profile_get(ctx, profile, "sso_session");
    if (!sso)
        sso = el_cred_profile_get(ctx, profile, "sso_start_url");
    if (sso)
        return el_diag_set(ctx->diag, EL_ECONFIG,
                           "no credentials found: looked in %s; profile '%s' has %s but not "
                           "sso_account_id and sso_role_name, which IAM Identity Center "
                           "credentials need", pl.text, profile,
                           el_cred_profile_get(ctx, profile, "sso_session") ? "sso_session"
                                                                            : "sso_start_url");
    return el_diag_set(ctx->diag, EL_ECONFIG, "no credentials found: looked in %s", pl.text);
}
