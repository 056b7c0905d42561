/*
 * test_netloop.c - the socket_action loop: a wake-up from another thread
 * ends a sleep, transfers finish (many in flight, kept-alive connections
 * reused), and a connection reset or a silent server ends the transfer with
 * libcurl's error, reset at once and the silent one by its timeout timer,
 * never by hanging.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>  /* htonl: the test server's address */
#include <pthread.h>    /* the test server, the waking thread */
#include <stdatomic.h>  /* server counters read by the test */
#include <stdbool.h>    /* bool */
#include <stdint.h>     /* intptr_t: a descriptor through a thread argument */
#include <stdio.h>      /* snprintf */
#include <string.h>     /* strstr, memset */
#include <sys/socket.h> /* the test server */
#include <time.h>       /* clock_gettime, nanosleep */
#include <unistd.h>     /* close */

#include "dynamo/netloop.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ---- a tiny HTTP server: one thread per connection ---- */

enum mode { ANSWER, RESET, SILENT };

static struct {
    int lfd, port;
    enum mode mode;
    atomic_int connections, requests;
    atomic_int live;         /* connection threads still running */
    atomic_bool stop;
    pthread_t acceptor;
} srv;

static void *connection(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char buf[4096];
    size_t have = 0;
    while (!atomic_load(&srv.stop)) {
        ssize_t got = recv(fd, buf + have, sizeof buf - 1 - have, 0);
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (!end)
            continue;
        atomic_fetch_add(&srv.requests, 1);
        have = 0; /* GET requests only: nothing after the headers */
        if (srv.mode == RESET) {
            struct linger lg = { 1, 0 }; /* close with a RST */
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            break;
        }
        if (srv.mode == SILENT) {
            while (!atomic_load(&srv.stop))
                sleep_ms(10);
            break;
        }
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        if (send(fd, ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1))
            break;
    }
    close(fd);
    atomic_fetch_sub(&srv.live, 1);
    return NULL;
}

static void *acceptor(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(srv.lfd, NULL, NULL);
        if (fd < 0)
            return NULL; /* the listening socket was shut down */
        atomic_fetch_add(&srv.connections, 1);
        atomic_fetch_add(&srv.live, 1);
        pthread_t t;
        pthread_create(&t, NULL, connection, (void *)(intptr_t)fd);
        pthread_detach(t);
    }
}

static void srv_start(enum mode mode)
{
    memset(&srv, 0, sizeof srv);
    srv.mode = mode;
    srv.lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(srv.lfd >= 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    assert_int_equal(bind(srv.lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(srv.lfd, 64), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(srv.lfd, (struct sockaddr *)&a, &len), 0);
    srv.port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&srv.acceptor, NULL, acceptor, NULL), 0);
}

static void srv_stop(void)
{
    atomic_store(&srv.stop, true);
    shutdown(srv.lfd, SHUT_RDWR);
    pthread_join(srv.acceptor, NULL);
    close(srv.lfd);
    /* the client closed its connections: every thread ends (before the
     * next test resets srv) */
    for (int i = 0; i < 500 && atomic_load(&srv.live) > 0; i++)
        sleep_ms(10);
    assert_int_equal(atomic_load(&srv.live), 0);
}

/* ---- driving transfers ---- */

typedef struct xfer {
    CURL *easy;
    char body[64];
    size_t len;
    CURLcode code;
    bool done;
} xfer;

static size_t on_body(char *p, size_t size, size_t n, void *user)
{
    xfer *x = user;
    size_t len = size * n;
    if (x->len + len < sizeof x->body) {
        memcpy(x->body + x->len, p, len);
        x->len += len;
    }
    return len;
}

static void xfer_init(xfer *x, long timeout_ms)
{
    memset(x, 0, sizeof *x);
    x->easy = curl_easy_init();
    assert_non_null(x->easy);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", srv.port);
    curl_easy_setopt(x->easy, CURLOPT_URL, url);
    curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
    curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
}

/* Runs the loop as the loader does until every transfer is done or
 * limit_ms passes; returns how many finished. */
static int drive(el_netloop *l, xfer *xs, int n, double limit_ms)
{
    CURLM *m = el_netloop_multi(l);
    for (int i = 0; i < n; i++)
        assert_int_equal(curl_multi_add_handle(m, xs[i].easy), CURLM_OK);
    int done = 0;
    double until = now_ms() + limit_ms;
    while (done < n && now_ms() < until) {
        el_netloop_run_timers(l);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            xfer *x = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            x->code = msg->data.result;
            x->done = true;
            curl_multi_remove_handle(m, x->easy);
            done++;
        }
        if (done < n)
            assert_int_equal(el_netloop_wait(l, 1000), EL_OK);
    }
    return done;
}

static void xfers_free(xfer *xs, int n)
{
    for (int i = 0; i < n; i++)
        curl_easy_cleanup(xs[i].easy);
}

