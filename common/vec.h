/*
 * vec.h - room in a growable array: the one "double the capacity when full"
 * step that arrays of parts, sources, spans, table names and batch rows
 * share.
 *
 * The array stays the caller's: this only reallocates it. Typical use, for
 * one more element:
 *
 *     part_info *v = el_grow(s->parts, &s->parts_cap, s->nparts + 1, sizeof *v, 16);
 *     if (!v)
 *         return EL_ENOMEM;
 *     s->parts = v;
 */
#ifndef EL_VEC_H
#define EL_VEC_H

#include <stddef.h>  /* size_t */

/*
 * Returns an array of at least `need` elements of `size` bytes holding p's
 * first *cap elements: p itself when need <= *cap; otherwise p reallocated
 * to a capacity of `first` (when *cap is 0), doubled until it holds `need`,
 * and *cap set to it. On failure (out of memory, or a size that does not
 * fit a size_t) returns NULL, leaving p valid and *cap unchanged; the caller
 * still owns p either way.
 */
void *el_grow(void *p, size_t *cap, size_t need, size_t size, size_t first);

#endif
