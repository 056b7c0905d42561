/*
 * test_csv_reader.c - CSV/TSV through el_reader: header and --columns,
 * RFC 4180 quoting, CRLF, BOM, delimiters, the NULL rules, rejects for wrong
 * column counts, line numbers and byte offsets, truncation, limits, and
 * format detection from the name.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free, mkstemps */
#include <string.h>  /* memcpy, strlen, strstr */
#include <unistd.h>  /* write, close, unlink */
#include <yajl/yajl_tree.h> /* the INTO OUTFILE fixtures' expected values */
#include <zstd.h>    /* a .csv.zst input */

#include "formats/reader.h"
#include "tests/csv_diff.h"  /* the fast path against libcsv */

/* ---- helpers ---- */

static el_reader *open_mem_len(const char *name, const char *data, size_t len,
                               const el_reader_opts *opts)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(data, len, name, &in, &d), EL_OK);
    el_reader *r = NULL;
    el_err err = el_reader_open_input(in, opts, &r, &d);
    if (err)
        fail_msg("open %s: %s (%d)", name, d.msg, err);
    assert_non_null(r);
    return r;
}

static el_reader *open_mem(const char *name, const char *data, const el_reader_opts *opts)
{
    return open_mem_len(name, data, strlen(data), opts);
}

static el_err open_mem_err(const char *name, const char *data, const el_reader_opts *opts,
                           el_diag *d)
{
    el_input *in = NULL;
    el_diag_clear(d);
    assert_int_equal(el_input_open_mem(data, strlen(data), name, &in, d), EL_OK);
    el_reader *r = (el_reader *)&r;
    el_err err = el_reader_open_input(in, opts, &r, d);
    assert_int_not_equal(err, EL_OK);
    assert_null(r);
    return err;
}

static void check_value(const el_row *row, size_t i, const char *want)
{
    assert_true(i < row->ncols);
    const el_value *v = &row->values[i];
    if (!want) {
        assert_true(v->is_null);
        assert_int_equal(v->len, 0);
        return;
    }
    assert_false(v->is_null);
    assert_int_equal(v->len, strlen(want));
    assert_memory_equal(v->data, want, v->len);
    assert_int_equal(v->data[v->len], '\0');
}

/* Next row must be OK with these values (NULL pointer = SQL NULL). */
static void check_row(el_reader *r, uint64_t line, size_t n, const char *const *vals)
{
    el_row row;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_reader_next(r, &row, &d);
    if (err != EL_OK)
        fail_msg("expected a row at line %llu, got error %d: %s", (unsigned long long)line,
                 err, d.msg);
    assert_int_equal(row.line, line);
    assert_int_equal(row.ncols, n);
    for (size_t i = 0; i < n; i++)
        check_value(&row, i, vals[i]);
}

#define ROW(r, line, ...)                                                    \
    do {                                                                     \
        const char *const vals_[] = { __VA_ARGS__ };                         \
        check_row((r), (line), sizeof vals_ / sizeof *vals_, vals_);        \
    } while (0)

static void check_eof(el_reader *r)
{
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_EOF);
    assert_int_equal(el_reader_next(r, &row, &d), EL_EOF);  /* and stays there */
}

static void check_names(el_reader *r, size_t n, const char *const *names)
{
    const el_schema *s = el_reader_schema(r);
    assert_int_equal(s->ncols, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(s->names[i], names[i]);
        assert_int_equal(s->types[i], EL_COL_TEXT);
    }
}

#define NAMES(r, ...)                                                        \
    do {                                                                     \
        const char *const names_[] = { __VA_ARGS__ };                        \
        check_names((r), sizeof names_ / sizeof *names_, names_);           \
    } while (0)

static const el_reader_opts no_opts;

/* ---- tests ---- */

static void test_header_and_rows(void **state)
{
    (void)state;
    el_reader *r = open_mem("follows.csv",
                            "follower_id,followee_id,created_at\n"
                            "alice,bob,2024-06-20 16:13:20\n"
                            "alice,carol,1718900100\n", &no_opts);
    assert_int_equal(el_reader_format(r), EL_FMT_CSV);
    assert_string_equal(el_input_name(el_reader_input(r)), "follows.csv");
    NAMES(r, "follower_id", "followee_id", "created_at");
    ROW(r, 2, "alice", "bob", "2024-06-20 16:13:20");
    ROW(r, 3, "alice", "carol", "1718900100");
    check_eof(r);
    el_reader_free(r);
    el_reader_free(NULL);
}

static void test_last_line_without_newline(void **state)
{
    (void)state;
    el_reader *r = open_mem("x.csv", "a,b\n1,2\n3,4", &no_opts);
    ROW(r, 2, "1", "2");
    ROW(r, 3, "3", "4");
    check_eof(r);
    el_reader_free(r);
}

static void test_columns_option_headerless(void **state)
{
    (void)state;
    const char *const cols[] = { "src", "dst" };
    el_reader_opts o = { .columns = cols, .ncolumns = 2 };
    el_reader *r = open_mem("edges.csv", "a,b\nc,d\n", &o);
    NAMES(r, "src", "dst");
    ROW(r, 1, "a", "b");       /* the first line is data, not a header */
    ROW(r, 2, "c", "d");
    check_eof(r);
    el_reader_free(r);
    /* a quoted empty first field of the very first row is "" not NULL */
    r = open_mem("edges.csv", "\"\",b\n", &o);
    ROW(r, 1, "", "b");
    check_eof(r);
    el_reader_free(r);
}

static void test_rfc4180_quotes(void **state)
{
    (void)state;
    el_reader *r = open_mem("q.csv",
                            "id,text,n\n"
                            "1,\"has, comma\",x\n"
                            "2,\"she said \"\"hi\"\"\",y\n"
                            "3,\"line one\nline two\n\nline four\",z\n"
                            "4,\"\"\"\",\"\"\"\"\"\"\n"
                            "5,plain \"inner\" quotes,w\n", &no_opts);
    ROW(r, 2, "1", "has, comma", "x");
    ROW(r, 3, "2", "she said \"hi\"", "y");
    ROW(r, 4, "3", "line one\nline two\n\nline four", "z");
    ROW(r, 8, "4", "\"", "\"\"");      /* line numbers count the embedded newlines */
    ROW(r, 9, "5", "plain \"inner\" quotes", "w");
    check_eof(r);
    el_reader_free(r);
}

static void test_spaces_are_part_of_fields(void **state)
{
    (void)state;
    /* RFC 4180 2.4: spaces are part of a field and must not be ignored */
    el_reader *r = open_mem("s.csv", " a ,b\n 1 ,  \n\" q \", x\n", &no_opts);
    NAMES(r, " a ", "b");
    ROW(r, 2, " 1 ", "  ");
    ROW(r, 3, " q ", " x");
    check_eof(r);
    el_reader_free(r);
}

