/*
 * mapping.h - what each input row becomes: the table, the index,
 * and per source the key templates and attributes.
 *
 * A mapping comes from a JSON file (el_mapping_load_file) or is assembled
 * from single-source command-line flags (el_mapping_new + el_source_new +
 * el_mapping_add_source). Either way el_mapping_check validates it before
 * anything is read, and el_source_bind ties a source to the columns of the
 * input actually opened.
 *
 * The struct is public data: cmd/ fills it from flags, the transform reads
 * it. Every string and template in it is owned by it; el_mapping_free
 * releases all.
 */
#ifndef EL_MAPPING_H
#define EL_MAPPING_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t hot_threshold */

#include "common/error.h"
#include "formats/reader.h"
#include "pipeline/rows/table_settings.h"
#include "pipeline/sharding/shard.h"  /* EL_DEFAULT_MAX_SHARDS, EL_MAX_MAX_SHARDS */
#include "pipeline/rows/template.h"

typedef enum el_attr_type {
    EL_TYPE_AUTO = 0, /* from the column type: N, BOOL, B or S */
    EL_TYPE_S,
    EL_TYPE_N,
    EL_TYPE_BOOL,
    EL_TYPE_B,
    EL_TYPE_NULL,     /* SQL NULL becomes {"NULL":true}; other values as auto */
    EL_TYPE_EPOCH,    /* timestamp/date text to integer epoch seconds (N) */
    EL_TYPE_JSON,     /* a JSON text as its structure: M, L, N, S, BOOL, NULL */
    EL_TYPE_SS,       /* a delimited text (a MySQL SET) as a string set */
    EL_TYPE_NS        /* a delimited text as a number set */
} el_attr_type;

/* The members' delimiter of SS and NS when the mapping gives none: MySQL
 * writes a SET value as "a,b,c". */
#define EL_SET_DELIMITER ','

typedef enum el_attr_kind {
    EL_ATTR_COLUMN,   /* {"column": c} */
    EL_ATTR_VALUE,    /* {"value": literal} */
    EL_ATTR_TEMPLATE  /* {"template": "..."} */
} el_attr_kind;

typedef struct el_attr_spec {
    char *name;            /* attribute name in the item */
    el_attr_kind kind;
    char *column;          /* EL_ATTR_COLUMN */
    char *value;           /* EL_ATTR_VALUE (NULL for a JSON null) */
    el_template *tpl;      /* EL_ATTR_TEMPLATE */
    el_attr_type type;
    char delimiter;        /* SS/NS: between members ("delimiter"), 0 = EL_SET_DELIMITER */
    size_t col;            /* bound column index (EL_ATTR_COLUMN) */
} el_attr_spec;

/* One counter a source's rows add to: the counter item's key
 * templates (bound to the input like the item's keys) and the number
 * attribute on it. A row whose counter pk or sk renders a NULL or empty
 * placeholder adds to no counter of that spec; it is not rejected for it
 * (the item itself is judged by its own keys). */
typedef struct el_counter_spec {
    el_template *pk, *sk;
    char *attribute;
} el_counter_spec;

typedef struct el_source {
    char *name;            /* for messages and the rejects file */
    char *input;           /* path (relative paths resolved by the loader), may be NULL */
    char *source_table;    /* SQL dumps: which table */
    el_format format;      /* EL_FMT_AUTO unless "format" says */
    char delimiter;        /* 0 = format default */
    char *null_string;     /* CSV --null */
    char escape;           /* CSV --escape ("escape"), 0 = none */
    char **columns;        /* CSV headerless column names, NULL = header row */
    size_t ncolumns;
    el_template *pk, *sk;
    el_template *index_pk, *index_sk; /* NULL = the inversion (rendered sk / pk) */
    bool index;            /* false: write no index attributes */
    bool all_attrs;        /* "attributes": "*" */
    el_attr_spec *attrs;
    size_t nattrs;
    const el_schema *bound; /* schema of the last bind, borrowed */
    /* Hot targets ("hot": {"threshold", "max_shards"}): an index
     * partition key whose fan-in reaches hot_threshold is sharded over up to
     * max_shards partitions. 0 = no hot sharding; max_shards defaults to
     * EL_DEFAULT_MAX_SHARDS when a threshold is given. */
    uint64_t hot_threshold;
    size_t max_shards;
    /* Counters ("counters": [{"pk", "sk", "attribute"}], or
     * --counter PK,SK,ATTRIBUTE): ncounters of them, owned. */
    el_counter_spec *counters;
    size_t ncounters;
} el_source;

