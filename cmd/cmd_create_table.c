/*
 * cmd_create_table.c - `edgeload create-table`: the table the loader
 * expects (string PK/SK, on-demand, the inverted GSI), waiting until ACTIVE.
 */
#include <stdio.h>   /* fprintf */
#include <string.h>  /* strcmp */

#include "cmd/cli.h"
#include "cmd/progress.h"
#include "cmd/runner.h"
#include "common/clock.h"
#include "pipeline/mapping.h"

enum { O_PROJECTION = OPT_OWN, O_WAIT };

static const cli_opt own_opts[] = {
    { "projection", true, O_PROJECTION },
    { "wait", true, O_WAIT },
    { NULL, false, 0 }
};

typedef struct create_args {
    const char *projection;
    long wait;
} create_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    create_args *a = ctx;
    switch (id) {
    case O_PROJECTION: a->projection = arg; return 0;
    case O_WAIT: return cli_parse_long("wait", arg, 0, &a->wait) ? 0 : EXIT_USAGE;
    }
    return EXIT_FATAL;
}

static const char names_only[] =
    "create-table takes the table, key and index names (--mapping FILE, or --table NAME "
    "with --index-name or --no-index), not templates or inputs";

static const char one_request[] =
    "create-table sends one CreateTable request and waits until the table is ACTIVE";
static const char no_items[] = "create-table reads no input and writes no item";
static const char rerun[] =
    "create-table has nothing to resume: run it again (a table that exists is an error)";

static const cmd_refusal refuse[] = {
    { OPT_PK, names_only }, { OPT_SK, names_only }, { OPT_INDEX_PK, names_only },
    { OPT_INDEX_SK, names_only }, { OPT_ATTR, names_only }, { OPT_CONST, names_only },
    { OPT_ALL_COLUMNS, names_only }, { OPT_SOURCE_TABLE, names_only },
    { OPT_COUNTER, names_only }, { OPT_HOT_THRESHOLD, names_only },
    { OPT_MAX_SHARDS, names_only }, { OPT_PLAN, names_only }, { OPT_FORMAT, names_only },
    { OPT_DELIMITER, names_only }, { OPT_NULL, names_only }, { OPT_ESCAPE, names_only },
    { OPT_COLUMNS, names_only }, { OPT_ENDPOINT_URL_S3, names_only },
    { OPT_DRY_RUN, no_items },
    { OPT_OUTPUT, "an import from S3 ('aws dynamodb import-table' of an --output "
                  "directory) creates its table itself" },
    { OPT_CONCURRENCY, one_request }, { OPT_THREADS, one_request },
    { OPT_MAX_WCU, one_request }, { OPT_MAX_RCU, one_request }, { OPT_SPLIT, one_request },
    { OPT_MAX_RETRY_TIME, "--wait SECONDS bounds how long it waits for the table" },
    { OPT_CHECKPOINT, rerun }, { OPT_CHECKPOINT_INTERVAL, rerun }, { OPT_RESUME, rerun },
    { OPT_REJECTS, no_items }, { OPT_MAX_REJECTS, no_items },
    { 0, NULL }
};

/* The wait for ACTIVE, shown as the other commands show their phases: a
 * bar on a terminal, a key=value line every --progress-interval otherwise
 * (and when a status changes). */
typedef struct wait_view {
    progress_mode mode;
    double interval_ms, last_print_ms;
    char last[64];
    bool drew;
} wait_view;

static void on_wait(void *user, const char *table_status, const char *index_status,
                    double waited_ms)
{
    wait_view *v = user;
    char now[64];
    snprintf(now, sizeof now, "%s/%s", table_status, index_status);
    double t = el_now_ms();
    bool changed = strcmp(now, v->last) != 0;
    if (v->mode == PROGRESS_NONE ||
        (v->mode == PROGRESS_PLAIN && !changed && t - v->last_print_ms < v->interval_ms))
        return;
    snprintf(v->last, sizeof v->last, "%s", now);
    v->last_print_ms = t;
    const char *ts = table_status[0] ? table_status : "not-visible";
    if (v->mode == PROGRESS_BAR) {
        fprintf(stderr, "\r\033[Kwaiting for ACTIVE | table %s", ts);
        if (index_status[0])
            fprintf(stderr, " | index %s", index_status);
        fprintf(stderr, " | %.0f s", waited_ms / 1000.0);
        v->drew = true;
    } else {
        fprintf(stderr, "edgeload: progress elapsed=%.1f phase=waiting-active table_status=%s",
                waited_ms / 1000.0, ts);
        if (index_status[0])
            fprintf(stderr, " index_status=%s", index_status);
        fputc('\n', stderr);
    }
}

