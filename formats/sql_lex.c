/*
 * sql_lex.c - streaming SQL tokenizer for dump files (see sql_lex.h).
 *
 * DESIGN: the lexer owns one fixed read block and pulls the input through it;
 * a token never has to fit in the block, because decoded text goes straight
 * into the caller's capped el_buf in runs (one append per run of ordinary
 * bytes, not per byte: this loop is the hot path of a multi-gigabyte load).
 * Look-ahead is bounded (a dollar-quote tag, a DELIMITER, a comment marker),
 * so the block only ever has to be compacted, never grown. Everything that
 * differs between dialects is a branch on lex->dialect here rather than a
 * copy of the loop per dialect.
 */
#include "formats/sql_lex.h"

#include <stdlib.h>  /* calloc, malloc, free */
#include <string.h>  /* memcmp, memmove, memchr, strlen */

#include "common/hex.h"           /* el_hex_value */
#include "formats/sql_strings.h"  /* what quotes open, what escapes mean, per dialect */

#define LEX_BLOCK ((size_t)64 * 1024)
#define LEX_MAX_LOOKAHEAD 80 /* longest dollar tag / marker we look at */

struct el_sql_lex {
    el_input *in;            /* not owned */
    el_sql_dialect dialect;
    unsigned char *buf;      /* LEX_BLOCK bytes */
    size_t pos, len;         /* unread bytes are buf[pos..len) */
    bool eof;                /* the input has no more bytes */
    el_err ioerr;            /* sticky input error */
    el_diag iodiag;
    uint64_t base;           /* stream offset of buf[0] */
    uint64_t line;           /* line of buf[pos] */
    char delim[16];          /* mysql statement terminator */
    size_t delim_len;
    bool stmt_start;         /* no token of the current statement yet */
    bool header, trailer;    /* dump-tool header / trailer comment seen */
    uint64_t foreign_line;   /* first construct of another dialect (0: none) */
    char foreign[24];        /* its first bytes */
    bool pg_backslash;       /* standard_conforming_strings = off */
};

el_err el_sql_lex_new(el_input *in, el_sql_dialect dialect, el_sql_lex **out)
{
    *out = NULL;
    el_sql_lex *lex = calloc(1, sizeof *lex);
    if (!lex)
        return EL_ENOMEM;
    lex->buf = malloc(LEX_BLOCK);
    if (!lex->buf) {
        el_sql_lex_free(lex);
        return EL_ENOMEM;
    }
    lex->in = in;
    lex->dialect = dialect;
    lex->line = 1;
    lex->delim[0] = ';';
    lex->delim_len = 1;
    lex->stmt_start = true;
    *out = lex;
    return EL_OK;
}

void el_sql_lex_free(el_sql_lex *lex)
{
    if (!lex)
        return;
    free(lex->buf);
    free(lex);
}

void el_sql_lex_set_standard_strings(el_sql_lex *lex, bool on) { lex->pg_backslash = !on; }
uint64_t el_sql_lex_line(const el_sql_lex *lex) { return lex->line; }
uint64_t el_sql_lex_offset(const el_sql_lex *lex) { return lex->base + lex->pos; }
bool el_sql_lex_saw_header(const el_sql_lex *lex) { return lex->header; }
bool el_sql_lex_saw_trailer(const el_sql_lex *lex) { return lex->trailer; }

static size_t avail(const el_sql_lex *lex);

const char *el_sql_lex_foreign(const el_sql_lex *lex, uint64_t *line)
{
    *line = lex->foreign_line;
    return lex->foreign_line ? lex->foreign : NULL;
}

/* Notes the first construct of another dialect, from its first bytes. */
static void note_foreign(el_sql_lex *lex, size_t len)
{
    if (lex->foreign_line)
        return;
    size_t n = avail(lex), k = 0;
    while (k < len && k < n && k + 1 < sizeof lex->foreign && lex->buf[lex->pos + k] != '\n') {
        lex->foreign[k] = (char)lex->buf[lex->pos + k];
        k++;
    }
    lex->foreign[k] = '\0';
    lex->foreign_line = lex->line;
}

