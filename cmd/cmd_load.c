/*
 * cmd_load.c - `edgeload load`: options to a mapping and a load
 * configuration, a table check, the run, the summary and the exit status.
 */
#include <signal.h>  /* SIGINT/SIGTERM stop the run cleanly */
#include <stdatomic.h> /* reject messages come from several threads; the stop flag */
#include <stdio.h>   /* fprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strchr, strcmp */
#include <unistd.h>  /* isatty */

#include "cmd/cli.h"
#include "cmd/mapping_opts.h"
#include "cmd/progress.h"
#include "cmd/s3_cli.h"
#include "pipeline/incremental.h"
#include "pipeline/loader.h"
#include "pipeline/mapping.h"
#include "pipeline/split.h"

enum {
    O_DRY_RUN = MAPPING_OPT_END, O_REJECTS, O_MAX_REJECTS, O_CONCURRENCY, O_THREADS, O_QUIET,
    O_STATS_JSON, O_MAX_RETRY_TIME, O_CHECKPOINT, O_RESUME, O_MAX_WCU, O_PROGRESS,
    O_PROGRESS_INTERVAL, O_CHECKPOINT_INTERVAL,
    O_OUTPUT, O_PART_ITEMS, O_PLAN, O_INCREMENTAL, O_OP_COLUMN, O_NO_GROUP, O_SPLIT
};

static const cli_opt opts[] = {
    CLI_MAPPING_OPTS,
    { "dry-run", false, O_DRY_RUN },
    { "rejects", true, O_REJECTS },
    { "max-rejects", true, O_MAX_REJECTS },
    { "concurrency", true, O_CONCURRENCY },
    { "threads", true, O_THREADS },
    { "quiet", false, O_QUIET },
    { "stats-json", true, O_STATS_JSON },
    { "max-retry-time", true, O_MAX_RETRY_TIME },
    { "checkpoint", true, O_CHECKPOINT },
    { "plan", true, O_PLAN },
    { "checkpoint-interval", true, O_CHECKPOINT_INTERVAL },
    { "resume", false, O_RESUME },
    { "max-wcu", true, O_MAX_WCU },
    { "progress", true, O_PROGRESS },
    { "progress-interval", true, O_PROGRESS_INTERVAL },
    { "output", true, O_OUTPUT },
    { "part-items", true, O_PART_ITEMS },
    { "incremental", false, O_INCREMENTAL },
    { "op-column", true, O_OP_COLUMN },
    { "no-group", false, O_NO_GROUP },
    { "split", true, O_SPLIT },
    CLI_AWS_OPTS,
    CLI_S3_OPTS,
    { NULL, false, 0 }
};

