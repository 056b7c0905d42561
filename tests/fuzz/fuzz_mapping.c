/*
 * fuzz_mapping.c - libFuzzer target for the mapping file parser
 * (el_mapping_parse) followed by el_mapping_check, on a NUL-terminated copy.
 * Corpus: tests/fuzz/corpus/fuzz_mapping/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/rows/mapping.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    el_mapping *m = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(text, size, "/nonexistent", &m, &d) == EL_OK) {
        if (el_mapping_check(m, &d) != EL_OK && !d.msg[0])
            abort(); /* a refusal always says why */
        el_mapping_free(m);
    }
    free(text);
    return 0;
}
