"""The json, SS and NS attribute types, end to end against DynamoDB Local.

Three inputs made by the real tools (tests/fixtures/types/make_fixtures.sh):
a mariadb-dump of a table with a JSON and a SET column, a pg_dump of json
and jsonb columns, and a CSV written by sqlite3. Each is loaded with json,
SS and NS attributes, then every item is read back with boto3 and compared
with what the value each database holds (<name>.expected, queried from the
database, never made by edgeload) must become, worked out here by an
independent reading of the rules: Python's json module with numbers kept as
text, sets split, de-duplicated, left out when empty. Rows the rules
refuse (a number beyond DynamoDB's range, nesting past its 32 levels, a member
named twice, text that is not JSON, an NS member that is no number) must be
rejects naming their column, and the only ones. Numbers compare as
decimals (DynamoDB gives "1.50" back as "1.5") and sets as sets (it gives
them back in any order). Then `edgeload verify` of the same mapping passes,
and the --output files (DynamoDB JSON for S3 import) hold the same items.
"""

import decimal
import glob
import gzip
import json
import os
import subprocess

from edgeload_test import SOURCE_DIR, EdgeloadTestCase, main, read_jsonl

FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures", "types")
# DynamoDB's 32 levels count the attribute itself: 31 objects or arrays
# one in another at most.
MAX_NESTING = 31


class Refused(Exception):
    pass


def ddb_number(text):
    """text as DynamoDB takes a number, or Refused."""
    try:
        d = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise Refused("not a number: %r" % text)
    if not d.is_finite():
        raise Refused("not a number: %r" % text)
    if d != 0:
        digits = "".join(map(str, d.as_tuple().digits)).strip("0")
        sig = len(digits)
        if sig > 38:
            raise Refused("more than 38 significant digits")
        if d.adjusted() > 125 or d.adjusted() < -130:
            raise Refused("out of DynamoDB's range")
    return {"N": text.strip().lstrip("+")}


def json_to_ddb(text):
    """The DynamoDB value a JSON text must become, or Refused."""
    if not text.strip():
        raise Refused("empty")

    def pairs(kv):
        names = [k for k, _ in kv]
        if len(set(names)) != len(names):
            raise Refused("a member named twice")
        return ("M", kv)

    def no_constant(name):
        raise Refused("not JSON: %s" % name)

    try:
        v = json.loads(text, object_pairs_hook=pairs, parse_int=lambda s: ("N", s),
                       parse_float=lambda s: ("N", s), parse_constant=no_constant)
    except ValueError as e:
        raise Refused("not JSON: %s" % e)

    def conv(v, depth):
        if isinstance(v, tuple) and v[0] == "N":
            return ddb_number(v[1])
        if isinstance(v, tuple) and v[0] == "M":
            if depth + 1 > MAX_NESTING:
                raise Refused("too deep")
            return {"M": {k: conv(x, depth + 1) for k, x in v[1]}}
        if isinstance(v, list):
            if depth + 1 > MAX_NESTING:
                raise Refused("too deep")
            return {"L": [conv(x, depth + 1) for x in v]}
        if isinstance(v, bool):
            return {"BOOL": v}
        if v is None:
            return {"NULL": True}
        if isinstance(v, str):
            return {"S": v}
        raise AssertionError(v)

    return conv(v, 0)


def set_to_ddb(text, delim, numbers):
    """{"SS": [...]} / {"NS": [...]}, None for an empty set, or Refused."""
    members = [m.strip() if numbers else m for m in text.split(delim)]
    members = [m for m in members if m]
    if not members:
        return None
    if numbers:
        seen = {}
        for m in members:
            ddb_number(m)
            seen.setdefault(decimal.Decimal(m), m)
        return {"NS": [ddb_number(m)["N"] for m in seen.values()]}
    return {"SS": sorted(set(members))}


def same(want, got):
    """Equal as DynamoDB means it: numbers as decimals, sets as sets."""
    if set(want) != set(got) or len(want) != 1:
        return False
    (t, w), g = next(iter(want.items())), next(iter(got.values()))
    if t == "N":
        return decimal.Decimal(w) == decimal.Decimal(g)
    if t == "NS":
        return sorted(map(decimal.Decimal, w)) == sorted(map(decimal.Decimal, g))
    if t == "SS":
        return sorted(w) == sorted(g)
    if t == "L":
        return len(w) == len(g) and all(same(a, b) for a, b in zip(w, g))
    if t == "M":
        return set(w) == set(g) and all(same(w[k], g[k]) for k in w)
    return w == g


