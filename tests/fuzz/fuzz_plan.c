/*
 * fuzz_plan.c - libFuzzer target for plan files (el_plan_parse); a plan that
 * loads is written back with el_plan_to_json and must load again.
 * Corpus: tests/fuzz/corpus/fuzz_plan/, replayed by ctest.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/sharding/shard_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    el_plan *p = NULL;
    el_diag d;
    el_diag_clear(&d);
    if (el_plan_parse(text, size, &p, &d) == EL_OK) {
        for (size_t i = 0; i < el_plan_nsources(p); i++)
            (void)el_plan_get_source(p, i);
        for (size_t i = 0; i < el_plan_nhot(p); i++) {
            const el_plan_hot *h = el_plan_get_hot(p, i);
            if (el_plan_shards(p, h->key, h->len) != h->shards)
                abort(); /* a hot key is found by its own lookup */
        }
        (void)el_plan_shards(p, "x", 1);
        char *json = el_plan_to_json(p);
        if (json) {
            el_plan *q = NULL;
            if (el_plan_parse(json, strlen(json), &q, &d) != EL_OK)
                abort(); /* what we write we must read */
            el_plan_free(q);
            free(json);
        }
        el_plan_free(p);
    }
    free(text);
    return 0;
}
