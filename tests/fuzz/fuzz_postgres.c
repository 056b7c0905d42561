/*
 * fuzz_postgres.c - libFuzzer target for the postgres dump reader (el_postgres_reader_open).
 * Corpus: tests/fuzz/corpus/fuzz_postgres/, replayed by ctest through replay_main.c.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(el_postgres_reader_open, data, size);
}
