/*
 * test_skew.c - aws/skew.c: which refusals are the clock's, how far the
 * Date header must be before it is believed, the once-per-correction
 * report, the requests signed before a correction, the Date header's
 * form; on an injected wall clock.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>  /* the concurrent corrections */
#include <stdio.h>    /* snprintf */
#include <string.h>   /* strcmp, strlen */

#include "aws/skew.h"

/* 2024-06-11T10:30:12Z, the machine's clock in these tests */
#define T0 ((time_t)1718101812)

static time_t machine;

static time_t wall(void *user)
{
    (void)user;
    return machine;
}

typedef struct heard {
    int reports;
    long offset;
    char service[32];
} heard;

static void on_report(void *user, const char *service, long offset)
{
    heard *h = user;
    h->reports++;
    h->offset = offset;
    snprintf(h->service, sizeof h->service, "%s", service);
}

static el_skew *clock_of(heard *h)
{
    machine = T0;
    el_skew *s;
    assert_int_equal(el_skew_new("DynamoDB", wall, NULL, on_report, h, &s), EL_OK);
    return s;
}

static const char expired[] = "Signature expired: 20240611T102012Z is now earlier than "
                              "20240611T102512Z (20240611T103012Z - 5 min.)";

/* A clock 10 minutes behind: the refusal's Date sets it, once. */
static void test_explicit_refusal_corrects(void **state)
{
    (void)state;
    heard h = {0};
    el_skew *s = clock_of(&h);
    long off;
    assert_true(el_skew_now(s, &off) == T0 && off == 0);
    assert_true(el_skew_correct(s, "InvalidSignatureException", expired, 400, T0 + 600, 0));
    assert_int_equal(el_skew_offset(s), 600);
    assert_true(el_skew_now(s, &off) == T0 + 600 && off == 600);
    assert_int_equal(h.reports, 1);
    assert_int_equal(h.offset, 600);
    assert_string_equal(h.service, "DynamoDB");
    /* the machine's clock runs on; the offset stays */
    machine += 30;
    assert_true(el_skew_now(s, NULL) == T0 + 630);

    /* a request signed before the correction is sent again, without a
     * second report; one signed after it is not: AWS refuses it still */
    assert_true(el_skew_correct(s, "InvalidSignatureException", expired, 400, T0 + 631, 0));
    assert_false(el_skew_correct(s, "InvalidSignatureException", expired, 400, T0 + 631, 600));
    assert_int_equal(h.reports, 1);

    /* the clock is stepped right later (NTP): "not yet current" sets it back */
    machine = T0 + 700;
    assert_true(el_skew_correct(s, "InvalidSignatureException",
                                "Signature not yet current: 20240611T104212Z is still later "
                                "than 20240611T103712Z", 400, T0 + 700, 600));
    assert_int_equal(el_skew_offset(s), 0);
    assert_int_equal(h.reports, 2);
    el_skew_free(s);
}

/* The codes that say the time is wrong, and the S3 and STS forms. */
static void test_explicit_codes(void **state)
{
    (void)state;
    static const char *const codes[] = {"RequestTimeTooSkewed", "RequestExpired",
                                        "RequestInTheFuture"};
    for (size_t i = 0; i < 3; i++) {
        heard h = {0};
        el_skew *s = clock_of(&h);
        assert_true(el_skew_correct(s, codes[i], "", 403, T0 - 900, 0));
        assert_int_equal(el_skew_offset(s), -900);
        el_skew_free(s);
    }
    heard h = {0};
    el_skew *s = clock_of(&h);
    /* STS says it with SignatureDoesNotMatch and AWS's words */
    assert_true(el_skew_correct(s, "SignatureDoesNotMatch", expired, 403, T0 + 120, 0));
    assert_int_equal(el_skew_offset(s), 120);
    el_skew_free(s);
}

/* A refusal that may as well be a wrong secret is taken for the clock's
 * only past 4 minutes; one that names the time past a minute. */
