/*
 * ddb_errors.h - what a refused DynamoDB call means, said in one line a
 * newcomer can act on (issue 8: "an expired token, a wrong region ... each
 * get one clear line").
 *
 * el_ddb_classify (ddb_client.h) decides whether to retry; this module
 * decides what to tell the user when retrying cannot help. Every line says
 * what is wrong first, then where the setting came from (the credential
 * and region sources el_aws_config records), then what to do, and ends
 * with the service's own words in parentheses. No line ever holds a secret
 * key or a session token: the service message was redacted by the client
 * already, and the access key id is shown by its last four characters only.
 *
 * Pure functions of (result, config): unit-tested in test_ddb_client.c on
 * the real error bodies in tests/fixtures/ddb.
 */
#ifndef EL_DDB_ERRORS_H
#define EL_DDB_ERRORS_H

#include <stdbool.h> /* bool */
#include <stddef.h>  /* size_t */

#include <curl/curl.h>  /* CURLcode: a transfer is classified by it too */

#include "common/error.h"
#include "aws/aws_config.h"
#include "aws/skew.h"      /* el_skew: the clock a resend is signed by */
#include "dynamo/ddb_result.h"

/*
 * What an error code means whatever its HTTP status: its kind in the one
 * table of dynamo/ddb_errors.c (docs/LIMITS.md prints it), *known true; a
 * code not in it (or "") gives *known false, and the status decides (429
 * throttled, 5xx transient, 401/403 fatal, other 4xx refused).
 */
el_ddb_outcome el_ddb_code_kind(const char *code, bool *known);

/* The table's i-th code, NULL past the last (for the test that checks
 * docs/LIMITS.md against it). */
const char *el_ddb_code_at(size_t i);

/* "throttled", "transient", "refused", "fatal" ("success"): a kind's name
 * as docs/LIMITS.md writes it. */
const char *el_ddb_outcome_name(el_ddb_outcome o);

typedef enum el_ddb_problem {
    EL_DDB_PROBLEM_OTHER = 0,      /* nothing more specific to say */
    EL_DDB_PROBLEM_EXPIRED_TOKEN,  /* ExpiredToken(Exception): the session token expired */
    EL_DDB_PROBLEM_UNKNOWN_KEY,    /* UnrecognizedClientException, InvalidClientTokenId */
    EL_DDB_PROBLEM_WRONG_REGION,   /* InvalidSignatureException "Credential should be
                                      scoped to a valid region" / "... correct
                                      service/region" */
    EL_DDB_PROBLEM_WRONG_SERVICE,  /* "... scoped to correct service" (no region) */
    EL_DDB_PROBLEM_CLOCK_SKEW,     /* "Signature expired", "Signature not yet current",
                                      RequestExpired */
    EL_DDB_PROBLEM_BAD_SECRET,     /* any other signature mismatch */
    EL_DDB_PROBLEM_ACCESS_DENIED   /* AccessDenied(Exception) */
} el_ddb_problem;

/* The problem a failed call's result names (error code and message). */
el_ddb_problem el_ddb_problem_of(const el_ddb_result *res);

/*
 * The one line for a call `op` ("BatchWriteItem") that failed with res,
 * written to out (cap bytes, always NUL-terminated, cut at cap). cfg may be
 * NULL (sources are then not named). Problems other than the ones above get
 * "DynamoDB refused OP (credentials from SRC): TYPE: MESSAGE".
 */
void el_ddb_explain(const el_ddb_result *res, const el_aws_config *cfg, const char *op,
                    char *out, size_t cap);

/*
 * The line for a table DescribeTable did not find: "table 'T' does not
 * exist in REGION at ENDPOINT", and, when the region was not given with
 * --region, where it came from and that --region picks another.
 */
void el_ddb_explain_missing_table(const char *table, const el_aws_config *cfg, char *out,
                                  size_t cap);

/*
 * el_ddb_explain into diag, for a call el_ddb_classify found EL_DDB_FATAL.
 * Returns the error the caller should end with: EL_ENET when there was no
 * HTTP answer (a bad URL, a TLS certificate that does not verify), else
 * EL_ECONFIG (credentials, region, permissions, an endpoint that is not
 * DynamoDB: the configuration is what must change).
 */
el_err el_ddb_fail(el_diag *diag, const el_ddb_result *res, const el_aws_config *cfg,
                   const char *op);

/* ---- classifying (for dynamo/ only) ---- */

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

/* True when a request answered res should be signed again and sent again,
 * once, because its refusal was the clock's and skew (the client's signing
 * clock) has just been, or had been, set right by the answer's Date
 * (aws/skew.h); the caller keeps the "once". */
bool el_ddb_skew_resend(el_skew *skew, const el_ddb_result *res);

/* Extracts the error code (the part of __type after the last '#') and the
 * message ("message" or "Message") of an error body. Either stays "" when
 * absent; neither ever overflows; control characters become spaces. */
void el_ddb_error_fields(const char *body, size_t len, char *type, size_t type_len,
                         char *message, size_t message_len);

#endif
