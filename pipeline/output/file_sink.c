/*
 * file_sink.c - DynamoDB JSON lines, zstd-compressed, in bounded parts with
 * a manifest (`--output DIR`).
 *
 * DESIGN: one part is open at a time. Lines are gathered in a staging buffer
 * of ZSTD_CStreamInSize() bytes and handed to the streaming compressor in
 * big blocks, so the per-item cost is a memcpy; the compressed bytes go to
 * the part's temporary file and through SHA-256 on their way out, so nothing
 * is read back. A part becomes visible only complete: the temporary file is
 * fsynced, renamed to its final name, and the directory fsynced, in that
 * order, so after a crash every `part-NNNNN.json.zst` is whole. The manifest
 * is written the same way, last, by el_file_sink_finish: its presence is what
 * says the run is complete, and a directory that already holds a manifest or
 * parts is refused so that two runs never mix in one place.
 *
 * With an object store (opts.store: s3://bucket/prefix/, s3/s3_store.h) the
 * same bytes go to store objects instead of files: a part is an object
 * opened at the part's start, streamed into as the compressor emits, and
 * committed (made visible) where the file would be renamed; the manifest is
 * committed last, and an unfinished part is aborted, never visible.
 *
 * Format: "Amazon S3 import formats for DynamoDB" (S3DataImport.Format):
 * DynamoDB JSON is one {"Item":{...}} object per line, "newlines are used as
 * item delimiters and shouldn't be used within an item object" (the item
 * encoder escapes them); ZSTD and GZIP are the accepted compressions. Each
 * part is one zstd frame with its content checksum.
 *
 * Part size: DynamoDB's "Best practices for importing from Amazon S3 into
 * DynamoDB" (Developer Guide, S3DataImport.BestPractices: "Avoid excessively
 * large S3 objects") says "For items under 1 KB, consider placing 4,000,000
 * items into each S3 object. If you have a larger average item size, place
 * proportionally fewer items into each S3 object", and an import takes at
 * most 50,000 S3 objects. https://docs.aws.amazon.com/amazondynamodb/latest/
 * developerguide/S3DataImport.BestPractices.html
 * So a part closes at 4,000,000 items, or earlier at 1 GiB of uncompressed
 * JSON, so that parts of larger items hold proportionally fewer of them.
 */
#include "pipeline/output/file_sink.h"

#include <dirent.h>     /* opendir: refusing a used directory */
#include <errno.h>      /* errno, EEXIST, EINTR */
#include <fcntl.h>      /* open, O_* */
#include <stdbool.h>    /* bool */
#include <stdio.h>      /* snprintf, rename */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* memcpy, strerror, strncmp */
#include <sys/stat.h>   /* mkdir, stat */
#include <unistd.h>     /* write, fsync, close, unlink */

#include <openssl/evp.h> /* SHA-256 of each part */
#include <zstd.h>        /* streaming compression */

#include "common/file.h"   /* EL_PATH_BYTES */
#include "common/lockfile.h"   /* one run per --output directory */
#include "common/buf.h"
#include "formats/ddb_value.h"
#include "common/vec.h"  /* el_grow */

#define DEFAULT_LEVEL 1  /* as small as 3 on DynamoDB JSON lines, 1.5x less CPU */
#define LINE_PREFIX "{\"Item\":"
#define LINE_SUFFIX "}\n"
#define LINE_OVERHEAD EL_FILE_SINK_LINE_OVERHEAD
_Static_assert(EL_FILE_SINK_LINE_OVERHEAD == sizeof LINE_PREFIX - 1 + sizeof LINE_SUFFIX - 1,
               "the line overhead is what the prefix and suffix add");
#define MANIFEST_MAX_BYTES ((size_t)64 << 20)

typedef struct part_info {
    uint64_t first;              /* number of its first item (items are numbered in put order) */
    unsigned id;                 /* its name: data/part-<id>.json.zst */
    uint64_t items;
    uint64_t bytes;              /* compressed, as on disk */
    uint64_t uncompressed_bytes;
    char sha256[65];             /* lowercase hex */
} part_info;

struct el_file_sink {
    el_lockfile *lock;           /* DIR/.edgeload.lock, held while the sink lives (files only) */
    char *dir;                   /* as given */
    char *data_dir;              /* dir/data */
    char *table;                 /* NULL: recorded as null */
    uint64_t max_items, max_bytes;
    int level;

