/*
 * cmd_load.c - `edgeload load`: options to a mapping and a load
 * configuration, a table check, the run, the summary and the exit status.
 */
#include <stdio.h>   /* fprintf */
#include <stdlib.h>  /* getenv */
#include <string.h>  /* strcmp */

#include "cmd/cli.h"
#include "cmd/load_job.h"
#include "cmd/mapping_opts.h"
#include "cmd/print_stats.h"
#include "cmd/runner.h"
#include "cmd/s3_cli.h"
#include "pipeline/incremental/incremental.h"
#include "pipeline/load/loader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/split.h"
#include "dynamo/ddb_driver.h"  /* EL_DEFAULT_CONCURRENCY */

enum { O_PART_ITEMS = OPT_OWN, O_INCREMENTAL, O_OP_COLUMN, O_NO_GROUP };

static const cli_opt own_opts[] = {
    { "part-items", true, O_PART_ITEMS },
    { "incremental", false, O_INCREMENTAL },
    { "op-column", true, O_OP_COLUMN },
    { "no-group", false, O_NO_GROUP },
    { NULL, false, 0 }
};

typedef struct load_args {
    long part_items;
    bool incremental, no_group;
    const char *op_column;
} load_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    load_args *a = ctx;
    switch (id) {
    case O_PART_ITEMS: return cli_parse_long("part-items", arg, 1, &a->part_items) ? 0 : EXIT_USAGE;
    case O_INCREMENTAL: a->incremental = true; return 0;
    case O_OP_COLUMN: a->op_column = arg; return 0;
    case O_NO_GROUP: a->no_group = true; return 0;
    }
    return EXIT_FATAL;
}

static const cmd_refusal refuse[] = {
    { OPT_MAX_RCU, "load writes: its capacity budget is --max-wcu" },
    { 0, NULL }
};

static const cmd_spec spec = {
    .name = "load",
    .usage = "[OPTIONS] [INPUT...]",
    .about =
"Reads rows from each INPUT (a SQL dump, CSV or TSV file, - for standard\n"
"input, s3://BUCKET/KEY, or s3://BUCKET/PREFIX/ for every object under it in\n"
"key order; .zst and .gz are decompressed), turns every row into one item and\n"
"writes the items with BatchWriteItem (25 items a request, several requests in\n"
"flight, unprocessed items resent with backoff). INPUTs override the mapping's\n"
"\"input\" (one per source, in order). Relative \"input\" paths are relative to\n"
"the mapping file.\n"
"\n"
"Counters (mapping \"counters\", or --counter): by default the counts are\n"
"computed from the whole input (a duplicate row counts once) and SET with\n"
"UpdateItem after every item is written; --resume re-reads every input to\n"
"count, writing only the rest.",
    .takes = OPTS_MAPPING | OPTS_INPUT | OPTS_AWS | OPTS_REPORTS | OPTS_REQUESTS |
             OPTS_CHECKPOINT | OPTS_REJECTS | OPT_BIT(OPT_DRY_RUN) | OPT_BIT(OPT_OUTPUT) |
             OPT_BIT(OPT_THREADS) | OPT_BIT(OPT_MAX_WCU) | OPT_BIT(OPT_SPLIT),
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Load:\n"
"  --part-items N           with --output: items per part file (default 4000000;\n"
"                           a part also ends at 1 GiB of uncompressed JSON)\n"
"  --incremental            apply a delta: each row is one TransactWriteItems,\n"
"                           a Put with attribute_not_exists(PK) plus ADD :1 on\n"
"                           its counters; an existing item is a duplicate (no\n"
"                           count changes). Rows sharing a counter item go in\n"
"                           one transaction (up to 100 actions, one ADD of\n"
"                           their sum). Rerunning a delta is exact; no\n"
"                           --checkpoint needed. With --plan FILE, new edges of\n"
"                           sharded hot targets get the backfill's index shards\n"
"  --op-column COL          with --incremental: rows whose COL is D are a Delete\n"
"                           with attribute_exists(PK) plus ADD :-1\n"
"  --no-group               with --incremental: one transaction per row\n",
    .epilogue =
"With --split, hot sources need --plan FILE (one plan over the whole input),\n"
"and counters are not set: run one 'edgeload counters' after every worker.\n"
"\n"
"Exit status: 0 loaded, 3 finished with rejected rows, 2 usage, mapping,\n"
"configuration or table error (nothing written), 1 aborted, 130 interrupted.\n",
    .default_concurrency = EL_DEFAULT_CONCURRENCY,
    .inputs = true,
    .own_opt = own_opt,
};

