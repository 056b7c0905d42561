/*
 * table_settings.h - how `create-table` makes a table ready for a load:
 * billing mode and capacity, warm throughput, the on-demand maximum, the
 * table class, deletion protection, tags and the index's projection.
 *
 * They come from the mapping's "create_table" object and from
 * create-table's flags; a flag wins over the file (el_table_settings_merge).
 * el_table_settings_check refuses, before anything is sent, what DynamoDB
 * would refuse (units for an on-demand table, a provisioned table without
 * them, a maximum for a provisioned table), naming each setting as the user
 * gave it: a flag ("--write-units") or a key of the file
 * ("create_table.write_units").
 *
 * The "create_table" object, every key optional:
 *
 *   "billing_mode":        "PAY_PER_REQUEST" (the default) or "PROVISIONED"
 *   "write_units", "read_units":  a PROVISIONED table's capacity (both)
 *   "warm_throughput":     {"write": N, "read": N}, units a second taken at
 *                          once from the first request (either or both)
 *   "max_write_units", "max_read_units":  an on-demand table's maximum
 *   "table_class":         "STANDARD" or "STANDARD_INFREQUENT_ACCESS"
 *   "deletion_protection": true or false
 *   "tags":                {"KEY": "VALUE", ...}
 *   "projection":          "ALL" or "KEYS_ONLY" (the index's)
 *   "index":               {the five throughput keys}, the index's own
 *
 * The throughput given for the table is the index's too, unless "index"
 * gives the index its own figure: a bulk load writes the index about as
 * much as the table. A flag sets both, over the file's table and index.
 *
 * Plain data: the struct is public, the strings in it are its own and
 * el_table_settings_free releases them. Pure, no I/O.
 */
#ifndef EL_TABLE_SETTINGS_H
#define EL_TABLE_SETTINGS_H

#include <stdbool.h>          /* bool */
#include <stddef.h>           /* size_t */
#include <yajl/yajl_tree.h>   /* the mapping's "create_table" object */

#include "common/error.h"
#include "dynamo/ddb_client.h" /* el_ddb_throughput, el_create_table_opts */

/* The settings, each one given or not (the bits of given). */
typedef enum el_ts_field {
    EL_TS_BILLING_MODE = 0,
    EL_TS_WRITE_UNITS,
    EL_TS_READ_UNITS,
    EL_TS_WARM,             /* "WRITE[,READ]" as a flag */
    EL_TS_MAX_WRITE,
    EL_TS_MAX_READ,
    EL_TS_TABLE_CLASS,
    EL_TS_DELETION_PROTECTION,
    EL_TS_TAG,              /* "KEY=VALUE" as a flag, one tag each time */
    EL_TS_PROJECTION,
    EL_TS_NFIELDS
} el_ts_field;

/* DynamoDB's limits on tags (the Tag shape, and tags per resource). */
#define EL_TS_MAX_TAGS 50
#define EL_TS_TAG_KEY_MAX 128    /* characters */
#define EL_TS_TAG_VALUE_MAX 256
/* Throughput figures above 2^53 would not survive a JSON reader that holds
 * numbers as doubles. */
#define EL_TS_MAX_UNITS 9007199254740992ull

typedef struct el_table_settings {
    char *billing_mode;            /* "PAY_PER_REQUEST", "PROVISIONED"; NULL: not given */
    el_ddb_throughput table;       /* 0: not given */
    el_ddb_throughput index;       /* the index's own (the file's "index"); 0: the table's */
    char *table_class;             /* NULL: not given */
    bool deletion_protection;
    el_ddb_tag *tags;              /* ntags, keys unique; the strings are owned */
    size_t ntags;
    char *projection;              /* NULL: not given */
    unsigned given;                /* 1u << el_ts_field: given (the table's figure) */
    unsigned from_flags;           /* of those, given by a flag */
    unsigned index_given;          /* throughput fields the file's "index" gives */
} el_table_settings;

/* An empty set (nothing given). NULL when out of memory. */
el_table_settings *el_table_settings_new(void);
void el_table_settings_free(el_table_settings *s);

/*
 * Sets field f from a flag's text ("PROVISIONED", "40000", "40000,12000",
 * "team=data"; NULL for EL_TS_DELETION_PROTECTION). A throughput flag sets
 * the table's figure and drops the index's own, so the index takes it too;
 * EL_TS_TAG adds a tag or replaces the value of one with the same key.
 * EL_EUSAGE (diag names the flag and says what it takes) for a bad value;
 * EL_ENOMEM.
 */
el_err el_table_settings_set(el_table_settings *s, el_ts_field f, const char *text,
                             el_diag *diag) EL_MUST_USE;

/*
 * Reads the mapping's "create_table" object into s (which the caller made
 * with el_table_settings_new). EL_EUSAGE naming the key
 * ("create_table.warm_throughput.write ...") for an unknown key or a value of
 * the wrong kind; EL_ENOMEM.
 */
el_err el_table_settings_from_json(el_table_settings *s, yajl_val obj,
                                   el_diag *diag) EL_MUST_USE;

/*
 * Every setting given in over replaces into's: a throughput figure replaces
 * the table's and the index's own; tags are added, a key already in into
 * taking over's value. over may be NULL. EL_EUSAGE past EL_TS_MAX_TAGS tags;
 * EL_ENOMEM.
 */
el_err el_table_settings_merge(el_table_settings *into, const el_table_settings *over,
                               el_diag *diag) EL_MUST_USE;

/*
 * Refuses what DynamoDB refuses, with one line naming the settings as they
 * were given: write or read units without PROVISIONED, PROVISIONED without
 * both, a maximum (max units) with PROVISIONED, the file's "index" when
 * there is no index (has_index false). EL_EUSAGE; EL_OK otherwise.
 */
el_err el_table_settings_check(const el_table_settings *s, bool has_index,
                               el_diag *diag) EL_MUST_USE;

/* Copies s into o: billing mode, the table's throughput and the index's
 * (its own figure, else the table's), class, deletion protection, tags and
 * projection (when given). o borrows s's strings: s must outlive o's use. */
void el_table_settings_apply(const el_table_settings *s, el_create_table_opts *o);

#endif
