/*
 * fuzz_csv.c - libFuzzer target for the CSV/TSV reader, through the same
 * el_input_open_mem + el_reader_open_input path the loader uses. The first
 * byte picks the options (format, delimiter, escape, NULL string, a given
 * header), the rest is the input. Invariants: every row has the schema's
 * width and each value is NUL-terminated at len.
 * Corpus: tests/fuzz/corpus/fuzz_csv/, replayed by ctest through replay_main.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_input_open_mem(data, size, (o & 1) ? "fuzz.tsv" : "fuzz.csv", &in, &d) != EL_OK)
        return 0;
    el_reader *r = NULL;
    if (el_reader_open_input(in, &opts, &r, &d) != EL_OK)
        return 0;
    const el_schema *s = el_reader_schema(r);
    for (size_t rows = 0; rows < 1000000; rows++) {
        el_row row;
        el_err err = el_reader_next(r, &row, &d);
        if (err != EL_OK && err != EL_EREJECT)
            break;
        if (err == EL_OK && row.ncols != s->ncols)
            abort();
        for (size_t i = 0; i < row.ncols; i++)
            if (row.values[i].data && row.values[i].data[row.values[i].len] != '\0')
                abort();
    }
    el_reader_free(r);
    return 0;
}
