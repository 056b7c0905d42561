/*
 * test_aws_config.c - el_aws_config_resolve: the AWS CLI's precedence, the
 * shared files' INI dialect, the messages (which never hold a secret).
 *
 * Every test runs in a fresh temporary HOME with a fake environment table,
 * so nothing of the machine's own ~/.aws or AWS_* variables leaks in.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdio.h>     /* fopen, snprintf */
#include <stdlib.h>    /* mkdtemp, free */
#include <string.h>    /* strcmp, strstr */
#include <sys/stat.h>  /* chmod, mkdir */
#include <time.h>      /* time */
#include <unistd.h>    /* rmdir, unlink */

#include "aws/aws_config.h"

#define SECRET_ENV "envSECRET/abc+123"
#define SECRET_FILE "fileSECRET=x:y/z"
#define TOKEN_FILE "fileTOKEN//zz=="

/* ---- fake environment ---- */

#define MAX_ENV 32
static const char *env_names[MAX_ENV];
static const char *env_values[MAX_ENV];
static size_t env_n;
static char home[256];
static char aws_dir[300];

static const char *fake_getenv(const char *name)
{
    for (size_t i = 0; i < env_n; i++)
        if (strcmp(env_names[i], name) == 0)
            return env_values[i];
    return NULL;
}

static void setenv_fake(const char *name, const char *value)
{
    for (size_t i = 0; i < env_n; i++)
        if (strcmp(env_names[i], name) == 0) {
            env_values[i] = value;
            return;
        }
    assert_true(env_n < MAX_ENV);
    env_names[env_n] = name;
    env_values[env_n] = value;
    env_n++;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
    el_test_write_file_mode(aws_dir, name, text, mode);
}

static char *path_of(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", aws_dir, name);
    return path;
}

static int setup(void **state)
{
    (void)state;
    snprintf(home, sizeof home, "/tmp/el_aws_test_XXXXXX");
    if (!mkdtemp(home))
        return -1;
    snprintf(aws_dir, sizeof aws_dir, "%s/.aws", home);
    if (mkdir(aws_dir, 0700) != 0)
        return -1;
    env_n = 0;
    setenv_fake("HOME", home);
    /* never the instance metadata service from a unit test */
    setenv_fake("AWS_EC2_METADATA_DISABLED", "true");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"credentials", "config", "other_creds", "other_cfg"};
    for (size_t i = 0; i < 4; i++)
        unlink(path_of(names[i]));
    rmdir(aws_dir);
    rmdir(home);
    return 0;
}

/* ---- helpers ---- */

/* The provider's current keys, copied (the set is released at once). */
static const char *cred_field(const el_aws_config *c, int which)
{
    static char bufs[3][20000];
    el_cred *k;
    assert_int_equal(el_creds_get(c->creds, time(NULL), &k, NULL), EL_OK);
    const char *v = which == 0 ? el_cred_access_key(k) : which == 1 ? el_cred_secret_key(k)
                                                                    : el_cred_session_token(k);
    if (v)
        snprintf(bufs[which], sizeof bufs[which], "%s", v);
    el_cred_release(k);
    return v ? bufs[which] : NULL;
}
#define AK(c) cred_field((c), 0)
#define SK(c) cred_field((c), 1)
#define TOK(c) cred_field((c), 2)

static el_diag diag;
static char warning[512];

static el_aws_config *resolve_ok(const el_aws_opts *opts)
{
    el_aws_config *cfg = NULL;
    el_diag_clear(&diag);
    el_err err = el_aws_config_resolve(opts, fake_getenv, &cfg, warning, sizeof warning,
                                       &diag);
    if (err)
        fail_msg("resolve failed: %s", diag.msg);
    assert_non_null(cfg);
    assert_non_null(cfg->region);
    assert_non_null(cfg->creds);
    assert_null(cfg->access_key); /* the provider holds the keys */
    return cfg;
}

static void assert_no_secret(const char *text)
{
    assert_null(strstr(text, SECRET_ENV));
    assert_null(strstr(text, SECRET_FILE));
    assert_null(strstr(text, TOKEN_FILE));
    assert_null(strstr(text, "fileSECRET"));
}