static void test_crlf(void **state)
{
    (void)state;
    el_reader *r = open_mem("w.csv",
                            "a,b\r\n"
                            "1,2\r\n"
                            "\"multi\r\nline\",3\r\n"
                            "4,\r\n"
                            "5,6", &no_opts);
    NAMES(r, "a", "b");          /* no stray \r in the last name */
    ROW(r, 2, "1", "2");
    ROW(r, 3, "multi\r\nline", "3");
    ROW(r, 5, "4", NULL);
    ROW(r, 6, "5", "6");
    check_eof(r);
    el_reader_free(r);
}

static void test_blank_lines_are_skipped(void **state)
{
    (void)state;
    el_reader *r = open_mem("b.csv", "a,b\n\n1,2\n\n\n3,4\n\n", &no_opts);
    ROW(r, 3, "1", "2");
    ROW(r, 6, "3", "4");
    check_eof(r);
    el_reader_free(r);
}

static void test_utf8_bom_skipped(void **state)
{
    (void)state;
    el_reader *r = open_mem("bom.csv", "\xef\xbb\xbfid,name\n1,Jos\xc3\xa9\n", &no_opts);
    NAMES(r, "id", "name");
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.line, 2);
    assert_int_equal(row.offset, 3 + 8);   /* offsets count the BOM's bytes */
    check_value(&row, 1, "Jos\xc3\xa9");
    check_eof(r);
    el_reader_free(r);
    /* only a leading BOM is skipped: one inside a value stays */
    r = open_mem("bom.csv", "a,b\n\xef\xbb\xbfx,y\n", &no_opts);
    ROW(r, 2, "\xef\xbb\xbfx", "y");
    el_reader_free(r);
}

static void test_delimiter_and_tsv(void **state)
{
    (void)state;
    el_reader_opts semi = { .delimiter = ';' };
    el_reader *r = open_mem("x.csv", "a;b\n1,5;\"x;y\"\n", &semi);
    NAMES(r, "a", "b");
    ROW(r, 2, "1,5", "x;y");
    check_eof(r);
    el_reader_free(r);

    el_reader_opts tsv = { .format = EL_FMT_TSV };
    r = open_mem("data.txt", "a\tb\tc\n1\t\tx,y\n", &tsv);
    assert_int_equal(el_reader_format(r), EL_FMT_TSV);
    NAMES(r, "a", "b", "c");
    ROW(r, 2, "1", NULL, "x,y");
    check_eof(r);
    el_reader_free(r);

    /* by name */
    r = open_mem("data.tsv", "a\tb\n 1\t2 \n", &no_opts);
    assert_int_equal(el_reader_format(r), EL_FMT_TSV);
    ROW(r, 2, " 1", "2 ");
    el_reader_free(r);

    /* TSV has no quoting: quotes are data, a row is a line */
    r = open_mem("q.tsv", "a\tb\n\"x\ty\"z\n\"open\tend\nlast\trow\n", &no_opts);
    ROW(r, 2, "\"x", "y\"z");
    ROW(r, 3, "\"open", "end");
    ROW(r, 4, "last", "row");
    check_eof(r);
    el_reader_free(r);
}

static void test_null_rules(void **state)
{
    (void)state;
    /* unquoted empty is NULL, quoted empty is "" (PostgreSQL's CSV rule) */
    el_reader *r = open_mem("n.csv", "a,b,c,d\n,\"\",x,\n,,,\n\\N,NULL,\"\",\n", &no_opts);
    ROW(r, 2, NULL, "", "x", NULL);
    ROW(r, 3, NULL, NULL, NULL, NULL);
    ROW(r, 4, "\\N", "NULL", "", NULL);   /* no --null: those are text */
    check_eof(r);
    el_reader_free(r);

    /* --null STRING: that string is NULL and empty fields are just empty */
    el_reader_opts o = { .null_string = "\\N" };
    r = open_mem("n.csv", "a,b,c\n\\N,,\"\"\nx\\N,\\N,\\\\N\n", &o);
    ROW(r, 2, NULL, "", "");
    ROW(r, 3, "x\\N", NULL, "\\\\N");
    check_eof(r);
    el_reader_free(r);

    el_reader_opts o2 = { .null_string = "NULL" };
    r = open_mem("n.csv", "a,b\nNULL,null\n", &o2);
    ROW(r, 2, NULL, "null");
    el_reader_free(r);
}

static void test_wrong_column_counts_reject_and_go_on(void **state)
{
    (void)state;
    el_reader *r = open_mem("bad.csv",
                            "a,b,c\n"
                            "1,2,3\n"
                            "1,2\n"
                            "\"x\ny\",2,3,4,5\n"
                            "7,8,9\n", &no_opts);
    ROW(r, 2, "1", "2", "3");
    el_row row;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_reader_next(r, &row, &d), EL_EREJECT);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.column, 3);
    assert_int_equal(d.offset, 12);
    assert_non_null(strstr(d.msg, "expected 3, got 2"));
    assert_non_null(strstr(d.msg, "'c'"));               /* the missing column is named */
    assert_int_equal(row.line, 3);
    assert_int_equal(row.ncols, 2);                       /* what was read, for the rejects file */
    check_value(&row, 0, "1");
    check_value(&row, 1, "2");

    el_diag_clear(&d);
    assert_int_equal(el_reader_next(r, &row, &d), EL_EREJECT);
    assert_int_equal(d.line, 4);
    assert_int_equal(d.column, 4);
    assert_non_null(strstr(d.msg, "expected 3, got 5"));
    assert_int_equal(row.ncols, 5);
    check_value(&row, 0, "x\ny");
    check_value(&row, 4, "5");

    ROW(r, 6, "7", "8", "9");     /* reading goes on, lines still right */
    check_eof(r);
    el_reader_free(r);
}

static void test_line_numbers_and_offsets(void **state)
{
    (void)state;
    const char *text = "h1,h2\n"                 /* 0..5 */
                       "a,\"b\nc\nd\"\n"         /* 6: line 2, three lines */
                       "e,f\n"                   /* line 5 */
                       "\"g\r\n\",h\r\n"         /* line 6, two lines */
                       "i,j";                    /* line 8 */
    el_reader *r = open_mem("l.csv", text, &no_opts);
    uint64_t want_line[] = { 2, 5, 6, 8 };
    const char *want_first[] = { "a", "e", "g\r\n", "i" };
    const char *starts[] = { "a,\"b", "e,f", "\"g\r", "i,j" };
    for (size_t i = 0; i < 4; i++) {
        el_row row;
        el_diag d;
        assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
        assert_int_equal(row.line, want_line[i]);
        assert_int_equal(row.offset, (uint64_t)(strstr(text, starts[i]) - text));
        check_value(&row, 0, want_first[i]);
    }
    check_eof(r);
    el_reader_free(r);
}

