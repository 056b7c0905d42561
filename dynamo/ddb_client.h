/*
 * ddb_client.h - DynamoDB's JSON protocol over libcurl, signed with SigV4.
 *
 * Two ways to call:
 *  - el_ddb_call(): synchronous, for control-plane operations (DescribeTable,
 *    CreateTable) and tests;
 *  - el_ddb_req: one prepared request whose CURL easy handle the pipeline's
 *    network stage drives with the multi interface. A request is built
 *    (and its body hashed) once; resending it (retry) re-signs it with a
 *    fresh date. Freed requests go back to a pool in the client, so their
 *    easy handles are set up once and reused.
 *
 * Every request: POST <endpoint>/, Content-Type application/x-amz-json-1.0,
 * X-Amz-Target DynamoDB_20120810.<Op>, Host as botocore computes it, SigV4
 * for <region>/dynamodb (aws/sigv4.h, signed as botocore signs) with the
 * credentials of cfg's provider at signing time (renewals are picked up),
 * X-Amz-Security-Token when they have a session token (signed too), keep-alive
 * connections, HTTPS verified unless the config says otherwise (CA file from
 * cfg->ca_bundle when set), connect timeout 10 s, whole-transfer timeout 120 s
 * (el_ddb_set_timeouts changes both).
 *
 * Threads: el_ddb_call, el_ddb_describe_table and el_ddb_create_table use
 * one easy handle inside the client, so call them from one thread at a time.
 * el_ddb_req_new/free may run on any thread while another one drives
 * requests; every handle of a client shares DNS and TLS sessions through a
 * locked CURLSH. The client must outlive all its requests.
 *
 * Signals: every handle sets CURLOPT_NOSIGNAL (threads), so libcurl does not
 * guard its writes against SIGPIPE: the program (cmd/) must ignore SIGPIPE,
 * or a peer that resets a TLS connection kills it.
 */
#ifndef EL_DDB_CLIENT_H
#define EL_DDB_CLIENT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <curl/curl.h>/* CURL, CURLcode for the multi-driven requests */

#include "common/buf.h"
#include "common/error.h"
#include "aws/aws_config.h"

typedef struct el_ddb el_ddb;

/* Borrows cfg (must outlive the client). *out NULL on failure (EL_ECONFIG
 * for an endpoint URL libcurl cannot parse, a session token over 16 KB, or
 * a region or key over 128 bytes). Calls curl_global_init (reference
 * counted; call el_ddb_new before starting threads that use curl). */
el_err el_ddb_new(const el_aws_config *cfg, el_ddb **out, el_diag *diag) EL_MUST_USE;
void el_ddb_free(el_ddb *ddb);

/* Timeouts of requests set up from now on (ms; <= 0 restores the default). */
void el_ddb_set_timeouts(el_ddb *ddb, long connect_ms, long total_ms);

/* The configuration the client was made with (borrowed). */
const el_aws_config *el_ddb_config(const el_ddb *ddb);

/* ---- classification of a finished call ---- */

typedef enum el_ddb_outcome {
    EL_DDB_SUCCESS = 0,
    EL_DDB_THROTTLED,  /* ProvisionedThroughputExceeded, Throttling, RequestLimitExceeded, ... */
    EL_DDB_TRANSIENT,  /* 5xx, connection reset/refused, timeout, cut-short body */
    EL_DDB_REJECTED,   /* ValidationException and other 4xx: do not retry */
    EL_DDB_FATAL       /* credentials/permissions: retrying cannot help, stop the run */
} el_ddb_outcome;

typedef struct el_ddb_result {
    el_ddb_outcome outcome;
    long http_status;       /* 0 when no HTTP answer */
    char error_type[128];   /* "ValidationException" (after the '#'), "" on success */
    char message[512];      /* the service's message, or curl's for network errors */
    char request_id[64];    /* x-amzn-RequestId of the answer, "" when none (set by
                               el_ddb_call/el_ddb_req_finish, not by classify) */
} el_ddb_result;

