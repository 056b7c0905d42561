/*
 * sql_dump.c - statements of a SQL dump to rows (see sql_dump.h).
 *
 * DESIGN: a small state machine over the token stream. Between statements
 * the reader is IDLE and looks at each statement's first word: CREATE TABLE
 * is parsed for its columns, INSERT/REPLACE/COPY decide whether the rows
 * belong to the selected table, everything else is skipped by the lexer
 * without storing a byte. Inside the selected table's INSERT the state is
 * VALUES (one tuple per next() call, so one gigabyte-long extended INSERT is
 * never held), inside its COPY block it is COPY (one line per call). Each
 * column owns one el_buf capped at EL_SQL_VALUE_MAX: values are decoded by
 * the lexer straight into them and the row's el_values point there. All
 * dialects share this loop; their differences are branches at the few
 * places a dialect has a form of its own (see the hooks in sql_dump.h).
 */
#include "formats/sql_dump.h"
#include "common/vec.h"      /* el_grow */
#include "formats/dialect.h" /* el_sql_dialects_of: the guard */

#include <stdint.h>  /* SIZE_MAX */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, realloc, free */
#include <string.h>  /* strcmp, strdup, strlen, memcpy */

#define NAME_MAX_LEN 1024       /* identifiers, type texts */
#define MAX_TABLES 100000       /* CREATE TABLEs remembered */
#define MAX_COLS 4096           /* columns of one table */
#define MAX_DEPTH 32            /* nested function calls in a value */
#define NO_COL SIZE_MAX

typedef struct table_def {
    char *schema;   /* NULL when unqualified */
    char *name;
    size_t ncols;
    char **cols;
    char **types;
    bool too_wide;  /* declared more than MAX_COLS columns (the rest dropped) */
} table_def;

enum state { ST_IDLE, ST_VALUES, ST_COPY, ST_EOF };

/* A hash index over an array of names (open addressing, linear probing), so
 * that a dump with 100,000 CREATE TABLEs costs 100,000 lookups, not 10^10
 * comparisons. The keys live in the array; the index holds positions. */
typedef struct name_index {
    size_t *pos;      /* cap slots: NO_COL = empty, else a position in the array */
    uint64_t *hash;   /* the hash of each occupied slot's key */
    size_t cap, used; /* cap is 0 or a power of two; used <= cap / 2 */
} name_index;

struct el_sql_dump {
    el_sql_dialect dialect;
    el_input *in;
    el_sql_lex *lex;
    char *want_schema, *want_name;  /* opts->source_table, split; NULL: auto */
    char **given_cols;              /* opts->columns, copied: names for rows */
    size_t ngiven;                  /* of a table the dump never declares */

    table_def *defs;                /* every CREATE TABLE seen */
    size_t ndefs, capdefs;
    name_index def_index;           /* defs by exact (schema, name) */
    char **seen;                    /* tables with data, as "schema.name" */
    size_t nseen, capseen;
    name_index seen_index;          /* seen by text */
    uint64_t name_compares;         /* key comparisons of both indexes */

    bool selected;
    char *sel_schema, *sel_name;
    el_schema schema;
    bool *bitcol;                   /* mysql BIT(n) columns */

    enum state state;
    size_t *map;                    /* statement value i -> schema column */
    size_t nmap;

    el_buf *vals;                   /* one per schema column */
    bool *null;
    el_value *values;
    el_buf word, word2, scratch;
    bool txn_open;                  /* BEGIN without COMMIT (sqlite) */
    char why[160];                  /* how the dialect was chosen ("": --format) */
};

/* ------------------------------------------------------------ helpers */

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static bool ieq(const char *a, const char *b)
{
    return el_sql_word_is(a, b);
}

