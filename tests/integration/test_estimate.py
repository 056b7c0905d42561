#!/usr/bin/python3
"""`edgeload plan` estimates the job by DynamoDB's rules, checked against a
reference computed here, independently, from the rows themselves.

The rows make items of mixed size (notes from nothing to 3 KB with
multibyte text, numbers of 1 to 38 significant digits, negative, with
leading and trailing zeros, booleans, NULLs left out, epoch timestamps),
some over a KB, a few over several, plus an entity source without an index
and a few keys repeated (duplicates). The reference sizes every attribute
as boto3/DynamoDB documents it (name bytes + value: a string's UTF-8 bytes,
a number's (significant digits + 1) // 2 + 1, a boolean 1), an item's write
units as one per started KB (at least one), and an index write for every
item with the index keys, by its entry's size: the item under projection
ALL, its table and index key attributes under KEYS_ONLY. The plan's
--plan-out estimate must hold exactly those units per source and in total,
the hottest partitions, and the times at the limits: the default, and with
--endpoint-url a provisioned table's own (DynamoDB Local, KEYS_ONLY index).
Its import figures must match what `--output` then writes.
"""
import json
import math
import os
import random
import subprocess
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import EdgeloadTestCase, main  # noqa: E402

ROWS = 4000
WORDS = ["caf\u00e9", "na\u00efve", "\u65e5\u672c", "\U0001f600", "plain", "x" * 50]


def number_size(text):
    """DynamoDB's size of a number: significant digits (leading and
    trailing zeros trimmed), one byte per two, plus one."""
    digits = text.lstrip("+-").replace(".", "")
    digits = digits.lstrip("0").rstrip("0")
    return (len(digits) + 1) // 2 + 1


def wcu(size):
    return max(1, math.ceil(size / 1024))


def utf8(s):
    return len(s.encode("utf-8"))


