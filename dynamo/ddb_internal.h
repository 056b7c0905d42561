/*
 * ddb_internal.h - shared between the files of dynamo/ (and their unit
 * tests); not part of the API the pipeline uses.
 */
#ifndef EL_DDB_INTERNAL_H
#define EL_DDB_INTERNAL_H

#include <stdbool.h> /* bool */
#include <stddef.h>  /* size_t */

#include "common/buf.h"
#include "common/error.h"
#include "dynamo/ddb_client.h"

/* Appends s as a JSON string literal (quotes included), escaping what RFC
 * 8259 requires. EL_ELIMIT/EL_ENOMEM from the buffer; the buffer may then
 * hold a partial literal. */
el_err el_ddb_json_put_string(el_buf *b, const char *s) EL_MUST_USE;

/* Parses a DescribeTable (or CreateTable: "TableDescription") response into
 * out, which is zeroed first. EL_EPARSE with diag when the body is not the
 * expected JSON. */
el_err el_ddb_parse_table_desc(const char *body, size_t len, el_table_desc *out,
                               el_diag *diag) EL_MUST_USE;

/* The BatchWriteItem answer "everything written": true when body is
 * exactly {"UnprocessedItems":{}} and/or a ConsumedCapacity list whose
 * entries each give CapacityUnits (any order, whitespace, other fields of
 * plain ASCII names and values inside the entries), with *consumed_wcu set
 * as the tree parse sets it. False for anything else (unprocessed items,
 * escapes, non-ASCII, comments, duplicate fields, malformed text): the
 * caller parses the tree then. Never allocates. */
bool el_ddb_batch_write_all_done(const char *body, size_t len, double *consumed_wcu);

/* el_ddb_parse_batch_write without the all-done scan: always the yajl tree
 * (the fuzz target compares the two). */
el_err el_ddb_parse_batch_write_tree(const char *body, size_t len, const char *pk_name,
                                     const char *sk_name, el_ddb_batch_result *out,
                                     el_diag *diag) EL_MUST_USE;

/* Extracts the error code (the part of __type after the last '#') and the
 * message ("message" or "Message") of an error body. Either stays "" when
 * absent; neither ever overflows; control characters become spaces. */
void el_ddb_error_fields(const char *body, size_t len, char *type, size_t type_len,
                         char *message, size_t message_len);

/* Appends the CreateTable request body for opts to b (defaults as
 * el_ddb_create_table documents). EL_ELIMIT/EL_ENOMEM from the buffer. */
el_err el_ddb_create_table_body(const el_create_table_opts *opts, el_buf *b) EL_MUST_USE;

/* The capacity units an answer's ConsumedCapacity reports (every entry's
 * CapacityUnits, or its parts when that is absent), 0 when there is none or
 * the body is not JSON. Pure; streams the body without building a tree. */
double el_ddb_consumed_units(const char *body, size_t len);

/* For the transports of ddb_driver.h: the request's body buffer, to take
 * by swapping (the driver then frees an empty buffer), and where the body
 * now lives, for el_ddb_op_body. */
typedef struct el_ddb_op el_ddb_op;
el_buf *el_ddb_op_take_body(el_ddb_op *op);
void el_ddb_op_set_body_view(el_ddb_op *op, const char *body, size_t len);

/* The driver's transport over libcurl and epoll (ddb_transport_curl.c):
 * fills *t for ddb with up to `connections` connections. EL_ENOMEM, or
 * EL_EIO when epoll or eventfd cannot be created. */
typedef struct el_ddb_transport el_ddb_transport;
el_err el_ddb_transport_curl(el_ddb *ddb, int connections, el_ddb_transport *t) EL_MUST_USE;

#endif
