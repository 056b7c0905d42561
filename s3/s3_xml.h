/*
 * s3_xml.h - the little XML S3 answers with, read minimally and safely.
 *
 * Only what edgeload needs: ListObjectsV2 pages (keys, sizes, ETags,
 * IsTruncated, NextContinuationToken), error documents (Code, Message,
 * Region) and single values (UploadId). Pure and bounded: depth, name and
 * text lengths are capped, entities are the five predefined ones and
 * numeric references, anything malformed is EL_EPARSE, never a crash; a
 * fuzz target (tests/fuzz/fuzz_s3_xml.c) feeds it arbitrary bytes.
 */
#ifndef EL_S3_XML_H
#define EL_S3_XML_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"

/* An object of a listing. key and etag are owned by the page. */
typedef struct el_s3_object {
    char *key;
    uint64_t size;
    char *etag;   /* with its quotes, as S3 sends it; "" when absent */
} el_s3_object;

typedef struct el_s3_list_page {
    el_s3_object *objects;
    size_t n, cap;
    bool truncated;
    char *next_token;  /* NULL when none */
} el_s3_list_page;

/* Parses a ListBucketResult. On failure the page is cleared and diag says
 * why. The caller clears the page with el_s3_list_page_clear. */
el_err el_s3_xml_list(const char *xml, size_t len, el_s3_list_page *page,
                      el_diag *diag) EL_MUST_USE;

/* Frees what a page holds; the page is empty again. */
void el_s3_list_page_clear(el_s3_list_page *page);

/* An <Error> document's fields (truncated to fit; "" when absent). */
typedef struct el_s3_error_doc {
    char code[64];
    char message[256];
    char region[64];
} el_s3_error_doc;

/* True when xml is an <Error> document (then *doc is filled). */
bool el_s3_xml_error(const char *xml, size_t len, el_s3_error_doc *doc);

/* Copies the text of the first element named `name` into out (cap bytes,
 * NUL-terminated). EL_EOF when there is none, EL_ELIMIT when it does not fit,
 * EL_EPARSE on malformed XML. */
el_err el_s3_xml_find(const char *xml, size_t len, const char *name, char *out,
                      size_t cap) EL_MUST_USE;

#endif