    ZSTD_CCtx *cctx;
    EVP_MD_CTX *md;
    unsigned char *in;           /* staging buffer for uncompressed lines */
    size_t in_len, in_cap;
    unsigned char *out;          /* compressor output on its way to the file */
    size_t out_cap;

    int fd;                      /* the open part's temporary file, -1 none */
    const el_object_store *store; /* objects instead of files (S3), or NULL */
    void *obj;                   /* the open part's object in the store, NULL none */
    char tmp_path[EL_PATH_BYTES];
    part_info cur;               /* the open part so far */

    part_info *parts;            /* closed parts, in order */
    size_t nparts, parts_cap;
    unsigned next_id;            /* the next new part's name */
    uint64_t items;              /* every item put, open part included */
    el_err broken;               /* first failure: the sink takes no more */
    bool finished;
    bool dropped;                /* el_file_sink_drop ran: no more puts */
};

/* ---- small helpers ---- */

static el_err io_error(el_diag *diag, const char *what, const char *path)
{
    return el_diag_set(diag, EL_EIO, "cannot %s %s: %s", what, path, strerror(errno));
}

static el_err join_path(char *out, size_t cap, const char *dir, const char *name, el_diag *diag)
{
    int n = snprintf(out, cap, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= cap)
        return el_diag_set(diag, EL_EUSAGE, "path too long: %s/%s", dir, name);
    return EL_OK;
}

static el_err write_all(int fd, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return EL_EIO;
        }
        b += w;
        n -= (size_t)w;
    }
    return EL_OK;
}

/* fsyncs a directory so that a rename in it survives a crash. */
static el_err sync_dir(const char *path, el_diag *diag)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return io_error(diag, "open directory", path);
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return io_error(diag, "sync directory", path);
    }
    close(fd);
    return EL_OK;
}

/* mkdir -p: every missing component is created. */
static el_err make_dirs(const char *path, el_diag *diag)
{
    char buf[EL_PATH_BYTES];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf)
        return el_diag_set(diag, EL_EUSAGE, "bad output directory '%s'", path);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return io_error(diag, "create directory", buf);
        buf[i] = c;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return io_error(diag, "open directory", path);
    if (!S_ISDIR(st.st_mode))
        return el_diag_set(diag, EL_EUSAGE, "%s is not a directory", path);
    return EL_OK;
}

/* A directory holding the manifest or the parts of another run is refused:
 * the new parts would be listed with old ones under one S3 prefix. */
static el_err check_unused(const el_file_sink *s, el_diag *diag)
{
    char path[EL_PATH_BYTES];
    el_err err = join_path(path, sizeof path, s->dir, "manifest.json", diag);
    if (err)
        return err;
    struct stat st;
    if (lstat(path, &st) == 0)
        return el_diag_set(diag, EL_EUSAGE,
                           "%s already holds the output of a run (manifest.json): give an empty "
                           "or new directory", s->dir);
    DIR *d = opendir(s->data_dir);
    if (!d)
        return errno == ENOENT ? EL_OK : io_error(diag, "open directory", s->data_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "part-", 5) == 0 || strncmp(e->d_name, ".part-", 6) == 0) {
            el_err r = el_diag_set(diag, EL_EUSAGE,
                                   "%s already holds the output of a run (data/%s): give an "
                                   "empty or new directory", s->dir, e->d_name);
            closedir(d);
            return r;
        }
    }
    closedir(d);
    return EL_OK;
}

/* ---- parts ---- */

/* The final path of part id (files only). */
static el_err part_path(const el_file_sink *s, unsigned id, char *out, el_diag *diag)
{
    char name[64];
    snprintf(name, sizeof name, "part-%05u.json.zst", id);
    return join_path(out, EL_PATH_BYTES, s->data_dir, name, diag);
}

/* Writes what the compressor produced to the part and through SHA-256. */
static el_err emit(el_file_sink *s, size_t n, el_diag *diag)
{
    if (n == 0)
        return EL_OK;
    if (s->store) {
        el_err err = s->store->ops->write(s->obj, s->out, n, diag);
        if (err)
            return err;
    } else if (write_all(s->fd, s->out, n)) {
        return io_error(diag, "write", s->tmp_path);
    }
    if (EVP_DigestUpdate(s->md, s->out, n) != 1)
        return el_diag_set(diag, EL_EINTERNAL, "SHA-256 update failed");
    s->cur.bytes += n;
    return EL_OK;
}

