/*
 * dialect.h - which tool wrote a SQL dump, and which statements each tool
 * can have written (internal to formats/).
 *
 * One table says, for the statements whose first words belong to some
 * dialects only (PRAGMA: sqlite; COPY, SET standard_conforming_strings,
 * SELECT pg_catalog.set_config, psql's \restrict: PostgreSQL; LOCK TABLES,
 * USE, conditional comments: MySQL/MariaDB; SET: not sqlite; ...), which
 * dialects they fit. Two users read it, so they can never disagree:
 *
 *   el_sql_sniff      `--format auto`: decides the dialect from the dump's
 *                     preamble, the header comment and the statements a
 *                     tool writes before its first INSERT or COPY, never
 *                     from the bytes after it (the rows are data, and data
 *                     may hold any tool's markers);
 *   el_sql_dialects_of  the readers' guard: a statement outside the chosen
 *                     dialect stops the read (sql_dump.c), instead of its
 *                     rows being rejected one by one or, worse, decoded by
 *                     the wrong string rules.
 */
#ifndef EL_DIALECT_H
#define EL_DIALECT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "formats/format.h"  /* el_format */

/* Sets of dialects: one bit per el_format of a dump. */
#define EL_DIALECT_MYSQL (1u << EL_FMT_MYSQL)
#define EL_DIALECT_POSTGRES (1u << EL_FMT_POSTGRES)
#define EL_DIALECT_SQLITE (1u << EL_FMT_SQLITE)
#define EL_DIALECT_ALL (EL_DIALECT_MYSQL | EL_DIALECT_POSTGRES | EL_DIALECT_SQLITE)

/*
 * The dialects whose dump tools can have written a statement that starts
 * with the words w1 w2 (w2 "" when there is none; case does not matter;
 * for SET, w2 is the variable, after any SESSION/LOCAL/GLOBAL; "@" for a
 * MySQL user variable). *tool is set when the statement is one that a dump
 * tool writes in its preamble and nobody else would (sqlite3's PRAGMA,
 * pg_dump's SET standard_conforming_strings): it names the tool outright.
 * Statements every dialect has give EL_DIALECT_ALL.
 */
unsigned el_sql_dialects_of(const char *w1, const char *w2, bool *tool);

/* The tool(s) of a dump format, for messages: "mysqldump/mariadb-dump",
 * "pg_dump", "sqlite3 .dump". */
const char *el_sql_tool_name(el_format f);

/* "mysql, postgres or sqlite" for a set of dialects, into out (n bytes). */
void el_sql_dialect_list(unsigned set, const char *conj, char *out, size_t n);

typedef struct el_sniff {
    /* EL_FMT_MYSQL, _POSTGRES or _SQLITE: decided. EL_FMT_AUTO: not a
     * dump (the caller tries CSV), or, with `ambiguous`, a dump whose
     * preamble does not tell its dialect. */
    el_format format;
    bool ambiguous;
    unsigned candidates;  /* ambiguous: the dialects the preamble fits (0: none,
                             its statements contradict each other) */
    uint64_t line;        /* where the deciding evidence is (1-based); ambiguous:
                             where the preamble's reading stopped */
    char evidence[80];    /* that evidence as written, e.g. "-- PostgreSQL database dump";
                             for a contradiction, the second piece */
    uint64_t line2;       /* a contradiction: where the first piece is */
    char evidence2[80];
} el_sniff;

/*
 * Decides from head[0..n), the first decompressed bytes of an input,
 * whether it is a mysqldump/mariadb-dump, pg_dump or sqlite3 .dump script,
 * reading its preamble only:
 *   1. a tool's own mark decides at once, the first one met: the header
 *      comments ("-- MySQL dump", "-- MariaDB dump", "-- PostgreSQL
 *      database dump", "-- Dumped by pg_dump"), MySQL's conditional comments
 *      ("/" "*!40101 ...", MariaDB's "*M!"), psql meta-commands (\restrict,
 *      \connect), and the statements el_sql_dialects_of marks as a tool's;
 *   2. else the syntax of the statements decides: each statement and token
 *      that only some dialects have (backtick identifiers, sqlite's
 *      [bracket] names, ENGINE=, '::' casts, "public." names, E'' strings, dollar quotes, SET, ...) narrows
 *      the candidates; one left decides, none or several is `ambiguous`;
 *   3. reading stops at the first INSERT/REPLACE/COPY: its header (table
 *      name, column list) still counts, its values never do. It also stops
 *      at a string whose end depends on the dialect (an odd run of
 *      backslashes before a quote), and at the end of head.
 * Text that is not SQL (no tool mark, and the first word not a statement
 * keyword) gives EL_FMT_AUTO, not ambiguous. Pure: reads head[0..n) only;
 * 64 KB of head is plenty.
 */
void el_sql_sniff(const unsigned char *head, size_t n, el_sniff *out);

#endif
