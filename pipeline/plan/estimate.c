/*
 * estimate.c - DynamoDB's write arithmetic, summed.
 *
 * DESIGN: every figure is a sum over items of what DynamoDB charges for
 * that item (estimate.h has the rules), so the estimate is exact for the
 * items as the transform makes them, not an average size times a row
 * count: one item of 1,025 bytes costs what two of 600 do. The hottest
 * partition is found from the per-key unit counters `plan` keeps (the same
 * counters as the fan-in, pipeline/sharding/shard_plan.h) without listing every key: the
 * sharded keys are the hot ones, looked up one by one, and the hottest
 * unsharded key is the first of the top list that is not hot. The only
 * guess is within a sharded key, whose units are taken as spread evenly
 * over its shards.
 */
#include "pipeline/plan/estimate.h"

#include <inttypes.h>  /* PRIu64 */
#include <math.h>      /* isfinite, ceil */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strcmp, memcpy */

#include "formats/ddb_value.h"     /* el_json_put_string */
#include "pipeline/output/file_sink.h"    /* the part rule and sizes */

uint64_t el_estimate_wcu(uint64_t size)
{
    uint64_t units = (size + EL_DDB_WCU_BYTES - 1) / EL_DDB_WCU_BYTES;
    return units ? units : 1;
}

el_projection el_projection_parse(const char *name)
{
    if (name && strcmp(name, "KEYS_ONLY") == 0)
        return EL_PROJECT_KEYS_ONLY;
    if (name && strcmp(name, "INCLUDE") == 0)
        return EL_PROJECT_INCLUDE;
    return EL_PROJECT_ALL;
}

uint64_t el_estimate_index_entry(el_projection p, uint64_t item_size, uint64_t key_size,
                                 uint64_t index_key_size)
{
    return p == EL_PROJECT_KEYS_ONLY ? key_size + index_key_size : item_size;
}

void el_estimate_add_item(el_estimate_writes *w, uint64_t item_size, uint64_t index_entry,
                          uint64_t json_len)
{
    w->rows++;
    w->item_bytes += item_size;
    w->table_wcu += el_estimate_wcu(item_size);
    if (index_entry) {
        w->index_writes++;
        w->index_wcu += el_estimate_wcu(index_entry);
    }
    w->line_bytes += json_len + EL_FILE_SINK_LINE_OVERHEAD;
}

static void hotter(el_hot_partition *into, const el_hot_partition *from)
{
    if (from->key[0] && (!into->key[0] || from->wcu > into->wcu))
        *into = *from;
}

void el_estimate_add(el_estimate_writes *into, const el_estimate_writes *from)
{
    into->rows += from->rows;
    into->item_bytes += from->item_bytes;
    into->table_wcu += from->table_wcu;
    into->index_writes += from->index_writes;
    into->index_wcu += from->index_wcu;
    into->line_bytes += from->line_bytes;
    hotter(&into->hot_table, &from->hot_table);
    hotter(&into->hot_index, &from->hot_index);
}

static void set_hot(el_hot_partition *h, const char *key, size_t len, double wcu, size_t shards)
{
    size_t n = len < EL_ESTIMATE_KEY_MAX ? len : EL_ESTIMATE_KEY_MAX;
    memcpy(h->key, key, n);
    h->key[n] = '\0';
    h->wcu = wcu;
    h->shards = shards;
}

el_err el_estimate_hottest(const el_key_counter *units, const el_plan *plan,
                           el_hot_partition *out)
{
    memset(out, 0, sizeof *out);
    size_t nhot = plan ? el_plan_nhot(plan) : 0;
    for (size_t i = 0; i < nhot; i++) {
        const el_plan_hot *h = el_plan_get_hot(plan, i);
        uint64_t units_of = el_key_counter_get(units, h->key, h->len);
        double u = (double)units_of / (double)h->shards;
        if (units_of > 0 && (!out->key[0] || u > out->wcu)) /* another source's key: not here */
            set_hot(out, h->key, h->len, u, h->shards);
    }
    /* the hottest key that is not sharded: among the nhot + 1 with the most
     * units, the first not sharded */
    el_key_count *top = calloc(nhot + 1, sizeof *top);
    if (!top)
        return EL_ENOMEM;
    size_t ntop = el_key_counter_top(units, nhot + 1, top);
    for (size_t i = 0; i < ntop; i++) {
        if (plan && el_plan_lookup(plan, top[i].key, top[i].len))
            continue;
        if (!out->key[0] || (double)top[i].count > out->wcu)
            set_hot(out, top[i].key, top[i].len, (double)top[i].count, 1);
        break;
    }
    free(top);
    return EL_OK;
}

