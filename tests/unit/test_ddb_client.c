/*
 * test_ddb_client.c - the DynamoDB client: classification of real error
 * bodies, BatchWriteItem/DescribeTable response parsing, CreateTable bodies,
 * and the requests on the wire (through a capture server on 127.0.0.1:
 * headers, signing scope, body, resend through a multi handle, keep-alive,
 * connection errors, timeouts, cut-short bodies).
 *
 * The last group runs against DynamoDB Local when EDGELOAD_DDB_ENDPOINT is set
 * (e.g. http://127.0.0.1:8000) and is skipped otherwise.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>       /* htonl, sockaddr_in */
#include <ctype.h>           /* tolower, isxdigit */
#include <netinet/in.h>      /* INADDR_LOOPBACK */
#include <pthread.h>         /* the capture server's threads */
#include <stdio.h>           /* snprintf, fopen */
#include <stdlib.h>          /* malloc, free, getenv */
#include <string.h>          /* strstr, strlen, memcmp */
#include <strings.h>         /* strncasecmp */
#include <sys/socket.h>      /* socket, accept, recv, send */
#include <time.h>            /* nanosleep, time */
#include <unistd.h>          /* close, getpid */
#include <yajl/yajl_tree.h>  /* checking generated JSON */
#include <zlib.h>            /* crc32 for x-amz-crc32 */

#include "dynamo/ddb_client.h"
#include "dynamo/ddb_driver.h"
#include "dynamo/ddb_errors.h"
#include "dynamo/ddb_internal.h"

/* ---- fixtures ---- */

static char *fixture(const char *name, size_t *len)
{
    char path[1024];
    const char *dir = getenv("EDGELOAD_FIXTURES");
    if (dir)
        snprintf(path, sizeof path, "%s/ddb/%s", dir, name);
    else
        snprintf(path, sizeof path, "%.*s/../fixtures/ddb/%s",
                 (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("missing fixture %s", path);
    char *buf = malloc(1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* ---- classification ---- */

typedef struct case_ {
    const char *file;
    long status;
    el_ddb_outcome outcome;
    const char *type;
    const char *message_start;
} case_;

static const case_ cases[] = {
    {"resource_not_found.json", 400, EL_DDB_FATAL, "ResourceNotFoundException",
     "Cannot do operations on a non-existent table"},
    {"resource_in_use.json", 400, EL_DDB_REJECTED, "ResourceInUseException",
     "Cannot create preexisting table"},
    {"validation.json", 400, EL_DDB_REJECTED, "ValidationException",
     "One of the required keys was not given a value"},
    {"conditional_check_failed.json", 400, EL_DDB_REJECTED, "ConditionalCheckFailedException",
     "The conditional request failed"},
    {"transaction_canceled.json", 400, EL_DDB_REJECTED, "TransactionCanceledException",
     "Transaction cancelled, please refer"},
    {"unknown_operation.json", 400, EL_DDB_FATAL, "UnknownOperationException",
     "An unknown operation was requested."},
    {"missing_auth.json", 400, EL_DDB_FATAL, "MissingAuthenticationToken",
     "Request must contain"},
    {"internal_failure_truncated_request.json", 500, EL_DDB_TRANSIENT, "InternalFailure",
     "The request processing has failed"},
    {"provisioned_throughput_exceeded.json", 400, EL_DDB_THROTTLED,
     "ProvisionedThroughputExceededException", "The level of configured"},
    {"throttling.json", 400, EL_DDB_THROTTLED, "ThrottlingException", "Rate of requests"},
    {"request_limit_exceeded.json", 400, EL_DDB_THROTTLED, "RequestLimitExceeded",
     "Throughput exceeds"},
    {"transaction_in_progress.json", 400, EL_DDB_THROTTLED, "TransactionInProgressException",
     "The transaction"},
    {"unrecognized_client.json", 400, EL_DDB_FATAL, "UnrecognizedClientException",
     "The security token included in the request is invalid."},
    {"expired_token.json", 400, EL_DDB_FATAL, "ExpiredTokenException", "The security token"},
    {"invalid_signature.json", 400, EL_DDB_FATAL, "InvalidSignatureException",
     "The request signature"},
    {"access_denied.json", 400, EL_DDB_FATAL, "AccessDeniedException", "User: arn:aws:iam"},
    {"internal_server_error.json", 500, EL_DDB_TRANSIENT, "InternalServerError",
     "Internal server error"},
    {"service_unavailable.json", 503, EL_DDB_TRANSIENT, "ServiceUnavailableException",
     "Service Unavailable"},
    {"request_timeout.json", 400, EL_DDB_TRANSIENT, "RequestTimeoutException",
     "Request timed out"},
    {"bad_gateway.html", 502, EL_DDB_TRANSIENT, "", "HTTP status 502"},
    {"batch_write_plain.json", 200, EL_DDB_SUCCESS, "", ""},
};

static void test_classify_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const case_ *c = &cases[i];
        size_t len;
        char *body = fixture(c->file, &len);
        el_ddb_result res;
        memset(&res, 0x55, sizeof res);
        el_ddb_classify(CURLE_OK, c->status, body, len, &res);
        if (res.outcome != c->outcome)
            fail_msg("%s: outcome %d, want %d", c->file, res.outcome, c->outcome);
        assert_int_equal(res.http_status, c->status);
        assert_string_equal(res.error_type, c->type);
        if (strncmp(res.message, c->message_start, strlen(c->message_start)) != 0)
            fail_msg("%s: message '%s'", c->file, res.message);
        free(body);
    }
}

/* docs/LIMITS.md prints the one table of error codes: every row's codes
 * are in it with the kind the row says, and every code of it is in a row. */
static void test_error_table_in_docs(void **state)
{
    (void)state;
    const char *dir = getenv("EDGELOAD_FIXTURES");
    char path[1024];
    if (dir && *dir)
        snprintf(path, sizeof path, "%s/../../docs/LIMITS.md", dir);
    else
        snprintf(path, sizeof path, "%.*s/../../docs/LIMITS.md",
                 (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    static char line[8192];
    bool in_section = false;
    size_t rows = 0, ncodes = 0;
    for (size_t i = 0; el_ddb_code_at(i); i++)
        ncodes++;
    bool *seen = calloc(ncodes, sizeof *seen);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "## ", 3) == 0)
            in_section = strstr(line, "What each error DynamoDB answers does") != NULL;
        if (!in_section || strncmp(line, "| `", 3) != 0)
            continue;
        /* | `A`, `B` | HTTP | kind | botocore | notes | */
        char *cells[5];
        char *p = line + 1;
        for (int c = 0; c < 5; c++) {
            cells[c] = p;
            p = strchr(p, '|');
            assert_non_null(p);
            *p++ = '\0';
        }
        char kind[32];
        assert_int_equal(sscanf(cells[2], " %31s", kind), 1);
        for (char *q = cells[0]; (q = strchr(q, '`'));) {
            char *end = strchr(q + 1, '`');
            assert_non_null(end);
            *end = '\0';
            bool known;
            el_ddb_outcome o = el_ddb_code_kind(q + 1, &known);
            if (!known)
                fail_msg("docs/LIMITS.md: %s is not in ddb_errors.c's table", q + 1);
            if (strcmp(el_ddb_outcome_name(o), kind) != 0)
                fail_msg("docs/LIMITS.md: %s is %s, ddb_errors.c says %s", q + 1, kind,
                         el_ddb_outcome_name(o));
            for (size_t i = 0; i < ncodes; i++)
                if (strcmp(el_ddb_code_at(i), q + 1) == 0)
                    seen[i] = true;
            q = end + 1;
        }
        rows++;
    }
    fclose(f);
    assert_true(rows >= 30);
    for (size_t i = 0; i < ncodes; i++)
        if (!seen[i])
            fail_msg("ddb_errors.c's %s is not in docs/LIMITS.md", el_ddb_code_at(i));
    free(seen);
}

/* The codes the SDKs retry that DynamoDB's API added or edgeload judged
 * wrong before the table: whatever their status. */
static void test_classify_table_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *code;
        long status;
        el_ddb_outcome want;
    } kinds[] = {
        {"ReplicatedWriteConflictException", 400, EL_DDB_TRANSIENT},
        {"ReplicatedWriteConflictException", 409, EL_DDB_TRANSIENT},
        {"TransactionConflictException", 400, EL_DDB_TRANSIENT},
        {"LimitExceededException", 400, EL_DDB_THROTTLED},
        {"PriorRequestNotComplete", 400, EL_DDB_THROTTLED},
        {"RequestTimeTooSkewed", 403, EL_DDB_FATAL},
        {"InvalidAction", 400, EL_DDB_FATAL},
        {"ItemCollectionSizeLimitExceededException", 400, EL_DDB_REJECTED},
        {"TableNotFoundException", 400, EL_DDB_REJECTED},
        {"SomethingNew", 400, EL_DDB_REJECTED},
        {"SomethingNew", 409, EL_DDB_REJECTED},
        {"SomethingNew", 501, EL_DDB_TRANSIENT},
        {"SomethingNew", 403, EL_DDB_FATAL},
        {"SomethingNew", 429, EL_DDB_THROTTLED},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#%s\","
                 "\"message\":\"m\"}", kinds[i].code);
        el_ddb_result res;
        el_ddb_classify(CURLE_OK, kinds[i].status, body, strlen(body), &res);
        if (res.outcome != kinds[i].want)
            fail_msg("%s (%ld): %s, want %s", kinds[i].code, kinds[i].status,
                     el_ddb_outcome_name(res.outcome), el_ddb_outcome_name(kinds[i].want));
    }
    bool known;
    assert_int_equal(el_ddb_code_kind("", &known), EL_DDB_REJECTED);
    assert_false(known);
}

static void test_classify_status_only(void **state)
{
    (void)state;
    el_ddb_result res;
    el_ddb_classify(CURLE_OK, 429, NULL, 0, &res);
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
    el_ddb_classify(CURLE_OK, 413, "", 0, &res);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
    assert_string_equal(res.message, "HTTP status 413");
    el_ddb_classify(CURLE_OK, 403, NULL, 0, &res);
    assert_int_equal(res.outcome, EL_DDB_FATAL);
    el_ddb_classify(CURLE_OK, 301, NULL, 0, &res);
    assert_int_equal(res.outcome, EL_DDB_FATAL);
    assert_non_null(strstr(res.message, "301"));
    el_ddb_classify(CURLE_OK, 504, "not json {", 10, &res);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    el_ddb_classify(CURLE_OK, 204, NULL, 0, &res);
    assert_int_equal(res.outcome, EL_DDB_SUCCESS);
    assert_string_equal(res.error_type, "");
}

