/*
 * runner.c - the parts of a command that every command shares.
 *
 * DESIGN: the option table is the shared one (options.c) followed by the
 * command's own, so a shared option a command does not take is still
 * recognised and refused with its reason instead of "unknown option"; the
 * help of the shared options is printed from the same table, so what
 * --help lists is what the parser takes.
 */
#include "cmd/runner.h"

#include <signal.h>  /* sigaction */
#include <stdio.h>   /* fprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strlen, strchr */
#include <unistd.h>  /* access */

#include "cmd/cli.h"
#include "common/file.h"    /* el_file_check_writable */
#include "s3/s3.h"          /* el_s3_is_url */

atomic_int cmd_stop;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&cmd_stop, 1);
}

void cmd_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cmd_exit_code(el_err err)
{
    switch (err) {
    case EL_OK: return EXIT_LOADED;
    case EL_EUSAGE:
    case EL_ECONFIG:
    case EL_ETABLE: return EXIT_USAGE;
    case EL_EINTR: return EXIT_INTERRUPTED;
    default: return EXIT_FATAL;
    }
}

/* ---- help ---- */

typedef struct group {
    const char *title;
    int first, last;           /* shared ids */
} group;

static const group groups[] = {
    { "Mapping (a file, or flags for one source)", OPT_MAPPING, OPT_PLAN },
    { "Input", OPT_FORMAT, OPT_COLUMNS },
    { "Run", OPT_DRY_RUN, OPT_SPLIT },
    { "Reports", OPT_STATS_JSON, OPT_QUIET },
    { "AWS (as the AWS CLI reads them)", OPT_ENDPOINT_URL, OPT_ENDPOINT_URL_S3 },
};

#define HELP_COL 27
#define HELP_WIDTH 79

/* Prints an option's help text from column col on, reflowed to the help's
 * width: the table's line breaks are only hints, so a text can be edited
 * without rewrapping it. "%d" is the command's default concurrency. */
static void print_help_lines(const char *text, int col, int default_concurrency)
{
    char buf[2048];
    const char *pct = strstr(text, "%d");
    if (pct)
        snprintf(buf, sizeof buf, "%.*s%d%s", (int)(pct - text), text, default_concurrency,
                 pct + 2);
    else
        snprintf(buf, sizeof buf, "%s", text);
    for (char *q = buf; *q; q++)
        if (*q == '\n')
            *q = ' ';
    if (col >= HELP_COL - 1) {
        putchar('\n');
        col = 0;
    }
    printf("%*s", HELP_COL - col, "");
    col = HELP_COL;
    const char *p = buf;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (w == 0)
            break;
        if (col > HELP_COL && col + 1 + (int)w > HELP_WIDTH) {
            printf("\n%*s", HELP_COL, "");
            col = HELP_COL;
        } else if (col > HELP_COL) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)w, p);
        col += (int)w;
        p += w;
    }
    putchar('\n');
}

void cmd_help(const cmd_spec *spec)
{
    printf("usage: edgeload %s %s\n\n%s\n", spec->name, spec->usage, spec->about);
    if (spec->own_help)
        printf("\n%s", spec->own_help);
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        bool titled = false;
        for (int id = groups[g].first; id <= groups[g].last; id++) {
            if (!(spec->takes & OPT_BIT(id)))
                continue;
            const cmd_shared_opt *s = cmd_shared_find(id);
            if (!s)
                continue;
            if (!titled)
                printf("\n%s:\n", groups[g].title);
            titled = true;
            int col = printf("  --%s%s%s", s->opt.name, s->arg_name ? " " : "",
                             s->arg_name ? s->arg_name : "");
            print_help_lines(s->help, col, spec->default_concurrency);
        }
    }
    printf("\n  --help                   this text\n");
    if (spec->epilogue)
        printf("\n%s", spec->epilogue);
}

/* ---- parsing ---- */

static const char *refusal_of(const cmd_spec *spec, int id)
{
    for (const cmd_refusal *r = spec->refuse; r && r->id; r++)
        if (r->id == id)
            return r->why;
    return NULL;
}

int cmd_parse(const cmd_spec *spec, int argc, char **argv, cmd_options *o, void *ctx)
{
    if (!cmd_options_init(o, argc)) {
        cli_error("out of memory");
        return EXIT_FATAL;
    }
    size_t nshared = 0, nown = 0;
    while (cmd_shared_opts[nshared].opt.name)
        nshared++;
    while (spec->own && spec->own[nown].name)
        nown++;
    cli_opt *table = calloc(nshared + nown + 1, sizeof *table);
    if (!table) {
        cli_error("out of memory");
        return EXIT_FATAL;
    }
    for (size_t i = 0; i < nshared; i++)
        table[i] = cmd_shared_opts[i].opt;
    for (size_t i = 0; i < nown; i++)
        table[nshared + i] = spec->own[i];
    cli_parser p;
    cli_parser_init(&p, spec->name, argc, argv, table);
    int rc = -1;
    const char *arg;
    int id;
    while (rc < 0 && (id = cli_next(&p, &arg)) != -1) {
        if (id == -2) {
            rc = EXIT_USAGE;
        } else if (id == 0) {
            if (spec->inputs) {
                o->map.inputs[o->map.ninputs++] = arg;
            } else {
                cli_error("%s: unexpected argument '%s' (see 'edgeload %s --help')",
                          spec->name, arg, spec->name);
                rc = EXIT_USAGE;
            }
        } else if (id == OPT_HELP) {
            cmd_help(spec);
            rc = 0;
        } else if (id >= OPT_OWN) {
            int r = spec->own_opt ? spec->own_opt(ctx, id, arg) : EXIT_FATAL;
            if (r)
                rc = r;
        } else if (!(spec->takes & OPT_BIT(id))) {
            const cmd_shared_opt *s = cmd_shared_find(id);
            const char *why = refusal_of(spec, id);
            cli_error("%s does not take --%s%s%s", spec->name, s ? s->opt.name : "?",
                      why && why[0] ? ": " : "", why && why[0] ? why : "");
            rc = EXIT_USAGE;
        } else {
            int r = cmd_options_set(o, spec->name, id, arg);
            if (r)
                rc = r;
        }
    }
    free(table);
    if (rc < 0 && o->resume && !o->checkpoint) {
        cli_error("%s: --resume needs --checkpoint FILE", spec->name);
        rc = EXIT_USAGE;
    }
    return rc;
}

