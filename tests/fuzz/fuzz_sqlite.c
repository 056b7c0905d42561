/*
 * fuzz_sqlite.c - libFuzzer target for the sqlite dump reader (el_sqlite_reader_open).
 * Corpus: tests/fuzz/corpus/fuzz_sqlite/, replayed by ctest through replay_main.c.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(el_sqlite_reader_open, data, size);
}
