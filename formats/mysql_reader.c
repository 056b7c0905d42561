/*
 * mysql_reader.c - mysqldump / mariadb-dump scripts as rows.
 *
 * DESIGN: the statement walk is shared (sql_dump.c) and the literal rules
 * are the lexer's mysql dialect (backslash escapes, 0x/X''/b'' literals,
 * conditional comments, DELIMITER). What is left here is the one value form
 * only MySQL has: a BIT(n) column is dumped as a binary string (raw bytes,
 * or 0x.. with --hex-blob), and we yield its number, as `SELECT col+0` shows
 * it, so the mapping can treat bit(1) as a boolean.
 */
#include "formats/reader.h"
#include "formats/sql_dump.h"

#include <stdint.h>  /* uint64_t */

el_err el_mysql_reader_open(el_input *in, const el_reader_opts *opts,
                            const el_reader_ops **ops, void **self, el_diag *diag)
{
    return el_sql_dump_open(in, EL_SQL_MYSQL, opts, ops, self, diag);
}

el_err el_sql_mysql_bits_to_decimal(el_buf *v)
{
    if (v->len > 8)
        return EL_EPARSE;
    uint64_t x = 0;
    for (size_t i = 0; i < v->len; i++)
        x = (x << 8) | (unsigned char)v->data[i];
    char text[24];
    size_t n = 0;
    do {
        text[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    el_buf_reset(v);
    for (size_t i = 0; i < n; i++) {
        el_err err = el_buf_putc(v, text[n - 1 - i]);
        if (err)
            return err;
    }
    return EL_OK;
}
