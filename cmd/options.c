/*
 * options.c - the shared options' table, their help, and parsing their
 * values into a cmd_options.
 *
 * DESIGN: one row per option, holding its name, argument and help text, so
 * that `load --help` and `verify --help` cannot describe --concurrency two
 * ways, and a new shared option is one row here plus the commands' masks.
 * Values are checked here (a number's range, a mode's spelling) once for
 * every command; what a value means for the run is the command's business.
 */
#include "cmd/options.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* strcmp, strlen, memcpy */

const cmd_shared_opt cmd_shared_opts[] = {
    { { "help", false, OPT_HELP }, NULL, "this text" },
    /* mapping */
    { { "mapping", true, OPT_MAPPING }, "FILE",
      "JSON mapping: the table, the index and one entry per source (docs/mapping.md)" },
    { { "table", true, OPT_TABLE }, "NAME", "the table (overrides the mapping's)" },
    { { "pk", true, OPT_PK }, "TEMPLATE", "partition key, e.g. 'ACTOR#{follower_id}'" },
    { { "sk", true, OPT_SK }, "TEMPLATE", "sort key, e.g. 'TARGET#{followee_id}'" },
    { { "index-pk", true, OPT_INDEX_PK }, "TEMPLATE",
      "index partition key (default: the rendered sk)" },
    { { "index-sk", true, OPT_INDEX_SK }, "TEMPLATE",
      "index sort key (default: the rendered pk)" },
    { { "no-index", false, OPT_NO_INDEX }, NULL, "no index attributes" },
    { { "index-name", true, OPT_INDEX_NAME }, "NAME",
      "the index (default GSI1; its key attributes are NAMEPK and NAMESK)" },
    { { "attr", true, OPT_ATTR }, "NAME=COLUMN[:TYPE]",
      "attribute from a column; TYPE is S, N, BOOL, B, NULL, epoch, json\n"
      "(a JSON text as M/L/N/S/BOOL/NULL), SS or NS (a comma-separated value,\n"
      "e.g. a MySQL SET, as a set) or auto (the default: from the dump's\n"
      "column type). Repeatable" },
    { { "const", true, OPT_CONST }, "NAME=VALUE[:TYPE]",
      "constant attribute (default type S). Repeatable" },
    { { "all-columns", false, OPT_ALL_COLUMNS }, NULL,
      "every column as an attribute (auto types)" },
    { { "source-table", true, OPT_SOURCE_TABLE }, "NAME",
      "the table of a dump that holds several (or schema.name)" },
    { { "counter", true, OPT_COUNTER }, "PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE",
      "a counter each row adds one to, e.g.\n"
      "'USER#{followee_id},PROFILE,followerCount'. Repeatable" },
    { { "hot-threshold", true, OPT_HOT_THRESHOLD }, "N",
      "fan-in at which an index partition key is sharded, for every source\n"
      "with an index (default: the mapping's \"hot\", else none); a key's fan-in\n"
      "is counted over every source that writes it, and such a key gets\n"
      "N = min(max-shards, ceil(fan-in / threshold)) partitions KEY#0..KEY#N-1,\n"
      "shard = FNV-1a-64(index sort key) mod N, and a directory item\n"
      "PK=KEY, SK=#SHARDS" },
    { { "max-shards", true, OPT_MAX_SHARDS }, "N", "most shards per key (default 32)" },
    { { "plan", true, OPT_PLAN }, "FILE",
      "the shard counts of 'edgeload plan --plan-out FILE' (needed for standard\n"
      "input; without it, sources with hot keys are read twice: a counting pass\n"
      "first)" },
    /* input */
    { { "format", true, OPT_FORMAT }, "FORMAT",
      "auto (default: from the name, else a dump's preamble, never its rows),\n"
      "csv, tsv, mysql (mysqldump/mariadb-dump), postgres (pg_dump plain), sqlite\n"
      "(sqlite3 .dump)" },
    { { "delimiter", true, OPT_DELIMITER }, "CHAR",
      "field delimiter (default , for csv, tab for tsv)" },
    { { "null", true, OPT_NULL }, "STRING",
      "an unquoted field equal to STRING is NULL (default: an unquoted empty\n"
      "field is NULL, a quoted one \"\")" },
    { { "escape", true, OPT_ESCAPE }, "CHAR",
      "fields use CHAR as an escape, e.g. '\\' for MySQL's SELECT ... INTO\n"
      "OUTFILE (\\N is NULL, \\t a tab, ...)" },
    { { "columns", true, OPT_COLUMNS }, "A,B,C", "the file has no header row; these are its columns" },
    /* AWS */
    { { "endpoint-url", true, OPT_ENDPOINT_URL }, "URL",
      "DynamoDB endpoint, e.g. http://127.0.0.1:8000 (also\n"
      "AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL)" },
    { { "region", true, OPT_REGION }, "REGION", "AWS region (also AWS_REGION, AWS_DEFAULT_REGION)" },
    { { "profile", true, OPT_PROFILE }, "NAME",
      "profile of ~/.aws/credentials and ~/.aws/config (also AWS_PROFILE)" },
    { { "no-verify-ssl", false, OPT_NO_VERIFY_SSL }, NULL,
      "do not verify HTTPS certificates (warns)" },
    { { "endpoint-url-s3", true, OPT_ENDPOINT_URL_S3 }, "URL",
      "S3 endpoint for s3:// inputs and outputs (also AWS_ENDPOINT_URL_S3,\n"
      "AWS_ENDPOINT_URL), e.g. an S3-compatible store; addressed path-style" },
    /* the run */
    { { "dry-run", false, OPT_DRY_RUN }, NULL,
      "print the items as DynamoDB JSON lines, write nothing; each key once,\n"
      "the last row of a key winning, printed at the end of the input" },
    { { "output", true, OPT_OUTPUT }, "DIR|s3://BUCKET/PREFIX/",
      "write the items to files for DynamoDB's import from S3 instead of\n"
      "calling DynamoDB: DIR/data/part-NNNNN.json.zst (DynamoDB JSON lines,\n"
      "zstd) and DIR/manifest.json, written last; DIR must not hold the output\n"
      "of another run. Import with the S3 prefix of DIR/data/ (format\n"
      "DYNAMODB_JSON, compression ZSTD); an s3:// prefix gets the same objects\n"
      "by multipart upload, manifest last. Each key is written once, the last\n"
      "row of a key winning as a load leaves it (an import would keep any one);\n"
      "the rows merged are counted as duplicates. The 'aws dynamodb\n"
      "import-table' command for a new table is printed" },
    { { "concurrency", true, OPT_CONCURRENCY }, "N", "requests in flight (default %d)" },
    { { "threads", true, OPT_THREADS }, "N",
      "reader threads (default: the number of cores): several inputs are read\n"
      "at once; one large CSV/TSV is cut into parts parsed in parallel when\n"
      "--threads is given, or by default with --output or --dry-run on more\n"
      "than 2 cores" },
    { { "max-wcu", true, OPT_MAX_WCU }, "N",
      "write at most N capacity units per second, counted by DynamoDB's rules\n"
      "(1 per started KB of an item, table and index) and settled against the\n"
      "ConsumedCapacity DynamoDB returns" },
    { { "max-rcu", true, OPT_MAX_RCU }, "N",
      "read at most N capacity units per second (consistent reads: 1 per\n"
      "started 4 KB), settled against the ConsumedCapacity DynamoDB returns" },
    { { "max-retry-time", true, OPT_MAX_RETRY_TIME }, "SECONDS",
      "give up after this long of continuous non-throttle failures (default\n"
      "900; exit 1, the checkpoint kept); throttling never gives up, it slows\n"
      "down" },
    { { "checkpoint", true, OPT_CHECKPOINT }, "FILE",
      "record how far the work is acknowledged (atomically, every\n"
      "--checkpoint-interval seconds and at exit)" },
    { { "checkpoint-interval", true, OPT_CHECKPOINT_INTERVAL }, "SECONDS",
      "seconds between checkpoints (default 5)" },
    { { "resume", false, OPT_RESUME }, NULL,
      "continue from --checkpoint FILE after a crash or kill" },
    { { "rejects", true, OPT_REJECTS }, "FILE",
      "rejected rows as JSON lines (default " CMD_DEFAULT_REJECTS ", created on\n"
      "the first reject)" },
    { { "max-rejects", true, OPT_MAX_REJECTS }, "N",
      "abort when more than N rows are rejected (default: no limit)" },
    { { "split", true, OPT_SPLIT }, "I/N|auto/N",
      "this worker's part I of N of the inputs (docs/scale-out.md): whole inputs,\n"
      "and byte ranges cut at record starts in plain CSV/TSV files; auto takes\n"
      "I from the first set of AWS_BATCH_JOB_ARRAY_INDEX, JOB_COMPLETION_INDEX,\n"
      "SLURM_ARRAY_TASK_ID (0-based) and PARALLEL_SEQ (1-based); N is always\n"
      "the one given. File names given to --checkpoint, --rejects,\n"
      "--stats-json and --report get {i} and {n} replaced, or .I-of-N before\n"
      "their extension" },
    /* reports */
    { { "stats-json", true, OPT_STATS_JSON }, "FILE", "write the final figures as JSON" },
    { { "progress", true, OPT_PROGRESS }, "MODE",
      "auto (default: a bar on a terminal, else plain), bar, plain (key=value\n"
      "lines), none" },
    { { "progress-interval", true, OPT_PROGRESS_INTERVAL }, "SECONDS",
      "seconds between plain progress lines (default 10)" },
    { { "quiet", false, OPT_QUIET }, NULL, "no progress and no summary" },
    { { NULL, false, 0 }, NULL, NULL }
};

