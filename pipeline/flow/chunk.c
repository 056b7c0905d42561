/*
 * chunk.c - item arenas.
 *
 * DESIGN: items refer to their bytes by offset, not pointer, because the
 * arena buffers grow (and move) while the reader fills the chunk.
 */
#include "pipeline/flow/chunk.h"
#include "common/vec.h"  /* el_grow */

#include <stdlib.h>  /* calloc, realloc, free */

/* A chunk never holds more than this much JSON: bounded memory per chunk. */
#define CHUNK_MAX_BYTES (64u * 1024u * 1024u)

el_chunk *el_chunk_new(size_t input)
{
    el_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->input = input;
    el_buf_init(&c->json, CHUNK_MAX_BYTES);
    el_buf_init(&c->keys, CHUNK_MAX_BYTES);
    return c;
}

void el_chunk_free(el_chunk *c)
{
    if (!c)
        return;
    el_buf_free(&c->json);
    el_buf_free(&c->keys);
    free(c->items);
    free(c);
}

el_err el_chunk_commit(el_chunk *c, size_t json_mark, size_t key_mark, size_t size,
                       uint64_t line, uint64_t offset)
{
    if (c->nitems == c->cap) { /* checked here: el_grow is a call, this runs per item */
        el_item *v = el_grow(c->items, &c->cap, c->nitems + 1, sizeof *v, 64);
        if (!v)
            return EL_ENOMEM;
        c->items = v;
    }
    el_item *it = &c->items[c->nitems++];
    *it = (el_item){ 0 };
    it->chunk = c;
    it->json_off = (uint32_t)json_mark;
    it->json_len = (uint32_t)(c->json.len - json_mark);
    it->key_off = (uint32_t)key_mark;
    it->key_len = (uint32_t)(c->keys.len - key_mark);
    it->size = (uint32_t)size;
    it->line = line;
    it->offset = offset;
    if (c->nitems == 1)
        c->start_offset = offset;
    c->end_offset = offset + 1;
    /* FNV-1a runs byte by byte, so the item key's (PK NUL SK) hash is its
     * PK's hash carried on: one pass gives both */
    const unsigned char *k = (const unsigned char *)c->keys.data + key_mark;
    const unsigned char *end = k + it->key_len;
    uint64_t h = EL_FNV1A64_INIT;
    for (; k < end && *k; k++)
        h = el_fnv1a64_step(h, *k);
    it->pk_hash = h;
    for (; k < end; k++)
        h = el_fnv1a64_step(h, *k);
    it->hash = h;
    c->unacked++;
    return EL_OK;
}
