/*
 * lockfile.c - flock on a lock file, with the holder written in it.
 *
 * DESIGN: flock, not fcntl locks: fcntl locks belong to the process and
 * are dropped when any descriptor of the file is closed (the checkpoint
 * writer opens the checkpoint's directory for fsync), while a flock belongs
 * to the open file description we keep. Both are released by the kernel
 * when the holder dies, which is what makes a stale lock impossible. The
 * holder's description is written only after the lock is ours, and read by
 * the loser only to name the holder in its message.
 */
#include "common/lockfile.h"

#include <errno.h>     /* EWOULDBLOCK, EINTR */
#include <fcntl.h>     /* open */
#include <stdio.h>     /* snprintf */
#include <stdlib.h>    /* calloc, free */
#include <string.h>    /* strerror, strcspn */
#include <sys/file.h>  /* flock */
#include <time.h>      /* time, gmtime_r, strftime */
#include <unistd.h>    /* gethostname, getpid, ftruncate, pwrite, pread, close */

struct el_lockfile {
    int fd;
};

void el_lockfile_free(el_lockfile *l)
{
    if (!l)
        return;
    if (l->fd >= 0)
        close(l->fd); /* drops the flock */
    free(l);
}

el_err el_lockfile_take(const char *path, const char *what, el_lockfile **out, el_diag *diag)
{
    *out = NULL;
    el_lockfile *l = calloc(1, sizeof *l);
    if (!l)
        return el_diag_set(diag, EL_ENOMEM, "out of memory");
    l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (l->fd < 0) {
        int e = errno;
        el_lockfile_free(l);
        return el_diag_set(diag, EL_EIO, "cannot create the lock file %s: %s", path,
                           strerror(e));
    }
    int rc;
    while ((rc = flock(l->fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        int e = errno;
        char holder[512] = "";
        ssize_t n = pread(l->fd, holder, sizeof holder - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
        el_lockfile_free(l);
        if (e != EWOULDBLOCK)
            return el_diag_set(diag, EL_EIO, "cannot lock %s: %s", path, strerror(e));
        return el_diag_set(diag, EL_EUSAGE,
                           "%s is in use by %s (lock file %s): wait for that run to end or "
                           "stop it; a lock of a run that died is free again",
                           what, holder[0] ? holder : "another edgeload run", path);
    }
    char host[256] = "?", when[32] = "?", line[900];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* first line: who, as the loser quotes it; second: what for */
    int len = snprintf(line, sizeof line, "edgeload pid %ld on host %s since %s\n%s\n",
                       (long)getpid(), host, when, what);
    if (len < 0 || (size_t)len >= sizeof line)
        len = (int)strlen(line);
    /* best effort: the lock is what matters, the text only names its holder */
    if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, line, (size_t)len, 0) < 0)
        (void)0;
    *out = l;
    return EL_OK;
}
