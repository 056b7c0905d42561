/*
 * dialect.c - which tool wrote a dump, from its preamble (see dialect.h).
 *
 * DESIGN: the old sniffer looked for each tool's markers anywhere in the
 * first 64 KB, MySQL's first, so a pg_dump or sqlite3 dump whose rows held
 * "/" "*!40101 SET" (a column of SQL snippets, a quoted header) was read as
 * MySQL and its backslashes decoded as escapes: values changed without an
 * error. Data can hold anything; what it cannot do is stand where a
 * statement starts. So the sniffer here is a small scanner that walks the
 * dump as statements -- comments, strings, quoted names and dollar bodies
 * skipped as units -- and looks only at what stands between them, up to the
 * first INSERT/REPLACE/COPY, whose values it never reads. It needs no
 * dialect to do that, with one exception it refuses to guess at: a string
 * whose end depends on whether backslash escapes (an odd run of
 * backslashes before a quote); there it stops, with what it has.
 *
 * What a statement says about its dialect is the table below, which the
 * readers' guard (sql_dump.c) reads too: a dialect detected from a
 * statement is never one the guard then refuses.
 */
#include "formats/dialect.h"

#include <stdio.h>   /* snprintf */
#include <string.h>  /* strchr, strcmp, strlen, memcmp */

#include "formats/sql_lex.h"  /* el_sql_word_is */

#define MY EL_DIALECT_MYSQL
#define PG EL_DIALECT_POSTGRES
#define SQ EL_DIALECT_SQLITE

/* Statements by their first words (w2 NULL: any). The first match wins, so
 * a specific w2 comes before its w1's catch-all. `tool`: a dump tool's own
 * preamble statement, which names it outright. */
static const struct {
    const char *w1, *w2;
    unsigned set;
    bool tool;
} statements[] = {
    {"pragma", NULL, SQ, true},         /* sqlite3 .dump: PRAGMA foreign_keys=OFF; */
    {"copy", NULL, PG, false},          /* COPY ... FROM stdin */
    /* pg_dump's preamble: SET ...; SELECT pg_catalog.set_config(...) */
    {"set", "standard_conforming_strings", PG, true},
    {"set", "client_encoding", PG, true},
    {"set", "statement_timeout", PG, true},
    {"set", "lock_timeout", PG, true},
    {"set", "idle_in_transaction_session_timeout", PG, true},
    {"set", "transaction_timeout", PG, true},
    {"set", "check_function_bodies", PG, true},
    {"set", "xmloption", PG, true},
    {"set", "client_min_messages", PG, true},
    {"set", "row_security", PG, true},
    {"set", "escape_string_warning", PG, true},
    {"set", "default_tablespace", PG, true},
    {"set", "default_table_access_method", PG, true},
    {"set", "default_with_oids", PG, true},
    {"set", "search_path", PG, false},
    {"select", "pg_catalog", PG, true},
    /* MySQL/MariaDB: user variables, the server variables mysqldump sets */
    {"set", "@", MY, false},
    {"set", "foreign_key_checks", MY, false},
    {"set", "unique_checks", MY, false},
    {"set", "sql_mode", MY, false},
    {"set", "sql_notes", MY, false},
    {"set", "time_zone", MY, false},
    {"set", "character_set_client", MY, false},
    {"set", "character_set_results", MY, false},
    {"set", "collation_connection", MY, false},
    {"set", "sql_quote_show_create", MY, false},
    {"set", NULL, MY | PG, false},      /* sqlite has no SET */
    {"lock", "tables", MY, false},
    {"unlock", NULL, MY, false},
    {"lock", NULL, MY | PG, false},
    {"use", NULL, MY, false},
    {"delimiter", NULL, MY, false},
    {"replace", NULL, MY | SQ, false},  /* REPLACE INTO */
    {"comment", "on", PG, false},
    {"begin", "transaction", PG | SQ, false},
    {"start", "transaction", MY | PG, false},
};