void el_estimate_default_limits(double table_wcu_flag, el_write_limits *out)
{
    memset(out, 0, sizeof *out);
    double v = table_wcu_flag > 0 ? table_wcu_flag : EL_DDB_DEFAULT_TABLE_WCU;
    out->table_wcu = out->index_wcu = v;
    out->projection = EL_PROJECT_ALL;
    out->warm_table_wcu = out->warm_index_wcu = EL_DDB_NEW_TABLE_WARM_WCU;
    snprintf(out->basis, sizeof out->basis, "%s",
             table_wcu_flag > 0 ? "--table-wcu"
                                : "the default of an on-demand table; the table itself was "
                                  "not asked (--endpoint-url), no --table-wcu N");
}

void el_estimate_limits(const el_table_desc *t, const el_ddb_limits *limits,
                        const char *index_name, double table_wcu_flag, el_write_limits *out)
{
    memset(out, 0, sizeof *out);
    double table_max = limits && limits->table_max_wcu > 0 ? limits->table_max_wcu
                                                            : EL_DDB_DEFAULT_TABLE_WCU;
    const char *max_from = limits && limits->table_max_wcu > 0
                               ? "DescribeLimits' per-table maximum"
                               : "the default per-table maximum";
    bool provisioned = strcmp(t->billing_mode, "PROVISIONED") == 0;
    const char *table_from;
    if (provisioned && t->write_units > 0) {
        out->table_wcu = t->write_units;
        table_from = "its provisioned write capacity";
    } else if (t->max_write_units > 0) {
        out->table_wcu = t->max_write_units;
        table_from = "its on-demand maximum";
    } else {
        out->table_wcu = table_max;
        table_from = max_from;
    }
    out->index_wcu = out->table_wcu;
    out->projection = EL_PROJECT_ALL;
    out->described = true;
    out->warm_table_wcu = t->warm.write_units > 0 ? t->warm.write_units
                                                   : EL_DDB_NEW_TABLE_WARM_WCU;
    out->warm_index_wcu = out->warm_table_wcu;
    for (size_t i = 0; index_name && i < t->ngsi; i++) {
        if (strcmp(t->gsi[i].name, index_name) != 0)
            continue;
        out->projection = el_projection_parse(t->gsi[i].projection);
        out->warm_index_wcu = t->gsi[i].warm.write_units > 0 ? t->gsi[i].warm.write_units
                                                              : EL_DDB_NEW_TABLE_WARM_WCU;
        if (provisioned && t->gsi[i].write_units > 0)
            out->index_wcu = t->gsi[i].write_units;
        else if (t->gsi[i].max_write_units > 0)
            out->index_wcu = t->gsi[i].max_write_units;
        else if (!provisioned)
            out->index_wcu = table_max;
    }
    if (table_wcu_flag > 0) {
        out->table_wcu = out->index_wcu = table_wcu_flag;
        table_from = "--table-wcu";
    }
    snprintf(out->basis, sizeof out->basis, "DescribeTable (%s, %s), %s",
             provisioned ? "provisioned" : "on-demand",
             out->projection == EL_PROJECT_KEYS_ONLY ? "index KEYS_ONLY"
             : out->projection == EL_PROJECT_INCLUDE ? "index INCLUDE, sized as ALL"
                                                     : "index ALL",
             table_from);
}

