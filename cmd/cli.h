/*
 * cli.h - the bottom of cmd/: the long-option parser, exit statuses, AWS
 * setup and messages. Only cmd/ prints or exits; the runner (runner.h)
 * builds on this.
 */
#ifndef EL_CLI_H
#define EL_CLI_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/error.h"
#include "aws/aws_config.h"
#include "dynamo/ddb_client.h"

/* Exit status, the same for every command (docs/loading.md, "Exit status"). */
enum {
    EXIT_LOADED = 0,
    EXIT_FATAL = 1,
    EXIT_USAGE = 2,
    EXIT_REJECTS = 3,
    EXIT_VERIFY = 4,
    EXIT_INTERRUPTED = 130
};

/* One option of a subcommand. */
typedef struct cli_opt {
    const char *name;   /* without the leading "--" */
    bool has_arg;
    int id;
} cli_opt;

/* Iterates argv: returns the id of the next option (with *arg its value),
 * 0 for a positional argument (*arg), -1 at the end, -2 on a usage error
 * (message printed). "--" ends options; "--name=value" and "--name value"
 * both work; "-" alone is positional (standard input). */
typedef struct cli_parser {
    int argc;
    char **argv;
    int i;
    bool only_positional;
    const char *cmd;
    const cli_opt *opts;
} cli_parser;

void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv, const cli_opt *opts);
int cli_next(cli_parser *p, const char **arg);

/* The run's AWS configuration, resolved once (its warnings printed once)
 * and shared by every client of the run, DynamoDB's and S3's, so that they
 * sign with one credential provider; the first clock correction of any of
 * them (STS's included) is said on stderr: "this machine's clock is 7 min
 * behind AWS's: signing with AWS's time". *cfg is a reference the caller drops
 * with el_aws_config_free. Prints the error and returns false on failure
 * (exit 2). Main thread only. */
bool cli_aws_config(const el_aws_opts *opts, el_aws_config **cfg);

/* Drops the run's own reference to its configuration (main, after the
 * command): the credential provider's renewal thread stops there. */
void cli_aws_done(void);

/* Resolves configuration (cli_aws_config) and creates the client; prints
 * the error and returns false on failure (exit 2). The caller frees both. */
bool cli_connect(const el_aws_opts *opts, el_aws_config **cfg, el_ddb **ddb);

/* "edgeload: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a positive integer option; prints and returns false on error. */
bool cli_parse_long(const char *opt, const char *arg, long min, long *out);
bool cli_parse_double(const char *opt, const char *arg, double min, double *out);

int cmd_load(int argc, char **argv);
int cmd_create_table(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_counters(int argc, char **argv);

#endif