static void test_classify_code_wins_over_status(void **state)
{
    (void)state;
    el_ddb_result res;
    const char *b = "{\"__type\":\"com.amazon.coral.availability#ThrottlingException\"}";
    el_ddb_classify(CURLE_OK, 500, b, strlen(b), &res);
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
    assert_string_equal(res.message, "HTTP status 500");
    /* No '#': the whole code; a ":url" suffix is dropped. */
    b = "{\"message\":\"m\",\"__type\":\"ValidationException:http://internal\"}";
    el_ddb_classify(CURLE_OK, 400, b, strlen(b), &res);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
    assert_string_equal(res.error_type, "ValidationException");
    assert_string_equal(res.message, "m");
    /* A code of unknown meaning on a 5xx stays transient, on a 4xx rejected. */
    b = "{\"__type\":\"x#SomethingNew\"}";
    el_ddb_classify(CURLE_OK, 503, b, strlen(b), &res);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    el_ddb_classify(CURLE_OK, 400, b, strlen(b), &res);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
}

static void test_classify_body_not_terminated(void **state)
{
    (void)state;
    /* len ends inside the JSON: no read past it, fields seen so far kept. */
    const char full[] = "{\"__type\":\"a#ThrottlingException\",\"message\":\"abc\"}XXXX";
    el_ddb_result res;
    el_ddb_classify(CURLE_OK, 400, full, strlen(full) - 4, &res);
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
    assert_string_equal(res.message, "abc");
    el_ddb_classify(CURLE_OK, 400, full, 33, &res); /* up to the code's end */
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
}

static void test_classify_message_sanitised_and_bounded(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_buf_puts(&b, "{\"__type\":\"ValidationException\",\"message\":\"a\\nb\\t"), 0);
    for (int i = 0; i < 400; i++)
        assert_int_equal(el_buf_puts(&b, "\\u00e9"), 0); /* 2 bytes each in UTF-8 */
    assert_int_equal(el_buf_puts(&b, "\"}"), 0);
    el_ddb_result res;
    el_ddb_classify(CURLE_OK, 400, b.data, b.len, &res);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
    assert_memory_equal(res.message, "a b ", 4);
    size_t n = strlen(res.message);
    assert_true(n < sizeof res.message);
    assert_true(n >= sizeof res.message - 3);
    /* Ends on a whole character: the last byte is the second of "é". */
    assert_int_equal((unsigned char)res.message[n - 1], 0xA9);
    assert_int_equal((unsigned char)res.message[n - 2], 0xC3);
    el_buf_free(&b);
}

static void test_classify_curl_errors(void **state)
{
    (void)state;
    static const struct {
        CURLcode code;
        el_ddb_outcome outcome;
    } c[] = {
        {CURLE_COULDNT_CONNECT, EL_DDB_TRANSIENT},
        {CURLE_OPERATION_TIMEDOUT, EL_DDB_TRANSIENT},
        {CURLE_PARTIAL_FILE, EL_DDB_TRANSIENT},
        {CURLE_RECV_ERROR, EL_DDB_TRANSIENT},
        {CURLE_SEND_ERROR, EL_DDB_TRANSIENT},
        {CURLE_GOT_NOTHING, EL_DDB_TRANSIENT},
        {CURLE_COULDNT_RESOLVE_HOST, EL_DDB_TRANSIENT},
        {CURLE_SSL_CONNECT_ERROR, EL_DDB_TRANSIENT},
        {CURLE_PEER_FAILED_VERIFICATION, EL_DDB_FATAL},
        {CURLE_URL_MALFORMAT, EL_DDB_FATAL},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        el_ddb_result res;
        el_ddb_classify(c[i].code, 0, NULL, 0, &res);
        assert_int_equal(res.outcome, c[i].outcome);
        assert_int_equal(res.http_status, 0);
        assert_string_equal(res.message, curl_easy_strerror(c[i].code));
    }
}

/* ---- BatchWriteItem responses ---- */

static void test_batch_unprocessed(void **state)
{
    (void)state;
    size_t len;
    char *body = fixture("batch_write_unprocessed.json", &len);
    el_ddb_batch_result r;
    el_diag d;
    assert_int_equal(el_ddb_parse_batch_write(body, len, "PK", "SK", &r, &d), EL_OK);
    assert_int_equal(r.nunprocessed, 3);
    assert_string_equal(r.unprocessed[0].pk, "ACTOR#alice");
    assert_string_equal(r.unprocessed[0].sk, "TARGET#bob");
    assert_false(r.unprocessed[0].is_delete);
    assert_string_equal(r.unprocessed[1].pk, "ACTOR#dave");
    assert_string_equal(r.unprocessed[1].sk, "TARGET#bob");
    assert_true(r.unprocessed[1].is_delete);
    assert_string_equal(r.unprocessed[2].pk, "ACTOR#\xC3\xBCnic\xC3\xB8" "de");
    assert_string_equal(r.unprocessed[2].sk, "TARGET#caf\xC3\xA9 \"x\"");
    assert_true(r.consumed_wcu > 21.999 && r.consumed_wcu < 22.001);
    el_ddb_batch_result_clear(&r);
    assert_int_equal(r.nunprocessed, 0);
    assert_null(r.unprocessed);
    el_ddb_batch_result_clear(&r); /* twice is fine */
    el_ddb_batch_result_clear(NULL);
    free(body);
}

static void test_batch_consumed_capacity(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double wcu;
    } c[] = {
        {"batch_write_indexes.json", 6.0},
        {"batch_write_total.json", 1.0},
        {"batch_write_plain.json", 0.0},
    };
    for (size_t i = 0; i < 3; i++) {
        size_t len;
        char *body = fixture(c[i].file, &len);
        el_ddb_batch_result r;
        assert_int_equal(el_ddb_parse_batch_write(body, len, "PK", "SK", &r, NULL), EL_OK);
        assert_int_equal(r.nunprocessed, 0);
        assert_true(r.consumed_wcu > c[i].wcu - 0.001 && r.consumed_wcu < c[i].wcu + 0.001);
        el_ddb_batch_result_clear(&r);
        free(body);
    }
    /* Several entries are summed; an entry with only parts adds its parts. */
    const char *b =
        "{\"ConsumedCapacity\":[{\"TableName\":\"A\",\"CapacityUnits\":2.5},"
        "{\"TableName\":\"B\",\"Table\":{\"CapacityUnits\":1},"
        "\"GlobalSecondaryIndexes\":{\"G1\":{\"CapacityUnits\":1},\"G2\":{\"CapacityUnits\":0.5}},"
        "\"LocalSecondaryIndexes\":{\"L\":{\"CapacityUnits\":2}}}]}";
    el_ddb_batch_result r;
    assert_int_equal(el_ddb_parse_batch_write(b, strlen(b), "PK", "SK", &r, NULL), EL_OK);
    assert_true(r.consumed_wcu > 6.999 && r.consumed_wcu < 7.001);
    el_ddb_batch_result_clear(&r);
}

static void test_batch_no_sort_key_and_errors(void **state)
{
    (void)state;
    const char *b = "{\"UnprocessedItems\":{\"T\":[{\"PutRequest\":{\"Item\":"
                    "{\"id\":{\"S\":\"1\"},\"x\":{\"N\":\"2\"}}}},"
                    "{\"DeleteRequest\":{\"Key\":{\"id\":{\"N\":\"42\"}}}}]}}";
    el_ddb_batch_result r;
    el_diag d;
    assert_int_equal(el_ddb_parse_batch_write(b, strlen(b), "id", NULL, &r, &d), EL_OK);
    assert_int_equal(r.nunprocessed, 2);
    assert_string_equal(r.unprocessed[0].pk, "1");
    assert_null(r.unprocessed[0].sk);
    assert_string_equal(r.unprocessed[1].pk, "42");
    assert_true(r.unprocessed[1].is_delete);
    el_ddb_batch_result_clear(&r);

    /* The sort key is missing from an unprocessed item. */
    el_diag_clear(&d);
    assert_int_equal(el_ddb_parse_batch_write(b, strlen(b), "id", "SK", &r, &d), EL_EPARSE);
    assert_int_equal(r.nunprocessed, 0);
    assert_null(r.unprocessed);
    assert_non_null(strstr(d.msg, "'SK'"));

    assert_int_equal(el_ddb_parse_batch_write("<html>", 6, "PK", "SK", &r, &d), EL_EPARSE);
    assert_int_equal(el_ddb_parse_batch_write("[]", 2, "PK", "SK", &r, &d), EL_EPARSE);
    b = "{\"UnprocessedItems\":{\"T\":{}}}";
    assert_int_equal(el_ddb_parse_batch_write(b, strlen(b), "PK", "SK", &r, &d), EL_EPARSE);
    /* Empty UnprocessedItems and a body not NUL-terminated at len. */
    b = "{\"UnprocessedItems\":{}}garbage";
    assert_int_equal(el_ddb_parse_batch_write(b, 23, "PK", "SK", &r, &d), EL_OK);
    assert_int_equal(r.nunprocessed, 0);
}

/* The all-done scan: accepted exactly where the tree parse finds nothing
 * unprocessed and gives the same total; everything else goes to the tree. */
