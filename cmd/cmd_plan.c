/*
 * cmd_plan.c - `edgeload plan`: the counting pass (pipeline/plan/plan_count.h:
 * every row transformed as load makes its item, the fan-in of every
 * unsharded index partition key counted, the job estimated), then the
 * report, the shard plan with the estimate (--plan-out) and the figures.
 *
 * Nothing is sent to AWS unless --endpoint-url is given: then the table's
 * own write limits are asked (DescribeTable, DescribeLimits).
 */
#include <inttypes.h>  /* PRIu64 */
#include <math.h>      /* ceil, log10: how many decimals a small cost needs */
#include <stdio.h>     /* printf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strcmp */

#include "cmd/cli.h"
#include "cmd/knobs.h"
#include "cmd/mapping_opts.h"
#include "cmd/print_stats.h"
#include "cmd/progress.h"
#include "cmd/runner.h"
#include "cmd/s3_cli.h"
#include "common/buf.h"
#include "pipeline/plan/estimate.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/sharding/shard_plan.h"
#include "pipeline/plan/plan_count.h"
#include "pipeline/sharding/shard.h"

enum { O_PLAN_OUT = OPT_OWN, O_TOP, O_TABLE_WCU, O_PRICE_WRU, O_PRICE_IMPORT_GB };

static const cli_opt own_opts[] = {
    { "plan-out", true, O_PLAN_OUT },
    { "top", true, O_TOP },
    { "table-wcu", true, O_TABLE_WCU },
    { "price-wru", true, O_PRICE_WRU },
    { "price-import-gb", true, O_PRICE_IMPORT_GB },
    { NULL, false, 0 }
};

#define DEFAULT_TOP 20
#define MAX_REJECT_WARNINGS 10

typedef struct plan_args {
    const char *plan_out;
    long top;
    double table_wcu;          /* --table-wcu: 0 = the table's, else the default */
    double price_wru;          /* USD per million write request units; 0: none */
    double price_import_gb;    /* USD per GiB of import source; 0: none */
} plan_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    plan_args *a = ctx;
    switch (id) {
    case O_PLAN_OUT: a->plan_out = arg; return 0;
    case O_TABLE_WCU: return cli_parse_double("table-wcu", arg, 1, &a->table_wcu) ? 0 : EXIT_USAGE;
    case O_PRICE_WRU: return cli_parse_double("price-wru", arg, 0, &a->price_wru) ? 0 : EXIT_USAGE;
    case O_PRICE_IMPORT_GB:
        return cli_parse_double("price-import-gb", arg, 0, &a->price_import_gb) ? 0 : EXIT_USAGE;
    case O_TOP:
        if (!cli_parse_long("top", arg, 0, &a->top))
            return EXIT_USAGE;
        if (a->top > 100000) {
            cli_error("--top must be at most 100000, not %ld", a->top);
            return EXIT_USAGE;
        }
        return 0;
    }
    return EXIT_FATAL;
}

static const char reads_only[] = "plan only reads its inputs; it writes nothing to DynamoDB";

static const cmd_refusal refuse[] = {
    { OPT_PLAN, "plan makes the plan: write it with --plan-out FILE" },
    { OPT_DRY_RUN, reads_only },
    { OPT_OUTPUT, reads_only },
    { OPT_CONCURRENCY, reads_only },
    { OPT_MAX_RETRY_TIME, reads_only },
    { OPT_MAX_WCU, reads_only },
    { OPT_MAX_RCU, reads_only },
    { OPT_CHECKPOINT, "plan writes nothing to resume: run it again" },
    { OPT_RESUME, "plan writes nothing to resume: run it again" },
    { OPT_CHECKPOINT_INTERVAL, "it takes no --checkpoint" },
    { OPT_REJECTS, "rows load would reject are counted and reported, not written to a file" },
    { OPT_MAX_REJECTS, "rows load would reject are counted, never a reason to stop" },
    { OPT_THREADS, "plan reads its inputs on one thread" },
    { OPT_SPLIT, "a plan must count every row of the whole input, once" },
    { 0, NULL }
};

