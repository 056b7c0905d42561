/*
 * s3_xml.c - a bounded scanner for S3's XML answers.
 *
 * DESIGN: one walk over the bytes keeps a stack of open element names and
 * the text of the innermost element; at each end tag of an element that had
 * no child element it calls a leaf callback with (parent, name, text). The
 * three readers (listing, error, single value) are such callbacks. XML
 * declarations, comments, processing instructions and DOCTYPE are skipped,
 * CDATA is text, attributes are ignored. Limits: depth 16, names 64 bytes,
 * text 8 KB (an S3 key is at most 1,024 bytes), 1,000,000 objects a page.
 * Text is checked for no NUL (a key with one could not be a C string).
 */
#include "s3/s3_xml.h"

#include <stdlib.h>  /* malloc, realloc, free, strtoull */
#include <string.h>  /* memcmp, memcpy, strlen */

#define MAX_DEPTH 16
#define MAX_NAME 64
#define MAX_TEXT 8192
#define MAX_OBJECTS 1000000u

/* parent_id numbers the parent element (every start tag takes the next
 * number), so a reader can tell two sibling <Contents> apart. */
typedef el_err (*leaf_fn)(void *user, const char *parent, uint64_t parent_id, const char *name,
                          const char *text, size_t len);

typedef struct walker {
    char names[MAX_DEPTH][MAX_NAME + 1];
    bool had_child[MAX_DEPTH];
    uint64_t ids[MAX_DEPTH];
    uint64_t next_id;
    int depth;
    char text[MAX_TEXT + 1];
    size_t tlen;
} walker;

static el_err text_add(walker *w, const char *p, size_t n)
{
    if (w->tlen + n > MAX_TEXT)
        return EL_ELIMIT;
    memcpy(w->text + w->tlen, p, n);
    w->tlen += n;
    return EL_OK;
}

static el_err put_utf8(walker *w, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return EL_EPARSE;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return text_add(w, b, n);
}

