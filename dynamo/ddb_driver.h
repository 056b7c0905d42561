/*
 * ddb_driver.h - the one request driver: every DynamoDB request edgeload
 * sends in bulk (BatchWriteItem, BatchGetItem, Query, UpdateItem,
 * TransactWriteItems) goes through it.
 *
 * The caller submits a request (operation, body, estimated capacity units,
 * a completion callback) and turns the driver's crank with
 * el_ddb_driver_step. The driver owns everything between the two:
 *  - the window: at most --concurrency requests in flight (ratectl.h);
 *  - the rate the table grants, learned from its refusals (tablerate.h):
 *    every answer is its sample (units granted and refused, by the time
 *    the request was sent), and a request goes only when that rate's
 *    bucket has its units;
 *  - the capacity budget (--max-wcu / --max-rcu): a request goes only when
 *    the token bucket pays its estimate, and what DynamoDB reports as
 *    consumed settles the difference;
 *  - throttling by its cause (ThrottlingReasons): a hot key range of the
 *    table or an index is no sample of the table's rate (the other keys
 *    keep theirs; the caller may pace the keys of that request), a table
 *    or index limit, or a throttle without reasons, is; a service's
 *    x-amz-retry-after (or Retry-After) is honoured between the backoff
 *    and 5 s over it (common/backoff.h); every reason is counted;
 *  - the retry policy: throttling is retried for ever, with backoff; 5xx,
 *    resets, timeouts and cut-short answers are retried with backoff until
 *    max_retry_time_s of failure without a single success, then the driver
 *    gives up (EL_ENET); refusals (ValidationException and other 4xx) go to
 *    the callback; credentials and a missing table stop the run (the
 *    message of dynamo/ddb_errors.h); a request refused for this machine's
 *    clock is signed again and resent once when the answer's Date set the
 *    transport's clock right (el_ddb_transport.skew), and stops the run
 *    only when refused again; the kinds of every error code are one table,
 *    dynamo/ddb_errors.c (docs/LIMITS.md);
 *  - backoff: capped exponential with full jitter (common/backoff.h);
 *  - the answer: ConsumedCapacity parsed once, here.
 * The callback sees only answers that are the caller's to judge: success
 * and refusal (and throttling, when the caller asks for it). It may submit
 * new requests (a refused batch split in two) and says what becomes of its
 * own (done, or again after a backoff).
 *
 * Threads: one thread drives (submit, step, the callbacks); only
 * el_ddb_driver_wakeup may be called from another.
 *
 * Ownership: the driver owns every submitted request, the body it was
 * given and the caller's per-request state (user_size bytes it allocates
 * with the request), until the request is done. el_ddb_driver_free drops
 * whatever is not done, without callbacks: nothing is claimed finished
 * that was not answered.
 */
#ifndef EL_DDB_DRIVER_H
#define EL_DDB_DRIVER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "aws/skew.h"           /* el_skew */
#include "common/buf.h"
#include "common/error.h"
#include "dynamo/ddb_client.h"
#include "dynamo/tablerate.h"  /* el_trate_figures */

typedef struct el_ddb_driver el_ddb_driver;
typedef struct el_ddb_op el_ddb_op;

/* A rate limiter in place of the driver's own (the window's cuts and the
 * learned rate): for comparing another client's policy in the simulator
 * (tests/sim/). Called on the driver's thread; `self` is the caller's. */
typedef struct el_ddb_limiter {
    /* ms until a request of `units` may go (0: now) */
    double (*wait_ms)(void *self, double units, double now);
    /* a request of `units` goes now */
    void (*sent)(void *self, double units, double now);
    /* an answer came: throttled, or anything else */
    void (*answered)(void *self, bool throttled, double now);
    void *self;
} el_ddb_limiter;

/* How the driver paces and retries. */
/* Requests in flight when the command does not say (--concurrency): the
 * default of load and counters, and of a driver given 0. */
#define EL_DEFAULT_CONCURRENCY 16

typedef struct el_ddb_driver_opts {
    int concurrency;          /* most requests in flight; <= 0: EL_DEFAULT_CONCURRENCY */
    double units_per_s;       /* capacity budget; <= 0: none */
    double max_retry_time_s;  /* failure without a success before giving up; <= 0: 900 */
    /* Throttling answers go to the callback too (a.res.outcome
     * EL_DDB_THROTTLED, a.res.reasons): it may take the work back (DONE: a
     * load puts a batch's items back to be paced per key) or leave the
     * resend to the driver (AGAIN). Without it the driver resends them. */
    bool throttles_to_caller;
    /* Without the learned rate (tablerate.h): refusals only delay their
     * resends (the simulator's and the benchmark's comparison). */
    bool no_learned_rate;
    /* Replaces the learned rate when set (borrowed; must outlive the
     * driver). */
    const el_ddb_limiter *limiter;
    /* The backoff jitter's seed; 0: drawn from the clock and the address
     * (runs differ). A simulation gives one to be replayed exactly. */
    uint64_t seed;
} el_ddb_driver_opts;