static void test_batch_all_done_scan(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        bool accepted;
        double wcu;
    } c[] = {
        {"{\"UnprocessedItems\":{}}", true, 0},
        {"{}", true, 0},
        {" { \"UnprocessedItems\" : { } ,\n\t\"ConsumedCapacity\" : [ ] }\r\n", true, 0},
        {"{\"UnprocessedItems\":{},\"ConsumedCapacity\":[{\"TableName\":\"drvtest1\","
         "\"CapacityUnits\":6.0,\"Table\":{\"CapacityUnits\":4.0},"
         "\"GlobalSecondaryIndexes\":{\"GSI1\":{\"CapacityUnits\":2.0}}}]}", true, 6},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":2.5e1,\"TableName\":\"A\"},"
         "{\"CapacityUnits\":-0.5,\"x\":[true,false,null,{}]}],\"UnprocessedItems\":{}}", true, 24.5},
        /* the tree's business */
        {"{\"UnprocessedItems\":{\"T\":[]}}", false, 0},
        {"{\"UnprocessedItems\":null}", false, 0},
        {"{\"UnprocessedItems\":{},\"UnprocessedItems\":{\"T\":[{}]}}", false, 0},
        {"{\"UnprocessedItems\":{},\"Other\":1}", false, 0},
        {"{\"Unprocessed\\u0049tems\":{}}", false, 0},
        {"{\"ConsumedCapacity\":[{\"TableName\":\"A\",\"Table\":{\"CapacityUnits\":1}}]}", false, 0},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":1,\"CapacityUnits\":2}]}", false, 0},
        {"{\"ConsumedCapacity\":{\"CapacityUnits\":1}}", false, 0},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":01}]}", false, 0},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":1.}]}", false, 0},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":\"1\"}]}", false, 0},
        {"{\"ConsumedCapacity\":[{\"CapacityUnits\":1,\"TableName\":\"caf\xC3\xA9\"}]}", false, 0},
        {"{\"UnprocessedItems\":{}} x", false, 0},
        {"{\"UnprocessedItems\":{}}/*c*/", false, 0},
        {"{\"UnprocessedItems\":{},}", false, 0},
        {"{\"UnprocessedItems\":{}", false, 0},
        {"", false, 0},
        {"[]", false, 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        double wcu = -1;
        bool got = el_ddb_batch_write_all_done(c[i].body, strlen(c[i].body), &wcu);
        if (got != c[i].accepted)
            fail_msg("case %zu (%s): scan says %d", i, c[i].body, got);
        if (!got)
            continue;
        assert_true(wcu > c[i].wcu - 0.001 && wcu < c[i].wcu + 0.001);
        el_ddb_batch_result r;
        assert_int_equal(el_ddb_parse_batch_write_tree(c[i].body, strlen(c[i].body), "PK", "SK",
                                                       &r, NULL), EL_OK);
        assert_int_equal(r.nunprocessed, 0);
        assert_memory_equal(&r.consumed_wcu, &wcu, sizeof wcu);
        el_ddb_batch_result_clear(&r);
    }
    /* the text ends at len, not at a NUL */
    const char *b = "{\"UnprocessedItems\":{}}{";
    double wcu;
    assert_true(el_ddb_batch_write_all_done(b, strlen(b) - 1, &wcu));
    assert_false(el_ddb_batch_write_all_done(b, strlen(b), &wcu));
    assert_false(el_ddb_batch_write_all_done(b, 10, &wcu));
}

/* ---- DescribeTable and CreateTable ---- */

static void test_parse_table_desc(void **state)
{
    (void)state;
    size_t len;
    char *body = fixture("describe_table.json", &len);
    el_table_desc t;
    el_diag d;
    assert_int_equal(el_ddb_parse_table_desc(body, len, &t, &d), EL_OK);
    assert_string_equal(t.status, "ACTIVE");
    assert_string_equal(t.key.pk, "PK");
    assert_string_equal(t.key.pk_type, "S");
    assert_string_equal(t.key.sk, "SK");
    assert_string_equal(t.key.sk_type, "S");
    assert_string_equal(t.billing_mode, "PAY_PER_REQUEST");
    assert_int_equal(t.ngsi, 1);
    assert_string_equal(t.gsi[0].name, "GSI1");
    assert_string_equal(t.gsi[0].status, "ACTIVE");
    assert_string_equal(t.gsi[0].projection, "ALL");
    assert_string_equal(t.gsi[0].key.pk, "GSI1PK");
    assert_string_equal(t.gsi[0].key.sk, "GSI1SK");
    assert_string_equal(t.gsi[0].key.sk_type, "S");
    free(body);

    const char *b = "{\"Table\":{\"TableStatus\":\"CREATING\",\"KeySchema\":"
                    "[{\"AttributeName\":\"id\",\"KeyType\":\"HASH\"}],"
                    "\"AttributeDefinitions\":[{\"AttributeName\":\"id\",\"AttributeType\":\"N\"}]}}";
    assert_int_equal(el_ddb_parse_table_desc(b, strlen(b), &t, &d), EL_OK);
    assert_string_equal(t.status, "CREATING");
    assert_string_equal(t.key.pk_type, "N");
    assert_string_equal(t.key.sk, "");
    assert_string_equal(t.billing_mode, "PROVISIONED");
    assert_int_equal(t.ngsi, 0);
    assert_string_equal(t.warm.status, ""); /* no WarmThroughput: none reported */
    assert_true(t.warm.write_units == 0);
    assert_int_equal(el_ddb_parse_table_desc("{}", 2, &t, &d), EL_EPARSE);

    /* WarmThroughput of the table and of an index, as DescribeTable gives them */
    const char *w = "{\"Table\":{\"TableStatus\":\"ACTIVE\",\"KeySchema\":"
                    "[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"}],"
                    "\"WarmThroughput\":{\"ReadUnitsPerSecond\":12000,"
                    "\"WriteUnitsPerSecond\":40000,\"Status\":\"UPDATING\"},"
                    "\"GlobalSecondaryIndexes\":[{\"IndexName\":\"GSI1\","
                    "\"IndexStatus\":\"ACTIVE\",\"WarmThroughput\":{\"WriteUnitsPerSecond\":"
                    "30000,\"Status\":\"ACTIVE\"}}]}}";
    assert_int_equal(el_ddb_parse_table_desc(w, strlen(w), &t, &d), EL_OK);
    assert_string_equal(t.warm.status, "UPDATING");
    assert_true(t.warm.write_units == 40000 && t.warm.read_units == 12000);
    assert_string_equal(t.gsi[0].warm.status, "ACTIVE");
    assert_true(t.gsi[0].warm.write_units == 30000 && t.gsi[0].warm.read_units == 0);
}

static yajl_val parse_json(const el_buf *b)
{
    char err[256];
    yajl_val v = yajl_tree_parse(el_buf_str(b), err, sizeof err);
    if (!v)
        fail_msg("bad JSON: %s\n%s", err, el_buf_str(b));
    return v;
}

static const char *jstr(yajl_val v, const char **path)
{
    yajl_val s = yajl_tree_get(v, path, yajl_t_string);
    return s ? YAJL_GET_STRING(s) : "";
}

static void test_create_table_body(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1 << 16);
    el_create_table_opts o = {.table = "Graph", .index_name = "GSI1",
                              .projection = "KEYS_ONLY"};
    assert_int_equal(el_ddb_create_table_body(&o, &b), EL_OK);
    yajl_val v = parse_json(&b);
    const char *p_name[] = {"TableName", NULL};
    const char *p_bill[] = {"BillingMode", NULL};
    const char *p_defs[] = {"AttributeDefinitions", NULL};
    const char *p_ks[] = {"KeySchema", NULL};
    const char *p_gsi[] = {"GlobalSecondaryIndexes", NULL};
    assert_string_equal(jstr(v, p_name), "Graph");
    assert_string_equal(jstr(v, p_bill), "PAY_PER_REQUEST");
    yajl_val defs = yajl_tree_get(v, p_defs, yajl_t_array);
    assert_non_null(defs);
    assert_int_equal(defs->u.array.len, 4);
    yajl_val ks = yajl_tree_get(v, p_ks, yajl_t_array);
    assert_int_equal(ks->u.array.len, 2);
    const char *p_an[] = {"AttributeName", NULL};
    const char *p_kt[] = {"KeyType", NULL};
    assert_string_equal(jstr(ks->u.array.values[0], p_an), "PK");
    assert_string_equal(jstr(ks->u.array.values[0], p_kt), "HASH");
    assert_string_equal(jstr(ks->u.array.values[1], p_an), "SK");
    assert_string_equal(jstr(ks->u.array.values[1], p_kt), "RANGE");
    yajl_val gsi = yajl_tree_get(v, p_gsi, yajl_t_array);
    assert_int_equal(gsi->u.array.len, 1);
    const char *p_in[] = {"IndexName", NULL};
    const char *p_pt[] = {"Projection", "ProjectionType", NULL};
    assert_string_equal(jstr(gsi->u.array.values[0], p_in), "GSI1");
    assert_string_equal(jstr(gsi->u.array.values[0], p_pt), "KEYS_ONLY");
    yajl_val gks = yajl_tree_get(gsi->u.array.values[0], p_ks, yajl_t_array);
    assert_string_equal(jstr(gks->u.array.values[0], p_an), "GSI1PK");
    assert_string_equal(jstr(gks->u.array.values[1], p_an), "GSI1SK");
    yajl_tree_free(v);

    /* An index on the table's own keys, inverted: each attribute defined once;
     * names needing escapes; no sort key on the table. */
    el_buf_reset(&b);
    el_create_table_opts o2 = {.table = "T", .pk = "p\"k", .sk = "", .index_name = "inv",
                               .index_pk = "s\\k", .index_sk = "p\"k"};
    assert_int_equal(el_ddb_create_table_body(&o2, &b), EL_OK);
    v = parse_json(&b);
    defs = yajl_tree_get(v, p_defs, yajl_t_array);
    assert_int_equal(defs->u.array.len, 2);
    assert_string_equal(jstr(defs->u.array.values[0], p_an), "p\"k");
    assert_string_equal(jstr(defs->u.array.values[1], p_an), "s\\k");
    ks = yajl_tree_get(v, p_ks, yajl_t_array);
    assert_int_equal(ks->u.array.len, 1);
    gsi = yajl_tree_get(v, p_gsi, yajl_t_array);
    assert_string_equal(jstr(gsi->u.array.values[0], p_pt), "ALL");
    yajl_tree_free(v);

    /* No index. */
    el_buf_reset(&b);
    el_create_table_opts o3 = {.table = "T"};
    assert_int_equal(el_ddb_create_table_body(&o3, &b), EL_OK);
    v = parse_json(&b);
    assert_null(yajl_tree_get(v, p_gsi, yajl_t_any));
    defs = yajl_tree_get(v, p_defs, yajl_t_array);
    assert_int_equal(defs->u.array.len, 2);
    /* no throughput, class, protection or tags unless given */
    const char *absent[] = {"ProvisionedThroughput", "WarmThroughput", "OnDemandThroughput",
                            "TableClass", "DeletionProtectionEnabled", "Tags"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
        const char *pa[] = {absent[i], NULL};
        assert_null(yajl_tree_get(v, pa, yajl_t_any));
    }
    yajl_tree_free(v);
    el_buf_free(&b);
}

