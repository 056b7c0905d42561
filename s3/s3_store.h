/*
 * s3_store.h - s3://bucket/prefix/ as the place the `--output` sink writes
 * its parts and manifest (common/object_store.h's el_object_store).
 *
 * Each object is streamed with a multipart upload: bytes gather in one
 * buffer of part_size (default 16 MiB; S3 wants at least 5 MiB for every
 * part but the last) and each full buffer is sent as an UploadPart with its
 * SHA-256 signed, so memory is one part whatever the object's size (S3
 * allows 10,000 parts: 156 GiB an object at 16 MiB). An object smaller than
 * one part is a single PUT. Commit completes the upload, and only then does
 * the object exist; abort (or a failure) aborts the upload, so a crashed
 * run leaves no half object (S3 may keep the uploaded parts of an upload
 * whose abort failed until a lifecycle rule removes them).
 */
#ifndef EL_S3_STORE_H
#define EL_S3_STORE_H

#include <stddef.h>  /* size_t */

#include "common/object_store.h"
#include "s3/s3.h"

typedef struct el_s3_store el_s3_store;

/* For s3://bucket/prefix (a '/' is added when missing; "s3://bucket" or
 * "s3://bucket/" is the bucket's root). Borrows s3. part_size 0 = 16 MiB;
 * AWS wants at least 5 MiB (smaller, down to 64 KiB, only for S3-compatible
 * test servers that accept it). *out NULL on failure. */
el_err el_s3_store_new(el_s3 *s3, const char *url, size_t part_size, el_s3_store **out,
                       el_diag *diag) EL_MUST_USE;
void el_s3_store_free(el_s3_store *st);

/* The store as file_sink wants it; valid while st lives. */
const el_object_store *el_s3_store_target(el_s3_store *st);

/* The bucket and the key prefix ("" or ending in '/'), borrowed. */
const char *el_s3_store_bucket(const el_s3_store *st);
const char *el_s3_store_prefix(const el_s3_store *st);

#endif
