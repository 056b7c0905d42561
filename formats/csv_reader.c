/*
 * csv_reader.c - CSV and TSV rows through libcsv.
 *
 * DESIGN: libcsv is push-based (callbacks per field and per record); edgeload
 * pulls rows. We feed libcsv one physical line at a time (up to and including
 * each '\n', in segments of at most READ_CHUNK bytes), collect finished
 * records into a small queue and hand them out one by one. Feeding by line is
 * what gives every row its line number and byte offset: a record starts on
 * the line fed while libcsv's state was ROW_NOT_BEGUN.
 *
 * TSV has no quoting at all (see open).
 *
 * NULL follows PostgreSQL's CSV convention: an unquoted empty field is NULL,
 * a quoted empty field ("") is the empty string. With --null STRING, a field
 * equal to STRING is NULL and empty fields are empty strings.
 *
 * A field longer than EL_CSV_MAX_FIELD makes its row a reject, and libcsv's
 * buffer is cut back as it grows, so a 10 GB line costs no more memory than
 * a 400 KB one.
 */
#include "formats/reader.h"

#include <csv.h>     /* libcsv */
#include <stdlib.h>  /* calloc, realloc, free */
#include <string.h>  /* memchr, memcmp, strlen */

#include "common/buf.h"
#include "common/utf8.h"   /* header names must be UTF-8 */

#define READ_CHUNK (64u * 1024u)
/* A value larger than a whole DynamoDB item can never be loaded. */
#define EL_CSV_MAX_FIELD (400u * 1024u)
#define EL_CSV_MAX_COLUMNS 10000u

typedef struct fld {
    size_t off, len;
    bool null;
} fld;

typedef struct rec {
    size_t first, n;     /* fields [first, first+n) */
    uint64_t line, offset;
    size_t long_col;     /* 1-based column of a field over the limit, 0 = none */
} rec;

typedef struct csv_rd {
    el_input *in;
    struct csv_parser parser;
    bool parser_live;
    el_schema schema;
    char *null_string;
    size_t null_len;
    bool have_header;

    unsigned char *chunk;
    size_t cpos, clen;
    bool in_eof, finished;
    bool at_line_start;
    uint64_t lines_fed;   /* complete lines fed so far */
    uint64_t bytes_fed;

    el_buf data;          /* field bytes of queued and in-progress records */
    fld *flds;
    size_t nflds, capflds;
    rec *recs;
    size_t nrecs, caprecs, head;
    size_t cur_first;     /* first field of the record in progress */
    uint64_t cur_line, cur_offset;
    bool oom;
    size_t cur_long_col;  /* record in progress: 1-based column of a field over the
                             limit, 0 = none */
    bool open_field_long; /* the field being parsed was cut back at the limit */

    el_value *vals;
    size_t capvals;
} csv_rd;

static void on_field(void *s, size_t len, void *ctx)
{
    csv_rd *r = ctx;
    if (r->nflds == r->capflds) {
        size_t cap = r->capflds ? r->capflds * 2 : 64;
        fld *f = realloc(r->flds, cap * sizeof *f);
        if (!f) {
            r->oom = true;
            return;
        }
        r->flds = f;
        r->capflds = cap;
    }
    fld *f = &r->flds[r->nflds++];
    /* A field over the limit is kept empty and makes its record a reject;
     * feed() has already discarded what libcsv buffered beyond the limit. */
    if (len > EL_CSV_MAX_FIELD || r->open_field_long) {
        if (!r->cur_long_col)
            r->cur_long_col = r->nflds - r->cur_first;
        r->open_field_long = false;
        len = 0;
    }
    f->off = r->data.len;
    f->len = s ? len : 0;
    f->null = s == NULL;
    if (s && el_buf_append(&r->data, s, len))
        r->oom = true;
    /* keep every field NUL-terminated for callers that like C strings */
    if (el_buf_putc(&r->data, '\0'))
        r->oom = true;
}

static void on_record(int c, void *ctx)
{
    csv_rd *r = ctx;
    (void)c;
    if (r->nrecs == r->caprecs) {
        size_t cap = r->caprecs ? r->caprecs * 2 : 8;
        rec *q = realloc(r->recs, cap * sizeof *q);
        if (!q) {
            r->oom = true;
            return;
        }
        r->recs = q;
        r->caprecs = cap;
    }
    r->recs[r->nrecs++] = (rec){ r->cur_first, r->nflds - r->cur_first, r->cur_line,
                                 r->cur_offset, r->cur_long_col };
    r->cur_first = r->nflds;
    r->cur_long_col = 0;
}

