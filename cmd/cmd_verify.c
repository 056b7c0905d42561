/*
 * cmd_verify.c - `edgeload verify`: the same mapping and inputs as load,
 * a table check, the verification, the first mismatches, the report file,
 * the summary and the exit status (0 all match, 4 anything missing or
 * different, or rows of the input that could not become items unless
 * --allow-rejected).
 */
#include <errno.h>   /* errno for the report file */
#include <stdio.h>   /* fprintf, fopen */
#include <stdlib.h>  /* free */
#include <string.h>  /* strerror */

#include "cmd/cli.h"
#include "cmd/mapping_opts.h"
#include "cmd/print_stats.h"
#include "cmd/progress.h"
#include "cmd/runner.h"
#include "cmd/s3_cli.h"
#include "common/buf.h"
#include "formats/ddb_value.h"  /* el_json_put_string */
#include "pipeline/rows/mapping.h"
#include "pipeline/verify/verify.h"

enum {
    O_SAMPLE = OPT_OWN, O_SEED, O_REVERSE, O_REPORT, O_SHOW, O_NO_COUNTERS, O_COUNTERS_ONLY,
    O_ALLOW_REJECTED
};

static const cli_opt own_opts[] = {
    { "sample", true, O_SAMPLE },
    { "seed", true, O_SEED },
    { "reverse", true, O_REVERSE },
    { "report", true, O_REPORT },
    { "show", true, O_SHOW },
    { "no-counters", false, O_NO_COUNTERS },
    { "counters-only", false, O_COUNTERS_ONLY },
    { "allow-rejected", false, O_ALLOW_REJECTED },
    { NULL, false, 0 }
};

#define DEFAULT_REPORT "edgeload-verify.jsonl"
#define STR_(x) #x
#define STR(x) STR_(x)
#define DEFAULT_SHOW 10

typedef struct verify_args {
    el_verify_opts vo;
    const char *report;
    long show;
    bool allow_rejected;       /* rows that cannot become items are expected */
} verify_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    verify_args *a = ctx;
    long n;
    switch (id) {
    case O_SAMPLE:
        if (!cli_parse_long("sample", arg, 1, &n))
            return EXIT_USAGE;
        a->vo.sample = (uint64_t)n;
        return 0;
    case O_SEED:
        if (!cli_parse_long("seed", arg, 0, &n))
            return EXIT_USAGE;
        a->vo.seed = (uint64_t)n;
        return 0;
    case O_REVERSE:
        if (!cli_parse_long("reverse", arg, 0, &n))
            return EXIT_USAGE;
        a->vo.reverse = (uint64_t)n;
        return 0;
    case O_REPORT: a->report = arg; return 0;
    case O_SHOW: return cli_parse_long("show", arg, 0, &a->show) ? 0 : EXIT_USAGE;
    case O_NO_COUNTERS: a->vo.no_counters = true; return 0;
    case O_COUNTERS_ONLY: a->vo.counters_only = true; return 0;
    case O_ALLOW_REJECTED: a->allow_rejected = true; return 0;
    }
    return EXIT_FATAL;
}

static const char writes_nothing[] = "verify reads the table and writes nothing";

static const cmd_refusal refuse[] = {
    { OPT_DRY_RUN, writes_nothing },
    { OPT_OUTPUT, writes_nothing },
    { OPT_MAX_WCU, "verify reads: its capacity budget is --max-rcu" },
    { OPT_CHECKPOINT, "verify writes nothing to resume: run it again" },
    { OPT_RESUME, "verify writes nothing to resume: run it again" },
    { OPT_CHECKPOINT_INTERVAL, "it takes no --checkpoint" },
    { OPT_REJECTS, "rows load would reject are counted and skipped; 'edgeload load' writes "
                   "them to its rejects file" },
    { OPT_MAX_REJECTS, "rows load would reject are counted, never a reason to stop" },
    { OPT_THREADS, "verify reads its inputs on one thread" },
    { 0, NULL }
};

