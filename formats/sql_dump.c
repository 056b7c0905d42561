/*
 * sql_dump.c - the statements of a SQL dump, walked to the selected
 * table's rows (see sql_dump.h).
 *
 * DESIGN: a small state machine over the token stream. Between statements
 * the reader is IDLE and looks at each statement's first words: CREATE
 * TABLE goes to the catalog (sql_ddl.c), INSERT/REPLACE/COPY decide whether
 * the rows belong to the selected table, everything else is skipped by the
 * lexer without storing a byte. Inside the selected table's INSERT the
 * state is VALUES, inside its COPY block it is COPY, and the rows come from
 * sql_values.c one per next() call. Each column owns one el_buf capped at
 * EL_SQL_VALUE_MAX: values are decoded straight into them and the row's
 * el_values point there. All dialects share this loop; their differences
 * are branches at the few places a dialect has a form of its own (see the
 * hooks in sql_dump.h). Every statement's first words also pass the guard:
 * one that the dialect's dump tool cannot have written (formats/dialect.h)
 * stops the read, since what follows would be decoded by the wrong rules.
 */
#include "formats/sql_dump.h"
#include "formats/sql_dump_impl.h"

#include "formats/dialect.h" /* el_sql_dialects_of: the guard */

#include <stdint.h>  /* SIZE_MAX */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, realloc, free */
#include <string.h>  /* strcmp, strlen, strncmp, strrchr, memcpy */

/* ------------------------------------------------------------ helpers */

static bool ieq(const char *a, const char *b) { return el_sql_word_is(a, b); }

/* Does (schema, name) match the wanted (wschema, wname)? exact or folded. */
static bool name_matches(const char *schema, const char *name, const char *wschema,
                         const char *wname, bool fold)
{
    bool n = fold ? ieq(name, wname) : strcmp(name, wname) == 0;
    if (!n)
        return false;
    if (!wschema || !schema)
        return true; /* an unqualified table in the dump matches any schema */
    return fold ? ieq(schema, wschema) : strcmp(schema, wschema) == 0;
}

static bool same_table(const char *s1, const char *n1, const char *s2, const char *n2)
{
    if (strcmp(n1, n2) != 0)
        return false;
    if (!s1 || !s2)
        return true;
    return strcmp(s1, s2) == 0;
}

static el_err lex_next(el_sql_dump *d, el_sql_tok *tok, el_buf *dst, el_diag *diag)
{
    return el_sql_next(d->lex, tok, dst, diag);
}

/* ------------------------------------------------------ table choice */

uint64_t el_sql_dump_name_compares(const el_sql_dump *d)
{
    return el_sql_catalog_compares(d->cat);
}

static bool wanted(const el_sql_dump *d, const char *schema, const char *name)
{
    return name_matches(schema, name, d->want_schema, d->want_name, false) ||
           name_matches(schema, name, d->want_schema, d->want_name, true);
}

static void free_schema_arrays(el_sql_dump *d)
{
    if (d->vals)
        for (size_t i = 0; i < d->schema.ncols; i++)
            el_buf_free(&d->vals[i]);
    el_schema_clear(&d->schema);
    free(d->vals);
    free(d->null);
    free(d->values);
    free(d->bitcol);
    d->vals = NULL;
    d->null = NULL;
    d->values = NULL;
    d->bitcol = NULL;
}

/* Fixes the schema of the selected table: the statement's column list (cols,
 * may be NULL) or the CREATE TABLE's. */
