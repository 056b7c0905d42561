/* nullddb (C): a fast null DynamoDB endpoint, with an optional per-key
 * throttling model.
 *
 * DESIGN
 *   The C twin of tests/tools/nullddb.py, for benchmarks where the Python
 *   server would be the bottleneck: same command line, same "nullddb
 *   listening on HOST:PORT" line, same answers, same GET /__stats keys (plus
 *   its own CPU time and the throttling counters), same --count-file and
 *   --stats-file written at SIGTERM/SIGINT. One thread, one epoll loop
 *   (level-triggered), non-blocking sockets, HTTP/1.1 keep-alive with
 *   pipelining: each connection reads into one growable buffer, every
 *   complete request in it is answered into one output buffer, and the
 *   output is sent with one send() per read. Signals arrive on a signalfd
 *   in the same loop, so shutdown is just leaving the loop.
 *
 *   BatchWriteItem has two paths. The fast one (no --parse, no --pk-wcu)
 *   counts writes with one scan of the body for '"PutRequest":' and
 *   '"DeleteRequest":' (compact JSON, as edgeload and the SDKs send it), and
 *   ConsumedCapacity as 1 WCU per write (per write carrying the index key
 *   for the index), like nullddb.py. The exact one (--parse, or always with
 *   --pk-wcu) parses the body with a small JSON scanner that keeps every
 *   write's raw bytes, computes each item's size by DynamoDB's rule (the same
 *   rule as faultproxy.item_size) and finds its partition key values.
 *
 *   Throttling (--pk-wcu W) is faultproxy.py's model, built in: one token
 *   bucket per base-table partition key value and one per index partition
 *   key value (per table), holding at most --pk-burst WCU (default 0.3 W),
 *   refilled at W WCU/s, charged when the request arrives, writes considered
 *   in request order; a put costs ceil(size/1024) WCU (at least 1) from both
 *   of its buckets, a delete 1; a write is accepted only if every bucket it
 *   touches holds its cost, otherwise it is returned in UnprocessedItems
 *   byte for byte as the client sent it. Once there are 200,000 buckets,
 *   full ones are dropped (a dropped bucket comes back full, so nothing
 *   changes). With --table-wcu T, one more bucket per table models the
 *   table's own limit, and with --index-wcu X one per table for the index
 *   (--index-name), charged by every put that carries the index key.
 *   --burst-s S sizes every bucket as S seconds of its own rate (default
 *   0.3 s, faultproxy's); --pk-burst, --table-burst and --index-burst give
 *   one of them in WCU instead.
 *
 *   If no write of a batch fits, the answer is 400
 *   ProvisionedThroughputExceededException with the service's
 *   ThrottlingReasons list: one {"reason","resource"} per distinct cause
 *   (Table/IndexWriteKeyRangeThroughputExceeded for a key's bucket,
 *   Table/IndexWriteProvisionedThroughputExceeded for the table's or the
 *   index's) and resource (the table's or the index's ARN) that refused a
 *   write of it. A batch partly accepted is a 200 with UnprocessedItems and
 *   no reasons, as the service answers.
 *
 *   Latency (--latency-ms L --jitter-ms J): every DynamoDB answer leaves
 *   L + uniform[0,J) ms after its request was read, so that a loader's
 *   window and pacing meet a round trip as the service's. The answers wait
 *   in one min-heap ordered by due time, and a timerfd armed at the
 *   earliest wakes the loop; nothing blocks. An answer never overtakes an
 *   earlier one of its connection (HTTP/1.1 order): its due time is at
 *   least its predecessor's. --service-model sets the whole service model
 *   of issue 17 for every one of these options not given: 8 + 0-4 ms,
 *   1,000 WCU/s per key, 20,000 WCU/s for the table and for the index, 1 s
 *   of burst.
 *
 *   The model keeps its own accounting of what it accepted (units per
 *   table key and per index key, the table's and the index's totals), so a
 *   benchmark can compute the floor the input sets (the hottest key's units
 *   over its rate, the totals over the table's and the index's) from the
 *   same rule the model throttles by.
 *
 *   Counters: "items" counts writes accepted (all of them without
 *   throttling, so the count file matches the Python endpoint's), and
 *   "items_received", "items_withheld" (with "withheld_*" by cause),
 *   "pk_throttle" (requests refused whole) say how hard the throttling
 *   pushed back. "cpu_s" is this process's user+sys CPU time (getrusage),
 *   so a benchmark can report the server's CPU per item.
 *
 *   Not a library module: no el_ names, prints and exits freely, a test tool
 *   built by tests/CMakeLists.txt next to the edgeload binary.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h> /* the answer delay queue's wake-up */
#include <time.h>
#include <unistd.h>
#include <zlib.h> /* crc32 for x-amz-crc32, which edgeload and botocore check */

#define MAX_BODY (64u * 1024 * 1024)
#define MAX_HEAD 65536
#define MAX_BUCKETS 200000

/* The throttle body up to where ThrottlingReasons is appended. */
static const char THROTTLE_HEAD[] =
    "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
    "ProvisionedThroughputExceededException\",\"message\":\"The "
    "level of configured provisioned throughput for the table "
    "was exceeded. Consider increasing your provisioning level "
    "with the UpdateTable API.\"";

/* The ARNs DescribeTable gives (default_desc), which ThrottlingReasons name. */
#define ARN_TABLE "arn:aws:dynamodb:ddblocal:000000000000:table/"

/* Buckets of the accounting table (units accepted per key): one per key
 * value seen, kept to the end. Past this many, new keys are not counted and
 * "acct_overflow" says so, rather than growing without bound. */
#define MAX_ACCT_KEYS 4000000

/* --service-model: issue 17's service */
#define SVC_LATENCY_MS 8.0
#define SVC_JITTER_MS 4.0
#define SVC_PK_WCU 1000.0
#define SVC_TABLE_WCU 20000.0
#define SVC_INDEX_WCU 20000.0
#define SVC_BURST_S 1.0
/* faultproxy's bucket size, the default without --service-model */
#define DEFAULT_BURST_S 0.3

/* ------------------------------------------------------------ small buffer */

struct sbuf {
    char *p;
    size_t len, cap;
};

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nullddb: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void sb_reserve(struct sbuf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        die("out of memory");
    b->p = p;
    b->cap = cap;
}

