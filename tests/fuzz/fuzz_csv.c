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

#include "formats/reader.h"
#include "tests/csv_diff.h"  /* the fast path against libcsv */

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
    if (csv_diff_parse((o & 1) ? "fuzz.tsv" : "fuzz.csv", data, size, &opts, NULL))
        abort();
    return 0;
}
