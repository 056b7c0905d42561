/*
 * ini.c - the shared AWS files (~/.aws/credentials, ~/.aws/config) parsed
 * the way botocore parses them.
 *
 * DESIGN: a file becomes a flat list of (section, key, value) entries and a
 * setting is looked up by a scan: the files are a few KB, read once a run,
 * so a list beats a hash table. The dialect is botocore's (configparser):
 * full-line `#`/`;` comments, `key = value` or `key: value`, keys
 * case-insensitive, indented continuation lines hold nested settings
 * (`dynamodb =` followed by `  endpoint_url = ...`, stored as key
 * "dynamodb.endpoint_url"). In the config file `[profile x]` names profile
 * x and `[default]` (or `[profile default]`) the default one; `[services x]`
 * holds per-service settings a profile points to with `services = x`, and
 * `[sso-session x]` the settings of an IAM Identity Center session.
 *
 * Secrets pass through file buffers and parsed values; every such buffer is
 * wiped before it is freed, and no message ever includes a value read from
 * a file (parse errors name the file and line only).
 */
#include "aws/ini.h"

#include <ctype.h>     /* isspace, tolower */
#include <errno.h>     /* errno, ENOENT */
#include <stdio.h>     /* FILE, fopen, fread */
#include <stdlib.h>    /* free */
#include <string.h>    /* strlen, strcmp, memcpy, explicit_bzero */
#include <sys/stat.h>  /* stat for the permission check */

#include "aws/aws_internal.h"  /* string helpers */
#include "common/buf.h"
#include "common/vec.h"    /* el_grow: the entries */

/* Longest file we accept. */
#define INI_MAX_FILE (4u * 1024 * 1024)

void el_ini_clear(el_ini *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].section);
        free(f->v[i].key);
        el_aws_wipe_free(f->v[i].value);
    }
    free(f->v);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static el_err el_ini_add(el_ini *f, el_ini_kind kind, const char *section, const char *key,
                      size_t keylen, const char *value, size_t valuelen)
{
    el_ini_entry *v = el_grow(f->v, &f->cap, f->n + 1, sizeof *v, 16);
    if (!v)
        return EL_ENOMEM;
    f->v = v;
    el_ini_entry *e = &f->v[f->n];
    e->kind = kind;
    e->section = el_aws_dup(section);
    e->key = el_aws_dup_n(key, keylen);
    e->value = el_aws_dup_n(value, valuelen);
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        el_aws_wipe_free(e->value);
        return EL_ENOMEM;
    }
    for (char *k = e->key; *k; k++)
        *k = (char)tolower((unsigned char)*k);
    f->n++;
    return EL_OK;
}

/* The last value set for key in the section (later lines override). */
const char *el_ini_get(const el_ini *f, el_ini_kind kind, const char *section,
                           const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; i < f->n; i++) {
        const el_ini_entry *e = &f->v[i];
        if (e->kind == kind && strcmp(e->section, section) == 0 &&
            strcmp(e->key, key) == 0)
            found = e->value;
    }
    return found;
}

bool el_ini_has_section(const el_ini *f, el_ini_kind kind, const char *section)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].kind == kind && strcmp(f->v[i].section, section) == 0)
            return true;
    return false;
}

