/*
 * credentials.c - credential sets and the provider that renews them.
 *
 * DESIGN: signing happens tens of thousands of times a minute on the
 * network thread, renewal a few times an hour; so the current set is one
 * pointer under a mutex that signing holds for a reference count increment
 * only, and renewal (a network call that may take seconds, or fail and be
 * retried for minutes) runs on a thread of its own, outside the lock, and
 * swaps the pointer when it has a new set. Requests hold the set they were
 * signed with, so a swap needs no coordination with them. The previous set
 * is kept too, so that messages quoting a request signed just before a swap
 * are still scrubbed of its token.
 *
 * The renewal thread sleeps on a condition variable of the monotonic
 * clock; expirations are wall-clock times (that is what AWS gives), and
 * each wait is the wall-clock distance converted once, so setting the
 * system clock delays a renewal by at most the next retry.
 */
#include "aws/credentials.h"

#include <pthread.h>    /* the provider's lock and renewal thread */
#include <stdatomic.h>  /* reference counts */
#include <stdint.h>     /* uint64_t for the jitter state */
#include <stdio.h>      /* snprintf */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* strlen, memcpy, explicit_bzero */

#include "aws/aws_internal.h"  /* el_aws_dup, el_aws_wipe_free */
#include "common/backoff.h"    /* el_backoff_ms, el_rand_unit */

/* Renew this long before expiry (the SDKs' advisory window)... */
#define RENEW_BEFORE_S 300
/* ...unless the set lives at most this long: then at half its life. */
#define SHORT_LIFE_S 600
/* Retries of a failed renewal: from 1 s, capped at 1 min. */
#define RETRY_BASE_MS 1000.0
#define RETRY_CAP_MS 60000.0
#define TOKEN_PREFIX "X-Amz-Security-Token: "

struct el_cred {
    atomic_uint refs;
    time_t expiration;
    char *access_key;
    char *secret_key;
    char *token_line;   /* TOKEN_PREFIX + token, NULL without a token */
};

static bool text_ok(const char *s, size_t max)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > max)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    return true;
}

el_err el_cred_new(const char *access_key, const char *secret_key,
                   const char *session_token, time_t expiration, el_cred **out)
{
    *out = NULL;
    bool has_token = session_token && *session_token;
    if (!text_ok(access_key, EL_CRED_MAX_KEY) || !text_ok(secret_key, EL_CRED_MAX_SECRET) ||
        (has_token && !text_ok(session_token, EL_CRED_MAX_TOKEN)))
        return EL_EUSAGE;
    el_cred *c = calloc(1, sizeof *c);
    if (!c)
        return EL_ENOMEM;
    atomic_init(&c->refs, 1);
    c->expiration = expiration;
    c->access_key = el_aws_dup(access_key);
    c->secret_key = el_aws_dup(secret_key);
    if (has_token) {
        size_t pl = sizeof TOKEN_PREFIX - 1, tl = strlen(session_token);
        c->token_line = malloc(pl + tl + 1);
        if (c->token_line) {
            memcpy(c->token_line, TOKEN_PREFIX, pl);
            memcpy(c->token_line + pl, session_token, tl + 1);
        }
    }
    if (!c->access_key || !c->secret_key || (has_token && !c->token_line)) {
        el_cred_release(c);
        return EL_ENOMEM;
    }
    *out = c;
    return EL_OK;
}

