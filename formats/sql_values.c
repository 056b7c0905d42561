/*
 * sql_values.c - the values of a dump's data statements as rows (see
 * sql_dump.h; the context is sql_dump_impl.h's).
 *
 * DESIGN: one tuple of an INSERT (or one line of a COPY block) per call,
 * decoded by the lexer straight into the columns' capped buffers, so one
 * gigabyte-long extended INSERT is never held. A value is a literal, NULL,
 * a signed number, a MySQL charset introducer (_binary '..'), a sqlite
 * function call (.dump's replace()/char()/unistr(), sqlite_reader.c), with
 * PostgreSQL casts ('x'::type) dropped. Per-column conversions follow (BIT
 * to its number, bytea to its bytes, sqlite REALs to their shortest text).
 * A malformed tuple rejects its row and the rest of its statement, never
 * the dump.
 */
#include "formats/sql_dump.h"
#include "formats/sql_dump_impl.h"

#include <stdio.h>   /* snprintf */
#include <string.h>  /* memset */

#define MAX_DEPTH 32 /* nested function calls in a value */

static bool ieq(const char *a, const char *b) { return el_sql_word_is(a, b); }

el_sql_lex *el_sql_dump_lex(el_sql_dump *d) { return d->lex; }

el_err el_sql_dump_value(el_sql_dump *d, el_buf *dst, el_sql_val *v, el_sql_tok *after,
                         int depth, el_diag *diag)
{
    el_sql_tok tok;
    el_err err;
    memset(v, 0, sizeof *v);
    if (depth > MAX_DEPTH)
        return el_diag_set(diag, EL_EPARSE, "value nested too deeply");
    if ((err = el_sql_next(d->lex, &tok, dst, diag)))
        return err;
    v->kind = tok.kind;
    v->overflow = tok.overflow;
    v->invalid = tok.invalid;
    switch (tok.kind) {
    case EL_TOK_STRING:
    case EL_TOK_HEX:
    case EL_TOK_BITS:
    case EL_TOK_NUMBER:
        break;
    case EL_TOK_PUNCT:
        if (tok.punct == '-' || tok.punct == '+') {
            if (tok.punct == '-' && dst && (err = el_buf_putc(dst, '-')) && err != EL_ELIMIT)
                return err;
            el_sql_tok num;
            if ((err = el_sql_lex_next(d->lex, &num, dst, diag)))
                return err;
            if (num.kind != EL_TOK_NUMBER) {
                *after = num;
                return el_sql_expected(&num, "a number after a sign", diag);
            }
            v->kind = EL_TOK_NUMBER;
            v->overflow = num.overflow;
            break;
        }
        *after = tok;
        return el_sql_expected(&tok, "a value", diag);
    case EL_TOK_WORD: {
        char w[32];
        snprintf(w, sizeof w, "%s", dst ? el_buf_str(dst) : "");
        if (ieq(w, "null") || ieq(w, "default")) {
            v->is_null = true;
            if (dst)
                el_buf_reset(dst);
        } else if (d->dialect == EL_SQL_MYSQL && w[0] == '_') {
            /* charset introducer: _binary '..', _utf8mb4 0x.. */
            return el_sql_dump_value(d, dst, v, after, depth + 1, diag);
        } else if (d->dialect == EL_SQL_SQLITE && el_sql_sqlite_is_function(w)) {
            if ((err = el_sql_sqlite_call(d, w, dst, v, depth + 1, diag)))
                return err;
        } else if (!(ieq(w, "true") || ieq(w, "false"))) {
            *after = tok;
            return el_diag_at(diag, EL_EPARSE, tok.line, 0, tok.offset,
                              "unexpected word '%s' where a value belongs", w);
        }
        break;
    }
    default:
        *after = tok;
        return el_sql_expected(&tok, "a value", diag);
    }
    if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
        return err;
    /* postgres casts: 'x'::type, including "character varying" and (n) */
    while (d->dialect == EL_SQL_POSTGRES && after->kind == EL_TOK_PUNCT && after->punct == ':') {
        int pdepth = 0;
        if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
            return err;
        if (after->kind != EL_TOK_PUNCT || after->punct != ':')
            return el_sql_expected(after, "'::'", diag);
        for (;;) {
            if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
                return err;
            if (after->kind == EL_TOK_EOF || after->kind == EL_TOK_END)
                return el_sql_expected(after, "a type", diag);
            if (after->kind == EL_TOK_PUNCT) {
                if (after->punct == '(')
                    pdepth++;
                else if (after->punct == ')' && pdepth > 0)
                    pdepth--;
                else if (pdepth == 0 && (after->punct == ',' || after->punct == ')' ||
                                         after->punct == ':'))
                    break;
            }
        }
    }
    return EL_OK;
}