bool el_sql_word_is(const char *word, const char *keyword)
{
    for (; *word && *keyword; word++, keyword++) {
        unsigned char a = (unsigned char)*word, b = (unsigned char)*keyword;
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (unsigned char)(b - 'A' + 'a');
        if (a != b)
            return false;
    }
    return *word == '\0' && *keyword == '\0';
}

static el_err io_error(el_sql_lex *lex, el_diag *diag)
{
    if (diag)
        *diag = lex->iodiag;
    return lex->ioerr;
}

/* Makes at least n bytes available at pos unless the input ends first. */
static el_err fill(el_sql_lex *lex, size_t n, el_diag *diag)
{
    if (lex->len - lex->pos >= n)
        return EL_OK;
    if (lex->ioerr)
        return io_error(lex, diag);
    if (lex->eof)
        return EL_OK;
    if (lex->pos > 0) {
        memmove(lex->buf, lex->buf + lex->pos, lex->len - lex->pos);
        lex->base += lex->pos;
        lex->len -= lex->pos;
        lex->pos = 0;
    }
    while (lex->len < n && !lex->eof) {
        size_t got = 0;
        el_diag_clear(&lex->iodiag);
        el_err err = el_input_read(lex->in, lex->buf + lex->len, LEX_BLOCK - lex->len, &got,
                                   &lex->iodiag);
        if (err) {
            lex->ioerr = err;
            return io_error(lex, diag);
        }
        if (got == 0)
            lex->eof = true;
        lex->len += got;
    }
    return EL_OK;
}

static size_t avail(const el_sql_lex *lex) { return lex->len - lex->pos; }

/* Byte `ahead` positions on, or -1 past the end. */
static el_err peek(el_sql_lex *lex, size_t ahead, int *c, el_diag *diag)
{
    el_err err = fill(lex, ahead + 1, diag);
    if (err) {
        *c = -1;
        return err;
    }
    *c = avail(lex) > ahead ? lex->buf[lex->pos + ahead] : -1;
    return EL_OK;
}

/* Consumes n available bytes, counting newlines. */
static void advance(el_sql_lex *lex, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lex->buf[lex->pos + i] == '\n')
            lex->line++;
    lex->pos += n;
}

el_err el_sql_lex_getc(el_sql_lex *lex, int *c, el_diag *diag)
{
    el_err err = peek(lex, 0, c, diag);
    if (!err && *c >= 0)
        advance(lex, 1);
    return err;
}

el_err el_sql_lex_peekc(el_sql_lex *lex, size_t ahead, int *c, el_diag *diag)
{
    if (ahead >= 16)
        ahead = 15;
    return peek(lex, ahead, c, diag);
}

/* Appends decoded bytes; a full buffer marks the token, ENOMEM is fatal. */
static el_err put(el_buf *dst, el_sql_tok *tok, const void *p, size_t n)
{
    if (!dst || tok->overflow || n == 0)
        return EL_OK;
    size_t room = dst->max > dst->len ? dst->max - dst->len - 1 : 0;
    if (n > room) {
        tok->overflow = true; /* keep what fits, for the rejects file */
        return room ? el_buf_append(dst, p, room) : EL_OK;
    }
    return el_buf_append(dst, p, n);
}

static el_err put1(el_buf *dst, el_sql_tok *tok, int c)
{
    char ch = (char)c;
    return put(dst, tok, &ch, 1);
}

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_word_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c >= 0x80;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static el_err unterminated(el_sql_lex *lex, const el_sql_tok *tok, const char *what,
                           el_diag *diag)
{
    if (lex->ioerr)
        return io_error(lex, diag);
    return el_diag_at(diag, EL_ETRUNCATED, tok->line, 0, tok->offset,
                      "unterminated %s starting at line %llu (input ends inside it)", what,
                      (unsigned long long)tok->line);
}

