/*
 * shard_plan_file.c - the plan as a file: written by `edgeload plan --plan-out`,
 * read by `load --plan` (shard_plan.h, "the plan file").
 *
 * DESIGN: JSON written by hand (the values are integers and keys already
 * valid UTF-8) and read with yajl's tree API, then checked field by field
 * through the same el_plan_add_source / el_plan_add_hot a counted plan is
 * built with: a plan decides where items go, so a damaged one must stop
 * the load, not shard it differently. A hot key's "fan_in" is written
 * beside its per-source shares although it is their sum, so a person can
 * read the file, and a hand edit of one and not the other is caught.
 */
#include "pipeline/sharding/shard_plan.h"

#include <errno.h>          /* errno for file errors */
#include <fcntl.h>          /* open for the directory fsync */
#include <inttypes.h>       /* PRIu64 */
#include <stdbool.h>        /* bool */
#include <stdio.h>          /* rename */
#include <stdlib.h>         /* malloc, free */
#include <string.h>         /* strcmp, strerror */
#include <unistd.h>         /* write, fsync, close, unlink */
#include <yajl/yajl_tree.h> /* plan files are read whole */

#include "common/buf.h"
#include "common/file.h"
#include "common/json_guard.h"
#include "formats/ddb_value.h"  /* el_json_put_string */
#include "pipeline/sharding/shard.h"  /* EL_MAX_MAX_SHARDS */

#define PLAN_FILE_MAX ((size_t)1 << 30)
#define KEY_SHOWN(len) ((int)((len) > 200 ? 200 : (len)))

/* ---- writing ---- */

static el_err put_hot(el_buf *b, const el_plan *p, const el_plan_hot *h, bool first)
{
    el_err err = el_buf_puts(b, first ? "\n  {\"key\":" : ",\n  {\"key\":");
    if (!err)
        err = el_json_put_string(b, h->key, h->len);
    if (!err)
        err = el_buf_printf(b, ",\"fan_in\":%" PRIu64 ",\"shards\":%zu,\"sources\":{",
                            h->fan_in, h->shards);
    for (size_t i = 0; !err && i < h->nshares; i++) {
        const char *name = el_plan_get_source(p, h->shares[i].source)->name;
        err = i ? el_buf_putc(b, ',') : EL_OK;
        if (!err)
            err = el_json_put_string(b, name, strlen(name));
        if (!err)
            err = el_buf_printf(b, ":%" PRIu64, h->shares[i].count);
    }
    return err ? err : el_buf_puts(b, "}}");
}

char *el_plan_to_json(const el_plan *p)
{
    el_buf b;
    el_buf_init(&b, PLAN_FILE_MAX);
    el_err err = el_buf_printf(&b, "{\"version\":%d,\"sources\":[", EL_PLAN_VERSION);
    for (size_t i = 0; !err && i < el_plan_nsources(p); i++) {
        const el_plan_source *s = el_plan_get_source(p, i);
        err = el_buf_puts(&b, i ? ",\n{\"name\":" : "\n{\"name\":");
        if (!err)
            err = el_json_put_string(&b, s->name, strlen(s->name));
        if (!err)
            err = el_buf_printf(&b, ",\"rows\":%" PRIu64 ",\"threshold\":%" PRIu64
                                ",\"max_shards\":%zu}", s->rows, s->threshold, s->max_shards);
    }
    if (!err)
        err = el_buf_puts(&b, "\n],\"hot\":[");
    for (size_t i = 0; !err && i < el_plan_nhot(p); i++)
        err = put_hot(&b, p, el_plan_get_hot(p, i), i == 0);
    if (!err)
        err = el_buf_puts(&b, el_plan_nhot(p) ? "\n]" : "]");
    if (!err && el_plan_estimate(p)) {
        err = el_buf_puts(&b, ",\n\"estimate\":");
        if (!err)
            err = el_buf_puts(&b, el_plan_estimate(p));
    }
    if (!err)
        err = el_buf_puts(&b, "}\n");
    if (err) {
        el_buf_free(&b);
        return NULL;
    }
    return el_buf_take(&b);
}

static el_err write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return EL_EIO;
        data += w;
        len -= (size_t)w;
    }
    return EL_OK;
}