void el_estimate_time_of(const el_estimate_writes *w, const el_write_limits *l,
                         el_estimate_time *out)
{
    out->table_s = l->table_wcu > 0 ? (double)w->table_wcu / l->table_wcu : 0;
    out->index_s = l->index_wcu > 0 ? (double)w->index_wcu / l->index_wcu : 0;
    out->at_limit_s = out->table_s > out->index_s ? out->table_s : out->index_s;
    double hot = w->hot_table.wcu > w->hot_index.wcu ? w->hot_table.wcu : w->hot_index.wcu;
    out->floor_s = hot / EL_DDB_PARTITION_WCU;
    out->least_s = out->at_limit_s > out->floor_s ? out->at_limit_s : out->floor_s;
}

/* The write units a second the load can use: units over its least time,
 * at most limit, whole. */
static double usable_rate(uint64_t units, double least_s, double limit)
{
    if (units == 0 || !(least_s > 0))
        return 0;
    double r = (double)units / least_s;
    return ceil(r < limit ? r : limit);
}

void el_estimate_warm(const el_estimate_writes *w, const el_write_limits *l,
                      el_warm_advice *out)
{
    el_estimate_time t;
    el_estimate_time_of(w, l, &t);
    out->table_wcu = usable_rate(w->table_wcu, t.least_s, l->table_wcu);
    out->index_wcu = usable_rate(w->index_wcu, t.least_s, l->index_wcu);
    /* at the warm figures the writes take the longer of table and index,
     * and never less than the hottest partition's floor */
    double ct = l->warm_table_wcu > 0 ? (double)w->table_wcu / l->warm_table_wcu : 0;
    double ci = l->warm_index_wcu > 0 ? (double)w->index_wcu / l->warm_index_wcu : 0;
    out->cold_s = ct > ci ? ct : ci;
    if (out->cold_s < t.floor_s)
        out->cold_s = t.floor_s;
    out->needed = (out->table_wcu > l->warm_table_wcu || out->index_wcu > l->warm_index_wcu) &&
                  out->cold_s > EL_WARM_ADVICE_MIN_S;
}

void el_part_count_init(el_part_count *c, uint64_t max_items, uint64_t max_bytes)
{
    memset(c, 0, sizeof *c);
    c->max_items = max_items ? max_items : EL_FILE_SINK_PART_ITEMS;
    c->max_bytes = max_bytes ? max_bytes : EL_FILE_SINK_PART_BYTES;
}

void el_part_count_add(el_part_count *c, uint64_t json_len)
{
    uint64_t line = json_len + EL_FILE_SINK_LINE_OVERHEAD;
    if (c->parts == 0 ||
        el_file_sink_part_full(c->items, c->bytes, line, c->max_items, c->max_bytes)) {
        c->parts++;
        c->items = c->bytes = 0;
    }
    c->items++;
    c->bytes += line;
}

double el_estimate_api_usd(const el_estimate_writes *w, double price_wru)
{
    if (!(price_wru > 0))
        return -1;
    return (double)(w->table_wcu + w->index_wcu) / 1e6 * price_wru;
}

double el_estimate_import_usd(const el_import_estimate *imp, double price_gb)
{
    if (!(price_gb > 0))
        return -1;
    return (double)imp->bytes / (double)(UINT64_C(1) << 30) * price_gb;
}

/* ---- JSON ---- */

static el_err put_double(el_buf *b, const char *name, double v, bool comma)
{
    if (!isfinite(v) || v < 0)
        return el_buf_printf(b, "%s\"%s\":null", comma ? "," : "", name);
    return el_buf_printf(b, "%s\"%s\":%.9g", comma ? "," : "", name, v);
}

static el_err put_hot(el_buf *b, const char *name, const el_hot_partition *h)
{
    el_err err = el_buf_printf(b, ",\"%s\":", name);
    if (!err && !h->key[0])
        return el_buf_puts(b, "null");
    if (!err)
        err = el_buf_puts(b, "{\"key\":");
    if (!err)
        err = el_json_put_string(b, h->key, strlen(h->key));
    if (!err)
        err = put_double(b, "wcu", h->wcu, true);
    if (!err)
        err = el_buf_printf(b, ",\"shards\":%zu}", h->shards);
    return err;
}

