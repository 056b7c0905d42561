/*
 * reader.h - the row interface every input format yields.
 *
 * A reader turns one input (CSV, TSV, or a mysql/postgres/sqlite dump) into a
 * stream of rows with named, typed columns. It is pure: single-threaded,
 * streaming, no network, so it can be unit-tested and fuzzed on bytes alone.
 *
 *   el_reader *r;  el_row row;  el_diag d;
 *   el_reader_open("follows.csv", &opts, &r, &d);
 *   while ((err = el_reader_next(r, &row, &d)) == EL_OK || err == EL_EREJECT)
 *       ...;                       // EL_EREJECT: row is bad, d says why
 *   el_reader_free(r);
 *
 * Values point into the reader's buffers and stay valid until the next
 * el_reader_next() call; copy what must live longer.
 */
#ifndef EL_READER_H
#define EL_READER_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "formats/format.h"
#include "formats/input.h"

/* What a column holds, as `auto` typing needs it (numbers to N,
 * booleans to BOOL, binary to B, the rest S). */
typedef enum el_coltype {
    EL_COL_TEXT = 0, /* text, dates, anything else: S */
    EL_COL_NUMBER,   /* integer/numeric/decimal/float: N */
    EL_COL_BOOL,     /* boolean: BOOL */
    EL_COL_BINARY    /* blob/bytea/binary: B (values are the raw bytes) */
} el_coltype;

typedef struct el_schema {
    size_t ncols;
    char **names;      /* column names as the input spells them */
    el_coltype *types; /* EL_COL_TEXT for every CSV column */
    char **sql_types;  /* declared type ("tinyint(1)", "timestamp with time zone"),
                          NULL for CSV; lets the mapping opt into BOOL etc. */
    char *origin;      /* where the names were read, for messages ("its CREATE
                          TABLE at dump.sql:12"); NULL: the input's own header */
} el_schema;

/*
 * One value. data is NUL-terminated for convenience (binary values may hold
 * NULs too; len is authoritative). is_null is SQL NULL, distinct from "".
 * Booleans are yielded as the dump wrote them ("t"/"f", "true"/"false", 1/0);
 * the transform normalises them.
 */
typedef struct el_value {
    const char *data;
    size_t len;
    bool is_null;
} el_value;

typedef struct el_row {
    size_t ncols;
    el_value *values; /* ncols entries, in schema order */
    uint64_t line;    /* 1-based line where the row starts */
    uint64_t offset;  /* byte offset of the row start, in the uncompressed stream */
} el_row;

typedef struct el_reader_opts {
    el_format format;          /* EL_FMT_AUTO: from the extension, else the dump's
                                  preamble (formats/dialect.h), else CSV */
    /* CSV/TSV */
    char delimiter;            /* 0 = ',' for csv, '\t' for tsv */
    char escape;               /* 0 = none; '\\' for SELECT ... INTO OUTFILE files */
    const char *null_string;   /* a field equal to this is NULL (e.g. "\\N"); NULL = none */
    const char *const *columns;/* headerless: these names; NULL = first row is the header */
    size_t ncolumns;
    /* SQL dumps */
    const char *source_table;  /* "name" or "schema.name"; NULL = the only data table */
    /* How the dump's dialect was chosen, for the message that stops a dump
     * holding a statement its dialect cannot have written: set by
     * el_reader_open_input when it detected the format ("detected from
     * '-- MySQL dump' at line 1"); NULL = given by the caller (--format).
     * Borrowed for the open call only. */
    const char *format_why;
    /* Inputs that are not files (s3://...); NULL = files and stdin only. Borrowed. */
    const el_input_opener *opener;
    /* Tests and fuzzing only: CSV/TSV lines all go through libcsv, the
     * reference the reader's fast path for lines without a quote is checked
     * against (same rows, errors, lines and offsets either way). */
    bool csv_libcsv_only;
} el_reader_opts;

typedef struct el_reader el_reader;

/* Opens path ("-" = stdin) and reads far enough to know the schema. On error
 * *out is NULL and diag says what is wrong: EL_EUSAGE, among others, for a
 * dump (format auto) whose preamble does not tell which tool wrote it, naming
 * the candidates and --format. Caller frees with el_reader_free. */
el_err el_reader_open(const char *path, const el_reader_opts *opts, el_reader **out,
                      el_diag *diag) EL_MUST_USE;

/* Same, on an already opened input; takes ownership of `in` even on failure. */
el_err el_reader_open_input(el_input *in, const el_reader_opts *opts, el_reader **out,
                            el_diag *diag) EL_MUST_USE;

