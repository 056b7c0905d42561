/*
 * input.c - file/stdin/memory byte source with transparent zstd and gzip.
 *
 * DESIGN: two fixed buffers: `raw` holds bytes as read from the file, `out`
 * holds decompressed bytes not yet handed to the reader. Compression is
 * decided once, from the first bytes (zstd frame magic 28 B5 2F FD, gzip
 * 1F 8B), so a misnamed file still reads right. Both decoders are streamed,
 * so memory is the two buffers plus the decoder's window whatever the file's
 * size. Concatenated gzip members and zstd frames are read through, as the
 * command-line tools do.
 */
#include "formats/input.h"

#include <errno.h>      /* errno for open/read failures */
#include <fcntl.h>      /* open */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* memcpy, memmove, strerror */
#include <sys/stat.h>   /* fstat for size and seekability */
#include <unistd.h>     /* read, pread, close */
#include <zlib.h>       /* gzip decoding */
#include <zstd.h>       /* zstd decoding */

#define RAW_CAP (256u * 1024u)
#define OUT_CAP (256u * 1024u)

struct el_input {
    char *name;
    int fd;                 /* -1 for memory inputs */
    const unsigned char *mem; /* memory input, not owned */
    size_t mem_len, mem_pos;
    uint64_t raw_size;
    uint64_t raw_consumed;
    bool seekable;
    bool raw_eof;
    el_compression comp;
    unsigned char *raw;     /* RAW_CAP bytes */
    size_t raw_pos, raw_len;
    unsigned char *out;     /* OUT_CAP bytes */
    size_t out_pos, out_len;
    const el_input_source_ops *src_ops; /* a source other than a file, or NULL */
    void *src_self;
    ZSTD_DStream *zs;
    size_t zs_last;         /* last ZSTD_decompressStream hint: 0 = frame complete */
    z_stream gz;
    bool gz_live;           /* inflateInit2 done */
    bool gz_member_done;    /* between gzip members */
    bool eof;               /* no more decompressed bytes */
    /* el_input_open_range: the file's [0, head) then [start, end), by pread */
    bool ranged;
    uint64_t file_pos, head, start, end;
};

const char *el_input_name(const el_input *in) { return in->name; }
el_compression el_input_compression(const el_input *in) { return in->comp; }
uint64_t el_input_raw_consumed(const el_input *in) { return in->raw_consumed; }
uint64_t el_input_raw_size(const el_input *in) { return in->raw_size; }
bool el_input_seekable(const el_input *in) { return in->seekable; }

void el_input_free(el_input *in)
{
    if (!in)
        return;
    if (in->fd >= 0)
        close(in->fd);
    if (in->src_ops)
        in->src_ops->free(in->src_self);
    ZSTD_freeDStream(in->zs);
    if (in->gz_live)
        inflateEnd(&in->gz);
    free(in->raw);
    free(in->out);
    free(in->name);
    free(in);
}

/* One read of a ranged input: up to the head's end, then from `start` on
 * up to `end`. 0 at the range's end. */
static ssize_t range_read(el_input *in)
{
    if (in->file_pos == in->head)
        in->file_pos = in->start;
    uint64_t stop = in->file_pos < in->head ? in->head : in->end;
    size_t want = stop - in->file_pos < RAW_CAP ? (size_t)(stop - in->file_pos) : RAW_CAP;
    if (want == 0)
        return 0;
    ssize_t n = pread(in->fd, in->raw, want, (off_t)in->file_pos);
    if (n > 0)
        in->file_pos += (uint64_t)n;
    return n;
}

/* Refills `raw` when it is empty. Sets raw_eof at the end of the file. */
static el_err raw_fill(el_input *in, el_diag *diag)
{
    if (in->raw_pos < in->raw_len || in->raw_eof)
        return EL_OK;
    in->raw_pos = in->raw_len = 0;
    if (in->mem) {
        size_t n = in->mem_len - in->mem_pos;
        if (n > RAW_CAP)
            n = RAW_CAP;
        memcpy(in->raw, in->mem + in->mem_pos, n);
        in->mem_pos += n;
        in->raw_len = n;
    } else if (in->src_ops) {
        el_err err = in->src_ops->read(in->src_self, in->raw, RAW_CAP, &in->raw_len, diag);
        if (err)
            return err;
    } else {
        ssize_t n;
        do {
            n = in->ranged ? range_read(in) : read(in->fd, in->raw, RAW_CAP);
        } while (n < 0 && errno == EINTR);
        if (n < 0)
            return el_diag_set(diag, EL_EIO, "cannot read %s: %s", in->name, strerror(errno));
        in->raw_len = (size_t)n;
    }
    if (in->raw_len == 0)
        in->raw_eof = true;
    return EL_OK;
}

