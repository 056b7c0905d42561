/*
 * load_job.c - the setup and teardown `load` and `counters` share around
 * el_load_run (load_job.h).
 */
#include "cmd/load_job.h"

#include <string.h>  /* memset */

#include "cmd/cli.h"
#include "cmd/knobs.h"

void cmd_load_job_init(cmd_load_job *j, const cmd_options *o, el_mapping *m,
                       int default_concurrency)
{
    memset(j, 0, sizeof *j);
    j->m = m;
    j->s3c.endpoint = o->endpoint_s3;
    el_load_opts *lo = &j->lo;
    lo->reader = o->reader;
    lo->threads = o->threads;
    lo->concurrency = o->concurrency ? o->concurrency : default_concurrency;
    lo->max_retry_time_s = o->max_retry_time_s;
    lo->max_wcu = o->max_wcu;
    lo->checkpoint_path = o->checkpoint;
    lo->checkpoint_interval_s = o->checkpoint_interval_s;
    lo->resume = o->resume;
    lo->stop = &cmd_stop;
    cmd_knobs kn;
    cmd_knobs_read(&kn);
    lo->part_bytes = kn.part_bytes;
    lo->dedup_memory = kn.dedup_memory;
    lo->tmp_dir = kn.tmp_dir;
    lo->bench_no_pacing = kn.no_pacing;
    lo->bench_no_table_rate = kn.no_table_rate;
    lo->bench_no_interleave = kn.no_interleave;
}

int cmd_load_job_prepare(cmd_load_job *j, const cmd_options *o, bool connect, unsigned need)
{
    const char **inputs = o->map.inputs;
    size_t ninputs = o->map.ninputs;
    int rc = EXIT_FATAL;
    if (!cli_s3_inputs(&j->s3c, &o->aws, j->m, &inputs, &ninputs, &j->lo.reader, &rc))
        return rc;
    if (connect) {
        if (!cli_connect(&o->aws, &j->cfg, &j->ddb))
            return EXIT_USAGE;
        if ((rc = cmd_check_table(j->ddb, j->cfg, j->m, need)))
            return rc;
    }
    if (!(j->rej = el_rejects_new(o->rejects, o->max_rejects))) {
        cli_error("out of memory");
        return EXIT_FATAL;
    }
    el_load_opts *lo = &j->lo;
    lo->mapping = j->m;
    lo->inputs = ninputs ? inputs : NULL;
    lo->ninputs = ninputs;
    lo->ddb = j->ddb;
    lo->rejects = j->rej;
    progress_init(&j->prog, o->quiet ? PROGRESS_NONE : o->progress, o->progress_interval_s);
    lo->progress = progress_report;
    lo->progress_user = &j->prog;
    j->shower.quiet = o->quiet;
    lo->on_reject = cmd_show_reject;
    lo->reject_user = &j->shower;
    cmd_catch_signals();
    return 0;
}

int cmd_load_job_run(cmd_load_job *j, el_load_stats *st, el_err *err)
{
    el_diag d;
    el_diag_clear(&d);
    *err = el_load_run(&j->lo, st, &d);
    if (*err)
        cli_error("%s", d.msg);
    return cmd_exit_code(*err);
}

void cmd_load_job_free(cmd_load_job *j)
{
    el_rejects_free(j->rej);
    el_mapping_free(j->m);
    el_ddb_free(j->ddb);
    el_aws_config_free(j->cfg);
    cli_s3_free(&j->s3c);
    memset(j, 0, sizeof *j);
}
