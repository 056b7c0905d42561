/*
 * dedup.c - fingerprints sorted, groups read off, losers sorted again.
 *
 * DESIGN: a load through the API leaves the last row of each key (a later
 * put replaces an earlier one); DynamoDB's Import from S3 keeps an
 * arbitrary one of several items with one key and does not say so. So
 * whatever writes items for an import must itself keep only the last row
 * of each key, and an input may be far larger than memory and read only
 * once (standard input). Keys are therefore reduced to fingerprints
 * (88 bits of SipHash-2-4-128 under a key drawn per run: a keyed pseudo-random
 * function, so a hostile input cannot make two keys collide, as it could
 * with FNV or an unkeyed fast hash) and handed with the row number to an
 * external sort. Sorted by (fingerprint, row), the rows of one key are
 * adjacent and in input order: all but the last are duplicates. Their
 * numbers come out in fingerprint order, so a second sort puts them in row
 * order for the writer's single pass. The budget is split between the two
 * sorts when both are used (the second fills while the first is merged).
 */
#include "pipeline/extmem/dedup.h"

#include <stdlib.h>      /* calloc, free */
#include <sys/random.h>  /* getrandom: the run's hash key */

#include "common/hash.h"      /* el_siphash128 */
#include "pipeline/extmem/extsort.h"

/* A record: the fingerprint's first 64 bits; its next 24 bits above the
 * row's number (40 bits: a trillion rows); the payload when kept. Sorted
 * word by word, the rows of one fingerprint are adjacent and in row order.
 * 88 bits of fingerprint: two of 10^9 distinct keys share one with
 * probability ~2 x 10^-9 (10^18 pairs / 2^89); 16-byte records sort and
 * spill a third faster than 24-byte ones. */
#define ROW_BITS 40
#define ROW_MASK ((UINT64_C(1) << ROW_BITS) - 1)

struct el_dedup {
    uint64_t key[2];
    bool keep_drops, with_payload, finished;
    size_t words;            /* 2 (fingerprint, row) or 3 (+ payload) */
    el_extsort *fps;         /* (fp0, fp1 << 40 | row[, payload]) */
    el_extsort *drops;       /* (row) of the superseded */
    uint64_t rows, duplicates, kept_payload;
    uint64_t runs, spilled;  /* of both sorts */
    el_err broken;
};

el_err el_dedup_new(const el_dedup_opts *o, el_dedup **out, el_diag *diag)
{
    *out = NULL;
    el_dedup *d = calloc(1, sizeof *d);
    if (!d)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    if (o->hash_key) {
        d->key[0] = o->hash_key[0];
        d->key[1] = o->hash_key[1];
    } else if (getrandom(d->key, sizeof d->key, 0) != (ssize_t)sizeof d->key) {
        free(d);
        return el_diag_set(diag, EL_EIO, "cannot draw a random key for fingerprints");
    }
    d->keep_drops = o->keep_drops;
    d->with_payload = o->with_payload;
    d->words = o->with_payload ? 3 : 2;
    size_t mem = o->mem_max ? o->mem_max : EL_DEDUP_DEFAULT_MEMORY;
    size_t share = o->keep_drops ? mem / 2 : mem;
    el_err err = el_extsort_new(d->words, share, o->dir, &d->fps, diag);
    if (!err && o->keep_drops)
        err = el_extsort_new(1, share, o->dir, &d->drops, diag);
    if (err) {
        el_dedup_free(d);
        return err;
    }
    *out = d;
    return EL_OK;
}

el_err el_dedup_add(el_dedup *d, const void *key, size_t len, uint64_t payload,
                    el_diag *diag)
{
    if (d->broken)
        return el_diag_set(diag, d->broken, "duplicate detection stopped after an earlier "
                           "error");
    if (d->rows > ROW_MASK)
        return el_diag_set(diag, EL_ELIMIT, "more than 2^40 rows to tell duplicates apart");
    uint64_t fp[2], rec[3];
    el_siphash128(d->key, key, len, fp);
    rec[0] = fp[0];
    rec[1] = (fp[1] << ROW_BITS) | d->rows;
    rec[2] = payload;
    el_err err = el_extsort_add(d->fps, rec, diag);
    if (err) {
        d->broken = err;
        return err;
    }
    d->rows++;
    return EL_OK;
}

/* Reads the fingerprints in order and sends every row but the last of
 * each key to the drops. */
static el_err find_duplicates(el_dedup *d, el_diag *diag)
{
    uint64_t prev[3] = { 0, 0, 0 }, cur[3] = { 0, 0, 0 };
    bool have = false, got = true;
    el_err err = EL_OK;
    while (!err) {
        err = el_extsort_next(d->fps, cur, &got, diag);
        if (err)
            break;
        bool same = got && have && cur[0] == prev[0] &&
                    (cur[1] >> ROW_BITS) == (prev[1] >> ROW_BITS);
        if (same) {
            d->duplicates++;
            if (d->drops) {
                uint64_t row = prev[1] & ROW_MASK;
                err = el_extsort_add(d->drops, &row, diag);
            }
        } else if (have) {
            d->kept_payload += prev[2];
        }
        if (!got)
            break;
        prev[0] = cur[0];
        prev[1] = cur[1];
        prev[2] = d->with_payload ? cur[2] : 0;
        have = true;
    }
    return err;
}

el_err el_dedup_finish(el_dedup *d, el_diag *diag)
{
    if (d->broken)
        return el_diag_set(diag, d->broken, "duplicate detection stopped after an earlier "
                           "error");
    if (d->finished)
        return EL_OK;
    el_err err = el_extsort_finish(d->fps, diag);
    if (!err)
        err = find_duplicates(d, diag);
    if (d->fps) {
        d->runs += el_extsort_runs_written(d->fps);
        d->spilled += el_extsort_bytes_spilled(d->fps);
    }
    el_extsort_free(d->fps); /* its memory and disk go before the drops are merged */
    d->fps = NULL;
    if (!err && d->drops)
        err = el_extsort_finish(d->drops, diag);
    if (d->drops) {
        d->runs += el_extsort_runs_written(d->drops);
        d->spilled += el_extsort_bytes_spilled(d->drops);
    }
    if (err) {
        d->broken = err;
        return err;
    }
    d->finished = true;
    return EL_OK;
}

uint64_t el_dedup_rows(const el_dedup *d) { return d->rows; }
uint64_t el_dedup_duplicates(const el_dedup *d) { return d->duplicates; }
uint64_t el_dedup_kept_payload(const el_dedup *d) { return d->kept_payload; }
uint64_t el_dedup_runs_spilled(const el_dedup *d) { return d->runs; }
uint64_t el_dedup_bytes_spilled(const el_dedup *d) { return d->spilled; }

el_err el_dedup_next_drop(el_dedup *d, uint64_t *row, bool *got, el_diag *diag)
{
    *got = false;
    if (d->broken)
        return el_diag_set(diag, d->broken, "duplicate detection stopped after an earlier "
                           "error");
    if (!d->finished || !d->drops)
        return el_diag_set(diag, EL_EINTERNAL, "dedup: no list of duplicates to read");
    el_err err = el_extsort_next(d->drops, row, got, diag);
    if (err)
        d->broken = err;
    return err;
}

void el_dedup_free(el_dedup *d)
{
    if (!d)
        return;
    el_extsort_free(d->fps);
    el_extsort_free(d->drops);
    free(d);
}
