/*
 * estimate.h - what a job will take before anything is written: write
 * units by DynamoDB's rules, the time at the table's write limits, the
 * floor the hottest partition sets, and the size, object count and cost of
 * the Import-from-S3 path beside the API's.
 *
 * The rules (DynamoDB Developer Guide: "Read/write capacity mode", "Item
 * sizes and formats", "Global secondary indexes: provisioned throughput",
 * "Import from S3: quotas and pricing"):
 *  - a put costs one write unit per started KB of the item's size (the
 *    names and values of its attributes, as the transform sizes them), at
 *    least one;
 *  - an item that carries an index's keys is written to the index too, and
 *    costs units by the size of its index entry: the whole item when the
 *    index projects ALL (INCLUDE is taken as ALL: an upper bound), its
 *    table and index keys when it projects KEYS_ONLY;
 *  - the table and each index have their own write limit (an on-demand
 *    table's default is 40,000 units a second, EL_DDB_DEFAULT_TABLE_WCU);
 *  - one partition key takes at most 1,000 units a second
 *    (EL_DDB_PARTITION_WCU), in the table and in each index, so the key
 *    with the most units sets a floor however high the limits; a sharded
 *    hot target spreads its index units over its shards (taken as even:
 *    the FNV-1a spread of its sort keys is within a few per cent of it);
 *  - Import from S3 bills the uncompressed bytes of its source objects,
 *    writes no units (indexes included) and reads at most 50,000 objects
 *    (EL_IMPORT_MAX_OBJECTS); `--output` writes each key once, the last
 *    row winning, in parts of EL_FILE_SINK_PART_ITEMS items or
 *    EL_FILE_SINK_PART_BYTES bytes.
 *
 * Everything here is plain data and pure functions of it (the hottest
 * partition reads counters, pipeline/sharding/shard_plan.h); `edgeload plan` gathers the
 * figures row by row and prints them. Costs are in USD at prices the user
 * gives; without a price none is shown.
 */
#ifndef EL_ESTIMATE_H
#define EL_ESTIMATE_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "dynamo/ddb_client.h"   /* el_table_desc, el_ddb_limits */
#include "dynamo/ddb_limits.h"   /* units, partitions, warm throughput */
#include "pipeline/sharding/shard_plan.h"       /* el_key_counter: units per partition key */

/* Warm throughput is advised only for a load that would still be running
 * after its first minute at the rate the table takes at once. */
#define EL_WARM_ADVICE_MIN_S 60.0
#define EL_IMPORT_MAX_OBJECTS 50000u

/* Write units of a put of an item of `size` bytes: one per started KB, at
 * least one. */
uint64_t el_estimate_wcu(uint64_t size);

typedef enum el_projection {
    EL_PROJECT_ALL = 0,
    EL_PROJECT_KEYS_ONLY,
    EL_PROJECT_INCLUDE
} el_projection;

/* The projection DescribeTable names ("ALL", "KEYS_ONLY", "INCLUDE"); ALL
 * for anything else. */
el_projection el_projection_parse(const char *name);

/* Bytes of an item's entry in an index: item_size for ALL and INCLUDE,
 * key_size + index_key_size (the table's and the index's key attributes,
 * names and values) for KEYS_ONLY. */
uint64_t el_estimate_index_entry(el_projection p, uint64_t item_size, uint64_t key_size,
                                 uint64_t index_key_size);

/* Longest partition key kept for the report (longer ones are cut). */
#define EL_ESTIMATE_KEY_MAX 128

/* The partition key with the most units, after sharding. */
typedef struct el_hot_partition {
    char key[EL_ESTIMATE_KEY_MAX + 1]; /* "" when there is none */
    double wcu;                        /* its units (a sharded key's: per shard) */
    size_t shards;                     /* 1, or the shards it is spread over */
} el_hot_partition;

/* One source's writes (or the sum of several), gathered item by item. */
typedef struct el_estimate_writes {
    uint64_t rows;            /* rows read that became items */
    uint64_t item_bytes;      /* their DynamoDB sizes */
    uint64_t table_wcu;
    uint64_t index_writes;    /* items that carry the index's keys */
    uint64_t index_wcu;
    uint64_t line_bytes;      /* their {"Item":...} lines, as --output writes them */
    el_hot_partition hot_table, hot_index;
} el_estimate_writes;

/* One item: its size, the size of its index entry (0 when it writes no
 * index), the bytes of its JSON (without the line's 10). */
void el_estimate_add_item(el_estimate_writes *w, uint64_t item_size, uint64_t index_entry,
                          uint64_t json_len);

/* Adds from's figures to into's; the hotter partition of the two stays. */
void el_estimate_add(el_estimate_writes *into, const el_estimate_writes *from);

/*
 * The hottest partition of `units` (write units per partition key), after
 * sharding: a key the plan lists hot is spread over its shards and counts
 * units / shards. plan NULL: nothing is sharded (the table's partitions).
 * EL_ENOMEM.
 */
