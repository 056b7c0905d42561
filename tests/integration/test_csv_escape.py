"""CSV/TSV with --escape: the SELECT ... INTO OUTFILE files under
tests/fixtures/outfile (written by a real MariaDB server, see the script
beside them) load into DynamoDB Local with every value equal to what the
server itself returned (expected.json, queried from the server, never made
by edgeload): `\\N` leaves the attribute out, the empty string, the text
`N` and the text `\\N` stay apart, NUL, tabs, CR/LF, quotes, backslashes
and a 100 KB value come through byte for byte.

Also through the mapping file ("escape": "\\"), and the PostgreSQL
`COPY ... CSV` rule for --null: a quoted field equal to it is text.
"""

import binascii
import json
import os

from edgeload_test import SOURCE_DIR, EdgeloadTestCase, main

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "outfile")
COLUMNS = ["id", "a", "b", "n", "z"]

# file, reader flags
CASES = [
    ("tab.txt", ["--format", "tsv"]),
    ("tab_crlf.txt", ["--format", "tsv"]),
    ("comma.txt", ["--format", "tsv", "--delimiter", ","]),
    ("csv.csv", ["--format", "csv"]),
    ("csv_opt.csv", ["--format", "csv"]),
    ("csv_crlf.csv", ["--format", "csv"]),
]


def expected_rows():
    with open(os.path.join(FIXTURES, "expected.json"), encoding="ascii") as f:
        doc = json.load(f)
    assert doc["columns"] == COLUMNS
    rows = []
    for r in doc["rows"]:
        rows.append([None if v is None else binascii.unhexlify(v).decode("utf-8")
                     for v in r])
    return rows


class CsvEscape(EdgeloadTestCase):

    def check_table(self, table, what):
        rows = expected_rows()
        items = {item["PK"]["S"]: item for item in self.scan_all(table)}
        self.assertEqual(len(items), len(rows), what)
        for row in rows:
            key = "R#" + row[0]
            self.assertIn(key, items, "%s: no item for %s" % (what, key))
            item = items[key]
            for col, want in zip(COLUMNS, row):
                if want is None:
                    self.assertNotIn(col, item, "%s %s: %s is NULL" % (what, key, col))
                    continue
                self.assertIn(col, item, "%s %s: %s missing" % (what, key, col))
                self.assertEqual(item[col], {"S": want}, "%s %s: column %s" % (what, key, col))

    def test_outfile_fixtures_with_flags(self):
        for name, flags in CASES:
            with self.subTest(file=name):
                table = self.unique_table("esc")
                self.create_table_boto(table, index=False)
                proc = self.load("--table", table, "--pk", "R#{id}", "--sk", "ROW",
                                 "--no-index", "--all-columns", "--escape", "\\",
                                 "--columns", ",".join(COLUMNS), *flags,
                                 "--progress", "none", os.path.join(FIXTURES, name))
                self.assertExit(proc, 0, "edgeload load %s" % name)
                self.check_table(table, name)

    def test_outfile_through_mapping(self):
        table = self.unique_table("escm")
        self.create_table_boto(table, index=False)
        mapping = {"table": table, "sources": [{
            "name": "outfile", "input": os.path.join(FIXTURES, "csv_opt.csv"),
            "format": "csv", "escape": "\\", "columns": COLUMNS,
            "pk": "R#{id}", "sk": "ROW", "index": False, "attributes": "*"}]}
        path = self.write_file(self.tmpdir(), "mapping.json", json.dumps(mapping))
        proc = self.load("--mapping", path, "--progress", "none")
        self.assertExit(proc, 0, "edgeload load --mapping")
        self.check_table(table, "mapping")

    def test_escape_usage_errors(self):
        for bad in ("ab", ","):
            proc = self.run_edgeload("load", "--dry-run", "--table", "T", "--pk", "R#{a}",
                                     "--sk", "ROW", "--escape", bad, "--format", "csv",
                                     os.path.join(FIXTURES, "csv.csv"))
            self.assertExit(proc, 2, "edgeload --escape %r" % bad)
            self.assertIn("escape", proc.stderr)

    def test_quoted_null_string_is_text(self):
        # PostgreSQL COPY ... TO STDOUT (FORMAT csv, NULL '\N', HEADER)
        d = self.tmpdir()
        path = self.write_file(d, "copy.csv", 'id,v,w\n1,\\N,"\\N"\n2,"",\n')
        proc = self.run_edgeload("load", "--dry-run", "--table", "T", "--pk", "R#{id}",
                                 "--sk", "ROW", "--no-index", "--all-columns",
                                 "--null", "\\N", path)
        self.assertExit(proc, 0, "edgeload load --dry-run --null")
        items = {}
        for line in proc.stdout.splitlines():
            item = json.loads(line)["Item"]
            items[item["PK"]["S"]] = item
        self.assertNotIn("v", items["R#1"])
        self.assertEqual(items["R#1"]["w"], {"S": "\\N"})
        self.assertEqual(items["R#2"]["v"], {"S": ""})
        self.assertEqual(items["R#2"]["w"], {"S": ""})


if __name__ == "__main__":
    main()
