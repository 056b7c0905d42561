/*
 * format.h - the input formats edgeload reads, named once: the reader
 * (reader.h) opens one, the dump sniffer (dialect.h) decides one. A header
 * of its own so that the sniffer, which the reader calls, need not include
 * the reader.
 */
#ifndef EL_FORMAT_H
#define EL_FORMAT_H

#include "common/error.h"

typedef enum el_format {
    EL_FMT_AUTO = 0,
    EL_FMT_CSV,
    EL_FMT_TSV,
    EL_FMT_MYSQL,
    EL_FMT_POSTGRES,
    EL_FMT_SQLITE
} el_format;

/* "csv", "tsv", "mysql", "postgres", "sqlite", "auto". */
const char *el_format_name(el_format f);
/* Parses a --format value; EL_EUSAGE when unknown. */
el_err el_format_parse(const char *s, el_format *out) EL_MUST_USE;

#endif /* EL_FORMAT_H */
