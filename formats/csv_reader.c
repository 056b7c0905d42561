/*
 * csv_reader.c - CSV and TSV rows: through libcsv, or with --escape through
 * a tokenizer of our own.
 *
 * DESIGN: libcsv is push-based (callbacks per field and per record); edgeload
 * pulls rows. We feed libcsv one physical line at a time (up to and including
 * each '\n', in segments of at most READ_CHUNK bytes), collect finished
 * records into a small queue and hand them out one by one. Feeding by line is
 * what gives every row its line number and byte offset: a record starts on
 * the line fed while libcsv's state was ROW_NOT_BEGUN.
 *
 * Fast path: most lines hold no quote at all, and for those libcsv's state
 * machine (non-strict, no space trimming) reduces to "split on the
 * delimiter, end the record at CR or LF": so a whole line in the chunk that
 * starts between records and holds no quote byte and no CR (but one just
 * before its '\n') is split with memchr instead, giving the fields, NULLs,
 * line and offset libcsv would; a blank line is skipped as libcsv skips it.
 * Any other line (a quote anywhere, a lone CR, a line cut by the chunk's
 * end, the last line without '\n') goes to libcsv, whose state is never
 * touched by the fast path. el_reader_opts.csv_libcsv_only turns the fast
 * path off, so tests and the fuzz target compare the two.
 *
 * TSV has no quoting at all (see open).
 *
 * NULL follows PostgreSQL's CSV convention: an unquoted empty field is NULL,
 * a quoted empty field ("") is the empty string. With --null STRING, an
 * unquoted field equal to STRING is NULL and empty fields are empty strings;
 * a quoted field is never NULL (COPY ... CSV writes the text \N as "\N").
 * libcsv does not say whether a field was quoted, but it leaves a quoted
 * field's closing quote in its buffer just past the field; an unquoted
 * field leaves nothing there because on_field clears what each field wrote
 * (and the buffer is allocated zeroed, see zalloc), so that byte tells.
 *
 * --escape CHAR (MySQL/MariaDB SELECT ... INTO OUTFILE, read back by LOAD
 * DATA) is a tokenizer of our own, as libcsv has no escape character. It
 * decodes what LOAD DATA decodes: \0 \b \n \r \t \Z, \N (a field that is
 * exactly \N is NULL, quoted or not), the escape before any other byte
 * (the delimiter, the quote, a newline, itself) is that byte; quotes are
 * optional per field and may also be doubled. An empty field is the empty
 * string. Line ends are \r\n when the first line ends so (LINES TERMINATED
 * BY '\r\n': the server then escapes CR and writes LF raw), else \n (a CR
 * is data). A blank line is a row with one empty value when the input has
 * one column (that is how the server writes ''), else skipped. --null
 * STRING matches the raw bytes of an unquoted field (so \\N, the text \N,
 * is not NULL under --null '\N').
 *
 * A field longer than EL_CSV_MAX_FIELD makes its row a reject, and libcsv's
 * buffer (or ours) is cut back as it grows, so a 10 GB line costs no more
 * memory than a 400 KB one.
 */
#include "formats/reader.h"

#include <csv.h>     /* libcsv */
#include <stddef.h>  /* max_align_t */
#include <stdint.h>  /* SIZE_MAX */
#include <stdlib.h>  /* calloc, realloc, free */
#include <string.h>  /* memchr, memcmp, strlen */

#include "common/buf.h"
#include "common/utf8.h"   /* header names must be UTF-8 */

#define READ_CHUNK (64u * 1024u)
/* The fast path splits at most this many records, or this many bytes of
 * fields, per call before handing rows out, so the queue stays small. */
#define FAST_BATCH_RECORDS 64u
#define FAST_BATCH_BYTES (64u * 1024u)
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
    size_t dropped;      /* fields beyond the widest row kept (counted, not stored) */
} rec;

