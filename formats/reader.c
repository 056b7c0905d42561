/*
 * reader.c - opening an input in the right format, and the generic reader.
 *
 * DESIGN: el_reader is a thin vtable wrapper so the pipeline sees one type
 * whatever the format. Auto-detection looks at the name first (a name is the
 * user's intent: .csv, .tsv, under any .zst/.gz suffix) and then at the
 * first decompressed bytes: a dump's dialect is decided by its preamble
 * (formats/dialect.h), never by its data; a dump whose preamble does not
 * tell is refused with the --format to give rather than read by a guess,
 * since the dialects decode the same bytes differently (backslashes).
 */
#include "formats/reader.h"

#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strcmp, strlen */

#include "formats/dialect.h"  /* el_sql_sniff: which dump tool wrote the preamble */

struct el_reader {
    const el_reader_ops *ops;
    void *self;
    el_format format;
    el_input *in;   /* owned by self; kept for name and progress */
    bool at_end;    /* el_reader_skip_rest */
    /* el_reader_open_range with start > 0: rows at stream offset >= head are
     * the file's rows at offset + off_shift, line + line_shift; those before
     * head (on the header's own line) belong to the part holding byte 0 */
    bool shifted;
    uint64_t head, off_shift, line_shift;
};

void el_schema_clear(el_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncols; i++) {
        if (s->names)
            free(s->names[i]);
        if (s->sql_types)
            free(s->sql_types[i]);
    }
    free(s->names);
    free(s->types);
    free(s->sql_types);
    free(s->origin);
    *s = (el_schema){0};
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && strncmp(s + len - n, suffix, n) == 0;
}

/* Format from the file name, under any compression suffix. */
static el_format from_name(const char *name)
{
    size_t len = strlen(name);
    if (ends_with(name, len, ".zst"))
        len -= 4;
    else if (ends_with(name, len, ".gz"))
        len -= 3;
    if (ends_with(name, len, ".csv"))
        return EL_FMT_CSV;
    if (ends_with(name, len, ".tsv") || ends_with(name, len, ".tab"))
        return EL_FMT_TSV;
    return EL_FMT_AUTO;
}

/* A dump whose preamble does not say which tool wrote it. */
static el_err ambiguous(const el_sniff *sn, el_diag *diag)
{
    const char *give = "give --format mysql, --format postgres or --format sqlite";
    if (sn->candidates == 0)
        return el_diag_at(diag, EL_EUSAGE, sn->line, 0, 0,
                          "cannot tell which tool wrote this dump: its preamble names none and "
                          "its statements mix dialects ('%s' at line %llu, '%s' at line %llu); %s",
                          sn->evidence2, (unsigned long long)sn->line2, sn->evidence,
                          (unsigned long long)sn->line, give);
    char list[64], flags[96] = "";
    el_sql_dialect_list(sn->candidates, " and ", list, sizeof list);
    size_t len = 0;
    for (el_format f = EL_FMT_MYSQL; f <= EL_FMT_SQLITE; f++) {
        if (!(sn->candidates & (1u << f)))
            continue;
        int w = snprintf(flags + len, sizeof flags - len, "%s--format %s",
                         len ? " or " : "", el_format_name(f));
        if (w > 0 && (size_t)w < sizeof flags - len)
            len += (size_t)w;
    }
    return el_diag_at(diag, EL_EUSAGE, sn->line, 0, 0,
                      "cannot tell which tool wrote this dump: its preamble names none and its "
                      "first statements are valid %s, which read strings differently "
                      "(backslashes); give %s", list, flags);
}