/* Feeds src to the compressor; mode ZSTD_e_end also closes the frame. */
static el_err feed(el_file_sink *s, const void *src, size_t len, ZSTD_EndDirective mode,
                       el_diag *diag)
{
    ZSTD_inBuffer in = { src, len, 0 };
    for (;;) {
        ZSTD_outBuffer out = { s->out, s->out_cap, 0 };
        size_t left = ZSTD_compressStream2(s->cctx, &out, &in, mode);
        if (ZSTD_isError(left))
            return el_diag_set(diag, EL_EINTERNAL, "zstd: %s", ZSTD_getErrorName(left));
        el_err err = emit(s, out.pos, diag);
        if (err)
            return err;
        if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size)
            return EL_OK;
    }
}

static el_err flush_staging(el_file_sink *s, el_diag *diag)
{
    el_err err = feed(s, s->in, s->in_len, ZSTD_e_continue, diag);
    s->in_len = 0;
    return err;
}

/* Starts part `id` (a new one, or the one being written again). */
static el_err open_part(el_file_sink *s, unsigned id, el_diag *diag)
{
    char name[64];
    if (s->store) {
        snprintf(name, sizeof name, "data/part-%05u.json.zst", id);
        el_err err = s->store->ops->open(s->store->self, name, &s->obj, diag);
        if (err)
            return err;
        s->fd = -2;   /* a part is open (in the store) */
        goto started;
    }
    snprintf(name, sizeof name, ".part-%05u.json.zst.tmp", id);
    el_err err = join_path(s->tmp_path, sizeof s->tmp_path, s->data_dir, name, diag);
    if (err)
        return err;
    s->fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (s->fd < 0) {
        el_err e = io_error(diag, "create", s->tmp_path);
        s->tmp_path[0] = '\0';   /* not ours: free must not remove it */
        return e;
    }
started:
    memset(&s->cur, 0, sizeof s->cur);
    s->in_len = 0;
    if (ZSTD_isError(ZSTD_CCtx_reset(s->cctx, ZSTD_reset_session_only)))
        return el_diag_set(diag, EL_EINTERNAL, "zstd: cannot start a frame");
    if (EVP_DigestInit_ex(s->md, EVP_sha256(), NULL) != 1)
        return el_diag_set(diag, EL_EINTERNAL, "SHA-256 init failed");
    return EL_OK;
}

/* Ends the frame of part `id`, makes it durable and gives it its final name
 * (over the old one when it is written again); s->cur then describes it. */
static el_err end_part(el_file_sink *s, unsigned id, el_diag *diag)
{
    el_err err = flush_staging(s, diag);
    if (!err)
        err = feed(s, NULL, 0, ZSTD_e_end, diag);
    if (err)
        return err;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_DigestFinal_ex(s->md, md, &mdlen) != 1 || mdlen != 32)
        return el_diag_set(diag, EL_EINTERNAL, "SHA-256 final failed");
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < mdlen; i++) {
        s->cur.sha256[2 * i] = hex[md[i] >> 4];
        s->cur.sha256[2 * i + 1] = hex[md[i] & 15];
    }
    s->cur.sha256[64] = '\0';
    if (s->store) {
        void *obj = s->obj;
        s->obj = NULL;
        s->fd = -1;
        return s->store->ops->commit(obj, diag);
    }
    if (fsync(s->fd) != 0)
        return io_error(diag, "sync", s->tmp_path);
    int fd = s->fd;
    s->fd = -1;
    if (close(fd) != 0) {
        unlink(s->tmp_path);
        return io_error(diag, "close", s->tmp_path);
    }
    char final_path[EL_PATH_BYTES];
    err = part_path(s, id, final_path, diag);
    if (!err && rename(s->tmp_path, final_path) != 0)
        err = io_error(diag, "rename to", final_path);
    if (err) {
        unlink(s->tmp_path);
        return err;
    }
    s->tmp_path[0] = '\0';
    return sync_dir(s->data_dir, diag);
}

