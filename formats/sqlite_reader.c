/*
 * sqlite_reader.c - sqlite3 `.dump` scripts as rows.
 *
 * DESIGN: sqlite's dump is plain SQL read by the shared statement walk; two
 * things are its own. Newer sqlite3 shells write a string with line breaks
 * as an expression, replace('a\nb','\n',char(10)) (nested for \r), and
 * newer still unistr('..'), so the few functions .dump emits are evaluated
 * here on the column's buffer (unistr's escapes are sql_strings.c's). And .dump writes a REAL with 17 to 20
 * significant digits ("1.0000000000000000047e+300"); we yield the shortest
 * text of the same double, which is what the database itself shows.
 */
#include "formats/reader.h"
#include "formats/sql_dump.h"
#include "formats/sql_strings.h"  /* el_sql_put_utf8, el_sql_sqlite_unistr */

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* strtod, strtoul */
#include <string.h>  /* memcmp, strlen */

el_err el_sqlite_reader_open(el_input *in, const el_reader_opts *opts,
                             const el_reader_ops **ops, void **self, el_diag *diag)
{
    return el_sql_dump_open(in, EL_SQL_SQLITE, opts, ops, self, diag);
}

bool el_sql_sqlite_is_function(const char *fname)
{
    return el_sql_word_is(fname, "replace") || el_sql_word_is(fname, "char") ||
           el_sql_word_is(fname, "unistr");
}

static el_err expect(el_sql_lex *lex, char punct, el_diag *diag)
{
    el_sql_tok tok;
    el_err err = el_sql_lex_next(lex, &tok, NULL, diag);
    if (err)
        return err;
    if (tok.kind != EL_TOK_PUNCT || tok.punct != punct)
        return el_diag_at(diag, EL_EPARSE, tok.line, 0, tok.offset, "expected '%c'", punct);
    return EL_OK;
}

el_err el_sql_sqlite_call(el_sql_dump *d, const char *fname, el_buf *dst, el_sql_val *v,
                          int depth, el_diag *diag)
{
    el_sql_lex *lex = el_sql_dump_lex(d);
    el_buf args[3];
    el_sql_val av[3];
    el_sql_tok after;
    size_t nargs = 0;
    el_err err;
    bool is_char = el_sql_word_is(fname, "char");
    bool is_replace = el_sql_word_is(fname, "replace");
    for (size_t i = 0; i < 3; i++)
        el_buf_init(&args[i], EL_SQL_VALUE_MAX + 1);
    el_buf_reset(dst);
    memset(v, 0, sizeof *v);
    v->kind = EL_TOK_STRING;
    if ((err = expect(lex, '(', diag)))
        goto out;
    for (;;) {
        /* char() takes any number of code points; the others at most 3 args */
        el_buf *into = &args[nargs < 3 ? nargs : 2];
        el_sql_val a;
        if ((err = el_sql_dump_value(d, into, &a, &after, depth + 1, diag)))
            goto out;
        if (is_char) {
            if (a.is_null || a.kind != EL_TOK_NUMBER) {
                v->invalid = true;
            } else {
                unsigned long cp = strtoul(el_buf_str(into), NULL, 10);
                el_err e2 = cp > 0x10FFFF ? EL_EPARSE : el_sql_put_utf8(dst, (uint32_t)cp);
                if (e2 == EL_ELIMIT)
                    v->overflow = true;
                else if (e2 == EL_EPARSE)
                    v->invalid = true;
                else if (e2) {
                    err = e2;
                    goto out;
                }
            }
        } else if (nargs < 3) {
            av[nargs] = a;
        }
        nargs++;
        if (after.kind == EL_TOK_PUNCT && after.punct == ')')
            break;
        if (after.kind != EL_TOK_PUNCT || after.punct != ',') {
            err = el_diag_at(diag, EL_EPARSE, after.line, 0, after.offset,
                             "expected ',' or ')' in %s()", fname);
            goto out;
        }
    }
    if (is_char)
        goto out;
    if ((is_replace && nargs != 3) || (!is_replace && nargs != 1)) {
        err = el_diag_set(diag, EL_EPARSE, "%s() with %zu arguments", fname, nargs);
        goto out;
    }
    for (size_t i = 0; i < nargs; i++) {
        if (av[i].is_null)
            v->is_null = true;
        v->overflow |= av[i].overflow;
        v->invalid |= av[i].invalid;
    }
    if (v->is_null || v->overflow || v->invalid)
        goto out;
    if (!is_replace) {
        bool bad = false;
        err = el_sql_sqlite_unistr(el_buf_str(&args[0]), args[0].len, dst, &bad);
        v->invalid = bad;
    } else {
        const char *s = el_buf_str(&args[0]);
        const char *pat = el_buf_str(&args[1]);
        size_t n = args[0].len, pn = args[1].len;
        size_t i = 0;
        while (i < n && !err) {
            if (pn > 0 && i + pn <= n && memcmp(s + i, pat, pn) == 0) {
                err = el_buf_append(dst, args[2].data ? args[2].data : "", args[2].len);
                i += pn;
            } else {
                size_t k = i + 1;
                while (k < n && (pn == 0 || s[k] != pat[0]))
                    k++;
                err = el_buf_append(dst, s + i, k - i);
                i = k;
            }
        }
    }
    if (err == EL_ELIMIT) {
        v->overflow = true;
        err = EL_OK;
    }
out:
    for (size_t i = 0; i < 3; i++)
        el_buf_free(&args[i]);
    return err;
}

void el_sql_sqlite_real(el_buf *v)
{
    const char *s = el_buf_str(v);
    size_t digits = 0;
    bool real = false, lead = true;
    for (const char *p = s; *p; p++) {
        if (*p == '.' || *p == 'e' || *p == 'E')
            real = true;
        if (*p == 'e' || *p == 'E')
            break;
        if (*p >= '0' && *p <= '9') {
            if (*p != '0')
                lead = false;
            if (!lead)
                digits++;
        }
    }
    if (!real || digits <= 15 || v->len > 64)
        return;
    char *end;
    double x = strtod(s, &end);
    if (*end != '\0')
        return;
    char text[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(text, sizeof text, "%.*g", prec, x);
        if (strtod(text, NULL) == x)
            break;
    }
    el_buf_reset(v);
    if (el_buf_puts(v, text))
        el_buf_reset(v);
}
