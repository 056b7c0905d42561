/*
 * xml.h - a bounded, non-validating scanner for the small XML documents AWS
 * services answer with (S3 listings and errors, STS query-protocol answers).
 *
 * It reports only leaves: for every element that has no child element, the
 * callback gets its parent's name, a number that tells sibling parents apart
 * (every start tag takes the next number), its own name and its text with
 * the five predefined entities and numeric references decoded. Attributes,
 * comments, processing instructions, DOCTYPE are skipped; CDATA is text.
 *
 * Limits: depth 16, names 64 bytes, a leaf's text 16 KB; one root element.
 * Anything malformed, over a limit or holding a NUL is EL_EPARSE (EL_ELIMIT
 * for text over 16 KB), never a crash: fuzz_s3_xml feeds it arbitrary bytes.
 * Pure; any thread.
 */
#ifndef EL_XML_H
#define EL_XML_H

#include <stddef.h>  /* size_t */
#include <stdint.h>  /* uint64_t */

#include "common/error.h"

/* text is NUL-terminated (len bytes before the NUL) and valid during the
 * call only; a non-zero return stops the walk and is returned by it. */
typedef el_err (*el_xml_leaf_fn)(void *user, const char *parent, uint64_t parent_id,
                                 const char *name, const char *text, size_t len);

/* Walks the n bytes of s, calling leaf for each leaf element in document
 * order. EL_OK, the callback's error, EL_EPARSE, EL_ELIMIT or EL_ENOMEM. */
el_err el_xml_walk(const char *s, size_t n, el_xml_leaf_fn leaf, void *user) EL_MUST_USE;

#endif
