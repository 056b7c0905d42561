/*
 * ddb_internal.h - shared between the files of dynamo/ (and their unit
 * tests); not part of the API the pipeline uses. Below ddb_client.h: it
 * does not include it.
 */
#ifndef EL_DDB_INTERNAL_H
#define EL_DDB_INTERNAL_H

#include <stdbool.h> /* bool */
#include <stddef.h>  /* size_t */

#include <curl/curl.h>  /* CURL, CURLcode: the requests the transport drives */

#include "aws/skew.h"  /* el_skew: the clock requests are signed by */
#include "common/buf.h"
#include "common/error.h"
#include "dynamo/ddb_result.h"  /* el_ddb_result */

/* The client's types this header names, declared here so that it need not
 * include ddb_client.h: ddb_client.c includes this header, and a header it
 * includes must not include the client back. The files that use them
 * include ddb_client.h themselves. */
typedef struct el_ddb el_ddb;
typedef struct el_table_desc el_table_desc;
typedef struct el_ddb_limits el_ddb_limits;
typedef struct el_ddb_batch_result el_ddb_batch_result;
typedef struct el_create_table_opts el_create_table_opts;

/* A response larger than this is not DynamoDB's (its largest answers hold
 * the unprocessed part of a 16 MB request). */
#define EL_DDB_MAX_RESPONSE (64u * 1024 * 1024)
/* A pooled request (and the driver's spare bodies) keep a response or body
 * buffer up to this capacity; larger ones are freed. */
#define EL_DDB_POOL_KEEP_BUFFER (256u * 1024)

/* The signing clock of a client (owned by it). */
el_skew *el_ddb_skew(el_ddb *ddb);

/* ---- requests driven by a curl multi handle (the driver's transport) ---- */

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
 * set. Allocates nothing. Returns false when the request has no valid
 * signature (libcrypto failed, or the credentials expired and could not be
 * renewed; a failed signature in el_ddb_req_new too): it must not be sent,
 * and el_ddb_req_unsent gives its result. */
bool el_ddb_req_reset(el_ddb_req *req) EL_MUST_USE;

/* The result of a request not sent because it could not be signed:
 * EL_DDB_FATAL, no HTTP answer, the signer's reason as the message. */
void el_ddb_req_unsent(el_ddb_req *req, el_ddb_result *res);

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

/* The hint that follows a network failure's message: where to look (" (check
 * --endpoint-url and --region: ...)"), "" when there is none. */
const char *el_ddb_network_hint(const char *curl_message);

/* Appends s as a JSON string literal (quotes included), escaping what RFC
 * 8259 requires. EL_ELIMIT/EL_ENOMEM from the buffer; the buffer may then
 * hold a partial literal. */
el_err el_ddb_json_put_string(el_buf *b, const char *s) EL_MUST_USE;

/* Parses a DescribeTable (or CreateTable: "TableDescription") response into
 * out, which is zeroed first. EL_EPARSE with diag when the body is not the
 * expected JSON. */
el_err el_ddb_parse_table_desc(const char *body, size_t len, el_table_desc *out,
                               el_diag *diag) EL_MUST_USE;

/* Parses a DescribeLimits response into out (zeroed first; a figure it
 * does not hold stays 0). EL_EPARSE when the body is not a JSON object. */
el_err el_ddb_parse_limits(const char *body, size_t len, el_ddb_limits *out,
                           el_diag *diag) EL_MUST_USE;

/* The BatchWriteItem answer "everything written": true when body is
 * exactly {"UnprocessedItems":{}} and/or a ConsumedCapacity list whose
 * entries each give CapacityUnits (any order, whitespace, other fields of
 * plain ASCII names and values inside the entries), with *consumed_wcu set
 * as the tree parse sets it. False for anything else (unprocessed items,
 * escapes, non-ASCII, comments, duplicate fields, malformed text): the
 * caller parses the tree then. Never allocates. */
bool el_ddb_batch_write_all_done(const char *body, size_t len, double *consumed_wcu);

/* el_ddb_parse_batch_write without the all-done scan: always the yajl tree
 * (the fuzz target compares the two). */
el_err el_ddb_parse_batch_write_tree(const char *body, size_t len, const char *pk_name,
                                     const char *sk_name, el_ddb_batch_result *out,
                                     el_diag *diag) EL_MUST_USE;

/* Appends the CreateTable request body for opts to b (defaults as
 * el_ddb_create_table documents). EL_ELIMIT/EL_ENOMEM from the buffer. */
el_err el_ddb_create_table_body(const el_create_table_opts *opts, el_buf *b) EL_MUST_USE;

/* The capacity units an answer's ConsumedCapacity reports (every entry's
 * CapacityUnits, or its parts when that is absent), 0 when there is none or
 * the body is not JSON. Pure; streams the body without building a tree. */
double el_ddb_consumed_units(const char *body, size_t len);

/* The same, and *all_done says whether the body has the shape of
 * el_ddb_batch_write_all_done (nothing unprocessed; the units are exactly
 * what el_ddb_parse_batch_write would sum): the driver's one scan of an
 * answer then serves its caller too. */
double el_ddb_answer_units(const char *body, size_t len, bool *all_done);

/* For the transports of ddb_driver.h: the request's body buffer, to take
 * by swapping (the driver then frees an empty buffer), and where the body
 * now lives, for el_ddb_op_body. */
typedef struct el_ddb_op el_ddb_op;
el_buf *el_ddb_op_take_body(el_ddb_op *op);
void el_ddb_op_set_body_view(el_ddb_op *op, const char *body, size_t len);

/* The driver's transport over libcurl and epoll (ddb_transport_curl.c):
 * fills *t for ddb with up to `connections` connections. EL_ENOMEM, or
 * EL_EIO when epoll or eventfd cannot be created. */
typedef struct el_ddb_transport el_ddb_transport;
el_err el_ddb_transport_curl(el_ddb *ddb, int connections, el_ddb_transport *t) EL_MUST_USE;

#endif
