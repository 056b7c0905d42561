/*
 * postgres_reader.c - pg_dump plain scripts as rows.
 *
 * DESIGN: INSERT forms (--inserts, --column-inserts, --rows-per-insert) go
 * through the shared statement walk like any dialect; what only postgres has
 * lives here: the COPY ... FROM stdin text blocks, which are not SQL but
 * lines of tab-separated fields with their own backslash escapes, read one
 * line per row straight from the lexer's block; and bytea, whose text form
 * ("\x00ff", or the old escape form) is turned back into the raw bytes.
 */
#include "common/hex.h"  /* el_hex_value */
#include "formats/reader.h"
#include "formats/sql_dump.h"
#include "formats/sql_strings.h"  /* el_sql_unescape: COPY text escapes */

#include <stdint.h>  /* SIZE_MAX */

el_err el_postgres_reader_open(el_input *in, const el_reader_opts *opts,
                               const el_reader_ops **ops, void **self, el_diag *diag)
{
    return el_sql_dump_open(in, EL_SQL_POSTGRES, opts, ops, self, diag);
}

el_err el_sql_pg_bytea_decode(el_buf *v)
{
    unsigned char *p = (unsigned char *)v->data;
    size_t n = v->len, out = 0;
    if (n == 0)
        return EL_OK;
    if (n >= 2 && p[0] == '\\' && p[1] == 'x') {
        int hi = -1;
        for (size_t i = 2; i < n; i++) {
            if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')
                continue;
            int h = el_hex_value(p[i]);
            if (h < 0)
                return EL_EPARSE;
            if (hi < 0) {
                hi = h;
            } else {
                p[out++] = (unsigned char)(hi * 16 + h);
                hi = -1;
            }
        }
        if (hi >= 0)
            return EL_EPARSE;
    } else {
        for (size_t i = 0; i < n; i++) {
            if (p[i] != '\\') {
                p[out++] = p[i];
            } else if (i + 1 < n && p[i + 1] == '\\') {
                p[out++] = '\\';
                i++;
            } else if (i + 3 < n && p[i + 1] >= '0' && p[i + 1] <= '3' && p[i + 2] >= '0' &&
                       p[i + 2] <= '7' && p[i + 3] >= '0' && p[i + 3] <= '7') {
                p[out++] = (unsigned char)((p[i + 1] - '0') * 64 + (p[i + 2] - '0') * 8 +
                                           (p[i + 3] - '0'));
                i += 3;
            } else {
                return EL_EPARSE;
            }
        }
    }
    el_buf_truncate(v, out);
    return EL_OK;
}

/* Is the line that starts here the end-of-data marker "\."? */
static el_err at_end_marker(el_sql_lex *lex, bool *yes, el_diag *diag)
{
    int c0, c1, c2, c3;
    el_err err;
    *yes = false;
    if ((err = el_sql_lex_peekc(lex, 0, &c0, diag)) || c0 != '\\')
        return err;
    if ((err = el_sql_lex_peekc(lex, 1, &c1, diag)) || c1 != '.')
        return err;
    if ((err = el_sql_lex_peekc(lex, 2, &c2, diag)))
        return err;
    if (c2 == '\r' && (err = el_sql_lex_peekc(lex, 3, &c3, diag)))
        return err;
    *yes = c2 == '\n' || c2 < 0 || (c2 == '\r' && (c3 == '\n' || c3 < 0));
    return EL_OK;
}

static el_err consume_end_marker(el_sql_lex *lex, el_diag *diag)
{
    bool over = false;
    el_err err = el_sql_lex_take_until(lex, "\n", NULL, &over, diag);
    int c;
    if (!err)
        err = el_sql_lex_getc(lex, &c, diag);
    return err;
}

static el_err no_end(el_sql_lex *lex, el_diag *diag)
{
    return el_diag_at(diag, EL_ETRUNCATED, el_sql_lex_line(lex), 0, el_sql_lex_offset(lex),
                      "COPY data ends without its \\. line (truncated dump)");
}

/* Where a line of COPY data starts: *end when it is the "\." line. The
 * input ending here instead is a truncated dump. */
static el_err line_start(el_sql_lex *lex, bool *end, el_diag *diag)
{
    int c;
    el_err err = el_sql_lex_peekc(lex, 0, &c, diag);
    if (err)
        return err;
    if (c < 0)
        return no_end(lex, diag);
    return at_end_marker(lex, end, diag);
}