/* Escape-mode tokenizer states. */
enum tok_state {
    TS_REC_START,   /* before the first byte of a record */
    TS_FIELD_START, /* before the first byte of a field */
    TS_UNQUOTED,
    TS_QUOTED,
    TS_QUOTE_SEEN   /* a quote inside a quoted field: its end, or doubled */
};

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
    size_t cur_dropped;   /* record in progress: fields not stored (too many) */

    el_value *vals;
    size_t capvals;

    bool fast;            /* the fast path for lines without a quote is on */
    unsigned char quote_byte; /* libcsv's quote: '"', or 0xFF for TSV */

    /* escape mode (--escape) */
    int escape;           /* the escape byte, -1 = libcsv mode */
    int quote;            /* '"', or -1 for TSV */
    unsigned char delim;
    bool crlf;            /* lines end in "\r\n" */
    bool special[256];    /* bytes that end a run of plain field bytes */
    enum tok_state ts;
    bool esc_pending;     /* the last byte was the escape */
    bool cr_pending;      /* crlf: the last byte was a CR that may end the line */
    bool quoted;          /* the field being read started with the quote */
    bool found_null;      /* it holds \N */
    bool raw_match;       /* its raw bytes so far are a prefix of null_string */
    size_t raw_len;
    el_buf field;         /* its decoded bytes (at most EL_CSV_MAX_FIELD) */
} csv_rd;

/* libcsv's buffer, allocated zeroed and kept initialised as it grows (a size
 * header in front), so that reading the byte past a field is defined. */
typedef union zhdr {
    size_t size;
    max_align_t align;
} zhdr;

static void *zalloc(void *p, size_t n)
{
    size_t old = 0;
    zhdr *h = NULL;
    if (p) {
        h = (zhdr *)p - 1;
        old = h->size;
    }
    if (n > SIZE_MAX - sizeof *h)
        return NULL;
    zhdr *nh = realloc(h, sizeof *nh + n);
    if (!nh)
        return NULL;
    if (n > old)
        memset((unsigned char *)(nh + 1) + old, 0, n - old);
    nh->size = n;
    return nh + 1;
}

static void zfree(void *p)
{
    if (p)
        free((zhdr *)p - 1);
}

/* Appends one finished field of the record in progress; null is final. */
static void add_field(csv_rd *r, const char *s, size_t len, bool null)
{
    size_t widest = r->schema.ncols > EL_CSV_MAX_COLUMNS ? r->schema.ncols : EL_CSV_MAX_COLUMNS;
    if (r->nflds - r->cur_first > widest) {
        /* a line of a billion commas: its row is a reject whatever else it
         * holds, so the rest is counted, not kept */
        r->cur_dropped++;
        r->open_field_long = false;
        return;
    }
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
     * feed() has already discarded what was buffered beyond the limit. */
    if (len > EL_CSV_MAX_FIELD || r->open_field_long) {
        if (!r->cur_long_col)
            r->cur_long_col = r->nflds - r->cur_first;
        r->open_field_long = false;
        len = 0;
        null = false;
    }
    if (null)
        len = 0;
    /* the bytes and a NUL (every field is NUL-terminated for callers that
     * like C strings), with one reservation */
    if (el_buf_reserve(&r->data, len + 1)) {
        r->oom = true;
        return;
    }
    f->off = r->data.len;
    f->len = len;
    f->null = null;
    char *dst = r->data.data + r->data.len;
    if (len)
        memcpy(dst, s, len);
    dst[len] = '\0';
    r->data.len += len + 1;
    dst[len + 1] = '\0'; /* el_buf's own terminator */
}

/* libcsv's field callback: s is NULL for an unquoted empty field. */
static void on_field(void *s, size_t len, void *ctx)
{
    csv_rd *r = ctx;
    struct csv_parser *p = &r->parser;
    bool quoted = s && len < p->entry_size && p->entry_buf[len] == p->quote_char;
    bool null;
    if (r->null_string)
        null = !quoted && len == r->null_len && (len == 0 || memcmp(s, r->null_string, len) == 0);
    else
        null = s == NULL;
    add_field(r, s, len, null);
    /* Clear what this field wrote (and its closing quote) so that the next
     * field's end is read against zeroes (see the DESIGN note). */
    if (s && p->entry_buf)
        memset(p->entry_buf, 0, len < p->entry_size ? len + 1 : p->entry_size);
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
                                 r->cur_offset, r->cur_long_col, r->cur_dropped };
    r->cur_dropped = 0;
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

/* Reads the next chunk when the current one is used up: EL_OK with bytes at
 * r->cpos, EL_EOF at the end of the input, or the input's error. Shared by the
 * libcsv path (feed) and the escape tokenizer (esc_feed). */
static el_err refill(csv_rd *r, el_diag *diag)
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
    return EL_OK;
}

/* The fast path for one line p[0..len) (its '\n' not included), read from
 * between records: false, having changed nothing, when it needs libcsv. */
