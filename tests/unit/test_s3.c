/*
 * test_s3.c - the pure parts of s3/: URI encoding, s3:// URLs, and the
 * bounded XML reader (S3's SigV4 is aws/sigv4's: test_sigv4.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/output/file_sink.h"
#include "s3/s3.h"
#include "s3/s3_sign.h"
#include "s3/s3_xml.h"

static void test_uri_encode(void **state)
{
    (void)state;
    el_buf b;
    el_buf_init(&b, 256);
    const char *s = "a b/c+d~e_f.g-h=\xc3\xa9";
    assert_int_equal(el_s3_uri_encode(&b, s, strlen(s), 1), EL_OK);
    assert_string_equal(el_buf_str(&b), "a%20b/c%2Bd~e_f.g-h%3D%C3%A9");
    el_buf_reset(&b);
    assert_int_equal(el_s3_uri_encode(&b, "x/y", 3, 0), EL_OK);
    assert_string_equal(el_buf_str(&b), "x%2Fy");
    el_buf_free(&b);
    char hex[65];
    assert_int_equal(el_s3_sha256_hex("", 0, hex), EL_OK);
    assert_string_equal(hex, EL_S3_EMPTY_SHA256);
}

static void test_url_parse(void **state)
{
    (void)state;
    char *b, *k;
    el_diag d;
    assert_int_equal(el_s3_url_parse("s3://bucket/dir/key.csv", &b, &k, &d), EL_OK);
    assert_string_equal(b, "bucket");
    assert_string_equal(k, "dir/key.csv");
    free(b);
    free(k);
    assert_int_equal(el_s3_url_parse("s3://bucket", &b, &k, &d), EL_OK);
    assert_string_equal(k, "");
    free(b);
    free(k);
    assert_int_equal(el_s3_url_parse("s3://ab/x", &b, &k, &d), EL_EUSAGE);
    assert_null(b);
    assert_int_equal(el_s3_url_parse("s3://bu cket/x", &b, &k, &d), EL_EUSAGE);
    assert_int_equal(el_s3_url_parse("http://bucket/x", &b, &k, &d), EL_EUSAGE);
    assert_true(el_s3_is_url("s3://x"));
    assert_false(el_s3_is_url("/s3://x"));
}

static const char LIST[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
    "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>"
    "<NextContinuationToken>t&amp;1==</NextContinuationToken>"
    "<Contents><Key>p/b &amp; &lt;c&gt; &#233;&#x4e2d;</Key><LastModified>2024</LastModified>"
    "<ETag>&quot;abc&quot;</ETag><Size>12345678901</Size>"
    "<Owner><ID>x</ID><DisplayName>y</DisplayName></Owner><StorageClass>STANDARD</StorageClass>"
    "</Contents>"
    "<Contents><Key>p/a</Key><Size>0</Size><!-- c --><ETag><![CDATA[\"d<e\"]]></ETag></Contents>"
    "</ListBucketResult>";

static void test_xml_list(void **state)
{
    (void)state;
    el_s3_list_page p;
    el_diag d;
    assert_int_equal(el_s3_xml_list(LIST, strlen(LIST), &p, &d), EL_OK);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.objects[0].key, "p/b & <c> \xc3\xa9\xe4\xb8\xad");
    assert_int_equal(p.objects[0].size, 12345678901ull);
    assert_string_equal(p.objects[0].etag, "\"abc\"");
    assert_string_equal(p.objects[1].key, "p/a");
    assert_int_equal(p.objects[1].size, 0);
    assert_string_equal(p.objects[1].etag, "\"d<e\"");
    assert_true(p.truncated);
    assert_string_equal(p.next_token, "t&1==");
    el_s3_list_page_clear(&p);
}

static void test_xml_bad(void **state)
{
    (void)state;
    static const char *bad[] = {
        "", "<", "<a>", "<a></b>", "<a>&bogus;</a>", "<a>&#0;</a>", "<a>&#x110000;</a>",
        "<a></a><b></b>", "<ListBucketResult><Contents><Size>x</Size></Contents>"
        "</ListBucketResult>",
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
        "<a><!-- never closed </a>", "<a><![CDATA[ x </a>",
        "<ListBucketResult><Contents><Key>a</Key><Size>99999999999999999999999</Size>"
        "</Contents></ListBucketResult>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        el_s3_list_page p;
        el_diag d;
        assert_int_not_equal(el_s3_xml_list(bad[i], strlen(bad[i]), &p, &d), EL_OK);
        assert_int_equal(p.n, 0);
        assert_null(p.objects);
    }
    /* too deep */
    char deep[2000] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "<a>");
    for (int i = 0; i < 40; i++)
        strcat(deep, "</a>");
    char out[16];
    assert_int_equal(el_s3_xml_find(deep, strlen(deep), "a", out, sizeof out), EL_EPARSE);
    /* a NUL inside */
    assert_int_equal(el_s3_xml_find("<a>x\0y</a>", 10, "a", out, sizeof out), EL_EPARSE);
}

