/*
 * s3_store.c - streamed multipart uploads behind file_sink's object store.
 *
 * DESIGN: an object is one buffer of part_size bytes and, once the buffer
 * has filled the first time, one multipart upload. Parts are sent from the
 * sink's own thread as the buffer fills: compression and upload alternate,
 * which is simple and keeps memory at one part; the sink's output is far
 * smaller than the rows read, so the upload is rarely what bounds a run.
 * The ETags of the parts sent are kept for CompleteMultipartUpload.
 */
#include "s3/s3_store.h"

#include "common/buf.h"  /* a ranged GET lands in one */

#include <stdbool.h>  /* bool */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* memcpy, strlen */

#define DEFAULT_PART (16u * 1024u * 1024u)
#define MIN_TEST_PART (64u * 1024u)     /* S3-compatible test servers take smaller */
#define MAX_PARTS 10000

struct el_s3_store {
    el_s3 *s3;
    char *bucket;
    char *prefix;       /* "" or ending in '/' */
    size_t part_size;
    el_object_store target;
};

typedef struct s3_obj {
    el_s3_store *st;
    char *key;
    unsigned char *buf;
    size_t len;
    char *upload_id;    /* NULL until the first part goes out */
    char **etags;
    size_t nparts;
} s3_obj;

static void obj_free(s3_obj *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->nparts; i++)
        free(o->etags[i]);
    free(o->etags);
    free(o->upload_id);
    free(o->buf);
    free(o->key);
    free(o);
}

