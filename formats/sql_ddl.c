/*
 * sql_ddl.c - a dump's CREATE TABLEs: the table catalog (see sql_ddl.h).
 *
 * DESIGN: a dump may declare 100,000 tables and repeat a name in another
 * schema, and it is read once, streaming: so each CREATE TABLE is parsed
 * as it passes (the column names and the text of each declared type, up to
 * the first word that ends a type: NOT, DEFAULT, ...), kept in an array
 * with a hash index on (schema, name), and never re-read. The tables that
 * carry rows are remembered the same way, for the messages that list what
 * a dump holds. Column types become el_coltypes here too, since `auto`
 * typing depends on the dialect (BIT is a number in MySQL only). Nothing
 * here knows about rows.
 */
#include "formats/sql_ddl.h"

#include <stdint.h>  /* SIZE_MAX */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, realloc, free */
#include <string.h>  /* strcmp, strlen, memcpy, memset */

#include "common/vec.h"  /* el_grow */

#define EMPTY SIZE_MAX /* an index slot with no key */

/* A hash index over an array of names (open addressing, linear probing), so
 * that a dump with 100,000 CREATE TABLEs costs 100,000 lookups, not 10^10
 * comparisons. The keys live in the array; the index holds positions. */
typedef struct name_index {
    size_t *pos;      /* cap slots: EMPTY, else a position in the array */
    uint64_t *hash;   /* the hash of each occupied slot's key */
    size_t cap, used; /* cap is 0 or a power of two; used <= cap / 2 */
} name_index;

struct el_sql_catalog {
    el_sql_table *defs;     /* every CREATE TABLE seen */
    size_t ndefs, capdefs;
    name_index def_index;   /* defs by exact (schema, name) */
    char **seen;            /* tables with rows, as "schema.name" */
    size_t nseen, capseen;
    name_index seen_index;  /* seen by text */
    uint64_t name_compares; /* key comparisons of both indexes */
};

/* What create_table reads with. */
typedef struct ddl {
    el_sql_catalog *cat;
    el_sql_lex *lex;
    el_sql_dialect dialect;
    el_buf *word, *word2;
} ddl;