static void test_many_rows_across_read_chunks(void **state)
{
    (void)state;
    /* ~600 KB: crosses the reader's 64 KB chunks and the input's 256 KB
     * buffer; every row's line and offset must still be exact */
    size_t n = 20000;
    size_t cap = n * 40 + 32;
    char *text = malloc(cap);
    uint64_t *offs = malloc(n * sizeof *offs);
    assert_non_null(text);
    assert_non_null(offs);
    size_t len = (size_t)snprintf(text, cap, "id,val\n");
    uint64_t line = 2;
    uint64_t *lines = malloc(n * sizeof *lines);
    assert_non_null(lines);
    for (size_t i = 0; i < n; i++) {
        offs[i] = len;
        lines[i] = line;
        if (i % 7 == 3) {
            len += (size_t)snprintf(text + len, cap - len, "%zu,\"two\nlines %zu\"\n", i, i);
            line += 2;
        } else {
            len += (size_t)snprintf(text + len, cap - len, "%zu,value-%zu\n", i, i);
            line += 1;
        }
    }
    el_reader *r = open_mem_len("big.csv", text, len, &no_opts);
    for (size_t i = 0; i < n; i++) {
        el_row row;
        el_diag d;
        assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
        char want[32];
        snprintf(want, sizeof want, "%zu", i);
        check_value(&row, 0, want);
        if (row.line != lines[i] || row.offset != offs[i])
            fail_msg("row %zu: line %llu offset %llu, want %llu %llu", i,
                     (unsigned long long)row.line, (unsigned long long)row.offset,
                     (unsigned long long)lines[i], (unsigned long long)offs[i]);
    }
    check_eof(r);
    el_reader_free(r);
    free(lines);
    free(offs);
    free(text);
}

static void test_long_multiline_field_across_chunks(void **state)
{
    (void)state;
    /* a 300 KB quoted field with 3000 embedded newlines spans several of the
     * reader's 64 KB segments; the rows after it keep exact lines/offsets */
    size_t n = 300 * 1024;
    char *t = malloc(n + 256);
    assert_non_null(t);
    size_t k = (size_t)snprintf(t, 64, "a,b\nfirst,\"");
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        char c = (char)('a' + i % 26);
        if (i % 100 == 99) {
            c = '\n';
            nl++;
        }
        t[k++] = c;
    }
    size_t second = k + 2;   /* after the closing quote and newline */
    k += (size_t)snprintf(t + k, 64, "\"\nx,y\n");
    el_reader *r = open_mem_len("m.csv", t, k, &no_opts);
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.line, 2);
    assert_int_equal(row.values[1].len, n);
    assert_memory_equal(row.values[1].data, t + 11, n);
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.line, 3 + nl);
    assert_int_equal(row.offset, second);
    check_value(&row, 0, "x");
    check_eof(r);
    el_reader_free(r);
    free(t);
}

/* A tiny deterministic generator for the round-trip test. */
static uint64_t rt_state = 0x9e3779b97f4a7c15ull;

static unsigned rt_next(unsigned n)
{
    rt_state ^= rt_state << 13;
    rt_state ^= rt_state >> 7;
    rt_state ^= rt_state << 17;
    return (unsigned)(rt_state % n);
}

static void test_random_round_trip(void **state)
{
    (void)state;
    /* random rows of awkward values, written the way RFC 4180 writers do
     * (quote when needed, NULL as an unquoted empty field, "" as quoted
     * empty), must read back exactly, with exact lines and offsets */
    enum { ROWS = 2000, COLS = 4 };
    static const char *const atoms[] = { "a", "Z", "0", " ", ",", "\"", "\n", "\r\n", "\t",
                                         "\xc3\xa9", "\xf0\x9f\x98\x80", "\\N", "x y", ";" };
    const size_t natoms = sizeof atoms / sizeof *atoms;
    size_t cap = 4u << 20;
    char *text = malloc(cap);
    char *vals = malloc(cap);
    assert_non_null(text);
    assert_non_null(vals);
    size_t tlen = (size_t)snprintf(text, cap, "c0,c1,c2,c3\r\n");
    size_t vlen = 0;
    static size_t voff[ROWS][COLS], vsz[ROWS][COLS];
    static bool vnull[ROWS][COLS];
    static uint64_t lines[ROWS], offs[ROWS];
    uint64_t line = 2;
    for (size_t r = 0; r < ROWS; r++) {
        lines[r] = line;
        offs[r] = tlen;
        for (size_t c = 0; c < COLS; c++) {
            size_t n = rt_next(5);
            voff[r][c] = vlen;
            vnull[r][c] = n == 0 && rt_next(2) == 0;
            for (size_t k = 0; k < n; k++) {
                const char *a = atoms[rt_next((unsigned)natoms)];
                memcpy(vals + vlen, a, strlen(a));
                vlen += strlen(a);
            }
            vsz[r][c] = vlen - voff[r][c];
            const char *v = vals + voff[r][c];
            size_t len = vsz[r][c];
            bool quote = !vnull[r][c] && (len == 0 || memchr(v, ',', len) || memchr(v, '"', len) ||
                                          memchr(v, '\n', len) || memchr(v, '\r', len));
            if (c)
                text[tlen++] = ',';
            if (quote)
                text[tlen++] = '"';
            for (size_t k = 0; k < len; k++) {
                if (v[k] == '"')
                    text[tlen++] = '"';
                if (v[k] == '\n')
                    line++;
                text[tlen++] = v[k];
            }
            if (quote)
                text[tlen++] = '"';
        }
        /* a row of one NULL would be a blank line, which readers skip */
        text[tlen++] = '\r';
        text[tlen++] = '\n';
        line++;
        assert_true(tlen + 4096 < cap && vlen + 4096 < cap);
    }
    el_reader *rd = open_mem_len("rt.csv", text, tlen, &no_opts);
    for (size_t r = 0; r < ROWS; r++) {
        el_row row;
        el_diag d;
        el_err err = el_reader_next(rd, &row, &d);
        if (err != EL_OK)
            fail_msg("row %zu: error %d: %s", r, err, d.msg);
        assert_int_equal(row.ncols, COLS);
        if (row.line != lines[r] || row.offset != offs[r])
            fail_msg("row %zu: line %llu offset %llu, want %llu %llu", r,
                     (unsigned long long)row.line, (unsigned long long)row.offset,
                     (unsigned long long)lines[r], (unsigned long long)offs[r]);
        for (size_t c = 0; c < COLS; c++) {
            const el_value *v = &row.values[c];
            if (vnull[r][c]) {
                assert_true(v->is_null);
                continue;
            }
            assert_false(v->is_null);
            if (v->len != vsz[r][c] || memcmp(v->data, vals + voff[r][c], v->len) != 0)
                fail_msg("row %zu col %zu differs", r, c);
        }
    }
    check_eof(rd);
    el_reader_free(rd);
    free(text);
    free(vals);
}

static void test_unterminated_quote_is_truncation(void **state)
{
    (void)state;
    el_reader *r = open_mem("cut.csv", "a,b\n1,2\n3,\"never closed\n4,5\n", &no_opts);
    ROW(r, 2, "1", "2");
    el_row row;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_reader_next(r, &row, &d), EL_ETRUNCATED);
    assert_int_equal(d.line, 3);
    assert_int_equal(d.offset, 8);
    assert_non_null(strstr(d.msg, "quoted field not closed"));
    el_reader_free(r);
}

