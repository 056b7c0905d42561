/*
 * fanin.h - the hot-key plan a load (or verify) shards with (docs/SHARDING.md):
 * read from `edgeload plan --plan-out FILE`, or counted from the inputs of
 * the sources that have "hot" settings before the first item is written.
 * A key's fan-in is summed over every source that writes it, and every
 * source's edges to a hot key go to its shards (shard_plan.h).
 *
 * Counting is a second pass over each input, so inputs must be files:
 * standard input and pipes are refused with a message pointing at --plan.
 */
#ifndef EL_FANIN_H
#define EL_FANIN_H

#include <stddef.h>  /* size_t */

#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/sharding/shard_plan.h"

typedef struct el_fanin_input {
    const char *path;
    const el_source *src;       /* bound to the input's columns */
    el_reader_opts ropts;       /* how to open it */
} el_fanin_input;

/*
 * *out gets the plan (owned by the caller, el_plan_free), or NULL when no
 * plan file was given and no source is hot. Errors: EL_EUSAGE (bad plan
 * file, an input that cannot be read twice), read errors with the path.
 */
el_err el_fanin_plan(const el_mapping *m, const el_fanin_input *inputs, size_t n,
                     const char *plan_path, el_plan **out, el_diag *diag) EL_MUST_USE;

#endif
