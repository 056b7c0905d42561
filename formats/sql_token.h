/*
 * sql_token.h - the SQL dialects of a dump and the kinds of token the
 * lexer (sql_lex.h) hands out. A header of its own so that the string
 * rules (sql_strings.h), which the lexer calls, need not include the
 * lexer.
 */
#ifndef EL_SQL_TOKEN_H
#define EL_SQL_TOKEN_H

typedef enum el_sql_dialect {
    EL_SQL_MYSQL = 0,
    EL_SQL_POSTGRES,
    EL_SQL_SQLITE
} el_sql_dialect;

typedef enum el_sql_tok_kind {
    EL_TOK_EOF = 0, /* end of input between statements */
    EL_TOK_END,     /* statement terminator (';' or the DELIMITER) */
    EL_TOK_WORD,    /* bare word: keyword or unquoted identifier; text in dst */
    EL_TOK_QIDENT,  /* quoted identifier, decoded, in dst */
    EL_TOK_STRING,  /* string literal, decoded, in dst */
    EL_TOK_NUMBER,  /* unsigned number as written (digits, '.', exponent) */
    EL_TOK_HEX,     /* 0x.. or X'..': the raw bytes, in dst */
    EL_TOK_BITS,    /* 0b.. or b'..': its value as decimal text, in dst */
    EL_TOK_PUNCT    /* any other single byte, in tok.punct */
} el_sql_tok_kind;

#endif /* EL_SQL_TOKEN_H */
