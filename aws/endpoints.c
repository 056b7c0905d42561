/*
 * endpoints.c - the SDKs' endpoint rules for DynamoDB, S3 and STS, for a
 * region and the FIPS and dual-stack variants.
 *
 * DESIGN: the rule sets are decision trees of 100 KB (S3's of 600 lines
 * once printed) written for every parameter an SDK knows: custom
 * endpoints, account ids, access point ARNs, S3 Express, Outposts,
 * Accelerate. edgeload's inputs reach a handful of their leaves, so those
 * leaves are written out here rather than an interpreter of the rule
 * language; what keeps them right is the test that runs every published
 * case these inputs can express (tests/fixtures/endpoints/). The partition
 * table is partitions.json (botocore 1.43.67) in C: each partition's region
 * pattern, which is always ^(<prefixes>)-\w+-\d+$, and the pseudo-regions it
 * lists that do not match it (its "-global" names).
 */
#include "aws/endpoints.h"

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strcmp, strncmp, strlen */

typedef struct partition_def {
    el_aws_partition p;
    const char *const *prefixes;  /* the alternatives before "-\w+-\d+" */
    const char *global;           /* the listed region that does not match */
} partition_def;

static const char *const aws_prefixes[] = {"us", "eu", "ap", "sa", "ca", "me", "af", "il",
                                           "mx", NULL};
static const char *const cn_prefixes[] = {"cn", NULL};
static const char *const eusc_prefixes[] = {"eusc-de", NULL};
static const char *const iso_prefixes[] = {"us-iso", NULL};
static const char *const isob_prefixes[] = {"us-isob", NULL};
static const char *const isoe_prefixes[] = {"eu-isoe", NULL};
static const char *const isof_prefixes[] = {"us-isof", NULL};
static const char *const gov_prefixes[] = {"us-gov", NULL};

/* In partitions.json's order, which decides: the first match wins. */
static const partition_def partitions[] = {
    {{"aws", "amazonaws.com", "api.aws", true, true}, aws_prefixes, "aws-global"},
    {{"aws-cn", "amazonaws.com.cn", "api.amazonwebservices.com.cn", true, true}, cn_prefixes,
     "aws-cn-global"},
    {{"aws-eusc", "amazonaws.eu", "api.amazonwebservices.eu", true, true}, eusc_prefixes,
     NULL},
    {{"aws-iso", "c2s.ic.gov", "api.aws.ic.gov", true, true}, iso_prefixes, "aws-iso-global"},
    {{"aws-iso-b", "sc2s.sgov.gov", "api.aws.scloud", true, true}, isob_prefixes,
     "aws-iso-b-global"},
    {{"aws-iso-e", "cloud.adc-e.uk", "api.cloud-aws.adc-e.uk", true, true}, isoe_prefixes,
     "aws-iso-e-global"},
    {{"aws-iso-f", "csp.hci.ic.gov", "api.aws.hci.ic.gov", true, true}, isof_prefixes,
     "aws-iso-f-global"},
    {{"aws-us-gov", "amazonaws.com", "api.aws", true, true}, gov_prefixes,
     "aws-us-gov-global"},
};

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* s matches \w+-\d+ to its end (\w has no '-', so one '-' splits it). */
static bool word_dash_digits(const char *s)
{
    const char *p = s;
    while (is_word(*p))
        p++;
    if (p == s || *p != '-')
        return false;
    const char *d = ++p;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > d && *p == '\0';
}

static bool matches(const partition_def *d, const char *region)
{
    if (d->global && strcmp(region, d->global) == 0)
        return true;
    for (const char *const *pre = d->prefixes; *pre; pre++) {
        size_t n = strlen(*pre);
        if (strncmp(region, *pre, n) == 0 && region[n] == '-' && word_dash_digits(region + n + 1))
            return true;
    }
    return false;
}

const el_aws_partition *el_aws_partition_of(const char *region)
{
    for (size_t i = 0; i < sizeof partitions / sizeof partitions[0]; i++)
        if (matches(&partitions[i], region))
            return &partitions[i].p;
    return &partitions[0].p;
}

