/*
 * pacer.h - per-key pacing: the partition keys DynamoDB throttles on their
 * own are sent at the rate they are granted.
 *
 * A partition key (of the table or of an index) gets at most 1,000 write
 * units a second from its partition, whatever the table's capacity. A load
 * that keeps sending such a key's rows at the pace of the rest has them
 * refused and resent. The pacer finds those keys and says when the next
 * write of each may go, so that its rows wait (outside the load's window:
 * batcher.h) instead of being refused.
 *
 * Which key is hot: an answer that hands items back does not say why, and
 * items come back for three reasons: a hot key, the table's limit (items
 * of every key) and chance (a share of every key). Only the first refuses
 * one key's items more often than the rest, so a key is paced when the
 * share of its writes refused exceeds the share refused of all keys not
 * paced over the same time (since the key was first refused, about the
 * last second) by a significant margin: three standard errors over the
 * key's answers, at least 5 points, with at least three refusals among
 * twenty answers. A throttle whose reason names the
 * key's range (ThrottlingReasons) paces it at once.
 *
 * A paced key goes at a partition's 1,000 units a second (sent: more by
 * the share chance refuses of every key, so that 1,000 are written).
 * While its share refused stays above the rest's it is cut to 95 % of
 * what it was granted (under a partition's rate only when it is refused
 * even at that). While it is not,
 * its rate grows: by 1 % a second after a quiet second, twice as fast for
 * each further quiet second, up to doubling a second, and never past
 * twice what it is granted. A key paced by chance (its rows were not
 * refused for being its) is so released within seconds; a hot one is
 * refused again and cut back. A key not refused for 30 seconds is
 * forgotten.
 *
 * Pure data structure: no threads, no I/O; the sender owns it. Times are
 * milliseconds of the caller's monotonic clock.
 */
#ifndef EL_PACER_H
#define EL_PACER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

typedef struct el_pacer el_pacer;

/* Which partition a key is of: a value may be a table key and an index key
 * at once (USER#bob is the PK of bob's items and GSI1PK of his followers'). */
typedef enum el_pacer_kind { EL_PACE_TABLE = 0, EL_PACE_INDEX = 1 } el_pacer_kind;

/* A partition's write limit, units a second: no key is paced below it
 * unless refused even at it. */
#define EL_PACER_PARTITION_WCU 1000.0

el_pacer *el_pacer_new(void);
void el_pacer_free(el_pacer *p);

/* True when no key is paced (el_pacer_reserve would return now for all). */
bool el_pacer_idle(const el_pacer *p);

/* True when no key is watched: el_pacer_granted need not be called. */
bool el_pacer_empty(const el_pacer *p);

/* An answer at now: `refused` of `answered` writes of keys not paced were
 * refused. Call it once per answer, before the calls for its writes: the
 * keys are measured against these. */
void el_pacer_answer(el_pacer *p, double refused, double answered, double now);

/* A write of `units` to partition key h was refused at now. sure: the
 * refusal named the key's range (a key-range throttle). label
 * (may be NULL, len bytes, need not be NUL-terminated): the key's value,
 * kept for the summary. EL_ENOMEM leaves the pacer as it was. */
el_err el_pacer_refused(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, bool sure,
                        const char *label, size_t len, double now) EL_MUST_USE;

/* A write of `units` to key h was accepted at now (counted for watched
 * keys). */
void el_pacer_granted(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now);

/* Whether key h is paced now. */
bool el_pacer_paced(const el_pacer *p, el_pacer_kind kind, uint64_t h);

/* When a write of `units` to key h may go, and that time reserved for it:
 * now (or earlier) for a key not paced. A time at or beyond now + horizon
 * (horizon > 0) is not reserved: ask again then. */
double el_pacer_reserve(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now,
                        double horizon);

/* Forgets keys not refused for 30 s; call now and then (cheap when few). */
void el_pacer_expire(el_pacer *p, double now);

/* Figures: keys paced at some time in the run, and the key refused most
 * (its kind, label and refusals; false when none was paced). */
typedef struct el_pacer_stats {
    uint64_t keys_paced;     /* distinct keys that were paced */
    uint64_t paced_now;      /* keys paced at this moment */
    bool has_hottest;
    el_pacer_kind hottest_kind;
    char hottest[160];       /* its value, cut to fit */
    uint64_t hottest_refusals;
    double hottest_rate;     /* units/s it is paced at (its last) */
} el_pacer_stats;

void el_pacer_stats_get(const el_pacer *p, el_pacer_stats *out);

#endif
