/*
 * cmd_create_table.c - `edgeload create-table`: the table the loader
 * expects (string PK/SK, on-demand, the inverted GSI), waiting until ACTIVE.
 */
#include <stdio.h>   /* fputs */
#include <string.h>  /* strcmp */

#include "cmd/cli.h"
#include "pipeline/mapping.h"

enum { O_HELP = 1, O_TABLE, O_INDEX_NAME, O_PROJECTION, O_NO_INDEX, O_MAPPING, O_WAIT };

static const cli_opt opts[] = {
    { "help", false, O_HELP },
    { "table", true, O_TABLE },
    { "mapping", true, O_MAPPING },
    { "index-name", true, O_INDEX_NAME },
    { "projection", true, O_PROJECTION },
    { "no-index", false, O_NO_INDEX },
    { "wait", true, O_WAIT },
    CLI_AWS_OPTS,
    { NULL, false, 0 }
};

static void help(void)
{
    fputs("usage: edgeload create-table --table NAME [OPTIONS]\n"
          "\n"
          "Creates NAME with string keys PK (partition) and SK (sort), on-demand\n"
          "capacity (PAY_PER_REQUEST) and the inverted global secondary index\n"
          "(GSI1PK partition, GSI1SK sort), then waits until table and index are ACTIVE.\n"
          "\n"
          "  --table NAME           table to create (or \"table\" of --mapping)\n"
          "  --mapping FILE         take the table, key and index names from a mapping\n"
          "  --index-name NAME      index name (default GSI1; its keys are NAMEPK, NAMESK)\n"
          "  --projection ALL|KEYS_ONLY   attributes the index holds (default ALL)\n"
          "  --no-index             create no index\n"
          "  --wait SECONDS         how long to wait for ACTIVE (default 300)\n"
          "  --endpoint-url URL     DynamoDB endpoint (e.g. http://127.0.0.1:8000)\n"
          "  --region REGION        AWS region\n"
          "  --profile NAME         profile from ~/.aws/credentials and ~/.aws/config\n"
          "  --no-verify-ssl        do not verify HTTPS certificates (warns)\n", stdout);
}

int cmd_create_table(int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, "create-table", argc, argv, opts);
    el_aws_opts aws = { 0 };
    const char *table = NULL, *index_name = NULL, *projection = "ALL", *mapping_path = NULL;
    bool no_index = false;
    long wait = 300;
    const char *arg;
    int id;
    while ((id = cli_next(&p, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            cli_error("create-table: unexpected argument '%s'", arg);
            return EXIT_USAGE;
        case O_HELP: help(); return 0;
        case O_TABLE: table = arg; break;
        case O_MAPPING: mapping_path = arg; break;
        case O_INDEX_NAME: index_name = arg; break;
        case O_PROJECTION: projection = arg; break;
        case O_NO_INDEX: no_index = true; break;
        case O_WAIT:
            if (!cli_parse_long("wait", arg, 0, &wait))
                return EXIT_USAGE;
            break;
        default: cli_aws_opt(&aws, id, arg); break;
        }
    }
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
    };
    el_aws_config *cfg;
    el_ddb *ddb;
    int rc = EXIT_LOADED;
    if (!cli_connect(&aws, &cfg, &ddb)) {
        el_mapping_free(m);
        return EXIT_USAGE;
    }
    el_err err = el_ddb_create_table(ddb, &ct, &d);
    if (err) {
        cli_error("%s", d.msg);
        rc = cli_exit_code(err);
    } else {
        if (ct.index_name)
            fprintf(stderr, "edgeload: created table %s (%s, %s) with index %s (%s, %s), "
                    "projection %s\n", table, ct.pk, ct.sk, ct.index_name, ipk, isk, projection);
        else
            fprintf(stderr, "edgeload: created table %s (%s, %s)\n", table, ct.pk, ct.sk);
    }
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
    el_mapping_free(m);
    return rc;
}
