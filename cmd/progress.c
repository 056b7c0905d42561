/*
 * progress.c - the bar and the plain lines.
 *
 * DESIGN: rates are computed over the time since the previous line, not
 * since the start, so a throttled phase shows at once. The percentage and
 * the ETA count input bytes whose rows are done: acknowledged by DynamoDB
 * (the checkpoint's position) or written to --output, not bytes merely
 * read ahead into memory, which the reader is far ahead of (100% and ETA
 * 0 while half the items were unwritten). Input bytes are the only measure
 * of "how much is left" known before the end (compressed bytes for a
 * compressed input, which advance just as evenly). The ETA is the bytes
 * left at the rate of the last 30 seconds (cmd/eta.h): an ETA from the
 * start kept promising the early rate long after throttling set in. Rows
 * read and not yet done are shown apart ("read ahead").
 */
#include "cmd/progress.h"

#include <math.h>    /* floor: a percentage never rounds up to done */
#include <stdio.h>   /* fprintf */
#include <string.h>  /* strcmp */
#include <unistd.h>  /* isatty */

#include "cmd/print_stats.h"  /* cmd_throttle_reasons */
#include "common/clock.h"  /* el_now_ms: the rate between reports */

bool progress_parse_mode(const char *s, progress_mode *out)
{
    static const char *const names[] = { "auto", "bar", "plain", "none" };
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (progress_mode)i;
            return true;
        }
    return false;
}

void progress_init(progress *p, progress_mode mode, double interval_s)
{
    memset(p, 0, sizeof *p);
    if (mode == PROGRESS_AUTO)
        mode = isatty(2) ? PROGRESS_BAR : PROGRESS_PLAIN;
    p->mode = mode;
    p->interval_s = interval_s > 0 ? interval_s : EL_PROGRESS_INTERVAL_S;
    p->last_print = el_now_ms();
    p->last_items_t = p->last_print;
    el_eta_init(&p->eta, 30);
}

static void eta_text(char *out, size_t len, double seconds)
{
    if (seconds < 0)
        snprintf(out, len, "?");
    else if (seconds < 3600)
        snprintf(out, len, "%dm%02ds", (int)seconds / 60, (int)seconds % 60);
    else
        snprintf(out, len, "%dh%02dm", (int)seconds / 3600, (int)seconds / 60 % 60);
}