static el_err resolve_fail(const el_aws_opts *opts)
{
    el_aws_config *cfg = (el_aws_config *)&diag; /* must be reset to NULL */
    el_diag_clear(&diag);
    el_err err = el_aws_config_resolve(opts, fake_getenv, &cfg, warning, sizeof warning,
                                       &diag);
    assert_int_not_equal(err, EL_OK);
    assert_null(cfg);
    assert_true(diag.msg[0] != '\0');
    assert_no_secret(diag.msg);
    assert_no_secret(warning);
    return err;
}

static void env_keys(void)
{
    setenv_fake("AWS_ACCESS_KEY_ID", "AKIAENV");
    setenv_fake("AWS_SECRET_ACCESS_KEY", SECRET_ENV);
}

static const char creds_text[] =
    "# shared credentials\n"
    "[default]\n"
    "aws_access_key_id = AKIADEFAULT\n"
    "aws_secret_access_key = " SECRET_FILE "\n"
    "\n"
    "; another comment\n"
    "[prod]\n"
    "  aws_access_key_id=AKIAPROD   \n"
    "AWS_SECRET_ACCESS_KEY:" SECRET_FILE "\n"
    "aws_session_token = " TOKEN_FILE "\n";

/* ---- credentials precedence ---- */

static void test_env_keys_win(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_SESSION_TOKEN", "envTOKEN");
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIAENV");
    assert_string_equal(SK(c), SECRET_ENV);
    assert_string_equal(TOK(c), "envTOKEN");
    assert_string_equal(c->cred_source, "environment");
    assert_string_equal(c->profile, "default");
    assert_true(c->verify_ssl);
    assert_int_equal(c->max_attempts, 0);
    assert_null(c->ca_bundle);
    el_aws_config_free(c);
}

static void test_aws_profile_env_keeps_env_keys(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_PROFILE", "prod");
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIAENV");
    assert_string_equal(c->profile, "prod");
    el_aws_config_free(c);
}

static void test_explicit_profile_skips_env(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0600);
    el_aws_opts o = {.profile = "prod"};
    el_aws_config *c = resolve_ok(&o);
    assert_string_equal(AK(c), "AKIAPROD");
    assert_string_equal(SK(c), SECRET_FILE);
    assert_string_equal(TOK(c), TOKEN_FILE);
    assert_string_equal(c->profile, "prod");
    char want[600];
    snprintf(want, sizeof want, "%s [prod]", path_of("credentials"));
    assert_string_equal(c->cred_source, want);
    el_aws_config_free(c);
}