static long long jnum(yajl_val v, const char **path)
{
    yajl_val n = yajl_tree_get(v, path, yajl_t_number);
    return n && YAJL_IS_INTEGER(n) ? YAJL_GET_INTEGER(n) : -1;
}

/* A table made for a bulk load: every setting where CreateTable takes it,
 * on the table and on the index, each figure only when given. */
static void test_create_table_body_settings(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 1 << 16);
    el_ddb_tag tags[] = {{"team", "data"}, {"cost \"centre\"", ""}};
    el_create_table_opts o = {
        .table = "Graph", .index_name = "GSI1", .provisioned = true,
        .table_tp = {.write_units = 100, .read_units = 5, .warm_write = 40000,
                     .warm_read = 12000},
        .index_tp = {.write_units = 90, .read_units = 4, .warm_write = 30000},
        .table_class = "STANDARD_INFREQUENT_ACCESS", .deletion_protection = true,
        .tags = tags, .ntags = 2,
    };
    assert_int_equal(el_ddb_create_table_body(&o, &b), EL_OK);
    yajl_val v = parse_json(&b);
    const char *p_bill[] = {"BillingMode", NULL};
    assert_string_equal(jstr(v, p_bill), "PROVISIONED");
    const char *p_w[] = {"ProvisionedThroughput", "WriteCapacityUnits", NULL};
    const char *p_r[] = {"ProvisionedThroughput", "ReadCapacityUnits", NULL};
    const char *p_ww[] = {"WarmThroughput", "WriteUnitsPerSecond", NULL};
    const char *p_wr[] = {"WarmThroughput", "ReadUnitsPerSecond", NULL};
    const char *p_od[] = {"OnDemandThroughput", NULL};
    assert_int_equal(jnum(v, p_w), 100);
    assert_int_equal(jnum(v, p_r), 5);
    assert_int_equal(jnum(v, p_ww), 40000);
    assert_int_equal(jnum(v, p_wr), 12000);
    assert_null(yajl_tree_get(v, p_od, yajl_t_any));
    const char *p_gsi[] = {"GlobalSecondaryIndexes", NULL};
    yajl_val g = yajl_tree_get(v, p_gsi, yajl_t_array)->u.array.values[0];
    assert_int_equal(jnum(g, p_w), 90);
    assert_int_equal(jnum(g, p_r), 4);
    assert_int_equal(jnum(g, p_ww), 30000);
    assert_int_equal(jnum(g, p_wr), -1); /* not given: left out */
    const char *p_class[] = {"TableClass", NULL};
    assert_string_equal(jstr(v, p_class), "STANDARD_INFREQUENT_ACCESS");
    const char *p_del[] = {"DeletionProtectionEnabled", NULL};
    assert_true(YAJL_IS_TRUE(yajl_tree_get(v, p_del, yajl_t_any)));
    const char *p_tags[] = {"Tags", NULL};
    yajl_val t = yajl_tree_get(v, p_tags, yajl_t_array);
    assert_int_equal(t->u.array.len, 2);
    const char *p_k[] = {"Key", NULL}, *p_v[] = {"Value", NULL};
    assert_string_equal(jstr(t->u.array.values[0], p_k), "team");
    assert_string_equal(jstr(t->u.array.values[0], p_v), "data");
    assert_string_equal(jstr(t->u.array.values[1], p_k), "cost \"centre\"");
    assert_string_equal(jstr(t->u.array.values[1], p_v), "");
    yajl_tree_free(v);

    /* on-demand with a maximum: OnDemandThroughput, no ProvisionedThroughput */
    el_buf_reset(&b);
    el_create_table_opts od = {.table = "T", .index_name = "GSI1",
                               .table_tp = {.max_write = 50000},
                               .index_tp = {.max_write = 50000, .max_read = 7}};
    assert_int_equal(el_ddb_create_table_body(&od, &b), EL_OK);
    v = parse_json(&b);
    assert_string_equal(jstr(v, p_bill), "PAY_PER_REQUEST");
    const char *p_mw[] = {"OnDemandThroughput", "MaxWriteRequestUnits", NULL};
    const char *p_mr[] = {"OnDemandThroughput", "MaxReadRequestUnits", NULL};
    const char *p_pt[] = {"ProvisionedThroughput", NULL};
    assert_int_equal(jnum(v, p_mw), 50000);
    assert_int_equal(jnum(v, p_mr), -1);
    assert_null(yajl_tree_get(v, p_pt, yajl_t_any));
    g = yajl_tree_get(v, p_gsi, yajl_t_array)->u.array.values[0];
    assert_int_equal(jnum(g, p_mr), 7);
    assert_null(yajl_tree_get(g, p_pt, yajl_t_any));
    yajl_tree_free(v);
    el_buf_free(&b);
}

static void test_json_put_string(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 256);
    assert_int_equal(el_ddb_json_put_string(&b, "a\"b\\c\n\x01\xC3\xA9"), EL_OK);
    assert_string_equal(el_buf_str(&b), "\"a\\\"b\\\\c\\u000a\\u0001\xC3\xA9\"");
    el_buf_free(&b);
    el_buf_init(&b, 4);
    assert_int_equal(el_ddb_json_put_string(&b, "abcdef"), EL_ELIMIT);
    el_buf_free(&b);
}

/* ---- capture server ---- */

typedef enum srv_mode { SRV_ANSWER, SRV_HANG, SRV_SHORT } srv_mode;

#define MAX_CAPTURE 16

static struct {
    int fd;
    int port;
    pthread_t thread;
    pthread_mutex_t mu;
    char *head[MAX_CAPTURE];
    char *body[MAX_CAPTURE];
    size_t body_len[MAX_CAPTURE];
    size_t n;
    int connections;
    int status;
    const char *answer;
    srv_mode mode;
    int crc; /* 0: no x-amz-crc32 header, 1: the right one, 2: a wrong one */
    const char *extra;  /* header lines added to every answer, "" for none */
    bool clock_check;   /* refuse X-Amz-Date more than 5 minutes from the real time, as AWS */
} srv = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The test thread's side of srv: the server threads read and write it under
 * srv.mu, and so does the test, because ThreadSanitizer does not count the
 * request on the socket as ordering the test's writes before the server's
 * reads. The captured head[]/body[] may be read without the lock once
 * srv_requests() has returned their count (the lock orders them). */
#define SRV_SET(field, value)                                                                     \
    do {                                                                                          \
        pthread_mutex_lock(&srv.mu);                                                              \
        srv.field = (value);                                                                      \
        pthread_mutex_unlock(&srv.mu);                                                            \
    } while (0)

static size_t srv_requests(void)
{
    pthread_mutex_lock(&srv.mu);
    size_t n = srv.n;
    pthread_mutex_unlock(&srv.mu);
    return n;
}

static int srv_connections(void)
{
    pthread_mutex_lock(&srv.mu);
    int n = srv.connections;
    pthread_mutex_unlock(&srv.mu);
    return n;
}

static bool send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The seconds between a request's X-Amz-Date (in its head) and now. */
static long signed_skew(const char *head, size_t len, time_t now)
{
    const char *p = memmem(head, len, "X-Amz-Date: ", 12);
    struct tm tm = {0};
    if (!p || !strptime(p + 12, "%Y%m%dT%H%M%SZ", &tm))
        return 0;
    return (long)(timegm(&tm) - now);
}

static void *connection(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char *buf = malloc(1 << 20);
    char *answer = NULL; /* this request's answer, copied */
    size_t have = 0;
    for (;;) {
        char *end = NULL;
        while (!(end = have ? memmem(buf, have, "\r\n\r\n", 4) : NULL)) {
            ssize_t r = recv(fd, buf + have, (1 << 20) - have, 0);
            if (r <= 0)
                goto out;
            have += (size_t)r;
        }
        size_t head_len = (size_t)(end - buf) + 4;
        size_t clen = 0;
        for (char *p = buf; p && p < end; p = memchr(p, '\n', (size_t)(end - p))) {
            if (*p == '\n')
                p++;
            if (strncasecmp(p, "Content-Length:", 15) == 0)
                clen = strtoul(p + 15, NULL, 10);
            if (strncasecmp(p, "Expect: 100-continue", 20) == 0)
                send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
        }
        while (have < head_len + clen) {
            ssize_t r = recv(fd, buf + have, (1 << 20) - have, 0);
            if (r <= 0)
                goto out;
            have += (size_t)r;
        }
        pthread_mutex_lock(&srv.mu);
        srv_mode mode = srv.mode;
        int crc_mode = srv.crc;
        int status = srv.status;
        char extra[256];
        snprintf(extra, sizeof extra, "%s", srv.extra);
        /* a copy: the test frees its answer once the client has it, which
         * may be before this thread's send() returns (TSan cannot see the
         * ordering the socket gives) */
        free(answer);
        answer = strdup(srv.answer);
        time_t now = time(NULL);
        long skew = srv.clock_check ? signed_skew(buf, head_len, now) : 0;
        if (skew < -300 || skew > 300) {
            free(answer);
            answer = strdup(skew < 0 ? "{\"__type\":\"com.amazon.coral.service#"
                                       "InvalidSignatureException\",\"message\":\"Signature "
                                       "expired: the request is too old\"}"
                                     : "{\"__type\":\"com.amazon.coral.service#"
                                       "InvalidSignatureException\",\"message\":\"Signature "
                                       "not yet current: the request is too new\"}");
            status = 400;
        }
        if (srv.n < MAX_CAPTURE) {
            srv.head[srv.n] = strndup(buf, head_len);
            srv.body[srv.n] = malloc(clen + 1);
            memcpy(srv.body[srv.n], buf + head_len, clen);
            srv.body[srv.n][clen] = '\0';
            srv.body_len[srv.n] = clen;
            srv.n++;
        }
        size_t seen = srv.n; /* for x-amzn-RequestId */
        pthread_mutex_unlock(&srv.mu);
        memmove(buf, buf + head_len + clen, have - head_len - clen);
        have -= head_len + clen;
        if (mode == SRV_HANG) {
            while (recv(fd, buf, 1 << 20, 0) > 0)
                ;
            goto out;
        }
        char head[1024], crc_line[64] = "", date[64];
        size_t alen = strlen(answer);
        if (crc_mode) {
            unsigned long crc = crc32(0L, (const Bytef *)answer, (uInt)alen);
            snprintf(crc_line, sizeof crc_line, "x-amz-crc32: %lu\r\n",
                     crc_mode == 1 ? crc : crc ^ 1);
        }
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        snprintf(head, sizeof head,
                 "HTTP/1.1 %d X\r\nContent-Type: application/x-amz-json-1.0\r\n"
                 "Date: %s\r\nx-amzn-RequestId: REQ-%zu\r\n%s%sContent-Length: %zu\r\n\r\n",
                 status, date, seen, crc_line, extra, mode == SRV_SHORT ? alen + 100 : alen);
        if (!send_all(fd, head, strlen(head)) || !send_all(fd, answer, alen))
            goto out;
        if (mode == SRV_SHORT)
            goto out;
    }
out:
    free(answer);
    free(buf);
    close(fd);
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(srv.fd, NULL, NULL);
        if (c < 0)
            return NULL;
        pthread_mutex_lock(&srv.mu);
        srv.connections++;
        pthread_mutex_unlock(&srv.mu);
        pthread_t t;
        pthread_create(&t, NULL, connection, (void *)(intptr_t)c);
        pthread_detach(t);
    }
}