static void test_empty_and_header_only(void **state)
{
    (void)state;
    el_diag d;
    assert_int_equal(open_mem_err("empty.csv", "", &no_opts, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "empty.csv"));
    assert_non_null(strstr(d.msg, "header"));

    /* headerless and empty: simply no rows */
    const char *const cols[] = { "x" };
    el_reader_opts o = { .columns = cols, .ncolumns = 1 };
    el_reader *r = open_mem("empty.csv", "", &o);
    check_eof(r);
    el_reader_free(r);

    r = open_mem("h.csv", "a,b\n", &no_opts);
    NAMES(r, "a", "b");
    check_eof(r);
    el_reader_free(r);
    r = open_mem("h.csv", "a,b", &no_opts);
    NAMES(r, "a", "b");
    check_eof(r);
    el_reader_free(r);
    r = open_mem("h.csv", "\xef\xbb\xbf" "a\r\n", &no_opts);
    NAMES(r, "a");
    check_eof(r);
    el_reader_free(r);
}

static void test_bad_headers(void **state)
{
    (void)state;
    el_diag d;
    assert_int_equal(open_mem_err("h.csv", "a,,c\n1,2,3\n", &no_opts, &d), EL_EPARSE);
    assert_int_equal(d.column, 2);
    assert_non_null(strstr(d.msg, "no name"));
    assert_int_equal(open_mem_err("h.csv", "a,b,a\n", &no_opts, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "'a'"));
    assert_int_equal(d.column, 3);
    assert_int_equal(open_mem_err("h.csv", "ok,caf\xe9\n", &no_opts, &d), EL_EPARSE);
    assert_non_null(strstr(d.msg, "UTF-8"));
    assert_int_equal(open_mem_err("h.csv", "\"a\nb", &no_opts, &d), EL_ETRUNCATED);
    /* an escape character that could never be told from the syntax */
    el_reader_opts esc = { .escape = ',' };
    assert_int_equal(open_mem_err("h.csv", "a\n", &esc, &d), EL_EUSAGE);
    esc.escape = '"';
    assert_int_equal(open_mem_err("h.csv", "a\n", &esc, &d), EL_EUSAGE);
    esc.escape = '\n';
    assert_int_equal(open_mem_err("h.csv", "a\n", &esc, &d), EL_EUSAGE);
    esc = (el_reader_opts){ .escape = '\\', .delimiter = '\\' };
    assert_int_equal(open_mem_err("h.csv", "a\n", &esc, &d), EL_EUSAGE);
}

/* A file of one field of `n` bytes in column 2, then a good row. */
static char *long_field_csv(size_t n, bool quoted, size_t *len)
{
    char *t = malloc(n + 64);
    assert_non_null(t);
    size_t k = (size_t)snprintf(t, 64, "a,b\nx,%s", quoted ? "\"" : "");
    memset(t + k, 'y', n);
    k += n;
    k += (size_t)snprintf(t + k, 64, "%s\nok,ok\n", quoted ? "\"" : "");
    *len = k;
    return t;
}

static void test_field_over_400k_is_a_reject(void **state)
{
    (void)state;
    const size_t lim = 400 * 1024;
    /* sizes around the limit and past it, where the field ends in the same
     * read segment it crosses the limit in, or many segments later */
    const size_t sizes[] = { lim + 1, lim + 100, lim + 60000, 2 * lim, 9 * lim };
    for (size_t q = 0; q < 2; q++) {
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            size_t len;
            char *t = long_field_csv(sizes[i], q, &len);
            el_reader *r = open_mem_len("long.csv", t, len, &no_opts);
            el_row row;
            el_diag d;
            el_diag_clear(&d);
            el_err err = el_reader_next(r, &row, &d);
            if (err != EL_EREJECT)
                fail_msg("field of %zu bytes (quoted %zu): got %d, want EL_EREJECT", sizes[i],
                         q, err);
            assert_int_equal(d.line, 2);
            assert_int_equal(d.column, 2);
            assert_non_null(strstr(d.msg, "longer than"));
            assert_non_null(strstr(d.msg, "'b'"));
            /* the reader goes on with the next row */
            ROW(r, 3, "ok", "ok");
            check_eof(r);
            el_reader_free(r);
            free(t);
        }
    }
    /* exactly at the limit is fine */
    size_t len;
    char *t = long_field_csv(lim, true, &len);
    el_reader *r = open_mem_len("long.csv", t, len, &no_opts);
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.values[1].len, lim);
    ROW(r, 3, "ok", "ok");
    el_reader_free(r);
    free(t);
    /* a long last field with no newline after it */
    t = long_field_csv(lim + 10, false, &len);
    len -= strlen("\nok,ok\n");
    r = open_mem_len("long.csv", t, len, &no_opts);
    assert_int_equal(el_reader_next(r, &row, &d), EL_EREJECT);
    check_eof(r);
    el_reader_free(r);
    free(t);
    /* an unbalanced quote over a long rest of the file: bounded, and
     * reported as a truncated input at the end */
    t = long_field_csv(3 * lim, true, &len);
    len -= strlen("\"\nok,ok\n");
    r = open_mem_len("long.csv", t, len, &no_opts);
    assert_int_equal(el_reader_next(r, &row, &d), EL_ETRUNCATED);
    el_reader_free(r);
    free(t);
}

