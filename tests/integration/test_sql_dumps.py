"""Every SQL fixture dump (tests/fixtures/sql: made by mariadb-dump, pg_dump
and sqlite3 from real databases) loads into DynamoDB Local with each value
and each type equal to what the database itself returned (the .expected
files, written by make_fixtures.sh from a query, never by edgeload).

Each row becomes one item, PK = R#<key>, SK = ROW (or T#<second key>), with
one attribute per column typed `auto`: number columns N, boolean BOOL,
binary B, the rest S; SQL NULL leaves the attribute out. The `ratio` columns
are left out: they hold 1e300, beyond DynamoDB's number range.
"""

import binascii
import decimal
import json
import os

from edgeload_test import SOURCE_DIR, EdgeloadTestCase, main

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "sql")
SKIP_COLUMNS = {"ratio"}

# dump, source table, expected file, pk column, sk column (None: "ROW")
CASES = [
    ("mariadb_default.sql", "samples", "mariadb.samples.expected", "id", None),
    ("mariadb_complete.sql", "samples", "mariadb.samples.expected", "id", None),
    ("mariadb_hexblob.sql", "samples", "mariadb.samples.expected", "id", None),
    ("mariadb_single.sql", "samples", "mariadb.samples.expected", "id", None),
    ("mariadb_default.sql.zst", "follows", "mariadb.follows.expected",
     "follower_id", "followee_id"),
    ("pg_copy.sql", "public.samples", "pg_copy.samples.expected", "id", None),
    ("pg_copy.sql.gz", "app.Edge List", "pg.edge_list.expected", "Src", "dst Col"),
    ("pg_inserts.sql", "samples", "pg_inserts.samples.expected", "id", None),
    ("pg_column_inserts.sql", "samples", "pg_inserts.samples.expected", "id", None),
    ("pg_rows3.sql", "follows", "pg.follows.expected", "follower_id", "followee_id"),
    ("sqlite.sql", "samples", "sqlite.samples.expected", "id", None),
    ("sqlite.sql.zst", "follows", "sqlite.follows.expected", "follower_id", "followee_id"),
]


def read_expected(name):
    with open(os.path.join(FIXTURES, name), "rb") as f:
        lines = f.read().decode("ascii").split("\n")
    cols = lines[0].split("\t")
    types = lines[1].split("\t")
    rows = []
    for line in lines[2:]:
        if not line:
            continue
        vals = []
        for v in line.split("\t"):
            vals.append(None if v == "NULL" else binascii.unhexlify(v[1:]))
        rows.append(dict(zip(cols, vals)))
    return cols, types, rows


def expected_attr(kind, raw):
    if kind == "number":
        return ("N", decimal.Decimal(raw.decode()))
    if kind == "bool":
        return ("BOOL", raw.decode().lower() in ("t", "true", "1"))
    if kind == "binary":
        return ("B", raw)
    return ("S", raw.decode("utf-8"))


def actual_attr(value):
    (kind, v), = value.items()
    if kind == "N":
        return ("N", decimal.Decimal(v))
    if kind == "B":
        return ("B", bytes(v))
    return (kind, v)


class SqlDumps(EdgeloadTestCase):

    def load_case(self, dump, table_name, expected, pk_col, sk_col):
        cols, types, rows = read_expected(expected)
        table = self.unique_table("sql")
        self.create_table_boto(table, index=False)
        attrs = {c: {"column": c} for c in cols if c not in SKIP_COLUMNS}
        mapping = {"table": table, "sources": [{
            "name": "dump", "input": os.path.join(FIXTURES, dump),
            "source_table": table_name,
            "pk": "R#{%s}" % pk_col, "sk": ("T#{%s}" % sk_col) if sk_col else "ROW",
            "index": False, "attributes": attrs}]}
        path = self.write_file(self.tmpdir(), "mapping.json", json.dumps(mapping))
        proc = self.load("--mapping", path, "--progress", "none")
        self.assertExit(proc, 0, "edgeload load %s" % dump)

        items = {}
        for item in self.scan_all(table):
            items[(item["PK"]["S"], item["SK"]["S"])] = item
        self.assertEqual(len(items), len(rows), dump)
        for row in rows:
            key = ("R#" + row[pk_col].decode(),
                   ("T#" + row[sk_col].decode()) if sk_col else "ROW")
            self.assertIn(key, items, "%s: no item for %r" % (dump, key))
            item = items[key]
            for col, kind in zip(cols, types):
                if col in SKIP_COLUMNS:
                    continue
                raw = row[col]
                if raw is None:
                    self.assertNotIn(col, item, "%s %r: NULL column %s" % (dump, key, col))
                    continue
                self.assertIn(col, item, "%s %r: column %s missing" % (dump, key, col))
                self.assertEqual(actual_attr(item[col]), expected_attr(kind, raw),
                                 "%s %r: column %s" % (dump, key, col))

    def test_every_fixture(self):
        for case in CASES:
            with self.subTest(dump=case[0], table=case[1]):
                self.load_case(*case)


if __name__ == "__main__":
    main()
