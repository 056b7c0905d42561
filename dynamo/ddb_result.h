/*
 * ddb_result.h - what a DynamoDB call came back with: its outcome (the
 * kind of refusal decides whether to retry), why it was throttled, the
 * service's words. Filled by the client (ddb_client.h) and classified and
 * explained by ddb_errors.h (the functions on throttling reasons are in
 * ddb_answers.c, with the other readers of answers); a header of its own so that the errors module,
 * which the client calls, need not include the client.
 */
#ifndef EL_DDB_RESULT_H
#define EL_DDB_RESULT_H

#include <stddef.h>   /* size_t */
#include <time.h>     /* time_t */

typedef enum el_ddb_outcome {
    EL_DDB_SUCCESS = 0,
    EL_DDB_THROTTLED,  /* ProvisionedThroughputExceeded, Throttling, RequestLimitExceeded, ... */
    EL_DDB_TRANSIENT,  /* 5xx, connection reset/refused, timeout, cut-short body */
    EL_DDB_REJECTED,   /* ValidationException and other 4xx: do not retry */
    EL_DDB_FATAL       /* credentials/permissions: retrying cannot help, stop the run */
} el_ddb_outcome;

/* Why DynamoDB throttled a request, as its ThrottlingReasons say: the
 * resource (table or index), the operation (read or write) and the limit.
 * A bit each in el_ddb_result.reasons. */
typedef enum el_ddb_throttle_reason {
    EL_THR_TABLE_READ_KEY_RANGE = 0,  /* TableReadKeyRangeThroughputExceeded */
    EL_THR_TABLE_WRITE_KEY_RANGE,     /* a hot partition key of the table */
    EL_THR_INDEX_READ_KEY_RANGE,
    EL_THR_INDEX_WRITE_KEY_RANGE,     /* a hot partition key of an index */
    EL_THR_TABLE_READ_PROVISIONED,    /* ...ProvisionedThroughputExceeded */
    EL_THR_TABLE_WRITE_PROVISIONED,
    EL_THR_INDEX_READ_PROVISIONED,
    EL_THR_INDEX_WRITE_PROVISIONED,
    EL_THR_TABLE_READ_ACCOUNT,        /* ...AccountLimitExceeded */
    EL_THR_TABLE_WRITE_ACCOUNT,
    EL_THR_INDEX_READ_ACCOUNT,
    EL_THR_INDEX_WRITE_ACCOUNT,
    EL_THR_TABLE_READ_MAX_ON_DEMAND,  /* ...MaxOnDemandThroughputExceeded */
    EL_THR_TABLE_WRITE_MAX_ON_DEMAND,
    EL_THR_INDEX_READ_MAX_ON_DEMAND,
    EL_THR_INDEX_WRITE_MAX_ON_DEMAND,
    EL_THR_OTHER,                     /* a reason this version does not know */
    EL_THR_COUNT
} el_ddb_throttle_reason;

/* All the key-range reasons: a hot partition, not the table's limit. */
#define EL_THR_KEY_RANGE_MASK                                                              \
    ((1u << EL_THR_TABLE_READ_KEY_RANGE) | (1u << EL_THR_TABLE_WRITE_KEY_RANGE) |         \
     (1u << EL_THR_INDEX_READ_KEY_RANGE) | (1u << EL_THR_INDEX_WRITE_KEY_RANGE))

/* "TableWriteKeyRangeThroughputExceeded", ...; "Other" for EL_THR_OTHER. */
const char *el_ddb_throttle_reason_name(el_ddb_throttle_reason r);

/* The reason named name, or EL_THR_OTHER. */
el_ddb_throttle_reason el_ddb_throttle_reason_parse(const char *name);

/* The ThrottlingReasons of a throttling answer, a bit per reason
 * (1 << el_ddb_throttle_reason), 0 when it gives none; the first reason's
 * resource ARN is copied to resource (cap bytes, "" when none). Pure. */
unsigned el_ddb_throttling_reasons(const char *body, size_t len, char *resource, size_t cap);

typedef struct el_ddb_result {
    el_ddb_outcome outcome;
    long http_status;       /* 0 when no HTTP answer */
    char error_type[128];   /* "ValidationException" (after the '#'), "" on success */
    char message[512];      /* the service's message, or curl's for network errors */
    char request_id[64];    /* x-amzn-RequestId of the answer, "" when none (set by
                               el_ddb_call/el_ddb_req_finish, not by classify) */
    unsigned reasons;       /* EL_DDB_THROTTLED: a bit per ThrottlingReasons entry
                               (1 << el_ddb_throttle_reason); 0 when none was given */
    char resource[256];     /* the first reason's resource (an ARN: ...:table/T or
                               ...:table/T/index/I), "" when none */
    double retry_after_ms;  /* the answer's x-amz-retry-after (ms), else its Retry-After
                               (s), 0 when none: honoured within a bound
                               (el_backoff_hinted_ms) */
    unsigned sends;         /* how often libcurl sent the request: 1, more when it sent it
                               again itself on a new connection after a reused one had
                               closed (a retry no caller sees), 0 when no connection was
                               made (set by el_ddb_req_finish, not by classify) */
    time_t server_time;     /* the answer's Date header, 0 when none (set by
                               el_ddb_call/el_ddb_req_finish, not by classify) */
    long clock_offset;      /* the offset (s) of the client's clock the request was signed
                               with (aws/skew.h; likewise) */
} el_ddb_result;

#endif /* EL_DDB_RESULT_H */