static bool fast_line(csv_rd *r, const unsigned char *p, size_t len)
{
    if (len && p[len - 1] == '\r')
        len--; /* CRLF: libcsv ends the record at the CR, skips the LF */
    if (len == 0)
        return true; /* blank: no record (libcsv skips empty lines) */
    if (memchr(p, r->quote_byte, len) || memchr(p, '\r', len))
        return false;
    r->cur_line = r->lines_fed + 1;
    r->cur_offset = r->bytes_fed;
    const unsigned char *end = p + len;
    for (;;) {
        const unsigned char *d = memchr(p, r->delim, (size_t)(end - p));
        size_t flen = (size_t)((d ? d : end) - p);
        /* on_field's rule for an unquoted field */
        bool null = r->null_string ? flen == r->null_len &&
                                         memcmp(p, r->null_string, flen) == 0
                                   : flen == 0;
        add_field(r, (const char *)p, flen, null);
        if (!d)
            break;
        p = d + 1;
    }
    on_record(0, r);
    return true;
}

/* Runs the fast path over the whole lines at the chunk's position, up to a
 * batch; returns the number of lines consumed (0: the next needs libcsv). */
static size_t fast_lines(csv_rd *r)
{
    if (!r->at_line_start || r->parser.pstate != 0 /* ROW_NOT_BEGUN */)
        return 0;
    size_t done = 0, queued = r->nrecs, data_from = r->data.len;
    while (r->cpos < r->clen && r->nrecs - queued < FAST_BATCH_RECORDS &&
           r->data.len - data_from < FAST_BATCH_BYTES && !r->oom) {
        const unsigned char *p = r->chunk + r->cpos;
        const unsigned char *nl = memchr(p, '\n', r->clen - r->cpos);
        if (!nl || !fast_line(r, p, (size_t)(nl - p)))
            break;
        size_t n = (size_t)(nl - p) + 1;
        r->cpos += n;
        r->bytes_fed += n;
        r->lines_fed++;
        done++;
    }
    return done;
}

/* Feeds the next segment (through the next '\n', or to the chunk's end), or
 * a batch of lines through the fast path. */
static el_err feed(csv_rd *r, el_diag *diag)
{
    el_err rerr = refill(r, diag);
    if (rerr)
        return rerr;
    if (r->fast && fast_lines(r)) {
        if (r->oom)
            return el_diag_set(diag, EL_ENOMEM, "out of memory reading CSV");
        return EL_OK;
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
        memset(r->parser.entry_buf, 0, r->parser.entry_pos);
        r->parser.entry_pos = 0;
        r->open_field_long = true;
    }
    return EL_OK;
}

/* ---- escape mode: the tokenizer ---- */

static void tok_put(csv_rd *r, const void *p, size_t n)
{
    if (r->open_field_long)
        return;
    if (r->field.len + n > EL_CSV_MAX_FIELD) {
        el_buf_truncate(&r->field, 0);
        r->open_field_long = true; /* add_field turns it into a reject */
        return;
    }
    if (el_buf_append(&r->field, p, n))
        r->oom = true;
}

static void tok_putc(csv_rd *r, unsigned char c)
{
    tok_put(r, &c, 1);
}

/* Raw bytes of an unquoted field, matched against --null as they come. */
static void tok_raw(csv_rd *r, const void *p, size_t n)
{
    if (!r->raw_match)
        return;
    if (n > r->null_len - r->raw_len || memcmp(r->null_string + r->raw_len, p, n) != 0)
        r->raw_match = false;
    else
        r->raw_len += n;
}

static void tok_rawc(csv_rd *r, unsigned char c)
{
    tok_raw(r, &c, 1);
}

static void tok_field_reset(csv_rd *r)
{
    el_buf_truncate(&r->field, 0);
    r->quoted = r->found_null = false;
    r->raw_match = r->null_string != NULL;
    r->raw_len = 0;
}

static void tok_end_field(csv_rd *r)
{
    bool null = (r->found_null && r->field.len == 1) || /* exactly \N, as LOAD DATA */
                (!r->quoted && r->raw_match && r->raw_len == r->null_len);
    add_field(r, r->field.data ? r->field.data : "", r->field.len, null);
    tok_field_reset(r);
    r->ts = TS_FIELD_START;
}

/* The line ended: the record ends, or, blank, is skipped (see DESIGN). */
static void tok_end_line(csv_rd *r)
{
    bool blank = r->ts == TS_FIELD_START && r->nflds == r->cur_first;
    if (!blank || r->schema.ncols == 1) {
        tok_end_field(r);
        on_record(0, r);
    }
    tok_field_reset(r);
    r->ts = TS_REC_START;
}

