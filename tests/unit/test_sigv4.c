/*
 * test_sigv4.c - the SigV4 signer against known answers: AWS's published
 * signing-key example, requests of AWS's SigV4 test suite (get-vanilla,
 * post-vanilla, query order, header value trimming, path normalisation) as
 * botocore 1.29 signs them, and DynamoDB requests with and without a
 * session token on both sides of a UTC midnight (the cached signing key
 * must roll over with the date). Expected values were computed with
 * botocore.auth.SigV4Auth at a fixed clock (and the signing key with
 * Python's hmac), not with this code.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h> /* signing on several threads */
#include <string.h>  /* strlen, strcmp, strstr */
#include <time.h>    /* time_t */

#include "aws/sigv4.h"

#define SUITE_AK "AKIDEXAMPLE"
#define SUITE_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
/* 2015-08-30 12:36:00 UTC, the suite's X-Amz-Date */
#define SUITE_TIME ((time_t)1440938160)
#define EMPTY_HASH "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static el_sigv4 *suite_signer(void)
{
    el_sigv4 *s = NULL;
    assert_int_equal(el_sigv4_new(SUITE_AK, SUITE_SK, "us-east-1", "service", &s), EL_OK);
    assert_non_null(s);
    return s;
}

static void expect_auth(el_sigv4 *s, time_t now, const char *method, const char *path,
                        const char *query, const el_sigv4_header *h, size_t n,
                        const char *payload_hash, const char *want_date, const char *want)
{
    char date[EL_SIGV4_DATE_SIZE], auth[512];
    assert_int_equal(el_sigv4_sign(s, now, method, path, query, h, n, payload_hash, date, auth,
                                   sizeof auth),
                     EL_OK);
    assert_string_equal(date, want_date);
    assert_string_equal(auth, want);
}

