/*
 * ddb_struct.h - text values that become DynamoDB structures: a JSON text
 * as the M, L, N, S, BOOL or NULL it spells, and a delimited text (a MySQL
 * SET value, "a,b,c") as a string set (SS) or number set (NS).
 *
 * Each call appends one whole attribute value ({"M":{...}}, {"SS":[...]})
 * to the caller's buffer and reports DynamoDB's size of it, counted by the
 * rules of DynamoDB's "Item sizes" page: a string its UTF-8 bytes, a number
 * a byte per two significant digits plus one, BOOL and NULL one byte, a
 * map or list 3 bytes plus, per element, its size plus one byte (and a map
 * element's name), a set the sum of its members.
 *
 * Numbers keep the exact digits the text wrote: nothing goes through a
 * double. A value DynamoDB would refuse is refused here (EL_EREJECT) with a
 * reason, so the row can be rejected naming its column instead of failing
 * the batch it would have been sent in.
 *
 * Ownership: an el_ddb_struct holds scratch space only; it borrows nothing
 * between calls. One per thread. Pure: no I/O.
 */
#ifndef EL_DDB_STRUCT_H
#define EL_DDB_STRUCT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/buf.h"
#include "common/error.h"

/* DynamoDB nests attributes at most 32 levels deep, the attribute itself
 * being the first: a value's objects and arrays may lie 31 one within
 * another (DynamoDB Local refuses 32 with "Nesting Levels have exceeded
 * supported limits", also when the innermost is empty). */
#define EL_DDB_MAX_NESTING 32
#define EL_DDB_MAX_CONTAINERS (EL_DDB_MAX_NESTING - 1)

typedef struct el_ddb_struct el_ddb_struct;

/* *out NULL and EL_ENOMEM when out of memory. */
el_err el_ddb_struct_new(el_ddb_struct **out) EL_MUST_USE;
/* NULL is a no-op. */
void el_ddb_struct_free(el_ddb_struct *c);

/*
 * Appends the DynamoDB value of the JSON text s[0..len): objects as M,
 * arrays as L, numbers as N with the digits as written, strings as S,
 * true/false as BOOL, null as {"NULL":true}. *size gets its DynamoDB size
 * (without any attribute name). An empty text is not JSON.
 *
 * EL_EREJECT, out unchanged, and *why set to a reason valid until the next
 * call on c when: the text is not JSON (yajl's reason and the byte offset),
 * it nests more than EL_DDB_MAX_CONTAINERS objects and arrays, a number is one DynamoDB refuses
 * (more than 38 significant digits, magnitude out of 1E-130..9.99E+125),
 * an object names a member twice, or the value's size passes max_size.
 * EL_ENOMEM / EL_ELIMIT from out's growth, out unchanged then.
 */
el_err el_ddb_struct_json(el_ddb_struct *c, el_buf *out, const char *s, size_t len,
                          size_t max_size, size_t *size, const char **why) EL_MUST_USE;

/*
 * Appends s[0..len) split at each `delim` byte as a set: {"SS":[...]} or,
 * numbers true, {"NS":[...]}. Empty members are skipped ("a,,b," is a and
 * b); NS members may have blanks around them, SS members are kept byte for
 * byte. Duplicates collapse (NS: equal numbers, "1.5" and "1.50"); members
 * come out sorted, sets having no order. *size gets the set's DynamoDB size.
 *
 * A set with no members appends nothing, *size 0, EL_OK: DynamoDB has no
 * empty set, so the caller omits the attribute (*size == 0 says so).
 * EL_EREJECT with *why when an NS member is not a number DynamoDB takes, an
 * SS member is not valid UTF-8, or the set's size passes max_size.
 */
el_err el_ddb_struct_set(el_ddb_struct *c, el_buf *out, const char *s, size_t len, char delim,
                         bool numbers, size_t max_size, size_t *size,
                         const char **why) EL_MUST_USE;

#endif
