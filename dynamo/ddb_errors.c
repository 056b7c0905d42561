/*
 * ddb_errors.c - classifying a finished DynamoDB call as the AWS SDKs do.
 *
 * DESIGN: classification is a pure function of (curl code, HTTP status,
 * body), so it is unit-tested on real error bodies. The error code comes
 * first (a throttling code wins over its 400 or 5xx status), from one table
 * (code_table, printed in docs/LIMITS.md), then the status. The body is read with
 * yajl's event parser: no tree, no allocation beyond yajl's own, and no need
 * for a NUL-terminated body.
 *
 * Explaining (ddb_errors.h) is separate from classifying: a problem is
 * recognised by its code and, for InvalidSignatureException (which AWS uses
 * for a wrong region, a wrong secret and a wrong clock alike), by the words
 * of its message; the line is then built from the config's record of where
 * the credentials and the region came from.
 */
#include "dynamo/ddb_errors.h"

#include <stdio.h>            /* snprintf */
#include <string.h>           /* strcmp, strrchr, memcpy, strstr */
#include <time.h>             /* time, for the current credentials */
#include <yajl/yajl_parse.h>  /* event parser for error bodies */

#include "aws/skew.h"          /* el_skew_correct */

/*
 * The one table of what an error code means, whatever its HTTP status:
 * every code of DynamoDB's API reference (its Common Errors and each
 * operation's errors, as botocore's service model lists them), botocore's
 * retry lists (standard mode: THROTTLED_ERROR_CODES, TRANSIENT_ERROR_CODES,
 * modeled retryable errors) and the credential, permission and clock
 * refusals after which retrying cannot help. docs/LIMITS.md prints it with
 * each code's status, botocore's kind and what becomes of the rows;
 * test_ddb_client.c checks that the two agree. A code not here is judged
 * by its status (el_ddb_classify).
 */
typedef struct code_kind {
    const char *code;
    el_ddb_outcome kind;
} code_kind;