el_err el_estimate_hottest(const el_key_counter *units, const el_plan *plan,
                           el_hot_partition *out) EL_MUST_USE;

/* The write limits a load meets, and where they come from. */
typedef struct el_write_limits {
    double table_wcu;         /* units a second the table takes */
    double index_wcu;         /* and its index */
    el_projection projection; /* the index's, for its entries' size */
    char basis[160];          /* how they were found, for the report */
    bool described;           /* the table exists and said so (DescribeTable) */
    double warm_table_wcu;    /* write units a second it takes at once: its
                                 WarmThroughput, else a new on-demand table's
                                 EL_DDB_NEW_TABLE_WARM_WCU */
    double warm_index_wcu;    /* and its index's */
} el_write_limits;

/* The limits as the table describes itself: a provisioned table's write
 * capacity (and its index's); an on-demand table's maximum throughput when
 * set, else the account's per-table maximum (limits from DescribeLimits;
 * NULL or 0: EL_DDB_DEFAULT_TABLE_WCU). index_name: the mapping's index
 * (its projection and limit; the table's when it has no index of that
 * name). table_wcu_flag > 0 (--table-wcu) overrides both. The warm
 * throughput is the table's (and index's) WarmThroughput, a new table's
 * when DescribeTable reports none. */
void el_estimate_limits(const el_table_desc *t, const el_ddb_limits *limits,
                        const char *index_name, double table_wcu_flag, el_write_limits *out);

/* The limits when the table was not asked: table_wcu_flag (> 0) or
 * EL_DDB_DEFAULT_TABLE_WCU for both, projection ALL. */
void el_estimate_default_limits(double table_wcu_flag, el_write_limits *out);

/* How long the writes take at least. */
typedef struct el_estimate_time {
    double table_s, index_s;  /* units / limit */
    double at_limit_s;        /* the longer of the two */
    double floor_s;           /* the hottest partition's units / 1,000 a second */
    double least_s;           /* the longer of at_limit_s and floor_s */
} el_estimate_time;

void el_estimate_time_of(const el_estimate_writes *w, const el_write_limits *l,
                         el_estimate_time *out);

/*
 * The warm throughput that lets the load run at the table's limit from its
 * first minute: the write units a second it can use, in the table and in
 * the index (its units over its least time, at most the limit; whole
 * units), against what the table takes at once (l's warm figures).
 * needed when either is more than that and the load would run past
 * EL_WARM_ADVICE_MIN_S at what the table takes at once.
 */
typedef struct el_warm_advice {
    double table_wcu, index_wcu; /* what the load can use, units a second */
    double cold_s;               /* how long the writes take at the warm figures */
    bool needed;
} el_warm_advice;

void el_estimate_warm(const el_estimate_writes *w, const el_write_limits *l,
                      el_warm_advice *out);

/* Parts as the --output sink cuts them (el_file_sink_part_full). */
typedef struct el_part_count {
    uint64_t max_items, max_bytes;
    uint64_t parts;
    uint64_t items, bytes;    /* in the last part so far */
} el_part_count;

/* max_items/max_bytes 0: the sink's defaults. */
void el_part_count_init(el_part_count *c, uint64_t max_items, uint64_t max_bytes);
void el_part_count_add(el_part_count *c, uint64_t json_len);

/* What the Import-from-S3 path takes. */
typedef struct el_import_estimate {
    uint64_t items;           /* each key once */
    uint64_t bytes;           /* their lines, uncompressed: the billing basis */
    uint64_t objects;         /* parts (at most: taking duplicates out may empty some) */
    uint64_t part_items, part_bytes;
} el_import_estimate;

/* The cost of each path in USD: the API's at price_wru per million write
 * request units (table and index units), the import's at price_gb per GiB
 * of uncompressed source. A price <= 0: not known, -1 returned. */
double el_estimate_api_usd(const el_estimate_writes *w, double price_wru);
double el_estimate_import_usd(const el_import_estimate *imp, double price_gb);

/* A named source's figures, for el_estimate_json. */
typedef struct el_estimate_named {
    const char *name;
    const el_estimate_writes *w;
} el_estimate_named;

/*
 * Appends the estimate as one JSON object (what `plan --plan-out` writes
 * under "estimate"; `load --plan` does not read it): the limits, each
 * source's and the total's units, times and hottest partitions, the warm
 * throughput the total can use (el_estimate_warm), the import, and the
 * costs when prices are given (<= 0: null). EL_ENOMEM/EL_ELIMIT.
 */
el_err el_estimate_json(el_buf *out, const el_write_limits *l, const el_estimate_named *src,
                        size_t nsrc, const el_estimate_writes *total,
                        const el_import_estimate *imp, double price_wru,
                        double price_gb) EL_MUST_USE;

#endif
