/*
 * sql_dump.h - the statement layer shared by the mysql, postgres and sqlite
 * dump readers (internal to formats/).
 *
 * el_sql_dump walks a dump statement by statement on top of el_sql_lex: it
 * remembers each CREATE TABLE (names and declared types: sql_ddl.h), skips every
 * statement that carries no rows, and turns the tuples of the selected
 * table's INSERTs (and, for postgres, its COPY blocks) into el_rows. The
 * dialect files add what only their dialect has, through the functions
 * declared at the end of this header:
 *   mysql_reader.c     BIT column values to decimal text;
 *   postgres_reader.c  COPY text rows, bytea decoding;
 *   sqlite_reader.c    replace()/char()/unistr() values, REAL canonical text.
 *
 * Table selection (opts->source_table): "name" matches a table of that name
 * in any schema, "schema.name" only that one or an unqualified table of
 * that name (mysqldump does not qualify; the database is the schema);
 * exact match first, then case-insensitively. Without it the first table whose rows appear is
 * read; when rows of a second table appear later, next() fails with
 * EL_EUSAGE naming every table seen so far (rows of the first were already
 * yielded: pass source_table, or run a counting pass first, to fail before
 * loading anything). sqlite's internal tables (sqlite_sequence,
 * sqlite_stat1) are only read when asked for by name. A table never seen by the end of the dump is an
 * EL_EUSAGE error from open listing the tables the dump holds.
 *
 * Schema: the CREATE TABLE's columns, in its order (a statement's column
 * list is mapped onto them by name; columns it leaves out are NULL); when
 * the dump has no CREATE TABLE for the table, the first data statement's
 * column list (types unknown: TEXT), else opts->columns (a data-only dump
 * without column lists), else an EL_EUSAGE error saying how to fix it.
 * sql_types[i] is the declared type text ("tinyint(1)", "numeric(20,6)",
 * "timestamp with time zone"), or NULL when the dump never declared it.
 *
 * Limits: each value at most EL_SQL_VALUE_MAX bytes once decoded (larger:
 * the row is rejected naming the column, reading goes on); memory is one
 * row of column buffers plus the lexer's block, whatever the statement size.
 */
#ifndef EL_SQL_DUMP_H
#define EL_SQL_DUMP_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/reader.h"
#include "formats/sql_ddl.h"  /* el_sql_coltype, the catalog of CREATE TABLEs */
#include "formats/sql_lex.h"

typedef struct el_sql_dump el_sql_dump;

/* The common open behind el_{mysql,postgres,sqlite}_reader_open: reads ahead
 * to the selected table's first data statement. Takes ownership of `in` on
 * success only. */
el_err el_sql_dump_open(el_input *in, el_sql_dialect dialect, const el_reader_opts *opts,
                        const el_reader_ops **ops, void **self, el_diag *diag) EL_MUST_USE;

/* Table-name comparisons made so far remembering CREATE TABLEs and the
 * tables with data (hash indexes: about one per statement, whatever the
 * number of tables). For tests of that cost. */
uint64_t el_sql_dump_name_compares(const el_sql_dump *d);


/* ---- dialect hooks (implemented in the dialect files) ---- */

/* What a value's literal was, for the per-column conversions. */
typedef struct el_sql_val {
    el_sql_tok_kind kind; /* STRING, NUMBER, HEX, BITS, WORD (TRUE, ...) */
    bool is_null;
    bool overflow;        /* larger than the column buffer */
    bool invalid;         /* malformed literal */
} el_sql_val;

/* Parses one value expression of a VALUES tuple into dst (reset first) and
 * reads the token after it into *after. depth bounds nesting (function
 * arguments). Used by the sqlite evaluator for its arguments. Returns EL_OK,
 * EL_EPARSE for a syntax error inside the tuple (diag set; the caller skips
 * the statement), or a fatal lexer error. */
el_err el_sql_dump_value(el_sql_dump *d, el_buf *dst, el_sql_val *v, el_sql_tok *after,
                         int depth, el_diag *diag) EL_MUST_USE;

/* The dump's lexer, for dialect hooks that read tokens themselves. */
el_sql_lex *el_sql_dump_lex(el_sql_dump *d);

/* mysql: a BIT(n) column's value (raw bytes, big-endian) to decimal text in
 * place; EL_EPARSE when longer than 8 bytes. */
el_err el_sql_mysql_bits_to_decimal(el_buf *v) EL_MUST_USE;

/* postgres: decodes bytea text (hex "\x..." or the escape format) in place;
 * EL_EPARSE when malformed. */
el_err el_sql_pg_bytea_decode(el_buf *v) EL_MUST_USE;

/*
 * postgres: reads one line of a COPY ... FROM stdin block (text format).
 * Field i goes to cols[map[i]] (map[i] == SIZE_MAX or i >= nmap: dropped);
 * null[map[i]] is set for \N. *end is set (nothing else) at the "\." line.
 * *nfields counts the fields of the line; *overflow_field is the index of the
 * first field that did not fit (SIZE_MAX: none). EL_ETRUNCATED when the
 * input ends before "\.".
 */
el_err el_sql_pg_copy_row(el_sql_lex *lex, el_buf *cols, bool *null, const size_t *map,
                          size_t nmap, size_t *nfields, size_t *overflow_field, bool *end,
                          el_diag *diag) EL_MUST_USE;

/* postgres: true when the COPY block that starts here is empty ("\." next). */
el_err el_sql_pg_copy_is_empty(el_sql_lex *lex, bool *empty, el_diag *diag) EL_MUST_USE;

/* postgres: consumes the rest of a COPY block, up to and including "\.";
 * *rows counts its lines. EL_ETRUNCATED when "\." never comes. */
el_err el_sql_pg_copy_skip(el_sql_lex *lex, uint64_t *rows, el_diag *diag) EL_MUST_USE;

/* sqlite: evaluates fname(args...) -- replace, char, unistr -- whose name
 * was just read; the next token must be '('. The result goes to dst. */
el_err el_sql_sqlite_call(el_sql_dump *d, const char *fname, el_buf *dst, el_sql_val *v,
                          int depth, el_diag *diag) EL_MUST_USE;

/* sqlite: true when fname is one of the functions .dump writes. */
bool el_sql_sqlite_is_function(const char *fname);

/* sqlite: rewrites a REAL literal written with more digits than a double
 * holds ("1.0000000000000000047e+300") as the shortest text that reads back
 * as the same double ("1e+300"); integers and short literals are kept. */
void el_sql_sqlite_real(el_buf *v);

#endif
