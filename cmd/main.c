/*
 * main.c - `edgeload COMMAND ...`: dispatch, --help and --version.
 *
 * DESIGN: one file per subcommand (cmd_<name>.c, as git's builtin/), each
 * parsing its own options into a configuration for the library and mapping
 * the library's errors to exit codes. curl's global state is set up here,
 * once, before any thread exists.
 */
#include <signal.h>     /* SIGPIPE ignored for libcurl */
#include <stdio.h>      /* printf */
#include <stdlib.h>     /* getenv */
#include <string.h>     /* strcmp, strstr */
#ifdef __GLIBC__
#include <malloc.h>     /* mallopt: see keep_freed_memory */
#endif

#include "cmd/cli.h"
#include "dynamo/ddb_client.h" /* el_ddb_global_init before threads start */

static void usage(FILE *f)
{
    fputs("usage: edgeload COMMAND [OPTIONS] [INPUT...]\n"
          "\n"
          "Load relational rows (SQL dumps, CSV, TSV) into DynamoDB in the adjacency-list\n"
          "shape:\n"
          "one item per row with PK/SK from templates, and the inverted index keys\n"
          "(GSI1PK = SK, GSI1SK = PK) so both directions are one Query.\n"
          "\n"
          "Commands:\n"
          "  load           transform rows and write the items (BatchWriteItem)\n"
          "  plan           read only: fan-in report, hot targets, shard plan (--plan-out)\n"
          "  create-table   create the table with PK/SK and the inverted GSI\n"
          "  verify         check that every expected item is in the table (exit 4 if not)\n"
          "  counters       backfill the mapping's counters only, without rewriting items\n"
          "\n"
          "  edgeload COMMAND --help   options of a command\n"
          "  edgeload --version        version\n"
          "\n"
          "Exit status: 0 loaded, 3 finished with rejected rows, 2 usage, mapping,\n"
          "configuration or table error (nothing written), 1 aborted by a fatal error,\n"
          "4 verify found missing or different items, 130 interrupted.\n", f);
}

/*
 * The pipeline allocates and frees buffers of 64 KB to a few MB all the time
 * (chunks, part buffers, request bodies, zstd frames) on several threads.
 * With glibc's defaults many of them are mmap'd and unmapped, or trimmed off
 * a thread's heap, and every new one is faulted in again page by page: on
 * this project's 2-core VM that was most of --output's system time
 * (CSV -> --output, 1 M rows, --threads 1: 18,000 -> 2,400 page faults,
 * 0.23-0.33 -> 0.05 s sys, 0.86-0.90 -> 0.58-0.61 s wall; peak RSS 14 -> 18
 * MB, flat at 4 M rows; docs/PERFORMANCE.md). Keeping up to 8 MB free per
 * heap and mapping only blocks over 4 MB separately bounds what is kept.
 * A user's own GLIBC_TUNABLES for malloc wins.
 */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, "glibc.malloc."))
        return;
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
#endif
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("edgeload %s\n", EDGELOAD_VERSION);
        return 0;
    }
    /* libcurl runs with CURLOPT_NOSIGNAL (threads): a peer closing a TLS
     * connection must be an error return, not a SIGPIPE that kills us. */
    signal(SIGPIPE, SIG_IGN);
    keep_freed_memory();
    if (el_ddb_global_init()) {
        cli_error("cannot initialise libcurl");
        return EXIT_FATAL;
    }
    int rc;
    if (strcmp(cmd, "load") == 0) {
        rc = cmd_load(argc - 2, argv + 2);
    } else if (strcmp(cmd, "plan") == 0) {
        rc = cmd_plan(argc - 2, argv + 2);
    } else if (strcmp(cmd, "verify") == 0) {
        rc = cmd_verify(argc - 2, argv + 2);
    } else if (strcmp(cmd, "counters") == 0) {
        rc = cmd_counters(argc - 2, argv + 2);
    } else if (strcmp(cmd, "create-table") == 0) {
        rc = cmd_create_table(argc - 2, argv + 2);
    } else {
        cli_error("unknown command '%s' (see 'edgeload --help')", cmd);
        rc = EXIT_USAGE;
    }
    el_ddb_global_cleanup();
    return rc;
}