/* ---- the table ---- */

int cmd_check_table(el_ddb *ddb, const el_aws_config *cfg, const el_mapping *m, unsigned need)
{
    el_table_desc t;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_ddb_describe_table(ddb, m->table, &t, &d);
    if (err == EL_ETABLE && (need & EL_TABLE_INDEX_IF_WRITTEN)) {
        /* a command that writes items: the table it needs is one command away */
        char create[1200];
        el_table_create_hint(m, cfg->endpoint, cfg->region, create, sizeof create);
        cli_error("%s; create it with:\n  %s", d.msg, create);
        return EXIT_USAGE;
    }
    if (err == EL_ETABLE) {
        cli_error("%s", d.msg);
        return EXIT_USAGE;
    }
    if (err) {
        cli_error("cannot describe table %s: %s", m->table, d.msg);
        return cmd_exit_code(err) == EXIT_USAGE ? EXIT_USAGE : EXIT_FATAL;
    }
    el_diag_clear(&d);
    if (el_table_check(&t, m, need, cfg->endpoint, cfg->region, &d)) {
        cli_error("%s", d.msg);
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- the files a command writes ---- */

static bool check_output(const char *option, const char *what, const char *path, bool dir)
{
    el_diag d;
    el_diag_clear(&d);
    if (el_file_check_writable(path, dir, &d) == EL_OK)
        return true;
    cli_error("%s%s%s: cannot write %s there: %s", option, option[0] ? " " : "", path, what,
              d.msg);
    return false;
}

int cmd_check_outputs(const cmd_spec *spec, const cmd_options *o, const cmd_output *extra,
                      size_t n)
{
    bool ok = true;
    if (o->checkpoint && (spec->takes & OPT_BIT(OPT_CHECKPOINT)))
        ok = check_output("--checkpoint", "the checkpoint", o->checkpoint, false);
    if (ok && (spec->takes & OPT_BIT(OPT_REJECTS)))
        ok = check_output(o->given & OPT_BIT(OPT_REJECTS) ? "--rejects" : "",
                          o->given & OPT_BIT(OPT_REJECTS)
                              ? "the rejects file"
                              : "the rejects file (the default; --rejects FILE puts it "
                                "elsewhere)",
                          o->rejects, false);
    if (ok && o->stats_json)
        ok = check_output("--stats-json", "the figures", o->stats_json, false);
    if (ok && o->output && !el_s3_is_url(o->output))
        ok = check_output("--output", "the import files", o->output, true);
    for (size_t i = 0; ok && i < n; i++)
        if (extra[i].path)
            ok = check_output(extra[i].option, extra[i].what, extra[i].path, extra[i].dir);
    return ok ? 0 : EXIT_USAGE;
}

bool cmd_checkpoint_saved(const char *path)
{
    return path && access(path, F_OK) == 0;
}

/* ---- --split file names ---- */

bool cmd_split_names(cmd_options *o, const char **extra, char *names[4])
{
    const char **v[4] = { &o->checkpoint, &o->rejects, &o->stats_json, extra };
    for (int k = 0; k < 4; k++) {
        names[k] = NULL;
        if (!v[k] || !*v[k])
            continue;
        if (!(names[k] = el_split_path(*v[k], &o->split))) {
            cli_error("out of memory");
            return false;
        }
        *v[k] = names[k];
    }
    return true;
}

void cmd_split_names_free(char *names[4])
{
    for (int k = 0; k < 4; k++) {
        free(names[k]);
        names[k] = NULL;
    }
}

/* ---- rejects ---- */

/* The first rejects are shown where they happen; the rest only in the
 * rejects file, so a bad file cannot flood a log. */
#define SHOWN_REJECTS 10

void cmd_show_reject(const char *input, const el_diag *why, void *user)
{
    cmd_reject_shower *rs = user;
    unsigned n = atomic_fetch_add(&rs->shown, 1);
    if (rs->quiet || n > SHOWN_REJECTS)
        return;
    if (n == SHOWN_REJECTS) {
        fprintf(stderr, "edgeload: more rows rejected; see the rejects file\n");
        return;
    }
    char place[CMD_ROW_PLACE_BYTES];
    fprintf(stderr, "edgeload: %s: %s (row rejected)\n",
            cmd_row_place(place, sizeof place, input, why), why->msg);
}

const char *cmd_row_place(char *buf, size_t cap, const char *input, const el_diag *why)
{
    if (why->line && why->column)
        snprintf(buf, cap, "%s:%llu:%llu", input, (unsigned long long)why->line,
                 (unsigned long long)why->column);
    else if (why->line)
        snprintf(buf, cap, "%s:%llu", input, (unsigned long long)why->line);
    else
        snprintf(buf, cap, "%s", input);
    return buf;
}
