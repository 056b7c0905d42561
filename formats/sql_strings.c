/*
 * sql_strings.c - each dialect's string semantics, once (see sql_strings.h).
 *
 * DESIGN: the lexer streams strings straight into column buffers, so the
 * rules cannot be "decode this whole literal"; they are the two questions
 * the lexer's loop asks -- what does this quote open, what does this escape
 * stand for -- answered here as pure functions over a few bytes, so every
 * dialect's answer is one table or switch and is unit-tested on its own
 * (tests/unit/test_sql_strings.c). E'' strings and COPY text share one
 * decoder, which they did not when each had its own copy.
 */
#include "formats/sql_strings.h"

#include "common/hex.h"  /* el_hex_value */

el_sql_quote el_sql_quote_at(el_sql_dialect dialect, int c, int c1, bool standard_strings)
{
    el_sql_quote q = {.kind = EL_TOK_EOF, .escapes = EL_SQL_ESC_NONE, .prefix = 0, .quote = c};
    switch (dialect) {
    case EL_SQL_MYSQL:
        if (c == '\'' || c == '"') {
            q.kind = EL_TOK_STRING;
            q.escapes = EL_SQL_ESC_MYSQL;
        } else if (c == '`') {
            q.kind = EL_TOK_QIDENT;
        } else if ((c == 'n' || c == 'N') && c1 == '\'') {
            q = (el_sql_quote){EL_TOK_STRING, EL_SQL_ESC_MYSQL, 1, '\''};
        }
        break;
    case EL_SQL_POSTGRES: {
        el_sql_escapes plain = standard_strings ? EL_SQL_ESC_NONE : EL_SQL_ESC_PG;
        if (c == '\'') {
            q.kind = EL_TOK_STRING;
            q.escapes = plain;
        } else if (c == '"' || c == '`') {
            q.kind = EL_TOK_QIDENT; /* a backtick is not PostgreSQL's: the lexer notes it */
        } else if ((c == 'e' || c == 'E') && c1 == '\'') {
            q = (el_sql_quote){EL_TOK_STRING, EL_SQL_ESC_PG, 1, '\''};
        } else if ((c == 'n' || c == 'N') && c1 == '\'') {
            q = (el_sql_quote){EL_TOK_STRING, plain, 1, '\''};
        } else if ((c == 'b' || c == 'B') && c1 == '\'') {
            q = (el_sql_quote){EL_TOK_STRING, EL_SQL_ESC_NONE, 1, '\''}; /* bit string: its text */
        }
        break;
    }
    case EL_SQL_SQLITE:
        if (c == '\'')
            q.kind = EL_TOK_STRING;
        else if (c == '"' || c == '`')
            q.kind = EL_TOK_QIDENT;
        break;
    }
    return q;
}

size_t el_sql_utf8(uint32_t cp, unsigned char out[4])
{
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0;
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        out[0] = (unsigned char)(0xF0 | (cp >> 18));
        out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (unsigned char)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}

el_err el_sql_put_utf8(el_buf *dst, uint32_t cp)
{
    unsigned char u[4];
    size_t n = el_sql_utf8(cp, u);
    if (n == 0)
        return EL_EPARSE;
    return el_buf_append(dst, u, n);
}

/* MySQL/MariaDB: \0 \b \n \r \t \Z; \% and \_ keep their backslash (they
 * are LIKE escapes); any other byte, quotes and backslash included, stands
 * for itself. */
static size_t mysql_escape(const unsigned char *p, unsigned char out[4], size_t *outlen)
{
    *outlen = 1;
    switch (p[0]) {
    case '0': out[0] = 0; break;
    case 'b': out[0] = '\b'; break;
    case 'n': out[0] = '\n'; break;
    case 'r': out[0] = '\r'; break;
    case 't': out[0] = '\t'; break;
    case 'Z': out[0] = 0x1A; break;
    case '%':
    case '_':
        out[0] = '\\';
        out[1] = p[0];
        *outlen = 2;
        break;
    default: out[0] = p[0]; break;
    }
    return 1;
}