/* Drops the records already handed out, keeping the one in progress. */
static void compact(csv_rd *r)
{
    if (r->head < r->nrecs)
        return;
    size_t keep_from = r->cur_first;
    size_t data_from = keep_from < r->nflds ? r->flds[keep_from].off : r->data.len;
    size_t nkeep = r->nflds - keep_from;
    if (data_from > 0) {
        memmove(r->data.data, r->data.data + data_from, r->data.len - data_from);
        el_buf_truncate(&r->data, r->data.len - data_from);
    }
    for (size_t i = 0; i < nkeep; i++) {
        r->flds[i] = r->flds[keep_from + i];
        r->flds[i].off -= data_from;
    }
    r->nflds = nkeep;
    r->cur_first = 0;
    r->nrecs = r->head = 0;
}

/* RFC 4180: spaces are part of a field. libcsv trims blanks around
 * unquoted fields unless told that nothing is a space. */
static int no_space(unsigned char c)
{
    (void)c;
    return 0;
}

/* Feeds the next segment (through the next '\n', or to the chunk's end). */
static el_err feed(csv_rd *r, el_diag *diag)
{
    if (r->cpos == r->clen) {
        if (r->in_eof)
            return EL_EOF;
        size_t got;
        el_err err = el_input_read(r->in, r->chunk, READ_CHUNK, &got, diag);
        if (err)
            return err;
        r->cpos = 0;
        r->clen = got;
        if (got == 0) {
            r->in_eof = true;
            return EL_EOF;
        }
    }
    const unsigned char *p = r->chunk + r->cpos;
    size_t n = r->clen - r->cpos;
    const unsigned char *nl = memchr(p, '\n', n);
    if (nl)
        n = (size_t)(nl - p) + 1;
    if (r->at_line_start && r->parser.pstate == 0 /* ROW_NOT_BEGUN */) {
        r->cur_line = r->lines_fed + 1;
        r->cur_offset = r->bytes_fed;
    }
    if (csv_parse(&r->parser, p, n, on_field, on_record, r) != n)
        return el_diag_at(diag, EL_EPARSE, r->lines_fed + 1, 0, r->bytes_fed, "%s",
                          csv_strerror(csv_error(&r->parser)));
    if (r->oom)
        return el_diag_set(diag, EL_ENOMEM, "out of memory reading CSV");
    r->cpos += n;
    r->bytes_fed += n;
    r->at_line_start = nl != NULL;
    if (nl)
        r->lines_fed++;
    if (r->parser.entry_pos > EL_CSV_MAX_FIELD) {
        /* Memory stays bounded whatever the field's length (a 10 GB line,
         * an unbalanced quote): what libcsv holds of it is dropped and the
         * field marked, so its row becomes a reject (or, for an open quote
         * at the end of the input, a truncation error). libcsv's parser
         * struct is public and entry_pos is its fill level. */
        r->parser.entry_pos = 0;
        r->open_field_long = true;
    }
    return EL_OK;
}

/* Makes sure a record is queued. EL_EOF when the input has no more. */
static el_err fill_queue(csv_rd *r, el_diag *diag)
{
    compact(r);
    while (r->head == r->nrecs) {
        if (r->finished)
            return EL_EOF;
        el_err err = feed(r, diag);
        if (err == EL_EOF) {
            /* An open quote at the end of input means the file was cut. */
            bool open_quote = r->parser.pstate == 2 /* FIELD_BEGUN */ && r->parser.quoted;
            csv_fini(&r->parser, on_field, on_record, r);
            r->finished = true;
            if (r->oom)
                return el_diag_set(diag, EL_ENOMEM, "out of memory reading CSV");
            if (open_quote)
                return el_diag_at(diag, EL_ETRUNCATED, r->cur_line, r->nflds - r->cur_first,
                                  r->cur_offset,
                                  "quoted field not closed before the end of input "
                                  "(file truncated?)");
            continue;
        }
        if (err)
            return err;
    }
    return EL_OK;
}