el_err el_reader_open_input(el_input *in, const el_reader_opts *opts, el_reader **out,
                            el_diag *diag)
{
    *out = NULL;
    el_reader_opts o = *opts;
    el_err err = EL_OK;
    char why[160];
    if (o.format == EL_FMT_AUTO)
        o.format = from_name(el_input_name(in));
    if (o.format == EL_FMT_AUTO) {
        const unsigned char *p;
        size_t got;
        err = el_input_peek(in, 64 * 1024, &p, &got, diag);
        if (err) {
            el_input_free(in);
            return err;
        }
        el_sniff sn;
        el_sql_sniff(p, got, &sn);
        if (sn.ambiguous) {
            el_input_free(in);
            return ambiguous(&sn, diag);
        }
        o.format = sn.format;
        if (o.format == EL_FMT_AUTO) {
            o.format = EL_FMT_CSV;
        } else {
            snprintf(why, sizeof why, "detected from '%s' at line %llu", sn.evidence,
                     (unsigned long long)sn.line);
            o.format_why = why;
        }
    }
    el_reader_open_fn open_fn = NULL;
    switch (o.format) {
    case EL_FMT_CSV:
    case EL_FMT_TSV: open_fn = el_csv_reader_open; break;
    case EL_FMT_MYSQL: open_fn = el_mysql_reader_open; break;
    case EL_FMT_POSTGRES: open_fn = el_postgres_reader_open; break;
    case EL_FMT_SQLITE: open_fn = el_sqlite_reader_open; break;
    case EL_FMT_AUTO: break;
    }
    el_reader *r = calloc(1, sizeof *r);
    if (!r) {
        el_input_free(in);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    err = open_fn(in, &o, &r->ops, &r->self, diag);
    if (err) {
        el_input_free(in);
        free(r);
        return err;
    }
    r->format = o.format;
    r->in = in;
    *out = r;
    return EL_OK;
}

el_err el_reader_open(const char *path, const el_reader_opts *opts, el_reader **out,
                      el_diag *diag)
{
    el_input *in;
    *out = NULL;
    el_err err = el_input_open_with(path, opts->opener, &in, diag);
    if (err)
        return err;
    return el_reader_open_input(in, opts, out, diag);
}

el_err el_reader_open_part(const el_reader_part *part, const el_reader_opts *opts,
                           el_reader **out, el_diag *diag)
{
    *out = NULL;
    if (opts->format != EL_FMT_CSV && opts->format != EL_FMT_TSV) {
        el_input_free(part->in);
        free(part->data);
        return el_diag_set(diag, EL_EUSAGE, "only CSV and TSV inputs are read in parts");
    }
    el_reader *r = calloc(1, sizeof *r);
    if (!r) {
        el_input_free(part->in);
        free(part->data);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    el_err err = el_csv_reader_open_part(part, opts, &r->ops, &r->self, diag);
    if (err) {
        free(r);
        return err;
    }
    r->format = opts->format;
    r->in = part->in;
    *out = r;
    return EL_OK;
}

el_err el_reader_open_range(const char *path, const el_reader_opts *opts,
                            const el_reader_range *range, el_reader **out, el_diag *diag)
{
    *out = NULL;
    if (opts->format != EL_FMT_CSV && opts->format != EL_FMT_TSV)
        return el_diag_set(diag, EL_EUSAGE, "%s: only CSV and TSV inputs can be read by byte "
                           "range", path);
    el_input *in;
    uint64_t head = range->start ? range->head : 0;
    el_err err = el_input_open_range(path, head, range->start, range->end, &in, diag);
    if (err)
        return err;
    err = el_reader_open_input(in, opts, out, diag);
    if (err || range->start == 0)
        return err;
    (*out)->shifted = true;
    (*out)->head = head;
    (*out)->off_shift = range->start - head;
    (*out)->line_shift = range->start_lines - range->head_lines;
    return EL_OK;
}

void el_reader_skip_rest(el_reader *r) { r->at_end = true; }

el_err el_reader_next(el_reader *r, el_row *row, el_diag *diag)
{
    if (r->at_end)
        return EL_EOF;
    if (!r->shifted)
        return r->ops->next(r->self, row, diag);
    for (;;) {
        el_err err = r->ops->next(r->self, row, diag);
        bool has_row = err == EL_OK || err == EL_EREJECT;
        if (has_row && row->offset < r->head)
            continue; /* a record sharing the header's line: not this range's */
        if (has_row) {
            row->offset += r->off_shift;
            row->line += r->line_shift;
        }
        if (err != EL_OK && err != EL_EOF && diag && diag->offset >= r->head &&
            (diag->offset || diag->line)) {
            diag->offset += r->off_shift;
            if (diag->line)
                diag->line += r->line_shift;
        }
        return err;
    }
}

const el_schema *el_reader_schema(const el_reader *r) { return r->ops->schema(r->self); }
el_format el_reader_format(const el_reader *r) { return r->format; }
el_input *el_reader_input(el_reader *r) { return r->in; }

void el_reader_free(el_reader *r)
{
    if (!r)
        return;
    r->ops->free(r->self);
    free(r);
}
