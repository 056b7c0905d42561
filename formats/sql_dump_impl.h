/*
 * sql_dump_impl.h - the dump reader's context, shared by its two halves
 * only: sql_dump.c (the statement walk: which statements carry the selected
 * table's rows, their schema, the guard) and sql_values.c (a statement's
 * values to the row's column buffers). Nothing else includes it; the rest
 * of formats/ goes through sql_dump.h. It does not include sql_dump.h,
 * so that sql_dump.c depends on it and not the other way round.
 */
#ifndef EL_SQL_DUMP_IMPL_H
#define EL_SQL_DUMP_IMPL_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* SIZE_MAX */

#include "common/buf.h"
#include "common/error.h"
#include "formats/input.h"     /* el_input */
#include "formats/reader.h"    /* el_schema, el_row, el_value */
#include "formats/sql_ddl.h"   /* el_sql_catalog */
#include "formats/sql_lex.h"   /* el_sql_lex, el_sql_dialect */

/* The reader's handle, as sql_dump.h names it (the same typedef: this
 * header is below sql_dump.h, which it does not include). */
typedef struct el_sql_dump el_sql_dump;

#define NO_COL SIZE_MAX        /* a statement value that goes to no column */

/* IDLE: between statements; VALUES: inside the selected table's INSERT
 * (one tuple per next()); COPY: inside its COPY block (one line); EOF. */
enum el_sql_dump_state { ST_IDLE, ST_VALUES, ST_COPY, ST_EOF };

struct el_sql_dump {
    el_sql_dialect dialect;
    el_input *in;
    el_sql_lex *lex;
    char *want_schema, *want_name;  /* opts->source_table, split; NULL: auto */
    char **given_cols;              /* opts->columns, copied: names for rows */
    size_t ngiven;                  /* of a table the dump never declares */

    el_sql_catalog *cat;            /* every CREATE TABLE, the tables with rows */

    bool selected;
    char *sel_schema, *sel_name;
    el_schema schema;
    bool *bitcol;                   /* mysql BIT(n) columns */

    enum el_sql_dump_state state;
    size_t *map;                    /* statement value i -> schema column */
    size_t nmap;

    el_buf *vals;                   /* one per schema column */
    bool *null;
    el_value *values;
    el_buf word, word2, scratch;
    bool txn_open;                  /* BEGIN without COMMIT (sqlite) */
    char why[160];                  /* how the dialect was chosen ("": --format) */
};

/* The next tuple of the current INSERT as a row (state VALUES; IDLE once the
 * statement ends). EL_OK, EL_EREJECT (row holds what was read; a broken
 * statement is skipped to its end), or a fatal error. */
el_err el_sql_dump_next_tuple(el_sql_dump *d, el_row *row, el_diag *diag) EL_MUST_USE;

/* The next line of the current COPY block as a row; *end at its "\." line.
 * Returns as el_sql_dump_next_tuple. */
el_err el_sql_dump_next_copy_line(el_sql_dump *d, el_row *row, bool *end,
                                  el_diag *diag) EL_MUST_USE;

#endif
