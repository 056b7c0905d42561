/*
 * cmd_verify.c - `edgeload verify`: the same mapping and inputs as load,
 * a table check, the verification, the first mismatches, the report file,
 * the summary and the exit status (0 all match, 4 anything missing or
 * different).
 */
#include <errno.h>   /* errno for the report file */
#include <signal.h>  /* SIGINT/SIGTERM stop the run cleanly */
#include <stdatomic.h> /* the stop flag its handler sets */
#include <stdio.h>   /* fprintf, fopen */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcmp */

#include "cmd/cli.h"
#include "cmd/s3_cli.h"
#include "cmd/mapping_opts.h"
#include "pipeline/mapping.h"
#include "pipeline/verify.h"

enum {
    O_SAMPLE = MAPPING_OPT_END, O_SEED, O_REVERSE, O_REPORT, O_SHOW, O_QUIET, O_MAX_RETRY_TIME,
    O_CONCURRENCY, O_PLAN, O_NO_COUNTERS, O_COUNTERS_ONLY
};

enum { O_SPLIT = O_PLAN + 100 }; /* --split: the part of load --split I/N */

static const cli_opt opts[] = {
    CLI_MAPPING_OPTS,
    { "split", true, O_SPLIT },
    { "sample", true, O_SAMPLE },
    { "seed", true, O_SEED },
    { "reverse", true, O_REVERSE },
    { "report", true, O_REPORT },
    { "show", true, O_SHOW },
    { "quiet", false, O_QUIET },
    { "max-retry-time", true, O_MAX_RETRY_TIME },
    { "concurrency", true, O_CONCURRENCY },
    { "plan", true, O_PLAN },
    { "no-counters", false, O_NO_COUNTERS },
    { "counters-only", false, O_COUNTERS_ONLY },
    CLI_AWS_OPTS,
    CLI_S3_OPTS,
    { NULL, false, 0 }
};

#define DEFAULT_REPORT "edgeload-verify.jsonl"
#define STR_(x) #x
#define STR(x) STR_(x)
#define DEFAULT_SHOW 10

static void help(void)
{
    fputs(
"usage: edgeload verify [OPTIONS] [INPUT...]\n"
"\n"
"Reads the INPUTs with the same mapping as load, recomputes every item load\n"
"writes (for a key given by several rows, the later row), fetches the items\n"
"with BatchGetItem (100 keys a request, consistent reads) and checks that\n"
"each is present with every mapped attribute equal (numbers compared as\n"
"numbers, so 1.50 equals 1.5; attributes the mapping does not write are\n"
"ignored). Prints the counts and the first mismatches; writes every mismatch\n"
"to the report file as JSON lines. Rows load would reject are counted and\n"
"skipped.\n"
"\n"
"Counters: when the mapping has counters (\"counters\" or --counter), they are\n"
"counted from the same rows with the backfill's own code (a duplicate row\n"
"counts once, a rejected row not at all) and every counter item is fetched\n"
"too: a counter item or attribute that is absent is reported as\n"
"counter-missing, another value as counter-different (key, attribute,\n"
"expected and found). Counting holds every distinct edge in memory, as the\n"
"backfill does (about 32 bytes each), with or without --sample.\n"
"\n"
"Mapping and input: the same options as load (see 'edgeload load --help'):\n"
"  --mapping FILE, --table NAME, --pk/--sk/--index-pk/--index-sk TEMPLATE,\n"
"  --no-index, --index-name NAME (default GSI1), --attr NAME=COLUMN[:TYPE],\n"
"  --const NAME=VALUE[:TYPE], --all-columns, --source-table NAME,\n"
"  --format FORMAT (default auto), --delimiter CHAR, --null STRING,\n"
"  --escape CHAR, --columns A,B,C\n"
"\n"
"Verification:\n"
"  --sample N               check a uniform random sample of N distinct items\n"
"                           instead of all of them (default: all; memory is\n"
"                           then bounded by N); counters: a uniform sample of N\n"
"                           counter items as well\n"
"  --seed N                 seed of the samples (default " STR(EL_VERIFY_DEFAULT_SEED) "): the same\n"
"                           seed and inputs check the same items\n"
"  --reverse K              also Query the index for K sampled index partition\n"
"                           keys and check that it lists exactly the expected\n"
"                           items (default 0: no reverse check). The index is\n"
"                           eventually consistent: a key that does not match is\n"
"                           queried again a second later before it is reported\n"
"  --no-counters            do not check the mapping's counters\n"
"  --counters-only          check the counters and no item (after `edgeload\n"
"                           counters`)\n"
"  --report FILE            every mismatch as a JSON line: {\"kind\":\"missing\"|\n"
"                           \"different\"|\"reverse-missing\"|\"reverse-extra\"|\n"
"                           \"counter-missing\"|\"counter-different\",\n"
"                           \"key\":{...},\"attributes\":{NAME:{\"expected\":..,\n"
"                           \"actual\":..}}} (default " DEFAULT_REPORT ";\n"
"                           written on every run, empty when all match)\n"
"  --show N                 mismatches printed (default 10)\n"
"  --hot-threshold N, --max-shards N, --plan FILE\n"
"                           the hot-target settings the load used, so sharded\n"
"                           index keys are expected where load put them\n"
"  --concurrency N          BatchGetItem requests in flight (default 8); the\n"
"                           --reverse Queries go one at a time\n"
"  --max-retry-time SECONDS give up after this long of continuous non-throttle\n"
"                           failures (default 900); throttling never gives up\n"
"  --quiet                  print neither mismatches nor the summary\n"
"  --split I/N, --split auto/N\n"
"                           check only the items of part I of N, as 'load --split'\n"
"                           cuts the inputs (README, Scale); no --reverse. The\n"
"                           report file name gets {i}/{n} or .I-of-N as load's files\n"
"\n"
"AWS (as the AWS CLI; also AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_DYNAMODB, ...):\n"
"  --endpoint-url URL       DynamoDB endpoint, e.g. http://127.0.0.1:8000\n"
"  --region REGION          AWS region\n"
"  --profile NAME           profile from ~/.aws/credentials and ~/.aws/config\n"
"  --no-verify-ssl          do not verify HTTPS certificates (warns)\n"
"\n"
"Exit status: 0 every checked item and counter matches, 4 some item or\n"
"counter is missing or different, 2 usage, mapping, configuration or table error, 1 aborted by a\n"
"fatal error, 130 interrupted.\n",
        stdout);
}