el_err el_plan_write(const el_plan *p, const char *path, el_diag *diag)
{
    char *json = el_plan_to_json(p);
    if (!json)
        return el_diag_set(diag, EL_ENOMEM, "out of memory rendering the plan");
    /* not mkstemp: its 0600 would make the plan unreadable to others,
     * where a plain file gets 0666 less the umask */
    el_buf tmp;
    el_buf_init(&tmp, 8192);
    int fd = -1;
    errno = EEXIST;
    for (unsigned n = 0; fd < 0 && errno == EEXIST && n < 100; n++) {
        el_buf_reset(&tmp);
        if (el_buf_printf(&tmp, "%s.tmp.%ld.%u", path, (long)getpid(), n)) {
            free(json);
            el_buf_free(&tmp);
            return el_diag_set(diag, EL_EIO, "cannot write plan %s: path too long", path);
        }
        fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        int e = errno;
        free(json);
        el_buf_free(&tmp);
        return el_diag_set(diag, EL_EIO, "cannot create %s.tmp.*: %s", path, strerror(e));
    }
    el_err err = write_all(fd, json, strlen(json));
    int e = errno;
    if (!err && fsync(fd) != 0) {
        err = EL_EIO;
        e = errno;
    }
    if (close(fd) != 0 && !err) {
        err = EL_EIO;
        e = errno;
    }
    if (!err && rename(tmp.data, path) != 0) {
        err = EL_EIO;
        e = errno;
    }
    free(json);
    if (err) {
        unlink(tmp.data);
        el_buf_free(&tmp);
        return el_diag_set(diag, EL_EIO, "cannot write plan %s: %s", path, strerror(e));
    }
    el_buf_free(&tmp);
    /* make the rename itself durable */
    const char *slash = strrchr(path, '/');
    el_buf dir;
    el_buf_init(&dir, 8192);
    if (el_buf_append(&dir, slash ? path : ".", slash ? (size_t)(slash - path) + 1 : 1) ==
        EL_OK) {
        int dfd = open(dir.data, O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    el_buf_free(&dir);
    return EL_OK;
}

/* ---- reading ---- */

/* An unsigned integer field; false when v is not one. */
static bool get_uint(yajl_val v, uint64_t *out)
{
    if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
        return false;
    *out = (uint64_t)YAJL_GET_INTEGER(v);
    return true;
}

/* "sources": {"name": count, ...} of hot[j] into shares (sources[] order,
 * which el_plan_add_hot wants ascending). */
static el_err parse_shares(el_plan *p, yajl_val v, size_t j, const char *key,
                           el_plan_share *shares, size_t *n, el_diag *diag)
{
    size_t len = strlen(key);
    if (!YAJL_IS_OBJECT(v) || v->u.object.len == 0)
        return el_diag_set(diag, EL_EUSAGE, "hot[%zu] '%.*s': \"sources\" must be an object "
                           "{\"source name\": rows, ...} naming at least one source", j,
                           KEY_SHOWN(len), key);
    *n = 0;
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *name = v->u.object.keys[i];
        size_t si = el_plan_find_source(p, name);
        uint64_t count;
        if (si == EL_PLAN_NO_SOURCE)
            return el_diag_set(diag, EL_EUSAGE, "hot[%zu] '%.*s': \"sources\" names '%s', "
                               "which is not in \"sources\"", j, KEY_SHOWN(len), key, name);
        if (!get_uint(v->u.object.values[i], &count))
            return el_diag_set(diag, EL_EUSAGE, "hot[%zu] '%.*s': the rows of source '%s' must "
                               "be a non-negative integer", j, KEY_SHOWN(len), key, name);
        /* insertion into source order; a name twice is refused by add_hot */
        size_t at = *n;
        while (at > 0 && shares[at - 1].source > si) {
            shares[at] = shares[at - 1];
            at--;
        }
        shares[at] = (el_plan_share){ si, count };
        (*n)++;
    }
    return EL_OK;
}

static el_err parse_hot_entry(el_plan *p, yajl_val h, size_t j, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(h))
        return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: must be an object {\"key\", \"fan_in\", "
                           "\"shards\", \"sources\"}", j);
    const char *key = NULL;
    uint64_t fan_in = 0, shards = 0;
    bool have_fan_in = false, have_shards = false;
    yajl_val sources = NULL;
    for (size_t i = 0; i < h->u.object.len; i++) {
        const char *k = h->u.object.keys[i];
        yajl_val v = h->u.object.values[i];
        if (strcmp(k, "key") == 0) {
            if (!YAJL_IS_STRING(v))
                return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: \"key\" must be a string", j);
            key = YAJL_GET_STRING(v);
        } else if (strcmp(k, "fan_in") == 0) {
            if (!(have_fan_in = get_uint(v, &fan_in)))
                return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: \"fan_in\" must be a "
                                   "non-negative integer", j);
        } else if (strcmp(k, "shards") == 0) {
            if (!(have_shards = get_uint(v, &shards)))
                return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: \"shards\" must be a "
                                   "non-negative integer", j);
        } else if (strcmp(k, "sources") == 0) {
            sources = v;
        } else {
            return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: unknown key \"%s\" (expected key, "
                               "fan_in, shards, sources)", j, k);
        }
    }
    if (!key || !have_fan_in || !have_shards || !sources)
        return el_diag_set(diag, EL_EUSAGE, "hot[%zu]: needs \"%s\"", j,
                           !key ? "key" : !have_fan_in ? "fan_in" : !have_shards ? "shards"
                                                                                 : "sources");
    size_t n = YAJL_IS_OBJECT(sources) ? sources->u.object.len : 0;
    el_plan_share *shares = malloc((n ? n : 1) * sizeof *shares);
    if (!shares)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    el_err err = parse_shares(p, sources, j, key, shares, &n, diag);
    uint64_t sum = 0;
    for (size_t i = 0; !err && i < n; i++)
        sum += shares[i].count; /* an overflow is refused by add_hot */
    if (!err && sum != fan_in)
        err = el_diag_set(diag, EL_EUSAGE, "hot[%zu] '%.*s': \"fan_in\" %" PRIu64 " is not the "
                          "sum of its \"sources\" (%" PRIu64 ")", j, KEY_SHOWN(strlen(key)),
                          key, fan_in, sum);
    if (!err) {
        el_diag d;
        el_diag_clear(&d);
        err = el_plan_add_hot(p, key, strlen(key), shards > SIZE_MAX ? SIZE_MAX : (size_t)shards,
                              shares, n, &d);
        if (err)
            el_diag_set(diag, err, "hot[%zu]: %s", j, d.msg);
    }
    free(shares);
    return err;
}