static const cmd_spec spec = {
    .name = "create-table",
    .usage = "--table NAME [OPTIONS]",
    .about =
"Creates NAME with string keys PK (partition) and SK (sort), on-demand\n"
"capacity (PAY_PER_REQUEST) and the inverted global secondary index\n"
"(GSI1PK partition, GSI1SK sort), then waits until table and index are ACTIVE.\n"
"With --mapping, the table, key and index names are the mapping's.",
    .takes = OPT_BIT(OPT_MAPPING) | OPT_BIT(OPT_TABLE) | OPT_BIT(OPT_INDEX_NAME) |
             OPT_BIT(OPT_NO_INDEX) | OPTS_AWS | OPTS_REPORTS,
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Table:\n"
"  --projection ALL|KEYS_ONLY   attributes the index holds (default ALL)\n"
"  --wait SECONDS           how long to wait for ACTIVE (default 300)\n",
    .epilogue = "Exit status: 0 created, 2 usage error or the table exists, 1 failed.\n",
    .own_opt = own_opt,
};

int cmd_create_table(int argc, char **argv)
{
    cmd_options o;
    create_args ca = { .projection = "ALL", .wait = 300 };
    int prc = cmd_parse(&spec, argc, argv, &o, &ca);
    if (prc < 0 && cmd_check_outputs(&spec, &o, NULL, 0))
        prc = EXIT_USAGE;
    const char *table = o.map.table, *index_name = o.map.index_name;
    const char *projection = ca.projection, *mapping_path = o.map.mapping_path;
    bool no_index = o.map.no_index;
    long wait = ca.wait;
    el_aws_opts aws = o.aws;
    const char *stats_json = o.stats_json;
    bool quiet = o.quiet;
    wait_view view = { .mode = quiet ? PROGRESS_NONE : o.progress,
                       .interval_ms = (o.progress_interval_s > 0 ? o.progress_interval_s : 10) *
                                      1000.0 };
    cmd_options_free(&o);
    if (prc >= 0)
        return prc;
    if (strcmp(projection, "ALL") != 0 && strcmp(projection, "KEYS_ONLY") != 0) {
        cli_error("create-table: --projection must be ALL or KEYS_ONLY, not '%s'", projection);
        return EXIT_USAGE;
    }
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (mapping_path && el_mapping_load_file(mapping_path, &m, &d)) {
        cli_error("%s", d.msg);
        return EXIT_USAGE;
    }
    if (!table && m)
        table = m->table;
    if (!table) {
        cli_error("create-table: --table is required");
        el_mapping_free(m);
        return EXIT_USAGE;
    }
    char ipk[300], isk[300];
    const char *iname = index_name ? index_name : m ? m->index_name : "GSI1";
    if (m && !index_name) {
        snprintf(ipk, sizeof ipk, "%s", m->index_pk_attr);
        snprintf(isk, sizeof isk, "%s", m->index_sk_attr);
    } else {
        snprintf(ipk, sizeof ipk, "%sPK", iname);
        snprintf(isk, sizeof isk, "%sSK", iname);
    }
    el_create_table_opts ct = {
        .table = table,
        .pk = m ? m->pk_attr : "PK",
        .sk = m ? m->sk_attr : "SK",
        .index_name = no_index ? NULL : iname,
        .index_pk = ipk,
        .index_sk = isk,
        .projection = projection,
        .wait_seconds = (int)wait,
        .on_wait = on_wait,
        .user = &view,
    };
    if (view.mode == PROGRESS_AUTO) {
        progress p;
        progress_init(&p, PROGRESS_AUTO, 1);
        view.mode = p.mode;
    }
    view.last_print_ms = el_now_ms();
    el_aws_config *cfg;
    el_ddb *ddb;
    int rc = EXIT_LOADED;
    if (!cli_connect(&aws, &cfg, &ddb)) {
        el_mapping_free(m);
        return EXIT_USAGE;
    }
    el_create_table_figures fig;
    double t0 = el_now_ms();
    el_err err = el_ddb_create_table(ddb, &ct, &fig, &d);
    double elapsed_s = (el_now_ms() - t0) / 1000.0;
    if (view.drew)
        fputc('\n', stderr);
    if (err) {
        cli_error("%s", d.msg);
        rc = cmd_exit_code(err);
    } else if (!quiet) {
        if (ct.index_name)
            fprintf(stderr, "edgeload: created table %s (%s, %s) with index %s (%s, %s), "
                    "projection %s\n", table, ct.pk, ct.sk, ct.index_name, ipk, isk, projection);
        else
            fprintf(stderr, "edgeload: created table %s (%s, %s)\n", table, ct.pk, ct.sk);
    }
    if (stats_json) {
        const cmd_stat stats[] = {
            CMD_STR("table", table),
            CMD_U64("created", err == EL_OK),
            CMD_U64("requests", fig.requests),
            CMD_U64("retries", fig.retries),
            CMD_U64("polls", fig.polls),
            CMD_DBL("wait_s", fig.wait_ms / 1000.0, 3),
            CMD_DBL("elapsed_s", elapsed_s, 3),
        };
        cmd_write_stats(stats_json, stats, sizeof stats / sizeof stats[0]);
    }
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    el_mapping_free(m);
    return rc;
}