unsigned el_sql_dialects_of(const char *w1, const char *w2, bool *tool)
{
    *tool = false;
    /* the readers ask for every statement, INSERTs above all (one a row in
     * sqlite's and --skip-extended-insert dumps): most first words start
     * with no letter of the table, and go no further */
    unsigned char c0 = (unsigned char)w1[0];
    if (c0 >= 'A' && c0 <= 'Z')
        c0 = (unsigned char)(c0 - 'A' + 'a');
    if (c0 == '\0' || !strchr("bcdlprsu", c0))
        return EL_DIALECT_ALL;
    for (size_t i = 0; i < sizeof statements / sizeof *statements; i++) {
        if (!el_sql_word_is(w1, statements[i].w1))
            continue;
        if (statements[i].w2 && !el_sql_word_is(w2 ? w2 : "", statements[i].w2))
            continue;
        *tool = statements[i].tool;
        return statements[i].set;
    }
    return EL_DIALECT_ALL;
}

const char *el_sql_tool_name(el_format f)
{
    switch (f) {
    case EL_FMT_MYSQL: return "mysqldump/mariadb-dump";
    case EL_FMT_POSTGRES: return "pg_dump";
    case EL_FMT_SQLITE: return "sqlite3 .dump";
    default: return "no dump tool";
    }
}

void el_sql_dialect_list(unsigned set, const char *conj, char *out, size_t n)
{
    const el_format all[] = {EL_FMT_MYSQL, EL_FMT_POSTGRES, EL_FMT_SQLITE};
    size_t count = 0, len = 0, seen = 0;
    out[0] = '\0';
    for (size_t i = 0; i < 3; i++)
        count += (set >> all[i]) & 1u;
    for (size_t i = 0; i < 3 && len < n; i++) {
        if (!((set >> all[i]) & 1u))
            continue;
        const char *sep = seen == 0 ? "" : seen + 1 == count ? conj : ", ";
        int w = snprintf(out + len, n - len, "%s%s", sep, el_format_name(all[i]));
        if (w < 0)
            return;
        len += (size_t)w;
        seen++;
    }
}

/* ------------------------------------------------------------ scanner */

typedef enum kind {
    K_EOF,     /* end of head */
    K_STOP,    /* cannot go on without knowing the dialect */
    K_END,     /* ';' */
    K_WORD,    /* text in tok.word (lower case, cut at 63 bytes) */
    K_STRING,  /* '..', E'..', $$..$$ */
    K_DQUOTE,  /* ".." */
    K_BACKTICK,
    K_PUNCT
} kind;

typedef struct tok {
    kind kind;
    char punct;
    char word[64];
    size_t start;    /* offset in head of the token's first byte */
    uint64_t line;
} tok;

typedef struct sniffer {
    const unsigned char *p;
    size_t n, i;
    uint64_t line;
    el_sniff *out;
    bool done;        /* out is final */
    bool sql;         /* a statement keyword was seen */
    unsigned cand;    /* the dialects the evidence allows */
    uint64_t ev_line; /* the evidence that last narrowed cand */
    char ev[80];
} sniffer;

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_word(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c >= 0x80;
}

static int at(const sniffer *s, size_t k) { return s->i + k < s->n ? s->p[s->i + k] : -1; }

static void step(sniffer *s, size_t k)
{
    for (size_t j = 0; j < k && s->i < s->n; j++, s->i++)
        if (s->p[s->i] == '\n')
            s->line++;
}

static bool looking_at(const sniffer *s, const char *text)
{
    size_t k = strlen(text);
    return s->n - s->i >= k && memcmp(s->p + s->i, text, k) == 0;
}