static const cmd_spec spec = {
    .name = "verify",
    .usage = "[OPTIONS] [INPUT...]",
    .about =
"Reads the INPUTs with the same mapping as load, recomputes every item load\n"
"writes (for a key given by several rows, the later row), fetches the items\n"
"with BatchGetItem (100 keys a request, consistent reads) and checks that\n"
"each is present with every mapped attribute equal (numbers compared as\n"
"numbers, so 1.50 equals 1.5; attributes the mapping does not write are\n"
"ignored). Prints the counts and the first mismatches; writes every mismatch\n"
"to the report file as JSON lines.\n"
"\n"
"Rows of the input that cannot become items (load rejects them: an empty\n"
"key, an invalid number, a wrong column count, ...) are not in the table:\n"
"verify counts them per source, names each source that has some (\"N rows of\n"
"SOURCE could not become items\") and exits 4, unless --allow-rejected says\n"
"they are expected.\n"
"\n"
"Counters: when the mapping has counters (\"counters\" or --counter), they are\n"
"counted from the same rows with the backfill's own code (a duplicate row\n"
"counts once, a rejected row not at all) and every counter item is fetched\n"
"too: a counter item or attribute that is absent is reported as\n"
"counter-missing, another value as counter-different (key, attribute,\n"
"expected and found). Counting holds every distinct edge in memory, as the\n"
"backfill does (about 32 bytes each), with or without --sample.\n"
"\n"
"Give the mapping and the hot-target settings (--hot-threshold, --max-shards,\n"
"--plan) the load used, so sharded index keys are expected where load put them.\n"
"Each hot key's shard directory item (PK=KEY, SK=#SHARDS) is an expected item,\n"
"its fanIn the fan-in over every source that writes the key.\n"
"With --split I/N, only the items of part I of N are checked, as 'load --split'\n"
"cuts the inputs; no --reverse then.",
    .takes = OPTS_MAPPING | OPTS_INPUT | OPTS_AWS | OPTS_REQUESTS | OPTS_REPORTS |
             OPT_BIT(OPT_SPLIT) | OPT_BIT(OPT_MAX_RCU),
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Verification:\n"
"  --sample N               check a uniform random sample of N distinct items\n"
"                           instead of all of them (default: all; memory is\n"
"                           then bounded by N); counters: a uniform sample of N\n"
"                           counter items as well\n"
"  --seed N                 seed of the samples (default " STR(EL_VERIFY_DEFAULT_SEED) "): the same\n"
"                           seed and inputs check the same items\n"
"  --reverse K              also Query the index for K sampled index partition\n"
"                           keys and check that it lists exactly the expected\n"
"                           items (default 0: no reverse check). A hot key is\n"
"                           checked whole: the edges of every source, each on\n"
"                           its shard, every shard queried, nothing under the\n"
"                           plain key. The index is eventually consistent: a\n"
"                           key that does not match is queried again a second\n"
"                           later before it is reported\n"
"  --no-counters            do not check the mapping's counters\n"
"  --counters-only          check the counters and no item (after `edgeload\n"
"                           counters`)\n"
"  --allow-rejected         rows that cannot become items are expected (the\n"
"                           load rejected them): counted and shown, not a\n"
"                           reason for exit 4\n"
"  --report FILE            every mismatch as a JSON line: {\"kind\":\"missing\"|\n"
"                           \"different\"|\"reverse-missing\"|\"reverse-extra\"|\n"
"                           \"counter-missing\"|\"counter-different\",\n"
"                           \"key\":{...},\"attributes\":{NAME:{\"expected\":..,\n"
"                           \"actual\":..}}} (default " DEFAULT_REPORT ";\n"
"                           written on every run, empty when all match)\n"
"  --show N                 mismatches printed (default 10)\n",
    .epilogue =
"Exit status: 0 every checked item and counter matches, 4 some item or\n"
"counter is missing or different, or some rows could not become items\n"
"(without --allow-rejected), 2 usage, mapping, configuration or table\n"
"error, 1 aborted by a fatal error, 130 interrupted.\n",
    .default_concurrency = EL_VERIFY_DEFAULT_CONCURRENCY,
    .inputs = true,
    .own_opt = own_opt,
};