static void write_temp(const void *data, size_t len, const char *suffix, char *path,
                       size_t cap)
{
    snprintf(path, cap, "/tmp/el_test_csv_XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static void test_format_detection_by_extension(void **state)
{
    (void)state;
    const char *tsv_text = "a\tb\nx,1\ty\n";
    const char *csv_text = "a,b\nx;1,y\n";
    char path[64];
    el_reader *r;
    el_diag d;

    write_temp(csv_text, strlen(csv_text), ".csv", path, sizeof path);
    assert_int_equal(el_reader_open(path, &no_opts, &r, &d), EL_OK);
    assert_int_equal(el_reader_format(r), EL_FMT_CSV);
    ROW(r, 2, "x;1", "y");
    el_reader_free(r);
    unlink(path);

    write_temp(tsv_text, strlen(tsv_text), ".tsv", path, sizeof path);
    assert_int_equal(el_reader_open(path, &no_opts, &r, &d), EL_OK);
    assert_int_equal(el_reader_format(r), EL_FMT_TSV);
    ROW(r, 2, "x,1", "y");
    el_reader_free(r);
    unlink(path);

    /* compressed, the format comes from the name under .zst */
    size_t cap = ZSTD_compressBound(strlen(tsv_text));
    char *z = malloc(cap);
    assert_non_null(z);
    size_t zlen = ZSTD_compress(z, cap, tsv_text, strlen(tsv_text), 3);
    assert_false(ZSTD_isError(zlen));
    write_temp(z, zlen, ".tsv.zst", path, sizeof path);
    assert_int_equal(el_reader_open(path, &no_opts, &r, &d), EL_OK);
    assert_int_equal(el_reader_format(r), EL_FMT_TSV);
    assert_int_equal(el_input_compression(el_reader_input(r)), EL_COMP_ZSTD);
    ROW(r, 2, "x,1", "y");
    el_reader_free(r);
    unlink(path);
    zlen = ZSTD_compress(z, cap, csv_text, strlen(csv_text), 3);
    assert_false(ZSTD_isError(zlen));
    write_temp(z, zlen, ".csv.zst", path, sizeof path);
    assert_int_equal(el_reader_open(path, &no_opts, &r, &d), EL_OK);
    assert_int_equal(el_reader_format(r), EL_FMT_CSV);
    ROW(r, 2, "x;1", "y");
    el_reader_free(r);
    unlink(path);
    free(z);

    /* no telling name and no dump banner: CSV */
    r = open_mem("data.txt", csv_text, &no_opts);
    assert_int_equal(el_reader_format(r), EL_FMT_CSV);
    el_reader_free(r);
    /* an explicit format beats the name */
    el_reader_opts csv = { .format = EL_FMT_CSV };
    r = open_mem("data.tsv", csv_text, &csv);
    assert_int_equal(el_reader_format(r), EL_FMT_CSV);
    el_reader_free(r);

    assert_int_equal(el_reader_open("/nonexistent/x.csv", &no_opts, &r, &d), EL_EIO);
    assert_null(r);
}

static void test_format_names(void **state)
{
    (void)state;
    el_format f;
    const char *names[] = { "auto", "csv", "tsv", "mysql", "postgres", "sqlite" };
    for (el_format i = EL_FMT_AUTO; i <= EL_FMT_SQLITE; i++) {
        assert_string_equal(el_format_name(i), names[i]);
        assert_int_equal(el_format_parse(names[i], &f), EL_OK);
        assert_int_equal(f, i);
    }
    assert_int_equal(el_format_parse("mariadb", &f), EL_OK);
    assert_int_equal(f, EL_FMT_MYSQL);
    assert_int_equal(el_format_parse("pg", &f), EL_OK);
    assert_int_equal(f, EL_FMT_POSTGRES);
    assert_int_equal(el_format_parse("postgresql", &f), EL_OK);
    assert_int_equal(f, EL_FMT_POSTGRES);
    assert_int_equal(el_format_parse("xml", &f), EL_EUSAGE);
    assert_int_equal(el_format_parse("", &f), EL_EUSAGE);
}

static void test_compressed_truncated_csv(void **state)
{
    (void)state;
    size_t n = 60000;   /* ~700 KB: more than opening the reader decodes */
    char *text = malloc(n * 16 + 16);
    assert_non_null(text);
    size_t len = (size_t)snprintf(text, 16, "a,b\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, 16, "%zu,%zu\n", i, i * 3);
    size_t cap = ZSTD_compressBound(len);
    char *z = malloc(cap);
    assert_non_null(z);
    size_t zlen = ZSTD_compress(z, cap, text, len, 1);
    assert_false(ZSTD_isError(zlen));
    el_reader *r = open_mem_len("t.csv.zst", z, zlen - 8, &no_opts);
    el_row row;
    el_diag d;
    el_err err;
    while ((err = el_reader_next(r, &row, &d)) == EL_OK)
        ;
    assert_int_equal(err, EL_ETRUNCATED);
    el_reader_free(r);
    free(z);
    free(text);
}

static void test_very_wide_rows_are_bounded(void **state)
{
    (void)state;
    /* a row of 100,000 fields is a reject counting them all, though only
     * the first 10,001 are kept; a header that wide is refused */
    size_t n = 100000;
    char *wide = malloc(2 * n + 64);
    assert_non_null(wide);
    for (int esc = 0; esc < 2; esc++) {
        el_reader_opts o = { .escape = esc ? '\\' : 0 };
        size_t len = (size_t)snprintf(wide, 64, "a,b\n");
        for (size_t i = 0; i + 1 < n; i++)
            wide[len++] = ',';
        len += (size_t)snprintf(wide + len, 64, "\n1,2\n");
        el_reader *r = open_mem_len("w.csv", wide, len, &o);
        el_row row;
        el_diag d;
        assert_int_equal(el_reader_next(r, &row, &d), EL_EREJECT);
        assert_non_null(strstr(d.msg, "got 100000"));
        assert_true(row.ncols <= 10001);
        ROW(r, 3, "1", "2");
        check_eof(r);
        el_reader_free(r);

        el_input *in = NULL;
        assert_int_equal(el_input_open_mem(wide + 4, len - 4, "w.csv", &in, &d), EL_OK);
        r = NULL;
        assert_int_equal(el_reader_open_input(in, &o, &r, &d), EL_ELIMIT);
        assert_non_null(strstr(d.msg, "100000 columns"));
    }
    free(wide);
}

/* ---- quoted fields and --null (PostgreSQL COPY ... CSV) ---- */

static void test_quoted_field_is_never_null(void **state)
{
    (void)state;
    /* COPY ... CSV NULL '\N': the text \N is written quoted, NULL bare */
    el_reader_opts o = { .null_string = "\\N" };
    el_reader *r = open_mem("q.csv", "a,b,c\n\\N,\"\\N\",x\n\"\\N\",\\N,\"\"\n", &o);
    ROW(r, 2, NULL, "\\N", "x");
    ROW(r, 3, "\\N", NULL, "");
    check_eof(r);
    el_reader_free(r);

    /* the byte after a field in libcsv's buffer is stale from earlier,
     * longer fields: a quote there must not make a bare field "quoted" */
    r = open_mem("q.csv", "a,b\n\"xy\"\"z\",\\N\nab\",\\N\n\"a,\n\\N\",\\N\n", &o);
    ROW(r, 2, "xy\"z", NULL);
    ROW(r, 3, "ab\"", NULL);
    ROW(r, 4, "a,\n\\N", NULL);
    check_eof(r);
    el_reader_free(r);

    /* --null '' (COPY's default NULL in CSV is the unquoted empty string) */
    el_reader_opts e = { .null_string = "" };
    r = open_mem("q.csv", "a,b,c\n,\"\",x\n", &e);
    ROW(r, 2, NULL, "", "x");
    el_reader_free(r);

    /* a quoted value equal to --null on a line of its own, across reads */
    el_reader_opts n = { .null_string = "NULL" };
    size_t rows = 20000;
    char *big = malloc(rows * 16 + 8);
    assert_non_null(big);
    size_t len = (size_t)snprintf(big, 8, "a,b\n");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(big + len, 17, i % 2 ? "NULL,\"NULL\"\n" : "\"NULL\",NULL\n");
    r = open_mem_len("q.csv", big, len, &n);
    for (size_t i = 0; i < rows; i++) {
        if (i % 2)
            ROW(r, i + 2, NULL, "NULL");
        else
            ROW(r, i + 2, "NULL", NULL);
    }
    check_eof(r);
    el_reader_free(r);
    free(big);
}

/* ---- --escape (MySQL/MariaDB SELECT ... INTO OUTFILE) ---- */

static const char *const outfile_cols[] = { "id", "a", "b", "n", "z" };

static void test_escape_tab_default(void **state)
{
    (void)state;
    /* FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n' */
    el_reader_opts o = { .format = EL_FMT_TSV, .escape = '\\' };
    el_reader *r = open_mem("o.txt",
                            "a\tb\tc\n"
                            "x\\ty\tback\\\\slash\t\"q\"\n"
                            "line\\\nnext\t\\N\t\n"
                            "\\0\\b\\n\\r\\t\\Z\\N\\q\tN\t\\\\N\n"
                            "cr\rin\tlast\tcr\r\n", &o);
    NAMES(r, "a", "b", "c");
    ROW(r, 2, "x\ty", "back\\slash", "\"q\"");
    ROW(r, 3, "line\nnext", NULL, "");
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.line, 5);
    assert_int_equal(row.values[0].len, 8);
    assert_memory_equal(row.values[0].data, "\0\b\n\r\t\x1aNq", 8);
    assert_false(row.values[0].is_null);
    check_value(&row, 1, "N");
    check_value(&row, 2, "\\N");
    ROW(r, 6, "cr\rin", "last", "cr\r");   /* LF lines: a CR is data */
    check_eof(r);
    el_reader_free(r);
}

static void test_escape_csv_enclosed(void **state)
{
    (void)state;
    /* FIELDS TERMINATED BY ',' [OPTIONALLY] ENCLOSED BY '"' ESCAPED BY '\\' */
    el_reader_opts o = { .escape = '\\' };
    el_reader *r = open_mem("o.csv",
                            "\"a\",\"b\",\"c\"\n"
                            "\"it's \\\"q\\\"\",\"a, b\",\"tab\there\"\n"
                            "1,\\N,\"\"\n"
                            "\"multi\\\nline\",\"raw\nnewline\",\"\\\\\"\n"
                            "\"dbl\"\"q\",\"end\"x\",\"\\N\"\n"
                            "\"nul\\0\",\"\\\"\",\"\"\"\"\n", &o);
    NAMES(r, "a", "b", "c");
    ROW(r, 2, "it's \"q\"", "a, b", "tab\there");
    ROW(r, 3, "1", NULL, "");
    ROW(r, 4, "multi\nline", "raw\nnewline", "\\");
    ROW(r, 7, "dbl\"q", "end\"x", NULL);   /* "\N" is NULL too, as LOAD DATA reads it */
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
    assert_int_equal(row.values[0].len, 4);
    assert_memory_equal(row.values[0].data, "nul\0", 4);
    check_value(&row, 1, "\"");
    check_value(&row, 2, "\"");
    check_eof(r);
    el_reader_free(r);

    /* no enclosure (FIELDS TERMINATED BY ',' alone): the delimiter is
     * escaped and quotes are data, which is --format tsv --delimiter , */
    el_reader_opts t = { .format = EL_FMT_TSV, .delimiter = ',', .escape = '\\' };
    r = open_mem("o.csv", "a,b\nx\\,y,\"q\n", &t);
    ROW(r, 2, "x,y", "\"q");   /* a quote inside a bare field is data */
    check_eof(r);
    el_reader_free(r);
}

static void test_escape_crlf_lines(void **state)
{
    (void)state;
    /* LINES TERMINATED BY '\r\n': the server escapes CR, writes LF raw */
    el_reader_opts o = { .format = EL_FMT_TSV, .escape = '\\' };
    el_reader *r = open_mem("o.txt",
                            "a\tb\r\n"
                            "x\\\r\ny\tlf\nraw\r\n"
                            "\\N\t\r\n"
                            "\r\n"
                            "last\tcr\r", &o);
    NAMES(r, "a", "b");
    ROW(r, 2, "x\r\ny", "lf\nraw");
    ROW(r, 5, NULL, "");   /* the raw LF of row 2 is a line of its own */
    ROW(r, 7, "last", "cr");   /* a CR at the very end ends the line */
    check_eof(r);
    el_reader_free(r);

    el_reader_opts c = { .escape = '\\' };
    r = open_mem("o.csv", "\xef\xbb\xbf\"a\",\"b\"\r\n\"x\r\",\"\"\r\n\"q\"\rx\",y\r\n", &c);
    NAMES(r, "a", "b");
    ROW(r, 2, "x\r", "");
    ROW(r, 3, "q\"\rx", "y");   /* a quote before a lone CR is data */
    check_eof(r);
    el_reader_free(r);
}

static void test_escape_one_column_blank_lines(void **state)
{
    (void)state;
    /* the server writes a one-column '' as an empty line */
    const char *const one[] = { "v" };
    el_reader_opts o = { .format = EL_FMT_TSV, .escape = '\\', .columns = one,
                         .ncolumns = 1 };
    el_reader *r = open_mem("o.txt", "x\n\n\\N\n\n", &o);
    ROW(r, 1, "x");
    ROW(r, 2, "");
    ROW(r, 3, NULL);
    ROW(r, 4, "");
    check_eof(r);
    el_reader_free(r);

    /* with more columns a blank line is nothing, as in plain CSV */
    el_reader_opts t = { .format = EL_FMT_TSV, .escape = '\\' };
    r = open_mem("o.txt", "\n\na\tb\n\n1\t2\n\n", &t);
    NAMES(r, "a", "b");
    ROW(r, 5, "1", "2");
    check_eof(r);
    el_reader_free(r);
}

static void test_escape_null_option(void **state)
{
    (void)state;
    /* --null matches the raw text of a bare field: \\N stays the text \N */
    el_reader_opts o = { .format = EL_FMT_TSV, .escape = '\\', .null_string = "\\N" };
    el_reader *r = open_mem("o.txt", "a\tb\tc\n\\N\t\\\\N\t\n", &o);
    ROW(r, 2, NULL, "\\N", "");
    el_reader_free(r);

    el_reader_opts w = { .escape = '\\', .null_string = "NULL" };
    r = open_mem("o.csv", "a,b,c\nNULL,\"NULL\",NUL\\L\n", &w);
    ROW(r, 2, NULL, "NULL", "NULL");
    el_reader_free(r);

    el_reader_opts e = { .escape = '\\', .null_string = "" };
    r = open_mem("o.csv", "a,b,c\n,\"\",\\N\n", &e);
    ROW(r, 2, NULL, "", NULL);
    el_reader_free(r);
}

static void test_escape_end_of_input(void **state)
{
    (void)state;
    el_reader_opts o = { .escape = '\\' };
    /* a trailing escape is itself; no final newline is fine */
    el_reader *r = open_mem("o.csv", "a,b\nx,y\\", &o);
    ROW(r, 2, "x", "y\\");
    check_eof(r);
    el_reader_free(r);

    /* an open quote at the end is a truncated file, even after an escape */
    r = open_mem("o.csv", "a,b\n1,2\n\"x\\\",y\n", &o);
    ROW(r, 2, "1", "2");
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_ETRUNCATED);
    assert_int_equal(d.line, 3);
    el_reader_free(r);
}

static void test_escape_line_numbers_and_limits(void **state)
{
    (void)state;
    el_reader_opts o = { .format = EL_FMT_TSV, .escape = '\\' };
    /* rows spread over many reads; escaped newlines count as lines */
    size_t rows = 30000;
    char *big = malloc(rows * 32 + 16);
    assert_non_null(big);
    size_t len = (size_t)snprintf(big, 16, "k\tv\n");
    for (size_t i = 0; i < rows; i++)
        len += (size_t)snprintf(big + len, 33, "%zu\tl\\\nx\\\\\\t%zu\n", i, i);
    {
        el_reader *r = open_mem_len("o.txt", big, len, &o);
        uint64_t off = 4;
        for (size_t i = 0; i < rows; i++) {
            el_row row;
            el_diag d;
            assert_int_equal(el_reader_next(r, &row, &d), EL_OK);
            assert_int_equal(row.line, 2 + 2 * i);
            assert_int_equal(row.offset, off);
            char want[40];
            snprintf(want, sizeof want, "l\nx\\\t%zu", i);
            check_value(&row, 1, want);
            char n[24];
            off += (uint64_t)snprintf(n, sizeof n, "%zu\tl\\\nx\\\\\\t%zu\n", i, i);
        }
        check_eof(r);
        el_reader_free(r);
    }
    free(big);

    /* a field over 400 KB is a reject naming its column, and the next row
     * is read; memory stays bounded */
    size_t n = 1000 * 1000;
    char *huge = malloc(n + 64);
    assert_non_null(huge);
    len = (size_t)snprintf(huge, 64, "k\tv\n1\t");
    for (size_t i = 0; i < n; i++)
        huge[len++] = (i % 3 == 0 && i + 1 < n) ? '\\' : 'x';
    len += (size_t)snprintf(huge + len, 64, "\n2\tok\n");
    el_reader *r = open_mem_len("o.txt", huge, len, &o);
    el_row row;
    el_diag d;
    assert_int_equal(el_reader_next(r, &row, &d), EL_EREJECT);
    assert_int_equal(d.column, 2);
    assert_non_null(strstr(d.msg, "'v'"));
    ROW(r, 3, "2", "ok");
    check_eof(r);
    el_reader_free(r);
    free(huge);
}

/* The SELECT ... INTO OUTFILE fixtures (tests/fixtures/outfile, written by a
 * real MariaDB server) read back value for value as the server returns them
 * (expected.json: null or the hex of each value's bytes). */
static char *outfile_path(const char *name)
{
    const char *dir = getenv("EDGELOAD_FIXTURES");
    char *p = malloc(4096);
    assert_non_null(p);
    if (dir) {
        snprintf(p, 4096, "%s/outfile/%s", dir, name);
        return p;
    }
    /* unset: relative to this file, tests/unit/../fixtures */
    snprintf(p, 4096, "%s", __FILE__);
    char *slash = strrchr(p, '/');
    if (!slash)
        snprintf(p, 4096, "tests/fixtures/outfile/%s", name);
    else
        snprintf(slash, 4096 - (size_t)(slash - p), "/../fixtures/outfile/%s", name);
    return p;
}

static void check_outfile(yajl_val rows, const char *name, el_format fmt, char delim)
{
    char *path = outfile_path(name);
    el_reader_opts o = { .format = fmt, .delimiter = delim, .escape = '\\',
                         .columns = outfile_cols, .ncolumns = 5 };
    el_reader *r = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_reader_open(path, &o, &r, &d))
        fail_msg("%s: %s", name, d.msg);
    for (size_t i = 0; i < rows->u.array.len; i++) {
        yajl_val want = rows->u.array.values[i];
        el_row row;
        el_err err = el_reader_next(r, &row, &d);
        if (err)
            fail_msg("%s: row %zu: %s (%s)", name, i + 1, el_strerror(err), d.msg);
        assert_int_equal(row.ncols, want->u.array.len);
        for (size_t c = 0; c < row.ncols; c++) {
            yajl_val w = want->u.array.values[c];
            const el_value *v = &row.values[c];
            if (YAJL_IS_NULL(w)) {
                if (!v->is_null)
                    fail_msg("%s: row %zu column %zu: want NULL", name, i + 1, c + 1);
                continue;
            }
            const char *hex = YAJL_GET_STRING(w);
            assert_non_null(hex);
            if (v->is_null || v->len * 2 != strlen(hex))
                fail_msg("%s: row %zu column %zu: %s, length %zu, want %zu bytes", name, i + 1,
                         c + 1, v->is_null ? "NULL" : "text", v->len, strlen(hex) / 2);
            for (size_t k = 0; k < v->len; k++) {
                unsigned byte;
                sscanf(hex + 2 * k, "%2x", &byte);
                if ((unsigned char)v->data[k] != byte)
                    fail_msg("%s: row %zu column %zu differs at byte %zu", name, i + 1, c + 1,
                             k);
            }
        }
    }
    check_eof(r);
    el_reader_free(r);
    free(path);
}

