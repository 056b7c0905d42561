/*
 * test_chunker.c - the record-boundary scanner and the chunker: quotes,
 * doubled quotes, CRLF, embedded newlines, quotes inside unquoted fields,
 * a record longer than a part, the tail fallback, BOM, TSV; and the
 * property parallel reading rests on: parsing the parts with
 * el_reader_open_part gives exactly the rows, lines, offsets and rejects of
 * reading the whole input, for random inputs cut at random part sizes.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* memcmp, strlen */

#include "common/buf.h"
#include "formats/chunker.h"
#include "formats/reader.h"

/* ---- the scanner ---- */

static size_t scan(const char *s, char delim, unsigned char quote, int *state, uint64_t *lines)
{
    size_t b;
    el_chunker_scan((const unsigned char *)s, strlen(s), delim, quote, state, &b, lines);
    return b;
}

static void test_scan_plain(void **st)
{
    (void)st;
    int s = 0;
    uint64_t lines;
    assert_int_equal(scan("a,b\nc,d\ne,f", ',', '"', &s, &lines), 8);
    assert_int_equal(lines, 2);
    assert_int_equal(s, 2); /* inside the unquoted field "f" */
    s = 0;
    assert_int_equal(scan("no newline at all", ',', '"', &s, &lines), 0);
    assert_int_equal(lines, 0);
    s = 0;
    assert_int_equal(scan("a,b\r\nc,d\r\n", ',', '"', &s, &lines), 10);
    assert_int_equal(lines, 2);
    assert_int_equal(s, 0);
    s = 0;
    assert_int_equal(scan("a,\n", ',', '"', &s, NULL), 3);
    assert_int_equal(s, 0);
    s = 0;
    scan("a,b,", ',', '"', &s, NULL);
    assert_int_equal(s, 1); /* after a delimiter: a field not begun */
}

static void test_scan_quotes(void **st)
{
    (void)st;
    int s = 0;
    uint64_t lines;
    /* an embedded newline is no boundary */
    assert_int_equal(scan("1,\"x\ny\"\n2,z\n", ',', '"', &s, &lines), 12);
    assert_int_equal(lines, 3);
    s = 0;
    assert_int_equal(scan("1,\"x\ny", ',', '"', &s, &lines), 0);
    assert_int_equal(s, 3); /* still quoted */
    /* doubled quotes stay inside */
    s = 0;
    assert_int_equal(scan("1,\"a\"\"\nb\"\n", ',', '"', &s, NULL), 10);
    s = 0;
    assert_int_equal(scan("1,\"a\"\"\nb", ',', '"', &s, NULL), 0);
    assert_int_equal(s, 3);
    /* a quote inside an unquoted field is data: the newline ends the record */
    s = 0;
    assert_int_equal(scan("ab\"c,d\ne\n", ',', '"', &s, NULL), 9);
    s = 0;
    assert_int_equal(scan("ab\"c\n", ',', '"', &s, NULL), 5);
    assert_int_equal(s, 0);
    /* non-strict libcsv: data after a closing quote keeps the field quoted */
    s = 0;
    assert_int_equal(scan("\"a\"b\nc\"\n", ',', '"', &s, NULL), 8);
    s = 0;
    assert_int_equal(scan("\"a\"b\nc", ',', '"', &s, NULL), 0);
    assert_int_equal(s, 3);
    /* a closing quote then CR, then LF */
    s = 0;
    assert_int_equal(scan("\"a\"\r\n", ',', '"', &s, NULL), 5);
    assert_int_equal(s, 0);
    /* the state carries across calls */
    s = 0;
    assert_int_equal(scan("1,\"open\n", ',', '"', &s, NULL), 0);
    assert_int_equal(scan("still\"\nnext\n", ',', '"', &s, NULL), 12);
    assert_int_equal(s, 0);
}

