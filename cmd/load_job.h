/*
 * load_job.h - what `load` and `counters` do the same way around
 * el_load_run: the run's options from the shared ones, s3:// inputs, the
 * client and its table check, the rejects file, progress and rejects shown
 * on stderr, signals caught, and everything freed at the end.
 *
 * A command fills its own fields of job.lo between cmd_load_job_init and
 * cmd_load_job_prepare. The job must stay where it is while it runs: the
 * run points at its progress and reject display.
 */
#ifndef EL_CMD_LOAD_JOB_H
#define EL_CMD_LOAD_JOB_H

#include <stdbool.h>  /* bool */

#include "cmd/options.h"
#include "cmd/progress.h"
#include "cmd/runner.h"
#include "cmd/s3_cli.h"
#include "pipeline/load/loader.h"
#include "pipeline/rows/rejects.h"

typedef struct cmd_load_job {
    el_load_opts lo;            /* the run */
    el_mapping *m;              /* owned: freed by cmd_load_job_free */
    el_aws_config *cfg;         /* NULL until connected */
    el_ddb *ddb;
    el_rejects *rej;
    cli_s3 s3c;
    progress prog;
    cmd_reject_shower shower;
} cmd_load_job;

/* Takes m (freed with the job, even when m is NULL) and fills the run's
 * options that come from the shared ones as every writer reads them:
 * reader, threads, concurrency (default_concurrency when not given),
 * --max-retry-time, --max-wcu, --checkpoint/--resume and the stop flag. */
void cmd_load_job_init(cmd_load_job *j, const cmd_options *o, el_mapping *m,
                       int default_concurrency);

/* The steps between the options and el_load_run: s3:// inputs (and
 * positional ones), with connect the client and the table check (need: as
 * cmd_check_table), the rejects file, progress and rejects shown on stderr
 * as the options say, SIGINT/SIGTERM caught. Returns 0, or the exit status
 * after printing why. */
int cmd_load_job_prepare(cmd_load_job *j, const cmd_options *o, bool connect, unsigned need);

/* Runs the prepared job: el_load_run into st, its error printed and kept in
 * *err. Returns the exit status of *err (cmd_exit_code); EXIT_USAGE means
 * the run stopped before writing anything, so there is no summary to show. */
int cmd_load_job_run(cmd_load_job *j, el_load_stats *st, el_err *err);

void cmd_load_job_free(cmd_load_job *j);

#endif
