/*
 * test_rowloop.c - the one row loop (pipeline/rows/rowloop.h) on a real
 * CSV file: items and the two kinds of reject come back in order with
 * their lines, rows before the resume point are shown to the observer
 * only, an observer's error stops the input with the row's place, a row
 * is made again into other buffers, the index-keys mode renders the
 * unsharded index keys, and errors are worded path:line:column.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "helpers.h"

#include <stdlib.h>  /* free */
#include <string.h>  /* memcmp, strlen, strstr */

#include "pipeline/rows/inputs.h"
#include "pipeline/rows/rowloop.h"

static char dir[64];

/* line 2: an item; 3: an empty target (the transform refuses it); 4: one
 * column too many (the reader refuses it); 5: an item */
static const char rows_csv[] = "a,b\nu1,bob\nu2,\nu3,bob,extra\nu4,amy\n";
#define OFFSET_LINE5 28 /* "a,b\n" 4 + "u1,bob\n" 7 + "u2,\n" 4 + "u3,bob,extra\n" 13 */

static const char mapping_json[] =
    "{\"table\":\"Graph\",\"sources\":[{\"name\":\"follows\",\"input\":\"rows.csv\","
    "\"pk\":\"U#{a}\",\"sk\":\"T#{b}\"}]}";

static int setup(void **state)
{
    (void)state;
    if (!el_test_mkdtemp(dir, sizeof dir, "test_rowloop"))
        return -1;
    el_test_write_file(dir, "rows.csv", rows_csv);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return el_test_rm_tree(dir);
}

/* What a test reads the file with: the mapping, its one input bound, a
 * transform of its source. */
typedef struct job {
    el_mapping *m;
    el_input_spec *specs;
    size_t nspecs;
    el_reader *r;
    el_transform *t;
} job;

static void job_open(job *j)
{
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(mapping_json, strlen(mapping_json), dir, &j->m, &d))
        fail_msg("mapping: %s", d.msg);
    el_reader_opts ro = { 0 };
    assert_int_equal(el_inputs_pair(j->m, NULL, 0, &ro, &j->specs, &j->nspecs, &d), EL_OK);
    assert_int_equal(j->nspecs, 1);
    assert_int_equal(el_input_open_bound(&j->specs[0], &j->r, &d), EL_OK);
    assert_int_equal(el_transform_new(j->m, j->specs[0].src, &j->t), EL_OK);
}

static void job_close(job *j)
{
    el_transform_free(j->t);
    el_input_unbind(j->specs[0].src, j->r);
    el_reader_free(j->r);
    el_inputs_free(j->specs, j->nspecs);
    el_mapping_free(j->m);
}

static el_rowloop *loop_of(job *j, el_rowloop_mode mode, uint64_t resume_offset,
                           bool resume_done, el_rowloop_observer ob)
{
    el_rowloop_opts o = { .path = "rows.csv", .reader = j->r, .transform = j->t,
                          .src = j->specs[0].src, .mode = mode,
                          .resume_offset = resume_offset, .resume_done = resume_done,
                          .observer = ob };
    el_rowloop *l;
    assert_int_equal(el_rowloop_new(&o, &l), EL_OK);
    return l;
}

/* An observer that writes down the keys it sees, and fails on a key
 * when told to. */
typedef struct watch {
    char keys[8][32];
    size_t n;
    const char *fail_on; /* "PK" of the row to fail on, or NULL */
} watch;

static el_err observe(void *user, const el_source *src, const el_row *row, const char *key,
                      size_t key_len, el_diag *diag)
{
    (void)src;
    (void)row;
    watch *w = user;
    if (w->fail_on && strcmp(key, w->fail_on) == 0)
        return el_diag_set(diag, EL_ELIMIT, "counter key too long");
    assert_true(w->n < 8 && key_len < 32);
    memcpy(w->keys[w->n], key, key_len);
    w->keys[w->n++][key_len] = '\0'; /* "PK\0SK": the PK reads as a string */
    return EL_OK;
}

static void test_items_and_rejects_in_order(void **state)
{
    (void)state;
    job j;
    job_open(&j);
    el_rowloop *l = loop_of(&j, EL_ROWLOOP_ITEMS, 0, false, (el_rowloop_observer){ 0 });
    el_buf json, keys;
    el_buf_init(&json, 256);
    el_buf_init(&keys, 64);
    el_rowloop_row out;
    el_diag d;
    el_diag_clear(&d);

    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_ITEM);
    assert_int_equal(out.row->line, 2);
    assert_int_equal(out.json_mark, 0);
    assert_int_equal(out.key_mark, 0);
    assert_true(out.size > 0);
    assert_int_equal(keys.len, strlen("U#u1") + 1 + strlen("T#bob"));
    assert_memory_equal(keys.data, "U#u1\0T#bob", keys.len);
    assert_non_null(strstr(el_buf_str(&json), "\"U#u1\""));
    size_t json_len = json.len;

    /* the transform refuses an empty target: nothing appended, the line set */
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_REJECT_ITEM);
    assert_int_equal(out.why->line, 3);
    assert_int_equal(out.why->offset, 11);
    assert_true(out.why->msg[0] != '\0');
    assert_int_equal(json.len, json_len);

    /* the reader refuses a row of three columns */
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_REJECT_PARSE);
    assert_int_equal(out.why->line, 4);
    assert_int_equal(out.why->offset, 15);

    /* the next item goes after the first in the same buffers */
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_ITEM);
    assert_int_equal(out.row->line, 5);
    assert_int_equal(out.json_mark, json_len);
    assert_memory_equal(keys.data + out.key_mark, "U#u4\0T#amy", keys.len - out.key_mark);

    /* made again into other buffers (a row put off to the next batch) */
    el_buf json2, keys2;
    el_buf_init(&json2, 256);
    el_buf_init(&keys2, 64);
    el_rowloop_row again;
    assert_int_equal(el_rowloop_again(l, &json2, &keys2, &again, &d), EL_OK);
    assert_int_equal(again.what, EL_ROWLOOP_ITEM);
    assert_int_equal(json2.len, json.len - out.json_mark);
    assert_memory_equal(json2.data, json.data + out.json_mark, json2.len);
    assert_memory_equal(keys2.data, "U#u4\0T#amy", keys2.len);

    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_EOF);
    el_buf_free(&json2);
    el_buf_free(&keys2);
    el_buf_free(&json);
    el_buf_free(&keys);
    el_rowloop_free(l);
    job_close(&j);
}