el_err el_sql_pg_copy_is_empty(el_sql_lex *lex, bool *empty, el_diag *diag)
{
    return line_start(lex, empty, diag);
}

el_err el_sql_pg_copy_skip(el_sql_lex *lex, uint64_t *rows, el_diag *diag)
{
    for (;;) {
        bool end = false, over = false;
        int c;
        el_err err = line_start(lex, &end, diag);
        if (err)
            return err;
        if (end)
            return consume_end_marker(lex, diag);
        if ((err = el_sql_lex_take_until(lex, "\n", NULL, &over, diag)))
            return err;
        if ((err = el_sql_lex_getc(lex, &c, diag)))
            return err;
        if (c < 0)
            return no_end(lex, diag);
        (*rows)++;
    }
}

static el_err put(el_buf *dst, bool *over, int c)
{
    if (!dst || *over)
        return EL_OK;
    el_err err = el_buf_putc(dst, (char)c);
    if (err == EL_ELIMIT) {
        *over = true;
        return EL_OK;
    }
    return err;
}

el_err el_sql_pg_copy_row(el_sql_lex *lex, el_buf *cols, bool *null, const size_t *map,
                          size_t nmap, size_t *nfields, size_t *overflow_field, bool *end,
                          el_diag *diag)
{
    el_err err;
    int c;
    *end = false;
    *nfields = 0;
    *overflow_field = SIZE_MAX;
    if ((err = line_start(lex, end, diag)))
        return err;
    if (*end)
        return consume_end_marker(lex, diag);

    size_t f = 0;
    for (;;) {
        /* one field */
        size_t col = f < nmap ? map[f] : SIZE_MAX;
        el_buf *dst = col != SIZE_MAX ? &cols[col] : NULL;
        bool over = false, is_null = false;
        uint64_t start = el_sql_lex_offset(lex);
        for (;;) {
            if ((err = el_sql_lex_take_until(lex, "\t\n\r\\", dst, &over, diag)))
                return err;
            uint64_t at = el_sql_lex_offset(lex);
            if ((err = el_sql_lex_getc(lex, &c, diag)))
                return err;
            if (c < 0)
                return no_end(lex, diag);
            if (c == '\t' || c == '\n')
                break;
            if (c == '\r') {
                int c1;
                if ((err = el_sql_lex_peekc(lex, 0, &c1, diag)))
                    return err;
                if (c1 == '\n') {
                    if ((err = el_sql_lex_getc(lex, &c, diag)))
                        return err;
                    break;
                }
                if ((err = put(dst, &over, '\r')))
                    return err;
                continue;
            }
            /* backslash */
            int e;
            if ((err = el_sql_lex_getc(lex, &e, diag)))
                return err;
            if (e < 0)
                return no_end(lex, diag);
            if (e == 'N') {
                /* \N alone in its field is NULL; elsewhere an N */
                int c1;
                if ((err = el_sql_lex_peekc(lex, 0, &c1, diag)))
                    return err;
                if (at == start && (c1 == '\t' || c1 == '\n' || c1 == '\r'))
                    is_null = true;
                else if ((err = put(dst, &over, 'N')))
                    return err;
                continue;
            }
            /* the rest of the escape: octal takes up to 2 more digits, \x 2 */
            unsigned char esc[3] = {(unsigned char)e, 0, 0}, out[4];
            size_t n = 1, outlen;
            for (; n < 3; n++) {
                int d;
                if ((err = el_sql_lex_peekc(lex, n - 1, &d, diag)))
                    return err;
                if (d < 0)
                    break;
                esc[n] = (unsigned char)d;
            }
            bool invalid = false;
            size_t took = el_sql_unescape(EL_SQL_ESC_PG_COPY, esc, n, out, &outlen, &invalid);
            for (size_t k = 1; k < took; k++) {
                int d;
                if ((err = el_sql_lex_getc(lex, &d, diag)))
                    return err;
            }
            for (size_t k = 0; k < outlen && !is_null; k++)
                if ((err = put(dst, &over, out[k])))
                    return err;
        }
        if (col != SIZE_MAX) {
            null[col] = is_null;
            if (is_null)
                el_buf_reset(dst);
        }
        if (over && *overflow_field == SIZE_MAX)
            *overflow_field = f;
        f++;
        if (c != '\t')
            break;
    }
    *nfields = f;
    return EL_OK;
}
