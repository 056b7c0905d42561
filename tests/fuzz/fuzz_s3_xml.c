/* fuzz_s3_xml.c - S3's XML answers (listing, error, single value) on
 * arbitrary bytes: never a crash, never a leak, never past the input. */
#include <stddef.h>
#include <stdint.h>

#include "s3/s3_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    el_s3_list_page p;
    el_diag d;
    if (el_s3_xml_list((const char *)data, size, &p, &d) == EL_OK)
        el_s3_list_page_clear(&p);
    el_s3_error_doc e;
    (void)el_s3_xml_error((const char *)data, size, &e);
    char out[64];
    (void)!el_s3_xml_find((const char *)data, size, "UploadId", out, sizeof out);
    return 0;
}
