/*
 * test_endpoints.c - aws/endpoints.c against the endpoint cases the SDKs
 * publish (tests/fixtures/endpoints/endpoint-cases.txt, derived from
 * botocore's endpoint tests and partitions.json by make_cases.py): every
 * region of every partition, and every DynamoDB, S3 and STS case a region
 * and the FIPS and dual-stack settings can express, S3's buckets placed
 * as edgeload's S3 client places them.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* fopen, fgets, snprintf */
#include <stdlib.h>  /* getenv */
#include <string.h>  /* strcmp, strtok_r */

#include "aws/endpoints.h"

static FILE *open_cases(void)
{
    const char *dir = getenv("EDGELOAD_FIXTURES");
    char path[1024];
    if (dir && *dir)
        snprintf(path, sizeof path, "%s/endpoints/endpoint-cases.txt", dir);
    else
        snprintf(path, sizeof path, "%.*s/../fixtures/endpoints/endpoint-cases.txt",
                 (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    return f;
}

/* Splits line into at most max fields at single spaces; returns the count. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \n", &save); t && n < max; t = strtok_r(NULL, " \n", &save))
        f[n++] = t;
    return n;
}

/* The URL edgeload's S3 client sends a bucket's requests to: the
 * bucket first in the host when S3 can address it so, else in the path. */
static void s3_bucket_url(const char *base, const char *bucket, char *out, size_t cap)
{
    if (strcmp(bucket, "-") == 0)
        snprintf(out, cap, "%s", base);
    else if (el_aws_s3_virtual_hostable(bucket))
        snprintf(out, cap, "https://%s.%s", bucket, base + strlen("https://"));
    else
        snprintf(out, cap, "%s/%s", base, bucket);
}

static void test_published_cases(void **state)
{
    (void)state;
    FILE *f = open_cases();
    char line[1024];
    int partitions = 0, endpoints = 0, errors = 0, per_service[3] = {0, 0, 0};
    static const char *const services[3] = {"dynamodb", "s3", "sts"};
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", line);
        char *fl[9];
        int n = split(copy, fl, 9);
        if (strcmp(fl[0], "partition") == 0) {
            assert_int_equal(n, 7);
            const el_aws_partition *p = el_aws_partition_of(fl[1]);
            if (strcmp(p->id, fl[2]) != 0)
                fail_msg("%s: partition %s, expected %s", fl[1], p->id, fl[2]);
            assert_string_equal(p->dns_suffix, fl[3]);
            assert_string_equal(p->dualstack_dns_suffix, fl[4]);
            assert_int_equal(p->fips, fl[5][0] == '1');
            assert_int_equal(p->dualstack, fl[6][0] == '1');
            partitions++;
            continue;
        }
        bool is_error = strcmp(fl[0], "error") == 0;
        assert_true(is_error || strcmp(fl[0], "endpoint") == 0);
        assert_int_equal(n, is_error ? 6 : 8);
        const char *service = fl[1], *region = fl[2], *bucket = fl[5];
        bool fips = fl[3][0] == '1', dualstack = fl[4][0] == '1';
        el_aws_endpoint ep;
        el_diag d;
        el_diag_clear(&d);
        el_err err = el_aws_endpoint_resolve(service, region, fips, dualstack, &ep, &d);
        for (int s = 0; s < 3; s++)
            per_service[s] += strcmp(service, services[s]) == 0;
        if (is_error) {
            if (err != EL_ECONFIG)
                fail_msg("%s %s fips=%d dualstack=%d: resolved %s, the SDKs refuse it", service,
                         region, fips, dualstack, ep.url);
            assert_non_null(strstr(d.msg, region));
            errors++;
            continue;
        }
        if (err != EL_OK)
            fail_msg("%s %s fips=%d dualstack=%d: %s", service, region, fips, dualstack, d.msg);
        char url[512];
        if (strcmp(service, "s3") == 0)
            s3_bucket_url(ep.url, bucket, url, sizeof url);
        else
            snprintf(url, sizeof url, "%s", ep.url);
        if (strcmp(url, fl[6]) != 0)
            fail_msg("%s %s fips=%d dualstack=%d bucket %s: %s, the SDKs say %s", service,
                     region, fips, dualstack, bucket, url, fl[6]);
        assert_string_equal(ep.signing_region, fl[7]);
        endpoints++;
    }
    fclose(f);
    /* the file is what make_cases.py wrote from botocore 1.43.67: a parse
     * that skipped lines would pass with fewer */
    assert_true(partitions >= 50);
    assert_true(endpoints >= 120);
    assert_true(errors >= 1);
    for (int s = 0; s < 3; s++)
        assert_true(per_service[s] >= 30);
}

/* Cases the published tests do not hold, read off the rules. */
static void test_rules_beyond_the_cases(void **state)
{
    (void)state;
    el_aws_endpoint ep;
    el_diag d;
    el_diag_clear(&d);
    /* a region no partition lists falls back on its pattern, else on aws */
    assert_string_equal(el_aws_partition_of("us-gov-central-9")->id, "aws-us-gov");
    assert_string_equal(el_aws_partition_of("eusc-de-east-1")->id, "aws-eusc");
    assert_string_equal(el_aws_partition_of("mars-north-1")->id, "aws");
    assert_string_equal(el_aws_partition_of("us-east-1-x")->id, "aws");
    assert_int_equal(el_aws_endpoint_resolve("dynamodb", "eusc-de-east-1", true, false, &ep, &d),
                     EL_OK);
    assert_string_equal(ep.url, "https://dynamodb-fips.eusc-de-east-1.amazonaws.eu");
    /* GovCloud's plain S3 name is not FIPS (only DynamoDB's and STS's are) */
    assert_int_equal(el_aws_endpoint_resolve("s3", "us-gov-west-1", true, false, &ep, &d), EL_OK);
    assert_string_equal(ep.url, "https://s3-fips.us-gov-west-1.amazonaws.com");
    assert_int_equal(el_aws_endpoint_resolve("sts", "cn-northwest-1", false, true, &ep, &d),
                     EL_OK);
    assert_string_equal(ep.url, "https://sts.cn-northwest-1.api.amazonwebservices.com.cn");
    /* DynamoDB Local has no variants */
    assert_int_equal(el_aws_endpoint_resolve("dynamodb", "local", true, false, &ep, &d),
                     EL_ECONFIG);
    assert_non_null(strstr(d.msg, "FIPS"));
    assert_int_equal(el_aws_endpoint_resolve("dynamodb", "local", false, true, &ep, &d),
                     EL_ECONFIG);
    assert_non_null(strstr(d.msg, "dual-stack"));
    /* S3's FIPS refusal in China names what was asked and where */
    assert_int_equal(el_aws_endpoint_resolve("s3", "cn-north-1", true, true, &ep, &d),
                     EL_ECONFIG);
    assert_string_equal(d.msg, "S3 has no FIPS endpoint in cn-north-1 (partition aws-cn)");
    assert_int_equal(el_aws_endpoint_resolve("sqs", "us-east-1", false, false, &ep, &d),
                     EL_EUSAGE);
}

static void test_virtual_hostable(void **state)
{
    (void)state;
    assert_true(el_aws_s3_virtual_hostable("abc"));
    assert_true(el_aws_s3_virtual_hostable("my-bucket-2"));
    assert_true(el_aws_s3_virtual_hostable(
        "a23456789012345678901234567890123456789012345678901234567890123"));
    assert_false(el_aws_s3_virtual_hostable(
        "a234567890123456789012345678901234567890123456789012345678901234"));
    assert_false(el_aws_s3_virtual_hostable("ab"));
    assert_false(el_aws_s3_virtual_hostable("-abc"));
    assert_false(el_aws_s3_virtual_hostable("abc-"));
    assert_false(el_aws_s3_virtual_hostable("a.bc"));
    assert_false(el_aws_s3_virtual_hostable("a_bc"));
    assert_false(el_aws_s3_virtual_hostable("Abc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_cases),
        cmocka_unit_test(test_rules_beyond_the_cases),
        cmocka_unit_test(test_virtual_hostable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