static void test_thresholds(void **state)
{
    (void)state;
    heard h = {0};
    el_skew *s = clock_of(&h);
    assert_false(el_skew_correct(s, "SignatureDoesNotMatch", "The request signature we "
                                 "calculated does not match", 403, T0 + 239, 0));
    assert_false(el_skew_correct(s, "InvalidSignatureException", "bad", 400, T0 - 120, 0));
    assert_false(el_skew_correct(s, "RequestTimeTooSkewed", "", 403, T0 + 59, 0));
    assert_int_equal(h.reports, 0);
    assert_true(el_skew_correct(s, "AuthFailure", "", 401, T0 + 240, 0));
    assert_int_equal(el_skew_offset(s), 240);
    /* an S3 HEAD's 403 has no body: its status is all there is */
    el_skew_free(s);
    s = clock_of(&h);
    assert_false(el_skew_correct(s, "", "", 404, T0 + 900, 0));
    assert_true(el_skew_correct(s, "", "", 403, T0 + 900, 0));
    el_skew_free(s);
}

/* What is not the clock's is never corrected; a refusal without a Date
 * (a proxy dropped it) cannot be. */
static void test_not_the_clock(void **state)
{
    (void)state;
    heard h = {0};
    el_skew *s = clock_of(&h);
    assert_false(el_skew_correct(s, "ValidationException", "bad", 400, T0 + 600, 0));
    assert_false(el_skew_correct(s, "ProvisionedThroughputExceededException", "", 400, T0 + 600,
                                 0));
    assert_false(el_skew_correct(s, "ExpiredTokenException", "The security token included in "
                                 "the request is expired", 400, T0 + 600, 0));
    assert_false(el_skew_correct(s, "InvalidSignatureException", expired, 400, 0, 0));
    assert_false(el_skew_correct(NULL, "InvalidSignatureException", expired, 400, T0 + 600, 0));
    assert_int_equal(el_skew_offset(s), 0);
    assert_int_equal(h.reports, 0);
    assert_true(el_skew_is_clock_refusal("RequestExpired", "", 400));
    assert_true(el_skew_is_clock_refusal("SignatureDoesNotMatch", "", 403));
    assert_false(el_skew_is_clock_refusal("AccessDeniedException", "", 400));
    /* no clock given: time() */
    assert_true(el_skew_now(NULL, NULL) >= T0);
    el_skew_free(s);
    el_skew_free(NULL);
}

/* Requests refused at once on many threads move the clock once. */
typedef struct racer {
    el_skew *s;
    int corrected;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    r->corrected = el_skew_correct(r->s, "InvalidSignatureException", expired, 400, T0 + 600, 0);
    return NULL;
}

static void test_concurrent_corrections(void **state)
{
    (void)state;
    heard h = {0};
    el_skew *s = clock_of(&h);
    pthread_t t[8];
    racer r[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (racer){s, 0};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_true(r[i].corrected); /* each is signed again */
    }
    assert_int_equal(h.reports, 1);
    assert_int_equal(el_skew_offset(s), 600);
    el_skew_free(s);
}

static void test_http_date(void **state)
{
    (void)state;
    time_t t;
    const char *d = "Tue, 11 Jun 2024 10:30:12 GMT";
    assert_true(el_http_date_parse(d, strlen(d), &t));
    assert_true(t == T0);
    const char *padded = "  Sun, 06 Nov 1994 08:49:37 GMT\r\n";
    assert_true(el_http_date_parse(padded, strlen(padded), &t));
    assert_true(t == 784111777);
    static const char *const bad[] = {
        "Sunday, 06-Nov-94 08:49:37 GMT", /* RFC 850: AWS does not send it */
        "Sun Nov  6 08:49:37 1994",       /* asctime */
        "Sun, 06 Now 1994 08:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:3x GMT", "", "Sun, 06 Nov 1994 08:49:37 GMTX"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(el_http_date_parse(bad[i], strlen(bad[i]), &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_explicit_refusal_corrects),
        cmocka_unit_test(test_explicit_codes),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_not_the_clock),
        cmocka_unit_test(test_concurrent_corrections),
        cmocka_unit_test(test_http_date),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
