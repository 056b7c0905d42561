/*
 * aws_config.h - where to send requests and as whom, resolved the way the
 * AWS CLI resolves it.
 *
 * Precedence (highest first), as the AWS CLI documents it:
 *   region:   --region, AWS_REGION, AWS_DEFAULT_REGION, `region` of the
 *             profile in the config file;
 *   profile:  --profile, AWS_PROFILE, "default";
 *   keys:     the credential chain of aws/cred_chain.c (below);
 *   endpoint: --endpoint-url, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
 *             `dynamodb = / endpoint_url = ...` in the profile's `services`
 *             section, `endpoint_url` in the profile, else the one the SDKs'
 *             endpoint rules give the region and the variants below
 *             (aws/endpoints.h: https://dynamodb.<region>.amazonaws.com,
 *             dynamodb-fips..., ...api.aws, .amazonaws.com.cn, ...);
 *             AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or
 *             ignore_configured_endpoint_urls in the profile) leaves only
 *             --endpoint-url;
 *   variants: AWS_USE_FIPS_ENDPOINT, else `use_fips_endpoint` in the
 *             profile; AWS_USE_DUALSTACK_ENDPOINT, else
 *             `use_dualstack_endpoint` (for S3 the profile's `s3` section's
 *             `use_dualstack_endpoint` first, as botocore); `true` or
 *             `false` in any case, anything else is an error (botocore reads
 *             it as false: a FIPS-bound user is told instead). An endpoint
 *             URL given by any of the ways above wins over both;
 *   attempts: AWS_MAX_ATTEMPTS, `max_attempts` in the profile, else 0 (unset);
 *   CA:       AWS_CA_BUNDLE, `ca_bundle` in the profile, else the system's;
 *   proxy:    libcurl's (https_proxy/HTTPS_PROXY, http_proxy, no_proxy/
 *             NO_PROXY), and HTTP_PROXY for http:// URLs as the AWS CLI.
 *
 * Credentials, in the order botocore looks (the first that has any wins):
 *  1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), unless
 *     --profile was given;
 *  2. the profile's role_arn (without web_identity_token_file): STS
 *     AssumeRole with the credentials of source_profile (resolved the same
 *     way, at most 5 roles deep) or credential_source (Environment,
 *     Ec2InstanceMetadata, EcsContainer); external_id, role_session_name,
 *     duration_seconds; mfa_serial is refused (nobody can type a code);
 *  3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
 *     (+ AWS_ROLE_SESSION_NAME) unless --profile was given, else the
 *     profile's web_identity_token_file + role_arn: STS
 *     AssumeRoleWithWebIdentity, the token file read again at each renewal;
 *  4. IAM Identity Center: sso_account_id + sso_role_name with sso_session
 *     (a [sso-session] section) or the legacy sso_start_url + sso_region:
 *     the token `aws sso login` cached in ~/.aws/sso/cache/, then the
 *     portal's GetRoleCredentials;
 *  5. the shared credentials file's [profile] keys;
 *  6. the profile's credential_process (its JSON, Version 1);
 *  7. the config file's [profile] keys;
 *  8. the container endpoint: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
 *     169.254.170.2) or _FULL_URI (https, or a loopback or EKS Pod Identity
 *     address), with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE);
 *  9. the EC2 instance metadata service (IMDSv2; AWS_EC2_METADATA_DISABLED,
 *     AWS_EC2_METADATA_SERVICE_ENDPOINT, 1 s timeouts).
 * A profile's settings are the credentials file's over the config file's,
 * as botocore merges them. STS is called at its regional endpoint
 * (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL or the services section override
 * it), the portal at portal.sso.<sso_region>.amazonaws.com
 * (AWS_ENDPOINT_URL_SSO).
 *
 * Files: the INI dialect of botocore (full-line `#`/`;` comments, `key = value`
 * or `key: value`, case-insensitive keys, indented nested settings); in the
 * config file `[profile x]` and `[default]`. Empty environment variables count
 * as unset. A profile named by --profile/AWS_PROFILE that is in neither file is
 * an error. Keys need both halves (partial credentials are an error, naming the
 * missing half). aws_security_token / AWS_SECURITY_TOKEN are read as the
 * legacy names of the session token.
 *
 * Secrets are held only in the credential provider; nothing here ever
 * formats them into a message.
 */