static void help(void)
{
    fputs(
"usage: edgeload load [OPTIONS] [INPUT...]\n"
"\n"
"Reads rows from each INPUT (a SQL dump, CSV or TSV file, - for standard\n"
"input, s3://BUCKET/KEY, or s3://BUCKET/PREFIX/ for every object under it in\n"
"key order; .zst and .gz are decompressed), turns every row into one item and\n"
"writes the items with BatchWriteItem (25 items a request, several requests in\n"
"flight, unprocessed items resent with backoff). INPUTs override the mapping's \"input\" (one per\n"
"source, in order). Relative \"input\" paths are relative to the mapping file.\n"
"\n"
"Mapping (a file, or flags for one source):\n"
"  --mapping FILE           JSON mapping (see README: table, index, sources)\n"
"  --table NAME             table to write (overrides the mapping's)\n"
"  --pk TEMPLATE            partition key, e.g. 'ACTOR#{follower_id}'\n"
"  --sk TEMPLATE            sort key, e.g. 'TARGET#{followee_id}'\n"
"  --index-pk TEMPLATE      index partition key (default: the rendered sk)\n"
"  --index-sk TEMPLATE      index sort key (default: the rendered pk)\n"
"  --no-index               write no index attributes\n"
"  --index-name NAME        index (default GSI1; key attributes NAMEPK, NAMESK)\n"
"  --attr NAME=COLUMN[:TYPE]  attribute from a column; TYPE is S, N, BOOL, B,\n"
"                           NULL, epoch or auto (default). Repeatable\n"
"  --const NAME=VALUE[:TYPE]  constant attribute (default type S). Repeatable\n"
"  --all-columns            copy every column as an attribute (auto types)\n"
"\n"
"Input:\n"
"  --format FORMAT          auto (default: from the name, else a dump's preamble,\n"
"                           never its rows), csv, tsv, mysql (mysqldump/\n"
"                           mariadb-dump), postgres (pg_dump plain), sqlite\n"
"                           (sqlite3 .dump)\n"
"  --source-table NAME      the table of a dump that holds several (or schema.name)\n"
"  --delimiter CHAR         field delimiter (default , for csv, tab for tsv)\n"
"  --null STRING            an unquoted field equal to STRING is NULL (default:\n"
"                           an unquoted empty field is NULL, a quoted one \"\")\n"
"  --escape CHAR            fields use CHAR as an escape, e.g. '\\' for MySQL's\n"
"                           SELECT ... INTO OUTFILE (\\N is NULL, \\t a tab...)\n"
"  --columns A,B,C          the file has no header row; these are its columns\n"
"\n"
"Hot targets (a target whose fan-in reaches the threshold gets\n"
"N = min(max-shards, ceil(fan-in / threshold)) index partitions KEY#0..KEY#N-1,\n"
"shard = FNV-1a-64(index sort key) mod N, and a directory item PK=KEY, SK=#SHARDS):\n"
"  --hot-threshold N        fan-in at which a target is sharded (every source with\n"
"                           an index; default: the mapping's \"hot\", else none)\n"
"  --max-shards N           most shards per target (default 32)\n"
"  --plan FILE              shard counts from 'edgeload plan --plan-out FILE'\n"
"                           (needed for standard input; without it, hot sources\n"
"                           are read twice: a counting pass, then the load)\n"
"\n"
"Run:\n"
"  --dry-run                print the items as DynamoDB JSON lines, write nothing\n"
"  --output DIR|s3://BUCKET/PREFIX/\n"
"                           write the items to files for DynamoDB's import from S3\n"
"                           instead of calling DynamoDB: DIR/data/part-NNNNN.json.zst\n"
"                           (DynamoDB JSON lines, zstd) and DIR/manifest.json, written\n"
"                           last; DIR must not hold the output of another run.\n"
"                           Import with the S3 prefix of DIR/data/ (format\n"
"                           DYNAMODB_JSON, compression ZSTD); an s3:// prefix gets\n"
"                           the same objects by multipart upload, manifest last.\n"
"                           Either way the 'aws dynamodb import-table' command for\n"
"                           a new table (keys, index, on-demand) is printed\n"
"  --part-items N           items per part file (default 4000000; a part also ends\n"
"                           at 1 GiB of uncompressed JSON)\n"
"  --rejects FILE           rejected rows as JSON lines (default\n"
"                           edgeload-rejects.jsonl, created on the first reject)\n"
"  --max-rejects N          abort when more than N rows are rejected (default: no limit)\n"
"  --concurrency N          requests in flight (default 16)\n"
"  --threads N              reader threads (default: number of cores): several inputs\n"
"                           are read at once; one large CSV/TSV is cut into parts parsed\n"
"                           in parallel when --threads is given, or by default with\n"
"                           --output or --dry-run on more than 2 cores\n"
"  --max-wcu N              write at most N capacity units per second (measured\n"
"                           from DynamoDB's ConsumedCapacity; table + index)\n"
"  --max-retry-time SECONDS give up after this long of continuous non-throttle\n"
"                           failures (default 900, exit 1 with the checkpoint\n"
"                           kept); throttling never gives up, it slows down\n"
"  --checkpoint FILE        record how far each input is written (atomically,\n"
"                           every --checkpoint-interval seconds, default 5, and at exit)\n"
"  --resume                 continue from --checkpoint FILE after a crash or kill\n"
"  --stats-json FILE        write the final figures as JSON\n"
"  --progress MODE          auto (default: bar on a terminal, else plain), bar,\n"
"                           plain (key=value lines), none\n"
"  --progress-interval SECONDS  seconds between plain lines (default 10)\n"
"  --quiet                  no progress and no summary line\n"
"\n"
"Split runs (README, Scale): N workers, started by any scheduler, each load a\n"
"disjoint part of the same inputs; together they load every row exactly once:\n"
"  --split I/N              read part I of N: whole inputs, and byte ranges cut at\n"
"                           record starts in plain CSV/TSV files\n"
"  --split auto/N           I from AWS_BATCH_JOB_ARRAY_INDEX (0-based), else\n"
"                           JOB_COMPLETION_INDEX (0-based, Kubernetes Indexed Job),\n"
"                           else PARALLEL_SEQ (1-based, GNU parallel's {#})\n"
"                           With --split: hot sources need --plan FILE (one plan over\n"
"                           the whole input); counters are not set (run one\n"
"                           'edgeload counters' after every worker finished);\n"
"                           --checkpoint, --rejects and --stats-json names get {i}\n"
"                           and {n} replaced, or .I-of-N before their extension\n"
"\n"
"Counters (mapping \"counters\", or --counter PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE,\n"
"repeatable): by default the counts are computed from the whole input (a\n"
"duplicate row counts once) and SET with UpdateItem after every item is\n"
"written; --resume re-reads every input to count, writing only the rest.\n"
"  --incremental            apply a delta: each row is one TransactWriteItems, a\n"
"                           Put with attribute_not_exists(PK) plus ADD :1 on its\n"
"                           counters; an existing item is a duplicate (no count\n"
"                           changes). Rows sharing a counter item go in one\n"
"                           transaction (up to 100 actions, one ADD of their sum).\n"
"                           Rerunning a delta is exact; no --checkpoint needed\n"
"  --op-column COL          with --incremental: rows whose COL is D are a Delete\n"
"                           with attribute_exists(PK) plus ADD :-1\n"
"  --no-group               with --incremental: one transaction per row\n"
"  (with --incremental, --plan FILE gives new edges of sharded hot targets the\n"
"  index shards of the backfill's plan; without it their index keys are unsharded)\n"
"\n"
"AWS (as the AWS CLI; also AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_DYNAMODB, ...):\n"
"  --endpoint-url URL       DynamoDB endpoint, e.g. http://127.0.0.1:8000\n"
"  --region REGION          AWS region\n"
"  --profile NAME           profile from ~/.aws/credentials and ~/.aws/config\n"
"  --no-verify-ssl          do not verify HTTPS certificates (warns)\n"
"  --endpoint-url-s3 URL    S3 endpoint for s3:// inputs and --output (also\n"
"                           AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL), e.g. an\n"
"                           S3-compatible store; addressed path-style\n"
"\n"
"Exit status: 0 loaded, 3 finished with rejected rows, 2 usage, mapping,\n"
"configuration or table error (nothing written), 1 aborted, 130 interrupted.\n",
        stdout);
}