static void sb_add(struct sbuf *b, const void *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void sb_str(struct sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void sb_fmt(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    sb_reserve(b, 256);
    size_t room = b->cap - b->len;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        die("bad format");
    if ((size_t)n >= room) {
        sb_reserve(b, (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* JSON string contents of s (quotes not included). */
static void sb_jstr(struct sbuf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sb_add(b, e, 2);
        } else if (c < 0x20) {
            sb_fmt(b, "\\u%04x", c);
        } else {
            sb_add(b, s, 1);
        }
    }
}

/* ----------------------------------------------------------------- options */

/* Numbers left at -1 were not given; main() resolves them (--service-model
 * or the defaults) once the command line is read. */
static struct {
    const char *listen;
    const char *count_file, *stats_file;
    int parse, service_model;
    const char *index_name, *pk_attr, *sk_attr, *index_pk_attr, *index_sk_attr;
    double pk_wcu, pk_burst, table_wcu, table_burst, index_wcu, index_burst, burst_s;
    double latency_ms, jitter_ms;
    unsigned long long seed;
} opt = {"127.0.0.1:8002", NULL, NULL, 0, 0, "GSI1", "PK", "SK", "GSI1PK", "GSI1SK",
         -1, -1, -1, -1, -1, -1, -1, -1, -1, 1};

/* The model is on: BatchWriteItem goes through the exact path and buckets. */
static int model_on(void) { return opt.pk_wcu > 0 || opt.table_wcu > 0 || opt.index_wcu > 0; }

/* Why a write was refused: a bit per bucket that lacked its cost. */
enum { CAUSE_TABLE_KEY = 1, CAUSE_INDEX_KEY = 2, CAUSE_TABLE = 4, CAUSE_INDEX = 8 };

static struct {
    long long requests, items, batch_requests, other_requests;
    long long items_received, items_withheld, pk_throttle;
    /* writes refused, by cause (a write refused by two buckets counts in both) */
    long long withheld_table_key, withheld_index_key, withheld_table, withheld_index;
    long long connections;
    /* the model's accounting of what it accepted */
    unsigned long long units_table, units_index, max_key_units_table, max_key_units_index;
    char hot_table_key[256], hot_index_key[256]; /* raw JSON of the hottest values */
    int acct_overflow;
    long long answers_delayed;
} st;

static double started;

static double now_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* -------------------------------------------------------------- responses */

static const char REQ_ID[] = "NULLDDB0000000000000000000000000000000000000000000000";

static void respond(struct sbuf *out, int code, const char *body, size_t blen, int close)
{
    const char *reason = code == 200 ? "OK" : code == 400 ? "Bad Request" : code == 404 ? "Not Found" : "OK";
    unsigned long crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)body, (uInt)blen);
    sb_fmt(out,
           "HTTP/1.1 %d %s\r\nx-amzn-RequestId: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"
           "x-amz-crc32: %lu\r\nContent-Length: %zu\r\n%s\r\n",
           code, reason, REQ_ID, crc, blen, close ? "Connection: close\r\n" : "");
    sb_add(out, body, blen);
}

static void respond_sb(struct sbuf *out, int code, const struct sbuf *body, int close)
{
    respond(out, code, body->p ? body->p : "", body->len, close);
}

static void respond_err(struct sbuf *out, const char *type, const char *msg, int close)
{
    struct sbuf b = {0};
    sb_str(&b, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#");
    sb_str(&b, type);
    sb_str(&b, "\",\"message\":\"");
    sb_jstr(&b, msg);
    sb_str(&b, "\"}");
    respond_sb(out, 400, &b, close);
    free(b.p);
}

/* ---------------------------------------------------------- JSON scanning */

/* A cursor over a JSON text. Every scan function returns 0 on success and -1
 * on malformed input (and then the cursor is meaningless). */
struct jp {
    const char *p, *end;
};

static void jws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int jlit(struct jp *j, char c)
{
    jws(j);
    if (j->p >= j->end || *j->p != c)
        return -1;
    j->p++;
    return 0;
}

static int jpeek(struct jp *j)
{
    jws(j);
    return j->p < j->end ? (unsigned char)*j->p : -1;
}

/* After a member of an array or object: consumes ',' (returns 0: another
 * member follows) or the closing character (returns 1); -1 otherwise. */
static int jsep(struct jp *j, char close)
{
    int c = jpeek(j);
    j->p++;
    if (c == close)
        return 1;
    return c == ',' ? 0 : -1;
}

static int hexv(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A string at the cursor: *raw and *rawlen = its bytes between the quotes (still
 * escaped), *u8 = the length of its value in UTF-8. */
static int jstring(struct jp *j, const char **raw, size_t *rawlen, size_t *u8)
{
    jws(j);
    if (j->p >= j->end || *j->p != '"')
        return -1;
    const char *s = ++j->p;
    size_t n = 0;
    for (;;) {
        const char *q = j->p;
        while (q < j->end && *q != '"' && *q != '\\')
            q++;
        n += (size_t)(q - j->p);
        j->p = q;
        if (q >= j->end)
            return -1;
        if (*q == '"')
            break;
        /* escape */
        if (q + 1 >= j->end)
            return -1;
        char e = q[1];
        if (e == 'u') {
            if (q + 6 > j->end)
                return -1;
            unsigned cp = 0;
            for (int k = 2; k < 6; k++) {
                int h = hexv((unsigned char)q[k]);
                if (h < 0)
                    return -1;
                cp = cp * 16 + (unsigned)h;
            }
            j->p = q + 6;
            if (cp >= 0xD800 && cp < 0xDC00 && j->p + 6 <= j->end && j->p[0] == '\\' && j->p[1] == 'u') {
                j->p += 6; /* a surrogate pair: one 4-byte character */
                n += 4;
            } else {
                n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
            }
        } else {
            j->p = q + 2;
            n += 1;
        }
    }
    if (raw)
        *raw = s;
    if (rawlen)
        *rawlen = (size_t)(j->p - s);
    if (u8)
        *u8 = n;
    j->p++;
    return 0;
}

static int jskip(struct jp *j, int depth);

static int jskip_container(struct jp *j, char close, int obj, int depth)
{
    j->p++;
    if (jpeek(j) == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        if (obj && (jstring(j, NULL, NULL, NULL) || jlit(j, ':')))
            return -1;
        if (jskip(j, depth + 1))
            return -1;
        int sep = jsep(j, close);
        if (sep)
            return sep > 0 ? 0 : -1;
    }
}

/* Skips one value of any kind. */
static int jskip(struct jp *j, int depth)
{
    if (depth > 64)
        return -1;
    int c = jpeek(j);
    if (c == '"')
        return jstring(j, NULL, NULL, NULL);
    if (c == '{')
        return jskip_container(j, '}', 1, depth);
    if (c == '[')
        return jskip_container(j, ']', 0, depth);
    if (c < 0)
        return -1;
    const char *s = j->p;
    while (j->p < j->end && (isalnum((unsigned char)*j->p) || *j->p == '-' || *j->p == '+' || *j->p == '.'))
        j->p++;
    return j->p > s ? 0 : -1;
}

static int raw_eq(const char *raw, size_t n, const char *s)
{
    return n == strlen(s) && memcmp(raw, s, n) == 0;
}

/* DynamoDB's size of a number: ~1 byte per 2 significant digits, plus 1. */
static size_t num_size(const char *s, size_t n)
{
    size_t a = 0, b = n;
    while (a < b && isspace((unsigned char)s[a]))
        a++;
    while (b > a && isspace((unsigned char)s[b - 1]))
        b--;
    while (a < b && (s[a] == '+' || s[a] == '-'))
        a++;
    size_t e = a;
    while (e < b && s[e] != 'e' && s[e] != 'E')
        e++;
    /* digits of [a,e) without '.', zeros stripped at both ends */
    size_t first = e, last = a, digits = 0;
    for (size_t i = a; i < e; i++)
        if (s[i] != '.' && s[i] != '0') {
            if (first == e)
                first = i;
            last = i;
        }
    if (first == e)
        digits = 1;
    else
        for (size_t i = first; i <= last; i++)
            digits += s[i] != '.';
    return 1 + (digits + 1) / 2;
}

static size_t b64_size(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        k += isalnum(c) || c == '+' || c == '/';
    }
    return k * 3 / 4;
}

/* An AttributeValue's size (faultproxy.value_size). */
static int jvalue_size(struct jp *j, size_t *size, int depth)
{
    if (depth > 32)
        return -1;
    if (jpeek(j) != '{')
        return jskip(j, depth) ? -1 : (*size = 1, 0);
    j->p++;
    if (jpeek(j) == '}') {
        j->p++;
        *size = 1;
        return 0;
    }
    const char *t;
    size_t tl, sz = 0;
    if (jstring(j, &t, &tl, NULL) || jlit(j, ':'))
        return -1;
    const char *r;
    size_t rl, u8;
    if (raw_eq(t, tl, "S")) {
        if (jpeek(j) != '"')
            return -1;
        if (jstring(j, NULL, NULL, &sz))
            return -1;
    } else if (raw_eq(t, tl, "N") || raw_eq(t, tl, "B")) {
        if (jstring(j, &r, &rl, NULL))
            return -1;
        sz = t[0] == 'N' ? num_size(r, rl) : b64_size(r, rl);
    } else if (raw_eq(t, tl, "SS") || raw_eq(t, tl, "NS") || raw_eq(t, tl, "BS")) {
        if (jlit(j, '['))
            return -1;
        if (jpeek(j) == ']')
            j->p++;
        else
            for (;;) {
                if (jstring(j, &r, &rl, &u8))
                    return -1;
                sz += t[0] == 'S' ? u8 : t[0] == 'N' ? num_size(r, rl) : b64_size(r, rl);
                int sep = jsep(j, ']');
                if (sep < 0)
                    return -1;
                if (sep)
                    break;
            }
    } else if (raw_eq(t, tl, "L")) {
        if (jlit(j, '['))
            return -1;
        sz = 3;
        if (jpeek(j) == ']')
            j->p++;
        else
            for (;;) {
                size_t e;
                if (jvalue_size(j, &e, depth + 1))
                    return -1;
                sz += 1 + e;
                int sep = jsep(j, ']');
                if (sep < 0)
                    return -1;
                if (sep)
                    break;
            }
    } else if (raw_eq(t, tl, "M")) {
        if (jlit(j, '{'))
            return -1;
        sz = 3;
        if (jpeek(j) == '}')
            j->p++;
        else
            for (;;) {
                size_t e;
                if (jstring(j, NULL, NULL, &u8) || jlit(j, ':') || jvalue_size(j, &e, depth + 1))
                    return -1;
                sz += 1 + u8 + e;
                int sep = jsep(j, '}');
                if (sep < 0)
                    return -1;
                if (sep)
                    break;
            }
    } else { /* BOOL, NULL, anything else */
        if (jskip(j, depth + 1))
            return -1;
        sz = 1;
    }
    /* further members of the value object are ignored, as the proxy does */
    for (;;) {
        int c = jpeek(j);
        j->p++;
        if (c == '}')
            break;
        if (c != ',' || jstring(j, NULL, NULL, NULL) || jlit(j, ':') || jskip(j, depth + 1))
            return -1;
    }
    *size = sz;
    return 0;
}

/* ------------------------------------------------------ BatchWriteItem parse */

struct write {
    const char *raw; /* the write object {"PutRequest":...} as sent */
    size_t rawlen;
    unsigned table;  /* index into tables[] */
    int put;         /* 1 put, 0 delete */
    unsigned cost;   /* WCU */
    const char *pk, *ik; /* raw values of the partition keys, or NULL */
    size_t pklen, iklen;
    int held;
    unsigned why; /* CAUSE_* bits of the buckets that refused it */
};

struct tname {
    const char *raw;
    size_t len;
};

static struct write *writes;
static size_t nwrites, capwrites;
static struct tname *tables;
static size_t ntables, captables;

/* An item (or key) object: size and partition key values. */
static int jitem(struct jp *j, struct write *w)
{
    if (jlit(j, '{'))
        return -1;
    size_t total = 0;
    if (jpeek(j) == '}') {
        j->p++;
    } else
        for (;;) {
            const char *name;
            size_t nl, u8, vs;
            if (jstring(j, &name, &nl, &u8) || jlit(j, ':'))
                return -1;
            jws(j);
            const char *vstart = j->p;
            if (jvalue_size(j, &vs, 0))
                return -1;
            total += u8 + vs;
            if (opt.pk_attr && raw_eq(name, nl, opt.pk_attr)) {
                w->pk = vstart;
                w->pklen = (size_t)(j->p - vstart);
            } else if (opt.index_pk_attr && raw_eq(name, nl, opt.index_pk_attr)) {
                w->ik = vstart;
                w->iklen = (size_t)(j->p - vstart);
            }
            int sep = jsep(j, '}');
            if (sep < 0)
                return -1;
            if (sep)
                break;
        }
    size_t wcu = (total + 1023) / 1024;
    w->cost = wcu < 1 ? 1 : (unsigned)wcu;
    return 0;
}

/* One write: {"PutRequest":{"Item":{...}}} or {"DeleteRequest":{"Key":{...}}}. */
static int jwrite(struct jp *j, struct write *w)
{
    jws(j);
    w->raw = j->p;
    if (jlit(j, '{'))
        return -1;
    int seen = 0;
    if (jpeek(j) != '}')
        for (;;) {
            const char *k;
            size_t kl;
            if (jstring(j, &k, &kl, NULL) || jlit(j, ':'))
                return -1;
            int put = raw_eq(k, kl, "PutRequest"), del = raw_eq(k, kl, "DeleteRequest");
            if (put || del) {
                if (jlit(j, '{'))
                    return -1;
                if (jpeek(j) != '}')
                    for (;;) {
                        const char *k2;
                        size_t kl2;
                        if (jstring(j, &k2, &kl2, NULL) || jlit(j, ':'))
                            return -1;
                        if ((put && raw_eq(k2, kl2, "Item")) || (del && raw_eq(k2, kl2, "Key"))) {
                            if (jitem(j, w))
                                return -1;
                            seen = 1;
                        } else if (jskip(j, 2)) {
                            return -1;
                        }
                        int sep = jsep(j, '}');
                        if (sep < 0)
                            return -1;
                        if (sep)
                            break;
                    }
                else
                    j->p++;
                w->put = put;
                if (del)
                    w->cost = 1;
            } else if (jskip(j, 1)) {
                return -1;
            }
            int sep = jsep(j, '}');
            if (sep < 0)
                return -1;
            if (sep)
                break;
        }
    else
        j->p++;
    w->rawlen = (size_t)(j->p - w->raw);
    return seen ? 0 : -1;
}

/* Parses a whole BatchWriteItem body into writes[]/tables[]; *mode gets the
 * ReturnConsumedCapacity value (raw, or NULL). */
static int parse_batch(const char *body, size_t len, const char **mode, size_t *modelen)
{
    struct jp j = {body, body + len};
    nwrites = ntables = 0;
    *mode = NULL;
    *modelen = 0;
    int have_items = 0;
    if (jlit(&j, '{'))
        return -1;
    if (jpeek(&j) == '}')
        return -1;
    for (;;) {
        const char *k;
        size_t kl;
        if (jstring(&j, &k, &kl, NULL) || jlit(&j, ':'))
            return -1;
        if (raw_eq(k, kl, "RequestItems")) {
            have_items = 1;
            if (jlit(&j, '{'))
                return -1;
            if (jpeek(&j) == '}')
                j.p++;
            else
                for (;;) {
                    if (ntables == captables) {
                        captables = captables ? captables * 2 : 8;
                        tables = realloc(tables, captables * sizeof *tables);
                        if (!tables)
                            die("out of memory");
                    }
                    struct tname *t = &tables[ntables];
                    if (jstring(&j, &t->raw, &t->len, NULL) || jlit(&j, ':') || jlit(&j, '['))
                        return -1;
                    ntables++;
                    if (jpeek(&j) == ']')
                        j.p++;
                    else
                        for (;;) {
                            if (nwrites == capwrites) {
                                capwrites = capwrites ? capwrites * 2 : 64;
                                writes = realloc(writes, capwrites * sizeof *writes);
                                if (!writes)
                                    die("out of memory");
                            }
                            struct write *w = &writes[nwrites];
                            memset(w, 0, sizeof *w);
                            w->table = (unsigned)(ntables - 1);
                            if (jwrite(&j, w))
                                return -1;
                            nwrites++;
                            int c = jpeek(&j);
                            j.p++;
                            if (c == ']')
                                break;
                            if (c != ',')
                                return -1;
                        }
                    int c = jpeek(&j);
                    j.p++;
                    if (c == '}')
                        break;
                    if (c != ',')
                        return -1;
                }
        } else if (raw_eq(k, kl, "ReturnConsumedCapacity")) {
            if (jstring(&j, mode, modelen, NULL))
                return -1;
        } else if (jskip(&j, 1)) {
            return -1;
        }
        int c = jpeek(&j);
        j.p++;
        if (c == '}')
            break;
        if (c != ',')
            return -1;
    }
    return have_items ? 0 : -1;
}

/* ------------------------------------------------------------ token buckets */

/* An open-addressing hash of named counters: the token buckets (tokens,
 * refilled at its rate up to its burst) and the accounting of accepted
 * units per key (units). A key is (table, kind, value) as raw bytes. */
struct bucket {
    uint64_t h;
    char *key; /* NULL: empty slot */
    size_t klen;
    double tokens, last, rate, burst;
    unsigned long long units;
};

struct htab {
    struct bucket *slot;
    size_t cap, n; /* cap a power of two, n <= 3/4 cap */
};

static struct htab bk;   /* the token buckets */
static struct htab units_by_key; /* units accepted per key, kept to the end */

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}

static void ht_insert_slot(struct bucket *tab, size_t cap, struct bucket *b)
{
    size_t i = (size_t)b->h & (cap - 1);
    while (tab[i].key)
        i = (i + 1) & (cap - 1);
    tab[i] = *b;
}

/* Rehashes into cap slots; with drop_full, buckets that would be full by
 * now are freed (one made again comes back full: the same state). */
static void ht_rehash(struct htab *t, size_t cap, int drop_full, double now)
{
    struct bucket *tab = calloc(cap, sizeof *tab);
    if (!tab)
        die("out of memory");
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++) {
        struct bucket *b = &t->slot[i];
        if (!b->key)
            continue;
        if (drop_full && b->tokens + (now - b->last) * b->rate >= b->burst) {
            free(b->key);
            continue;
        }
        ht_insert_slot(tab, cap, b);
        n++;
    }
    free(t->slot);
    t->slot = tab;
    t->cap = cap;
    t->n = n;
}

/* Room for `more` insertions without a rehash (so that pointers returned
 * by ht_get stay valid across them). */
static void ht_room(struct htab *t, size_t more, double now)
{
    if (t->cap == 0 || (t->n + more) * 4 > t->cap * 3)
        ht_rehash(t, t->cap ? t->cap * 2 : 1024, 0, now);
}

/* The entry of (table, kind, value); a new one is a full bucket of the
 * given rate and burst. NULL when create is 0 and there is none. */
static struct bucket *ht_get(struct htab *ht, const struct tname *t, char kind, const char *v, size_t vl,
                             double now, double rate, double burst, int create)
{
    size_t klen = t->len + 2 + vl;
    uint64_t h = fnv(t->raw, t->len, 0xcbf29ce484222325ULL);
    h = fnv(&kind, 1, h);
    h = fnv(v, vl, h);
    size_t i = (size_t)h & (ht->cap - 1);
    while (ht->slot[i].key) {
        struct bucket *b = &ht->slot[i];
        if (b->h == h && b->klen == klen && memcmp(b->key, t->raw, t->len) == 0 && b->key[t->len] == kind &&
            memcmp(b->key + t->len + 2, v, vl) == 0)
            return b;
        i = (i + 1) & (ht->cap - 1);
    }
    if (!create)
        return NULL;
    struct bucket *b = &ht->slot[i];
    b->key = malloc(klen);
    if (!b->key)
        die("out of memory");
    memcpy(b->key, t->raw, t->len);
    b->key[t->len] = kind;
    b->key[t->len + 1] = 0;
    memcpy(b->key + t->len + 2, v, vl);
    b->klen = klen;
    b->h = h;
    b->tokens = burst;
    b->last = now;
    b->rate = rate;
    b->burst = burst;
    b->units = 0;
    ht->n++;
    return b;
}

static void bk_refill(struct bucket *b, double now)
{
    b->tokens += (now - b->last) * b->rate;
    if (b->tokens > b->burst)
        b->tokens = b->burst;
    b->last = now;
}

/* Adds an accepted write's units to its key's account and keeps the
 * hottest key of its kind. */
static void acct_add(const struct tname *t, char kind, const char *v, size_t vl, unsigned units, double now)
{
    if (!v)
        return;
    ht_room(&units_by_key, 1, now);
    struct bucket *a = ht_get(&units_by_key, t, kind, v, vl, now, 0, 0, units_by_key.n < MAX_ACCT_KEYS);
    if (!a) {
        st.acct_overflow = 1;
        return;
    }
    a->units += units;
    unsigned long long *max = kind == 'P' ? &st.max_key_units_table : &st.max_key_units_index;
    char *name = kind == 'P' ? st.hot_table_key : st.hot_index_key;
    if (a->units > *max) {
        *max = a->units;
        size_t n = vl < sizeof st.hot_table_key - 1 ? vl : sizeof st.hot_table_key - 1;
        memcpy(name, v, n);
        name[n] = 0;
    }
}

/* Decides which writes are accepted (faultproxy's TokenBuckets.try_take per
 * write, in request order), records why the others were refused, and
 * accounts for the accepted ones. */
static void throttle_writes(void)
{
    double now = now_mono();
    static const struct tname table_level = {"", 0};
    for (size_t i = 0; i < nwrites; i++) {
        struct write *w = &writes[i];
        const struct tname *t = &tables[w->table];
        struct bucket *b[4];
        unsigned cause[4];
        int n = 0;
        ht_room(&bk, 4, now);
        if (opt.pk_wcu > 0 && w->pk) {
            b[n] = ht_get(&bk, t, 'P', w->pk, w->pklen, now, opt.pk_wcu, opt.pk_burst, 1);
            cause[n++] = CAUSE_TABLE_KEY;
        }
        if (opt.pk_wcu > 0 && w->ik) {
            b[n] = ht_get(&bk, t, 'I', w->ik, w->iklen, now, opt.pk_wcu, opt.pk_burst, 1);
            cause[n++] = CAUSE_INDEX_KEY;
        }
        if (opt.table_wcu > 0) {
            /* the table's own bucket: keyed by the table name as the value */
            b[n] = ht_get(&bk, &table_level, 'T', t->raw, t->len, now, opt.table_wcu, opt.table_burst, 1);
            cause[n++] = CAUSE_TABLE;
        }
        if (opt.index_wcu > 0 && w->put && w->ik) {
            b[n] = ht_get(&bk, &table_level, 'X', t->raw, t->len, now, opt.index_wcu, opt.index_burst, 1);
            cause[n++] = CAUSE_INDEX;
        }
        w->why = 0;
        for (int k = 0; k < n; k++) {
            bk_refill(b[k], now);
            if (b[k]->tokens < (double)w->cost)
                w->why |= cause[k];
        }
        w->held = w->why != 0;
        if (w->held) {
            st.withheld_table_key += (w->why & CAUSE_TABLE_KEY) != 0;
            st.withheld_index_key += (w->why & CAUSE_INDEX_KEY) != 0;
            st.withheld_table += (w->why & CAUSE_TABLE) != 0;
            st.withheld_index += (w->why & CAUSE_INDEX) != 0;
            continue;
        }
        for (int k = 0; k < n; k++)
            b[k]->tokens -= (double)w->cost;
        unsigned tu = w->put ? w->cost : 1;
        st.units_table += tu;
        acct_add(t, 'P', w->pk, w->pklen, tu, now);
        if (w->put && w->ik) {
            st.units_index += w->cost;
            acct_add(t, 'I', w->ik, w->iklen, w->cost, now);
        }
    }
    if (bk.n >= MAX_BUCKETS)
        ht_rehash(&bk, bk.cap, 1, now);
}

/* The 400 answer of a batch of which nothing fitted: one ThrottlingReasons
 * entry per (cause, table) that refused one of its writes. */
static void throttle_body(struct sbuf *b)
{
    static const struct {
        unsigned cause;
        const char *reason;
        int index;
    } kinds[] = {
        {CAUSE_TABLE_KEY, "TableWriteKeyRangeThroughputExceeded", 0},
        {CAUSE_INDEX_KEY, "IndexWriteKeyRangeThroughputExceeded", 1},
        {CAUSE_TABLE, "TableWriteProvisionedThroughputExceeded", 0},
        {CAUSE_INDEX, "IndexWriteProvisionedThroughputExceeded", 1},
    };
    b->len = 0;
    sb_str(b, THROTTLE_HEAD);
    sb_str(b, ",\"ThrottlingReasons\":[");
    int first = 1;
    for (size_t t = 0; t < ntables; t++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            int seen = 0;
            for (size_t i = 0; i < nwrites && !seen; i++)
                seen = writes[i].table == t && (writes[i].why & kinds[k].cause);
            if (!seen)
                continue;
            sb_str(b, first ? "{\"reason\":\"" : ",{\"reason\":\"");
            first = 0;
            sb_str(b, kinds[k].reason);
            sb_str(b, "\",\"resource\":\"" ARN_TABLE);
            sb_add(b, tables[t].raw, tables[t].len);
            if (kinds[k].index) {
                sb_str(b, "/index/");
                sb_jstr(b, opt.index_name ? opt.index_name : "");
            }
            sb_str(b, "\"}");
        }
    sb_str(b, "]}");
}

/* -------------------------------------------------------------- operations */

static void capacity_json(struct sbuf *b, const char *mode, size_t modelen, int accepted_only)
{
    int indexes = raw_eq(mode, modelen, "INDEXES");
    sb_str(b, ",\"ConsumedCapacity\":[");
    for (size_t t = 0; t < ntables; t++) {
        unsigned long long tw = 0, iw = 0;
        for (size_t i = 0; i < nwrites; i++) {
            const struct write *w = &writes[i];
            if (w->table != t || (accepted_only && w->held))
                continue;
            tw += w->put ? w->cost : 1;
            if (w->put && w->ik)
                iw += w->cost;
        }
        sb_str(b, t ? ",{\"TableName\":\"" : "{\"TableName\":\"");
        sb_add(b, tables[t].raw, tables[t].len);
        sb_fmt(b, "\",\"CapacityUnits\":%llu.0", tw + iw);
        if (indexes) {
            sb_fmt(b, ",\"Table\":{\"CapacityUnits\":%llu.0}", tw);
            if (iw && opt.index_name) {
                sb_str(b, ",\"GlobalSecondaryIndexes\":{\"");
                sb_jstr(b, opt.index_name);
                sb_fmt(b, "\":{\"CapacityUnits\":%llu.0}}", iw);
            }
        }
        sb_str(b, "}");
    }
    sb_str(b, "]");
}

static int want_capacity(const char *mode, size_t modelen)
{
    return mode && (raw_eq(mode, modelen, "TOTAL") || raw_eq(mode, modelen, "INDEXES"));
}

static struct sbuf scratch;

static void batch_exact(struct sbuf *out, const char *body, size_t len, int close)
{
    const char *mode;
    size_t modelen;
    if (parse_batch(body, len, &mode, &modelen)) {
        respond_err(out, "SerializationException", "nullddb: unparsable BatchWriteItem body", close);
        return;
    }
    st.items_received += (long long)nwrites;
    size_t held = 0;
    if (model_on()) {
        throttle_writes();
        for (size_t i = 0; i < nwrites; i++)
            held += (size_t)writes[i].held;
    }
    st.items_withheld += (long long)held;
    st.items += (long long)(nwrites - held);
    struct sbuf *b = &scratch;
    if (held && held == nwrites) {
        st.pk_throttle++;
        throttle_body(b);
        respond_sb(out, 400, b, close);
        return;
    }
    b->len = 0;
    sb_str(b, "{\"UnprocessedItems\":{");
    if (held) {
        int first_t = 1;
        for (size_t t = 0; t < ntables; t++) {
            int first_w = 1;
            for (size_t i = 0; i < nwrites; i++) {
                const struct write *w = &writes[i];
                if (w->table != t || !w->held)
                    continue;
                if (first_w) {
                    sb_str(b, first_t ? "\"" : ",\"");
                    sb_add(b, tables[t].raw, tables[t].len);
                    sb_str(b, "\":[");
                    first_t = 0;
                } else {
                    sb_str(b, ",");
                }
                first_w = 0;
                sb_add(b, w->raw, w->rawlen);
            }
            if (!first_w)
                sb_str(b, "]");
        }
    }
    sb_str(b, "}");
    if (want_capacity(mode, modelen))
        capacity_json(b, mode, modelen, 1);
    sb_str(b, "}");
    respond_sb(out, 200, b, close);
}

static const char *memfind(const char *h, size_t hl, const char *n, size_t nl)
{
    return memmem(h, hl, n, nl);
}

/* The fast path: counts writes (and index keys) by a byte scan. */
static void batch_fast(struct sbuf *out, const char *body, size_t len, int close)
{
    static char ipk[256];
    static size_t ipklen;
    if (!ipklen && opt.index_pk_attr) {
        int n = snprintf(ipk, sizeof ipk, "%s\":", opt.index_pk_attr);
        ipklen = n > 0 && (size_t)n < sizeof ipk ? (size_t)n : 0;
    }
    size_t n = 0, idx = 0;
    const char *p = body, *end = body + len;
    while ((p = memchr(p, '"', (size_t)(end - p))) != NULL) {
        p++;
        size_t left = (size_t)(end - p);
        if (left >= 12 && p[0] == 'P' && memcmp(p, "PutRequest\":", 12) == 0) {
            n++;
            p += 12;
        } else if (left >= 15 && p[0] == 'D' && memcmp(p, "DeleteRequest\":", 15) == 0) {
            n++;
            p += 15;
        } else if (ipklen && left >= ipklen && memcmp(p, ipk, ipklen) == 0) {
            idx++;
            p += ipklen;
        } else {
            /* skip to the closing quote of this string (or key) */
            const char *q = p;
            for (;;) {
                q = memchr(q, '"', (size_t)(end - q));
                if (!q)
                    break;
                size_t bs = 0;
                while (q - bs > p && q[-1 - (ptrdiff_t)bs] == '\\')
                    bs++;
                if (bs % 2 == 0)
                    break;
                q++;
            }
            if (!q)
                break;
            p = q + 1;
        }
    }
    st.items += (long long)n;
    st.items_received += (long long)n;
    static const char OK[] = "{\"UnprocessedItems\":{}}";
    const char *rc = memfind(body, len, "\"ReturnConsumedCapacity\"", 24);
    const char *mode = NULL;
    size_t modelen = 0;
    if (rc) {
        struct jp j = {rc + 24, end};
        if (jlit(&j, ':') || jstring(&j, &mode, &modelen, NULL))
            mode = NULL;
    }
    if (!want_capacity(mode, modelen)) {
        static struct sbuf okresp;
        if (!okresp.len)
            respond(&okresp, 200, OK, sizeof OK - 1, 0);
        if (close)
            respond(out, 200, OK, sizeof OK - 1, 1);
        else
            sb_add(out, okresp.p, okresp.len);
        return;
    }
    /* one table (one ']' in the whole body) or parse it */
    const char *b1 = memchr(body, ']', len);
    if (!b1 || memchr(b1 + 1, ']', (size_t)(end - b1 - 1))) {
        long long items = st.items, rec = st.items_received;
        batch_exact(out, body, len, close);
        st.items = items, st.items_received = rec; /* counted above */
        return;
    }
    const char *ri = memfind(body, len, "\"RequestItems\"", 14);
    struct jp j = {ri ? ri + 14 : end, end};
    const char *tn = "?";
    size_t tl = 1;
    if (!ri || jlit(&j, ':') || jlit(&j, '{') || jstring(&j, &tn, &tl, NULL)) {
        tn = "?";
        tl = 1;
    }
    struct sbuf *b = &scratch;
    b->len = 0;
    sb_str(b, "{\"UnprocessedItems\":{},\"ConsumedCapacity\":[{\"TableName\":\"");
    sb_add(b, tn, tl);
    sb_fmt(b, "\",\"CapacityUnits\":%zu.0", n + idx);
    if (raw_eq(mode, modelen, "INDEXES")) {
        sb_fmt(b, ",\"Table\":{\"CapacityUnits\":%zu.0}", n);
        if (idx && opt.index_name) {
            sb_str(b, ",\"GlobalSecondaryIndexes\":{\"");
            sb_jstr(b, opt.index_name);
            sb_fmt(b, "\":{\"CapacityUnits\":%zu.0}}", idx);
        }
    }
    sb_str(b, "}]}");
    respond_sb(out, 200, b, close);
}

/* ---------------------------------------------------------------- tables */

struct table {
    char *name; /* raw (JSON-escaped) */
    char *desc; /* the TableDescription object */
};
static struct table *tabs;
static size_t ntabs;

static void default_desc(struct sbuf *b, const char *name, size_t nl, const char *ks, size_t ksl, const char *ad,
                         size_t adl, const char *gsi, size_t gsil)
{
    double now = now_real();
    sb_str(b, "{\"TableName\":\"");
    sb_add(b, name, nl);
    sb_str(b, "\",\"TableStatus\":\"ACTIVE\",\"TableArn\":\"arn:aws:dynamodb:ddblocal:000000000000:table/");
    sb_add(b, name, nl);
    sb_fmt(b, "\",\"TableId\":\"00000000-0000-0000-0000-000000000000\",\"CreationDateTime\":%.3f,"
              "\"ItemCount\":0,\"TableSizeBytes\":0,\"KeySchema\":",
           now);
    if (ks) {
        sb_add(b, ks, ksl);
    } else {
        sb_str(b, "[{\"AttributeName\":\"");
        sb_jstr(b, opt.pk_attr);
        sb_str(b, "\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"");
        sb_jstr(b, opt.sk_attr);
        sb_str(b, "\",\"KeyType\":\"RANGE\"}]");
    }
    sb_str(b, ",\"AttributeDefinitions\":");
    if (ad) {
        sb_add(b, ad, adl);
    } else {
        const char *attrs[4] = {opt.pk_attr, opt.sk_attr, opt.index_pk_attr, opt.index_sk_attr};
        sb_str(b, "[");
        int first = 1;
        for (int i = 0; i < 4; i++) {
            if (!attrs[i] || !*attrs[i])
                continue;
            sb_str(b, first ? "{\"AttributeName\":\"" : ",{\"AttributeName\":\"");
            sb_jstr(b, attrs[i]);
            sb_str(b, "\",\"AttributeType\":\"S\"}");
            first = 0;
        }
        sb_str(b, "]");
    }
    sb_fmt(b, ",\"BillingModeSummary\":{\"BillingMode\":\"PAY_PER_REQUEST\",\"LastUpdateToPayPerRequestDateTime\":%.3f},"
              "\"ProvisionedThroughput\":{\"NumberOfDecreasesToday\":0,\"ReadCapacityUnits\":0,\"WriteCapacityUnits\":0}",
           now);
    if (gsi) {
        sb_str(b, ",\"GlobalSecondaryIndexes\":");
        sb_add(b, gsi, gsil);
    } else if (opt.index_name && *opt.index_name) {
        sb_str(b, ",\"GlobalSecondaryIndexes\":[{\"IndexName\":\"");
        sb_jstr(b, opt.index_name);
        sb_str(b, "\",\"KeySchema\":[{\"AttributeName\":\"");
        sb_jstr(b, opt.index_pk_attr ? opt.index_pk_attr : "");
        sb_str(b, "\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"");
        sb_jstr(b, opt.index_sk_attr ? opt.index_sk_attr : "");
        sb_str(b, "\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"},\"IndexStatus\":\"ACTIVE\","
                  "\"ProvisionedThroughput\":{\"ReadCapacityUnits\":0,\"WriteCapacityUnits\":0},"
                  "\"IndexSizeBytes\":0,\"ItemCount\":0,\"IndexArn\":\"arn:aws:dynamodb:ddblocal:000000000000:table/");
        sb_add(b, name, nl);
        sb_str(b, "/index/");
        sb_jstr(b, opt.index_name);
        sb_str(b, "\"}]");
    }
    sb_str(b, "}");
}

static struct table *find_table(const char *name, size_t nl)
{
    for (size_t i = 0; i < ntabs; i++)
        if (raw_eq(name, nl, tabs[i].name))
            return &tabs[i];
    return NULL;
}

/* The value of a top-level member of a JSON object body (raw span). */
static int top_member(const char *body, size_t len, const char *key, const char **v, size_t *vl)
{
    struct jp j = {body, body + len};
    if (jlit(&j, '{'))
        return -1;
    if (jpeek(&j) == '}')
        return -1;
    for (;;) {
        const char *k;
        size_t kl;
        if (jstring(&j, &k, &kl, NULL) || jlit(&j, ':'))
            return -1;
        jws(&j);
        const char *s = j.p;
        if (jskip(&j, 1))
            return -1;
        if (raw_eq(k, kl, key)) {
            *v = s;
            *vl = (size_t)(j.p - s);
            return 0;
        }
        int c = jpeek(&j);
        j.p++;
        if (c != ',')
            return -1;
    }
}

static int table_name(const char *body, size_t len, const char **name, size_t *nl)
{
    const char *v;
    size_t vl;
    if (top_member(body, len, "TableName", &v, &vl) || vl < 2 || v[0] != '"')
        return -1;
    *name = v + 1;
    *nl = vl - 2;
    return 0;
}

static void op_describe(struct sbuf *out, const char *body, size_t len, int close)
{
    const char *name;
    size_t nl;
    if (table_name(body, len, &name, &nl)) {
        respond_err(out, "ValidationException", "nullddb: DescribeTable needs TableName", close);
        return;
    }
    struct sbuf b = {0};
    sb_str(&b, "{\"Table\":");
    struct table *t = find_table(name, nl);
    if (t)
        sb_str(&b, t->desc);
    else
        default_desc(&b, name, nl, NULL, 0, NULL, 0, NULL, 0);
    sb_str(&b, "}");
    respond_sb(out, 200, &b, close);
    free(b.p);
}

static void op_create(struct sbuf *out, const char *body, size_t len, int close)
{
    const char *name, *ks = NULL, *ad = NULL, *gsi = NULL;
    size_t nl, ksl = 0, adl = 0, gsil = 0;
    if (table_name(body, len, &name, &nl)) {
        respond_err(out, "ValidationException", "nullddb: CreateTable needs TableName", close);
        return;
    }
    if (top_member(body, len, "KeySchema", &ks, &ksl))
        ks = NULL;
    if (top_member(body, len, "AttributeDefinitions", &ad, &adl))
        ad = NULL;
    struct sbuf g = {0};
    if (top_member(body, len, "GlobalSecondaryIndexes", &gsi, &gsil) == 0) {
        /* each index object with "IndexStatus":"ACTIVE" added */
        struct jp j = {gsi, gsi + gsil};
        if (jlit(&j, '[') == 0) {
            sb_str(&g, "[");
            int first = 1;
            while (jpeek(&j) == '{') {
                const char *s = j.p;
                if (jskip(&j, 1))
                    break;
                sb_str(&g, first ? "{\"IndexStatus\":\"ACTIVE\"" : ",{\"IndexStatus\":\"ACTIVE\"");
                struct jp in = {s + 1, j.p};
                if (jpeek(&in) != '}')
                    sb_str(&g, ",");
                sb_add(&g, s + 1, (size_t)(j.p - s - 1));
                first = 0;
                if (jpeek(&j) == ',')
                    j.p++;
            }
            sb_str(&g, "]");
            gsi = g.p;
            gsil = g.len;
        } else {
            gsi = NULL;
        }
    } else {
        gsi = NULL;
    }
    struct sbuf d = {0};
    default_desc(&d, name, nl, ks, ksl, ad, adl, gsi, gsil);
    sb_add(&d, "", 1);
    struct table *t = find_table(name, nl);
    if (!t) {
        struct table *nt = realloc(tabs, (ntabs + 1) * sizeof *tabs);
        if (!nt)
            die("out of memory");
        tabs = nt;
        t = &tabs[ntabs++];
        t->name = strndup(name, nl);
        if (!t->name)
            die("out of memory");
    } else {
        free(t->desc);
    }
    t->desc = d.p;
    struct sbuf b = {0};
    sb_str(&b, "{\"TableDescription\":");
    sb_str(&b, t->desc);
    sb_str(&b, "}");
    respond_sb(out, 200, &b, close);
    free(b.p);
    free(g.p);
}

static int cmp_tab(const void *a, const void *b)
{
    return strcmp(((const struct table *)a)->name, ((const struct table *)b)->name);
}

static void op_list(struct sbuf *out, int close)
{
    qsort(tabs, ntabs, sizeof *tabs, cmp_tab);
    struct sbuf b = {0};
    sb_str(&b, "{\"TableNames\":[");
    for (size_t i = 0; i < ntabs; i++) {
        sb_str(&b, i ? ",\"" : "\"");
        sb_str(&b, tabs[i].name);
        sb_str(&b, "\"");
    }
    sb_str(&b, "]}");
    respond_sb(out, 200, &b, close);
    free(b.p);
}

static void stats_json(struct sbuf *b)
{
    sb_fmt(b,
           "{\"batch_requests\": %lld, \"connections\": %lld, \"cpu_s\": %.6f, \"impl\": \"c\", "
           "\"items\": %lld, \"items_received\": %lld, \"items_withheld\": %lld, \"other_requests\": %lld, "
           "\"pk_burst\": %g, \"pk_throttle\": %lld, \"pk_wcu\": %g, \"requests\": %lld, \"table_wcu\": %g, "
           "\"uptime_s\": %.3f, \"workers\": 1, ",
           st.batch_requests, st.connections, cpu_seconds(), st.items, st.items_received, st.items_withheld,
           st.other_requests, opt.pk_burst, st.pk_throttle, opt.pk_wcu, st.requests, opt.table_wcu,
           now_mono() - started);
    sb_fmt(b,
           "\"table_burst\": %g, \"index_wcu\": %g, \"index_burst\": %g, \"latency_ms\": %g, "
           "\"jitter_ms\": %g, \"service_model\": %s, \"requests_throttled\": %lld, "
           "\"withheld_table_key\": %lld, \"withheld_index_key\": %lld, \"withheld_table\": %lld, "
           "\"withheld_index\": %lld, \"answers_delayed\": %lld, \"units_table\": %llu, "
           "\"units_index\": %llu, \"max_key_units_table\": %llu, \"max_key_units_index\": %llu, "
           "\"acct_keys\": %zu, \"acct_overflow\": %s, \"hot_table_key\": \"",
           opt.table_burst, opt.index_wcu, opt.index_burst, opt.latency_ms, opt.jitter_ms,
           opt.service_model ? "true" : "false", st.pk_throttle, st.withheld_table_key, st.withheld_index_key,
           st.withheld_table, st.withheld_index, st.answers_delayed, st.units_table, st.units_index,
           st.max_key_units_table, st.max_key_units_index, units_by_key.n, st.acct_overflow ? "true" : "false");
    sb_jstr(b, st.hot_table_key);
    sb_str(b, "\", \"hot_index_key\": \"");
    sb_jstr(b, st.hot_index_key);
    sb_str(b, "\"}\n");
}

static void control(struct sbuf *out, const char *path, size_t pl, int close)
{
    if (pl >= 8 && memcmp(path, "/__stats", 8) == 0) {
        struct sbuf b = {0};
        stats_json(&b);
        sb_fmt(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n", b.len,
               close ? "Connection: close\r\n" : "");
        sb_add(out, b.p, b.len);
        free(b.p);
        return;
    }
    sb_fmt(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n%s\r\n", close ? "Connection: close\r\n" : "");
}

static int ieq(const char *a, size_t al, const char *b)
{
    size_t bl = strlen(b);
    return al == bl && strncasecmp(a, b, bl) == 0;
}

static void dispatch(struct sbuf *out, const char *target, size_t tl, const char *body, size_t len, int close)
{
    st.requests++;
    if (ieq(target, tl, "batchwriteitem")) {
        st.batch_requests++;
        if (opt.parse || model_on())
            batch_exact(out, body, len, close);
        else
            batch_fast(out, body, len, close);
        return;
    }
    st.other_requests++;
    if (ieq(target, tl, "describetable")) {
        op_describe(out, body, len, close);
    } else if (ieq(target, tl, "createtable")) {
        op_create(out, body, len, close);
    } else if (ieq(target, tl, "listtables")) {
        op_list(out, close);
    } else if (ieq(target, tl, "putitem") || ieq(target, tl, "updateitem") || ieq(target, tl, "deleteitem") ||
               ieq(target, tl, "transactwriteitems")) {
        respond(out, 200, "{}", 2, close);
    } else {
        static const char U[] = "{\"__type\": \"com.amazon.coral.service#UnknownOperationException\"}";
        respond(out, 400, U, sizeof U - 1, close);
    }
}

/* ------------------------------------------------------------ connections */

struct conn {
    struct conn *prev, *next; /* every open connection, freed at exit */
    int fd;
    struct sbuf in, out;
    size_t out_off;
    int closing;       /* close once out is sent */
    int sent_continue; /* 100 Continue sent for the request being read */
    int writing;       /* EPOLLOUT registered */
    unsigned pending;  /* answers of it waiting in the delay queue */
    double last_due;   /* due time of its latest delayed answer */
};

static int ep;
static struct conn *conns;

/* ------------------------------------------------------------ delay queue */

/* An answer waiting for its due time. The heap is ordered by (due, seq);
 * seq keeps answers of equal due time in the order they were made. */
struct delayed {
    double due;
    unsigned long long seq;
    struct conn *c;
    char *p; /* owned: the whole HTTP answer */
    size_t len;
};

static struct delayed *dq;
static size_t dq_n, dq_cap;
static unsigned long long dq_seq;
static int tfd = -1;
static double armed_at = -1; /* the timerfd's expiry, -1 when disarmed */

static int dq_less(const struct delayed *a, const struct delayed *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void dq_up(size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!dq_less(&dq[i], &dq[p]))
            break;
        struct delayed t = dq[i];
        dq[i] = dq[p];
        dq[p] = t;
        i = p;
    }
}

static void dq_down(size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < dq_n && dq_less(&dq[l], &dq[m]))
            m = l;
        if (r < dq_n && dq_less(&dq[r], &dq[m]))
            m = r;
        if (m == i)
            return;
        struct delayed t = dq[i];
        dq[i] = dq[m];
        dq[m] = t;
        i = m;
    }
}

