/*
 * incr_round.h - the planning half of `load --incremental`: a round of
 * rows, the counter items they touch, the transactions they are grouped
 * into, and each transaction's TransactWriteItems body. Pure: no network,
 * no threads; pipeline/incremental/incremental.c reads the rows and drives the
 * transactions. For incremental.c and its tests only.
 *
 * A round holds at most EL_INCR_ROUND_ROWS rows, no item key twice (a
 * repeated key starts the next round, so rows of one key keep their order),
 * and owns everything it allocates: incr_round_reset frees a round's
 * content in one go.
 */
#ifndef EL_INCR_ROUND_H
#define EL_INCR_ROUND_H

#include <stdbool.h>  /* bool */
#include <stddef.h>   /* size_t */
#include <stdint.h>   /* uint64_t */

#include "common/buf.h"
#include "common/error.h"
#include "formats/reader.h"
#include "dynamo/ddb_limits.h"   /* EL_DDB_TXN_MAX_ACTIONS */
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/transform.h"

/* The rows a round holds at most. */
#define EL_INCR_ROUND_ROWS 20000

/* A transaction's rows stay under TransactWriteItems' 4 MB. */
#define EL_INCR_TXN_MAX_BYTES (3u * 1024 * 1024)

typedef struct incr_ckref {
    size_t off, len;          /* "PK\0SK\0attribute" in round.ctext */
    size_t item_len;          /* bytes of "PK\0SK" */
    size_t item;              /* index in round.items */
} incr_ckref;

typedef struct incr_row {
    size_t json_off, json_len;
    size_t key_off, key_len;  /* "PK\0SK" in round.keys */
    size_t ck_first, nck;     /* round.cks[ck_first .. +nck) */
    uint64_t line, offset;
    uint64_t tok[2];
    size_t size;              /* DynamoDB's size of the row's item */
    bool del, indexed;
} incr_row;

typedef struct incr_item {
    uint64_t hash;
    size_t ck;                /* a ckref naming this item (for its key text) */
    size_t rows;              /* rows of the round that touch it */
    bool busy;                /* a transaction touching it is with the driver */
    unsigned puts_pending;    /* groups not done that Put or Delete it: the
                                 groups that only ADD to it wait for them */
} incr_item;

typedef struct incr_group {
    size_t *m, n;             /* member rows, in order */
    size_t *items, nitems;    /* counter items touched */
    size_t *puts, nputs;      /* counter items its rows Put or Delete: busy while
                                 it is with the driver, and no ADD to them goes
                                 before it is done (incr_group_waits) */
    unsigned attempt;         /* cancellations by conflict so far (their backoff) */
    unsigned variant;         /* token variant: a new one after a cancellation */
    double not_before;        /* earliest time to submit it again (ms) */
    bool queued;              /* with the request driver (sent, or to be) */
    bool done;
} incr_group;

typedef struct incr_round {
    el_buf json, keys, ctext;
    incr_row *rows;
    size_t nrows, rows_cap;
    incr_ckref *cks;
    size_t ncks, cks_cap;
    incr_item *items;
    size_t nitems, items_cap;
    size_t *imap;             /* open addressing: item index + 1, 0 = empty */
    size_t imap_cap;
    uint64_t *kset;           /* item-key hashes of the round's rows, 0 = empty */
    size_t kset_cap;
    incr_group *groups;
    size_t ngroups, groups_cap;
} incr_round;


/* An empty round (buffers without limit: a round's size is bounded by its
 * row count and EL_INCR_ROUND_JSON_BYTES). EL_ENOMEM. */
el_err incr_round_init(incr_round *r) EL_MUST_USE;
/* Empties the round for the next one (keeps its capacity). */
void incr_round_reset(incr_round *r);
void incr_round_free(incr_round *r);

/* The round's JSON ends a round past this many bytes. */
#define EL_INCR_ROUND_JSON_BYTES (64u * 1024 * 1024)

