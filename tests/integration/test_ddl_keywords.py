"""Dumps whose columns are named by key words, domains and enums: read whole.

The fixtures (tests/fixtures/ddl, written by pg_dump 15, sqlite3 and
mariadb-dump, see make_fixtures.sh beside them) hold a table whose columns
are named key, fulltext, index, primary, check, unique (and exclude, period,
spatial), quoted as each tool quotes them: pg_dump and sqlite3 leave the
words their dialect does not reserve bare. Each dump is read by
`edgeload load --dry-run --all-columns` with `--format auto` and with the
format given, and every column of every row is compared with what the
database itself returned (<name>.expected), value by value, with the
DynamoDB type `auto` typing gives it (docs/types.md): PostgreSQL domains
over integer/numeric/boolean (one over another) are N/BOOL, an enum, an
array, tsvector, uuid, interval, inet, money and point are S.

No DynamoDB is needed: --dry-run prints the items.
"""

import decimal
import json
import os

from edgeload_test import SOURCE_DIR, EdgeloadTestCase, edgeload_bin, main

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "ddl")

PG_TYPES = {
    "id": "N", "key": "S", "value": "S", "fulltext": "S", "index": "N", "primary": "BOOL",
    "check": "N", "unique": "S", "exclude": "S", "release_year": "N", "made": "N",
    "cost": "N", "tag": "S", "ok": "BOOL", "feeling": "S", "tags": "S", "uid": "S",
    "span": "S", "addr": "S", "pay": "S", "pt": "S",
}
MY_TYPES = {
    "id": "N", "key": "S", "fulltext": "S", "index": "N", "primary": "N", "check": "N",
    "unique": "S", "period": "N", "spatial": "S",
}
SQ_TYPES = {
    "key": "S", "value": "S", "index": "N", "primary": "N", "check": "N", "unique": "S",
    "fulltext": "S",
}
BR_TYPES = {"key": "S", "value": "N", "primary": "S"}

# dump, expected rows, format given, the column the rows are keyed by, types
CASES = [
    ("pg_copy.sql", "pg.expected", "postgres", "id", PG_TYPES),
    ("pg_inserts.sql", "pg.expected", "postgres", "id", PG_TYPES),
    ("pg_column_inserts.sql", "pg.expected", "postgres", "id", PG_TYPES),
    ("mysql.sql", "mysql.expected", "mysql", "id", MY_TYPES),
    ("sqlite.sql", "sqlite.expected", "sqlite", "key", SQ_TYPES),
    ("sqlite_brackets.sql", "sqlite_brackets.expected", "sqlite", "key", BR_TYPES),
    ("sqlite_brackets_script.sql", "sqlite_brackets.expected", "sqlite", "key", BR_TYPES),
]


def read_expected(name):
    """[{column: text or None}] from the database's own answer."""
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    cols = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        cells = line.split("\t")
        assert len(cells) == len(cols), (name, line)
        rows.append({c: (None if v == "\\N" else v) for c, v in zip(cols, cells)})
    return cols, rows


class DdlKeywordDumps(EdgeloadTestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise RuntimeError("edgeload binary not found (set EDGELOAD_BIN): %r" % (cls.bin,))

    def dry_run(self, path, pk, *flags):
        proc = self.run_edgeload("load", "--dry-run", "--table", "T", "--pk", "R#{%s}" % pk,
                                 "--sk", "ROW", "--no-index", "--all-columns", "--progress",
                                 "none", *flags, path)
        return proc

    def expected_value(self, kind, text, col, fname):
        if kind == "N":
            return ("N", decimal.Decimal(text))
        if kind == "BOOL":
            if text.lower() not in ("t", "f", "true", "false", "1", "0"):
                self.fail("%s: column %s: %r is no boolean" % (fname, col, text))
            return ("BOOL", text.lower() in ("t", "true", "1"))
        return ("S", text)

    def test_every_column_and_value(self):
        checked = 0
        for fname, expected, fmt, pk, types in CASES:
            cols, rows = read_expected(expected)
            self.assertEqual(sorted(cols), sorted(types), expected)
            for given in ("auto", fmt):
                with self.subTest(dump=fname, format=given):
                    proc = self.dry_run(os.path.join(FIXTURES, fname), pk, "--format", given)
                    self.assertEqual(proc.returncode, 0, "%s --format %s: %s" %
                                     (fname, given, proc.stderr))
                    items = [json.loads(line)["Item"] for line in proc.stdout.splitlines()
                             if line.startswith("{")]
                    self.assertEqual(len(items), len(rows), fname)
                    by_key = {it[pk][next(iter(it[pk]))]: it for it in items}
                    for row in rows:
                        item = by_key.get(row[pk])
                        self.assertIsNotNone(item, "%s: no item for %s=%s" %
                                             (fname, pk, row[pk]))
                        # every attribute is a column of the table, none lost or added
                        got_cols = set(item) - {"PK", "SK"}
                        want_cols = {c for c in cols if row[c] is not None}
                        self.assertEqual(got_cols, want_cols, "%s row %s" % (fname, row[pk]))
                        for c in want_cols:
                            (kind, v), = item[c].items()
                            want = self.expected_value(types[c], row[c], c, fname)
                            got = (kind, decimal.Decimal(v) if kind == "N" else v)
                            self.assertEqual(got, want, "%s row %s column %s" %
                                             (fname, row[pk], c))
                            checked += 1
        self.assertGreater(checked, 100)

    def test_missing_column_names_the_create_table(self):
        # the pg dump with its CREATE TABLE's key column taken out: the rows
        # name it, and the message says where the CREATE TABLE is and what
        # edgeload read from it
        with open(os.path.join(FIXTURES, "pg_column_inserts.sql"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("    key text NOT NULL,\n", text)
        broken = text.replace("    key text NOT NULL,\n", "", 1)
        line = broken[:broken.index("CREATE TABLE public.settings")].count("\n") + 1
        path = os.path.join(self.tmpdir(), "broken.sql")
        with open(path, "w", encoding="utf-8") as f:
            f.write(broken)
        proc = self.dry_run(path, "id", "--format", "postgres")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("broken.sql:%d" % line, proc.stderr)
        self.assertIn("'key'", proc.stderr)
        self.assertIn("id, value, fulltext", proc.stderr)


if __name__ == "__main__":
    main()
