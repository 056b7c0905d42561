/*
 * sql_strings.h - what a quoted literal means in each dump dialect
 * (internal to formats/).
 *
 * The same bytes are different values in different dialects, and the one
 * that matters most is the backslash:
 *
 *   mysql     '..' and ".." are strings with backslash escapes (\0 \b \n
 *             \r \t \Z; \% and \_ keep their backslash; any other byte
 *             stands for itself) and quote doubling; `..` is a name.
 *   postgres  '..' is a standard string: quote doubling only, backslash is
 *             an ordinary byte (standard_conforming_strings = on, the
 *             default since 9.1; a dump that says `SET
 *             standard_conforming_strings = off` gets E'' rules in '..');
 *             E'..' takes the escapes \b \f \n \r \t \v, octal, \xHH,
 *             \uXXXX and \UXXXXXXXX; $tag$..$tag$ takes none (the lexer's);
 *             ".." is a name; COPY text fields take E'' escapes but \u.
 *   sqlite    '..' with quote doubling only, backslash ordinary; "..",
 *             `..` and [..] are names; X'..' a blob; .dump writes line
 *             breaks as replace('..\n..','\n',char(10)) (sqlite_reader.c
 *             evaluates it) and newer shells unistr('\0041') (below).
 *
 * Each rule is here once: the lexer asks el_sql_quote_at what a quote
 * opens and el_sql_unescape what an escape stands for; the COPY reader
 * asks el_sql_unescape too. All functions are pure.
 */
#ifndef EL_SQL_STRINGS_H
#define EL_SQL_STRINGS_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint32_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/sql_token.h"  /* el_sql_dialect, el_sql_tok_kind */

typedef enum el_sql_escapes {
    EL_SQL_ESC_NONE = 0,  /* quote doubling only: backslash is an ordinary byte */
    EL_SQL_ESC_MYSQL,     /* MySQL/MariaDB backslash escapes */
    EL_SQL_ESC_PG,        /* PostgreSQL E'' escapes */
    EL_SQL_ESC_PG_COPY    /* PostgreSQL COPY text escapes (\N is the caller's) */
} el_sql_escapes;

/* What a quote opens. */
typedef struct el_sql_quote {
    el_sql_tok_kind kind;   /* EL_TOK_STRING or EL_TOK_QIDENT; EL_TOK_EOF: not a
                               quoted literal of this dialect */
    el_sql_escapes escapes;
    size_t prefix;          /* bytes before the quote character (E'', N'', B'') */
    int quote;              /* the quote character, which doubled stands for itself */
} el_sql_quote;

/* What the bytes c, c1 (the next two of the input, -1 past its end) open in
 * dialect; standard_strings is PostgreSQL's standard_conforming_strings. */
el_sql_quote el_sql_quote_at(el_sql_dialect dialect, int c, int c1, bool standard_strings);

/* The longest escape after its backslash: \UXXXXXXXX. */
#define EL_SQL_ESCAPE_MAX 9

/*
 * Decodes one escape: p[0..n) are the bytes after the backslash (at least
 * EL_SQL_ESCAPE_MAX of them unless the input ends sooner). Writes the bytes
 * it stands for to out (*outlen: 0 to 4) and returns how many bytes of p it
 * takes (1 or more; 0 when n is 0: the input ended after the backslash).
 * *invalid is set for a malformed \u or \U (too few hex digits, not a
 * Unicode scalar value): then what was taken is dropped. esc is not
 * EL_SQL_ESC_NONE.
 */
size_t el_sql_unescape(el_sql_escapes esc, const unsigned char *p, size_t n,
                       unsigned char out[4], size_t *outlen, bool *invalid);

/* UTF-8 of code point cp into out; returns its length, or 0 when cp is not
 * a Unicode scalar value (a surrogate, or above U+10FFFF). */
size_t el_sql_utf8(uint32_t cp, unsigned char out[4]);

/* Appends the UTF-8 encoding of code point cp to dst; EL_EPARSE when cp is
 * not a Unicode scalar value, else el_buf's errors. */
el_err el_sql_put_utf8(el_buf *dst, uint32_t cp) EL_MUST_USE;

/* sqlite's unistr(): in[0..n) with \XXXX, \uXXXX, \+XXXXXX, \UXXXXXXXX
 * and \\ decoded, appended to out. *bad is set (and decoding stops) for a
 * malformed escape; el_buf's errors are returned. */
el_err el_sql_sqlite_unistr(const char *in, size_t n, el_buf *out, bool *bad) EL_MUST_USE;

#endif
