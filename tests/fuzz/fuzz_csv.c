/*
 * fuzz_csv.c - libFuzzer target for the CSV/TSV reader, through the same
 * el_input_open_mem + el_reader_open_input path the loader uses. The first
 * byte picks the options (format, delimiter, escape, NULL string, a given
 * header), the rest is the input. Invariants: every row has the schema's
 * width, each value is NUL-terminated at len, and the reader's fast path
 * for lines without a quote yields exactly what libcsv alone does (rows,
 * values, NULLs, lines, offsets, errors).
 * Corpus: tests/fuzz/corpus/fuzz_csv/, replayed by ctest through replay_main.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>  /* abort */
#include <string.h>  /* memcmp, strcmp */

#include "formats/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t o = data[0];
    data++;
    size--;
    static const char *const cols[] = { "a", "b", "c" };
    el_reader_opts opts = {0};
    opts.format = (o & 1) ? EL_FMT_TSV : EL_FMT_CSV;
    if (o & 2)
        opts.delimiter = (o & 1) ? ',' : ';';
    if (o & 4)
        opts.escape = '\\';
    if (o & 8)
        opts.null_string = (o & 16) ? "\\N" : "";
    if (o & 32) {
        opts.columns = cols;
        opts.ncolumns = (o & 64) ? 3 : 1;
    }
    if (o & 128)
        opts.format = EL_FMT_AUTO;
    /* the reader twice: with its fast path for lines without a quote, and
     * with every line through libcsv; both must yield the same */
    el_reader *r[2] = { NULL, NULL };
    el_diag d[2];
    el_err err[2];
    for (int k = 0; k < 2; k++) {
        el_input *in = NULL;
        el_diag_clear(&d[k]);
        opts.csv_libcsv_only = k == 1;
        if (el_input_open_mem(data, size, (o & 1) ? "fuzz.tsv" : "fuzz.csv", &in, &d[k]) != EL_OK)
            abort();
        err[k] = el_reader_open_input(in, &opts, &r[k], &d[k]);
    }
    if (err[0] != err[1] || strcmp(d[0].msg, d[1].msg) != 0)
        abort();
    if (err[0] != EL_OK)
        return 0;
    const el_schema *s = el_reader_schema(r[0]);
    if (s->ncols != el_reader_schema(r[1])->ncols)
        abort();
    for (size_t rows = 0; rows < 1000000; rows++) {
        el_row row[2];
        for (int k = 0; k < 2; k++) {
            el_diag_clear(&d[k]);
            err[k] = el_reader_next(r[k], &row[k], &d[k]);
        }
        if (err[0] != err[1] || strcmp(d[0].msg, d[1].msg) != 0 || d[0].line != d[1].line ||
            d[0].column != d[1].column || d[0].offset != d[1].offset)
            abort();
        if (err[0] != EL_OK && err[0] != EL_EREJECT)
            break;
        if (err[0] == EL_OK && row[0].ncols != s->ncols)
            abort();
        if (row[0].ncols != row[1].ncols || row[0].line != row[1].line ||
            row[0].offset != row[1].offset)
            abort();
        for (size_t i = 0; i < row[0].ncols; i++) {
            const el_value *a = &row[0].values[i], *b = &row[1].values[i];
            if (a->data && a->data[a->len] != '\0')
                abort();
            if (a->is_null != b->is_null || a->len != b->len ||
                (a->len && memcmp(a->data, b->data, a->len) != 0))
                abort();
        }
    }
    el_reader_free(r[0]);
    el_reader_free(r[1]);
    return 0;
}