/* FNV-1a over whether there is a schema, the schema and the name. */
static uint64_t table_hash(const char *schema, const char *name)
{
    uint64_t h = 0xcbf29ce484222325u;
    h = (h ^ (schema ? 1u : 0u)) * 0x100000001b3u;
    for (const char *p = schema ? schema : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3u;
    h = (h ^ 0xffu) * 0x100000001b3u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3u;
    return h;
}

static void index_free(name_index *ix)
{
    free(ix->pos);
    free(ix->hash);
    memset(ix, 0, sizeof *ix);
}

/* Makes room for one more key (doubling, at most half full). */
static el_err index_reserve(name_index *ix)
{
    if (ix->used + 1 <= ix->cap / 2)
        return EL_OK;
    size_t cap = ix->cap ? ix->cap * 2 : 64;
    size_t *pos = malloc(cap * sizeof *pos);
    uint64_t *hash = malloc(cap * sizeof *hash);
    if (!pos || !hash) {
        free(pos);
        free(hash);
        return EL_ENOMEM;
    }
    for (size_t i = 0; i < cap; i++)
        pos[i] = NO_COL;
    for (size_t i = 0; i < ix->cap; i++) {
        if (ix->pos[i] == NO_COL)
            continue;
        size_t k = (size_t)ix->hash[i] & (cap - 1);
        while (pos[k] != NO_COL)
            k = (k + 1) & (cap - 1);
        pos[k] = ix->pos[i];
        hash[k] = ix->hash[i];
    }
    free(ix->pos);
    free(ix->hash);
    ix->pos = pos;
    ix->hash = hash;
    ix->cap = cap;
    return EL_OK;
}

static void index_put(name_index *ix, size_t slot, uint64_t h, size_t position)
{
    ix->pos[slot] = position;
    ix->hash[slot] = h;
    ix->used++;
}

static void free_def(table_def *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        free(t->cols[i]);
        free(t->types[i]);
    }
    free(t->cols);
    free(t->types);
    free(t->schema);
    free(t->name);
    memset(t, 0, sizeof *t);
}

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

static void format_table(char *out, size_t n, const char *schema, const char *name)
{
    if (schema)
        snprintf(out, n, "%s.%s", schema, name);
    else
        snprintf(out, n, "%s", name);
}

el_coltype el_sql_coltype(el_sql_dialect dialect, const char *sql_type)
{
    static const char *const numbers[] = {
        "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "int2", "int4",
        "int8", "serial", "smallserial", "bigserial", "serial2", "serial4", "serial8",
        "decimal", "numeric", "dec", "fixed", "float", "float4", "float8", "double", "real",
        "number", "unsigned", "signed", "year"};
    static const char *const binaries[] = {"blob", "tinyblob", "mediumblob", "longblob",
                                           "bytea", "binary", "varbinary"};
    char first[32];
    size_t n = 0;
    if (!sql_type)
        return EL_COL_TEXT;
    if (strchr(sql_type, '['))
        return EL_COL_TEXT; /* postgres arrays */
    while (*sql_type && n < sizeof first - 1 && *sql_type != ' ' && *sql_type != '(')
        first[n++] = *sql_type++;
    first[n] = '\0';
    if (ieq(first, "bool") || ieq(first, "boolean"))
        return EL_COL_BOOL;
    if (ieq(first, "bit"))
        return dialect == EL_SQL_MYSQL ? EL_COL_NUMBER : EL_COL_TEXT;
    if (ieq(first, "year") && dialect != EL_SQL_MYSQL)
        return EL_COL_TEXT;
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
        if (ieq(first, numbers[i]))
            return EL_COL_NUMBER;
    for (size_t i = 0; i < sizeof binaries / sizeof *binaries; i++)
        if (ieq(first, binaries[i]))
            return EL_COL_BINARY;
    if (ieq(first, "long") && strstr(sql_type, "varbinary"))
        return EL_COL_BINARY;
    return EL_COL_TEXT;
}

static el_err lex_next(el_sql_dump *d, el_sql_tok *tok, el_buf *dst, el_diag *diag)
{
    if (dst)
        el_buf_reset(dst);
    return el_sql_lex_next(d->lex, tok, dst, diag);
}

