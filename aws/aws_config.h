/*
 * aws_config.h - where to send requests and as whom, resolved the way the
 * AWS CLI resolves it.
 *
 * Precedence (highest first), as the AWS CLI documents it:
 *   region:   --region, AWS_REGION, AWS_DEFAULT_REGION, `region` of the
 *             profile in the config file;
 *   profile:  --profile, AWS_PROFILE, "default";
 *   keys:     AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN)
 *             unless --profile was given explicitly; then the shared
 *             credentials file (AWS_SHARED_CREDENTIALS_FILE or
 *             ~/.aws/credentials, section [profile]); then the config file
 *             (AWS_CONFIG_FILE or ~/.aws/config, section [profile name] or
 *             [default]);
 *   endpoint: --endpoint-url, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
 *             `dynamodb = / endpoint_url = ...` in the profile's `services`
 *             section, `endpoint_url` in the profile, else
 *             https://dynamodb.<region>.amazonaws.com (.com.cn for cn-*);
 *             AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or
 *             ignore_configured_endpoint_urls in the profile) leaves only
 *             --endpoint-url;
 *   attempts: AWS_MAX_ATTEMPTS, `max_attempts` in the profile, else 0 (unset);
 *   CA:       AWS_CA_BUNDLE, `ca_bundle` in the profile, else the system's.
 *
 * Files: the INI dialect of botocore (full-line `#`/`;` comments, `key = value`
 * or `key: value`, case-insensitive keys, indented nested settings); in the
 * config file `[profile x]` and `[default]`. Empty environment variables count
 * as unset. A profile named by --profile/AWS_PROFILE that is in neither file is
 * an error. Keys need both halves (partial credentials are an error, naming the
 * missing half). aws_security_token / AWS_SECURITY_TOKEN are read as the
 * legacy names of the session token. SSO, assume-role, credential_process and
 * instance metadata are not implemented; the "no credentials" message says so
 * when the profile uses one.
 *
 * Secrets are held only in this struct; nothing here ever formats them into a
 * message.
 */
#ifndef EL_AWS_CONFIG_H
#define EL_AWS_CONFIG_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/error.h"

/* What the command line said; NULL = not given. */
typedef struct el_aws_opts {
    const char *region;
    const char *profile;
    const char *endpoint_url;
    bool no_verify_ssl;
} el_aws_opts;

/* Looks up an environment variable; getenv in production, a table in tests.
 * HOME (for ~/.aws/...) is read through it too. */
typedef const char *(*el_getenv_fn)(const char *name);

/* Resolved configuration. All strings are owned by the struct. */
typedef struct el_aws_config {
    char *region;        /* never NULL after a successful resolve */
    char *endpoint;      /* full URL without trailing slash */
    char *profile;       /* the profile used ("default" if none given) */
    char *access_key;    /* never NULL after a successful resolve */
    char *secret_key;    /* never NULL after a successful resolve */
    char *session_token; /* NULL when none */
    char *cred_source;   /* where the keys came from, for messages
                            ("environment", "/root/.aws/credentials [prod]") */
    char *region_source; /* where the region came from, for messages ("--region",
                            "AWS_REGION", "AWS_DEFAULT_REGION",
                            "region in /root/.aws/config [profile prod]") */
    bool verify_ssl;     /* false only with --no-verify-ssl */
    int max_attempts;    /* 0 = not set */
    char *ca_bundle;     /* CA file for HTTPS, NULL = the system's */
} el_aws_config;

/*
 * Resolves the configuration. On failure returns EL_ECONFIG with diag saying
 * what is missing and every place that was looked at ("no credentials found:
 * looked in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, /root/.aws/credentials
 * [default], /root/.aws/config [default]"), and *out is NULL.
 * A credentials file readable by group or others adds a warning to
 * `warning` (may be NULL; buffer of warning_len bytes, "" when none); only
 * the file the keys were taken from is checked.
 * opts may be NULL (nothing on the command line); getenv_fn NULL = getenv.
 * Neither diag nor warning ever holds a secret or session token.
 */
el_err el_aws_config_resolve(const el_aws_opts *opts, el_getenv_fn getenv_fn,
                             el_aws_config **out, char *warning, size_t warning_len,
                             el_diag *diag) EL_MUST_USE;

/* Frees every string, wiping the secret and token first. NULL is a no-op. */
void el_aws_config_free(el_aws_config *cfg);

#endif