/* Rows before the resume point come back no more; the observer still sees
 * every row that became an item (counts need the whole input), and the
 * buffers hold only what is handed back. */
static void test_resume_point(void **state)
{
    (void)state;
    job j;
    job_open(&j);
    watch w = { 0 };
    el_rowloop *l = loop_of(&j, EL_ROWLOOP_ITEMS, OFFSET_LINE5, false,
                            (el_rowloop_observer){ observe, &w });
    el_buf json, keys;
    el_buf_init(&json, 256);
    el_buf_init(&keys, 64);
    el_rowloop_row out;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_ITEM);
    assert_int_equal(out.row->line, 5);
    assert_int_equal(out.json_mark, 0); /* u1's item was taken out again */
    assert_memory_equal(keys.data, "U#u4\0T#amy", keys.len);
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_EOF);
    assert_int_equal(w.n, 2);
    assert_string_equal(w.keys[0], "U#u1");
    assert_string_equal(w.keys[1], "U#u4");
    el_rowloop_free(l);
    job_close(&j);

    /* an input done before: nothing handed back, everything observed */
    job_open(&j);
    memset(&w, 0, sizeof w);
    l = loop_of(&j, EL_ROWLOOP_ITEMS, 0, true, (el_rowloop_observer){ observe, &w });
    el_buf_reset(&json);
    el_buf_reset(&keys);
    assert_int_equal(el_rowloop_next(l, &json, &keys, &out, &d), EL_EOF);
    assert_int_equal(json.len, 0);
    assert_int_equal(keys.len, 0);
    assert_int_equal(w.n, 2);
    el_rowloop_free(l);
    job_close(&j);
    el_buf_free(&json);
    el_buf_free(&keys);
}

/* An observer's error stops the input, worded with the row's place. */
static void test_observer_error_stops(void **state)
{
    (void)state;
    job j;
    job_open(&j);
    watch w = { .fail_on = "U#u4" };
    el_rowloop *l = loop_of(&j, EL_ROWLOOP_ITEMS, 0, false, (el_rowloop_observer){ observe, &w });
    el_buf json, keys;
    el_buf_init(&json, 256);
    el_buf_init(&keys, 64);
    el_rowloop_row out;
    el_diag d;
    el_diag_clear(&d);
    el_err err;
    while ((err = el_rowloop_next(l, &json, &keys, &out, &d)) == EL_OK)
        ;
    assert_int_equal(err, EL_ELIMIT);
    assert_string_equal(d.msg, "rows.csv:5: counter key too long");
    assert_int_equal(d.line, 5);
    assert_int_equal(w.n, 1);
    el_buf_free(&json);
    el_buf_free(&keys);
    el_rowloop_free(l);
    job_close(&j);
}

/* The fan-in pass: only the unsharded index keys, no buffers. */
static void test_index_keys(void **state)
{
    (void)state;
    job j;
    job_open(&j);
    if (!j.specs[0].src->index) {
        job_close(&j);
        skip();
    }
    el_rowloop *l = loop_of(&j, EL_ROWLOOP_INDEX_KEYS, 0, false, (el_rowloop_observer){ 0 });
    el_rowloop_row out;
    el_diag d;
    el_diag_clear(&d);
    assert_int_equal(el_rowloop_next(l, NULL, NULL, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_ITEM);
    assert_int_equal(out.ipk_len, strlen("T#bob"));
    assert_memory_equal(out.ipk, "T#bob", out.ipk_len);
    assert_int_equal(out.isk_len, strlen("U#u1"));
    assert_memory_equal(out.isk, "U#u1", out.isk_len);
    assert_int_equal(el_rowloop_next(l, NULL, NULL, &out, &d), EL_OK);
    assert_int_equal(out.what, EL_ROWLOOP_REJECT_ITEM); /* an empty index key */
    el_rowloop_free(l);
    job_close(&j);
}

static void test_wrap_says_where(void **state)
{
    (void)state;
    el_diag in, out;
    el_diag_clear(&in);
    el_diag_clear(&out);
    el_diag_at(&in, EL_EPARSE, 7, 12, 300, "unterminated string");
    assert_int_equal(el_rowloop_wrap("dump.sql", EL_EPARSE, &in, &out), EL_EPARSE);
    assert_string_equal(out.msg, "dump.sql:7:12: unterminated string");
    assert_int_equal(out.line, 7);
    assert_int_equal(out.column, 12);
    assert_int_equal(out.offset, 300);
    in.column = 0;
    el_rowloop_wrap("dump.sql", EL_EPARSE, &in, &out);
    assert_string_equal(out.msg, "dump.sql:7: unterminated string");
    el_diag_clear(&in);
    el_rowloop_wrap("dump.sql", EL_ENOMEM, &in, &out);
    assert_string_equal(out.msg, "dump.sql: out of memory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_and_rejects_in_order),
        cmocka_unit_test(test_resume_point),
        cmocka_unit_test(test_observer_error_stops),
        cmocka_unit_test(test_index_keys),
        cmocka_unit_test(test_wrap_says_where),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