/* ---- comments and whitespace ---- */

static void check_marker(el_sql_lex *lex)
{
    static const char *const headers[] = {"-- MySQL dump", "-- MariaDB dump",
                                          "-- PostgreSQL database dump"};
    static const char *const trailers[] = {"-- Dump completed",
                                           "-- PostgreSQL database dump complete"};
    const char *p = (const char *)lex->buf + lex->pos;
    size_t n = avail(lex);
    for (size_t i = 0; i < sizeof trailers / sizeof *trailers; i++) {
        size_t k = strlen(trailers[i]);
        if (n >= k && memcmp(p, trailers[i], k) == 0) {
            lex->trailer = true;
            return;
        }
    }
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        size_t k = strlen(headers[i]);
        if (n >= k && memcmp(p, headers[i], k) == 0)
            lex->header = true;
    }
}

/* Consumes to the end of the line, the newline included. */
static el_err skip_line(el_sql_lex *lex, el_diag *diag)
{
    for (;;) {
        el_err err = fill(lex, 1, diag);
        if (err)
            return err;
        if (avail(lex) == 0)
            return EL_OK;
        const unsigned char *p = lex->buf + lex->pos;
        const unsigned char *nl = memchr(p, '\n', avail(lex));
        if (nl) {
            lex->pos += (size_t)(nl - p) + 1;
            lex->line++;
            return EL_OK;
        }
        lex->pos = lex->len;
    }
}

static el_err skip_block_comment(el_sql_lex *lex, el_diag *diag)
{
    el_sql_tok start = {.line = lex->line, .offset = el_sql_lex_offset(lex)};
    int depth = 0;
    advance(lex, 2);
    depth = 1;
    for (;;) {
        int c, c1;
        el_err err = peek(lex, 1, &c1, diag);
        if (err)
            return err;
        c = avail(lex) ? lex->buf[lex->pos] : -1;
        if (c < 0)
            return unterminated(lex, &start, "comment", diag);
        if (c == '*' && c1 == '/') {
            advance(lex, 2);
            if (--depth == 0)
                return EL_OK;
        } else if (c == '/' && c1 == '*' && lex->dialect == EL_SQL_POSTGRES) {
            advance(lex, 2);
            depth++;
        } else {
            advance(lex, 1);
        }
    }
}

static el_err skip_space(el_sql_lex *lex, el_diag *diag)
{
    for (;;) {
        int c, c1;
        el_err err = peek(lex, 2, &c1, diag); /* makes up to 3 bytes available */
        if (err)
            return err;
        size_t n = avail(lex);
        if (n == 0)
            return EL_OK;
        c = lex->buf[lex->pos];
        c1 = n > 1 ? lex->buf[lex->pos + 1] : -1;
        int c2 = n > 2 ? lex->buf[lex->pos + 2] : -1;
        if (is_space(c)) {
            advance(lex, 1);
        } else if (c == '-' && c1 == '-' &&
                   (lex->dialect != EL_SQL_MYSQL || c2 < 0 || c2 <= ' ')) {
            err = fill(lex, LEX_MAX_LOOKAHEAD, diag);
            if (err)
                return err;
            check_marker(lex);
            err = skip_line(lex, diag);
            if (err)
                return err;
        } else if (c == '#' && lex->dialect == EL_SQL_MYSQL) {
            err = skip_line(lex, diag);
            if (err)
                return err;
        } else if (c == '/' && c1 == '*') {
            /* MySQL's conditional comments run statements there; the other
             * dialects' tools never write one */
            if (lex->dialect != EL_SQL_MYSQL && lex->stmt_start) {
                if ((err = fill(lex, 4, diag)))
                    return err;
                const unsigned char *q = lex->buf + lex->pos;
                if (avail(lex) > 3 && (q[2] == '!' || (q[2] == 'M' && q[3] == '!')))
                    note_foreign(lex, 12);
            }
            err = skip_block_comment(lex, diag);
            if (err)
                return err;
        } else if (c == '\\' && lex->dialect == EL_SQL_POSTGRES && lex->stmt_start) {
            err = skip_line(lex, diag); /* psql meta-command: \connect, \restrict */
            if (err)
                return err;
        } else {
            return EL_OK;
        }
    }
}