/* What came back for a request, as its callback sees it (valid during the
 * callback only). */
typedef struct el_ddb_answer {
    el_ddb_result res;        /* EL_DDB_SUCCESS or EL_DDB_REJECTED (or EL_DDB_THROTTLED with
                                 throttles_to_caller), status, error, message, reasons */
    const char *body;         /* the response, NUL-terminated */
    size_t len;
    double consumed;          /* ConsumedCapacity CapacityUnits (all entries), 0 if absent */
    bool all_done;            /* a success whose body is no more than an empty
                                 UnprocessedItems and that ConsumedCapacity: a
                                 BatchWriteItem caller need not parse it again
                                 (el_ddb_parse_batch_write would find nothing else) */
    unsigned attempts;        /* times this request was sent, this one included */
} el_ddb_answer;

/* What becomes of a request after its callback. */
typedef enum el_ddb_verdict {
    EL_DDB_DONE = 0,          /* finished: the driver frees it */
    EL_DDB_AGAIN,             /* send the same body again after a backoff */
    EL_DDB_AGAIN_THROTTLED,   /* the same, and it counts as a throttle (its units refused, for
                                 the learned rate) */
    EL_DDB_STOP               /* stop: el_ddb_driver_step returns the error the callback set
                                 with el_ddb_driver_fail; the request is freed */
} el_ddb_verdict;

/* A request's callback: user is the request's state (el_ddb_op_user). */
typedef el_ddb_verdict (*el_ddb_done_fn)(el_ddb_driver *d, el_ddb_op *op,
                                         const el_ddb_answer *a, void *ctx);

/* Figures of everything the driver sent. */
typedef struct el_ddb_driver_stats {
    uint64_t requests;        /* sends, resends included */
    uint64_t resends;         /* sends after a throttle, a failure or AGAIN */
    uint64_t throttled;       /* throttling answers (and EL_DDB_AGAIN_THROTTLED verdicts) */
    uint64_t failures;        /* transient failures (5xx, resets, timeouts) */
    double consumed;          /* ConsumedCapacity units of every answer */
    /* throttling answers by ThrottlingReasons (one answer may give several),
     * and those that gave none */
    uint64_t by_reason[EL_THR_COUNT];
    uint64_t unspecified;
    char resource[EL_THR_COUNT][256]; /* the last resource ARN each reason named */
    el_trate_figures learned; /* the rate learned from refusals (tablerate.h) */
} el_ddb_driver_stats;

/* ---- the transport: how a request reaches DynamoDB ---- */

/* The real one is libcurl over epoll (el_ddb_driver_new); tests give a
 * scripted one (el_ddb_driver_new_with). A transport calls
 * el_ddb_driver_complete for each finished send from inside its wait. */
typedef struct el_ddb_transport {
    /* Starts sending op (el_ddb_op_name / el_ddb_op_body say what).
     * An error fails the step. */
    el_err (*send)(void *self, el_ddb_op *op);
    /* Sleeps at most timeout_ms (0: only looks) or until a wake-up, and
     * reports finished sends with el_ddb_driver_complete. */
    el_err (*wait)(void *self, el_ddb_driver *d, int timeout_ms);
    /* Forgets op, whether sent or not (the driver is dropping it). */
    void (*cancel)(void *self, el_ddb_op *op);
    /* Makes the current or next wait return; any thread. */
    void (*wakeup)(void *self);
    /* Monotonic milliseconds. */
    double (*now)(void *self);
    /* Frees the transport (with the driver). */
    void (*free)(void *self);
    void *self;
    /* The clock the transport signs by (aws/skew.h; its results carry the
     * answer's Date and the offset signed with): a request refused for the
     * clock is signed again and resent once when the answer set it right.
     * NULL: no correction. Not the driver's: it outlives the driver. */
    el_skew *skew;
} el_ddb_transport;

/* A driver on the real transport: ddb's requests over a curl multi handle
 * driven by epoll. Borrows ddb, which must outlive it. *out NULL on
 * failure (EL_ENOMEM; EL_EIO when no descriptor is left for epoll). */
el_err el_ddb_driver_new(el_ddb *ddb, const el_ddb_driver_opts *o, el_ddb_driver **out,
                         el_diag *diag) EL_MUST_USE;

/* A driver on transport t (taken: freed with the driver, also on failure). */
el_err el_ddb_driver_new_with(const el_ddb_transport *t, const el_ddb_driver_opts *o,
                              const el_aws_config *cfg, el_ddb_driver **out,
                              el_diag *diag) EL_MUST_USE;

/* Drops every request not done (no callbacks), frees the transport. NULL
 * is a no-op. */
void el_ddb_driver_free(el_ddb_driver *d);

