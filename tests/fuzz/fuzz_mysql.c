/*
 * fuzz_mysql.c - libFuzzer target for the mysql dump reader (el_mysql_reader_open).
 * Corpus: tests/fuzz/corpus/fuzz_mysql/, replayed by ctest through replay_main.c.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_reader(el_mysql_reader_open, data, size);
}