char *el_sql_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static bool ieq(const char *a, const char *b) { return el_sql_word_is(a, b); }

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
        pos[i] = EMPTY;
    for (size_t i = 0; i < ix->cap; i++) {
        if (ix->pos[i] == EMPTY)
            continue;
        size_t k = (size_t)ix->hash[i] & (cap - 1);
        while (pos[k] != EMPTY)
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

static void table_free(el_sql_table *t)
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

/* ------------------------------------------------ shared by the statements */

el_err el_sql_next(el_sql_lex *lex, el_sql_tok *tok, el_buf *dst, el_diag *diag)
{
    if (dst)
        el_buf_reset(dst);
    return el_sql_lex_next(lex, tok, dst, diag);
}

el_err el_sql_expected(const el_sql_tok *tok, const char *what, el_diag *diag)
{
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

bool el_sql_is_name(el_sql_dialect dialect, const el_sql_tok *tok)
{
    return tok->kind == EL_TOK_WORD || tok->kind == EL_TOK_QIDENT ||
           (tok->kind == EL_TOK_STRING && dialect != EL_SQL_POSTGRES);
}

el_err el_sql_qualified_name(el_sql_lex *lex, el_sql_dialect dialect, el_buf *word,
                             el_sql_tok *tok, char **schema, char **name, el_diag *diag)
{
    *schema = NULL;
    *name = NULL;
    char *first = el_sql_strdup(el_buf_str(word));
    if (!first)
        return EL_ENOMEM;
    el_err err;
    for (;;) {
        if ((err = el_sql_next(lex, tok, word, diag)))
            goto fail;
        if (tok->kind != EL_TOK_PUNCT || tok->punct != '.')
            break;
        if ((err = el_sql_next(lex, tok, word, diag)))
            goto fail;
        if (!el_sql_is_name(dialect, tok)) {
            err = el_sql_expected(tok, "a name after '.'", diag);
            goto fail;
        }
        free(*schema);
        *schema = first;
        first = el_sql_strdup(el_buf_str(word));
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
static el_err add_def(el_sql_catalog *c, el_sql_table *t)
{
    name_index *ix = &c->def_index;
    if (index_reserve(ix))
        return EL_ENOMEM;
    uint64_t h = table_hash(t->schema, t->name);
    size_t k = (size_t)h & (ix->cap - 1);
    for (; ix->pos[k] != EMPTY; k = (k + 1) & (ix->cap - 1)) {
        if (ix->hash[k] != h)
            continue;
        el_sql_table *o = &c->defs[ix->pos[k]];
        c->name_compares++;
        bool sa = o->schema != NULL, sb = t->schema != NULL;
        if (sa == sb && strcmp(o->name, t->name) == 0 &&
            (!sa || strcmp(o->schema, t->schema) == 0)) {
            table_free(o);
            *o = *t;
            memset(t, 0, sizeof *t);
            return EL_OK;
        }
    }
    if (c->ndefs >= EL_SQL_MAX_TABLES)
        return EL_OK; /* remember no more; later tables get no types */
    el_sql_table *g = el_grow(c->defs, &c->capdefs, c->ndefs + 1, sizeof *g, 16);
    if (!g)
        return EL_ENOMEM;
    c->defs = g;
    index_put(ix, k, h, c->ndefs);
    c->defs[c->ndefs++] = *t;
    memset(t, 0, sizeof *t);
    return EL_OK;
}

static el_err def_push(el_sql_table *t, const char *col, const char *type)
{
    if (t->ncols >= EL_SQL_MAX_COLS) {
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
    t->cols[t->ncols] = el_sql_strdup(col);
    t->types[t->ncols] = type ? el_sql_strdup(type) : NULL;
    if (!t->cols[t->ncols] || (type && !t->types[t->ncols])) {
        free(t->cols[t->ncols]);
        free(t->types[t->ncols]);
        return EL_ENOMEM;
    }
    t->ncols++;
    return EL_OK;
}

/* Appends one token of a type to the type text. */
static el_err type_append(const el_buf *word2, el_buf *type, const el_sql_tok *tok)
{
    el_err err = EL_OK;
    const char *txt = el_buf_str(word2);
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
static el_err create_table(const ddl *p, el_diag *diag)
{
    el_sql_tok tok;
    el_sql_table t = {0};
    el_buf type;
    el_buf_init(&type, EL_SQL_NAME_MAX);
    el_err err;
    bool eof;

    if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
        goto out;
    if (tok.kind == EL_TOK_WORD && ieq(el_buf_str(p->word), "if")) {
        for (int i = 0; i < 2; i++) /* NOT EXISTS */
            if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
                goto out;
        if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
            goto out;
    }
    if (!el_sql_is_name(p->dialect, &tok))
        goto skip;
    if ((err = el_sql_qualified_name(p->lex, p->dialect, p->word, &tok, &t.schema, &t.name, diag)))
        goto out;
    if (tok.kind != EL_TOK_PUNCT || tok.punct != '(')
        goto skip; /* CREATE TABLE .. AS SELECT, PARTITION OF, LIKE */

    for (;;) {
        /* one column definition or table constraint */
        if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
            goto out;
        if (tok.kind == EL_TOK_PUNCT && tok.punct == ')')
            break;
        bool is_col = el_sql_is_name(p->dialect, &tok) &&
                      !(tok.kind == EL_TOK_WORD && is_constraint_start(el_buf_str(p->word)));
        char *col = is_col ? el_sql_strdup(el_buf_str(p->word)) : NULL;
        if (is_col && !col) {
            err = EL_ENOMEM;
            goto out;
        }
        el_buf_reset(&type);
        bool in_type = is_col;
        int depth = 0;
        for (;;) {
            if ((err = el_sql_next(p->lex, &tok, p->word2, diag))) {
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
                ends_type(el_buf_str(p->word2)) && type.len > 0)
                in_type = false;
            if (in_type && (err = type_append(p->word2, &type, &tok))) {
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
    if ((err = add_def(p->cat, &t)))
        goto out;
skip:
    if (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF) {
        if ((err = el_sql_lex_skip_statement(p->lex, &eof, diag)))
            goto out;
    }
out:
    table_free(&t);
    el_buf_free(&type);
    return err;
}

/* ------------------------------------------------------------ lookups */

static const el_sql_table *find_as(const el_sql_catalog *c, const char *schema,
                                    const char *name, bool fold)
{
    const el_sql_table *hit = NULL;
    for (size_t i = 0; i < c->ndefs; i++) {
        const el_sql_table *t = &c->defs[i];
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
const el_sql_table *el_sql_catalog_find(const el_sql_catalog *c, const char *schema,
                                         const char *name)
{
    const el_sql_table *t = find_as(c, schema, name, false);
    return t ? t : find_as(c, schema, name, true);
}

el_err el_sql_catalog_note_rows(el_sql_catalog *c, const char *schema, const char *name)
{
    char full[2 * EL_SQL_NAME_MAX + 2];
    format_table(full, sizeof full, schema, name);
    name_index *ix = &c->seen_index;
    if (index_reserve(ix))
        return EL_ENOMEM;
    uint64_t h = table_hash(NULL, full);
    size_t k = (size_t)h & (ix->cap - 1);
    for (; ix->pos[k] != EMPTY; k = (k + 1) & (ix->cap - 1)) {
        if (ix->hash[k] != h)
            continue;
        c->name_compares++;
        if (strcmp(c->seen[ix->pos[k]], full) == 0)
            return EL_OK;
    }
    if (c->nseen >= EL_SQL_MAX_TABLES)
        return EL_OK;
    char **g = el_grow(c->seen, &c->capseen, c->nseen + 1, sizeof *g, 16);
    if (!g)
        return EL_ENOMEM;
    c->seen = g;
    if (!(c->seen[c->nseen] = el_sql_strdup(full)))
        return EL_ENOMEM;
    index_put(ix, k, h, c->nseen);
    c->nseen++;
    return EL_OK;
}

uint64_t el_sql_catalog_compares(const el_sql_catalog *c)
{
    return c->name_compares;
}

void el_sql_catalog_list(const el_sql_catalog *c, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    char full[2 * EL_SQL_NAME_MAX + 2];
    for (size_t i = 0; i < c->ndefs + c->nseen && len + 1 < n; i++) {
        if (i < c->ndefs) {
            format_table(full, sizeof full, c->defs[i].schema, c->defs[i].name);
        } else {
            snprintf(full, sizeof full, "%s", c->seen[i - c->ndefs]);
            bool dup = false;
            for (size_t k = 0; k < c->ndefs && !dup; k++) {
                char f2[2 * EL_SQL_NAME_MAX + 2];
                format_table(f2, sizeof f2, c->defs[k].schema, c->defs[k].name);
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

el_sql_catalog *el_sql_catalog_new(void)
{
    return calloc(1, sizeof(el_sql_catalog));
}

void el_sql_catalog_free(el_sql_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ndefs; i++)
        table_free(&c->defs[i]);
    free(c->defs);
    for (size_t i = 0; i < c->nseen; i++)
        free(c->seen[i]);
    free(c->seen);
    index_free(&c->def_index);
    index_free(&c->seen_index);
    free(c);
}

size_t el_sql_catalog_size(const el_sql_catalog *c) { return c->ndefs; }

const el_sql_table *el_sql_catalog_table(const el_sql_catalog *c, size_t i)
{
    return i < c->ndefs ? &c->defs[i] : NULL;
}

el_err el_sql_create_table(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                           el_buf *word, el_buf *word2, el_diag *diag)
{
    ddl p = {cat, lex, dialect, word, word2};
    return create_table(&p, diag);
}