static void srv_clear(void)
{
    pthread_mutex_lock(&srv.mu);
    for (size_t i = 0; i < srv.n; i++) {
        free(srv.head[i]);
        free(srv.body[i]);
    }
    srv.n = 0;
    srv.connections = 0;
    srv.status = 200;
    srv.answer = "{}";
    srv.mode = SRV_ANSWER;
    srv.crc = 0;
    srv.extra = "";
    srv.clock_check = false;
    pthread_mutex_unlock(&srv.mu);
}

static int srv_start(void **state)
{
    (void)state;
    srv.fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (srv.fd < 0 || bind(srv.fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(srv.fd, 16) != 0 || getsockname(srv.fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    srv.port = ntohs(a.sin_port);
    srv_clear();
    return pthread_create(&srv.thread, NULL, acceptor, NULL) == 0 ? 0 : -1;
}

static int srv_stop(void **state)
{
    (void)state;
    shutdown(srv.fd, SHUT_RDWR);
    close(srv.fd);
    pthread_join(srv.thread, NULL);
    srv_clear();
    return 0;
}

/* A header's value in captured request i ("" when absent). */
static const char *captured_header(size_t i, const char *name)
{
    static char value[4096];
    value[0] = '\0';
    size_t n = strlen(name);
    for (const char *p = strstr(srv.head[i], "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *l = p + 2;
        if (strncasecmp(l, name, n) == 0 && l[n] == ':') {
            l += n + 1;
            while (*l == ' ')
                l++;
            size_t len = strcspn(l, "\r");
            snprintf(value, sizeof value, "%.*s", (int)len, l);
            break;
        }
    }
    return value;
}

#define TEST_SECRET "se:cret/+KEY=="
#define TEST_TOKEN "tok/EN+123=="

static el_aws_config *test_cfg(const char *endpoint, const char *token)
{
    el_aws_config *c = calloc(1, sizeof *c);
    c->region = strdup("eu-west-1");
    c->endpoint = strdup(endpoint);
    c->profile = strdup("default");
    c->access_key = strdup("AKIDTEST");
    c->secret_key = strdup(TEST_SECRET);
    c->session_token = token ? strdup(token) : NULL;
    c->cred_source = strdup("environment");
    c->verify_ssl = true;
    c->max_attempts = 2;
    return c;
}

static el_aws_config *srv_cfg(const char *token)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", srv.port);
    return test_cfg(url, token);
}

static void check_signed_request(size_t i, const char *op, const char *token)
{
    assert_true(strncmp(srv.head[i], "POST / HTTP/1.1\r\n", 17) == 0);
    assert_string_equal(captured_header(i, "Content-Type"), "application/x-amz-json-1.0");
    char target[128];
    snprintf(target, sizeof target, "DynamoDB_20120810.%s", op);
    assert_string_equal(captured_header(i, "X-Amz-Target"), target);
    char date[32];
    snprintf(date, sizeof date, "%s", captured_header(i, "X-Amz-Date"));
    assert_int_equal(strlen(date), 16);
    assert_int_equal(date[8], 'T');
    assert_int_equal(date[15], 'Z');
    char want[512];
    snprintf(want, sizeof want,
             "AWS4-HMAC-SHA256 Credential=AKIDTEST/%.8s/eu-west-1/dynamodb/aws4_request, "
             "SignedHeaders=content-type;host;x-amz-date;%sx-amz-target, Signature=",
             date, token ? "x-amz-security-token;" : "");
    const char *auth = captured_header(i, "Authorization");
    if (strncmp(auth, want, strlen(want)) != 0)
        fail_msg("Authorization: %s\nwanted: %s...", auth, want);
    const char *sig = auth + strlen(want);
    assert_int_equal(strlen(sig), 64);
    for (size_t k = 0; k < 64; k++)
        assert_true(isxdigit((unsigned char)sig[k]));
    assert_string_equal(captured_header(i, "X-Amz-Security-Token"), token ? token : "");
    assert_string_equal(captured_header(i, "Expect"), "");
    assert_null(strstr(srv.head[i], TEST_SECRET));
    assert_null(strstr(srv.head[i], "se:cret"));
    assert_true(strncmp(captured_header(i, "User-Agent"), "edgeload/", 9) == 0);
}

static void test_call_request_on_the_wire(void **state)
{
    (void)state;
    for (int with_token = 0; with_token < 2; with_token++) {
        srv_clear();
        size_t len;
        char *answer = fixture("resource_not_found.json", &len);
        SRV_SET(status, 400);
        SRV_SET(answer, answer);
        el_aws_config *cfg = srv_cfg(with_token ? TEST_TOKEN : NULL);
        el_ddb *ddb;
        el_diag d;
        assert_int_equal(el_ddb_new(cfg, &ddb, &d), EL_OK);
        assert_ptr_equal(el_ddb_config(ddb), cfg);
        el_buf resp;
        el_buf_init(&resp, 1 << 20);
        el_ddb_result res;
        const char *body = "{\"TableName\":\"Graph\"}";
        assert_int_equal(el_ddb_call(ddb, "DescribeTable", body, strlen(body), &resp, &res, &d),
                         EL_OK);
        assert_int_equal(res.outcome, EL_DDB_FATAL);
        assert_int_equal(res.http_status, 400);
        assert_string_equal(res.error_type, "ResourceNotFoundException");
        assert_string_equal(el_buf_str(&resp), answer);
        assert_int_equal(srv_requests(), 1);
        check_signed_request(0, "DescribeTable", with_token ? TEST_TOKEN : NULL);
        assert_string_equal(srv.body[0], body);

        /* A second call reuses the connection. */
        el_buf_reset(&resp);
        assert_int_equal(el_ddb_call(ddb, "ListTables", "{}", 2, NULL, &res, &d), EL_OK);
        assert_int_equal(srv_requests(), 2);
        check_signed_request(1, "ListTables", with_token ? TEST_TOKEN : NULL);
        assert_int_equal(srv_connections(), 1);
        el_buf_free(&resp);
        el_ddb_free(ddb);
        el_aws_config_free(cfg);
        free(answer);
    }
}

/* Runs the multi handle until req's transfer is done; returns curl's code. */
static CURLcode run_multi(CURLM *m, el_ddb_req *req)
{
    int running = 1;
    CURLcode result = CURLE_RECV_ERROR;
    bool done = false;
    while (!done) {
        assert_int_equal(curl_multi_perform(m, &running), CURLM_OK);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            el_ddb_req *r = NULL;
            assert_int_equal(curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r),
                             CURLE_OK);
            assert_ptr_equal(r, req);
            result = msg->data.result;
            curl_multi_remove_handle(m, msg->easy_handle);
            done = true;
        }
        if (!done)
            curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    return result;
}

static void test_multi_request_resend(void **state)
{
    (void)state;
    srv_clear();
    size_t len;
    char *answer = fixture("batch_write_unprocessed.json", &len);
    SRV_SET(status, 200);
    SRV_SET(answer, answer);
    el_aws_config *cfg = srv_cfg(TEST_TOKEN);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_buf body;
    el_buf_init(&body, 1 << 20);
    const char *text = "{\"RequestItems\":{\"Graph\":[]}}";
    assert_int_equal(el_buf_puts(&body, text), EL_OK);
    int user;
    el_ddb_req *req;
    assert_int_equal(el_ddb_req_new(ddb, "BatchWriteItem", &body, &user, &req), EL_OK);
    assert_int_equal(body.len, 0); /* taken */
    assert_ptr_equal(el_ddb_req_user(req), &user);
    size_t blen;
    assert_string_equal(el_ddb_req_body(req, &blen), text);
    assert_int_equal(blen, strlen(text));

    CURLM *m = curl_multi_init();
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            struct timespec ts = {1, 100000000L}; /* a new second: a new X-Amz-Date */
            nanosleep(&ts, NULL);
        }
        assert_true(el_ddb_req_reset(req));
        assert_int_equal(curl_multi_add_handle(m, el_ddb_req_handle(req)), CURLM_OK);
        CURLcode code = run_multi(m, req);
        assert_int_equal(code, CURLE_OK);
        el_ddb_result res;
        el_ddb_req_finish(req, code, &res);
        assert_int_equal(res.outcome, EL_DDB_SUCCESS);
        assert_int_equal(res.http_status, 200);
        size_t rlen;
        const char *r = el_ddb_req_response(req, &rlen);
        assert_int_equal(rlen, len);
        assert_string_equal(r, answer);
        el_ddb_batch_result br;
        assert_int_equal(el_ddb_parse_batch_write(r, rlen, "PK", "SK", &br, NULL), EL_OK);
        assert_int_equal(br.nunprocessed, 3);
        el_ddb_batch_result_clear(&br);
    }
    assert_int_equal(srv_requests(), 2);
    check_signed_request(0, "BatchWriteItem", TEST_TOKEN);
    check_signed_request(1, "BatchWriteItem", TEST_TOKEN);
    assert_string_equal(srv.body[0], text);
    assert_string_equal(srv.body[1], text);
    char first[4096];
    snprintf(first, sizeof first, "%s", captured_header(0, "Authorization"));
    assert_string_not_equal(first, captured_header(1, "Authorization"));
    assert_int_equal(srv_connections(), 1); /* kept alive in the multi handle */

    /* A throttled answer through the same request. */
    char *throttled = fixture("provisioned_throughput_exceeded.json", NULL);
    SRV_SET(status, 400);
    SRV_SET(answer, throttled);
    assert_true(el_ddb_req_reset(req));
    assert_int_equal(curl_multi_add_handle(m, el_ddb_req_handle(req)), CURLM_OK);
    el_ddb_result res;
    el_ddb_req_finish(req, run_multi(m, req), &res);
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
    assert_string_equal(el_ddb_req_response(req, NULL), throttled);

    el_ddb_req_free(req);
    el_ddb_req_free(NULL);
    el_buf_free(&body);
    curl_multi_cleanup(m);
    el_ddb_free(ddb);
    el_ddb_free(NULL);
    el_aws_config_free(cfg);
    free(answer);
    free(throttled);
}