static el_err syntax(el_sql_dump *d, const el_sql_tok *tok, const char *what, el_diag *diag)
{
    (void)d;
    const char *got = tok->kind == EL_TOK_EOF ? "end of input" :
                      tok->kind == EL_TOK_END ? "end of statement" :
                      tok->kind == EL_TOK_PUNCT ? "punctuation" : "a literal";
    if (tok->kind == EL_TOK_EOF)
        return el_diag_at(diag, EL_ETRUNCATED, tok->line, 0, tok->offset,
                          "dump ends where %s belongs (truncated)", what);
    if (tok->kind == EL_TOK_PUNCT)
        return el_diag_at(diag, EL_EPARSE, tok->line, 0, tok->offset,
                          "expected %s, found '%c'", what, tok->punct);
    return el_diag_at(diag, EL_EPARSE, tok->line, 0, tok->offset, "expected %s, found %s",
                      what, got);
}

static bool is_name_tok(const el_sql_dump *d, const el_sql_tok *tok)
{
    return tok->kind == EL_TOK_WORD || tok->kind == EL_TOK_QIDENT ||
           (tok->kind == EL_TOK_STRING && d->dialect != EL_SQL_POSTGRES);
}

/*
 * Reads a possibly qualified name whose first part is the current token
 * (text in d->word). On return *schema and *name are malloc'd (schema NULL when
 * unqualified; a three-part name keeps its last two) and *after is the token
 * that follows (its text, if any, is lost).
 */
static el_err qualified_name(el_sql_dump *d, el_sql_tok *tok, char **schema, char **name,
                             el_diag *diag)
{
    *schema = NULL;
    *name = NULL;
    char *first = xstrdup(el_buf_str(&d->word));
    if (!first)
        return EL_ENOMEM;
    el_err err;
    for (;;) {
        if ((err = lex_next(d, tok, &d->word, diag)))
            goto fail;
        if (tok->kind != EL_TOK_PUNCT || tok->punct != '.')
            break;
        if ((err = lex_next(d, tok, &d->word, diag)))
            goto fail;
        if (!is_name_tok(d, tok)) {
            err = syntax(d, tok, "a name after '.'", diag);
            goto fail;
        }
        free(*schema);
        *schema = first;
        first = xstrdup(el_buf_str(&d->word));
        if (!first) {
            err = EL_ENOMEM;
            goto fail;
        }
    }
    *name = first;
    return EL_OK;
fail:
    free(first);
    free(*schema);
    *schema = NULL;
    return err;
}

/* ------------------------------------------------------- CREATE TABLE */

