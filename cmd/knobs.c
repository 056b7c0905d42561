/*
 * knobs.c - the environment variables that tune a run (knobs.h).
 */
#include "cmd/knobs.h"

#include <stdlib.h>  /* getenv, strtoull */

/* A positive byte count, or 0 when the variable is unset or not a number. */
static size_t env_bytes(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    return *end == '\0' ? (size_t)n : 0;
}

void cmd_knobs_read(cmd_knobs *k)
{
    k->no_pacing = getenv("EDGELOAD_BENCH_NO_PACING") != NULL;
    k->no_table_rate = getenv("EDGELOAD_BENCH_NO_TABLE_RATE") != NULL;
    k->no_interleave = getenv("EDGELOAD_BENCH_NO_INTERLEAVE") != NULL;
    k->part_bytes = env_bytes("EDGELOAD_PART_BYTES");
    k->dedup_memory = env_bytes("EDGELOAD_DEDUP_MEMORY");
    const char *tmp = getenv("TMPDIR");
    k->tmp_dir = tmp && tmp[0] ? tmp : NULL;
}