/* PostgreSQL E'' (and COPY text, without \u \U). */
static size_t pg_escape(bool unicode, const unsigned char *p, size_t n, unsigned char out[4],
                        size_t *outlen, bool *invalid)
{
    int c = p[0];
    *outlen = 1;
    switch (c) {
    case 'b': out[0] = '\b'; return 1;
    case 'f': out[0] = '\f'; return 1;
    case 'n': out[0] = '\n'; return 1;
    case 'r': out[0] = '\r'; return 1;
    case 't': out[0] = '\t'; return 1;
    case 'v': out[0] = '\v'; return 1;
    default: break;
    }
    if (c >= '0' && c <= '7') { /* \o, \oo, \ooo */
        unsigned v = (unsigned)(c - '0');
        size_t k = 1;
        while (k < 3 && k < n && p[k] >= '0' && p[k] <= '7')
            v = v * 8 + (unsigned)(p[k++] - '0');
        out[0] = (unsigned char)(v & 0xFF);
        return k;
    }
    if (c == 'x') { /* \xh, \xhh; \x alone is an x */
        size_t k = 1;
        int v = 0;
        while (k < 3 && k < n && el_hex_value(p[k]) >= 0)
            v = v * 16 + el_hex_value(p[k++]);
        out[0] = k == 1 ? (unsigned char)'x' : (unsigned char)v;
        return k;
    }
    if (unicode && (c == 'u' || c == 'U')) { /* \uXXXX, \UXXXXXXXX */
        size_t ndig = c == 'u' ? 4 : 8, k = 1;
        uint32_t cp = 0;
        for (; k <= ndig; k++) {
            if (k >= n || el_hex_value(p[k]) < 0) {
                *invalid = true;
                *outlen = 0;
                return k;
            }
            cp = cp * 16 + (uint32_t)el_hex_value(p[k]);
        }
        *outlen = el_sql_utf8(cp, out);
        if (*outlen == 0)
            *invalid = true;
        return k;
    }
    out[0] = (unsigned char)c;
    return 1;
}

size_t el_sql_unescape(el_sql_escapes esc, const unsigned char *p, size_t n,
                       unsigned char out[4], size_t *outlen, bool *invalid)
{
    *outlen = 0;
    if (n == 0)
        return 0;
    switch (esc) {
    case EL_SQL_ESC_MYSQL: return mysql_escape(p, out, outlen);
    case EL_SQL_ESC_PG: return pg_escape(true, p, n, out, outlen, invalid);
    case EL_SQL_ESC_PG_COPY: return pg_escape(false, p, n, out, outlen, invalid);
    case EL_SQL_ESC_NONE: break;
    }
    return 0;
}

el_err el_sql_sqlite_unistr(const char *p, size_t n, el_buf *out, bool *bad)
{
    for (size_t i = 0; i < n; i++) {
        el_err err;
        if (p[i] != '\\') {
            if ((err = el_buf_putc(out, p[i])))
                return err;
            continue;
        }
        if (i + 1 < n && p[i + 1] == '\\') {
            if ((err = el_buf_putc(out, '\\')))
                return err;
            i++;
            continue;
        }
        size_t skip = 1, ndig = 4;
        if (i + 1 < n && p[i + 1] == 'u') {
            skip = 2;
        } else if (i + 1 < n && p[i + 1] == '+') {
            skip = 2;
            ndig = 6;
        } else if (i + 1 < n && p[i + 1] == 'U') {
            skip = 2;
            ndig = 8;
        }
        uint32_t cp = 0;
        if (i + skip + ndig > n) {
            *bad = true;
            return EL_OK;
        }
        for (size_t k = 0; k < ndig; k++) {
            int h = el_hex_value((unsigned char)p[i + skip + k]);
            if (h < 0) {
                *bad = true;
                return EL_OK;
            }
            cp = cp * 16 + (uint32_t)h;
        }
        err = el_sql_put_utf8(out, cp);
        if (err == EL_EPARSE) {
            *bad = true;
            return EL_OK;
        }
        if (err)
            return err;
        i += skip + ndig - 1;
    }
    return EL_OK;
}
