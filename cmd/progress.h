/*
 * progress.h - progress on stderr: a one-line bar on a terminal,
 * key=value lines every interval otherwise (for cron mail and log
 * collectors), nothing with --progress none or --quiet.
 */
#ifndef EL_CMD_PROGRESS_H
#define EL_CMD_PROGRESS_H

#include <stdbool.h>  /* bool */

/* Seconds between progress lines when --progress-interval does not say. */
#define EL_PROGRESS_INTERVAL_S 10

#include "cmd/eta.h"
#include "pipeline/load/loader.h"

typedef enum progress_mode {
    PROGRESS_AUTO = 0,
    PROGRESS_BAR,
    PROGRESS_PLAIN,
    PROGRESS_NONE
} progress_mode;

typedef struct progress {
    progress_mode mode;     /* AUTO resolved at init */
    double interval_s;      /* plain lines: seconds between lines */
    double last_print;      /* ms */
    double last_items_t;    /* ms, for the rate over the last interval */
    unsigned long long last_items;
    double last_wcu;
    uint64_t last_sent, last_refused; /* items sent and refused at the last print */
    el_eta eta;             /* the ETA: the recent rate of input bytes (or phase units) done */
    const char *phase;      /* the phase the ETA is of (el_progress.phase) */
    bool drew_bar;
} progress;

/* Parses auto|bar|plain|none; false when unknown. */
bool progress_parse_mode(const char *s, progress_mode *out);

void progress_init(progress *p, progress_mode mode, double interval_s);

/* An el_progress_fn: user is the progress struct. */
void progress_report(const el_progress *snap, void *user);

#endif
