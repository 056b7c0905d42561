/*
 * rejects.c - JSON lines of rejected rows.
 *
 * DESIGN: a line is assembled in a buffer and written with one fwrite under
 * the mutex, so lines from several threads never interleave. Values that are
 * not valid UTF-8 (the usual reason for a reject) are written with each bad
 * byte as \u00XX of its Latin-1 reading, so the file stays valid JSON and the
 * bytes are recoverable.
 */
#include "pipeline/rows/rejects.h"

#include <errno.h>    /* errno */
#include <pthread.h>  /* the file is shared by all stages */
#include <stdio.h>    /* FILE */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strdup, strerror */
#include <unistd.h>   /* truncate on resume */

#include "common/buf.h"
#include "common/utf8.h"
#include "formats/ddb_value.h"

struct el_rejects {
    pthread_mutex_t mu;
    char *path;
    FILE *f;          /* opened on first reject */
    long max;
    uint64_t count;
    uint64_t bytes;    /* file length so far */
    bool append;       /* resumed: add to the file instead of starting it anew */
    size_t ntrack;     /* per-input tracking for resume (0 = off) */
    uint64_t *high;    /* highest offset rejected, per input */
    bool *has;         /* high[i] is set */
    uint64_t *skip;    /* restored: rejects at offsets <= skip[i] are already written */
    bool *has_skip;
};

el_rejects *el_rejects_new(const char *path, long max_rejects)
{
    el_rejects *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return NULL;
    }
    r->max = max_rejects;
    pthread_mutex_init(&r->mu, NULL);
    return r;
}

void el_rejects_free(el_rejects *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    free(r->high);
    free(r->has);
    free(r->skip);
    free(r->has_skip);
    pthread_mutex_destroy(&r->mu);
    free(r->path);
    free(r);
}

const char *el_rejects_path(const el_rejects *r) { return r->path; }

uint64_t el_rejects_count(el_rejects *r)
{
    pthread_mutex_lock(&r->mu);
    uint64_t n = r->count;
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* A JSON string of arbitrary bytes: valid UTF-8 as is, others as \u00XX. */
static el_err put_bytes(el_buf *b, const char *s, size_t len)
{
    if (el_utf8_valid(s, len, NULL))
        return el_json_put_string(b, s, len);
    el_err err = el_buf_putc(b, '"');
    for (size_t i = 0; !err && i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 || c < 0x20 || c == '"' || c == '\\')
            err = el_buf_printf(b, "\\u%04x", c);
        else
            err = el_buf_putc(b, (char)c);
    }
    if (!err)
        err = el_buf_putc(b, '"');
    return err;
}

/* Appends a line; idx/offset identify the row for resume tracking
 * (idx (size_t)-1: untracked). A row restored as already written is
 * skipped, not counted. */
static el_err write_line(el_rejects *r, size_t idx, uint64_t offset, el_buf *line,
                         el_diag *diag)
{
    el_err err = EL_OK;
    pthread_mutex_lock(&r->mu);
    if (idx < r->ntrack && r->has_skip[idx] && offset <= r->skip[idx]) {
        pthread_mutex_unlock(&r->mu);
        return EL_OK;
    }
    if (!r->f) {
        r->f = fopen(r->path, r->append ? "a" : "w");
        if (!r->f)
            err = el_diag_set(diag, EL_EIO, "cannot open rejects file %s: %s", r->path,
                              strerror(errno));
    }
    if (!err && (fwrite(line->data, 1, line->len, r->f) != line->len || fflush(r->f) != 0))
        err = el_diag_set(diag, EL_EIO, "cannot write rejects file %s: %s", r->path,
                          strerror(errno));
    if (!err) {
        r->bytes += line->len;
        if (idx < r->ntrack && (!r->has[idx] || offset > r->high[idx])) {
            r->high[idx] = offset;
            r->has[idx] = true;
        }
        r->count++;
        if (r->max >= 0 && r->count > (uint64_t)r->max)
            err = el_diag_set(diag, EL_ELIMIT, "more than %ld rows rejected (--max-rejects)",
                              r->max);
    }
    pthread_mutex_unlock(&r->mu);
    return err;
}

el_err el_rejects_track(el_rejects *r, size_t n)
{
    r->high = calloc(n ? n : 1, sizeof *r->high);
    r->has = calloc(n ? n : 1, sizeof *r->has);
    r->skip = calloc(n ? n : 1, sizeof *r->skip);
    r->has_skip = calloc(n ? n : 1, sizeof *r->has_skip);
    if (!r->high || !r->has || !r->skip || !r->has_skip)
        return EL_ENOMEM;
    r->ntrack = n;
    return EL_OK;
}

void el_rejects_snapshot(el_rejects *r, uint64_t *bytes, uint64_t *count, uint64_t *high,
                         bool *has, size_t n)
{
    pthread_mutex_lock(&r->mu);
    *bytes = r->bytes;
    *count = r->count;
    for (size_t i = 0; i < n; i++) {
        bool restored = i < r->ntrack && r->has_skip[i];
        bool own = i < r->ntrack && r->has[i];
        has[i] = restored || own;
        high[i] = own ? r->high[i] : restored ? r->skip[i] : 0;
        if (own && restored && r->skip[i] > high[i])
            high[i] = r->skip[i];
    }
    pthread_mutex_unlock(&r->mu);
}

