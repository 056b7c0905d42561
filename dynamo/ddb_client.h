/*
 * ddb_client.h - DynamoDB's JSON protocol over libcurl, signed with SigV4.
 *
 * Two ways to call:
 *  - el_ddb_call(): synchronous, for control-plane operations (DescribeTable,
 *    CreateTable) and tests;
 *  - the request driver (ddb_driver.h), for everything sent in bulk; its
 *    transport uses the client's pooled requests (ddb_internal.h).
 * libcurl stays inside dynamo/: nothing here names a curl type.
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
#include <stdint.h>   /* uint64_t: throughput figures */
#include <time.h>     /* time_t */

#include "common/buf.h"
#include "common/error.h"
#include "aws/aws_config.h"
#include "formats/ddb_item.h" /* answers parsed into DynamoDB JSON trees */
#include "dynamo/ddb_limits.h"   /* EL_DDB_MAX_GSI */
#include "dynamo/ddb_result.h"   /* el_ddb_result: what a call came back with */

typedef struct el_ddb el_ddb;

/* Borrows cfg (must outlive the client). *out NULL on failure (EL_ECONFIG
 * for an endpoint URL libcurl cannot parse, a session token over 16 KB, or
 * a region or key over 128 bytes). Calls curl_global_init (reference
 * counted; call el_ddb_new before starting threads that use curl). */
el_err el_ddb_new(const el_aws_config *cfg, el_ddb **out, el_diag *diag) EL_MUST_USE;
void el_ddb_free(el_ddb *ddb);

/* libcurl's global state, set up once by the program before any thread
 * starts (and cleaned up at its end). EL_EINTERNAL when it fails. */
el_err el_ddb_global_init(void) EL_MUST_USE;
void el_ddb_global_cleanup(void);

/* Timeouts of requests set up from now on (ms; <= 0 restores the default). */
void el_ddb_set_timeouts(el_ddb *ddb, long connect_ms, long total_ms);

/* The configuration the client was made with (borrowed). */
const el_aws_config *el_ddb_config(const el_ddb *ddb);

/* ---- classification of a finished call: dynamo/ddb_result.h ---- */

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

/* What DescribeTable says of a table's or an index's warm throughput: the
 * write and read units a second it takes at once, and the status of the
 * last change ("ACTIVE", "UPDATING", ...). All "" / 0 when the answer has
 * no WarmThroughput (DynamoDB Local keeps none). */
typedef struct el_warm_desc {
    char status[32];
    double write_units, read_units;
} el_warm_desc;

typedef struct el_table_desc {
    char status[32];                 /* "ACTIVE", "CREATING", ... */
    el_key_schema key;
    size_t ngsi;
    struct {
        char name[256];
        el_key_schema key;
        char status[32];
        char projection[16];         /* "ALL", "KEYS_ONLY" or "INCLUDE" */
        double write_units;          /* as the table's, below */
        double max_write_units;
        el_warm_desc warm;
    } gsi[EL_DDB_MAX_GSI];
    char billing_mode[32];           /* "PAY_PER_REQUEST" or "PROVISIONED" */
    double write_units;              /* ProvisionedThroughput.WriteCapacityUnits, 0 if none */
    double max_write_units;          /* OnDemandThroughput.MaxWriteRequestUnits when set
                                        (> 0), else 0 */
    el_warm_desc warm;
} el_table_desc;

/* What DescribeLimits says of the account in the region: the most write
 * units a second a table (and each of its indexes) may take, and all
 * tables together; 0 when not said. */
typedef struct el_ddb_limits {
    double table_max_wcu;            /* TableMaxWriteCapacityUnits */
    double account_max_wcu;          /* AccountMaxWriteCapacityUnits */
} el_ddb_limits;

/* DescribeLimits, retrying as DescribeTable does. Errors as for
 * el_ddb_describe_table (no table to miss). */
el_err el_ddb_describe_limits(el_ddb *ddb, el_ddb_limits *out, el_diag *diag) EL_MUST_USE;

/* DescribeTable, retrying throttling and transient failures (up to
 * cfg->max_attempts, default 5). A missing table returns EL_ETABLE with diag
 * "table 'X' does not exist in <region> at <endpoint>". Credentials refused
 * (UnrecognizedClient, InvalidSignature, ExpiredToken, AccessDenied, ...):
 * EL_ECONFIG. Other failures: EL_ESERVICE/EL_ENET. */
el_err el_ddb_describe_table(el_ddb *ddb, const char *table, el_table_desc *out,
                             el_diag *diag) EL_MUST_USE;

/* The throughput of a new table, or of its index, as CreateTable takes it;
 * 0 leaves a figure out of the request. */
typedef struct el_ddb_throughput {
    uint64_t write_units, read_units; /* ProvisionedThroughput: a PROVISIONED
                                         table's, both or neither */
    uint64_t warm_write, warm_read;   /* WarmThroughput: units a second taken at
                                         once from the start */
    uint64_t max_write, max_read;     /* OnDemandThroughput: an on-demand
                                         table's maximum */
} el_ddb_throughput;

/* A tag of a new table (Tags: Key, Value); whoever fills it owns the
 * strings, CreateTable only reads them. */
typedef struct el_ddb_tag {
    char *key, *value;
} el_ddb_tag;

/* Where a wait for ACTIVE is: each status as DescribeTable gives it, ""
 * when it says none (the table while DescribeTable does not see it yet, an
 * index not listed, a warm throughput not reported). */