static void write_stats(const char *path, const el_load_stats *st)
{
    char reasons[1024];
    cmd_throttle_reasons(&st->thr, true, NULL, reasons, sizeof reasons);
    const cmd_stat v[] = {
        CMD_U64("rows_read", st->rows_read),
        CMD_U64("items_written", st->items_written),
        CMD_U64("duplicates", st->duplicates),
        CMD_U64("rejected", st->rejected),
        CMD_U64("rejects_in_file", st->rejects_in_file),
        CMD_U64("directory_items", st->directory_items),
        CMD_U64("retries", st->retries),
        CMD_U64("throttled", st->throttled),
        CMD_RAW("throttled_by_reason", reasons),
        CMD_U64("items_sent", st->thr.items_sent),
        CMD_U64("items_refused", st->thr.items_refused),
        CMD_U64("keys_paced", st->thr.keys_paced),
        CMD_DBL("table_rate", st->thr.learned.rate, 0),
        CMD_U64("rate_cuts", st->thr.learned.cuts),
        CMD_U64("rate_cuts_undone", st->thr.learned.undone),
        CMD_DBL("refused_at_random", st->thr.learned.noise, 4),
        CMD_STR("limited_by", st->thr.limited_by),
        CMD_U64("requests", st->requests),
        CMD_DBL("wcu_consumed", st->wcu_consumed, 1),
        CMD_DBL("elapsed_s", st->elapsed_s, 3),
        CMD_U64("counters_written", st->counters_written),
        CMD_U64("counters_skipped", st->counters_skipped),
        CMD_U64("counter_edges", st->counter_edges),
        CMD_U64("counter_duplicates", st->counter_duplicates),
    };
    cmd_write_stats(path, v, sizeof v / sizeof v[0]);
}

/* `load --incremental`: the delta through pipeline/incremental/incremental.h. */
static int run_incremental(const el_load_opts *lo, const load_args *la, bool quiet,
                           const char *stats_path)
{
    el_incr_opts io = {
        .mapping = lo->mapping, .reader = lo->reader, .inputs = lo->inputs,
        .ninputs = lo->ninputs, .ddb = lo->ddb, .rejects = lo->rejects,
        .concurrency = lo->concurrency, .max_wcu = lo->max_wcu,
        .max_retry_time_s = lo->max_retry_time_s, .stop = lo->stop, .op_column = la->op_column,
        .no_grouping = la->no_group, .plan_path = lo->plan_path,
        .progress = lo->progress, .progress_user = lo->progress_user
    };
    el_incr_stats st;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_incr_run(&io, &st, &d);
    if (err)
        cli_error("%s", d.msg);
    int rc = cmd_exit_code(err);
    if (!err && st.rejected > 0)
        rc = EXIT_REJECTS;
    el_load_stats ls; /* the figures of a load: the same summary as a load's */
    el_incr_load_stats(&st, &ls);
    if (!quiet) {
        fprintf(stderr,
                "edgeload: %s%llu rows read, %llu items written, %llu duplicates, %llu "
                "rejected, %llu retries, %llu throttled in %.2f s (%.0f items/s, %.1f WCU)\n",
                err ? "stopped: " : "", (unsigned long long)ls.rows_read,
                (unsigned long long)ls.items_written, (unsigned long long)ls.duplicates,
                (unsigned long long)ls.rejected, (unsigned long long)ls.retries,
                (unsigned long long)ls.throttled, ls.elapsed_s,
                ls.elapsed_s > 0 ? (double)ls.items_written / ls.elapsed_s : 0,
                ls.wcu_consumed);
        fprintf(stderr,
                "edgeload: incremental: %llu added, %llu deleted, %llu duplicates (item "
                "existed), %llu already absent, %llu replayed; %llu transactions, %llu "
                "conflicts, %llu splits\n",
                (unsigned long long)st.added, (unsigned long long)st.deleted,
                (unsigned long long)st.duplicates, (unsigned long long)st.absent,
                (unsigned long long)st.replayed, (unsigned long long)st.transactions,
                (unsigned long long)st.conflicts, (unsigned long long)st.splits);
        if (st.rejected > 0)
            fprintf(stderr, "edgeload: rejected rows are in %s\n", el_rejects_path(lo->rejects));
    }
    if (stats_path) {
        /* the fields of a plain load ("duplicates" here: put rows whose
         * item existed), then the incremental ones */
        const cmd_stat v[] = {
            CMD_U64("rows_read", st.rows_read),
            CMD_U64("items_written", ls.items_written),
            CMD_U64("added", st.added),
            CMD_U64("deleted", st.deleted),
            CMD_U64("duplicates", st.duplicates),
            CMD_U64("absent", st.absent),
            CMD_U64("replayed", st.replayed),
            CMD_U64("rejected", st.rejected),
            CMD_U64("transactions", st.transactions),
            CMD_U64("requests", st.requests),
            CMD_U64("retries", st.retries),
            CMD_U64("throttled", st.throttled),
            CMD_U64("conflicts", st.conflicts),
            CMD_U64("splits", st.splits),
            CMD_DBL("wcu_consumed", st.wcu_consumed, 1),
            CMD_DBL("elapsed_s", st.elapsed_s, 3),
        };
        cmd_write_stats(stats_path, v, sizeof v / sizeof v[0]);
    }
    return rc;
}