static void trim(const char **s, size_t *n)
{
    while (*n && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

/* "key = value" (or "key: value") split at sep, a byte of s[0..n): the key
 * and the value, each trimmed. */
static void split_setting(const char *s, size_t n, const char *sep, const char **k,
                          size_t *klen, const char **v, size_t *vlen)
{
    *k = s;
    *klen = (size_t)(sep - s);
    *v = sep + 1;
    *vlen = n - *klen - 1;
    trim(k, klen);
    trim(v, vlen);
}

/* Splits a section header's inside into kind and name. The credentials file
 * names profiles directly; the config file says `profile x` (or `default`). */
static el_err parse_section(const char *s, size_t n, bool config_file, el_ini_kind *kind,
                            char **name)
{
    trim(&s, &n);
    *kind = EL_INI_OTHER;
    if (config_file) {
        size_t w = 0;
        while (w < n && !isspace((unsigned char)s[w]))
            w++;
        const char *rest = s + w;
        size_t restlen = n - w;
        trim(&rest, &restlen);
        if (w == 7 && memcmp(s, "profile", 7) == 0 && restlen) {
            *kind = EL_INI_PROFILE;
            s = rest;
            n = restlen;
        } else if (w == 8 && memcmp(s, "services", 8) == 0 && restlen) {
            *kind = EL_INI_SERVICES;
            s = rest;
            n = restlen;
        } else if (w == 11 && memcmp(s, "sso-session", 11) == 0 && restlen) {
            *kind = EL_INI_SSO_SESSION;
            s = rest;
            n = restlen;
        } else if (n == 7 && memcmp(s, "default", 7) == 0) {
            *kind = EL_INI_PROFILE;
        }
    } else {
        *kind = EL_INI_PROFILE;
    }
    *name = el_aws_dup_n(s, n);
    return *name ? EL_OK : EL_ENOMEM;
}

static el_err parse_line_error(el_diag *diag, const char *path, size_t lineno,
                               const char *what)
{
    /* Never quote the line: it may hold a secret. */
    return el_diag_at(diag, EL_ECONFIG, lineno, 0, 0, "cannot parse %s line %zu: %s",
                      path, lineno, what);
}

static el_err el_ini_parse(el_ini *f, char *text, bool config_file, el_diag *diag)
{
    el_ini_kind kind = EL_INI_OTHER;
    char *section = NULL;
    char *parent = NULL;    /* key whose value is empty: nested lines follow */
    bool in_key = false;    /* a key line was seen in this section */
    size_t key_indent = 0;  /* its indentation: deeper lines continue it */
    size_t lineno = 0;
    el_err err = EL_OK;

    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char *next = nl ? nl + 1 : NULL;
        lineno++;
        const char *s = line;
        size_t indent = 0;
        while (indent < n && (s[indent] == ' ' || s[indent] == '\t'))
            indent++;
        trim(&s, &n);
        if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
            s += 3;
            n -= 3;
        }
        if (n == 0 || s[0] == '#' || s[0] == ';') {
            line = next;
            continue;
        }
        if (in_key && indent > key_indent) {
            /* A continuation line: nested "k = v" under a parent key, or part
             * of a multi-line value we do not use. */
            if (parent) {
                const char *eq = memchr(s, '=', n);
                if (eq) {
                    const char *k, *v;
                    size_t klen, vlen;
                    split_setting(s, n, eq, &k, &klen, &v, &vlen);
                    el_buf name;
                    el_buf_init(&name, 1024);
                    if (el_buf_puts(&name, parent) || el_buf_putc(&name, '.') ||
                        el_buf_append(&name, k, klen)) {
                        el_buf_free(&name);
                        err = el_diag_set(diag, EL_ENOMEM, "out of memory reading %s",
                                          f->path);
                        break;
                    }
                    err = el_ini_add(f, kind, section, name.data, name.len, v, vlen);
                    el_buf_free(&name);
                    if (err) {
                        el_diag_set(diag, err, "out of memory reading %s", f->path);
                        break;
                    }
                }
            }
            line = next;
            continue;
        }
        if (s[0] == '[') {
            const char *close = memchr(s, ']', n);
            if (!close) {
                err = parse_line_error(diag, f->path, lineno, "unterminated section header");
                break;
            }
            free(section);
            section = NULL;
            free(parent);
            parent = NULL;
            in_key = false;
            err = parse_section(s + 1, (size_t)(close - s - 1), config_file, &kind, &section);
            if (err) {
                el_diag_set(diag, err, "out of memory reading %s", f->path);
                break;
            }
            line = next;
            continue;
        }
        if (!section) {
            err = parse_line_error(diag, f->path, lineno, "setting outside any [section]");
            break;
        }
        const char *sep = NULL;
        for (size_t i = 0; i < n; i++) {
            if (s[i] == '=' || s[i] == ':') {
                sep = s + i;
                break;
            }
        }
        if (!sep || sep == s) {
            err = parse_line_error(diag, f->path, lineno, "expected key = value");
            break;
        }
        const char *k, *v;
        size_t klen, vlen;
        split_setting(s, n, sep, &k, &klen, &v, &vlen);
        free(parent);
        parent = NULL;
        in_key = true;
        key_indent = indent;
        if (vlen == 0) {
            parent = el_aws_dup_n(k, klen);
            if (!parent) {
                err = el_diag_set(diag, EL_ENOMEM, "out of memory reading %s", f->path);
                break;
            }
            for (char *p = parent; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        }
        err = el_ini_add(f, kind, section, k, klen, v, vlen);
        if (err) {
            el_diag_set(diag, err, "out of memory reading %s", f->path);
            break;
        }
        line = next;
    }
    free(section);
    free(parent);
    return err;
}

/* Reads and parses path into f. A missing file is not an error (f->present
 * stays false); an unreadable one is. */
el_err el_ini_load(el_ini *f, const char *path, bool config_file, el_diag *diag)
{
    f->path = el_aws_dup(path);
    if (!f->path)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (errno == ENOENT || errno == ENOTDIR)
            return EL_OK;
        return el_diag_set(diag, EL_ECONFIG, "cannot read %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0) {
        f->mode = (unsigned)(st.st_mode & 07777);
        f->exposed = (st.st_mode & (S_IRGRP | S_IROTH)) != 0;
        if (S_ISDIR(st.st_mode)) {
            fclose(fp);
            return el_diag_set(diag, EL_ECONFIG, "cannot read %s: is a directory", path);
        }
    }
    el_buf text;
    el_buf_init(&text, INI_MAX_FILE);
    char chunk[4096];
    size_t got;
    el_err err = EL_OK;
    while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        err = el_buf_append(&text, chunk, got);
        if (err)
            break;
    }
    bool failed = ferror(fp) != 0;
    fclose(fp);
    explicit_bzero(chunk, sizeof chunk);
    if (err == EL_OK && failed)
        err = el_diag_set(diag, EL_ECONFIG, "cannot read %s: input/output error", path);
    else if (err)
        err = el_diag_set(diag, EL_ECONFIG, "cannot read %s: %s", path,
                          err == EL_ELIMIT ? "file too large" : "out of memory");
    if (err == EL_OK) {
        f->present = true;
        if (text.data)
            err = el_ini_parse(f, text.data, config_file, diag);
    }
    if (text.data)
        explicit_bzero(text.data, text.cap);
    el_buf_free(&text);
    return err;
}
