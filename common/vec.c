/*
 * vec.c - see vec.h. Growth by doubling keeps appends amortised O(1); the
 * overflow checks matter because `need` can come from input (a dump's
 * table count, a manifest's part count).
 */
#include "common/vec.h"

#include <stdint.h>  /* SIZE_MAX */
#include <stdlib.h>  /* realloc */

void *el_grow(void *p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *v = realloc(p, n * size);
    if (v)
        *cap = n;
    return v;
}