/* Combinations of options that cannot work together; 0 when none. */
static int check_combinations(const cmd_options *o, const load_args *la)
{
    const char *why = NULL;
    if ((la->op_column || la->no_group) && !la->incremental)
        why = "--op-column and --no-group need --incremental";
    else if (la->incremental && (o->checkpoint || o->resume || o->dry_run))
        why = "--incremental takes no --checkpoint, --resume or --dry-run: an interrupted "
              "delta is finished by running it again (conditional writes keep every count "
              "exact)";
    else if (la->incremental && o->output)
        why = "--incremental writes to DynamoDB, not --output";
    else if (o->output && o->dry_run)
        why = "--output cannot be combined with --dry-run";
    else if (o->output && (o->checkpoint || o->resume))
        why = "--output cannot be combined with --checkpoint or --resume";
    else if (la->part_items && !o->output)
        why = "--part-items needs --output DIR";
    else if (o->dry_run && o->resume)
        why = "--resume needs a real load, not --dry-run";
    if (!why && o->split.count) {
        if (la->incremental)
            why = "--split cannot be combined with --incremental (a delta is one process)";
        else if (o->output)
            why = "--split cannot be combined with --output (one process writes the import "
                  "files)";
        for (size_t i = 0; !why && i < o->map.ninputs; i++)
            if (strcmp(o->map.inputs[i], "-") == 0)
                why = "--split cannot be combined with standard input (every worker must "
                      "read the same files)";
    }
    if (!why)
        return 0;
    cli_error("load: %s", why);
    return EXIT_USAGE;
}

