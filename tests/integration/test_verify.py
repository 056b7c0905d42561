#!/usr/bin/python3
"""`edgeload verify` against DynamoDB Local.

A fresh table is created with `$EDGELOAD_BIN create-table` and a generated
CSV of a few thousand follow edges (with duplicate keys, numbers written
with trailing zeros, text with quotes and non-ASCII) is loaded with
`$EDGELOAD_BIN load`. Then, in order:

  1. verify on the intact table: exit 0, "missing 0 different 0", empty report;
  2. --sample 100: exit 0, 100 items checked;
  3. with boto3, delete exactly 5 items and change one attribute on 5 others
     (plus harmless changes verify must not report: an extra attribute, a
     number rewritten as an equal number); verify: exit 4 and the report
     holds exactly those 10 keys, with the changed attribute's values;
     --sample with a seed reports only tampered keys, the same on each run;
  4. --reverse 20 after deleting one edge of every target: each of the 20
     sampled index keys reports exactly its deleted edges; an item added
     under an index key behind verify's back is reported as reverse-extra;
  6. a source all of whose 1,000 rows the load rejected: exit 4 naming it,
     exit 0 with --allow-rejected.

Endpoint: EDGELOAD_DDB_ENDPOINT (default http://127.0.0.1:8000). When
DynamoDB Local is down the test is skipped, or fails when CI is set.
"""
import csv
import io
import json
import os
import random
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse

import boto3

ENDPOINT = os.environ.get("EDGELOAD_DDB_ENDPOINT", "http://127.0.0.1:8000")
SOURCE_DIR = os.environ.get("EDGELOAD_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("EDGELOAD_BIN", os.path.join(SOURCE_DIR, "build", "edgeload"))
REGION = "us-east-1"
ENV = dict(os.environ, AWS_ACCESS_KEY_ID="verifytest", AWS_SECRET_ACCESS_KEY="verifytest",
           AWS_REGION=REGION)
for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
    ENV.pop(var, None)

FOLLOWERS, TARGETS, ROWS = 600, 150, 3000
MAPPING = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
           "--attr", "createdAt=created_at:N", "--attr", "weight=weight:N",
           "--attr", "note=note", "--const", "edgeType=FOLLOWS"]


def ddb_local_up():
    u = urllib.parse.urlparse(ENDPOINT)
    try:
        with socket.create_connection((u.hostname, u.port or 80), timeout=2):
            return True
    except OSError:
        return False


def key(pk, sk):
    return (pk, sk)


class VerifyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not ddb_local_up():
            msg = "DynamoDB Local is not reachable at %s" % ENDPOINT
            if os.environ.get("CI"):
                raise AssertionError(msg)
            raise unittest.SkipTest(msg)
        cls.tmp = tempfile.TemporaryDirectory(prefix="edgeload-verify-")
        cls.table = "verify_test_%d_%d" % (os.getpid(), int(time.time()))
        cls.ddb = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
                               aws_access_key_id="verifytest",
                               aws_secret_access_key="verifytest")
        cls.csv = os.path.join(cls.tmp.name, "follows.csv")
        rng = random.Random(8)
        final = {}
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["follower_id", "followee_id", "created_at", "weight", "note"])
        for i in range(ROWS):
            f, t = "u%d" % rng.randrange(FOLLOWERS), "t%d" % rng.randrange(TARGETS)
            note = rng.choice(["plain", 'say "hi", ok', "caf\u00e9 \u2603", "multi\nline"])
            row = [f, t, str(1718900000 + i), "%d.%d0" % (rng.randrange(100), rng.randrange(10)),
                   note]
            w.writerow(row)
            final[key("ACTOR#" + f, "TARGET#" + t)] = row  # the later row wins
        with open(cls.csv, "w", encoding="utf-8") as fh:
            fh.write(buf.getvalue())
        cls.expected = final
        cls.run_ok(["create-table", "--table", cls.table])
        cls.created = True
        cls.run_ok(["load", "--table", cls.table] + MAPPING + [cls.csv])

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "created", False):
            cls.ddb.delete_table(TableName=cls.table)
        if hasattr(cls, "tmp"):
            cls.tmp.cleanup()

    @classmethod
    def run_edgeload(cls, args):
        return subprocess.run([BIN] + args + ["--endpoint-url", ENDPOINT], env=ENV,
                              cwd=cls.tmp.name, capture_output=True, text=True, timeout=300)

    @classmethod
    def run_ok(cls, args):
        p = cls.run_edgeload(args)
        if p.returncode != 0:
            raise AssertionError("%s: exit %d\n%s%s" % (args[0], p.returncode, p.stdout,
                                                        p.stderr))
        return p

    def verify(self, *extra, report="report.jsonl"):
        p = self.run_edgeload(["verify", "--table", self.table] + MAPPING +
                              ["--report", report] + list(extra) + [self.csv])
        with open(os.path.join(self.tmp.name, report), encoding="utf-8") as fh:
            lines = [json.loads(line) for line in fh if line.strip()]
        return p, lines

    def test_1_intact_table_matches(self):
        p, lines = self.verify()
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        n = len(self.expected)
        self.assertIn("expected %d present %d missing 0 different 0" % (n, n), p.stdout)
        self.assertIn("%d rows read" % ROWS, p.stdout)
        self.assertEqual(lines, [])

    def test_2_sample(self):
        p, lines = self.verify("--sample", "100")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("expected 100 present 100 missing 0 different 0", p.stdout)
        self.assertEqual(lines, [])
        p = self.run_edgeload(["verify", "--table", self.table, "--sample", "0", self.csv])
        self.assertEqual(p.returncode, 2)

    def test_3_tampered_items_reported_exactly(self):
        rng = random.Random(3)
        keys = sorted(self.expected)
        chosen = rng.sample(keys, 12)
        deleted, changed, harmless = chosen[:5], chosen[5:10], chosen[10:]
        for pk, sk in deleted:
            self.ddb.delete_item(TableName=self.table, Key={"PK": {"S": pk}, "SK": {"S": sk}})
        for i, (pk, sk) in enumerate(changed):
            if i % 2:
                self.ddb.update_item(TableName=self.table,
                                     Key={"PK": {"S": pk}, "SK": {"S": sk}},
                                     UpdateExpression="SET note = :v",
                                     ExpressionAttributeValues={":v": {"S": "tampered"}})
            else:
                self.ddb.update_item(TableName=self.table,
                                     Key={"PK": {"S": pk}, "SK": {"S": sk}},
                                     UpdateExpression="SET createdAt = :v",
                                     ExpressionAttributeValues={":v": {"N": "42"}})
        # not differences: an attribute the mapping does not write, and the
        # same number spelt differently
        pk, sk = harmless[0]
        self.ddb.update_item(TableName=self.table, Key={"PK": {"S": pk}, "SK": {"S": sk}},
                             UpdateExpression="SET extra = :v",
                             ExpressionAttributeValues={":v": {"S": "x"}})
        pk, sk = harmless[1]
        weight = self.expected[harmless[1]][3]
        self.ddb.update_item(TableName=self.table, Key={"PK": {"S": pk}, "SK": {"S": sk}},
                             UpdateExpression="SET weight = :v",
                             ExpressionAttributeValues={":v": {"N": weight + "000"}})

        p, lines = self.verify()
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        n = len(self.expected)
        self.assertIn("expected %d present %d missing 5 different 5" % (n, n - 5), p.stdout)
        got = {(l["kind"], l["key"]["PK"], l["key"]["SK"]) for l in lines}
        self.assertEqual(len(lines), 10)
        self.assertEqual(got, {("missing",) + k for k in deleted} |
                         {("different",) + k for k in changed})
        for line in lines:
            if line["kind"] != "different":
                self.assertNotIn("attributes", line)
                continue
            k = (line["key"]["PK"], line["key"]["SK"])
            row = self.expected[k]
            attrs = line["attributes"]
            self.assertEqual(len(attrs), 1, line)
            if "createdAt" in attrs:
                self.assertEqual(attrs["createdAt"], {"expected": {"N": row[2]},
                                                      "actual": {"N": "42"}})
            else:
                self.assertEqual(attrs["note"], {"expected": {"S": row[4]},
                                                 "actual": {"S": "tampered"}})
        # the first mismatches are printed too
        self.assertEqual(sum(1 for l in p.stdout.splitlines()
                             if l.startswith(("missing ", "different "))), 10)

        # a sample reports only tampered keys, and the same ones for one seed
        tampered = set(deleted) | set(changed)
        runs = []
        for name in ("s1.jsonl", "s2.jsonl"):
            p, lines = self.verify("--sample", "1500", "--seed", "77", report=name)
            self.assertIn(p.returncode, (0, 4), p.stderr)
            self.assertIn("expected 1500 ", p.stdout)
            keys_seen = {(l["key"]["PK"], l["key"]["SK"]) for l in lines}
            self.assertTrue(keys_seen <= tampered, keys_seen - tampered)
            self.assertEqual(p.returncode, 4 if lines else 0)
            runs.append(sorted(json.dumps(l, sort_keys=True) for l in lines))
        self.assertEqual(runs[0], runs[1])
        type(self).deleted = set(deleted)

    def test_4_reverse(self):
        deleted = set(getattr(self, "deleted", set()))
        by_target = {}
        for k in self.expected:
            by_target.setdefault(k[1], []).append(k)
        # delete one more edge of every target
        rng = random.Random(4)
        for target, ks in sorted(by_target.items()):
            alive = [k for k in ks if k not in deleted]
            if len(alive) < 2:
                continue
            pk, sk = rng.choice(sorted(alive))
            self.ddb.delete_item(TableName=self.table, Key={"PK": {"S": pk}, "SK": {"S": sk}})
            deleted.add((pk, sk))
        p, lines = self.verify("--reverse", "20")
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("reverse: 20 index keys", p.stdout)
        rev = [l for l in lines if l["kind"].startswith("reverse")]
        self.assertTrue(all(l["kind"] == "reverse-missing" for l in rev), rev)
        sampled = {l["index_key"] for l in rev}
        self.assertEqual(len(sampled), 20)
        for target in sampled:
            want = {k for k in by_target[target] if k in deleted}
            got = {(l["key"]["PK"], l["key"]["SK"]) for l in rev if l["index_key"] == target}
            self.assertEqual(got, want, target)
        # forward check still reports the deleted items as missing
        self.assertEqual({(l["key"]["PK"], l["key"]["SK"]) for l in lines
                          if l["kind"] == "missing"}, deleted)

        # an edge listed under an index key that no row produces
        target = sorted(sampled)[0]
        self.ddb.put_item(TableName=self.table, Item={
            "PK": {"S": "ACTOR#intruder"}, "SK": {"S": target},
            "GSI1PK": {"S": target}, "GSI1SK": {"S": "ACTOR#intruder"}})
        p, lines = self.verify("--reverse", "20", "--show", "0")
        self.assertEqual(p.returncode, 4)
        extra = [l for l in lines if l["kind"] == "reverse-extra"]
        self.assertEqual(extra, [{"kind": "reverse-extra",
                                  "key": {"PK": "ACTOR#intruder", "SK": target},
                                  "index_key": target}])

    def test_5_errors(self):
        p = self.run_edgeload(["verify", "--table", self.table + "_nope"] + MAPPING +
                              [self.csv])
        self.assertEqual(p.returncode, 2)
        self.assertIn("does not exist", p.stderr)
        p = self.run_edgeload(["verify", "--table", self.table, "--pk", "A#{nope}",
                               "--sk", "B", self.csv])
        self.assertEqual(p.returncode, 2)
        self.assertIn("follower_id", p.stderr)
        p = self.run_edgeload(["verify", "--help"])
        self.assertEqual(p.returncode, 0)
        for opt in ("--sample", "--seed", "--reverse", "--report", "--show", "--mapping",
                    "--max-retry-time", "--endpoint-url"):
            self.assertIn(opt, p.stdout)

    def test_6_rejected_source(self):
        """A source whose every row the load rejected is not in the table:
        verify says so (exit 4), unless --allow-rejected."""
        d = self.tmp.name
        table = self.table + "_rej"
        with open(os.path.join(d, "good.csv"), "w") as fh:
            fh.write("a,b\n" + "".join("u%d,t%d\n" % (i, i % 3) for i in range(10)))
        with open(os.path.join(d, "broken.csv"), "w") as fh:
            fh.write("a,b\n" + "".join(",t%d\n" % i for i in range(1000)))  # no PK
        mapping = os.path.join(d, "rej.json")
        with open(mapping, "w") as fh:
            json.dump({"table": table, "sources": [
                {"name": "good", "input": "good.csv", "pk": "A#{a}", "sk": "B#{b}"},
                {"name": "broken", "input": "broken.csv", "pk": "A#{a}", "sk": "B#{b}"}]}, fh)
        self.run_ok(["create-table", "--table", table])
        try:
            p = self.run_edgeload(["load", "--mapping", mapping, "--rejects", "rej.jsonl"])
            self.assertEqual(p.returncode, 3, p.stderr)
            p = self.run_edgeload(["verify", "--mapping", mapping, "--report", "r.jsonl",
                                   "--stats-json", "s.json"])
            self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
            self.assertIn("edgeload: verify: 1000 rows of broken could not become items "
                          "(rejected: see the rejects file)", p.stderr)
            self.assertNotIn("rows of good", p.stderr)
            self.assertIn("expected 10 present 10 missing 0 different 0", p.stdout)
            self.assertIn("1010 rows read, 1000 rejected,", p.stdout)
            with open(os.path.join(d, "s.json")) as fh:
                st = json.load(fh)
            self.assertEqual((st["rejected"], st["rejected_by_source"], st["rejected_allowed"]),
                             (1000, {"broken": 1000}, False))
            p = self.run_edgeload(["verify", "--mapping", mapping, "--report", "r.jsonl",
                                   "--stats-json", "s.json", "--allow-rejected"])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("1000 rows of broken could not become items (rejected, allowed by "
                          "--allow-rejected)", p.stdout)
            self.assertIn("1010 rows read, 1000 rejected (allowed),", p.stdout)
            with open(os.path.join(d, "s.json")) as fh:
                self.assertTrue(json.load(fh)["rejected_allowed"])
        finally:
            self.ddb.delete_table(TableName=table)


if __name__ == "__main__":
    unittest.main(verbosity=2)
