/*
 * cred_util.c - what the credential sources share: settings lookups, the
 * time stamps and JSON documents AWS hands credentials in, token files.
 *
 * DESIGN: every source reads the same few shapes (a JSON object with an
 * access key, secret, token and expiration; an ISO 8601 time; a token in a
 * file), so each is read once here, strictly: a document missing a field
 * is an error that names the field, never a set with a hole. yajl's tree
 * holds copies of every string, secrets among them, so the tree is wiped
 * before it is freed.
 */
#include "aws/cred_source.h"

#include <ctype.h>      /* isdigit, isspace */
#include <errno.h>      /* errno */
#include <stdio.h>      /* fopen, fread */
#include <stdlib.h>     /* malloc, free */
#include <string.h>     /* strlen, strcmp, explicit_bzero */
#include <yajl/yajl_tree.h>

#include "aws/aws_internal.h"
#include "aws/sigv4.h"  /* el_sigv4_uri_encode */

const char *el_cred_env(const el_cred_ctx *ctx, const char *name)
{
    const char *v = ctx->getenv_fn(name);
    return v && *v ? v : NULL;
}

const char *el_cred_profile_get(const el_cred_ctx *ctx, const char *profile, const char *key)
{
    const char *v = ctx->creds ? el_ini_get(ctx->creds, EL_INI_PROFILE, profile, key) : NULL;
    if (!v || !*v)
        v = ctx->cfg ? el_ini_get(ctx->cfg, EL_INI_PROFILE, profile, key) : NULL;
    return v && *v ? v : NULL;
}

el_err el_cred_expand_home(const el_cred_ctx *ctx, const char *path, char **out)
{
    const char *home = el_cred_env(ctx, "HOME");
    if (path[0] == '~' && (path[1] == '/' || path[1] == '\0') && home) {
        size_t hl = strlen(home), pl = strlen(path + 1);
        *out = malloc(hl + pl + 1);
        if (*out) {
            memcpy(*out, home, hl);
            memcpy(*out + hl, path + 1, pl + 1);
        }
    } else {
        *out = el_aws_dup(path);
    }
    return *out ? EL_OK : el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
}

static bool digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        *v = *v * 10 + (s[i] - '0');
    }
    return true;
}

el_err el_cred_parse_time(const char *s, time_t *out)
{
    int y, mo, d, h, mi, sec;
    if (!s || strlen(s) < 19 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
        s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &sec))
        return EL_EPARSE;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return EL_EPARSE;
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return EL_EPARSE;
        while (isdigit((unsigned char)*p))
            p++;
    }
    long offset = 0;
    if (strcmp(p, "Z") == 0 || strcmp(p, "z") == 0 || strcmp(p, "UTC") == 0 || *p == '\0') {
        /* UTC (no zone: AWS's own answers are UTC) */
    } else if ((p[0] == '+' || p[0] == '-') && strlen(p) == 6 && p[3] == ':') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || !digits(p + 4, 2, &om))
            return EL_EPARSE;
        offset = (oh * 3600L + om * 60L) * (p[0] == '+' ? 1 : -1);
    } else {
        return EL_EPARSE;
    }
    time_t t;
    if (!el_aws_utc_time(y, mo, d, h, mi, sec, &t))
        return EL_EPARSE;
    *out = t - offset;
    return EL_OK;
}

static void wipe_tree(yajl_val v)
{
    if (!v)
        return;
    if (YAJL_IS_STRING(v) && v->u.string) {
        explicit_bzero(v->u.string, strlen(v->u.string));
    } else if (YAJL_IS_NUMBER(v) && v->u.number.r) {
        explicit_bzero(v->u.number.r, strlen(v->u.number.r));
    } else if (YAJL_IS_OBJECT(v)) {
        for (size_t i = 0; i < v->u.object.len; i++)
            wipe_tree(v->u.object.values[i]);
    } else if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++)
            wipe_tree(v->u.array.values[i]);
    }
}

static const char *member_str(yajl_val obj, const char *name)
{
    const char *path[] = {name, NULL};
    yajl_val v = yajl_tree_get(obj, path, yajl_t_string);
    return v && v->u.string && *v->u.string ? v->u.string : NULL;
}

