/*
 * runner.h - what every command does the same way: parse argv against the
 * shared options (options.h) and its own, print its help, refuse what it
 * cannot honour, catch SIGINT/SIGTERM, connect, check the table, show
 * rejects as they happen, map errors to exit codes and write --stats-json.
 *
 * A command (cmd_<name>.c) is a cmd_spec, the handler of its own options,
 * and the code that builds its run from a cmd_options and prints its
 * summary. Everything here prints to stderr (help to stdout) and never exits.
 */
#ifndef EL_CMD_RUNNER_H
#define EL_CMD_RUNNER_H

#include <stdatomic.h> /* the stop flag */
#include <stdbool.h>   /* bool */
#include <stdint.h>    /* uint64_t */

#include "aws/aws_config.h"
#include "common/file.h"        /* EL_PATH_BYTES */
#include "cmd/options.h"
#include "dynamo/ddb_client.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/flow/stats.h"       /* el_load_stats */
#include "pipeline/rows/table_check.h"

/* Why a command refuses a shared option it does not take. */
typedef struct cmd_refusal {
    int id;                    /* a shared option id; 0 ends a list */
    const char *why;           /* the reason, "" for the generic one */
} cmd_refusal;

typedef struct cmd_spec {
    const char *name;          /* "load" */
    const char *usage;         /* "[OPTIONS] [INPUT...]" */
    const char *about;         /* what the command does (help's first paragraphs) */
    uint64_t takes;            /* the shared options it takes (OPT_BIT masks) */
    const cmd_refusal *refuse; /* reasons for some it does not take; may be NULL */
    const cli_opt *own;        /* its own options (ids >= OPT_OWN); may be NULL */
    const char *own_help;      /* their help, formatted; may be NULL */
    const char *epilogue;      /* help's last paragraphs (exit status) */
    int default_concurrency;   /* shown in --concurrency's help */
    bool inputs;               /* takes INPUT arguments */
    /* Stores one of its own options; returns 0, or an exit status after
     * printing why. */
    int (*own_opt)(void *ctx, int id, const char *arg);
} cmd_spec;

/*
 * Prepares o (cmd_options_init) and parses argv (the arguments after the
 * command's name) into it, and the command's own options through
 * spec->own_opt(ctx, ...). Returns -1 when the command is to run; else the
 * exit status to return at once: 0 after --help, EXIT_USAGE after a usage
 * error or a refused option (printed), EXIT_FATAL when out of memory
 * (printed). Whatever it returns, o is the caller's to cmd_options_free.
 */
int cmd_parse(const cmd_spec *spec, int argc, char **argv, cmd_options *o, void *ctx);

/* Prints the command's help to stdout. */
void cmd_help(const cmd_spec *spec);

/* Set by SIGINT and SIGTERM once cmd_catch_signals ran: stop taking input,
 * finish what is in flight, keep the checkpoint. An atomic, not a volatile
 * sig_atomic_t: the pipeline's threads read it while the handler writes it
 * on whichever thread the signal hit (a lock-free atomic is safe to store
 * from a handler, C11 7.14.1.1). */
extern atomic_int cmd_stop;
void cmd_catch_signals(void);

/* The one map from the library's errors to exit statuses: EL_OK 0;
 * EL_EUSAGE, EL_ECONFIG, EL_ETABLE 2; EL_EINTR 130; anything else 1. */
int cmd_exit_code(el_err err);

/*
 * DescribeTable, then el_table_check with need (el_table_need bits).
 * Prints why and returns EXIT_USAGE when the table is missing or does not
 * fit (for a command that writes items, need holding
 * EL_TABLE_INDEX_IF_WRITTEN, a missing table gets the create-table command
 * on a second line), EXIT_FATAL when it cannot be described; 0 when it fits.
 */
int cmd_check_table(el_ddb *ddb, const el_aws_config *cfg, const el_mapping *m, unsigned need);

/* A file (or, dir true, a folder) a command writes besides the shared
 * options' files, for cmd_check_outputs: the option that names it
 * ("--plan-out"), what it is ("the plan") and its path (NULL: not written
 * this run). */
typedef struct cmd_output {
    const char *option;
    const char *what;
    const char *path;
    bool dir;
} cmd_output;

/*
 * Checks, before anything is read or written, that every file the command
 * will write can be written (el_file_check_writable): those of the shared
 * options it takes and was given (--checkpoint and the lock file beside it,
 * --rejects, its default included, --stats-json, a local --output DIR) and
 * extra[0..n) (its own, e.g. --plan-out). Call it after cmd_split_names. A
 * configuration error: prints one line naming the option, the path and
 * what is wrong ("--checkpoint /tmp/nodir/x.ckpt: cannot write the
 * checkpoint there: folder /tmp/nodir does not exist") and returns
 * EXIT_USAGE at the first that cannot be written; 0 when all can.
 */
int cmd_check_outputs(const cmd_spec *spec, const cmd_options *o, const cmd_output *extra,
                      size_t n);

/* Whether a checkpoint is there to resume from (a failed run says so only
 * then: nothing is said to be saved that was not). */
bool cmd_checkpoint_saved(const char *path);

/* --split: replaces the file names given to --checkpoint, --rejects and
 * --stats-json (and *extra, when not NULL) by this worker's names; the
 * strings are owned by names[4] (free with cmd_split_names_free). False
 * when out of memory (printed). */
bool cmd_split_names(cmd_options *o, const char **extra, char *names[4]);
void cmd_split_names_free(char *names[4]);

/* Where a row's why points: "input:line:column", "input:line" when no
 * column is known, "input" when no line is; into buf (cut to cap). The
 * place every message about one row starts with. */
#define CMD_ROW_PLACE_BYTES (EL_PATH_BYTES + 48)
const char *cmd_row_place(char *buf, size_t cap, const char *input, const el_diag *why);

/* Shows the first rejects where they happen ("input:line:column: why (row
 * rejected)"), then one line saying the rest are in the rejects file: an
 * el_reject_fn, user a cmd_reject_shower. Any thread. */
typedef struct cmd_reject_shower {
    atomic_uint shown;
    bool quiet;
} cmd_reject_shower;
void cmd_show_reject(const char *input, const el_diag *why, void *user);

#endif
