/*
 * cred_source.h - the credential sources and what they share (internal to
 * aws/; the chain in cred_chain.c picks one, el_creds runs it).
 *
 * Each constructor copies what it needs from the resolve-time context (the
 * environment and the shared files are not read again, except the files a
 * source is defined by: a web identity token file, the SSO token cache, a
 * container authorization token file, which are read at every fetch
 * because their owners rotate them). `net` is the configuration being
 * resolved, for its TLS and proxy settings: it owns the provider and so
 * outlives every source. On success *out is a source for el_creds_new; on
 * failure *out is NULL and diag says why in one line naming the source.
 */
#ifndef EL_AWS_CRED_SOURCE_H
#define EL_AWS_CRED_SOURCE_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <time.h>     /* time_t */

#include "aws/aws_env.h"  /* el_getenv_fn */
#include "aws/credentials.h"
#include "aws/ini.h"
#include "common/buf.h"
#include "common/error.h"

/* What the chain and the sources read while resolving (all borrowed). */
typedef struct el_cred_ctx {
    el_getenv_fn getenv_fn;
    const el_ini *creds;           /* the shared credentials file */
    const el_ini *cfg;             /* the config file */
    const char *region;            /* the resolved region (STS's, by default) */
    const struct el_aws_config *net; /* TLS and proxy settings for fetches
                                      (aws_config.h, which calls the chain) */
    el_diag *diag;
} el_cred_ctx;

/* An environment variable, NULL when unset or empty. */
const char *el_cred_env(const el_cred_ctx *ctx, const char *name);

/* A profile's setting: the credentials file's value over the config
 * file's (botocore merges them so), NULL when unset or empty. */
const char *el_cred_profile_get(const el_cred_ctx *ctx, const char *profile, const char *key);

/* "~" and "~/x" expanded with HOME; *out malloc'd (NULL on ENOMEM). */
el_err el_cred_expand_home(const el_cred_ctx *ctx, const char *path, char **out) EL_MUST_USE;

/* ---- shared parsing ---- */

/* ISO 8601 / RFC 3339 as AWS writes it ("2024-01-02T03:04:05Z", with
 * fractional seconds, a +HH:MM offset, or "UTC" as the SSO cache of older
 * CLIs wrote). EL_EPARSE otherwise. */
el_err el_cred_parse_time(const char *s, time_t *out) EL_MUST_USE;

/* Where the fields of a JSON credentials document are. */
typedef struct el_cred_json_spec {
    const char *object;        /* NULL, or the member holding the fields */
    const char *access_key;    /* member names */
    const char *secret_key;
    const char *token;
    const char *expiration;
    bool expiration_ms;        /* a number of milliseconds since the epoch */
    bool need_token;           /* temporary credentials must have one */
    bool need_expiration;
    bool version_one;          /* "Version": 1 required (credential_process) */
} el_cred_json_spec;

/* Reads a set from a JSON document (NUL-terminated). Missing or mistyped
 * fields, bad JSON: EL_ECONFIG with diag "<what>: <what is wrong>" (never a
 * value). Every string of the parse is wiped before it is freed. */
el_err el_cred_from_json(const char *json, const el_cred_json_spec *spec, const char *what,
                         el_cred **out, el_diag *diag) EL_MUST_USE;

/* Reads a small file (a token) into *out (malloc'd, trailing white space
 * cut; wipe it). EL_ECONFIG with diag "<what>: cannot read <path>: ...". */
el_err el_cred_read_file(const char *path, size_t max, const char *what, char **out,
                         el_diag *diag) EL_MUST_USE;

/* application/x-www-form-urlencoded value (RFC 3986 unreserved kept). */
el_err el_cred_form_put(el_buf *b, const char *name, const char *value) EL_MUST_USE;

/* ---- the sources ---- */

/* STS (cred_sts.c). The endpoint: AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL,
 * the profile's services section (sts endpoint_url), the profile's
 * endpoint_url, else the one the SDKs' endpoint rules give the region and
 * ctx->net's FIPS and dual-stack settings (aws/endpoints.h:
 * https://sts.<region>.amazonaws.com, sts-fips..., ...). signing_region
 * gets the region requests to it are signed for (the region, but
 * "aws-global" is us-east-1's). */
el_err el_cred_sts_endpoint(const el_cred_ctx *ctx, const char *profile, char **out,
                            char signing_region[64]) EL_MUST_USE;

/* AssumeRoleWithWebIdentity (unsigned) with the token read from token_file
 * at each fetch. session_name NULL = "edgeload-<time>". `where` says what
 * configured it ("AWS_WEB_IDENTITY_TOKEN_FILE", "profile x"). */
el_err el_cred_web_identity(const el_cred_ctx *ctx, const char *profile,
                            const char *token_file, const char *role_arn,
                            const char *session_name, const char *where,
                            el_cred_source **out) EL_MUST_USE;

typedef struct el_role_opts {
    const char *role_arn;
    const char *session_name;  /* NULL = "edgeload-<time>" */
    const char *external_id;   /* NULL = none */
    long duration_seconds;     /* 0 = STS's default */
} el_role_opts;

/* AssumeRole signed with the credentials of `parent` (taken, also on
 * failure), for profile. */
el_err el_cred_assume_role(const el_cred_ctx *ctx, const char *profile,
                           const el_role_opts *role, el_creds *parent,
                           el_cred_source **out) EL_MUST_USE;

/* IAM Identity Center (cred_sso.c): EL_EOF when the profile is not an SSO
 * profile (neither sso_account_id nor sso_role_name). */
el_err el_cred_sso(const el_cred_ctx *ctx, const char *profile,
                   el_cred_source **out) EL_MUST_USE;

/* credential_process (cred_process.c): the command line, split as a POSIX
 * shell splits words (no shell runs it). */
el_err el_cred_process(const el_cred_ctx *ctx, const char *profile, const char *command,
                       el_cred_source **out) EL_MUST_USE;

/* The container endpoint (cred_container.c): EL_EOF when neither
 * AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor _FULL_URI is set. */
el_err el_cred_container(const el_cred_ctx *ctx, el_cred_source **out) EL_MUST_USE;

/* The URL the container source fetches from (pure, for tests): the relative
 * URI on http://169.254.170.2, or the full URI when its scheme is https or
 * its host is a loopback address or an EKS Pod Identity one
 * (169.254.170.23, fd00:ec2::23). EL_ECONFIG with diag otherwise. */
el_err el_cred_container_url(const char *relative, const char *full, char **out,
                             el_diag *diag) EL_MUST_USE;

/* The instance metadata service (cred_imds.c): EL_EOF when
 * AWS_EC2_METADATA_DISABLED is true. The endpoint:
 * AWS_EC2_METADATA_SERVICE_ENDPOINT, the profile's
 * ec2_metadata_service_endpoint, http://[fd00:ec2::254] for endpoint mode
 * IPv6, else http://169.254.169.254. */
el_err el_cred_imds(const el_cred_ctx *ctx, const char *profile,
                    el_cred_source **out) EL_MUST_USE;

/* ---- the chain (cred_chain.c) ---- */

/*
 * Finds the credentials of profile in the order of aws_config.h and makes
 * the provider (the first set fetched). explicit_profile: --profile was
 * given (the environment's keys and web identity are then skipped).
 * warning (may be NULL): a credentials file readable by others.
 */
el_err el_cred_chain_resolve(const el_cred_ctx *ctx, const char *profile,
                             bool explicit_profile, el_creds **out, char *warning,
                             size_t warning_len) EL_MUST_USE;

#endif