/* The bytes [from, to) of head as evidence text: one line, at most 79 bytes. */
static void quote_bytes(const sniffer *s, size_t from, size_t to, char *out, size_t n)
{
    size_t k = 0;
    for (size_t j = from; j < to && j < s->n && k + 1 < n; j++) {
        unsigned char c = s->p[j];
        if (c == '\n' || c == '\r')
            break;
        out[k++] = c == '\t' ? ' ' : (char)c;
    }
    out[k] = '\0';
}

static void decide(sniffer *s, el_format f, uint64_t line, const char *evidence)
{
    s->out->format = f;
    s->out->ambiguous = false;
    s->out->candidates = 1u << f;
    s->out->line = line;
    snprintf(s->out->evidence, sizeof s->out->evidence, "%s", evidence);
    s->done = true;
}

/* Evidence that the dump is in one of `set`. */
static void narrow(sniffer *s, unsigned set, uint64_t line, const char *evidence)
{
    unsigned next = s->cand & set;
    if (next == s->cand || s->done)
        return;
    if (next == 0) {
        s->out->format = EL_FMT_AUTO;
        s->out->ambiguous = true;
        s->out->candidates = 0;
        s->out->line = line;
        snprintf(s->out->evidence, sizeof s->out->evidence, "%s", evidence);
        s->out->line2 = s->ev_line;
        snprintf(s->out->evidence2, sizeof s->out->evidence2, "%s", s->ev);
        s->done = true;
        return;
    }
    s->cand = next;
    s->ev_line = line;
    snprintf(s->ev, sizeof s->ev, "%s", evidence);
}

static el_format only(unsigned set)
{
    if (set == EL_DIALECT_MYSQL)
        return EL_FMT_MYSQL;
    if (set == EL_DIALECT_POSTGRES)
        return EL_FMT_POSTGRES;
    if (set == EL_DIALECT_SQLITE)
        return EL_FMT_SQLITE;
    return EL_FMT_AUTO;
}

/* A line comment that is a dump tool's header decides. */
static void header_comment(sniffer *s)
{
    static const struct {
        const char *text;
        el_format f;
    } headers[] = {
        {"-- MySQL dump", EL_FMT_MYSQL},
        {"-- MariaDB dump", EL_FMT_MYSQL},
        {"-- PostgreSQL database dump", EL_FMT_POSTGRES},
        {"-- PostgreSQL database cluster dump", EL_FMT_POSTGRES},
        {"-- Dumped from database version", EL_FMT_POSTGRES},
        {"-- Dumped by pg_dump", EL_FMT_POSTGRES},
    };
    for (size_t k = 0; k < sizeof headers / sizeof *headers; k++) {
        if (looking_at(s, headers[k].text)) {
            decide(s, headers[k].f, s->line, headers[k].text);
            return;
        }
    }
}

/* Skips whitespace and comments; tool marks among them decide. */
static void skip_space(sniffer *s, bool stmt_start)
{
    while (!s->done && s->i < s->n) {
        int c = at(s, 0), c1 = at(s, 1);
        if (is_space(c)) {
            step(s, 1);
        } else if (c == '-' && c1 == '-') {
            header_comment(s);
            while (s->i < s->n && s->p[s->i] != '\n')
                s->i++;
        } else if (c == '/' && c1 == '*') {
            if (at(s, 2) == '!' || (at(s, 2) == 'M' && at(s, 3) == '!')) {
                char ev[16];
                quote_bytes(s, s->i, s->i + 12, ev, sizeof ev);
                decide(s, EL_FMT_MYSQL, s->line, ev); /* conditional comment */
                return;
            }
            step(s, 2);
            while (s->i < s->n && !(at(s, 0) == '*' && at(s, 1) == '/'))
                step(s, 1);
            step(s, 2);
        } else if (c == '\\' && stmt_start && is_word(c1)) {
            char ev[24];
            size_t e = s->i + 1;
            while (e < s->n && is_word(s->p[e]))
                e++;
            quote_bytes(s, s->i, e, ev, sizeof ev);
            decide(s, EL_FMT_POSTGRES, s->line, ev); /* psql meta-command: \restrict */
            return;
        } else {
            return;
        }
    }
}