const cmd_shared_opt *cmd_shared_find(int id)
{
    for (const cmd_shared_opt *s = cmd_shared_opts; s->opt.name; s++)
        if (s->opt.id == id)
            return s;
    return NULL;
}

bool cmd_options_init(cmd_options *o, int argc)
{
    *o = (cmd_options){ 0 };
    o->max_retry_time_s = CMD_DEFAULT_MAX_RETRY_TIME;
    o->rejects = CMD_DEFAULT_REJECTS;
    o->max_rejects = -1;
    o->progress = PROGRESS_AUTO;
    o->progress_interval_s = EL_PROGRESS_INTERVAL_S;
    return mapping_args_init(&o->map, argc);
}

void cmd_options_free(cmd_options *o)
{
    mapping_args_free(&o->map);
}

/* A mapping or input option into a and ro: 1 when stored, 0 when id is
 * not one, -1 on a bad value (printed), -2 when out of memory. */
static int mapping_opt(mapping_args *a, el_reader_opts *ro, int id, const char *arg)
{
    switch (id) {
    case OPT_MAPPING: a->mapping_path = arg; return 1;
    case OPT_TABLE: a->table = arg; return 1;
    case OPT_PK: a->keys[0] = arg; a->any_flag = true; return 1;
    case OPT_SK: a->keys[1] = arg; a->any_flag = true; return 1;
    case OPT_INDEX_PK: a->keys[2] = arg; a->any_flag = true; return 1;
    case OPT_INDEX_SK: a->keys[3] = arg; a->any_flag = true; return 1;
    case OPT_NO_INDEX: a->no_index = true; a->any_flag = true; return 1;
    case OPT_ALL_COLUMNS: a->all_columns = true; a->any_flag = true; return 1;
    case OPT_INDEX_NAME: a->index_name = arg; return 1;
    case OPT_SOURCE_TABLE: a->source_table = arg; ro->source_table = arg; return 1;
    case OPT_ATTR:
    case OPT_CONST:
    case OPT_COUNTER: {
        /* remember kind and spec in order: 'a', 'c' or 'k' then the text */
        size_t len = strlen(arg);
        char *s = malloc(len + 2);
        if (!s)
            return -2;
        s[0] = id == OPT_ATTR ? 'a' : id == OPT_CONST ? 'c' : 'k';
        memcpy(s + 1, arg, len + 1);
        a->attr_specs[a->nattr++] = s;
        a->any_flag = true;
        return 1;
    }
    case OPT_FORMAT:
        if (el_format_parse(arg, &ro->format)) {
            cli_error("--format must be auto, csv, tsv, mysql, postgres or sqlite, not '%s'", arg);
            return -1;
        }
        return 1;
    case OPT_DELIMITER:
        if (strcmp(arg, "\\t") == 0 || strcmp(arg, "tab") == 0)
            arg = "\t";
        if (strlen(arg) != 1) {
            cli_error("--delimiter must be one character (or \\t), not '%s'", arg);
            return -1;
        }
        ro->delimiter = arg[0];
        return 1;
    case OPT_NULL: ro->null_string = arg; return 1;
    case OPT_ESCAPE:
        /* '\\' is how SQL (ESCAPED BY '\\') and a shell's double quotes
         * spell one backslash; "" (ESCAPED BY '') is none */
        if (strcmp(arg, "\\\\") == 0)
            arg = "\\";
        if (strlen(arg) > 1 || arg[0] == '\n' || arg[0] == '\r') {
            cli_error("--escape must be one character (e.g. '\\'), not '%s'", arg);
            return -1;
        }
        ro->escape = arg[0];
        return 1;
    case OPT_COLUMNS:
        mapping_args_free_columns(a);
        a->columns = split_columns(arg, &a->ncolumns);
        if (!a->columns)
            return -2;
        ro->columns = (const char *const *)a->columns;
        ro->ncolumns = a->ncolumns;
        return 1;
    case OPT_HOT_THRESHOLD:
        return cli_parse_long("hot-threshold", arg, 1, &a->hot_threshold) ? 1 : -1;
    case OPT_MAX_SHARDS:
        if (!cli_parse_long("max-shards", arg, 2, &a->max_shards))
            return -1;
        if (a->max_shards > EL_MAX_MAX_SHARDS) {
            cli_error("--max-shards must be at most %d, not %ld", EL_MAX_MAX_SHARDS,
                      a->max_shards);
            return -1;
        }
        return 1;
    default:
        return 0;
    }
}

