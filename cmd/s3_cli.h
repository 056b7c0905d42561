/*
 * s3_cli.h - S3 in the subcommands: --endpoint-url-s3, s3:// inputs (a key,
 * or a prefix ending in '/' expanded into its objects in key order),
 * --output s3://bucket/prefix/, and the `aws dynamodb import-table` command
 * printed after an --output run.
 *
 * The client is made only when something names s3://, with the same
 * credential chain as DynamoDB (--profile, --region, environment, files).
 */
#ifndef EL_S3_CLI_H
#define EL_S3_CLI_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdio.h>    /* FILE */

#include "aws/aws_config.h"
#include "formats/reader.h"
#include "pipeline/output/file_sink.h"
#include "pipeline/rows/mapping.h"
#include "s3/s3.h"
#include "s3/s3_store.h"

typedef struct cli_s3 {
    const char *endpoint;      /* --endpoint-url-s3, borrowed from argv */
    el_aws_config *cfg;
    el_s3 *s3;
    el_input_opener opener;
    char **owned;              /* expanded input URLs */
    size_t nowned;
    const char **inputs;       /* the expanded input list (strings borrowed or owned) */
    el_s3_store *store;
} cli_s3;

/*
 * When an input (a positional one, or with none a source's mapped "input")
 * is s3://, makes the client, expands every prefix into its objects and
 * points ro->opener at the client. *inputs and *ninputs may be replaced by the
 * expanded list (owned by c). A prefix needs a single-source mapping (each
 * object is one input of that source). Prints the error and returns false
 * (with *rc set) on failure.
 */
bool cli_s3_inputs(cli_s3 *c, const el_aws_opts *aws, el_mapping *m, const char ***inputs,
                   size_t *ninputs, el_reader_opts *ro, int *rc);

/* For --output s3://...: makes the client and the store; *store is valid
 * while c lives. Prints and returns false on failure. */
bool cli_s3_output(cli_s3 *c, const el_aws_opts *aws, const char *url,
                   const el_object_store **store, int *rc);

/*
 * Prints the `aws dynamodb import-table` command that creates a new table
 * from the parts of an --output run: S3BucketSource (bucket and the prefix
 * of data/), DYNAMODB_JSON, ZSTD, and TableCreationParameters with the
 * mapping's keys, the index (when any source writes it) and
 * PAY_PER_REQUEST. For a local DIR the bucket is a placeholder and the
 * command follows "after uploading DIR to s3://BUCKET/PREFIX/".
 */
void cli_s3_print_import(FILE *f, const el_mapping *m, const char *output, const char *region);

void cli_s3_free(cli_s3 *c);

#endif
