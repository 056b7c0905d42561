"""Hot targets written by several sources (issue 25) against DynamoDB Local.

Two sources with the same templates and "hot": {"threshold": 10,
"max_shards": 8} share index keys: a.csv holds 40 followers of bob and b.csv
25 more; amy has 6 in each (hot only together); cat 4 + 3 (not hot). The
fan-in of an index key is counted over every source, so the table must be
exactly the one a single source holding all the edges (all.csv) makes: the
same directory items (bob: 7 shards, fanIn 65; amy: 2 and 12), and every
edge of either source on the shard FNV-1a-64(GSI1SK) mod N names, which the
test reads back with a boto3 Query of each shard; the plain keys of hot
targets list nothing. The same through the counting pass, `plan --plan-out`
+ `load --plan` (one input on standard input), `--split 1/2` and `2/2`,
`--output` and `--dry-run`, and a load killed with SIGKILL then resumed.
`verify --reverse` passes on such a table and fails on one where an edge of
the second source sits on the plain key (what edgeload did before).
"""

import json
import math
import os
import signal
import subprocess
import time

from edgeload_test import EdgeloadTestCase, S, N, canon_sorted, fnv1a64, main

THRESHOLD, MAX_SHARDS = 10, 8
A = {"bob": 40, "amy": 6, "cat": 4, "dan": 2}
B = {"bob": 25, "amy": 6, "cat": 3, "eve": 1}


def rows(counts, prefix):
    """(follower, target) rows: counts[target] followers named prefix + number."""
    return [("%s%02d" % (prefix, i), t) for t in sorted(counts) for i in range(counts[t])]


ROWS_A, ROWS_B = rows(A, "a"), rows(B, "b")
FAN_IN = {t: A.get(t, 0) + B.get(t, 0) for t in set(A) | set(B)}


def shards(fan_in):
    if fan_in < THRESHOLD:
        return 1
    return max(2, min(MAX_SHARDS, math.ceil(fan_in / THRESHOLD)))


def expected_items():
    """What one source holding every edge makes: the edges and the
    directory item of each hot target."""
    items = []
    for a, t in ROWS_A + ROWS_B:
        n, isk = shards(FAN_IN[t]), "ACTOR#" + a
        ipk = "TARGET#" + t if n == 1 else "TARGET#%s#%d" % (t, fnv1a64(isk.encode()) % n)
        items.append({"PK": S(isk), "SK": S("TARGET#" + t), "GSI1PK": S(ipk), "GSI1SK": S(isk)})
    for t, f in FAN_IN.items():
        if shards(f) > 1:
            items.append({"PK": S("TARGET#" + t), "SK": S("#SHARDS"), "shards": N(shards(f)),
                          "fanIn": N(f)})
    return items