typedef struct report_ctx {
    FILE *file;
    const char *path;
    bool write_failed;
    long show;       /* mismatches still to print */
    uint64_t seen;
} report_ctx;

static void on_mismatch(void *user, const el_verify_mismatch *mm)
{
    report_ctx *rc = user;
    rc->seen++;
    if (rc->file && fprintf(rc->file, "%s\n", mm->json) < 0)
        rc->write_failed = true;
    if (rc->show <= 0)
        return;
    rc->show--;
    if (mm->kind == EL_VERIFY_REVERSE_MISSING || mm->kind == EL_VERIFY_REVERSE_EXTRA) {
        printf("%-15s %s under %s: PK=%s SK=%s\n", el_verify_kind_name(mm->kind),
               mm->kind == EL_VERIFY_REVERSE_MISSING ? "not listed" : "listed, not expected,",
               mm->index_key, mm->pk, mm->sk);
        return;
    }
    if (mm->kind == EL_VERIFY_COUNTER_MISSING || mm->kind == EL_VERIFY_COUNTER_DIFFERENT) {
        const el_verify_attr_diff *d = &mm->diffs[0];
        printf("%-17s PK=%s SK=%s %s: expected %s found %s\n", el_verify_kind_name(mm->kind),
               mm->pk, mm->sk, d->name, d->expected,
               d->actual ? d->actual : mm->item_present ? "(attribute absent)" : "(item absent)");
        return;
    }
    printf("%-15s PK=%s SK=%s", el_verify_kind_name(mm->kind), mm->pk, mm->sk);
    for (size_t i = 0; i < mm->ndiffs; i++)
        printf("%s %s expected %s actual %s", i ? ";" : ":", mm->diffs[i].name,
               mm->diffs[i].expected, mm->diffs[i].actual ? mm->diffs[i].actual : "(absent)");
    putchar('\n');
}

/* Every source with rows that cannot become items, one line each: a
 * failure (exit 4) on stderr, or with --allow-rejected a line of the
 * summary. */
static void print_rejected(const el_mapping *m, const uint64_t *by_source, bool allowed)
{
    for (size_t i = 0; i < m->nsources; i++) {
        if (!by_source[i])
            continue;
        if (allowed)
            printf("edgeload: verify: %llu rows of %s could not become items (rejected, "
                   "allowed by --allow-rejected)\n", (unsigned long long)by_source[i],
                   m->sources[i]->name);
        else
            cli_error("verify: %llu rows of %s could not become items (rejected: see the "
                      "rejects file)", (unsigned long long)by_source[i], m->sources[i]->name);
    }
}

static void summary(const el_verify_stats *st, const el_verify_opts *vo, const report_ctx *rep,
                    bool allow_rejected)
{
    if (!vo->counters_only)
        printf("edgeload: verify: expected %llu present %llu missing %llu different %llu%s\n",
               (unsigned long long)st->expected, (unsigned long long)st->present,
               (unsigned long long)st->missing, (unsigned long long)st->different,
               vo->sample ? " (sample)" : "");
    if (st->directories)
        printf("edgeload: verify: %llu shard directory items among the expected (one per hot "
               "key, fanIn over every source)\n", (unsigned long long)st->directories);
    if (st->counters_expected || st->counter_edges)
        printf("edgeload: verify: counters: expected %llu present %llu missing %llu "
               "different %llu (%llu counter items%s; %llu distinct edges counted, %llu "
               "duplicate rows counted once)\n",
               (unsigned long long)st->counters_expected, (unsigned long long)st->counters_present,
               (unsigned long long)st->counters_missing,
               (unsigned long long)st->counters_different, (unsigned long long)st->counter_items,
               vo->sample ? ", sample" : "", (unsigned long long)st->counter_edges,
               (unsigned long long)st->counter_duplicates);
    if (vo->reverse)
        printf("edgeload: verify: reverse: %llu index keys, %llu items expected, "
               "reverse-missing %llu reverse-extra %llu\n",
               (unsigned long long)st->reverse_keys, (unsigned long long)st->reverse_expected,
               (unsigned long long)st->reverse_missing, (unsigned long long)st->reverse_extra);
    printf("edgeload: verify: %llu rows read, %llu rejected%s, %llu duplicates, %llu requests, "
           "%llu retries, %llu throttled, %.1f RCU in %.2f s\n",
           (unsigned long long)st->rows_read, (unsigned long long)st->rejected,
           st->rejected && allow_rejected ? " (allowed)" : "",
           (unsigned long long)st->duplicates, (unsigned long long)st->requests,
           (unsigned long long)st->retries, (unsigned long long)st->throttled,
           st->rcu_consumed, st->elapsed_s);
    if (rep->seen)
        printf("edgeload: verify: %llu mismatches, all in %s\n",
               (unsigned long long)rep->seen, rep->path);
}