static el_err build_schema(el_sql_dump *d, const char *schema, const char *name,
                           char **cols, size_t ncols, const el_sql_tok *at, el_diag *diag)
{
    const el_sql_table *def = el_sql_catalog_find(d->cat, schema, name);
    if (def && def->too_wide)
        return el_diag_at(diag, EL_ELIMIT, at->line, 0, at->offset,
                          "table %s has more than %d columns (edgeload's limit)", name,
                          EL_SQL_MAX_COLS);
    if (def && def->ncols == 0)
        def = NULL;
    if (def)
        cols = NULL; /* the table's own column order wins over a statement's */
    if (!def && !cols && d->ngiven) {
        cols = d->given_cols;
        ncols = d->ngiven;
    }
    size_t n = cols ? ncols : def ? def->ncols : 0;
    if (n == 0)
        return el_diag_at(diag, EL_EUSAGE, at->line, 0, at->offset,
                          "rows of table %s have no column names: the dump has neither its "
                          "CREATE TABLE nor column lists (dump with --complete-insert or "
                          "--column-inserts, or name them with --columns)", name);
    el_schema *s = &d->schema;
    s->names = calloc(n, sizeof *s->names);
    s->types = calloc(n, sizeof *s->types);
    s->sql_types = calloc(n, sizeof *s->sql_types);
    s->ncols = n; /* the names are all NULL until set: el_schema_clear frees what there is */
    d->vals = calloc(n, sizeof *d->vals);
    d->null = calloc(n, sizeof *d->null);
    d->values = calloc(n, sizeof *d->values);
    d->bitcol = calloc(n, sizeof *d->bitcol);
    if (!s->names || !s->types || !s->sql_types || !d->vals || !d->null || !d->values ||
        !d->bitcol) {
        el_schema_clear(s);
        return EL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        el_buf_init(&d->vals[i], EL_SQL_VALUE_MAX + 1);
    for (size_t i = 0; i < n; i++) {
        const char *cname = cols ? cols[i] : def->cols[i];
        const char *ctype = NULL;
        if (def) {
            for (size_t k = 0; k < def->ncols && !ctype; k++)
                if (strcmp(def->cols[k], cname) == 0)
                    ctype = def->types[k];
            for (size_t k = 0; k < def->ncols && !ctype; k++)
                if (ieq(def->cols[k], cname))
                    ctype = def->types[k];
        }
        s->names[i] = el_sql_strdup(cname);
        s->sql_types[i] = ctype ? el_sql_strdup(ctype) : NULL;
        if (!s->names[i] || (ctype && !s->sql_types[i]))
            return EL_ENOMEM;
        s->types[i] = el_sql_catalog_coltype(d->cat, d->dialect, ctype);
        d->bitcol[i] = d->dialect == EL_SQL_MYSQL && ctype &&
                       (ieq(ctype, "bit") || strncmp(ctype, "bit(", 4) == 0 ||
                        strncmp(ctype, "BIT(", 4) == 0);
    }
    if (def && !cols) {
        char origin[EL_SQL_NAME_MAX + 64];
        snprintf(origin, sizeof origin, "its CREATE TABLE at %s:%llu",
                 el_input_name(d->in), (unsigned long long)def->line);
        if (!(s->origin = el_sql_strdup(origin)))
            return EL_ENOMEM;
    }
    d->selected = true;
    d->sel_schema = schema ? el_sql_strdup(schema) : NULL;
    d->sel_name = el_sql_strdup(name);
    if ((schema && !d->sel_schema) || !d->sel_name)
        return EL_ENOMEM;
    return EL_OK;
}

/* "a, b, c": the schema's column names, into out (n bytes), cut at n. */
static void list_schema(const el_schema *s, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->ncols && used + 1 < n; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i ? ", " : "", s->names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (s->ncols == 0)
        snprintf(out, n, "(none)");
}

/* Maps a statement's column list onto the schema. */
static el_err build_map(el_sql_dump *d, char **cols, size_t ncols, const el_sql_tok *at,
                        el_diag *diag)
{
    size_t n = cols ? ncols : d->schema.ncols;
    size_t *m = realloc(d->map, (n ? n : 1) * sizeof *m);
    if (!m)
        return EL_ENOMEM;
    d->map = m;
    d->nmap = n;
    for (size_t i = 0; i < n; i++) {
        if (!cols) {
            m[i] = i;
            continue;
        }
        m[i] = NO_COL;
        for (size_t k = 0; k < d->schema.ncols && m[i] == NO_COL; k++)
            if (strcmp(d->schema.names[k], cols[i]) == 0)
                m[i] = k;
        for (size_t k = 0; k < d->schema.ncols && m[i] == NO_COL; k++)
            if (ieq(d->schema.names[k], cols[i]))
                m[i] = k;
        if (m[i] == NO_COL && d->schema.origin) {
            char have[700];
            list_schema(&d->schema, have, sizeof have);
            return el_diag_at(diag, EL_EPARSE, at->line, 0, at->offset,
                              "rows of table %s name column '%s', which %s does not "
                              "declare: edgeload read the columns %s from it", d->sel_name,
                              cols[i], d->schema.origin, have);
        }
        if (m[i] == NO_COL)
            return el_diag_at(diag, EL_EPARSE, at->line, 0, at->offset,
                              "rows of table %s name column '%s', which the table's first "
                              "rows did not have", d->sel_name, cols[i]);
    }
    return EL_OK;
}

/*
 * Rows of (schema, name) follow. Decides whether they are ours: *take is
 * true when they are the selected table's (selecting it if nothing is yet).
 */
static el_err claim(el_sql_dump *d, const char *schema, const char *name, char **cols,
                    size_t ncols, const el_sql_tok *at, bool *take, el_diag *diag)
{
    el_err err;
    *take = false;
    /* sqlite's own bookkeeping (sqlite_sequence, sqlite_stat1) is never
     * picked by itself: .dump writes it for any AUTOINCREMENT table */
    if (!d->want_name && d->dialect == EL_SQL_SQLITE && strncmp(name, "sqlite_", 7) == 0)
        return EL_OK;
    if ((err = el_sql_catalog_note_rows(d->cat, schema, name)))
        return err;
    if (d->want_name && !wanted(d, schema, name))
        return EL_OK;
    if (d->selected && !same_table(d->sel_schema, d->sel_name, schema, name)) {
        if (d->want_name)
            return EL_OK; /* same name in another schema: first one wins */
        char list[900];
        el_sql_catalog_list(d->cat, list, sizeof list);
        return el_diag_at(diag, EL_EUSAGE, at->line, 0, at->offset,
                          "the dump holds rows of several tables (%s): choose one with "
                          "--source-table", list);
    }
    if (!d->selected && (err = build_schema(d, schema, name, cols, ncols, at, diag)))
        return err;
    if ((err = build_map(d, cols, ncols, at, diag)))
        return err;
    *take = true;
    return EL_OK;
}

static void free_cols(char **cols, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(cols[i]);
    free(cols);
}

/* Column list "(a, b, c)" whose '(' was just read; *after: the next token. */
static el_err column_list(el_sql_dump *d, char ***cols, size_t *ncols, el_sql_tok *tok,
                          el_diag *diag)
{
    el_err err;
    *cols = NULL;
    *ncols = 0;
    for (;;) {
        if ((err = lex_next(d, tok, &d->word, diag)))
            goto fail;
        if (tok->kind == EL_TOK_PUNCT && tok->punct == ')' && *ncols == 0)
            break;
        if (!el_sql_is_name(d->dialect, tok)) {
            err = el_sql_expected(tok, "a column name", diag);
            goto fail;
        }
        if (*ncols >= EL_SQL_MAX_COLS) {
            err = el_diag_at(diag, EL_EPARSE, tok->line, 0, tok->offset,
                             "more than %d columns", EL_SQL_MAX_COLS);
            goto fail;
        }
        char **p = realloc(*cols, (*ncols + 1) * sizeof *p);
        if (!p) {
            err = EL_ENOMEM;
            goto fail;
        }
        *cols = p;
        if (!((*cols)[*ncols] = el_sql_strdup(el_buf_str(&d->word)))) {
            err = EL_ENOMEM;
            goto fail;
        }
        (*ncols)++;
        if ((err = lex_next(d, tok, NULL, diag)))
            goto fail;
        if (tok->kind == EL_TOK_PUNCT && tok->punct == ')')
            break;
        if (tok->kind != EL_TOK_PUNCT || tok->punct != ',') {
            err = el_sql_expected(tok, "',' or ')' in a column list", diag);
            goto fail;
        }
    }
    return lex_next(d, tok, &d->word, diag);
fail:
    free_cols(*cols, *ncols);
    *cols = NULL;
    *ncols = 0;
    return err;
}

static bool insert_modifier(const char *w)
{
    static const char *const kw[] = {"into", "ignore", "low_priority", "delayed",
                                     "high_priority", "or", "replace", "rollback", "abort",
                                     "fail"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (ieq(w, kw[i]))
            return true;
    return false;
}

/* The table an INSERT or COPY names: "[schema.]name [(column, ...)]". */
typedef struct target {
    char *schema;  /* NULL when the name is not qualified */
    char *name;    /* NULL when the statement names no table */
    char **cols;   /* NULL when it has no column list */
    size_t ncols;
} target;

/* Reads the target whose first token is *tok; *tok is then the token after
 * it. When *tok is not a name, reads nothing and leaves t->name NULL. On
 * failure too, t holds only what target_free frees. */
static el_err target_read(el_sql_dump *d, el_sql_tok *tok, target *t, el_diag *diag)
{
    el_err err;
    if (!el_sql_is_name(d->dialect, tok))
        return EL_OK;
    if ((err = el_sql_qualified_name(d->lex, d->dialect, &d->word, tok, &t->schema, &t->name,
                                     diag)))
        return err;
    if (tok->kind == EL_TOK_PUNCT && tok->punct == '(')
        return column_list(d, &t->cols, &t->ncols, tok, diag);
    return EL_OK;
}

static void target_free(target *t)
{
    free(t->schema);
    free(t->name);
    free_cols(t->cols, t->ncols);
}

/* After INSERT/REPLACE: *take set when the VALUES of the selected table follow
 * (the next token is the first tuple's '('). */
static el_err insert_header(el_sql_dump *d, const el_sql_tok *start, bool *take, el_diag *diag)
{
    el_sql_tok tok;
    target t = { 0 };
    el_err err;
    bool eof;
    *take = false;
    do {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            return err;
    } while (tok.kind == EL_TOK_WORD && insert_modifier(el_buf_str(&d->word)));
    if ((err = target_read(d, &tok, &t, diag)))
        goto out;
    if (!t.name)
        goto skip;
    /* OVERRIDING SYSTEM VALUE, AS alias ... up to VALUES (mysql: or VALUE) */
    bool mysql = d->dialect == EL_SQL_MYSQL;
    while (tok.kind == EL_TOK_WORD && !ieq(el_buf_str(&d->word), "values") &&
           !(mysql && ieq(el_buf_str(&d->word), "value")) &&
           !ieq(el_buf_str(&d->word), "select") &&
           !ieq(el_buf_str(&d->word), "set") && !ieq(el_buf_str(&d->word), "default")) {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            goto out;
    }
    if (tok.kind != EL_TOK_WORD ||
        !(ieq(el_buf_str(&d->word), "values") || (mysql && ieq(el_buf_str(&d->word), "value"))))
        goto skip;
    if ((err = claim(d, t.schema, t.name, t.cols, t.ncols, start, take, diag)))
        goto out;
    if (*take)
        goto out;
skip:
    if (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF)
        err = el_sql_lex_skip_statement(d->lex, &eof, diag);
    else
        eof = tok.kind == EL_TOK_EOF;
    if (!err && eof)
        err = el_diag_at(diag, EL_ETRUNCATED, start->line, 0, start->offset,
                         "INSERT statement at line %llu is not terminated (truncated dump)",
                         (unsigned long long)start->line);
out:
    target_free(&t);
    return err;
}

/* After COPY (postgres): *take set when the block's lines are ours. */
static el_err copy_header(el_sql_dump *d, const el_sql_tok *start, bool *take, el_diag *diag)
{
    el_sql_tok tok;
    target t = { 0 };
    el_err err;
    bool eof, from_stdin = false, text_format = true;
    *take = false;
    if ((err = lex_next(d, &tok, &d->word, diag)))
        return err;
    if ((err = target_read(d, &tok, &t, diag)))
        goto out;
    if (!t.name)
        goto skip;
    if (tok.kind == EL_TOK_WORD && ieq(el_buf_str(&d->word), "from")) {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            goto out;
        from_stdin = tok.kind == EL_TOK_WORD && ieq(el_buf_str(&d->word), "stdin");
    }
    /* options after stdin: only the text format is read */
    while (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF) {
        if (tok.kind == EL_TOK_WORD &&
            (ieq(el_buf_str(&d->word), "csv") || ieq(el_buf_str(&d->word), "binary")))
            text_format = false;
        if ((err = lex_next(d, &tok, &d->word, diag)))
            goto out;
    }
    if (tok.kind == EL_TOK_EOF) {
        err = el_diag_at(diag, EL_ETRUNCATED, start->line, 0, start->offset,
                         "COPY statement at line %llu is not terminated (truncated dump)",
                         (unsigned long long)start->line);
        goto out;
    }
    if (!from_stdin)
        goto out; /* COPY .. FROM 'file' carries no rows here */
    /* the data starts on the next line */
    {
        bool over = false;
        if ((err = el_sql_lex_take_until(d->lex, "\n", NULL, &over, diag)))
            goto out;
        int c;
        if ((err = el_sql_lex_getc(d->lex, &c, diag)))
            goto out;
    }
    if (!text_format) {
        err = el_diag_at(diag, EL_EPARSE, start->line, 0, start->offset,
                         "COPY %s uses a format other than text, which pg_dump never writes",
                         t.name);
        goto out;
    }
    bool empty;
    if ((err = el_sql_pg_copy_is_empty(d->lex, &empty, diag)))
        goto out;
    if (!empty && (err = claim(d, t.schema, t.name, t.cols, t.ncols, start, take, diag)))
        goto out;
    if (!*take && empty && d->want_name && wanted(d, t.schema, t.name) && !d->selected) {
        /* the chosen table is empty: still fix its schema */
        if ((err = build_schema(d, t.schema, t.name, t.cols, t.ncols, start, diag)))
            goto out;
    }
    if (!*take) {
        uint64_t rows = 0;
        err = el_sql_pg_copy_skip(d->lex, &rows, diag);
    }
    goto out;
skip:
    if (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF)
        err = el_sql_lex_skip_statement(d->lex, &eof, diag);
out:
    target_free(&t);
    return err;
}

/* SET (postgres) whose variable is `var` (its text in d->word2): only
 * standard_conforming_strings matters to us. */
static el_err set_statement(el_sql_dump *d, const el_sql_tok *start, const el_sql_tok *var,
                            el_diag *diag)
{
    el_sql_tok tok = *var;
    el_err err;
    bool eof = false;
    if (tok.kind == EL_TOK_WORD && ieq(el_buf_str(&d->word2), "standard_conforming_strings")) {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            return err;
        if ((tok.kind == EL_TOK_PUNCT && tok.punct == '=') ||
            (tok.kind == EL_TOK_WORD && ieq(el_buf_str(&d->word), "to"))) {
            if ((err = lex_next(d, &tok, &d->word, diag)))
                return err;
            if (tok.kind == EL_TOK_WORD || tok.kind == EL_TOK_STRING)
                el_sql_lex_set_standard_strings(d->lex, !ieq(el_buf_str(&d->word), "off"));
        }
    }
    if (tok.kind == EL_TOK_END)
        return EL_OK;
    if (tok.kind != EL_TOK_EOF && (err = el_sql_lex_skip_statement(d->lex, &eof, diag)))
        return err;
    if (tok.kind == EL_TOK_EOF || eof)
        return el_diag_at(diag, EL_ETRUNCATED, start->line, 0, start->offset,
                          "statement at line %llu is not terminated (truncated dump)",
                          (unsigned long long)start->line);
    return EL_OK;
}

/* ------------------------------------------------------------- guard */

static el_format dialect_format(el_sql_dialect d)
{
    return d == EL_SQL_MYSQL ? EL_FMT_MYSQL : d == EL_SQL_POSTGRES ? EL_FMT_POSTGRES :
                                                                     EL_FMT_SQLITE;
}

/* `what`, at `line`, is a statement or construct of the dialects `fits`
 * only, none of them ours: the dump cannot be what it is read as. Its rows
 * would be rejected one by one, or worse, decoded by the wrong string
 * rules: the read stops here, saying how the dialect was chosen. */
static el_err foreign(const el_sql_dump *d, uint64_t line, const char *what, unsigned fits,
                      el_diag *diag)
{
    el_format f = dialect_format(d->dialect);
    char tools[96] = "", flags[96] = "";
    size_t lt = 0, lf = 0;
    for (el_format g = EL_FMT_MYSQL; g <= EL_FMT_SQLITE; g++) {
        if (!(fits & (1u << g)))
            continue;
        int w = snprintf(tools + lt, sizeof tools - lt, "%s%s", lt ? " or " : "",
                         el_sql_tool_name(g));
        if (w > 0 && (size_t)w < sizeof tools - lt)
            lt += (size_t)w;
        w = snprintf(flags + lf, sizeof flags - lf, "%s--format %s", lf ? " or " : "",
                     el_format_name(g));
        if (w > 0 && (size_t)w < sizeof flags - lf)
            lf += (size_t)w;
    }
    char how[200];
    if (d->why[0])
        snprintf(how, sizeof how, "%s", d->why);
    else
        snprintf(how, sizeof how, "--format %s", el_format_name(f));
    return el_diag_at(diag, EL_EPARSE, line, 0, 0,
                      "'%s' cannot come from %s: this dump is read as %s (%s); if %s wrote it, "
                      "read it with %s", what, el_sql_tool_name(f), el_format_name(f), how, tools,
                      flags);
}

/* The lexer met another dialect's construct (a conditional comment, a
 * backtick name) since the last check. */
static el_err check_lexer(const el_sql_dump *d, el_diag *diag)
{
    uint64_t line;
    const char *what = el_sql_lex_foreign(d->lex, &line);
    if (!what)
        return EL_OK;
    return foreign(d, line, what, EL_DIALECT_MYSQL, diag);
}

/* Statements whose second word says which dialects have them (dialect.h). */
static bool second_word_matters(const char *w)
{
    return ieq(w, "set") || ieq(w, "select") || ieq(w, "lock") || ieq(w, "begin") ||
           ieq(w, "start") || ieq(w, "comment");
}

/*
 * Reads statements until the selected table's rows begin (state VALUES or
 * COPY) or the dump ends (state EOF).
 */
static el_err advance(el_sql_dump *d, el_diag *diag)
{
    el_sql_tok tok;
    el_err err;
    bool eof;
    for (;;) {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            return err;
        if ((err = check_lexer(d, diag)))
            return err;
        if (tok.kind == EL_TOK_EOF) {
            d->state = ST_EOF;
            if (d->txn_open)
                return el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                                  "dump ends inside a transaction (no COMMIT): truncated");
            if (el_sql_lex_saw_header(d->lex) && !el_sql_lex_saw_trailer(d->lex))
                return el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                                  "dump ends without its completion comment: truncated");
            return EL_OK;
        }
        if (tok.kind == EL_TOK_END)
            continue;
        if (tok.kind == EL_TOK_PUNCT && tok.punct == '\\') {
            /* a psql meta-command line (\restrict, \connect): the postgres
             * lexer skips them, no other dialect has them */
            el_sql_tok t2;
            char what[40];
            if ((err = lex_next(d, &t2, &d->word2, diag)))
                return err;
            snprintf(what, sizeof what, "\\%s", t2.kind == EL_TOK_WORD ? el_buf_str(&d->word2) : "");
            return foreign(d, tok.line, what, EL_DIALECT_POSTGRES, diag);
        }
        if (tok.kind != EL_TOK_WORD)
            goto skip;
        const char *w = el_buf_str(&d->word);
        el_sql_tok t2 = {.kind = EL_TOK_PUNCT};
        const char *w2 = "";
        /* INSERT is in every dialect and the hot statement (one a row in
         * sqlite's dumps): the guard's table is for the others */
        bool insert = ieq(w, "insert");
        if (!insert && second_word_matters(w)) {
            if ((err = lex_next(d, &t2, &d->word2, diag)))
                return err;
            if (ieq(w, "set") && t2.kind == EL_TOK_WORD &&
                (ieq(el_buf_str(&d->word2), "session") || ieq(el_buf_str(&d->word2), "local") ||
                 ieq(el_buf_str(&d->word2), "global")) &&
                (err = lex_next(d, &t2, &d->word2, diag)))
                return err;
            w2 = t2.kind == EL_TOK_WORD ? el_buf_str(&d->word2) :
                 t2.kind == EL_TOK_PUNCT && t2.punct == '@' ? "@" : "";
        }
        bool tool;
        unsigned fits = insert ? EL_DIALECT_ALL : el_sql_dialects_of(w, w2, &tool);
        if (!(fits & (1u << dialect_format(d->dialect)))) {
            char what[80];
            snprintf(what, sizeof what, "%s%s%s", w, w2[0] ? " " : "", w2);
            return foreign(d, tok.line, what, fits, diag);
        }
        if (insert || ieq(w, "replace")) {
            bool take;
            err = insert_header(d, &tok, &take, diag);
            el_err guard = check_lexer(d, diag); /* `name` in PostgreSQL: that first */
            if (guard)
                return guard;
            if (err)
                return err;
            if (take) {
                d->state = ST_VALUES;
                return EL_OK;
            }
            continue;
        }
        if (ieq(w, "copy") && d->dialect == EL_SQL_POSTGRES) {
            bool take;
            if ((err = copy_header(d, &tok, &take, diag)))
                return err;
            if (take) {
                d->state = ST_COPY;
                return EL_OK;
            }
            continue;
        }
        if (ieq(w, "set") && d->dialect == EL_SQL_POSTGRES) {
            if ((err = set_statement(d, &tok, &t2, diag)))
                return err;
            continue;
        }
        if (ieq(w, "begin") || (ieq(w, "start") && d->dialect != EL_SQL_POSTGRES))
            d->txn_open = d->dialect == EL_SQL_SQLITE;
        if (ieq(w, "commit") || ieq(w, "end") || ieq(w, "rollback"))
            d->txn_open = false;
        if (second_word_matters(w)) {
            /* the second word is read: the rest of the statement is ours to skip */
            if (t2.kind == EL_TOK_END)
                continue;
            if (t2.kind == EL_TOK_EOF) {
                tok = t2;
                goto truncated;
            }
            goto skip;
        }
        if (ieq(w, "create")) {
            el_sql_tok t3 = tok;
            bool was_table = false;
            for (;;) {
                if ((err = lex_next(d, &t3, &d->word, diag)))
                    return err;
                if (t3.kind != EL_TOK_WORD)
                    break;
                w = el_buf_str(&d->word);
                if (ieq(w, "table")) {
                    if ((err = el_sql_create_table(d->cat, d->lex, d->dialect, &d->word, &d->word2, diag)))
                        return err;
                    was_table = true;
                    break;
                }
                if (d->dialect == EL_SQL_POSTGRES && (ieq(w, "domain") || ieq(w, "type"))) {
                    err = ieq(w, "domain") ?
                        el_sql_create_domain(d->cat, d->lex, d->dialect, &d->word, &d->word2, diag) :
                        el_sql_create_type(d->cat, d->lex, d->dialect, &d->word, &d->word2, diag);
                    if (err)
                        return err;
                    was_table = true;
                    break;
                }
                if (!(ieq(w, "or") || ieq(w, "replace") || ieq(w, "temporary") ||
                      ieq(w, "temp") || ieq(w, "unlogged") || ieq(w, "global") ||
                      ieq(w, "local")))
                    break;
            }
            if (was_table)
                continue;
            if (t3.kind == EL_TOK_END)
                continue;
            if (t3.kind == EL_TOK_EOF) {
                tok = t3;
                goto truncated;
            }
        }
    skip:
        if ((err = el_sql_lex_skip_statement(d->lex, &eof, diag)))
            return err;
        if (eof)
            goto truncated;
    }
truncated:
    d->state = ST_EOF;
    return el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                      "statement at line %llu is not terminated (truncated dump)",
                      (unsigned long long)tok.line);
}

