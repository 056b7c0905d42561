/*
 * split.h - `--split I/N`: the I-th of N disjoint parts of a load's input set,
 * so N workers started by any scheduler (an AWS Batch array job, a Kubernetes
 * Indexed Job, a Slurm job array, GNU parallel) together read every input row
 * exactly once.
 *
 * The parts. The inputs, in the order the load takes them (the command line's
 * INPUTs, else each source's "input" in mapping order), are laid end to end:
 * input i covers the bytes [G_i, G_i + size_i) of a space of T bytes (sizes
 * as stored: compressed bytes for .zst/.gz). Part k (0-based) is [c_k,
 * c_k+1), with c_0 = 0, c_N = T, and each inner cut c_k placed from the
 * nominal boundary b_k = floor(T * k / N):
 *
 *   - b_k inside a splittable input (an uncompressed regular CSV or TSV
 *     file): c_k is the first record start at or after b_k in that file (its
 *     end when none). Rows are never cut: a row belongs to the part holding its
 *     first byte.
 *   - b_k inside any other input (compressed, a SQL dump, standard input, a
 *     CSV read with --escape): c_k is that input's start or end, whichever is
 *     nearer to b_k (its end on a tie), so such an input is read whole by
 *     exactly one worker.
 *
 * The cuts are monotone (c_k <= c_k+1), so the parts are disjoint and cover
 * every byte; each worker computes only its own two cuts, and every worker
 * computes the same cut for the same b_k (a pure function of the files).
 *
 * Record starts. A byte offset p of a CSV/TSV file is a record start when the
 * byte before it is a newline and the parser is between rows after the bytes
 * [0, p): not inside a quoted field (which may hold newlines). Counting
 * quotes is not enough (libcsv takes a quote inside an unquoted field as a
 * literal), so the scanner replays libcsv's own state machine with the
 * reader's settings (delimiter, quote; TSV has none; a leading BOM skipped),
 * and a unit test checks it against libcsv on random bytes. Without a header
 * row, a record start whose bytes begin with a BOM is not used (the reader
 * would take those bytes for its stream's BOM). Finding the
 * first record start at or after b needs the parser state at b, so the file's
 * prefix [0, b) is scanned once, sequentially (pread in 1 MiB blocks, the
 * bytes that cannot change the state skipped in a tight loop; both cuts of a
 * worker in one pass when they fall in the same file): worker k of N reads up
 * to k/N of a cut file before its own rows. Measured here: about 850 MB per
 * CPU-second on a 300 MB CSV with quoted fields (page cache), so 100 GB cost
 * the last worker about two minutes of one core, against a load that
 * DynamoDB's write limit holds to hours; it is documented
 * in docs/scale-out.md. With a header row the header comes from the
 * file's start ([0, head), head = the first record start after the header
 * record) and the worker's rows keep the file's real line numbers and byte
 * offsets, in the rejects file and in checkpoints.
 *
 * SQL dumps are split as whole inputs only: a cut inside a dump would need
 * the lexer's state (strings with newlines, COPY blocks, which table's
 * statements) at an arbitrary offset, and a dump's CREATE TABLE is not at the
 * start of the range. A large dump is better exported as several files, or
 * as CSV.
 *
 * The run (pipeline/load/load_run.c, cmd/cmd_load.c). Every worker opens every
 * input, so a schema or mapping error stops each worker alike, and reads
 * only its part. Shard choices come from one plan file made by `edgeload
 * plan --plan-out` over the whole input: --plan is required with hot
 * sources, since a worker counting its own part would shard other keys than
 * its peers. Counters are not set by workers (a part's counts would
 * overwrite the totals): one `edgeload counters` run after all of them sets
 * them. Checkpoint, rejects and stats files are per worker (el_split_path);
 * a checkpoint records the worker's parts, so --resume refuses another
 * worker's. Every worker writes the shard directory items: the same items,
 * an idempotent overwrite. `verify --split` checks the items of the same
 * part (pipeline/verify/verify_run.c); `counters` refuses --split.
 *
 * Pure policy plus one sequential scanner; no threads, no network.
 */
#ifndef EL_SPLIT_H
#define EL_SPLIT_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/error.h"
#include "formats/reader.h"  /* el_reader_range */