/*
 * Queues a request of operation op ("BatchWriteItem") with body (taken: the
 * el_buf is left empty, perhaps with the storage of an earlier request to
 * build the next one into) estimated at `units` capacity units, to go when the
 * window and the budget allow. *user gets user_size zeroed bytes that live
 * as long as the request (NULL when user_size is 0). done is called with
 * ctx when it is answered. EL_ENOMEM (the body is freed) or EL_EUSAGE for
 * an operation name of 128 bytes or more.
 */
el_err el_ddb_driver_submit(el_ddb_driver *d, const char *op, el_buf *body, double units,
                            el_ddb_done_fn done, void *ctx, size_t user_size,
                            void **user) EL_MUST_USE;

/* True when a request submitted now could go at the next step: the window
 * has a slot for it beside those in flight and those submitted and not yet
 * sent. Callers that form requests from a backlog (the load's batcher) ask
 * this first, so requests wait in their backlog, not in the driver. */
bool el_ddb_driver_wants(const el_ddb_driver *d);

/* Requests submitted and not done (waiting, in flight, or to be resent). */
size_t el_ddb_driver_pending(const el_ddb_driver *d);

/* Requests on the wire now. */
size_t el_ddb_driver_inflight(const el_ddb_driver *d);

/*
 * Sends what may go, then waits until an answer comes, until wake_at (ms on
 * the driver's clock; < 0: no wish of the caller's), until the driver's own
 * next resend or budget is due, or until el_ddb_driver_wakeup; answers are
 * handled (callbacks run) before it returns. EL_OK, or the error that stops
 * the run (diag says why): EL_ENET after max_retry_time_s of failures,
 * EL_ESERVICE for refused credentials or a missing table, a callback's
 * EL_DDB_STOP error, EL_EIO/EL_ENOMEM from the transport.
 */
el_err el_ddb_driver_step(el_ddb_driver *d, double wake_at, el_diag *diag) EL_MUST_USE;

/*
 * One request, waited for: submits it, steps until it is answered (other
 * requests in flight go on meanwhile) and appends the answer's body to
 * response. EL_OK for a success; a refusal is EL_ESERVICE with diag
 * "<op> refused: <type>: <message>"; otherwise what step returned.
 */
el_err el_ddb_driver_call(el_ddb_driver *d, const char *op, el_buf *body, double units,
                          el_buf *response, el_diag *diag) EL_MUST_USE;

/* Any thread: makes the current or next step return soon. */
void el_ddb_driver_wakeup(el_ddb_driver *d);

/* From a request's callback: `units` of the answer were refused inside a
 * successful answer (BatchWriteItem's UnprocessedItems, BatchGetItem's
 * UnprocessedKeys, a transaction cancelled for throughput) by the table's
 * or the index's limit or at random, not by a hot key the caller paces.
 * The learned rate (tablerate.h) takes them, with what the answer
 * granted, as its sample; they are taken off what the answer counts as
 * granted when it reported no ConsumedCapacity. The answer is not counted
 * as throttled: the caller counts what it resends. Outside a callback it
 * does nothing. */
void el_ddb_driver_note_refused(el_ddb_driver *d, double units);

/* While held, step sends nothing (no fresh request, no resend) and only
 * collects the answers of what is in flight: for a run that is stopping
 * and lets the wire drain. */
void el_ddb_driver_hold(el_ddb_driver *d, bool hold);

/* The most units one request should cost: the budget's bucket (half a
 * second of it), so that requests formed from a backlog stay within one
 * bucket; 0 without a budget. */
double el_ddb_driver_max_units(const el_ddb_driver *d);

/* For a callback returning EL_DDB_STOP: the error step returns. */
void el_ddb_driver_fail(el_ddb_driver *d, el_err err, const el_diag *why);

/* The driver's clock (monotonic ms; the transport's). */
double el_ddb_driver_now(const el_ddb_driver *d);

/* Requests allowed in flight (the window). */
int el_ddb_driver_window(const el_ddb_driver *d);

/* Backoff before the next send of a request sent `attempts` times (the
 * jitter drawn from the driver's generator): for callers that hold work
 * back themselves (items put back into the batcher). */
double el_ddb_driver_backoff_ms(el_ddb_driver *d, unsigned attempts);

const el_ddb_driver_stats *el_ddb_driver_stats_get(const el_ddb_driver *d);

/* ---- one request ---- */

/* The caller's state of the request (user_size bytes given at submit). */
void *el_ddb_op_user(el_ddb_op *op);
const char *el_ddb_op_name(const el_ddb_op *op);
const char *el_ddb_op_body(const el_ddb_op *op, size_t *len);
/* The estimate the budget paid for it. */
double el_ddb_op_units(const el_ddb_op *op);

/* For transports: slots they may use for their own per-request handle. */
void *el_ddb_op_transport(const el_ddb_op *op);
void el_ddb_op_set_transport(el_ddb_op *op, void *handle);

/* For transports: send `op` finished with result res and response body
 * (body NULL when there was none; copied if kept). Called from inside
 * transport->wait. */
void el_ddb_driver_complete(el_ddb_driver *d, el_ddb_op *op, const el_ddb_result *res,
                            const char *body, size_t len);

#endif