/* Decompresses (or copies) into the free tail of `out`. */
static el_err out_fill(el_input *in, el_diag *diag)
{
    if (in->eof)
        return EL_OK;
    if (in->out_pos > 0 && in->out_pos == in->out_len)
        in->out_pos = in->out_len = 0;
    else if (in->out_pos > 0) {
        memmove(in->out, in->out + in->out_pos, in->out_len - in->out_pos);
        in->out_len -= in->out_pos;
        in->out_pos = 0;
    }
    size_t before = in->out_len;
    while (in->out_len == before) {
        el_err err = raw_fill(in, diag);
        if (err)
            return err;
        if (in->raw_eof && in->raw_pos == in->raw_len) {
            bool mid_frame = (in->comp == EL_COMP_ZSTD && in->zs_last != 0) ||
                             (in->comp == EL_COMP_GZIP && in->gz_live && !in->gz_member_done);
            /* Both decoders can hold decoded bytes back when `out` filled up
             * on the previous call; let them flush before calling it the end. */
            if (mid_frame && in->comp == EL_COMP_ZSTD) {
                ZSTD_inBuffer zin = { NULL, 0, 0 };
                ZSTD_outBuffer zout = { in->out, OUT_CAP, in->out_len };
                size_t r = ZSTD_decompressStream(in->zs, &zout, &zin);
                if (!ZSTD_isError(r))
                    in->zs_last = r;
                in->out_len = zout.pos;
                if (in->out_len != before)
                    return EL_OK;
                mid_frame = in->zs_last != 0;
            }
            if (mid_frame && in->comp == EL_COMP_GZIP) {
                in->gz.next_in = NULL;
                in->gz.avail_in = 0;
                in->gz.next_out = in->out + in->out_len;
                in->gz.avail_out = (uInt)(OUT_CAP - in->out_len);
                int zr = inflate(&in->gz, Z_NO_FLUSH);
                in->out_len = OUT_CAP - in->gz.avail_out;
                if (zr == Z_STREAM_END)
                    in->gz_member_done = true;
                if (in->out_len != before)
                    return EL_OK;
                mid_frame = !in->gz_member_done;
            }
            in->eof = true;
            if (mid_frame)
                return el_diag_set(diag, EL_ETRUNCATED,
                                   "%s: compressed data ends in the middle of a frame "
                                   "(file truncated?)", in->name);
            return EL_OK;
        }
        size_t avail = in->raw_len - in->raw_pos;
        switch (in->comp) {
        case EL_COMP_NONE: {
            size_t room = OUT_CAP - in->out_len;
            size_t n = avail < room ? avail : room;
            memcpy(in->out + in->out_len, in->raw + in->raw_pos, n);
            in->out_len += n;
            in->raw_pos += n;
            in->raw_consumed += n;
            break;
        }
        case EL_COMP_ZSTD: {
            ZSTD_inBuffer zin = { in->raw + in->raw_pos, avail, 0 };
            ZSTD_outBuffer zout = { in->out, OUT_CAP, in->out_len };
            size_t r = ZSTD_decompressStream(in->zs, &zout, &zin);
            if (ZSTD_isError(r))
                return el_diag_set(diag, EL_EPARSE, "%s: zstd: %s (at compressed byte %llu)",
                                   in->name, ZSTD_getErrorName(r),
                                   (unsigned long long)(in->raw_consumed + zin.pos));
            in->zs_last = r;
            in->raw_pos += zin.pos;
            in->raw_consumed += zin.pos;
            in->out_len = zout.pos;
            break;
        }
        case EL_COMP_GZIP: {
            if (in->gz_member_done) {
                /* Another member follows (gzip -c a b > c.gz); restart. */
                if (inflateReset(&in->gz) != Z_OK)
                    return el_diag_set(diag, EL_EINTERNAL, "%s: gzip reset failed", in->name);
                in->gz_member_done = false;
            }
            in->gz.next_in = in->raw + in->raw_pos;
            in->gz.avail_in = (uInt)avail;
            in->gz.next_out = in->out + in->out_len;
            in->gz.avail_out = (uInt)(OUT_CAP - in->out_len);
            int zr = inflate(&in->gz, Z_NO_FLUSH);
            size_t used = avail - in->gz.avail_in;
            in->raw_pos += used;
            in->raw_consumed += used;
            in->out_len = OUT_CAP - in->gz.avail_out;
            if (zr == Z_STREAM_END)
                in->gz_member_done = true;
            else if (zr != Z_OK && zr != Z_BUF_ERROR)
                return el_diag_set(diag, EL_EPARSE, "%s: gzip: %s (at compressed byte %llu)",
                                   in->name, in->gz.msg ? in->gz.msg : "corrupt data",
                                   (unsigned long long)in->raw_consumed);
            break;
        }
        }
        if (in->out_len == OUT_CAP)
            break;
    }
    return EL_OK;
}

