/*
 * extsort.c - runs in memory, sorted in place; runs on disk, merged by a heap.
 *
 * DESIGN: the records are fingerprints and sequence numbers (dedup.h), so
 * the first word is either uniformly spread (a hash) or dense (a sequence):
 * in-place passes of American flag sort, a byte at a time from its top
 * significant bit (at most three, while buckets hold more than 256), leave
 * buckets of a few dozen records, which insertion sort finishes. Heapsort
 * takes any bucket larger than 32, so neither many equal records (one key
 * repeated a million times) nor a skewed first word makes the sort
 * quadratic, and no sort allocates: glibc's qsort, for one, may malloc a
 * copy of the whole array. 1.4 M records of 3 words (a 32 MB run) sort in
 * 70-90 ms on the 2-core machine; one pass over 16 bits at once took twice
 * that (65,536 write positions over 32 MB thrash the cache, 256 do not).
 *
 * Runs are anonymous files (created and unlinked at once), written once in
 * one go and read back in blocks with pread. A merge pass reads up to
 * `fanin` runs through a heap of their heads; the fan-in and the block size
 * come from the budget: blocks of up to 1 MB, at least two runs a pass, at
 * most MAX_FANIN open files. Each pass but the last writes a new run; the
 * last one is what el_extsort_next draws from.
 */
#include "pipeline/extmem/extsort.h"

#include <errno.h>     /* errno, EINTR */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* malloc, free */
#include <string.h>    /* memcpy, strerror, strdup */
#include <unistd.h>    /* write, pread, close, unlink, mkstemp */

#include "common/file.h"   /* EL_PATH_BYTES */
#include "common/vec.h"  /* el_grow: the list of runs */

#define RADIX_MIN 4096       /* below: comparison sorts alone */
#define INSERTION_MAX 32
#define MAX_FANIN 256
#define MAX_BLOCK ((size_t)1 << 20)
#define FIRST_BUFFER 4096    /* records: the buffer doubles from here to the budget */

typedef struct run {
    int fd;
    uint64_t nrecs;
} run;

typedef struct reader {
    int fd;
    uint64_t off;            /* next byte to read in the file */
    uint64_t left;           /* records in the file not yet read into buf */
    uint64_t *buf;
    size_t n, pos, cap;      /* records in buf, the next one, room */
} reader;

struct el_extsort {
    size_t words, rec_bytes, mem_max;
    char *dir;
    uint64_t *buf;           /* records gathering (add) or sorted (in-memory next) */
    size_t n, cap;
    run *runs;
    size_t nruns, runs_cap;
    uint64_t count, runs_written, bytes_spilled;
    el_err broken;
    bool finished;
    size_t pos;              /* in-memory iteration */
    reader *rd;              /* the last pass: its readers, and a heap of them */
    size_t nrd;
    size_t *heap, nheap;
};

/* ---- sorting in memory ---- */

