/*
 * sql_pending.c - placeholder until the SQL dump readers land (issue 3).
 * Each open fails with a clear usage error instead of pretending to read.
 * Removed when formats/mysql_reader.c & co. are merged.
 */
#include "formats/reader.h"

static el_err pending(el_input *in, const char *what, el_diag *diag)
{
    return el_diag_set(diag, EL_EUSAGE, "%s: reading %s dumps is not implemented yet",
                       el_input_name(in), what);
}

el_err el_mysql_reader_open(el_input *in, const el_reader_opts *opts,
                            const el_reader_ops **ops, void **self, el_diag *diag)
{
    (void)opts; (void)ops; (void)self;
    return pending(in, "mysql", diag);
}

el_err el_postgres_reader_open(el_input *in, const el_reader_opts *opts,
                               const el_reader_ops **ops, void **self, el_diag *diag)
{
    (void)opts; (void)ops; (void)self;
    return pending(in, "postgres", diag);
}

el_err el_sqlite_reader_open(el_input *in, const el_reader_opts *opts,
                             const el_reader_ops **ops, void **self, el_diag *diag)
{
    (void)opts; (void)ops; (void)self;
    return pending(in, "sqlite", diag);
}