/* Which part this worker reads. count == 0: no split. */
typedef struct el_split {
    unsigned index;      /* 0-based: --split 1/4 is index 0 */
    unsigned count;
    const char *from;    /* the environment variable the index came from
                            (static string), or NULL when given as I/N */
} el_split;

#define EL_SPLIT_MAX_PARTS 100000u

/* Reads a process's environment; getenv in production, a table in tests. */
typedef const char *(*el_split_env_fn)(const char *name);

/*
 * Parses a --split value: "I/N" (1 <= I <= N) or "auto/N", which takes the
 * index from the first of these variables that is set and not empty:
 *   AWS_BATCH_JOB_ARRAY_INDEX  (AWS Batch array job child, 0-based)
 *   JOB_COMPLETION_INDEX       (Kubernetes Indexed Job pod, 0-based)
 *   SLURM_ARRAY_TASK_ID        (Slurm job array task, 0-based: --array=0-(N-1))
 *   PARALLEL_SEQ               (GNU parallel's job sequence number, {#}, 1-based)
 * N is always the one given: never the scheduler's count (a Slurm task
 * resubmitted alone sees SLURM_ARRAY_TASK_COUNT=1). EL_EUSAGE (diag says
 * what is wrong, naming the variable, its value and N) for a malformed
 * value, an index outside 0..N-1 (1..N for PARALLEL_SEQ), or auto with none
 * of them set.
 */
el_err el_split_parse(const char *arg, el_split_env_fn env, el_split *out,
                      el_diag *diag) EL_MUST_USE;

/*
 * The per-worker name of a file option (--checkpoint, --rejects,
 * --stats-json): "{i}" becomes I (1-based) and "{n}" becomes N; a name with
 * no "{i}" gets ".I-of-N" inserted before its last extension
 * ("load.ckpt" -> "load.2-of-4.ckpt", "ckpt" -> "ckpt.2-of-4"). Returns a
 * new string the caller frees, or NULL when out of memory.
 */
char *el_split_path(const char *path, const el_split *s);

/* One input as the split sees it. */
typedef struct el_split_input {
    const char *path;
    uint64_t size;           /* bytes as stored */
    bool splittable;         /* an uncompressed regular CSV/TSV file, no --escape */
    unsigned char delimiter; /* its dialect, as the reader parses it */
    unsigned char quote;     /* '"' for CSV, 0xFF (no quoting) for TSV */
    bool header;             /* the first record is a header row (no --columns) */
    el_format format;        /* the format it reads as (a range is opened as that) */
} el_split_input;

/* How the split sees an input opened with ropts, read as format from raw (an
 * opened input: its size, compression and seekability). path is borrowed. */
el_split_input el_split_input_of(const char *path, const el_reader_opts *ropts,
                                 el_format format, el_input *raw);

typedef enum el_split_kind {
    EL_SPLIT_NONE = 0,       /* no byte of the input is in this part */
    EL_SPLIT_WHOLE,          /* the whole input is */
    EL_SPLIT_RANGE           /* range: a run of whole records (splittable only) */
} el_split_kind;

typedef struct el_split_part {
    el_split_kind kind;
    el_reader_range range;   /* EL_SPLIT_RANGE: for el_reader_open_range */
    el_format format;        /* the input's format, to open the range with */
} el_split_part;

/*
 * This worker's part of each of the n inputs, into parts[0..n). Scans the
 * splittable inputs holding its two cuts (see above). Errors: EL_EIO when a
 * file cannot be read, EL_EUSAGE for a count of 0.
 */
el_err el_split_assign(const el_split *s, const el_split_input *inputs, size_t n,
                       el_split_part *parts, el_diag *diag) EL_MUST_USE;

/*
 * The scanner, for el_split_assign and tests: for each of the nt targets
 * (ascending local offsets), the first record start at or after it in the
 * file (cut[j], and lines[j] = newlines before it; the file's size and its
 * newline count when none), plus *head / *head_lines (the first record start
 * after the header record; 0 without a header). A target of 0 gives 0.
 */
el_err el_split_scan(const el_split_input *in, const uint64_t *targets, size_t nt,
                     uint64_t *cut, uint64_t *lines, uint64_t *head, uint64_t *head_lines,
                     el_diag *diag) EL_MUST_USE;

#endif
