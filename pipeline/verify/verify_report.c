/*
 * verify_report.c - comparing what the table holds with what a load means,
 * and the mismatch report: one JSON line per mismatch for the report file,
 * and the same as a struct for the command's callback.
 *
 * DESIGN: values are compared by formats/ddb_item.h (as DynamoDB means
 * them); only the attributes the mapping writes count, so attributes other
 * writers added to an item are not differences.
 */
#include "pipeline/verify/verify_run.h"

#include <stdlib.h>  /* calloc, free */
#include <string.h>  /* strlen, strnlen */

#include "formats/ddb_value.h" /* el_json_put_string */

static el_err begin_line(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                         const char *index_key)
{
    el_buf *b = &v->line;
    el_buf_reset(b);
    el_err err = el_buf_puts(b, "{\"kind\":\"");
    err = err ? err : el_buf_puts(b, el_verify_kind_name(kind));
    err = err ? err : el_buf_puts(b, "\",\"key\":");
    size_t pklen = strnlen(key, klen);
    err = err ? err : el_buf_putc(b, '{');
    err = err ? err : el_json_put_string(b, v->m->pk_attr, strlen(v->m->pk_attr));
    err = err ? err : el_buf_putc(b, ':');
    err = err ? err : el_json_put_string(b, key, pklen);
    err = err ? err : el_buf_putc(b, ',');
    err = err ? err : el_json_put_string(b, v->m->sk_attr, strlen(v->m->sk_attr));
    err = err ? err : el_buf_putc(b, ':');
    err = err ? err
              : el_json_put_string(b, pklen < klen ? key + pklen + 1 : "",
                                   pklen < klen ? klen - pklen - 1 : 0);
    err = err ? err : el_buf_putc(b, '}');
    if (index_key) {
        err = err ? err : el_buf_puts(b, ",\"index_key\":");
        err = err ? err : el_json_put_string(b, index_key, strlen(index_key));
    }
    return err;
}

static void emit(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                 const char *index_key, const el_verify_attr_diff *diffs, size_t ndiffs,
                 bool item_present)
{
    if (!v->o->on_mismatch)
        return;
    el_buf pk, sk;
    size_t pklen = strnlen(key, klen);
    el_buf_init(&pk, klen + 2);
    el_buf_init(&sk, klen + 2);
    if (el_buf_append(&pk, key, pklen) ||
        (pklen < klen && el_buf_append(&sk, key + pklen + 1, klen - pklen - 1)))
        goto out;
    el_verify_mismatch mm = {
        .kind = kind, .pk = el_buf_str(&pk), .sk = el_buf_str(&sk), .index_key = index_key,
        .diffs = diffs, .ndiffs = ndiffs, .item_present = item_present,
        .json = el_buf_str(&v->line)
    };
    v->o->on_mismatch(v->o->user, &mm);
out:
    el_buf_free(&pk);
    el_buf_free(&sk);
}

el_err verify_report_simple(vrun *v, el_verify_kind kind, const char *key, size_t klen,
                            const char *index_key)
{
    el_err err = begin_line(v, kind, key, klen, index_key);
    err = err ? err : el_buf_putc(&v->line, '}');
    if (!err)
        emit(v, kind, key, klen, index_key, NULL, 0, false);
    return err;
}