static void test_signing_key_aws_example(void **state)
{
    (void)state;
    /* AWS documentation, "Examples of how to derive a signing key" */
    el_sigv4 *s = NULL;
    assert_int_equal(el_sigv4_new(SUITE_AK, SUITE_SK, "us-east-1", "iam", &s), EL_OK);
    char hex[EL_SIGV4_HASH_SIZE];
    assert_int_equal(el_sigv4_signing_key_hex(s, "20120215", hex), EL_OK);
    assert_string_equal(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
    assert_int_equal(el_sigv4_signing_key_hex(s, "2012021", hex), EL_EUSAGE);
    el_sigv4_free(s);
    el_sigv4_free(NULL);
}

static void test_payload_hash(void **state)
{
    (void)state;
    char hex[EL_SIGV4_HASH_SIZE];
    assert_int_equal(el_sigv4_payload_hash(NULL, 0, hex), EL_OK);
    assert_string_equal(hex, EMPTY_HASH);
    const char *body = "{\"RequestItems\":{\"Graph\":[{\"PutRequest\":{\"Item\":{\"PK\":{\"S\":"
                       "\"ACTOR#alice\"},\"SK\":{\"S\":\"TARGET#bob\"}}}}]},"
                       "\"ReturnConsumedCapacity\":\"INDEXES\"}";
    assert_int_equal(el_sigv4_payload_hash(body, strlen(body), hex), EL_OK);
    assert_string_equal(hex, "03af2e0bc3a9a5a462ecdf1705e5d841c14f011aaf9bf4845a15856326a8600a");
}

static void test_format_date(void **state)
{
    (void)state;
    char d[EL_SIGV4_DATE_SIZE];
    el_sigv4_format_date(SUITE_TIME, d);
    assert_string_equal(d, "20150830T123600Z");
    el_sigv4_format_date(0, d);
    assert_string_equal(d, "19700101T000000Z");
    el_sigv4_format_date((time_t)4102444799, d);
    assert_string_equal(d, "20991231T235959Z");
}

static void test_aws_suite_requests(void **state)
{
    (void)state;
    el_sigv4 *s = suite_signer();
    const el_sigv4_header host = {"Host", "example.amazon.com"};
    expect_auth(s, SUITE_TIME, "GET", "/", "", &host, 1, EMPTY_HASH, "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "7ab4567ae243ee168f6bf18206b2b40b61ce08277323168138fa113ed23c538e");
    expect_auth(s, SUITE_TIME, "POST", "/", NULL, &host, 1, EMPTY_HASH, "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "2a67e472830488f8f5af212097cff81a82fc54f436e7033de3d5aac92cc144c6");
    /* get-vanilla-query-order-key-case: pairs sorted */
    expect_auth(s, SUITE_TIME, "GET", "/", "Param2=value2&Param1=value1", &host, 1, EMPTY_HASH,
                "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "ca0a842792a27475df455b2925aa79d50a98e27d1733a46b57c22810e6b1a7bc");
    /* get-header-value-trim: names lower-cased and sorted, values trimmed
     * and inner runs of spaces collapsed */
    const el_sigv4_header trim[] = {
        {"My-Header2", " \"a   b   c\""}, {"Host", "example.amazon.com"}, {"My-Header1", " value1"}};
    expect_auth(s, SUITE_TIME, "GET", "/", "", trim, 3, EMPTY_HASH, "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;my-header1;my-header2;x-amz-date, Signature="
                "5e097816546ff8f99e2de1707197ad084de13c4d506a7217a5cffd9976739ab8");
    /* get-relative-relative: dot segments removed (same as get-vanilla) */
    expect_auth(s, SUITE_TIME, "GET", "/example1/example2/../..", "", &host, 1, EMPTY_HASH,
                "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "7ab4567ae243ee168f6bf18206b2b40b61ce08277323168138fa113ed23c538e");
    /* get-space: the path percent-encoded */
    expect_auth(s, SUITE_TIME, "GET", "/example space/", "", &host, 1, EMPTY_HASH,
                "20150830T123600Z",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                "aws4_request, SignedHeaders=host;x-amz-date, Signature="
                "ae440de54e6366450882b7bbaa23032f1cea1ce4df1261713fbdd471f3dda6ff");
    assert_int_equal(el_sigv4_derivations(s), 1); /* one date: one key */
    el_sigv4_free(s);
}

/* A BatchWriteItem as edgeload sends it, at 23:59:59 and 00:00:00 UTC. */
static void test_dynamodb_across_midnight(void **state)
{
    (void)state;
    const char *secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY:EXAMPLE/KEY";
    const char *token = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+abc/def=";
    const char *body_hash = "03af2e0bc3a9a5a462ecdf1705e5d841c14f011aaf9bf4845a15856326a8600a";
    const time_t before = (time_t)1796255999; /* 2026-12-02 23:59:59 UTC */
    static const char *const want[2][2] = {
        {"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE0EDGELOAD/20261202/eu-west-1/dynamodb/"
         "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="
         "de2e2c5619df33685cacec1ced8188b6326ba5ac7dd787cc6cd8a84bfb575477",
         "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE0EDGELOAD/20261202/eu-west-1/dynamodb/"
         "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;"
         "x-amz-target, Signature="
         "61f72f6592d9f42791e315b28946f7dd4ed3c49bbe00ade00da04b58e73928d8"},
        {"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE0EDGELOAD/20261203/eu-west-1/dynamodb/"
         "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="
         "1b1439cf01b20c32e288b1091cb4d5fe313be78c8d8fa89727d2e229af97837d",
         "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE0EDGELOAD/20261203/eu-west-1/dynamodb/"
         "aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;"
         "x-amz-target, Signature="
         "d4cf33b5ac60af6230648b0fa230466f209fcc1c7e577d21d2481d98c77bd7e4"},
    };
    static const char *const dates[2] = {"20261202T235959Z", "20261203T000000Z"};
    el_sigv4 *s = NULL;
    assert_int_equal(el_sigv4_new("AKIDEXAMPLE0EDGELOAD", secret, "eu-west-1", "dynamodb", &s),
                     EL_OK);
    /* the order edgeload passes them in (not sorted) */
    el_sigv4_header h[] = {{"Host", "127.0.0.1:8000"},
                           {"Content-Type", "application/x-amz-json-1.0"},
                           {"X-Amz-Target", "DynamoDB_20120810.BatchWriteItem"},
                           {"X-Amz-Security-Token", token}};
    /* twice through the pair of days: the cache must follow the date both
     * ways (a clock stepped back) */
    for (int round = 0; round < 2; round++)
        for (int day = 0; day < 2; day++)
            for (int tok = 0; tok < 2; tok++)
                expect_auth(s, before + day, "POST", "/", "", h, tok ? 4 : 3, body_hash,
                            dates[day], want[day][tok]);
    assert_int_equal(el_sigv4_derivations(s), 4);
    /* more requests on one date derive nothing */
    for (int i = 0; i < 10; i++) {
        char date[EL_SIGV4_DATE_SIZE], auth[512];
        assert_int_equal(el_sigv4_sign(s, before + 1 + i * 3600, "POST", "/", "", h, 3,
                                       body_hash, date, auth, sizeof auth),
                         EL_OK);
        assert_memory_equal(date, "20261203T", 9);
    }
    assert_int_equal(el_sigv4_derivations(s), 4);
    el_sigv4_free(s);
}

static void test_bad_input(void **state)
{
    (void)state;
    el_sigv4 *s = NULL;
    assert_int_equal(el_sigv4_new("", "x", "r", "s", &s), EL_EUSAGE);
    assert_null(s);
    assert_int_equal(el_sigv4_new("a", "x", "", "s", &s), EL_EUSAGE);
    assert_int_equal(el_sigv4_new("a", NULL, "r", "s", &s), EL_EUSAGE);
    s = suite_signer();
    char date[EL_SIGV4_DATE_SIZE], auth[512];
    const el_sigv4_header dup[] = {{"Host", "a"}, {"host", "b"}};
    assert_int_equal(el_sigv4_sign(s, SUITE_TIME, "GET", "/", "", dup, 2, EMPTY_HASH, date, auth,
                                   sizeof auth),
                     EL_EUSAGE);
    assert_string_equal(auth, "");
    assert_string_equal(date, "");
    const el_sigv4_header own_date[] = {{"X-Amz-Date", "20150830T123600Z"}};
    assert_int_equal(el_sigv4_sign(s, SUITE_TIME, "GET", "/", "", own_date, 1, EMPTY_HASH, date,
                                   auth, sizeof auth),
                     EL_EUSAGE);
    el_sigv4_header many[EL_SIGV4_MAX_HEADERS];
    char names[EL_SIGV4_MAX_HEADERS][8];
    for (size_t i = 0; i < EL_SIGV4_MAX_HEADERS; i++) {
        names[i][0] = 'h';
        names[i][1] = (char)('a' + i);
        names[i][2] = '\0';
        many[i].name = names[i];
        many[i].value = "v";
    }
    assert_int_equal(el_sigv4_sign(s, SUITE_TIME, "GET", "/", "", many, EL_SIGV4_MAX_HEADERS,
                                   EMPTY_HASH, date, auth, sizeof auth),
                     EL_EUSAGE);
    assert_int_equal(el_sigv4_sign(s, SUITE_TIME, "GET", "/", "", many,
                                   EL_SIGV4_MAX_HEADERS - 1, EMPTY_HASH, date, auth,
                                   sizeof auth),
                     EL_OK);
    /* an Authorization that does not fit is refused, not cut */
    const el_sigv4_header host = {"Host", "example.amazon.com"};
    assert_int_equal(el_sigv4_sign(s, SUITE_TIME, "GET", "/", "", &host, 1, EMPTY_HASH, date,
                                   auth, 100),
                     EL_ELIMIT);
    assert_string_equal(auth, "");
    el_sigv4_free(s);
}

/* ---- S3's rules (el_sigv4_opts.s3), against signatures botocore 1.29
 * computed for the same requests (formerly s3_sign.c's own tests) ---- */

static time_t at_2024_01_02_030405(void)
{
    struct tm tm = {.tm_year = 124, .tm_mon = 0, .tm_mday = 2, .tm_hour = 3, .tm_min = 4,
                    .tm_sec = 5};
    return timegm(&tm);
}

static el_sigv4 *s3_signer(const char *token, el_creds **creds)
{
    assert_int_equal(el_creds_new_static("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                         token, "test", creds), EL_OK);
    el_sigv4 *s;
    static const el_sigv4_opts s3 = {.s3 = true};
    assert_int_equal(el_sigv4_new_provider(*creds, "eu-west-1", "s3", &s3, &s), EL_OK);
    return s;
}

static void test_s3_get_range(void **state)
{
    (void)state;
    el_creds *c;
    el_sigv4 *s = s3_signer(NULL, &c);
    const el_sigv4_header h[] = {{"Host", "127.0.0.1:9000"}, {"Range", "bytes=0-99"}};
    char date[EL_SIGV4_DATE_SIZE], auth[512];
    el_cred *used = NULL;
    assert_int_equal(el_sigv4_sign_request(s, at_2024_01_02_030405(), "GET",
                                           "/my-bucket/dir/a%20b%2Bc.csv",
                                           "continuation-token=abc%2F%3D&list-type=2&prefix=dir%2F",
                                           h, 2, "UNSIGNED-PAYLOAD", date, auth, sizeof auth,
                                           &used),
                     EL_OK);
    assert_string_equal(date, "20240102T030405Z");
    assert_string_equal(auth,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/eu-west-1/s3/aws4_request, "
        "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
        "Signature=af32e764fc33c649b660ecf115a5b71e1c0264e897f6f274a91624091273e2de");
    assert_non_null(used);
    assert_null(el_cred_session_token(used));
    el_cred_release(used);
    el_sigv4_free(s);
    el_creds_free(c);
}

static void test_s3_put_token(void **state)
{
    (void)state;
    el_creds *c;
    el_sigv4 *s = s3_signer("tok/en+=", &c);
    const el_sigv4_header h[] = {{"Host", "b.s3.eu-west-1.amazonaws.com"}};
    char date[EL_SIGV4_DATE_SIZE], auth[512];
    el_cred *used = NULL;
    assert_int_equal(el_sigv4_sign_request(s, at_2024_01_02_030405(), "PUT", "/k",
                                           "partNumber=2&uploadId=XyZ", h, 1, EMPTY_HASH, date,
                                           auth, sizeof auth, &used),
                     EL_OK);
    assert_non_null(strstr(auth,
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
        "Signature=9478eba4b7a5acef0185191cf2ed0ee4afd82a3782e5d9b66d9553cc8546c095"));
    assert_string_equal(el_cred_session_token(used), "tok/en+=");
    assert_string_equal(el_cred_token_line(used), "X-Amz-Security-Token: tok/en+=");
    el_cred_release(used);
    el_sigv4_free(s);
    el_creds_free(c);
}

/* Several threads signing with one signer across a date change: every
 * signature is the single-threaded one (TSan checks the cache's locking). */
typedef struct sign_job {
    el_sigv4 *s;
    int bad;
} sign_job;

static void *sign_many(void *p)
{
    sign_job *j = p;
    const el_sigv4_header host = {"Host", "example.amazon.com"};
    char date[EL_SIGV4_DATE_SIZE], auth[512];
    for (int i = 0; i < 200; i++) {
        time_t t = SUITE_TIME + (i % 2) * 86400;
        if (el_sigv4_sign(j->s, t, "GET", "/", "", &host, 1, EMPTY_HASH, date, auth,
                          sizeof auth) != EL_OK)
            j->bad++;
        else if (i % 2 == 0 &&
                 strcmp(auth + strlen(auth) - 64,
                        "7ab4567ae243ee168f6bf18206b2b40b61ce08277323168138fa113ed23c538e") != 0)
            j->bad++;
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    el_sigv4 *s = suite_signer();
    pthread_t t[4];
    sign_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i].s = s;
        jobs[i].bad = 0;
        assert_int_equal(pthread_create(&t[i], NULL, sign_many, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(jobs[i].bad, 0);
    }
    el_sigv4_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signing_key_aws_example),
        cmocka_unit_test(test_payload_hash),
        cmocka_unit_test(test_format_date),
        cmocka_unit_test(test_aws_suite_requests),
        cmocka_unit_test(test_dynamodb_across_midnight),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_s3_get_range),
        cmocka_unit_test(test_s3_put_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