static void test_xml_error_and_find(void **state)
{
    (void)state;
    const char *e = "<?xml version=\"1.0\"?><Error><Code>AuthorizationHeaderMalformed</Code>"
                    "<Message>the region 'us-east-1' is wrong</Message>"
                    "<Region>eu-west-1</Region><RequestId>1</RequestId></Error>";
    el_s3_error_doc doc;
    assert_true(el_s3_xml_error(e, strlen(e), &doc));
    assert_string_equal(doc.code, "AuthorizationHeaderMalformed");
    assert_string_equal(doc.region, "eu-west-1");
    assert_false(el_s3_xml_error(LIST, strlen(LIST), &doc));
    const char *up = "<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                     "<UploadId>abc-123</UploadId></InitiateMultipartUploadResult>";
    char id[64];
    assert_int_equal(el_s3_xml_find(up, strlen(up), "UploadId", id, sizeof id), EL_OK);
    assert_string_equal(id, "abc-123");
    assert_int_equal(el_s3_xml_find(up, strlen(up), "Nope", id, sizeof id), EL_EOF);
    char small[3];
    assert_int_equal(el_s3_xml_find(up, strlen(up), "UploadId", small, sizeof small), EL_ELIMIT);
}

/* ---- file_sink through an object store (what s3_store.c plugs in) ---- */

typedef struct mem_obj {
    char name[64];
    el_buf data;
} mem_obj;

typedef struct mem_store {
    char committed[16][64];   /* names, in commit order */
    size_t ncommitted;
    size_t open, aborted;
    bool used;
} mem_store;

static mem_store *g_store;

static el_err ms_check(void *self, el_diag *diag)
{
    mem_store *m = self;
    return m->used ? el_diag_set(diag, EL_EUSAGE, "used") : EL_OK;
}

static el_err ms_open(void *self, const char *name, void **obj, el_diag *diag)
{
    (void)diag;
    mem_store *m = self;
    mem_obj *o = calloc(1, sizeof *o);
    assert_non_null(o);
    snprintf(o->name, sizeof o->name, "%s", name);
    el_buf_init(&o->data, 1u << 24);
    m->open++;
    *obj = o;
    return EL_OK;
}

static el_err ms_write(void *obj, const void *p, size_t n, el_diag *diag)
{
    (void)diag;
    mem_obj *o = obj;
    return el_buf_append(&o->data, p, n);
}

static el_err ms_commit(void *obj, el_diag *diag)
{
    (void)diag;
    mem_obj *o = obj;
    assert_true(g_store->ncommitted < 16);
    assert_true(o->data.len > 0);
    snprintf(g_store->committed[g_store->ncommitted++], 64, "%s", o->name);
    g_store->open--;
    el_buf_free(&o->data);
    free(o);
    return EL_OK;
}

static void ms_abort(void *obj)
{
    mem_obj *o = obj;
    g_store->aborted++;
    g_store->open--;
    el_buf_free(&o->data);
    free(o);
}

static const el_object_store_ops MS_OPS = { ms_check, ms_open, ms_write, ms_commit, ms_abort,
                                            NULL, NULL };

