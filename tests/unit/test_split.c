/* test_split.c - --split: parsing, per-worker names, the record start
 * scanner against libcsv itself, and the property that the parts of every
 * worker together hold every row of the inputs exactly once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <csv.h>      /* the reference the scanner must agree with */
#include <stdio.h>    /* fopen, snprintf */
#include <stdlib.h>   /* malloc, free, qsort, mkdtemp */
#include <string.h>   /* strcmp, memcmp */
#include <unistd.h>   /* unlink, rmdir */

#include "common/buf.h"
#include "formats/reader.h"
#include "pipeline/rows/split.h"

/* ---- parsing ---- */

static const char *const *fake_env;

static const char *env_lookup(const char *name)
{
    for (size_t i = 0; fake_env && fake_env[i]; i += 2)
        if (strcmp(fake_env[i], name) == 0)
            return fake_env[i + 1];
    return NULL;
}

static el_err parse(const char *arg, const char *const *env, el_split *s)
{
    el_diag d;
    el_diag_clear(&d);
    fake_env = env;
    return el_split_parse(arg, env_lookup, s, &d);
}

static void test_parse(void **state)
{
    (void)state;
    el_split s;
    assert_int_equal(parse("2/4", NULL, &s), EL_OK);
    assert_int_equal(s.index, 1);
    assert_int_equal(s.count, 4);
    assert_null(s.from);
    assert_int_equal(parse("1/1", NULL, &s), EL_OK);
    assert_int_equal(parse("4/4", NULL, &s), EL_OK);
    assert_int_equal(s.index, 3);
    const char *bad[] = { "0/4", "5/4", "4", "/4", "1/", "1/0", "a/4", "1/4x", "-1/4",
                          "1/1000001", "auto", "auto/", "2/4/6" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(parse(bad[i], NULL, &s), EL_EUSAGE);
}

static void test_parse_auto(void **state)
{
    (void)state;
    el_split s;
    const char *batch[] = { "AWS_BATCH_JOB_ARRAY_INDEX", "3", NULL };
    assert_int_equal(parse("auto/4", batch, &s), EL_OK);
    assert_int_equal(s.index, 3); /* 0-based already */
    assert_string_equal(s.from, "AWS_BATCH_JOB_ARRAY_INDEX");
    const char *batch_out[] = { "AWS_BATCH_JOB_ARRAY_INDEX", "4", NULL };
    assert_int_equal(parse("auto/4", batch_out, &s), EL_EUSAGE);
    const char *k8s[] = { "JOB_COMPLETION_INDEX", "0", NULL };
    assert_int_equal(parse("auto/2", k8s, &s), EL_OK);
    assert_int_equal(s.index, 0);
    assert_string_equal(s.from, "JOB_COMPLETION_INDEX");
    const char *par[] = { "PARALLEL_SEQ", "1", NULL };
    assert_int_equal(parse("auto/3", par, &s), EL_OK);
    assert_int_equal(s.index, 0); /* 1-based */
    const char *par0[] = { "PARALLEL_SEQ", "0", NULL };
    assert_int_equal(parse("auto/3", par0, &s), EL_EUSAGE);
    const char *par4[] = { "PARALLEL_SEQ", "4", NULL };
    assert_int_equal(parse("auto/3", par4, &s), EL_EUSAGE);
    /* AWS Batch first, then Kubernetes, then GNU parallel; empty is unset */
    const char *both[] = { "PARALLEL_SEQ", "3", "JOB_COMPLETION_INDEX", "1",
                           "AWS_BATCH_JOB_ARRAY_INDEX", "", NULL };
    assert_int_equal(parse("auto/3", both, &s), EL_OK);
    assert_int_equal(s.index, 1);
    assert_string_equal(s.from, "JOB_COMPLETION_INDEX");
    /* Slurm: 0-based, and N is --split's, never the array's count (a task
     * resubmitted alone with `sbatch --array=2` sees a count of 1) */
    const char *slurm[] = { "SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "1",
                            "SLURM_ARRAY_TASK_MIN", "2", "SLURM_ARRAY_TASK_MAX", "2", NULL };
    assert_int_equal(parse("auto/4", slurm, &s), EL_OK);
    assert_int_equal(s.index, 2);
    assert_int_equal(s.count, 4);
    assert_string_equal(s.from, "SLURM_ARRAY_TASK_ID");
    const char *slurm0[] = { "SLURM_ARRAY_TASK_ID", "0", NULL };
    assert_int_equal(parse("auto/1", slurm0, &s), EL_OK);
    assert_int_equal(s.index, 0);
    /* Slurm before GNU parallel, after the cloud schedulers */
    const char *slurm_par[] = { "PARALLEL_SEQ", "1", "SLURM_ARRAY_TASK_ID", "3", NULL };
    assert_int_equal(parse("auto/4", slurm_par, &s), EL_OK);
    assert_int_equal(s.index, 3);
    assert_string_equal(s.from, "SLURM_ARRAY_TASK_ID");
    const char *k8s_slurm[] = { "SLURM_ARRAY_TASK_ID", "3", "JOB_COMPLETION_INDEX", "1", NULL };
    assert_int_equal(parse("auto/4", k8s_slurm, &s), EL_OK);
    assert_string_equal(s.from, "JOB_COMPLETION_INDEX");
    const char *junk[] = { "JOB_COMPLETION_INDEX", "1x", NULL };
    assert_int_equal(parse("auto/3", junk, &s), EL_EUSAGE);
    assert_int_equal(parse("auto/3", NULL, &s), EL_EUSAGE);
}

/* An index outside 0..N-1 names the variable, its value and N, and how to
 * submit N tasks; with none set, the message lists every variable read. */
static void test_parse_auto_messages(void **state)
{
    (void)state;
    el_split s;
    el_diag d;
    el_diag_clear(&d);
    const char *slurm[] = { "SLURM_ARRAY_TASK_ID", "4", NULL };
    fake_env = slurm;
    assert_int_equal(el_split_parse("auto/4", env_lookup, &s, &d), EL_EUSAGE);
    assert_string_equal(d.msg, "--split auto/4: SLURM_ARRAY_TASK_ID=4 (the Slurm job array "
                               "task id) is not a part of 4: it must be 0 to 3 "
                               "(sbatch --array=0-3)");
    const char *batch[] = { "AWS_BATCH_JOB_ARRAY_INDEX", "9", NULL };
    fake_env = batch;
    assert_int_equal(el_split_parse("auto/8", env_lookup, &s, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "AWS_BATCH_JOB_ARRAY_INDEX=9"));
    assert_non_null(strstr(d.msg, "must be 0 to 7 (an array job of --array-properties size=8)"));
    const char *par[] = { "PARALLEL_SEQ", "0", NULL };
    fake_env = par;
    assert_int_equal(el_split_parse("auto/2", env_lookup, &s, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "must be 1 to 2 (2 parallel jobs)"));
    fake_env = NULL;
    assert_int_equal(el_split_parse("auto/2", env_lookup, &s, &d), EL_EUSAGE);
    assert_non_null(strstr(d.msg, "SLURM_ARRAY_TASK_ID"));
    assert_non_null(strstr(d.msg, "PARALLEL_SEQ"));
}

static void test_paths(void **state)
{
    (void)state;
    el_split s = { .index = 1, .count = 4 };
    struct { const char *in, *out; } cases[] = {
        { "load.ckpt", "load.2-of-4.ckpt" },
        { "ckpt", "ckpt.2-of-4" },
        { "/var/lib/x.y/ckpt", "/var/lib/x.y/ckpt.2-of-4" },
        { "dir/.hidden", "dir/.hidden.2-of-4" },
        { "edgeload-rejects.jsonl", "edgeload-rejects.2-of-4.jsonl" },
        { "w{i}.ckpt", "w2.ckpt" },
        { "part-{i}-of-{n}/r.jsonl", "part-2-of-4/r.jsonl" },
        { "{n}only", "{n}only.2-of-4" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = el_split_path(cases[i].in, &s);
        assert_non_null(p);
        assert_string_equal(p, cases[i].out);
        free(p);
    }
}

/* ---- files ---- */

static char tmpdir[64];

static void write_file(const char *path, const void *data, size_t len)
{
    el_test_write(path, data, len);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? rng_state % n : 0;
}

/* ---- the scanner against libcsv ---- */

static int no_space(unsigned char c)
{
    (void)c;
    return 0;
}

/* Valid record starts as the reader sees them, computed with libcsv itself:
 * after a newline, parser between rows, after the header record (with one),
 * and no BOM starting there (without one). valid[p] for p in [0, len]. */
static void reference_starts(const unsigned char *b, size_t len, unsigned char delim,
                             unsigned char quote, bool header, bool *valid)
{
    struct csv_parser p;
    assert_int_equal(csv_init(&p, CSV_EMPTY_IS_NULL), 0);
    csv_set_delim(&p, delim);
    csv_set_quote(&p, quote);
    csv_set_space_func(&p, no_space);
    size_t records = 0;
    memset(valid, 0, len + 1);
    valid[0] = true;
    size_t i = len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF ? 3 : 0;
    for (; i < len; i++) {
        int before = p.pstate;
        assert_int_equal(csv_parse(&p, b + i, 1, NULL, NULL, NULL), 1);
        /* a row ends when the state drops to "row not begun" from a row */
        if (p.pstate == 0 && before != 0)
            records++;
        if (b[i] != '\n' || p.pstate != 0)
            continue;
        if (header && records == 0)
            continue;
        bool bom = i + 3 < len && b[i + 1] == 0xEF && b[i + 2] == 0xBB && b[i + 3] == 0xBF;
        if (!header && bom)
            continue;
        valid[i + 1] = true;
    }
    csv_free(&p);
}

static void check_scanner_on(const unsigned char *b, size_t len, unsigned char delim,
                             unsigned char quote, bool header)
{
    char path[128];
    snprintf(path, sizeof path, "%s/scan.csv", tmpdir);
    write_file(path, b, len);
    bool *valid = malloc(len + 1);
    assert_non_null(valid);
    reference_starts(b, len, delim, quote, header, valid);
    el_split_input in = { .path = path, .size = len, .splittable = true, .delimiter = delim,
                          .quote = quote, .header = header };
    uint64_t targets[8], cut[8], lines[8], head, head_lines;
    size_t nt = 1 + rnd(8);
    for (size_t t = 0; t < nt; t++)
        targets[t] = rnd(len + 1);
    /* ascending */
    for (size_t a = 1; a < nt; a++)
        for (size_t c = a; c > 0 && targets[c - 1] > targets[c]; c--) {
            uint64_t x = targets[c];
            targets[c] = targets[c - 1];
            targets[c - 1] = x;
        }
    el_diag d;
    assert_int_equal(el_split_scan(&in, targets, nt, cut, lines, &head, &head_lines, &d), EL_OK);
    for (size_t t = 0; t < nt; t++) {
        uint64_t want = targets[t];
        while (want < len && !valid[want])
            want++;
        if (cut[t] != want)
            fail_msg("target %llu: cut %llu, libcsv says %llu (len %zu)",
                     (unsigned long long)targets[t], (unsigned long long)cut[t],
                     (unsigned long long)want, len);
        uint64_t nl = 0;
        for (uint64_t k = 0; k < want; k++)
            nl += b[k] == '\n';
        assert_int_equal(lines[t], nl);
    }
    if (header) {
        uint64_t h = 1;
        while (h < len && !valid[h])
            h++;
        assert_int_equal(head, h > len ? len : h);
    }
    free(valid);
    unlink(path);
}

static void test_scanner_matches_libcsv(void **state)
{
    (void)state;
    /* the bytes that drive the state machine, plus ordinary ones */
    const unsigned char alpha[] = { 'a', 'b', ',', ';', '"', '"', '\n', '\n', '\r', ' ',
                                    0xEF, 0xBB, 0xBF, 0xFF, '\t' };
    unsigned char buf[600];
    for (int round = 0; round < 3000; round++) {
        size_t len = rnd(sizeof buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = alpha[rnd(sizeof alpha)];
        if (rnd(4) == 0 && len >= 3)
            memcpy(buf, "\xEF\xBB\xBF", 3);
        unsigned char delim = rnd(3) == 0 ? ';' : (rnd(4) == 0 ? '\t' : ',');
        unsigned char quote = delim == '\t' && rnd(2) ? 0xFF : '"';
        check_scanner_on(buf, len, delim, quote, rnd(2) == 0);
    }
}

static void test_scanner_big_blocks(void **state)
{
    (void)state;
    /* records that straddle the scanner's 1 MiB blocks */
    el_buf b;
    el_buf_init(&b, 8u << 20);
    assert_int_equal(el_buf_puts(&b, "a,b\n"), EL_OK);
    while (b.len < 3u << 20) {
        char row[300];
        size_t k = rnd(250);
        snprintf(row, sizeof row, "x%zu,\"%.*s\n%s\"\n", b.len, (int)k,
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", rnd(2) ? "\"\"" : ",");
        assert_int_equal(el_buf_puts(&b, row), EL_OK);
    }
    for (int i = 0; i < 5; i++)
        check_scanner_on((const unsigned char *)b.data, b.len, ',', '"', true);
    el_buf_free(&b);
}

/* ---- every row exactly once ---- */

/* One random CSV/TSV: fields quoted or not (quoted ones with delimiters,
 * doubled quotes, LF and CRLF inside), a quote inside an unquoted field,
 * CRLF or LF row ends, a CR-only row end now and then (two records on one
 * line), blank lines, rows with a column too few (rejects). */
static void random_csv(el_buf *b, unsigned char delim, bool tsv, bool header, size_t rows)
{
    char d = (char)delim;
    if (rnd(5) == 0)
        assert_int_equal(el_buf_puts(b, "\xEF\xBB\xBF"), EL_OK);
    if (header) {
        /* a CR-only end puts the first records on the header's own line */
        char h[32];
        snprintf(h, sizeof h, "c1%cc2%cc3%s", d, d, rnd(4) == 0 ? "\r" : "\n");
        assert_int_equal(el_buf_puts(b, h), EL_OK);
    }
    for (size_t r = 0; r < rows; r++) {
        size_t ncol = rnd(15) == 0 ? 2 : 3;
        for (size_t c = 0; c < ncol; c++) {
            if (c)
                assert_int_equal(el_buf_putc(b, d), EL_OK);
            char f[64];
            switch (tsv ? rnd(2) : rnd(8)) {
            case 0: snprintf(f, sizeof f, "v%zu_%zu", r, c); break;
            case 1: snprintf(f, sizeof f, "%s", rnd(3) ? "x\"y" : ""); break;
            case 2: snprintf(f, sizeof f, "\"q%zu%c\"\"\n%c\"", r, d, d); break;
            case 3: snprintf(f, sizeof f, "\"line\r\nbreak %zu\"", r); break;
            case 4: snprintf(f, sizeof f, "\"\""); break;
            case 5: snprintf(f, sizeof f, "\"\n%zu\"", r); break;
            case 6: snprintf(f, sizeof f, "\"%c%zu\"", d, r); break;
            default: snprintf(f, sizeof f, "\"%zu\n\n\"", r); break;
            }
            assert_int_equal(el_buf_puts(b, f), EL_OK);
        }
        const char *ends[] = { "\n", "\r\n", "\n\n", "\r" };
        assert_int_equal(el_buf_puts(b, ends[rnd(10) == 0 ? 2 + rnd(2) : rnd(2)]), EL_OK);
    }
}

typedef struct rowset {
    char **rows;
    size_t n, cap;
} rowset;

static void add_row(rowset *s, size_t input, el_err err, const el_row *row)
{
    el_buf b;
    el_buf_init(&b, 1u << 20);
    char head[96];
    snprintf(head, sizeof head, "%zu|%d|%llu|%llu", input, err == EL_EREJECT,
             (unsigned long long)row->line, (unsigned long long)row->offset);
    assert_int_equal(el_buf_puts(&b, head), EL_OK);
    for (size_t c = 0; c < row->ncols; c++) {
        assert_int_equal(el_buf_putc(&b, '|'), EL_OK);
        if (row->values[c].is_null)
            assert_int_equal(el_buf_puts(&b, "<null>"), EL_OK);
        else
            assert_int_equal(el_buf_append(&b, row->values[c].data, row->values[c].len), EL_OK);
    }
    assert_int_equal(el_buf_putc(&b, '\0'), EL_OK);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->rows = realloc(s->rows, s->cap * sizeof *s->rows);
        assert_non_null(s->rows);
    }
    s->rows[s->n++] = strdup(b.data);
    el_buf_free(&b);
}

static void read_all(el_reader *r, size_t input, rowset *s)
{
    el_row row;
    el_diag d;
    el_err err;
    while ((err = el_reader_next(r, &row, &d)) == EL_OK || err == EL_EREJECT)
        add_row(s, input, err, &row);
    assert_int_equal(err, EL_EOF);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rowset_free(rowset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->rows[i]);
    free(s->rows);
    s->rows = NULL;
    s->n = s->cap = 0;
}

#define MAX_INPUTS 5

static void test_parts_hold_every_row_once(void **state)
{
    (void)state;
    const char *cols[] = { "c1", "c2", "c3" };
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + rnd(MAX_INPUTS);
        char paths[MAX_INPUTS][128];
        el_split_input in[MAX_INPUTS];
        el_reader_opts ro[MAX_INPUTS];
        for (size_t i = 0; i < n; i++) {
            bool tsv = rnd(4) == 0;
            bool header = rnd(3) != 0;
            unsigned char delim = tsv ? '\t' : (rnd(3) == 0 ? ';' : ',');
            el_buf b;
            el_buf_init(&b, 64u << 20);
            random_csv(&b, delim, tsv, header, rnd(4) == 0 ? 0 : rnd(400));
            snprintf(paths[i], sizeof paths[i], "%s/in%zu.%s", tmpdir, i, tsv ? "tsv" : "csv");
            write_file(paths[i], b.data ? b.data : "", b.len);
            memset(&ro[i], 0, sizeof ro[i]);
            ro[i].format = tsv ? EL_FMT_TSV : EL_FMT_CSV;
            ro[i].delimiter = (char)delim;
            if (!header) {
                ro[i].columns = cols;
                ro[i].ncolumns = 3;
            }
            /* a "compressed" or SQL input is one that cannot be cut */
            in[i] = (el_split_input){ .path = paths[i], .size = b.len,
                                      .splittable = rnd(5) != 0, .delimiter = delim,
                                      .quote = tsv ? 0xFF : '"', .header = header };
            el_buf_free(&b);
        }
        rowset whole = { 0 }, parts = { 0 };
        bool empty_header = false;
        for (size_t i = 0; i < n; i++) {
            el_reader *r;
            el_diag d;
            el_err err = el_reader_open(paths[i], &ro[i], &r, &d);
            if (err) { /* an empty file with a header row: every worker fails alike */
                empty_header = true;
                break;
            }
            read_all(r, i, &whole);
            el_reader_free(r);
        }
        if (empty_header) {
            rowset_free(&whole);
            for (size_t i = 0; i < n; i++)
                unlink(paths[i]);
            continue;
        }
        unsigned count = 1 + (unsigned)rnd(rnd(2) ? 9 : 40);
        for (unsigned k = 0; k < count; k++) {
            el_split s = { .index = k, .count = count };
            el_split_part p[MAX_INPUTS];
            el_diag d;
            assert_int_equal(el_split_assign(&s, in, n, p, &d), EL_OK);
            for (size_t i = 0; i < n; i++) {
                el_reader *r = NULL;
                if (p[i].kind == EL_SPLIT_NONE)
                    continue;
                if (p[i].kind == EL_SPLIT_WHOLE) {
                    assert_int_equal(el_reader_open(paths[i], &ro[i], &r, &d), EL_OK);
                } else {
                    assert_true(in[i].splittable);
                    assert_int_equal(el_reader_open_range(paths[i], &ro[i], &p[i].range, &r, &d),
                                     EL_OK);
                }
                read_all(r, i, &parts);
                el_reader_free(r);
            }
        }
        if (whole.n) /* (qsort takes no NULL, even for 0 rows) */
            qsort(whole.rows, whole.n, sizeof *whole.rows, cmp_str);
        if (parts.n)
            qsort(parts.rows, parts.n, sizeof *parts.rows, cmp_str);
        if (whole.n != parts.n)
            fail_msg("round %d: %zu rows in %u parts, %zu in the whole", round, parts.n, count,
                     whole.n);
        for (size_t i = 0; i < whole.n; i++)
            if (strcmp(whole.rows[i], parts.rows[i]) != 0)
                fail_msg("round %d: row %zu: parts have '%s', the whole '%s'", round, i,
                         parts.rows[i], whole.rows[i]);
        rowset_free(&whole);
        rowset_free(&parts);
        for (size_t i = 0; i < n; i++)
            unlink(paths[i]);
    }
}

/* Whole inputs go to the part holding the nearer end; byte ranges start at
 * record starts; sizes balance. */
static void test_assignment_shape(void **state)
{
    (void)state;
    char p1[128], p2[128];
    snprintf(p1, sizeof p1, "%s/big.csv", tmpdir);
    snprintf(p2, sizeof p2, "%s/small.csv", tmpdir);
    el_buf b;
    el_buf_init(&b, 8u << 20);
    assert_int_equal(el_buf_puts(&b, "k,v\n"), EL_OK);
    for (int i = 0; i < 10000; i++) {
        char row[64];
        snprintf(row, sizeof row, "%05d,\"v\n%05d\"\n", i, i);
        assert_int_equal(el_buf_puts(&b, row), EL_OK);
    }
    write_file(p1, b.data, b.len);
    write_file(p2, "k,v\n1,2\n", 8);
    /* [compressed 1000 bytes][big.csv][small.csv], 4 parts */
    el_split_input in[3] = {
        { .path = "not-read.gz", .size = 1000, .splittable = false },
        { .path = p1, .size = b.len, .splittable = true, .delimiter = ',', .quote = '"',
          .header = true },
        { .path = p2, .size = 8, .splittable = true, .delimiter = ',', .quote = '"',
          .header = true },
    };
    uint64_t covered = 0, prev_end = 0;
    for (unsigned k = 0; k < 4; k++) {
        el_split s = { .index = k, .count = 4 };
        el_split_part p[3];
        el_diag d;
        assert_int_equal(el_split_assign(&s, in, 3, p, &d), EL_OK);
        assert_int_equal(p[0].kind, k == 0 ? EL_SPLIT_WHOLE : EL_SPLIT_NONE);
        assert_int_equal(p[2].kind, k == 3 ? EL_SPLIT_WHOLE : EL_SPLIT_NONE);
        assert_int_equal(p[1].kind, EL_SPLIT_RANGE);
        const el_reader_range *r = &p[1].range;
        assert_int_equal(r->start, prev_end);
        if (r->start > 0) {
            assert_int_equal(r->head, 4);
            assert_int_equal(r->head_lines, 1);
            /* a record start: "NNNNN," after a newline */
            assert_int_equal(b.data[r->start - 1], '\n');
            assert_true(b.data[r->start] >= '0' && b.data[r->start] <= '9');
            assert_int_equal(r->start_lines, 1 + 2 * ((r->start - 4) / 16));
        }
        /* each part within a row or two of a quarter */
        uint64_t total = 1000 + b.len + 8;
        uint64_t mine = (k == 0 ? 1000 : 0) + (r->end - r->start) + (k == 3 ? 8 : 0);
        assert_true(mine + 32 >= total / 4 && mine <= total / 4 + 32);
        covered += r->end - r->start;
        prev_end = r->end;
    }
    assert_int_equal(covered, b.len);
    assert_int_equal(prev_end, b.len);
    el_buf_free(&b);
    unlink(p1);
    unlink(p2);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/el_split_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_auto),
        cmocka_unit_test(test_parse_auto_messages),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_scanner_matches_libcsv),
        cmocka_unit_test(test_scanner_big_blocks),
        cmocka_unit_test(test_parts_hold_every_row_once),
        cmocka_unit_test(test_assignment_shape),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
