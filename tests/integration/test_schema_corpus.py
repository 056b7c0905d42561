"""Every column of every table of the schema corpus, read as the database has it.

The differential test of the dump readers' grammar and typing: the corpus
in tests/fixtures/schema (made by make_fixtures.py beside it with
mariadb-dump, pg_dump and sqlite3) names columns by every keyword of
MySQL/MariaDB, PostgreSQL and sqlite, in tables of about 100 columns, and
has typed tables (PostgreSQL domains, enums, arrays, json/jsonb, money, ...;
MariaDB JSON, SET, ENUM, ...). Each dump variant is read table by table
(`--source-table`) by `edgeload load --dry-run --all-columns`, once with
`--format auto` and once with the format given, and every cell is compared
with what the database itself returned for it (mariadb.json, pg.json,
sqlite.json): the column present with the database's value, typed as
`auto` promises (integer/numeric/decimal/float -> N, boolean -> BOOL,
binary -> B, the rest S; a PostgreSQL domain as its base type), SQL NULL
absent, and nothing else in the item.

The tests are separate so that a failure says which part fails:
  test_keyword_columns       the kw_* tables and the table `key` (every keyword)
  test_typed_columns         the typed tables, but for domain-typed columns
  test_pg_domain_columns     PostgreSQL columns whose type is a domain
  test_json_mapping          json/jsonb/JSON columns mapped with type json
  test_set_mapping           MariaDB SET / comma lists mapped with SS and NS
Each failure names the file, the format, the table, the row and the column,
with the database's and edgeload's values; a summary (tables, variants,
cells compared and differing) goes to stderr.

No DynamoDB is needed: --dry-run prints the items.
"""

import base64
import decimal
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import SOURCE_DIR, assert_no_sanitizer_report, edgeload_bin  # noqa: E402

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "schema")

# dump file, the database's answers, --format to give
VARIANTS = [
    ("mariadb_extended.sql.zst", "mariadb.json", "mysql"),
    ("mariadb_single.sql.zst", "mariadb.json", "mysql"),
    ("mariadb_complete.sql.zst", "mariadb.json", "mysql"),
    ("mariadb_compact.sql.zst", "mariadb.json", "mysql"),
    ("mariadb_hexblob.sql.zst", "mariadb.json", "mysql"),
    ("pg_copy.sql.zst", "pg.json", "postgres"),
    ("pg_inserts.sql.zst", "pg.json", "postgres"),
    ("pg_column_inserts.sql.zst", "pg.json", "postgres"),
    ("pg_rows3.sql.zst", "pg.json", "postgres"),
    ("sqlite.sql.zst", "sqlite.json", "sqlite"),
]
DIALECT = {"mariadb.json": "mysql", "pg.json": "postgres", "sqlite.json": "sqlite"}

# The typed tables' columns that hold JSON text, and those that hold a
# comma-separated list (a MariaDB SET; text in a varchar/TEXT column).
JSON_COLUMNS = {"mariadb.json": ["doc"], "pg.json": ["doc", "docb"], "sqlite.json": ["doc"]}
LIST_COLUMNS = {"mariadb.json": {"tags": "SS", "nums": "NS"},
                "sqlite.json": {"tags": "SS", "nums": "NS"}}

NUMBER_TYPES = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal",
                "numeric", "double", "float", "real")
FLOAT_TYPES = ("double", "float", "real")
BINARY_TYPES = ("blob", "tinyblob", "mediumblob", "longblob", "bytea", "binary", "varbinary")


def first_word(declared):
    return declared.lower().replace("(", " ").split()[0] if declared.strip() else ""


def auto_type(declared, dialect):
    """The DynamoDB type `auto` gives a column whose (base) type is declared."""
    if declared.endswith("]"):
        return "S"  # a PostgreSQL array's text
    w = first_word(declared)
    if w in ("bool", "boolean"):
        return "BOOL"
    if w in NUMBER_TYPES or (w == "year" and dialect == "mysql"):
        return "N"
    if w in BINARY_TYPES:
        return "B"
    return "S"


def load_doc(name):
    with open(os.path.join(FIXTURES, name), encoding="ascii") as f:
        doc = json.load(f)
    doc["_file"] = name
    return doc


def num(text):
    return decimal.Decimal(text)


def from_ddb(attr):
    """A DynamoDB JSON value as comparable Python: (type, value)."""
    (kind, v), = attr.items()
    if kind == "N":
        return ("N", num(v))
    if kind == "B":
        return ("B", base64.b64decode(v))
    if kind == "M":
        return ("M", {k: from_ddb(x) for k, x in v.items()})
    if kind == "L":
        return ("L", [from_ddb(x) for x in v])
    if kind == "SS":
        return ("SS", frozenset(v))
    if kind == "NS":
        return ("NS", frozenset(num(x) for x in v))
    if kind == "NULL":
        return ("NULL", True)
    return (kind, v)


