/*
 * test_credentials.c - credential sets and the provider (aws/credentials.h):
 * the renewal policy with exact expectations, a set's validation and
 * reference counting, renewal in the background with a scripted source
 * (a swap while a request holds the old set, a failing renewal retried
 * until the set expires, then a failure that names the source), and the
 * redaction of current and previous secrets.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h> /* the scripted source is read by the renewal thread */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* free */
#include <string.h>  /* strcmp, strstr, strdup */
#include <time.h>    /* time, nanosleep */
#include <unistd.h>  /* usleep */

#include "aws/credentials.h"
#include "aws/sigv4.h"

static void test_refresh_at(void **state)
{
    (void)state;
    const time_t now = 1700000000;
    assert_int_equal(el_creds_refresh_at(now, 0), 0);                 /* never expires */
    assert_int_equal(el_creds_refresh_at(now, now + 3600), now + 3300); /* 5 min before */
    assert_int_equal(el_creds_refresh_at(now, now + 601), now + 301);
    assert_int_equal(el_creds_refresh_at(now, now + 600), now + 297); /* half of 600 - 5 */
    assert_int_equal(el_creds_refresh_at(now, now + 20), now + 7);    /* half of 15 s */
    assert_int_equal(el_creds_refresh_at(now, now + 7), now + 1);     /* at least 1 s */
    assert_int_equal(el_creds_refresh_at(now, now + 5), now);         /* cannot sign: now */
    assert_int_equal(el_creds_refresh_at(now, now - 5), now);         /* already expired */
}