static void test_request_pool_reuse(void **state)
{
    (void)state;
    /* a freed request comes back for the next one: same easy handle, the
     * new op, body and signature, the caller's buffer handed the old
     * storage; the connection stays the multi handle's */
    srv_clear();
    srv.status = 200;
    srv.answer = "{}";
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    CURLM *m = curl_multi_init();
    el_buf body;
    el_buf_init(&body, 1 << 20);
    const char *texts[3] = {"{\"first\":1}", "{\"second\":22}", ""};
    const char *ops[3] = {"PutItem", "UpdateItem", "DeleteItem"};
    CURL *first_handle = NULL;
    for (int i = 0; i < 3; i++) {
        if (texts[i][0])
            assert_int_equal(el_buf_puts(&body, texts[i]), EL_OK);
        el_ddb_req *req;
        assert_int_equal(el_ddb_req_new(ddb, ops[i], &body, NULL, &req), EL_OK);
        assert_int_equal(body.len, 0);
        if (i == 1)
            assert_non_null(body.data); /* the first request's storage, for reuse */
        size_t blen;
        assert_string_equal(el_ddb_req_body(req, &blen), texts[i]);
        assert_int_equal(blen, strlen(texts[i]));
        if (i == 0)
            first_handle = el_ddb_req_handle(req);
        else
            assert_ptr_equal(el_ddb_req_handle(req), first_handle);
        assert_true(el_ddb_req_reset(req));
        assert_int_equal(curl_multi_add_handle(m, el_ddb_req_handle(req)), CURLM_OK);
        CURLcode code = run_multi(m, req);
        el_ddb_result res;
        el_ddb_req_finish(req, code, &res);
        assert_int_equal(res.outcome, EL_DDB_SUCCESS);
        assert_ptr_equal(el_ddb_req_user(req), NULL);
        el_ddb_req_free(req);
    }
    assert_int_equal(srv.n, 3);
    for (int i = 0; i < 3; i++) {
        check_signed_request((size_t)i, ops[i], NULL);
        assert_string_equal(srv.body[i], texts[i]);
        assert_int_equal(srv.body_len[i], strlen(texts[i]));
    }
    assert_int_equal(srv.connections, 1);
    el_buf_free(&body);
    curl_multi_cleanup(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}

static void test_crc32_and_request_id(void **state)
{
    (void)state;
    srv_clear();
    char *answer = fixture("batch_write_unprocessed.json", NULL);
    SRV_SET(status, 200);
    SRV_SET(answer, answer);
    SRV_SET(crc, 1);
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_ddb_result res;
    el_diag d;
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_SUCCESS);
    assert_string_equal(res.request_id, "REQ-1");

    SRV_SET(crc, 2); /* the body does not match the checksum: do not trust it */
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    assert_int_equal(res.http_status, 200);
    assert_non_null(strstr(res.message, "crc32"));
    assert_string_equal(res.request_id, "REQ-2");

    /* The same through a multi-driven request. */
    el_buf body;
    el_buf_init(&body, 1024);
    assert_int_equal(el_buf_puts(&body, "{}"), EL_OK);
    el_ddb_req *req;
    assert_int_equal(el_ddb_req_new(ddb, "BatchWriteItem", &body, NULL, &req), EL_OK);
    CURLM *m = curl_multi_init();
    for (int mode = 2; mode >= 1; mode--) {
        SRV_SET(crc, mode);
        assert_true(el_ddb_req_reset(req));
        assert_int_equal(curl_multi_add_handle(m, el_ddb_req_handle(req)), CURLM_OK);
        el_ddb_req_finish(req, run_multi(m, req), &res);
        assert_int_equal(res.outcome, mode == 1 ? EL_DDB_SUCCESS : EL_DDB_TRANSIENT);
    }
    el_ddb_req_free(req);
    curl_multi_cleanup(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    free(answer);
}

/* x-amz-retry-after (ms) is read, over Retry-After (s), and kept for
 * throttling and transient answers only. */
static void test_retry_after_headers(void **state)
{
    (void)state;
    srv_clear();
    char *thr = fixture("throttling.json", NULL);
    SRV_SET(status, 400);
    SRV_SET(answer, thr);
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_ddb_result res;
    el_diag d;
    SRV_SET(extra, "Retry-After: 2\r\nx-amz-retry-after: 1500\r\n");
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_THROTTLED);
    assert_true(res.retry_after_ms == 1500);
    SRV_SET(extra, "Retry-After: 2\r\n");
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_true(res.retry_after_ms == 2000);
    SRV_SET(extra, "x-amz-retry-after: soon\r\n");
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_true(res.retry_after_ms == 0);
    /* a refusal is not retried: no hint kept */
    char *val = fixture("validation.json", NULL);
    SRV_SET(answer, val);
    SRV_SET(extra, "x-amz-retry-after: 1500\r\n");
    assert_int_equal(el_ddb_call(ddb, "BatchWriteItem", "{}", 2, NULL, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
    assert_true(res.retry_after_ms == 0);
    /* every answer's Date is read */
    assert_true(res.server_time > 0 && labs((long)(res.server_time - time(NULL))) <= 2);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    free(thr);
    free(val);
}

/* ---- a clock 10 minutes off, over HTTP ---- */

static time_t behind_10_min(void *user)
{
    (void)user;
    return time(NULL) - 600;
}

typedef struct heard {
    int reports;
    long offset;
} heard;

static void on_skew(void *user, const char *service, long offset)
{
    heard *h = user;
    assert_string_equal(service, "DynamoDB");
    h->reports++;
    h->offset = offset;
}

/* The seconds between captured request i's X-Amz-Date and now. */
static long captured_skew(size_t i)
{
    return signed_skew(srv.head[i], strlen(srv.head[i]), time(NULL));
}

/* A client whose clock is 10 minutes behind, against a server that
 * refuses as AWS does: DescribeTable (the synchronous path) is refused
 * once, corrected from the Date header and sent again; the driver's
 * requests are then signed with the server's time from the start. A
 * second client (its own clock) meets the refusal in the driver: each
 * request of the first window is signed again and resent once. */
static void test_skew_over_http(void **state)
{
    (void)state;
    srv_clear();
    char *desc = fixture("describe_table.json", NULL);
    SRV_SET(status, 200);
    SRV_SET(answer, desc);
    SRV_SET(clock_check, true);
    heard h = {0};
    el_aws_config *cfg = srv_cfg(NULL);
    cfg->wall_clock = behind_10_min;
    cfg->on_skew = on_skew;
    cfg->on_skew_user = &h;
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_table_desc t;
    el_diag d;
    el_diag_clear(&d);
    if (el_ddb_describe_table(ddb, "Graph", &t, &d) != EL_OK)
        fail_msg("%s", d.msg);
    assert_int_equal(srv_requests(), 2);
    assert_true(captured_skew(0) <= -595 && captured_skew(0) >= -605);
    assert_true(labs(captured_skew(1)) <= 5);
    assert_int_equal(h.reports, 1);
    assert_true(labs(h.offset - 600) <= 2);

    SRV_SET(answer, "{}");
    el_ddb_driver *drv;
    el_ddb_driver_opts o = {.concurrency = 2};
    assert_int_equal(el_ddb_driver_new(ddb, &o, &drv, &d), EL_OK);
    el_buf b, resp;
    el_buf_init(&b, 1024);
    el_buf_init(&resp, 1024);
    assert_int_equal(el_buf_puts(&b, "{}"), EL_OK);
    assert_int_equal(el_ddb_driver_call(drv, "BatchWriteItem", &b, 1, &resp, &d), EL_OK);
    assert_int_equal(srv_requests(), 3);
    assert_true(labs(captured_skew(2)) <= 5);
    el_ddb_driver_free(drv);
    el_ddb_free(ddb);

    /* a fresh client: the refusal meets the driver first */
    srv_clear();
    SRV_SET(answer, "{}");
    SRV_SET(clock_check, true);
    h.reports = 0;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    assert_int_equal(el_ddb_driver_new(ddb, &o, &drv, &d), EL_OK);
    for (int i = 0; i < 2; i++) {
        el_buf_reset(&b);
        assert_int_equal(el_buf_puts(&b, "{}"), EL_OK);
        assert_int_equal(el_ddb_driver_call(drv, "BatchWriteItem", &b, 1, &resp, &d), EL_OK);
    }
    assert_int_equal(srv_requests(), 3); /* the first twice, the second once */
    assert_true(captured_skew(0) <= -595);
    assert_true(labs(captured_skew(1)) <= 5 && labs(captured_skew(2)) <= 5);
    assert_int_equal(h.reports, 1);
    el_ddb_driver_free(drv);
    el_ddb_free(ddb);
    el_buf_free(&b);
    el_buf_free(&resp);
    el_aws_config_free(cfg);
    free(desc);
}

static void test_connection_refused(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
    close(fd); /* nobody listens there now */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(a.sin_port));
    el_aws_config *cfg = test_cfg(url, NULL);
    el_ddb *ddb;
    el_diag d;
    assert_int_equal(el_ddb_new(cfg, &ddb, &d), EL_OK);
    el_ddb_result res;
    el_diag_clear(&d);
    assert_int_equal(el_ddb_call(ddb, "ListTables", "{}", 2, NULL, &res, &d), EL_ENET);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    assert_int_equal(res.http_status, 0);
    assert_true(res.message[0] != '\0');
    assert_non_null(strstr(d.msg, url));
    assert_null(strstr(d.msg, TEST_SECRET));

    /* The control plane retries, then reports the network error. */
    el_table_desc t;
    assert_int_equal(el_ddb_describe_table(ddb, "Graph", &t, &d), EL_ENET);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}

static void test_timeout_and_short_body(void **state)
{
    (void)state;
    srv_clear();
    SRV_SET(mode, SRV_HANG);
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_ddb_set_timeouts(ddb, 1000, 300);
    el_ddb_result res;
    el_diag d;
    assert_int_equal(el_ddb_call(ddb, "ListTables", "{}", 2, NULL, &res, &d), EL_ENET);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    assert_non_null(strstr(res.message, "imed out"));

    SRV_SET(mode, SRV_SHORT);
    SRV_SET(answer, "{\"UnprocessedItems\":{}}");
    el_ddb_set_timeouts(ddb, 0, 0);
    assert_int_equal(el_ddb_call(ddb, "ListTables", "{}", 2, NULL, &res, &d), EL_ENET);
    assert_int_equal(res.outcome, EL_DDB_TRANSIENT);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}

static void test_describe_and_create_errors(void **state)
{
    (void)state;
    srv_clear();
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    el_table_desc t;
    el_diag d;

    char *nf = fixture("resource_not_found.json", NULL);
    SRV_SET(status, 400);
    SRV_SET(answer, nf);
    assert_int_equal(el_ddb_describe_table(ddb, "Graph", &t, &d), EL_ETABLE);
    char want[256];
    snprintf(want, sizeof want, "table 'Graph' does not exist in eu-west-1 at http://127.0.0.1:%d",
             srv.port);
    assert_string_equal(d.msg, want);

    char *bad = fixture("unrecognized_client.json", NULL);
    SRV_SET(answer, bad);
    assert_int_equal(el_ddb_describe_table(ddb, "Graph", &t, &d), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "UnrecognizedClientException"));
    assert_non_null(strstr(d.msg, "environment"));

    char *inuse = fixture("resource_in_use.json", NULL);
    SRV_SET(answer, inuse);
    el_create_table_opts o = {.table = "Graph", .index_name = "GSI1"};
    assert_int_equal(el_ddb_create_table(ddb, &o, NULL, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "already exists"));
    o.projection = "INCLUDE";
    assert_int_equal(el_ddb_create_table(ddb, &o, NULL, &d), EL_EUSAGE);

    /* Throttled every time: retried max_attempts (2) times, then an error. */
    char *thr = fixture("throttling.json", NULL);
    SRV_SET(answer, thr);
    srv_clear();
    SRV_SET(status, 400);
    SRV_SET(answer, thr);
    assert_int_equal(el_ddb_describe_table(ddb, "Graph", &t, &d), EL_ESERVICE);
    assert_int_equal(srv_requests(), 2);
    assert_non_null(strstr(d.msg, "ThrottlingException"));
    /* create-table's figures count the attempts, the failed ones too */
    el_create_table_figures fig;
    o.projection = "ALL";
    assert_int_equal(el_ddb_create_table(ddb, &o, &fig, &d), EL_ESERVICE);
    assert_int_equal(srv_requests(), 4);
    assert_int_equal(fig.requests, 2);
    assert_int_equal(fig.retries, 1);
    assert_int_equal(fig.polls, 0);

    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    free(nf);
    free(bad);
    free(inuse);
    free(thr);
}