/* "rejected_by_source": {"SOURCE": N, ...}, the sources with rejected rows. */
static char *rejected_json(const el_mapping *m, const uint64_t *by_source)
{
    el_buf b;
    el_buf_init(&b, 1u << 20);
    el_err err = el_buf_putc(&b, '{');
    bool first = true;
    for (size_t i = 0; !err && i < m->nsources; i++) {
        if (!by_source[i])
            continue;
        err = first ? EL_OK : el_buf_putc(&b, ',');
        first = false;
        err = err ? err : el_json_put_string(&b, m->sources[i]->name,
                                             strlen(m->sources[i]->name));
        err = err ? err : el_buf_printf(&b, ":%llu", (unsigned long long)by_source[i]);
    }
    err = err ? err : el_buf_putc(&b, '}');
    if (err) {
        el_buf_free(&b);
        return NULL;
    }
    return el_buf_take(&b);
}

static void write_stats(const char *path, const el_verify_stats *st, const el_mapping *m,
                        const uint64_t *by_source, bool allow_rejected)
{
    char *rejected = rejected_json(m, by_source);
    const cmd_stat v[] = {
        CMD_U64("rows_read", st->rows_read),
        CMD_U64("rejected", st->rejected),
        CMD_RAW("rejected_by_source", rejected ? rejected : "{}"),
        CMD_RAW("rejected_allowed", allow_rejected ? "true" : "false"),
        CMD_U64("duplicates", st->duplicates),
        CMD_U64("expected", st->expected),
        CMD_U64("directories", st->directories),
        CMD_U64("present", st->present),
        CMD_U64("missing", st->missing),
        CMD_U64("different", st->different),
        CMD_U64("counters_expected", st->counters_expected),
        CMD_U64("counters_present", st->counters_present),
        CMD_U64("counters_missing", st->counters_missing),
        CMD_U64("counters_different", st->counters_different),
        CMD_U64("reverse_keys", st->reverse_keys),
        CMD_U64("reverse_missing", st->reverse_missing),
        CMD_U64("reverse_extra", st->reverse_extra),
        CMD_U64("requests", st->requests),
        CMD_U64("retries", st->retries),
        CMD_U64("throttled", st->throttled),
        CMD_DBL("rcu_consumed", st->rcu_consumed, 1),
        CMD_DBL("elapsed_s", st->elapsed_s, 3),
    };
    cmd_write_stats(path, v, sizeof v / sizeof v[0]);
    free(rejected);
}