def read_expected(name, columns):
    """id -> {column: text or None}, from the database's own answers."""
    rows = {}
    with open(os.path.join(FIXTURES, name), encoding="ascii") as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            assert len(cells) == len(columns) + 1, (name, cells)
            rows[cells[0]] = {c: None if v == "NULL" else bytes.fromhex(v[1:]).decode("utf-8")
                              for c, v in zip(columns, cells[1:])}
    return rows


# input, its expected file, the columns in it, attribute specs (column -> type,
# delimiter), and the ids that must be rejects with the column that refuses them
CASES = {
    "mariadb": ("mariadb.sql", "mariadb.expected", ["doc", "tags", "nums"],
                {"doc": ("json", None), "tags": ("SS", None), "nums": ("NS", ";")},
                {"6": "doc", "9": "nums", "10": "doc"}),
    "postgres": ("pg.sql", "pg.expected", ["doc", "docb", "tags", "nums"],
                 {"doc": ("json", None), "docb": ("json", None), "tags": ("SS", None),
                  "nums": ("NS", ";")},
                 {"4": "doc", "5": "doc", "6": "doc"}),
    "csv": ("rows.csv", "csv.expected", ["doc", "tags", "nums"],
            {"doc": ("json", None), "tags": ("SS", "|"), "nums": ("NS", None)},
            {"2": "doc", "3": "doc", "6": "nums", "7": "doc"}),
}