static inline int cmp_rec(const uint64_t *a, const uint64_t *b, size_t w)
{
    for (size_t i = 0; i < w; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* A record's words; a loop of at most four, not a memcpy call per record. */
static inline void copy_rec(uint64_t *dst, const uint64_t *src, size_t w)
{
    for (size_t i = 0; i < w; i++)
        dst[i] = src[i];
}

static inline void swap_rec(uint64_t *a, uint64_t *b, size_t w)
{
    for (size_t i = 0; i < w; i++) {
        uint64_t t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

static void insertion_sort(uint64_t *r, size_t n, size_t w)
{
    uint64_t tmp[EL_EXTSORT_MAX_WORDS];
    for (size_t i = 1; i < n; i++) {
        if (cmp_rec(r + (i - 1) * w, r + i * w, w) <= 0)
            continue;
        copy_rec(tmp, r + i * w, w);
        size_t j = i;
        while (j > 0 && cmp_rec(r + (j - 1) * w, tmp, w) > 0) {
            copy_rec(r + j * w, r + (j - 1) * w, w);
            j--;
        }
        copy_rec(r + j * w, tmp, w);
    }
}

static void sift_down(uint64_t *r, size_t root, size_t n, size_t w)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n)
            return;
        if (c + 1 < n && cmp_rec(r + c * w, r + (c + 1) * w, w) < 0)
            c++;
        if (cmp_rec(r + root * w, r + c * w, w) >= 0)
            return;
        swap_rec(r + root * w, r + c * w, w);
        root = c;
    }
}

static void heap_sort(uint64_t *r, size_t n, size_t w)
{
    for (size_t i = n / 2; i-- > 0;)
        sift_down(r, i, n, w);
    for (size_t end = n; end-- > 1;) {
        swap_rec(r, r + end * w, w);
        sift_down(r, 0, end, w);
    }
}

static void small_sort(uint64_t *r, size_t n, size_t w)
{
    if (n <= INSERTION_MAX)
        insertion_sort(r, n, w);
    else
        heap_sort(r, n, w);
}

/* One in-place pass of American flag sort over bits [shift, shift+8) of the
 * first word (the bits above are equal within r), then the same on each
 * bucket one byte lower while buckets are large; small buckets and the
 * last level go to small_sort. */
static void flag_sort(uint64_t *r, size_t n, size_t w, unsigned shift, int levels)
{
    if (n <= RADIX_MIN / 16 || levels == 0) {
        small_sort(r, n, w);
        return;
    }
    size_t end[256] = { 0 }, next[256];
    for (size_t i = 0; i < n; i++)
        end[(r[i * w] >> shift) & 255]++;
    size_t sum = 0;
    for (size_t b = 0; b < 256; b++) {
        next[b] = sum;
        sum += end[b];
        end[b] = sum;
    }
    /* each record is moved straight to its bucket (cycle leader) */
    for (size_t b = 0; b < 256; b++) {
        while (next[b] < end[b]) {
            uint64_t *here = r + next[b] * w;
            size_t k = (size_t)((here[0] >> shift) & 255);
            if (k == b)
                next[b]++;
            else
                swap_rec(here, r + next[k]++ * w, w);
        }
    }
    size_t start = 0;
    for (size_t b = 0; b < 256; b++) {
        if (shift >= 8)
            flag_sort(r + start * w, end[b] - start, w, shift - 8, levels - 1);
        else
            small_sort(r + start * w, end[b] - start, w);
        start = end[b];
    }
}

void el_extsort_sort_records(uint64_t *recs, size_t n, size_t words)
{
    if (n < 2)
        return;
    if (n < RADIX_MIN) {
        small_sort(recs, n, words);
        return;
    }
    uint64_t any = 0;
    for (size_t i = 0; i < n; i++)
        any |= recs[i * words];
    unsigned bits = any ? 64u - (unsigned)__builtin_clzll(any) : 0;
    unsigned shift = bits > 8 ? bits - 8 : 0;
    flag_sort(recs, n, words, shift, 3);
}

/* ---- runs on disk ---- */

static el_err io_fail(el_extsort *s, el_diag *diag, const char *what)
{
    return el_diag_set(diag, EL_EIO, "cannot %s a sort run in %s: %s", what, s->dir,
                       strerror(errno));
}

static el_err new_run_file(el_extsort *s, int *fd, el_diag *diag)
{
    char path[EL_PATH_BYTES];
    int n = snprintf(path, sizeof path, "%s/.edgeload-sort-XXXXXX", s->dir);
    if (n < 0 || (size_t)n >= sizeof path)
        return el_diag_set(diag, EL_EUSAGE, "spill directory path too long: %s", s->dir);
    *fd = mkstemp(path);
    if (*fd < 0)
        return io_fail(s, diag, "create");
    unlink(path); /* anonymous from here on: closing it frees the space */
    return EL_OK;
}

static el_err write_all(int fd, const void *p, size_t len)
{
    const char *b = p;
    while (len > 0) {
        ssize_t w = write(fd, b, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return EL_EIO;
        b += w;
        len -= (size_t)w;
    }
    return EL_OK;
}

static el_err add_run(el_extsort *s, int fd, uint64_t nrecs, el_diag *diag)
{
    run *v = el_grow(s->runs, &s->runs_cap, s->nruns + 1, sizeof *v, 16);
    if (!v) {
        close(fd);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s->runs = v;
    s->runs[s->nruns++] = (run){ fd, nrecs };
    s->runs_written++;
    s->bytes_spilled += nrecs * s->rec_bytes;
    return EL_OK;
}

/* Sorts the buffer and writes it as a run; the buffer is then empty. */
static el_err spill(el_extsort *s, el_diag *diag)
{
    el_extsort_sort_records(s->buf, s->n, s->words);
    int fd;
    el_err err = new_run_file(s, &fd, diag);
    if (err)
        return err;
    if (write_all(fd, s->buf, s->n * s->rec_bytes)) {
        err = io_fail(s, diag, "write");
        close(fd);
        return err;
    }
    err = add_run(s, fd, s->n, diag);
    s->n = 0;
    return err;
}

static el_err reader_fill(el_extsort *s, reader *r, el_diag *diag)
{
    size_t want = r->left < r->cap ? (size_t)r->left : r->cap;
    size_t bytes = want * s->rec_bytes, got = 0;
    char *dst = (char *)r->buf;
    while (got < bytes) {
        ssize_t n = pread(r->fd, dst + got, bytes - got, (off_t)(r->off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return io_fail(s, diag, "read back");
        }
        got += (size_t)n;
    }
    r->off += bytes;
    r->left -= want;
    r->n = want;
    r->pos = 0;
    return EL_OK;
}

static const uint64_t *reader_head(const el_extsort *s, const reader *r)
{
    return r->buf + r->pos * s->words;
}

static bool heap_less(const el_extsort *s, size_t a, size_t b)
{
    return cmp_rec(reader_head(s, &s->rd[a]), reader_head(s, &s->rd[b]), s->words) < 0;
}

static void heap_down(el_extsort *s, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap)
            return;
        if (c + 1 < s->nheap && heap_less(s, s->heap[c + 1], s->heap[c]))
            c++;
        if (!heap_less(s, s->heap[c], s->heap[i]))
            return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[c];
        s->heap[c] = t;
        i = c;
    }
}

static void free_readers(el_extsort *s)
{
    for (size_t i = 0; i < s->nrd; i++) {
        free(s->rd[i].buf);
        if (s->rd[i].fd >= 0)
            close(s->rd[i].fd);
    }
    free(s->rd);
    free(s->heap);
    s->rd = NULL;
    s->heap = NULL;
    s->nrd = s->nheap = 0;
}

/* Sets up readers over runs[first .. first+k) (their files pass to the
 * readers) with `block` records each, and the heap of their heads. */
static el_err open_readers(el_extsort *s, size_t first, size_t k, size_t block, el_diag *diag)
{
    s->rd = calloc(k, sizeof *s->rd);
    s->heap = calloc(k, sizeof *s->heap);
    if (!s->rd || !s->heap) {
        free(s->rd);
        free(s->heap);
        s->rd = NULL;
        s->heap = NULL;
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s->nrd = k;
    for (size_t i = 0; i < k; i++)
        s->rd[i].fd = -1;
    for (size_t i = 0; i < k; i++) {
        reader *r = &s->rd[i];
        r->fd = s->runs[first + i].fd;
        s->runs[first + i].fd = -1;
        r->left = s->runs[first + i].nrecs;
        r->cap = block;
        r->buf = malloc(block * s->rec_bytes);
        if (!r->buf)
            return el_diag_set(diag, EL_ENOMEM, "out of memory");
        el_err err = reader_fill(s, r, diag);
        if (err)
            return err;
        if (r->n)
            s->heap[s->nheap++] = i;
    }
    for (size_t i = s->nheap / 2; i-- > 0;)
        heap_down(s, i);
    return EL_OK;
}

/* Takes the smallest head into rec; *got false when every reader is done. */
static el_err merge_next(el_extsort *s, uint64_t *rec, bool *got, el_diag *diag)
{
    *got = false;
    if (s->nheap == 0)
        return EL_OK;
    reader *r = &s->rd[s->heap[0]];
    copy_rec(rec, reader_head(s, r), s->words);
    *got = true;
    if (++r->pos == r->n) {
        if (r->left) {
            el_err err = reader_fill(s, r, diag);
            if (err)
                return err;
        } else {
            s->heap[0] = s->heap[--s->nheap];
        }
    }
    heap_down(s, 0);
    return EL_OK;
}

/* Records a buffer of `bytes` holds (at least 1). */
static size_t records_in(const el_extsort *s, size_t bytes)
{
    size_t n = bytes / s->rec_bytes;
    return n ? n : 1;
}

/* How many runs one pass reads: as many as blocks of 64 KB (or three
 * blocks, for a tiny budget) the budget holds, one kept for the output. */
static size_t fanin(const el_extsort *s)
{
    size_t f = s->mem_max / (64u * 1024u);
    f = f > 1 ? f - 1 : 2;
    return f > MAX_FANIN ? MAX_FANIN : f < 2 ? 2 : f;
}

/* One pass: merges runs[first .. first+k) into one new run in their place. */
static el_err merge_group(el_extsort *s, size_t first, size_t k, el_diag *diag)
{
    size_t block_bytes = s->mem_max / (k + 1);
    if (block_bytes > MAX_BLOCK)
        block_bytes = MAX_BLOCK;
    size_t block = records_in(s, block_bytes);
    uint64_t total = 0;
    for (size_t i = 0; i < k; i++)
        total += s->runs[first + i].nrecs;
    int fd = -1;
    uint64_t *out = malloc(block * s->rec_bytes);
    el_err err = out ? EL_OK : el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (!err)
        err = new_run_file(s, &fd, diag);
    if (!err)
        err = open_readers(s, first, k, block, diag);
    size_t n = 0;
    bool got = true;
    while (!err && got) {
        err = merge_next(s, out + n * s->words, &got, diag);
        if (!err && got)
            n++;
        if (!err && (n == block || (!got && n > 0))) {
            if (write_all(fd, out, n * s->rec_bytes))
                err = io_fail(s, diag, "write");
            n = 0;
        }
    }
    free_readers(s);
    free(out);
    if (err) {
        if (fd >= 0)
            close(fd);
        return err;
    }
    /* the group's entries go; the new run takes the first's place */
    for (size_t i = 0; i < k; i++)
        if (s->runs[first + i].fd >= 0)
            close(s->runs[first + i].fd);
    memmove(s->runs + first + 1, s->runs + first + k, (s->nruns - first - k) * sizeof *s->runs);
    s->nruns -= k - 1;
    s->runs[first] = (run){ fd, total };
    s->runs_written++;
    s->bytes_spilled += total * s->rec_bytes;
    return EL_OK;
}

/* ---- the API ---- */

el_err el_extsort_new(size_t words, size_t mem_max, const char *dir, el_extsort **out,
                      el_diag *diag)
{
    *out = NULL;
    if (words < 1 || words > EL_EXTSORT_MAX_WORDS)
        return el_diag_set(diag, EL_EUSAGE, "a sort record is 1 to %d words, not %zu",
                           EL_EXTSORT_MAX_WORDS, words);
    if (mem_max < EL_EXTSORT_MIN_MEMORY)
        mem_max = EL_EXTSORT_MIN_MEMORY;
    el_extsort *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir && dir[0] ? dir : "."))) {
        free(s);
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    }
    s->words = words;
    s->rec_bytes = words * sizeof(uint64_t);
    s->mem_max = mem_max;
    *out = s;
    return EL_OK;
}

