/*
 * format.c - the names of the input formats, both ways.
 */
#include "formats/format.h"

#include <string.h>  /* strcmp */

const char *el_format_name(el_format f)
{
    switch (f) {
    case EL_FMT_AUTO: return "auto";
    case EL_FMT_CSV: return "csv";
    case EL_FMT_TSV: return "tsv";
    case EL_FMT_MYSQL: return "mysql";
    case EL_FMT_POSTGRES: return "postgres";
    case EL_FMT_SQLITE: return "sqlite";
    }
    return "?";
}

el_err el_format_parse(const char *s, el_format *out)
{
    for (el_format f = EL_FMT_AUTO; f <= EL_FMT_SQLITE; f++) {
        if (strcmp(s, el_format_name(f)) == 0) {
            *out = f;
            return EL_OK;
        }
    }
    if (strcmp(s, "mariadb") == 0) {
        *out = EL_FMT_MYSQL;
        return EL_OK;
    }
    if (strcmp(s, "pg") == 0 || strcmp(s, "postgresql") == 0) {
        *out = EL_FMT_POSTGRES;
        return EL_OK;
    }
    return EL_EUSAGE;
}