static void test_scan_tsv(void **st)
{
    (void)st;
    int s = 0;
    uint64_t lines;
    /* TSV has no quoting: '"' is data, csv_reader gives libcsv 0xFF */
    assert_int_equal(scan("\"a\tb\nc\td\n", '\t', 0xFF, &s, &lines), 9);
    assert_int_equal(lines, 2);
    assert_int_equal(s, 0);
}

/* ---- the chunker ---- */

static el_chunker *chunker_on(const char *data, size_t len, char delim, unsigned char quote,
                              size_t target, size_t max_part)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(data, len, "t.csv", &in, &d), EL_OK);
    el_chunker_opts o = { .delimiter = delim, .quote = quote, .target = target,
                          .max_part = max_part };
    el_chunker *c = NULL;
    assert_int_equal(el_chunker_new(in, &o, &c, &d), EL_OK);
    return c;
}

static void test_chunker_parts(void **st)
{
    (void)st;
    const char *data = "\xEF\xBB\xBFh1,h2\n1,\"a\nb\"\n2,x\r\n3,\"long long long long\"\n4,y";
    size_t len = strlen(data);
    el_chunker *c = chunker_on(data, len, ',', '"', 4, 0);
    el_chunker_part p;
    el_diag d;
    el_diag_clear(&d);
    uint64_t want_off = 3, want_line = 1, seq = 0;
    int nparts = 0;
    el_err err;
    while ((err = el_chunker_next(c, &p, &d)) == EL_OK) {
        assert_false(p.tail);
        assert_int_equal(p.seq, seq++);
        assert_int_equal(p.offset, want_off);
        assert_int_equal(p.line, want_line);
        assert_memory_equal(p.data, data + p.offset, p.len);
        if (p.offset + p.len < len) /* every part but the last ends at a boundary */
            assert_int_equal(p.data[p.len - 1], '\n');
        for (size_t i = 0; i < p.len; i++)
            want_line += p.data[i] == '\n';
        want_off += p.len;
        nparts++;
        free(p.data);
    }
    assert_int_equal(err, EL_EOF);
    assert_int_equal(want_off, len);
    assert_true(nparts >= 4); /* parts of a few records each */
    assert_int_equal(el_chunker_next(c, &p, &d), EL_EOF);
    el_chunker_free(c);
}

static void test_chunker_long_record_and_tail(void **st)
{
    (void)st;
    /* a quoted field longer than the target: the part grows to hold it */
    char data[256];
    snprintf(data, sizeof data, "h\n\"%s\n%s\"\nz\n", "0123456789012345678901234567890123456789",
             "abcdefghijabcdefghijabcdefghij");
    el_chunker *c = chunker_on(data, strlen(data), ',', '"', 8, 1024);
    el_chunker_part p;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_chunker_next(c, &p, &d), EL_OK); /* "h\n" plus what follows */
    size_t total = p.len;
    free(p.data);
    bool saw_whole_field = false;
    while (el_chunker_next(c, &p, &d) == EL_OK) {
        assert_false(p.tail);
        if (p.len > 70)
            saw_whole_field = true;
        total += p.len;
        free(p.data);
    }
    assert_true(saw_whole_field || total == strlen(data));
    assert_int_equal(total, strlen(data));
    el_chunker_free(c);

    /* an unclosed quote: past max_part the rest is a streaming tail */
    const char *open = "h\n1\n\"never closed\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n";
    c = chunker_on(open, strlen(open), ',', '"', 4, 16);
    assert_int_equal(el_chunker_next(c, &p, &d), EL_OK);
    assert_false(p.tail);
    uint64_t next_off = p.offset + p.len, next_line = 1 + 2;
    assert_int_equal(next_off, 4);
    free(p.data);
    assert_int_equal(el_chunker_next(c, &p, &d), EL_OK);
    assert_true(p.tail);
    assert_null(p.data);
    assert_int_equal(p.offset, next_off);
    assert_int_equal(p.line, next_line);
    assert_int_equal(el_chunker_next(c, &p, &d), EL_EOF);
    el_chunker_free(c);
}