static void test_default_profile_from_credentials_file(void **state)
{
    (void)state;
    setenv_fake("AWS_DEFAULT_REGION", "us-east-2");
    write_file("credentials", creds_text, 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIADEFAULT");
    assert_string_equal(SK(c), SECRET_FILE);
    assert_null(TOK(c));
    assert_string_equal(c->region, "us-east-2");
    assert_string_equal(warning, "");
    el_aws_config_free(c);
}

static void test_credentials_file_beats_config_file(void **state)
{
    (void)state;
    write_file("credentials", creds_text, 0600);
    write_file("config",
               "[profile prod]\n"
               "region = ap-south-1\n"
               "aws_access_key_id = AKIACONFIG\n"
               "aws_secret_access_key = configsecret\n",
               0600);
    el_aws_opts o = {.profile = "prod"};
    el_aws_config *c = resolve_ok(&o);
    assert_string_equal(AK(c), "AKIAPROD");
    assert_string_equal(c->region, "ap-south-1");
    el_aws_config_free(c);
}

static void test_keys_from_config_file(void **state)
{
    (void)state;
    write_file("config",
               "[profile dev]\n"
               "region = eu-central-1\n"
               "aws_access_key_id = AKIACONFIG\n"
               "aws_secret_access_key = " SECRET_FILE "\n"
               "aws_session_token = " TOKEN_FILE "\n"
               "[default]\n"
               "region = us-west-2\n",
               0600);
    setenv_fake("AWS_PROFILE", "dev");
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIACONFIG");
    assert_string_equal(TOK(c), TOKEN_FILE);
    assert_string_equal(c->region, "eu-central-1");
    char want[600];
    snprintf(want, sizeof want, "%s [profile dev]", path_of("config"));
    assert_string_equal(c->cred_source, want);
    el_aws_config_free(c);
}

static void test_file_variables_and_tilde(void **state)
{
    (void)state;
    write_file("other_creds",
               "[default]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = s\n", 0600);
    write_file("other_cfg", "[default]\nregion = sa-east-1\n", 0600);
    write_file("credentials", creds_text, 0600);
    setenv_fake("AWS_SHARED_CREDENTIALS_FILE", "~/.aws/other_creds");
    char cfgpath[600];
    snprintf(cfgpath, sizeof cfgpath, "%s", path_of("other_cfg"));
    setenv_fake("AWS_CONFIG_FILE", cfgpath);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIAOTHER");
    assert_string_equal(c->region, "sa-east-1");
    assert_non_null(strstr(c->cred_source, "other_creds [default]"));
    el_aws_config_free(c);
}

/* ---- region, endpoint, attempts ---- */

static void test_region_precedence(void **state)
{
    (void)state;
    env_keys();
    write_file("config", "[default]\nregion = us-west-1\n[profile default]\n", 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(c->region, "us-west-1");
    /* where the region came from, for the messages (dynamo/ddb_errors.h) */
    assert_true(strncmp(c->region_source, "region in ", 10) == 0);
    assert_non_null(strstr(c->region_source, "config [default]"));
    el_aws_config_free(c);

    setenv_fake("AWS_DEFAULT_REGION", "us-east-2");
    c = resolve_ok(NULL);
    assert_string_equal(c->region, "us-east-2");
    assert_string_equal(c->region_source, "AWS_DEFAULT_REGION");
    el_aws_config_free(c);

    setenv_fake("AWS_REGION", "eu-north-1");
    c = resolve_ok(NULL);
    assert_string_equal(c->region, "eu-north-1");
    assert_string_equal(c->region_source, "AWS_REGION");
    assert_string_equal(c->endpoint, "https://dynamodb.eu-north-1.amazonaws.com");
    el_aws_config_free(c);

    el_aws_opts o = {.region = "ap-northeast-1"};
    c = resolve_ok(&o);
    assert_string_equal(c->region, "ap-northeast-1");
    assert_string_equal(c->region_source, "--region");
    el_aws_config_free(c);
}

static void test_missing_region(void **state)
{
    (void)state;
    env_keys();
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "no region"));
    assert_non_null(strstr(diag.msg, "--region"));
}

static void test_bad_region(void **state)
{
    (void)state;
    env_keys();
    el_aws_opts o = {.region = "eu west/1"};
    assert_int_equal(resolve_fail(&o), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "bad region"));
}

static void test_endpoint_precedence(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("config",
               "[default]\n"
               "endpoint_url = http://profile:1\n"
               "services = local\n"
               "[services local]\n"
               "dynamodb =\n"
               "  endpoint_url = http://services:2/\n"
               "s3 =\n"
               "  endpoint_url = http://wrong:3\n",
               0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "http://services:2");
    el_aws_config_free(c);

    setenv_fake("AWS_ENDPOINT_URL", "http://global:4");
    c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "http://global:4");
    el_aws_config_free(c);

    setenv_fake("AWS_ENDPOINT_URL_DYNAMODB", "https://ddb:5//");
    c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "https://ddb:5");
    el_aws_config_free(c);

    el_aws_opts o = {.endpoint_url = "http://127.0.0.1:8000/"};
    c = resolve_ok(&o);
    assert_string_equal(c->endpoint, "http://127.0.0.1:8000");
    el_aws_config_free(c);

    setenv_fake("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true");
    c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
    el_aws_config_free(c);
}

static void test_endpoint_from_profile_and_default(void **state)
{
    (void)state;
    env_keys();
    write_file("config", "[default]\nregion=cn-north-1\n[profile x]\nregion=eu-west-1\n"
                         "endpoint_url = http://profile:1\n", 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "https://dynamodb.cn-north-1.amazonaws.com.cn");
    el_aws_config_free(c);
    setenv_fake("AWS_PROFILE", "x");
    c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "http://profile:1");
    el_aws_config_free(c);
}

static void test_bad_endpoint(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    el_aws_opts o = {.endpoint_url = "localhost:8000"};
    assert_int_equal(resolve_fail(&o), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "localhost:8000"));
    assert_non_null(strstr(diag.msg, "http://"));
}

/* use_fips_endpoint and use_dualstack_endpoint: the environment over the
 * profile, true/false in any case, the endpoint the SDKs' rules give, and
 * an endpoint URL of the user's over both. */