el_err el_extsort_add(el_extsort *s, const uint64_t *rec, el_diag *diag)
{
    if (s->broken)
        return el_diag_set(diag, s->broken, "sort stopped after an earlier error");
    if (s->finished)
        return el_diag_set(diag, EL_EINTERNAL, "sort: add after finish");
    el_err err = EL_OK;
    if (s->n == s->cap) {
        size_t most = records_in(s, s->mem_max);
        if (s->cap < most) {
            size_t cap = s->cap ? s->cap * 2 : FIRST_BUFFER;
            if (cap > most)
                cap = most;
            uint64_t *b = realloc(s->buf, cap * s->rec_bytes);
            if (!b)
                err = el_diag_set(diag, EL_ENOMEM, "out of memory");
            else {
                s->buf = b;
                s->cap = cap;
            }
        } else {
            err = spill(s, diag);
        }
    }
    if (err) {
        s->broken = err;
        return err;
    }
    copy_rec(s->buf + s->n * s->words, rec, s->words);
    s->n++;
    s->count++;
    return EL_OK;
}

el_err el_extsort_finish(el_extsort *s, el_diag *diag)
{
    if (s->broken)
        return el_diag_set(diag, s->broken, "sort stopped after an earlier error");
    if (s->finished)
        return EL_OK;
    s->finished = true;
    el_err err = EL_OK;
    if (s->nruns == 0) {
        el_extsort_sort_records(s->buf, s->n, s->words);
    } else {
        if (s->n)
            err = spill(s, diag);
        free(s->buf);
        s->buf = NULL;
        s->cap = 0;
        size_t f = fanin(s);
        while (!err && s->nruns > f) {
            /* merge groups of f from the front until one pass can read all */
            for (size_t first = 0; !err && first < s->nruns && s->nruns > f; first++) {
                size_t k = s->nruns - first < f ? s->nruns - first : f;
                if (k >= 2)
                    err = merge_group(s, first, k, diag);
            }
        }
        if (!err) {
            size_t block_bytes = s->mem_max / s->nruns;
            if (block_bytes > MAX_BLOCK)
                block_bytes = MAX_BLOCK;
            err = open_readers(s, 0, s->nruns, records_in(s, block_bytes), diag);
        }
    }
    if (err)
        s->broken = err;
    return err;
}