/* Per-column conversions once a value is complete. */
static el_err convert(el_sql_dump *d, size_t col, const el_sql_val *v, el_diag *diag,
                      const char **why)
{
    el_buf *b = &d->vals[col];
    *why = NULL;
    if (v->is_null)
        return EL_OK;
    if (v->invalid) {
        *why = "malformed literal";
        return EL_EREJECT;
    }
    if (d->bitcol[col] && (v->kind == EL_TOK_STRING || v->kind == EL_TOK_HEX)) {
        if (el_sql_mysql_bits_to_decimal(b)) {
            *why = "bit value longer than 64 bits";
            return EL_EREJECT;
        }
    } else if (d->dialect == EL_SQL_POSTGRES && d->schema.types[col] == EL_COL_BINARY &&
               v->kind == EL_TOK_STRING) {
        if (el_sql_pg_bytea_decode(b)) {
            *why = "malformed bytea value";
            return EL_EREJECT;
        }
    } else if (d->dialect == EL_SQL_SQLITE && v->kind == EL_TOK_NUMBER) {
        el_sql_sqlite_real(b);
    }
    (void)diag;
    return EL_OK;
}

static void fill_row(el_sql_dump *d, el_row *row, uint64_t line, uint64_t offset)
{
    for (size_t i = 0; i < d->schema.ncols; i++) {
        d->values[i].data = el_buf_str(&d->vals[i]);
        d->values[i].len = d->vals[i].len;
        d->values[i].is_null = d->null[i];
    }
    row->ncols = d->schema.ncols;
    row->values = d->values;
    row->line = line;
    row->offset = offset;
}

static void clear_values(el_sql_dump *d)
{
    for (size_t i = 0; i < d->schema.ncols; i++) {
        el_buf_reset(&d->vals[i]);
        d->null[i] = true;
    }
}

/* Skips the rest of a broken statement and turns err into a row reject. */
static el_err reject_statement(el_sql_dump *d, el_row *row, const el_sql_tok *bad,
                               uint64_t line, uint64_t offset, el_diag *diag)
{
    el_diag keep = diag ? *diag : (el_diag){0};
    bool eof = bad->kind == EL_TOK_EOF;
    d->state = ST_IDLE;
    if (bad->kind != EL_TOK_END && bad->kind != EL_TOK_EOF) {
        el_err err = el_sql_lex_skip_statement(d->lex, &eof, diag);
        if (err)
            return err;
    }
    if (eof)
        return el_diag_at(diag, EL_ETRUNCATED, line, 0, offset,
                          "dump ends inside the INSERT of line %llu (truncated)",
                          (unsigned long long)line);
    fill_row(d, row, line, offset);
    return el_diag_at(diag, EL_EREJECT, keep.line, keep.column, keep.offset,
                      "%s; the rest of the statement is skipped", keep.msg);
}