static el_err parse_source(el_plan *p, yajl_val v, size_t i, el_diag *diag)
{
    if (!YAJL_IS_OBJECT(v))
        return el_diag_set(diag, EL_EUSAGE, "sources[%zu] must be an object", i);
    const char *name = NULL;
    uint64_t f[3] = { 0, 0, 0 }; /* rows, threshold, max_shards */
    bool have[3] = { false, false, false };
    static const char *const fields[3] = { "rows", "threshold", "max_shards" };
    for (size_t k = 0; k < v->u.object.len; k++) {
        const char *key = v->u.object.keys[k];
        yajl_val x = v->u.object.values[k];
        size_t fi = 3;
        for (size_t q = 0; q < 3; q++)
            if (strcmp(key, fields[q]) == 0)
                fi = q;
        if (strcmp(key, "name") == 0) {
            if (!YAJL_IS_STRING(x) || !YAJL_GET_STRING(x)[0])
                return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: \"name\" must be a "
                                   "non-empty string", i);
            name = YAJL_GET_STRING(x);
        } else if (fi < 3) {
            if (!(have[fi] = get_uint(x, &f[fi])))
                return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: \"%s\" must be a "
                                   "non-negative integer", i, fields[fi]);
        } else {
            return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: unknown key \"%s\" (expected "
                               "name, rows, threshold, max_shards)", i, key);
        }
    }
    if (!name)
        return el_diag_set(diag, EL_EUSAGE, "sources[%zu]: needs \"name\"", i);
    for (size_t q = 0; q < 3; q++)
        if (!have[q])
            return el_diag_set(diag, EL_EUSAGE, "source '%s': needs \"%s\"", name, fields[q]);
    if (f[1] == 0 && f[2] != 0)
        return el_diag_set(diag, EL_EUSAGE, "source '%s': \"max_shards\" must be 0 when "
                           "\"threshold\" is 0 (hot sharding off)", name);
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_add_source(p, name, f[0], f[1],
                                    f[2] > EL_MAX_MAX_SHARDS ? 0 : (size_t)f[2], NULL, &d);
    if (err)
        return el_diag_set(diag, err, "%s", d.msg);
    return EL_OK;
}