static void test_fips_and_dualstack(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "us-east-1");
    write_file("config", "[default]\nuse_fips_endpoint = True\n", 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_true(c->use_fips);
    assert_false(c->use_dualstack);
    assert_string_equal(c->endpoint, "https://dynamodb-fips.us-east-1.amazonaws.com");
    assert_string_equal(c->signing_region, "us-east-1");
    el_aws_config_free(c);

    setenv_fake("AWS_USE_DUALSTACK_ENDPOINT", "TRUE");
    c = resolve_ok(NULL);
    assert_true(c->use_dualstack && c->s3_dualstack);
    assert_string_equal(c->endpoint, "https://dynamodb-fips.us-east-1.api.aws");
    el_aws_config_free(c);

    /* the environment's false over the profile's true */
    setenv_fake("AWS_USE_FIPS_ENDPOINT", "false");
    c = resolve_ok(NULL);
    assert_false(c->use_fips);
    assert_string_equal(c->endpoint, "https://dynamodb.us-east-1.api.aws");
    el_aws_config_free(c);

    /* GovCloud's plain DynamoDB name is its FIPS one */
    setenv_fake("AWS_USE_FIPS_ENDPOINT", "true");
    setenv_fake("AWS_USE_DUALSTACK_ENDPOINT", "false");
    setenv_fake("AWS_REGION", "us-gov-west-1");
    c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "https://dynamodb.us-gov-west-1.amazonaws.com");
    el_aws_config_free(c);

    /* an endpoint URL wins over both */
    setenv_fake("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000");
    c = resolve_ok(NULL);
    assert_true(c->use_fips);
    assert_string_equal(c->endpoint, "http://127.0.0.1:8000");
    assert_string_equal(c->signing_region, "us-gov-west-1");
    el_aws_config_free(c);
}

static void test_s3_dualstack_and_bad_variant(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    /* botocore reads S3's own section first, for S3 only */
    write_file("config", "[default]\nuse_dualstack_endpoint = true\ns3 =\n"
                         "  use_dualstack_endpoint = false\n", 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_true(c->use_dualstack);
    assert_false(c->s3_dualstack);
    el_aws_config_free(c);

    /* a value that is neither true nor false is refused, naming where */
    setenv_fake("AWS_USE_FIPS_ENDPOINT", "1");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_string_equal(diag.msg, "bad AWS_USE_FIPS_ENDPOINT '1': it must be true or false");
    setenv_fake("AWS_USE_FIPS_ENDPOINT", "");
    write_file("config", "[default]\nuse_fips_endpoint = yes\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "bad use_fips_endpoint in "));
    assert_non_null(strstr(diag.msg, "config [default] 'yes'"));
}

/* The region "local" is DynamoDB Local, signed for us-east-1, as the SDKs'
 * rules say; a variant there is refused. */
static void test_local_region(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "local");
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(c->endpoint, "http://localhost:8000");
    assert_string_equal(c->signing_region, "us-east-1");
    assert_string_equal(c->region, "local");
    el_aws_config_free(c);
    setenv_fake("AWS_USE_FIPS_ENDPOINT", "true");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "DynamoDB Local (region local) has no FIPS endpoint"));
    assert_non_null(strstr(diag.msg, "--endpoint-url"));
}

static void test_max_attempts_and_ca_bundle(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("config", "[default]\nmax_attempts = 7\nca_bundle = ~/ca.pem\n", 0600);
    el_aws_opts o = {.no_verify_ssl = true};
    el_aws_config *c = resolve_ok(&o);
    assert_int_equal(c->max_attempts, 7);
    assert_false(c->verify_ssl);
    char want[400];
    snprintf(want, sizeof want, "%s/ca.pem", home);
    assert_string_equal(c->ca_bundle, want);
    el_aws_config_free(c);

    setenv_fake("AWS_MAX_ATTEMPTS", "3");
    setenv_fake("AWS_CA_BUNDLE", "/etc/ca.pem");
    c = resolve_ok(NULL);
    assert_int_equal(c->max_attempts, 3);
    assert_string_equal(c->ca_bundle, "/etc/ca.pem");
    el_aws_config_free(c);

    setenv_fake("AWS_MAX_ATTEMPTS", "three");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "AWS_MAX_ATTEMPTS"));
    setenv_fake("AWS_MAX_ATTEMPTS", "0");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
}