bool el_aws_s3_virtual_hostable(const char *bucket)
{
    size_t n = strlen(bucket);
    if (n < 3 || n > 63 || bucket[0] == '-' || bucket[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = bucket[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    return true;
}

/* "FIPS", "dual-stack" or "FIPS and dual-stack": what was asked for. */
static const char *variants(bool fips, bool dualstack)
{
    return fips && dualstack ? "FIPS and dual-stack" : fips ? "FIPS" : "dual-stack";
}

static el_err no_variant(el_diag *diag, const char *name, const char *region,
                         const el_aws_partition *p, bool fips, bool dualstack)
{
    return el_diag_set(diag, EL_ECONFIG, "%s has no %s endpoint in %s (partition %s)", name,
                       variants(fips, dualstack), region, p->id);
}

/* DynamoDB and STS: "<svc>[-fips].<region>.<suffix>", the dual-stack
 * suffix with dual-stack; GovCloud's plain name is already FIPS. */
static el_err regional(const char *svc, const char *name, const char *region, bool fips,
                       bool dualstack, const el_aws_partition *p, el_aws_endpoint *out,
                       el_diag *diag)
{
    if ((fips && !p->fips) || (dualstack && !p->dualstack))
        return no_variant(diag, name, region, p, fips, dualstack);
    bool fips_label = fips && (dualstack || strcmp(p->id, "aws-us-gov") != 0);
    snprintf(out->url, sizeof out->url, "https://%s%s.%s.%s", svc, fips_label ? "-fips" : "",
             region, dualstack ? p->dualstack_dns_suffix : p->dns_suffix);
    return EL_OK;
}

/* S3: "s3[-fips][.dualstack].<region>.<dns suffix>"; "aws-global" is
 * s3.<suffix> and, with a variant, us-east-1's host. */
static el_err s3(const char *region, bool fips, bool dualstack, const el_aws_partition *p,
                 el_aws_endpoint *out, el_diag *diag)
{
    if (fips && strcmp(p->id, "aws-cn") == 0)
        return no_variant(diag, "S3", region, p, true, false);
    bool global = strcmp(region, "aws-global") == 0;
    if (global) {
        snprintf(out->signing_region, sizeof out->signing_region, "us-east-1");
        if (!fips && !dualstack) {
            snprintf(out->url, sizeof out->url, "https://s3.%s", p->dns_suffix);
            return EL_OK;
        }
        region = "us-east-1";
    }
    snprintf(out->url, sizeof out->url, "https://s3%s%s.%s.%s", fips ? "-fips" : "",
             dualstack ? ".dualstack" : "", region, p->dns_suffix);
    return EL_OK;
}

el_err el_aws_endpoint_resolve(const char *service, const char *region, bool fips,
                               bool dualstack, el_aws_endpoint *out, el_diag *diag)
{
    out->url[0] = '\0';
    out->signing_region[0] = '\0';
    if (strlen(region) > 63)
        return el_diag_set(diag, EL_EUSAGE, "region name longer than 63 bytes");
    const el_aws_partition *p = el_aws_partition_of(region);
    snprintf(out->signing_region, sizeof out->signing_region, "%s", region);
    if (strcmp(service, "dynamodb") == 0) {
        if (strcmp(region, "local") == 0) {
            if (fips || dualstack)
                return el_diag_set(diag, EL_ECONFIG, "DynamoDB Local (region local) has no %s "
                                   "endpoint", variants(fips, dualstack));
            snprintf(out->url, sizeof out->url, "http://localhost:8000");
            snprintf(out->signing_region, sizeof out->signing_region, "us-east-1");
            return EL_OK;
        }
        return regional("dynamodb", "DynamoDB", region, fips, dualstack, p, out, diag);
    }
    if (strcmp(service, "sts") == 0) {
        if (!fips && !dualstack && strcmp(region, "aws-global") == 0) {
            snprintf(out->url, sizeof out->url, "https://sts.amazonaws.com");
            snprintf(out->signing_region, sizeof out->signing_region, "us-east-1");
            return EL_OK;
        }
        return regional("sts", "STS", region, fips, dualstack, p, out, diag);
    }
    if (strcmp(service, "s3") == 0)
        return s3(region, fips, dualstack, p, out, diag);
    return el_diag_set(diag, EL_EUSAGE, "no endpoint rules for service '%s'", service);
}