static el_err put_writes(el_buf *b, const el_estimate_writes *w, const el_write_limits *l,
                         double price_wru)
{
    el_estimate_time t;
    el_estimate_time_of(w, l, &t);
    el_err err = el_buf_printf(b, "\"items\":%" PRIu64 ",\"item_bytes\":%" PRIu64
                               ",\"table_wcu\":%" PRIu64 ",\"index_writes\":%" PRIu64
                               ",\"index_wcu\":%" PRIu64 ",\"wcu\":%" PRIu64,
                               w->rows, w->item_bytes, w->table_wcu, w->index_writes,
                               w->index_wcu, w->table_wcu + w->index_wcu);
    if (!err)
        err = put_double(b, "seconds_at_limit", t.at_limit_s, true);
    if (!err)
        err = put_hot(b, "hottest_table_partition", &w->hot_table);
    if (!err)
        err = put_hot(b, "hottest_index_partition", &w->hot_index);
    if (!err)
        err = put_double(b, "floor_seconds", t.floor_s, true);
    if (!err)
        err = put_double(b, "least_seconds", t.least_s, true);
    if (!err)
        err = put_double(b, "api_usd", el_estimate_api_usd(w, price_wru), true);
    return err;
}

el_err el_estimate_json(el_buf *out, const el_write_limits *l, const el_estimate_named *src,
                        size_t nsrc, const el_estimate_writes *total,
                        const el_import_estimate *imp, double price_wru, double price_gb)
{
    el_err err = el_buf_puts(out, "{\"limits\":{");
    if (!err)
        err = put_double(out, "table_wcu", l->table_wcu, false);
    if (!err)
        err = put_double(out, "index_wcu", l->index_wcu, true);
    if (!err)
        err = el_buf_printf(out, ",\"partition_wcu\":%.0f,\"index_projection\":\"%s\","
                            "\"basis\":", EL_DDB_PARTITION_WCU,
                            l->projection == EL_PROJECT_KEYS_ONLY ? "KEYS_ONLY"
                            : l->projection == EL_PROJECT_INCLUDE ? "INCLUDE" : "ALL");
    if (!err)
        err = el_json_put_string(out, l->basis, strlen(l->basis));
    if (!err)
        err = el_buf_puts(out, "},\"sources\":[");
    for (size_t i = 0; !err && i < nsrc; i++) {
        err = el_buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
        if (!err)
            err = el_json_put_string(out, src[i].name, strlen(src[i].name));
        if (!err)
            err = el_buf_putc(out, ',');
        if (!err)
            err = put_writes(out, src[i].w, l, price_wru);
        if (!err)
            err = el_buf_putc(out, '}');
    }
    if (!err)
        err = el_buf_puts(out, "],\"total\":{");
    if (!err)
        err = put_writes(out, total, l, price_wru);
    el_warm_advice warm;
    el_estimate_warm(total, l, &warm);
    if (!err)
        err = el_buf_puts(out, "},\"warm_throughput\":{");
    if (!err)
        err = put_double(out, "table_wcu", warm.table_wcu, false);
    if (!err)
        err = put_double(out, "index_wcu", warm.index_wcu, true);
    if (!err)
        err = put_double(out, "warm_table_wcu", l->warm_table_wcu, true);
    if (!err)
        err = put_double(out, "warm_index_wcu", l->warm_index_wcu, true);
    if (!err)
        err = put_double(out, "cold_seconds", warm.cold_s, true);
    if (!err)
        err = el_buf_printf(out, ",\"needed\":%s", warm.needed ? "true" : "false");
    if (!err)
        err = el_buf_printf(out, "},\"import\":{\"items\":%" PRIu64 ",\"bytes\":%" PRIu64
                            ",\"objects\":%" PRIu64 ",\"max_objects\":%u,\"part_items\":%"
                            PRIu64 ",\"part_bytes\":%" PRIu64, imp->items, imp->bytes,
                            imp->objects, EL_IMPORT_MAX_OBJECTS, imp->part_items,
                            imp->part_bytes);
    if (!err)
        err = put_double(out, "import_usd", el_estimate_import_usd(imp, price_gb), true);
    if (!err)
        err = el_buf_puts(out, "}}");
    return err;
}