class HotSourcesTest(EdgeloadTestCase):

    def setUp(self):
        self.d = self.tmpdir()
        for name, data in (("a.csv", ROWS_A), ("b.csv", ROWS_B), ("all.csv", ROWS_A + ROWS_B)):
            self.write_file(self.d, name, "a,b\n" + "".join("%s,%s\n" % r for r in data))
        hot = {"threshold": THRESHOLD, "max_shards": MAX_SHARDS}
        src = lambda name, inp: {"name": name, "input": inp, "pk": "ACTOR#{a}",
                                 "sk": "TARGET#{b}", "hot": hot}
        self.two = self.write_file(self.d, "two.json", json.dumps(
            {"table": "unset", "sources": [src("a", "a.csv"), src("b", "b.csv")]}))
        self.one = self.write_file(self.d, "one.json", json.dumps(
            {"table": "unset", "sources": [src("all", "all.csv")]}))

    def new_table(self, name):
        table = self.unique_table(name)
        self.create_table_boto(table)
        return table

    def check_table(self, table):
        """The table is exactly what one source of every edge makes, and a
        reader following the directory items finds every edge."""
        items = self.scan_all(table)
        self.assertEqual(canon_sorted(items), canon_sorted(expected_items()))
        for t, f in FAN_IN.items():
            n = shards(f)
            got = []
            if n > 1:
                d = self.get_item(table, "TARGET#" + t, "#SHARDS")
                self.assertEqual((d["shards"], d["fanIn"]), (N(n), N(f)), t)
                for k in range(n):
                    part = self.query_index(table, "TARGET#%s#%d" % (t, k))
                    for i in part:  # each on the shard the rule names
                        self.assertEqual(fnv1a64(i["GSI1SK"]["S"].encode()) % n, k)
                    got += part
                # nothing left under the plain key, where no reader looks
                self.assertEqual(self.query_index(table, "TARGET#" + t), [], t)
            else:
                self.assertIsNone(self.get_item(table, "TARGET#" + t, "#SHARDS"))
                got = self.query_index(table, "TARGET#" + t)
            want = {"ACTOR#" + a for a, x in ROWS_A + ROWS_B if x == t}
            self.assertEqual(sorted(i["GSI1SK"]["S"] for i in got), sorted(want), t)

    def verify(self, table, mapping, *extra):
        return self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                 "--table", table, "--reverse", "100", "--report",
                                 os.path.join(self.d, "v.jsonl"), *extra)

    def test_two_sources_as_one(self):
        # one source holding all the edges: the reference
        one = self.new_table("hot1")
        self.assertExit(self.load("--mapping", self.one, "--table", one, "--quiet"), 0)
        self.check_table(one)
        # two sources sharing the keys, with the counting pass
        two = self.new_table("hot2")
        proc = self.load("--mapping", self.two, "--table", two, "--stats-json",
                         os.path.join(self.d, "s.json"))
        self.assertExit(proc, 0)
        with open(os.path.join(self.d, "s.json")) as f:
            self.assertEqual(json.load(f)["directory_items"], 2)
        self.check_table(two)
        self.assertEqual(canon_sorted(self.scan_all(two)), canon_sorted(self.scan_all(one)))
        # verify: every index key whole, a hot one across its shards
        ver = self.verify(two, self.two)
        self.assertExit(ver, 0, "verify --reverse")
        self.assertIn("reverse: 5 index keys, %d items expected, reverse-missing 0 "
                      "reverse-extra 0" % (len(ROWS_A) + len(ROWS_B)), ver.stdout)
        self.assertIn("2 shard directory items among the expected", ver.stdout)
        # an edge of b left on bob's plain key, as edgeload left it before
        # fan-in was counted across sources, and a directory counting a only
        edge = {"PK": S("ACTOR#b00"), "SK": S("TARGET#bob")}
        self.ddb.update_item(TableName=two, Key=edge, UpdateExpression="SET GSI1PK = :p",
                             ExpressionAttributeValues={":p": S("TARGET#bob")})
        self.ddb.update_item(TableName=two, Key={"PK": S("TARGET#bob"), "SK": S("#SHARDS")},
                             UpdateExpression="SET fanIn = :f",
                             ExpressionAttributeValues={":f": N(A["bob"])})
        ver = self.verify(two, self.two)
        self.assertExit(ver, 4, "verify --reverse of the damaged table")
        self.assertIn("reverse-missing 1 reverse-extra 1", ver.stdout)
        self.assertRegex(ver.stdout, r"reverse-extra +listed, not expected, under TARGET#bob: "
                                     r"PK=ACTOR#b00 SK=TARGET#bob")
        self.assertRegex(ver.stdout, r"reverse-missing +not listed under TARGET#bob#\d: "
                                     r"PK=ACTOR#b00 SK=TARGET#bob")
        self.assertIn("different       PK=TARGET#bob SK=#SHARDS: fanIn expected {\"N\":\"65\"} "
                      "actual {\"N\":\"40\"}", ver.stdout)

    def test_plan_file_split_output_dry_run(self):
        plan = os.path.join(self.d, "plan.json")
        self.assertExit(self.run_edgeload("plan", "--mapping", self.two, "--plan-out", plan,
                                          "--quiet"), 0, "plan")
        with open(plan) as f:
            hot = {h["key"]: h for h in json.load(f)["hot"]}
        self.assertEqual(hot["TARGET#bob"], {"key": "TARGET#bob", "fan_in": 65, "shards": 7,
                                             "sources": {"a": 40, "b": 25}})
        self.assertEqual(hot["TARGET#amy"]["sources"], {"a": 6, "b": 6})
        self.assertNotIn("TARGET#cat", hot)
        # --plan, b.csv on standard input (which the counting pass cannot read twice)
        table = self.new_table("hotplan")
        with open(os.path.join(self.d, "b.csv")) as f:
            proc = self.run_edgeload("load", *self.endpoint_args(), "--mapping", self.two,
                                     "--table", table, "--plan", plan, "--quiet",
                                     os.path.join(self.d, "a.csv"), "-", stdin=f.read())
        self.assertExit(proc, 0, "load --plan with standard input")
        self.check_table(table)
        # two workers of one plan
        table = self.new_table("hotsplit")
        for i in (1, 2):
            proc = self.load("--mapping", self.two, "--table", table, "--plan", plan,
                             "--split", "%d/2" % i, "--quiet",
                             "--rejects", os.path.join(self.d, "r.jsonl"))
            self.assertExit(proc, 0, "load --split %d/2" % i)
        self.check_table(table)
        # the import files and a dry run hold the same items
        out = os.path.join(self.d, "out")
        self.assertExit(self.run_edgeload("load", "--mapping", self.two, "--table", "x",
                                          "--output", out, "--quiet"), 0, "load --output")
        lines = []
        for name in sorted(os.listdir(os.path.join(out, "data"))):
            lines += subprocess.run(["zstd", "-dc", os.path.join(out, "data", name)],
                                    capture_output=True, text=True,
                                    check=True).stdout.splitlines()
        self.assertEqual(canon_sorted(json.loads(x)["Item"] for x in lines),
                         canon_sorted(expected_items()))
        dry = self.run_edgeload("load", "--mapping", self.two, "--table", "x", "--dry-run",
                                "--quiet")
        self.assertExit(dry, 0, "load --dry-run")
        self.assertEqual(canon_sorted(json.loads(x)["Item"] for x in dry.stdout.splitlines()),
                         canon_sorted(expected_items()))

    def test_killed_and_resumed(self):
        table = self.new_table("hotresume")
        ckpt = os.path.join(self.d, "c.ckpt")
        # slow enough (--max-wcu) to be killed half-way: ~2 units an edge
        args = [self.bin, "load", *self.endpoint_args(), "--mapping", self.two, "--table",
                table, "--checkpoint", ckpt, "--checkpoint-interval", "0.2", "--quiet"]
        p = subprocess.Popen(args + ["--max-wcu", "40"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(ckpt):
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.assertEqual(p.returncode, -signal.SIGKILL, "the load ended before it was killed")
        written = len(self.scan_all(table))
        self.assertLess(written, len(expected_items()))
        proc = self.run_edgeload(*args[1:], "--resume")
        self.assertExit(proc, 0, "load --resume")
        self.check_table(table)


if __name__ == "__main__":
    main()