/* ---- literals ---- */

/* Decodes one backslash escape (its backslash already consumed) by the
 * literal's rules (sql_strings.h). */
static el_err escape(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_sql_escapes esc,
                     const char *what, el_diag *diag)
{
    el_err err = fill(lex, EL_SQL_ESCAPE_MAX, diag);
    if (err)
        return err;
    unsigned char out[4];
    size_t outlen;
    bool invalid = false;
    size_t n = avail(lex) < EL_SQL_ESCAPE_MAX ? avail(lex) : EL_SQL_ESCAPE_MAX;
    size_t took = el_sql_unescape(esc, lex->buf + lex->pos, n, out, &outlen, &invalid);
    if (took == 0)
        return unterminated(lex, tok, what, diag);
    advance(lex, took);
    if (invalid)
        tok->invalid = true;
    return put(dst, tok, out, outlen);
}

/* A quoted run ending at an unescaped q ("qq" stands for q). Used for
 * strings and for quoted identifiers alike. */
static el_err quoted(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, int q, el_sql_escapes esc,
                     const char *what, el_diag *diag)
{
    advance(lex, 1); /* opening quote */
    for (;;) {
        el_err err = fill(lex, 1, diag);
        if (err)
            return err;
        if (avail(lex) == 0)
            return unterminated(lex, tok, what, diag);
        const unsigned char *p = lex->buf + lex->pos;
        size_t n = avail(lex), i = 0;
        while (i < n && p[i] != q && p[i] != '\n' && !(esc && p[i] == '\\'))
            i++;
        if ((err = put(dst, tok, p, i)))
            return err;
        lex->pos += i;
        if (i == n)
            continue;
        int c = p[i];
        if (c == '\n') {
            if ((err = put1(dst, tok, '\n')))
                return err;
            advance(lex, 1);
        } else if (c == '\\') {
            advance(lex, 1);
            if ((err = escape(lex, tok, dst, esc, what, diag)))
                return err;
        } else {
            int c1;
            if ((err = peek(lex, 1, &c1, diag)))
                return err;
            if (c1 == q) {
                if ((err = put1(dst, tok, q)))
                    return err;
                advance(lex, 2);
            } else {
                advance(lex, 1);
                return EL_OK;
            }
        }
    }
}

/* The next digit of X'..', 0x.., b'..' or 0b.. (base 16 or 2): its value in
 * *v, or -1 once the literal has ended (quoted: its closing quote consumed;
 * unquoted: at the first other byte, not consumed). Quoted, any other byte is
 * consumed and makes the literal invalid (tok->invalid). */
static el_err literal_digit(el_sql_lex *lex, el_sql_tok *tok, bool quoted_form, int base,
                            const char *what, int *v, el_diag *diag)
{
    for (;;) {
        int c;
        el_err err = peek(lex, 0, &c, diag);
        if (err)
            return err;
        if (quoted_form && c < 0)
            return unterminated(lex, tok, what, diag);
        if (quoted_form && c == '\'') {
            advance(lex, 1);
            *v = -1;
            return EL_OK;
        }
        int d = el_hex_value(c);
        if (d < 0 || d >= base) {
            if (!quoted_form) {
                *v = -1;
                return EL_OK;
            }
            tok->invalid = true;
            advance(lex, 1);
            continue;
        }
        advance(lex, 1);
        *v = d;
        return EL_OK;
    }
}

/* X'..' (quoted) or 0x..: pairs of hex digits to bytes. Quoted, an odd count
 * makes the literal invalid; unquoted, it means a leading zero. */