static void test_chunker_bad_delimiter(void **st)
{
    (void)st;
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem("a\n", 2, "t.csv", &in, &d), EL_OK);
    el_chunker_opts o = { .delimiter = '\n', .quote = '"' };
    el_chunker *c = NULL;
    assert_int_equal(el_chunker_new(in, &o, &c, &d), EL_EUSAGE);
    assert_null(c);
}

/* ---- parts parse exactly like the whole input ---- */

/* Renders every row (or error) the reader yields, one per line. */
static void render(el_reader *r, el_buf *out)
{
    el_row row;
    el_diag d;
    for (;;) {
        el_diag_clear(&d);
        el_err err = el_reader_next(r, &row, &d);
        if (err == EL_EOF)
            return;
        char head[1300];
        if (err != EL_OK && err != EL_EREJECT) {
            snprintf(head, sizeof head, "FATAL %d line %llu col %zu off %llu: %s\n", err,
                     (unsigned long long)d.line, d.column, (unsigned long long)d.offset,
                     d.msg);
            assert_int_equal(el_buf_puts(out, head), EL_OK);
            return;
        }
        snprintf(head, sizeof head, "%d line %llu off %llu n %zu col %zu |", err,
                 (unsigned long long)row.line, (unsigned long long)row.offset, row.ncols,
                 err ? d.column : 0);
        assert_int_equal(el_buf_puts(out, head), EL_OK);
        for (size_t i = 0; i < row.ncols; i++) {
            assert_int_equal(el_buf_append(out, row.values[i].data, row.values[i].len), EL_OK);
            assert_int_equal(el_buf_puts(out, row.values[i].is_null ? "<N>|" : "|"), EL_OK);
        }
        assert_int_equal(el_buf_putc(out, '\n'), EL_OK);
    }
}

/* false when the whole input does not even open (a bad header) */
static bool parse_whole(const char *data, size_t len, const el_reader_opts *o, el_buf *out)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_input_open_mem(data, len, "t.csv", &in, &d), EL_OK);
    el_reader *r = NULL;
    if (el_reader_open_input(in, o, &r, &d) != EL_OK)
        return false;
    render(r, out);
    el_reader_free(r);
    return true;
}

static void parse_parts(const char *data, size_t len, const el_reader_opts *o, size_t target,
                        size_t max_part, el_buf *out)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    /* the schema, as the loader has it from the whole input's reader */
    assert_int_equal(el_input_open_mem(data, len, "t.csv", &in, &d), EL_OK);
    el_reader *whole = NULL;
    assert_int_equal(el_reader_open_input(in, o, &whole, &d), EL_OK);
    assert_int_equal(el_input_open_mem(data, len, "t.csv", &in, &d), EL_OK);
    bool tsv = o->format == EL_FMT_TSV;
    el_chunker_opts co = { .delimiter = tsv ? '\t' : ',', .quote = tsv ? 0xFF : '"',
                           .target = target, .max_part = max_part };
    el_chunker *c = NULL;
    assert_int_equal(el_chunker_new(in, &co, &c, &d), EL_OK);
    el_chunker_part p;
    el_err err;
    while ((err = el_chunker_next(c, &p, &d)) == EL_OK) {
        el_reader_part part = { .data = p.data, .len = p.len, .line = p.line,
                                .offset = p.offset, .schema = el_reader_schema(whole),
                                .skip_first = p.seq == 0 && !o->columns };
        if (p.tail) {
            /* the rest, streaming: an input positioned at the offset */
            assert_int_equal(el_input_open_mem(data, len, "t.csv", &part.in, &d), EL_OK);
            char skip[64];
            for (uint64_t left = p.offset; left > 0;) {
                size_t got, n = left < sizeof skip ? (size_t)left : sizeof skip;
                assert_int_equal(el_input_read(part.in, skip, n, &got, &d), EL_OK);
                assert_int_equal(got, n);
                left -= n;
            }
        }
        el_reader *r = NULL;
        assert_int_equal(el_reader_open_part(&part, o, &r, &d), EL_OK);
        render(r, out);
        el_reader_free(r);
    }
    assert_int_equal(err, EL_EOF);
    el_chunker_free(c);
    el_reader_free(whole);
}

