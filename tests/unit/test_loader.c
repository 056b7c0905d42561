/*
 * test_loader.c - the load pipeline's threads (pipeline/loader.c) without
 * DynamoDB: dry runs, whose items go to a pipe read by the test.
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
#include <stdlib.h>    /* mkdtemp */
#include <string.h>    /* strlen, memchr */
#include <unistd.h>    /* pipe, read, close, unlink, rmdir */

#include "pipeline/loader.h"
#include "pipeline/mapping.h"
#include "pipeline/rejects.h"

#define ROWS_PER_INPUT 20000

static void write_input(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("follower_id,followee_id\n", f);
    for (int i = 0; i < ROWS_PER_INPUT; i++)
        fprintf(f, "user%d,user%d\n", i, i + 1);
    assert_int_equal(fclose(f), 0);
}

typedef struct stopper {
    int fd;              /* read end of the dry-run output */
    atomic_int *stop;
    size_t bytes;        /* read in all */
} stopper;

/* Waits for the first item the readers print, raises the stop flag while
 * they are still reading (the pipe holds far less than the inputs make),
 * then drains the pipe so no reader stays blocked on it. */
static void *stopper_main(void *arg)
{
    stopper *s = arg;
    char buf[4096];
    bool raised = false;
    ssize_t n;
    while ((n = read(s->fd, buf, sizeof buf)) > 0) {
        s->bytes += (size_t)n;
        if (!raised && memchr(buf, '\n', (size_t)n)) {
            atomic_store(s->stop, 1);
            raised = true;
        }
    }
    return NULL;
}

static void test_stop_flag_from_another_thread(void **state)
{
    (void)state;
    char dir[] = "/tmp/el_test_loader_XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_input(dir, "a.csv");
    write_input(dir, "b.csv");
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

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    FILE *out = fdopen(fds[1], "w");
    assert_non_null(out);
    atomic_int stop = 0;
    stopper s = {.fd = fds[0], .stop = &stop};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, stopper_main, &s), 0);

    el_load_opts o = {
        .mapping = m, .threads = 2, .dry_run = true, .dry_out = out, .rejects = rej,
        .stop = &stop,
    };
    el_load_stats st;
    el_diag_clear(&d);
    el_err err = el_load_run(&o, &st, &d);
    assert_int_equal(fclose(out), 0); /* EOF for the stopper */
    assert_int_equal(pthread_join(t, NULL), 0);
    close(fds[0]);

    assert_int_equal(err, EL_EINTR);
    assert_int_equal(atomic_load(&stop), 1);
    assert_true(s.bytes > 0);
    /* stopped early: the readers saw the flag long before the inputs' end */
    assert_true(st.rows_read > 0);
    assert_true(st.rows_read < 2 * ROWS_PER_INPUT);
    assert_int_equal(st.rejected, 0);

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