/* LOAD DATA's unescape: the byte an escaped c stands for. */
static unsigned char tok_unescape(csv_rd *r, unsigned char c)
{
    switch (c) {
    case '0': return '\0';
    case 'b': return '\b';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'Z': return 0x1A;
    case 'N': r->found_null = true; return 'N';
    default: return c;
    }
}

/* One byte c, at byte offset off of the input. */
static void tok_byte(csv_rd *r, unsigned char c, uint64_t off)
{
    if (r->cr_pending) {
        r->cr_pending = false;
        if (c == '\n') {
            tok_end_line(r);
            r->lines_fed++;
            return;
        }
        /* not a line end: the CR is data of the field it is in */
        if (r->ts == TS_QUOTE_SEEN) {
            tok_putc(r, (unsigned char)r->quote);
            r->ts = TS_QUOTED;
        } else if (r->ts != TS_QUOTED) {
            r->ts = TS_UNQUOTED;
            tok_rawc(r, '\r');
        }
        tok_putc(r, '\r');
    }
    if (c == '\n')
        r->lines_fed++;
    if (r->esc_pending) {
        r->esc_pending = false;
        if (r->ts == TS_UNQUOTED)
            tok_rawc(r, c);
        tok_putc(r, tok_unescape(r, c));
        return;
    }
    switch (r->ts) {
    case TS_REC_START:
        r->cur_line = r->lines_fed + (c == '\n' ? 0 : 1);
        r->cur_offset = off;
        r->ts = TS_FIELD_START;
        /* fall through */
    case TS_FIELD_START:
        if (c == r->quote) {
            r->quoted = true;
            r->raw_match = false;
            r->ts = TS_QUOTED;
            return;
        }
        if (c != r->delim && c != '\n' && !(c == '\r' && r->crlf))
            r->ts = TS_UNQUOTED;
        /* fall through */
    case TS_UNQUOTED:
        if (c == r->delim) {
            tok_end_field(r);
        } else if (c == '\n' && !r->crlf) {
            tok_end_line(r);
        } else if (c == '\r' && r->crlf) {
            r->cr_pending = true;
        } else if ((int)c == r->escape) {
            tok_rawc(r, c);
            r->esc_pending = true;
        } else {
            tok_rawc(r, c);
            tok_putc(r, c);
        }
        return;
    case TS_QUOTE_SEEN:
        if (c == r->quote) { /* doubled */
            tok_putc(r, c);
            r->ts = TS_QUOTED;
            return;
        }
        if (c == r->delim) {
            tok_end_field(r);
            return;
        }
        if (c == '\n' && !r->crlf) {
            tok_end_line(r);
            return;
        }
        if (c == '\r' && r->crlf) {
            r->cr_pending = true;
            return;
        }
        /* a quote not followed by an end is data (LOAD DATA) */
        tok_putc(r, (unsigned char)r->quote);
        r->ts = TS_QUOTED;
        /* fall through */
    case TS_QUOTED:
        if ((int)c == r->escape)
            r->esc_pending = true;
        else if (c == r->quote)
            r->ts = TS_QUOTE_SEEN;
        else
            tok_putc(r, c);
        return;
    }
}

/* Tokenizes the chunk until a record is queued or the chunk is used up. */
static el_err esc_feed(csv_rd *r, el_diag *diag)
{
    el_err rerr = refill(r, diag);
    if (rerr)
        return rerr;
    size_t queued = r->nrecs;
    while (r->cpos < r->clen && r->nrecs == queued && !r->oom) {
        const unsigned char *p = r->chunk + r->cpos;
        size_t n = r->clen - r->cpos, run = 0;
        /* plain bytes inside a field go in one piece */
        if ((r->ts == TS_UNQUOTED || r->ts == TS_QUOTED) && !r->esc_pending && !r->cr_pending) {
            while (run < n && !r->special[p[run]])
                run++;
        }
        if (run) {
            if (r->ts == TS_UNQUOTED)
                tok_raw(r, p, run);
            tok_put(r, p, run);
        } else {
            tok_byte(r, p[0], r->bytes_fed);
            run = 1;
        }
        r->cpos += run;
        r->bytes_fed += run;
    }
    if (r->oom)
        return el_diag_set(diag, EL_ENOMEM, "out of memory reading CSV");
    return EL_OK;
}

/* End of input in escape mode: the last record, if any. *open_quote: the
 * input ended inside a quoted field. */