/* ---- the INI dialect ---- */

static void test_ini_dialect(void **state)
{
    (void)state;
    write_file("credentials",
               "\xEF\xBB\xBF# BOM, CRLF, odd spacing\r\n"
               "[ weird ]\r\n"
               "\r\n"
               "   ; indented comment\r\n"
               "AWS_ACCESS_KEY_ID   =   AKIAWEIRD  \r\n"
               "aws_secret_access_key=" SECRET_FILE "\r\n"
               "aws_security_token = legacytoken\r\n",
               0600);
    write_file("config",
               "[profile weird]\n"
               "region: ca-central-1\n"
               "s3 =\n"
               "    max_concurrent_requests = 20\n"
               "    region = not-this-one\n"
               "cli_pager=\n",
               0600);
    el_aws_opts o = {.profile = "weird"};
    el_aws_config *c = resolve_ok(&o);
    assert_string_equal(AK(c), "AKIAWEIRD");
    assert_string_equal(SK(c), SECRET_FILE);
    assert_string_equal(TOK(c), "legacytoken");
    assert_string_equal(c->region, "ca-central-1");
    el_aws_config_free(c);
}

static void test_ini_indented_keys(void **state)
{
    (void)state;
    /* Keys indented alike are separate keys (configparser); deeper lines
     * continue the key above. */
    write_file("credentials",
               "[default]\n"
               "  aws_access_key_id = AKIAINDENT\n"
               "  aws_secret_access_key = s3cr3t\n"
               "  note = first line\n"
               "      aws_session_token = not-a-token\n",
               0600);
    setenv_fake("AWS_REGION", "eu-west-1");
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIAINDENT");
    assert_string_equal(SK(c), "s3cr3t");
    assert_null(TOK(c));
    el_aws_config_free(c);
}

static void test_ini_later_value_wins(void **state)
{
    (void)state;
    write_file("credentials",
               "[default]\naws_access_key_id = AKIAFIRST\naws_secret_access_key = a\n"
               "[other]\naws_access_key_id = AKIAOTHER\n"
               "[default]\naws_access_key_id = AKIASECOND\n",
               0600);
    setenv_fake("AWS_REGION", "eu-west-1");
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIASECOND");
    assert_string_equal(SK(c), "a");
    el_aws_config_free(c);
}

static void test_ini_parse_error_names_line_not_content(void **state)
{
    (void)state;
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", "[default]\naws_access_key_id = AKIA\nfileSECRETwithoutseparator\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "line 3"));
    assert_non_null(strstr(diag.msg, path_of("credentials")));

    write_file("credentials", "aws_secret_access_key = " SECRET_FILE "\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "line 1"));

    write_file("credentials", "[default\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
}

/* ---- failures ---- */

static void test_missing_credentials_lists_places(void **state)
{
    (void)state;
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("config", "[default]\nregion = eu-west-1\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "no credentials found"));
    assert_non_null(strstr(diag.msg, "AWS_ACCESS_KEY_ID"));
    char want[600];
    snprintf(want, sizeof want, "%s [default] (no such file)", path_of("credentials"));
    assert_non_null(strstr(diag.msg, want));
    snprintf(want, sizeof want, "%s [default]", path_of("config"));
    assert_non_null(strstr(diag.msg, want));
}

static void test_missing_credentials_explicit_profile(void **state)
{
    (void)state;
    write_file("credentials", creds_text, 0600);
    write_file("config", "[profile sso]\nregion = eu-west-1\nsso_session = corp\n", 0600);
    el_aws_opts o = {.profile = "sso"};
    assert_int_equal(resolve_fail(&o), EL_ECONFIG);
    assert_null(strstr(diag.msg, "AWS_ACCESS_KEY_ID"));
    char want[600];
    snprintf(want, sizeof want, "%s [sso]", path_of("credentials"));
    assert_non_null(strstr(diag.msg, want));
    snprintf(want, sizeof want, "%s [profile sso]", path_of("config"));
    assert_non_null(strstr(diag.msg, want));
    assert_non_null(strstr(diag.msg, "sso_session"));
}

static void test_no_home(void **state)
{
    (void)state;
    env_n = 0; /* no HOME */
    setenv_fake("AWS_EC2_METADATA_DISABLED", "true");
    setenv_fake("AWS_REGION", "eu-west-1");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "HOME"));
}

