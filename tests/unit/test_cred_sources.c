/*
 * test_cred_sources.c - the credential chain and the pure parts of its
 * sources: time stamps and JSON documents as AWS writes them, the container
 * endpoint's allowed URLs, messages without query strings or passwords, and
 * the chain's choices and refusals that need no network (environment,
 * files, credential_process, role and SSO settings that are refused before
 * any call). The sources that call a service are tested against stand-ins
 * in tests/integration/test_creds.py.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>     /* fopen, snprintf */
#include <stdlib.h>    /* mkdtemp, free */
#include <string.h>    /* strcmp, strstr */
#include <sys/stat.h>  /* mkdir */
#include <time.h>      /* time */
#include <unistd.h>    /* unlink, rmdir */

#include "aws/aws_config.h"
#include "aws/aws_http.h"
#include "aws/cred_source.h"

/* ---- the STS endpoint ---- */

static const char *sts_env(const char *name)
{
    (void)name;
    return NULL;
}

/* STS's endpoint: the SDKs' rules for the region and the variants of the
 * configuration being resolved (tests/unit/test_endpoints.c holds the
 * published cases), with the region requests there are signed for. */
static void test_sts_endpoint(void **state)
{
    (void)state;
    el_ini creds = {0}, cfg = {0};
    el_aws_config net = {.use_fips = true};
    el_diag d;
    el_diag_clear(&d);
    el_cred_ctx ctx = {sts_env, &creds, &cfg, "us-gov-east-1", &net, &d};
    char *url, region[64];
    /* GovCloud's plain name is its FIPS one */
    assert_int_equal(el_cred_sts_endpoint(&ctx, "default", &url, region), EL_OK);
    assert_string_equal(url, "https://sts.us-gov-east-1.amazonaws.com");
    assert_string_equal(region, "us-gov-east-1");
    free(url);
    net.use_dualstack = true;
    ctx.region = "us-east-1";
    assert_int_equal(el_cred_sts_endpoint(&ctx, "default", &url, region), EL_OK);
    assert_string_equal(url, "https://sts-fips.us-east-1.api.aws");
    free(url);
    /* the global endpoint is signed for us-east-1 */
    net.use_fips = net.use_dualstack = false;
    ctx.region = "aws-global";
    assert_int_equal(el_cred_sts_endpoint(&ctx, "default", &url, region), EL_OK);
    assert_string_equal(url, "https://sts.amazonaws.com");
    assert_string_equal(region, "us-east-1");
    free(url);
}

/* ---- parsing ---- */

static void test_parse_time(void **state)
{
    (void)state;
    time_t t;
    assert_int_equal(el_cred_parse_time("2024-01-02T03:04:05Z", &t), EL_OK);
    assert_int_equal(t, 1704164645);
    assert_int_equal(el_cred_parse_time("2024-01-02T03:04:05.123Z", &t), EL_OK);
    assert_int_equal(t, 1704164645);
    assert_int_equal(el_cred_parse_time("2024-01-02T05:04:05+02:00", &t), EL_OK);
    assert_int_equal(t, 1704164645);
    assert_int_equal(el_cred_parse_time("2024-01-02T03:04:05UTC", &t), EL_OK); /* old CLIs */
    assert_int_equal(t, 1704164645);
    assert_int_equal(el_cred_parse_time("2024-01-02 03:04:05", &t), EL_OK);
    assert_int_equal(el_cred_parse_time("2024-13-02T03:04:05Z", &t), EL_EPARSE);
    assert_int_equal(el_cred_parse_time("2024-01-02T03:04Z", &t), EL_EPARSE);
    assert_int_equal(el_cred_parse_time("2024-01-02T03:04:05 EST", &t), EL_EPARSE);
    assert_int_equal(el_cred_parse_time("", &t), EL_EPARSE);
}

static const el_cred_json_spec container_spec = {
    .access_key = "AccessKeyId", .secret_key = "SecretAccessKey", .token = "Token",
    .expiration = "Expiration", .need_token = true, .need_expiration = true};