el_cred *el_cred_ref(el_cred *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

void el_cred_release(el_cred *c)
{
    if (!c || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(c->access_key);
    el_aws_wipe_free(c->secret_key);
    el_aws_wipe_free(c->token_line);
    free(c);
}

const char *el_cred_access_key(const el_cred *c) { return c->access_key; }
const char *el_cred_secret_key(const el_cred *c) { return c->secret_key; }
const char *el_cred_token_line(const el_cred *c) { return c->token_line; }
time_t el_cred_expiration(const el_cred *c) { return c->expiration; }

const char *el_cred_session_token(const el_cred *c)
{
    return c->token_line ? c->token_line + sizeof TOKEN_PREFIX - 1 : NULL;
}

/* ---- the provider ---- */

struct el_creds {
    el_cred_source *src;          /* called by the renewal thread only (after new) */
    char *name;                   /* a copy of the source's name */
    pthread_mutex_t mu;           /* guards everything below */
    pthread_cond_t wake;          /* stop requested */
    el_cred *cur;                 /* never NULL */
    el_cred *prev;                /* the set before cur, NULL before a renewal */
    bool stop;
    bool thread_started;
    pthread_t thread;
    char last_error[sizeof ((el_diag *)0)->msg]; /* why the last renewal failed, "" none */
    unsigned long renewed, failed;
    uint64_t rng;
};

time_t el_creds_refresh_at(time_t now, time_t expiration)
{
    if (expiration == 0)
        return 0;
    if (expiration - now > SHORT_LIFE_S)
        return expiration - RENEW_BEFORE_S;
    time_t left = expiration - EL_CREDS_EXPIRY_MARGIN - now; /* the life it can sign in */
    if (left <= 0)
        return now;
    time_t half = left / 2;
    return now + (half < 1 ? 1 : half);
}

static void utc_text(time_t t, char *out, size_t cap)
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, cap, "%lld", (long long)t);
}

/* Sleeps until wall-clock time `until`, or until stop. Called locked. */
static void wait_until(el_creds *p, time_t until)
{
    time_t now = time(NULL);
    if (until <= now)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += until - now;
    while (!p->stop && pthread_cond_timedwait(&p->wake, &p->mu, &ts) == 0)
        ;
}

