/*
 * mapping_opts.h - the options that say what each row becomes and how the
 * inputs are read, shared by every command that reads inputs (load, verify):
 * --mapping or the single-source flags, and the CSV options.
 *
 * A command lists CLI_MAPPING_OPTS in its option table, numbers its own
 * options from MAPPING_OPT_END, collects the flags into a mapping_args
 * (mapping_opt() does that for it) and calls build_mapping() once parsing
 * is done.
 */
#ifndef EL_MAPPING_OPTS_H
#define EL_MAPPING_OPTS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "formats/reader.h"
#include "pipeline/mapping.h"

/* Option ids of the shared options; a command's own ids start at MAPPING_OPT_END. */
enum {
    O_HELP = 1, O_MAPPING, O_TABLE, O_PK, O_SK, O_INDEX_PK, O_INDEX_SK, O_NO_INDEX,
    O_INDEX_NAME, O_ATTR, O_CONST, O_SOURCE_TABLE, O_FORMAT, O_DELIMITER, O_NULL, O_COLUMNS,
    O_ALL_ATTRS, O_HOT_THRESHOLD, O_MAX_SHARDS, O_COUNTER, O_ESCAPE,
    MAPPING_OPT_END
};

#define CLI_MAPPING_OPTS                                   \
    { "help", false, O_HELP },                             \
    { "mapping", true, O_MAPPING },                        \
    { "table", true, O_TABLE },                            \
    { "pk", true, O_PK },                                  \
    { "sk", true, O_SK },                                  \
    { "index-pk", true, O_INDEX_PK },                      \
    { "index-sk", true, O_INDEX_SK },                      \
    { "no-index", false, O_NO_INDEX },                     \
    { "index-name", true, O_INDEX_NAME },                  \
    { "attr", true, O_ATTR },                              \
    { "const", true, O_CONST },                            \
    { "all-columns", false, O_ALL_ATTRS },                 \
    { "source-table", true, O_SOURCE_TABLE },              \
    { "format", true, O_FORMAT },                          \
    { "delimiter", true, O_DELIMITER },                    \
    { "null", true, O_NULL },                              \
    { "escape", true, O_ESCAPE },                          \
    { "columns", true, O_COLUMNS },                        \
    { "hot-threshold", true, O_HOT_THRESHOLD },            \
    { "max-shards", true, O_MAX_SHARDS },                  \
    { "counter", true, O_COUNTER }

/* The mapping flags as given; strings borrowed from argv unless noted.
 * mapping_args_init() allocates the arrays, mapping_args_free() frees what
 * the struct owns. */
typedef struct mapping_args {
    const char *mapping_path, *table, *index_name, *source_table;
    const char *keys[4];       /* pk, sk, index_pk, index_sk */
    bool no_index, all_columns, any_flag;
    const char **inputs;       /* positional arguments (array owned, room for argc) */
    size_t ninputs;
    char **attr_specs;         /* --attr/--const/--counter in order, owned (room for argc) */
    size_t nattr;
    char **columns;            /* --columns, owned: free with mapping_args_free_columns */
    size_t ncolumns;
    long hot_threshold;        /* --hot-threshold: every indexed source; 0 = as mapped */
    long max_shards;           /* --max-shards: likewise */
} mapping_args;

/* Zeroes a and allocates room for argc inputs and argc attribute specs.
 * Returns false when out of memory (a is then safe to mapping_args_free). */
bool mapping_args_init(mapping_args *a, int argc);

/* Frees what a owns (inputs array, attribute specs, --columns); a stays safe
 * to free again. */
void mapping_args_free(mapping_args *a);

/*
 * Builds the mapping from --mapping and/or the single-source flags, then
 * applies --hot-threshold/--max-shards to every source that writes the index.
 * a->attr_specs[i] is 'a' (--attr), 'c' (--const) or 'k' (--counter
 * PK_TEMPLATE,SK_TEMPLATE,ATTRIBUTE) followed by the option's text, in
 * command-line order. Prints the error and returns NULL with *rc
 * the exit status (2 usage, 1 out of memory); else *rc is 0 and the caller
 * owns the mapping (el_mapping_free).
 */
el_mapping *build_mapping(const mapping_args *a, int *rc);

/* Splits "a,b,c" into a NULL-terminated list of *n owned strings; NULL when
 * out of memory. */
char **split_columns(const char *s, size_t *n);

/*
 * Handles one shared option: fills a and the reader options ro (--attr,
 * --const and --counter go to a->attr_specs). Returns 1 when handled, 0 when id is not a shared option (O_HELP is
 * left to the command), -1 on a usage error (printed: exit 2) and -2 when
 * out of memory (exit 1).
 */
int mapping_opt(mapping_args *a, el_reader_opts *ro, int id, const char *arg);

#endif
