/*
 * s3_internal.h - what s3_client.c shares with s3_source.c and s3_store.c:
 * one request set up on a curl easy handle, and the reading of its outcome.
 * Not part of the API.
 */
#ifndef EL_S3_INTERNAL_H
#define EL_S3_INTERNAL_H

#include <curl/curl.h>  /* CURL, CURLcode */

#include "s3/s3.h"

#define S3_ERR_BODY_MAX (64u * 1024u)

/* Where the body of a 2xx answer goes: returns n to go on, 0 to fail. */
typedef size_t (*s3_data_fn)(void *user, const char *p, size_t n);

typedef struct s3_call {
    /* the request (borrowed) */
    const char *method;
    const char *bucket;
    const char *key;          /* NULL or "" for bucket-level requests */
    const char *query;        /* canonical query, NULL = none */
    const void *body;
    size_t body_len;
    bool has_range;
    uint64_t range_first, range_last;  /* inclusive, as HTTP says */
    const char *if_match;
    s3_data_fn on_data;       /* NULL: a 2xx body is dropped */
    void *on_data_user;
    bool skew_resent;         /* set by s3_call_result when it sends the call again after a
                                 refusal of the clock (aws/skew.h), so that it does once;
                                 kept across setups: zero it for a new request */

    /* the answer (filled by the transfer) */
    long signed_offset;       /* the offset of the client's clock setup signed with */
    CURL *h;
    long status;              /* from the status line; 0 before it */
    el_buf err_body;          /* the body of a non-2xx answer, capped */
    char bucket_region[64];   /* x-amz-bucket-region */
    char etag[256];           /* ETag header */
    bool data_failed;         /* on_data refused bytes */

    /* owned by the call */
    struct curl_slist *headers;
    char *url;
    char errbuf[CURL_ERROR_SIZE];
} s3_call;

/* Sets every option of h for c (URL, method, body, signed headers, TLS,
 * timeouts, callbacks). c->h = h. The call owns its header list and URL
 * until s3_call_cleanup. */
el_err s3_call_setup(el_s3 *s3, CURL *h, s3_call *c, el_diag *diag) EL_MUST_USE;

/* Frees what setup allocated; the call may be set up again. */
void s3_call_cleanup(s3_call *c);

/* Classifies a finished transfer: EL_OK for 2xx; otherwise fills diag with
 * a one-line message naming s3://bucket/key. *retry says whether trying
 * again may help (connection errors, 5xx, SlowDown, RequestTimeout, and
 * once a refusal of the clock that the answer's Date set right: the next
 * setup signs by the corrected clock). */
el_err s3_call_result(el_s3 *s3, s3_call *c, CURLcode rc, bool *retry, el_diag *diag);

/* Sleeps the backoff of retry number attempt (0 = the first retry). */
void s3_backoff_sleep(el_s3 *s3, unsigned attempt);

/* Attempts a request gets. */
int s3_attempts(const el_s3 *s3);

#endif