static void test_new_free(void **state)
{
    (void)state;
    el_netloop_free(NULL);
    el_netloop *l;
    assert_int_equal(el_netloop_new(&l), EL_OK);
    assert_non_null(l);
    assert_non_null(el_netloop_multi(l));
    /* nothing to do: a 0 ms wait only looks */
    double t0 = now_ms();
    assert_int_equal(el_netloop_wait(l, 0), EL_OK);
    assert_true(now_ms() - t0 < 200);
    /* and a timed wait with nothing happening lasts about its timeout */
    t0 = now_ms();
    assert_int_equal(el_netloop_wait(l, 50), EL_OK);
    assert_true(now_ms() - t0 >= 45);
    el_netloop_free(l);
}

static void *waker(void *arg)
{
    sleep_ms(50);
    el_netloop_wakeup(arg);
    return NULL;
}

static void test_wakeup_from_another_thread(void **state)
{
    (void)state;
    el_netloop *l;
    assert_int_equal(el_netloop_new(&l), EL_OK);
    for (int round = 0; round < 3; round++) { /* the eventfd is reset each time */
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, waker, l), 0);
        double t0 = now_ms();
        assert_int_equal(el_netloop_wait(l, 10000), EL_OK);
        double took = now_ms() - t0;
        pthread_join(t, NULL);
        assert_true(took < 5000);
    }
    /* a wake-up sent before the wait is not lost */
    el_netloop_wakeup(l);
    double t0 = now_ms();
    assert_int_equal(el_netloop_wait(l, 10000), EL_OK);
    assert_true(now_ms() - t0 < 5000);
    /* and is consumed: the next wait sleeps its timeout */
    t0 = now_ms();
    assert_int_equal(el_netloop_wait(l, 50), EL_OK);
    assert_true(now_ms() - t0 >= 45);
    el_netloop_free(l);
}

static void test_transfers_finish_and_reuse_connections(void **state)
{
    (void)state;
    srv_start(ANSWER);
    el_netloop *l;
    assert_int_equal(el_netloop_new(&l), EL_OK);
    curl_multi_setopt(el_netloop_multi(l), CURLMOPT_MAX_HOST_CONNECTIONS, 4L);
    enum { N = 12 };
    xfer xs[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            xfer_init(&xs[i], 10000);
        assert_int_equal(drive(l, xs, N, 20000), N);
        for (int i = 0; i < N; i++) {
            assert_int_equal(xs[i].code, CURLE_OK);
            assert_int_equal(xs[i].len, 2);
            assert_memory_equal(xs[i].body, "ok", 2);
        }
        xfers_free(xs, N);
    }
    assert_int_equal(atomic_load(&srv.requests), 3 * N);
    /* at most 4 connections at a time, kept alive between rounds */
    assert_true(atomic_load(&srv.connections) <= 4);
    el_netloop_free(l);
    srv_stop();
}

static void test_reset_ends_the_transfer(void **state)
{
    (void)state;
    srv_start(RESET);
    el_netloop *l;
    assert_int_equal(el_netloop_new(&l), EL_OK);
    xfer xs[3];
    for (int i = 0; i < 3; i++)
        xfer_init(&xs[i], 10000);
    double t0 = now_ms();
    assert_int_equal(drive(l, xs, 3, 20000), 3);
    assert_true(now_ms() - t0 < 5000); /* at once, not by the 10 s timeout */
    for (int i = 0; i < 3; i++) {
        assert_int_not_equal(xs[i].code, CURLE_OK);
        assert_int_not_equal(xs[i].code, CURLE_OPERATION_TIMEDOUT);
    }
    xfers_free(xs, 3);
    el_netloop_free(l);
    srv_stop();
}

static void test_silent_server_times_out(void **state)
{
    (void)state;
    srv_start(SILENT);
    el_netloop *l;
    assert_int_equal(el_netloop_new(&l), EL_OK);
    xfer xs[2];
    for (int i = 0; i < 2; i++)
        xfer_init(&xs[i], 300);
    double t0 = now_ms();
    /* nothing moves on the sockets: only libcurl's timer can end these */
    assert_int_equal(drive(l, xs, 2, 20000), 2);
    double took = now_ms() - t0;
    assert_true(took >= 250);
    assert_true(took < 5000);
    for (int i = 0; i < 2; i++)
        assert_int_equal(xs[i].code, CURLE_OPERATION_TIMEDOUT);
    xfers_free(xs, 2);
    el_netloop_free(l);
    srv_stop();
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_free),
        cmocka_unit_test(test_wakeup_from_another_thread),
        cmocka_unit_test(test_transfers_finish_and_reuse_connections),
        cmocka_unit_test(test_reset_ends_the_transfer),
        cmocka_unit_test(test_silent_server_times_out),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return failed;
}
