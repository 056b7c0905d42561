/*
 * s3_source.c - parallel ranged GETs behind the el_input source interface.
 *
 * DESIGN: a ring of `ahead` slots, one part each; part k of the range lives
 * in slot k % ahead. One fetcher thread drives every transfer of the input
 * with a curl multi handle: it starts part k as soon as its slot is free
 * (the reader has finished part k - ahead), so up to `ahead` GETs run at
 * once while the reader decompresses and parses. The reader (the thread
 * that owns the el_input) takes bytes of the oldest part as soon as they
 * have arrived. The two meet in one mutex: the fetcher appends at
 * slot->filled and publishes the new length under it; the reader copies
 * below it. A slot is reused only after the reader has left it.
 *
 * A broken transfer is restarted by the fetcher from start + filled after a
 * backoff (a timer per slot, so other parts go on meanwhile), which is what
 * makes a lost connection resume at the byte it reached. A part whose
 * attempts run out fails the input with the last error; the reader gets it
 * when it reaches that part (not before: the parts before it are good).
 *
 * Shutdown: freeing the input sets `stop`, wakes the fetcher
 * (curl_multi_wakeup) and joins it; the fetcher removes every handle.
 */
#include "s3/s3_source.h"

#include <pthread.h>  /* the fetcher thread, the slot lock */
#include <stdbool.h>  /* bool */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* memcpy, strlen */
#include <time.h>     /* clock_gettime for retry timers */

#include "s3/s3_internal.h"

#define DEFAULT_PART (8u * 1024u * 1024u)
#define DEFAULT_AHEAD 4
#define MAX_AHEAD 64

typedef struct src src;

/* One part. Fields marked (L) are read and written under src->lock. */
typedef struct slot {
    src *owner;
    unsigned char *buf;     /* part_size bytes */
    uint64_t part;          /* which part (L) */
    uint64_t start, len;    /* object bytes [start, start+len) (L) */
    size_t filled;          /* bytes arrived (L) */
    bool busy;              /* holds a part the reader has not finished (L) */
    bool done;              /* every byte arrived (L) */
    el_err err;             /* the part failed for good (L) */
    el_diag diag;           /* why (L) */
    /* fetcher only */
    bool running;           /* a transfer is in the multi handle */
    bool waiting;           /* a retry is due at retry_at */
    double retry_at;
    int breaks;             /* transfers broken in a row */
    CURL *h;
    s3_call call;
} slot;

struct src {
    el_s3 *s3;
    char *bucket, *key, *etag;
    uint64_t start, end;    /* the range read */
    uint64_t nparts;
    size_t part_size;
    int ahead;
    slot *slots;

    pthread_mutex_t lock;
    pthread_cond_t cond;    /* the reader waits here for bytes */
    uint64_t cur;           /* the part the reader is in (L) */
    size_t pos;             /* bytes of it read (L) */
    bool stop;              /* (L) */