static void test_from_json(void **state)
{
    (void)state;
    el_cred *c;
    el_diag d;
    assert_int_equal(el_cred_from_json(
        "{\"AccessKeyId\":\"ASIA1\",\"SecretAccessKey\":\"sk1\",\"Token\":\"t1\","
        "\"Expiration\":\"2030-01-01T00:00:00Z\",\"RoleArn\":\"x\"}", &container_spec, "w", &c,
        &d), EL_OK);
    assert_string_equal(el_cred_access_key(c), "ASIA1");
    assert_string_equal(el_cred_session_token(c), "t1");
    assert_int_equal(el_cred_expiration(c), 1893456000);
    el_cred_release(c);

    assert_int_equal(el_cred_from_json("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s\"}",
                                       &container_spec, "container credentials", &c, &d),
                     EL_ECONFIG);
    assert_null(c);
    assert_string_equal(d.msg, "container credentials: the answer has no Token");
    assert_int_equal(el_cred_from_json("[1,2]", &container_spec, "w", &c, &d), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "not a JSON object"));
    assert_int_equal(el_cred_from_json(
        "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"topsecret\",\"Token\":\"t\","
        "\"Expiration\":\"soon\"}", &container_spec, "w", &c, &d), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "Expiration is not an ISO 8601 time"));
    assert_null(strstr(d.msg, "topsecret"));

    /* IAM Identity Center: nested, milliseconds */
    static const el_cred_json_spec sso = {
        .object = "roleCredentials", .access_key = "accessKeyId",
        .secret_key = "secretAccessKey", .token = "sessionToken", .expiration = "expiration",
        .expiration_ms = true, .need_token = true, .need_expiration = true};
    assert_int_equal(el_cred_from_json(
        "{\"roleCredentials\":{\"accessKeyId\":\"ASIASSO\",\"secretAccessKey\":\"s\","
        "\"sessionToken\":\"t\",\"expiration\":1893456000000}}", &sso, "w", &c, &d), EL_OK);
    assert_int_equal(el_cred_expiration(c), 1893456000);
    el_cred_release(c);

    /* credential_process: Version 1, the token and expiration optional */
    static const el_cred_json_spec proc = {
        .access_key = "AccessKeyId", .secret_key = "SecretAccessKey", .token = "SessionToken",
        .expiration = "Expiration", .version_one = true};
    assert_int_equal(el_cred_from_json(
        "{\"Version\":1,\"AccessKeyId\":\"AKIAP\",\"SecretAccessKey\":\"s\"}", &proc, "p", &c,
        &d), EL_OK);
    assert_null(el_cred_session_token(c));
    assert_int_equal(el_cred_expiration(c), 0);
    el_cred_release(c);
    assert_int_equal(el_cred_from_json(
        "{\"Version\":2,\"AccessKeyId\":\"AKIAP\",\"SecretAccessKey\":\"s\"}", &proc, "p", &c,
        &d), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "Version 1"));
}

static void test_container_urls(void **state)
{
    (void)state;
    char *u;
    el_diag d;
    assert_int_equal(el_cred_container_url("/v2/credentials/abc", NULL, &u, &d), EL_OK);
    assert_string_equal(u, "http://169.254.170.2/v2/credentials/abc");
    free(u);
    static const char *const ok[] = {
        "http://127.0.0.1:51679/creds", "http://127.3.4.5/x", "http://localhost:9/x",
        "http://[::1]:8080/x", "http://169.254.170.23/v1/credentials",
        "http://[fd00:ec2::23]/v1/credentials", "https://creds.example.com/x"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(el_cred_container_url(NULL, ok[i], &u, &d), EL_OK);
        assert_string_equal(u, ok[i]);
        free(u);
    }
    static const char *const refused[] = {"http://192.0.2.1/creds", "http://example.com/x",
                                          "http://169.254.169.254/x", "ftp://127.0.0.1/x"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(el_cred_container_url(NULL, refused[i], &u, &d), EL_ECONFIG);
        assert_null(u);
    }
}

static void test_messages(void **state)
{
    (void)state;
    char out[200];
    el_http_url_for_message("https://portal.sso.eu-west-1.amazonaws.com/federation/"
                            "credentials?account_id=1&role_name=r", out, sizeof out);
    assert_string_equal(out, "https://portal.sso.eu-west-1.amazonaws.com/federation/credentials");
    el_http_url_for_message("http://user:pa55@proxy:3128/x?y", out, sizeof out);
    assert_string_equal(out, "http://proxy:3128/x");
    assert_non_null(strstr(el_aws_http_hint("SSL certificate problem: unable to get local "
                                            "issuer certificate"), "AWS_CA_BUNDLE"));
    assert_non_null(strstr(el_aws_http_hint("CONNECT tunnel failed, response 407"),
                           "HTTPS_PROXY"));
    assert_null(el_aws_http_hint("Couldn't connect to server"));
    el_buf b;
    el_buf_init(&b, 1024);
    assert_int_equal(el_cred_form_put(&b, "RoleArn", "arn:aws:iam::1:role/a b+c"), EL_OK);
    assert_int_equal(el_cred_form_put(&b, "Version", "2011-06-15"), EL_OK);
    assert_string_equal(el_buf_str(&b), "RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fa%20b%2Bc&"
                                        "Version=2011-06-15");
    el_buf_free(&b);
}

/* ---- the chain, through el_aws_config_resolve, with a fake environment ---- */

#define MAX_ENV 32
static const char *env_names[MAX_ENV], *env_values[MAX_ENV];
static size_t env_n;
static char home[256], aws_dir[300];

static const char *fake_getenv(const char *name)
{
    for (size_t i = 0; i < env_n; i++)
        if (strcmp(env_names[i], name) == 0)
            return env_values[i];
    return NULL;
}

static void set_env(const char *name, const char *value)
{
    assert_true(env_n < MAX_ENV);
    env_names[env_n] = name;
    env_values[env_n++] = value;
}