#define STR_(x) #x
#define STR(x) STR_(x)

static const cmd_spec spec = {
    .name = "plan",
    .usage = "--mapping FILE [OPTIONS] [INPUT...]",
    .about =
"Reads every input of every source, writes nothing, and reports:\n"
"\n"
"  fan-in: exactly, the fan-in of each unsharded index partition key (the\n"
"  rendered index_pk; default the rendered sk, e.g. TARGET#bob) over every\n"
"  source that writes it, since all their edges to a hot key go to its\n"
"  shards: when several sources write the index, per index key (with each\n"
"  source's rows), then for each source: rows, distinct sources and targets,\n"
"  a log-scale histogram and the top targets with the shard count each gets\n"
"  (a key whose fan-in reaches the threshold gets N = min(max_shards,\n"
"  ceil(fan_in / threshold)) shards, at least 2);\n"
"\n"
"  the estimate, for each source and in total, from every item as load makes\n"
"  it: write units by DynamoDB's rules (one per started KB of the item's\n"
"  attribute names and values, at least one, in the table and again in the\n"
"  index for an item with the index keys, by the size of its index entry);\n"
"  the time at the table's write limits (an on-demand table's default is\n"
"  40,000 units a second; --table-wcu N, or with --endpoint-url the table's\n"
"  own, from DescribeTable and DescribeLimits); the floor the hottest\n"
"  partition sets after sharding (1,000 units a second a partition key, in\n"
"  the table and in the index); and the Import-from-S3 path that --output\n"
"  prepares: each key once, its uncompressed bytes (what an import bills)\n"
"  and its objects against the import's limit of 50,000, in parts of\n"
"  4,000,000 items or 1 GiB. With prices, the cost of each path.\n"
"\n"
"INPUTs override the mapping's \"input\" (one per source, in order).",
    .takes = (OPTS_MAPPING & ~OPT_BIT(OPT_PLAN)) | OPTS_INPUT | OPT_BIT(OPT_ENDPOINT_URL) |
             OPT_BIT(OPT_REGION) | OPT_BIT(OPT_PROFILE) | OPT_BIT(OPT_NO_VERIFY_SSL) |
             OPTS_REPORTS,
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Plan:\n"
"  --plan-out FILE          write the plan as JSON (atomically), for load --plan:\n"
"                           each hot key once, its fan-in and shards, and the\n"
"                           rows of each source; the estimate under \"estimate\"\n"
"                           (load ignores it)\n"
"  --top N                  targets listed in the report (default " STR(DEFAULT_TOP) ")\n"
"  --table-wcu N            the table's write limit in units a second (and its\n"
"                           index's), instead of the default or the table's own\n"
"  --price-wru USD          the price of a million write request units: the\n"
"                           API path's cost (table and index writes)\n"
"  --price-import-gb USD    the price of a GiB of import source (uncompressed):\n"
"                           the Import-from-S3 path's cost\n"
"  (--max-shards is 2.." STR(EL_MAX_MAX_SHARDS) "; --endpoint-url, --region and --profile ask the\n"
"  table's limits (optional; only with --endpoint-url) and read s3:// inputs)\n",
    .epilogue =
"Exit status: 0 counted, 3 counted with rows load would reject, 2 usage or\n"
"mapping error, 1 an input or the plan file could not be read or written.\n",
    .inputs = true,
    .own_opt = own_opt,
};

/* What the report and the figures are made of. */
typedef struct plan_run {
    el_mapping *m;
    const char *mapping_path;  /* --mapping FILE, NULL for a mapping of flags */
    el_plan_count *count;
    el_write_limits limits;
    uint64_t warnings;         /* rows not counted, shown up to MAX_REJECT_WARNINGS */
} plan_run;

/* A row load would reject: named on stderr (the first ones), an
 * el_reject_fn. */
