/*
 * split.c - parts of the input set for `--split I/N`, and the CSV record
 * start scanner.
 *
 * DESIGN: the part of a worker is a pure function of (I, N, the inputs'
 * sizes, and the bytes of at most two CSV files), so N processes that never
 * talk to each other agree on every cut. The scanner is libcsv's state
 * machine (csv_parse in libcsv 3.0.3, with the reader's options: no space
 * trimming, CR and LF end rows, CSV_EMPTY_IS_NULL) reduced to the five states
 * that decide where rows end; it skips the bytes that cannot change its state
 * (anything but quote, delimiter, CR and LF) in a tight loop. The reader cuts
 * its own rows at the same places because it runs the same machine.
 */
#include "pipeline/rows/split.h"

#include <errno.h>     /* errno for open/pread failures */
#include <fcntl.h>     /* open */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* malloc, free, strtoul */
#include <string.h>    /* strchr, strstr, strlen, memcpy, strerror */
#include <unistd.h>    /* pread, close */

/* ---- --split I/N ---- */

static bool parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out)
{
    if (len == 0 || len > 9)
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* The schedulers' index variables, in the order they are read: the first
 * that is set (and not empty) is the worker's. The count of parts is never
 * taken from the scheduler (SLURM_ARRAY_TASK_COUNT, the array size): a task
 * resubmitted alone (`sbatch --array=2`) sees a count of 1, and a worker
 * that took it would read another part than its peers. */
static const struct {
    const char *name;
    unsigned base;      /* the first worker's value */
    const char *what;
    /* how a job gets N workers: before, a number (N, or N - 1 when last is
     * set), after */
    const char *before, *after;
    bool last;
} index_vars[] = {
    { "AWS_BATCH_JOB_ARRAY_INDEX", 0, "AWS Batch array job index",
      "an array job of --array-properties size=", "", false },
    { "JOB_COMPLETION_INDEX", 0, "Kubernetes Indexed Job completion index",
      "an Indexed Job of completions: ", "", false },
    { "SLURM_ARRAY_TASK_ID", 0, "Slurm job array task id", "sbatch --array=0-", "", true },
    { "PARALLEL_SEQ", 1, "GNU parallel job sequence number", "", " parallel jobs", false },
};

el_err el_split_parse(const char *arg, el_split_env_fn env, el_split *out, el_diag *diag)
{
    out->index = out->count = 0;
    out->from = NULL;
    const char *slash = strchr(arg, '/');
    unsigned long n, i;
    if (!slash || !parse_uint(slash + 1, strlen(slash + 1), EL_SPLIT_MAX_PARTS, &n) || n == 0)
        return el_diag_set(diag, EL_EUSAGE, "--split takes I/N or auto/N (N a count of parts "
                           "from 1 to %u), not '%s'", EL_SPLIT_MAX_PARTS, arg);
    size_t ilen = (size_t)(slash - arg);
    if (ilen == 4 && strncmp(arg, "auto", 4) == 0) {
        for (size_t k = 0; k < sizeof index_vars / sizeof index_vars[0]; k++) {
            const char *v = env ? env(index_vars[k].name) : NULL;
            if (!v || !*v)
                continue;
            unsigned long base = index_vars[k].base;
            if (!parse_uint(v, strlen(v), EL_SPLIT_MAX_PARTS, &i) || i < base ||
                i - base >= n) {
                return el_diag_set(diag, EL_EUSAGE, "--split %s: %s=%s (the %s) is not a part "
                                   "of %lu: it must be %lu to %lu (%s%lu%s)", arg,
                                   index_vars[k].name, v, index_vars[k].what, n, base,
                                   n - 1 + base, index_vars[k].before,
                                   index_vars[k].last ? n - 1 : n, index_vars[k].after);
            }
            out->index = (unsigned)(i - base);
            out->count = (unsigned)n;
            out->from = index_vars[k].name;
            return EL_OK;
        }
        return el_diag_set(diag, EL_EUSAGE, "--split %s: none of AWS_BATCH_JOB_ARRAY_INDEX, "
                           "JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or PARALLEL_SEQ is set; "
                           "give the part as I/N", arg);
    }
    if (!parse_uint(arg, ilen, EL_SPLIT_MAX_PARTS, &i) || i == 0 || i > n)
        return el_diag_set(diag, EL_EUSAGE, "--split %s: the part must be 1 to %lu (or auto)",
                           arg, n);
    out->index = (unsigned)(i - 1);
    out->count = (unsigned)n;
    return EL_OK;
}

/* ---- per-worker file names ---- */

char *el_split_path(const char *path, const el_split *s)
{
    char num_i[16], num_n[16];
    snprintf(num_i, sizeof num_i, "%u", s->index + 1);
    snprintf(num_n, sizeof num_n, "%u", s->count);
    size_t len = strlen(path);
    bool placeholder = strstr(path, "{i}") != NULL;
    /* worst case: every 3-byte placeholder becomes a number, plus the suffix */
    size_t cap = len / 3 * (sizeof num_i) + len + 2 * sizeof num_i + 8;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t o = 0;
    if (placeholder) {
        for (size_t k = 0; k < len;) {
            const char *rep = NULL;
            if (strncmp(path + k, "{i}", 3) == 0)
                rep = num_i;
            else if (strncmp(path + k, "{n}", 3) == 0)
                rep = num_n;
            if (rep) {
                size_t rl = strlen(rep);
                memcpy(out + o, rep, rl);
                o += rl;
                k += 3;
            } else {
                out[o++] = path[k++];
            }
        }
        out[o] = '\0';
        return out;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - path) : len;
    snprintf(out, cap, "%.*s.%s-of-%s%s", (int)stem, path, num_i, num_n, path + stem);
    return out;
}

/* ---- inputs ---- */

el_split_input el_split_input_of(const char *path, const el_reader_opts *ropts,
                                 el_format format, el_input *raw)
{
    bool tsv = format == EL_FMT_TSV;
    return (el_split_input){
        .path = path, .size = el_input_raw_size(raw),
        /* s3:// objects go whole to one part: the byte-range reader opens
         * local files only (ranged S3 parts are not wired yet) */
        .splittable = (format == EL_FMT_CSV || tsv) && el_input_seekable(raw) &&
                      strncmp(path, "s3://", 5) != 0 &&
                      el_input_compression(raw) == EL_COMP_NONE && !ropts->escape,
        .delimiter = (unsigned char)(ropts->delimiter ? ropts->delimiter : (tsv ? '\t' : ',')),
        .quote = tsv ? 0xFF : '"', .header = ropts->columns == NULL, .format = format
    };
}

/* ---- the scanner ---- */

/* libcsv's parser states, split by the `quoted` flag where it matters. */
enum { ST_ROW = 0, ST_FIELD_NOT = 1, ST_UNQUOTED = 2, ST_QUOTED = 3, ST_MIGHT_END = 4 };

#define SCAN_BLOCK (1u << 20)

typedef struct scanner {
    unsigned char delim, quote;
    unsigned char special[256]; /* 1 for the bytes that can change the state */
    int state;
    uint64_t pos;      /* bytes consumed */
    uint64_t lines;    /* newlines consumed */
    uint64_t records;  /* rows ended */
} scanner;

static bool is_term(unsigned char c) { return c == '\r' || c == '\n'; }

/* Consumes bytes of p[0..n) until just after a newline that leaves the
 * parser between rows (a candidate record start) at or after file offset
 * `from`, or to the end. Returns the bytes consumed; *hit tells which. */
static size_t scan_block(scanner *sc, const unsigned char *p, size_t n, uint64_t from,
                         bool *hit)
{
    size_t i = 0;
    int st = sc->state;
    const unsigned char d = sc->delim, q = sc->quote;
    *hit = false;
    while (i < n) {
        if (st == ST_UNQUOTED || st == ST_QUOTED)
            while (i < n && !sc->special[p[i]])
                i++;
        if (i == n)
            break;
        unsigned char c = p[i++];
        switch (st) {
        case ST_ROW:
        case ST_FIELD_NOT: /* libcsv's order: terminator, delimiter, quote */
            if (is_term(c)) {
                if (st == ST_FIELD_NOT)
                    sc->records++;
                st = ST_ROW;
            } else if (c == d) {
                st = ST_FIELD_NOT;
            } else if (c == q) {
                st = ST_QUOTED;
            } else {
                st = ST_UNQUOTED;
            }
            break;
        case ST_UNQUOTED: /* quote (a literal here), delimiter, terminator */
            if (c == q) {
                /* stays */
            } else if (c == d) {
                st = ST_FIELD_NOT;
            } else if (is_term(c)) {
                sc->records++;
                st = ST_ROW;
            }
            break;
        case ST_QUOTED:
            if (c == q)
                st = ST_MIGHT_END;
            break;
        case ST_MIGHT_END: /* delimiter, terminator, then quote or else: back inside */
            if (c == d) {
                st = ST_FIELD_NOT;
            } else if (is_term(c)) {
                sc->records++;
                st = ST_ROW;
            } else {
                st = ST_QUOTED;
            }
            break;
        }
        if (c == '\n') {
            sc->lines++;
            if (st == ST_ROW && sc->pos + i >= from) {
                *hit = true;
                break;
            }
        }
    }
    sc->state = st;
    sc->pos += i;
    return i;
}

static el_err read_at(int fd, const char *path, void *buf, size_t n, uint64_t off,
                      size_t *got, el_diag *diag)
{
    ssize_t r;
    do {
        r = pread(fd, buf, n, (off_t)off);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return el_diag_set(diag, EL_EIO, "cannot read %s: %s", path, strerror(errno));
    *got = (size_t)r;
    return EL_OK;
}

el_err el_split_scan(const el_split_input *in, const uint64_t *targets, size_t nt,
                     uint64_t *cut, uint64_t *lines, uint64_t *head, uint64_t *head_lines,
                     el_diag *diag)
{
    *head = *head_lines = 0;
    size_t t = 0;
    while (t < nt && targets[t] == 0) {
        cut[t] = lines[t] = 0;
        t++;
    }
    if (t == nt && !in->header)
        return EL_OK;
    int fd = open(in->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return el_diag_set(diag, EL_EIO, "cannot open %s: %s", in->path, strerror(errno));
    unsigned char *buf = malloc(SCAN_BLOCK);
    if (!buf) {
        close(fd);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    scanner sc = { .delim = in->delimiter, .quote = in->quote, .state = ST_ROW };
    sc.special[in->delimiter] = sc.special[in->quote] = 1;
    sc.special['\r'] = sc.special['\n'] = 1;
    bool head_found = !in->header;
    el_err err = EL_OK;
    size_t len = 0, at = 0;   /* buf holds file bytes [sc.pos - at, sc.pos - at + len) */
    uint64_t buf_start = 0;
    /* the reader skips a byte order mark at the file's start */
    err = read_at(fd, in->path, buf, SCAN_BLOCK, 0, &len, diag);
    if (!err && len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF) {
        at = 3;
        sc.pos = 3;
    }
    while (!err && (t < nt || !head_found)) {
        if (at == len) {
            buf_start += len;
            at = 0;
            err = read_at(fd, in->path, buf, SCAN_BLOCK, buf_start, &len, diag);
            if (err)
                break;
            if (len == 0) { /* the end: every remaining target gets the file's end */
                if (!head_found) {
                    *head = sc.pos;
                    *head_lines = sc.lines;
                }
                for (; t < nt; t++) {
                    cut[t] = sc.pos;
                    lines[t] = sc.lines;
                }
                break;
            }
        }
        bool hit;
        /* no stop before the next target, once the header's end is known */
        uint64_t from = head_found && t < nt ? targets[t] : 0;
        at += scan_block(&sc, buf + at, len - at, from, &hit);
        if (!hit)
            continue;
        if (!head_found) {
            if (sc.records == 0)
                continue; /* blank lines before the header */
            head_found = true;
            *head = sc.pos;
            *head_lines = sc.lines;
        }
        if (!in->header) {
            /* the reader would take a BOM here for the stream's own */
            unsigned char bom[3];
            size_t got = 0;
            if (at + 3 <= len) {
                memcpy(bom, buf + at, 3);
                got = 3;
            } else {
                err = read_at(fd, in->path, bom, 3, sc.pos, &got, diag);
            }
            if (!err && got == 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF)
                continue;
        }
        while (!err && t < nt && targets[t] <= sc.pos) {
            cut[t] = sc.pos;
            lines[t] = sc.lines;
            t++;
        }
    }
    free(buf);
    close(fd);
    return err;
}

/* ---- the parts ---- */

/* floor(total * k / n) without overflow. */
static uint64_t nominal(uint64_t total, unsigned k, unsigned n)
{
    return total / n * k + total % n * k / n;
}

/* The input holding global byte b (sizes > 0), and its start. */
static size_t holder(const el_split_input *in, size_t n, uint64_t b, uint64_t *start)
{
    uint64_t g = 0;
    for (size_t i = 0; i < n; i++) {
        if (b < g + in[i].size) {
            *start = g;
            return i;
        }
        g += in[i].size;
    }
    *start = g;
    return n;
}

el_err el_split_assign(const el_split *s, const el_split_input *in, size_t n,
                       el_split_part *parts, el_diag *diag)
{
    if (s->count == 0 || s->index >= s->count)
        return el_diag_set(diag, EL_EUSAGE, "no part %u of %u", s->index + 1, s->count);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i].size;
    /* this worker's cuts, global offsets; with the newline counts and the
     * header end of the file each falls in, for a range that starts there */
    uint64_t c[2], c_lines[2] = { 0, 0 }, c_head[2] = { 0, 0 }, c_head_lines[2] = { 0, 0 };
    uint64_t local[2] = { 0, 0 }, base[2] = { 0, 0 };
    size_t c_file[2] = { n, n };
    unsigned ks[2] = { s->index, s->index + 1 };
    for (int e = 0; e < 2; e++) {
        unsigned k = ks[e];
        if (k == 0 || k == s->count || total == 0) {
            c[e] = k == 0 ? 0 : total;
            continue;
        }
        uint64_t b = nominal(total, k, s->count);
        size_t i = holder(in, n, b, &base[e]);
        local[e] = b - base[e];
        if (!in[i].splittable)
            c[e] = local[e] * 2 < in[i].size ? base[e] : base[e] + in[i].size;
        else
            c_file[e] = i;
    }
    for (int e = 0; e < 2; e++) {
        if (c_file[e] == n || (e == 1 && c_file[0] == c_file[1]))
            continue;
        /* both cuts in one file: one scan finds both */
        bool both = e == 0 && c_file[1] == c_file[0];
        uint64_t targets[2] = { local[0], local[1] }, cut[2], lines[2];
        el_err err = el_split_scan(&in[c_file[e]], both ? targets : &local[e], both ? 2 : 1,
                                   cut, lines, &c_head[e], &c_head_lines[e], diag);
        if (err)
            return err;
        for (int k = 0; k < (both ? 2 : 1); k++) {
            int at = both ? k : e;
            c[at] = base[at] + cut[k];
            c_lines[at] = lines[k];
        }
        if (both) {
            c_head[1] = c_head[0];
            c_head_lines[1] = c_head_lines[0];
        }
    }
    uint64_t g = 0;
    for (size_t i = 0; i < n; i++) {
        el_split_part *p = &parts[i];
        memset(p, 0, sizeof *p);
        p->format = in[i].format;
        uint64_t end = g + in[i].size;
        uint64_t x = c[0] > g ? (c[0] < end ? c[0] - g : in[i].size) : 0;
        uint64_t y = c[1] > g ? (c[1] < end ? c[1] - g : in[i].size) : 0;
        if (x >= y) {
            p->kind = EL_SPLIT_NONE;
        } else if (x == 0 && y == in[i].size) {
            p->kind = EL_SPLIT_WHOLE;
        } else {
            p->kind = EL_SPLIT_RANGE;
            p->range.start = x;
            p->range.end = y;
            if (x > 0 && c_file[0] == i) {
                p->range.start_lines = c_lines[0];
                p->range.head = c_head[0];
                p->range.head_lines = c_head_lines[0];
            } else if (x > 0) {
                return el_diag_set(diag, EL_EINTERNAL, "%s: split range without a cut",
                                   in[i].path);
            }
        }
        g = end;
    }
    return EL_OK;
}