/* atomic: the handler may run on any thread while the others read it
 * (pipeline/loader.h, el_load_opts.stop) */
static atomic_int stop_flag;

/* The first rejects are shown where they happen (file:line:column: why);
 * the rest only in the rejects file, so a bad file cannot flood a log. */
#define SHOWN_REJECTS 10

typedef struct reject_shower {
    atomic_uint shown;
    bool quiet;
} reject_shower;

static void show_reject(const char *input, const el_diag *why, void *user)
{
    reject_shower *rs = user;
    unsigned n = atomic_fetch_add(&rs->shown, 1);
    if (rs->quiet || n > SHOWN_REJECTS)
        return;
    if (n == SHOWN_REJECTS) {
        fprintf(stderr, "edgeload: more rows rejected; see the rejects file\n");
        return;
    }
    if (why->column)
        fprintf(stderr, "edgeload: %s:%llu:%llu: %s (row rejected)\n", input,
                (unsigned long long)why->line, (unsigned long long)why->column, why->msg);
    else
        fprintf(stderr, "edgeload: %s:%llu: %s (row rejected)\n", input,
                (unsigned long long)why->line, why->msg);
}

/* --split auto/N reads the scheduler's index from the environment */
static const char *env_get(const char *name) { return getenv(name); }

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static bool key_ok(const el_key_schema *k, const char *pk, const char *sk)
{
    return strcmp(k->pk, pk) == 0 && strcmp(k->sk, sk) == 0 && strcmp(k->pk_type, "S") == 0 &&
           strcmp(k->sk_type, "S") == 0;
}