typedef struct el_table_wait {
    const char *table, *table_warm;
    const char *index, *index_warm;
} el_table_wait;

typedef struct el_create_table_opts {
    const char *table;
    const char *pk;          /* "PK" */
    const char *sk;          /* "SK" */
    const char *index_name;  /* "GSI1"; NULL = no index */
    const char *index_pk;    /* "GSI1PK" */
    const char *index_sk;    /* "GSI1SK" */
    const char *projection;  /* "ALL" or "KEYS_ONLY" */
    bool provisioned;        /* BillingMode PROVISIONED, else PAY_PER_REQUEST */
    el_ddb_throughput table_tp, index_tp; /* index_tp: sent with the index */
    const char *table_class; /* "STANDARD" or "STANDARD_INFREQUENT_ACCESS";
                                NULL: not sent (the service's STANDARD) */
    bool deletion_protection;
    const el_ddb_tag *tags;  /* ntags of them, borrowed; keys unique */
    size_t ntags;
    int wait_seconds;        /* how long to wait for ACTIVE (table and index,
                                warm throughput included);
                                <= 0: EL_DDB_CREATE_WAIT_DEFAULT */
    /* Called (on the calling thread) after every DescribeTable of the wait
     * that did not find the table ready, with the statuses seen and the
     * milliseconds since CreateTable was answered. May be NULL. */
    void (*on_wait)(void *user, const el_table_wait *seen, double waited_ms);
    void *user;
} el_create_table_opts;

/* What el_ddb_create_table did, for --stats-json. */
typedef struct el_create_table_figures {
    unsigned long requests;  /* sent, CreateTable and every DescribeTable, retries too */
    unsigned long retries;   /* of those, the resent ones (throttled, transient) */
    unsigned long polls;     /* DescribeTable calls of the wait */
    double wait_ms;          /* from CreateTable's answer to ACTIVE (or giving up) */
    el_warm_desc warm, index_warm; /* the warm throughput the last DescribeTable
                                      reported (zeros when none) */
} el_create_table_figures;

#define EL_DDB_CREATE_WAIT_DEFAULT 600

/* CreateTable (string keys, the billing mode and throughput of opts, the
 * GSI), then polls DescribeTable until the table and index are ACTIVE, and
 * their warm throughput too when DescribeTable reports one. The current
 * CreateTable takes every setting of opts (WarmThroughput and
 * OnDemandThroughput on the table and on each index), so one request
 * makes the table. An existing table is EL_ETABLE with a message saying
 * so; not ACTIVE in time is EL_ETABLE too. NULL
 * pk/sk/index_pk/index_sk/projection mean "PK", "SK", "GSI1PK", "GSI1SK",
 * "ALL"; sk "" means no sort key (likewise index_sk ""). Another projection
 * is EL_EUSAGE; the combinations of billing mode and throughput are the
 * caller's to check (the service refuses the others with a
 * ValidationException: EL_EUSAGE). Errors as for el_ddb_describe_table. fig,
 * when not NULL, is filled whatever the outcome. */
el_err el_ddb_create_table(el_ddb *ddb, const el_create_table_opts *opts,
                           el_create_table_figures *fig, el_diag *diag) EL_MUST_USE;

/* ---- BatchGetItem and Query answers ---- */

/* A BatchGetItem answer for one table. The doc owns the tree; the other
 * fields point into it (NULL when the answer has none). */
typedef struct el_ddb_get_answer {
    el_ddb_doc *doc;
    const el_ddb_val *items;         /* Responses.<table>: an array of items */
    const el_ddb_val *unprocessed;   /* UnprocessedKeys.<table>.Keys: an array of keys */
} el_ddb_get_answer;

/* Parses a BatchGetItem answer (EL_EPARSE with diag for text that is not a
 * JSON object; EL_ENOMEM). Free with el_ddb_doc_free(out->doc). */
el_err el_ddb_parse_batch_get(const char *body, size_t len, const char *table,
                              el_ddb_get_answer *out, el_diag *diag) EL_MUST_USE;

/* A Query answer: Items, and LastEvaluatedKey (NULL on the last page). */
typedef struct el_ddb_query_answer {
    el_ddb_doc *doc;
    const el_ddb_val *items;
    const el_ddb_val *last_key;
} el_ddb_query_answer;

el_err el_ddb_parse_query(const char *body, size_t len, el_ddb_query_answer *out,
                          el_diag *diag) EL_MUST_USE;

/* ---- TransactWriteItems answers ---- */

/* One entry of a TransactionCanceledException's CancellationReasons. */
typedef struct el_ddb_cancel_code {
    char code[48];      /* "ConditionalCheckFailed", "TransactionConflict", "None", ... */
} el_ddb_cancel_code;

/*
 * The cancellation codes of a TransactionCanceledException, one per action
 * in the transaction's order: from the body's CancellationReasons, or,
 * when the body has none, from the list the message ends with
 * ("[ConditionalCheckFailed, None]"). At most max; *n how many. EL_ENOMEM.
 */
el_err el_ddb_cancellation_codes(const char *body, size_t len, const char *message,
                                 el_ddb_cancel_code *codes, size_t max, size_t *n) EL_MUST_USE;

/* True when a successful TransactWriteItems answer reports only read
 * capacity: DynamoDB answering a ClientRequestToken it had already seen
 * (a replay: nothing was written this time). */
bool el_ddb_txn_replayed(const char *body, size_t len);

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
