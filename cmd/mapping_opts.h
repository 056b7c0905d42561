/*
 * mapping_opts.h - the options that say what each row becomes and how the
 * inputs are read, shared by every command that reads inputs (load, verify):
 * --mapping or the single-source flags, and the CSV options.
 *
 * The runner parses the flags into a mapping_args (cmd/options.c); a
 * command calls build_mapping() once parsing is done.
 */
#ifndef EL_MAPPING_OPTS_H
#define EL_MAPPING_OPTS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "formats/reader.h"
#include "pipeline/rows/mapping.h"

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

/* Frees --columns (before it is given again). */
void mapping_args_free_columns(mapping_args *a);

#endif
