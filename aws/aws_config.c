/*
 * aws_config.c - resolving region, endpoint and credentials like the AWS CLI.
 *
 * DESIGN: the two shared files are parsed into a flat list of
 * (section, key, value) entries, then each setting is looked up in
 * precedence order. The INI dialect is botocore's (configparser): full-line
 * `#`/`;` comments, `key = value` or `key: value`, keys case-insensitive,
 * indented continuation lines hold nested settings (`dynamodb =` followed by
 * `  endpoint_url = ...`, stored as key "dynamodb.endpoint_url"). In the
 * config file `[profile x]` names profile x and `[default]` (or
 * `[profile default]`) the default one; `[services x]` holds per-service
 * settings a profile points to with `services = x`.
 *
 * Secrets pass through file buffers and parsed values; every such buffer is
 * wiped before it is freed, and no message ever includes a value read from a
 * credentials file (parse errors name the file and line only).
 */
#include "aws/aws_config.h"

#include <ctype.h>     /* isspace, tolower */
#include <errno.h>     /* errno, ENOENT */
#include <stdio.h>     /* FILE, fopen, getline */
#include <stdlib.h>    /* malloc, free, strtol, getenv */
#include <string.h>    /* strlen, strcmp, memcpy, explicit_bzero */
#include <sys/stat.h>  /* stat for the permission check */

#include "common/buf.h"

/* Longest line and value we accept from a shared file. */
#define INI_MAX_FILE (4u * 1024 * 1024)
#define PLACES_MAX 2048

typedef enum sec_kind { SEC_PROFILE, SEC_SERVICES, SEC_OTHER } sec_kind;

typedef struct ini_entry {
    sec_kind kind;
    char *section; /* profile name for SEC_PROFILE */
    char *key;     /* lower-case; "parent.child" for nested settings */
    char *value;
} ini_entry;

typedef struct ini {
    ini_entry *v;
    size_t n, cap;
    char *path;     /* as resolved (after ~ expansion) */
    bool present;   /* the file existed and was read */
    bool exposed;   /* readable by group or others */
    unsigned mode;
} ini;

static void wipe_free(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char *dup_s(const char *s)
{
    return s ? dup_n(s, strlen(s)) : NULL;
}

static void ini_clear(ini *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].section);
        free(f->v[i].key);
        wipe_free(f->v[i].value);
    }
    free(f->v);
    free(f->path);
    memset(f, 0, sizeof *f);
}

static el_err ini_add(ini *f, sec_kind kind, const char *section, const char *key,
                      size_t keylen, const char *value, size_t valuelen)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        ini_entry *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return EL_ENOMEM;
        f->v = v;
        f->cap = cap;
    }
    ini_entry *e = &f->v[f->n];
    e->kind = kind;
    e->section = dup_s(section);
    e->key = dup_n(key, keylen);
    e->value = dup_n(value, valuelen);
    if (!e->section || !e->key || !e->value) {
        free(e->section);
        free(e->key);
        wipe_free(e->value);
        return EL_ENOMEM;
    }
    for (char *k = e->key; *k; k++)
        *k = (char)tolower((unsigned char)*k);
    f->n++;
    return EL_OK;
}

/* The last value set for key in the section (later lines override). */
static const char *ini_get(const ini *f, sec_kind kind, const char *section,
                           const char *key)
{
    const char *found = NULL;
    for (size_t i = 0; i < f->n; i++) {
        const ini_entry *e = &f->v[i];
        if (e->kind == kind && strcmp(e->section, section) == 0 &&
            strcmp(e->key, key) == 0)
            found = e->value;
    }
    return found;
}

static bool ini_has_section(const ini *f, sec_kind kind, const char *section)
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

/* Splits a section header's inside into kind and name. The credentials file
 * names profiles directly; the config file says `profile x` (or `default`). */
static el_err parse_section(const char *s, size_t n, bool config_file, sec_kind *kind,
                            char **name)
{
    trim(&s, &n);
    *kind = SEC_OTHER;
    if (config_file) {
        size_t w = 0;
        while (w < n && !isspace((unsigned char)s[w]))
            w++;
        const char *rest = s + w;
        size_t restlen = n - w;
        trim(&rest, &restlen);
        if (w == 7 && memcmp(s, "profile", 7) == 0 && restlen) {
            *kind = SEC_PROFILE;
            s = rest;
            n = restlen;
        } else if (w == 8 && memcmp(s, "services", 8) == 0 && restlen) {
            *kind = SEC_SERVICES;
            s = rest;
            n = restlen;
        } else if (n == 7 && memcmp(s, "default", 7) == 0) {
            *kind = SEC_PROFILE;
        }
    } else {
        *kind = SEC_PROFILE;
    }
    *name = dup_n(s, n);
    return *name ? EL_OK : EL_ENOMEM;
}