/* Looks at the first bytes of the raw stream to pick the decoder. */
static el_err detect(el_input *in, el_diag *diag)
{
    el_err err = raw_fill(in, diag);
    if (err)
        return err;
    /* A 1-3 byte first read from a pipe is possible; a magic needs 4 bytes.
     * Pipes deliver at least what was written in one go in practice, and a
     * compressor writes far more than 4 bytes at once. */
    const unsigned char *p = in->raw + in->raw_pos;
    size_t n = in->raw_len - in->raw_pos;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xB5 && p[2] == 0x2F && p[3] == 0xFD) {
        in->comp = EL_COMP_ZSTD;
        in->zs = ZSTD_createDStream();
        if (!in->zs)
            return el_diag_set(diag, EL_ENOMEM, "out of memory for zstd decoder");
        /* 2^27 window (128 MB) is zstd's default ceiling for --long=27 dumps;
         * larger windows are refused, bounding memory on hostile input. */
        ZSTD_DCtx_setParameter(in->zs, ZSTD_d_windowLogMax, 27);
        in->zs_last = 1;
    } else if (n >= 2 && p[0] == 0x1F && p[1] == 0x8B) {
        in->comp = EL_COMP_GZIP;
        memset(&in->gz, 0, sizeof in->gz);
        if (inflateInit2(&in->gz, 15 + 16) != Z_OK)
            return el_diag_set(diag, EL_ENOMEM, "out of memory for gzip decoder");
        in->gz_live = true;
    }
    return EL_OK;
}

/* The common end of every opener: sniff the compression, then hand the input
 * over, or free it on failure (the caller's *out stays NULL). */
static el_err finish_open(el_input *in, el_input **out, el_diag *diag)
{
    el_err err = detect(in, diag);
    if (err) {
        el_input_free(in);
        return err;
    }
    *out = in;
    return EL_OK;
}

static el_err input_new(const char *name, el_input **out, el_diag *diag)
{
    el_input *in = calloc(1, sizeof *in);
    if (!in)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    in->fd = -1;
    in->name = strdup(name);
    in->raw = malloc(RAW_CAP);
    in->out = malloc(OUT_CAP);
    if (!in->name || !in->raw || !in->out) {
        el_input_free(in);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    *out = in;
    return EL_OK;
}

/* Opens path (NULL: a copy of standard input) as in's descriptor; says why
 * when it cannot (in stays the caller's to free: freeing it here left gcc
 * -O3 warning of a use after free at every caller). */
static el_err open_fd(el_input *in, const char *path, el_diag *diag)
{
    in->fd = path ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
    if (in->fd >= 0)
        return EL_OK;
    return el_diag_set(diag, EL_EIO, "cannot open %s: %s", in->name, strerror(errno));
}

el_err el_input_open(const char *path, el_input **out, el_diag *diag)
{
    *out = NULL;
    bool is_stdin = strcmp(path, "-") == 0;
    el_input *in = NULL; /* set by input_new (gcc -O3 cannot tell) */
    el_err err = input_new(is_stdin ? "<stdin>" : path, &in, diag);
    if (err)
        return err;
    if ((err = open_fd(in, is_stdin ? NULL : path, diag))) {
        el_input_free(in);
        return err;
    }
    struct stat st;
    if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
        in->raw_size = (uint64_t)st.st_size;
        in->seekable = !is_stdin;
    }
    return finish_open(in, out, diag);
}