static bool is_constraint_start(const char *w)
{
    static const char *const kw[] = {"primary", "unique", "key", "index", "constraint",
                                     "foreign", "check", "fulltext", "spatial", "exclude",
                                     "period", "like"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (ieq(w, kw[i]))
            return true;
    return false;
}

static bool ends_type(const char *w)
{
    static const char *const kw[] = {
        "not", "null", "default", "primary", "unique", "references", "check", "collate",
        "constraint", "auto_increment", "autoincrement", "generated", "comment", "on",
        "character", "charset", "as", "invisible", "visible", "storage", "column_format",
        "key", "identity", "serial", "compressed", "persistent", "virtual", "stored"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (ieq(w, kw[i]))
            return true;
    return false;
}

/* Remembers t (taking what it owns); a table declared again replaces its
 * earlier definition, as the server would have. */
static el_err add_def(el_sql_dump *d, table_def *t)
{
    name_index *ix = &d->def_index;
    if (index_reserve(ix))
        return EL_ENOMEM;
    uint64_t h = table_hash(t->schema, t->name);
    size_t k = (size_t)h & (ix->cap - 1);
    for (; ix->pos[k] != NO_COL; k = (k + 1) & (ix->cap - 1)) {
        if (ix->hash[k] != h)
            continue;
        table_def *o = &d->defs[ix->pos[k]];
        d->name_compares++;
        bool sa = o->schema != NULL, sb = t->schema != NULL;
        if (sa == sb && strcmp(o->name, t->name) == 0 &&
            (!sa || strcmp(o->schema, t->schema) == 0)) {
            free_def(o);
            *o = *t;
            memset(t, 0, sizeof *t);
            return EL_OK;
        }
    }
    if (d->ndefs >= MAX_TABLES)
        return EL_OK; /* remember no more; later tables get no types */
    table_def *p = el_grow(d->defs, &d->capdefs, d->ndefs + 1, sizeof *p, 16);
    if (!p)
        return EL_ENOMEM;
    d->defs = p;
    index_put(ix, k, h, d->ndefs);
    d->defs[d->ndefs++] = *t;
    memset(t, 0, sizeof *t);
    return EL_OK;
}

static el_err def_push(table_def *t, const char *col, const char *type)
{
    if (t->ncols >= MAX_COLS) {
        t->too_wide = true;
        return EL_OK;
    }
    char **c = realloc(t->cols, (t->ncols + 1) * sizeof *c);
    if (!c)
        return EL_ENOMEM;
    t->cols = c;
    char **ty = realloc(t->types, (t->ncols + 1) * sizeof *ty);
    if (!ty)
        return EL_ENOMEM;
    t->types = ty;
    t->cols[t->ncols] = xstrdup(col);
    t->types[t->ncols] = type ? xstrdup(type) : NULL;
    if (!t->cols[t->ncols] || (type && !t->types[t->ncols])) {
        free(t->cols[t->ncols]);
        free(t->types[t->ncols]);
        return EL_ENOMEM;
    }
    t->ncols++;
    return EL_OK;
}

/* Appends one token of a type to the type text. */
static el_err type_append(el_sql_dump *d, el_buf *type, const el_sql_tok *tok)
{
    el_err err = EL_OK;
    const char *txt = el_buf_str(&d->word2);
    size_t len = type->len;
    char last = len ? type->data[len - 1] : '\0';
    switch (tok->kind) {
    case EL_TOK_WORD:
    case EL_TOK_QIDENT:
    case EL_TOK_NUMBER:
        if (len && last != '(' && last != ',' && last != '.' && last != '[')
            err = el_buf_putc(type, ' ');
        if (!err)
            err = el_buf_puts(type, txt);
        break;
    case EL_TOK_STRING:
        if (!(err = el_buf_putc(type, '\'')) && !(err = el_buf_puts(type, txt)))
            err = el_buf_putc(type, '\'');
        break;
    case EL_TOK_PUNCT:
        err = el_buf_putc(type, tok->punct);
        break;
    default:
        break;
    }
    return err == EL_ELIMIT ? EL_OK : err; /* an absurd type text is cut, not fatal */
}

/* After "CREATE ... TABLE [IF NOT EXISTS]": name and column list. */
static el_err create_table(el_sql_dump *d, el_diag *diag)
{
    el_sql_tok tok;
    table_def t = {0};
    el_buf type;
    el_buf_init(&type, NAME_MAX_LEN);
    el_err err;
    bool eof;

    if ((err = lex_next(d, &tok, &d->word, diag)))
        goto out;
    if (tok.kind == EL_TOK_WORD && ieq(el_buf_str(&d->word), "if")) {
        for (int i = 0; i < 2; i++) /* NOT EXISTS */
            if ((err = lex_next(d, &tok, &d->word, diag)))
                goto out;
        if ((err = lex_next(d, &tok, &d->word, diag)))
            goto out;
    }
    if (!is_name_tok(d, &tok))
        goto skip;
    if ((err = qualified_name(d, &tok, &t.schema, &t.name, diag)))
        goto out;
    if (tok.kind != EL_TOK_PUNCT || tok.punct != '(')
        goto skip; /* CREATE TABLE .. AS SELECT, PARTITION OF, LIKE */

    for (;;) {
        /* one column definition or table constraint */
        if ((err = lex_next(d, &tok, &d->word, diag)))
            goto out;
        if (tok.kind == EL_TOK_PUNCT && tok.punct == ')')
            break;
        bool is_col = is_name_tok(d, &tok) &&
                      !(tok.kind == EL_TOK_WORD && is_constraint_start(el_buf_str(&d->word)));
        char *col = is_col ? xstrdup(el_buf_str(&d->word)) : NULL;
        if (is_col && !col) {
            err = EL_ENOMEM;
            goto out;
        }
        el_buf_reset(&type);
        bool in_type = is_col;
        int depth = 0;
        for (;;) {
            if ((err = lex_next(d, &tok, &d->word2, diag))) {
                free(col);
                goto out;
            }
            if (tok.kind == EL_TOK_EOF) {
                free(col);
                err = el_diag_at(diag, EL_ETRUNCATED, tok.line, 0, tok.offset,
                                 "dump ends inside CREATE TABLE %s (truncated)", t.name);
                goto out;
            }
            if (tok.kind == EL_TOK_END) {
                free(col); /* malformed: forget this table's columns */
                goto out;
            }
            if (tok.kind == EL_TOK_PUNCT && depth == 0 && (tok.punct == ',' || tok.punct == ')'))
                break;
            if (tok.kind == EL_TOK_PUNCT && tok.punct == '(')
                depth++;
            if (tok.kind == EL_TOK_PUNCT && tok.punct == ')')
                depth--;
            if (in_type && depth == 0 && tok.kind == EL_TOK_WORD &&
                ends_type(el_buf_str(&d->word2)) && type.len > 0)
                in_type = false;
            if (in_type && (err = type_append(d, &type, &tok))) {
                free(col);
                goto out;
            }
        }
        if (col) {
            err = def_push(&t, col, type.len ? el_buf_str(&type) : NULL);
            free(col);
            if (err)
                goto out;
        }
        if (tok.punct == ')')
            break;
    }
    if ((err = add_def(d, &t)))
        goto out;
skip:
    if (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF) {
        if ((err = el_sql_lex_skip_statement(d->lex, &eof, diag)))
            goto out;
    }
out:
    free_def(&t);
    el_buf_free(&type);
    return err;
}

/* ------------------------------------------------------ table choice */

static const table_def *find_def_as(const el_sql_dump *d, const char *schema,
                                    const char *name, bool fold)
{
    const table_def *hit = NULL;
    for (size_t i = 0; i < d->ndefs; i++) {
        const table_def *t = &d->defs[i];
        if (fold ? !ieq(t->name, name) : strcmp(t->name, name) != 0)
            continue;
        if (schema && t->schema && (fold ? !ieq(schema, t->schema) : strcmp(schema, t->schema) != 0))
            continue;
        hit = t;
        if ((schema == NULL) == (t->schema == NULL))
            break;
    }
    return hit;
}

/* The CREATE TABLE of a table: exact names first, then case-folded (an
 * unquoted name in one statement, a quoted one in another). */
static const table_def *find_def(const el_sql_dump *d, const char *schema, const char *name)
{
    const table_def *t = find_def_as(d, schema, name, false);
    return t ? t : find_def_as(d, schema, name, true);
}

static el_err note_seen(el_sql_dump *d, const char *schema, const char *name)
{
    char full[2 * NAME_MAX_LEN + 2];
    format_table(full, sizeof full, schema, name);
    name_index *ix = &d->seen_index;
    if (index_reserve(ix))
        return EL_ENOMEM;
    uint64_t h = table_hash(NULL, full);
    size_t k = (size_t)h & (ix->cap - 1);
    for (; ix->pos[k] != NO_COL; k = (k + 1) & (ix->cap - 1)) {
        if (ix->hash[k] != h)
            continue;
        d->name_compares++;
        if (strcmp(d->seen[ix->pos[k]], full) == 0)
            return EL_OK;
    }
    if (d->nseen >= MAX_TABLES)
        return EL_OK;
    char **p = el_grow(d->seen, &d->capseen, d->nseen + 1, sizeof *p, 16);
    if (!p)
        return EL_ENOMEM;
    d->seen = p;
    if (!(d->seen[d->nseen] = xstrdup(full)))
        return EL_ENOMEM;
    index_put(ix, k, h, d->nseen);
    d->nseen++;
    return EL_OK;
}

uint64_t el_sql_dump_name_compares(const el_sql_dump *d)
{
    return d->name_compares;
}

/* "a, b, c" of every table declared or with data, for usage errors. */
static void list_tables(const el_sql_dump *d, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    char full[2 * NAME_MAX_LEN + 2];
    for (size_t i = 0; i < d->ndefs + d->nseen && len + 1 < n; i++) {
        if (i < d->ndefs) {
            format_table(full, sizeof full, d->defs[i].schema, d->defs[i].name);
        } else {
            snprintf(full, sizeof full, "%s", d->seen[i - d->ndefs]);
            bool dup = false;
            for (size_t k = 0; k < d->ndefs && !dup; k++) {
                char f2[2 * NAME_MAX_LEN + 2];
                format_table(f2, sizeof f2, d->defs[k].schema, d->defs[k].name);
                dup = strcmp(f2, full) == 0;
            }
            if (dup)
                continue;
        }
        int w = snprintf(out + len, n - len, "%s%s", len ? ", " : "", full);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
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
    const table_def *def = find_def(d, schema, name);
    if (def && def->too_wide)
        return el_diag_at(diag, EL_ELIMIT, at->line, 0, at->offset,
                          "table %s has more than %d columns (edgeload's limit)", name,
                          MAX_COLS);
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
    d->vals = calloc(n, sizeof *d->vals);
    d->null = calloc(n, sizeof *d->null);
    d->values = calloc(n, sizeof *d->values);
    d->bitcol = calloc(n, sizeof *d->bitcol);
    if (!s->names || !s->types || !s->sql_types || !d->vals || !d->null || !d->values ||
        !d->bitcol) {
        free(s->names);
        free(s->types);
        free(s->sql_types);
        s->names = NULL;
        s->types = NULL;
        s->sql_types = NULL;
        return EL_ENOMEM;
    }
    s->ncols = n;
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
        s->names[i] = xstrdup(cname);
        s->sql_types[i] = ctype ? xstrdup(ctype) : NULL;
        if (!s->names[i] || (ctype && !s->sql_types[i]))
            return EL_ENOMEM;
        s->types[i] = el_sql_coltype(d->dialect, ctype);
        d->bitcol[i] = d->dialect == EL_SQL_MYSQL && ctype &&
                       (ieq(ctype, "bit") || strncmp(ctype, "bit(", 4) == 0 ||
                        strncmp(ctype, "BIT(", 4) == 0);
    }
    d->selected = true;
    d->sel_schema = schema ? xstrdup(schema) : NULL;
    d->sel_name = xstrdup(name);
    if ((schema && !d->sel_schema) || !d->sel_name)
        return EL_ENOMEM;
    return EL_OK;
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
    if ((err = note_seen(d, schema, name)))
        return err;
    if (d->want_name && !wanted(d, schema, name))
        return EL_OK;
    if (d->selected && !same_table(d->sel_schema, d->sel_name, schema, name)) {
        if (d->want_name)
            return EL_OK; /* same name in another schema: first one wins */
        char list[900];
        list_tables(d, list, sizeof list);
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
        if (!is_name_tok(d, tok)) {
            err = syntax(d, tok, "a column name", diag);
            goto fail;
        }
        if (*ncols >= MAX_COLS) {
            err = el_diag_at(diag, EL_EPARSE, tok->line, 0, tok->offset,
                             "more than %d columns", MAX_COLS);
            goto fail;
        }
        char **p = realloc(*cols, (*ncols + 1) * sizeof *p);
        if (!p) {
            err = EL_ENOMEM;
            goto fail;
        }
        *cols = p;
        if (!((*cols)[*ncols] = xstrdup(el_buf_str(&d->word)))) {
            err = EL_ENOMEM;
            goto fail;
        }
        (*ncols)++;
        if ((err = lex_next(d, tok, NULL, diag)))
            goto fail;
        if (tok->kind == EL_TOK_PUNCT && tok->punct == ')')
            break;
        if (tok->kind != EL_TOK_PUNCT || tok->punct != ',') {
            err = syntax(d, tok, "',' or ')' in a column list", diag);
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

/* After INSERT/REPLACE: *take set when the VALUES of the selected table follow
 * (the next token is the first tuple's '('). */
static el_err insert_header(el_sql_dump *d, const el_sql_tok *start, bool *take, el_diag *diag)
{
    el_sql_tok tok;
    char *schema = NULL, *name = NULL, **cols = NULL;
    size_t ncols = 0;
    el_err err;
    bool eof;
    *take = false;
    do {
        if ((err = lex_next(d, &tok, &d->word, diag)))
            return err;
    } while (tok.kind == EL_TOK_WORD && insert_modifier(el_buf_str(&d->word)));
    if (!is_name_tok(d, &tok))
        goto skip;
    if ((err = qualified_name(d, &tok, &schema, &name, diag)))
        return err;
    if (tok.kind == EL_TOK_PUNCT && tok.punct == '(') {
        if ((err = column_list(d, &cols, &ncols, &tok, diag)))
            goto out;
    }
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
    if ((err = claim(d, schema, name, cols, ncols, start, take, diag)))
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
    free(schema);
    free(name);
    free_cols(cols, ncols);
    return err;
}

/* After COPY (postgres): *take set when the block's lines are ours. */
static el_err copy_header(el_sql_dump *d, const el_sql_tok *start, bool *take, el_diag *diag)
{
    el_sql_tok tok;
    char *schema = NULL, *name = NULL, **cols = NULL;
    size_t ncols = 0;
    el_err err;
    bool eof, from_stdin = false, text_format = true;
    *take = false;
    if ((err = lex_next(d, &tok, &d->word, diag)))
        return err;
    if (!is_name_tok(d, &tok))
        goto skip;
    if ((err = qualified_name(d, &tok, &schema, &name, diag)))
        return err;
    if (tok.kind == EL_TOK_PUNCT && tok.punct == '(') {
        if ((err = column_list(d, &cols, &ncols, &tok, diag)))
            goto out;
    }
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
                         name);
        goto out;
    }
    bool empty;
    if ((err = el_sql_pg_copy_is_empty(d->lex, &empty, diag)))
        goto out;
    if (!empty && (err = claim(d, schema, name, cols, ncols, start, take, diag)))
        goto out;
    if (!*take && empty && d->want_name && wanted(d, schema, name) && !d->selected) {
        /* the chosen table is empty: still fix its schema */
        if ((err = build_schema(d, schema, name, cols, ncols, start, diag)))
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
    free(schema);
    free(name);
    free_cols(cols, ncols);
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
        if ((err = check_lexer(d, diag)))
            return err;
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
        if (second_word_matters(w)) {
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
        unsigned fits = el_sql_dialects_of(w, w2, &tool);
        if (!(fits & (1u << dialect_format(d->dialect)))) {
            char what[80];
            snprintf(what, sizeof what, "%s%s%s", w, w2[0] ? " " : "", w2);
            return foreign(d, tok.line, what, fits, diag);
        }
        if (ieq(w, "insert") || ieq(w, "replace")) {
            bool take;
            if ((err = insert_header(d, &tok, &take, diag)))
                return err;
            if ((err = check_lexer(d, diag)))
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
                    if ((err = create_table(d, diag)))
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

/* ------------------------------------------------------------ values */

el_sql_lex *el_sql_dump_lex(el_sql_dump *d) { return d->lex; }

el_err el_sql_dump_value(el_sql_dump *d, el_buf *dst, el_sql_val *v, el_sql_tok *after,
                         int depth, el_diag *diag)
{
    el_sql_tok tok;
    el_err err;
    memset(v, 0, sizeof *v);
    if (depth > MAX_DEPTH)
        return el_diag_set(diag, EL_EPARSE, "value nested too deeply");
    if ((err = lex_next(d, &tok, dst, diag)))
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
                return syntax(d, &num, "a number after a sign", diag);
            }
            v->kind = EL_TOK_NUMBER;
            v->overflow = num.overflow;
            break;
        }
        *after = tok;
        return syntax(d, &tok, "a value", diag);
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
        return syntax(d, &tok, "a value", diag);
    }
    if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
        return err;
    /* postgres casts: 'x'::type, including "character varying" and (n) */
    while (d->dialect == EL_SQL_POSTGRES && after->kind == EL_TOK_PUNCT && after->punct == ':') {
        int pdepth = 0;
        if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
            return err;
        if (after->kind != EL_TOK_PUNCT || after->punct != ':')
            return syntax(d, after, "'::'", diag);
        for (;;) {
            if ((err = el_sql_lex_next(d->lex, after, NULL, diag)))
                return err;
            if (after->kind == EL_TOK_EOF || after->kind == EL_TOK_END)
                return syntax(d, after, "a type", diag);
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

static el_err next_tuple(el_sql_dump *d, el_row *row, el_diag *diag)
{
    el_sql_tok tok;
    el_err err;
    if ((err = lex_next(d, &tok, NULL, diag)))
        return err;
    uint64_t line = tok.line, offset = tok.offset;
    clear_values(d);
    if (tok.kind == EL_TOK_EOF)
        return el_diag_at(diag, EL_ETRUNCATED, line, 0, offset,
                          "dump ends inside an INSERT (truncated)");
    if (tok.kind != EL_TOK_PUNCT || tok.punct != '(') {
        syntax(d, &tok, "'(' starting a tuple", diag);
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
        syntax(d, &after, "',' or ')' after a value", diag);
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

static el_err next_copy_line(el_sql_dump *d, el_row *row, bool *end, el_diag *diag)
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
            return next_tuple(d, row, diag);
        case ST_COPY: {
            bool end = false;
            err = next_copy_line(d, row, &end, diag);
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
    for (size_t i = 0; i < d->ndefs; i++)
        free_def(&d->defs[i]);
    free(d->defs);
    for (size_t i = 0; i < d->nseen; i++)
        free(d->seen[i]);
    free(d->seen);
    index_free(&d->def_index);
    index_free(&d->seen_index);
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
    if (opts && opts->format_why)
        snprintf(d->why, sizeof d->why, "%s", opts->format_why);
    el_buf_init(&d->word, NAME_MAX_LEN);
    el_buf_init(&d->word2, NAME_MAX_LEN);
    el_buf_init(&d->scratch, EL_SQL_VALUE_MAX + 1);
    el_err err = el_sql_lex_new(in, dialect, &d->lex);
    if (err) {
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
            d->want_name = xstrdup(dot + 1);
        } else {
            d->want_name = xstrdup(s);
        }
        if (!d->want_name || (dot && !d->want_schema)) {
            dump_free(d);
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
    }
    if (opts && opts->columns && opts->ncolumns) {
        d->given_cols = calloc(opts->ncolumns, sizeof *d->given_cols);
        if (!d->given_cols) {
            dump_free(d);
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
        d->ngiven = opts->ncolumns;
        for (size_t i = 0; i < d->ngiven; i++) {
            if (!(d->given_cols[i] = xstrdup(opts->columns[i] ? opts->columns[i] : ""))) {
                dump_free(d);
                return el_diag_set(diag, EL_ENOMEM, "out of memory");
            }
        }
    }
    err = advance(d, diag);
    if (!err && d->state == ST_EOF && !d->selected) {
        /* a chosen table with a CREATE TABLE but no rows: its schema, no rows */
        const table_def *def = NULL;
        for (size_t i = 0; d->want_name && i < d->ndefs && !def; i++)
            if (wanted(d, d->defs[i].schema, d->defs[i].name))
                def = &d->defs[i];
        el_sql_tok at = {.line = el_sql_lex_line(d->lex), .offset = el_sql_lex_offset(d->lex)};
        if (def) {
            err = build_schema(d, def->schema, def->name, NULL, 0, &at, diag);
        } else {
            char list[900];
            list_tables(d, list, sizeof list);
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
