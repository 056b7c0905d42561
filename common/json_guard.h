/*
 * json_guard.h - a cheap scan of JSON text before yajl's tree parser sees it.
 *
 * yajl_tree_parse builds the whole document in memory and yajl_tree_free
 * frees it recursively, so a hostile or broken file of a few MB of "[[[[..."
 * overflows the stack, and a few MB of "[1,1,1,..." costs hundreds of MB of
 * nodes. el_json_guard counts the nesting depth and the number of values
 * without building anything, so callers refuse such text with a clear
 * message before parsing it.
 */
#ifndef EL_JSON_GUARD_H
#define EL_JSON_GUARD_H

#include <stddef.h>  /* size_t */

#include <yajl/yajl_tree.h> /* yajl_val */

#include "common/error.h"

/* Deepest nesting any edgeload JSON needs: a DynamoDB item may nest 32
 * levels of M/L, each two JSON levels, plus the response's own levels. */
#define EL_JSON_MAX_DEPTH 128

/*
 * Scans text[0..len) (need not be NUL-terminated). Returns EL_OK when arrays
 * and objects nest at most max_depth deep and the text holds at most
 * max_values values (0 = no limit on values); otherwise EL_ELIMIT with diag
 * "JSON nested deeper than N levels" or "JSON holds more than N values".
 * Malformed JSON passes: the parser that follows reports it better.
 */
el_err el_json_guard(const char *text, size_t len, size_t max_depth, size_t max_values,
                     el_diag *diag) EL_MUST_USE;

/*
 * A file the user wrote (a mapping, a plan) into yajl's tree: guarded as
 * above, then parsed (json NUL-terminated at len). EL_OK with *root (the
 * caller frees it with yajl_tree_free); else EL_EUSAGE, *root NULL and
 * diag "<what> refused: <why>" or "<what> is not valid JSON: <the first
 * line of yajl's message>".
 */
el_err el_json_tree_parse(const char *json, size_t len, size_t max_depth, size_t max_values,
                          const char *what, yajl_val *root, el_diag *diag) EL_MUST_USE;

#endif
