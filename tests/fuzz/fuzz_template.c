/*
 * fuzz_template.c - libFuzzer target for the key/attribute template parser:
 * el_template_parse on the input (NUL-terminated copy), then bind against a
 * small schema and render a row when it binds.
 * Corpus: tests/fuzz/corpus/fuzz_template/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "pipeline/rows/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    el_template *t = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_template_parse(text, &t, &d) == EL_OK) {
        char *names[] = { "a", "id", "follower_id", "" };
        el_coltype types[4] = { 0 };
        el_schema s = { 4, names, types, NULL, NULL };
        el_value vals[4] = { { "x", 1, false }, { "", 0, false }, { "42", 2, false },
                             { NULL, 0, true } };
        vals[3].data = "";
        el_row row = { 4, vals, 1, 0 };
        if (el_template_bind(t, &s, &d) == EL_OK) {
            el_buf b;
            el_buf_init(&b, 1 << 20);
            size_t empty;
            if (el_template_render(t, &row, &b, &empty) == EL_OK && !el_buf_str(&b))
                abort();
            el_buf_free(&b);
        }
        (void)el_template_text(t);
        (void)el_template_is_literal(t);
        for (size_t i = 0; i < el_template_nrefs(t); i++)
            (void)el_template_ref_name(t, i);
        el_template_free(t);
    }
    free(text);
    return 0;
}