static el_err parse_line_error(el_diag *diag, const char *path, size_t lineno,
                               const char *what)
{
    /* Never quote the line: it may hold a secret. */
    return el_diag_at(diag, EL_ECONFIG, lineno, 0, 0, "cannot parse %s line %zu: %s",
                      path, lineno, what);
}

static el_err ini_parse(ini *f, char *text, bool config_file, el_diag *diag)
{
    sec_kind kind = SEC_OTHER;
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
                    const char *k = s;
                    size_t klen = (size_t)(eq - s);
                    const char *v = eq + 1;
                    size_t vlen = n - klen - 1;
                    trim(&k, &klen);
                    trim(&v, &vlen);
                    el_buf name;
                    el_buf_init(&name, 1024);
                    if (el_buf_puts(&name, parent) || el_buf_putc(&name, '.') ||
                        el_buf_append(&name, k, klen)) {
                        el_buf_free(&name);
                        err = el_diag_set(diag, EL_ENOMEM, "out of memory reading %s",
                                          f->path);
                        break;
                    }
                    err = ini_add(f, kind, section, name.data, name.len, v, vlen);
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
        const char *k = s;
        size_t klen = (size_t)(sep - s);
        const char *v = sep + 1;
        size_t vlen = n - klen - 1;
        trim(&k, &klen);
        trim(&v, &vlen);
        free(parent);
        parent = NULL;
        in_key = true;
        key_indent = indent;
        if (vlen == 0) {
            parent = dup_n(k, klen);
            if (!parent) {
                err = el_diag_set(diag, EL_ENOMEM, "out of memory reading %s", f->path);
                break;
            }
            for (char *p = parent; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        }
        err = ini_add(f, kind, section, k, klen, v, vlen);
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
static el_err ini_load(ini *f, const char *path, bool config_file, el_diag *diag)
{
    f->path = dup_s(path);
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
            err = ini_parse(f, text.data, config_file, diag);
    }
    if (text.data)
        explicit_bzero(text.data, text.cap);
    el_buf_free(&text);
    return err;
}

/* ---- resolution ---- */

typedef struct resolver {
    el_getenv_fn getenv_fn;
    const el_aws_opts *opts;
    el_diag *diag;
} resolver;

/* An environment variable, NULL when unset or empty. */
static const char *env(const resolver *r, const char *name)
{
    const char *v = r->getenv_fn(name);
    return v && *v ? v : NULL;
}

static const char *opt(const char *v)
{
    return v && *v ? v : NULL;
}

/* ~ and ~/x expand to HOME. *out is malloc'd. */
static el_err expand_home(const resolver *r, const char *path, char **out)
{
    const char *home = env(r, "HOME");
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home) {
        el_buf b;
        el_buf_init(&b, 8192);
        if (el_buf_puts(&b, home) || el_buf_puts(&b, path + 1)) {
            el_buf_free(&b);
            return el_diag_set(r->diag, EL_ENOMEM, "out of memory");
        }
        *out = el_buf_take(&b);
    } else {
        *out = dup_s(path);
    }
    return *out ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

/* The path of a shared file: the variable if set, else ~/.aws/<name>.
 * *out is NULL when neither is known (no HOME). */
static el_err shared_path(const resolver *r, const char *var, const char *name, char **out)
{
    *out = NULL;
    const char *p = env(r, var);
    if (p)
        return expand_home(r, p, out);
    const char *home = env(r, "HOME");
    if (!home)
        return EL_OK;
    el_buf b;
    el_buf_init(&b, 8192);
    if (el_buf_printf(&b, "%s/.aws/%s", home, name)) {
        el_buf_free(&b);
        return el_diag_set(r->diag, EL_ENOMEM, "out of memory");
    }
    *out = el_buf_take(&b);
    return *out ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

/* Region names as botocore validates them: they end up in a URL and in the
 * signature scope, so anything else is refused early. */
static bool valid_region(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = isalnum(c) || (c == '-' && i > 0 && i + 1 < n);
        if (!ok)
            return false;
    }
    return true;
}

static el_err set_str(char **dst, const char *src, el_diag *diag)
{
    free(*dst);
    *dst = dup_s(src);
    return *dst ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
}

/* A profile's setting from the config file. */
static const char *profile_get(const ini *cfg, const char *profile, const char *key)
{
    return ini_get(cfg, SEC_PROFILE, profile, key);
}

/* endpoint_url for dynamodb from the profile's `services` section, if any. */
static const char *services_endpoint(const ini *cfg, const char *profile)
{
    const char *services = profile_get(cfg, profile, "services");
    if (!services)
        return NULL;
    return ini_get(cfg, SEC_SERVICES, services, "dynamodb.endpoint_url");
}

static bool truthy(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 ||
                 strcmp(v, "TRUE") == 0 || strcmp(v, "1") == 0);
}

