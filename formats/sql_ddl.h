/*
 * sql_ddl.h - the tables a SQL dump declares (internal to formats/).
 *
 * An el_sql_catalog remembers every CREATE TABLE of a dump as the reader
 * walks it (names and declared type texts of the columns), and which
 * tables had rows, so that the statement walk (sql_dump.c) can give a
 * table's rows their schema and name what a dump holds in its messages.
 * Also here: the column-type rule of `auto` typing per dialect, and the
 * few token helpers that CREATE TABLE and the data statements share
 * (qualified names, "expected X" errors).
 *
 * Limits: EL_SQL_MAX_TABLES CREATE TABLEs remembered (later ones are not,
 * and their rows get no types), EL_SQL_MAX_COLS columns a table (a wider
 * table is marked too_wide), identifiers and type texts EL_SQL_NAME_MAX
 * bytes (longer type texts are cut).
 */
#ifndef EL_SQL_DDL_H
#define EL_SQL_DDL_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/reader.h"   /* el_coltype */
#include "formats/sql_lex.h"  /* el_sql_lex, el_sql_tok, el_sql_dialect */

#define EL_SQL_NAME_MAX 1024      /* identifiers, type texts */
#define EL_SQL_MAX_TABLES 100000  /* CREATE TABLEs remembered */
#define EL_SQL_MAX_COLS 4096      /* columns of one table */

/* One CREATE TABLE. Owned by its catalog; read-only for everyone else. */
typedef struct el_sql_table {
    char *schema;   /* NULL when unqualified */
    char *name;
    size_t ncols;
    char **cols;    /* column names, as declared */
    char **types;   /* declared type text per column ("tinyint(1)"), NULL: none */
    bool too_wide;  /* declared more than EL_SQL_MAX_COLS columns (the rest dropped) */
    uint64_t line;  /* where its CREATE TABLE is in the dump (1-based) */
} el_sql_table;

typedef struct el_sql_catalog el_sql_catalog;

/* An empty catalog, or NULL when out of memory. Free with
 * el_sql_catalog_free (NULL ok). */
el_sql_catalog *el_sql_catalog_new(void);
void el_sql_catalog_free(el_sql_catalog *c);

/*
 * Reads a CREATE TABLE whose "CREATE [...] TABLE" was just read, to the end
 * of its statement, and remembers it (a table declared again replaces its
 * earlier definition, as the server would have). Statements that declare
 * no column list (CREATE TABLE .. AS SELECT, LIKE, PARTITION OF) are
 * skipped; a malformed column list forgets that table. word and word2 are
 * the caller's scratch buffers (EL_SQL_NAME_MAX). Returns EL_OK, the
 * lexer's errors, or EL_ETRUNCATED when the dump ends inside it.
 */
el_err el_sql_create_table(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                           el_buf *word, el_buf *word2, el_diag *diag) EL_MUST_USE;

/* The CREATE TABLE of (schema, name): exact names first, then case-folded
 * (an unquoted name in one statement, a quoted one in another); a NULL
 * schema, or an unqualified table, matches any schema. NULL: none. */
const el_sql_table *el_sql_catalog_find(const el_sql_catalog *c, const char *schema,
                                        const char *name);

/* The tables remembered, in declaration order. */
size_t el_sql_catalog_size(const el_sql_catalog *c);
const el_sql_table *el_sql_catalog_table(const el_sql_catalog *c, size_t i);

/* Rows of (schema, name) were seen. EL_ENOMEM on failure. */
el_err el_sql_catalog_note_rows(el_sql_catalog *c, const char *schema,
                                const char *name) EL_MUST_USE;

/* "a, b, app.c" of every table declared or with rows, into out (n bytes),
 * for usage errors; cut at n. */
void el_sql_catalog_list(const el_sql_catalog *c, char *out, size_t n);

/* Name comparisons made by the catalog's hash indexes so far (for tests
 * of the cost: about one per statement, whatever the number of tables). */
uint64_t el_sql_catalog_compares(const el_sql_catalog *c);

/* el_coltype for a declared type in a dialect (NULL or "" gives TEXT).
 * docs/types.md has the table; keep the two in step. */
el_coltype el_sql_coltype(el_sql_dialect dialect, const char *sql_type);

/*
 * Reads a PostgreSQL CREATE DOMAIN whose "CREATE DOMAIN" was just read, to
 * the end of its statement, and remembers its base type's text ("integer",
 * "public.year"). Returns as el_sql_create_table.
 */
el_err el_sql_create_domain(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                            el_buf *word, el_buf *word2, el_diag *diag) EL_MUST_USE;

/*
 * Reads a PostgreSQL CREATE TYPE whose "CREATE TYPE" was just read, to the
 * end of its statement, and remembers the name: an enum, composite or range
 * value is written as text, whatever its labels. Returns as
 * el_sql_create_table.
 */
el_err el_sql_create_type(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                          el_buf *word, el_buf *word2, el_diag *diag) EL_MUST_USE;

/*
 * el_sql_coltype of a declared type, with the dump's own types resolved as
 * the database has them: a domain is its base type (a domain over a domain
 * too, to any depth; schema-qualified or not), a CREATE TYPE type (enum,
 * composite, range) is TEXT.
 */
el_coltype el_sql_catalog_coltype(const el_sql_catalog *c, el_sql_dialect dialect,
                                  const char *sql_type);

/* ---- token helpers shared by CREATE TABLE and the data statements ---- */

/* el_sql_lex_next into dst (reset first; dst NULL: text discarded). */
el_err el_sql_next(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_diag *diag) EL_MUST_USE;

/* The error for a token where `what` belongs: EL_ETRUNCATED at the end of
 * input, else EL_EPARSE; diag names both. */
el_err el_sql_expected(const el_sql_tok *tok, const char *what, el_diag *diag);

/* Can tok be a name? (MySQL and sqlite accept a string there.) */
bool el_sql_is_name(el_sql_dialect dialect, const el_sql_tok *tok);

/*
 * Reads a possibly qualified name whose first part is the current token
 * (its text in word). On return *schema and *name are malloc'd, the
 * caller's to free (schema NULL when unqualified; a three-part name keeps
 * its last two), and *tok is the token that follows (its text in word).
 * On failure both are NULL.
 */
el_err el_sql_qualified_name(el_sql_lex *lex, el_sql_dialect dialect, el_buf *word,
                             el_sql_tok *tok, char **schema, char **name,
                             el_diag *diag) EL_MUST_USE;

/* A malloc'd copy of s (C11 has no strdup), or NULL. */
char *el_sql_strdup(const char *s);

#endif
