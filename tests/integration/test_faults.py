"""Nothing lost (issue 6): loads through the fault-injecting proxy
in front of DynamoDB Local end with exactly the expected table; a file with
bad rows of every kind puts exactly those rows in the rejects file and every
good row in the table; a batch DynamoDB refuses is bisected so only the bad
item is rejected.

EDGELOAD_FAULT_ROWS sets the size of the fault run (default 200,000, the
issue's figure; CI keeps the default).
"""

import http.server
import json
import os
import sys

from edgeload_test import ENDPOINT, EdgeloadTestCase, N, S, main, read_jsonl, send_answer, serve

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import faultproxy  # noqa: E402  (the suite's own tool, found beside this directory)

ROWS = int(os.environ.get("EDGELOAD_FAULT_ROWS", "200000"))


class FaultTest(EdgeloadTestCase):

    def test_every_item_lands_through_faults(self):
        d = self.tmpdir()
        path = os.path.join(d, "edges.csv")
        with open(path, "w") as f:
            f.write("src,dst,w\n")
            for i in range(ROWS):
                f.write("u%d,t%d,%d\n" % (i % 4999, i, i % 1000))
        table = self.unique_table("faults")
        self.create_table_boto(table)
        with faultproxy.ProxyProcess(ENDPOINT, seed=11, throttle=0.10, http500=0.01,
                                     http503=0.01, reset=0.01, lost_reply=0.01,
                                     partial=0.30) as proxy:
            proc = self.run_edgeload(
                "load", "--endpoint-url", proxy.url, "--region", "us-east-1",
                "--table", table, "--pk", "A#{src}", "--sk", "B#{dst}", "--attr", "w=w:N",
                "--progress", "none", "--stats-json", os.path.join(d, "stats.json"), path,
                timeout=1800)
            faults = proxy.stats()
        self.assertExit(proc, 0)
        with open(os.path.join(d, "stats.json")) as f:
            stats = json.load(f)
        count = sum(p["Count"] for p in self.ddb.get_paginator("scan").paginate(
            TableName=table, Select="COUNT"))
        self.assertEqual(count, ROWS)
        # spot-check contents beyond the count: every 997th row
        for i in range(0, ROWS, 997):
            item = self.get_item(table, "A#u%d" % (i % 4999), "B#t%d" % i)
            self.assertEqual(item["w"], N(i % 1000))
        self.assertEqual(stats["items_written"], ROWS)
        self.assertGreater(stats["retries"], 0)
        self.assertGreater(stats["throttled"], 0)
        print("\nfault run: %d items, %.1f s, retries %d, throttled %d; proxy: %s"
              % (ROWS, stats["elapsed_s"], stats["retries"], stats["throttled"],
                 json.dumps(faults, sort_keys=True)), file=sys.stderr)

    def test_continuous_failure_gives_up_with_checkpoint(self):
        """Only 500s: past --max-retry-time the load stops with exit 1 and a
        checkpoint, and claims nothing written; the resumed run (faults
        gone) ends exact."""
        d = self.tmpdir()
        path = os.path.join(d, "edges.csv")
        with open(path, "w") as f:
            f.write("src,dst\n")
            for i in range(500):
                f.write("u%d,t%d\n" % (i % 17, i))
        table = self.unique_table("giveup")
        self.create_table_boto(table)
        ck = os.path.join(d, "ck.json")
        args = ["load", "--region", "us-east-1", "--table", table, "--pk", "A#{src}",
                "--sk", "B#{dst}", "--checkpoint", ck, "--progress", "none",
                "--stats-json", os.path.join(d, "s.json"), path]
        with faultproxy.ProxyProcess(ENDPOINT, seed=3, http500=1.0) as proxy:
            proc = self.run_edgeload(*args, "--endpoint-url", proxy.url,
                                     "--max-retry-time", "2", timeout=120)
        self.assertExit(proc, 1)
        self.assertIn("giving up", proc.stderr)
        self.assertIn("--resume", proc.stderr)
        self.assertTrue(os.path.exists(ck))
        with open(os.path.join(d, "s.json")) as f:
            self.assertEqual(json.load(f)["items_written"], 0)
        done = self.run_edgeload(*args, "--endpoint-url", ENDPOINT, "--resume")
        self.assertExit(done, 0)
        count = sum(p["Count"] for p in self.ddb.get_paginator("scan").paginate(
            TableName=table, Select="COUNT"))
        self.assertEqual(count, 500)

    def test_bad_rows_of_every_kind(self):
        d = self.tmpdir()
        rows = ["id,target,n,flag"]
        bad = {}  # line -> a word the reason must contain
        good = {}
        big = "x" * (410 * 1024)
        for i in range(1, 301):
            line = len(rows) + 1
            kind = i % 30
            if kind == 3:
                rows.append("u%d,t%d,%d" % (i, i, i)); bad[line] = "columns"
            elif kind == 7:
                rows.append("u%d,,%d,true" % (i, i)); bad[line] = "target"
            elif kind == 11:
                rows.append("u%d,t%d,12abc,true" % (i, i)); bad[line] = "number"
            elif kind == 13:
                rows.append("u%d,t%d,%d,maybe" % (i, i, i)); bad[line] = "boolean"
            elif kind == 17:
                rows.append("u%d,t%d,%d,true,extra" % (i, i, i)); bad[line] = "columns"
            elif kind == 19:
                rows.append("u%d,t%d,%s,true" % (i, i, "1234567890" * 4)); bad[line] = "38"
            elif kind == 23:
                rows.append("u%d,t%d,%d,%s" % (i, i, i, big)); bad[line] = "400"
            elif kind == 29:
                rows.append("u%d\xff,t%d,%d,true" % (i, i, i)); bad[line] = "UTF-8"
            else:
                rows.append("u%d,t%d,%d,true" % (i, i, i))
                good[("A#u%d" % i, "B#t%d" % i)] = i
        path = os.path.join(d, "rows.csv")
        with open(path, "wb") as f:
            f.write("\n".join(rows).encode("latin-1") + b"\n")
        table = self.unique_table("badrows")
        self.create_table_boto(table)
        rejects = os.path.join(d, "rejects.jsonl")
        proc = self.load("--table", table, "--pk", "A#{id}", "--sk", "B#{target}",
                         "--attr", "n=n:N", "--attr", "flag=flag:BOOL", "--rejects", rejects,
                         "--progress", "none", path)
        self.assertExit(proc, 3)
        got = read_jsonl(rejects)
        self.assertEqual(sorted(r["line"] for r in got), sorted(bad))
        for r in got:
            self.assertIn(bad[r["line"]].lower(), r["reason"].lower(), r)
        items = self.scan_all(table)
        self.assertEqual({(i["PK"]["S"], i["SK"]["S"]): int(i["n"]["N"]) for i in items}, good)