static void check_same(const char *data, size_t len, const el_reader_opts *o, size_t target,
                       size_t max_part)
{
    el_buf a, b;
    el_buf_init(&a, 1u << 24);
    el_buf_init(&b, 1u << 24);
    if (parse_whole(data, len, o, &a)) {
        parse_parts(data, len, o, target, max_part, &b);
        if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0)) {
            fprintf(stderr, "input (%zu bytes, target %zu):\n%.*s\n--- whole:\n%.*s--- parts:\n%.*s",
                    len, target, (int)len, data, (int)a.len, a.data ? a.data : "",
                    (int)b.len, b.data ? b.data : "");
            fail_msg("parts parse differently from the whole input");
        }
    }
    el_buf_free(&a);
    el_buf_free(&b);
}

static void test_parts_equal_whole_fixed(void **st)
{
    (void)st;
    const char *cases[] = {
        "id,name\n1,\"multi\nline\"\n2,\"a \"\"quote\"\"\"\n3,plain\r\n4,\"\"\n5,\n6,bad,extra\n7\n",
        "\xEF\xBB\xBFid,name\n1,x\n2,y\n",
        "\n\nid,name\n1,x\n\n2,y\n",
        "id,name\n1,ab\"c\n2,\"x\"y\nz\"\n3,w\n",
        "id,name\n1,a\r2,b\n3,c\n",               /* a lone CR ends a record mid-line */
        "id,name\n1,\"never closed\n2,x\n3,y\n",  /* truncated: fatal at the end */
        "id,name\n1,x\n2,y",                       /* no final newline */
    };
    el_reader_opts o = { .format = EL_FMT_CSV };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        for (size_t t = 1; t < 40; t += 3) {
            check_same(cases[k], strlen(cases[k]), &o, t, 0);
            check_same(cases[k], strlen(cases[k]), &o, t, t + 8); /* tails too */
        }
    const char *tsv = "id\tname\n1\t\"x\n2\tab\"\n3\t\\N\n4\tz\textra\n";
    el_reader_opts ot = { .format = EL_FMT_TSV, .null_string = "\\N" };
    for (size_t t = 1; t < 30; t += 2)
        check_same(tsv, strlen(tsv), &ot, t, 0);
    const char *cols[] = { "a", "b" };
    el_reader_opts oc = { .format = EL_FMT_CSV, .columns = cols, .ncolumns = 2 };
    for (size_t t = 1; t < 30; t += 2)
        check_same(cases[0], strlen(cases[0]), &oc, t, 0);
}

static void test_parts_equal_whole_random(void **st)
{
    (void)st;
    /* random inputs over the bytes that matter, cut at random sizes */
    const char alpha[] = { 'a', 'b', ',', ',', '"', '"', '\n', '\n', '\r', '\t' };
    uint64_t x = 0x9e3779b97f4a7c15ull;
    char data[300];
    for (int iter = 0; iter < 3000; iter++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = 4 + (size_t)(x % 200);
        memcpy(data, "h,i\n", 4);
        for (size_t i = 4; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            data[i] = alpha[x % sizeof alpha];
        }
        size_t target = 1 + (size_t)((x >> 20) % 48);
        size_t max_part = iter % 3 == 0 ? target + (size_t)((x >> 30) % 32) : 0;
        el_reader_opts o = { .format = iter % 4 == 3 ? EL_FMT_TSV : EL_FMT_CSV,
                             .null_string = iter % 5 == 1 ? "a" : NULL };
        check_same(data, len, &o, target, max_part);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_plain),
        cmocka_unit_test(test_scan_quotes),
        cmocka_unit_test(test_scan_tsv),
        cmocka_unit_test(test_chunker_parts),
        cmocka_unit_test(test_chunker_long_record_and_tail),
        cmocka_unit_test(test_chunker_bad_delimiter),
        cmocka_unit_test(test_parts_equal_whole_fixed),
        cmocka_unit_test(test_parts_equal_whole_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
