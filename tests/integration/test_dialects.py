"""A dump is read in its own dialect, whatever its data says.

The differential test: every file of the hostile corpus (tests/fixtures/
hostile, written by mariadb-dump, pg_dump, sqlite3 and the databases' own
CSV exports, see make_fixtures.py beside them) is read by
`edgeload load --dry-run` with every column copied (`--all-columns`, auto
types), once with `--format auto` and once with the format given, and each
value of each row is compared, value by value and type by type, with what
the database itself returned for it (mariadb.json, pg.json, sqlite.json:
queried from the servers, never made by edgeload). Any difference fails,
naming the file, the row, the column and both values. The 1 MiB value of
row 1000 must be a reject with its reason (no DynamoDB item holds it), and
the only one.

Expected types follow the declared column types as `auto` typing promises:
integer/decimal/float columns N, boolean BOOL, binary B, the rest S (CSV:
every column S). Numbers compare as decimals, and as doubles where the
database stores a double (a double column; in sqlite any REAL value).

Also: a dump whose preamble names no tool and whose first statements fit
several dialects stops with exit 2 naming the candidates and --format, and
a statement the chosen dialect cannot have written stops the run (exit 1)
naming the dialect, how it was chosen and the line, instead of rejecting
row after row.

No DynamoDB is needed: --dry-run prints the items.
"""

import base64
import decimal
import json
import os
import sys

from edgeload_test import SOURCE_DIR, EdgeloadTestCase, edgeload_bin, main

import unittest

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "hostile")
COLUMNS = ["id", "note", "v", "i", "d", "f", "flag", "bin", "ts"]

# file, database's answers, --format to give, extra flags, CSV (every column S)
CASES = [
    ("mariadb_extended.sql.zst", "mariadb.json", "mysql", [], False),
    ("mariadb_single.sql.zst", "mariadb.json", "mysql", [], False),
    ("mariadb_complete.sql.zst", "mariadb.json", "mysql", [], False),
    ("mariadb_hexblob.sql.zst", "mariadb.json", "mysql", [], False),
    ("mariadb_compact.sql.zst", "mariadb.json", "mysql", [], False),
    ("mariadb_outfile.tsv.zst", "mariadb.json", "tsv",
     ["--escape", "\\", "--columns", ",".join(COLUMNS)], True),
    ("pg_copy.sql.zst", "pg.json", "postgres", [], False),
    ("pg_inserts.sql.zst", "pg.json", "postgres", [], False),
    ("pg_column_inserts.sql.zst", "pg.json", "postgres", [], False),
    ("pg_rows7.sql.zst", "pg.json", "postgres", [], False),
    ("pg_nonstd.sql.zst", "pg.json", "postgres", [], False),
    ("pg_copy.csv.zst", "pg.json", "csv", [], True),
    ("sqlite.sql.zst", "sqlite.json", "sqlite", [], False),
    ("sqlite.csv.zst", "sqlite.json", "csv", [], True),
]

# The CSV exports hold the blob as hex text: PostgreSQL's encode() writes
# lower case, MariaDB's HEX() and sqlite's hex() upper case.
CSV_HEX_UPPER = {"mariadb.json": True, "pg.json": False, "sqlite.json": True}

FLOAT_TYPES = ("double", "float", "real")


def auto_type(declared):
    """The DynamoDB type `auto` gives a column of this declared type."""
    t = declared.lower()
    first = t.replace("(", " ").split()[0] if t.strip() else ""
    if first in ("bool", "boolean"):
        return "BOOL"
    if first in ("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal",
                 "numeric", "double", "float", "real"):
        return "N"
    if first in ("blob", "tinyblob", "mediumblob", "longblob", "bytea", "binary", "varbinary"):
        return "B"
    return "S"


def load_expected(name):
    with open(os.path.join(FIXTURES, name), encoding="ascii") as f:
        doc = json.load(f)
    assert [c["name"] for c in doc["columns"]] == COLUMNS, doc["columns"]
    return doc