static void test_file_sink_object_store(void **state)
{
    (void)state;
    mem_store m = { 0 };
    g_store = &m;
    el_object_store store = { &MS_OPS, &m };
    el_file_sink_opts o = { .dir = "s3://b/p/", .store = &store, .part_max_items = 2,
                            .table = "T" };
    el_file_sink *s;
    el_diag d;
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_OK);
    const char *item = "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"}}";
    for (int i = 0; i < 5; i++)
        assert_int_equal(el_file_sink_put(s, item, strlen(item), &d), EL_OK);
    assert_int_equal(m.ncommitted, 2);      /* the third part is still open */
    assert_int_equal(el_file_sink_finish(s, &d), EL_OK);
    assert_int_equal(m.ncommitted, 4);
    assert_string_equal(m.committed[0], "data/part-00000.json.zst");
    assert_string_equal(m.committed[2], "data/part-00002.json.zst");
    assert_string_equal(m.committed[3], "manifest.json");   /* last */
    el_file_sink_free(s);
    assert_int_equal(m.open, 0);

    /* unfinished: the open part is aborted, no manifest */
    mem_store m2 = { 0 };
    g_store = &m2;
    store.self = &m2;
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(el_file_sink_put(s, item, strlen(item), &d), EL_OK);
    el_file_sink_free(s);
    assert_int_equal(m2.ncommitted, 1);
    assert_int_equal(m2.aborted, 1);
    assert_int_equal(m2.open, 0);

    /* a used location is refused */
    m2.used = true;
    assert_int_equal(el_file_sink_new(&o, &s, &d), EL_EUSAGE);
    assert_null(s);
}

static const char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

static const char *env_endpoint(const char *name)
{
    return strcmp(name, "AWS_ENDPOINT_URL_S3") == 0 ? "http://127.0.0.1:4569" : NULL;
}

/* The client's endpoint: the SDKs' rules for the region and variants
 * (tests/unit/test_endpoints.c holds the published cases), or the user's. */
static void test_client_endpoint(void **state)
{
    (void)state;
    el_aws_config cfg = {.region = "us-west-2", .access_key = "AKIDEXAMPLE",
                         .secret_key = "secret", .verify_ssl = true, .use_fips = true,
                         .s3_dualstack = true};
    el_s3 *s3;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_s3_new(&cfg, NULL, no_env, &s3, &d), EL_OK);
    assert_string_equal(el_s3_endpoint(s3), "https://s3-fips.dualstack.us-west-2.amazonaws.com");
    assert_string_equal(el_s3_region(s3), "us-west-2");
    el_s3_free(s3);

    cfg.region = "aws-global";
    cfg.use_fips = cfg.s3_dualstack = false;
    assert_int_equal(el_s3_new(&cfg, NULL, no_env, &s3, &d), EL_OK);
    assert_string_equal(el_s3_endpoint(s3), "https://s3.amazonaws.com");
    assert_string_equal(el_s3_region(s3), "us-east-1");
    el_s3_free(s3);

    /* the user's endpoint wins over the variants */
    cfg.region = "cn-north-1";
    cfg.use_fips = true;
    assert_int_equal(el_s3_new(&cfg, NULL, env_endpoint, &s3, &d), EL_OK);
    assert_string_equal(el_s3_endpoint(s3), "http://127.0.0.1:4569");
    assert_string_equal(el_s3_region(s3), "cn-north-1");
    el_s3_free(s3);
    /* without it, S3 has no FIPS endpoint in China */
    assert_int_equal(el_s3_new(&cfg, NULL, no_env, &s3, &d), EL_ECONFIG);
    assert_null(s3);
    assert_non_null(strstr(d.msg, "S3 has no FIPS endpoint in cn-north-1 (partition aws-cn)"));
    assert_non_null(strstr(d.msg, "--endpoint-url-s3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uri_encode),
        cmocka_unit_test(test_url_parse),
        cmocka_unit_test(test_xml_list),
        cmocka_unit_test(test_xml_bad),
        cmocka_unit_test(test_xml_error_and_find),
        cmocka_unit_test(test_file_sink_object_store),
        cmocka_unit_test(test_client_endpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