def from_json(v):
    """A parsed JSON value (numbers as Decimal) as the DynamoDB value `json` makes of it."""
    if v is None:
        return ("NULL", True)
    if isinstance(v, bool):
        return ("BOOL", v)
    if isinstance(v, decimal.Decimal):
        return ("N", v)
    if isinstance(v, str):
        return ("S", v)
    if isinstance(v, list):
        return ("L", [from_json(x) for x in v])
    return ("M", {k: from_json(x) for k, x in v.items()})


class SchemaCorpus(unittest.TestCase):

    maxDiff = None
    runs = {}          # (file, format, table, extra flags) -> (exit, items, rejects, stderr)
    counts = {}        # test name -> [cells compared, cells differing]
    failures = {}      # test name -> [(file, format, table, differences, first)]
    variants_read = set()
    tables_read = set()

    @classmethod
    def setUpClass(cls):
        # dry runs only: no DynamoDB Local needed
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise RuntimeError("edgeload binary not found (set EDGELOAD_BIN): %r" % (cls.bin,))
        cls.docs = {n: load_doc(n) for n in ("mariadb.json", "pg.json", "sqlite.json")}
        cls.tmp = tempfile.mkdtemp(prefix="edgeload-schema-")

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", cls.tmp])
        compared = sum(c[0] for c in cls.counts.values())
        differing = sum(c[1] for c in cls.counts.values())
        sys.stderr.write("test_schema_corpus: %d tables, %d dump variants, %d edgeload runs, "
                         "%d cells compared, %d differing\n"
                         % (len(cls.tables_read), len(cls.variants_read), len(cls.runs),
                            compared, differing))
        for name in sorted(cls.counts):
            sys.stderr.write("  %-28s %6d cells compared, %5d differing\n"
                             % (name, cls.counts[name][0], cls.counts[name][1]))
            for fname, given, table, ndiffs, first in cls.failures.get(name, []):
                sys.stderr.write("    FAIL %s --format %s table %s: %d differences; %s\n"
                                 % (fname, given, table, ndiffs, first[:220]))

    def dry_run(self, fname, given, table, flags):
        """Items by PK of one table of one dump; cached across the tests."""
        key = (fname, given, table, tuple(flags))
        if key in self.runs:
            return self.runs[key]
        rejects = os.path.join(self.tmp, "rejects.jsonl")
        if os.path.exists(rejects):
            os.unlink(rejects)
        args = [self.bin, "load", "--dry-run", "--table", "T", "--pk", "R#{id}", "--sk", "ROW",
                "--no-index", "--progress", "none", "--rejects", rejects, "--format", given,
                "--source-table", table] + list(flags) + [os.path.join(FIXTURES, fname)]
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace",
                              timeout=120)
        assert_no_sanitizer_report(proc.stderr)
        items = {}
        for line in proc.stdout.splitlines():
            item = json.loads(line)["Item"]
            items[item["PK"]["S"]] = item
        rej = []
        if os.path.exists(rejects):
            with open(rejects, encoding="utf-8", errors="replace") as f:
                rej = [json.loads(line) for line in f if line.strip()]
        self.runs[key] = (proc.returncode, items, rej, proc.stderr)
        self.variants_read.add(fname)
        self.tables_read.add((DIALECT[[v[1] for v in VARIANTS if v[0] == fname][0]], table))
        return self.runs[key]

    def expected_auto(self, doc, col, cell):
        """(type, value) that `auto` makes of the database's text of a cell."""
        dialect = DIALECT[doc["_file"]]
        kind = auto_type(col["base"], dialect)
        if kind == "N":
            return ("N", num(cell))
        if kind == "BOOL":
            return ("BOOL", cell.lower() in ("t", "true", "1"))
        if kind == "B":
            return ("B", bytes.fromhex(cell))
        return ("S", cell)

    @staticmethod
    def same(doc, col, want, got):
        """Equal; a double (or a sqlite REAL) compares as a double."""
        if want[0] == "N" and got[0] == "N":
            is_float = (first_word(col["base"]) in FLOAT_TYPES or
                        (doc["_file"] == "sqlite.json" and any(c in str(want[1]) for c in ".eE")))
            if is_float:
                return float(want[1]) == float(got[1])
        return want == got

    def compare(self, test, fname, given, table, select, flags, expect, attr_of=None):
        """Compares the items of one run with the database's rows.

        select(doc, col) says which columns to compare; expect(col, cell) gives the
        (type, value) expected for a non-null cell (None: the attribute is
        absent). With --all-columns (attr_of None), an attribute that is no
        column of the table is a difference too. Returns the differences."""
        doc = self.docs[[v[1] for v in VARIANTS if v[0] == fname][0]]
        t = next(x for x in doc["tables"] if x["name"] == table)
        code, items, rejects, stderr = self.dry_run(fname, given, table, flags)
        counts = self.counts.setdefault(test, [0, 0])
        diffs = []
        if code != 0:
            diffs.append("exit %d; %d rejects%s; stderr: %s"
                         % (code, len(rejects),
                            " (first: %s)" % rejects[0].get("reason") if rejects else "",
                            " | ".join(stderr.strip().splitlines()[:2])))
        names = [c["name"] for c in t["columns"]]
        ids = set()
        for row in t["rows"]:
            rid = row[names.index("id")]
            pk = "R#" + rid
            ids.add(pk)
            item = items.get(pk)
            for col, cell in zip(t["columns"], row):
                if not select(doc, col):
                    continue
                counts[0] += 1
                where = "row id=%s, column %s%s" % (rid, col["name"],
                                                    " (bare in the dump)" if col["unquoted"]
                                                    else "")
                attr = attr_of(col) if attr_of else col["name"]
                want = None if cell is None else expect(col, cell)
                if item is None:
                    diffs.append("%s: no item (row rejected or lost)" % where)
                    counts[1] += 1
                    continue
                if want is None:
                    if attr in item:
                        diffs.append("%s: database %s, edgeload %r"
                                     % (where, "NULL" if cell is None else repr(cell), item[attr]))
                        counts[1] += 1
                    continue
                if attr not in item:
                    diffs.append("%s: database %r, edgeload no attribute" % (where, want))
                    counts[1] += 1
                    continue
                got = from_ddb(item[attr])
                if not self.same(doc, col, want, got):
                    diffs.append("%s: database %r, edgeload %r" % (where, want, got))
                    counts[1] += 1
            if item is not None and attr_of is None:
                extra = sorted(set(item) - set(names) - {"PK", "SK"})
                if extra:
                    diffs.append("row id=%s: attributes that are no column: %s"
                                 % (rid, ", ".join(extra[:10])))
        extra = sorted(set(items) - ids)
        if extra:
            diffs.append("items for rows the database does not have: %r" % extra[:5])
        return diffs

    def check(self, test, fnames, tables_of, select, flags, expect, attr_of=None):
        for fname, expected, fmt in VARIANTS:
            if fname not in fnames:
                continue
            doc = self.docs[expected]
            for table in tables_of(doc):
                for given in ("auto", fmt):
                    with self.subTest(file=fname, format=given, table=table):
                        diffs = self.compare(test, fname, given, table, select, flags(doc),
                                             lambda col, cell: expect(doc, col, cell), attr_of)
                        if diffs:
                            self.failures.setdefault(test, []).append(
                                (fname, given, table, len(diffs), diffs[0]))
                        self.assertEqual(diffs, [], "%s (--format %s), table %s: %d differences:"
                                         "\n  %s" % (fname, given, table, len(diffs),
                                                     "\n  ".join(diffs[:25])))

    # ---- the tests ---------------------------------------------------------

    def test_keyword_columns(self):
        self.check("keyword_columns", [v[0] for v in VARIANTS],
                   lambda doc: [t["name"] for t in doc["tables"] if t["name"] != "typed"],
                   lambda doc, col: True, lambda doc: ["--all-columns"], self.expected_auto)

    def test_typed_columns(self):
        self.check("typed_columns", [v[0] for v in VARIANTS], lambda doc: ["typed"],
                   lambda doc, col: col["base"] == col["type"], lambda doc: ["--all-columns"],
                   self.expected_auto)

    def test_pg_domain_columns(self):
        # a domain's column, typed as its base type: year and recent_year
        # (a domain over a domain) over integer -> N, "Amount" -> N, yes -> BOOL
        doc = self.docs["pg.json"]
        typed = next(t for t in doc["tables"] if t["name"] == "typed")
        self.assertGreaterEqual(sum(c["base"] != c["type"] for c in typed["columns"]), 5)
        self.check("pg_domain_columns", [v[0] for v in VARIANTS if v[1] == "pg.json"],
                   lambda doc: ["typed"], lambda doc, col: col["base"] != col["type"],
                   lambda doc: ["--all-columns"], self.expected_auto)

    def test_json_mapping(self):
        def flags(doc):
            return sum((["--attr", "%s=%s:json" % (c, c)] for c in JSON_COLUMNS[doc["_file"]]), [])

        def expect(doc, col, cell):
            return from_json(json.loads(cell, parse_float=num, parse_int=num))
        self.check("json_mapping", [v[0] for v in VARIANTS], lambda doc: ["typed"],
                   lambda doc, col: col["name"] in JSON_COLUMNS[doc["_file"]],
                   flags, expect, attr_of=lambda col: col["name"])

    def test_set_mapping(self):
        def flags(doc):
            return sum((["--attr", "%s=%s:%s" % (c, c, k)]
                        for c, k in LIST_COLUMNS[doc["_file"]].items()), [])

        def expect(doc, col, cell):
            kind = LIST_COLUMNS[doc["_file"]][col["name"]]
            if cell == "":
                return None  # an empty list omits the attribute
            parts = cell.split(",")
            return (kind, frozenset(num(p) for p in parts) if kind == "NS" else frozenset(parts))
        self.check("set_mapping", [v[0] for v in VARIANTS if v[1] in LIST_COLUMNS],
                   lambda doc: ["typed"],
                   lambda doc, col: col["name"] in LIST_COLUMNS[doc["_file"]],
                   flags, expect, attr_of=lambda col: col["name"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