/*
 * Adds a row: its item (el_transform_row), its counters, its token. del:
 * the row deletes its item (--op-column said D). *repeat: its item key is
 * in the round already; nothing was added, and the row starts the next
 * round. EL_EREJECT (diag says why) for a row the transform rejects: the
 * caller writes the reject; other errors with diag naming line and cause.
 * The engine's rows come through the row loop, which has made the item
 * already: it calls incr_round_add_item; this is the same with the
 * transform in front, for callers holding a bare row.
 */
el_err incr_round_add(incr_round *r, const el_mapping *m, const el_source *src, el_transform *t,
                      const el_row *row, bool del, bool *repeat, el_diag *diag) EL_MUST_USE;

/* incr_round_add for a row whose item the caller made already (the row
 * loop): its JSON is r->json from json_mark, its key r->keys from
 * key_mark, size its DynamoDB size. On *repeat the item is taken out of
 * the round again. Errors set diag's line to the row's. */
el_err incr_round_add_item(incr_round *r, const el_mapping *m, const el_source *src,
                           const el_row *row, size_t json_mark, size_t key_mark, size_t size,
                           bool del, bool *repeat, el_diag *diag) EL_MUST_USE;

/* Groups the round's rows into transactions: each row with the rows that
 * share its most shared counter item, at most EL_DDB_TXN_MAX_ACTIONS
 * actions and EL_INCR_TXN_MAX_BYTES a transaction; one transaction a row
 * with no_grouping. EL_ENOMEM. */
el_err incr_round_group(incr_round *r, bool no_grouping) EL_MUST_USE;

/* Replaces the members of g by m[0..n) (copied) and recomputes the
 * counter items it touches. EL_ENOMEM. */
el_err incr_group_set_members(incr_round *r, incr_group *g, const size_t *m,
                              size_t n) EL_MUST_USE;

/* Marks g done: its rows are written, refused or split into other groups;
 * the ADDs waiting for its Puts may go. */
void incr_group_finish(incr_round *r, incr_group *g);

/* True when g must wait: it only adds to an item a group not done yet
 * Puts (that Put's "not there yet" condition would fail on the item the
 * ADD makes). A group with Puts of its own never waits for another's, so
 * two groups that each Put what the other adds to cannot wait for ever. */
bool incr_group_waits(const incr_round *r, const incr_group *g);

/* Splits group gi into one transaction per member (gi is marked done; the
 * new groups are added at the end: pointers into r->groups move). */
el_err incr_round_split(incr_round *r, size_t gi) EL_MUST_USE;

/* The TransactWriteItems body of g into b (reset first): a conditional Put
 * (attribute_not_exists) or Delete (attribute_exists) per row, one ADD of
 * the net change per counter item, the ClientRequestToken of (rows,
 * run_id, g->variant). *wcu gets its estimate by DynamoDB's rules: a
 * transaction costs twice the units of its writes (a row's item one unit
 * per started KB, again in the index; a delete by the size of the row's
 * item; a counter item one unit). EL_ENOMEM/EL_ELIMIT from the buffer. */
el_err incr_txn_body(const incr_round *r, const incr_group *g, const el_mapping *m,
                     uint64_t run_id, el_buf *b, double *wcu) EL_MUST_USE;

/* The token material of one row: a 128-bit fingerprint of table, op ('P'
 * or 'D'), the item key "PK\0SK" and the row's byte offset in its input.
 * Two rows differ in it unless they are the same row of the same delta. */
void el_incr_row_token(const char *table, char op, const char *key, size_t klen,
                       uint64_t offset, uint64_t out[2]);

/* The ClientRequestToken of a transaction of n rows (their row tokens, in
 * the transaction's order) in run run_id at resend variant `variant` (0
 * first; a new variant after a cancellation): 32 lowercase hex digits and a
 * NUL in out. */
void el_incr_txn_token(const uint64_t (*rows)[2], size_t n, uint64_t run_id, unsigned variant,
                       char out[33]);

#endif