static el_err read_header(csv_rd *r, el_diag *diag)
{
    el_err err = fill_queue(r, diag);
    if (err == EL_EOF)
        return el_diag_set(diag, EL_EPARSE, "%s: empty input, expected a header row "
                           "(use --columns for headerless files)", el_input_name(r->in));
    if (err)
        return err;
    rec *h = &r->recs[r->head++];
    if (h->long_col)
        return el_diag_at(diag, EL_ELIMIT, h->line, h->long_col, h->offset,
                          "header column %zu is longer than %u bytes (unbalanced quote?)",
                          h->long_col, EL_CSV_MAX_FIELD);
    if (h->n > EL_CSV_MAX_COLUMNS)
        return el_diag_at(diag, EL_ELIMIT, h->line, 0, h->offset,
                          "header has %zu columns, more than the %u allowed", h->n,
                          EL_CSV_MAX_COLUMNS);
    r->schema.ncols = h->n;
    r->schema.names = calloc(h->n ? h->n : 1, sizeof(char *));
    r->schema.types = calloc(h->n ? h->n : 1, sizeof(el_coltype));
    if (!r->schema.names || !r->schema.types)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    for (size_t i = 0; i < h->n; i++) {
        fld *f = &r->flds[h->first + i];
        const char *s = r->data.data + f->off;
        size_t len = f->len;
        if (len == 0)
            return el_diag_at(diag, EL_EPARSE, h->line, i + 1, h->offset,
                              "header column %zu has no name", i + 1);
        if (!el_utf8_valid(s, len, NULL))
            return el_diag_at(diag, EL_EPARSE, h->line, i + 1, h->offset,
                              "header column %zu is not valid UTF-8", i + 1);
        for (size_t k = 0; k < i; k++)
            if (strcmp(r->schema.names[k], s) == 0)
                return el_diag_at(diag, EL_EPARSE, h->line, i + 1, h->offset,
                                  "header names column '%s' twice", s);
        r->schema.names[i] = strndup(s, len);
        if (!r->schema.names[i])
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    return EL_OK;
}

static el_err csv_next(void *self, el_row *row, el_diag *diag)
{
    csv_rd *r = self;
    el_err err = fill_queue(r, diag);
    if (err)
        return err;
    rec *q = &r->recs[r->head++];
    size_t want = r->schema.ncols;
    size_t n = q->n > want ? q->n : want;
    if (n == 0)
        n = 1;
    if (n > r->capvals) {
        el_value *v = realloc(r->vals, n * sizeof *v);
        if (!v)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        r->vals = v;
        r->capvals = n;
    }
    for (size_t i = 0; i < q->n; i++) {
        fld *f = &r->flds[q->first + i];
        el_value *v = &r->vals[i];
        v->data = r->data.data + f->off;
        v->len = f->len;
        v->is_null = f->null;
        if (r->null_string && !f->null && f->len == r->null_len &&
            memcmp(v->data, r->null_string, f->len) == 0)
            v->is_null = true;
        else if (r->null_string && f->null) {
            v->is_null = false; /* with --null, empty is just empty */
            v->data = "";
        }
        if (v->is_null) {
            v->data = "";
            v->len = 0;
        }
    }
    row->values = r->vals;
    row->ncols = q->n; /* on a wrong count, the rejects file shows what was read */
    row->line = q->line;
    row->offset = q->offset;
    if (q->long_col) {
        size_t c = q->long_col;
        return el_diag_at(diag, EL_EREJECT, q->line, c, q->offset,
                          "value of column %s%s%s is longer than %u bytes: no DynamoDB item "
                          "(400 KB) can hold it", c <= want ? "'" : "",
                          c <= want ? r->schema.names[c - 1] : "beyond the header",
                          c <= want ? "'" : "", EL_CSV_MAX_FIELD);
    }
    if (q->n != want) {
        if (q->n < want)
            return el_diag_at(diag, EL_EREJECT, q->line, q->n + 1, q->offset,
                              "wrong number of columns: expected %zu, got %zu "
                              "(column '%s' missing)", want, q->n, r->schema.names[q->n]);
        return el_diag_at(diag, EL_EREJECT, q->line, want + 1, q->offset,
                          "wrong number of columns: expected %zu, got %zu "
                          "(extra column %zu)", want, q->n, want + 1);
    }
    return EL_OK;
}

static const el_schema *csv_schema(const void *self)
{
    return &((const csv_rd *)self)->schema;
}

static void csv_free_rd(void *self)
{
    csv_rd *r = self;
    if (!r)
        return;
    if (r->parser_live)
        csv_free(&r->parser);
    el_schema_clear(&r->schema);
    el_buf_free(&r->data);
    free(r->flds);
    free(r->recs);
    free(r->vals);
    free(r->chunk);
    free(r->null_string);
    el_input_free(r->in);
    free(r);
}

static const el_reader_ops csv_ops = { csv_next, csv_schema, csv_free_rd };

/* Parallel reading (formats/chunker.h): a part starts in libcsv's initial
 * state at a line start, so only the counters need setting; its bytes
 * become the read buffer (no copy). */
static void start_part(csv_rd *r, const el_reader_part *part)
{
    r->lines_fed = part->line ? part->line - 1 : 0;
    r->bytes_fed = part->offset;
    if (part->data) {
        free(r->chunk);
        r->chunk = part->data;
        r->clen = part->len;
        r->in_eof = true;
    }
}

static el_err csv_open(el_input *in, const el_reader_opts *opts, const el_reader_part *part,
                       const el_reader_ops **ops, void **self, el_diag *diag)
{
    csv_rd *r = calloc(1, sizeof *r);
    if (!r)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_buf_init(&r->data, (size_t)64 * 1024 * 1024);
    r->chunk = malloc(READ_CHUNK);
    r->at_line_start = true;
    el_err err = EL_OK;
    if (!r->chunk || csv_init(&r->parser, CSV_EMPTY_IS_NULL) != 0) {
        free(r->chunk);
        free(r);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    r->parser_live = true;
    bool tsv = opts->format == EL_FMT_TSV;
    char delim = opts->delimiter ? opts->delimiter : (tsv ? '\t' : ',');
    csv_set_delim(&r->parser, (unsigned char)delim);
    /* TSV (IANA text/tab-separated-values, `mysql -B`, psql's unaligned
     * output) has no quoting: a value may start with '"'. libcsv always has a
     * quote character, so TSV gets 0xFF, a byte valid UTF-8 never holds. */
    if (tsv)
        csv_set_quote(&r->parser, 0xFF);
    csv_set_space_func(&r->parser, no_space);
    /* libcsv grows its field buffer linearly by this much (default 128 bytes,
     * which makes a 400 KB field cost thousands of reallocs). */
    csv_set_blk_size(&r->parser, READ_CHUNK);
    if (opts->null_string) {
        r->null_string = strdup(opts->null_string);
        r->null_len = strlen(opts->null_string);
        if (!r->null_string)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    if (!err && opts->escape)
        err = el_diag_set(diag, EL_EUSAGE, "--escape is not supported yet for CSV input");

    /* Skip a UTF-8 byte order mark (Excel writes one). */
    if (!err && !part) {
        const unsigned char *p;
        size_t got;
        err = el_input_peek(in, 3, &p, &got, diag);
        if (!err && got == 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
            unsigned char bom[3];
            err = el_input_read(in, bom, 3, &got, diag);
            r->bytes_fed = 3;
        }
    }
    r->in = in;
    if (!err && part)
        start_part(r, part);
    if (!err && opts->columns) {
        r->schema.ncols = opts->ncolumns;
        r->schema.names = calloc(opts->ncolumns ? opts->ncolumns : 1, sizeof(char *));
        r->schema.types = calloc(opts->ncolumns ? opts->ncolumns : 1, sizeof(el_coltype));
        if (!r->schema.names || !r->schema.types)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        for (size_t i = 0; !err && i < opts->ncolumns; i++) {
            r->schema.names[i] = strdup(opts->columns[i]);
            if (!r->schema.names[i])
                err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        }
    } else if (!err) {
        err = read_header(r, diag);
    }
    if (err) {
        r->in = NULL; /* on failure the caller keeps the input */
        if (part && r->chunk == part->data)
            r->chunk = NULL; /* and a part's bytes */
        csv_free_rd(r);
        return err;
    }
    *ops = &csv_ops;
    *self = r;
    return EL_OK;
}

el_err el_csv_reader_open(el_input *in, const el_reader_opts *opts,
                          const el_reader_ops **ops, void **self, el_diag *diag)
{
    return csv_open(in, opts, NULL, ops, self, diag);
}

el_err el_csv_reader_open_part(const el_reader_part *part, const el_reader_opts *opts,
                               const el_reader_ops **ops, void **self, el_diag *diag)
{
    el_reader_opts o = *opts;
    o.columns = (const char *const *)part->schema->names;
    o.ncolumns = part->schema->ncols;
    el_err err = csv_open(part->in, &o, part, ops, self, diag);
    if (err) {
        el_input_free(part->in);
        free(part->data);
        return err;
    }
    csv_rd *r = *self;
    if (part->skip_first) {
        /* the header record: read by the whole input's reader already */
        err = fill_queue(r, diag);
        if (!err)
            r->head++;
        else if (err == EL_EOF)
            err = EL_OK;
    }
    if (err) {
        csv_free_rd(r);
        *self = NULL;
    }
    return err;
}
