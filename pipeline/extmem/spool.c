/*
 * spool.c - an anonymous file, a write buffer, and one filtering pass.
 *
 * DESIGN: a dry run's lines must wait until the input's end has shown
 * which of them later rows supersede, and an input may be larger than
 * memory, so they wait on disk. The copy decides line by line at each
 * line's first byte (is its number the next duplicate?) and then passes
 * or skips bytes up to the newline, so a line may span blocks and no line
 * is ever held whole.
 */
#include "pipeline/extmem/spool.h"

#include <errno.h>   /* errno, EINTR */
#include <stdbool.h> /* bool */
#include <stdio.h>   /* snprintf */
#include <stdlib.h>  /* calloc, malloc, free */
#include <string.h>  /* memcpy, memchr, strerror */
#include <unistd.h>  /* write, pread, close, unlink, mkstemp */

#define SPOOL_BLOCK (256u * 1024u)

struct el_spool {
    int fd;
    char *dir;
    unsigned char *buf;
    size_t len;
    uint64_t bytes;
};

el_err el_spool_new(const char *dir, el_spool **out, el_diag *diag)
{
    *out = NULL;
    el_spool *s = calloc(1, sizeof *s);
    if (s) {
        s->fd = -1;
        s->dir = strdup(dir && dir[0] ? dir : ".");
        s->buf = malloc(SPOOL_BLOCK);
    }
    if (!s || !s->dir || !s->buf) {
        el_spool_free(s);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    size_t n = strlen(s->dir) + sizeof "/.edgeload-spool-XXXXXX";
    char *path = malloc(n);
    if (!path) {
        el_spool_free(s);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    snprintf(path, n, "%s/.edgeload-spool-XXXXXX", s->dir);
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        el_err err = el_diag_set(diag, EL_EIO, "cannot create a spool file in %s: %s", s->dir,
                                 strerror(errno));
        free(path);
        el_spool_free(s);
        return err;
    }
    unlink(path); /* anonymous from here on */
    free(path);
    *out = s;
    return EL_OK;
}

static el_err flush_buf(el_spool *s, el_diag *diag)
{
    const unsigned char *p = s->buf;
    size_t n = s->len;
    while (n > 0) {
        ssize_t w = write(s->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return el_diag_set(diag, EL_EIO, "cannot write the spool file in %s: %s", s->dir,
                               strerror(w < 0 ? errno : EIO));
        p += w;
        n -= (size_t)w;
    }
    s->len = 0;
    return EL_OK;
}

el_err el_spool_write(el_spool *s, const void *p, size_t n, el_diag *diag)
{
    const unsigned char *b = p;
    s->bytes += n;
    while (n > 0) {
        if (s->len == SPOOL_BLOCK) {
            el_err err = flush_buf(s, diag);
            if (err)
                return err;
        }
        size_t take = SPOOL_BLOCK - s->len < n ? SPOOL_BLOCK - s->len : n;
        memcpy(s->buf + s->len, b, take);
        s->len += take;
        b += take;
        n -= take;
    }
    return EL_OK;
}

/* The next line to leave out, UINT64_MAX when none is left. */
static el_err next_drop(el_dedup *d, uint64_t *line, el_diag *diag)
{
    bool got = false;
    el_err err = d ? el_dedup_next_drop(d, line, &got, diag) : EL_OK;
    if (!err && !got)
        *line = UINT64_MAX;
    return err;
}

el_err el_spool_copy(el_spool *s, FILE *out, el_dedup *d, uint64_t *dropped, el_diag *diag)
{
    *dropped = 0;
    el_err err = flush_buf(s, diag);
    uint64_t drop = 0, line = 0, off = 0;
    if (!err)
        err = next_drop(d, &drop, diag);
    bool keep = line != drop;
    while (!err && off < s->bytes) {
        size_t want = s->bytes - off < SPOOL_BLOCK ? (size_t)(s->bytes - off) : SPOOL_BLOCK;
        ssize_t got = pread(s->fd, s->buf, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            err = el_diag_set(diag, EL_EIO, "cannot read back the spool file in %s: %s",
                              s->dir, got < 0 ? strerror(errno) : "shorter than written");
            break;
        }
        off += (uint64_t)got;
        const unsigned char *b = s->buf, *e = s->buf + got;
        while (!err && b < e) {
            const unsigned char *nl = memchr(b, '\n', (size_t)(e - b));
            const unsigned char *stop = nl ? nl + 1 : e;
            if (keep && fwrite(b, 1, (size_t)(stop - b), out) != (size_t)(stop - b))
                err = el_diag_set(diag, EL_EIO, "cannot write to standard output");
            if (!err && nl) {
                if (!keep) {
                    (*dropped)++;
                    err = next_drop(d, &drop, diag);
                }
                line++;
                keep = line != drop;
            }
            b = stop;
        }
    }
    s->len = 0;
    if (!err && drop != UINT64_MAX)
        err = el_diag_set(diag, EL_EINTERNAL, "line %llu to leave out is not in the spool",
                          (unsigned long long)drop);
    if (!err && fflush(out) != 0)
        err = el_diag_set(diag, EL_EIO, "cannot write to standard output");
    return err;
}

uint64_t el_spool_bytes(const el_spool *s)
{
    return s->bytes;
}

void el_spool_free(el_spool *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->dir);
    free(s);
}
