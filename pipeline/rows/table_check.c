/*
 * table_check.c - the table a command is about to use, checked against
 * the mapping.
 *
 * DESIGN: a wrong key schema found after the first request means a load
 * half-written into a table that cannot hold it; found here, it is one line
 * and exit 2 with nothing written. The messages print the exact command
 * that makes a table that fits, since that is what the user does next.
 */
#include "pipeline/rows/table_check.h"

#include <stdbool.h>  /* bool */
#include <stdio.h>    /* snprintf */
#include <string.h>   /* strcmp */

static bool writes_index(const el_mapping *m)
{
    for (size_t i = 0; i < m->nsources; i++)
        if (m->sources[i]->index)
            return true;
    return false;
}

void el_table_create_hint(const el_mapping *m, const char *endpoint, const char *region,
                          char *out, size_t cap)
{
    bool index = writes_index(m);
    snprintf(out, cap, "edgeload create-table --table %s%s%s%s%s%s%s", m->table,
             index ? " --index-name " : " --no-index", index ? m->index_name : "",
             endpoint ? " --endpoint-url " : "", endpoint ? endpoint : "",
             region ? " --region " : "", region ? region : "");
}

static bool strings(const el_key_schema *k, const char *pk, const char *sk)
{
    return strcmp(k->pk, pk) == 0 && strcmp(k->sk, sk) == 0 && strcmp(k->pk_type, "S") == 0 &&
           strcmp(k->sk_type, "S") == 0;
}

el_err el_table_check(const el_table_desc *t, const el_mapping *m, unsigned need,
                      const char *endpoint, const char *region, el_diag *diag)
{
    char create[1200];
    el_table_create_hint(m, endpoint, region, create, sizeof create);
    if (!strings(&t->key, m->pk_attr, m->sk_attr))
        return el_diag_set(diag, EL_ETABLE,
                           "table %s has key schema (%s %s, %s%s%s) but the mapping's items "
                           "have keys (%s S, %s S): use a table created with:\n  %s",
                           m->table, t->key.pk, t->key.pk_type,
                           t->key.sk[0] ? t->key.sk : "no sort key", t->key.sk[0] ? " " : "",
                           t->key.sk_type, m->pk_attr, m->sk_attr, create);
    bool index = (need & EL_TABLE_INDEX) ||
                 ((need & EL_TABLE_INDEX_IF_WRITTEN) && writes_index(m));
    if (!index)
        return EL_OK;
    for (size_t i = 0; i < t->ngsi; i++) {
        if (strcmp(t->gsi[i].name, m->index_name) != 0)
            continue;
        if (strings(&t->gsi[i].key, m->index_pk_attr, m->index_sk_attr))
            return EL_OK;
        return el_diag_set(diag, EL_ETABLE,
                           "index %s of table %s has keys (%s %s, %s %s) but the mapping "
                           "writes (%s S, %s S)", m->index_name, m->table, t->gsi[i].key.pk,
                           t->gsi[i].key.pk_type, t->gsi[i].key.sk, t->gsi[i].key.sk_type,
                           m->index_pk_attr, m->index_sk_attr);
    }
    if (need & EL_TABLE_INDEX)
        return el_diag_set(diag, EL_ETABLE,
                           "table %s has no index %s (%s, %s) to query", m->table,
                           m->index_name, m->index_pk_attr, m->index_sk_attr);
    return el_diag_set(diag, EL_ETABLE,
                       "table %s has no index %s (%s, %s) for the reverse direction: create "
                       "the table with it:\n  %s\nor give --no-index", m->table, m->index_name,
                       m->index_pk_attr, m->index_sk_attr, create);
}
