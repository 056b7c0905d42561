/*
 * sql_fixture.h - helpers shared by the dump reader tests: read a fixture
 * dump through el_reader_open and compare it, value for value and type for
 * type, with the expected file make_fixtures.sh took from the database.
 *
 * Expected file: line 1 column names, line 2 types (text/number/bool/binary),
 * then rows, tab-separated, each value NULL or "x" + hex of its bytes. Rows
 * are compared as sorted multisets (a dump's row order is the table's
 * physical order, the query's is the key order). Number values whose texts
 * differ must parse to the same double (sqlite writes REALs with 20 digits).
 */
#ifndef EL_TEST_SQL_FIXTURE_H
#define EL_TEST_SQL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/buf.h"
#include "formats/reader.h"

static inline const char *fixture_dir(void)
{
    const char *env = getenv("EDGELOAD_FIXTURES");
    if (env)
        return env;
    /* unset: relative to this header, tests/unit/../fixtures */
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return "tests/fixtures";
    snprintf(slash, sizeof dir - (size_t)(slash - dir), "/../fixtures");
    return dir;
}

static inline char *fixture_path(const char *name)
{
    size_t n = strlen(fixture_dir()) + strlen(name) + 8;
    char *p = malloc(n);
    assert_non_null(p);
    snprintf(p, n, "%s/sql/%s", fixture_dir(), name);
    return p;
}

static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    el_buf b;
    el_buf_init(&b, (size_t)64 << 20);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        assert_int_equal(el_buf_append(&b, chunk, n), EL_OK);
    fclose(f);
    *len = b.len;
    return el_buf_take(&b);
}

typedef struct fx_lines {
    char **v;
    size_t n;
} fx_lines;

static inline void lines_push(fx_lines *l, char *s)
{
    l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
    assert_non_null(l->v);
    l->v[l->n++] = s;
}