class RefusingServer(http.server.BaseHTTPRequestHandler):
    """A DynamoDB stand-in that refuses any batch holding PK "A#bad"."""
    protocol_version = "HTTP/1.1"
    written = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        target = self.headers.get("X-Amz-Target", "")
        if target.endswith("DescribeTable"):
            out = {"Table": {"TableName": body["TableName"], "TableStatus": "ACTIVE",
                   "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                 {"AttributeName": "SK", "KeyType": "RANGE"}],
                   "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                            {"AttributeName": "SK", "AttributeType": "S"}]}}
            return self.answer(200, out)
        reqs = list(body["RequestItems"].values())[0]
        pks = [r["PutRequest"]["Item"]["PK"]["S"] for r in reqs]
        if "A#bad" in pks:
            return self.answer(400, {"__type": "com.amazonaws.dynamodb.v20120810#"
                                     "ValidationException",
                                     "message": "One or more parameter values were invalid"})
        RefusingServer.written.extend(pks)
        return self.answer(200, {"UnprocessedItems": {}})

    def answer(self, status, obj):
        send_answer(self, status, obj)


class BisectTest(EdgeloadTestCase):

    def test_refused_batch_is_bisected_to_the_bad_item(self):
        server, url = serve(self, RefusingServer)
        d = self.tmpdir()
        path = os.path.join(d, "rows.csv")
        with open(path, "w") as f:
            f.write("id\n")
            for i in range(100):
                f.write("%s\n" % ("bad" if i == 37 else "g%d" % i))
        rejects = os.path.join(d, "rejects.jsonl")
        proc = self.run_edgeload(
            "load", "--endpoint-url", url,
            "--region", "us-east-1", "--table", "Refusing", "--pk", "A#{id}", "--sk", "X",
            "--no-index", "--rejects", rejects, "--progress", "none", path)
        self.assertExit(proc, 3)
        self.assertEqual(sorted(RefusingServer.written), sorted("A#g%d" % i for i in range(100)
                                                                 if i != 37))
        got = read_jsonl(rejects)
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0]["line"], 39)  # header + 38th row
        self.assertIn("ValidationException", got[0]["reason"])
        self.assertEqual(got[0]["item"]["PK"], S("A#bad"))


if __name__ == "__main__":
    main()