    CURLM *multi;
    pthread_t thread;
    bool thread_live;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Bytes of a transfer: appended to the slot and published. */
static size_t on_data(void *user, const char *p, size_t n)
{
    slot *s = user;
    src *r = s->owner;
    if (s->call.status != 206 && !(s->call.status == 200 && s->start == 0 &&
                                   s->len == r->end && r->start == 0))
        return 0;  /* a server that ignores Range would hand us the wrong bytes */
    pthread_mutex_lock(&r->lock);
    size_t filled = s->filled;
    pthread_mutex_unlock(&r->lock);
    if (filled + n > s->len)
        return 0;
    memcpy(s->buf + filled, p, n);
    pthread_mutex_lock(&r->lock);
    s->filled = filled + n;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* Starts (or restarts) the transfer of slot s from its first missing byte. */
static el_err start_transfer(src *r, slot *s, el_diag *diag)
{
    pthread_mutex_lock(&r->lock);
    uint64_t first = s->start + s->filled;
    pthread_mutex_unlock(&r->lock);
    bool resent = s->breaks > 0 && s->call.skew_resent; /* a retry of the same part */
    s->call = (s3_call){ .method = "GET", .bucket = r->bucket, .key = r->key,
                         .skew_resent = resent,
                         .has_range = true, .range_first = first,
                         .range_last = s->start + s->len - 1, .if_match = r->etag,
                         .on_data = on_data, .on_data_user = s };
    el_err err = s3_call_setup(r->s3, s->h, &s->call, diag);
    if (err)
        return err;
    if (curl_multi_add_handle(r->multi, s->h) != CURLM_OK) {
        s3_call_cleanup(&s->call);
        return el_diag_set(diag, EL_EINTERNAL, "curl_multi_add_handle failed");
    }
    s->running = true;
    return EL_OK;
}

static void fail_slot(src *r, slot *s, el_err err, const el_diag *d)
{
    pthread_mutex_lock(&r->lock);
    s->err = err ? err : EL_EINTERNAL;
    s->diag = *d;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* A transfer ended: done, retried later, or failed for good. */
static void finished(src *r, slot *s, CURLcode rc)
{
    curl_multi_remove_handle(r->multi, s->h);
    s->running = false;
    el_diag d;
    el_diag_clear(&d);
    bool retry = false;
    el_err err = s3_call_result(r->s3, &s->call, rc, &retry, &d);
    s3_call_cleanup(&s->call);
    pthread_mutex_lock(&r->lock);
    uint64_t filled = s->filled;
    pthread_mutex_unlock(&r->lock);
    if (!err && filled != s->len) {
        /* the server closed the body early: resume like a broken connection */
        err = el_diag_set(&d, EL_ENET, "s3://%s/%s: body ended after %llu of %llu bytes",
                          r->bucket, r->key, (unsigned long long)filled,
                          (unsigned long long)s->len);
        retry = true;
    }
    if (!err) {
        pthread_mutex_lock(&r->lock);
        s->done = true;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        return;
    }
    if (retry && s->breaks + 1 < s3_attempts(r->s3)) {
        s->breaks++;
        s->waiting = true;
        /* the same policy as s3_backoff_sleep, without blocking the others */
        double base = 0.1 * (double)(1u << (s->breaks < 8 ? s->breaks : 8));
        double u = (double)((uint64_t)(s - r->slots) * 2654435761u % 1000) / 1000.0;
        s->retry_at = now_s() + base * (0.5 + 0.5 * u);
        return;
    }
    fail_slot(r, s, err, &d);
}

static void *fetcher(void *arg)
{
    src *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        bool stop = r->stop;
        uint64_t cur = r->cur;
        pthread_mutex_unlock(&r->lock);
        if (stop)
            break;
        /* hand free slots their parts, start due retries */
        double t = now_s();
        for (uint64_t k = cur; k < cur + (uint64_t)r->ahead && k < r->nparts; k++) {
            slot *s = &r->slots[k % (uint64_t)r->ahead];
            pthread_mutex_lock(&r->lock);
            bool fresh = !s->busy;
            if (fresh) {
                s->busy = true;
                s->part = k;
                s->start = r->start + k * r->part_size;
                s->len = r->end - s->start < r->part_size ? r->end - s->start : r->part_size;
                s->filled = 0;
                s->done = false;
                s->err = EL_OK;
            }
            bool failed = s->err != EL_OK;
            pthread_mutex_unlock(&r->lock);
            if (fresh) {
                s->breaks = 0;
                s->waiting = false;
            } else if (s->running || failed || s->done || !s->waiting || s->retry_at > t) {
                continue;
            }
            s->waiting = false;
            el_diag d;
            el_diag_clear(&d);
            el_err err = start_transfer(r, s, &d);
            if (err)
                fail_slot(r, s, err, &d);
        }
        int running = 0;
        curl_multi_perform(r->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(r->multi, &left))) {
            if (m->msg != CURLMSG_DONE)
                continue;
            for (int i = 0; i < r->ahead; i++)
                if (r->slots[i].h == m->easy_handle && r->slots[i].running) {
                    finished(r, &r->slots[i], m->data.result);
                    break;
                }
        }
        curl_multi_poll(r->multi, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < r->ahead; i++)
        if (r->slots[i].running) {
            curl_multi_remove_handle(r->multi, r->slots[i].h);
            s3_call_cleanup(&r->slots[i].call);
            r->slots[i].running = false;
        }
    return NULL;
}

static el_err src_read(void *self, void *dst, size_t n, size_t *got, el_diag *diag)
{
    src *r = self;
    *got = 0;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        if (r->cur >= r->nparts)
            break;
        slot *s = &r->slots[r->cur % (uint64_t)r->ahead];
        if (s->busy && s->part == r->cur) {
            if (r->pos < s->filled) {
                size_t take = s->filled - r->pos;
                if (take > n)
                    take = n;
                memcpy(dst, s->buf + r->pos, take);
                r->pos += take;
                *got = take;
                if (r->pos == s->len) {
                    s->busy = false;   /* the fetcher may reuse it now */
                    r->cur++;
                    r->pos = 0;
                    curl_multi_wakeup(r->multi);
                }
                break;
            }
            if (s->err) {
                el_err err = s->err;
                if (diag)
                    *diag = s->diag;
                pthread_mutex_unlock(&r->lock);
                return err;
            }
        }
        pthread_cond_wait(&r->cond, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return EL_OK;
}

static void src_free(void *self)
{
    src *r = self;
    if (!r)
        return;
    if (r->thread_live) {
        pthread_mutex_lock(&r->lock);
        r->stop = true;
        pthread_mutex_unlock(&r->lock);
        curl_multi_wakeup(r->multi);
        pthread_join(r->thread, NULL);
    }
    for (int i = 0; r->slots && i < r->ahead; i++) {
        if (r->slots[i].h)
            curl_easy_cleanup(r->slots[i].h);
        free(r->slots[i].buf);
    }
    if (r->multi)
        curl_multi_cleanup(r->multi);
    free(r->slots);
    free(r->bucket);
    free(r->key);
    free(r->etag);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r);
}

static const el_input_source_ops SRC_OPS = { src_read, src_free };

el_err el_s3_input_open_range(el_s3 *s3, const char *url, uint64_t size, const char *etag,
                              uint64_t start, uint64_t end, const el_s3_source_opts *opts,
                              el_input **out, el_diag *diag)
{
    *out = NULL;
    src *r = calloc(1, sizeof *r);
    if (!r)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    r->s3 = s3;
    el_s3_source_opts o = { 0, 0 };
    if (opts)
        o = *opts;
    else
        el_s3_read_parts(s3, &o.part_size, &o.ahead);
    r->part_size = o.part_size ? o.part_size : DEFAULT_PART;
    r->ahead = o.ahead > 0 ? (o.ahead < MAX_AHEAD ? o.ahead : MAX_AHEAD) : DEFAULT_AHEAD;
    el_err err = el_s3_url_parse(url, &r->bucket, &r->key, diag);
    if (!err && (!r->key[0] || r->key[strlen(r->key) - 1] == '/'))
        err = el_diag_set(diag, EL_EUSAGE, "%s names no object (a prefix ending in '/' is "
                          "expanded into its objects before opening)", url);
    char head_etag[256] = "";
    if (!err && !etag && size == 0) {
        err = el_s3_head(s3, r->bucket, r->key, &size, head_etag, sizeof head_etag, diag);
        etag = head_etag;
    }
    if (!err && etag && etag[0] && !(r->etag = strdup(etag)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err) {
        if (end == 0 || end > size)
            end = size;
        if (start > end)
            start = end;
        r->start = start;
        r->end = end;
        r->nparts = (end - start + r->part_size - 1) / r->part_size;
        r->slots = calloc((size_t)r->ahead, sizeof *r->slots);
        r->multi = curl_multi_init();
        if (!r->slots || !r->multi)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    for (int i = 0; !err && i < r->ahead; i++) {
        slot *s = &r->slots[i];
        s->owner = r;
        if ((uint64_t)i < r->nparts) {
            s->buf = malloc(r->part_size);
            s->h = curl_easy_init();
            if (!s->buf || !s->h)
                err = el_diag_set(diag, EL_ENOMEM, "out of memory for S3 read buffers");
        }
    }
    if (!err && r->nparts > 0) {
        if (pthread_create(&r->thread, NULL, fetcher, r) != 0)
            err = el_diag_set(diag, EL_EINTERNAL, "cannot start the S3 fetcher thread");
        else
            r->thread_live = true;
    }
    if (err) {
        src_free(r);
        return err;
    }
    return el_input_open_source(url, &SRC_OPS, r, end - start, true, out, diag);
}

el_err el_s3_input_open(el_s3 *s3, const char *url, el_input **out, el_diag *diag)
{
    return el_s3_input_open_range(s3, url, 0, NULL, 0, 0, NULL, out, diag);
}

static el_err opener_open(void *ctx, const char *name, el_input **out, el_diag *diag)
{
    return el_s3_input_open(ctx, name, out, diag);
}

void el_s3_opener_init(el_input_opener *op, el_s3 *s3)
{
    op->prefix = "s3://";
    op->open = opener_open;
    op->ctx = s3;
}