el_err el_input_open_range(const char *path, uint64_t head, uint64_t start, uint64_t end,
                           el_input **out, el_diag *diag)
{
    *out = NULL;
    el_input *in = NULL; /* set by input_new (gcc -O3 cannot tell) */
    el_err err = input_new(path, &in, diag);
    if (err)
        return err;
    if ((err = open_fd(in, path, diag))) {
        el_input_free(in);
        return err;
    }
    struct stat st;
    if (fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode) || head > start || start > end ||
        end > (uint64_t)st.st_size) {
        el_input_free(in);
        return el_diag_set(diag, EL_EUSAGE, "%s: cannot read bytes %llu-%llu of it (not a "
                           "regular file of that size)", path, (unsigned long long)start,
                           (unsigned long long)end);
    }
    in->ranged = true;
    in->head = head;
    in->start = start;
    in->end = end;
    in->raw_size = head + (end - start);
    in->seekable = true;
    *out = in;
    return EL_OK;
}

el_err el_input_open_mem(const void *data, size_t len, const char *name, el_input **out,
                         el_diag *diag)
{
    *out = NULL;
    el_input *in = NULL; /* set by input_new (gcc -O3 cannot tell) */
    el_err err = input_new(name ? name : "<memory>", &in, diag);
    if (err)
        return err;
    in->mem = data;
    in->mem_len = len;
    in->raw_size = len;
    return finish_open(in, out, diag);
}

el_err el_input_open_source(const char *name, const el_input_source_ops *ops, void *self,
                            uint64_t size, bool seekable, el_input **out, el_diag *diag)
{
    *out = NULL;
    el_input *in = NULL; /* set by input_new (gcc -O3 cannot tell) */
    el_err err = input_new(name, &in, diag);
    if (err) {
        ops->free(self);
        return err;
    }
    in->src_ops = ops;
    in->src_self = self;
    in->raw_size = size;
    in->seekable = seekable;
    return finish_open(in, out, diag);
}

el_err el_input_open_with(const char *path, const el_input_opener *opener, el_input **out,
                          el_diag *diag)
{
    if (opener && opener->prefix && strncmp(path, opener->prefix, strlen(opener->prefix)) == 0)
        return opener->open(opener->ctx, path, out, diag);
    if (strncmp(path, "s3://", 5) == 0) {
        *out = NULL;
        return el_diag_set(diag, EL_EUSAGE, "%s: S3 inputs are not available here", path);
    }
    return el_input_open(path, out, diag);
}

el_err el_input_read(el_input *in, void *dst, size_t n, size_t *got, el_diag *diag)
{
    *got = 0;
    if (in->out_pos == in->out_len) {
        el_err err = out_fill(in, diag);
        if (err)
            return err;
    }
    size_t avail = in->out_len - in->out_pos;
    if (n > avail)
        n = avail;
    memcpy(dst, in->out + in->out_pos, n);
    in->out_pos += n;
    *got = n;
    return EL_OK;
}

el_err el_input_peek(el_input *in, size_t n, const unsigned char **p, size_t *got,
                     el_diag *diag)
{
    if (n > OUT_CAP)
        n = OUT_CAP;
    while (in->out_len - in->out_pos < n && !in->eof) {
        size_t before = in->out_len - in->out_pos;
        el_err err = out_fill(in, diag);
        if (err)
            return err;
        if (in->out_len - in->out_pos == before && in->eof)
            break;
    }
    size_t avail = in->out_len - in->out_pos;
    *p = in->out + in->out_pos;
    *got = avail < n ? avail : n;
    return EL_OK;
}
