/*
 * xml.c - a bounded scanner for the little XML AWS services answer with.
 *
 * DESIGN: one walk over the bytes keeps a stack of open element names and
 * the text of the innermost element; at each end tag of an element that had
 * no child element it calls a leaf callback with (parent, name, text). The
 * readers (S3 listings and errors, STS answers) are such callbacks. XML
 * declarations, comments, processing instructions and DOCTYPE are skipped,
 * CDATA is text, attributes are ignored. Limits: depth 16, names 64 bytes,
 * text 16 KB (an S3 key is at most 1,024 bytes, an STS session token a few
 * KB). Text is checked for no NUL (a value with one could not be a C
 * string). The text buffer is wiped before it is freed: it held every
 * value, secret keys of STS answers among them.
 */
#include "common/xml.h"

#include <stdbool.h> /* bool */
#include <stdlib.h>  /* malloc, free */
#include <string.h>  /* memcmp, memcpy, strlen, explicit_bzero */

#define MAX_DEPTH 16
#define MAX_NAME 64
#define MAX_TEXT (16 * 1024)

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

el_err el_xml_walk(const char *s, size_t n, el_xml_leaf_fn leaf, void *user)
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
    explicit_bzero(w, sizeof *w);
    free(w);
    return err;
}