/* A quoted run from the quote at s->i. Where backslash escapes would end it
 * elsewhere than quote doubling alone (`esc` unknown, -1), K_STOP. */
static kind quoted(sniffer *s, int q, int esc)
{
    size_t j = s->i + 1, end_plain = 0, end_esc = 0;
    /* doubling only */
    for (size_t k = j; k < s->n; k++) {
        if (s->p[k] == q) {
            if (k + 1 < s->n && s->p[k + 1] == q) {
                k++;
                continue;
            }
            end_plain = k + 1;
            break;
        }
    }
    /* backslash escapes and doubling */
    for (size_t k = j; k < s->n; k++) {
        if (s->p[k] == '\\') {
            k++;
            continue;
        }
        if (s->p[k] == q) {
            if (k + 1 < s->n && s->p[k + 1] == q) {
                k++;
                continue;
            }
            end_esc = k + 1;
            break;
        }
    }
    size_t end = esc == 1 ? end_esc : end_plain;
    if (end == 0 || (esc < 0 && end_plain != end_esc))
        return K_STOP; /* unterminated in head, or its end depends on the dialect */
    step(s, end - s->i);
    return K_STRING;
}

/* $tag$ at s->i: its body skipped. false: not a dollar quote. */
static bool dollar(sniffer *s, kind *out)
{
    size_t j = s->i + 1;
    if (j < s->n && s->p[j] >= '0' && s->p[j] <= '9')
        return false;
    while (j < s->n && j - s->i < 64 && is_word(s->p[j]) && s->p[j] != '$')
        j++;
    if (j >= s->n || s->p[j] != '$')
        return false;
    size_t taglen = j + 1 - s->i;
    const unsigned char *tag = s->p + s->i;
    for (size_t k = j + 1; k + taglen <= s->n; k++) {
        if (s->p[k] == '$' && memcmp(s->p + k, tag, taglen) == 0) {
            step(s, k + taglen - s->i);
            *out = K_STRING;
            return true;
        }
    }
    *out = K_STOP;
    return true;
}

/* A sqlite [name] at s->i (a ']' on the same line, a letter or '_' or a
 * space inside): skipped. false: not one. */
static bool bracket(sniffer *s)
{
    bool name = false;
    for (size_t k = s->i + 1; k < s->n; k++) {
        unsigned char c = s->p[k];
        if (c == '\n' || c == '[')
            return false;
        if (c == ']') {
            if (!name)
                return false;
            step(s, k + 1 - s->i);
            return true;
        }
        name = name || c == '_' || c == ' ' || (c >= 'a' && c <= 'z') ||
               (c >= 'A' && c <= 'Z') || c >= 0x80;
    }
    return false;
}