/* Decodes one entity starting at p[0] == '&'; *used = bytes consumed. */
static el_err entity(walker *w, const char *p, size_t n, size_t *used)
{
    size_t end = 1;
    while (end < n && end < 12 && p[end] != ';')
        end++;
    if (end >= n || p[end] != ';')
        return EL_EPARSE;
    const char *e = p + 1;
    size_t elen = end - 1;
    *used = end + 1;
    static const struct { const char *name; char c; } named[] = {
        { "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == elen && memcmp(named[i].name, e, elen) == 0)
            return text_add(w, &named[i].c, 1);
    if (elen >= 2 && e[0] == '#') {
        unsigned long cp = 0;
        bool hex = e[1] == 'x' || e[1] == 'X';
        size_t i = hex ? 2 : 1;
        if (i >= elen)
            return EL_EPARSE;
        for (; i < elen; i++) {
            char c = e[i];
            int d;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (hex && c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (hex && c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                return EL_EPARSE;
            cp = cp * (hex ? 16 : 10) + (unsigned long)d;
            if (cp > 0x10FFFF)
                return EL_EPARSE;
        }
        return put_utf8(w, cp);
    }
    return EL_EPARSE;
}

/* Finds `pat` at or after i; returns its index or n. */
static size_t find(const char *s, size_t n, size_t i, const char *pat)
{
    size_t pl = strlen(pat);
    for (; i + pl <= n; i++)
        if (memcmp(s + i, pat, pl) == 0)
            return i;
    return n;
}

static bool name_char(char c)
{
    return c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '>' && c != '/' &&
           c != '<' && c != '=';
}

static el_err walk(const char *s, size_t n, leaf_fn leaf, void *user)
{
    walker *w = malloc(sizeof *w);
    if (!w)
        return EL_ENOMEM;
    w->depth = 0;
    w->tlen = 0;
    w->next_id = 1;
    el_err err = EL_OK;
    size_t i = 0;
    bool seen_root = false;
    while (!err && i < n) {
        char c = s[i];
        if (c != '<') {
            if (c == '\0') {
                err = EL_EPARSE;
            } else if (c == '&') {
                size_t used;
                err = entity(w, s + i, n - i, &used);
                i += used;
            } else {
                size_t j = i;
                while (j < n && s[j] != '<' && s[j] != '&' && s[j] != '\0')
                    j++;
                if (w->depth > 0)
                    err = text_add(w, s + i, j - i);
                i = j;
            }
            continue;
        }
        if (i + 1 >= n) {
            err = EL_EPARSE;
            break;
        }
        if (s[i + 1] == '?') {                       /* <?xml ... ?> */
            size_t e = find(s, n, i + 2, "?>");
            if (e == n)
                err = EL_EPARSE;
            i = e + 2;
            continue;
        }
        if (n - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
            size_t e = find(s, n, i + 4, "-->");
            if (e == n)
                err = EL_EPARSE;
            i = e + 3;
            continue;
        }
        if (n - i >= 9 && memcmp(s + i, "<![CDATA[", 9) == 0) {
            size_t e = find(s, n, i + 9, "]]>");
            if (e == n || memchr(s + i + 9, '\0', e - i - 9)) {
                err = EL_EPARSE;
                break;
            }
            if (w->depth > 0)
                err = text_add(w, s + i + 9, e - i - 9);
            i = e + 3;
            continue;
        }
        if (s[i + 1] == '!') {                       /* <!DOCTYPE ...> */
            size_t e = find(s, n, i + 2, ">");
            if (e == n)
                err = EL_EPARSE;
            i = e + 1;
            continue;
        }
        bool closing = s[i + 1] == '/';
        size_t ns = i + (closing ? 2 : 1), ne = ns;
        while (ne < n && name_char(s[ne]))
            ne++;
        size_t gt = find(s, n, ne, ">");
        if (gt == n || ne == ns || ne - ns > MAX_NAME) {
            err = EL_EPARSE;
            break;
        }
        bool self_close = !closing && gt > ne && s[gt - 1] == '/';
        if (closing) {
            if (w->depth == 0 || strlen(w->names[w->depth - 1]) != ne - ns ||
                memcmp(w->names[w->depth - 1], s + ns, ne - ns) != 0) {
                err = EL_EPARSE;
                break;
            }
            if (!w->had_child[w->depth - 1]) {
                w->text[w->tlen] = '\0';
                err = leaf(user, w->depth >= 2 ? w->names[w->depth - 2] : "",
                           w->depth >= 2 ? w->ids[w->depth - 2] : 0,
                           w->names[w->depth - 1], w->text, w->tlen);
            }
            w->depth--;
            w->tlen = 0;
        } else {
            if (w->depth == MAX_DEPTH || (w->depth == 0 && seen_root)) {
                err = EL_EPARSE;
                break;
            }
            if (w->depth > 0)
                w->had_child[w->depth - 1] = true;
            memcpy(w->names[w->depth], s + ns, ne - ns);
            w->names[w->depth][ne - ns] = '\0';
            w->had_child[w->depth] = false;
            w->ids[w->depth] = w->next_id++;
            w->depth++;
            seen_root = true;
            w->tlen = 0;
            if (self_close) {
                w->text[0] = '\0';
                err = leaf(user, w->depth >= 2 ? w->names[w->depth - 2] : "",
                           w->depth >= 2 ? w->ids[w->depth - 2] : 0,
                           w->names[w->depth - 1], w->text, 0);
                w->depth--;
            }
        }
        i = gt + 1;
    }
    if (!err && (w->depth != 0 || !seen_root))
        err = EL_EPARSE;
    free(w);
    return err;
}

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
            if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 64;
                el_s3_object *v = realloc(p->objects, cap * sizeof *v);
                if (!v)
                    return EL_ENOMEM;
                p->objects = v;
                p->cap = cap;
            }
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
    el_err err = walk(xml, len, list_leaf, &c);
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
    el_err err = walk(xml, len, find_leaf, &f);
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
    if (walk(xml, len, err_leaf, &e) != EL_OK)
        return false;
    return e.is_error && doc->code[0];
}
