/*
 * dynamo/ddb_limits.h - DynamoDB's own limits, in one place.
 *
 * These are the service's figures (the DynamoDB Developer Guide, "Service,
 * account, and table quotas" and the API reference of each operation), not
 * edgeload's choices: every layer that sizes a request or checks an item
 * takes them from here, so a limit AWS changes is changed once.
 * Header only; no code.
 */
#ifndef EL_DDB_LIMITS_H
#define EL_DDB_LIMITS_H

/* Items and keys ("Items", "Attributes"). */
#define EL_DDB_MAX_ITEM_BYTES (400u * 1024u)   /* an item, names and values */
#define EL_DDB_MAX_PK_BYTES 2048u              /* a partition key value */
#define EL_DDB_MAX_SK_BYTES 1024u              /* a sort key value */

/* Requests ("API-specific limits"). */
#define EL_DDB_BATCH_ITEMS 25                  /* BatchWriteItem: put/delete requests */
#define EL_DDB_MAX_REQUEST_BYTES (16u * 1024u * 1024u)  /* any request body */
#define EL_DDB_BATCH_GET_KEYS 100              /* BatchGetItem: keys a request */
#define EL_DDB_TXN_MAX_ACTIONS 100             /* TransactWriteItems: actions */
#define EL_DDB_MAX_GSI 20                      /* global secondary indexes a table */

/* Capacity ("Read/write capacity mode and throughput"). */
#define EL_DDB_WCU_BYTES 1024u                 /* one write unit writes up to 1 KB */
#define EL_DDB_PARTITION_WCU 1000.0            /* what one partition serves, a second */
#define EL_DDB_DEFAULT_TABLE_WCU 40000.0       /* the default per-table write quota */
/* A new on-demand table, and each new index, takes this many write units a
 * second at once (its warm throughput), growing as the traffic grows. */
#define EL_DDB_NEW_TABLE_WARM_WCU 4000.0

#endif