static void test_profile_not_found(void **state)
{
    (void)state;
    env_keys();
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0600);
    el_aws_opts o = {.profile = "nope"};
    assert_int_equal(resolve_fail(&o), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "'nope'"));
}

static void test_partial_credentials(void **state)
{
    (void)state;
    setenv_fake("AWS_REGION", "eu-west-1");
    setenv_fake("AWS_SECRET_ACCESS_KEY", SECRET_ENV);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "AWS_ACCESS_KEY_ID"));

    env_n = 0;
    setenv_fake("HOME", home);
    setenv_fake("AWS_EC2_METADATA_DISABLED", "true");
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", "[default]\naws_secret_access_key = " SECRET_FILE "\n", 0600);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "aws_access_key_id is missing"));
}

static void test_empty_env_is_unset(void **state)
{
    (void)state;
    setenv_fake("AWS_ACCESS_KEY_ID", "");
    setenv_fake("AWS_SECRET_ACCESS_KEY", "");
    setenv_fake("AWS_REGION", "");
    setenv_fake("AWS_DEFAULT_REGION", "eu-west-3");
    write_file("credentials", creds_text, 0600);
    el_aws_config *c = resolve_ok(NULL);
    assert_string_equal(AK(c), "AKIADEFAULT");
    assert_string_equal(c->region, "eu-west-3");
    el_aws_config_free(c);
}

/* ---- permissions ---- */

static void test_permission_warning(void **state)
{
    (void)state;
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0644);
    el_aws_config *c = resolve_ok(NULL);
    assert_non_null(strstr(warning, path_of("credentials")));
    assert_non_null(strstr(warning, "0644"));
    assert_non_null(strstr(warning, "chmod 600"));
    assert_no_secret(warning);
    el_aws_config_free(c);

    write_file("credentials", creds_text, 0640);
    c = resolve_ok(NULL);
    assert_non_null(strstr(warning, "group or others"));
    el_aws_config_free(c);

    write_file("credentials", creds_text, 0600);
    c = resolve_ok(NULL);
    assert_string_equal(warning, "");
    el_aws_config_free(c);

    /* Keys from the environment: the file is not read for keys, no warning. */
    write_file("credentials", creds_text, 0644);
    env_keys();
    c = resolve_ok(NULL);
    assert_string_equal(warning, "");
    el_aws_config_free(c);
}

static void test_unreadable_file(void **state)
{
    (void)state;
    setenv_fake("AWS_SHARED_CREDENTIALS_FILE", aws_dir); /* a directory */
    setenv_fake("AWS_REGION", "eu-west-1");
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "cannot read"));
    setenv_fake("AWS_SHARED_CREDENTIALS_FILE", "");
    if (geteuid() == 0)
        skip(); /* root reads mode 000 files */
    setenv_fake("AWS_REGION", "eu-west-1");
    write_file("credentials", creds_text, 0000);
    assert_int_equal(resolve_fail(NULL), EL_ECONFIG);
    assert_non_null(strstr(diag.msg, "cannot read"));
}

static void test_free_null(void **state)
{
    (void)state;
    el_aws_config_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_env_keys_win),
        T(test_aws_profile_env_keeps_env_keys),
        T(test_explicit_profile_skips_env),
        T(test_default_profile_from_credentials_file),
        T(test_credentials_file_beats_config_file),
        T(test_keys_from_config_file),
        T(test_file_variables_and_tilde),
        T(test_region_precedence),
        T(test_missing_region),
        T(test_bad_region),
        T(test_endpoint_precedence),
        T(test_endpoint_from_profile_and_default),
        T(test_bad_endpoint),
        T(test_fips_and_dualstack),
        T(test_s3_dualstack_and_bad_variant),
        T(test_local_region),
        T(test_max_attempts_and_ca_bundle),
        T(test_ini_dialect),
        T(test_ini_indented_keys),
        T(test_ini_later_value_wins),
        T(test_ini_parse_error_names_line_not_content),
        T(test_missing_credentials_lists_places),
        T(test_missing_credentials_explicit_profile),
        T(test_no_home),
        T(test_profile_not_found),
        T(test_partial_credentials),
        T(test_empty_env_is_unset),
        T(test_permission_warning),
        T(test_unreadable_file),
        T(test_free_null),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
