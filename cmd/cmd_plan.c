/*
 * cmd_plan.c - `edgeload plan`: read the inputs (no AWS), count the fan-in
 * of every unsharded index partition key, print the report and optionally
 * write the shard plan.
 *
 * DESIGN: the keys are rendered by the transform itself
 * (el_transform_index_keys), so what is counted is exactly the index key
 * `load` would write; rows whose keys `load` would reject are counted as
 * rejected here too. Reading is single-threaded, one input after another:
 * counting is a hash probe per row and the readers dominate. Sources with
 * "index": false have no index partition to shard and are not read.
 */
#include <inttypes.h>  /* PRIu64 */
#include <stdio.h>     /* printf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strcmp */

#include "cmd/cli.h"
#include "cmd/mapping_opts.h"
#include "cmd/runner.h"
#include "cmd/s3_cli.h"
#include "common/buf.h"
#include "pipeline/mapping.h"
#include "pipeline/plan.h"
#include "pipeline/shard.h"
#include "pipeline/transform.h"

enum { O_PLAN_OUT = OPT_OWN, O_TOP };

static const cli_opt own_opts[] = {
    { "plan-out", true, O_PLAN_OUT },
    { "top", true, O_TOP },
    { NULL, false, 0 }
};

#define DEFAULT_TOP 20
#define MAX_REJECT_WARNINGS 10

typedef struct plan_args {
    const char *plan_out;
    long top;
} plan_args;