/* The root's members: version first, then the sources, then the hot keys
 * that name them, whatever their order in the file. */
static el_err parse_root(el_plan *p, yajl_val root, el_diag *diag)
{
    yajl_val version = NULL, sources = NULL, hot = NULL;
    for (size_t i = 0; i < root->u.object.len; i++) {
        const char *k = root->u.object.keys[i];
        yajl_val v = root->u.object.values[i];
        if (strcmp(k, "version") == 0)
            version = v;
        else if (strcmp(k, "sources") == 0)
            sources = v;
        else if (strcmp(k, "hot") == 0)
            hot = v;
        else if (strcmp(k, "estimate") == 0) {
            /* what plan estimated, for people and scripts: not read back */
            if (!YAJL_IS_OBJECT(v))
                return el_diag_set(diag, EL_EUSAGE, "\"estimate\" must be an object");
        } else {
            return el_diag_set(diag, EL_EUSAGE, "unknown key \"%s\" (expected version, "
                               "sources, hot, estimate)", k);
        }
    }
    uint64_t ver;
    if (!version)
        return el_diag_set(diag, EL_EUSAGE, "no \"version\": not an edgeload plan");
    if (get_uint(version, &ver) && ver == 1)
        return el_diag_set(diag, EL_EUSAGE, "a plan of version 1, made by an earlier edgeload "
                           "that counted fan-in per source, not over every source that writes "
                           "a key: make it again with 'edgeload plan --plan-out FILE'");
    if (!get_uint(version, &ver) || ver != EL_PLAN_VERSION)
        return el_diag_set(diag, EL_EUSAGE, "unsupported plan \"version\" (this edgeload reads "
                           "version %d)", EL_PLAN_VERSION);
    if (!sources)
        return el_diag_set(diag, EL_EUSAGE, "no \"sources\"");
    if (!YAJL_IS_ARRAY(sources))
        return el_diag_set(diag, EL_EUSAGE, "\"sources\" must be a list");
    if (!hot)
        return el_diag_set(diag, EL_EUSAGE, "no \"hot\"");
    if (!YAJL_IS_ARRAY(hot))
        return el_diag_set(diag, EL_EUSAGE, "\"hot\" must be a list");
    el_err err = EL_OK;
    for (size_t j = 0; !err && j < sources->u.array.len; j++)
        err = parse_source(p, sources->u.array.values[j], j, diag);
    for (size_t j = 0; !err && j < hot->u.array.len; j++)
        err = parse_hot_entry(p, hot->u.array.values[j], j, diag);
    return err;
}

el_err el_plan_parse(const char *json, size_t len, el_plan **out, el_diag *diag)
{
    *out = NULL;
    /* yajl's tree cuts strings at a NUL: a key "a\u0000b" would load as "a" */
    if (strstr(json, "\\u0000"))
        return el_diag_set(diag, EL_EUSAGE, "a string holds \\u0000 (NUL), which no key "
                           "may");
    yajl_val root;
    if (el_json_tree_parse(json, len, EL_JSON_MAX_DEPTH, 0, "plan", &root, diag))
        return EL_EUSAGE;
    el_plan *p = el_plan_new();
    el_err err = p ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err && !YAJL_IS_OBJECT(root))
        err = el_diag_set(diag, EL_EUSAGE, "a plan must be a JSON object");
    if (!err)
        err = parse_root(p, root, diag);
    yajl_tree_free(root);
    if (err) {
        el_plan_free(p);
        return err;
    }
    *out = p;
    return EL_OK;
}

el_err el_plan_load(const char *path, el_plan **out, el_diag *diag)
{
    *out = NULL;
    el_buf b;
    el_buf_init(&b, PLAN_FILE_MAX);
    el_err err = el_read_named_file("plan", path, "1 GB", &b, diag);
    if (err)
        return err;
    if (memchr(el_buf_str(&b), '\0', b.len)) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_EUSAGE, "plan %s: not a JSON text (holds a NUL byte)",
                           path);
    }
    el_diag inner;
    el_diag_clear(&inner);
    err = el_plan_parse(el_buf_str(&b), b.len, out, &inner);
    if (err)
        el_diag_set(diag, err, "plan %s: %s", path, inner.msg);
    el_buf_free(&b);
    return err;
}