/* ------------------------------------------------------------- reader */

static el_err dump_next(void *self, el_row *row, el_diag *diag)
{
    el_sql_dump *d = self;
    el_err err;
    for (;;) {
        switch (d->state) {
        case ST_EOF:
            return EL_EOF;
        case ST_IDLE:
            if ((err = advance(d, diag)))
                return err;
            break;
        case ST_VALUES:
            return el_sql_dump_next_tuple(d, row, diag);
        case ST_COPY: {
            bool end = false;
            err = el_sql_dump_next_copy_line(d, row, &end, diag);
            if (err || !end)
                return err;
            d->state = ST_IDLE;
            break;
        }
        }
    }
}

static const el_schema *dump_schema(const void *self)
{
    const el_sql_dump *d = self;
    return &d->schema;
}

static void dump_free(void *self)
{
    el_sql_dump *d = self;
    if (!d)
        return;
    free_schema_arrays(d);
    el_sql_catalog_free(d->cat);
    free(d->map);
    free_cols(d->given_cols, d->ngiven);
    free(d->want_schema);
    free(d->want_name);
    free(d->sel_schema);
    free(d->sel_name);
    el_buf_free(&d->word);
    el_buf_free(&d->word2);
    el_buf_free(&d->scratch);
    el_sql_lex_free(d->lex);
    el_input_free(d->in);
    free(d);
}

