/*
 * print_stats.c - a command's figures after its run (print_stats.h).
 */
#include "cmd/print_stats.h"

#include <stdio.h>   /* fprintf, fopen */

#include "cmd/cli.h"             /* cli_warn */
#include "dynamo/ddb_client.h"  /* el_ddb_throttle_reason_name */

/* ---- throttling by cause ---- */

void cmd_throttle_reasons(const el_throttle_figures *t, bool json, const char *sep, char *out,
                          size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    if (json && len > 1)
        out[at++] = '{', out[at] = '\0';
    for (int r = 0; r <= EL_THR_COUNT; r++) {
        uint64_t v = r < EL_THR_COUNT ? t->by_reason[r] : t->unspecified;
        if (v == 0)
            continue;
        const char *name = r < EL_THR_COUNT ? el_ddb_throttle_reason_name((el_ddb_throttle_reason)r)
                                            : "unspecified";
        const char *lead = at > (json ? 1u : 0u) ? (json ? "," : sep) : "";
        int w = json ? snprintf(out + at, len - at, "%s\"%s\":%llu", lead, name,
                                (unsigned long long)v)
                     : snprintf(out + at, len - at, "%s%s=%llu", lead, name,
                                (unsigned long long)v);
        if (w < 0 || (size_t)w >= len - at)
            break; /* cut: the buffers are sized for every reason at once */
        at += (size_t)w;
    }
    if (json && at + 1 < len) {
        out[at++] = '}';
        out[at] = '\0';
    }
}

void cmd_print_limited_by(const el_throttle_figures *t)
{
    if (!t->limited_by[0])
        return;
    fprintf(stderr, "edgeload: limited by: %s", t->limited_by);
    if (t->items_sent > 0 && t->items_refused > 0)
        fprintf(stderr, " (%llu of %llu items sent were refused and sent again, %.1f %%)",
                (unsigned long long)t->items_refused, (unsigned long long)t->items_sent,
                100.0 * (double)t->items_refused / (double)t->items_sent);
    if (t->keys_paced > 0)
        fprintf(stderr, "; %llu partition key%s paced on %s own", (unsigned long long)t->keys_paced,
                t->keys_paced == 1 ? "" : "s", t->keys_paced == 1 ? "its" : "their");
    fputc('\n', stderr);
}

/* ---- counters resumed ---- */

void cmd_print_counters_resumed(const el_load_stats *st)
{
    if (st->counters_skipped)
        fprintf(stderr, "edgeload: resumed: %llu counter items were written by the run "
                "resumed, with the same counts\n", (unsigned long long)st->counters_skipped);
    if (st->counts_changed)
        fprintf(stderr, "edgeload: resumed: the counts differ from the run resumed (the input "
                "changed): every counter item was written again\n");
}

/* ---- --stats-json ---- */

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void cmd_write_stats(const char *path, const cmd_stat *stats, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_warn("cannot write --stats-json %s", path);
        return;
    }
    fputc('{', f);
    for (size_t i = 0; i < n; i++) {
        const cmd_stat *s = &stats[i];
        fprintf(f, "%s\"%s\":", i ? "," : "", s->name);
        switch (s->kind) {
        case CMD_STAT_U64: fprintf(f, "%llu", (unsigned long long)s->u); break;
        case CMD_STAT_DOUBLE: fprintf(f, "%.*f", s->decimals, s->d); break;
        case CMD_STAT_STRING: put_json_string(f, s->s ? s->s : ""); break;
        case CMD_STAT_RAW: fputs(s->s ? s->s : "null", f); break;
        }
    }
    fputs("}\n", f);
    if (fclose(f) != 0)
        cli_warn("cannot write --stats-json %s", path);
}