void progress_report(const el_progress *snap, void *user)
{
    progress *p = user;
    if (p->mode == PROGRESS_NONE)
        return;
    double now = el_now_ms();
    if (snap->final) {
        if (p->drew_bar)
            fputc('\n', stderr);
        p->drew_bar = false;
        return;
    }
    /* a phase counts its own units; a new phase starts a new ETA */
    bool units = snap->phase && snap->total > 0;
    if (snap->phase != p->phase) {
        p->phase = snap->phase;
        el_eta_init(&p->eta, 30);
    }
    uint64_t done = units ? snap->done : snap->bytes_done;
    uint64_t total = units ? snap->total : snap->bytes_total;
    el_eta_add(&p->eta, now, done); /* every report, printed or not */
    if (p->mode == PROGRESS_PLAIN && now - p->last_print < p->interval_s * 1000.0)
        return;
    const el_load_stats *st = &snap->st;
    double dt = (now - p->last_items_t) / 1000.0;
    double ips = dt > 0 ? (double)(st->items_written - p->last_items) / dt : 0;
    double wps = dt > 0 ? (st->wcu_consumed - p->last_wcu) / dt : 0;
    p->last_items_t = now;
    p->last_items = st->items_written;
    p->last_wcu = st->wcu_consumed;
    p->last_print = now;
    /* what holds the load back, when edgeload does: the rate learned from
     * the table's refusals, keys paced on their own, and the share of the
     * items sent since the last line that were refused */
    char held[160] = "";
    const el_throttle_figures *t = &st->thr;
    if (t->learned.rate > 0 || t->paced_now > 0) {
        uint64_t sent = t->items_sent - p->last_sent, refused = t->items_refused - p->last_refused;
        int n = 0;
        if (t->learned.rate > 0)
            n = snprintf(held, sizeof held, "table rate %.0f %s/s", t->learned.rate,
                         snap->reads ? "RCU" : "WCU");
        if (t->paced_now > 0 && n >= 0 && (size_t)n < sizeof held)
            n += snprintf(held + n, sizeof held - (size_t)n, "%s%llu key%s paced", n ? ", " : "",
                          (unsigned long long)t->paced_now, t->paced_now == 1 ? "" : "s");
        if (n >= 0 && (size_t)n < sizeof held)
            snprintf(held + n, sizeof held - (size_t)n, ", %.1f %% refused",
                     sent ? 100.0 * (double)refused / (double)sent : 0.0);
    }
    p->last_sent = t->items_sent;
    p->last_refused = t->items_refused;
    double frac = total ? (double)done / (double)total : -1;
    if (frac > 1)
        frac = 1;
    double elapsed = st->elapsed_s;
    double eta = frac >= 0 ? el_eta_seconds(&p->eta, total) : -1;
    char etas[32];
    eta_text(etas, sizeof etas, eta);
    const char *cu = snap->reads ? "RCU" : "WCU";
    char reasons[1024];
    cmd_throttle_reasons(&st->thr, false, p->mode == PROGRESS_BAR ? ", " : ",", reasons,
                         sizeof reasons);
    if (p->mode == PROGRESS_BAR) {
        fprintf(stderr, "\r\033[K");
        if (snap->phase) {
            fprintf(stderr, "%s", snap->phase);
            if (units)
                fprintf(stderr, " %llu/%llu", (unsigned long long)snap->done,
                        (unsigned long long)snap->total);
            fprintf(stderr, " | %llu rows | %.0f %s/s | %llu throttled | %llu retries",
                    (unsigned long long)st->rows_read, wps, cu,
                    (unsigned long long)st->throttled, (unsigned long long)st->retries);
        } else {
            fprintf(stderr, "%llu rows | %llu items | %.0f items/s | %.0f %s/s | "
                    "%llu throttled", (unsigned long long)st->rows_read,
                    (unsigned long long)st->items_written, ips, wps, cu,
                    (unsigned long long)st->throttled);
            if (reasons[0])
                fprintf(stderr, " (%s)", reasons);
            fprintf(stderr, " | %llu retries", (unsigned long long)st->retries);
            if (snap->transactional)
                fprintf(stderr, " | %llu txns", (unsigned long long)snap->transactions);
            fprintf(stderr, " | %llu dups", (unsigned long long)st->duplicates);
            if (snap->rows_ahead)
                fprintf(stderr, " | read ahead: %llu rows",
                        (unsigned long long)snap->rows_ahead);
            if (held[0])
                fprintf(stderr, " | held back: %s", held);
        }
        if (frac >= 0)
            fprintf(stderr, " | %.0f%% ETA %s", floor(frac * 100), etas);
        p->drew_bar = true;
    } else {
        fprintf(stderr, "edgeload: progress elapsed=%.1f", elapsed);
        if (snap->phase) {
            fprintf(stderr, " phase=%s", snap->phase);
            if (units)
                fprintf(stderr, " done=%llu total=%llu", (unsigned long long)snap->done,
                        (unsigned long long)snap->total);
        }
        fprintf(stderr, " rows=%llu items=%llu items_per_s=%.0f %s=%.0f %s_per_s=%.0f "
                "throttled=%llu retries=%llu rejected=%llu",
                (unsigned long long)st->rows_read, (unsigned long long)st->items_written, ips,
                snap->reads ? "rcu" : "wcu", st->wcu_consumed, snap->reads ? "rcu" : "wcu", wps,
                (unsigned long long)st->throttled, (unsigned long long)st->retries,
                (unsigned long long)st->rejected);
        if (reasons[0])
            fprintf(stderr, " throttled_by_reason=%s", reasons);
        if (snap->transactional)
            fprintf(stderr, " transactions=%llu", (unsigned long long)snap->transactions);
        if (!snap->phase)
            fprintf(stderr, " duplicates=%llu read_ahead=%llu",
                    (unsigned long long)st->duplicates, (unsigned long long)snap->rows_ahead);
        if (held[0])
            fprintf(stderr, " held_back=\"%s\"", held);
        if (frac >= 0)
            fprintf(stderr, " %s=%.1f%% eta=%s", units ? "phase_done" : "done",
                    floor(frac * 1000) / 10, etas);
        fputc('\n', stderr);
    }
    fflush(stderr);
}