static const el_reader_ops dump_ops = {dump_next, dump_schema, dump_free};

el_err el_sql_dump_open(el_input *in, el_sql_dialect dialect, const el_reader_opts *opts,
                        const el_reader_ops **ops, void **self, el_diag *diag)
{
    *ops = NULL;
    *self = NULL;
    el_sql_dump *d = calloc(1, sizeof *d);
    if (!d)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    d->dialect = dialect;
    d->in = in; /* for its name; given back to the caller on failure */
    if (opts && opts->format_why)
        snprintf(d->why, sizeof d->why, "%s", opts->format_why);
    el_buf_init(&d->word, EL_SQL_NAME_MAX);
    el_buf_init(&d->word2, EL_SQL_NAME_MAX);
    el_buf_init(&d->scratch, EL_SQL_VALUE_MAX + 1);
    d->cat = el_sql_catalog_new();
    el_err err = d->cat ? el_sql_lex_new(in, dialect, &d->lex) : EL_ENOMEM;
    if (err) {
        d->in = NULL;
        dump_free(d);
        return el_diag_set(diag, err, "out of memory");
    }
    if (opts && opts->source_table && opts->source_table[0]) {
        const char *s = opts->source_table;
        const char *dot = strrchr(s, '.');
        if (dot) {
            size_t n = (size_t)(dot - s);
            d->want_schema = malloc(n + 1);
            if (d->want_schema) {
                memcpy(d->want_schema, s, n);
                d->want_schema[n] = '\0';
            }
            d->want_name = el_sql_strdup(dot + 1);
        } else {
            d->want_name = el_sql_strdup(s);
        }
        if (!d->want_name || (dot && !d->want_schema)) {
            d->in = NULL;
            dump_free(d);
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
    }
    if (opts && opts->columns && opts->ncolumns) {
        d->given_cols = calloc(opts->ncolumns, sizeof *d->given_cols);
        if (!d->given_cols) {
            d->in = NULL;
            dump_free(d);
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
        d->ngiven = opts->ncolumns;
        for (size_t i = 0; i < d->ngiven; i++) {
            if (!(d->given_cols[i] = el_sql_strdup(opts->columns[i] ? opts->columns[i] : ""))) {
                d->in = NULL;
                dump_free(d);
                return el_diag_set(diag, EL_ENOMEM, "out of memory");
            }
        }
    }
    err = advance(d, diag);
    if (!err && d->state == ST_EOF && !d->selected) {
        /* a chosen table with a CREATE TABLE but no rows: its schema, no rows */
        const el_sql_table *def = NULL;
        for (size_t i = 0; d->want_name && i < el_sql_catalog_size(d->cat) && !def; i++) {
            const el_sql_table *t = el_sql_catalog_table(d->cat, i);
            if (wanted(d, t->schema, t->name))
                def = t;
        }
        el_sql_tok at = {.line = el_sql_lex_line(d->lex), .offset = el_sql_lex_offset(d->lex)};
        if (def) {
            err = build_schema(d, def->schema, def->name, NULL, 0, &at, diag);
        } else {
            char list[900];
            el_sql_catalog_list(d->cat, list, sizeof list);
            if (d->want_name)
                err = el_diag_set(diag, EL_EUSAGE, "table %s%s%s not found in the dump (%s%s)",
                                  d->want_schema ? d->want_schema : "",
                                  d->want_schema ? "." : "", d->want_name,
                                  list[0] ? "tables: " : "it holds no tables", list);
            else
                err = el_diag_set(diag, EL_EUSAGE, "the dump holds no rows (%s%s)",
                                  list[0] ? "tables: " : "it holds no tables", list);
        }
    }
    if (err) {
        d->in = NULL; /* the caller keeps the input on failure */
        dump_free(d);
        return err;
    }
    d->in = in;
    *ops = &dump_ops;
    *self = d;
    return EL_OK;
}