static void next(sniffer *s, tok *t, bool stmt_start)
{
    memset(t, 0, sizeof *t);
    skip_space(s, stmt_start);
    t->start = s->i;
    t->line = s->line;
    if (s->done || s->i >= s->n) {
        t->kind = K_EOF;
        return;
    }
    int c = at(s, 0), c1 = at(s, 1);
    bool word_before = s->i > 0 && is_word(s->p[s->i - 1]);
    if (c == ';') {
        step(s, 1);
        t->kind = K_END;
    } else if (c == '\'') {
        t->kind = quoted(s, '\'', -1);
    } else if ((c == 'e' || c == 'E') && c1 == '\'' && !word_before) {
        narrow(s, PG, s->line, "E'' string");
        step(s, 1);
        t->kind = quoted(s, '\'', 1);
    } else if (c == '"') {
        t->kind = quoted(s, '"', -1) == K_STOP ? K_STOP : K_DQUOTE;
    } else if (c == '`') {
        t->kind = quoted(s, '`', 0) == K_STOP ? K_STOP : K_BACKTICK;
    } else if (c == '[' && !word_before && bracket(s)) {
        /* sqlite's [name]: MySQL and PostgreSQL have no such quoting (a
         * PostgreSQL array bound, text[] or a[1], follows a word) */
        char e[80];
        quote_bytes(s, t->start, s->i, e, sizeof e);
        narrow(s, SQ, t->line, e);
        t->kind = K_DQUOTE;
    } else if (c == '$' && !word_before && dollar(s, &t->kind)) {
        if (t->kind == K_STRING)
            narrow(s, PG, t->line, "dollar-quoted string");
    } else if (is_word(c)) {
        size_t k = 0;
        while (s->i < s->n && is_word(s->p[s->i])) {
            unsigned char b = s->p[s->i];
            if (k + 1 < sizeof t->word)
                t->word[k++] = (char)(b >= 'A' && b <= 'Z' ? b - 'A' + 'a' : b);
            s->i++;
        }
        t->word[k] = '\0';
        t->kind = K_WORD;
        if (s->i >= s->n)
            t->kind = K_EOF; /* a word cut by the end of head means nothing */
    } else {
        t->kind = K_PUNCT;
        t->punct = (char)c;
        step(s, 1);
    }
}