/* A byte range of an uncompressed CSV/TSV file (`--split`, pipeline/rows/split.h
 * finds the cut points): the reader reads the file's [0, head) (the header
 * row: head is where the first data record starts, 0 for --columns files),
 * then its [start, end); start and end are record starts, where the parser
 * is between rows, so the rows read are exactly the file's rows starting in
 * [start, end). Rows keep the file's real line numbers and offsets. */
typedef struct el_reader_range {
    uint64_t head;
    uint64_t start, end;
    uint64_t head_lines;   /* newlines in the file's bytes [0, head) */
    uint64_t start_lines;  /* newlines in the file's bytes [0, start) */
} el_reader_range;

/* Opens a range as above; opts->format must be EL_FMT_CSV or EL_FMT_TSV (the
 * bytes at `start` say nothing about the format). With start == 0 it reads
 * [0, end) with no remapping. Ownership and failure as el_reader_open. */
el_err el_reader_open_range(const char *path, const el_reader_opts *opts,
                            const el_reader_range *range, el_reader **out,
                            el_diag *diag) EL_MUST_USE;

/* No more rows: el_reader_next returns EL_EOF from now on. A `--split`
 * worker opens an input that is not in its part for the schema only. */
void el_reader_skip_rest(el_reader *r);

/*
 * Next row. EL_OK: row filled. EL_EOF: no more rows. EL_EREJECT: this row is
 * bad; diag has the reason (naming the column) and its line/column/offset, row
 * holds what could be read (for the rejects file) and the caller may call
 * next again. Any other error is fatal for this input (EL_ETRUNCATED for a
 * dump that ends mid-statement).
 */
el_err el_reader_next(el_reader *r, el_row *row, el_diag *diag) EL_MUST_USE;

/*
 * A part of a CSV/TSV input cut at a record boundary (formats/chunker.h),
 * for parsing one input on several threads. Its rows are those the whole
 * input's reader yields for these bytes, with the whole input's line numbers
 * and offsets (`line` and `offset` are those of the part's first byte).
 */
typedef struct el_reader_part {
    unsigned char *data;     /* the part's bytes (malloc'ed), or NULL: read `in` */
    size_t len;
    el_input *in;            /* with data NULL: positioned at `offset`, read to its end */
    uint64_t line, offset;
    const el_schema *schema; /* the columns, from the whole input's reader (copied) */
    bool skip_first;         /* the part begins with the header record: drop it */
} el_reader_part;

/* Opens a reader on a part. opts->format must be EL_FMT_CSV or EL_FMT_TSV.
 * The reader takes ownership of part->data and part->in, also on failure.
 * Caller frees with el_reader_free. */
el_err el_reader_open_part(const el_reader_part *part, const el_reader_opts *opts,
                           el_reader **out, el_diag *diag) EL_MUST_USE;

/* Column names and types; valid for the reader's lifetime. */
const el_schema *el_reader_schema(const el_reader *r);

/* The format actually being read (after auto-detection). */
el_format el_reader_format(const el_reader *r);

/* The underlying input (for its name and progress figures). */
el_input *el_reader_input(el_reader *r);

void el_reader_free(el_reader *r);


/* ---- for format implementations (formats/<name>_reader.c) ---- */

/* Each format implements these three; `self` is its own context. */
typedef struct el_reader_ops {
    el_err (*next)(void *self, el_row *row, el_diag *diag);
    const el_schema *(*schema)(const void *self);
    void (*free)(void *self);
} el_reader_ops;

/* Every format's open has this shape; it takes ownership of `in` on success
 * (on failure the caller still owns it). */
typedef el_err (*el_reader_open_fn)(el_input *in, const el_reader_opts *opts,
                                    const el_reader_ops **ops, void **self, el_diag *diag);

el_err el_csv_reader_open(el_input *in, const el_reader_opts *opts,
                          const el_reader_ops **ops, void **self, el_diag *diag);
/* el_reader_open_part for CSV/TSV; takes part->data and part->in in every case. */
el_err el_csv_reader_open_part(const el_reader_part *part, const el_reader_opts *opts,
                               const el_reader_ops **ops, void **self, el_diag *diag);
el_err el_mysql_reader_open(el_input *in, const el_reader_opts *opts,
                            const el_reader_ops **ops, void **self, el_diag *diag);
el_err el_postgres_reader_open(el_input *in, const el_reader_opts *opts,
                               const el_reader_ops **ops, void **self, el_diag *diag);
el_err el_sqlite_reader_open(el_input *in, const el_reader_opts *opts,
                             const el_reader_ops **ops, void **self, el_diag *diag);

/* Frees a schema's arrays (not the struct itself) and leaves it empty, every
 * field zero; helper for formats. */
void el_schema_clear(el_schema *s);

#endif
