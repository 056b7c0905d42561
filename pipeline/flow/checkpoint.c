/*
 * checkpoint.c - the checkpoint file (JSON) and its atomic replacement.
 *
 * DESIGN: the file is small (one entry per input), so it is rewritten whole
 * each time; atomicity comes from rename(2), durability from fsync of the
 * file and then of its directory, so after a power cut the file is either
 * the old one or the new one. Offsets are written as JSON integers; yajl's
 * tree API parses them back exactly up to 2^63.
 */
#include "pipeline/flow/checkpoint.h"

#include <errno.h>      /* errno */
#include <fcntl.h>      /* open */
#include <stdio.h>      /* snprintf, rename */
#include <stdlib.h>     /* calloc, free */
#include <string.h>     /* strerror, strrchr */
#include <unistd.h>     /* write, fsync, close */
#include <yajl/yajl_tree.h> /* reading it back */

#include "common/json_guard.h"
#include "common/buf.h"
#include "common/file.h"
#include "formats/ddb_value.h"

el_checkpoint *el_checkpoint_new(size_t n)
{
    el_checkpoint *cp = calloc(1, sizeof *cp);
    if (!cp)
        return NULL;
    cp->inputs = calloc(n ? n : 1, sizeof *cp->inputs);
    if (!cp->inputs) {
        free(cp);
        return NULL;
    }
    cp->ninputs = n;
    return cp;
}

void el_checkpoint_free(el_checkpoint *cp)
{
    if (!cp)
        return;
    for (size_t i = 0; i < cp->ninputs; i++)
        free(cp->inputs[i].path);
    free(cp->inputs);
    free(cp);
}

uint64_t el_checkpoint_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    if (h == 0)
        h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static el_err fsync_dir(const char *path)
{
    char dir[EL_PATH_BYTES];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return EL_EIO;
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? EL_OK : EL_EIO;
}

el_err el_checkpoint_write(const char *path, const el_checkpoint *cp, el_diag *diag)
{
    el_buf b;
    el_buf_init(&b, (size_t)64 * 1024 * 1024);
    el_err err = el_buf_printf(&b, "{\"version\":1,\"job\":\"%016llx\",\"rejects_bytes\":%llu,"
                               "\"items_written\":%llu,\"rejected\":%llu,\"inputs\":[",
                               (unsigned long long)cp->job_hash,
                               (unsigned long long)cp->rejects_bytes,
                               (unsigned long long)cp->items_written,
                               (unsigned long long)cp->rejected);
    for (size_t i = 0; !err && i < cp->ninputs; i++) {
        const el_checkpoint_input *in = &cp->inputs[i];
        err = el_buf_puts(&b, i ? ",{\"path\":" : "{\"path\":");
        if (!err)
            err = el_json_put_string(&b, in->path ? in->path : "", in->path ? strlen(in->path) : 0);
        if (!err)
            err = el_buf_printf(&b, ",\"offset\":%llu,\"done\":%s", (unsigned long long)in->offset,
                                in->done ? "true" : "false");
        if (!err && in->has_rejects)
            err = el_buf_printf(&b, ",\"rejects_high\":%llu",
                                (unsigned long long)in->rejects_high);
        if (!err)
            err = el_buf_putc(&b, '}');
    }
    if (!err)
        err = el_buf_putc(&b, ']');
    if (!err && cp->has_counters)
        err = el_buf_printf(&b, ",\"counters\":{\"digest\":\"%016llx\",\"done\":%llu}",
                            (unsigned long long)cp->counters_digest,
                            (unsigned long long)cp->counters_done);
    if (!err)
        err = el_buf_puts(&b, "}\n");
    if (err) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_ENOMEM, "out of memory writing the checkpoint");
    }
    char tmp[EL_PATH_BYTES];
    el_err perr = el_path_suffixed(tmp, path, ".tmp", diag);
    if (perr) {
        el_buf_free(&b);
        return perr;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        el_buf_free(&b);
        return el_diag_set(diag, EL_EIO, "cannot write checkpoint %s: %s", tmp, strerror(errno));
    }
    size_t off = 0;
    while (off < b.len) {
        ssize_t n = write(fd, b.data + off, b.len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    bool ok = off == b.len && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    el_buf_free(&b);
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return el_diag_set(diag, EL_EIO, "cannot write checkpoint %s: %s", path, strerror(e));
    }
    if (fsync_dir(path))
        return el_diag_set(diag, EL_EIO, "cannot sync the directory of checkpoint %s", path);
    return EL_OK;
}

