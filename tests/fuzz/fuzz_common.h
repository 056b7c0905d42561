/*
 * fuzz_common.h - the body shared by the dump reader fuzz targets: feed the
 * bytes through el_input_open_mem and the reader's open/next until the
 * reader stops, with and without a source table, so every path that reads
 * a statement runs. Invariants checked: a row has the schema's width and
 * each value is NUL-terminated at len.
 */
#ifndef EL_FUZZ_COMMON_H
#define EL_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/reader.h"

static void fuzz_one(el_reader_open_fn open_fn, const uint8_t *data, size_t size,
                     const char *table)
{
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_input_open_mem(data, size, "fuzz.sql", &in, &d) != EL_OK)
        return;
    el_reader_opts opts = {0};
    opts.source_table = table;
    const el_reader_ops *ops = NULL;
    void *self = NULL;
    if (open_fn(in, &opts, &ops, &self, &d) != EL_OK) {
        el_input_free(in);
        return;
    }
    const el_schema *s = ops->schema(self);
    for (size_t rows = 0; rows < 1000000; rows++) {
        el_row row;
        el_err err = ops->next(self, &row, &d);
        if (err != EL_OK && err != EL_EREJECT)
            break;
        if (row.ncols != s->ncols)
            abort();
        for (size_t i = 0; i < row.ncols; i++)
            if (row.values[i].data[row.values[i].len] != '\0')
                abort();
    }
    ops->free(self);
}

static int fuzz_reader(el_reader_open_fn open_fn, const uint8_t *data, size_t size)
{
    fuzz_one(open_fn, data, size, NULL);
    fuzz_one(open_fn, data, size, "t");
    return 0;
}

#endif