/* The table must exist with string PK/SK and, when any source writes index
 * attributes, the index with string keys: otherwise nothing is written. */
static int check_table(el_ddb *ddb, const el_mapping *m, const el_aws_config *cfg)
{
    el_table_desc t;
    el_diag d;
    el_diag_clear(&d);
    bool want_index = false;
    for (size_t i = 0; i < m->nsources; i++)
        want_index |= m->sources[i]->index;
    char create[700];
    snprintf(create, sizeof create,
             "edgeload create-table --table %s%s%s --endpoint-url %s --region %s", m->table,
             want_index ? " --index-name " : " --no-index", want_index ? m->index_name : "",
             cfg->endpoint, cfg->region);
    el_err err = el_ddb_describe_table(ddb, m->table, &t, &d);
    if (err == EL_ETABLE) {
        cli_error("%s; create it with:\n  %s", d.msg, create);
        return EXIT_USAGE;
    }
    if (err) {
        cli_error("cannot describe table %s: %s", m->table, d.msg);
        return cli_exit_code(err) == EXIT_USAGE ? EXIT_USAGE : EXIT_FATAL;
    }
    if (!key_ok(&t.key, m->pk_attr, m->sk_attr)) {
        cli_error("table %s has key schema (%s %s, %s%s%s) but the mapping writes (%s S, %s S): "
                  "load into a table created with:\n  %s", m->table, t.key.pk, t.key.pk_type,
                  t.key.sk[0] ? t.key.sk : "no sort key", t.key.sk[0] ? " " : "",
                  t.key.sk_type, m->pk_attr, m->sk_attr, create);
        return EXIT_USAGE;
    }
    if (!want_index)
        return EXIT_LOADED;
    for (size_t i = 0; i < t.ngsi; i++) {
        if (strcmp(t.gsi[i].name, m->index_name) != 0)
            continue;
        if (key_ok(&t.gsi[i].key, m->index_pk_attr, m->index_sk_attr))
            return EXIT_LOADED;
        cli_error("index %s of table %s has keys (%s %s, %s %s) but the mapping writes "
                  "(%s S, %s S)", m->index_name, m->table, t.gsi[i].key.pk,
                  t.gsi[i].key.pk_type, t.gsi[i].key.sk, t.gsi[i].key.sk_type,
                  m->index_pk_attr, m->index_sk_attr);
        return EXIT_USAGE;
    }
    cli_error("table %s has no index %s (%s, %s) for the reverse direction: create the table "
              "with it:\n  %s\nor load with --no-index", m->table, m->index_name,
              m->index_pk_attr, m->index_sk_attr, create);
    return EXIT_USAGE;
}

static void write_stats(const char *path, const el_load_stats *st)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_warn("cannot write --stats-json %s", path);
        return;
    }
    fprintf(f, "{\"rows_read\":%llu,\"items_written\":%llu,\"duplicates\":%llu,"
            "\"rejected\":%llu,\"retries\":%llu,\"throttled\":%llu,\"requests\":%llu,"
            "\"wcu_consumed\":%.1f,\"elapsed_s\":%.3f,\"counters_written\":%llu,"
            "\"counter_edges\":%llu,\"counter_duplicates\":%llu}\n",
            (unsigned long long)st->rows_read, (unsigned long long)st->items_written,
            (unsigned long long)st->duplicates, (unsigned long long)st->rejected,
            (unsigned long long)st->retries, (unsigned long long)st->throttled,
            (unsigned long long)st->requests, st->wcu_consumed, st->elapsed_s,
            (unsigned long long)st->counters_written, (unsigned long long)st->counter_edges,
            (unsigned long long)st->counter_duplicates);
    if (fclose(f) != 0)
        cli_warn("cannot write --stats-json %s", path);
}