/* --split auto/N reads the scheduler's index from the environment */
static const char *env_get(const char *name)
{
    return getenv(name);
}

static int int_opt(const char *name, const char *arg, long min, int *out)
{
    long v;
    if (!cli_parse_long(name, arg, min, &v))
        return EXIT_USAGE;
    if (v > 1000000) {
        cli_error("--%s must be at most 1000000, not %ld", name, v);
        return EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

static int double_opt(const char *name, const char *arg, double min, double *out)
{
    return cli_parse_double(name, arg, min, out) ? 0 : EXIT_USAGE;
}

int cmd_options_set(cmd_options *o, const char *cmd, int id, const char *arg)
{
    if (id > 0 && id < 64)
        o->given |= OPT_BIT(id);
    switch (id) {
    case OPT_DRY_RUN: o->dry_run = true; return 0;
    case OPT_OUTPUT: o->output = arg; return 0;
    case OPT_CONCURRENCY: return int_opt("concurrency", arg, 1, &o->concurrency);
    case OPT_THREADS: return int_opt("threads", arg, 1, &o->threads);
    case OPT_MAX_WCU: return double_opt("max-wcu", arg, 1, &o->max_wcu);
    case OPT_MAX_RCU: return double_opt("max-rcu", arg, 1, &o->max_rcu);
    case OPT_MAX_RETRY_TIME: return double_opt("max-retry-time", arg, 0, &o->max_retry_time_s);
    case OPT_CHECKPOINT: o->checkpoint = arg; return 0;
    case OPT_CHECKPOINT_INTERVAL:
        return double_opt("checkpoint-interval", arg, 0.1, &o->checkpoint_interval_s);
    case OPT_RESUME: o->resume = true; return 0;
    case OPT_REJECTS: o->rejects = arg; return 0;
    case OPT_MAX_REJECTS:
        return cli_parse_long("max-rejects", arg, 0, &o->max_rejects) ? 0 : EXIT_USAGE;
    case OPT_SPLIT: {
        el_diag d;
        el_diag_clear(&d);
        if (el_split_parse(arg, env_get, &o->split, &d)) {
            cli_error("%s", d.msg);
            return EXIT_USAGE;
        }
        return 0;
    }
    case OPT_STATS_JSON: o->stats_json = arg; return 0;
    case OPT_PROGRESS:
        if (!progress_parse_mode(arg, &o->progress)) {
            cli_error("--progress must be auto, bar, plain or none, not '%s'", arg);
            return EXIT_USAGE;
        }
        return 0;
    case OPT_PROGRESS_INTERVAL:
        return double_opt("progress-interval", arg, 0.1, &o->progress_interval_s);
    case OPT_QUIET: o->quiet = true; return 0;
    case OPT_ENDPOINT_URL: o->aws.endpoint_url = arg; return 0;
    case OPT_REGION: o->aws.region = arg; return 0;
    case OPT_PROFILE: o->aws.profile = arg; return 0;
    case OPT_NO_VERIFY_SSL: o->aws.no_verify_ssl = true; return 0;
    case OPT_ENDPOINT_URL_S3: o->endpoint_s3 = arg; return 0;
    case OPT_PLAN: o->plan = arg; return 0;
    default: break;
    }
    switch (mapping_opt(&o->map, &o->reader, id, arg)) {
    case 1: return 0;
    case -2: cli_error("out of memory"); return EXIT_FATAL;
    case -1: return EXIT_USAGE;
    default:
        cli_error("%s: option id %d is not a shared option (a bug)", cmd, id);
        return EXIT_FATAL;
    }
}