el_err el_sql_dump_next_tuple(el_sql_dump *d, el_row *row, el_diag *diag)
{
    el_sql_tok tok;
    el_err err;
    if ((err = el_sql_next(d->lex, &tok, NULL, diag)))
        return err;
    uint64_t line = tok.line, offset = tok.offset;
    clear_values(d);
    if (tok.kind == EL_TOK_EOF)
        return el_diag_at(diag, EL_ETRUNCATED, line, 0, offset,
                          "dump ends inside an INSERT (truncated)");
    if (tok.kind != EL_TOK_PUNCT || tok.punct != '(') {
        el_sql_expected(&tok, "'(' starting a tuple", diag);
        return reject_statement(d, row, &tok, line, offset, diag);
    }
    size_t i = 0, bad_col = NO_COL;
    const char *why = NULL;
    el_sql_tok after;
    for (;;) {
        size_t col = i < d->nmap ? d->map[i] : NO_COL;
        el_buf *dst = col != NO_COL ? &d->vals[col] : &d->scratch;
        el_sql_val v;
        after.kind = EL_TOK_PUNCT;
        err = el_sql_dump_value(d, dst, &v, &after, 0, diag);
        if (err == EL_EPARSE)
            return reject_statement(d, row, &after, line, offset, diag);
        if (err)
            return err;
        if (col != NO_COL) {
            d->null[col] = v.is_null;
            if (v.overflow && bad_col == NO_COL) {
                bad_col = col;
                why = "value larger than 400 KB";
            } else if (bad_col == NO_COL) {
                const char *w2;
                if (convert(d, col, &v, diag, &w2) == EL_EREJECT) {
                    bad_col = col;
                    why = w2;
                }
            }
        }
        i++;
        if (after.kind == EL_TOK_PUNCT && after.punct == ',')
            continue;
        if (after.kind == EL_TOK_PUNCT && after.punct == ')')
            break;
        if (after.kind == EL_TOK_EOF)
            return el_diag_at(diag, EL_ETRUNCATED, line, 0, offset,
                              "dump ends inside a tuple (truncated)");
        el_sql_expected(&after, "',' or ')' after a value", diag);
        return reject_statement(d, row, &after, line, offset, diag);
    }
    /* what follows the tuple */
    if ((err = el_sql_lex_next(d->lex, &tok, NULL, diag)))
        return err;
    if (tok.kind == EL_TOK_END) {
        d->state = ST_IDLE;
    } else if (tok.kind == EL_TOK_PUNCT && tok.punct == ',') {
        /* another tuple follows */
    } else if (tok.kind == EL_TOK_EOF) {
        return el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                          "dump ends inside an INSERT (no ';' after the last tuple)");
    } else {
        /* ON DUPLICATE KEY UPDATE, ON CONFLICT DO NOTHING, RETURNING ... */
        bool eof;
        d->state = ST_IDLE;
        if ((err = el_sql_lex_skip_statement(d->lex, &eof, diag)))
            return err;
        if (eof)
            return el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                              "dump ends inside an INSERT (truncated)");
    }
    fill_row(d, row, line, offset);
    if (i != d->nmap)
        return el_diag_at(diag, EL_EREJECT, line, 0, offset,
                          "wrong number of values in tuple of table %s: expected %zu, got %zu",
                          d->sel_name, d->nmap, i);
    if (bad_col != NO_COL)
        return el_diag_at(diag, EL_EREJECT, line, 0, offset, "column '%s': %s",
                          d->schema.names[bad_col], why);
    return EL_OK;
}

el_err el_sql_dump_next_copy_line(el_sql_dump *d, el_row *row, bool *end, el_diag *diag)
{
    uint64_t line = el_sql_lex_line(d->lex), offset = el_sql_lex_offset(d->lex);
    size_t nfields = 0, over = NO_COL;
    clear_values(d);
    el_err err = el_sql_pg_copy_row(d->lex, d->vals, d->null, d->map, d->nmap, &nfields, &over,
                                    end, diag);
    if (err || *end)
        return err;
    fill_row(d, row, line, offset);
    if (nfields != d->nmap)
        return el_diag_at(diag, EL_EREJECT, line, 0, offset,
                          "wrong number of fields in COPY line of table %s: expected %zu, got %zu",
                          d->sel_name, d->nmap, nfields);
    if (over != NO_COL && d->map[over] != NO_COL)
        return el_diag_at(diag, EL_EREJECT, line, 0, offset,
                          "column '%s': value larger than 400 KB",
                          d->schema.names[d->map[over]]);
    for (size_t i = 0; i < d->schema.ncols; i++) {
        if (!d->null[i] && d->schema.types[i] == EL_COL_BINARY &&
            el_sql_pg_bytea_decode(&d->vals[i])) {
            fill_row(d, row, line, offset);
            return el_diag_at(diag, EL_EREJECT, line, 0, offset,
                              "column '%s': malformed bytea value", d->schema.names[i]);
        }
    }
    fill_row(d, row, line, offset);
    return EL_OK;
}