/* Closes the open (new) part and lists it. */
static el_err close_part(el_file_sink *s, el_diag *diag)
{
    part_info *v = el_grow(s->parts, &s->parts_cap, s->nparts + 1, sizeof *v, 16);
    if (!v)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    s->parts = v;
    unsigned id = s->next_id;
    uint64_t first = s->items - s->cur.items;
    el_err err = end_part(s, id, diag);
    if (err)
        return err;
    s->cur.first = first;
    s->cur.id = id;
    s->parts[s->nparts++] = s->cur;
    s->next_id++;
    return EL_OK;
}

/* ---- taking items out, after the fact ---- */

typedef struct dropper {
    el_file_sink_next_fn next;
    void *user;
    uint64_t pending;            /* the next item to take out; UINT64_MAX: none left */
} dropper;

static el_err advance(dropper *dr, el_diag *diag)
{
    uint64_t v;
    bool got;
    el_err err = dr->next(dr->user, &v, &got, diag);
    if (err)
        return err;
    dr->pending = got ? v : UINT64_MAX;
    return EL_OK;
}

/* Copies bytes of a kept line into the part being written. */
static el_err stage(el_file_sink *s, const unsigned char *p, size_t n, el_diag *diag)
{
    while (n > 0) {
        if (s->in_len == s->in_cap) {
            el_err err = flush_staging(s, diag);
            if (err)
                return err;
        }
        size_t take = s->in_cap - s->in_len < n ? s->in_cap - s->in_len : n;
        memcpy(s->in + s->in_len, p, take);
        s->in_len += take;
        p += take;
        n -= take;
    }
    return EL_OK;
}

/* Bytes [off, off + n) of part p as written: *got < n only when it is
 * shorter than the manifest says. */