static void test_cred_new_and_refs(void **state)
{
    (void)state;
    el_cred *c;
    assert_int_equal(el_cred_new("AKID", "secret", "tok", 42, &c), EL_OK);
    assert_string_equal(el_cred_access_key(c), "AKID");
    assert_string_equal(el_cred_secret_key(c), "secret");
    assert_string_equal(el_cred_session_token(c), "tok");
    assert_string_equal(el_cred_token_line(c), "X-Amz-Security-Token: tok");
    assert_int_equal(el_cred_expiration(c), 42);
    el_cred *d = el_cred_ref(c);
    el_cred_release(c);
    assert_string_equal(el_cred_access_key(d), "AKID"); /* still held */
    el_cred_release(d);
    el_cred_release(NULL);

    assert_int_equal(el_cred_new("AKID", "s", "", 0, &c), EL_OK);
    assert_null(el_cred_session_token(c));
    assert_null(el_cred_token_line(c));
    el_cred_release(c);

    assert_int_equal(el_cred_new("", "s", NULL, 0, &c), EL_EUSAGE);
    assert_null(c);
    assert_int_equal(el_cred_new("A", NULL, NULL, 0, &c), EL_EUSAGE);
    assert_int_equal(el_cred_new("A", "s", "to\r\nken", 0, &c), EL_EUSAGE); /* a header break */
    char big[EL_CRED_MAX_TOKEN + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(el_cred_new("A", "s", big, 0, &c), EL_EUSAGE);
}

/* ---- a scripted source ---- */

typedef struct script {
    el_cred_source base;
    pthread_mutex_t mu;
    int calls;
    int fail_from;       /* calls from this one on fail (0 = never) */
    int life;            /* seconds each set lives */
} script;

static el_err script_fetch(el_cred_source *self, el_cred **out, el_diag *diag)
{
    script *s = (script *)self;
    pthread_mutex_lock(&s->mu);
    int n = ++s->calls;
    bool fail = s->fail_from && n >= s->fail_from;
    int life = s->life;
    pthread_mutex_unlock(&s->mu);
    if (fail)
        return el_diag_set(diag, EL_ENET, "scripted source: no answer (call %d)", n);
    char ak[32], sk[32], tok[32];
    snprintf(ak, sizeof ak, "AKIDSET%d", n);
    snprintf(sk, sizeof sk, "secretOfSet%d", n);
    snprintf(tok, sizeof tok, "tokenOfSet%d", n);
    return el_cred_new(ak, sk, tok, time(NULL) + life, out);
}

static void script_destroy(el_cred_source *self)
{
    script *s = (script *)self;
    pthread_mutex_destroy(&s->mu);
    free(s->base.name);
}

static void script_init(script *s, int life, int fail_from)
{
    memset(s, 0, sizeof *s);
    s->base.name = strdup("the scripted source");
    s->base.fetch = script_fetch;
    s->base.destroy = script_destroy;
    pthread_mutex_init(&s->mu, NULL);
    s->life = life;
    s->fail_from = fail_from;
}

static int calls_of(script *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->calls;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void test_renewal_swaps_while_a_request_holds_the_old_set(void **state)
{
    (void)state;
    script s;
    script_init(&s, 9, 0); /* signs for 4 s (5 s margin), renewed after 2 s */
    el_creds *p;
    el_diag d;
    assert_int_equal(el_creds_new(&s.base, &p, &d), EL_OK);
    assert_string_equal(el_creds_source(p), "the scripted source");
    el_cred *held;
    assert_int_equal(el_creds_get(p, time(NULL), &held, &d), EL_OK);
    assert_string_equal(el_cred_access_key(held), "AKIDSET1");
    for (int i = 0; i < 100 && calls_of(&s) < 2; i++)
        usleep(100000);
    assert_true(calls_of(&s) >= 2);
    usleep(50000);
    el_cred *now;
    assert_int_equal(el_creds_get(p, time(NULL), &now, &d), EL_OK);
    assert_string_not_equal(el_cred_access_key(now), "AKIDSET1");
    /* the request signed with the old set still has it, token and all */
    assert_string_equal(el_cred_session_token(held), "tokenOfSet1");
    /* messages quoting either set are scrubbed */
    char msg[200];
    snprintf(msg, sizeof msg, "a: secretOfSet1 b: %s c: tokenOfSet1 d: tokenOf",
             el_cred_session_token(now));
    el_creds_redact(p, msg);
    assert_null(strstr(msg, "secretOfSet1"));
    assert_null(strstr(msg, "tokenOfSet"));
    assert_non_null(strstr(msg, "a: *"));
    el_cred_release(held);
    el_cred_release(now);
    unsigned long ok, failed;
    el_creds_counts(p, &ok, &failed);
    assert_true(ok >= 1);
    assert_int_equal(failed, 0);
    el_creds_free(p);
}

static void test_failed_renewal_retries_then_expires(void **state)
{
    (void)state;
    script s;
    script_init(&s, 9, 2); /* the first set, then every renewal fails */
    el_creds *p;
    el_diag d;
    assert_int_equal(el_creds_new(&s.base, &p, &d), EL_OK);
    time_t t0 = time(NULL);
    el_cred *c = NULL;
    el_err err = EL_OK;
    while (time(NULL) < t0 + 9) {
        err = el_creds_get(p, time(NULL), &c, &d);
        if (err)
            break;
        el_cred_release(c);
        usleep(200000);
    }
    assert_int_equal(err, EL_ECONFIG);
    assert_null(c);
    assert_non_null(strstr(d.msg, "credentials from the scripted source expired at"));
    assert_non_null(strstr(d.msg, "could not be renewed: scripted source: no answer"));
    assert_true(calls_of(&s) >= 2);
    unsigned long ok, failed;
    el_creds_counts(p, &ok, &failed);
    assert_int_equal(ok, 0);
    assert_true(failed >= 1);
    /* a signer on this provider fails the same way, and says why */
    el_sigv4 *sg;
    assert_int_equal(el_sigv4_new_provider(p, "us-east-1", "dynamodb", NULL, &sg), EL_OK);
    const el_sigv4_header h = {"Host", "example"};
    char date[EL_SIGV4_DATE_SIZE], auth[512], why[512];
    assert_int_equal(el_sigv4_sign_request(sg, time(NULL), "POST", "/", "", &h, 1,
                                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                                           date, auth, sizeof auth, NULL),
                     EL_ECONFIG);
    assert_string_equal(auth, "");
    el_sigv4_failure(sg, why, sizeof why);
    assert_non_null(strstr(why, "the scripted source"));
    el_sigv4_free(sg);
    el_creds_free(p);
}

static void test_first_fetch_fails_or_is_expired(void **state)
{
    (void)state;
    script s;
    script_init(&s, 3600, 1);
    el_creds *p = (el_creds *)&s;
    el_diag d;
    assert_int_equal(el_creds_new(&s.base, &p, &d), EL_ENET);
    assert_null(p);
    assert_non_null(strstr(d.msg, "scripted source: no answer"));
    script_init(&s, 2, 0); /* within the margin at once */
    assert_int_equal(el_creds_new(&s.base, &p, &d), EL_ECONFIG);
    assert_non_null(strstr(d.msg, "credentials from the scripted source expired"));
}

static void test_static_provider(void **state)
{
    (void)state;
    el_creds *p;
    assert_int_equal(el_creds_new_static("AKIDSTATIC", "staticSecret", NULL, "environment", &p),
                     EL_OK);
    el_cred *c;
    assert_int_equal(el_creds_get(p, 0x7fffffff, &c, NULL), EL_OK);
    assert_string_equal(el_cred_access_key(c), "AKIDSTATIC");
    assert_int_equal(el_cred_expiration(c), 0);
    el_cred_release(c);
    char msg[64] = "x staticSecret y";
    el_creds_redact(p, msg);
    assert_string_equal(msg, "x ************ y");
    char cut[64] = "ends with staticSec";
    el_creds_redact(p, cut);
    assert_string_equal(cut, "ends with *********");
    el_creds_free(p);
    el_creds_free(NULL);
    assert_int_equal(el_creds_new_static("", "s", NULL, "x", &p), EL_EUSAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refresh_at),
        cmocka_unit_test(test_cred_new_and_refs),
        cmocka_unit_test(test_renewal_swaps_while_a_request_holds_the_old_set),
        cmocka_unit_test(test_failed_renewal_retries_then_expires),
        cmocka_unit_test(test_first_fetch_fails_or_is_expired),
        cmocka_unit_test(test_static_provider),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