el_err verify_compare_item(vrun *v, const char *key, size_t klen, const char *expected_json,
                           const el_ddb_val *actual, bool *same, el_diag *diag)
{
    el_ddb_doc *doc;
    el_diag pd;
    el_diag_clear(&pd);
    if (el_ddb_doc_parse(expected_json, strlen(expected_json), &doc, &pd))
        return el_diag_set(diag, EL_EINTERNAL, "expected item is not JSON: %s", pd.msg);
    const el_ddb_val *exp = el_ddb_doc_root(doc);
    size_t n = el_ddb_val_count(exp), nd = 0;
    el_verify_attr_diff *diffs = calloc(n ? n : 1, sizeof *diffs);
    size_t *starts = calloc(n ? 2 * n : 1, sizeof *starts);
    el_err err = diffs && starts ? EL_OK : EL_ENOMEM;
    el_buf_reset(&v->tmp);
    for (size_t i = 0; !err && i < n; i++) {
        const char *name = el_ddb_val_key(exp, i);
        const el_ddb_val *e = el_ddb_val_at(exp, i), *a = el_ddb_val_member(actual, name);
        if (el_ddb_values_equal(e, a))
            continue;
        diffs[nd].name = name;
        starts[2 * nd] = v->tmp.len;
        err = el_ddb_val_put(&v->tmp, e);
        err = err ? err : el_buf_putc(&v->tmp, '\0');
        starts[2 * nd + 1] = a ? v->tmp.len : (size_t)-1;
        if (!err && a)
            err = el_ddb_val_put(&v->tmp, a);
        err = err ? err : el_buf_putc(&v->tmp, '\0');
        nd++;
    }
    *same = nd == 0;
    if (!err && nd) {
        /* the tmp buffer is complete now: its pointers no longer move */
        for (size_t i = 0; i < nd; i++) {
            diffs[i].expected = v->tmp.data + starts[2 * i];
            diffs[i].actual = starts[2 * i + 1] == (size_t)-1 ? NULL
                                                              : v->tmp.data + starts[2 * i + 1];
        }
        err = begin_line(v, EL_VERIFY_DIFFERENT, key, klen, NULL);
        err = err ? err : el_buf_puts(&v->line, ",\"attributes\":{");
        for (size_t i = 0; !err && i < nd; i++) {
            if (i)
                err = el_buf_putc(&v->line, ',');
            err = err ? err : el_json_put_string(&v->line, diffs[i].name, strlen(diffs[i].name));
            err = err ? err : el_buf_puts(&v->line, ":{\"expected\":");
            err = err ? err : el_buf_puts(&v->line, diffs[i].expected);
            err = err ? err : el_buf_puts(&v->line, ",\"actual\":");
            err = err ? err : el_buf_puts(&v->line, diffs[i].actual ? diffs[i].actual : "null");
            err = err ? err : el_buf_putc(&v->line, '}');
        }
        err = err ? err : el_buf_puts(&v->line, "}}");
        if (!err)
            emit(v, EL_VERIFY_DIFFERENT, key, klen, NULL, diffs, nd, true);
    }
    free(diffs);
    free(starts);
    el_ddb_doc_free(doc);
    if (err)
        el_diag_set(diag, err, "comparing items: %s", el_strerror(err));
    return err;
}

/* Reports one counter attribute: absent (actual NULL) or different. */
static el_err report_counter(vrun *v, const char *key, size_t klen, const char *attr,
                             const char *count, const el_ddb_val *actual, bool item_present)
{
    el_verify_kind kind = actual ? EL_VERIFY_COUNTER_DIFFERENT : EL_VERIFY_COUNTER_MISSING;
    el_buf_reset(&v->tmp);
    el_err err = el_buf_puts(&v->tmp, "{\"N\":\"");
    err = err ? err : el_buf_puts(&v->tmp, count);
    err = err ? err : el_buf_puts(&v->tmp, "\"}");
    err = err ? err : el_buf_putc(&v->tmp, '\0');
    size_t at = v->tmp.len;
    if (actual)
        err = err ? err : el_ddb_val_put(&v->tmp, actual);
    err = err ? err : el_buf_putc(&v->tmp, '\0');
    err = err ? err : begin_line(v, kind, key, klen, NULL);
    err = err ? err : el_buf_puts(&v->line, ",\"attributes\":{");
    err = err ? err : el_json_put_string(&v->line, attr, strlen(attr));
    err = err ? err : el_buf_puts(&v->line, ":{\"expected\":");
    err = err ? err : el_buf_puts(&v->line, v->tmp.data);
    err = err ? err : el_buf_puts(&v->line, ",\"actual\":");
    err = err ? err : el_buf_puts(&v->line, actual ? v->tmp.data + at : "null");
    err = err ? err : el_buf_puts(&v->line, item_present ? "}},\"item_present\":true}"
                                                       : "}},\"item_present\":false}");
    if (err)
        return err;
    el_verify_attr_diff diff = { attr, v->tmp.data, actual ? v->tmp.data + at : NULL };
    emit(v, kind, key, klen, NULL, &diff, 1, item_present);
    return EL_OK;
}

el_err verify_compare_counters(vrun *v, const char *key, size_t klen, const el_buf *expected,
                               const el_ddb_val *item, el_diag *diag)
{
    el_err err = EL_OK;
    for (size_t off = 0; !err && off < expected->len;) {
        const char *attr = expected->data + off;
        const char *count = attr + strlen(attr) + 1;
        off = (size_t)(count - expected->data) + strlen(count) + 1;
        v->st->counters_expected++;
        const el_ddb_val *actual = item ? el_ddb_val_member(item, attr) : NULL;
        if (!actual) {
            v->st->counters_missing++;
            err = report_counter(v, key, klen, attr, count, NULL, item != NULL);
            continue;
        }
        const char *n = el_ddb_val_string(el_ddb_val_member(actual, "N"));
        if (el_ddb_val_count(actual) == 1 && el_ddb_numbers_equal(n, count)) {
            v->st->counters_present++;
            continue;
        }
        v->st->counters_different++;
        err = report_counter(v, key, klen, attr, count, actual, true);
    }
    if (err)
        el_diag_set(diag, err, "reporting counters: %s", el_strerror(err));
    return err;
}