el_err el_rejects_restore(el_rejects *r, uint64_t bytes, uint64_t count, const uint64_t *high,
                          const bool *has, size_t n, el_diag *diag)
{
    pthread_mutex_lock(&r->mu);
    el_err err = EL_OK;
    if (r->f) {
        fclose(r->f);
        r->f = NULL;
    }
    /* a rejects file shorter than recorded was moved away: start it anew */
    if (truncate(r->path, (off_t)bytes) != 0 && errno != ENOENT)
        err = el_diag_set(diag, EL_EIO, "cannot cut rejects file %s back to %llu bytes: %s",
                          r->path, (unsigned long long)bytes, strerror(errno));
    r->bytes = bytes;
    r->count = count;
    r->append = true;
    for (size_t i = 0; i < n && i < r->ntrack; i++) {
        r->skip[i] = high[i];
        r->has_skip[i] = has[i];
    }
    pthread_mutex_unlock(&r->mu);
    return err;
}

static el_err head(el_buf *b, const char *input, uint64_t line, uint64_t offset,
                   uint64_t column, const char *reason)
{
    el_err err = el_buf_puts(b, "{\"input\":");
    if (!err)
        err = put_bytes(b, input, strlen(input));
    if (!err)
        err = el_buf_printf(b, ",\"line\":%llu,\"offset\":%llu", (unsigned long long)line,
                            (unsigned long long)offset);
    if (!err && column)
        err = el_buf_printf(b, ",\"column\":%llu", (unsigned long long)column);
    if (!err)
        err = el_buf_puts(b, ",\"reason\":");
    if (!err)
        err = put_bytes(b, reason, strlen(reason));
    return err;
}

el_err el_rejects_row(el_rejects *r, const char *input, const el_diag *why,
                      const el_schema *schema, const el_row *row, el_diag *diag)
{
    return el_rejects_row_from(r, (size_t)-1, input, why, schema, row, diag);
}

el_err el_rejects_row_from(el_rejects *r, size_t idx, const char *input, const el_diag *why,
                           const el_schema *schema, const el_row *row, el_diag *diag)
{
    el_buf b;
    el_buf_init(&b, (size_t)64 * 1024 * 1024);
    el_err err = head(&b, input, row ? row->line : why->line, row ? row->offset : why->offset,
                      why->column, why->msg);
    if (!err && row) {
        err = el_buf_puts(&b, ",\"row\":{");
        for (size_t i = 0; !err && i < row->ncols; i++) {
            char extra[32];
            const char *name = extra;
            if (schema && i < schema->ncols)
                name = schema->names[i];
            else
                snprintf(extra, sizeof extra, "column%zu", i + 1);
            if (i)
                err = el_buf_putc(&b, ',');
            if (!err)
                err = put_bytes(&b, name, strlen(name));
            if (!err)
                err = el_buf_putc(&b, ':');
            if (!err && row->values[i].is_null)
                err = el_buf_puts(&b, "null");
            else if (!err && schema && i < schema->ncols && schema->types[i] == EL_COL_BINARY) {
                err = el_buf_puts(&b, "{\"base64\":\"");
                if (!err)
                    err = el_base64_put(&b, row->values[i].data, row->values[i].len);
                if (!err)
                    err = el_buf_puts(&b, "\"}");
            } else if (!err)
                err = put_bytes(&b, row->values[i].data, row->values[i].len);
        }
        if (!err)
            err = el_buf_putc(&b, '}');
    }
    if (!err)
        err = el_buf_puts(&b, "}\n");
    if (err) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_ENOMEM, "out of memory writing a reject");
    }
    err = write_line(r, idx, row ? row->offset : why->offset, &b, diag);
    el_buf_free(&b);
    return err;
}

el_err el_rejects_item(el_rejects *r, const char *input, uint64_t line, const char *reason,
                       const char *item_json, size_t item_len, el_diag *diag)
{
    return el_rejects_item_from(r, (size_t)-1, 0, input, line, reason, item_json, item_len,
                                diag);
}

el_err el_rejects_item_from(el_rejects *r, size_t idx, uint64_t offset, const char *input,
                            uint64_t line, const char *reason, const char *item_json,
                            size_t item_len, el_diag *diag)
{
    el_buf b;
    el_buf_init(&b, (size_t)64 * 1024 * 1024);
    el_err err = head(&b, input, line, offset, 0, reason);
    if (!err)
        err = el_buf_puts(&b, ",\"item\":");
    if (!err)
        err = el_buf_append(&b, item_json, item_len);
    if (!err)
        err = el_buf_puts(&b, "}\n");
    if (err) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_ENOMEM, "out of memory writing a reject");
    }
    err = write_line(r, idx, offset, &b, diag);
    el_buf_free(&b);
    return err;
}