static el_err read_back(el_file_sink *s, int fd, const char *name, uint64_t off,
                        unsigned char *dst, size_t n, size_t *got, el_diag *diag)
{
    if (s->store)
        return s->store->ops->read(s->store->self, name, off, dst, n, got, diag);
    *got = 0;
    while (*got < n) {
        ssize_t r = pread(fd, dst + *got, n - *got, (off_t)(off + *got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return el_diag_set(diag, EL_EIO, "cannot read back %s/%s: %s", s->dir, name,
                               strerror(errno));
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    return EL_OK;
}

/* Writes part pi again without the items dr names: read back and
 * decompressed block by block, each line kept or skipped as a whole,
 * compressed into a new part that replaces the old one atomically (a
 * temporary file renamed over it; the store's object written again). A
 * part with nothing left is removed; its items become 0. */
static el_err rewrite_part(el_file_sink *s, size_t pi, dropper *dr, uint64_t *dropped,
                           el_diag *diag)
{
    part_info *p = &s->parts[pi];
    char name[64], path[EL_PATH_BYTES];
    snprintf(name, sizeof name, "data/part-%05u.json.zst", p->id);
    int src = -1;
    el_err err = EL_OK;
    if (s->store && (!s->store->ops->read || !s->store->ops->remove))
        return el_diag_set(diag, EL_EINTERNAL, "%s: the store cannot read parts back",
                           s->dir);
    if (!s->store) {
        err = part_path(s, p->id, path, diag);
        if (!err && (src = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            err = io_error(diag, "open", path);
        if (err)
            return err;
    }
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    size_t zin_cap = ZSTD_DStreamInSize(), zout_cap = ZSTD_DStreamOutSize();
    unsigned char *zin = malloc(zin_cap), *zout = malloc(zout_cap);
    if (!dctx || !zin || !zout)
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err)
        err = open_part(s, p->id, diag);
    uint64_t item = p->first, off = 0, kept = 0, kept_bytes = 0, line_bytes = 0;
    bool keep = item != dr->pending;
    size_t ret = 1;
    while (!err && off < p->bytes) {
        size_t want = p->bytes - off < zin_cap ? (size_t)(p->bytes - off) : zin_cap, got = 0;
        err = read_back(s, src, name, off, zin, want, &got, diag);
        if (!err && got == 0)
            err = el_diag_set(diag, EL_EIO, "%s/%s is shorter than when it was written", s->dir,
                              name);
        off += got;
        ZSTD_inBuffer in = { zin, got, 0 };
        bool full = false;
        while (!err && (in.pos < in.size || full)) {
            ZSTD_outBuffer out = { zout, zout_cap, 0 };
            ret = ZSTD_decompressStream(dctx, &out, &in);
            if (ZSTD_isError(ret)) {
                err = el_diag_set(diag, EL_EIO, "%s/%s does not read back: zstd: %s", s->dir,
                                  name, ZSTD_getErrorName(ret));
                break;
            }
            full = out.pos == out.size;
            const unsigned char *b = zout, *e = zout + out.pos;
            while (!err && b < e) {
                const unsigned char *nl = memchr(b, '\n', (size_t)(e - b));
                const unsigned char *stop = nl ? nl + 1 : e;
                if (keep) {
                    err = stage(s, b, (size_t)(stop - b), diag);
                    line_bytes += (uint64_t)(stop - b);
                }
                if (!err && nl) {
                    if (keep) {
                        kept++;
                        kept_bytes += line_bytes;
                    } else {
                        (*dropped)++;
                        err = advance(dr, diag);
                    }
                    line_bytes = 0;
                    item++;
                    keep = item != dr->pending;
                }
                b = stop;
            }
        }
    }
    if (!err && (ret != 0 || item != p->first + p->items))
        err = el_diag_set(diag, EL_EIO, "%s/%s reads back as %llu items, not the %llu written",
                          s->dir, name, (unsigned long long)(item - p->first),
                          (unsigned long long)p->items);
    ZSTD_freeDCtx(dctx);
    free(zin);
    free(zout);
    if (src >= 0)
        close(src);
    if (!err && kept == 0) {
        /* nothing left: the new part never appears and the old one goes */
        if (s->store) {
            s->store->ops->abort(s->obj);
            s->obj = NULL;
            s->fd = -1;
            err = s->store->ops->remove(s->store->self, name, diag);
        } else {
            close(s->fd);
            s->fd = -1;
            unlink(s->tmp_path);
            s->tmp_path[0] = '\0';
            if (unlink(path) != 0)
                err = io_error(diag, "remove", path);
            if (!err)
                err = sync_dir(s->data_dir, diag);
        }
        p->items = 0;
        return err;
    }
    if (!err) {
        s->cur.items = kept;
        s->cur.uncompressed_bytes = kept_bytes;
        err = end_part(s, p->id, diag);
    }
    if (!err) {
        uint64_t first = p->first;
        unsigned id = p->id;
        *p = s->cur;
        p->first = first;
        p->id = id;
    }
    return err;
}

el_err el_file_sink_drop(el_file_sink *s, el_file_sink_next_fn next, void *user,
                         uint64_t *dropped, el_diag *diag)
{
    *dropped = 0;
    if (s->broken)
        return el_diag_set(diag, s->broken, "output stopped after an earlier error");
    if (s->finished || s->dropped)
        return el_diag_set(diag, EL_EINTERNAL, "drop after finish or a drop");
    el_err err = s->fd != -1 ? close_part(s, diag) : EL_OK;
    s->dropped = true;
    dropper dr = { next, user, 0 };
    if (!err)
        err = advance(&dr, diag);
    for (size_t pi = 0; !err && pi < s->nparts && dr.pending != UINT64_MAX; pi++) {
        const part_info *p = &s->parts[pi];
        if (dr.pending < p->first)
            err = el_diag_set(diag, EL_EINTERNAL, "items to take out not in ascending order");
        else if (dr.pending < p->first + p->items)
            err = rewrite_part(s, pi, &dr, dropped, diag);
    }
    if (!err && dr.pending != UINT64_MAX)
        err = el_diag_set(diag, EL_EINTERNAL, "item %llu to take out was never put",
                          (unsigned long long)dr.pending);
    /* parts left empty are gone from the list too */
    size_t keep = 0;
    for (size_t pi = 0; pi < s->nparts; pi++)
        if (s->parts[pi].items > 0)
            s->parts[keep++] = s->parts[pi];
    s->nparts = keep;
    s->items -= *dropped;
    if (err)
        s->broken = err;
    return err;
}

/* ---- the manifest ---- */

static el_err build_manifest(const el_file_sink *s, el_buf *b)
{
    el_err err = el_buf_printf(b, "{\"format\":\"DYNAMODB_JSON\",\"compression\":\"ZSTD\","
                                  "\"table\":");
    if (!err)
        err = s->table ? el_json_put_string(b, s->table, strlen(s->table))
                       : el_buf_puts(b, "null");
    if (!err)
        err = el_buf_printf(b, ",\"item_count\":%llu,\"parts\":[",
                            (unsigned long long)s->items);
    for (size_t i = 0; !err && i < s->nparts; i++) {
        const part_info *p = &s->parts[i];
        err = el_buf_printf(b,
                            "%s{\"path\":\"data/part-%05u.json.zst\",\"items\":%llu,"
                            "\"bytes\":%llu,\"uncompressed_bytes\":%llu,\"sha256\":\"%s\"}",
                            i ? "," : "", p->id, (unsigned long long)p->items,
                            (unsigned long long)p->bytes,
                            (unsigned long long)p->uncompressed_bytes, p->sha256);
    }
    if (!err)
        err = el_buf_puts(b, "],\"created_by\":\"edgeload " EDGELOAD_VERSION "\"}\n");
    return err;
}

static el_err write_manifest(el_file_sink *s, el_diag *diag)
{
    el_buf b;
    el_buf_init(&b, MANIFEST_MAX_BYTES);
    char tmp[EL_PATH_BYTES], final_path[EL_PATH_BYTES];
    el_err err = build_manifest(s, &b);
    if (err) {
        el_buf_free(&b);
        return el_diag_set(diag, err, "cannot build the manifest: %s", el_strerror(err));
    }
    if (s->store) {   /* last: its presence says the run is complete */
        void *obj = NULL;
        err = s->store->ops->open(s->store->self, "manifest.json", &obj, diag);
        if (!err && (err = s->store->ops->write(obj, b.data, b.len, diag)) != EL_OK)
            s->store->ops->abort(obj);
        else if (!err)
            err = s->store->ops->commit(obj, diag);
        el_buf_free(&b);
        return err;
    }
    err = join_path(tmp, sizeof tmp, s->dir, ".manifest.json.tmp", diag);
    if (!err)
        err = join_path(final_path, sizeof final_path, s->dir, "manifest.json", diag);
    if (err) {
        el_buf_free(&b);
        return err;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        el_buf_free(&b);
        return io_error(diag, "create", tmp);
    }
    if (write_all(fd, b.data, b.len))
        err = io_error(diag, "write", tmp);
    else if (fsync(fd) != 0)
        err = io_error(diag, "sync", tmp);
    if (close(fd) != 0 && !err)
        err = io_error(diag, "close", tmp);
    if (!err && rename(tmp, final_path) != 0)
        err = io_error(diag, "rename to", final_path);
    if (err)
        unlink(tmp);
    el_buf_free(&b);
    return err ? err : sync_dir(s->dir, diag);
}

/* ---- the API ---- */

el_err el_file_sink_new(const el_file_sink_opts *opts, el_file_sink **out, el_diag *diag)
{
    *out = NULL;
    if (!opts->dir || !opts->dir[0])
        return el_diag_set(diag, EL_EUSAGE, "no output directory given");
    el_file_sink *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    s->fd = -1;
    s->store = opts->store;
    s->max_items = opts->part_max_items ? opts->part_max_items : EL_FILE_SINK_PART_ITEMS;
    s->max_bytes = opts->part_max_bytes ? opts->part_max_bytes : EL_FILE_SINK_PART_BYTES;
    s->level = opts->zstd_level ? opts->zstd_level : DEFAULT_LEVEL;
    size_t dlen = strlen(opts->dir);
    while (dlen > 1 && opts->dir[dlen - 1] == '/')
        dlen--;   /* "out/" and "out" name the same place in messages */
    s->dir = strndup(opts->dir, dlen);
    s->table = opts->table ? strdup(opts->table) : NULL;
    s->in_cap = ZSTD_CStreamInSize();
    s->out_cap = ZSTD_CStreamOutSize();
    s->in = malloc(s->in_cap);
    s->out = malloc(s->out_cap);
    s->cctx = ZSTD_createCCtx();
    s->md = EVP_MD_CTX_new();
    el_buf dd;
    el_buf_init(&dd, EL_PATH_BYTES);
    el_err err = EL_OK;
    if (!s->dir || (opts->table && !s->table) || !s->in || !s->out || !s->cctx || !s->md ||
        el_buf_printf(&dd, "%s/data", s->dir) || !(s->data_dir = el_buf_take(&dd)))
        err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_buf_free(&dd);
    if (!err && (ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_compressionLevel,
                                                      s->level)) ||
                 ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_checksumFlag, 1)) ||
                 /* one thread: the readers have the other cores */
                 ZSTD_isError(ZSTD_CCtx_setParameter(s->cctx, ZSTD_c_nbWorkers, 0))))
        err = el_diag_set(diag, EL_EUSAGE, "bad zstd level %d", s->level);
    if (!err && s->store)
        err = s->store->ops->check_unused(s->store->self, diag);
    else if (!err)
        err = make_dirs(s->dir, diag);
    if (!err && !s->store) {
        /* one run per directory: taken before it is checked, so two runs
         * started together cannot both find it unused */
        char lpath[EL_PATH_BYTES], what[EL_PATH_BYTES + 32];
        err = join_path(lpath, sizeof lpath, s->dir, ".edgeload.lock", diag);
        snprintf(what, sizeof what, "--output directory %s", s->dir);
        if (!err)
            err = el_lockfile_take(lpath, what, &s->lock, diag);
    }
    if (!err && !s->store)
        err = check_unused(s, diag);
    if (!err && !s->store && mkdir(s->data_dir, 0777) != 0 && errno != EEXIST)
        err = io_error(diag, "create directory", s->data_dir);
    if (!err && !s->store)
        err = sync_dir(s->dir, diag);
    if (err) {
        el_file_sink_free(s);
        return err;
    }
    *out = s;
    return EL_OK;
}