static void test_escape_outfile_fixtures(void **state)
{
    (void)state;
    char *path = outfile_path("expected.json");
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            cap *= 2;
            text = realloc(text, cap);
            assert_non_null(text);
        }
    }
    fclose(f);
    text[len] = '\0';
    char err[256];
    yajl_val doc = yajl_tree_parse(text, err, sizeof err);
    if (!doc)
        fail_msg("expected.json: %s", err);
    const char *rows_path[] = { "rows", NULL };
    yajl_val rows = yajl_tree_get(doc, rows_path, yajl_t_array);
    assert_non_null(rows);
    assert_true(rows->u.array.len >= 15);

    check_outfile(rows, "tab.txt", EL_FMT_TSV, 0);
    check_outfile(rows, "tab_crlf.txt", EL_FMT_TSV, 0);
    check_outfile(rows, "comma.txt", EL_FMT_TSV, ',');
    check_outfile(rows, "csv.csv", EL_FMT_CSV, 0);
    check_outfile(rows, "csv_opt.csv", EL_FMT_CSV, 0);
    check_outfile(rows, "csv_crlf.csv", EL_FMT_CSV, 0);
    yajl_tree_free(doc);
    free(text);
    free(path);
}

/* ---- the fast path for lines without a quote against libcsv ---- */