/* A mapping file is refused beyond these (docs/LIMITS.md): its size, the
 * nesting of its JSON and the number of JSON values in it. */
#define EL_MAPPING_MAX_BYTES ((size_t)16 * 1024 * 1024)
#define EL_MAPPING_MAX_DEPTH 32
#define EL_MAPPING_MAX_VALUES 200000  /* a sanity bound: readers Query every shard */

typedef struct el_mapping {
    char *table;
    char *pk_attr, *sk_attr;          /* "PK", "SK" */
    char *index_name;                 /* "GSI1" */
    char *index_pk_attr, *index_sk_attr; /* "GSI1PK", "GSI1SK" */
    char *base_dir;                   /* directory of the mapping file, for relative inputs */
    el_source **sources;
    size_t nsources;
    el_table_settings *create_table;  /* the file's "create_table", for
                                         create-table (table_settings.h);
                                         NULL when it has none */
} el_mapping;

/* An empty mapping with the defaults (PK/SK, GSI1/GSI1PK/GSI1SK). */
el_err el_mapping_new(el_mapping **out) EL_MUST_USE;

/* Reads and validates a mapping file. EL_EUSAGE with diag naming the file,
 * the source and the key that is wrong. */
el_err el_mapping_load_file(const char *path, el_mapping **out, el_diag *diag) EL_MUST_USE;

/* Parses mapping JSON from memory (base_dir may be NULL). */
el_err el_mapping_parse(const char *json, size_t len, const char *base_dir,
                        el_mapping **out, el_diag *diag) EL_MUST_USE;

/* A source with index on and no attributes. Owned by the caller until added. */
el_err el_source_new(const char *name, el_source **out) EL_MUST_USE;
/* Takes ownership of src (even on failure). */
el_err el_mapping_add_source(el_mapping *m, el_source *src) EL_MUST_USE;
void el_source_free(el_source *src);

/* Adds an attribute; `text` is the column, literal or template per kind.
 * Parses templates. Errors name the attribute. */
el_err el_source_add_attr(el_source *src, const char *name, el_attr_kind kind,
                          const char *text, el_attr_type type, el_diag *diag) EL_MUST_USE;

/* Sets a key template (which: "pk", "sk", "index_pk", "index_sk"). */
el_err el_source_set_key(el_source *src, const char *which, const char *text,
                         el_diag *diag) EL_MUST_USE;

/* Adds a counter (templates parsed here, bound by el_source_bind).
 * EL_EUSAGE for a bad template or an empty attribute name. */
el_err el_source_add_counter(el_source *src, const char *pk, const char *sk,
                             const char *attribute, el_diag *diag) EL_MUST_USE;

/* True when any source of m has counters. */
bool el_mapping_has_counters(const el_mapping *m);

/* Parses "S", "N", "BOOL", "B", "NULL", "epoch", "json", "SS", "NS", "auto"
 * (any case). */
el_err el_attr_type_parse(const char *s, el_attr_type *out) EL_MUST_USE;
const char *el_attr_type_name(el_attr_type t);

/* Checks what can be checked before reading: a table, pk and sk on every
 * source, no attribute named like a key attribute, names unique, hot
 * settings only on a source with an index and max_shards in 2..65536,
 * counter attributes that are not key attributes, and the same hot
 * settings (or none) on every two sources whose index partition keys may
 * meet (el_template_may_equal): a hot key's edges from all its sources go
 * to the same shards. */
el_err el_mapping_check(const el_mapping *m, el_diag *diag) EL_MUST_USE;

/* Resolves every column reference of src against schema; unknown columns
 * are EL_EUSAGE listing the input's columns. */
el_err el_source_bind(el_source *src, const el_schema *schema, el_diag *diag) EL_MUST_USE;

/* The path of a source's "input": relative to the mapping file's directory
 * (absolute paths and "-" as they are). The caller frees it; NULL when out
 * of memory. */
char *el_mapping_input_path(const el_mapping *m, const char *input);

/* Reader options for an input of src: the source's own settings (mapping
 * "format", "delimiter", "null", "escape", "columns", "source_table") over base (the
 * command line's). Strings are borrowed from both. */
el_reader_opts el_source_reader_opts(const el_source *src, const el_reader_opts *base);

void el_mapping_free(el_mapping *m);

#endif
