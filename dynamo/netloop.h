/*
 * netloop.h - a curl multi handle driven by curl_multi_socket_action over
 * an epoll set, with a wake-up any thread may send.
 *
 * Why not curl_multi_perform: perform looks at every transfer in flight
 * each time it is called (a zero-timeout poll per transfer against a server
 * that has not answered yet), so a network loop that calls it on every
 * wake-up pays O(transfers) system calls per answer. Here libcurl tells us
 * which sockets it waits on (CURLMOPT_SOCKETFUNCTION) and when its next
 * timeout is due (CURLMOPT_TIMERFUNCTION); only sockets epoll reports ready
 * are handed back to it, and its timers run when due.
 *
 * Single-threaded except el_netloop_wakeup. Use:
 *
 *     el_netloop_new(&l);  CURLM *m = el_netloop_multi(l);
 *     loop: curl_multi_add_handle(m, ...);        start transfers
 *           el_netloop_run_timers(l);             send what was added
 *           curl_multi_info_read(m, ...);         collect answers
 *           el_netloop_wait(l, ms);               sleep until something moves
 *     el_netloop_free(l);
 */
#ifndef EL_NETLOOP_H
#define EL_NETLOOP_H

#include <curl/curl.h> /* CURLM */

#include "common/error.h"

typedef struct el_netloop el_netloop;

/* A loop with its own multi handle, epoll set and wake-up eventfd. On
 * failure (EL_ENOMEM, or EL_EIO when no descriptor is left) *out is NULL. */
el_err el_netloop_new(el_netloop **out) EL_MUST_USE;

/* Cleans up the multi handle (remove every easy handle from it first), then
 * closes the descriptors. NULL is a no-op. No el_netloop_wakeup may run
 * during or after this call: callers guard the pointer (see load_run.c). */
void el_netloop_free(el_netloop *l);

/* The multi handle, owned by the loop: add and remove easy handles, set
 * options, read messages; never call curl_multi_perform or
 * curl_multi_poll/wait on it. */
CURLM *el_netloop_multi(el_netloop *l);

/* Runs libcurl's timers that are due (new transfers are started by a timer
 * of 0 ms, so call it after adding handles). Never blocks. */
void el_netloop_run_timers(el_netloop *l);

/* Sleeps at most timeout_ms (0: only looks), less when libcurl's next
 * timer is due sooner, until a socket is ready or el_netloop_wakeup is
 * called; hands ready sockets to libcurl and runs due timers. Returns
 * EL_OK (a signal counts as a wake-up) or EL_EIO if epoll fails. */
el_err el_netloop_wait(el_netloop *l, int timeout_ms) EL_MUST_USE;

/* Makes the current or next el_netloop_wait return. Any thread; cheap
 * (one write), but callers should only wake a loop that sleeps. */
void el_netloop_wakeup(el_netloop *l);

#endif