static void summary(const el_load_opts *lo, const el_load_stats *st, el_err err)
{
    double rate = st->elapsed_s > 0 ? (double)st->items_written / st->elapsed_s : 0;
    cmd_print_limited_by(&st->thr); /* before the figures: the last line stays the figures */
    fprintf(stderr,
            "edgeload: %s%llu rows read, %llu items %s, %llu duplicates, %llu rejected, "
            "%llu retries, %llu throttled in %.2f s (%.0f items/s, %.1f WCU)\n",
            err ? "stopped: " : "", (unsigned long long)st->rows_read,
            (unsigned long long)st->items_written, lo->dry_run ? "printed" : "written",
            (unsigned long long)st->duplicates, (unsigned long long)st->rejected,
            (unsigned long long)st->retries, (unsigned long long)st->throttled, st->elapsed_s,
            rate, st->wcu_consumed);
    /* the items that come from no row, apart from the rows' figures above */
    if (st->directory_items > 0)
        fprintf(stderr, "edgeload: %llu shard directory items %s (one per sharded target)\n",
                (unsigned long long)st->directory_items, lo->dry_run ? "printed" : "written");
    if (st->rejects_in_file > st->rejected)
        fprintf(stderr, "edgeload: the rejects file holds %llu rows in all (%llu from the runs "
                "this one resumed)\n", (unsigned long long)st->rejects_in_file,
                (unsigned long long)(st->rejects_in_file - st->rejected));
    if (st->counter_edges > 0 || st->counters_written > 0)
        fprintf(stderr, "edgeload: counters: %llu distinct edges counted, %llu duplicate "
                "rows counted once, %llu counters set\n",
                (unsigned long long)st->counter_edges,
                (unsigned long long)st->counter_duplicates,
                (unsigned long long)st->counters_written);
    cmd_print_counters_resumed(st);
    if (st->rejects_in_file > 0)
        fprintf(stderr, "edgeload: rejected rows are in %s\n", el_rejects_path(lo->rejects));
    if (err && cmd_checkpoint_saved(lo->checkpoint_path))
        fprintf(stderr, "edgeload: checkpoint saved in %s; rerun with --resume to continue\n",
                lo->checkpoint_path);
}

int cmd_load(int argc, char **argv)
{
    cmd_options o;
    load_args la = { 0 };
    int rc = EXIT_FATAL;
    char *split_names[4] = { NULL, NULL, NULL, NULL };
    cmd_load_job j = { 0 }; /* freed at out: whatever is set by then */
    if ((rc = cmd_parse(&spec, argc, argv, &o, &la)) >= 0)
        goto out;
    /* a --split worker's own checkpoint, rejects and stats files */
    if (o.split.count && !cmd_split_names(&o, NULL, split_names)) {
        rc = EXIT_FATAL;
        goto out;
    }
    if ((rc = cmd_check_outputs(&spec, &o, NULL, 0)))
        goto out;
    el_mapping *m = build_mapping(&o.map, &rc);
    if (!m)
        goto out;
    cmd_load_job_init(&j, &o, m, spec.default_concurrency);
    if ((rc = check_combinations(&o, &la)))
        goto out;
    if (o.split.count && el_mapping_has_counters(m) && !o.quiet)
        fprintf(stderr, "edgeload: --split %u/%u: counters are not set by split workers (a "
                "part's counts are not the totals); when every worker has finished, run "
                "'edgeload counters' once with the same mapping and inputs\n",
                o.split.index + 1, o.split.count);
    el_load_opts *lo = &j.lo;
    lo->dry_run = o.dry_run;
    lo->dry_out = stdout;
    lo->plan_path = o.plan;
    lo->output_dir = o.output;
    lo->output_part_items = (uint64_t)la.part_items;
    lo->split = o.split;
    if (o.output && el_s3_is_url(o.output) &&
        !cli_s3_output(&j.s3c, &o.aws, o.output, &lo->output_store, &rc))
        goto out;
    if ((rc = cmd_load_job_prepare(&j, &o, !o.dry_run && !o.output,
                                   EL_TABLE_KEYS | EL_TABLE_INDEX_IF_WRITTEN)))
        goto out;
    if (la.incremental) {
        rc = run_incremental(lo, &la, o.quiet, o.stats_json);
        goto out;
    }
    el_load_stats st;
    el_err err;
    rc = cmd_load_job_run(&j, &st, &err);
    if (rc == EXIT_USAGE)
        goto out; /* found before anything was written: no summary */
    if (!err && st.rejects_in_file > 0)
        rc = EXIT_REJECTS;
    if (!o.quiet)
        summary(lo, &st, err);
    if (o.stats_json)
        write_stats(o.stats_json, &st);
    if (!err && o.output && !o.quiet) {
        const char *region = j.s3c.cfg ? j.s3c.cfg->region : getenv("AWS_REGION");
        if (!region || !region[0])
            region = getenv("AWS_DEFAULT_REGION");
        if (o.aws.region)
            region = o.aws.region;
        fflush(stderr);
        cli_s3_print_import(stdout, m, o.output, region);
        fflush(stdout);
    }
out:
    cmd_split_names_free(split_names);
    cmd_options_free(&o);
    cmd_load_job_free(&j);
    return rc;
}
