/*
 * ddb_value.h - encoding values the way DynamoDB's JSON protocol wants them.
 *
 * Pure functions, no allocation beyond the el_buf they append to:
 *  - JSON strings (quotes, backslash, control characters escaped; valid UTF-8
 *    passed through, 4-byte sequences included),
 *  - numbers checked against DynamoDB's rule (38 significant digits,
 *    magnitude 1E-130 to 9.99...E+125),
 *  - base64 for B values,
 *  - SQL/ISO-8601 timestamps to epoch seconds, and SQL booleans.
 */
#ifndef EL_DDB_VALUE_H
#define EL_DDB_VALUE_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* int64_t */

#include "common/buf.h"
#include "common/error.h"

/* Appends s[0..len) as a JSON string literal, quotes included. The bytes
 * must be valid UTF-8 (checked by the caller). */
el_err el_json_put_string(el_buf *out, const char *s, size_t len) EL_MUST_USE;

/*
 * Checks that s[0..len) is a number DynamoDB accepts and appends its
 * canonical text (a leading '+' dropped, leading/trailing blanks refused).
 * On an invalid number returns EL_EREJECT and sets *why to a static reason
 * ("more than 38 significant digits"). *size gets DynamoDB's storage size
 * of the number (for the 400 KB item limit).
 */
el_err el_ddb_number_put(el_buf *out, const char *s, size_t len, size_t *size,
                         const char **why) EL_MUST_USE;

/* Appends base64 (RFC 4648, with padding) of data[0..len). */
el_err el_base64_put(el_buf *out, const void *data, size_t len) EL_MUST_USE;

/*
 * Parses a date or timestamp to seconds since 1970-01-01T00:00:00Z:
 *   YYYY-MM-DD, YYYY-MM-DD[ T]HH:MM[:SS[.fraction]], followed optionally by
 *   Z, +HH, +HHMM or +HH:MM (or -); no zone means UTC. A plain integer
 *   (optionally negative) is taken as epoch seconds already.
 * A fraction of a second is dropped (floor: the value stays in its second).
 * Returns false with *why set when the text is not such a value.
 */
bool el_epoch_parse(const char *s, size_t len, int64_t *out, const char **why);

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
int64_t el_days_from_civil(int64_t y, unsigned m, unsigned d);

/* SQL/CSV boolean: true/false, t/f, yes/no, y/n, on/off, 1/0 (any case).
 * Returns 1, 0, or -1 when the text is none of those. */
int el_bool_parse(const char *s, size_t len);

#endif