/* `load --incremental`: the delta through pipeline/incremental.h. */
static int run_incremental(const el_load_opts *lo, const char *op_column, bool no_group,
                           bool quiet, const char *stats_path)
{
    el_incr_opts io = {
        .mapping = lo->mapping, .reader = lo->reader, .inputs = lo->inputs,
        .ninputs = lo->ninputs, .ddb = lo->ddb, .rejects = lo->rejects,
        .concurrency = lo->concurrency, .max_wcu = lo->max_wcu,
        .max_retry_time_s = lo->max_retry_time_s, .stop = lo->stop, .op_column = op_column,
        .no_grouping = no_group, .plan_path = lo->plan_path,
        .progress = lo->progress, .progress_user = lo->progress_user
    };
    el_incr_stats st;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_incr_run(&io, &st, &d);
    if (err)
        cli_error("%s", d.msg);
    if (err == EL_EUSAGE || err == EL_ECONFIG)
        return EXIT_USAGE;
    int rc = cli_exit_code(err);
    if (err == EL_ELIMIT || err == EL_EIO)
        rc = EXIT_FATAL;
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
        FILE *f = fopen(stats_path, "w");
        if (!f) {
            cli_warn("cannot write --stats-json %s", stats_path);
        } else {
            /* the fields of a plain load ("duplicates" here: put rows whose
             * item existed), then the incremental ones */
            fprintf(f, "{\"rows_read\":%llu,\"items_written\":%llu,\"added\":%llu,"
                    "\"deleted\":%llu,"
                    "\"duplicates\":%llu,\"absent\":%llu,\"replayed\":%llu,"
                    "\"rejected\":%llu,\"transactions\":%llu,\"requests\":%llu,"
                    "\"retries\":%llu,\"throttled\":%llu,\"conflicts\":%llu,"
                    "\"splits\":%llu,\"wcu_consumed\":%.1f,\"elapsed_s\":%.3f}\n",
                    (unsigned long long)st.rows_read, (unsigned long long)ls.items_written,
                    (unsigned long long)st.added,
                    (unsigned long long)st.deleted, (unsigned long long)st.duplicates,
                    (unsigned long long)st.absent, (unsigned long long)st.replayed,
                    (unsigned long long)st.rejected, (unsigned long long)st.transactions,
                    (unsigned long long)st.requests, (unsigned long long)st.retries,
                    (unsigned long long)st.throttled, (unsigned long long)st.conflicts,
                    (unsigned long long)st.splits, st.wcu_consumed, st.elapsed_s);
            if (fclose(f) != 0)
                cli_warn("cannot write --stats-json %s", stats_path);
        }
    }
    return rc;
}

