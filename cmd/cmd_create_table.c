/*
 * cmd_create_table.c - `edgeload create-table`: the table the loader
 * expects (string PK/SK, the inverted GSI), made ready for a bulk load
 * (billing mode and capacity, warm throughput, on-demand maximum, class,
 * deletion protection, tags: pipeline/rows/table_settings.h), waiting until it
 * is ACTIVE, warm throughput included.
 */
#include <stdio.h>    /* fprintf */
#include <string.h>   /* strcmp */

#include "cmd/cli.h"
#include "cmd/print_stats.h"
#include "cmd/progress.h"
#include "cmd/runner.h"
#include "common/clock.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/table_settings.h"

/* The settings' flags are el_ts_field values past OPT_OWN; --wait after them. */
enum { O_SETTING = OPT_OWN, O_WAIT = OPT_OWN + EL_TS_NFIELDS };

static const cli_opt own_opts[] = {
    { "billing-mode", true, O_SETTING + EL_TS_BILLING_MODE },
    { "write-units", true, O_SETTING + EL_TS_WRITE_UNITS },
    { "read-units", true, O_SETTING + EL_TS_READ_UNITS },
    { "warm-throughput", true, O_SETTING + EL_TS_WARM },
    { "max-write-units", true, O_SETTING + EL_TS_MAX_WRITE },
    { "max-read-units", true, O_SETTING + EL_TS_MAX_READ },
    { "table-class", true, O_SETTING + EL_TS_TABLE_CLASS },
    { "deletion-protection", false, O_SETTING + EL_TS_DELETION_PROTECTION },
    { "tag", true, O_SETTING + EL_TS_TAG },
    { "projection", true, O_SETTING + EL_TS_PROJECTION },
    { "wait", true, O_WAIT },
    { NULL, false, 0 }
};

typedef struct create_args {
    el_table_settings *flags;  /* the settings given as flags */
    long wait;
} create_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    create_args *a = ctx;
    if (id == O_WAIT)
        return cli_parse_long("wait", arg, 0, &a->wait) ? 0 : EXIT_USAGE;
    if (id < O_SETTING || id >= O_WAIT)
        return EXIT_FATAL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_table_settings_set(a->flags, (el_ts_field)(id - O_SETTING), arg, &d);
    if (err) {
        cli_error("create-table: %s", d.msg);
        return err == EL_ENOMEM ? EXIT_FATAL : EXIT_USAGE;
    }
    return 0;
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

static void on_wait(void *user, const el_table_wait *seen, double waited_ms)
{
    wait_view *v = user;
    char now[sizeof v->last];
    snprintf(now, sizeof now, "%s/%s/%s/%s", seen->table, seen->table_warm, seen->index,
             seen->index_warm);
    double t = el_now_ms();
    bool changed = strcmp(now, v->last) != 0;
    if (v->mode == PROGRESS_NONE ||
        (v->mode == PROGRESS_PLAIN && !changed && t - v->last_print_ms < v->interval_ms))
        return;
    snprintf(v->last, sizeof v->last, "%s", now);
    v->last_print_ms = t;
    const char *ts = seen->table[0] ? seen->table : "not-visible";
    bool bar = v->mode == PROGRESS_BAR;
    if (bar)
        fprintf(stderr, "\r\033[Kwaiting for ACTIVE | table %s", ts);
    else
        fprintf(stderr, "edgeload: progress elapsed=%.1f phase=waiting-active table_status=%s",
                waited_ms / 1000.0, ts);
    const struct { const char *bar, *plain, *status; } more[] = {
        { "warm throughput", "table_warm_status", seen->table_warm },
        { "index", "index_status", seen->index },
        { "index warm throughput", "index_warm_status", seen->index_warm },
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (more[i].status[0])
            fprintf(stderr, bar ? " | %s %s" : " %s=%s", bar ? more[i].bar : more[i].plain,
                    more[i].status);
    if (bar) {
        fprintf(stderr, " | %.0f s", waited_ms / 1000.0);
        v->drew = true;
    } else {
        fputc('\n', stderr);
    }
}

/* "40000 write / 12000 read", the figures that are set; "" when none is. */
static void pair_text(char *out, size_t cap, double w, double r)
{
    snprintf(out, cap, "%.0f write%s", w, r > 0 ? " / " : "");
    if (w <= 0)
        out[0] = '\0';
    if (r > 0) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%.0f read", r);
    }
}

/* "WHAT X units a second (table and index)" or "WHAT table X, index Y
 * units a second"; nothing when neither is set. */
static void print_pair(const char *what, const char *table, const char *index, bool has_index)
{
    if (!table[0] && !index[0])
        return;
    if (!has_index)
        fprintf(stderr, "%s %s units a second", what, table);
    else if (strcmp(table, index) == 0)
        fprintf(stderr, "%s %s units a second (table and index)", what, table);
    else
        fprintf(stderr, "%s table %s, index %s units a second", what, table[0] ? table : "none",
                index[0] ? index : "none");
}

