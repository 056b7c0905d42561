/*
 * options.h - the options every command shares, in one table: their names,
 * what they mean, their help lines, and the struct they are parsed into.
 *
 * A command says which of them it takes (a cmd_spec: a mask of option ids,
 * and a reason for each it refuses); the runner (runner.h) parses argv
 * once against the shared table plus the command's own options, refuses a
 * shared option the command does not take with one line naming the reason,
 * and prints the help of exactly the shared options the command takes. So
 * an option has one name, one meaning and one help text in every command.
 */
#ifndef EL_CMD_OPTIONS_H
#define EL_CMD_OPTIONS_H

#include <stdbool.h>  /* bool */
#include <stdint.h>   /* uint64_t */

#include "aws/aws_config.h"
#include "cmd/cli.h"
#include "cmd/mapping_opts.h"
#include "cmd/progress.h"
#include "formats/reader.h"
#include "pipeline/rows/split.h"

/* Shared option ids (below 64: a command's mask is a uint64_t). */
enum {
    OPT_HELP = 1,
    /* the mapping: --mapping, or the flags for one source */
    OPT_MAPPING, OPT_TABLE, OPT_PK, OPT_SK, OPT_INDEX_PK, OPT_INDEX_SK, OPT_NO_INDEX,
    OPT_INDEX_NAME, OPT_ATTR, OPT_CONST, OPT_ALL_COLUMNS, OPT_SOURCE_TABLE, OPT_COUNTER,
    OPT_HOT_THRESHOLD, OPT_MAX_SHARDS, OPT_PLAN,
    /* how inputs are read */
    OPT_FORMAT, OPT_DELIMITER, OPT_NULL, OPT_ESCAPE, OPT_COLUMNS,
    /* where requests go, as whom */
    OPT_ENDPOINT_URL, OPT_REGION, OPT_PROFILE, OPT_NO_VERIFY_SSL, OPT_ENDPOINT_URL_S3,
    /* the run */
    OPT_DRY_RUN, OPT_OUTPUT, OPT_CONCURRENCY, OPT_THREADS, OPT_MAX_WCU, OPT_MAX_RCU,
    OPT_MAX_RETRY_TIME, OPT_CHECKPOINT, OPT_CHECKPOINT_INTERVAL, OPT_RESUME, OPT_REJECTS,
    OPT_MAX_REJECTS, OPT_SPLIT,
    /* what it tells */
    OPT_STATS_JSON, OPT_PROGRESS, OPT_PROGRESS_INTERVAL, OPT_QUIET,
    OPT_SHARED_END,
    OPT_OWN = 100 /* a command's own options are numbered from here */
};

#define OPT_BIT(id) (UINT64_C(1) << (id))
/* Groups of shared options, for a command's mask. */
#define OPTS_MAPPING                                                                          \
    (OPT_BIT(OPT_MAPPING) | OPT_BIT(OPT_TABLE) | OPT_BIT(OPT_PK) | OPT_BIT(OPT_SK) |          \
     OPT_BIT(OPT_INDEX_PK) | OPT_BIT(OPT_INDEX_SK) | OPT_BIT(OPT_NO_INDEX) |                  \
     OPT_BIT(OPT_INDEX_NAME) | OPT_BIT(OPT_ATTR) | OPT_BIT(OPT_CONST) |                       \
     OPT_BIT(OPT_ALL_COLUMNS) | OPT_BIT(OPT_SOURCE_TABLE) | OPT_BIT(OPT_COUNTER) |            \
     OPT_BIT(OPT_HOT_THRESHOLD) | OPT_BIT(OPT_MAX_SHARDS) | OPT_BIT(OPT_PLAN))
#define OPTS_INPUT                                                                            \
    (OPT_BIT(OPT_FORMAT) | OPT_BIT(OPT_DELIMITER) | OPT_BIT(OPT_NULL) | OPT_BIT(OPT_ESCAPE) | \
     OPT_BIT(OPT_COLUMNS) | OPT_BIT(OPT_ENDPOINT_URL_S3))
#define OPTS_AWS                                                                              \
    (OPT_BIT(OPT_ENDPOINT_URL) | OPT_BIT(OPT_REGION) | OPT_BIT(OPT_PROFILE) |                 \
     OPT_BIT(OPT_NO_VERIFY_SSL))
#define OPTS_REPORTS                                                                          \
    (OPT_BIT(OPT_STATS_JSON) | OPT_BIT(OPT_PROGRESS) | OPT_BIT(OPT_PROGRESS_INTERVAL) |       \
     OPT_BIT(OPT_QUIET))
#define OPTS_REQUESTS (OPT_BIT(OPT_CONCURRENCY) | OPT_BIT(OPT_MAX_RETRY_TIME))
#define OPTS_CHECKPOINT                                                                       \
    (OPT_BIT(OPT_CHECKPOINT) | OPT_BIT(OPT_CHECKPOINT_INTERVAL) | OPT_BIT(OPT_RESUME))
#define OPTS_REJECTS (OPT_BIT(OPT_REJECTS) | OPT_BIT(OPT_MAX_REJECTS))

/* What the shared options said. Strings are borrowed from argv unless the
 * field says otherwise; numbers are 0 (or false) when not given, and
 * `given` has the bit of every shared option on the command line. */
typedef struct cmd_options {
    uint64_t given;
    mapping_args map;          /* the mapping flags and the positional inputs */
    el_reader_opts reader;     /* --format, --delimiter, --null, --escape, --columns */
    el_aws_opts aws;           /* --endpoint-url, --region, --profile, --no-verify-ssl */
    const char *endpoint_s3;   /* --endpoint-url-s3 */
    const char *plan;          /* --plan FILE */
    bool dry_run;
    const char *output;        /* --output DIR|s3://... */
    int concurrency;           /* 0: the command's default */
    int threads;               /* 0: the number of cores */
    double max_wcu, max_rcu;   /* 0: no budget */
    double max_retry_time_s;   /* set to the default (900) before parsing */
    const char *checkpoint;
    double checkpoint_interval_s;
    bool resume;
    const char *rejects;       /* set to the default before parsing */
    long max_rejects;          /* -1: no limit */
    el_split split;            /* count 0: no --split */
    const char *stats_json;
    progress_mode progress;
    double progress_interval_s;
    bool quiet;
} cmd_options;

#define CMD_DEFAULT_REJECTS "edgeload-rejects.jsonl"
#define CMD_DEFAULT_MAX_RETRY_TIME 900.0

/* One shared option in the table. */
typedef struct cmd_shared_opt {
    cli_opt opt;               /* name, has_arg, id */
    const char *arg_name;      /* for help: "FILE", "N", NULL for a flag */
    const char *help;          /* one or more lines, without the option itself */
} cmd_shared_opt;

/* The table, ending with a zero entry. */
extern const cmd_shared_opt cmd_shared_opts[];

/* The entry for a shared id, or NULL. */
const cmd_shared_opt *cmd_shared_find(int id);

/* Resets o to the defaults and allocates room for argc inputs. False when
 * out of memory (o is then safe to cmd_options_free). */
bool cmd_options_init(cmd_options *o, int argc);
void cmd_options_free(cmd_options *o);

/*
 * Stores shared option id with its value. Returns 0 when stored, or an exit
 * status after printing why: EXIT_USAGE for a bad value, EXIT_FATAL when
 * out of memory.
 */
int cmd_options_set(cmd_options *o, const char *cmd, int id, const char *arg);

#endif