static el_err hex(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, bool quoted_form, el_diag *diag)
{
    advance(lex, 2); /* X' or 0x */
    size_t start = dst ? dst->len : 0;
    int hi = -1;
    for (;;) {
        int v;
        el_err err = literal_digit(lex, tok, quoted_form, 16, "hex literal", &v, diag);
        if (err)
            return err;
        if (v < 0)
            break;
        if (hi < 0) {
            hi = v;
        } else {
            if ((err = put1(dst, tok, hi * 16 + v)))
                return err;
            hi = -1;
        }
    }
    if (quoted_form) {
        if (hi >= 0)
            tok->invalid = true;
        return EL_OK;
    }
    if (hi >= 0 && dst && !tok->overflow) {
        /* odd digit count: shift the bytes of this literal right by a nibble */
        size_t n = dst->len - start;
        el_err err = put1(dst, tok, 0);
        if (err || tok->overflow)
            return err;
        unsigned char *b = (unsigned char *)dst->data + start;
        unsigned prev = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = b[i];
            b[i] = (unsigned char)((prev << 4) | (cur >> 4));
            prev = cur & 0x0F;
        }
        b[n] = (unsigned char)((prev << 4) | (unsigned)hi);
    }
    return EL_OK;
}

/* b'0101' (quoted) or 0b0101: the value as decimal text; more than 64
 * significant bits makes the literal invalid. */