/*
 * Classifies a finished transfer from curl's code, the HTTP status and the
 * response body, as the AWS SDKs do. Pure; unit-tested on real error bodies.
 * Expired/invalid credentials (ExpiredTokenException,
 * UnrecognizedClientException, InvalidSignatureException,
 * AccessDeniedException, MissingAuthenticationToken) are EL_DDB_FATAL;
 * ResourceNotFoundException is EL_DDB_FATAL too (the table is gone).
 * Throttling codes (botocore's list) are EL_DDB_THROTTLED whatever the
 * status, as is a 429; RequestTimeout(Exception), InternalServerError,
 * ServiceUnavailable and any 5xx are EL_DDB_TRANSIENT; other 4xx
 * (ValidationException, ConditionalCheckFailedException, ...) EL_DDB_REJECTED.
 * curl errors are EL_DDB_TRANSIENT (refused, reset, timeout, partial body,
 * DNS) except a bad URL or a TLS certificate that does not verify (FATAL).
 * body need not be NUL-terminated; res->message has control characters
 * replaced by spaces.
 */
void el_ddb_classify(CURLcode curl_code, long http_status, const char *body, size_t len,
                     el_ddb_result *res);

/* ---- synchronous calls ---- */

/* POSTs body for operation op ("DescribeTable") and waits; one attempt, no
 * retry. The response body is appended to `response` (may be NULL). Returns
 * EL_OK when the call completed (check res->outcome) or EL_ENET/EL_ENOMEM
 * when it could not be made at all (res is filled then too: the curl error,
 * outcome TRANSIENT or FATAL). */
el_err el_ddb_call(el_ddb *ddb, const char *op, const char *body, size_t len,
                   el_buf *response, el_ddb_result *res, el_diag *diag) EL_MUST_USE;

typedef struct el_key_schema {
    char pk[256];        /* partition key attribute name */
    char sk[256];        /* sort key attribute name, "" when none */
    char pk_type[2];     /* "S", "N" or "B" */
    char sk_type[2];
} el_key_schema;

#define EL_DDB_MAX_GSI 20

typedef struct el_table_desc {
    char status[32];                 /* "ACTIVE", "CREATING", ... */
    el_key_schema key;
    size_t ngsi;
    struct {
        char name[256];
        el_key_schema key;
        char status[32];
        char projection[16];         /* "ALL", "KEYS_ONLY" or "INCLUDE" */
    } gsi[EL_DDB_MAX_GSI];
    char billing_mode[32];           /* "PAY_PER_REQUEST" or "PROVISIONED" */
} el_table_desc;

/* DescribeTable, retrying throttling and transient failures (up to
 * cfg->max_attempts, default 5). A missing table returns EL_ETABLE with diag
 * "table 'X' does not exist in <region> at <endpoint>". Credentials refused
 * (UnrecognizedClient, InvalidSignature, ExpiredToken, AccessDenied, ...):
 * EL_ECONFIG. Other failures: EL_ESERVICE/EL_ENET. */
el_err el_ddb_describe_table(el_ddb *ddb, const char *table, el_table_desc *out,
                             el_diag *diag) EL_MUST_USE;

typedef struct el_create_table_opts {
    const char *table;
    const char *pk;          /* "PK" */
    const char *sk;          /* "SK" */
    const char *index_name;  /* "GSI1"; NULL = no index */
    const char *index_pk;    /* "GSI1PK" */
    const char *index_sk;    /* "GSI1SK" */
    const char *projection;  /* "ALL" or "KEYS_ONLY" */
    int wait_seconds;        /* how long to wait for ACTIVE (table and index);
                                <= 0: EL_DDB_CREATE_WAIT_DEFAULT */
} el_create_table_opts;

#define EL_DDB_CREATE_WAIT_DEFAULT 600

/* CreateTable (string keys, PAY_PER_REQUEST, the GSI), then polls
 * DescribeTable until the table and index are ACTIVE. An existing table is
 * EL_ETABLE with a message saying so; not ACTIVE in time is EL_ETABLE too.
 * NULL pk/sk/index_pk/index_sk/projection mean "PK", "SK", "GSI1PK",
 * "GSI1SK", "ALL"; sk "" means no sort key (likewise index_sk ""). Another
 * projection is EL_EUSAGE. Errors as for el_ddb_describe_table. */