/* Words that start a statement of some dump. */
static bool statement_keyword(const char *w)
{
    static const char *const kw[] = {
        "create", "insert", "replace", "drop", "set", "begin", "pragma", "lock", "unlock",
        "copy", "start", "use", "select", "alter", "comment", "commit", "delete", "update",
        "grant", "revoke", "truncate", "end", "rollback", "savepoint", "release", "analyze",
        "vacuum", "reindex", "delimiter", "with", "do"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (strcmp(w, kw[i]) == 0)
            return true;
    return false;
}

/* One statement whose first token is t. Returns false to stop sniffing. */
static bool statement(sniffer *s, tok *t)
{
    bool first = !s->sql;
    if (t->kind != K_WORD) {
        if (first)
            return false; /* not SQL */
        while (t->kind != K_END && t->kind != K_EOF && t->kind != K_STOP)
            next(s, t, false);
        return t->kind == K_END;
    }
    /* a keyword must end like one: "create,drop" is a CSV header, and a tab
     * after it a TSV one */
    int after = at(s, 0);
    if (!statement_keyword(t->word) || !(after < 0 || after == ' ' || after == '\n' ||
                                         after == '\r' || after == ';' || after == '(')) {
        if (first)
            return false; /* not SQL */
        while (t->kind != K_END && t->kind != K_EOF && t->kind != K_STOP)
            next(s, t, false);
        return t->kind == K_END;
    }
    s->sql = true;
    char w1[64];
    snprintf(w1, sizeof w1, "%s", t->word);
    size_t from = t->start;
    uint64_t line = t->line;
    bool data = strcmp(w1, "insert") == 0 || strcmp(w1, "replace") == 0 ||
                strcmp(w1, "copy") == 0;

    tok t2;
    next(s, &t2, false);
    if (strcmp(w1, "set") == 0 && t2.kind == K_WORD &&
        (strcmp(t2.word, "session") == 0 || strcmp(t2.word, "local") == 0 ||
         strcmp(t2.word, "global") == 0))
        next(s, &t2, false);
    const char *w2 = t2.kind == K_WORD ? t2.word :
                     t2.kind == K_PUNCT && t2.punct == '@' ? "@" : "";
    bool tool;
    unsigned set = el_sql_dialects_of(w1, w2, &tool);
    char ev[80];
    quote_bytes(s, from, t2.kind == K_WORD ? s->i : t->start + strlen(w1), ev, sizeof ev);
    if (first && strcmp(w1, "begin") == 0 && strcmp(w2, "transaction") == 0)
        tool = true, set = SQ; /* sqlite3 .dump opens with it (PRAGMA first since 3.x) */
    if (tool && (set & (set - 1)) == 0) {
        decide(s, only(set), line, ev);
        return false;
    }
    narrow(s, set, line, ev);

    /* the rest of the statement, token by token */
    bool expect_table = strcmp(w1, "copy") == 0;
    tok prev = {.kind = K_WORD};
    snprintf(prev.word, sizeof prev.word, "%s", w1);
    *t = t2;
    for (;;) {
        if (s->done || t->kind == K_EOF || t->kind == K_STOP)
            return false;
        if (t->kind == K_END)
            return !data;
        char e[80];
        switch (t->kind) {
        case K_BACKTICK:
            quote_bytes(s, t->start, s->i, e, sizeof e);
            narrow(s, MY, t->line, e);
            break;
        case K_DQUOTE:
            if (expect_table) {
                quote_bytes(s, t->start, s->i, e, sizeof e);
                narrow(s, PG | SQ, t->line, e); /* MySQL: a string, not a name */
            }
            break;
        case K_PUNCT:
            if (t->punct == ':' && at(s, 0) == ':')
                narrow(s, PG, t->line, "'::' cast");
            if (t->punct == '=' && prev.kind == K_WORD && strcmp(prev.word, "engine") == 0)
                narrow(s, MY, t->line, "ENGINE=");
            if (t->punct == '.' && prev.kind == K_WORD &&
                (strcmp(prev.word, "public") == 0 || strcmp(prev.word, "pg_catalog") == 0)) {
                snprintf(e, sizeof e, "%s.", prev.word);
                narrow(s, PG, t->line, e);
            }
            break;
        case K_WORD:
            if (strcmp(t->word, "autoincrement") == 0)
                narrow(s, SQ, t->line, "AUTOINCREMENT");
            if (strcmp(t->word, "to") == 0 && prev.kind == K_WORD &&
                strcmp(prev.word, "owner") == 0)
                narrow(s, PG, t->line, "OWNER TO");
            if (data && strcmp(w1, "insert") == 0 && prev.kind == K_WORD &&
                strcmp(prev.word, "insert") == 0) {
                if (strcmp(t->word, "ignore") == 0)
                    narrow(s, MY, t->line, "INSERT IGNORE");
                if (strcmp(t->word, "or") == 0)
                    narrow(s, SQ, t->line, "INSERT OR");
            }
            if (data && (strcmp(t->word, "values") == 0 || strcmp(t->word, "value") == 0 ||
                         strcmp(t->word, "select") == 0))
                return false; /* the data begins: never read past here */
            break;
        default:
            break;
        }
        if (t->kind == K_WORD && (strcmp(t->word, "into") == 0 || strcmp(t->word, "table") == 0 ||
                                  strcmp(t->word, "exists") == 0))
            expect_table = true;
        else if (t->kind != K_PUNCT || t->punct != '.')
            expect_table = expect_table && t->kind == K_WORD &&
                           (strcmp(t->word, "if") == 0 || strcmp(t->word, "not") == 0);
        prev = *t;
        next(s, t, false);
    }
}

void el_sql_sniff(const unsigned char *head, size_t n, el_sniff *out)
{
    memset(out, 0, sizeof *out);
    out->format = EL_FMT_AUTO;
    sniffer s = {.p = head, .n = n, .line = 1, .out = out, .cand = EL_DIALECT_ALL};
    if (n >= 3 && head[0] == 0xEF && head[1] == 0xBB && head[2] == 0xBF)
        s.i = 3;
    tok t;
    do {
        next(&s, &t, true);
        if (s.done || t.kind == K_EOF || t.kind == K_STOP)
            break;
    } while (statement(&s, &t) && !s.done);
    if (s.done || !s.sql)
        return;
    el_format f = only(s.cand);
    if (f != EL_FMT_AUTO) {
        decide(&s, f, s.ev_line, s.ev);
        return;
    }
    out->ambiguous = true;
    out->candidates = s.cand;
    out->line = s.line; /* where the preamble ended: the first data statement */
}
