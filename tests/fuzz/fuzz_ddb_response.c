/*
 * fuzz_ddb_response.c - libFuzzer target for what DynamoDB sends back: the
 * error classifier (el_ddb_classify over a few statuses), the error field
 * extractor, BatchWriteItem responses (el_ddb_parse_batch_write, with and
 * without a sort key) and DescribeTable/CreateTable responses
 * (el_ddb_parse_table_desc). The body is not NUL-terminated on purpose.
 * Where the all-done scan of a BatchWriteItem answer says yes, the yajl
 * tree parse must give the same result (no unprocessed item, the same
 * capacity total, bit for bit).
 * Corpus: tests/fuzz/corpus/fuzz_ddb_response/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynamo/ddb_client.h"
#include "dynamo/ddb_errors.h"    /* el_ddb_classify, el_ddb_error_fields */
#include "dynamo/ddb_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size heap copy so ASan sees any read past len */
    char *body = malloc(size ? size : 1);
    if (!body)
        return 0;
    if (size)
        memcpy(body, data, size);
    static const long statuses[] = { 200, 400, 403, 429, 500, 503 };
    el_ddb_result res;
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        el_ddb_classify(CURLE_OK, statuses[i], body, size, &res);
        if (strnlen(res.error_type, sizeof res.error_type) == sizeof res.error_type ||
            strnlen(res.message, sizeof res.message) == sizeof res.message)
            abort();
    }
    el_ddb_classify(CURLE_PARTIAL_FILE, 200, body, size, &res);
    char type[64], msg[128];
    el_ddb_error_fields(body, size, type, sizeof type, msg, sizeof msg);
    el_diag d;
    el_diag_clear(&d);
    el_ddb_batch_result br = {0};
    if (el_ddb_parse_batch_write(body, size, "PK", "SK", &br, &d) == EL_OK) {
        for (size_t i = 0; i < br.nunprocessed; i++)
            if (!br.unprocessed[i].pk)
                abort();
    }
    el_ddb_batch_result_clear(&br);
    /* the all-done scan may only say yes where the tree parse agrees: no
     * unprocessed item and the very same capacity total */
    double wcu = -1;
    if (el_ddb_batch_write_all_done(body, size, &wcu)) {
        if (el_ddb_parse_batch_write_tree(body, size, "PK", "SK", &br, &d) != EL_OK ||
            br.nunprocessed != 0 || memcmp(&br.consumed_wcu, &wcu, sizeof wcu) != 0)
            abort();
        el_ddb_batch_result_clear(&br);
    }
    if (el_ddb_parse_batch_write(body, size, "id", NULL, &br, &d) == EL_OK)
        el_ddb_batch_result_clear(&br);
    el_table_desc td;
    if (el_ddb_parse_table_desc(body, size, &td, &d) == EL_OK && td.ngsi > EL_DDB_MAX_GSI)
        abort();
    free(body);
    return 0;
}
