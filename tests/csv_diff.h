/*
 * csv_diff.h - the CSV/TSV reader read twice, once with its fast path for
 * lines without a quote and once with every line through libcsv
 * (el_reader_opts.csv_libcsv_only), compared field by field. Shared by the
 * unit test (tests/unit/test_csv_reader.c, which fails on a difference) and
 * the fuzz target (tests/fuzz/fuzz_csv.c, which aborts), so both hold the
 * fast path to exactly the same rules. Header-only: each includes it once.
 */
#ifndef EL_TESTS_CSV_DIFF_H
#define EL_TESTS_CSV_DIFF_H

#include <stdio.h>   /* snprintf */
#include <string.h>  /* memcmp, strcmp */

#include "formats/input.h"
#include "formats/reader.h"

/*
 * Opens `data` (named `name`, so --format auto can sniff) with opts under
 * both paths and compares: the open's result and message, the schema (width
 * and names), then every row's result, diagnostic (message, line, column,
 * offset), width (the schema's on an accepted row), line, offset, and each
 * value (NULL or not, bytes, NUL-terminated at len). Stops at the first
 * result other than a row or a reject, or after 1,000,000 rows.
 * Returns NULL when the two agree, else a message naming the first
 * difference (static storage: one caller at a time). *rows (if not NULL)
 * is the number of rows read, accepted or rejected.
 */
static const char *csv_diff_parse(const char *name, const void *data, size_t len,
                                  const el_reader_opts *opts, size_t *rows)
{
    static char why[1024];
    const char *fail = NULL;
    el_reader_opts o[2] = { *opts, *opts };
    o[0].csv_libcsv_only = false;
    o[1].csv_libcsv_only = true;
    el_reader *r[2] = { NULL, NULL };
    el_diag d[2];
    el_err err[2];
    size_t n = 0;
#define CSV_DIFF_FAIL(...) do { snprintf(why, sizeof why, __VA_ARGS__); fail = why; goto out; } while (0)
    for (int k = 0; k < 2; k++) {
        el_input *in = NULL;
        el_diag_clear(&d[k]);
        err[k] = el_input_open_mem(data, len, name, &in, &d[k]);
        if (err[k] != EL_OK)
            CSV_DIFF_FAIL("el_input_open_mem failed: %.300s", d[k].msg);
        err[k] = el_reader_open_input(in, &o[k], &r[k], &d[k]);
    }
    if (err[0] != err[1] || strcmp(d[0].msg, d[1].msg) != 0)
        CSV_DIFF_FAIL("open: %d '%.300s' (fast) vs %d '%.300s' (libcsv)", (int)err[0], d[0].msg,
                      (int)err[1], d[1].msg);
    if (err[0] != EL_OK)
        goto out;
    const el_schema *s0 = el_reader_schema(r[0]), *s1 = el_reader_schema(r[1]);
    if (s0->ncols != s1->ncols)
        CSV_DIFF_FAIL("schema: %zu vs %zu columns", s0->ncols, s1->ncols);
    for (size_t i = 0; i < s0->ncols; i++)
        if (strcmp(s0->names[i], s1->names[i]) != 0)
            CSV_DIFF_FAIL("schema: column %zu '%.300s' vs '%.300s'", i, s0->names[i], s1->names[i]);
    for (; n < 1000000; n++) {
        el_row row[2];
        for (int k = 0; k < 2; k++) {
            el_diag_clear(&d[k]);
            err[k] = el_reader_next(r[k], &row[k], &d[k]);
        }
        if (err[0] != err[1] || strcmp(d[0].msg, d[1].msg) != 0 || d[0].line != d[1].line ||
            d[0].column != d[1].column || d[0].offset != d[1].offset)
            CSV_DIFF_FAIL("row %zu: %d '%.300s' at %llu:%llu (fast) vs %d '%.300s' at %llu:%llu", n,
                          (int)err[0], d[0].msg, (unsigned long long)d[0].line,
                          (unsigned long long)d[0].column, (int)err[1], d[1].msg,
                          (unsigned long long)d[1].line, (unsigned long long)d[1].column);
        if (err[0] != EL_OK && err[0] != EL_EREJECT)
            break;
        if (err[0] == EL_OK && row[0].ncols != s0->ncols)
            CSV_DIFF_FAIL("row %zu: %zu values for %zu columns", n, row[0].ncols, s0->ncols);
        if (row[0].ncols != row[1].ncols || row[0].line != row[1].line ||
            row[0].offset != row[1].offset)
            CSV_DIFF_FAIL("row %zu: %zu values, line %llu, offset %llu (fast) vs %zu, %llu, %llu",
                          n, row[0].ncols, (unsigned long long)row[0].line,
                          (unsigned long long)row[0].offset, row[1].ncols,
                          (unsigned long long)row[1].line, (unsigned long long)row[1].offset);
        for (size_t i = 0; i < row[0].ncols; i++) {
            const el_value *a = &row[0].values[i], *b = &row[1].values[i];
            if (a->is_null != b->is_null || a->len != b->len ||
                (a->len && memcmp(a->data, b->data, a->len) != 0))
                CSV_DIFF_FAIL("row %zu, value %zu differs", n, i);
            if (a->data && a->data[a->len] != '\0')
                CSV_DIFF_FAIL("row %zu, value %zu not NUL-terminated at its length", n, i);
        }
    }
#undef CSV_DIFF_FAIL
out:
    el_reader_free(r[0]);
    el_reader_free(r[1]);
    if (rows)
        *rows = n;
    return fail;
}

#endif
