/*
 * fuzz_input.c - libFuzzer target for the input layer: magic-byte detection
 * and zstd/gzip decompression (el_input_open_mem, el_input_peek,
 * el_input_read). The first byte picks the read sizes so short and long
 * reads and peeks interleave. Decompressed output is capped at 64 MB per
 * input so a bomb in the corpus stays quick (the layer itself streams).
 * Corpus: tests/fuzz/corpus/fuzz_input/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t o = data[0];
    data++;
    size--;
    el_input *in = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_input_open_mem(data, size, "fuzz.bin", &in, &d) != EL_OK)
        return 0;
    static unsigned char buf[1 << 16];
    size_t chunk = (size_t)(o & 15) * 4096 + 1;
    if (chunk > sizeof buf)
        chunk = sizeof buf;
    uint64_t total = 0;
    for (int i = 0; total < (64u << 20); i++) {
        el_err err;
        size_t got = 0;
        if ((o & 16) && i % 3 == 0) {
            const unsigned char *p;
            err = el_input_peek(in, (size_t)(o >> 5) * 37 + 1, &p, &got, &d);
            if (err)
                break;
            volatile unsigned char sink = 0;
            for (size_t k = 0; k < got; k++)
                sink ^= p[k];
            (void)sink;
        }
        err = el_input_read(in, buf, chunk, &got, &d);
        if (err || got == 0)
            break;
        if (got > chunk)
            abort();
        total += got;
    }
    (void)el_input_name(in);
    (void)el_input_compression(in);
    (void)el_input_raw_consumed(in);
    el_input_free(in);
    return 0;
}