/* atomic: the handler may run on any thread while the others read it
 * (pipeline/loader.h, el_load_opts.stop) */
static atomic_int stop_flag;

/* --split auto/N reads the scheduler's index from the environment */
static const char *env_get(const char *name) { return getenv(name); }

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

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

/* The table must exist with the mapping's key attributes (and the index for
 * --reverse); otherwise there is nothing meaningful to compare. */
static int check_table(el_ddb *ddb, const el_mapping *m, bool want_index)
{
    el_table_desc t;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_ddb_describe_table(ddb, m->table, &t, &d);
    if (err) {
        cli_error("%s", d.msg);
        return cli_exit_code(err) == EXIT_USAGE || err == EL_ETABLE || err == EL_ECONFIG
                   ? EXIT_USAGE
                   : EXIT_FATAL;
    }
    if (strcmp(t.key.pk, m->pk_attr) != 0 || strcmp(t.key.sk, m->sk_attr) != 0) {
        cli_error("table %s has key (%s, %s) but the mapping's items have key (%s, %s)",
                  m->table, t.key.pk, t.key.sk[0] ? t.key.sk : "no sort key", m->pk_attr,
                  m->sk_attr);
        return EXIT_USAGE;
    }
    if (!want_index)
        return EXIT_LOADED;
    for (size_t i = 0; i < t.ngsi; i++)
        if (strcmp(t.gsi[i].name, m->index_name) == 0)
            return EXIT_LOADED;
    cli_error("--reverse: table %s has no index %s to query", m->table, m->index_name);
    return EXIT_USAGE;
}

static void summary(const el_verify_stats *st, const el_verify_opts *vo, const report_ctx *rep)
{
    if (!vo->counters_only)
        printf("edgeload: verify: expected %llu present %llu missing %llu different %llu%s\n",
               (unsigned long long)st->expected, (unsigned long long)st->present,
               (unsigned long long)st->missing, (unsigned long long)st->different,
               vo->sample ? " (sample)" : "");
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
    printf("edgeload: verify: %llu rows read, %llu rejected, %llu duplicates, %llu requests, "
           "%llu retries, %llu throttled, %.1f RCU in %.2f s\n",
           (unsigned long long)st->rows_read, (unsigned long long)st->rejected,
           (unsigned long long)st->duplicates, (unsigned long long)st->requests,
           (unsigned long long)st->retries, (unsigned long long)st->throttled,
           st->rcu_consumed, st->elapsed_s);
    if (rep->seen)
        printf("edgeload: verify: %llu mismatches, all in %s\n",
               (unsigned long long)rep->seen, rep->path);
}