static int own_opt(void *ctx, int id, const char *arg)
{
    plan_args *a = ctx;
    switch (id) {
    case O_PLAN_OUT: a->plan_out = arg; return 0;
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

static const char reads_only[] = "plan only reads its inputs; nothing is sent to DynamoDB";

static const cmd_refusal refuse[] = {
    { OPT_PLAN, "plan makes the plan: write it with --plan-out FILE" },
    { OPT_ENDPOINT_URL, reads_only },
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
"Reads every input of every source that writes the index (nothing is sent to\n"
"AWS) and counts, exactly, the fan-in of each unsharded index partition key:\n"
"the rendered index_pk (default: the rendered sk, e.g. TARGET#bob). Prints,\n"
"per source: rows, distinct sources (index sort keys) and targets (index\n"
"partition keys), a log-scale fan-in histogram and the top targets with the\n"
"shard count each gets (a key whose fan-in reaches the threshold gets\n"
"N = min(max_shards, ceil(fan_in / threshold)) shards, at least 2).\n"
"INPUTs override the mapping's \"input\" (one per source, in order).",
    .takes = (OPTS_MAPPING & ~OPT_BIT(OPT_PLAN)) | OPTS_INPUT | OPT_BIT(OPT_REGION) |
             OPT_BIT(OPT_PROFILE) | OPT_BIT(OPT_NO_VERIFY_SSL) | OPT_BIT(OPT_QUIET) |
             OPT_BIT(OPT_STATS_JSON),
    .refuse = refuse,
    .own = own_opts,
    .own_help =
"Plan:\n"
"  --plan-out FILE          write the plan as JSON (atomically), for load --plan\n"
"  --top N                  targets listed in the report (default " STR(DEFAULT_TOP) ")\n"
"  (--max-shards is 2.." STR(EL_MAX_MAX_SHARDS) "; --region, --profile and --no-verify-ssl are for\n"
"  s3:// inputs)\n",
    .epilogue =
"Exit status: 0 counted, 3 counted with rejected rows (rows load would reject\n"
"for their keys, or that the reader rejects), 2 usage or mapping error,\n"
"1 an input or the plan file could not be read or written.\n",
    .inputs = true,
    .own_opt = own_opt,
};

typedef struct src_count {
    el_source *src;
    el_plan_counter *targets;  /* fan-in per index partition key */
    el_plan_counter *sources;  /* rows per index sort key */
    el_transform *t;
    uint64_t rows, rejected;
    size_t ninputs;
} src_count;

typedef struct plan_run {
    el_mapping *m;
    src_count *sc;             /* one per mapping source */
    uint64_t warnings;
    el_reader_opts cli_ro;     /* reader options from the command line */
} plan_run;

static void warn_reject(plan_run *r, const char *path, const el_diag *d)
{
    if (r->warnings++ >= MAX_REJECT_WARNINGS)
        return;
    if (d->line)
        cli_warn("%s:%llu: row not counted: %s", path, (unsigned long long)d->line, d->msg);
    else
        cli_warn("%s: row not counted: %s", path, d->msg);
}

/* Reads one input of sc's source and counts its rows. Returns an exit code. */
static int count_input(plan_run *r, src_count *sc, const char *path)
{
    el_source *s = sc->src;
    el_reader_opts ro = el_source_reader_opts(s, &r->cli_ro);
    el_reader *rd;
    el_diag d;
    el_diag_clear(&d);
    el_err err = el_reader_open(path, &ro, &rd, &d);
    if (err) {
        if (d.line)
            cli_error("%s:%llu: %s", path, (unsigned long long)d.line, d.msg);
        else
            cli_error("%s", d.msg);
        return cmd_exit_code(err);
    }
    /* bind by name for each input, so the inputs of one source may order
     * their columns differently */
    err = el_source_bind(s, el_reader_schema(rd), &d);
    if (err) {
        cli_error("%s: %s", path, d.msg);
        el_reader_free(rd);
        return cmd_exit_code(err);
    }
    if (!sc->t && el_transform_new(r->m, s, &sc->t)) {
        cli_error("out of memory");
        el_reader_free(rd);
        return EXIT_FATAL;
    }
    el_row row;
    while ((err = el_reader_next(rd, &row, &d)) == EL_OK || err == EL_EREJECT) {
        if (err == EL_EREJECT) {
            sc->rejected++;
            warn_reject(r, path, &d);
            continue;
        }
        const char *ipk, *isk;
        size_t ipk_len, isk_len;
        err = el_transform_index_keys(sc->t, &row, &ipk, &ipk_len, &isk, &isk_len, &d);
        if (err == EL_EREJECT) {
            sc->rejected++;
            warn_reject(r, path, &d);
            continue;
        }
        if (!err)
            err = el_plan_counter_add(sc->targets, ipk, ipk_len);
        if (!err)
            err = el_plan_counter_add(sc->sources, isk, isk_len);
        if (err) {
            if (err == EL_ENOMEM)
                cli_error("%s: out of memory counting %zu distinct targets", path,
                          el_plan_counter_distinct(sc->targets));
            else
                cli_error("%s:%llu: %s", path, (unsigned long long)row.line,
                          d.msg[0] ? d.msg : el_strerror(err));
            el_reader_free(rd);
            return EXIT_FATAL;
        }
        sc->rows++;
    }
    el_reader_free(rd);
    s->bound = NULL; /* the schema went with the reader */
    if (err != EL_EOF) {
        if (d.line)
            cli_error("%s:%llu: %s", path, (unsigned long long)d.line, d.msg);
        else
            cli_error("%s: %s", path, d.msg);
        return EXIT_FATAL;
    }
    sc->ninputs++;
    return EXIT_LOADED;
}

/* Pairs inputs with sources as load does and counts each. */
static int count_all(plan_run *r, const char *const *inputs, size_t ninputs)
{
    el_mapping *m = r->m;
    if (ninputs && m->nsources > 1 && ninputs != m->nsources) {
        cli_error("plan: %zu inputs given for %zu sources: give one input per source, in the "
                  "mapping's order, or none to use each source's \"input\"", ninputs,
                  m->nsources);
        return EXIT_USAGE;
    }
    size_t n = ninputs ? ninputs : m->nsources;
    /* check every path before reading anything */
    for (size_t i = 0; i < n; i++) {
        el_source *src = m->sources[m->nsources == 1 ? 0 : i];
        if (src->index && !ninputs && !src->input) {
            cli_error("source '%s' has no input: give it \"input\" in the mapping or name the "
                      "file on the command line", src->name);
            return EXIT_USAGE;
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t si = m->nsources == 1 ? 0 : i;
        src_count *sc = &r->sc[si];
        if (!sc->src->index)
            continue;
        char *path = ninputs ? strdup(inputs[i]) : el_mapping_input_path(m, sc->src->input);
        if (!path) {
            cli_error("out of memory");
            return EXIT_FATAL;
        }
        int rc = count_input(r, sc, path);
        free(path);
        if (rc != EXIT_LOADED)
            return rc;
    }
    if (r->warnings > MAX_REJECT_WARNINGS)
        cli_warn("%llu more rows not counted", (unsigned long long)(r->warnings -
                                                                     MAX_REJECT_WARNINGS));
    return EXIT_LOADED;
}

static void print_report(const plan_run *r, size_t top_n, el_plan_entry *top)
{
    const el_mapping *m = r->m;
    for (size_t i = 0; i < m->nsources; i++) {
        const src_count *sc = &r->sc[i];
        const el_source *s = sc->src;
        if (!s->index) {
            printf("source '%s': writes no index, not counted\n\n", s->name);
            continue;
        }
        printf("source '%s' (index %s: %s = %s%s, %s = %s%s)\n", s->name, m->index_name,
               m->index_pk_attr, el_template_text(s->index_pk ? s->index_pk : s->sk),
               s->index_pk ? "" : " (the sk)", m->index_sk_attr,
               el_template_text(s->index_sk ? s->index_sk : s->pk),
               s->index_sk ? "" : " (the pk)");
        printf("  rows:              %" PRIu64 " counted, %" PRIu64 " rejected, %zu input%s\n",
               sc->rows, sc->rejected, sc->ninputs, sc->ninputs == 1 ? "" : "s");
        printf("  distinct sources:  %zu (index sort keys)\n",
               el_plan_counter_distinct(sc->sources));
        printf("  distinct targets:  %zu (index partition keys)\n",
               el_plan_counter_distinct(sc->targets));
        size_t tmem = el_plan_counter_memory(sc->targets);
        size_t smem = el_plan_counter_memory(sc->sources);
        size_t nt = el_plan_counter_distinct(sc->targets);
        printf("  counting memory:   %.1f MB (targets %.1f MB%s", (double)(tmem + smem) / 1e6,
               (double)tmem / 1e6, nt ? ", " : "");
        if (nt)
            printf("%.1f bytes/target", (double)tmem / (double)nt);
        printf(")\n");
        /* hot targets and the partitions they take */
        size_t nhot = 0;
        uint64_t parts = 0, hot_rows = 0;
        el_plan_entry *hot = NULL;
        if (s->hot_threshold &&
            el_plan_counter_at_least(sc->targets, s->hot_threshold, &hot, &nhot) == EL_OK) {
            for (size_t j = 0; j < nhot; j++) {
                parts += el_shard_count(hot[j].count, s->hot_threshold, s->max_shards);
                hot_rows += hot[j].count;
            }
            free(hot);
        }
        if (s->hot_threshold)
            printf("  hot targets:       %zu at fan-in >= %" PRIu64 " (max shards %zu): %" PRIu64
                   " rows over %" PRIu64 " index partitions\n", nhot, s->hot_threshold,
                   s->max_shards, hot_rows, parts);
        else
            printf("  hot targets:       none (no hot threshold: --hot-threshold N or "
                   "\"hot\" in the mapping)\n");
        /* histogram */
        uint64_t hist[EL_PLAN_HIST_BUCKETS];
        el_plan_counter_histogram(sc->targets, hist);
        int last = -1;
        for (int b = 0; b < EL_PLAN_HIST_BUCKETS; b++)
            if (hist[b])
                last = b;
        if (last >= 0) {
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
        size_t nt_top = el_plan_counter_top(sc->targets, top_n, top);
        if (nt_top) {
            printf("  top %zu targets by fan-in:\n    %4s %12s %6s  %s\n", nt_top, "rank",
                   "fan-in", "shards", "target");
            for (size_t j = 0; j < nt_top; j++)
                printf("    %4zu %12" PRIu64 " %6zu  %.*s\n", j + 1, top[j].count,
                       el_shard_count(top[j].count, s->hot_threshold, s->max_shards),
                       (int)top[j].len, top[j].key);
        }
        printf("\n");
    }
}

static int write_plan(const plan_run *r, const char *path)
{
    el_plan *p = el_plan_new();
    el_diag d;
    el_diag_clear(&d);
    el_err err = p ? EL_OK : el_diag_set(&d, EL_ENOMEM, "out of memory");
    for (size_t i = 0; !err && i < r->m->nsources; i++) {
        const src_count *sc = &r->sc[i];
        if (!sc->src->index)
            continue;
        size_t idx;
        el_diag inner;
        el_diag_clear(&inner);
        err = el_plan_add_source(p, sc->src->name, sc->rows, sc->src->hot_threshold,
                                 sc->src->max_shards, &idx, &inner);
        if (!err)
            err = el_plan_add_counted(p, idx, sc->targets, &inner);
        if (err)
            el_diag_set(&d, err, "plan for source '%s': %s", sc->src->name, inner.msg);
    }
    if (!err)
        err = el_plan_write(p, path, &d);
    el_plan_free(p);
    if (err) {
        cli_error("%s", d.msg);
        return EXIT_FATAL;
    }
    return EXIT_LOADED;
}

static void write_stats(const char *path, const plan_run *r)
{
    uint64_t rows = 0, rejected = 0, targets = 0, hot = 0;
    for (size_t i = 0; i < r->m->nsources; i++) {
        const src_count *sc = &r->sc[i];
        rows += sc->rows;
        rejected += sc->rejected;
        if (!sc->src->index)
            continue;
        targets += el_plan_counter_distinct(sc->targets);
        el_plan_entry *e = NULL;
        size_t n = 0;
        if (sc->src->hot_threshold &&
            el_plan_counter_at_least(sc->targets, sc->src->hot_threshold, &e, &n) == EL_OK)
            hot += n;
        free(e);
    }
    const cmd_stat v[] = {
        CMD_U64("rows_read", rows),
        CMD_U64("rejected", rejected),
        CMD_U64("targets", targets),
        CMD_U64("hot_targets", hot),
    };
    cmd_write_stats(path, v, sizeof v / sizeof v[0]);
}

int cmd_plan(int argc, char **argv)
{
    cmd_options o;
    plan_args pa = { .top = DEFAULT_TOP };
    plan_run r = { 0 };
    el_plan_entry *top = NULL;
    int rc = EXIT_FATAL;
    cli_s3 s3c = { 0 };
    if (!cmd_options_init(&o, argc)) {
        cli_error("out of memory");
        goto out;
    }
    if ((rc = cmd_parse(&spec, argc, argv, &o, &pa)) >= 0)
        goto out;
    r.cli_ro = o.reader;
    long top_n = pa.top;
    bool quiet = o.quiet;
    const char *plan_out = pa.plan_out;
    mapping_args a = o.map;
    r.m = build_mapping(&a, &rc);
    if (!r.m)
        goto out;
    size_t ninputs = a.ninputs;
    const char **use_inputs = a.inputs; /* or the objects of s3:// prefixes (owned by s3c) */
    s3c.endpoint = o.endpoint_s3;
    if (!cli_s3_inputs(&s3c, &o.aws, r.m, &use_inputs, &ninputs, &r.cli_ro, &rc))
        goto out;
    rc = EXIT_USAGE;
    r.sc = calloc(r.m->nsources, sizeof *r.sc);
    top = calloc(top_n ? (size_t)top_n : 1, sizeof *top);
    rc = EXIT_FATAL;
    if (!r.sc || !top) {
        cli_error("out of memory");
        goto out;
    }
    for (size_t i = 0; i < r.m->nsources; i++) {
        r.sc[i].src = r.m->sources[i];
        r.sc[i].targets = el_plan_counter_new();
        r.sc[i].sources = el_plan_counter_new();
        if (!r.sc[i].targets || !r.sc[i].sources) {
            cli_error("out of memory");
            goto out;
        }
    }
    rc = count_all(&r, use_inputs, ninputs);
    if (rc != EXIT_LOADED)
        goto out;
    if (!quiet)
        print_report(&r, (size_t)top_n, top);
    fflush(stdout);
    if (plan_out && (rc = write_plan(&r, plan_out)) != EXIT_LOADED)
        goto out;
    rc = EXIT_LOADED;
    for (size_t i = 0; i < r.m->nsources; i++)
        if (r.sc[i].rejected)
            rc = EXIT_REJECTS;
    if (o.stats_json)
        write_stats(o.stats_json, &r);
out:
    if (r.sc) {
        for (size_t i = 0; i < r.m->nsources; i++) {
            el_plan_counter_free(r.sc[i].targets);
            el_plan_counter_free(r.sc[i].sources);
            el_transform_free(r.sc[i].t);
        }
        free(r.sc);
    }
    free(top);
    el_mapping_free(r.m);
    cmd_options_free(&o);
    cli_s3_free(&s3c);
    return rc;
}