/* The wait ends when DescribeTable reports the table, the index and their
 * warm throughput ACTIVE; the figures keep the warm throughput reported;
 * the request on the wire carries the settings. */
static void test_create_table_waits_for_warm(void **state)
{
    (void)state;
    srv_clear();
    el_aws_config *cfg = srv_cfg(NULL);
    el_ddb *ddb;
    assert_int_equal(el_ddb_new(cfg, &ddb, NULL), EL_OK);
    const char *answer =
        "{\"Table\":{\"TableStatus\":\"ACTIVE\",\"KeySchema\":"
        "[{\"AttributeName\":\"PK\",\"KeyType\":\"HASH\"}],"
        "\"WarmThroughput\":{\"WriteUnitsPerSecond\":40000,\"ReadUnitsPerSecond\":12000,"
        "\"Status\":\"ACTIVE\"},\"GlobalSecondaryIndexes\":[{\"IndexName\":\"GSI1\","
        "\"IndexStatus\":\"ACTIVE\",\"WarmThroughput\":{\"WriteUnitsPerSecond\":40000,"
        "\"Status\":\"ACTIVE\"}}]}}";
    SRV_SET(answer, answer);
    el_create_table_opts o = {.table = "Graph", .index_name = "GSI1",
                              .table_tp = {.warm_write = 40000, .warm_read = 12000},
                              .index_tp = {.warm_write = 40000}};
    el_create_table_figures fig;
    el_diag d;
    assert_int_equal(el_ddb_create_table(ddb, &o, &fig, &d), EL_OK);
    assert_int_equal(srv_requests(), 2);
    assert_int_equal(fig.polls, 1);
    assert_true(fig.warm.write_units == 40000 && fig.warm.read_units == 12000);
    assert_string_equal(fig.index_warm.status, "ACTIVE");
    assert_true(fig.index_warm.write_units == 40000);
    assert_non_null(strstr(srv.body[0], "\"WarmThroughput\":{\"ReadUnitsPerSecond\":12000,"
                                        "\"WriteUnitsPerSecond\":40000}"));
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}

/* ---- against DynamoDB Local (EDGELOAD_DDB_ENDPOINT) ---- */

static void test_dynamodb_local(void **state)
{
    (void)state;
    const char *endpoint = getenv("EDGELOAD_DDB_ENDPOINT");
    if (!endpoint || !*endpoint)
        skip();
    el_aws_config *cfg = test_cfg(endpoint, NULL);
    el_ddb *ddb;
    el_diag d;
    assert_int_equal(el_ddb_new(cfg, &ddb, &d), EL_OK);
    char table[64];
    snprintf(table, sizeof table, "edgeload_unit_%ld_%ld", (long)getpid(), (long)time(NULL));

    el_create_table_opts o = {.table = table, .index_name = "GSI1", .projection = "ALL",
                              .wait_seconds = 60};
    el_create_table_figures fig;
    if (el_ddb_create_table(ddb, &o, &fig, &d) != EL_OK)
        fail_msg("create: %s", d.msg);
    /* CreateTable, then DescribeTable until ACTIVE (DynamoDB Local: at once) */
    assert_true(fig.polls >= 1);
    assert_int_equal(fig.requests, 1 + fig.polls + fig.retries);
    el_table_desc t;
    assert_int_equal(el_ddb_describe_table(ddb, table, &t, &d), EL_OK);
    assert_string_equal(t.status, "ACTIVE");
    assert_string_equal(t.key.pk, "PK");
    assert_string_equal(t.key.sk, "SK");
    assert_string_equal(t.billing_mode, "PAY_PER_REQUEST");
    assert_int_equal(t.ngsi, 1);
    assert_string_equal(t.gsi[0].name, "GSI1");
    assert_string_equal(t.gsi[0].key.pk, "GSI1PK");
    assert_string_equal(t.gsi[0].status, "ACTIVE");
    assert_int_equal(el_ddb_create_table(ddb, &o, NULL, &d), EL_ETABLE);
    assert_non_null(strstr(d.msg, "already exists"));

    /* 25 edges through the multi interface. */
    el_buf body;
    el_buf_init(&body, 1 << 20);
    assert_int_equal(el_buf_printf(&body, "{\"RequestItems\":{\"%s\":[", table), EL_OK);
    for (int i = 0; i < 25; i++)
        assert_int_equal(
            el_buf_printf(&body,
                          "%s{\"PutRequest\":{\"Item\":{\"PK\":{\"S\":\"ACTOR#u%d\"},"
                          "\"SK\":{\"S\":\"TARGET#bob\"},\"GSI1PK\":{\"S\":\"TARGET#bob\"},"
                          "\"GSI1SK\":{\"S\":\"ACTOR#u%d\"}}}}",
                          i ? "," : "", i, i),
            EL_OK);
    assert_int_equal(el_buf_puts(&body, "]},\"ReturnConsumedCapacity\":\"INDEXES\"}"), EL_OK);
    el_ddb_req *req;
    assert_int_equal(el_ddb_req_new(ddb, "BatchWriteItem", &body, NULL, &req), EL_OK);
    CURLM *m = curl_multi_init();
    assert_true(el_ddb_req_reset(req));
    assert_int_equal(curl_multi_add_handle(m, el_ddb_req_handle(req)), CURLM_OK);
    el_ddb_result res;
    el_ddb_req_finish(req, run_multi(m, req), &res);
    size_t rlen;
    const char *r = el_ddb_req_response(req, &rlen);
    if (res.outcome != EL_DDB_SUCCESS)
        fail_msg("BatchWriteItem: %s: %s", res.error_type, res.message);
    el_ddb_batch_result br;
    assert_int_equal(el_ddb_parse_batch_write(r, rlen, "PK", "SK", &br, &d), EL_OK);
    assert_int_equal(br.nunprocessed, 0);
    assert_true(br.consumed_wcu >= 25.0);
    el_ddb_batch_result_clear(&br);
    el_ddb_req_free(req);
    curl_multi_cleanup(m);

    /* A bad item is a rejected request. */
    el_buf resp;
    el_buf_init(&resp, 1 << 20);
    char bad[256];
    snprintf(bad, sizeof bad, "{\"TableName\":\"%s\",\"Item\":{\"PK\":{\"S\":\"x\"}}}", table);
    assert_int_equal(el_ddb_call(ddb, "PutItem", bad, strlen(bad), &resp, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_REJECTED);
    assert_string_equal(res.error_type, "ValidationException");

    char del[128];
    snprintf(del, sizeof del, "{\"TableName\":\"%s\"}", table);
    assert_int_equal(el_ddb_call(ddb, "DeleteTable", del, strlen(del), NULL, &res, &d), EL_OK);
    assert_int_equal(res.outcome, EL_DDB_SUCCESS);
    assert_int_equal(el_ddb_describe_table(ddb, table, &t, &d), EL_ETABLE);
    el_buf_free(&resp);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}


/* ---- explanations (ddb_errors.h) ---- */

static void classify_fixture(const char *file, el_ddb_result *res)
{
    size_t len;
    char *body = fixture(file, &len);
    el_ddb_classify(CURLE_OK, 400, body, len, res);
    free(body);
}

static void test_problem_of_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        el_ddb_problem problem;
    } want[] = {
        {"expired_token.json", EL_DDB_PROBLEM_EXPIRED_TOKEN},
        {"unrecognized_client.json", EL_DDB_PROBLEM_UNKNOWN_KEY},
        {"wrong_region.json", EL_DDB_PROBLEM_WRONG_REGION},
        {"wrong_service.json", EL_DDB_PROBLEM_WRONG_SERVICE},
        {"signature_expired.json", EL_DDB_PROBLEM_CLOCK_SKEW},
        {"invalid_signature.json", EL_DDB_PROBLEM_BAD_SECRET},
        {"access_denied.json", EL_DDB_PROBLEM_ACCESS_DENIED},
        {"validation.json", EL_DDB_PROBLEM_OTHER},
        {"resource_not_found.json", EL_DDB_PROBLEM_OTHER},
        {"missing_auth.json", EL_DDB_PROBLEM_OTHER},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        el_ddb_result res;
        classify_fixture(want[i].file, &res);
        if (el_ddb_problem_of(&res) != want[i].problem)
            fail_msg("%s: problem %d, want %d", want[i].file, el_ddb_problem_of(&res),
                     want[i].problem);
        /* each is fatal: retrying cannot help, so the line is all the user gets */
        if (want[i].problem != EL_DDB_PROBLEM_OTHER)
            assert_int_equal(res.outcome, EL_DDB_FATAL);
    }
}

