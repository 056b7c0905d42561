/*
 * s3.h - an Amazon S3 client for what edgeload needs: listing a prefix,
 * ranged GETs, PUT and multipart upload, over libcurl with SigV4 (s3_sign.h).
 *
 *   el_s3 *s3;
 *   el_s3_new(cfg, "--endpoint-url-s3 value or NULL", getenv, &s3, &d);
 *   el_s3_list(s3, "bucket", "prefix/", &list, &d);   // every page, key order
 *   el_s3_free(s3);
 *
 * Credentials, region, HTTPS verification and CA file come from an
 * el_aws_config (the same chain as DynamoDB). The endpoint is S3's own:
 * --endpoint-url-s3, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL (both ignored
 * when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else the one the SDKs'
 * endpoint rules give the region, FIPS and dual-stack (aws/endpoints.h:
 * https://s3.<region>.amazonaws.com, s3-fips.dualstack..., .com.cn, ...).
 * A custom endpoint (an S3-compatible store) is addressed path-style
 * (ENDPOINT/bucket/key); AWS virtual-hosted style (bucket.s3.<region>...)
 * unless the bucket name cannot be a host name (dots, upper case, '_', a
 * '-' first or last), then path-style too.
 *
 * Errors come back as el_err with a one-line diag naming the s3:// URL and
 * what S3 said: EL_EIO for NoSuchBucket/NoSuchKey, EL_ECONFIG for
 * AccessDenied, bad keys or a bucket in another region (the message names
 * the region to use), EL_ENET for connection failures after the retries,
 * EL_ESERVICE for the rest. No message ever holds a secret.
 *
 * Threads: every call uses its own curl handle; calls may run on several
 * threads at once. The client must outlive its users (sources, uploads).
 */
#ifndef EL_S3_H
#define EL_S3_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "aws/aws_config.h"
#include "s3/s3_xml.h"

typedef struct el_s3 el_s3;

/* True when s names an S3 location ("s3://..."). */
bool el_s3_is_url(const char *s);

/* Splits "s3://bucket/key" into malloc'd bucket and key (key may be "", or
 * end in '/' for a prefix). EL_EUSAGE with a message when it is not one. */
el_err el_s3_url_parse(const char *url, char **bucket, char **key, el_diag *diag) EL_MUST_USE;

/* Resolves the endpoint as above (cli: --endpoint-url-s3 or NULL; getenv_fn
 * NULL = getenv) and creates the client. Borrows cfg, which must outlive it.
 * *out NULL on failure (EL_EUSAGE for a bad endpoint URL). */
el_err el_s3_new(const el_aws_config *cfg, const char *cli_endpoint, el_getenv_fn getenv_fn,
                 el_s3 **out, el_diag *diag) EL_MUST_USE;
void el_s3_free(el_s3 *s3);

/* The endpoint in use, without trailing slash (borrowed). */
const char *el_s3_endpoint(const el_s3 *s3);
/* The region requests are signed for (borrowed). */
const char *el_s3_region(const el_s3 *s3);

/* How s3_source.h reads objects through this client: parts of part_size
 * bytes (0 = 8 MiB), `ahead` of them in flight (0 = 4). */
void el_s3_set_read_parts(el_s3 *s3, size_t part_size, int ahead);
void el_s3_read_parts(const el_s3 *s3, size_t *part_size, int *ahead);

/* Sets the attempts of one request (connection errors, 5xx, SlowDown):
 * default 5, or the config's max_attempts. Backoff: capped exponential with
 * full jitter, from base_ms (default 100). For tests. */
void el_s3_set_retry(el_s3 *s3, int attempts, double base_ms);

/*
 * Lists every object whose key starts with prefix (ListObjectsV2, following
 * continuation tokens), in key order, into *out (which the caller clears
 * with el_s3_list_page_clear; its next_token is NULL). At most max_objects
 * (0 = 10,000,000) or EL_ELIMIT.
 */
el_err el_s3_list(el_s3 *s3, const char *bucket, const char *prefix, size_t max_objects,
                  el_s3_list_page *out, el_diag *diag) EL_MUST_USE;

/* Size and ETag of one object (HEAD). etag (cap bytes) may be NULL. */
el_err el_s3_head(el_s3 *s3, const char *bucket, const char *key, uint64_t *size,
                  char *etag, size_t etag_cap, el_diag *diag) EL_MUST_USE;

/*
 * GETs bytes [start, end) of an object into out (appended; the buffer's max
 * bounds it). When etag is given the object must still be that version
 * (If-Match): EL_EIO "changed while being read" otherwise. Retries resume at
 * the byte reached, so out gets each byte once.
 */
el_err el_s3_get_range(el_s3 *s3, const char *bucket, const char *key, uint64_t start,
                       uint64_t end, const char *etag, el_buf *out, el_diag *diag) EL_MUST_USE;

/* PUTs one object (the body's SHA-256 is signed). */
el_err el_s3_put(el_s3 *s3, const char *bucket, const char *key, const void *data, size_t len,
                 el_diag *diag) EL_MUST_USE;

/* DELETEs one object (no error when it does not exist). */
el_err el_s3_delete(el_s3 *s3, const char *bucket, const char *key, el_diag *diag) EL_MUST_USE;

/* ---- multipart upload ---- */

/* CreateMultipartUpload: *upload_id is malloc'd, the caller frees it. */
el_err el_s3_mpu_create(el_s3 *s3, const char *bucket, const char *key, char **upload_id,
                        el_diag *diag) EL_MUST_USE;

/* UploadPart number part_no (1..10000): *etag (malloc'd) is the part's ETag. */
el_err el_s3_mpu_part(el_s3 *s3, const char *bucket, const char *key, const char *upload_id,
                      int part_no, const void *data, size_t len, char **etag,
                      el_diag *diag) EL_MUST_USE;

/* CompleteMultipartUpload with parts 1..n whose ETags are etags[0..n-1]. An
 * error document in a 200 answer (S3 does that) is an error too. */
el_err el_s3_mpu_complete(el_s3 *s3, const char *bucket, const char *key,
                          const char *upload_id, char *const *etags, size_t n,
                          el_diag *diag) EL_MUST_USE;

/* AbortMultipartUpload; best effort (errors are only reported). */
el_err el_s3_mpu_abort(el_s3 *s3, const char *bucket, const char *key, const char *upload_id,
                       el_diag *diag) EL_MUST_USE;

#endif