int cmd_verify(int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, "verify", argc, argv, opts);
    el_aws_opts aws = { 0 };
    mapping_args a = { 0 };
    el_verify_opts vo = { 0 };
    vo.seed = EL_VERIFY_DEFAULT_SEED;
    vo.max_retry_time_s = 900;
    vo.concurrency = 8;
    vo.reverse_recheck_ms = 1000;
    report_ctx rep = { .path = DEFAULT_REPORT, .show = DEFAULT_SHOW };
    bool quiet = false;
    int rc = EXIT_USAGE;
    char *split_report = NULL; /* --split: this worker's report name */
    long n;
    el_mapping *m = NULL;
    el_aws_config *cfg = NULL;
    el_ddb *ddb = NULL;
    cli_s3 s3c = { 0 };
    const char **inputs = NULL;
    size_t ninputs = 0;
    if (!mapping_args_init(&a, argc)) {
        cli_error("out of memory");
        rc = EXIT_FATAL;
        goto out;
    }
    const char *arg;
    int id;
    while ((id = cli_next(&p, &arg)) != -1) {
        int handled = id > 0 ? mapping_opt(&a, &vo.reader, id, arg) : 0;
        if (handled < 0) {
            rc = handled == -2 ? EXIT_FATAL : EXIT_USAGE;
            goto out;
        }
        if (handled)
            continue;
        switch (id) {
        case -2: goto out;
        case 0: a.inputs[a.ninputs++] = arg; break;
        case O_HELP: help(); rc = 0; goto out;
        case O_SAMPLE:
            if (!cli_parse_long("sample", arg, 1, &n))
                goto out;
            vo.sample = (uint64_t)n;
            break;
        case O_SEED:
            if (!cli_parse_long("seed", arg, 0, &n))
                goto out;
            vo.seed = (uint64_t)n;
            break;
        case O_REVERSE:
            if (!cli_parse_long("reverse", arg, 0, &n))
                goto out;
            vo.reverse = (uint64_t)n;
            break;
        case O_REPORT: rep.path = arg; break;
        case O_SHOW:
            if (!cli_parse_long("show", arg, 0, &rep.show))
                goto out;
            break;
        case O_QUIET: quiet = true; break;
        case O_MAX_RETRY_TIME:
            if (!cli_parse_double("max-retry-time", arg, 0, &vo.max_retry_time_s))
                goto out;
            break;
        case O_PLAN: vo.plan_path = arg; break;
        case O_SPLIT: {
            el_diag sd;
            el_diag_clear(&sd);
            if (el_split_parse(arg, env_get, &vo.split, &sd)) {
                cli_error("%s", sd.msg);
                goto out;
            }
            break;
        }
        case O_NO_COUNTERS: vo.no_counters = true; break;
        case O_COUNTERS_ONLY: vo.counters_only = true; break;
        case O_CONCURRENCY:
            if (!cli_parse_long("concurrency", arg, 1, &n))
                goto out;
            vo.concurrency = (int)n;
            break;
        case OPT_ENDPOINT_URL_S3: s3c.endpoint = arg; break;
        default: cli_aws_opt(&aws, id, arg); break;
        }
    }
    m = build_mapping(&a, &rc);
    if (!m)
        goto out;
    if (vo.split.count && vo.reverse) {
        cli_error("verify: --split checks a part's items only: no --reverse (a part does not "
                  "know every source of a target)");
        rc = EXIT_USAGE;
        goto out;
    }
    inputs = a.inputs;
    ninputs = a.ninputs;
    if (!cli_s3_inputs(&s3c, &aws, m, &inputs, &ninputs, &vo.reader, &rc))
        goto out;
    rc = EXIT_USAGE;
    if (!cli_connect(&aws, &cfg, &ddb))
        goto out;
    rc = check_table(ddb, m, vo.reverse > 0);
    if (rc != EXIT_LOADED)
        goto out;
    if (vo.split.count && el_mapping_has_counters(m) && !vo.no_counters && !quiet &&
        !vo.counters_only)
        fprintf(stderr, "edgeload: --split %u/%u: counters are not checked by a part (its counts "
                "are not the totals); run 'edgeload verify --counters-only' once over the "
                "whole input\n", vo.split.index + 1, vo.split.count);
    if (vo.split.count) { /* each worker its own report */
        if (!(split_report = el_split_path(rep.path, &vo.split))) {
            rc = EXIT_FATAL;
            goto out;
        }
        rep.path = split_report;
    }
    rep.file = fopen(rep.path, "w");
    if (!rep.file) {
        cli_error("cannot write the report file %s: %s", rep.path, strerror(errno));
        rc = EXIT_USAGE;
        goto out;
    }
    if (quiet)
        rep.show = 0;
    vo.mapping = m;
    vo.inputs = ninputs ? inputs : NULL;
    vo.ninputs = ninputs;
    vo.ddb = ddb;
    vo.stop = &stop_flag;
    vo.on_mismatch = on_mismatch;
    vo.user = &rep;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    el_verify_stats st;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_verify_run(&vo, &st, &d);
    if (fclose(rep.file) != 0)
        rep.write_failed = true;
    rep.file = NULL;
    if (err) {
        cli_error("%s", d.msg);
        rc = err == EL_ETABLE ? EXIT_USAGE : cli_exit_code(err);
        if (rc == EXIT_LOADED || rc == EXIT_REJECTS)
            rc = EXIT_FATAL;
    } else if (st.missing || st.different || st.reverse_missing || st.reverse_extra ||
               st.counters_missing || st.counters_different) {
        rc = EXIT_VERIFY;
    } else {
        rc = EXIT_LOADED;
    }
    if (!quiet && err != EL_EUSAGE)
        summary(&st, &vo, &rep);
    fflush(stdout);
    if (rep.write_failed) {
        cli_error("cannot write the report file %s", rep.path);
        if (rc == EXIT_LOADED || rc == EXIT_VERIFY)
            rc = EXIT_FATAL;
    }
out:
    free(split_report);
    if (rep.file)
        fclose(rep.file);
    mapping_args_free(&a);
    el_mapping_free(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    cli_s3_free(&s3c);
    return rc;
}