#ifndef EL_AWS_CONFIG_H
#define EL_AWS_CONFIG_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "aws/aws_env.h"       /* el_getenv_fn */
#include "aws/credentials.h"
#include "aws/skew.h"        /* el_wall_clock_fn, el_skew_report_fn */
#include "common/error.h"

/* The settings that choose FIPS and dual-stack endpoints, for messages. */
#define EL_AWS_VARIANT_SETTINGS                                                            \
    "AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT, or use_fips_endpoint and "         \
    "use_dualstack_endpoint in the profile"

/* What the command line said; NULL = not given. */
typedef struct el_aws_opts {
    const char *region;
    const char *profile;
    const char *endpoint_url;
    bool no_verify_ssl;
    /* Told when a client of the run corrects its clock by a service's Date
     * header (aws/skew.h); kept in the configuration for every client, STS
     * during the resolve included. NULL = nobody listens. */
    el_skew_report_fn on_skew;
    void *on_skew_user;
} el_aws_opts;

/* Resolved configuration. All strings and the provider are owned by the
 * struct. */
typedef struct el_aws_config {
    char *region;        /* never NULL after a successful resolve */
    char *endpoint;      /* DynamoDB's full URL without trailing slash */
    char *signing_region;/* the region DynamoDB's requests are signed for: region, but
                            "local" is signed for us-east-1 (aws/endpoints.h); NULL in a
                            configuration made by hand = region */
    char *profile;       /* the profile used ("default" if none given) */
    el_creds *creds;     /* the credential provider every client of the run
                            signs with; never NULL after a successful resolve */
    /* Fixed keys of a configuration made by hand (tests) without a
     * provider: clients then make one of their own. NULL after a resolve. */
    char *access_key;
    char *secret_key;
    char *session_token;
    char *cred_source;   /* where the keys came from, for messages
                            ("environment", "/root/.aws/credentials [prod]",
                            "STS AssumeRole arn:... (profile prod)") */
    char *region_source; /* where the region came from, for messages ("--region",
                            "AWS_REGION", "AWS_DEFAULT_REGION",
                            "region in /root/.aws/config [profile prod]") */
    bool use_fips;       /* FIPS endpoints (where no endpoint URL is given) */
    bool use_dualstack;  /* dual-stack (IPv4 and IPv6) endpoints, DynamoDB's and STS's */
    bool s3_dualstack;   /* the same for S3 */
    bool verify_ssl;     /* false only with --no-verify-ssl */
    int max_attempts;    /* 0 = not set */
    char *ca_bundle;     /* CA file for HTTPS, NULL = the system's */
    char *http_proxy;    /* HTTP_PROXY when http_proxy is unset, else NULL
                            (el_aws_http_proxy) */
    /* The wall clock requests are signed by; NULL = time() (tests inject
     * one into a configuration made by hand). */
    el_wall_clock_fn wall_clock;
    void *wall_clock_user;
    el_skew_report_fn on_skew; /* from el_aws_opts */
    void *on_skew_user;
    int extra_refs;      /* el_aws_config_ref/free only */
} el_aws_config;

/*
 * Resolves the configuration and the credentials (the first set is fetched
 * here: a source that fails, fails the resolve). On failure returns
 * EL_ECONFIG (EL_ENET when a credential endpoint could not be reached) with
 * diag saying what is missing or failed, naming the source, and for "no
 * credentials found" every place that was looked at ("no credentials found:
 * looked in the environment (...), /root/.aws/credentials [default], ...,
 * the EC2 instance metadata service (...)"), and *out is NULL.
 * A credentials file readable by group or others adds a warning to
 * `warning` (may be NULL; buffer of warning_len bytes, "" when none); only
 * the file the keys were taken from is checked.
 * opts may be NULL (nothing on the command line); getenv_fn NULL = getenv.
 * Neither diag nor warning ever holds a secret or session token.
 */
el_err el_aws_config_resolve(const el_aws_opts *opts, el_getenv_fn getenv_fn,
                             el_aws_config **out, char *warning, size_t warning_len,
                             el_diag *diag) EL_MUST_USE;

/* Another reference to cfg (returns cfg), for a run whose clients share one
 * configuration and provider: each holder frees its reference with
 * el_aws_config_free. Not thread-safe: take and drop references on one
 * thread (cmd/'s). */
el_aws_config *el_aws_config_ref(el_aws_config *cfg);

/* Drops a reference; the last one stops the provider and frees every
 * string, wiping the secret and token first. NULL is a no-op. */
void el_aws_config_free(el_aws_config *cfg);

#endif
