/*
 * fuzz_checkpoint.c - libFuzzer target for checkpoint files
 * (el_checkpoint_parse, the in-memory half of el_checkpoint_read).
 * Corpus: tests/fuzz/corpus/fuzz_checkpoint/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "pipeline/flow/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    el_checkpoint *cp = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_checkpoint_parse((const char *)data, size, "fuzz.ckpt", &cp, &d) == EL_OK) {
        for (size_t i = 0; i < cp->ninputs; i++)
            if (!cp->inputs[i].path)
                abort();
        el_checkpoint_free(cp);
    }
    return 0;
}
