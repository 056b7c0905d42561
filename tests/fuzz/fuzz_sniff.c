/*
 * fuzz_sniff.c - libFuzzer target for dialect detection (el_sql_sniff) and
 * what it leads to: the bytes are sniffed, then opened as `--format auto`
 * would (el_reader_open_input) and read to the end, so the guard of
 * whichever dialect was chosen runs on them too. Invariants checked: a
 * decided format is a dump format with its evidence set and nothing
 * ambiguous; an ambiguous result names only dump dialects and is refused by
 * the open with EL_EUSAGE; the reader opened is the dump reader the sniffer
 * chose (else CSV); a dump's rows have its schema's width; the evidence
 * strings are NUL-terminated.
 * Corpus: tests/fuzz/corpus/fuzz_sniff/, replayed by ctest.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/dialect.h"
#include "formats/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    el_sniff s;
    el_sql_sniff(data, size, &s);
    if (memchr(s.evidence, '\0', sizeof s.evidence) == NULL ||
        memchr(s.evidence2, '\0', sizeof s.evidence2) == NULL)
        abort();
    if (s.ambiguous) {
        if (s.format != EL_FMT_AUTO || (s.candidates & ~(unsigned)EL_DIALECT_ALL))
            abort();
    } else if (s.format != EL_FMT_AUTO) {
        if ((s.format != EL_FMT_MYSQL && s.format != EL_FMT_POSTGRES &&
             s.format != EL_FMT_SQLITE) || s.candidates != (1u << s.format) || s.line == 0)
            abort();
    }

    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_input_open_mem(data, size, "fuzz.sql", &in, &d) != EL_OK)
        return 0;
    el_reader_opts opts = {0};
    el_reader *r = NULL;
    el_err err = el_reader_open_input(in, &opts, &r, &d);
    if (err != EL_OK) {
        if (s.ambiguous && err != EL_EUSAGE)
            abort();
        return 0;
    }
    if (s.ambiguous)
        abort();
    const el_schema *schema = el_reader_schema(r);
    el_format f = el_reader_format(r);
    bool dump = f != EL_FMT_CSV && f != EL_FMT_TSV; /* a CSV reject keeps its extra fields */
    if (dump != (s.format != EL_FMT_AUTO))
        abort();
    for (size_t rows = 0; rows < 100000; rows++) {
        el_row row;
        err = el_reader_next(r, &row, &d);
        if (err != EL_OK && err != EL_EREJECT)
            break;
        if (dump && row.ncols != schema->ncols)
            abort();
    }
    el_reader_free(r);
    return 0;
}
