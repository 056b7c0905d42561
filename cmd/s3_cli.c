/*
 * s3_cli.c - s3:// inputs and outputs for the subcommands.
 *
 * DESIGN: prefixes are expanded here, before the pipeline sees the inputs,
 * so the loader, the counting pass, checkpoints and rejects all deal with
 * plain object URLs: a checkpoint names each object by its URL, and a
 * prefix that gained an object since is another job (the job hash covers
 * the inputs). Expansion lists the prefix once, in key order.
 */
#include "cmd/s3_cli.h"

#include <stdlib.h>  /* calloc, free, getenv */
#include <string.h>  /* strlen, strcmp */

#include "cmd/cli.h"
#include "cmd/runner.h"   /* cmd_exit_code */
#include "s3/s3_source.h"

static const char *env_lookup(const char *name)
{
    return getenv(name);
}

static bool is_prefix_url(const char *u)
{
    size_t n = strlen(u);
    const char *slash = strchr(u + 5, '/');
    return !slash || !slash[1] || u[n - 1] == '/';
}

static bool connect_s3(cli_s3 *c, const el_aws_opts *aws, int *rc)
{
    if (c->s3)
        return true;
    el_diag d;
    el_diag_clear(&d);
    char warning[512] = "";
    *rc = EXIT_USAGE;
    if (el_aws_config_resolve(aws, env_lookup, &c->cfg, warning, sizeof warning, &d)) {
        cli_error("%s", d.msg);
        return false;
    }
    if (warning[0])
        cli_warn("%s", warning);
    if (el_s3_new(c->cfg, c->endpoint, env_lookup, &c->s3, &d)) {
        cli_error("%s", d.msg);
        return false;
    }
    /* tests make parts small to read a small object in many ranges */
    const char *ps = getenv("EDGELOAD_S3_PART_SIZE"), *ah = getenv("EDGELOAD_S3_AHEAD");
    el_s3_set_read_parts(c->s3, ps ? (size_t)strtoull(ps, NULL, 10) : 0,
                         ah ? atoi(ah) : 0);
    el_s3_opener_init(&c->opener, c->s3);
    return true;
}

static bool keep(cli_s3 *c, char *s)
{
    char **v = realloc(c->owned, (c->nowned + 1) * sizeof *v);
    if (!v) {
        free(s);
        return false;
    }
    c->owned = v;
    c->owned[c->nowned++] = s;
    return true;
}

/* Appends the objects under prefix URL u to list (n entries, cap). */
static bool expand(cli_s3 *c, const char *u, const char ***list, size_t *n, size_t *cap, int *rc)
{
    char *bucket, *prefix;
    el_diag d;
    el_diag_clear(&d);
    if (el_s3_url_parse(u, &bucket, &prefix, &d)) {
        cli_error("%s", d.msg);
        *rc = EXIT_USAGE;
        return false;
    }
    el_s3_list_page page;
    el_err err = el_s3_list(c->s3, bucket, prefix, 0, &page, &d);
    bool ok = !err;
    if (err) {
        cli_error("%s", d.msg);
        *rc = cmd_exit_code(err);
    }
    size_t added = 0;
    for (size_t i = 0; ok && i < page.n; i++) {
        const char *k = page.objects[i].key;
        if (!k[0] || k[strlen(k) - 1] == '/')
            continue;  /* "folder" placeholder objects */
        size_t len = strlen(bucket) + strlen(k) + 7;
        char *url = malloc(len);
        if (!url || !keep(c, url)) {
            cli_error("out of memory");
            *rc = EXIT_FATAL;
            ok = false;
            break;
        }
        snprintf(url, len, "s3://%s/%s", bucket, k);
        if (*n == *cap) {
            size_t nc = *cap * 2 + 16;
            const char **v = realloc(*list, nc * sizeof *v);
            if (!v) {
                cli_error("out of memory");
                *rc = EXIT_FATAL;
                ok = false;
                break;
            }
            *list = v;
            *cap = nc;
        }
        (*list)[(*n)++] = url;
        added++;
    }
    if (ok && added == 0) {
        cli_error("%s: no objects under this prefix", u);
        *rc = EXIT_USAGE;
        ok = false;
    }
    el_s3_list_page_clear(&page);
    free(bucket);
    free(prefix);
    return ok;
}

bool cli_s3_inputs(cli_s3 *c, const el_aws_opts *aws, el_mapping *m, const char ***inputs,
                   size_t *ninputs, el_reader_opts *ro, int *rc)
{
    bool any = false, any_prefix = false;
    size_t n = *ninputs ? *ninputs : m->nsources;
    for (size_t i = 0; i < n; i++) {
        const char *u = *ninputs ? (*inputs)[i] : m->sources[i]->input;
        if (u && el_s3_is_url(u)) {
            any = true;
            any_prefix |= is_prefix_url(u);
        }
    }
    if (!any)
        return true;
    if (!connect_s3(c, aws, rc))
        return false;
    ro->opener = &c->opener;
    if (!any_prefix)
        return true;
    if (m->nsources != 1) {
        cli_error("an s3:// prefix (ending in '/') stands for many inputs, which needs a "
                  "mapping with one source; name the objects one per source instead");
        *rc = EXIT_USAGE;
        return false;
    }
    const char **list = NULL;
    size_t cnt = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        const char *u = *ninputs ? (*inputs)[i] : m->sources[i]->input;
        if (el_s3_is_url(u) && is_prefix_url(u)) {
            if (!expand(c, u, &list, &cnt, &cap, rc)) {
                free(list);
                return false;
            }
            continue;
        }
        if (cnt == cap) {
            size_t nc = cap * 2 + 16;
            const char **v = realloc(list, nc * sizeof *v);
            if (!v) {
                free(list);
                cli_error("out of memory");
                *rc = EXIT_FATAL;
                return false;
            }
            list = v;
            cap = nc;
        }
        list[cnt++] = u;
    }
    free(c->inputs);
    c->inputs = list;
    *inputs = list;
    *ninputs = cnt;
    return true;
}

