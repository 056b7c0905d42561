/*
 * eta.h - how long is left, from the recent rate of work done.
 *
 * A run's rate changes: throttling sets in, a hot key slows the writes, a
 * second input ends. An ETA from the start of the run (elapsed / fraction
 * done) keeps promising the early rate for minutes after it changed. This
 * one takes the rate over the last `window` seconds of samples of the work
 * done (input bytes whose rows are acknowledged), and the work left at that
 * rate is the ETA.
 *
 *   el_eta e;
 *   el_eta_init(&e, 30);
 *   each report: el_eta_add(&e, now_ms, bytes_done);
 *                double s = el_eta_seconds(&e, bytes_total);   // -1: not yet known
 *
 * Plain data, no allocation: a ring of the last EL_ETA_SAMPLES samples.
 * Pure functions of the samples; the caller owns it.
 */
#ifndef EL_ETA_H
#define EL_ETA_H

#include <stddef.h>  /* size_t */
#include <stdint.h>  /* uint64_t */

#define EL_ETA_SAMPLES 64

typedef struct el_eta {
    double t[EL_ETA_SAMPLES];     /* ms */
    uint64_t done[EL_ETA_SAMPLES];
    size_t head, n;               /* oldest sample, samples held */
    double window_ms;
} el_eta;

/* An estimator over the last window_s seconds (<= 0: 30). */
void el_eta_init(el_eta *e, double window_s);

/* A sample: at now_ms, done units of work were done (it never goes back;
 * a smaller figure is taken as no progress). Samples older than the window
 * are dropped, the newest always kept, so the oldest held spans at most
 * the window. */
void el_eta_add(el_eta *e, double now_ms, uint64_t done);

/* Units per second between the oldest and the newest sample; 0 with fewer
 * than two samples or no time between them. */
double el_eta_rate(const el_eta *e);

/* Seconds until total at el_eta_rate: 0 when done reached total, -1 when
 * unknown (total 0, or no rate yet: nothing moved within the window). */
double el_eta_seconds(const el_eta *e, uint64_t total);

#endif
