/*
 * fuzz_ddb_struct.c - libFuzzer target for the json, SS and NS converters:
 * el_ddb_struct_json on the input, then el_ddb_struct_set on it as SS and
 * as NS. Whatever they accept must come out as one DynamoDB value that
 * parses back (el_ddb_doc_parse) with the size of a value that fits, and a
 * reject must leave the buffer as it was.
 * Corpus: tests/fuzz/corpus/fuzz_ddb_struct/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "formats/ddb_item.h"
#include "formats/ddb_struct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SIZE ((size_t)400 * 1024)

/* out holds "X" then what the call appended. */
static void check(el_err err, const el_buf *out, size_t vsize, bool may_be_empty)
{
    if (err) {
        if (out->len != 1)
            abort();
        return;
    }
    if (out->len == 1) {
        if (!may_be_empty || vsize != 0)
            abort();
        return;
    }
    if (vsize > MAX_SIZE)
        abort();
    el_ddb_doc *doc = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_ddb_doc_parse(out->data + 1, out->len - 1, &doc, &d) != EL_OK)
        abort();
    const el_ddb_val *root = el_ddb_doc_root(doc);
    if (!el_ddb_val_is_object(root) || el_ddb_val_count(root) != 1)
        abort();
    /* a value equals itself as DynamoDB compares (sets, numbers, nesting) */
    if (!el_ddb_values_equal(root, root))
        abort();
    el_ddb_doc_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    el_ddb_struct *c = NULL;
    if (el_ddb_struct_new(&c))
        return 0;
    const char *s = (const char *)data;
    el_buf out;
    el_buf_init(&out, 16u << 20);
    size_t vsize = 0;
    const char *why = NULL;
    for (int kind = 0; kind < 3; kind++) {
        el_buf_reset(&out);
        if (el_buf_putc(&out, 'X'))
            break;
        el_err err = kind == 0
                         ? el_ddb_struct_json(c, &out, s, size, MAX_SIZE, &vsize, &why)
                         : el_ddb_struct_set(c, &out, s, size, ',', kind == 2, MAX_SIZE, &vsize,
                                             &why);
        if (err == EL_EREJECT && !why)
            abort();
        check(err, &out, vsize, kind != 0);
    }
    el_buf_free(&out);
    el_ddb_struct_free(c);
    return 0;
}