/* Arms the timerfd at the earliest due time (or disarms it when empty). */
static void dq_arm(void)
{
    double at = dq_n ? dq[0].due : -1;
    if (at == armed_at)
        return;
    struct itimerspec its = {0};
    if (at >= 0) {
        its.it_value.tv_sec = (time_t)at;
        its.it_value.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
            its.it_value.tv_nsec = 1; /* zero would disarm */
    }
    if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL))
        die("timerfd_settime: %s", strerror(errno));
    armed_at = at;
}

/* xorshift64*: the jitter, reproducible from --seed */
static double uniform01(void)
{
    static unsigned long long x;
    if (!x)
        x = opt.seed ? opt.seed : 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return (double)((x * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* Queues answer bytes for c, due `delay` seconds from now but never before
 * c's previous answer. Copies the bytes. */
static void dq_push(struct conn *c, const char *p, size_t len, double delay)
{
    double due = now_mono() + delay;
    if (due < c->last_due)
        due = c->last_due;
    c->last_due = due;
    if (dq_n == dq_cap) {
        dq_cap = dq_cap ? dq_cap * 2 : 256;
        dq = realloc(dq, dq_cap * sizeof *dq);
        if (!dq)
            die("out of memory");
    }
    struct delayed *d = &dq[dq_n];
    d->due = due;
    d->seq = dq_seq++;
    d->c = c;
    d->p = malloc(len ? len : 1);
    if (!d->p)
        die("out of memory");
    memcpy(d->p, p, len);
    d->len = len;
    dq_up(dq_n++);
    c->pending++;
    dq_arm();
}

/* Frees every queued answer of c (a connection going away). */
static void dq_drop(struct conn *c)
{
    if (!c->pending)
        return;
    size_t k = 0;
    for (size_t i = 0; i < dq_n; i++) {
        if (dq[i].c == c)
            free(dq[i].p);
        else
            dq[k++] = dq[i];
    }
    dq_n = k;
    for (size_t i = dq_n / 2 + 1; i-- > 0;)
        dq_down(i);
    c->pending = 0;
    dq_arm();
}

/* The delay of one DynamoDB answer, in seconds. */
static double answer_delay(void)
{
    return (opt.latency_ms + opt.jitter_ms * uniform01()) * 1e-3;
}

/* The value of header `name` (lower-case, with the colon) in head, or NULL. */
static const char *header(const char *head, size_t hl, const char *name, size_t *vl)
{
    size_t nl = strlen(name);
    const char *p = head, *end = head + hl;
    while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        p++;
        if ((size_t)(end - p) >= nl && strncasecmp(p, name, nl) == 0) {
            const char *v = p + nl, *e = v;
            while (e < end && *e != '\r' && *e != '\n')
                e++;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
                e--;
            *vl = (size_t)(e - v);
            return v;
        }
    }
    return NULL;
}

/* Answers every complete request in c->in; -1 to drop the connection. */
static int process(struct conn *c)
{
    size_t pos = 0;
    char *buf = c->in.p;
    size_t n = c->in.len;
    while (pos < n && !c->closing) {
        const char *he = memmem(buf + pos, n - pos, "\r\n\r\n", 4);
        if (!he) {
            if (n - pos > MAX_HEAD)
                return -1;
            break;
        }
        size_t hl = (size_t)(he - (buf + pos));
        const char *head = buf + pos;
        size_t vl;
        const char *v = header(head, hl, "content-length:", &vl);
        size_t cl = 0;
        if (v) {
            for (size_t i = 0; i < vl; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return -1;
                cl = cl * 10 + (size_t)(v[i] - '0');
                if (cl > MAX_BODY)
                    return -1;
            }
        } else if (header(head, hl, "transfer-encoding:", &vl)) {
            return -1; /* chunked bodies are not supported */
        }
        size_t end = pos + hl + 4 + cl;
        if (end > n) {
            if (!c->sent_continue && (v = header(head, hl, "expect:", &vl)) && ieq(v, vl, "100-continue")) {
                static const char CONT[] = "HTTP/1.1 100 Continue\r\n\r\n";
                if (c->pending) /* after the answers still queued, in order */
                    dq_push(c, CONT, sizeof CONT - 1, 0);
                else
                    sb_str(&c->out, CONT);
                c->sent_continue = 1;
            }
            sb_reserve(&c->in, end - n); /* room for the whole request */
            break;
        }
        c->sent_continue = 0;
        int close = 0;
        if ((v = header(head, hl, "connection:", &vl)) && ieq(v, vl, "close"))
            close = 1;
        const char *sp = memchr(head, ' ', hl);
        const char *eol = memchr(head, '\r', hl);
        if (!eol)
            eol = head + hl;
        if (sp && eol - sp > 9 && memcmp(eol - 8, "HTTP/1.0", 8) == 0 &&
            !((v = header(head, hl, "connection:", &vl)) && ieq(v, vl, "keep-alive")))
            close = 1;
        const char *body = head + hl + 4;
        /* Without latency, and nothing of this connection queued, the answer
         * goes straight out (the fast path); otherwise it is made aside and
         * queued: DynamoDB answers after their delay, the control answers
         * right behind what is queued. */
        static struct sbuf aside;
        aside.len = 0;
        if ((v = header(head, hl, "x-amz-target:", &vl)) != NULL) {
            const char *dot = memrchr(v, '.', vl);
            const char *t = dot ? dot + 1 : v;
            int delay = opt.latency_ms > 0 || opt.jitter_ms > 0;
            dispatch(delay || c->pending ? &aside : &c->out, t, (size_t)(v + vl - t), body, cl, close);
            if (delay || c->pending)
                dq_push(c, aside.p, aside.len, delay ? answer_delay() : 0);
        } else {
            const char *path = sp ? sp + 1 : head;
            const char *sp2 = sp ? memchr(path, ' ', (size_t)(eol - path)) : NULL;
            control(c->pending ? &aside : &c->out, path, sp2 ? (size_t)(sp2 - path) : 0, close);
            if (c->pending)
                dq_push(c, aside.p, aside.len, 0);
        }
        pos = end;
        if (close)
            c->closing = 1;
    }
    if (pos) {
        memmove(c->in.p, c->in.p + pos, n - pos);
        c->in.len = n - pos;
    }
    return 0;
}

static void conn_free(struct conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    dq_drop(c);
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in.p);
    free(c->out.p);
    free(c);
}

/* Sends what is pending; -1 when the connection is to be dropped. */
static int flush_out(struct conn *c)
{
    while (c->out_off < c->out.len) {
        ssize_t k = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -1;
        }
        c->out_off += (size_t)k;
    }
    int pending = c->out_off < c->out.len;
    if (!pending) {
        c->out.len = c->out_off = 0;
        if (c->closing && !c->pending)
            return -1;
    }
    if (pending != c->writing) {
        struct epoll_event e = {.events = pending ? EPOLLOUT : EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
        c->writing = pending;
    }
    return 0;
}

static void on_readable(struct conn *c)
{
    for (;;) {
        if (c->in.cap - c->in.len < 16384)
            sb_reserve(&c->in, c->in.cap < 65536 ? 65536 : c->in.cap);
        ssize_t k = recv(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (k <= 0) {
            conn_free(c);
            return;
        }
        c->in.len += (size_t)k;
        if (c->in.len > MAX_BODY + MAX_HEAD) {
            conn_free(c);
            return;
        }
        if (c->in.len < c->in.cap)
            break; /* drained the socket (most likely); epoll tells us if not */
    }
    if (process(c) || flush_out(c))
        conn_free(c);
}

static void on_accept(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        if (!c)
            die("out of memory");
        c->fd = fd;
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e)) {
            close(fd);
            free(c);
            continue;
        }
        st.connections++;
        c->next = conns;
        if (conns)
            conns->prev = c;
        conns = c;
    }
}