static void warn_reject(const char *path, const el_diag *d, void *user)
{
    plan_run *r = user;
    if (r->warnings++ >= MAX_REJECT_WARNINGS)
        return;
    char place[CMD_ROW_PLACE_BYTES];
    cli_warn("%s: row not counted: %s", cmd_row_place(place, sizeof place, path, d), d->msg);
}

/* The hot keys of plan source ps: how many, their rows in it, the index
 * partitions they take. */
static void source_hot(const el_plan *plan, size_t ps, size_t *nhot, uint64_t *rows,
                       uint64_t *parts)
{
    *nhot = 0;
    *rows = *parts = 0;
    for (size_t h = 0; h < el_plan_nhot(plan); h++) {
        const el_plan_hot *hot = el_plan_get_hot(plan, h);
        for (size_t k = 0; k < hot->nshares; k++) {
            if (hot->shares[k].source != ps)
                continue;
            (*nhot)++;
            *rows += hot->shares[k].count;
            *parts += hot->shards;
        }
    }
}

static void print_histogram(const el_key_counter *targets)
{
    uint64_t hist[EL_KEY_HIST_BUCKETS];
    el_key_counter_histogram(targets, hist);
    int last = -1;
    for (int b = 0; b < EL_KEY_HIST_BUCKETS; b++)
        if (hist[b])
            last = b;
    if (last < 0)
        return;
    printf("  fan-in histogram:\n    %-25s %12s\n", "fan-in", "targets");
    for (int b = 0; b <= last; b++) {
        char label[48];
        uint64_t lo = (uint64_t)1 << b;
        uint64_t hi = b == 63 ? UINT64_MAX : (lo << 1) - 1;
        if (lo == hi)
            snprintf(label, sizeof label, "%" PRIu64, lo);
        else
            snprintf(label, sizeof label, "%" PRIu64 "-%" PRIu64, lo, hi);
        printf("    %-25s %12" PRIu64 "\n", label, hist[b]);
    }
}

/* The index keys over every source that writes the index (when several
 * do): a key's fan-in is theirs together, and so are its shards. */
static void print_index_keys(const plan_run *r, const el_plan *plan, size_t top_n,
                             el_key_count *top)
{
    const el_mapping *m = r->m;
    const el_key_counter *all = el_plan_count_targets(r->count);
    printf("index %s: fan-in of each index partition key over the %zu sources that write "
           "the index\n", m->index_name, el_plan_nsources(plan));
    printf("  distinct targets:  %zu (index partition keys)\n", el_key_counter_distinct(all));
    uint64_t hot_rows = 0, parts = 0;
    for (size_t h = 0; h < el_plan_nhot(plan); h++) {
        hot_rows += el_plan_get_hot(plan, h)->fan_in;
        parts += el_plan_get_hot(plan, h)->shards;
    }
    printf("  hot targets:       %zu: %" PRIu64 " rows over %" PRIu64 " index partitions\n",
           el_plan_nhot(plan), hot_rows, parts);
    print_histogram(all);
    size_t n = el_key_counter_top(all, top_n, top);
    if (n == 0) {
        printf("\n");
        return;
    }
    printf("  top %zu targets by fan-in:\n    %4s %12s %6s  %s  (rows of each source)\n", n,
           "rank", "fan-in", "shards", "target");
    for (size_t j = 0; j < n; j++) {
        printf("    %4zu %12" PRIu64 " %6zu  %.*s", j + 1, top[j].count,
               el_plan_shards(plan, top[j].key, top[j].len), (int)top[j].len, top[j].key);
        const char *sep = " (";
        for (size_t i = 0; i < m->nsources; i++) {
            const el_plan_source_count *sc = el_plan_count_source(r->count, i);
            uint64_t c = sc->src->index ? el_key_counter_get(sc->targets, top[j].key,
                                                              top[j].len) : 0;
            if (c == 0)
                continue;
            printf("%s%s %" PRIu64, sep, sc->src->name, c);
            sep = ", ";
        }
        printf(")\n");
    }
    printf("\n");
}