class Types(EdgeloadTestCase):

    def mapping(self, d, table, case):
        path, _, _, attrs, _ = CASES[case]
        spec = {}
        for col, (typ, delim) in attrs.items():
            spec[col] = {"column": col, "type": typ}
            if delim:
                spec[col]["delimiter"] = delim
        m = {"table": table, "sources": [{
            "name": case, "input": os.path.join(FIXTURES, path), "pk": "DOC#{id}",
            "sk": "ROW", "index": False, "attributes": spec}]}
        return self.write_file(d, "mapping.json", json.dumps(m))

    def expected_items(self, case):
        """id -> expected attributes, and id -> the column that refuses it."""
        _, expected, columns, attrs, _ = CASES[case]
        items, refused = {}, {}
        for rid, row in read_expected(expected, columns).items():
            item = {"PK": {"S": "DOC#" + rid}, "SK": {"S": "ROW"}}
            for col, (typ, delim) in attrs.items():
                text = row[col]
                if text is None:
                    continue
                try:
                    v = (json_to_ddb(text) if typ == "json"
                         else set_to_ddb(text, delim or ",", typ == "NS"))
                except Refused:
                    refused.setdefault(rid, col)
                    continue
                if v is not None:
                    item[col] = v
            if rid not in refused:
                items[rid] = item
        return items, refused

    def check_case(self, case):
        d = self.tmpdir()
        table = self.unique_table("types")
        self.create_table_boto(table, index=False)
        mapping = self.mapping(d, table, case)
        items, refused = self.expected_items(case)
        # the fixtures hold what the test means them to: the oracle agrees
        self.assertEqual(refused, CASES[case][4])
        self.assertGreaterEqual(len(items), 3)

        rejects = os.path.join(d, "rejects.jsonl")
        proc = self.load("--mapping", mapping, "--rejects", rejects, "--progress", "none", cwd=d)
        self.assertExit(proc, 3, "edgeload load (with rejects)")
        got_rejects = {r["row"]["id"]: r for r in read_jsonl(rejects)}
        self.assertEqual(sorted(got_rejects), sorted(refused))
        cols = ["id"] + CASES[case][2]
        for rid, col in refused.items():
            r = got_rejects[rid]
            self.assertIn("column '%s' as " % col, r["reason"])
            self.assertEqual(r["column"], cols.index(col) + 1, r)
            # stderr tells it with the file:line:column prefix
            self.assertIn("%s:%d:%d: column '%s'" % (r["input"], r["line"], r["column"], col),
                          proc.stderr)

        got = {i["PK"]["S"][len("DOC#"):]: i for i in self.scan_all(table)}
        self.assertEqual(sorted(got), sorted(items))
        for rid, want in items.items():
            self.assertTrue(same({"M": want}, {"M": got[rid]}),
                            "row %s of %s:\nwant %s\ngot  %s" % (rid, case, want, got[rid]))

        # verify reads them back and finds them as the input says (the rows
        # refused above are known: --allow-rejected)
        proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                 "--allow-rejected", "--progress", "none",
                                 cwd=os.path.dirname(mapping))
        self.assertExit(proc, 0, "edgeload verify")
        return mapping, items

    def test_mariadb_dump(self):
        self.check_case("mariadb")

    def test_pg_dump(self):
        self.check_case("postgres")

    def test_csv(self):
        self.check_case("csv")

    def test_verify_finds_a_changed_set_and_map(self):
        """verify is not blind: a set member or a nested number changed in the
        table is reported."""
        mapping, items = self.check_case("mariadb")
        with open(mapping, encoding="utf-8") as f:
            table = json.load(f)["table"]
        self.ddb.update_item(TableName=table, Key={"PK": {"S": "DOC#1"}, "SK": {"S": "ROW"}},
                             UpdateExpression="SET doc.price = :p",
                             ExpressionAttributeValues={":p": {"N": "1.51"}})
        proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                 "--allow-rejected", "--progress", "none",
                                 cwd=os.path.dirname(mapping))
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        self.ddb.update_item(TableName=table, Key={"PK": {"S": "DOC#1"}, "SK": {"S": "ROW"}},
                             UpdateExpression="SET doc.price = :p",
                             ExpressionAttributeValues={":p": {"N": "1.5"}})
        proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                 "--allow-rejected", "--progress", "none",
                                 cwd=os.path.dirname(mapping))
        self.assertExit(proc, 0, "edgeload verify (the number put back, as 1.5)")
        self.ddb.update_item(TableName=table, Key={"PK": {"S": "DOC#4"}, "SK": {"S": "ROW"}},
                             UpdateExpression="DELETE tags :t",
                             ExpressionAttributeValues={":t": {"SS": ["green"]}})
        proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                 "--allow-rejected", "--progress", "none",
                                 cwd=os.path.dirname(mapping))
        self.assertNotEqual(proc.returncode, 0, proc.stderr)

    def test_attr_flags_take_the_types(self):
        """--attr NAME=COLUMN:json / :SS / :NS (and --const) give the items the
        mapping file does (the flags' set delimiter is the default ',')."""
        d = self.tmpdir()
        items, _ = self.expected_items("mariadb")
        rejects = os.path.join(d, "rej.jsonl")
        proc = self.run_edgeload(
            "load", "--dry-run", "--table", "T", "--pk", "DOC#{id}", "--sk", "ROW",
            "--no-index", "--attr", "doc=doc:json", "--attr", "tags=tags:ss",
            "--attr", "n=id:NS", "--const", "k=[1,{\"a\":2.50}]:JSON",
            "--const", "c=b,a,b:SS", "--rejects", rejects, "--progress", "none",
            os.path.join(FIXTURES, "mariadb.sql"), cwd=d)
        self.assertExit(proc, 3, "edgeload load --dry-run (with rejects)")
        got = {}
        for line in proc.stdout.splitlines():
            item = json.loads(line)["Item"]
            got[item["PK"]["S"][len("DOC#"):]] = item
        # row 9 was refused only for its nums, which these flags leave out
        self.assertEqual(sorted(r["row"]["id"] for r in read_jsonl(rejects)), ["10", "6"])
        self.assertEqual(sorted(got), sorted(list(items) + ["9"]))
        row9 = read_expected("mariadb.expected", ["doc", "tags", "nums"])["9"]
        items["9"] = {"PK": {"S": "DOC#9"}, "SK": {"S": "ROW"}, "doc": json_to_ddb(row9["doc"]),
                      "tags": set_to_ddb(row9["tags"], ",", False)}
        for rid, item in got.items():
            want = dict(items[rid])
            want.pop("nums", None)
            want["n"] = {"NS": [rid]}
            want["k"] = {"L": [{"N": "1"}, {"M": {"a": {"N": "2.50"}}}]}
            want["c"] = {"SS": ["a", "b"]}
            self.assertTrue(same({"M": want}, {"M": item}), (rid, want, item))

    def test_output_files_hold_dynamodb_json(self):
        """--output writes the same items as DynamoDB JSON lines."""
        d = self.tmpdir()
        mapping = self.mapping(d, "T", "postgres")
        items, _ = self.expected_items("postgres")
        out = os.path.join(d, "out")
        proc = self.run_edgeload("load", "--mapping", mapping, "--output", out,
                                 "--rejects", os.path.join(d, "rej.jsonl"), "--progress", "none",
                                 cwd=d)
        self.assertExit(proc, 3, "edgeload load --output (with rejects)")
        lines = []
        for path in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
            if os.path.isfile(path) and not path.endswith((".json", ".md5")):
                with open(path, "rb") as f:
                    data = f.read()
                if path.endswith(".gz"):
                    data = gzip.decompress(data)
                elif path.endswith(".zst"):
                    data = subprocess.run(["zstd", "-dc"], input=data, capture_output=True,
                                          check=True).stdout
                lines += [json.loads(x) for x in data.decode("utf-8").splitlines() if x]
        got = {x["Item"]["PK"]["S"][len("DOC#"):]: x["Item"] for x in lines}
        self.assertEqual(sorted(got), sorted(items))
        for rid, want in items.items():
            self.assertTrue(same({"M": want}, {"M": got[rid]}), (rid, want, got[rid]))


if __name__ == "__main__":
    main()