static void *renew_main(void *arg)
{
    el_creds *p = arg;
    unsigned attempt = 0;
    pthread_mutex_lock(&p->mu);
    time_t next = el_creds_refresh_at(time(NULL), el_cred_expiration(p->cur));
    while (!p->stop) {
        wait_until(p, next);
        if (p->stop)
            break;
        if (time(NULL) < next)
            continue; /* woken early (the clock moved): wait the rest */
        pthread_mutex_unlock(&p->mu);
        el_cred *fresh = NULL;
        el_diag d;
        el_diag_clear(&d);
        el_err err = p->src->fetch(p->src, &fresh, &d);
        time_t now = time(NULL);
        if (!err && el_cred_expiration(fresh) != 0 &&
            el_cred_expiration(fresh) <= now + EL_CREDS_EXPIRY_MARGIN) {
            err = el_diag_set(&d, EL_ECONFIG, "%s gave credentials that have already expired",
                              p->name);
        }
        pthread_mutex_lock(&p->mu);
        if (!err) {
            el_cred *old = p->prev;
            p->prev = p->cur;
            p->cur = fresh;
            p->last_error[0] = '\0';
            p->renewed++;
            attempt = 0;
            next = el_creds_refresh_at(now, el_cred_expiration(fresh));
            pthread_mutex_unlock(&p->mu);
            el_cred_release(old);
            pthread_mutex_lock(&p->mu);
            if (next == 0)
                break; /* the new set does not expire */
        } else {
            el_cred_release(fresh);
            snprintf(p->last_error, sizeof p->last_error, "%s", d.msg[0] ? d.msg
                                                                        : el_strerror(err));
            p->failed++;
            double ms = el_backoff_ms(attempt < 16 ? attempt : 16, RETRY_BASE_MS,
                                      RETRY_CAP_MS, el_rand_unit(&p->rng));
            attempt++;
            time_t left = el_cred_expiration(p->cur) - now;
            time_t wait = (time_t)(ms / 1000.0);
            if (left > 2 && wait > left / 2)
                wait = left / 2; /* try again before the set expires */
            next = now + (wait < 1 ? 1 : wait);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static el_err creds_alloc(el_cred_source *src, const char *name, el_cred *first,
                          el_creds **out)
{
    el_creds *p = calloc(1, sizeof *p);
    if (!p)
        return EL_ENOMEM;
    p->src = src;
    p->cur = first;
    p->name = el_aws_dup(name);
    pthread_condattr_t ca;
    bool ok = p->name && pthread_condattr_init(&ca) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&p->wake, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (!ok || pthread_mutex_init(&p->mu, NULL) != 0) {
        if (ok)
            pthread_cond_destroy(&p->wake);
        free(p->name);
        free(p);
        return EL_ENOMEM;
    }
    p->rng = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)p;
    *out = p;
    return EL_OK;
}

el_err el_creds_new(el_cred_source *src, el_creds **out, el_diag *diag)
{
    *out = NULL;
    el_cred *first = NULL;
    el_err err = src->fetch(src, &first, diag);
    if (!err && el_cred_expiration(first) != 0 &&
        el_cred_expiration(first) <= time(NULL) + EL_CREDS_EXPIRY_MARGIN) {
        char when[40];
        utc_text(el_cred_expiration(first), when, sizeof when);
        err = el_diag_set(diag, EL_ECONFIG, "credentials from %s expired at %s", src->name,
                          when);
    }
    if (err) {
        el_cred_release(first);
        src->destroy(src);
        return err;
    }
    el_creds *p;
    if ((err = creds_alloc(src, src->name, first, &p))) {
        el_cred_release(first);
        src->destroy(src);
        return el_diag_set(diag, err, "out of memory");
    }
    if (el_cred_expiration(first) != 0) {
        if (pthread_create(&p->thread, NULL, renew_main, p) != 0) {
            el_creds_free(p);
            return el_diag_set(diag, EL_ENOMEM, "cannot start the credential renewal thread");
        }
        p->thread_started = true;
    }
    *out = p;
    return EL_OK;
}

el_err el_creds_new_static(const char *access_key, const char *secret_key,
                           const char *session_token, const char *name, el_creds **out)
{
    *out = NULL;
    el_cred *c;
    el_err err = el_cred_new(access_key, secret_key, session_token, 0, &c);
    if (err)
        return err;
    if ((err = creds_alloc(NULL, name ? name : "static keys", c, out)))
        el_cred_release(c);
    return err;
}

el_err el_creds_get(el_creds *p, time_t now, el_cred **out, el_diag *diag)
{
    pthread_mutex_lock(&p->mu);
    el_cred *c = p->cur;
    time_t exp = el_cred_expiration(c);
    if (exp != 0 && now + EL_CREDS_EXPIRY_MARGIN >= exp) {
        char when[40], why[sizeof p->last_error];
        snprintf(why, sizeof why, "%s", p->last_error[0] ? p->last_error
                                                         : "the renewal has not finished");
        pthread_mutex_unlock(&p->mu);
        *out = NULL;
        utc_text(exp, when, sizeof when);
        return el_diag_set(diag, EL_ECONFIG,
                           "credentials from %s expired at %s and could not be renewed: %s",
                           p->name, when, why);
    }
    *out = el_cred_ref(c);
    pthread_mutex_unlock(&p->mu);
    return EL_OK;
}

const char *el_creds_source(const el_creds *p)
{
    return p->name;
}

/* Overwrites every copy of secret in s, and a cut-off start of it at the
 * end of s, with '*'. */
void el_creds_redact_text(char *s, const char *secret)
{
    size_t n = secret ? strlen(secret) : 0;
    if (n < 4)
        return;
    for (char *q = strstr(s, secret); q; q = strstr(q + n, secret))
        memset(q, '*', n);
    size_t len = strlen(s);
    for (size_t k = n - 1 < len ? n - 1 : len; k >= 4; k--)
        if (memcmp(s + len - k, secret, k) == 0) {
            memset(s + len - k, '*', k);
            break;
        }
}

void el_creds_redact(el_creds *p, char *s)
{
    pthread_mutex_lock(&p->mu);
    el_cred *sets[2] = {p->cur, p->prev};
    for (int i = 0; i < 2; i++) {
        if (!sets[i])
            continue;
        el_creds_redact_text(s, sets[i]->secret_key);
        el_creds_redact_text(s, el_cred_session_token(sets[i]));
    }
    pthread_mutex_unlock(&p->mu);
}

void el_creds_counts(el_creds *p, unsigned long *renewed, unsigned long *failed)
{
    pthread_mutex_lock(&p->mu);
    *renewed = p->renewed;
    *failed = p->failed;
    pthread_mutex_unlock(&p->mu);
}

void el_creds_free(el_creds *p)
{
    if (!p)
        return;
    if (p->thread_started) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    el_cred_release(p->cur);
    el_cred_release(p->prev);
    if (p->src)
        p->src->destroy(p->src);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->name);
    free(p);
}
