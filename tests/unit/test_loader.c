/*
 * test_loader.c - the load pipeline's threads (pipeline/load/load_run.c) without
 * DynamoDB: dry runs, whose inputs are FIFOs the test feeds.
 *
 * The stop flag is set from another thread while the reader threads run, as
 * a SIGINT handler does on whichever thread the signal hits; under
 * ThreadSanitizer (scripts/test.sh --tsan) this is the test that shows the
 * flag is read and written without a data race. Everything else about
 * loading is covered by the integration tests against DynamoDB Local.
 */
#include <setjmp.h>  /* cmocka needs these four first */
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>   /* the thread that sets the stop flag */
#include <stdatomic.h> /* the stop flag */
#include <stdio.h>     /* fopen, fdopen, snprintf */
#include <stdlib.h>    /* mkdtemp, free */
#include <sys/stat.h>  /* mkfifo */
#include <string.h>    /* strlen */
#include <unistd.h>    /* usleep, unlink, rmdir */

#include "pipeline/load/loader.h"
#include "pipeline/rows/mapping.h"
#include "pipeline/rows/rejects.h"

#define ROWS_WRITTEN 500   /* rows written to each input before the flag goes up */

/* The inputs are FIFOs fed by the stopper thread: it writes the header and
 * some rows of each, waits while the readers take them, raises the stop
 * flag while the readers still wait for more (the inputs have not ended),
 * and only then closes them. So the flag is raised from another thread
 * while the reader threads run, whatever the machine's speed (a dry run
 * prints nothing before the end: it cannot be watched for progress). */
typedef struct stopper {
    char paths[2][512];
    atomic_int *stop;
} stopper;

static void *stopper_main(void *arg)
{
    stopper *s = arg;
    FILE *f[2];
    for (int k = 0; k < 2; k++) {
        f[k] = fopen(s->paths[k], "w"); /* blocks until the loader opens it */
        assert_non_null(f[k]);
        fputs("follower_id,followee_id\n", f[k]);
        for (int i = 0; i < ROWS_WRITTEN; i++)
            fprintf(f[k], "user%d,user%d\n", i, i + 1);
        fflush(f[k]);
    }
    usleep(200 * 1000);
    atomic_store(s->stop, 1);
    usleep(100 * 1000);
    for (int k = 0; k < 2; k++)
        fclose(f[k]);
    return NULL;
}

static void test_stop_flag_from_another_thread(void **state)
{
    (void)state;
    char dir[] = "/tmp/el_test_loader_XXXXXX";
    assert_non_null(mkdtemp(dir));
    atomic_int stop = 0;
    stopper s = {.stop = &stop};
    for (int k = 0; k < 2; k++) {
        snprintf(s.paths[k], sizeof s.paths[k], "%s/%c.csv", dir, "ab"[k]);
        assert_int_equal(mkfifo(s.paths[k], 0600), 0);
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stopper_main, &s), 0);
    const char *json =
        "{\"table\":\"Graph\",\"sources\":["
        "{\"name\":\"a\",\"input\":\"a.csv\",\"pk\":\"A#{follower_id}\","
        "\"sk\":\"B#{followee_id}\",\"index\":false},"
        "{\"name\":\"b\",\"input\":\"b.csv\",\"pk\":\"C#{follower_id}\","
        "\"sk\":\"D#{followee_id}\",\"index\":false}]}";
    el_mapping *m;
    el_diag d;
    el_diag_clear(&d);
    if (el_mapping_parse(json, strlen(json), dir, &m, &d))
        fail_msg("mapping: %s", d.msg);
    char rpath[512];
    snprintf(rpath, sizeof rpath, "%s/rejects.jsonl", dir);
    el_rejects *rej = el_rejects_new(rpath, -1);
    assert_non_null(rej);

    char *printed = NULL;
    size_t printed_len = 0;
    FILE *out = open_memstream(&printed, &printed_len);
    assert_non_null(out);

    el_load_opts o = {
        .mapping = m, .threads = 2, .dry_run = true, .dry_out = out, .rejects = rej,
        .stop = &stop,
    };
    el_load_stats st;
    el_diag_clear(&d);
    el_err err = el_load_run(&o, &st, &d);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(fclose(out), 0);

    assert_int_equal(err, EL_EINTR);
    assert_int_equal(atomic_load(&stop), 1);
    /* the rows written were read; an interrupted dry run prints nothing
     * (each key once, decided at the end) */
    assert_true(st.rows_read > 0);
    assert_true(st.rows_read <= 2 * ROWS_WRITTEN);
    assert_int_equal(printed_len, 0);
    assert_int_equal(st.rejected, 0);
    free(printed);

    el_rejects_free(rej);
    el_mapping_free(m);
    char path[512];
    const char *names[] = {"a.csv", "b.csv", "rejects.jsonl"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stop_flag_from_another_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