static el_err send_part(s3_obj *o, el_diag *diag)
{
    el_s3_store *st = o->st;
    if (o->nparts == MAX_PARTS)
        return el_diag_set(diag, EL_ELIMIT, "s3://%s/%s: more than %d parts of %zu bytes",
                           st->bucket, o->key, MAX_PARTS, st->part_size);
    el_err err = EL_OK;
    if (!o->upload_id)
        err = el_s3_mpu_create(st->s3, st->bucket, o->key, &o->upload_id, diag);
    if (!o->etags && !err) {
        o->etags = calloc(MAX_PARTS, sizeof *o->etags);
        if (!o->etags)
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    char *etag = NULL;
    if (!err)
        err = el_s3_mpu_part(st->s3, st->bucket, o->key, o->upload_id, (int)o->nparts + 1,
                             o->buf, o->len, &etag, diag);
    if (err)
        return err;
    o->etags[o->nparts++] = etag;
    o->len = 0;
    return EL_OK;
}

static void obj_abort(void *p)
{
    s3_obj *o = p;
    if (!o)
        return;
    if (o->upload_id) {
        el_diag d;
        el_diag_clear(&d);
        (void)!el_s3_mpu_abort(o->st->s3, o->st->bucket, o->key, o->upload_id, &d);
    }
    obj_free(o);
}

static el_err obj_open(void *self, const char *name, void **out, el_diag *diag)
{
    el_s3_store *st = self;
    *out = NULL;
    s3_obj *o = calloc(1, sizeof *o);
    size_t plen = strlen(st->prefix), nlen = strlen(name);
    if (o) {
        o->st = st;
        o->key = malloc(plen + nlen + 1);
        o->buf = malloc(st->part_size);
    }
    if (!o || !o->key || !o->buf) {
        obj_free(o);
        return el_diag_set(diag, EL_ENOMEM, "out of memory for an upload buffer");
    }
    memcpy(o->key, st->prefix, plen);
    memcpy(o->key + plen, name, nlen + 1);
    *out = o;
    return EL_OK;
}

static el_err obj_write(void *p, const void *data, size_t n, el_diag *diag)
{
    s3_obj *o = p;
    const unsigned char *b = data;
    while (n > 0) {
        size_t room = o->st->part_size - o->len;
        size_t take = n < room ? n : room;
        memcpy(o->buf + o->len, b, take);
        o->len += take;
        b += take;
        n -= take;
        if (o->len == o->st->part_size) {
            el_err err = send_part(o, diag);
            if (err)
                return err;
        }
    }
    return EL_OK;
}

static el_err obj_commit(void *p, el_diag *diag)
{
    s3_obj *o = p;
    el_s3_store *st = o->st;
    el_err err;
    if (!o->upload_id) {
        err = el_s3_put(st->s3, st->bucket, o->key, o->buf, o->len, diag);
    } else {
        err = o->len > 0 ? send_part(o, diag) : EL_OK;
        if (!err)
            err = el_s3_mpu_complete(st->s3, st->bucket, o->key, o->upload_id, o->etags,
                                     o->nparts, diag);
    }
    if (err) {
        obj_abort(o);
        return err;
    }
    obj_free(o);
    return EL_OK;
}

static el_err check_unused(void *self, el_diag *diag)
{
    el_s3_store *st = self;
    el_s3_list_page list;
    el_err err = el_s3_list(st->s3, st->bucket, st->prefix, 0, &list, diag);
    if (err)
        return err;
    size_t plen = strlen(st->prefix);
    for (size_t i = 0; !err && i < list.n; i++) {
        const char *rest = list.objects[i].key + plen;
        if (strcmp(rest, "manifest.json") == 0 || strncmp(rest, "data/part-", 10) == 0)
            err = el_diag_set(diag, EL_EUSAGE, "s3://%s/%s already holds the output of a run "
                              "(%s): give an empty or new prefix", st->bucket, st->prefix,
                              rest);
    }
    el_s3_list_page_clear(&list);
    return err;
}

/* The object's key under the prefix, in a buffer of cap bytes. */
static el_err object_key(const el_s3_store *st, const char *name, char *out, size_t cap,
                         el_diag *diag)
{
    int n = snprintf(out, cap, "%s%s", st->prefix, name);
    if (n < 0 || (size_t)n >= cap)
        return el_diag_set(diag, EL_EUSAGE, "s3://%s/%s%s: key too long", st->bucket,
                           st->prefix, name);
    return EL_OK;
}

static el_err obj_read(void *self, const char *name, uint64_t off, void *dst, size_t n,
                       size_t *got, el_diag *diag)
{
    el_s3_store *st = self;
    char key[2048];
    *got = 0;
    el_err err = object_key(st, name, key, sizeof key, diag);
    if (err || n == 0)
        return err;
    el_buf b;
    el_buf_init(&b, n + 1);
    err = el_s3_get_range(st->s3, st->bucket, key, off, off + n, NULL, &b, diag);
    if (!err) {
        *got = b.len < n ? b.len : n;
        memcpy(dst, b.data, *got);
    }
    el_buf_free(&b);
    return err;
}

static el_err obj_remove(void *self, const char *name, el_diag *diag)
{
    el_s3_store *st = self;
    char key[2048];
    el_err err = object_key(st, name, key, sizeof key, diag);
    return err ? err : el_s3_delete(st->s3, st->bucket, key, diag);
}

static const el_object_store_ops OPS = {
    .check_unused = check_unused, .open = obj_open, .write = obj_write,
    .commit = obj_commit, .abort = obj_abort, .read = obj_read, .remove = obj_remove
};

el_err el_s3_store_new(el_s3 *s3, const char *url, size_t part_size, el_s3_store **out,
                       el_diag *diag)
{
    *out = NULL;
    el_s3_store *st = calloc(1, sizeof *st);
    if (!st)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    st->s3 = s3;
    st->part_size = part_size ? part_size : DEFAULT_PART;
    if (st->part_size < MIN_TEST_PART)
        st->part_size = MIN_TEST_PART;
    char *key = NULL;
    el_err err = el_s3_url_parse(url, &st->bucket, &key, diag);
    if (!err) {
        size_t len = strlen(key);
        bool slash = len == 0 || key[len - 1] == '/';
        st->prefix = malloc(len + 2);
        if (!st->prefix) {
            err = el_diag_set(diag, EL_ENOMEM, "out of memory");
        } else {
            memcpy(st->prefix, key, len);
            if (!slash)
                st->prefix[len++] = '/';
            st->prefix[len] = '\0';
        }
    }
    free(key);
    if (err) {
        el_s3_store_free(st);
        return err;
    }
    st->target.ops = &OPS;
    st->target.self = st;
    *out = st;
    return EL_OK;
}

void el_s3_store_free(el_s3_store *st)
{
    if (!st)
        return;
    free(st->bucket);
    free(st->prefix);
    free(st);
}

const el_object_store *el_s3_store_target(el_s3_store *st) { return &st->target; }
const char *el_s3_store_bucket(const el_s3_store *st) { return st->bucket; }
const char *el_s3_store_prefix(const el_s3_store *st) { return st->prefix; }
