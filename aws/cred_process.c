/*
 * cred_process.c - credentials from an external program (credential_process
 * in a profile): it prints a JSON document, Version 1, with AccessKeyId,
 * SecretAccessKey and optionally SessionToken and Expiration.
 *
 * DESIGN: the command line is split into words the way a POSIX shell (and
 * botocore's shlex) splits them, and the program runs without a shell, so
 * nothing in the profile is interpreted twice. It gets /dev/null as its
 * standard input (edgeload's own may be the data being loaded) and
 * edgeload's standard error, so its own messages ("run aws-vault login")
 * reach the user as it wrote them, the way the AWS SDK for Go runs it; its
 * standard output is read, at most 64 KB, for at most a minute, then it is
 * killed. Messages name the program (argv[0]) only: its arguments may hold
 * anything.
 */
#include "aws/cred_source.h"

#include <errno.h>    /* errno, EINTR */
#include <fcntl.h>    /* O_CLOEXEC, open */
#include <poll.h>     /* poll */
#include <signal.h>   /* sigset_t, kill */
#include <spawn.h>    /* posix_spawnp */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* calloc, free */
#include <string.h>   /* strlen, strerror */
#include <sys/wait.h> /* waitpid */
#include <time.h>     /* clock_gettime */
#include <unistd.h>   /* pipe2, read, close */

#include "aws/aws_internal.h"
#include "common/clock.h"  /* el_now_ms */

#define MAX_OUTPUT (64u * 1024u)
#define MAX_WORDS 256
#define TIMEOUT_MS 60000.0

extern char **environ;

typedef struct process_source {
    el_cred_source base;
    char *profile;
    char **argv;   /* NULL-terminated words */
    size_t argc;
} process_source;

static void process_destroy(el_cred_source *base)
{
    process_source *s = (process_source *)base;
    for (size_t i = 0; i < s->argc; i++)
        el_aws_wipe_free(s->argv[i]);
    free(s->argv);
    free(s->profile);
    free(s->base.name);
    free(s);
}

/* Splits cmd into words as POSIX sh does (quotes and backslashes; no
 * expansion). EL_EPARSE for an unterminated quote or too many words. */
static el_err split_words(const char *cmd, char ***argv, size_t *argc)
{
    *argv = calloc(MAX_WORDS + 1, sizeof **argv);
    *argc = 0;
    if (!*argv)
        return EL_ENOMEM;
    size_t n = strlen(cmd);
    char *word = malloc(n + 1);
    if (!word)
        return EL_ENOMEM;
    el_err err = EL_OK;
    size_t i = 0;
    while (!err) {
        while (i < n && (cmd[i] == ' ' || cmd[i] == '\t' || cmd[i] == '\n'))
            i++;
        if (i >= n)
            break;
        size_t w = 0;
        while (i < n && cmd[i] != ' ' && cmd[i] != '\t' && cmd[i] != '\n') {
            char c = cmd[i++];
            if (c == '\\') {
                if (i < n)
                    word[w++] = cmd[i++];
            } else if (c == '\'') {
                while (i < n && cmd[i] != '\'')
                    word[w++] = cmd[i++];
                if (i >= n) {
                    err = EL_EPARSE;
                    break;
                }
                i++;
            } else if (c == '"') {
                while (i < n && cmd[i] != '"') {
                    if (cmd[i] == '\\' && i + 1 < n && (cmd[i + 1] == '"' || cmd[i + 1] == '\\'))
                        i++;
                    word[w++] = cmd[i++];
                }
                if (i >= n) {
                    err = EL_EPARSE;
                    break;
                }
                i++;
            } else {
                word[w++] = c;
            }
        }
        if (err)
            break;
        if (*argc == MAX_WORDS) {
            err = EL_EPARSE;
            break;
        }
        if (!((*argv)[(*argc)++] = el_aws_dup_n(word, w)))
            err = EL_ENOMEM;
    }
    explicit_bzero(word, n + 1);
    free(word);
    return err;
}

/* Runs the program; its standard output into out. */
static el_err run(const process_source *s, el_buf *out, el_diag *diag)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return el_diag_set(diag, EL_EIO, "%s: cannot make a pipe: %s", s->base.name,
                           strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE); /* edgeload ignores it; the program must not inherit that */
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, s->argv[0], &fa, &at, s->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return el_diag_set(diag, EL_ECONFIG, "%s: cannot run %s: %s", s->base.name,
                           s->argv[0], strerror(rc));
    }
    el_err err = EL_OK;
    double deadline = el_now_ms() + TIMEOUT_MS;
    char chunk[4096];
    for (;;) {
        double left = deadline - el_now_ms();
        if (left <= 0) {
            err = el_diag_set(diag, EL_ECONFIG, "%s: %s did not finish within %.0f s",
                              s->base.name, s->argv[0], TIMEOUT_MS / 1000);
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue; /* the deadline check ends it */
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (el_buf_append(out, chunk, (size_t)got)) {
            err = el_diag_set(diag, EL_ECONFIG, "%s: %s printed more than %u bytes",
                              s->base.name, s->argv[0], MAX_OUTPUT);
            break;
        }
    }
    explicit_bzero(chunk, sizeof chunk);
    close(fds[0]);
    if (err)
        kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!err && WIFEXITED(status) && WEXITSTATUS(status) != 0)
        err = el_diag_set(diag, EL_ECONFIG, "%s: %s exited with status %d", s->base.name,
                          s->argv[0], WEXITSTATUS(status));
    else if (!err && WIFSIGNALED(status))
        err = el_diag_set(diag, EL_ECONFIG, "%s: %s was killed by signal %d", s->base.name,
                          s->argv[0], WTERMSIG(status));
    return err;
}

static el_err process_fetch(el_cred_source *base, el_cred **out, el_diag *diag)
{
    process_source *s = (process_source *)base;
    *out = NULL;
    el_buf text;
    el_buf_init(&text, MAX_OUTPUT);
    el_err err = run(s, &text, diag);
    if (!err) {
        static const el_cred_json_spec spec = {
            .access_key = "AccessKeyId", .secret_key = "SecretAccessKey",
            .token = "SessionToken", .expiration = "Expiration", .version_one = true};
        err = el_cred_from_json(el_buf_str(&text), &spec, s->base.name, out, diag);
    }
    if (text.data)
        explicit_bzero(text.data, text.cap);
    el_buf_free(&text);
    return err;
}

el_err el_cred_process(const el_cred_ctx *ctx, const char *profile, const char *command,
                       el_cred_source **out)
{
    *out = NULL;
    process_source *s = calloc(1, sizeof *s);
    if (!s)
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    s->base.fetch = process_fetch;
    s->base.destroy = process_destroy;
    el_err err = split_words(command, &s->argv, &s->argc);
    if (err == EL_OK && s->argc == 0)
        err = EL_EPARSE;
    if (err) {
        process_destroy(&s->base);
        return err == EL_ENOMEM ? el_diag_set(ctx->diag, err, "out of memory")
                                : el_diag_set(ctx->diag, EL_ECONFIG,
                                              "credential_process of profile '%s' is not a "
                                              "command line (empty, an unterminated quote, or "
                                              "over %d words)", profile, MAX_WORDS);
    }
    char name[600];
    snprintf(name, sizeof name, "credential_process %s (profile %s)", s->argv[0], profile);
    s->base.name = el_aws_dup(name);
    s->profile = el_aws_dup(profile);
    if (!s->base.name || !s->profile) {
        process_destroy(&s->base);
        return el_diag_set(ctx->diag, EL_ENOMEM, "out of memory");
    }
    *out = &s->base;
    return EL_OK;
}