static void esc_finish(csv_rd *r, bool *open_quote)
{
    *open_quote = false;
    if (r->esc_pending) { /* a trailing escape is itself (LOAD DATA) */
        r->esc_pending = false;
        if (r->ts == TS_UNQUOTED)
            tok_rawc(r, (unsigned char)r->escape);
        tok_putc(r, (unsigned char)r->escape);
    }
    if (r->ts == TS_QUOTED) {
        *open_quote = true;
        return;
    }
    r->cr_pending = false; /* a CR at the very end ends the line */
    if (r->ts != TS_REC_START)
        tok_end_line(r);
}

/* Makes sure a record is queued. EL_EOF when the input has no more. */
static el_err fill_queue(csv_rd *r, el_diag *diag)
{
    compact(r);
    while (r->head == r->nrecs) {
        if (r->finished)
            return EL_EOF;
        el_err err = r->escape >= 0 ? esc_feed(r, diag) : feed(r, diag);
        if (err == EL_EOF) {
            /* An open quote at the end of input means the file was cut. */
            bool open_quote;
            if (r->escape >= 0) {
                esc_finish(r, &open_quote);
            } else {
                open_quote = r->parser.pstate == 2 /* FIELD_BEGUN */ && r->parser.quoted;
                csv_fini(&r->parser, on_field, on_record, r);
            }
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
    if (h->n + h->dropped > EL_CSV_MAX_COLUMNS)
        return el_diag_at(diag, EL_ELIMIT, h->line, 0, h->offset,
                          "header has %zu columns, more than the %u allowed",
                          h->n + h->dropped, EL_CSV_MAX_COLUMNS);
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
    size_t got = q->n + q->dropped;
    if (got != want) {
        if (got < want)
            return el_diag_at(diag, EL_EREJECT, q->line, q->n + 1, q->offset,
                              "wrong number of columns: expected %zu, got %zu "
                              "(column '%s' missing)", want, q->n, r->schema.names[q->n]);
        return el_diag_at(diag, EL_EREJECT, q->line, want + 1, q->offset,
                          "wrong number of columns: expected %zu, got %zu "
                          "(extra column %zu)", want, got, want + 1);
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
    el_buf_free(&r->field);
    free(r->flds);
    free(r->recs);
    free(r->vals);
    free(r->chunk);
    free(r->null_string);
    el_input_free(r->in);
    free(r);
}

/* Escape mode: checks the characters, and decides the line end from the
 * first line (after the BOM, which open has skipped). */
static el_err setup_escape(csv_rd *r, el_input *in, const el_reader_opts *opts, char delim,
                           bool tsv, el_diag *diag)
{
    unsigned char e = (unsigned char)opts->escape;
    r->quote = tsv ? -1 : '"';
    r->delim = (unsigned char)delim;
    if (e == '\n' || e == '\r' || e == r->delim || (int)e == r->quote)
        return el_diag_set(diag, EL_EUSAGE, "--escape must differ from the delimiter, the quote "
                           "and the line end");
    r->escape = e;
    r->special[r->delim] = r->special[e] = r->special['\n'] = r->special['\r'] = true;
    if (r->quote >= 0)
        r->special[r->quote] = true;
    el_buf_init(&r->field, EL_CSV_MAX_FIELD + 1);
    tok_field_reset(r);
    const unsigned char *p;
    size_t got;
    el_err err = el_input_peek(in, READ_CHUNK, &p, &got, diag);
    if (err)
        return err;
    const unsigned char *nl = memchr(p, '\n', got);
    r->crlf = nl && nl > p && nl[-1] == '\r';
    return EL_OK;
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
    r->quote_byte = tsv ? 0xFF : '"';
    r->delim = (unsigned char)delim;
    r->fast = !opts->csv_libcsv_only && !opts->escape && r->delim != '\n' &&
              r->delim != '\r' && r->delim != r->quote_byte;
    csv_set_space_func(&r->parser, no_space);
    csv_set_realloc_func(&r->parser, zalloc);
    csv_set_free_func(&r->parser, zfree);
    /* libcsv grows its field buffer linearly by this much (default 128 bytes,
     * which makes a 400 KB field cost thousands of reallocs). */
    csv_set_blk_size(&r->parser, READ_CHUNK);
    if (opts->null_string) {
        r->null_string = strdup(opts->null_string);
        r->null_len = strlen(opts->null_string);
        if (!r->null_string)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
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
    r->escape = -1;
    if (!err && opts->escape)
        err = setup_escape(r, in, opts, delim, tsv, diag);
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
