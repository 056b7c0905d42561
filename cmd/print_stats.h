/*
 * print_stats.h - a command's figures after its run: --stats-json, the
 * throttling answers by reason, what held the run back, and what a resumed
 * counter phase took over. Every function here prints to stderr or writes
 * the named file, and never exits.
 */
#ifndef EL_CMD_PRINT_STATS_H
#define EL_CMD_PRINT_STATS_H

#include <stdbool.h>   /* bool */
#include <stddef.h>    /* size_t */
#include <stdint.h>    /* uint64_t */

#include "pipeline/flow/stats.h"      /* el_throttle_figures, el_load_stats */

/* After a --resume, says what the counter phase took over from the run
 * resumed: the counter items it had written (counts unchanged), or that
 * the counts changed and every counter item was written again. Nothing
 * when neither happened. Used by load and counters. */
void cmd_print_counters_resumed(const el_load_stats *st);

/* --stats-json: one JSON object of named figures, written to path (a
 * warning, not an error, when it cannot be written: the run itself is
 * done). */
typedef struct cmd_stat {
    const char *name;
    enum { CMD_STAT_U64, CMD_STAT_DOUBLE, CMD_STAT_STRING, CMD_STAT_RAW } kind;
    uint64_t u;
    double d;                  /* printed with `decimals` decimals */
    int decimals;
    const char *s;             /* STRING: quoted and escaped; RAW: JSON as is */
} cmd_stat;
#define CMD_U64(n, v) { (n), CMD_STAT_U64, (uint64_t)(v), 0, 0, NULL }
#define CMD_DBL(n, v, dec) { (n), CMD_STAT_DOUBLE, 0, (double)(v), (dec), NULL }
#define CMD_STR(n, v) { (n), CMD_STAT_STRING, 0, 0, 0, (v) }
#define CMD_RAW(n, v) { (n), CMD_STAT_RAW, 0, 0, 0, (v) }
void cmd_write_stats(const char *path, const cmd_stat *stats, size_t n);

/* Throttling answers by reason, as "Name=count" pairs joined by sep
 * ("IndexWriteKeyRangeThroughputExceeded=12, unspecified=3"), or as a JSON
 * object (json: {"IndexWriteKeyRangeThroughputExceeded":12}); only the
 * reasons that occurred, "unspecified" for answers that named none. */
void cmd_throttle_reasons(const el_throttle_figures *t, bool json, const char *sep, char *out,
                          size_t len);

/* One line, "edgeload: limited by: ...", when something held the run back
 * (the cause of most throttling, or the --max-wcu budget), with the share
 * of items refused and the keys paced. */
void cmd_print_limited_by(const el_throttle_figures *t);

#endif
