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
 * typing depends on the dialect (BIT is a number in MySQL only), and on
 * the dump's own PostgreSQL domains and types, remembered as they pass.
 * Nothing here knows about rows.
 *
 * Each dialect's table elements are told apart by its own grammar: dump
 * tools quote only what their dialect reserves, so pg_dump writes a column
 * named key or fulltext bare, and MySQL's index words (KEY, FULLTEXT, ...)
 * must not end a PostgreSQL or sqlite column list. A word starts a table
 * constraint only if it is one of that dialect's constraint words, and
 * either that dialect reserves it (sql_keywords.c, taken from the servers)
 * or the token after it continues the constraint.
 */
#include "formats/sql_ddl.h"

#include <stdint.h>  /* SIZE_MAX */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, realloc, free */
#include <string.h>  /* strcmp, strlen, memcpy, memset */

#include "common/vec.h"               /* el_grow */
#include "formats/sql_keywords.h"  /* el_sql_keyword_reserved */

#define EMPTY SIZE_MAX /* an index slot with no key */

/* A hash index over an array of names (open addressing, linear probing), so
 * that a dump with 100,000 CREATE TABLEs costs 100,000 lookups, not 10^10
 * comparisons. The keys live in the array; the index holds positions. */
typedef struct name_index {
    size_t *pos;      /* cap slots: EMPTY, else a position in the array */
    uint64_t *hash;   /* the hash of each occupied slot's key */
    size_t cap, used; /* cap is 0 or a power of two; used <= cap / 2 */
} name_index;

/* A type the dump declares: a domain (base: its base type's text) or a
 * CREATE TYPE (base NULL: written as text). */
typedef struct el_sql_typedef {
    char *schema, *name, *base;
} el_sql_typedef;