/* What the new table takes: its capacity and the warm throughput
 * DescribeTable reported; a warning when it reported less than was asked,
 * or none (DynamoDB Local keeps no warm throughput). */
static void print_capacity(const el_create_table_opts *ct, const el_create_table_figures *fig)
{
    char t[64], i[64];
    bool has_index = ct->index_name != NULL;
    const el_ddb_throughput *a = &ct->table_tp, *ai = &ct->index_tp;
    if (ct->provisioned) {
        pair_text(t, sizeof t, (double)a->write_units, (double)a->read_units);
        pair_text(i, sizeof i, (double)ai->write_units, (double)ai->read_units);
        fprintf(stderr, "edgeload: capacity: PROVISIONED");
    } else {
        pair_text(t, sizeof t, (double)a->max_write, (double)a->max_read);
        pair_text(i, sizeof i, (double)ai->max_write, (double)ai->max_read);
        fprintf(stderr, "edgeload: capacity: on-demand (PAY_PER_REQUEST)");
    }
    print_pair(ct->provisioned ? "," : ", maximum", t, i, has_index);
    fputc('\n', stderr);
    const el_warm_desc *g = &fig->warm, *gi = &fig->index_warm;
    bool reported = g->status[0] || (has_index && gi->status[0]);
    if (reported) {
        pair_text(t, sizeof t, g->write_units, g->read_units);
        pair_text(i, sizeof i, gi->write_units, gi->read_units);
        print_pair("edgeload: warm throughput", t, i, has_index);
        fputc('\n', stderr);
    }
    bool asked = a->warm_write || a->warm_read || (has_index && (ai->warm_write || ai->warm_read));
    if (!asked)
        return;
    pair_text(t, sizeof t, (double)a->warm_write, (double)a->warm_read);
    if (!reported) {
        cli_warn("the endpoint reports no warm throughput (asked: %s units a second; DynamoDB "
                 "Local keeps none): check it with aws dynamodb describe-table", t);
        return;
    }
    bool short_table = g->write_units < (double)a->warm_write || g->read_units < (double)a->warm_read;
    bool short_index = has_index && (gi->write_units < (double)ai->warm_write ||
                                     gi->read_units < (double)ai->warm_read);
    if (short_table || short_index)
        cli_warn("the warm throughput DescribeTable reports is less than the %s units a "
                 "second asked", t);
}

static const cmd_spec spec = {
    .name = "create-table",
    .usage = "--table NAME [OPTIONS]",
    .about =
"Creates NAME with string keys PK (partition) and SK (sort) and the inverted\n"
"global secondary index (GSI1PK partition, GSI1SK sort), on-demand\n"
"(PAY_PER_REQUEST) unless --billing-mode says otherwise, then waits until\n"
"table and index are ACTIVE, and their warm throughput too. With --mapping,\n"
"the table, key and index names are the mapping's, and its \"create_table\"\n"
"object gives the settings below (a flag wins over the file). Throughput\n"
"flags set the table's figure and the index's alike.",
    .takes = OPT_BIT(OPT_MAPPING) | OPT_BIT(OPT_TABLE) | OPT_BIT(OPT_INDEX_NAME) |
             OPT_BIT(OPT_NO_INDEX) | OPTS_AWS | OPTS_REPORTS,
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Table:\n"
"  --billing-mode MODE      PAY_PER_REQUEST (on-demand, default) or PROVISIONED\n"
"  --write-units N          a PROVISIONED table's write capacity (and its index's)\n"
"  --read-units N           a PROVISIONED table's read capacity (and its index's)\n"
"  --warm-throughput W[,R]  write (and read) units a second the table and index\n"
"                           take from the first request (a new on-demand table\n"
"                           takes 4000 writes a second at first); plan prints the\n"
"                           figure a load can use\n"
"  --max-write-units N      an on-demand table's maximum write units a second\n"
"  --max-read-units N       an on-demand table's maximum read units a second\n"
"  --table-class CLASS      STANDARD (default) or STANDARD_INFREQUENT_ACCESS\n"
"  --deletion-protection    refuse DeleteTable until it is turned off\n"
"  --tag KEY=VALUE          a tag of the table (repeatable, at most 50)\n"
"  --projection ALL|KEYS_ONLY   attributes the index holds (default ALL)\n"
"  --wait SECONDS           how long to wait for ACTIVE (default 300)\n",
    .epilogue = "Exit status: 0 created, 2 usage error or the table exists, 1 failed.\n",
    .own_opt = own_opt,
};

/* The settings of the new table: the mapping's "create_table" with the
 * flags over it, checked; NULL after printing why (*rc the exit status).
 * The caller frees the result, which may be the mapping's (taken from it). */
