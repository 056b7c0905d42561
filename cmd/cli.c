/*
 * cli.c - option parsing, messages and AWS setup shared by subcommands.
 *
 * DESIGN: a tiny long-option parser instead of getopt_long: every option
 * of edgeload is long (as the AWS CLI's are), "--opt=value" and "--opt value"
 * both work, and the parser reports unknown options with the subcommand's
 * name so the message points at the right --help.
 */
#include "cmd/cli.h"

#include <errno.h>   /* strtol range errors */
#include <stdarg.h>  /* va_list */
#include <stdatomic.h> /* the clock line, said once from any thread */
#include <stdio.h>   /* fprintf */
#include <stdlib.h>  /* strtol, getenv, labs */
#include <string.h>  /* strncmp, strlen */

/* One line on stderr: the prefix, the message, a newline. */
static void say(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void say(const char *prefix, const char *fmt, va_list ap)
{
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("edgeload: ", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("edgeload: warning: ", fmt, ap);
    va_end(ap);
}

void cli_parser_init(cli_parser *p, const char *cmd, int argc, char **argv, const cli_opt *opts)
{
    p->argc = argc;
    p->argv = argv;
    p->i = 0;
    p->only_positional = false;
    p->cmd = cmd;
    p->opts = opts;
}

int cli_next(cli_parser *p, const char **arg)
{
    if (p->i >= p->argc)
        return -1;
    const char *a = p->argv[p->i++];
    if (p->only_positional || a[0] != '-' || strcmp(a, "-") == 0) {
        *arg = a;
        return 0;
    }
    if (strcmp(a, "--") == 0) {
        p->only_positional = true;
        return cli_next(p, arg);
    }
    if (a[1] != '-') {
        cli_error("%s: unknown option '%s' (options are long, like --table; see "
                  "'edgeload %s --help')", p->cmd, a, p->cmd);
        return -2;
    }
    const char *name = a + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (const cli_opt *o = p->opts; o->name; o++) {
        if (strlen(o->name) != len || strncmp(o->name, name, len) != 0)
            continue;
        if (!o->has_arg) {
            if (eq) {
                cli_error("%s: option '--%s' takes no value", p->cmd, o->name);
                return -2;
            }
            *arg = NULL;
            return o->id;
        }
        if (eq) {
            *arg = eq + 1;
        } else if (p->i < p->argc) {
            *arg = p->argv[p->i++];
        } else {
            cli_error("%s: option '--%s' needs a value", p->cmd, o->name);
            return -2;
        }
        return o->id;
    }
    cli_error("%s: unknown option '--%.*s' (see 'edgeload %s --help')", p->cmd, (int)len, name,
              p->cmd);
    return -2;
}

static const char *env_lookup(const char *name)
{
    return getenv(name);
}

/* The run's configuration: resolved by the first client that needs it and
 * shared by the others (DynamoDB and S3), so that they sign with one
 * credential provider. Main thread only. */
static el_aws_config *run_cfg;

/* Set once a client said it signs by AWS's time. */
static atomic_int clock_said;

/* "this machine's clock is 7 min behind AWS's: signing with AWS's time"
 * (seconds under a minute and a half; "ahead of" a clock ahead). */
static void clock_line(long offset_s, char *out, size_t cap)
{
    long a = labs(offset_s);
    char amount[32];
    if (a >= 90)
        snprintf(amount, sizeof amount, "%ld min", (a + 30) / 60);
    else
        snprintf(amount, sizeof amount, "%ld s", a);
    snprintf(out, cap, "this machine's clock is %s %s AWS's: signing with AWS's time", amount,
             offset_s > 0 ? "behind" : "ahead of");
}

/* An el_skew_report_fn: a client of the run (DynamoDB, S3, STS) set its
 * signing clock by a service's Date. Said once for the run, whichever
 * client and thread it was. */
static void on_clock_skew(void *user, const char *service, long offset_s)
{
    (void)user;
    (void)service;
    if (atomic_exchange(&clock_said, 1))
        return;
    char line[160];
    clock_line(offset_s, line, sizeof line);
    fprintf(stderr, "edgeload: %s\n", line);
}

bool cli_aws_config(const el_aws_opts *opts, el_aws_config **cfg)
{
    *cfg = NULL;
    if (!run_cfg) {
        el_diag d;
        char warning[512] = "";
        el_diag_clear(&d);
        el_aws_opts o = opts ? *opts : (el_aws_opts){0};
        o.on_skew = on_clock_skew;
        if (el_aws_config_resolve(&o, env_lookup, &run_cfg, warning, sizeof warning, &d)) {
            cli_error("%s", d.msg);
            return false;
        }
        if (warning[0])
            cli_warn("%s", warning);
        if (!run_cfg->verify_ssl)
            cli_warn("--no-verify-ssl: HTTPS certificates are not verified; anyone on the "
                     "network path can read and change this load");
    }
    *cfg = el_aws_config_ref(run_cfg);
    return true;
}

void cli_aws_done(void)
{
    el_aws_config_free(run_cfg);
    run_cfg = NULL;
}

bool cli_connect(const el_aws_opts *opts, el_aws_config **cfg, el_ddb **ddb)
{
    el_diag d;
    el_diag_clear(&d);
    *ddb = NULL;
    if (!cli_aws_config(opts, cfg))
        return false;
    if (el_ddb_new(*cfg, ddb, &d)) {
        cli_error("%s", d.msg);
        el_aws_config_free(*cfg);
        *cfg = NULL;
        return false;
    }
    return true;
}

bool cli_parse_long(const char *opt, const char *arg, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < min) {
        cli_error("--%s needs a whole number of at least %ld, not '%s'", opt, min, arg);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_double(const char *opt, const char *arg, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || v < min) {
        cli_error("--%s needs a number of at least %g, not '%s'", opt, min, arg);
        return false;
    }
    *out = v;
    return true;
}