el_err el_ddb_create_table(el_ddb *ddb, const el_create_table_opts *opts,
                           el_diag *diag) EL_MUST_USE;

/* ---- requests driven by a curl multi handle (pipeline/sender) ---- */

typedef struct el_ddb_req el_ddb_req;

/* Prepares a signed POST of `body` (taken: the request now owns its
 * storage; the el_buf is left empty, possibly holding the storage of an
 * earlier request for reuse: the caller frees it with el_buf_free as
 * always). `user` is stored for the caller (CURLINFO_PRIVATE
 * is set to the request itself). On failure (EL_ENOMEM; EL_EUSAGE for an op
 * name of 128 bytes or more, EL_EINTERNAL when libcurl refuses an option or
 * libcrypto fails) *out is NULL and the body is either still in the el_buf
 * or already freed. */
el_err el_ddb_req_new(el_ddb *ddb, const char *op, el_buf *body, void *user,
                      el_ddb_req **out) EL_MUST_USE;

/* The easy handle to add to a multi handle. Owned by the request. Adding it
 * again after completion resends the same body, freshly signed. */
CURL *el_ddb_req_handle(el_ddb_req *req);

/* Call before each (re)send: clears the previous response and, when the
 * clock has moved to another second since the last signature, signs the
 * request again (a new X-Amz-Date) with the credential provider's current
 * set. Allocates nothing. If signing fails (libcrypto, or credentials that
 * expired and could not be renewed), el_ddb_req_finish reports the
 * transfer EL_DDB_FATAL with the signer's reason as its message (so does
 * a failed signature in el_ddb_req_new). */
void el_ddb_req_reset(el_ddb_req *req);

/* After curl reports the transfer done (CURLMSG_DONE's result): classify
 * it (fills res; curl's error buffer text is the message of a curl error).
 * A body that does not match the response's x-amz-crc32 header is
 * EL_DDB_TRANSIENT, as botocore treats it. */
void el_ddb_req_finish(el_ddb_req *req, CURLcode code, el_ddb_result *res);

/* Response body of the last transfer (NUL-terminated) and its length. */
const char *el_ddb_req_response(const el_ddb_req *req, size_t *len);
const char *el_ddb_req_body(const el_ddb_req *req, size_t *len);
void *el_ddb_req_user(const el_ddb_req *req);
/* Frees the body and returns the request to its client's pool (or frees
 * it). Remove its handle from any multi handle first. NULL is a no-op. */
void el_ddb_req_free(el_ddb_req *req);

/* ---- BatchWriteItem responses ---- */

/* One unprocessed write, identified by its key values. */
typedef struct el_ddb_key {
    char *pk;   /* owned by the el_ddb_batch_result */
    char *sk;   /* NULL when the table has no sort key */
    bool is_delete;
} el_ddb_key;

typedef struct el_ddb_batch_result {
    size_t nunprocessed;
    el_ddb_key *unprocessed;   /* keys of items DynamoDB did not write */
    double consumed_wcu;       /* ConsumedCapacity total (table + indexes), 0 if absent */
} el_ddb_batch_result;

/* Parses a successful BatchWriteItem response. pk_name/sk_name are the
 * table's key attribute names (to pick the key out of UnprocessedItems);
 * sk_name NULL or "" when the table has no sort key. Each PutRequest.Item /
 * DeleteRequest.Key gives one el_ddb_key (the S value; N or B text too).
 * consumed_wcu sums CapacityUnits over the ConsumedCapacity entries (with
 * ReturnConsumedCapacity INDEXES, each entry's total already includes its
 * indexes; without CapacityUnits the Table and index parts are added).
 * *out is overwritten (clear a previous result first); on failure (EL_EPARSE
 * for an unexpected shape, EL_ENOMEM) it is left empty. */
el_err el_ddb_parse_batch_write(const char *body, size_t len, const char *pk_name,
                                const char *sk_name, el_ddb_batch_result *out,
                                el_diag *diag) EL_MUST_USE;
/* Frees the keys; r is empty again. NULL is a no-op. */
void el_ddb_batch_result_clear(el_ddb_batch_result *r);

#endif