int cmd_load(int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, "load", argc, argv, opts);
    el_aws_opts aws = { 0 };
    mapping_args a = { 0 };
    el_load_opts lo = { 0 };
    lo.concurrency = 16;
    lo.max_retry_time_s = 900;
    lo.dry_out = stdout;
    const char *rejects_path = "edgeload-rejects.jsonl", *stats_path = NULL;
    long max_rejects = -1, n;
    bool quiet = false, incremental = false, no_group = false;
    const char *op_column = NULL;
    char *split_paths[3] = { NULL, NULL, NULL }; /* --split: per-worker file names */
    progress_mode pmode = PROGRESS_AUTO;
    double pinterval = 10;
    progress prog;
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
        switch (id) {
        case -2: goto out;
        case 0: a.inputs[a.ninputs++] = arg; break;
        case O_HELP: help(); rc = 0; goto out;
        case O_DRY_RUN: lo.dry_run = true; break;
        case O_OUTPUT: lo.output_dir = arg; break;
        case O_PART_ITEMS:
            if (!cli_parse_long("part-items", arg, 1, &n))
                goto out;
            lo.output_part_items = (uint64_t)n;
            break;
        case O_REJECTS: rejects_path = arg; break;
        case O_MAX_REJECTS:
            if (!cli_parse_long("max-rejects", arg, 0, &max_rejects))
                goto out;
            break;
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
        case O_MAX_RETRY_TIME:
            if (!cli_parse_double("max-retry-time", arg, 0, &lo.max_retry_time_s))
                goto out;
            break;
        case O_CHECKPOINT: lo.checkpoint_path = arg; break;
        case O_PLAN: lo.plan_path = arg; break;
        case O_CHECKPOINT_INTERVAL:
            if (!cli_parse_double("checkpoint-interval", arg, 0.1, &lo.checkpoint_interval_s))
                goto out;
            break;
        case O_RESUME: lo.resume = true; break;
        case O_INCREMENTAL: incremental = true; break;
        case O_OP_COLUMN: op_column = arg; break;
        case O_NO_GROUP: no_group = true; break;
        case O_SPLIT: {
            el_diag sd;
            el_diag_clear(&sd);
            if (el_split_parse(arg, env_get, &lo.split, &sd)) {
                cli_error("%s", sd.msg);
                goto out;
            }
            break;
        }
        case OPT_ENDPOINT_URL_S3: s3c.endpoint = arg; break;
        case O_MAX_WCU:
            if (!cli_parse_double("max-wcu", arg, 1, &lo.max_wcu))
                goto out;
            break;
        case O_PROGRESS:
            if (!progress_parse_mode(arg, &pmode)) {
                cli_error("--progress must be auto, bar, plain or none, not '%s'", arg);
                goto out;
            }
            break;
        case O_PROGRESS_INTERVAL:
            if (!cli_parse_double("progress-interval", arg, 0.1, &pinterval))
                goto out;
            break;
        default:
            if (cli_aws_opt(&aws, id, arg))
                break;
            switch (mapping_opt(&a, &lo.reader, id, arg)) {
            case -2: rc = EXIT_FATAL; goto out;
            case 1: break;
            default: goto out;
            }
        }
    }
    m = build_mapping(&a, &rc);
    if (!m)
        goto out;
    if ((op_column || no_group) && !incremental) {
        cli_error("load: --op-column and --no-group need --incremental");
        rc = EXIT_USAGE;
        goto out;
    }
    if (incremental && (lo.checkpoint_path || lo.resume || lo.dry_run)) {
        cli_error("load: --incremental takes no --checkpoint, --resume or --dry-run: an "
                  "interrupted delta is finished by running it again (conditional writes "
                  "keep every count exact)");
        rc = EXIT_USAGE;
        goto out;
    }
    if (incremental && lo.output_dir) {
        cli_error("load: --incremental writes to DynamoDB, not --output");
        rc = EXIT_USAGE;
        goto out;
    }
    if (lo.output_dir && (lo.dry_run || lo.checkpoint_path || lo.resume)) {
        cli_error("load: --output cannot be combined with %s",
                  lo.dry_run ? "--dry-run" : "--checkpoint or --resume");
        rc = EXIT_USAGE;
        goto out;
    }
    if (lo.output_part_items && !lo.output_dir) {
        cli_error("load: --part-items needs --output DIR");
        rc = EXIT_USAGE;
        goto out;
    }
    if (lo.split.count) {
        const char *why = incremental ? "--incremental (a delta is one process)"
                          : lo.output_dir ? "--output (one process writes the import files)"
                          : NULL;
        for (size_t i = 0; !why && i < a.ninputs; i++)
            if (strcmp(a.inputs[i], "-") == 0)
                why = "standard input (every worker must read the same files)";
        if (why) {
            cli_error("load: --split cannot be combined with %s", why);
            rc = EXIT_USAGE;
            goto out;
        }
        const char **names[3] = { &lo.checkpoint_path, &rejects_path, &stats_path };
        for (int k = 0; k < 3; k++) {
            if (!*names[k])
                continue;
            if (!(split_paths[k] = el_split_path(*names[k], &lo.split))) {
                cli_error("out of memory");
                rc = EXIT_FATAL;
                goto out;
            }
            *names[k] = split_paths[k];
        }
        if (el_mapping_has_counters(m) && !quiet)
            fprintf(stderr, "edgeload: --split %u/%u: counters are not set by split workers (a "
                    "part's counts are not the totals); when every worker has finished, run "
                    "'edgeload counters' once with the same mapping and inputs\n",
                    lo.split.index + 1, lo.split.count);
    }
    inputs = a.inputs;
    ninputs = a.ninputs;
    if (!cli_s3_inputs(&s3c, &aws, m, &inputs, &ninputs, &lo.reader, &rc))
        goto out;
    if (lo.output_dir && el_s3_is_url(lo.output_dir) && !lo.dry_run &&
        !cli_s3_output(&s3c, &aws, lo.output_dir, &lo.output_store, &rc))
        goto out;
    if (!lo.dry_run && !lo.output_dir) {
        rc = EXIT_USAGE;
        if (!cli_connect(&aws, &cfg, &ddb))
            goto out;
        rc = check_table(ddb, m, cfg);
        if (rc != EXIT_LOADED)
            goto out;
    }
    rej = el_rejects_new(rejects_path, max_rejects);
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
    if (lo.resume && !lo.checkpoint_path) {
        cli_error("load: --resume needs --checkpoint FILE");
        rc = EXIT_USAGE;
        goto out;
    }
    progress_init(&prog, quiet ? PROGRESS_NONE : pmode, pinterval);
    lo.progress = progress_report;
    lo.progress_user = &prog;
    reject_shower shower = { .quiet = quiet };
    lo.on_reject = show_reject;
    lo.reject_user = &shower;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (incremental) {
        rc = run_incremental(&lo, op_column, no_group, quiet, stats_path);
        goto out;
    }
    el_load_stats st;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_load_run(&lo, &st, &d);
    if (err)
        cli_error("%s", d.msg);
    if (err == EL_EUSAGE || err == EL_ECONFIG) {
        rc = EXIT_USAGE; /* found before anything was written: no summary */
        goto out;
    }
    rc = cli_exit_code(err);
    if (err == EL_ELIMIT || err == EL_EIO)
        rc = EXIT_FATAL;
    if (!err && st.rejected > 0)
        rc = EXIT_REJECTS;
    if (!quiet) {
        double rate = st.elapsed_s > 0 ? (double)st.items_written / st.elapsed_s : 0;
        fprintf(stderr,
                "edgeload: %s%llu rows read, %llu items %s, %llu duplicates, %llu rejected, "
                "%llu retries, %llu throttled in %.2f s (%.0f items/s, %.1f WCU)\n",
                err ? "stopped: " : "", (unsigned long long)st.rows_read,
                (unsigned long long)st.items_written, lo.dry_run ? "printed" : "written",
                (unsigned long long)st.duplicates, (unsigned long long)st.rejected,
                (unsigned long long)st.retries, (unsigned long long)st.throttled, st.elapsed_s,
                rate, st.wcu_consumed);
        if (st.counter_edges > 0 || st.counters_written > 0)
            fprintf(stderr, "edgeload: counters: %llu distinct edges counted, %llu duplicate "
                    "rows counted once, %llu counters set\n",
                    (unsigned long long)st.counter_edges,
                    (unsigned long long)st.counter_duplicates,
                    (unsigned long long)st.counters_written);
        if (st.rejected > 0)
            fprintf(stderr, "edgeload: rejected rows are in %s\n", el_rejects_path(rej));
        if (lo.checkpoint_path && err)
            fprintf(stderr, "edgeload: checkpoint saved in %s; rerun with --resume to continue\n",
                    lo.checkpoint_path);
    }
    if (stats_path)
        write_stats(stats_path, &st);
    if (!err && lo.output_dir && !quiet) {
        const char *region = s3c.cfg ? s3c.cfg->region : getenv("AWS_REGION");
        if (!region || !region[0])
            region = getenv("AWS_DEFAULT_REGION");
        if (aws.region)
            region = aws.region;
        fflush(stderr);
        cli_s3_print_import(stdout, m, lo.output_dir, region);
        fflush(stdout);
    }
out:
    for (int k = 0; k < 3; k++)
        free(split_paths[k]);
    mapping_args_free(&a);
    el_rejects_free(rej);
    el_mapping_free(m);
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    cli_s3_free(&s3c);
    return rc;
}
