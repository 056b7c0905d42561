/*
 * sql_lex.h - the SQL literal lexer shared by the mysql, postgres and sqlite
 * dump readers (which tool wrote a dump is formats/dialect.h's question).
 *
 * The lexer turns a dump into tokens one at a time, straight from an
 * el_input, holding only a fixed read block: strings, quoted identifiers,
 * hex/bit literals and numbers are decoded into a caller-given el_buf (so a
 * value lands directly in its column's buffer), comments and whitespace are
 * skipped, and the end of each statement is a token of its own. Where the
 * dialects disagree (backslash escapes, what "..." means, `#` comments,
 * nested comments, dollar quoting, E'' strings, DELIMITER) the dialect given
 * at creation decides (what a quote opens and what an escape stands for are
 * formats/sql_strings.h's rules, in one place):
 *
 *   mysql     '..' and ".." strings with backslash escapes and quote
 *             doubling; `..` identifiers; 0x.. / X'..' hex, 0b.. / b'..'
 *             bits; -- and # comments; conditional comments ("/" "*!40101
 *             ..." and MariaDB's "*M!") are skipped like any block comment
 *             (dumps put no rows in them); DELIMITER lines change the
 *             statement terminator (stored procedure bodies).
 *   postgres  '..' strings with doubling only; E'..' with backslash escapes;
 *             $tag$..$tag$ bodies; ".." identifiers; nested block comments;
 *             psql meta-command lines (\connect, \restrict) skipped.
 *   sqlite    '..' strings with doubling; "..", [..] and `..` identifiers;
 *             X'..' blobs.
 *
 * Value size: when a decoded token would not fit in its buffer (the buffer's
 * own cap), the lexer still consumes the whole token, stores what fitted and
 * sets tok.overflow, so the caller can reject the row and go on.
 *
 * Positions: line is 1-based, offset counts bytes of the decompressed
 * stream; tok.line/tok.offset are where the token starts.
 */
#ifndef EL_SQL_LEX_H
#define EL_SQL_LEX_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/input.h"
#include "formats/sql_token.h"  /* el_sql_dialect, el_sql_tok_kind */

/* The largest decoded value a dump reader accepts: one DynamoDB item. */
#define EL_SQL_VALUE_MAX ((size_t)400 * 1024)

typedef struct el_sql_tok {
    el_sql_tok_kind kind;
    char punct;       /* EL_TOK_PUNCT: the byte */
    bool overflow;    /* the decoded text did not fit in dst (rest dropped) */
    bool invalid;     /* malformed literal (bad hex digit, bit overflow, bad
                         \u escape): consumed to its end but unusable */
    uint64_t line;    /* where the token starts */
    uint64_t offset;
} el_sql_tok;

typedef struct el_sql_lex el_sql_lex;

/* Creates a lexer reading `in` (not owned: it must outlive the lexer).
 * EL_ENOMEM on failure, *out NULL. Free with el_sql_lex_free (NULL ok). */
el_err el_sql_lex_new(el_input *in, el_sql_dialect dialect, el_sql_lex **out) EL_MUST_USE;
void el_sql_lex_free(el_sql_lex *lex);

/*
 * Reads the next token. Its text (for the kinds that have one) is appended
 * to dst; dst may be NULL to discard it (skipping a statement). Returns
 * EL_OK, EL_ETRUNCATED when the input ends inside a string, identifier or
 * comment (diag names where it started), EL_EPARSE for a malformed literal
 * (bad hex digit), or the input's own error (EL_EIO, EL_ETRUNCATED).
 */
el_err el_sql_lex_next(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_diag *diag) EL_MUST_USE;

/* Consumes tokens, storing nothing, up to and including the end of the
 * current statement (or EOF). *saw_eof tells which. */
el_err el_sql_lex_skip_statement(el_sql_lex *lex, bool *saw_eof, el_diag *diag) EL_MUST_USE;

/*
 * Raw byte access for line formats embedded in a dump (COPY ... FROM stdin).
 * getc consumes one byte; peekc looks at the byte `ahead` positions on
 * (0..15) without consuming. Both give -1 at the end of input; an input error
 * is returned as well (then *c is -1).
 */
el_err el_sql_lex_getc(el_sql_lex *lex, int *c, el_diag *diag) EL_MUST_USE;
el_err el_sql_lex_peekc(el_sql_lex *lex, size_t ahead, int *c, el_diag *diag) EL_MUST_USE;

/* Consumes bytes up to (not including) the first byte that is in `stops`
 * (or the end of input), appending them to dst (NULL: discard). When dst's
 * cap is reached *overflow is set and the rest of the run is dropped.
 * Newlines consumed here are counted like any other. */
el_err el_sql_lex_take_until(el_sql_lex *lex, const char *stops, el_buf *dst, bool *overflow,
                             el_diag *diag) EL_MUST_USE;

/* postgres: `SET standard_conforming_strings = off` (old pg_dump output)
 * makes plain '..' strings take backslash escapes like E'..'. On by default. */
void el_sql_lex_set_standard_strings(el_sql_lex *lex, bool on);

/* Current position: the line of the next byte (1-based) and its offset. */
uint64_t el_sql_lex_line(const el_sql_lex *lex);
uint64_t el_sql_lex_offset(const el_sql_lex *lex);

/* True when a dump-tool header comment ("-- MySQL dump", "-- MariaDB dump",
 * "-- PostgreSQL database dump") was seen, and when its matching trailer
 * ("-- Dump completed", "-- PostgreSQL database dump complete") was: a dump
 * with a header and no trailer was cut short. */
bool el_sql_lex_saw_header(const el_sql_lex *lex);
bool el_sql_lex_saw_trailer(const el_sql_lex *lex);

/* The first construct of another dialect the lexer met, or NULL: a MySQL
 * conditional comment in place of a statement (postgres, sqlite), a
 * backtick-quoted name (postgres). *line is where it is. The text (its first
 * bytes) stays valid for the lexer's lifetime. The readers stop there
 * (formats/dialect.h: the guard). */
const char *el_sql_lex_foreign(const el_sql_lex *lex, uint64_t *line);

/* Case-insensitive comparison of a NUL-terminated word with a keyword. */
bool el_sql_word_is(const char *word, const char *keyword);

#endif