struct el_sql_catalog {
    el_sql_table *defs;     /* every CREATE TABLE seen */
    size_t ndefs, capdefs;
    name_index def_index;   /* defs by exact (schema, name) */
    char **seen;            /* tables with rows, as "schema.name" */
    size_t nseen, capseen;
    name_index seen_index;  /* seen by text */
    uint64_t name_compares; /* key comparisons of both indexes */
    el_sql_typedef *types;  /* CREATE DOMAIN / CREATE TYPE, in order */
    size_t ntypes, captypes;
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

#define MY_ (1u << EL_SQL_MYSQL)
#define PG_ (1u << EL_SQL_POSTGRES)
#define SQ_ (1u << EL_SQL_SQLITE)
#define ALL_ (MY_ | PG_ | SQ_)

/* `auto` typing: a declared type's first word, per dialect, and what its
 * values become. docs/types.md is this table with a note per line; keep
 * them in step. A word not listed is TEXT (S), as are arrays ("int[]"). */
static const struct {
    const char *word;
    unsigned dialects;
    el_coltype col;
} type_map[] = {
    /* numbers: N */
    {"tinyint", ALL_, EL_COL_NUMBER}, {"smallint", ALL_, EL_COL_NUMBER},
    {"mediumint", ALL_, EL_COL_NUMBER}, {"int", ALL_, EL_COL_NUMBER},
    {"integer", ALL_, EL_COL_NUMBER}, {"bigint", ALL_, EL_COL_NUMBER},
    {"int2", ALL_, EL_COL_NUMBER}, {"int4", ALL_, EL_COL_NUMBER}, {"int8", ALL_, EL_COL_NUMBER},
    {"serial", ALL_, EL_COL_NUMBER}, {"smallserial", ALL_, EL_COL_NUMBER},
    {"bigserial", ALL_, EL_COL_NUMBER}, {"serial2", ALL_, EL_COL_NUMBER},
    {"serial4", ALL_, EL_COL_NUMBER}, {"serial8", ALL_, EL_COL_NUMBER},
    {"decimal", ALL_, EL_COL_NUMBER}, {"numeric", ALL_, EL_COL_NUMBER},
    {"dec", ALL_, EL_COL_NUMBER}, {"fixed", ALL_, EL_COL_NUMBER},
    {"float", ALL_, EL_COL_NUMBER}, {"float4", ALL_, EL_COL_NUMBER},
    {"float8", ALL_, EL_COL_NUMBER}, {"double", ALL_, EL_COL_NUMBER},
    {"real", ALL_, EL_COL_NUMBER}, {"number", ALL_, EL_COL_NUMBER},
    {"unsigned", ALL_, EL_COL_NUMBER}, {"signed", ALL_, EL_COL_NUMBER},
    {"year", MY_, EL_COL_NUMBER},   /* MySQL YEAR is 1901..2155 */
    {"bit", MY_, EL_COL_NUMBER},    /* MySQL BIT(n): the reader gives its number */
    /* booleans: BOOL */
    {"bool", ALL_, EL_COL_BOOL}, {"boolean", ALL_, EL_COL_BOOL},
    /* bytes: B */
    {"blob", ALL_, EL_COL_BINARY}, {"tinyblob", ALL_, EL_COL_BINARY},
    {"mediumblob", ALL_, EL_COL_BINARY}, {"longblob", ALL_, EL_COL_BINARY},
    {"bytea", ALL_, EL_COL_BINARY}, {"binary", ALL_, EL_COL_BINARY},
    {"varbinary", ALL_, EL_COL_BINARY},
    /* text the dump writes, kept as it is: S */
    {"char", ALL_, EL_COL_TEXT}, {"character", ALL_, EL_COL_TEXT},
    {"varchar", ALL_, EL_COL_TEXT}, {"nchar", ALL_, EL_COL_TEXT},
    {"nvarchar", ALL_, EL_COL_TEXT}, {"text", ALL_, EL_COL_TEXT},
    {"tinytext", MY_, EL_COL_TEXT}, {"mediumtext", MY_, EL_COL_TEXT},
    {"longtext", MY_, EL_COL_TEXT}, {"clob", ALL_, EL_COL_TEXT},
    {"enum", MY_, EL_COL_TEXT}, {"set", MY_, EL_COL_TEXT},
    {"json", ALL_, EL_COL_TEXT}, {"jsonb", PG_, EL_COL_TEXT}, {"xml", PG_, EL_COL_TEXT},
    {"date", ALL_, EL_COL_TEXT}, {"time", ALL_, EL_COL_TEXT}, {"timetz", PG_, EL_COL_TEXT},
    {"datetime", ALL_, EL_COL_TEXT}, {"timestamp", ALL_, EL_COL_TEXT},
    {"timestamptz", PG_, EL_COL_TEXT}, {"year", PG_ | SQ_, EL_COL_TEXT},
    {"interval", PG_, EL_COL_TEXT}, {"uuid", PG_, EL_COL_TEXT},
    {"tsvector", PG_, EL_COL_TEXT}, {"tsquery", PG_, EL_COL_TEXT},
    {"inet", PG_, EL_COL_TEXT}, {"cidr", PG_, EL_COL_TEXT}, {"macaddr", PG_, EL_COL_TEXT},
    {"macaddr8", PG_, EL_COL_TEXT}, {"money", PG_, EL_COL_TEXT},
    {"bit", PG_ | SQ_, EL_COL_TEXT}, {"varbit", PG_, EL_COL_TEXT},
    {"point", PG_, EL_COL_TEXT}, {"line", PG_, EL_COL_TEXT}, {"lseg", PG_, EL_COL_TEXT},
    {"box", PG_, EL_COL_TEXT}, {"path", PG_, EL_COL_TEXT}, {"polygon", PG_, EL_COL_TEXT},
    {"circle", PG_, EL_COL_TEXT}, {"geometry", MY_, EL_COL_TEXT},
    {"int4range", PG_, EL_COL_TEXT}, {"int8range", PG_, EL_COL_TEXT},
    {"numrange", PG_, EL_COL_TEXT}, {"tsrange", PG_, EL_COL_TEXT},
    {"tstzrange", PG_, EL_COL_TEXT}, {"daterange", PG_, EL_COL_TEXT},
    {"oid", PG_, EL_COL_TEXT}, {"pg_lsn", PG_, EL_COL_TEXT},
};

el_coltype el_sql_coltype(el_sql_dialect dialect, const char *sql_type)
{
    char first[32];
    size_t n = 0;
    if (!sql_type)
        return EL_COL_TEXT;
    if (strchr(sql_type, '['))
        return EL_COL_TEXT; /* postgres arrays */
    if (dialect == EL_SQL_POSTGRES && strncmp(sql_type, "pg_catalog.", 11) == 0)
        sql_type += 11; /* pg_dump qualifies a built-in type it must tell from a user's */
    while (*sql_type && n < sizeof first - 1 && *sql_type != ' ' && *sql_type != '(')
        first[n++] = *sql_type++;
    first[n] = '\0';
    for (size_t i = 0; i < sizeof type_map / sizeof *type_map; i++)
        if ((type_map[i].dialects >> dialect) & 1u && ieq(first, type_map[i].word))
            return type_map[i].col;
    if (ieq(first, "long") && strstr(sql_type, "varbinary"))
        return EL_COL_BINARY; /* MySQL's LONG VARBINARY */
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


/*
 * Is the element that starts with word `w` (unquoted), followed by the
 * token `next` (its text in `nw`), a table constraint in this dialect?
 * Each dialect's table-element grammar names its own starting words:
 *   MySQL/MariaDB (CREATE TABLE, "create_definition"): CONSTRAINT, PRIMARY
 *     KEY, UNIQUE, KEY, INDEX, FULLTEXT, SPATIAL, FOREIGN KEY, CHECK, and
 *     MariaDB's PERIOD FOR;
 *   PostgreSQL ("TableElement"): CONSTRAINT, CHECK, UNIQUE, PRIMARY KEY,
 *     EXCLUDE, FOREIGN KEY, LIKE;
 *   sqlite ("table-constraint"): CONSTRAINT, PRIMARY KEY, UNIQUE, CHECK,
 *     FOREIGN KEY.
 * A word the dialect reserves (sql_keywords.c) cannot name a column
 * unquoted, so it starts a constraint wherever it stands. A word it does
 * not reserve (PostgreSQL's EXCLUDE, MariaDB's PERIOD, sqlite's KEY) names
 * a column unless the token after it continues the constraint: `exclude
 * text` is a column, `EXCLUDE USING gist (...)` a constraint.
 */
static bool starts_constraint(el_sql_dialect dialect, const char *w, const el_sql_tok *next,
                              const char *nw)
{
    static const char *const my[] = {"constraint", "primary", "unique", "key", "index",
                                      "fulltext", "spatial", "foreign", "check", "period"};
    static const char *const pg[] = {"constraint", "check", "unique", "primary",
                                     "exclude", "foreign", "like"};
    static const char *const sq[] = {"constraint", "primary", "unique", "check", "foreign"};
    const char *const *kw = dialect == EL_SQL_MYSQL ? my : dialect == EL_SQL_POSTGRES ? pg : sq;
    size_t n = dialect == EL_SQL_MYSQL ? sizeof my / sizeof *my :
               dialect == EL_SQL_POSTGRES ? sizeof pg / sizeof *pg : sizeof sq / sizeof *sq;
    bool listed = false;
    for (size_t i = 0; i < n && !listed; i++)
        listed = ieq(w, kw[i]);
    if (!listed)
        return false;
    if (el_sql_keyword_reserved(dialect, w))
        return true;
    /* not reserved: the next token decides */
    bool nword = next->kind == EL_TOK_WORD;
    bool paren = next->kind == EL_TOK_PUNCT && next->punct == '(';
    if (ieq(w, "primary") || ieq(w, "foreign"))
        return nword && ieq(nw, "key");
    if (ieq(w, "period"))
        return nword && ieq(nw, "for");
    if (ieq(w, "exclude"))
        return paren || (nword && ieq(nw, "using"));
    if (ieq(w, "check"))
        return paren;
    if (ieq(w, "unique"))
        return paren || (nword && (ieq(nw, "key") || ieq(nw, "index") || ieq(nw, "nulls")));
    if (ieq(w, "like"))
        return el_sql_is_name(dialect, next) && !(nword && el_sql_keyword_reserved(dialect, nw));
    /* constraint, key, index, fulltext, spatial: a name or '(' follows a
     * constraint; a column has a type, which is never followed by '(' at
     * once after its name */
    return paren || (nword && (ieq(nw, "key") || ieq(nw, "index") || ieq(nw, "using")));
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
    t.line = tok.line;
    if ((err = el_sql_qualified_name(p->lex, p->dialect, p->word, &tok, &t.schema, &t.name, diag)))
        goto out;
    if (tok.kind != EL_TOK_PUNCT || tok.punct != '(')
        goto skip; /* CREATE TABLE .. AS SELECT, PARTITION OF, LIKE */

    for (;;) {
        /* one column definition or table constraint: its first token, and
         * the one after it, which can decide between the two */
        if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
            goto out;
        if (tok.kind == EL_TOK_PUNCT && tok.punct == ')')
            break;
        bool is_col = el_sql_is_name(p->dialect, &tok);
        char *col = is_col ? el_sql_strdup(el_buf_str(p->word)) : NULL;
        if (is_col && !col) {
            err = EL_ENOMEM;
            goto out;
        }
        bool bare = tok.kind == EL_TOK_WORD;
        el_buf_reset(&type);
        int depth = 0;
        bool first = true, in_type = true;
        for (;;) {
            if ((err = el_sql_next(p->lex, &tok, p->word2, diag))) {
                free(col);
                goto out;
            }
            if (first && col && bare &&
                starts_constraint(p->dialect, col, &tok, el_buf_str(p->word2))) {
                free(col);
                col = NULL;
            }
            if (first)
                in_type = col != NULL;
            first = false;
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

/* ------------------------------------------- CREATE DOMAIN, CREATE TYPE */

/* Remembers a declared type (taking schema, name and base); a name
 * declared again replaces the earlier one. */
static el_err add_type(el_sql_catalog *c, char *schema, char *name, char *base)
{
    for (size_t i = 0; i < c->ntypes; i++) {
        el_sql_typedef *o = &c->types[i];
        if (strcmp(o->name, name) == 0 && (o->schema == NULL) == (schema == NULL) &&
            (!schema || strcmp(o->schema, schema) == 0)) {
            free(o->schema);
            free(o->name);
            free(o->base);
            *o = (el_sql_typedef){schema, name, base};
            return EL_OK;
        }
    }
    el_sql_typedef *g = el_grow(c->types, &c->captypes, c->ntypes + 1, sizeof *g, 8);
    if (!g) {
        free(schema);
        free(name);
        free(base);
        return EL_ENOMEM;
    }
    c->types = g;
    c->types[c->ntypes++] = (el_sql_typedef){schema, name, base};
    return EL_OK;
}

/* After "CREATE DOMAIN" or "CREATE TYPE": the name, and for a domain its
 * base type up to the first word that ends a type (CONSTRAINT, CHECK, NOT,
 * DEFAULT, COLLATE). */
static el_err create_typedef(const ddl *p, bool domain, el_diag *diag)
{
    el_sql_tok tok;
    el_buf type;
    el_buf_init(&type, EL_SQL_NAME_MAX);
    char *schema = NULL, *name = NULL;
    el_err err;
    bool eof;
    if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
        goto out;
    if (!el_sql_is_name(p->dialect, &tok))
        goto skip;
    if ((err = el_sql_qualified_name(p->lex, p->dialect, p->word, &tok, &schema, &name, diag)))
        goto out;
    if (tok.kind == EL_TOK_WORD && ieq(el_buf_str(p->word), "as"))
        if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
            goto out;
    if (domain) {
        int depth = 0;
        while (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF) {
            if (tok.kind == EL_TOK_PUNCT && tok.punct == '(')
                depth++;
            if (tok.kind == EL_TOK_PUNCT && tok.punct == ')')
                depth--;
            if (depth == 0 && tok.kind == EL_TOK_WORD && type.len > 0 &&
                ends_type(el_buf_str(p->word)))
                break;
            if ((err = type_append(p->word, &type, &tok)))
                goto out;
            if ((err = el_sql_next(p->lex, &tok, p->word, diag)))
                goto out;
        }
        if (type.len == 0)
            goto skip; /* malformed: not remembered */
    } else if (tok.kind == EL_TOK_END || tok.kind == EL_TOK_EOF) {
        goto skip; /* a shell type ("CREATE TYPE x;"): nothing to remember */
    }
    char *base = domain ? el_sql_strdup(el_buf_str(&type)) : NULL;
    if (domain && !base) {
        err = EL_ENOMEM;
        goto out;
    }
    err = add_type(p->cat, schema, name, base);
    schema = name = NULL;
    if (err)
        goto out;
skip:
    if (tok.kind != EL_TOK_END && tok.kind != EL_TOK_EOF)
        err = el_sql_lex_skip_statement(p->lex, &eof, diag);
out:
    free(schema);
    free(name);
    el_buf_free(&type);
    return err;
}

el_err el_sql_create_domain(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                            el_buf *word, el_buf *word2, el_diag *diag)
{
    ddl p = {cat, lex, dialect, word, word2};
    return create_typedef(&p, true, diag);
}

el_err el_sql_create_type(el_sql_catalog *cat, el_sql_lex *lex, el_sql_dialect dialect,
                          el_buf *word, el_buf *word2, el_diag *diag)
{
    ddl p = {cat, lex, dialect, word, word2};
    return create_typedef(&p, false, diag);
}

/* The declared type that a type text names ("public.year", "mood"), or
 * NULL: exact names first, then case-folded; an unqualified name matches
 * any schema. */
static const el_sql_typedef *find_type(const el_sql_catalog *c, const char *text)
{
    char buf[EL_SQL_NAME_MAX];
    size_t n = 0;
    for (; text[n] && text[n] != ' ' && text[n] != '(' && n + 1 < sizeof buf; n++)
        buf[n] = text[n];
    buf[n] = '\0';
    if (text[n] && text[n] != ' ' && text[n] != '(')
        return NULL;
    char *dot = strrchr(buf, '.');
    const char *schema = NULL, *name = buf;
    if (dot) {
        *dot = '\0';
        schema = buf;
        name = dot + 1;
    }
    for (int fold = 0; fold < 2; fold++) {
        for (size_t i = c->ntypes; i-- > 0;) {
            const el_sql_typedef *t = &c->types[i];
            if (fold ? !ieq(t->name, name) : strcmp(t->name, name) != 0)
                continue;
            if (schema && t->schema &&
                (fold ? !ieq(schema, t->schema) : strcmp(schema, t->schema) != 0))
                continue;
            return t;
        }
    }
    return NULL;
}

el_coltype el_sql_catalog_coltype(const el_sql_catalog *c, el_sql_dialect dialect,
                                  const char *sql_type)
{
    /* a domain over a domain ...: at most as deep as there are domains (a
     * loop, which no database allows, ends there as TEXT) */
    for (size_t depth = 0; c && sql_type && depth <= c->ntypes; depth++) {
        if (strchr(sql_type, '['))
            return EL_COL_TEXT; /* an array, of a domain too */
        const el_sql_typedef *t = find_type(c, sql_type);
        if (!t)
            return el_sql_coltype(dialect, sql_type);
        if (!t->base)
            return EL_COL_TEXT; /* enum, composite, range */
        sql_type = t->base;
    }
    return c && sql_type ? EL_COL_TEXT : el_sql_coltype(dialect, sql_type);
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
    for (size_t i = 0; i < c->ntypes; i++) {
        free(c->types[i].schema);
        free(c->types[i].name);
        free(c->types[i].base);
    }
    free(c->types);
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