static el_table_settings *table_settings(el_mapping *m, el_table_settings *flags, bool no_index,
                                         int *rc)
{
    el_diag d;
    el_diag_clear(&d);
    el_table_settings *s = m && m->create_table ? m->create_table : el_table_settings_new();
    if (m)
        m->create_table = NULL;
    el_err err = s ? el_table_settings_merge(s, flags, &d) : EL_ENOMEM;
    if (!err)
        err = el_table_settings_check(s, !no_index, &d);
    if (!err)
        return s;
    el_table_settings_free(s);
    cli_error("create-table: %s", err == EL_ENOMEM ? "out of memory" : d.msg);
    *rc = err == EL_ENOMEM ? EXIT_FATAL : EXIT_USAGE;
    return NULL;
}

int cmd_create_table(int argc, char **argv)
{
    cmd_options o;
    create_args ca = { .flags = el_table_settings_new(), .wait = 300 };
    if (!ca.flags) {
        cli_error("out of memory");
        return EXIT_FATAL;
    }
    int prc = cmd_parse(&spec, argc, argv, &o, &ca);
    if (prc < 0 && cmd_check_outputs(&spec, &o, NULL, 0))
        prc = EXIT_USAGE;
    const char *table = o.map.table, *index_name = o.map.index_name;
    const char *mapping_path = o.map.mapping_path;
    bool no_index = o.map.no_index;
    long wait = ca.wait;
    el_aws_opts aws = o.aws;
    const char *stats_json = o.stats_json;
    bool quiet = o.quiet;
    wait_view view = { .mode = quiet ? PROGRESS_NONE : o.progress,
                       .interval_ms = (o.progress_interval_s > 0 ? o.progress_interval_s : EL_PROGRESS_INTERVAL_S) *
                                      1000.0 };
    cmd_options_free(&o);
    if (prc >= 0) {
        el_table_settings_free(ca.flags);
        return prc;
    }
    el_mapping *m = NULL;
    el_table_settings *ts = NULL;
    el_diag d;
    el_diag_clear(&d);
    int rc = EXIT_USAGE;
    if (mapping_path && el_mapping_load_file(mapping_path, &m, &d)) {
        cli_error("%s", d.msg);
        goto out;
    }
    if (!table && m)
        table = m->table;
    if (!table) {
        cli_error("create-table: --table is required");
        goto out;
    }
    if (!(ts = table_settings(m, ca.flags, no_index, &rc)))
        goto out;
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
        .projection = "ALL",
        .wait_seconds = (int)wait,
        .on_wait = on_wait,
        .user = &view,
    };
    el_table_settings_apply(ts, &ct);
    if (view.mode == PROGRESS_AUTO) {
        progress p;
        progress_init(&p, PROGRESS_AUTO, 1);
        view.mode = p.mode;
    }
    view.last_print_ms = el_now_ms();
    el_aws_config *cfg;
    el_ddb *ddb;
    if (!cli_connect(&aws, &cfg, &ddb))
        goto out;
    el_create_table_figures fig;
    double t0 = el_now_ms();
    el_err err = el_ddb_create_table(ddb, &ct, &fig, &d);
    double elapsed_s = (el_now_ms() - t0) / 1000.0;
    if (view.drew)
        fputc('\n', stderr);
    rc = EXIT_LOADED;
    if (err) {
        cli_error("%s", d.msg);
        rc = cmd_exit_code(err);
    } else if (!quiet) {
        if (ct.index_name)
            fprintf(stderr, "edgeload: created table %s (%s, %s) with index %s (%s, %s), "
                    "projection %s\n", table, ct.pk, ct.sk, ct.index_name, ipk, isk,
                    ct.projection);
        else
            fprintf(stderr, "edgeload: created table %s (%s, %s)\n", table, ct.pk, ct.sk);
        print_capacity(&ct, &fig);
    }
    if (stats_json) {
        const cmd_stat stats[] = {
            CMD_STR("table", table),
            CMD_U64("created", err == EL_OK),
            CMD_STR("billing_mode", ct.provisioned ? "PROVISIONED" : "PAY_PER_REQUEST"),
            CMD_U64("requests", fig.requests),
            CMD_U64("retries", fig.retries),
            CMD_U64("polls", fig.polls),
            CMD_DBL("warm_write_units", fig.warm.write_units, 0),
            CMD_DBL("index_warm_write_units", fig.index_warm.write_units, 0),
            CMD_DBL("wait_s", fig.wait_ms / 1000.0, 3),
            CMD_DBL("elapsed_s", elapsed_s, 3),
        };
        cmd_write_stats(stats_json, stats, sizeof stats / sizeof stats[0]);
    }
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
out:
    el_table_settings_free(ts);
    el_table_settings_free(ca.flags);
    el_mapping_free(m);
    return rc;
}
