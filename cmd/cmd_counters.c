/*
 * cmd_counters.c - `edgeload counters`: backfill the mapping's counters
 * from the whole input without rewriting any item.
 *
 * The load pipeline does the reading and counting (el_load_opts
 * counters_only: every row is counted, none written), then the counters are
 * SET with UpdateItem; running it again lands the same values.
 */
#include <stdio.h>   /* fprintf */

#include "cmd/cli.h"
#include "cmd/load_job.h"
#include "cmd/mapping_opts.h"
#include "cmd/print_stats.h"
#include "cmd/runner.h"
#include "pipeline/load/loader.h"
#include "pipeline/rows/mapping.h"
#include "dynamo/ddb_driver.h"  /* EL_DEFAULT_CONCURRENCY */

static const char not_sharded[] = "counters do not depend on how hot targets are sharded";

static const cmd_refusal refuse[] = {
    { OPT_SPLIT, "a count needs every row of the whole input (a part's count would overwrite "
                 "the total); run it once, after the split load's workers" },
    { OPT_DRY_RUN, "it writes only counter attributes; 'edgeload load --dry-run' shows the "
                   "items" },
    { OPT_OUTPUT, "an import from S3 makes a new table; counters are SET on existing items" },
    { OPT_MAX_RCU, "counters writes: its capacity budget is --max-wcu" },
    { OPT_PLAN, not_sharded },
    { OPT_HOT_THRESHOLD, not_sharded },
    { OPT_MAX_SHARDS, not_sharded },
    { 0, NULL }
};

static const cmd_spec spec = {
    .name = "counters",
    .usage = "[OPTIONS] [INPUT...]",
    .about =
"Backfills counters without rewriting items: reads every row of every INPUT,\n"
"counts each row once for every counter its source names (a row whose item\n"
"key was seen before in the run is a duplicate of the same edge and counts\n"
"once), then writes each counter item with UpdateItem SET attr = count. The\n"
"result is exact and idempotent: running it again changes nothing.\n"
"\n"
"Counters come from the mapping (\"counters\": [{\"pk\": ..., \"sk\": ...,\n"
"\"attribute\": ...}] per source) or, for one source, from --counter. A row\n"
"whose counter template has a NULL or empty placeholder adds to no counter of\n"
"that template (it is not rejected for it). A counter item with no rows gets\n"
"no attribute: read a missing counter as 0.\n"
"\n"
"With --checkpoint FILE, a killed or interrupted backfill resumed with --resume\n"
"counts every row again (a count needs them all) and writes only the counter\n"
"items the first run had not written, when the counts are the same as then;\n"
"when they differ (the input changed), every counter item is written again.",
    .takes = (OPTS_MAPPING & ~(OPT_BIT(OPT_PLAN) | OPT_BIT(OPT_HOT_THRESHOLD) |
                               OPT_BIT(OPT_MAX_SHARDS))) |
             OPTS_INPUT | OPTS_AWS | OPTS_REPORTS | OPTS_REQUESTS | OPTS_REJECTS |
             OPTS_CHECKPOINT | OPT_BIT(OPT_THREADS) | OPT_BIT(OPT_MAX_WCU),
    .refuse = refuse,
    .epilogue =
"Exit status: 0 written, 3 finished with rejected rows, 2 usage or mapping\n"
"error, 1 aborted (some counters refused or the service failed), 130\n"
"interrupted.\n",
    .default_concurrency = EL_DEFAULT_CONCURRENCY,
    .inputs = true,
};

int cmd_counters(int argc, char **argv)
{
    cmd_options o;
    int rc = EXIT_FATAL;
    cmd_load_job j = { 0 }; /* freed at out: whatever is set by then */
    if ((rc = cmd_parse(&spec, argc, argv, &o, NULL)) >= 0)
        goto out;
    if ((rc = cmd_check_outputs(&spec, &o, NULL, 0)))
        goto out;
    el_mapping *m = build_mapping(&o.map, &rc);
    if (!m)
        goto out;
    cmd_load_job_init(&j, &o, m, spec.default_concurrency);
    rc = EXIT_USAGE;
    if (!el_mapping_has_counters(m)) {
        cli_error("counters: the mapping has no counters (\"counters\" in a source, or "
                  "--counter PK,SK,ATTRIBUTE)");
        goto out;
    }
    j.lo.counters_only = true;
    if ((rc = cmd_load_job_prepare(&j, &o, true, EL_TABLE_KEYS)))
        goto out;
    el_load_stats st;
    el_err err;
    rc = cmd_load_job_run(&j, &st, &err);
    if (rc == EXIT_USAGE)
        goto out;
    if (!err && st.rejected > 0)
        rc = EXIT_REJECTS;
    if (!o.quiet)
        fprintf(stderr,
                "edgeload: %s%llu rows counted (%llu distinct edges, %llu duplicates), "
                "%llu counters written, %llu rejected, %llu retries, %llu throttled in "
                "%.2f s (%.1f WCU)\n",
                err ? "stopped: " : "", (unsigned long long)st.rows_read,
                (unsigned long long)st.counter_edges,
                (unsigned long long)st.counter_duplicates,
                (unsigned long long)st.counters_written, (unsigned long long)st.rejected,
                (unsigned long long)st.retries, (unsigned long long)st.throttled, st.elapsed_s,
                st.wcu_consumed);
    if (!o.quiet)
        cmd_print_counters_resumed(&st);
    if (!o.quiet && err && cmd_checkpoint_saved(o.checkpoint))
        fprintf(stderr, "edgeload: checkpoint saved in %s; rerun with --resume to continue\n",
                o.checkpoint);
    if (o.stats_json) {
        const cmd_stat v[] = {
            CMD_U64("rows_read", st.rows_read),
            CMD_U64("edges", st.counter_edges),
            CMD_U64("duplicates", st.counter_duplicates),
            CMD_U64("counters_written", st.counters_written),
            CMD_U64("counters_skipped", st.counters_skipped),
            CMD_U64("rejected", st.rejected),
            CMD_U64("retries", st.retries),
            CMD_U64("throttled", st.throttled),
            CMD_U64("requests", st.requests),
            CMD_DBL("wcu_consumed", st.wcu_consumed, 1),
            CMD_DBL("elapsed_s", st.elapsed_s, 3),
        };
        cmd_write_stats(o.stats_json, v, sizeof v / sizeof v[0]);
    }
out:
    cmd_options_free(&o);
    cmd_load_job_free(&j);
    return rc;
}
