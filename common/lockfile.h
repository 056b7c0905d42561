/*
 * lockfile.h - one process at a time on a checkpoint or an --output
 * directory: an advisory lock (flock) on a lock file beside it, taken
 * before the first write and held until the lock is freed or the process
 * ends.
 *
 * The lock file holds who took it (pid, host, start time, what for), so a
 * second run that finds it held can say who holds it. The kernel drops a
 * flock when its holder dies, so a lock file left by a killed run never
 * blocks the next one: only a living process holds a lock. The file itself
 * is left in place (removing it would race with a second run opening it).
 */
#ifndef EL_LOCKFILE_H
#define EL_LOCKFILE_H

#include "common/error.h"

typedef struct el_lockfile el_lockfile;

/*
 * Takes the lock on path (created if missing, mode 0644) without waiting,
 * and writes "pid host start what" into it. what says what the lock guards
 * ("checkpoint /data/job.ckpt"). Errors: EL_EUSAGE when another process
 * holds it, diag naming that process ("... is in use by edgeload pid 4242
 * on host db1 since 2026-12-03T10:00:00Z"); EL_EIO when the lock file
 * cannot be created or locked. *out NULL on failure.
 */
el_err el_lockfile_take(const char *path, const char *what, el_lockfile **out,
                        el_diag *diag) EL_MUST_USE;

/* Releases the lock. NULL is a no-op. */
void el_lockfile_free(el_lockfile *l);

#endif
