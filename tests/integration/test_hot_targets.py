"""Hot targets (issue 5, docs/SHARDING.md) against DynamoDB Local: a skewed follow
graph, sorted by follower as dumps are, loaded with --hot-threshold. Every
edge lands once; each hot target's followers are exactly the union of its N
shard Queries, N as the directory item says; other targets stay one Query;
the shard of every edge is FNV-1a-64(GSI1SK) mod N, computed here in Python.
The same through --plan from `edgeload plan`, with the input on stdin.
"""

import json
import math
import os
import random

from edgeload_test import EdgeloadTestCase, fnv1a64, main

THRESHOLD = 10000
HOT = {"star": 21000, "idol": 10500}  # fan-in: 3 and 2 shards
NORMAL_EDGES = 2000


def make_graph(path):
    rnd = random.Random(5)
    edges = set()
    for target, fan_in in HOT.items():
        for i in range(fan_in):
            edges.add(("f%05d" % i, target))
    while len(edges) < sum(HOT.values()) + NORMAL_EDGES:
        edges.add(("f%05d" % rnd.randrange(30000), "t%03d" % rnd.randrange(200)))
    edges = sorted(edges)  # sorted by follower, as a dump of the join table
    with open(path, "w") as f:
        f.write("follower_id,followee_id\n")
        for a, b in edges:
            f.write("%s,%s\n" % (a, b))
    return edges


class HotTargetsTest(EdgeloadTestCase):

    KEYS = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}"]

    def check_table(self, table, edges):
        items = self.scan_all(table)
        directory = {i["PK"]["S"]: i for i in items if i["SK"]["S"] == "#SHARDS"}
        edge_items = [i for i in items if i["SK"]["S"] != "#SHARDS"]
        self.assertEqual(len(edge_items), len(edges))
        self.assertEqual({(i["PK"]["S"], i["SK"]["S"]) for i in edge_items},
                         {("ACTOR#" + a, "TARGET#" + b) for a, b in edges})
        followers = {}
        for a, b in edges:
            followers.setdefault(b, set()).add("ACTOR#" + a)
        # the directory: exactly the hot targets, with N and the fan-in
        self.assertEqual(set(directory), {"TARGET#" + t for t in HOT})
        for t, fan_in in HOT.items():
            d = directory["TARGET#" + t]
            n = min(32, math.ceil(fan_in / THRESHOLD))
            self.assertEqual(d["shards"], {"N": str(n)})
            self.assertEqual(d["fanIn"], {"N": str(fan_in)})
            union = set()
            for k in range(n):
                got = self.query_index(table, "TARGET#%s#%d" % (t, k))
                srcs = {i["GSI1SK"]["S"] for i in got}
                for s in srcs:  # every edge sits in the shard docs/SHARDING.md's rule names
                    self.assertEqual(fnv1a64(s.encode()) % n, k)
                self.assertFalse(union & srcs)
                union |= srcs
            self.assertEqual(union, followers[t])
            self.assertEqual(self.query_index(table, "TARGET#" + t), [])
        # a normal target: one Query on the plain key answers it
        for t in sorted(followers)[:40]:
            if t in HOT:
                continue
            got = {i["GSI1SK"]["S"] for i in self.query_index(table, "TARGET#" + t)}
            self.assertEqual(got, followers[t])

    def test_counting_pass_shards_hot_targets(self):
        d = self.tmpdir()
        path = os.path.join(d, "follows.csv")
        edges = make_graph(path)
        table = self.unique_table("hot")
        self.create_table_boto(table)
        proc = self.load("--table", table, *self.KEYS, "--hot-threshold", str(THRESHOLD),
                         "--progress", "none", "--stats-json", os.path.join(d, "s.json"), path)
        self.assertExit(proc, 0)
        with open(os.path.join(d, "s.json")) as f:
            stats = json.load(f)
        # the rows' items, and the directory's (from no row) apart
        self.assertEqual(stats["items_written"], len(edges))
        self.assertEqual(stats["directory_items"], len(HOT))
        self.assertEqual(stats["rows_read"], stats["items_written"] + stats["duplicates"] +
                         stats["rejected"])
        self.check_table(table, edges)
        # verify recomputes the same shards and finds every edge where load put it
        ver = self.run_edgeload("verify", *self.endpoint_args(), "--table", table, *self.KEYS,
                                "--hot-threshold", str(THRESHOLD), "--sample", "3000",
                                "--reverse", "5", "--report", os.path.join(d, "v.jsonl"), path)
        self.assertExit(ver, 0, "edgeload verify")

    def test_plan_file_and_stdin(self):
        d = self.tmpdir()
        path = os.path.join(d, "follows.csv")
        edges = make_graph(path)
        plan = os.path.join(d, "plan.json")
        proc = self.run_edgeload("plan", "--table", "x", *self.KEYS, "--hot-threshold",
                                 str(THRESHOLD), "--plan-out", plan, "--quiet", path)
        self.assertExit(proc, 0, "edgeload plan")
        table = self.unique_table("hotplan")
        self.create_table_boto(table)
        # without the plan, standard input cannot be read twice: refused
        with open(path) as f:
            data = f.read()
        refused = self.run_edgeload("load", *self.endpoint_args(), "--table", table,
                                    *self.KEYS, "--hot-threshold", str(THRESHOLD), "-",
                                    stdin=data)
        self.assertExit(refused, 2, "load - without --plan")
        self.assertIn("--plan", refused.stderr)
        proc = self.run_edgeload("load", *self.endpoint_args(), "--table", table, *self.KEYS,
                                 "--plan", plan, "--progress", "none", "-", stdin=data)
        self.assertExit(proc, 0)
        self.check_table(table, edges)


if __name__ == "__main__":
    main()