static void print_source(const plan_run *r, const el_plan *plan, size_t i, bool several,
                         size_t top_n, el_key_count *top)
{
    const el_mapping *m = r->m;
    const el_plan_source_count *sc = el_plan_count_source(r->count, i);
    const el_source *s = sc->src;
    if (!s->index) {
        printf("source '%s': writes no index, no fan-in to count (%" PRIu64 " items, %"
               PRIu64 " rejected)\n\n", s->name, sc->est.rows, sc->rejected);
        return;
    }
    printf("source '%s' (index %s: %s = %s%s, %s = %s%s)\n", s->name, m->index_name,
           m->index_pk_attr, el_template_text(s->index_pk ? s->index_pk : s->sk),
           s->index_pk ? "" : " (the sk)", m->index_sk_attr,
           el_template_text(s->index_sk ? s->index_sk : s->pk), s->index_sk ? "" : " (the pk)");
    printf("  rows:              %" PRIu64 " counted, %" PRIu64 " rejected, %zu input%s\n",
           sc->rows, sc->rejected, sc->ninputs, sc->ninputs == 1 ? "" : "s");
    printf("  distinct sources:  %zu (index sort keys)\n", el_key_counter_distinct(sc->sources));
    printf("  distinct targets:  %zu (index partition keys)\n",
           el_key_counter_distinct(sc->targets));
    size_t tmem = el_key_counter_memory(sc->targets);
    size_t smem = el_key_counter_memory(sc->sources);
    size_t nt = el_key_counter_distinct(sc->targets);
    printf("  counting memory:   %.1f MB (targets %.1f MB%s", (double)(tmem + smem) / 1e6,
           (double)tmem / 1e6, nt ? ", " : "");
    if (nt)
        printf("%.1f bytes/target", (double)tmem / (double)nt);
    printf(")\n");
    /* hot targets and the partitions they take: the plan's, whose fan-in
     * is every source's */
    size_t nhot;
    uint64_t hot_rows, parts;
    source_hot(plan, el_plan_find_source(plan, s->name), &nhot, &hot_rows, &parts);
    if (s->hot_threshold)
        printf("  hot targets:       %zu at fan-in >= %" PRIu64 "%s (max shards %zu): %" PRIu64
               " rows of this source over %" PRIu64 " index partitions\n", nhot,
               s->hot_threshold, several ? " over every source" : "", s->max_shards, hot_rows,
               parts);
    else
        printf("  hot targets:       none (no hot threshold: --hot-threshold N or "
               "\"hot\" in the mapping)\n");
    print_histogram(sc->targets);
    size_t nt_top = el_key_counter_top(sc->targets, top_n, top);
    if (nt_top == 0) {
        printf("\n");
        return;
    }
    const el_key_counter *all = el_plan_count_targets(r->count);
    printf("  top %zu targets by fan-in:\n    %4s %12s%s %6s  %s\n", nt_top, "rank", "fan-in",
           several ? "  all sources" : "", "shards", "target");
    for (size_t j = 0; j < nt_top; j++) {
        printf("    %4zu %12" PRIu64, j + 1, top[j].count);
        if (several)
            printf(" %12" PRIu64, el_key_counter_get(all, top[j].key, top[j].len));
        printf(" %6zu  %.*s\n", el_plan_shards(plan, top[j].key, top[j].len), (int)top[j].len,
               top[j].key);
    }
    printf("\n");
}

/* Per index partition key first (what decides the shards) when several
 * sources write the index, then per source. */
static void print_report(const plan_run *r, size_t top_n, el_key_count *top)
{
    const el_plan *plan = el_plan_count_plan(r->count);
    bool several = el_plan_nsources(plan) > 1;
    if (several)
        print_index_keys(r, plan, top_n, top);
    for (size_t i = 0; i < r->m->nsources; i++)
        print_source(r, plan, i, several, top_n, top);
}

/* ---- the estimate ---- */