static el_err bits(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, bool quoted_form, el_diag *diag)
{
    advance(lex, 2); /* b' or 0b */
    uint64_t v = 0;
    for (;;) {
        int d;
        el_err err = literal_digit(lex, tok, quoted_form, 2, "bit literal", &d, diag);
        if (err)
            return err;
        if (d < 0)
            break;
        if (v >> 63)
            tok->invalid = true;
        v = v * 2 + (uint64_t)d;
    }
    char text[24];
    size_t n = 0;
    do {
        text[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n / 2; i++) {
        char t = text[i];
        text[i] = text[n - 1 - i];
        text[n - 1 - i] = t;
    }
    return put(dst, tok, text, n);
}

static el_err number(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_diag *diag)
{
    bool seen_dot = false;
    for (;;) {
        int c;
        el_err err = peek(lex, 0, &c, diag);
        if (err)
            return err;
        if (is_digit(c) || (c == '.' && !seen_dot)) {
            seen_dot |= c == '.';
            if ((err = put1(dst, tok, c)))
                return err;
            advance(lex, 1);
            continue;
        }
        if (c == 'e' || c == 'E') {
            int c2;
            if ((err = peek(lex, 2, &c2, diag)))
                return err;
            int c1 = avail(lex) > 1 ? lex->buf[lex->pos + 1] : -1;
            size_t k = is_digit(c1) ? 1 : ((c1 == '+' || c1 == '-') && is_digit(c2)) ? 2 : 0;
            if (k == 0)
                return EL_OK;
            if ((err = put(dst, tok, lex->buf + lex->pos, k)))
                return err;
            advance(lex, k);
            for (;;) {
                if ((err = peek(lex, 0, &c, diag)))
                    return err;
                if (!is_digit(c))
                    return EL_OK;
                if ((err = put1(dst, tok, c)))
                    return err;
                advance(lex, 1);
            }
        }
        return EL_OK;
    }
}

/* $tag$ ... $tag$ (postgres). *is_dollar false: not a dollar quote. */
static el_err dollar(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, bool *is_dollar,
                     el_diag *diag)
{
    *is_dollar = false;
    el_err err = fill(lex, LEX_MAX_LOOKAHEAD, diag);
    if (err)
        return err;
    const unsigned char *p = lex->buf + lex->pos;
    size_t n = avail(lex), i = 1;
    while (i < n && i < LEX_MAX_LOOKAHEAD - 1 && p[i] != '$' && is_word_char(p[i]))
        i++;
    if (i >= n || p[i] != '$' || (i > 1 && is_digit(p[1])))
        return EL_OK;
    *is_dollar = true;
    char tag[LEX_MAX_LOOKAHEAD];
    size_t taglen = i + 1;
    memcpy(tag, p, taglen);
    advance(lex, taglen);
    for (;;) {
        if ((err = fill(lex, taglen, diag)))
            return err;
        if (avail(lex) == 0)
            return unterminated(lex, tok, "dollar-quoted string", diag);
        p = lex->buf + lex->pos;
        n = avail(lex);
        size_t k = 0;
        while (k < n && p[k] != '$')
            k++;
        if (k > 0) {
            if ((err = put(dst, tok, p, k)))
                return err;
            advance(lex, k);
            continue;
        }
        if (n >= taglen && memcmp(p, tag, taglen) == 0) {
            advance(lex, taglen);
            return EL_OK;
        }
        if ((err = put1(dst, tok, '$')))
            return err;
        advance(lex, 1);
    }
}

/* DELIMITER xx (mysql client command): the rest of the line. */
static el_err delimiter_command(el_sql_lex *lex, el_diag *diag)
{
    char d[sizeof lex->delim];
    size_t n = 0;
    int c;
    el_err err;
    for (;;) {
        if ((err = peek(lex, 0, &c, diag)))
            return err;
        if (c != ' ' && c != '\t')
            break;
        advance(lex, 1);
    }
    for (;;) {
        if ((err = peek(lex, 0, &c, diag)))
            return err;
        if (c < 0 || is_space(c))
            break;
        if (n < sizeof d - 1)
            d[n++] = (char)c;
        advance(lex, 1);
    }
    if (n > 0) {
        memcpy(lex->delim, d, n);
        lex->delim_len = n;
    }
    if (c != '\n' && c >= 0)
        return skip_line(lex, diag);
    return EL_OK;
}

el_err el_sql_lex_next(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_diag *diag)
{
    el_err err;
again:
    tok->kind = EL_TOK_EOF;
    tok->punct = 0;
    tok->overflow = false;
    tok->invalid = false;
    if ((err = skip_space(lex, diag)))
        return err;
    tok->line = lex->line;
    tok->offset = el_sql_lex_offset(lex);
    if ((err = fill(lex, sizeof lex->delim, diag)))
        return err;
    size_t n = avail(lex);
    if (n == 0)
        return EL_OK;
    const unsigned char *p = lex->buf + lex->pos;
    int c = p[0];
    int c1 = n > 1 ? p[1] : -1;
    if (n >= lex->delim_len && memcmp(p, lex->delim, lex->delim_len) == 0) {
        advance(lex, lex->delim_len);
        tok->kind = EL_TOK_END;
        lex->stmt_start = true;
        return EL_OK;
    }
    bool was_start = lex->stmt_start;
    lex->stmt_start = false;
    bool mysql = lex->dialect == EL_SQL_MYSQL;

    /* a quote, or a prefix letter and a quote (E'', N'', B''): ask the rules */
    el_sql_quote qt = {.kind = EL_TOK_EOF};
    if (c == '\'' || c == '"' || c == '`' || c1 == '\'')
        qt = el_sql_quote_at(lex->dialect, c, c1, !lex->pg_backslash);
    if (qt.kind != EL_TOK_EOF) {
        if (c == '`' && lex->dialect == EL_SQL_POSTGRES)
            note_foreign(lex, 20); /* PostgreSQL has no backtick names */
        tok->kind = qt.kind;
        advance(lex, qt.prefix);
        return quoted(lex, tok, dst, qt.quote, qt.escapes,
                      qt.kind == EL_TOK_STRING ? "string" : "identifier", diag);
    }
    if (c == '[' && lex->dialect == EL_SQL_SQLITE) {
        tok->kind = EL_TOK_QIDENT;
        advance(lex, 1);
        for (;;) {
            if ((err = peek(lex, 0, &c, diag)))
                return err;
            if (c < 0)
                return unterminated(lex, tok, "identifier", diag);
            advance(lex, 1);
            if (c == ']')
                return EL_OK;
            if ((err = put1(dst, tok, c)))
                return err;
        }
    }
    if ((c == 'x' || c == 'X') && c1 == '\'') {
        tok->kind = EL_TOK_HEX;
        return hex(lex, tok, dst, true, diag);
    }
    if ((c == 'b' || c == 'B') && c1 == '\'' && mysql) {
        tok->kind = EL_TOK_BITS;
        return bits(lex, tok, dst, true, diag);
    }
    if (mysql && c == '0' && (c1 == 'x' || c1 == 'b')) {
        int c2 = n > 2 ? p[2] : -1;
        if (c1 == 'x' && el_hex_value(c2) >= 0) {
            tok->kind = EL_TOK_HEX;
            return hex(lex, tok, dst, false, diag);
        }
        if (c1 == 'b' && (c2 == '0' || c2 == '1')) {
            tok->kind = EL_TOK_BITS;
            return bits(lex, tok, dst, false, diag);
        }
    }
    if (is_digit(c) || (c == '.' && is_digit(c1))) {
        tok->kind = EL_TOK_NUMBER;
        return number(lex, tok, dst, diag);
    }
    if (c == '$' && lex->dialect == EL_SQL_POSTGRES) {
        bool is_dollar;
        tok->kind = EL_TOK_STRING;
        if ((err = dollar(lex, tok, dst, &is_dollar, diag)))
            return err;
        if (is_dollar)
            return EL_OK;
    }
    if (is_word_char(c) && c != '$') {
        char word[16];
        size_t wn = 0;
        bool long_word = false;
        tok->kind = EL_TOK_WORD;
        for (;;) {
            if ((err = fill(lex, 1, diag)))
                return err;
            p = lex->buf + lex->pos;
            n = avail(lex);
            size_t i = 0;
            while (i < n && is_word_char(p[i]))
                i++;
            for (size_t k = 0; k < i; k++) {
                if (wn < sizeof word - 1)
                    word[wn++] = (char)p[k];
                else
                    long_word = true;
            }
            if ((err = put(dst, tok, p, i)))
                return err;
            lex->pos += i;
            if (i < n || n == 0)
                break;
        }
        word[wn] = '\0';
        if (mysql && was_start && !long_word && el_sql_word_is(word, "delimiter")) {
            if (dst)
                el_buf_truncate(dst, dst->len >= 9 ? dst->len - 9 : 0);
            if ((err = delimiter_command(lex, diag)))
                return err;
            lex->stmt_start = true;
            goto again;
        }
        return EL_OK;
    }
    tok->kind = EL_TOK_PUNCT;
    tok->punct = (char)c;
    advance(lex, 1);
    return EL_OK;
}

el_err el_sql_lex_skip_statement(el_sql_lex *lex, bool *saw_eof, el_diag *diag)
{
    el_sql_tok tok;
    for (;;) {
        el_err err = el_sql_lex_next(lex, &tok, NULL, diag);
        if (err)
            return err;
        if (tok.kind == EL_TOK_END || tok.kind == EL_TOK_EOF) {
            *saw_eof = tok.kind == EL_TOK_EOF;
            return EL_OK;
        }
    }
}

el_err el_sql_lex_take_until(el_sql_lex *lex, const char *stops, el_buf *dst, bool *overflow,
                             el_diag *diag)
{
    bool stop[256] = {false};
    for (const unsigned char *s = (const unsigned char *)stops; *s; s++)
        stop[*s] = true;
    for (;;) {
        el_err err = fill(lex, 1, diag);
        if (err)
            return err;
        size_t n = avail(lex), i = 0;
        if (n == 0)
            return EL_OK;
        const unsigned char *p = lex->buf + lex->pos;
        while (i < n && !stop[p[i]])
            i++;
        if (dst && !*overflow && i > 0) {
            size_t room = dst->max > dst->len ? dst->max - dst->len - 1 : 0;
            err = el_buf_append(dst, p, i < room ? i : room);
            if (err)
                return err;
            *overflow = i > room;
        }
        advance(lex, i);
        if (i < n)
            return EL_OK;
    }
}
