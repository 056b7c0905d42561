/*
 * endpoints.h - which host AWS serves a service from for a region, as the
 * SDKs' endpoint rules say (botocore/data/<service>/<date>/
 * endpoint-rule-set-1.json and botocore/data/partitions.json), for the
 * three services edgeload calls: DynamoDB, S3 and STS.
 *
 * The inputs are those a user of edgeload can give: the region and the two
 * variants, FIPS (use_fips_endpoint, AWS_USE_FIPS_ENDPOINT) and dual-stack
 * (use_dualstack_endpoint, AWS_USE_DUALSTACK_ENDPOINT). An endpoint URL the
 * user gives (--endpoint-url, AWS_ENDPOINT_URL_<SERVICE>, ...) is not
 * resolved here: it wins over both variants, as botocore lets it.
 *
 * A region belongs to the first partition (aws, aws-cn, aws-eusc, aws-iso,
 * aws-iso-b, aws-iso-e, aws-iso-f, aws-us-gov) that lists it or whose
 * pattern it matches ("us-gov-west-1" is aws-us-gov's), else to aws. Then
 * each service's rules: "dynamodb-fips.<region>.amazonaws.com", with
 * dual-stack "<service>-fips.<region>.api.aws" (the partition's dual-stack
 * suffix), except where a service says otherwise: in GovCloud the plain
 * names of DynamoDB and STS are already FIPS endpoints; S3 puts its variants
 * in the first label ("s3-fips.dualstack.<region>.amazonaws.com") and has
 * no FIPS endpoint in China; "aws-global" is the global endpoint of STS
 * and S3 (signed for us-east-1); DynamoDB's region "local" is DynamoDB
 * Local on http://localhost:8000 (signed for us-east-1).
 *
 * tests/unit/test_endpoints.c checks every case the SDKs publish for these
 * three services that these inputs can express
 * (tests/fixtures/endpoints/endpoint-cases.txt, made by make_cases.py from
 * botocore's endpoint tests and partitions.json).
 *
 * Pure functions; any thread.
 */
#ifndef EL_AWS_ENDPOINTS_H
#define EL_AWS_ENDPOINTS_H

#include <stdbool.h>  /* bool */

#include "common/error.h"

/* What a partition's data says (partitions.json's outputs). */
typedef struct el_aws_partition {
    const char *id;                  /* "aws", "aws-cn", "aws-us-gov", ... */
    const char *dns_suffix;          /* "amazonaws.com" */
    const char *dualstack_dns_suffix;/* "api.aws" */
    bool fips;                       /* supportsFIPS */
    bool dualstack;                  /* supportsDualStack */
} el_aws_partition;

/* The partition of region (never NULL: aws when nothing else matches). */
const el_aws_partition *el_aws_partition_of(const char *region);

/* Where requests of a service go. */
typedef struct el_aws_endpoint {
    char url[256];             /* scheme://host, no trailing slash (S3: without the
                                  bucket, which el_aws_s3_virtual_hostable places) */
    char signing_region[64];   /* the region of the signature's scope */
} el_aws_endpoint;

/*
 * The endpoint of service ("dynamodb", "s3" or "sts") in region with the
 * variants asked for. EL_ECONFIG with diag when the rules have no such
 * endpoint (S3 with FIPS in aws-cn, DynamoDB Local with a variant, a
 * partition without the variant), naming the service, the region and its
 * partition; EL_EUSAGE for another service or a region over 63 bytes.
 */
el_err el_aws_endpoint_resolve(const char *service, const char *region, bool fips,
                               bool dualstack, el_aws_endpoint *out,
                               el_diag *diag) EL_MUST_USE;

/* True when S3 addresses bucket virtual-hosted (bucket.<host>) rather than
 * in the path (<host>/bucket): a DNS label of 3 to 63 lower-case letters,
 * digits and '-' that neither starts nor ends with '-' (the rules'
 * aws.isVirtualHostableS3Bucket without sub-domains). */
bool el_aws_s3_virtual_hostable(const char *bucket);

#endif