def make_rows(seed=77):
    rng = random.Random(seed)
    rows = []
    for i in range(ROWS):
        a = "u%d" % rng.randrange(600)
        b = "t%d" % (rng.randrange(40) if rng.random() < 0.5 else rng.randrange(4000))
        if i % 100 == 99 and rows:                 # a duplicate key, a later value
            a, b = rows[-1 - rng.randrange(min(50, len(rows)))][:2]
        # sizes spread over every byte count up to 3.5 KB, so that a byte
        # more or less anywhere moves items across KB boundaries
        n = rng.randrange(3500) if rng.random() < 0.6 else rng.randrange(40)
        note = None if n == 0 else "".join(rng.choice(WORDS) + " "
                                           for _ in range(n // 4 + 1))[:n]
        digits = rng.randrange(1, 39)
        score = str(rng.randrange(10 ** (digits - 1), 10 ** digits))
        if rng.random() < 0.3:
            score = "-" + score
        if rng.random() < 0.3:
            score = score + "000"                   # trailing zeros: not significant
        if rng.random() < 0.2 and len(score.lstrip("-")) > 2:
            s = score.lstrip("-")
            score = ("-" if score.startswith("-") else "") + s[:1] + "." + s[1:] + "0"
        flag = rng.choice(["true", "false"])
        ts = 1700000000 + rng.randrange(10 ** 7)
        when = datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        rows.append((a, b, note, score, flag, when, ts))
    return rows


def follows_item_sizes(row, keys_only=False):
    """(item size, index entry size, PK, GSI1PK) as DynamoDB sizes them."""
    a, b, note, score, flag, when, ts = row
    pk, sk = "ACTOR#" + a, "TARGET#" + b
    keys = utf8("PK") + utf8(pk) + utf8("SK") + utf8(sk)
    index_keys = utf8("GSI1PK") + utf8(sk) + utf8("GSI1SK") + utf8(pk)
    size = keys + index_keys
    if note is not None:
        size += utf8("note") + utf8(note)
    size += utf8("score") + number_size(score)
    size += utf8("flag") + 1
    size += utf8("createdAt") + number_size(str(ts))
    size += utf8("edgeType") + utf8("FOLLOWS")
    entry = keys + index_keys if keys_only else size
    return size, entry, pk, sk


def csv_field(v):
    if v is None:
        return ""                                   # unquoted empty: NULL, left out
    return '"' + v.replace('"', '""') + '"'


class EstimateTest(EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = cls._dir = __import__("tempfile").mkdtemp(prefix="edgeload-estimate-")
        cls.rows = make_rows()
        with open(os.path.join(cls.dir, "follows.csv"), "w", encoding="utf-8") as f:
            f.write("a,b,note,score,flag,created\n")
            for a, b, note, score, flag, when, _ in cls.rows:
                f.write("%s,%s,%s,%s,%s,%s\n" % (a, b, csv_field(note), score, flag, when))
        cls.users = [("u%d" % i, "name %d" % i * (1 + i % 300)) for i in range(600)]
        with open(os.path.join(cls.dir, "users.csv"), "w", encoding="utf-8") as f:
            f.write("id,name\n" + "".join("%s,%s\n" % u for u in cls.users))

    @classmethod
    def tearDownClass(cls):
        __import__("shutil").rmtree(cls._dir, ignore_errors=True)

    def mapping(self, table):
        path = os.path.join(self.dir, "m-%s.json" % table)
        with open(path, "w") as f:
            json.dump({"table": table, "sources": [
                {"name": "follows", "input": "follows.csv", "pk": "ACTOR#{a}",
                 "sk": "TARGET#{b}", "attributes": {
                     "note": {"column": "note"}, "score": {"column": "score", "type": "N"},
                     "flag": {"column": "flag", "type": "BOOL"},
                     "createdAt": {"column": "created", "type": "epoch"},
                     "edgeType": {"value": "FOLLOWS"}}},
                {"name": "users", "input": "users.csv", "pk": "USER#{id}", "sk": "PROFILE",
                 "index": False, "attributes": "*"}]}, f)
        return path

    def reference(self, keys_only=False):
        src = {}
        table_parts, index_parts = {}, {}
        t_wcu = i_wcu = items = 0
        for row in self.rows:
            size, entry, pk, ipk = follows_item_sizes(row, keys_only)
            t_wcu += wcu(size)
            i_wcu += wcu(entry)
            items += 1
            table_parts[pk] = table_parts.get(pk, 0) + wcu(size)
            index_parts[ipk] = index_parts.get(ipk, 0) + wcu(entry)
        src["follows"] = {"items": items, "table_wcu": t_wcu, "index_wcu": i_wcu}
        u_wcu = 0
        for uid, name in self.users:
            size = utf8("PK") + utf8("USER#" + uid) + utf8("SK") + utf8("PROFILE") + \
                utf8("id") + utf8(uid) + utf8("name") + utf8(name)
            u_wcu += wcu(size)
            table_parts["USER#" + uid] = table_parts.get("USER#" + uid, 0) + wcu(size)
        src["users"] = {"items": len(self.users), "table_wcu": u_wcu, "index_wcu": 0}
        return src, table_parts, index_parts

    def plan(self, table, *extra):
        out = os.path.join(self.dir, "plan-%s.json" % table)
        proc = self.run_edgeload("plan", "--mapping", self.mapping(table), "--plan-out", out,
                                 *extra)
        self.assertExit(proc, 0)
        with open(out) as f:
            return proc, json.load(f)["estimate"]

    def check_units(self, est, ref, table_parts, index_parts):
        by_name = {s["name"]: s for s in est["sources"]}
        for name, want in ref.items():
            got = by_name[name]
            for k in ("items", "table_wcu", "index_wcu"):
                self.assertEqual(got[k], want[k], (name, k))
        total = est["total"]
        self.assertEqual(total["table_wcu"], sum(r["table_wcu"] for r in ref.values()))
        self.assertEqual(total["index_wcu"], sum(r["index_wcu"] for r in ref.values()))
        hot_t = max(table_parts.items(), key=lambda kv: kv[1])
        hot_i = max(index_parts.items(), key=lambda kv: kv[1])
        self.assertEqual(total["hottest_table_partition"]["wcu"], hot_t[1])
        self.assertEqual(table_parts[total["hottest_table_partition"]["key"]], hot_t[1])
        self.assertEqual(total["hottest_index_partition"]["wcu"], hot_i[1])
        self.assertEqual(index_parts[total["hottest_index_partition"]["key"]], hot_i[1])
        return total, max(hot_t[1], hot_i[1])

    def test_units_times_and_import_against_the_reference(self):
        ref, tp, ip = self.reference()
        # mixed sizes: some items over a KB, some over several
        sizes = [follows_item_sizes(r)[0] for r in self.rows]
        self.assertGreater(sum(1 for s in sizes if s > 1024), 300)
        self.assertGreater(max(sizes), 3072)
        proc, est = self.plan("EstDefault", "--price-wru", "1.25", "--price-import-gb", "0.15")
        total, hot = self.check_units(est, ref, tp, ip)
        self.assertEqual(est["limits"]["table_wcu"], 40000)
        self.assertEqual(est["limits"]["index_projection"], "ALL")
        wcu_all = total["table_wcu"] + total["index_wcu"]
        self.assertAlmostEqual(total["seconds_at_limit"],
                               max(total["table_wcu"], total["index_wcu"]) / 40000, places=6)
        self.assertAlmostEqual(total["floor_seconds"], hot / 1000, places=6)
        self.assertAlmostEqual(total["api_usd"], wcu_all / 1e6 * 1.25, places=9)
        self.assertIn("estimate, from every item as load writes it", proc.stdout)
        self.assertIn("Import from S3", proc.stdout)
        # the import: what --output writes, each key once
        out = os.path.join(self.dir, "out")
        o = self.run_edgeload("load", "--mapping", self.mapping("EstDefault"), "--output", out,
                              "--progress", "none")
        self.assertExit(o, 0)
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        imp = est["import"]
        self.assertEqual(imp["items"], manifest["item_count"])
        self.assertEqual(imp["bytes"], sum(p["uncompressed_bytes"] for p in manifest["parts"]))
        self.assertEqual(imp["objects"], len(manifest["parts"]))
        self.assertEqual(imp["max_objects"], 50000)
        distinct = len({(r[0], r[1]) for r in self.rows}) + len(self.users)
        self.assertEqual(imp["items"], distinct)
        self.assertLess(imp["items"], ROWS + len(self.users))   # duplicates merged
        self.assertAlmostEqual(imp["import_usd"], imp["bytes"] / 2 ** 30 * 0.15, places=9)
        # --table-wcu: the times at that limit
        _, est = self.plan("EstFlag", "--table-wcu", "250")
        t = est["total"]
        self.assertAlmostEqual(t["seconds_at_limit"],
                               max(t["table_wcu"], t["index_wcu"]) / 250, places=6)
        self.assertAlmostEqual(t["least_seconds"], max(t["seconds_at_limit"], hot / 1000),
                               places=6)

    def test_the_tables_own_limits(self):
        # a provisioned table on DynamoDB Local, its index KEYS_ONLY
        table = self.unique_table("estprov")
        attrs = [{"AttributeName": n, "AttributeType": "S"}
                 for n in ("PK", "SK", "GSI1PK", "GSI1SK")]
        self.ddb.create_table(
            TableName=table, AttributeDefinitions=attrs, BillingMode="PROVISIONED",
            ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 300},
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{
                "IndexName": "GSI1", "Projection": {"ProjectionType": "KEYS_ONLY"},
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                              {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
                "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 100}}])
        _, est = self.plan(table, *self.endpoint_args())
        self.assertEqual(est["limits"]["table_wcu"], 300)
        self.assertEqual(est["limits"]["index_wcu"], 100)
        self.assertEqual(est["limits"]["index_projection"], "KEYS_ONLY")
        self.assertIn("DescribeTable", est["limits"]["basis"])
        ref, tp, ip = self.reference(keys_only=True)
        total, _ = self.check_units(est, ref, tp, ip)
        self.assertEqual(total["index_wcu"], ROWS)  # every key entry is under a KB
        self.assertAlmostEqual(total["seconds_at_limit"],
                               max(total["table_wcu"] / 300, total["index_wcu"] / 100),
                               places=6)
        # a table that is not there: a warning, the default limits
        proc = self.run_edgeload("plan", "--mapping", self.mapping("NoSuchTableHere"),
                                 "--quiet", *self.endpoint_args())
        self.assertExit(proc, 0)
        self.assertIn("does not exist", proc.stderr)


if __name__ == "__main__":
    main()