static el_aws_config *hint_cfg(const char *cred_source, const char *region_source,
                               const char *endpoint)
{
    el_aws_config *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->region = strdup("eu-west-3");
    c->region_source = region_source ? strdup(region_source) : NULL;
    c->endpoint = strdup(endpoint);
    c->profile = strdup("nightly");
    c->access_key = strdup("AKIAHINTTEST0000WXYZ");
    c->secret_key = strdup(TEST_SECRET);
    c->session_token = strdup(TEST_TOKEN);
    c->cred_source = strdup(cred_source);
    return c;
}

static void free_hint_cfg(el_aws_config *c)
{
    free(c->region);
    free(c->region_source);
    free(c->endpoint);
    free(c->profile);
    free(c->access_key);
    free(c->secret_key);
    free(c->session_token);
    free(c->cred_source);
    free(c);
}

/* One line, no secret, no whole access key id. */
static void assert_clean_line(const char *line)
{
    assert_null(strchr(line, '\n'));
    assert_null(strstr(line, TEST_SECRET));
    assert_null(strstr(line, TEST_TOKEN));
    assert_null(strstr(line, "AKIAHINTTEST0000WXYZ"));
}

static void test_explain_texts(void **state)
{
    (void)state;
    el_aws_config *env = hint_cfg("environment", "AWS_REGION", "http://127.0.0.1:8000");
    el_aws_config *file = hint_cfg("/home/etl/.aws/credentials [nightly]",
                                   "region in /home/etl/.aws/config [profile nightly]",
                                   "https://dynamodb.us-east-1.amazonaws.com");
    el_ddb_result res;
    char line[1024];

    classify_fixture("expired_token.json", &res);
    el_ddb_explain(&res, env, "BatchWriteItem", line, sizeof line);
    assert_clean_line(line);
    assert_string_equal(line,
        "the AWS session token has expired (credentials from the environment): get new "
        "credentials (aws sso login, or assume the role again) and export the new "
        "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (BatchWriteItem "
        "ExpiredTokenException: The security token included in the request is expired)");
    el_ddb_explain(&res, file, "DescribeTable", line, sizeof line);
    assert_clean_line(line);
    assert_non_null(strstr(line, "has expired (credentials from /home/etl/.aws/credentials "
                                 "[nightly]): get new credentials (aws sso login --profile "
                                 "nightly, or assume the role again)"));

    classify_fixture("wrong_region.json", &res);
    el_ddb_explain(&res, file, "DescribeTable", line, sizeof line);
    assert_clean_line(line);
    assert_string_equal(line,
        "wrong region: requests are signed for eu-west-3 (from region in "
        "/home/etl/.aws/config [profile nightly]) but the endpoint "
        "https://dynamodb.us-east-1.amazonaws.com is in us-east-1: give --region us-east-1, "
        "or an endpoint in eu-west-3 (DescribeTable InvalidSignatureException: Credential "
        "should be scoped to a valid region, not 'eu-west-3')");
    el_ddb_explain(&res, env, "DescribeTable", line, sizeof line);
    assert_non_null(strstr(line, "wrong region: requests are signed for eu-west-3 (from "
                                 "AWS_REGION) and the endpoint http://127.0.0.1:8000 does not "
                                 "take that region: give the endpoint's region with --region"));

    classify_fixture("unrecognized_client.json", &res);
    el_ddb_explain(&res, env, "DescribeTable", line, sizeof line);
    assert_clean_line(line);
    assert_non_null(strstr(line, "AWS does not recognise the access key id ending in 'WXYZ' "
                                 "(credentials from environment), or the session token is "
                                 "not the one issued with it: check AWS_ACCESS_KEY_ID and "
                                 "AWS_SECRET_ACCESS_KEY"));
    assert_non_null(strstr(line, "(DescribeTable UnrecognizedClientException: The security "
                                 "token included in the request is invalid)"));

    classify_fixture("wrong_service.json", &res);
    el_ddb_explain(&res, env, "Query", line, sizeof line);
    assert_true(strncmp(line, "the endpoint http://127.0.0.1:8000 is not DynamoDB's", 52) == 0);

    classify_fixture("signature_expired.json", &res);
    el_ddb_explain(&res, env, "Query", line, sizeof line);
    assert_true(strncmp(line, "this machine's clock is off", 27) == 0);

    classify_fixture("invalid_signature.json", &res);
    el_ddb_explain(&res, file, "UpdateItem", line, sizeof line);
    assert_clean_line(line);
    assert_non_null(strstr(line, "the signature does not match: the secret access key "
                                 "(credentials from /home/etl/.aws/credentials [nightly])"));

    classify_fixture("access_denied.json", &res);
    el_ddb_explain(&res, env, "BatchWriteItem", line, sizeof line);
    assert_non_null(strstr(line, "access denied: the identity of the credentials from "
                                 "environment may not call dynamodb:BatchWriteItem"));
    assert_non_null(strstr(line, "User: arn:aws:iam::123456789012:user/loader"));

    classify_fixture("validation.json", &res);
    el_ddb_explain(&res, env, "PutItem", line, sizeof line);
    assert_true(strncmp(line, "DynamoDB refused PutItem (credentials from environment): "
                              "ValidationException: One of the required keys", 100) == 0);

    /* cut at the buffer, NUL-terminated */
    char small[16];
    classify_fixture("expired_token.json", &res);
    el_ddb_explain(&res, env, "BatchWriteItem", small, sizeof small);
    assert_string_equal(small, "the AWS session");
    el_ddb_explain(&res, NULL, "BatchWriteItem", line, sizeof line);
    assert_non_null(strstr(line, "has expired"));

    free_hint_cfg(env);
    free_hint_cfg(file);
}

static void test_explain_missing_table_and_fail(void **state)
{
    (void)state;
    el_aws_config *implicit = hint_cfg("environment", "AWS_DEFAULT_REGION",
                                       "https://dynamodb.eu-west-3.amazonaws.com");
    el_aws_config *given = hint_cfg("environment", "--region",
                                    "https://dynamodb.eu-west-3.amazonaws.com");
    char line[1024];
    el_ddb_explain_missing_table("Graph", implicit, line, sizeof line);
    assert_string_equal(line, "table 'Graph' does not exist in eu-west-3 at "
                              "https://dynamodb.eu-west-3.amazonaws.com (region eu-west-3 "
                              "from AWS_DEFAULT_REGION: if the table is in another region, "
                              "give --region)");
    el_ddb_explain_missing_table("Graph", given, line, sizeof line);
    assert_string_equal(line, "table 'Graph' does not exist in eu-west-3 at "
                              "https://dynamodb.eu-west-3.amazonaws.com");

    el_ddb_result res;
    el_diag d;
    el_diag_clear(&d);
    classify_fixture("expired_token.json", &res);
    assert_int_equal(el_ddb_fail(&d, &res, implicit, "BatchWriteItem"), EL_ECONFIG);
    assert_true(strncmp(d.msg, "the AWS session token has expired", 33) == 0);
    el_ddb_classify(CURLE_SSL_CACERT_BADFILE, 0, NULL, 0, &res);
    assert_int_equal(el_ddb_fail(&d, &res, implicit, "BatchWriteItem"), EL_ENET);
    el_ddb_classify(CURLE_OK, 301, NULL, 0, &res);
    assert_int_equal(el_ddb_fail(&d, &res, implicit, "BatchWriteItem"), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "301"));
    free_hint_cfg(implicit);
    free_hint_cfg(given);
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(test_classify_fixtures),
        cmocka_unit_test(test_classify_status_only),
        cmocka_unit_test(test_error_table_in_docs),
        cmocka_unit_test(test_classify_table_kinds),
        cmocka_unit_test(test_problem_of_fixtures),
        cmocka_unit_test(test_explain_texts),
        cmocka_unit_test(test_explain_missing_table_and_fail),
        cmocka_unit_test(test_classify_code_wins_over_status),
        cmocka_unit_test(test_classify_body_not_terminated),
        cmocka_unit_test(test_classify_message_sanitised_and_bounded),
        cmocka_unit_test(test_classify_curl_errors),
        cmocka_unit_test(test_batch_unprocessed),
        cmocka_unit_test(test_batch_consumed_capacity),
        cmocka_unit_test(test_batch_no_sort_key_and_errors),
        cmocka_unit_test(test_batch_all_done_scan),
        cmocka_unit_test(test_parse_table_desc),
        cmocka_unit_test(test_create_table_body),
        cmocka_unit_test(test_create_table_body_settings),
        cmocka_unit_test(test_json_put_string),
    };
    const struct CMUnitTest wire[] = {
        cmocka_unit_test(test_call_request_on_the_wire),
        cmocka_unit_test(test_multi_request_resend),
        cmocka_unit_test(test_request_pool_reuse),
        cmocka_unit_test(test_crc32_and_request_id),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_timeout_and_short_body),
        cmocka_unit_test(test_describe_and_create_errors),
        cmocka_unit_test(test_create_table_waits_for_warm),
        cmocka_unit_test(test_retry_after_headers),
        cmocka_unit_test(test_skew_over_http),
    };
    const struct CMUnitTest local[] = {
        cmocka_unit_test(test_dynamodb_local),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int failed = cmocka_run_group_tests(pure, NULL, NULL);
    failed += cmocka_run_group_tests(wire, srv_start, srv_stop);
    failed += cmocka_run_group_tests(local, NULL, NULL);
    curl_global_cleanup();
    return failed;
}