static bool get_u64(yajl_val obj, const char *key, uint64_t *out)
{
    const char *p[] = { key, NULL };
    yajl_val v = yajl_tree_get(obj, p, yajl_t_number);
    if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
        return false;
    *out = (uint64_t)YAJL_GET_INTEGER(v);
    return true;
}

el_err el_checkpoint_read(const char *path, el_checkpoint **out, el_diag *diag)
{
    *out = NULL;
    el_buf b;
    el_buf_init(&b, EL_CHECKPOINT_MAX_BYTES + 1);
    int errnum;
    el_err err = el_read_file(path, &b, &errnum);
    if (err) {
        el_buf_free(&b);
        if (err == EL_EIO)
            return el_diag_set(diag, EL_EUSAGE, "cannot read checkpoint %s: %s", path,
                               strerror(errnum));
        return el_diag_set(diag, EL_EUSAGE, "checkpoint %s is too large", path);
    }
    err = el_checkpoint_parse(el_buf_str(&b), b.len, path, out, diag);
    el_buf_free(&b);
    return err;
}

el_err el_checkpoint_parse(const char *text, size_t len, const char *name,
                           el_checkpoint **out, el_diag *diag)
{
    *out = NULL;
    if (len > EL_CHECKPOINT_MAX_BYTES)
        return el_diag_set(diag, EL_EUSAGE, "checkpoint %s is too large", name);
    el_diag g;
    el_diag_clear(&g);
    if (el_json_guard(text, len, EL_JSON_MAX_DEPTH, 0, &g))
        return el_diag_set(diag, EL_EUSAGE, "checkpoint %s is not usable: %s", name, g.msg);
    /* yajl's tree wants a NUL-terminated string */
    char *copy = malloc(len + 1);
    if (!copy)
        return el_diag_set(diag, EL_ENOMEM, "out of memory reading checkpoint %s", name);
    if (len)
        memcpy(copy, text, len);
    copy[len] = '\0';
    char ebuf[256];
    yajl_val root = yajl_tree_parse(copy, ebuf, sizeof ebuf);
    free(copy);
    const char *why = NULL;
    el_checkpoint *cp = NULL;
    const char *ip[] = { "inputs", NULL }, *jp[] = { "job", NULL };
    yajl_val inputs = root ? yajl_tree_get(root, ip, yajl_t_array) : NULL;
    yajl_val job = root ? yajl_tree_get(root, jp, yajl_t_string) : NULL;
    if (!root || !YAJL_IS_OBJECT(root))
        why = "not a JSON object";
    else if (!inputs || !job)
        why = "no \"inputs\" list or \"job\"";
    else if (!(cp = el_checkpoint_new(inputs->u.array.len)))
        why = "out of memory";
    if (!why) {
        cp->job_hash = strtoull(job->u.string, NULL, 16);
        if (!get_u64(root, "rejects_bytes", &cp->rejects_bytes))
            why = "no \"rejects_bytes\"";
        get_u64(root, "items_written", &cp->items_written);
        get_u64(root, "rejected", &cp->rejected);
        const char *cdp[] = { "counters", "digest", NULL };
        yajl_val cd = yajl_tree_get(root, cdp, yajl_t_string);
        const char *cp_[] = { "counters", NULL };
        yajl_val co = yajl_tree_get(root, cp_, yajl_t_object);
        if (cd && co && get_u64(co, "done", &cp->counters_done)) {
            cp->has_counters = true;
            cp->counters_digest = strtoull(cd->u.string, NULL, 16);
        } else if (co) {
            why = "\"counters\" lacks \"digest\" or \"done\"";
        }
    }
    for (size_t i = 0; !why && i < cp->ninputs; i++) {
        yajl_val v = inputs->u.array.values[i];
        el_checkpoint_input *in = &cp->inputs[i];
        const char *pp[] = { "path", NULL }, *dp[] = { "done", NULL };
        yajl_val p = yajl_tree_get(v, pp, yajl_t_string);
        yajl_val d = yajl_tree_get(v, dp, yajl_t_any);
        if (!p || !d || !get_u64(v, "offset", &in->offset)) {
            why = "an input lacks \"path\", \"offset\" or \"done\"";
            break;
        }
        in->path = strdup(p->u.string);
        in->done = YAJL_IS_TRUE(d);
        in->has_rejects = get_u64(v, "rejects_high", &in->rejects_high);
        if (!in->path)
            why = "out of memory";
    }
    yajl_tree_free(root);
    if (why) {
        el_checkpoint_free(cp);
        return el_diag_set(diag, EL_EUSAGE, "checkpoint %s is not usable: %s", name, why);
    }
    *out = cp;
    return EL_OK;
}