/* The timerfd fired: every answer now due goes to its connection, each
 * connection flushed once per run of its answers. */
static void dq_fire(void)
{
    uint64_t expirations;
    if (read(tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        die("timerfd read: %s", strerror(errno));
    armed_at = -1; /* a one-shot timer is disarmed once it has expired */
    double now = now_mono();
    while (dq_n && dq[0].due <= now) {
        struct delayed d = dq[0];
        dq[0] = dq[--dq_n];
        dq_down(0);
        struct conn *c = d.c;
        sb_add(&c->out, d.p, d.len);
        free(d.p);
        c->pending--;
        st.answers_delayed++;
        if ((dq_n == 0 || dq[0].c != c || dq[0].due > now) && flush_out(c))
            conn_free(c);
    }
    dq_arm();
}

/* -------------------------------------------------------------------- main */

static void write_file(const char *path, const char *data, size_t len)
{
    struct sbuf tmp = {0};
    sb_fmt(&tmp, "%s.tmp", path);
    sb_add(&tmp, "", 1);
    FILE *f = fopen(tmp.p, "w");
    if (!f || fwrite(data, 1, len, f) != len || fflush(f) || fsync(fileno(f)) || fclose(f) ||
        rename(tmp.p, path))
        fprintf(stderr, "nullddb: cannot write %s: %s\n", path, strerror(errno));
    free(tmp.p);
}

static void usage(void)
{
    fputs("usage: nullddb [--listen HOST:PORT] [--workers 1] [--count-file F] [--stats-file F] [--parse]\n"
          "               [--index-name N] [--pk-attr A] [--sk-attr A] [--index-pk-attr A] [--index-sk-attr A]\n"
          "               [--pk-wcu W] [--pk-burst B] [--table-wcu T] [--table-burst B]\n"
          "               [--index-wcu X] [--index-burst B] [--burst-s S] [--latency-ms L] [--jitter-ms J]\n"
          "               [--seed N] [--service-model]\n"
          "  --service-model: every one of these not given as issue 17's service: 8 + 0-4 ms,\n"
          "  1000 WCU/s per key, 20000 WCU/s table and index, 1 s of burst\n",
          stderr);
    exit(2);
}

static double num_arg(const char *s, const char *name)
{
    char *e;
    double v = strtod(s, &e);
    if (!*s || *e || !(v >= 0) || isinf(v))
        die("%s must be a number >= 0", name);
    return v;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        const char *eq = strchr(a, '=');
        char name[64];
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name)
            usage();
        memcpy(name, a, nl);
        name[nl] = 0;
        if (!strcmp(name, "--parse")) {
            opt.parse = 1;
            continue;
        }
        if (!strcmp(name, "--service-model")) {
            opt.service_model = 1;
            continue;
        }
        if (!strcmp(name, "-h") || !strcmp(name, "--help"))
            usage();
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            die("%s needs a value", name);
        if (!strcmp(name, "--listen"))
            opt.listen = v;
        else if (!strcmp(name, "--workers")) {
            if (strcmp(v, "1"))
                die("--workers: the C endpoint runs one worker (use nullddb.py for more)");
        } else if (!strcmp(name, "--count-file"))
            opt.count_file = v;
        else if (!strcmp(name, "--stats-file"))
            opt.stats_file = v;
        else if (!strcmp(name, "--index-name"))
            opt.index_name = v;
        else if (!strcmp(name, "--pk-attr"))
            opt.pk_attr = *v ? v : NULL;
        else if (!strcmp(name, "--sk-attr"))
            opt.sk_attr = v;
        else if (!strcmp(name, "--index-pk-attr"))
            opt.index_pk_attr = *v ? v : NULL;
        else if (!strcmp(name, "--index-sk-attr"))
            opt.index_sk_attr = v;
        else if (!strcmp(name, "--pk-wcu"))
            opt.pk_wcu = num_arg(v, name);
        else if (!strcmp(name, "--pk-burst"))
            opt.pk_burst = num_arg(v, name);
        else if (!strcmp(name, "--table-wcu"))
            opt.table_wcu = num_arg(v, name);
        else if (!strcmp(name, "--table-burst"))
            opt.table_burst = num_arg(v, name);
        else if (!strcmp(name, "--index-wcu"))
            opt.index_wcu = num_arg(v, name);
        else if (!strcmp(name, "--index-burst"))
            opt.index_burst = num_arg(v, name);
        else if (!strcmp(name, "--burst-s"))
            opt.burst_s = num_arg(v, name);
        else if (!strcmp(name, "--latency-ms"))
            opt.latency_ms = num_arg(v, name);
        else if (!strcmp(name, "--jitter-ms"))
            opt.jitter_ms = num_arg(v, name);
        else if (!strcmp(name, "--seed"))
            opt.seed = (unsigned long long)num_arg(v, name);
        else
            usage();
    }
    /* what was not given: the service model's figure, or off */
    int svc = opt.service_model;
#define RESOLVE(field, svc_value) \
    if (opt.field < 0)            \
        opt.field = svc ? (svc_value) : 0;
    RESOLVE(pk_wcu, SVC_PK_WCU)
    RESOLVE(table_wcu, SVC_TABLE_WCU)
    RESOLVE(index_wcu, SVC_INDEX_WCU)
    RESOLVE(latency_ms, SVC_LATENCY_MS)
    RESOLVE(jitter_ms, SVC_JITTER_MS)
#undef RESOLVE
    if (opt.burst_s < 0)
        opt.burst_s = svc ? SVC_BURST_S : DEFAULT_BURST_S;
    if (opt.pk_burst < 0)
        opt.pk_burst = opt.pk_wcu * opt.burst_s;
    if (opt.table_burst < 0)
        opt.table_burst = opt.table_wcu * opt.burst_s;
    if (opt.index_burst < 0)
        opt.index_burst = opt.index_wcu * opt.burst_s;
    if (opt.index_wcu > 0 && !opt.index_pk_attr)
        die("--index-wcu needs an index key (--index-pk-attr)");

    /* listen */
    char host[256];
    const char *colon = strrchr(opt.listen, ':');
    if (!colon || (size_t)(colon - opt.listen) >= sizeof host)
        die("--listen wants HOST:PORT");
    memcpy(host, opt.listen, (size_t)(colon - opt.listen));
    host[colon - opt.listen] = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (!*host)
        strncpy(host, "127.0.0.1", sizeof host);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
        if (getaddrinfo(host, NULL, &hints, &res))
            die("cannot resolve %s", host);
        sa.sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 1024))
        die("cannot listen on %s: %s", opt.listen, strerror(errno));
    socklen_t sl = sizeof sa;
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    char addr[64];
    inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof addr);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (sfd < 0 || ep < 0)
        die("epoll/signalfd: %s", strerror(errno));
    tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (tfd < 0)
        die("timerfd_create: %s", strerror(errno));
    static int lmark, smark, tmark; /* data.ptr tags of the three special fds */
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &lmark};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
    e.data.ptr = &smark;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);
    e.data.ptr = &tmark;
    epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &e);
    started = now_mono();

    printf("nullddb listening on %s:%d workers 1 (C%s%s)\n", addr, ntohs(sa.sin_port),
           model_on() ? ", throttling" : "", opt.latency_ms > 0 || opt.jitter_ms > 0 ? ", latency" : "");
    fflush(stdout);

    int running = 1;
    struct epoll_event evs[256];
    while (running) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait: %s", strerror(errno));
        }
        int fire = 0;
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &lmark) {
                on_accept(lfd);
            } else if (p == &smark) {
                running = 0;
            } else if (p == &tmark) {
                fire = 1; /* after this batch: it may free connections with events below */
            } else {
                struct conn *c = p;
                if (evs[i].events & EPOLLOUT) {
                    if (flush_out(c))
                        conn_free(c);
                } else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                    on_readable(c);
                }
            }
        }
        if (fire)
            dq_fire();
    }

    while (conns)
        conn_free(conns);
    close(lfd);
    close(sfd);
    close(tfd);
    close(ep);
    if (opt.count_file) {
        struct sbuf b = {0};
        sb_fmt(&b, "%lld\n", st.items);
        write_file(opt.count_file, b.p, b.len);
        free(b.p);
    }
    if (opt.stats_file) {
        struct sbuf b = {0};
        stats_json(&b);
        write_file(opt.stats_file, b.p, b.len);
        free(b.p);
    }
    printf("nullddb stopped: requests=%lld items=%lld\n", st.requests, st.items);
    fflush(stdout);
    return 0;
}