static el_err resolve_endpoint(const resolver *r, const ini *cfg, el_aws_config *c)
{
    const char *from = "--endpoint-url";
    const char *url = opt(r->opts->endpoint_url);
    bool ignore_configured = truthy(env(r, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
        truthy(profile_get(cfg, c->profile, "ignore_configured_endpoint_urls"));
    if (!url && !ignore_configured) {
        if ((url = env(r, "AWS_ENDPOINT_URL_DYNAMODB")))
            from = "AWS_ENDPOINT_URL_DYNAMODB";
        else if ((url = env(r, "AWS_ENDPOINT_URL")))
            from = "AWS_ENDPOINT_URL";
        else if ((url = opt(services_endpoint(cfg, c->profile))))
            from = "the services section of the config file";
        else if ((url = opt(profile_get(cfg, c->profile, "endpoint_url"))))
            from = "endpoint_url in the config file";
    }
    el_buf b;
    el_buf_init(&b, 4096);
    el_err err;
    if (url) {
        if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
            return el_diag_set(r->diag, EL_ECONFIG,
                               "bad endpoint URL '%s' from %s: it must start with "
                               "http:// or https://", url, from);
        }
        size_t n = strlen(url);
        while (n > 8 && url[n - 1] == '/')
            n--;
        err = el_buf_append(&b, url, n);
    } else {
        const char *suffix = strncmp(c->region, "cn-", 3) == 0 ? "amazonaws.com.cn"
                                                                : "amazonaws.com";
        err = el_buf_printf(&b, "https://dynamodb.%s.%s", c->region, suffix);
    }
    if (err) {
        el_buf_free(&b);
        return el_diag_set(r->diag, EL_ECONFIG, "endpoint URL too long");
    }
    c->endpoint = el_buf_take(&b);
    return c->endpoint ? EL_OK : el_diag_set(r->diag, EL_ENOMEM, "out of memory");
}

static el_err resolve_attempts(const resolver *r, const ini *cfg, el_aws_config *c)
{
    const char *from = "AWS_MAX_ATTEMPTS";
    const char *v = env(r, "AWS_MAX_ATTEMPTS");
    if (!v) {
        v = opt(profile_get(cfg, c->profile, "max_attempts"));
        from = "max_attempts in the config file";
    }
    if (!v)
        return EL_OK;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 1000)
        return el_diag_set(r->diag, EL_ECONFIG,
                           "bad %s '%s': it must be a whole number from 1 to 1000", from, v);
    c->max_attempts = (int)n;
    return EL_OK;
}

/* Credentials settings in one profile section: fills the keys when the
 * section has them. `where` names the section for messages. */
static el_err creds_from_section(const resolver *r, const ini *f, const char *profile,
                                 const char *where, el_aws_config *c, bool *found)
{
    *found = false;
    const char *ak = opt(ini_get(f, SEC_PROFILE, profile, "aws_access_key_id"));
    const char *sk = opt(ini_get(f, SEC_PROFILE, profile, "aws_secret_access_key"));
    const char *tok = opt(ini_get(f, SEC_PROFILE, profile, "aws_session_token"));
    if (!tok)
        tok = opt(ini_get(f, SEC_PROFILE, profile, "aws_security_token"));
    if (!ak && !sk)
        return EL_OK;
    if (!ak || !sk)
        return el_diag_set(r->diag, EL_ECONFIG,
                           "partial credentials in %s: %s is missing", where,
                           ak ? "aws_secret_access_key" : "aws_access_key_id");
    if (set_str(&c->access_key, ak, r->diag) || set_str(&c->secret_key, sk, r->diag) ||
        (tok && set_str(&c->session_token, tok, r->diag)) ||
        set_str(&c->cred_source, where, r->diag))
        return EL_ENOMEM;
    *found = true;
    return EL_OK;
}

