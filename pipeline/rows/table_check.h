/*
 * table_check.h - does a table, as DescribeTable describes it, fit what a
 * command will do with it under a mapping?
 *
 * Every command that touches a table asks this one function before its
 * first request, so load, verify, counters and load --incremental refuse a
 * wrong table the same way, and every refusal names the command that fixes
 * it. Pure: the description comes from the caller (dynamo/ddb_client.h
 * el_ddb_describe_table), the answer is a code and one message.
 */
#ifndef EL_TABLE_CHECK_H
#define EL_TABLE_CHECK_H

#include "common/error.h"
#include "dynamo/ddb_client.h"  /* el_table_desc */
#include "pipeline/rows/mapping.h"

/* What the command needs of the table. */
typedef enum el_table_need {
    /* PK and SK of the mapping's names, both strings: every item and
     * counter key is a rendered string */
    EL_TABLE_KEYS = 1,
    /* also the mapping's index with string keys, when any source writes
     * index attributes (a load, a delta) */
    EL_TABLE_INDEX_IF_WRITTEN = 2,
    /* also the mapping's index, whatever the sources say (verify --reverse
     * queries it) */
    EL_TABLE_INDEX = 4
} el_table_need;

/*
 * EL_OK when the table fits. Otherwise EL_ETABLE with diag saying what
 * differs and, when a new table would fix it, the command that creates one
 * ("edgeload create-table --table T --index-name GSI1 --endpoint-url E
 * --region R"; endpoint and region as the command uses them, may be NULL).
 * need is a set of el_table_need bits.
 */
el_err el_table_check(const el_table_desc *t, const el_mapping *m, unsigned need,
                      const char *endpoint, const char *region, el_diag *diag) EL_MUST_USE;

/* The create-table command line for the mapping (with or without its
 * index), NUL-terminated in out (truncated to cap). */
void el_table_create_hint(const el_mapping *m, const char *endpoint, const char *region,
                          char *out, size_t cap);

#endif
