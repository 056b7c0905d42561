/*
 * netloop.c - curl_multi_socket_action over epoll (see netloop.h).
 *
 * DESIGN: libcurl keeps the list of sockets and what it waits for on each;
 * we mirror it in an epoll set (one epoll_ctl when its wish changes) and
 * remember one deadline, its next timer. The wake-up is an eventfd in the
 * same set, so a reader handing over a chunk ends the sleep like a socket
 * would. Level-triggered: a socket libcurl did not drain is reported again.
 * curl_multi_assign marks the sockets that are in the set, so a new socket
 * is ADDed and a known one MODified without a lookup of our own.
 */
#include "dynamo/netloop.h"

#include <errno.h>       /* EINTR, ENOENT, EEXIST */
#include <stdint.h>      /* uint64_t: the eventfd counter */
#include <stdlib.h>      /* calloc, free */
#include <sys/epoll.h>   /* the readiness set */
#include <sys/eventfd.h> /* the cross-thread wake-up */
#include <time.h>        /* clock_gettime: timer deadlines */
#include <unistd.h>      /* close, read, write */

/* Ready sockets handed to libcurl per epoll_wait: more than --concurrency's
 * default; a busier set is served over more calls, nothing is lost. */
#define MAX_EVENTS 64
/* Timers run back to back by one el_netloop_run_timers: a timer of 0 ms set
 * while a timer runs is run at once, a few times, not forever. */
#define MAX_TIMER_ROUNDS 4

struct el_netloop {
    CURLM *multi;
    int epfd;
    int evfd;           /* eventfd: written by el_netloop_wakeup, any thread */
    double deadline_ms; /* libcurl's next timer (monotonic ms), < 0 = none */
};

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* CURLMOPT_SOCKETFUNCTION: libcurl says what it waits for on s. */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *user, void *sockp)
{
    el_netloop *l = user;
    if (what == CURL_POLL_REMOVE) {
        /* called before libcurl closes s, so s is still ours to delete */
        if (sockp) {
            epoll_ctl(l->epfd, EPOLL_CTL_DEL, s, NULL);
            curl_multi_assign(l->multi, s, NULL);
        }
        return 0;
    }
    struct epoll_event ev = { .events = 0, .data.fd = s };
    if (what & CURL_POLL_IN)
        ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT)
        ev.events |= EPOLLOUT;
    int op = sockp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(l->epfd, op, s, &ev) != 0) {
        /* our mark and the set disagree (a descriptor number reused after
         * a close we were not told of): the other operation fits */
        if (errno == ENOENT)
            epoll_ctl(l->epfd, EPOLL_CTL_ADD, s, &ev);
        else if (errno == EEXIST)
            epoll_ctl(l->epfd, EPOLL_CTL_MOD, s, &ev);
    }
    if (!sockp)
        curl_multi_assign(l->multi, s, l);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: libcurl's next timeout changed (-1: none). */
static int on_timer(CURLM *multi, long timeout_ms, void *user)
{
    el_netloop *l = user;
    l->deadline_ms = timeout_ms < 0 ? -1 : mono_ms() + (double)timeout_ms;
    return 0;
}

el_err el_netloop_new(el_netloop **out)
{
    *out = NULL;
    el_netloop *l = calloc(1, sizeof *l);
    if (!l)
        return EL_ENOMEM;
    l->epfd = l->evfd = -1;
    l->deadline_ms = -1;
    l->multi = curl_multi_init();
    if (!l->multi) {
        el_netloop_free(l);
        return EL_ENOMEM;
    }
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = l->evfd };
    if (l->epfd < 0 || l->evfd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev) != 0) {
        el_netloop_free(l);
        return EL_EIO;
    }
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
    *out = l;
    return EL_OK;
}

void el_netloop_free(el_netloop *l)
{
    if (!l)
        return;
    /* cleanup closes cached connections and tells on_socket: the set must
     * still be open */
    if (l->multi)
        curl_multi_cleanup(l->multi);
    if (l->evfd >= 0)
        close(l->evfd);
    if (l->epfd >= 0)
        close(l->epfd);
    free(l);
}

CURLM *el_netloop_multi(el_netloop *l)
{
    return l->multi;
}

void el_netloop_run_timers(el_netloop *l)
{
    int running;
    for (int i = 0; i < MAX_TIMER_ROUNDS && l->deadline_ms >= 0 && l->deadline_ms <= mono_ms();
         i++) {
        /* one-shot, like a timer event: libcurl sets the next one */
        l->deadline_ms = -1;
        curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
}

el_err el_netloop_wait(el_netloop *l, int timeout_ms)
{
    if (timeout_ms < 0)
        timeout_ms = 0;
    if (l->deadline_ms >= 0) {
        double left = l->deadline_ms - mono_ms();
        int t = left <= 0 ? 0 : (int)left + 1; /* +1: not a millisecond early */
        if (t < timeout_ms)
            timeout_ms = t;
    }
    struct epoll_event ev[MAX_EVENTS];
    int n = epoll_wait(l->epfd, ev, MAX_EVENTS, timeout_ms);
    if (n < 0 && errno != EINTR)
        return EL_EIO;
    int running;
    for (int i = 0; i < n; i++) {
        int fd = ev[i].data.fd;
        if (fd == l->evfd) {
            uint64_t count;
            ssize_t got = read(l->evfd, &count, sizeof count); /* resets it */
            (void)got;
            continue;
        }
        int mask = 0;
        if (ev[i].events & (EPOLLIN | EPOLLHUP))
            mask |= CURL_CSELECT_IN;
        if (ev[i].events & EPOLLOUT)
            mask |= CURL_CSELECT_OUT;
        if (ev[i].events & EPOLLERR)
            mask |= CURL_CSELECT_ERR;
        curl_multi_socket_action(l->multi, fd, mask, &running);
    }
    el_netloop_run_timers(l);
    return EL_OK;
}

void el_netloop_wakeup(el_netloop *l)
{
    uint64_t one = 1;
    /* a full counter (2^64 - 2 unread wake-ups) fails with EAGAIN: the loop
     * is woken anyway */
    ssize_t put = write(l->evfd, &one, sizeof one);
    (void)put;
}