bool cli_s3_output(cli_s3 *c, const el_aws_opts *aws, const char *url,
                   const el_object_store **store, int *rc)
{
    if (!connect_s3(c, aws, rc))
        return false;
    el_diag d;
    el_diag_clear(&d);
    const char *ps = getenv("EDGELOAD_S3_UPLOAD_PART_SIZE");   /* tests: many parts */
    if (el_s3_store_new(c->s3, url, ps ? (size_t)strtoull(ps, NULL, 10) : 0, &c->store, &d)) {
        cli_error("%s", d.msg);
        *rc = EXIT_USAGE;
        return false;
    }
    *store = el_s3_store_target(c->store);
    return true;
}

void cli_s3_print_import(FILE *f, const el_mapping *m, const char *output, const char *region)
{
    bool index = false;
    for (size_t i = 0; i < m->nsources; i++)
        index |= m->sources[i]->index;
    char bucket[128] = "BUCKET";
    char prefix[1100] = "PREFIX/";
    bool s3 = el_s3_is_url(output);
    if (s3) {
        const char *b = output + 5;
        const char *slash = strchr(b, '/');
        size_t blen = slash ? (size_t)(slash - b) : strlen(b);
        snprintf(bucket, sizeof bucket, "%.*s", (int)blen, b);
        const char *p = slash ? slash + 1 : "";
        size_t plen = strlen(p);
        snprintf(prefix, sizeof prefix, "%s%s", p, plen && p[plen - 1] != '/' ? "/" : "");
    } else {
        fprintf(f, "edgeload: after uploading %s to s3://BUCKET/PREFIX/ (for example: aws s3 "
                "cp --recursive %s s3://BUCKET/PREFIX/), import it into a new table with:\n",
                output, output);
    }
    if (s3)
        fprintf(f, "edgeload: import into a new table (DynamoDB's Import from S3; no write "
                "capacity used) with:\n");
    fprintf(f, "aws dynamodb import-table --region %s \\\n"
            "  --s3-bucket-source S3Bucket=%s,S3KeyPrefix=%sdata/ \\\n"
            "  --input-format DYNAMODB_JSON --input-compression-type ZSTD \\\n"
            "  --table-creation-parameters '{\"TableName\":\"%s\","
            "\"KeySchema\":[{\"AttributeName\":\"%s\",\"KeyType\":\"HASH\"},"
            "{\"AttributeName\":\"%s\",\"KeyType\":\"RANGE\"}],"
            "\"AttributeDefinitions\":[{\"AttributeName\":\"%s\",\"AttributeType\":\"S\"},"
            "{\"AttributeName\":\"%s\",\"AttributeType\":\"S\"}",
            region && region[0] ? region : "REGION", bucket, prefix, m->table, m->pk_attr,
            m->sk_attr, m->pk_attr, m->sk_attr);
    if (index) {
        bool same_pk = strcmp(m->index_pk_attr, m->pk_attr) == 0 ||
                       strcmp(m->index_pk_attr, m->sk_attr) == 0;
        bool same_sk = strcmp(m->index_sk_attr, m->pk_attr) == 0 ||
                       strcmp(m->index_sk_attr, m->sk_attr) == 0;
        if (!same_pk)
            fprintf(f, ",{\"AttributeName\":\"%s\",\"AttributeType\":\"S\"}", m->index_pk_attr);
        if (!same_sk)
            fprintf(f, ",{\"AttributeName\":\"%s\",\"AttributeType\":\"S\"}", m->index_sk_attr);
        fprintf(f, "],\"GlobalSecondaryIndexes\":[{\"IndexName\":\"%s\","
                "\"KeySchema\":[{\"AttributeName\":\"%s\",\"KeyType\":\"HASH\"},"
                "{\"AttributeName\":\"%s\",\"KeyType\":\"RANGE\"}],"
                "\"Projection\":{\"ProjectionType\":\"ALL\"}}]",
                m->index_name, m->index_pk_attr, m->index_sk_attr);
    } else {
        fputs("]", f);
    }
    fputs(",\"BillingMode\":\"PAY_PER_REQUEST\"}'\n", f);
}

void cli_s3_free(cli_s3 *c)
{
    for (size_t i = 0; i < c->nowned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->inputs);
    el_s3_store_free(c->store);
    el_s3_free(c->s3);
    el_aws_config_free(c->cfg);
    memset(c, 0, sizeof *c);
}