int cmd_verify(int argc, char **argv)
{
    cmd_options o;
    verify_args va = { .report = DEFAULT_REPORT, .show = DEFAULT_SHOW };
    el_verify_opts *vo = &va.vo;
    vo->seed = EL_VERIFY_DEFAULT_SEED;
    vo->reverse_recheck_ms = 1000;
    report_ctx rep = { 0 };
    int rc = EXIT_FATAL;
    char *split_names[4] = { NULL, NULL, NULL, NULL };
    el_mapping *m = NULL;
    el_aws_config *cfg = NULL;
    el_ddb *ddb = NULL;
    cli_s3 s3c = { 0 };
    if ((rc = cmd_parse(&spec, argc, argv, &o, &va)) >= 0)
        goto out;
    if (o.split.count && !cmd_split_names(&o, &va.report, split_names)) {
        rc = EXIT_FATAL;
        goto out;
    }
    const cmd_output report = { "--report", "the report file", va.report, false };
    if ((rc = cmd_check_outputs(&spec, &o, &report, 1)))
        goto out;
    if (!(m = build_mapping(&o.map, &rc)))
        goto out;
    rc = EXIT_FATAL;
    if (!(vo->rejected_by_source = calloc(m->nsources ? m->nsources : 1,
                                          sizeof *vo->rejected_by_source))) {
        cli_error("out of memory");
        goto out;
    }
    rc = EXIT_USAGE;
    if (o.split.count && vo->reverse) {
        cli_error("verify: --split checks a part's items only: no --reverse (a part does not "
                  "know every source of a target)");
        goto out;
    }
    vo->reader = o.reader;
    vo->max_retry_time_s = o.max_retry_time_s;
    vo->concurrency = o.concurrency ? o.concurrency : spec.default_concurrency;
    vo->plan_path = o.plan;
    vo->split = o.split;
    vo->max_rcu = o.max_rcu;
    const char **inputs = o.map.inputs;
    size_t ninputs = o.map.ninputs;
    s3c.endpoint = o.endpoint_s3;
    if (!cli_s3_inputs(&s3c, &o.aws, m, &inputs, &ninputs, &vo->reader, &rc))
        goto out;
    rc = EXIT_USAGE;
    if (!cli_connect(&o.aws, &cfg, &ddb))
        goto out;
    if ((rc = cmd_check_table(ddb, cfg, m, EL_TABLE_KEYS | (vo->reverse ? EL_TABLE_INDEX : 0))))
        goto out;
    if (o.split.count && el_mapping_has_counters(m) && !vo->no_counters && !o.quiet &&
        !vo->counters_only)
        fprintf(stderr, "edgeload: --split %u/%u: counters are not checked by a part (its counts "
                "are not the totals); run 'edgeload verify --counters-only' once over the "
                "whole input\n", o.split.index + 1, o.split.count);
    rep.path = va.report;
    rep.show = o.quiet ? 0 : va.show;
    rep.file = fopen(rep.path, "w");
    if (!rep.file) {
        cli_error("cannot write the report file %s: %s", rep.path, strerror(errno));
        rc = EXIT_USAGE;
        goto out;
    }
    vo->mapping = m;
    vo->inputs = ninputs ? inputs : NULL;
    vo->ninputs = ninputs;
    vo->ddb = ddb;
    vo->stop = &cmd_stop;
    vo->on_mismatch = on_mismatch;
    vo->user = &rep;
    progress prog;
    progress_init(&prog, o.quiet ? PROGRESS_NONE : o.progress, o.progress_interval_s);
    vo->progress = progress_report;
    vo->progress_user = &prog;
    cmd_catch_signals();
    el_verify_stats st;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_verify_run(vo, &st, &d);
    if (fclose(rep.file) != 0)
        rep.write_failed = true;
    rep.file = NULL;
    if (err) {
        cli_error("%s", d.msg);
        rc = cmd_exit_code(err);
    } else if (st.missing || st.different || st.reverse_missing || st.reverse_extra ||
               st.counters_missing || st.counters_different ||
               (st.rejected && !va.allow_rejected)) {
        rc = EXIT_VERIFY;
    } else {
        rc = EXIT_LOADED;
    }
    if (!err && (!va.allow_rejected || !o.quiet))
        print_rejected(m, vo->rejected_by_source, va.allow_rejected);
    if (!o.quiet && err != EL_EUSAGE)
        summary(&st, vo, &rep, va.allow_rejected);
    fflush(stdout);
    if (o.stats_json && err != EL_EUSAGE)
        write_stats(o.stats_json, &st, m, vo->rejected_by_source, va.allow_rejected);
    if (rep.write_failed) {
        cli_error("cannot write the report file %s", rep.path);
        if (rc == EXIT_LOADED || rc == EXIT_VERIFY)
            rc = EXIT_FATAL;
    }
out:
    cmd_split_names_free(split_names);
    free(vo->rejected_by_source);
    if (rep.file)
        fclose(rep.file);
    cmd_options_free(&o);
    el_mapping_free(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    cli_s3_free(&s3c);
    return rc;
}
