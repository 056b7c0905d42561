/*
 * pacer.h - per-key pacing: the partition keys DynamoDB throttles on their
 * own are sent at the rate they are granted.
 *
 * A partition key (of the table or of an index) gets at most so many write
 * units a second from its partition, whatever the table's capacity. A load
 * that keeps sending such a key's rows at the pace of the rest has them
 * refused and resent, and every refused batch carries other keys' items
 * with it. The pacer learns, per key that was refused, the rate at which
 * its writes are accepted, and says when the next write of that key may
 * go, so that the key's writes stop being sent only to be refused while
 * the other keys keep the window.
 *
 * A key is paced from its first refusal that names it alone (a key-range
 * throttle: el_pacer_refused with sure) or when a second, different item
 * of it is refused within two seconds (UnprocessedItems name their keys,
 * not the cause: a table at its limit hands back items of every key, and
 * the same item again when its resend meets the limit too; a hot key
 * hands back one item after another). Its rate starts
 * at a partition's write limit (1,000 units/s) and halves at each refusal
 * until a quarter of a second of grants has been seen; from then a refusal sets it just
 * under the rate actually granted over the last seconds, and it creeps up
 * (1 % a second) while nothing is refused, to find room that opens. A key
 * not refused for 30 seconds is forgotten.
 *
 * Pure data structure: no threads, no I/O; the load's network stage owns it.
 * Times are milliseconds of the caller's monotonic clock.
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

el_pacer *el_pacer_new(void);
void el_pacer_free(el_pacer *p);

/* True when no key is paced (el_pacer_reserve would return now for all). */
bool el_pacer_idle(const el_pacer *p);

/* A write of item `item` (its key's hash) to partition key h
 * was refused at now. sure: the refusal named the key's range (a key-range
 * throttle), pace it at once; otherwise it is paced when another item of
 * it is refused within two seconds. label (may be NULL, len
 * bytes, need not be NUL-terminated): the key's value, kept for the
 * summary. EL_ENOMEM leaves the pacer as it was. */
el_err el_pacer_refused(el_pacer *p, el_pacer_kind kind, uint64_t h, uint64_t item, bool sure,
                        const char *label, size_t len, double now) EL_MUST_USE;

/* A write of `units` to key h was accepted at now (counted for paced keys). */
void el_pacer_granted(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now);

/* Whether key h is paced now. */
bool el_pacer_paced(const el_pacer *p, el_pacer_kind kind, uint64_t h);

/* When a write of `units` to key h may go, and that time reserved for it:
 * now (or earlier) for a key not paced. */
double el_pacer_reserve(el_pacer *p, el_pacer_kind kind, uint64_t h, double units, double now);

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