el_err el_file_sink_put(el_file_sink *s, const char *item_json, size_t len, el_diag *diag)
{
    if (s->broken)
        return el_diag_set(diag, s->broken, "output stopped after an earlier error");
    if (s->finished || s->dropped)
        return el_diag_set(diag, EL_EINTERNAL, "put after finish or drop");
    uint64_t line = (uint64_t)len + LINE_OVERHEAD;
    el_err err = EL_OK;
    /* a part holds at least one item, however large */
    if (s->fd != -1 && el_file_sink_part_full(s->cur.items, s->cur.uncompressed_bytes, line,
                                              s->max_items, s->max_bytes))
        err = close_part(s, diag);
    if (!err && s->fd == -1)
        err = open_part(s, s->next_id, diag);
    if (!err && s->in_len + line > s->in_cap)
        err = flush_staging(s, diag);
    if (!err && line > s->in_cap) {
        /* larger than the staging buffer: straight to the compressor */
        err = feed(s, LINE_PREFIX, sizeof LINE_PREFIX - 1, ZSTD_e_continue, diag);
        if (!err)
            err = feed(s, item_json, len, ZSTD_e_continue, diag);
        if (!err)
            err = feed(s, LINE_SUFFIX, sizeof LINE_SUFFIX - 1, ZSTD_e_continue, diag);
    } else if (!err) {
        memcpy(s->in + s->in_len, LINE_PREFIX, sizeof LINE_PREFIX - 1);
        s->in_len += sizeof LINE_PREFIX - 1;
        memcpy(s->in + s->in_len, item_json, len);
        s->in_len += len;
        memcpy(s->in + s->in_len, LINE_SUFFIX, sizeof LINE_SUFFIX - 1);
        s->in_len += sizeof LINE_SUFFIX - 1;
    }
    if (err) {
        s->broken = err;
        return err;
    }
    s->cur.items++;
    s->cur.uncompressed_bytes += line;
    s->items++;
    return EL_OK;
}

el_err el_file_sink_finish(el_file_sink *s, el_diag *diag)
{
    if (s->broken)
        return el_diag_set(diag, s->broken, "output stopped after an earlier error");
    if (s->finished)
        return EL_OK;
    el_err err = s->fd != -1 ? close_part(s, diag) : EL_OK;
    if (!err)
        err = write_manifest(s, diag);
    if (err) {
        s->broken = err;
        return err;
    }
    s->finished = true;
    return EL_OK;
}

uint64_t el_file_sink_items(const el_file_sink *s)
{
    return s->items;
}

size_t el_file_sink_parts(const el_file_sink *s)
{
    return s->nparts;
}

void el_file_sink_free(el_file_sink *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    if (s->obj)
        s->store->ops->abort(s->obj);   /* an unfinished part never appears */
    if (s->tmp_path[0])
        unlink(s->tmp_path);   /* an unfinished part never looks complete */
    ZSTD_freeCCtx(s->cctx);
    EVP_MD_CTX_free(s->md);
    el_lockfile_free(s->lock);
    free(s->in);
    free(s->out);
    free(s->parts);
    free(s->dir);
    free(s->data_dir);
    free(s->table);
    free(s);
}
