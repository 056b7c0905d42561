/*
 * inputs.h - which file each source of a mapping reads, and opening it
 * with its source bound to the file's columns: the one way load, verify,
 * load --incremental and plan pair inputs with sources.
 *
 * Pairing: INPUTs named on the command line override the mapping's
 * "input" fields, one per source in the mapping's order, or all of them to
 * the single source of a one-source mapping (several files of one table);
 * with none named, each source reads its "input", relative to the mapping
 * file. Binding: the first input of a source binds the source's column
 * names to that input's columns; every other input of the source must
 * have the same columns in the same order (the rows of one source are one
 * table).
 *
 * Ownership: el_inputs_pair returns an array the caller frees with
 * el_inputs_free; each entry's path is owned by it, its source is borrowed
 * from the mapping (which must outlive the array).
 */
#ifndef EL_INPUTS_H
#define EL_INPUTS_H

#include <stddef.h>  /* size_t */

#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/rows/mapping.h"

typedef struct el_input_spec {
    char *path;              /* resolved: as given, or relative to the mapping file */
    el_source *src;          /* the source it feeds (borrowed from the mapping) */
    el_reader_opts ropts;    /* how to open it: the command line's, with the source's
                                source_table */
} el_input_spec;

/*
 * Pairs inputs[0..n) (NULL/0: none named) with the sources of m; cli holds
 * the format options of the command line. EL_EUSAGE with a message that
 * says what to give when the counts do not fit or a source has no input;
 * EL_ENOMEM. *out NULL on failure.
 */
el_err el_inputs_pair(const el_mapping *m, const char *const *inputs, size_t n,
                      const el_reader_opts *cli, el_input_spec **out, size_t *nout,
                      el_diag *diag) EL_MUST_USE;

void el_inputs_free(el_input_spec *specs, size_t n);

/*
 * Opens spec's input and binds its source (see above). Errors name the
 * input: the reader's (with "path:line: " where it has a line), EL_EUSAGE
 * for columns that differ from the source's other inputs. *out NULL on
 * failure; the caller frees the reader. A source bound here borrows the
 * reader's schema: call el_input_unbind before freeing the reader when the
 * source lives on (its column indices stay).
 */
el_err el_input_open_bound(const el_input_spec *spec, el_reader **out,
                           el_diag *diag) EL_MUST_USE;

/* The binding of el_input_open_bound, for a reader the caller opened
 * itself (a byte range of the input). */
el_err el_input_bind(const el_input_spec *spec, const el_reader *r, el_diag *diag) EL_MUST_USE;

/* Forgets the schema a source borrowed from reader r (see above). */
void el_input_unbind(el_source *src, const el_reader *r);

#endif
