/*
 * cmd_counters.c - `edgeload counters`: backfill the mapping's counters
 * from the whole input without rewriting any item.
 *
 * The load pipeline does the reading and counting (el_load_opts
 * counters_only: every row is counted, none written), then the counters are
 * SET with UpdateItem; running it again lands the same values.
 */
#include <signal.h>  /* SIGINT/SIGTERM stop the run */
#include <stdatomic.h> /* the stop flag its handler sets */
#include <stdio.h>   /* fprintf */
#include <stdlib.h>  /* calloc, free */

#include "cmd/cli.h"
#include "cmd/s3_cli.h"
#include "cmd/mapping_opts.h"
#include "pipeline/loader.h"
#include "pipeline/mapping.h"

enum {
    O_CONCURRENCY = MAPPING_OPT_END, O_THREADS, O_QUIET, O_STATS_JSON, O_MAX_RETRY_TIME,
    O_MAX_WCU, O_REJECTS
};

enum { O_SPLIT = O_REJECTS + 100 }; /* refused, with the reason */

static const cli_opt opts[] = {
    CLI_MAPPING_OPTS,
    { "split", true, O_SPLIT },
    { "concurrency", true, O_CONCURRENCY },
    { "threads", true, O_THREADS },
    { "quiet", false, O_QUIET },
    { "stats-json", true, O_STATS_JSON },
    { "max-retry-time", true, O_MAX_RETRY_TIME },
    { "max-wcu", true, O_MAX_WCU },
    { "rejects", true, O_REJECTS },
    CLI_AWS_OPTS,
    CLI_S3_OPTS,
    { NULL, false, 0 }
};

static void help(void)
{
    fputs(
"usage: edgeload counters [OPTIONS] [INPUT...]\n"
"\n"
"Backfills counters without rewriting items: reads every row of every INPUT,\n"
"counts each row once for every counter its source names (a row whose item\n"
"key was seen before in the run is a duplicate of the same edge and counts\n"
"once), then writes each counter item with UpdateItem SET attr = count. The\n"
"result is exact and idempotent: running it again changes nothing.\n"
"\n"
"Counters come from the mapping (\"counters\": [{\"pk\": ..., \"sk\": ...,\n"
"\"attribute\": ...}] per source) or, for one source, from flags:\n"
"  --counter PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE   e.g.\n"
"      --counter 'USER#{followee_id},PROFILE,followerCount'   (repeatable)\n"
"A row whose counter template has a NULL or empty placeholder adds to no\n"
"counter of that template (it is not rejected for it). A counter item with\n"
"no rows gets no attribute: read a missing counter as 0.\n"
"\n"
"Mapping and input options are those of `edgeload load` (--mapping, --table,\n"
"--pk, --sk, --attr, --format, --delimiter, --null, --escape, --columns, ...).\n"
"\n"
"Run:\n"
"  --concurrency N          UpdateItem requests in flight (default 16)\n"
"  --threads N              input files read at once (default: number of cores)\n"
"  --max-wcu N              write at most N capacity units per second\n"
"  --max-retry-time SECONDS give up after this long of continuous non-throttle\n"
"                           failures (default 900)\n"
"  --rejects FILE           rows that cannot become items (default\n"
"                           edgeload-rejects.jsonl); they count for nothing\n"
"  --stats-json FILE        write the final figures as JSON\n"
"  --quiet                  no summary line\n"
"\n"
"AWS: --endpoint-url URL, --region REGION, --profile NAME, --no-verify-ssl\n"
"\n"
"Exit status: 0 written, 3 finished with rejected rows, 2 usage or mapping\n"
"error, 1 aborted (some counters refused or the service failed), 130 interrupted.\n",
        stdout);
}

/* atomic: the handler may run on any thread while the others read it
 * (pipeline/loader.h, el_load_opts.stop) */
static atomic_int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