static const code_kind code_table[] = {
    /* throttling: botocore's THROTTLED_ERROR_CODES, every one */
    {"ProvisionedThroughputExceededException", EL_DDB_THROTTLED},
    {"ThrottlingException", EL_DDB_THROTTLED},
    {"RequestLimitExceeded", EL_DDB_THROTTLED},
    {"TransactionInProgressException", EL_DDB_THROTTLED},
    {"LimitExceededException", EL_DDB_THROTTLED},
    {"Throttling", EL_DDB_THROTTLED},
    {"ThrottledException", EL_DDB_THROTTLED},
    {"RequestThrottledException", EL_DDB_THROTTLED},
    {"RequestThrottled", EL_DDB_THROTTLED},
    {"TooManyRequestsException", EL_DDB_THROTTLED},
    {"BandwidthLimitExceeded", EL_DDB_THROTTLED},
    {"SlowDown", EL_DDB_THROTTLED},
    {"PriorRequestNotComplete", EL_DDB_THROTTLED},
    {"EC2ThrottledException", EL_DDB_THROTTLED},
    /* transient: the server's failures, botocore's TRANSIENT_ERROR_CODES,
     * the modeled retryable ReplicatedWriteConflictException, and
     * TransactionConflictException, which botocore does not retry but
     * edgeload does: its writes are whole puts and SET counters, which
     * another try cannot make wrong */
    {"InternalServerError", EL_DDB_TRANSIENT},
    {"InternalFailure", EL_DDB_TRANSIENT},
    {"ServiceUnavailable", EL_DDB_TRANSIENT},
    {"ServiceUnavailableException", EL_DDB_TRANSIENT},
    {"RequestTimeout", EL_DDB_TRANSIENT},
    {"RequestTimeoutException", EL_DDB_TRANSIENT},
    {"ReplicatedWriteConflictException", EL_DDB_TRANSIENT},
    {"TransactionConflictException", EL_DDB_TRANSIENT},
    /* fatal: credentials, permissions, a clock AWS still refuses after the
     * correction of aws/skew.h, a missing table, an operation the endpoint
     * does not have: every request would meet the same */
    {"AccessDeniedException", EL_DDB_FATAL},
    {"AccessDenied", EL_DDB_FATAL},
    {"NotAuthorized", EL_DDB_FATAL},
    {"OptInRequired", EL_DDB_FATAL},
    {"UnrecognizedClientException", EL_DDB_FATAL},
    {"InvalidClientTokenId", EL_DDB_FATAL},
    {"ExpiredTokenException", EL_DDB_FATAL},
    {"ExpiredToken", EL_DDB_FATAL},
    {"MissingAuthenticationToken", EL_DDB_FATAL},
    {"MissingAuthenticationTokenException", EL_DDB_FATAL},
    {"IncompleteSignature", EL_DDB_FATAL},
    {"IncompleteSignatureException", EL_DDB_FATAL},
    {"InvalidSignatureException", EL_DDB_FATAL},
    {"SignatureDoesNotMatch", EL_DDB_FATAL},
    {"AuthFailure", EL_DDB_FATAL},
    {"RequestExpired", EL_DDB_FATAL},
    {"RequestTimeTooSkewed", EL_DDB_FATAL},
    {"RequestInTheFuture", EL_DDB_FATAL},
    {"ResourceNotFoundException", EL_DDB_FATAL},
    {"InvalidAction", EL_DDB_FATAL},
    {"UnknownOperationException", EL_DDB_FATAL},
    /* refused: the request (or one of its items) is wrong; the caller
     * judges it (a load splits a batch to find the item) */
    {"ValidationException", EL_DDB_REJECTED},
    {"ValidationError", EL_DDB_REJECTED},
    {"SerializationException", EL_DDB_REJECTED},
    {"ConditionalCheckFailedException", EL_DDB_REJECTED},
    {"ItemCollectionSizeLimitExceededException", EL_DDB_REJECTED},
    {"TransactionCanceledException", EL_DDB_REJECTED},
    {"IdempotentParameterMismatchException", EL_DDB_REJECTED},
    {"ResourceInUseException", EL_DDB_REJECTED},
    /* refused, of operations edgeload does not send */
    {"BackupInUseException", EL_DDB_REJECTED},
    {"BackupNotFoundException", EL_DDB_REJECTED},
    {"ContinuousBackupsUnavailableException", EL_DDB_REJECTED},
    {"DuplicateItemException", EL_DDB_REJECTED},
    {"ExportConflictException", EL_DDB_REJECTED},
    {"ExportNotFoundException", EL_DDB_REJECTED},
    {"GlobalTableAlreadyExistsException", EL_DDB_REJECTED},
    {"GlobalTableNotFoundException", EL_DDB_REJECTED},
    {"ImportConflictException", EL_DDB_REJECTED},
    {"ImportNotFoundException", EL_DDB_REJECTED},
    {"IndexNotFoundException", EL_DDB_REJECTED},
    {"InvalidExportTimeException", EL_DDB_REJECTED},
    {"InvalidRestoreTimeException", EL_DDB_REJECTED},
    {"PointInTimeRecoveryUnavailableException", EL_DDB_REJECTED},
    {"PolicyNotFoundException", EL_DDB_REJECTED},
    {"ReplicaAlreadyExistsException", EL_DDB_REJECTED},
    {"ReplicaNotFoundException", EL_DDB_REJECTED},
    {"TableAlreadyExistsException", EL_DDB_REJECTED},
    {"TableInUseException", EL_DDB_REJECTED},
    {"TableNotFoundException", EL_DDB_REJECTED},
};

#define NCODES (sizeof code_table / sizeof code_table[0])

el_ddb_outcome el_ddb_code_kind(const char *code, bool *known)
{
    for (size_t i = 0; code && code[0] && i < NCODES; i++)
        if (strcmp(code, code_table[i].code) == 0) {
            *known = true;
            return code_table[i].kind;
        }
    *known = false;
    return EL_DDB_REJECTED;
}

const char *el_ddb_code_at(size_t i)
{
    return i < NCODES ? code_table[i].code : NULL;
}

