/*
 * sql_keywords.h - each SQL dialect's key words, as its own server has
 * them (internal to formats/).
 *
 * What matters to a dump reader is which words a dialect reserves: a word
 * it reserves cannot name a column unless quoted, so its dump tool quotes
 * it, and where such a word stands unquoted it is grammar (PRIMARY KEY,
 * CHECK (...)); a word it does not reserve (PostgreSQL's KEY, sqlite's
 * KEY, MariaDB's PERIOD) may be a column's bare name. The tables are
 * generated from the servers themselves (tests/fixtures/ddl/).
 */
#ifndef EL_SQL_KEYWORDS_H
#define EL_SQL_KEYWORDS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "formats/sql_lex.h"  /* el_sql_dialect */

/* A key word's class. PostgreSQL has four (its pg_get_keywords() catcode:
 * U, C, T, R); MySQL/MariaDB and sqlite two (reserved or not). */
typedef enum el_sql_kwclass {
    EL_KW_NONE = 0,      /* not a key word */
    EL_KW_UNRESERVED,    /* may name a column unquoted */
    EL_KW_COLNAME,       /* PostgreSQL: may name a column, not a function or type */
    EL_KW_TYPEFUNC,      /* PostgreSQL: may name a function or type, not a column */
    EL_KW_RESERVED       /* may name nothing unquoted */
} el_sql_kwclass;

typedef struct el_sql_keyword {
    const char *word;    /* lower case */
    el_sql_kwclass cls;
} el_sql_keyword;

/* The class of w (any case) in a dialect; EL_KW_NONE when it is no key word. */
el_sql_kwclass el_sql_keyword_class(el_sql_dialect dialect, const char *w);

/* Can w (any case) not name a column unquoted in this dialect? PostgreSQL:
 * reserved and type/function-name key words (its column names are
 * "ColId": identifiers, unreserved and column-name key words). */
bool el_sql_keyword_reserved(el_sql_dialect dialect, const char *w);

/* The whole table of a dialect, sorted by word (for tests). */
const el_sql_keyword *el_sql_keywords(el_sql_dialect dialect, size_t *n);

#endif