int cmd_counters(int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, "counters", argc, argv, opts);
    el_aws_opts aws = { 0 };
    mapping_args a = { 0 };
    el_load_opts lo = { 0 };
    lo.concurrency = 16;
    lo.max_retry_time_s = 900;
    lo.counters_only = true;
    const char *stats_path = NULL, *rejects_path = "edgeload-rejects.jsonl";
    bool quiet = false;
    long n;
    int rc = EXIT_USAGE;
    el_mapping *m = NULL;
    el_aws_config *cfg = NULL;
    el_ddb *ddb = NULL;
    el_rejects *rej = NULL;
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
        int handled = id > 0 ? mapping_opt(&a, &lo.reader, id, arg) : 0;
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
        case O_SPLIT:
            cli_error("counters: no --split: a count needs every row of the whole input (a "
                      "part's count would overwrite the total); run it once, after the "
                      "split load's workers");
            goto out;
        case O_CONCURRENCY:
            if (!cli_parse_long("concurrency", arg, 1, &n))
                goto out;
            lo.concurrency = (int)n;
            break;
        case O_THREADS:
            if (!cli_parse_long("threads", arg, 1, &n))
                goto out;
            lo.threads = (int)n;
            break;
        case O_QUIET: quiet = true; break;
        case O_STATS_JSON: stats_path = arg; break;
        case O_REJECTS: rejects_path = arg; break;
        case O_MAX_RETRY_TIME:
            if (!cli_parse_double("max-retry-time", arg, 0, &lo.max_retry_time_s))
                goto out;
            break;
        case O_MAX_WCU:
            if (!cli_parse_double("max-wcu", arg, 1, &lo.max_wcu))
                goto out;
            break;
        case OPT_ENDPOINT_URL_S3: s3c.endpoint = arg; break;
        default: cli_aws_opt(&aws, id, arg); break;
        }
    }
    m = build_mapping(&a, &rc);
    if (!m)
        goto out;
    rc = EXIT_USAGE;
    if (!el_mapping_has_counters(m)) {
        cli_error("counters: the mapping has no counters (\"counters\" in a source, or "
                  "--counter PK,SK,ATTRIBUTE)");
        goto out;
    }
    inputs = a.inputs;
    ninputs = a.ninputs;
    if (!cli_s3_inputs(&s3c, &aws, m, &inputs, &ninputs, &lo.reader, &rc))
        goto out;
    rc = EXIT_USAGE;
    if (!cli_connect(&aws, &cfg, &ddb))
        goto out;
    el_table_desc td;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_ddb_describe_table(ddb, m->table, &td, &d);
    if (err) {
        cli_error("%s", d.msg);
        rc = cli_exit_code(err) == EXIT_USAGE || err == EL_ETABLE ? EXIT_USAGE : EXIT_FATAL;
        goto out;
    }
    rej = el_rejects_new(rejects_path, -1);
    if (!rej) {
        rc = EXIT_FATAL;
        goto out;
    }
    lo.mapping = m;
    lo.inputs = ninputs ? inputs : NULL;
    lo.ninputs = ninputs;
    lo.ddb = ddb;
    lo.rejects = rej;
    lo.stop = &stop_flag;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    el_load_stats st;
    el_diag_clear(&d);
    err = el_load_run(&lo, &st, &d);
    if (err)
        cli_error("%s", d.msg);
    if (err == EL_EUSAGE || err == EL_ECONFIG) {
        rc = EXIT_USAGE;
        goto out;
    }
    rc = cli_exit_code(err);
    if (err == EL_ELIMIT || err == EL_EIO)
        rc = EXIT_FATAL;
    if (!err && st.rejected > 0)
        rc = EXIT_REJECTS;
    if (!quiet)
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
    if (stats_path) {
        FILE *f = fopen(stats_path, "w");
        if (!f) {
            cli_warn("cannot write --stats-json %s", stats_path);
        } else {
            fprintf(f, "{\"rows_read\":%llu,\"edges\":%llu,\"duplicates\":%llu,"
                    "\"counters_written\":%llu,\"rejected\":%llu,\"retries\":%llu,"
                    "\"throttled\":%llu,\"requests\":%llu,\"wcu_consumed\":%.1f,"
                    "\"elapsed_s\":%.3f}\n",
                    (unsigned long long)st.rows_read, (unsigned long long)st.counter_edges,
                    (unsigned long long)st.counter_duplicates,
                    (unsigned long long)st.counters_written, (unsigned long long)st.rejected,
                    (unsigned long long)st.retries, (unsigned long long)st.throttled,
                    (unsigned long long)st.requests, st.wcu_consumed, st.elapsed_s);
            if (fclose(f) != 0)
                cli_warn("cannot write --stats-json %s", stats_path);
        }
    }
out:
    mapping_args_free(&a);
    el_rejects_free(rej);
    el_mapping_free(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    cli_s3_free(&s3c);
    return rc;
}