/* "0.3 ms", "2.5 s", "3m20s", "1h02m", "2d03h". */
static void duration(char *out, size_t cap, double s)
{
    if (s < 1)
        snprintf(out, cap, "%.1f ms", s * 1000);
    else if (s < 60)
        snprintf(out, cap, "%.1f s", s);
    else if (s < 3600)
        snprintf(out, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else if (s < 86400 * 2)
        snprintf(out, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else
        snprintf(out, cap, "%dd%02dh", (int)(s / 86400), (int)(s / 3600) % 24);
}

/* "512 B", "3.4 KiB", "1.2 MiB", "7.5 GiB". */
static void byte_size(char *out, size_t cap, uint64_t b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* "$12.34", or two significant digits below a cent: "$0.0000094". */
static void dollars(char *out, size_t cap, double usd)
{
    int decimals = 2;
    if (usd > 0 && usd < 0.01) {
        decimals = (int)ceil(-log10(usd)) + 1;
        if (decimals > 12)
            decimals = 12;
    }
    snprintf(out, cap, "$%.*f", decimals, usd);
}

static void print_row(const char *name, const el_estimate_writes *w, const el_write_limits *l)
{
    el_estimate_time t;
    el_estimate_time_of(w, l, &t);
    char at[32], fl[32], hot[EL_ESTIMATE_KEY_MAX + 48];
    duration(at, sizeof at, t.at_limit_s);
    duration(fl, sizeof fl, t.floor_s);
    const el_hot_partition *h = w->hot_index.wcu > w->hot_table.wcu ? &w->hot_index
                                                                      : &w->hot_table;
    if (!h->key[0])
        snprintf(hot, sizeof hot, "-");
    else if (h->shards > 1)
        snprintf(hot, sizeof hot, "%.40s (%.0f a shard of %zu)", h->key, h->wcu, h->shards);
    else
        snprintf(hot, sizeof hot, "%.40s (%.0f)", h->key, h->wcu);
    printf("  %-14.14s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10s  %-34s %10s\n", name,
           w->rows, w->table_wcu, w->index_wcu, at, hot, fl);
}

/* True when some source writes the index. */
static bool writes_index(const el_mapping *m)
{
    for (size_t i = 0; i < m->nsources; i++)
        if (m->sources[i]->index)
            return true;
    return false;
}

/* What warm throughput lets the load run at the table's limit from its
 * first minute, and the command that gives it: create-table's for a new
 * table, the AWS CLI's update-table for one that exists (DescribeTable
 * answered). */
static void print_warm(const plan_run *r, const el_estimate_writes *total)
{
    const el_write_limits *l = &r->limits;
    const el_mapping *m = r->m;
    el_warm_advice w;
    el_estimate_warm(total, l, &w);
    bool index = writes_index(m);
    char cold[32], warm[32];
    duration(cold, sizeof cold, w.cold_s);
    el_estimate_time t;
    el_estimate_time_of(total, l, &t);
    duration(warm, sizeof warm, t.least_s);
    const char *has = l->described ? "the table takes" : "a new on-demand table takes";
    if (!w.needed) {
        if (w.table_wcu <= l->warm_table_wcu && (!index || w.index_wcu <= l->warm_index_wcu))
            printf("  warm throughput: none needed (the load can use %.0f WCU/s; %s %.0f at "
                   "once)\n", index && w.index_wcu > w.table_wcu ? w.index_wcu : w.table_wcu,
                   has, l->warm_table_wcu);
        else
            printf("  warm throughput: none needed (the writes take %s even at the %.0f WCU/s "
                   "%s at once)\n", cold, l->warm_table_wcu,
                   l->described ? "the table takes" : "a new on-demand table takes");
        return;
    }
    double want = index && w.index_wcu > w.table_wcu ? w.index_wcu : w.table_wcu;
    printf("  warm throughput: the load can use %.0f WCU/s in the table", w.table_wcu);
    if (index)
        printf(" and %.0f in the index %s", w.index_wcu, m->index_name);
    printf(";\n    %s %.0f at once and grows with the traffic (the writes at that rate: %s,\n"
           "    at the limit: %s); to run at the limit from the first minute:\n", has,
           l->warm_table_wcu, cold, warm);
    if (l->described) {
        printf("    aws dynamodb update-table --table-name %s --warm-throughput "
               "WriteUnitsPerSecond=%.0f\n", m->table, want);
        if (index)
            printf("    aws dynamodb update-table --table-name %s --global-secondary-index-updates "
                   "'[{\"Update\": {\"IndexName\": \"%s\", \"WarmThroughput\": "
                   "{\"WriteUnitsPerSecond\": %.0f}}}]'\n", m->table, m->index_name, want);
    } else if (r->mapping_path) {
        printf("    edgeload create-table --mapping %s --warm-throughput %.0f\n",
               r->mapping_path, want);
    } else {
        printf("    edgeload create-table --table %s", m->table);
        if (!index)
            printf(" --no-index");
        else if (strcmp(m->index_name, "GSI1") != 0)
            printf(" --index-name %s", m->index_name);
        printf(" --warm-throughput %.0f\n", want);
    }
}

static void print_estimate(const plan_run *r, const el_estimate_writes *total,
                           const el_import_estimate *imp, const plan_args *pa)
{
    const el_write_limits *l = &r->limits;
    printf("estimate, from every item as load writes it:\n"
           "  write limits: %.0f WCU/s the table, %.0f WCU/s the index %s; 1000 WCU/s a "
           "partition key\n  (%s)\n", l->table_wcu, l->index_wcu, r->m->index_name,
           l->basis);
    printf("  %-14s %12s %12s %12s %10s  %-34s %10s\n", "source", "items", "table WCU",
           "index WCU", "at limit", "hottest partition (WCU)", "floor");
    for (size_t i = 0; i < r->m->nsources; i++)
        print_row(r->m->sources[i]->name, &el_plan_count_source(r->count, i)->est, l);
    if (r->m->nsources > 1)
        print_row("total", total, l);
    el_estimate_time t;
    el_estimate_time_of(total, l, &t);
    char least[32];
    duration(least, sizeof least, t.least_s);
    bool hot = t.floor_s > t.at_limit_s;
    printf("  through the API: at least %s, set by %s%s\n", least,
           hot ? "the hottest partition" : "the write limits",
           hot && t.floor_s >= 1 && total->hot_index.wcu >= total->hot_table.wcu
               ? " (an index target is spread over shards by --hot-threshold N)" : "");
    print_warm(r, total);
    char size[32], part[32];
    byte_size(size, sizeof size, imp->bytes);
    byte_size(part, sizeof part, imp->part_bytes);
    printf("  Import from S3 (--output: each key once): %" PRIu64 " items (%" PRIu64
           " duplicates merged), %s uncompressed (the billing basis),\n    %" PRIu64
           " object%s of at most %u (parts of %" PRIu64 " items or %s)%s\n",
           imp->items, total->rows - imp->items, size, imp->objects,
           imp->objects == 1 ? "" : "s", EL_IMPORT_MAX_OBJECTS, imp->part_items, part,
           imp->objects > EL_IMPORT_MAX_OBJECTS ? ": OVER the import's limit" : "");
    double api = el_estimate_api_usd(total, pa->price_wru);
    double im = el_estimate_import_usd(imp, pa->price_import_gb);
    if (api >= 0 || im >= 0) {
        char usd[32];
        printf("  cost:");
        if (api >= 0) {
            dollars(usd, sizeof usd, api);
            printf(" API %s (%" PRIu64 " write request units at $%g a million)", usd,
                   total->table_wcu + total->index_wcu, pa->price_wru);
        }
        if (api >= 0 && im >= 0)
            printf(";");
        if (im >= 0) {
            dollars(usd, sizeof usd, im);
            printf(" Import from S3 %s (%s at $%g a GiB, no write units)", usd, size,
                   pa->price_import_gb);
        }
        printf("\n");
    } else {
        printf("  cost: give --price-wru USD_PER_MILLION and --price-import-gb USD to compare "
               "the two paths\n");
    }
    printf("\n");
}

static char *estimate_json(const plan_run *r, const el_estimate_writes *total,
                           const el_import_estimate *imp, const plan_args *pa)
{
    el_estimate_named *named = calloc(r->m->nsources ? r->m->nsources : 1, sizeof *named);
    if (!named)
        return NULL;
    for (size_t i = 0; i < r->m->nsources; i++)
        named[i] = (el_estimate_named){ r->m->sources[i]->name,
                                         &el_plan_count_source(r->count, i)->est };
    el_buf b;
    el_buf_init(&b, 1u << 24);
    el_err err = el_estimate_json(&b, &r->limits, named, r->m->nsources, total, imp,
                                  pa->price_wru, pa->price_import_gb);
    free(named);
    if (err) {
        el_buf_free(&b);
        return NULL;
    }
    return el_buf_take(&b);
}

static int write_plan(const plan_run *r, const char *path, const char *estimate)
{
    el_plan *p = el_plan_count_plan(r->count);
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_set_estimate(p, estimate) ? el_diag_set(&d, EL_ENOMEM, "out of memory")
                                                   : el_plan_write(p, path, &d);
    if (err) {
        cli_error("%s", d.msg);
        return EXIT_FATAL;
    }
    return EXIT_LOADED;
}

static void write_stats(const char *path, const plan_run *r, const el_estimate_writes *total,
                        const el_import_estimate *imp)
{
    uint64_t rows = 0, rejected = 0;
    for (size_t i = 0; i < r->m->nsources; i++) {
        const el_plan_source_count *sc = el_plan_count_source(r->count, i);
        rows += sc->est.rows + sc->rejected; /* every row read: an item, or rejected,
                                                as load and verify count them */
        rejected += sc->rejected;
    }
    const el_key_counter *targets = el_plan_count_targets(r->count);
    el_estimate_time t;
    el_estimate_time_of(total, &r->limits, &t);
    const cmd_stat v[] = {
        CMD_U64("rows_read", rows),
        CMD_U64("rejected", rejected),
        CMD_U64("targets", targets ? el_key_counter_distinct(targets) : 0),
        CMD_U64("hot_targets", el_plan_nhot(el_plan_count_plan(r->count))),
        CMD_U64("items", total->rows),
        CMD_U64("table_wcu", total->table_wcu),
        CMD_U64("index_wcu", total->index_wcu),
        CMD_DBL("least_seconds", t.least_s, 3),
        CMD_U64("import_items", imp->items),
        CMD_U64("import_bytes", imp->bytes),
        CMD_U64("import_objects", imp->objects),
    };
    cmd_write_stats(path, v, sizeof v / sizeof v[0]);
}

/* The write limits: the table's own when --endpoint-url is given and
 * DescribeTable answers (and DescribeLimits, for an on-demand table without
 * a maximum of its own), else --table-wcu or the default. A table that
 * cannot be asked is a warning: the estimate goes on with the default. */
static void table_limits(plan_run *r, const cmd_options *o, const plan_args *pa)
{
    el_estimate_default_limits(pa->table_wcu, &r->limits);
    if (!o->aws.endpoint_url)
        return;
    el_aws_config *cfg = NULL;
    el_ddb *ddb = NULL;
    if (!cli_connect(&o->aws, &cfg, &ddb)) {
        cli_warn("the table's write limits could not be asked; the estimate takes %s",
                 r->limits.basis);
        return;
    }
    el_table_desc t;
    el_ddb_limits lim;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_ddb_describe_table(ddb, r->m->table, &t, &d);
    if (err) {
        cli_warn("%s; the estimate takes the default write limits", d.msg);
    } else {
        el_diag ld;
        el_diag_clear(&ld);
        bool have_limits = el_ddb_describe_limits(ddb, &lim, &ld) == EL_OK;
        el_estimate_limits(&t, have_limits ? &lim : NULL, r->m->index_name, pa->table_wcu,
                           &r->limits);
    }
    el_ddb_free(ddb);
    el_aws_config_free(cfg);
}

int cmd_plan(int argc, char **argv)
{
    cmd_options o;
    plan_args pa = { .top = DEFAULT_TOP };
    plan_run r = { 0 };
    el_key_count *top = NULL;
    char *estimate = NULL;
    int rc = EXIT_FATAL;
    cli_s3 s3c = { 0 };
    if ((rc = cmd_parse(&spec, argc, argv, &o, &pa)) >= 0)
        goto out;
    const cmd_output plan_out = { "--plan-out", "the plan", pa.plan_out, false };
    if ((rc = cmd_check_outputs(&spec, &o, &plan_out, 1)))
        goto out;
    r.m = build_mapping(&o.map, &rc);
    if (!r.m)
        goto out;
    r.mapping_path = o.map.mapping_path;
    el_reader_opts ro = o.reader;
    size_t ninputs = o.map.ninputs;
    const char **inputs = o.map.inputs; /* or the objects of s3:// prefixes (owned by s3c) */
    s3c.endpoint = o.endpoint_s3;
    if (!cli_s3_inputs(&s3c, &o.aws, r.m, &inputs, &ninputs, &ro, &rc))
        goto out;
    rc = EXIT_FATAL;
    top = calloc(pa.top ? (size_t)pa.top : 1, sizeof *top);
    if (!top) {
        cli_error("out of memory");
        goto out;
    }
    table_limits(&r, &o, &pa);
    progress prog;
    progress_init(&prog, o.quiet ? PROGRESS_NONE : o.progress, o.progress_interval_s);
    cmd_knobs kn;
    cmd_knobs_read(&kn);
    el_plan_count_opts co = {
        .mapping = r.m, .reader = ro, .inputs = ninputs ? inputs : NULL, .ninputs = ninputs,
        .projection = r.limits.projection, .dedup_memory = kn.dedup_memory, .tmp_dir = kn.tmp_dir,
        .progress = progress_report, .progress_user = &prog,
        .on_reject = warn_reject, .reject_user = &r, .stop = &cmd_stop,
    };
    cmd_catch_signals();
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_plan_count_run(&co, &r.count, &d);
    if (r.warnings > MAX_REJECT_WARNINGS)
        cli_warn("%llu more rows not counted",
                 (unsigned long long)(r.warnings - MAX_REJECT_WARNINGS));
    if (err) {
        cli_error("%s", d.msg);
        rc = cmd_exit_code(err);
        goto out;
    }
    el_estimate_writes total;
    el_import_estimate imp;
    err = el_plan_count_finish(r.count, &total, &imp, &d);
    if (err) {
        cli_error("%s", d.msg);
        rc = cmd_exit_code(err);
        goto out;
    }
    if (!o.quiet) {
        print_report(&r, (size_t)pa.top, top);
        print_estimate(&r, &total, &imp, &pa);
    }
    fflush(stdout);
    if (pa.plan_out) {
        estimate = estimate_json(&r, &total, &imp, &pa);
        if (!estimate) {
            cli_error("out of memory rendering the estimate");
            goto out;
        }
        if ((rc = write_plan(&r, pa.plan_out, estimate)) != EXIT_LOADED)
            goto out;
    }
    rc = EXIT_LOADED;
    for (size_t i = 0; i < r.m->nsources; i++)
        if (el_plan_count_source(r.count, i)->rejected)
            rc = EXIT_REJECTS;
    if (o.stats_json)
        write_stats(o.stats_json, &r, &total, &imp);
out:
    el_plan_count_free(r.count);
    free(estimate);
    free(top);
    el_mapping_free(r.m);
    cmd_options_free(&o);
    cli_s3_free(&s3c);
    return rc;
}