static inline void lines_free(fx_lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline const char *type_name(el_coltype t)
{
    switch (t) {
    case EL_COL_TEXT: return "text";
    case EL_COL_NUMBER: return "number";
    case EL_COL_BOOL: return "bool";
    case EL_COL_BINARY: return "binary";
    }
    return "?";
}

static inline char *encode_row(const el_row *row)
{
    el_buf b;
    el_buf_init(&b, (size_t)16 << 20);
    for (size_t i = 0; i < row->ncols; i++) {
        if (i)
            assert_int_equal(el_buf_putc(&b, '\t'), EL_OK);
        if (row->values[i].is_null) {
            assert_int_equal(el_buf_puts(&b, "NULL"), EL_OK);
            continue;
        }
        assert_int_equal(el_buf_putc(&b, 'x'), EL_OK);
        for (size_t k = 0; k < row->values[i].len; k++)
            assert_int_equal(el_buf_printf(&b, "%02X",
                                           (unsigned char)row->values[i].data[k]), EL_OK);
    }
    return el_buf_take(&b);
}

/* hex text to a NUL-terminated string (for number comparison). */
static inline char *unhex(const char *h, size_t n)
{
    char *s = malloc(n / 2 + 1);
    assert_non_null(s);
    for (size_t i = 0; i + 1 < n; i += 2) {
        unsigned v;
        sscanf(h + i, "%2x", &v);
        s[i / 2] = (char)v;
    }
    s[n / 2] = '\0';
    return s;
}

/* Field k of a tab-separated line: start and length. */
static inline const char *field(const char *line, size_t k, size_t *len)
{
    for (size_t i = 0; i < k; i++) {
        line = strchr(line, '\t');
        assert_non_null(line);
        line++;
    }
    const char *e = strchr(line, '\t');
    *len = e ? (size_t)(e - line) : strlen(line);
    return line;
}

static inline bool numbers_equal(const char *a, size_t an, const char *b, size_t bn)
{
    if (an < 1 || bn < 1 || a[0] != 'x' || b[0] != 'x')
        return false;
    char *x = unhex(a + 1, an - 1), *y = unhex(b + 1, bn - 1);
    char *ex, *ey;
    double dx = strtod(x, &ex), dy = strtod(y, &ey);
    bool ok = *ex == '\0' && *ey == '\0' && dx == dy;
    free(x);
    free(y);
    return ok;
}

static inline bool rows_equal(const char *got, const char *want, const char *types_line, size_t ncols)
{
    if (strcmp(got, want) == 0)
        return true;
    for (size_t k = 0; k < ncols; k++) {
        size_t gl, wl, tl;
        const char *g = field(got, k, &gl), *w = field(want, k, &wl);
        const char *t = field(types_line, k, &tl);
        if (gl == wl && memcmp(g, w, gl) == 0)
            continue;
        if (tl == 6 && memcmp(t, "number", 6) == 0 && numbers_equal(g, gl, w, wl))
            continue;
        return false;
    }
    return true;
}

/* Reads `dump` (selecting `table`, may be NULL) and compares with `expected`. */
static inline void check_fixture(el_format fmt, const char *dump, const char *table,
                          const char *expected)
{
    char *epath = fixture_path(expected), *dpath = fixture_path(dump);
    size_t elen;
    char *etext = slurp(epath, &elen);
    fx_lines want = {0}, got = {0};
    char *save = NULL;
    char *header = strtok_r(etext, "\n", &save);
    char *types = strtok_r(NULL, "\n", &save);
    assert_non_null(header);
    assert_non_null(types);
    for (char *l = strtok_r(NULL, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *c = strdup(l);
        assert_non_null(c);
        for (char *q = c; *q; q++) /* postgres hex is lower case, ours upper */
            if (*q >= 'a' && *q <= 'f')
                *q = (char)(*q - 'a' + 'A');
        lines_push(&want, c);
    }

    el_reader_opts opts = {0};
    opts.format = fmt;
    opts.source_table = table;
    el_reader *r = NULL;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_reader_open(dpath, &opts, &r, &d);
    if (err)
        fail_msg("%s: open failed: %s (%s)", dump, el_strerror(err), d.msg);
    const el_schema *s = el_reader_schema(r);

    /* names and types, column by column */
    el_buf names, tnames;
    el_buf_init(&names, 1 << 20);
    el_buf_init(&tnames, 1 << 20);
    for (size_t i = 0; i < s->ncols; i++) {
        assert_int_equal(el_buf_printf(&names, "%s%s", i ? "\t" : "", s->names[i]), EL_OK);
        assert_int_equal(el_buf_printf(&tnames, "%s%s", i ? "\t" : "", type_name(s->types[i])),
                         EL_OK);
    }
    assert_string_equal(el_buf_str(&names), header);
    assert_string_equal(el_buf_str(&tnames), types);

    el_row row;
    while ((err = el_reader_next(r, &row, &d)) == EL_OK) {
        assert_int_equal(row.ncols, s->ncols);
        assert_true(row.line >= 1);
        lines_push(&got, encode_row(&row));
    }
    if (err == EL_EREJECT)
        fail_msg("%s: row rejected: %s at line %llu", dump, d.msg, (unsigned long long)d.line);
    if (err != EL_EOF)
        fail_msg("%s: next failed: %s (%s) at line %llu", dump, el_strerror(err), d.msg,
                 (unsigned long long)d.line);
    assert_int_equal(got.n, want.n);
    qsort(got.v, got.n, sizeof *got.v, cmp_str);
    qsort(want.v, want.n, sizeof *want.v, cmp_str);
    for (size_t i = 0; i < got.n; i++) {
        if (!rows_equal(got.v[i], want.v[i], types, s->ncols))
            fail_msg("%s: row %zu differs\n got:  %.300s\n want: %.300s", dump, i, got.v[i],
                     want.v[i]);
    }
    el_reader_free(r);
    el_buf_free(&names);
    el_buf_free(&tnames);
    lines_free(&want);
    lines_free(&got);
    free(etext);
    free(epath);
    free(dpath);
}

/* Reads a whole in-memory dump; returns the first non-OK code (EL_EOF at a
 * clean end) and how many rows came before it, rejects counted separately. */
typedef struct mem_result {
    el_err open_err;
    el_err end_err;
    size_t rows, rejects;
    el_diag diag;         /* of the first reject, or of the final error */
    el_buf text;          /* rows encoded, one line each */
} mem_result;

static inline void read_mem(el_reader_open_fn open_fn, const char *sql, const char *table,
                     mem_result *res)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    memset(res, 0, sizeof *res);
    el_buf_init(&res->text, 1 << 24);
    assert_int_equal(el_input_open_mem(sql, strlen(sql), "mem.sql", &in, &d), EL_OK);
    el_reader_opts opts = {0};
    opts.source_table = table;
    const el_reader_ops *ops = NULL;
    void *self = NULL;
    res->open_err = open_fn(in, &opts, &ops, &self, &d);
    if (res->open_err) {
        res->diag = d;
        el_input_free(in);
        return;
    }
    el_row row;
    el_err err;
    bool first_reject = true;
    for (;;) {
        el_diag_clear(&d);
        err = ops->next(self, &row, &d);
        if (err == EL_EREJECT) {
            if (first_reject)
                res->diag = d;
            first_reject = false;
            res->rejects++;
            continue;
        }
        if (err)
            break;
        char *line = encode_row(&row);
        assert_int_equal(el_buf_printf(&res->text, "%s\n", line), EL_OK);
        free(line);
        res->rows++;
    }
    res->end_err = err;
    if (err != EL_EOF)
        res->diag = d;
    ops->free(self);
}

static inline void mem_free(mem_result *r) { el_buf_free(&r->text); }

/* Hex-encodes s for comparing with mem_result.text. */
static inline char *hx(const char *s)
{
    el_buf b;
    el_buf_init(&b, 1 << 20);
    assert_int_equal(el_buf_putc(&b, 'x'), EL_OK);
    for (; *s; s++)
        assert_int_equal(el_buf_printf(&b, "%02X", (unsigned char)*s), EL_OK);
    return el_buf_take(&b);
}

#endif