el_err el_cred_from_json(const char *json, const el_cred_json_spec *spec, const char *what,
                         el_cred **out, el_diag *diag)
{
    *out = NULL;
    char errbuf[128];
    yajl_val root = yajl_tree_parse(json, errbuf, sizeof errbuf);
    explicit_bzero(errbuf, sizeof errbuf); /* yajl quotes the text near an error */
    if (!root || !YAJL_IS_OBJECT(root)) {
        wipe_tree(root);
        yajl_tree_free(root);
        return el_diag_set(diag, EL_ECONFIG, "%s: the answer is not a JSON object", what);
    }
    yajl_val obj = root;
    el_err err = EL_OK;
    if (spec->object) {
        const char *path[] = {spec->object, NULL};
        obj = yajl_tree_get(root, path, yajl_t_object);
        if (!obj)
            err = el_diag_set(diag, EL_ECONFIG, "%s: the answer has no %s object", what,
                              spec->object);
    }
    const char *ak = NULL, *sk = NULL, *tok = NULL;
    time_t exp = 0;
    if (!err && spec->version_one) {
        const char *path[] = {"Version", NULL};
        yajl_val v = yajl_tree_get(root, path, yajl_t_any);
        if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) != 1)
            err = el_diag_set(diag, EL_ECONFIG, "%s: %s (edgeload reads Version 1)", what,
                              v ? "the output has another Version" : "the output has no Version");
    }
    if (!err) {
        ak = member_str(obj, spec->access_key);
        sk = member_str(obj, spec->secret_key);
        tok = spec->token ? member_str(obj, spec->token) : NULL;
        const char *missing = !ak ? spec->access_key : !sk ? spec->secret_key
                            : spec->need_token && !tok ? spec->token : NULL;
        if (missing)
            err = el_diag_set(diag, EL_ECONFIG, "%s: the answer has no %s", what, missing);
    }
    if (!err && spec->expiration) {
        const char *path[] = {spec->expiration, NULL};
        yajl_val e = yajl_tree_get(obj, path, yajl_t_any);
        if (!e) {
            if (spec->need_expiration)
                err = el_diag_set(diag, EL_ECONFIG, "%s: the answer has no %s", what,
                                  spec->expiration);
        } else if (spec->expiration_ms) {
            if (!YAJL_IS_NUMBER(e) || !YAJL_IS_INTEGER(e) || YAJL_GET_INTEGER(e) <= 0)
                err = el_diag_set(diag, EL_ECONFIG, "%s: %s is not a time in milliseconds",
                                  what, spec->expiration);
            else
                exp = (time_t)(YAJL_GET_INTEGER(e) / 1000);
        } else if (!YAJL_IS_STRING(e) || el_cred_parse_time(e->u.string, &exp)) {
            err = el_diag_set(diag, EL_ECONFIG, "%s: %s is not an ISO 8601 time", what,
                              spec->expiration);
        }
    }
    if (!err) {
        err = el_cred_new(ak, sk, tok, exp, out);
        if (err == EL_EUSAGE)
            err = el_diag_set(diag, EL_ECONFIG,
                              "%s: the credentials in the answer are empty, too long or hold "
                              "control characters", what);
        else if (err)
            el_diag_set(diag, err, "%s: out of memory", what);
    }
    wipe_tree(root);
    yajl_tree_free(root);
    return err;
}

el_err el_cred_read_file(const char *path, size_t max, const char *what, char **out,
                         el_diag *diag)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return el_diag_set(diag, EL_ECONFIG, "%s: cannot read %s: %s", what, path,
                           strerror(errno));
    char *buf = malloc(max + 1);
    if (!buf) {
        fclose(f);
        return el_diag_set(diag, EL_ENOMEM, "%s: out of memory", what);
    }
    size_t n = fread(buf, 1, max + 1, f);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed || n > max) {
        explicit_bzero(buf, max + 1);
        free(buf);
        return el_diag_set(diag, EL_ECONFIG, "%s: cannot read %s: %s", what, path,
                           failed ? "input/output error" : "file too large");
    }
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        n--;
    buf[n] = '\0';
    if (n == 0 || memchr(buf, '\0', n)) {
        explicit_bzero(buf, max + 1);
        free(buf);
        return el_diag_set(diag, EL_ECONFIG, "%s: %s is empty or not text", what, path);
    }
    *out = buf;
    return EL_OK;
}

el_err el_cred_form_put(el_buf *b, const char *name, const char *value)
{
    el_err err = EL_OK;
    if (b->len)
        err = el_buf_putc(b, '&');
    if (!err)
        err = el_buf_puts(b, name);
    if (!err)
        err = el_buf_putc(b, '=');
    if (!err)
        err = el_sigv4_uri_encode(b, value, strlen(value), false);
    return err;
}