static void write_aws(const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", aws_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(home, sizeof home, "/tmp/el_cred_test_XXXXXX");
    if (!mkdtemp(home))
        return -1;
    snprintf(aws_dir, sizeof aws_dir, "%s/.aws", home);
    mkdir(aws_dir, 0700);
    env_n = 0;
    set_env("HOME", home);
    set_env("AWS_REGION", "eu-west-1");
    set_env("AWS_EC2_METADATA_DISABLED", "true"); /* no network from a unit test */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[600];
    for (const char *const *n = (const char *const[]){"config", "credentials", NULL}; *n; n++) {
        snprintf(path, sizeof path, "%s/%s", aws_dir, *n);
        unlink(path);
    }
    rmdir(aws_dir);
    rmdir(home);
    return 0;
}

static el_diag diag;

static el_aws_config *resolve(const char *profile)
{
    el_aws_opts o = {.profile = profile};
    el_aws_config *c = NULL;
    el_diag_clear(&diag);
    el_err err = el_aws_config_resolve(&o, fake_getenv, &c, NULL, 0, &diag);
    if (err)
        return NULL;
    return c;
}

static const char *access_key(const el_aws_config *c)
{
    static char ak[200];
    el_cred *k;
    assert_int_equal(el_creds_get(c->creds, time(NULL), &k, NULL), EL_OK);
    snprintf(ak, sizeof ak, "%s", el_cred_access_key(k));
    el_cred_release(k);
    return ak;
}

static void test_process_source(void **state)
{
    (void)state;
    write_aws("config", "[default]\ncredential_process = /bin/echo "
              "'{\"Version\": 1, \"AccessKeyId\": \"AKIAFROMPROC\", "
              "\"SecretAccessKey\": \"procsecret\"}'\n");
    el_aws_config *c = resolve(NULL);
    assert_non_null(c);
    assert_string_equal(access_key(c), "AKIAFROMPROC");
    assert_string_equal(c->cred_source, "credential_process /bin/echo (profile default)");
    el_aws_config_free(c);
    /* the credentials file's keys come before credential_process */
    write_aws("credentials", "[default]\naws_access_key_id = AKIAFILE\n"
              "aws_secret_access_key = filesecret\n");
    c = resolve(NULL);
    assert_non_null(c);
    assert_string_equal(access_key(c), "AKIAFILE");
    el_aws_config_free(c);
    /* and the environment before both */
    set_env("AWS_ACCESS_KEY_ID", "AKIAENV");
    set_env("AWS_SECRET_ACCESS_KEY", "envsecret");
    c = resolve(NULL);
    assert_non_null(c);
    assert_string_equal(access_key(c), "AKIAENV");
    assert_string_equal(c->cred_source, "environment");
    el_aws_config_free(c);
}

static void test_refusals_before_any_call(void **state)
{
    (void)state;
    write_aws("credentials", "[a]\naws_access_key_id = AKIAA\naws_secret_access_key = sa\n");
    write_aws("config",
              "[profile mfa]\nrole_arn = arn:aws:iam::1:role/m\nsource_profile = a\n"
              "mfa_serial = arn:aws:iam::1:mfa/me\n"
              "[profile l1]\nrole_arn = arn:aws:iam::1:role/1\nsource_profile = l2\n"
              "[profile l2]\nrole_arn = arn:aws:iam::1:role/2\nsource_profile = l1\n"
              "[profile both]\nrole_arn = arn:aws:iam::1:role/b\nsource_profile = a\n"
              "credential_source = Environment\n"
              "[profile dur]\nrole_arn = arn:aws:iam::1:role/d\nsource_profile = a\n"
              "duration_seconds = 60\n"
              "[profile sso]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = r\n"
              "[sso-session corp]\nsso_start_url = https://x.awsapps.com/start\n"
              "sso_region = eu-west-1\n"
              "[profile nosess]\nsso_session = gone\nsso_account_id = 1\nsso_role_name = r\n"
              "[profile web]\nweb_identity_token_file = /nonexistent/t\n");
    static const struct {
        const char *profile, *want;
    } cases[] = {
        {"mfa", "cannot ask for an MFA code"},
        {"l1", "a loop"},
        {"both", "sets both source_profile and credential_source"},
        {"dur", "duration_seconds '60' of profile 'dur'"},
        {"sso", "run aws sso login --profile sso"},
        {"nosess", "no [sso-session gone] section"},
        {"web", "no role to assume"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        el_aws_config *c = resolve(cases[i].profile);
        if (c)
            fail_msg("profile %s resolved", cases[i].profile);
        if (!strstr(diag.msg, cases[i].want))
            fail_msg("profile %s: '%s' has no '%s'", cases[i].profile, diag.msg, cases[i].want);
    }
}

static void test_nothing_found_lists_every_place(void **state)
{
    (void)state;
    el_aws_config *c = resolve(NULL);
    assert_null(c);
    assert_non_null(strstr(diag.msg, "no credentials found: looked in the environment"));
    assert_non_null(strstr(diag.msg, "container credentials endpoint"));
    assert_non_null(strstr(diag.msg, "EC2 instance metadata service "
                                     "(AWS_EC2_METADATA_DISABLED=true)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sts_endpoint),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_from_json),
        cmocka_unit_test(test_container_urls),
        cmocka_unit_test(test_messages),
        cmocka_unit_test_setup_teardown(test_process_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals_before_any_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nothing_found_lists_every_place, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
