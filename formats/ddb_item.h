/*
 * ddb_item.h - DynamoDB JSON read back: an item, a key or an answer parsed
 * into a tree, walked by name, compared as DynamoDB means its values, and
 * written out again as compact JSON.
 *
 * verify compares the item a load means to write (el_transform's JSON)
 * with the item the table gives back; dynamo/ parses its answers into these
 * trees (dynamo/ddb_client.h), so nothing above them reads JSON itself.
 * Values are equal when DynamoDB would say so, not when their text is:
 * a number written "1.50" comes back "1.5", and base64 may come back with
 * or without line breaks.
 *
 * Ownership: an el_ddb_doc owns its whole tree; every el_ddb_val is
 * borrowed from its doc and lives as long as it. Pure: no I/O, no threads.
 */
#ifndef EL_DDB_ITEM_H
#define EL_DDB_ITEM_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */

#include "common/buf.h"
#include "common/error.h"

typedef struct el_ddb_doc el_ddb_doc;
/* A node of a doc: an object, array, string, number, true, false or null. */
typedef struct el_ddb_val el_ddb_val;

/*
 * Parses json[0..len) (need not be NUL-terminated). Nesting deeper than
 * EL_JSON_MAX_DEPTH is refused before parsing (the tree is freed
 * recursively). *out NULL on failure: EL_EPARSE with diag saying why (never
 * quoting the text: it may hold row data), EL_ENOMEM.
 */
el_err el_ddb_doc_parse(const char *json, size_t len, el_ddb_doc **out,
                        el_diag *diag) EL_MUST_USE;
void el_ddb_doc_free(el_ddb_doc *doc);
const el_ddb_val *el_ddb_doc_root(const el_ddb_doc *doc);

/* The member `name` of an object; NULL when v is NULL, not an object, or
 * has no such member. */
const el_ddb_val *el_ddb_val_member(const el_ddb_val *v, const char *name);
/* Members of an object or elements of an array (0 for anything else). */
size_t el_ddb_val_count(const el_ddb_val *v);
/* The i-th element of an array or value of an object's i-th member. */
const el_ddb_val *el_ddb_val_at(const el_ddb_val *v, size_t i);
/* The name of an object's i-th member. */
const char *el_ddb_val_key(const el_ddb_val *v, size_t i);
bool el_ddb_val_is_object(const el_ddb_val *v);
/* The text of a string, NULL for anything else. */
const char *el_ddb_val_string(const el_ddb_val *v);

/* The S value of a key attribute: item.name.S, NULL when absent. */
const char *el_ddb_item_string(const el_ddb_val *item, const char *name);

/*
 * Whether two attribute values ({"S":".."}, {"N":".."}, ...) are equal as
 * DynamoDB means them: same type; S exact; N as numbers (canonical form);
 * B as the bytes their base64 decodes to; BOOL and NULL by value;
 * SS/NS/BS as sets; L in order; M by name. Anything malformed is unequal.
 */
bool el_ddb_values_equal(const el_ddb_val *expected, const el_ddb_val *actual);

/* Whether two number texts are the same number (see el_ddb_number_canon). */
bool el_ddb_numbers_equal(const char *a, const char *b);

/*
 * Canonical decimal text of a DynamoDB number: optional '-', no leading
 * zeros, no trailing zeros after the point, no exponent, "0" for any zero:
 * "1.50" -> "1.5", "1E2" -> "100", "-0.0" -> "0", ".5" -> "0.5",
 * "+7" -> "7". Appends to out; EL_EPARSE when s is not a number (or its
 * exponent is beyond +-1000), out unchanged then.
 */
el_err el_ddb_number_canon(const char *s, size_t len, el_buf *out) EL_MUST_USE;

/* Appends v as compact JSON (strings escaped as DynamoDB JSON wants them);
 * "null" for NULL. */
el_err el_ddb_val_put(el_buf *out, const el_ddb_val *v) EL_MUST_USE;

#endif