const char *el_ddb_outcome_name(el_ddb_outcome o)
{
    switch (o) {
    case EL_DDB_SUCCESS: return "success";
    case EL_DDB_THROTTLED: return "throttled";
    case EL_DDB_TRANSIENT: return "transient";
    case EL_DDB_REJECTED: return "refused";
    case EL_DDB_FATAL: return "fatal";
    }
    return "?";
}

bool el_ddb_skew_resend(el_skew *skew, const el_ddb_result *res)
{
    return res->outcome == EL_DDB_FATAL && res->http_status > 0 &&
           el_skew_correct(skew, res->error_type, res->message, res->http_status,
                           res->server_time, res->clock_offset);
}

/* ---- reading __type and message ---- */

typedef enum want { WANT_NONE, WANT_TYPE, WANT_MESSAGE } want;

typedef struct fields {
    int depth;
    want next;
    char *type;
    size_t type_len;
    char *message;
    size_t message_len;
    bool have_message;
} fields;

/* Copies at most cap-1 bytes, never cutting a UTF-8 sequence, with control
 * characters replaced so a message stays on one line. */
static void copy_text(char *dst, size_t cap, const unsigned char *s, size_t n)
{
    if (cap == 0)
        return;
    if (n > cap - 1) {
        n = cap - 1;
        while (n > 0 && (s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++)
        dst[i] = (s[i] < 0x20 || s[i] == 0x7F) ? ' ' : (char)s[i];
    dst[n] = '\0';
}

static int on_start(void *ctx)
{
    fields *f = ctx;
    f->depth++;
    f->next = WANT_NONE;
    return 1;
}

static int on_end(void *ctx)
{
    fields *f = ctx;
    f->depth--;
    return 1;
}

static int on_key(void *ctx, const unsigned char *k, size_t n)
{
    fields *f = ctx;
    f->next = WANT_NONE;
    if (f->depth != 1)
        return 1;
    if (n == 6 && memcmp(k, "__type", 6) == 0)
        f->next = WANT_TYPE;
    else if (n == 7 && (memcmp(k, "message", 7) == 0 || memcmp(k, "Message", 7) == 0))
        f->next = WANT_MESSAGE;
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n)
{
    fields *f = ctx;
    if (f->depth == 1 && f->next == WANT_TYPE) {
        /* "com.amazonaws.dynamodb.v20120810#ValidationException" -> after '#';
         * a ":url" suffix (as in x-amzn-ErrorType) is dropped too. */
        const unsigned char *start = s;
        for (size_t i = 0; i < n; i++)
            if (s[i] == '#')
                start = s + i + 1;
        size_t len = n - (size_t)(start - s);
        const unsigned char *colon = memchr(start, ':', len);
        if (colon)
            len = (size_t)(colon - start);
        copy_text(f->type, f->type_len, start, len);
    } else if (f->depth == 1 && f->next == WANT_MESSAGE && !f->have_message) {
        copy_text(f->message, f->message_len, s, n);
        f->have_message = true;
    }
    f->next = WANT_NONE;
    return 1;
}

static int on_scalar(void *ctx)
{
    ((fields *)ctx)->next = WANT_NONE;
    return 1;
}

static int on_bool(void *ctx, int b)
{
    (void)b;
    return on_scalar(ctx);
}

static int on_number(void *ctx, const char *s, size_t n)
{
    (void)s;
    (void)n;
    return on_scalar(ctx);
}

static const yajl_callbacks field_callbacks = {
    .yajl_null = on_scalar,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start,
    .yajl_end_array = on_end,
};

void el_ddb_error_fields(const char *body, size_t len, char *type, size_t type_len,
                         char *message, size_t message_len)
{
    if (type_len)
        type[0] = '\0';
    if (message_len)
        message[0] = '\0';
    if (!body || len == 0)
        return;
    fields f = {0, WANT_NONE, type, type_len, message, message_len, false};
    yajl_handle h = yajl_alloc(&field_callbacks, NULL, &f);
    if (!h)
        return;
    /* A body that is not JSON (a proxy's HTML page) leaves both empty or
     * holds what was read before the error; either is fine. */
    if (yajl_parse(h, (const unsigned char *)body, len) == yajl_status_ok)
        (void)yajl_complete_parse(h);
    yajl_free(h);
}

/* ---- classification ---- */

/* curl failures that a retry cannot fix: a bad URL or TLS that does not
 * verify. Everything else (refused, reset, timeout, partial body, DNS) is
 * transient, as the SDKs treat connection errors. */
static bool curl_fatal(CURLcode code)
{
    switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_FUNCTION_NOT_FOUND:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
        return true;
    default:
        return false;
    }
}

void el_ddb_classify(CURLcode curl_code, long http_status, const char *body, size_t len,
                     el_ddb_result *res)
{
    res->http_status = http_status;
    res->error_type[0] = '\0';
    res->message[0] = '\0';
    res->request_id[0] = '\0';
    res->reasons = 0;
    res->resource[0] = '\0';
    res->retry_after_ms = 0;
    res->sends = 0;

    if (curl_code != CURLE_OK) {
        res->outcome = curl_fatal(curl_code) ? EL_DDB_FATAL : EL_DDB_TRANSIENT;
        snprintf(res->message, sizeof res->message, "%s", curl_easy_strerror(curl_code));
        return;
    }
    if (http_status >= 200 && http_status < 300) {
        res->outcome = EL_DDB_SUCCESS;
        return;
    }
    el_ddb_error_fields(body, len, res->error_type, sizeof res->error_type, res->message,
                        sizeof res->message);
    bool known;
    el_ddb_outcome kind = el_ddb_code_kind(res->error_type, &known);
    if (known)
        res->outcome = kind;
    else if (http_status == 429)
        res->outcome = EL_DDB_THROTTLED;
    else if (http_status >= 500 && http_status < 600)
        res->outcome = EL_DDB_TRANSIENT;
    else if (http_status == 401 || http_status == 403)
        res->outcome = EL_DDB_FATAL;
    else if (http_status >= 400 && http_status < 500)
        res->outcome = EL_DDB_REJECTED;
    else if (http_status == 0)
        res->outcome = EL_DDB_TRANSIENT; /* curl finished without a status line */
    else
        res->outcome = EL_DDB_FATAL; /* 1xx/3xx: most likely not a DynamoDB endpoint */
    if (res->outcome == EL_DDB_THROTTLED)
        res->reasons = el_ddb_throttling_reasons(body, len, res->resource, sizeof res->resource);
    if (!res->message[0] && http_status == 0)
        snprintf(res->message, sizeof res->message, "no HTTP status line in the response");
    else if (!res->message[0] && (http_status < 200 || http_status >= 300) && http_status < 400)
        snprintf(res->message, sizeof res->message,
                 "unexpected HTTP status %ld (is the endpoint DynamoDB?)", http_status);
    if (!res->message[0])
        snprintf(res->message, sizeof res->message, "HTTP status %ld", http_status);
}

/* ---- explaining ---- */

el_ddb_problem el_ddb_problem_of(const el_ddb_result *res)
{
    const char *c = res->error_type, *m = res->message;
    if (strcmp(c, "ExpiredTokenException") == 0 || strcmp(c, "ExpiredToken") == 0)
        return EL_DDB_PROBLEM_EXPIRED_TOKEN;
    if (strcmp(c, "UnrecognizedClientException") == 0 || strcmp(c, "InvalidClientTokenId") == 0)
        return EL_DDB_PROBLEM_UNKNOWN_KEY;
    if (strcmp(c, "AccessDeniedException") == 0 || strcmp(c, "AccessDenied") == 0)
        return EL_DDB_PROBLEM_ACCESS_DENIED;
    if (strcmp(c, "RequestExpired") == 0)
        return EL_DDB_PROBLEM_CLOCK_SKEW;
    if (strcmp(c, "InvalidSignatureException") != 0 && strcmp(c, "SignatureDoesNotMatch") != 0 &&
        strcmp(c, "IncompleteSignatureException") != 0 && strcmp(c, "IncompleteSignature") != 0)
        return EL_DDB_PROBLEM_OTHER;
    if (strstr(m, "scoped to a valid region") || strstr(m, "scoped to a valid Region") ||
        (strstr(m, "scoped to correct") && strstr(m, "region")))
        return EL_DDB_PROBLEM_WRONG_REGION;
    if (strstr(m, "scoped to correct service"))
        return EL_DDB_PROBLEM_WRONG_SERVICE;
    if (strstr(m, "Signature expired") || strstr(m, "Signature not yet current"))
        return EL_DDB_PROBLEM_CLOCK_SKEW;
    return EL_DDB_PROBLEM_BAD_SECRET;
}

/* The region of an AWS DynamoDB endpoint ("https://dynamodb.eu-west-1.
 * amazonaws.com" -> "eu-west-1") into out; "" for any other endpoint. */
static void endpoint_region(const char *endpoint, char *out, size_t cap)
{
    out[0] = '\0';
    const char *p = endpoint ? strstr(endpoint, "://dynamodb.") : NULL;
    if (!p)
        return;
    p += strlen("://dynamodb.");
    const char *dot = strchr(p, '.');
    if (!dot || strncmp(dot, ".amazonaws.com", 14) != 0 || (size_t)(dot - p) >= cap)
        return;
    if (strncmp(p, "fips", 4) == 0)
        return;
    memcpy(out, p, (size_t)(dot - p));
    out[dot - p] = '\0';
}

/* "credentials from X" text: where the keys came from. */
static const char *cred_src(const el_aws_config *cfg)
{
    return cfg && cfg->cred_source ? cfg->cred_source : "the configuration";
}

static bool from_environment(const el_aws_config *cfg)
{
    return !cfg || !cfg->cred_source || strcmp(cfg->cred_source, "environment") == 0;
}

/* The last four characters of the access key id requests are signed with
 * (the provider's current one): enough to tell keys apart, never the whole
 * id; "" when unknown. *token: those credentials have a session token. */
static void key_tail(const el_aws_config *cfg, char tail[5], bool *token)
{
    tail[0] = '\0';
    *token = cfg && cfg->session_token;
    const char *ak = cfg ? cfg->access_key : NULL;
    el_cred *c = NULL;
    if (cfg && cfg->creds && el_creds_get(cfg->creds, time(NULL), &c, NULL) == EL_OK) {
        ak = el_cred_access_key(c);
        *token = el_cred_session_token(c) != NULL;
    }
    size_t n = ak ? strlen(ak) : 0;
    if (n >= 8)
        memcpy(tail, ak + n - 4, 5);
    el_cred_release(c);
}

void el_ddb_explain(const el_ddb_result *res, const el_aws_config *cfg, const char *op,
                    char *out, size_t cap)
{
    if (cap == 0)
        return;
    char said[700];
    snprintf(said, sizeof said, "%s%s%s", res->error_type, res->error_type[0] ? ": " : "",
             res->message);
    /* the service's messages end with ". " or "."; the parenthesis reads better without */
    size_t n = strlen(said);
    while (n > 0 && (said[n - 1] == ' ' || said[n - 1] == '.'))
        said[--n] = '\0';
    const char *region = cfg && cfg->region ? cfg->region : "?";
    const char *rsrc = cfg && cfg->region_source ? cfg->region_source : "the configuration";
    const char *endpoint = cfg && cfg->endpoint ? cfg->endpoint : "?";
    const char *profile = cfg && cfg->profile ? cfg->profile : "default";
    bool env = from_environment(cfg);
    switch (el_ddb_problem_of(res)) {
    case EL_DDB_PROBLEM_EXPIRED_TOKEN:
        if (env)
            snprintf(out, cap, "the AWS session token has expired (credentials from the "
                     "environment): get new credentials (aws sso login, or assume the role "
                     "again) and export the new AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and "
                     "AWS_SESSION_TOKEN (%s %s)", op, said);
        else
            snprintf(out, cap, "the AWS session token has expired (credentials from %s): get "
                     "new credentials (aws sso login --profile %s, or assume the role again) "
                     "and put the new keys and aws_session_token there, or export them as "
                     "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (%s %s)",
                     cred_src(cfg), profile, op, said);
        return;
    case EL_DDB_PROBLEM_UNKNOWN_KEY: {
        char tail[5];
        bool token;
        key_tail(cfg, tail, &token);
        snprintf(out, cap, "AWS does not recognise the access key id%s%s%s (credentials from "
                 "%s)%s: check %s, e.g. with aws sts get-caller-identity; keys made for "
                 "DynamoDB Local need --endpoint-url (%s %s)",
                 tail[0] ? " ending in '" : "", tail, tail[0] ? "'" : "", cred_src(cfg),
                 token ? ", or the session token is not the one issued with it" : "",
                 env ? "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" : "the keys there",
                 op, said);
        return;
    }
    case EL_DDB_PROBLEM_WRONG_REGION: {
        char er[64];
        endpoint_region(endpoint, er, sizeof er);
        if (er[0] && strcmp(er, region) != 0)
            snprintf(out, cap, "wrong region: requests are signed for %s (from %s) but the "
                     "endpoint %s is in %s: give --region %s, or an endpoint in %s (%s %s)",
                     region, rsrc, endpoint, er, er, region, op, said);
        else
            snprintf(out, cap, "wrong region: requests are signed for %s (from %s) and the "
                     "endpoint %s does not take that region: give the endpoint's region with "
                     "--region (%s %s)", region, rsrc, endpoint, op, said);
        return;
    }
    case EL_DDB_PROBLEM_WRONG_SERVICE:
        snprintf(out, cap, "the endpoint %s is not DynamoDB's: requests signed for dynamodb "
                 "are refused there; check --endpoint-url, AWS_ENDPOINT_URL_DYNAMODB and "
                 "AWS_ENDPOINT_URL (%s %s)", endpoint, op, said);
        return;
    case EL_DDB_PROBLEM_CLOCK_SKEW:
        snprintf(out, cap, "this machine's clock is off, and AWS refused the request even "
                 "signed by the time of AWS's own answers (or they gave none): it takes "
                 "requests signed within 5 minutes of its time; set the clock right (e.g. with "
                 "chrony or systemd-timesyncd) (%s %s)", op, said);
        return;
    case EL_DDB_PROBLEM_BAD_SECRET:
        snprintf(out, cap, "the signature does not match: the secret access key (credentials "
                 "from %s) is not the one of its access key id; check %s (%s %s)",
                 cred_src(cfg), env ? "AWS_SECRET_ACCESS_KEY" : "aws_secret_access_key there",
                 op, said);
        return;
    case EL_DDB_PROBLEM_ACCESS_DENIED:
        snprintf(out, cap, "access denied: the identity of the credentials from %s may not "
                 "call dynamodb:%s here; its IAM policy must allow it on the table and its "
                 "index (%s %s)", cred_src(cfg), op, op, said);
        return;
    case EL_DDB_PROBLEM_OTHER:
        break;
    }
    if (res->http_status == 0)
        snprintf(out, cap, "%s request to %s failed: %s", op, endpoint, said);
    else
        snprintf(out, cap, "DynamoDB refused %s (credentials from %s): %s", op, cred_src(cfg),
                 said);
}

void el_ddb_explain_missing_table(const char *table, const el_aws_config *cfg, char *out,
                                  size_t cap)
{
    const char *region = cfg && cfg->region ? cfg->region : "?";
    const char *endpoint = cfg && cfg->endpoint ? cfg->endpoint : "?";
    const char *rsrc = cfg ? cfg->region_source : NULL;
    if (cap == 0)
        return;
    if (rsrc && strcmp(rsrc, "--region") != 0)
        snprintf(out, cap, "table '%s' does not exist in %s at %s (region %s from %s: if the "
                 "table is in another region, give --region)", table, region, endpoint,
                 region, rsrc);
    else
        snprintf(out, cap, "table '%s' does not exist in %s at %s", table, region, endpoint);
}

el_err el_ddb_fail(el_diag *diag, const el_ddb_result *res, const el_aws_config *cfg,
                   const char *op)
{
    char line[sizeof diag->msg];
    el_ddb_explain(res, cfg, op, line, sizeof line);
    return el_diag_set(diag, res->http_status == 0 ? EL_ENET : EL_ECONFIG, "%s", line);
}