class Dialects(EdgeloadTestCase):

    cells_compared = 0

    @classmethod
    def setUpClass(cls):
        # dry runs only: no DynamoDB Local needed
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise RuntimeError("edgeload binary not found (set EDGELOAD_BIN): %r" % (cls.bin,))

    @classmethod
    def tearDownClass(cls):
        sys.stderr.write("test_dialects: %d cells compared\n" % cls.cells_compared)

    def dry_run(self, path, *flags):
        rejects = os.path.join(self.tmpdir(), "rejects.jsonl")
        proc = self.run_edgeload("load", "--dry-run", "--table", "T", "--pk", "R#{id}",
                                 "--sk", "ROW", "--no-index", "--all-columns", "--progress",
                                 "none", "--rejects", rejects, *flags, path)
        rej = []
        if os.path.exists(rejects):
            with open(rejects, encoding="utf-8", errors="replace") as f:
                rej = [json.loads(line) for line in f if line.strip()]
        return proc, rej

    def expected_cell(self, doc, col, cell, csv):
        """(type, value) the database's answer stands for."""
        decl = next(c["type"] for c in doc["columns"] if c["name"] == col)
        raw = bytes.fromhex(cell)
        if csv:
            if col == "bin":
                h = raw.hex()
                return ("S", h.upper() if CSV_HEX_UPPER[doc["_file"]] else h)
            return ("S", raw.decode("utf-8"))
        kind = auto_type(decl)
        if kind == "N":
            text = raw.decode("ascii")
            is_float = (decl.lower().startswith(FLOAT_TYPES) or
                        (doc["_file"] == "sqlite.json" and any(c in text for c in ".eE")))
            return ("N", float(text) if is_float else decimal.Decimal(text))
        if kind == "BOOL":
            return ("BOOL", raw.decode("ascii").lower() in ("t", "true", "1"))
        if kind == "B":
            return ("B", raw)
        return ("S", raw.decode("utf-8"))

    @staticmethod
    def actual_cell(attr, like):
        (kind, v), = attr.items()
        if kind == "N":
            return ("N", float(v) if isinstance(like, float) else decimal.Decimal(v))
        if kind == "B":
            return ("B", base64.b64decode(v))
        return (kind, v)

    def check_case(self, fname, expected, fmt, flags, csv):
        doc = load_expected(expected)
        doc["_file"] = expected
        path = os.path.join(FIXTURES, fname)
        for given in ("auto", fmt):
            what = "%s (--format %s)" % (fname, given)
            proc, rejects = self.dry_run(path, "--format", given, *flags)
            self.assertExit(proc, 3, what)
            items = {}
            for line in proc.stdout.splitlines():
                item = json.loads(line)["Item"]
                items[item["PK"]["S"]] = item
            # the 1 MiB value: exactly one reject, that row, with its reason
            big = doc["big"]
            self.assertEqual(len(rejects), 1, "%s: rejects %r" % (what, rejects))
            self.assertEqual(rejects[0]["row"].get("id"), str(big["id"]), what)
            self.assertRegex(rejects[0]["reason"], r"'v'.*(400 KB|409600 bytes)", what)
            self.assertEqual(big["length"], 1 << 20, expected)

            diffs = []
            want_keys = set()
            for row in doc["rows"]:
                rid = bytes.fromhex(row[0]).decode()
                key = "R#" + rid
                want_keys.add(key)
                item = items.get(key)
                if item is None:
                    diffs.append("row id=%s: no item" % rid)
                    continue
                for col, cell in zip(COLUMNS, row):
                    Dialects.cells_compared += 1
                    where = "table %s, row id=%s, column %s" % (doc["table"], rid, col)
                    if cell is None:
                        if col in item:
                            diffs.append("%s: database NULL, edgeload %r" % (where, item[col]))
                        continue
                    want = self.expected_cell(doc, col, cell, csv)
                    if col not in item:
                        diffs.append("%s: database %r, edgeload no attribute" % (where, want))
                        continue
                    got = self.actual_cell(item[col], want[1])
                    if got != want:
                        diffs.append("%s: database %r, edgeload %r" % (where, want, got))
            extra = sorted(set(items) - want_keys)
            if extra:
                diffs.append("items for rows the database does not have: %r" % extra[:5])
            self.assertEqual(diffs, [], "%s: %d differences:\n  %s"
                             % (what, len(diffs), "\n  ".join(diffs[:40])))

    def test_corpus_read_to_the_databases_values(self):
        for case in CASES:
            with self.subTest(file=case[0]):
                self.check_case(*case)

    def test_ambiguous_dump_stops_with_the_candidates(self):
        d = self.tmpdir()
        path = self.write_file(d, "plain.sql", "CREATE TABLE t (id int, v text);\n"
                               "INSERT INTO t VALUES (1, 'a\\nb');\n")
        proc, _ = self.dry_run(path)
        self.assertExit(proc, 2, "ambiguous dump")
        for word in ("mysql", "postgres", "sqlite", "--format"):
            self.assertIn(word, proc.stderr)
        proc, _ = self.dry_run(path, "--format", "sqlite")
        self.assertExit(proc, 0, "ambiguous dump, --format sqlite")
        self.assertIn('"v":{"S":"a\\\\nb"}', proc.stdout)

    def test_foreign_statement_stops_the_run(self):
        # a sqlite3 .dump read as MySQL, a pg_dump COPY dump read as MySQL or sqlite
        cases = [("sqlite.sql.zst", "mysql", "PRAGMA", ":1:"),
                 ("pg_copy.sql.zst", "mysql", "\\restrict", ":5:"),
                 ("pg_copy.sql.zst", "sqlite", "\\restrict", ":5:"),
                 ("mariadb_extended.sql.zst", "postgres", "/*M!999999", ":1:"),
                 ("mariadb_compact.sql.zst", "sqlite", "/*", ":1:")]
        for fname, fmt, evidence, line in cases:
            with self.subTest(file=fname, format=fmt):
                proc, rejects = self.dry_run(os.path.join(FIXTURES, fname), "--format", fmt)
                self.assertExit(proc, 1, "%s read as %s" % (fname, fmt))
                self.assertEqual(rejects, [])
                self.assertEqual(proc.stdout, "")
                self.assertIn(evidence, proc.stderr)
                self.assertIn(fname + line, proc.stderr)
                self.assertIn("read as %s (--format %s)" % (fmt, fmt), proc.stderr)


if __name__ == "__main__":
    main()