el_err el_extsort_next(el_extsort *s, uint64_t *rec, bool *got, el_diag *diag)
{
    *got = false;
    if (s->broken)
        return el_diag_set(diag, s->broken, "sort stopped after an earlier error");
    if (!s->finished)
        return el_diag_set(diag, EL_EINTERNAL, "sort: next before finish");
    if (s->nruns == 0) {
        if (s->pos < s->n) {
            copy_rec(rec, s->buf + s->pos * s->words, s->words);
            s->pos++;
            *got = true;
        }
        return EL_OK;
    }
    el_err err = merge_next(s, rec, got, diag);
    if (err)
        s->broken = err;
    return err;
}

uint64_t el_extsort_count(const el_extsort *s)
{
    return s->count;
}

uint64_t el_extsort_runs_written(const el_extsort *s)
{
    return s->runs_written;
}

uint64_t el_extsort_bytes_spilled(const el_extsort *s)
{
    return s->bytes_spilled;
}

void el_extsort_free(el_extsort *s)
{
    if (!s)
        return;
    free_readers(s);
    for (size_t i = 0; i < s->nruns; i++)
        if (s->runs[i].fd >= 0)
            close(s->runs[i].fd);
    free(s->runs);
    free(s->buf);
    free(s->dir);
    free(s);
}