static void warn_exposed(const ini *f, char *warning, size_t warning_len)
{
    if (!warning || warning_len == 0 || !f->exposed)
        return;
    snprintf(warning, warning_len,
             "credentials file %s is readable by group or others (mode %04o); "
             "run chmod 600 %s", f->path, f->mode, f->path);
}

/* Names the credential mechanisms a profile uses that edgeload does not
 * implement, so the "not found" message can say why. */
static const char *unsupported_source(const ini *cfg, const char *profile)
{
    static const char *const keys[] = {"credential_process", "role_arn", "sso_session",
                                       "sso_start_url", "web_identity_token_file"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (profile_get(cfg, profile, keys[i]))
            return keys[i];
    return NULL;
}

static el_err resolve_credentials(const resolver *r, const ini *creds, const ini *cfg,
                                  bool explicit_profile, el_aws_config *c, char *warning,
                                  size_t warning_len)
{
    el_diag *diag = r->diag;
    char places[PLACES_MAX];
    size_t used = 0;
    places[0] = '\0';
#define PLACE(...)                                                                  \
    do {                                                                            \
        if (used < sizeof places) {                                                 \
            int w_ = snprintf(places + used, sizeof places - used, __VA_ARGS__);    \
            if (w_ > 0)                                                             \
                used += (size_t)w_;                                                 \
        }                                                                           \
    } while (0)

    if (!explicit_profile) {
        const char *ak = env(r, "AWS_ACCESS_KEY_ID");
        const char *sk = env(r, "AWS_SECRET_ACCESS_KEY");
        if (ak || sk) {
            if (!ak || !sk)
                return el_diag_set(diag, EL_ECONFIG,
                                   "partial credentials in the environment: %s is not set",
                                   ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
            const char *tok = env(r, "AWS_SESSION_TOKEN");
            if (!tok)
                tok = env(r, "AWS_SECURITY_TOKEN");
            if (set_str(&c->access_key, ak, diag) || set_str(&c->secret_key, sk, diag) ||
                (tok && set_str(&c->session_token, tok, diag)) ||
                set_str(&c->cred_source, "environment", diag))
                return EL_ENOMEM;
            return EL_OK;
        }
        PLACE("the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    }

    char where[PLACES_MAX / 2];
    bool found = false;
    el_err err;
    if (creds->path) {
        snprintf(where, sizeof where, "%s [%s]", creds->path, c->profile);
        err = creds_from_section(r, creds, c->profile, where, c, &found);
        if (err)
            return err;
        if (found) {
            warn_exposed(creds, warning, warning_len);
            return EL_OK;
        }
        PLACE("%s%s%s", used ? ", " : "", where, creds->present ? "" : " (no such file)");
    } else {
        PLACE("%sthe shared credentials file (HOME and AWS_SHARED_CREDENTIALS_FILE unset)",
              used ? ", " : "");
    }
    if (cfg->path) {
        if (strcmp(c->profile, "default") == 0)
            snprintf(where, sizeof where, "%s [default]", cfg->path);
        else
            snprintf(where, sizeof where, "%s [profile %s]", cfg->path, c->profile);
        err = creds_from_section(r, cfg, c->profile, where, c, &found);
        if (err)
            return err;
        if (found) {
            warn_exposed(cfg, warning, warning_len);
            return EL_OK;
        }
        PLACE("%s%s%s", used ? ", " : "", where, cfg->present ? "" : " (no such file)");
    } else {
        PLACE("%sthe config file (HOME and AWS_CONFIG_FILE unset)", used ? ", " : "");
    }
#undef PLACE
    const char *unsupported = unsupported_source(cfg, c->profile);
    if (unsupported)
        return el_diag_set(diag, EL_ECONFIG,
                           "no credentials found: looked in %s; profile '%s' uses %s, which "
                           "edgeload does not support: export keys with `aws configure "
                           "export-credentials --profile %s --format env`",
                           places, c->profile, unsupported, c->profile);
    return el_diag_set(diag, EL_ECONFIG, "no credentials found: looked in %s", places);
}

static const char *process_env(const char *name)
{
    return getenv(name);
}

el_err el_aws_config_resolve(const el_aws_opts *opts, el_getenv_fn getenv_fn,
                             el_aws_config **out, char *warning, size_t warning_len,
                             el_diag *diag)
{
    static const el_aws_opts no_opts = {0};
    resolver r = {getenv_fn ? getenv_fn : process_env, opts ? opts : &no_opts, diag};
    ini creds = {0}, cfg = {0};
    char *path = NULL;
    el_err err;
    *out = NULL;
    if (warning && warning_len)
        warning[0] = '\0';

    el_aws_config *c = calloc(1, sizeof *c);
    if (!c)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    c->verify_ssl = !r.opts->no_verify_ssl;

    /* Profile first: every file lookup depends on it. */
    bool explicit_profile = opt(r.opts->profile) != NULL;
    const char *profile = opt(r.opts->profile);
    if (!profile)
        profile = env(&r, "AWS_PROFILE");
    if (!profile)
        profile = env(&r, "AWS_DEFAULT_PROFILE");
    bool named_profile = profile != NULL;
    if (!profile)
        profile = "default";
    if ((err = set_str(&c->profile, profile, diag)))
        goto fail;

    if ((err = shared_path(&r, "AWS_SHARED_CREDENTIALS_FILE", "credentials", &path)))
        goto fail;
    if (path) {
        err = ini_load(&creds, path, false, diag);
        free(path);
        path = NULL;
        if (err)
            goto fail;
    }
    if ((err = shared_path(&r, "AWS_CONFIG_FILE", "config", &path)))
        goto fail;
    if (path) {
        err = ini_load(&cfg, path, true, diag);
        free(path);
        path = NULL;
        if (err)
            goto fail;
    }

    if (named_profile && strcmp(profile, "default") != 0 &&
        !ini_has_section(&creds, SEC_PROFILE, profile) &&
        !ini_has_section(&cfg, SEC_PROFILE, profile)) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "profile '%s' not found: looked in %s and %s", profile,
                          creds.path ? creds.path : "(no credentials file)",
                          cfg.path ? cfg.path : "(no config file)");
        goto fail;
    }

    const char *region = opt(r.opts->region);
    const char *region_from = "--region";
    if (!region && (region = env(&r, "AWS_REGION")))
        region_from = "AWS_REGION";
    if (!region && (region = env(&r, "AWS_DEFAULT_REGION")))
        region_from = "AWS_DEFAULT_REGION";
    if (!region && (region = opt(profile_get(&cfg, profile, "region"))))
        region_from = "region in the config file";
    if (!region) {
        err = el_diag_set(diag, EL_ECONFIG,
                          "no region: use --region, AWS_REGION or AWS_DEFAULT_REGION, or "
                          "set region in %s [%s%s]",
                          cfg.path ? cfg.path : "~/.aws/config",
                          strcmp(profile, "default") ? "profile " : "", profile);
        goto fail;
    }
    if (!valid_region(region)) {
        err = el_diag_set(diag, EL_ECONFIG, "bad region '%s' from %s", region, region_from);
        goto fail;
    }
    if ((err = set_str(&c->region, region, diag)))
        goto fail;
    char region_where[1024];
    if (strcmp(region_from, "region in the config file") == 0)
        snprintf(region_where, sizeof region_where, "region in %s [%s%s]",
                 cfg.path ? cfg.path : "the config file",
                 strcmp(profile, "default") ? "profile " : "", profile);
    else
        snprintf(region_where, sizeof region_where, "%s", region_from);
    if ((err = set_str(&c->region_source, region_where, diag)))
        goto fail;

    if ((err = resolve_endpoint(&r, &cfg, c)))
        goto fail;
    if ((err = resolve_attempts(&r, &cfg, c)))
        goto fail;
    const char *ca = env(&r, "AWS_CA_BUNDLE");
    if (!ca)
        ca = opt(profile_get(&cfg, profile, "ca_bundle"));
    if (ca && (err = expand_home(&r, ca, &c->ca_bundle)))
        goto fail;

    if ((err = resolve_credentials(&r, &creds, &cfg, explicit_profile, c, warning,
                                   warning_len)))
        goto fail;

    ini_clear(&creds);
    ini_clear(&cfg);
    *out = c;
    return EL_OK;

fail:
    ini_clear(&creds);
    ini_clear(&cfg);
    el_aws_config_free(c);
    return err;
}

void el_aws_config_free(el_aws_config *cfg)
{
    if (!cfg)
        return;
    free(cfg->region);
    free(cfg->endpoint);
    free(cfg->profile);
    wipe_free(cfg->access_key);
    wipe_free(cfg->secret_key);
    wipe_free(cfg->session_token);
    free(cfg->cred_source);
    free(cfg->region_source);
    free(cfg->ca_bundle);
    explicit_bzero(cfg, sizeof *cfg);
    free(cfg);
}
