/*
 * s3_xml.c - S3's XML answers read through the bounded scanner of
 * common/xml.h.
 *
 * DESIGN: the three readers (listing, error, single value) are leaf
 * callbacks of el_xml_walk; each keeps only the fields it names and
 * ignores the rest, so an answer with fields S3 adds later still reads.
 * A page holds at most 1,000,000 objects.
 */
#include "s3/s3_xml.h"

#include <stdlib.h>  /* free */
#include <string.h>  /* memcmp, memcpy, strlen */

#include "common/vec.h"  /* el_grow: a page's objects */
#include "common/xml.h"  /* the bounded scanner the readers are callbacks of */

#define MAX_OBJECTS 1000000u

/* ---- ListObjectsV2 ---- */

typedef struct list_ctx {
    el_s3_list_page *page;
    uint64_t cur_id;    /* the <Contents> element objects[n-1] came from */
} list_ctx;

static el_err parse_u64(const char *t, size_t len, uint64_t *out)
{
    if (len == 0 || len > 20)
        return EL_EPARSE;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] < '0' || t[i] > '9')
            return EL_EPARSE;
        unsigned d = (unsigned)(t[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return EL_EPARSE;
        v = v * 10 + d;
    }
    *out = v;
    return EL_OK;
}

static el_err list_leaf(void *user, const char *parent, uint64_t parent_id, const char *name,
                        const char *text, size_t len)
{
    list_ctx *c = user;
    el_s3_list_page *p = c->page;
    if (strcmp(parent, "Contents") == 0) {
        if (parent_id != c->cur_id) {   /* a new <Contents> */
            if (p->n == MAX_OBJECTS)
                return EL_ELIMIT;
            el_s3_object *v = el_grow(p->objects, &p->cap, p->n + 1, sizeof *v, 64);
            if (!v)
                return EL_ENOMEM;
            p->objects = v;
            p->objects[p->n++] = (el_s3_object){ NULL, 0, NULL };
            c->cur_id = parent_id;
        }
        el_s3_object *o = &p->objects[p->n - 1];
        if (strcmp(name, "Key") == 0) {
            if (o->key)
                return EL_EPARSE;
            o->key = strndup(text, len);
            return o->key ? EL_OK : EL_ENOMEM;
        }
        if (strcmp(name, "Size") == 0)
            return parse_u64(text, len, &o->size);
        if (strcmp(name, "ETag") == 0) {
            free(o->etag);
            o->etag = strndup(text, len);
            return o->etag ? EL_OK : EL_ENOMEM;
        }
        return EL_OK;
    }
    if (strcmp(parent, "ListBucketResult") != 0)
        return EL_OK;
    if (strcmp(name, "IsTruncated") == 0) {
        p->truncated = len == 4 && memcmp(text, "true", 4) == 0;
        return EL_OK;
    }
    if (strcmp(name, "NextContinuationToken") == 0) {
        free(p->next_token);
        p->next_token = strndup(text, len);
        return p->next_token ? EL_OK : EL_ENOMEM;
    }
    return EL_OK;
}

void el_s3_list_page_clear(el_s3_list_page *page)
{
    for (size_t i = 0; i < page->n; i++) {
        free(page->objects[i].key);
        free(page->objects[i].etag);
    }
    free(page->objects);
    free(page->next_token);
    memset(page, 0, sizeof *page);
}

el_err el_s3_xml_list(const char *xml, size_t len, el_s3_list_page *page, el_diag *diag)
{
    memset(page, 0, sizeof *page);
    list_ctx c = { page, 0 };
    el_err err = el_xml_walk(xml, len, list_leaf, &c);
    for (size_t i = 0; !err && i < page->n; i++) {
        if (!page->objects[i].key)
            err = EL_EPARSE;
        else if (!page->objects[i].etag && !(page->objects[i].etag = strdup("")))
            err = EL_ENOMEM;
    }
    if (!err && page->truncated && (!page->next_token || !page->next_token[0]))
        err = el_diag_set(diag, EL_EPARSE, "truncated listing without a continuation token");
    else if (err)
        el_diag_set(diag, err, "cannot read the object listing: %s",
                    err == EL_EPARSE ? "malformed XML" : el_strerror(err));
    if (err)
        el_s3_list_page_clear(page);
    return err;
}

/* ---- errors and single values ---- */

typedef struct find_ctx {
    const char *name;
    char *out;
    size_t cap;
    el_err found;  /* EL_EOF until found */
} find_ctx;

static el_err find_leaf(void *user, const char *parent, uint64_t parent_id, const char *name,
                        const char *text, size_t len)
{
    (void)parent;
    (void)parent_id;
    find_ctx *f = user;
    if (f->found != EL_EOF || strcmp(name, f->name) != 0)
        return EL_OK;
    if (len + 1 > f->cap) {
        f->found = EL_ELIMIT;
        return EL_OK;
    }
    memcpy(f->out, text, len);
    f->out[len] = '\0';
    f->found = EL_OK;
    return EL_OK;
}

el_err el_s3_xml_find(const char *xml, size_t len, const char *name, char *out, size_t cap)
{
    if (cap == 0)
        return EL_ELIMIT;
    out[0] = '\0';
    find_ctx f = { name, out, cap, EL_EOF };
    el_err err = el_xml_walk(xml, len, find_leaf, &f);
    return err ? err : f.found;
}

typedef struct err_ctx {
    el_s3_error_doc *doc;
    bool is_error;
} err_ctx;

static void copy_trunc(char *dst, size_t cap, const char *src, size_t len)
{
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

static el_err err_leaf(void *user, const char *parent, uint64_t parent_id, const char *name,
                       const char *text, size_t len)
{
    (void)parent_id;
    err_ctx *e = user;
    if (strcmp(parent, "Error") != 0)
        return EL_OK;
    e->is_error = true;
    if (strcmp(name, "Code") == 0)
        copy_trunc(e->doc->code, sizeof e->doc->code, text, len);
    else if (strcmp(name, "Message") == 0)
        copy_trunc(e->doc->message, sizeof e->doc->message, text, len);
    else if (strcmp(name, "Region") == 0)
        copy_trunc(e->doc->region, sizeof e->doc->region, text, len);
    return EL_OK;
}

bool el_s3_xml_error(const char *xml, size_t len, el_s3_error_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    err_ctx e = { doc, false };
    if (el_xml_walk(xml, len, err_leaf, &e) != EL_OK)
        return false;
    return e.is_error && doc->code[0];
}