/* Reads data twice, with the fast path and with every line through libcsv,
 * and fails on the first difference (tests/csv_diff.h says what is
 * compared). Returns the number of rows (OK or rejected). */
static size_t diff_parse(const char *name, const char *data, size_t len,
                         const el_reader_opts *opts)
{
    size_t rows = 0;
    const char *why = csv_diff_parse(name, data, len, opts, &rows);
    if (why)
        fail_msg("%s: %s", name, why);
    return rows;
}

/* The options the differential tests run each input under. */
static size_t diff_all_opts(const char *data, size_t len)
{
    static const char *const cols2[] = { "a", "b" };
    el_reader_opts o[8] = {
        { .format = EL_FMT_CSV },
        { .format = EL_FMT_CSV, .null_string = "\\N" },
        { .format = EL_FMT_CSV, .null_string = "" },
        { .format = EL_FMT_CSV, .delimiter = ';' },
        { .format = EL_FMT_CSV, .columns = cols2, .ncolumns = 2 },
        { .format = EL_FMT_TSV },
        { .format = EL_FMT_TSV, .null_string = "\\N", .columns = cols2, .ncolumns = 2 },
        { .format = EL_FMT_AUTO },
    };
    size_t rows = 0;
    for (size_t i = 0; i < sizeof o / sizeof *o; i++)
        rows += diff_parse(o[i].format == EL_FMT_TSV ? "d.tsv" : "d.csv", data, len, &o[i]);
    return rows;
}

static void test_fast_path_tricky_inputs(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        "a,b\n1,2\n3,4\n",
        "a,b\n,\n,,\n\n,x\nx,\n",              /* empty fields, NULL or not */
        "a,b\n1,2,\n1,\n,\n",                   /* trailing delimiters */
        "a,b\r1,2\r3,4\r",                      /* CR only */
        "a,b\r\n1,2\r3,4\n5,6\r\n\r\n7,8",     /* mixed, final line without newline */
        "a,b\n1,2",                             /* final line without newline */
        "a,b\n1,2\r",                           /* ... ending in a CR */
        "a,b\nx\"y,z\n1,2\n",                   /* a quote in an unquoted field */
        "a,b\nx,\"y\"z\n1,2\n",                 /* text after a closing quote */
        "a,b\nx,y\"\"\n\"p\nq\",r\n1,2\n",      /* doubled quotes, a quoted newline */
        "a,b\n\"1\",2\n1,\"\"\n\"\",\n",        /* quoted empty vs unquoted empty */
        "a,b\n\\N,2\n1,\\N\n\"\\N\",x\n",       /* --null \N */
        "a,b\n \n , \n\t,\t\n",                 /* blanks are data */
        "\n\n\r\na,b\n\n1,2\n\n\n",             /* blank lines, before the header too */
        "\357\273\277a,b\n1,2\n",              /* BOM (octal: a hex escape would eat the a) */
        "\"a\",b\n1,2\n",                       /* quoted header name */
        "a,b\n1\n1,2,3\n1;2\n1,2\n",            /* wrong field counts */
        "a;b\n1;2\n\"1;2\";3\n",                /* ; as delimiter */
        "a\tb\n1\t2\n\"1\t2\n\xff\t\xff\n",     /* TSV: quotes are data, 0xFF */
        "a,b\n1\r2,3\n",                        /* a lone CR inside a line */
        "a,b\n1,2\r\r\n",
        "a,,b\n1,2,3\n",                        /* a header name missing */
        "a,a\n1,2\n",                           /* twice */
        "",
        "\n",
        "a,b\n\"unterminated,x\n1,2\n",
    };
    size_t rows = 0;
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++)
        rows += diff_all_opts(inputs[i], strlen(inputs[i]));
    /* a NUL byte in a field */
    static const char nul[] = "a,b\nx\0y,z\n1,2\n";
    rows += diff_all_opts(nul, sizeof nul - 1);
    assert_true(rows > 100);
}

static void test_fast_path_long_lines(void **state)
{
    (void)state;
    /* lines across the 64 KB read chunk, a field over the 400 KB limit, many
     * fields in a line, and lines of every length near the chunk size */
    size_t cap = 2u << 20;
    char *t = malloc(cap);
    assert_non_null(t);
    size_t n = (size_t)snprintf(t, cap, "a,b\n");
    for (size_t k = 0; k < 3; k++) {
        memset(t + n, 'x', 70000 * (k + 1));
        n += 70000 * (k + 1);
        t[n++] = ',';
        t[n++] = 'y';
        t[n++] = '\n';
    }
    memset(t + n, 'z', 410 * 1024); /* over EL_CSV_MAX_FIELD: a reject */
    n += 410 * 1024;
    memcpy(t + n, ",1\n1,2\n", 7);
    n += 7;
    for (size_t k = 0; k < 20000; k++) /* 20,000 fields in one line */
        t[n++] = ',';
    t[n++] = '\n';
    for (size_t k = 0; k < 40 && n + 70000 < cap; k++) {
        size_t len = 65536 - 20 + k; /* lines ending around the chunk's end */
        memset(t + n, 'w', len);
        t[n + len / 2] = ',';
        n += len;
        t[n++] = k % 3 ? '\n' : '\r';
        if (k % 3 == 0)
            t[n++] = '\n';
    }
    assert_true(diff_all_opts(t, n) > 0);
    free(t);
}

static void test_fast_path_random_differential(void **state)
{
    (void)state;
    /* random inputs, mostly plain lines (the fast path) with the bytes that
     * change libcsv's state sprinkled in; some large enough to span chunks */
    static const char alphabet[] = "ab,,,;\t\"\r\n\n\n \\N\xff";
    const size_t nalpha = sizeof alphabet - 1;
    size_t cap = 300u * 1024;
    char *t = malloc(cap);
    assert_non_null(t);
    size_t rows = 0;
    for (int iter = 0; iter < 1500; iter++) {
        size_t want = iter % 100 == 99 ? 150000 + rt_next(100000) : rt_next(400);
        unsigned special = 1 + rt_next(60); /* 1 in `special` bytes is any byte */
        size_t n = 0;
        while (n < want && n + 1 < cap) {
            unsigned c = rt_next(special);
            if (c == 0)
                t[n++] = alphabet[rt_next((unsigned)nalpha)];
            else if (c < 3)
                t[n++] = '\n';
            else if (c < 6)
                t[n++] = ',';
            else
                t[n++] = (char)('a' + rt_next(26));
        }
        rows += diff_all_opts(t, n);
    }
    free(t);
    assert_true(rows > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_and_rows),
        cmocka_unit_test(test_last_line_without_newline),
        cmocka_unit_test(test_columns_option_headerless),
        cmocka_unit_test(test_rfc4180_quotes),
        cmocka_unit_test(test_spaces_are_part_of_fields),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_blank_lines_are_skipped),
        cmocka_unit_test(test_utf8_bom_skipped),
        cmocka_unit_test(test_delimiter_and_tsv),
        cmocka_unit_test(test_null_rules),
        cmocka_unit_test(test_wrong_column_counts_reject_and_go_on),
        cmocka_unit_test(test_line_numbers_and_offsets),
        cmocka_unit_test(test_many_rows_across_read_chunks),
        cmocka_unit_test(test_long_multiline_field_across_chunks),
        cmocka_unit_test(test_random_round_trip),
        cmocka_unit_test(test_unterminated_quote_is_truncation),
        cmocka_unit_test(test_empty_and_header_only),
        cmocka_unit_test(test_bad_headers),
        cmocka_unit_test(test_field_over_400k_is_a_reject),
        cmocka_unit_test(test_format_detection_by_extension),
        cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_compressed_truncated_csv),
        cmocka_unit_test(test_very_wide_rows_are_bounded),
        cmocka_unit_test(test_quoted_field_is_never_null),
        cmocka_unit_test(test_escape_tab_default),
        cmocka_unit_test(test_escape_csv_enclosed),
        cmocka_unit_test(test_escape_crlf_lines),
        cmocka_unit_test(test_escape_one_column_blank_lines),
        cmocka_unit_test(test_escape_null_option),
        cmocka_unit_test(test_escape_end_of_input),
        cmocka_unit_test(test_escape_line_numbers_and_limits),
        cmocka_unit_test(test_escape_outfile_fixtures),
        cmocka_unit_test(test_fast_path_tricky_inputs),
        cmocka_unit_test(test_fast_path_long_lines),
        cmocka_unit_test(test_fast_path_random_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
