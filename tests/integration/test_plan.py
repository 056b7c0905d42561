#!/usr/bin/python3
"""`edgeload plan`: exact fan-in, top targets, shard counts and the plan file.

A skewed follow graph is generated (a few targets with 10,000+ followers,
one just under the threshold, one exactly at it, a long tail with many
ties), sorted by follower as a dump would be. `$EDGELOAD_BIN plan` runs on
it and the report's figures (rows, distinct sources and targets, histogram,
top 20 in order with their shard counts) and the plan JSON are compared
with what Python computes from the same rows. Also: compressed input
gives the same plan, overrides, rejected rows, usage errors, and the shard
test-vector table of docs/SHARDING.md recomputed here in Python.

Needs no DynamoDB. For the docs' speed figure, generate a bigger graph with
    /usr/bin/python3 tests/integration/test_plan.py --generate ROWS FILE
"""
import collections
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from edgeload_test import fnv1a64  # the shard hash, written again in Python

BIN = os.environ.get("EDGELOAD_BIN", "edgeload")
SRC_DIR = os.environ.get("EDGELOAD_SOURCE_DIR",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def shard_count(fan_in, threshold, max_shards):
    if threshold == 0 or max_shards < 2 or fan_in < threshold:
        return 1
    return max(2, min(max_shards, -(-fan_in // threshold)))


def generate(path, rows, hot, seed=7):
    """Writes follower_id,followee_id,created_at rows sorted by follower;
    hot is a list of fan-ins for targets star0, star1, ...; the rest of the
    rows go to a long tail of targets t0, t1, ... with heavy-tailed fan-in
    capped at 500 (so the tail has many ties). Returns the edges."""
    rnd = random.Random(seed)
    users = max(max(hot) * 5 // 4, 1000)
    edges = []
    for i, f in enumerate(hot):
        for u in rnd.sample(range(users), f):
            edges.append((u, "star%d" % i))
    left = rows - len(edges)
    t = 0
    while left > 0:
        f = min(left, 500, int(rnd.paretovariate(1.1)))
        for u in rnd.sample(range(users), f):
            edges.append((u, "t%d" % t))
        left -= f
        t += 1
    edges.sort()
    with open(path, "w", encoding="utf-8") as out:
        out.write("follower_id,followee_id,created_at\n")
        for n, (u, tgt) in enumerate(edges):
            out.write("u%d,%s,%d\n" % (u, tgt, 1718900000 + n))
    return [("ACTOR#u%d" % u, "TARGET#" + tgt) for u, tgt in edges]


def run(*args, check=True):
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("edgeload %s: exit %d\n%s%s" % (" ".join(args), p.returncode,
                                                             p.stdout, p.stderr))
    return p


def parse_report(text):
    """{source: {"rows":.., "rejected":.., "sources":.., "targets":..,
    "hist": [(label, n)], "top": [(rank, fan_in, shards, key)], "all": [fan-in over every
    source, when several write the index]}}; the section of every index key (printed when
    several sources write the index) is under "index", its top entries' "shares" the rows of
    each source ("a 4, b 2")."""
    out, cur, section = {}, None, None
    for line in text.splitlines():
        m = re.match(r"source '([^']*)' \(index", line)
        if m:
            cur = out.setdefault(m.group(1), {"hist": [], "top": [], "all": []})
            section = None
            continue
        if re.match(r"index \S+: fan-in of each index partition key", line):
            cur = out.setdefault("index", {"hist": [], "top": [], "all": [], "shares": []})
            section = None
            continue
        if cur is None or not line.strip():
            continue
        m = re.match(r"  rows: +(\d+) counted, (\d+) rejected", line)
        if m:
            cur["rows"], cur["rejected"] = int(m.group(1)), int(m.group(2))
        m = re.match(r"  distinct sources: +(\d+)", line)
        if m:
            cur["sources"] = int(m.group(1))
        m = re.match(r"  distinct targets: +(\d+)", line)
        if m:
            cur["targets"] = int(m.group(1))
        m = re.match(r"  hot targets: +(\d+)", line)
        if m:
            cur["hot"] = int(m.group(1))
        if line.startswith("  fan-in histogram"):
            section = "hist"
            continue
        if line.startswith("  top "):
            section = "top"
            continue
        if line.startswith("  ") and not line.startswith("    "):
            section = None
        if section == "hist":
            m = re.match(r"    (\S+) +(\d+)$", line)
            if m and m.group(1) != "fan-in":
                cur["hist"].append((m.group(1), int(m.group(2))))
        if section == "top":
            m = re.match(r"    +(\d+) +(\d+)( +\d+)? +(\d+)  (\S+)(?: \((.*)\))?$", line)
            if m:
                cur["top"].append((int(m.group(1)), int(m.group(2)), int(m.group(4)),
                                   m.group(5)))
                if m.group(3):
                    cur["all"].append(int(m.group(3)))
                if m.group(6) is not None:
                    cur["shares"].append({k: int(v) for k, v in
                                          (x.rsplit(" ", 1) for x in m.group(6).split(", "))})
    return out


def expected_hist(counts):
    buckets = collections.Counter(c.bit_length() - 1 for c in counts.values())
    last = max(buckets)
    res = []
    for b in range(last + 1):
        lo, hi = 1 << b, (1 << (b + 1)) - 1
        res.append((str(lo) if lo == hi else "%d-%d" % (lo, hi), buckets.get(b, 0)))
    return res


def expected_top(counts, threshold, max_shards, n=20):
    # ties in byte order of the UTF-8 key: code-point order of str
    order = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].encode("utf-8")))
    return [(i + 1, c, shard_count(c, threshold, max_shards), k)
            for i, (k, c) in enumerate(order[:n])]


def expected_hot(counts, threshold, max_shards, source):
    """The plan's hot keys of one source's counts (no key shared)."""
    if not threshold:
        return []
    order = sorted(((k, c) for k, c in counts.items() if c >= threshold),
                   key=lambda kv: (-kv[1], kv[0].encode("utf-8")))
    return [{"key": k, "fan_in": c, "shards": shard_count(c, threshold, max_shards),
             "sources": {source: c}} for k, c in order]


HOT = [40000, 25000, 12000, 10000, 9999, 5000]


class PlanTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="edgeload-plan-")
        cls.csv = os.path.join(cls.dir, "follows.csv")
        cls.edges = generate(cls.csv, 300000, HOT)
        cls.counts = collections.Counter(t for _, t in cls.edges)
        cls.sources = collections.Counter(s for s, _ in cls.edges)
        # a second indexed source without "hot", and one without index (read
        # for the estimate: it writes items too)
        cls.users = os.path.join(cls.dir, "users.csv")
        with open(cls.users, "w", encoding="utf-8") as f:
            f.write("id,name\n" + "".join("u%d,name %d\n" % (i, i) for i in range(500)))
        cls.likes = os.path.join(cls.dir, "likes.tsv")
        with open(cls.likes, "w", encoding="utf-8") as f:
            f.write("user\tpost\n")
            for i in range(3000):
                f.write("u%d\tp%d\n" % (i, i % 7))
        cls.mapping = os.path.join(cls.dir, "graph.json")
        with open(cls.mapping, "w", encoding="utf-8") as f:
            json.dump({
                "table": "Graph",
                "sources": [
                    {"name": "follows", "input": "follows.csv",
                     "pk": "ACTOR#{follower_id}", "sk": "TARGET#{followee_id}",
                     "attributes": {"createdAt": {"column": "created_at", "type": "N"}},
                     "hot": {"threshold": 10000, "max_shards": 32}},
                    {"name": "users", "input": "users.csv",
                     "pk": "USER#{id}", "sk": "PROFILE", "index": False,
                     "attributes": "*"},
                    {"name": "likes", "input": "likes.tsv", "format": "tsv",
                     "pk": "U#{user}", "sk": "POST#{post}"},
                ],
            }, f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def plan(self, *extra, inputs=()):
        out = os.path.join(self.dir, "p.json")
        if os.path.exists(out):
            os.unlink(out)
        p = run("plan", "--mapping", self.mapping, "--plan-out", out, *extra, *inputs)
        with open(out, encoding="utf-8") as f:
            return p, json.load(f)

    def test_report_and_plan_exact(self):
        p, plan = self.plan()
        rep = parse_report(p.stdout)
        f = rep["follows"]
        self.assertEqual(f["rows"], len(self.edges))
        self.assertEqual(f["rejected"], 0)
        self.assertEqual(f["sources"], len(self.sources))
        self.assertEqual(f["targets"], len(self.counts))
        self.assertEqual(f["hist"], expected_hist(self.counts))
        want_top = expected_top(self.counts, 10000, 32)
        self.assertEqual(f["top"], want_top)
        # the skew is what the test means: stars first, 9999 not hot, 10000 hot
        self.assertEqual([t[1] for t in want_top[:6]], HOT)
        self.assertEqual([t[2] for t in want_top[:6]], [4, 3, 2, 2, 1, 1])
        # the tail has ties inside the top 20, broken by key
        self.assertTrue(any(a[1] == b[1] for a, b in zip(want_top[6:], want_top[7:])))
        self.assertIn("source 'users': writes no index, no fan-in to count (500 items, 0 "
                      "rejected)", p.stdout)
        lk = rep["likes"]
        self.assertEqual(lk["rows"], 3000)
        self.assertEqual(lk["targets"], 7)
        self.assertTrue(all(t[2] == 1 for t in lk["top"]))
        self.assertEqual(len(lk["top"]), 7)

        likes_counts = collections.Counter("POST#p%d" % (i % 7) for i in range(3000))
        # the estimate rides along (test_estimate.py checks its figures)
        estimate = plan.pop("estimate")
        self.assertEqual([x["name"] for x in estimate["sources"]], ["follows", "users", "likes"])
        self.assertEqual(plan, {"version": 2, "sources": [
            {"name": "follows", "rows": len(self.edges), "threshold": 10000, "max_shards": 32},
            {"name": "likes", "rows": 3000, "threshold": 0, "max_shards": 0},
        ], "hot": expected_hot(self.counts, 10000, 32, "follows")})
        self.assertEqual([h["key"] for h in plan["hot"]],
                         ["TARGET#star0", "TARGET#star1", "TARGET#star2", "TARGET#star3"])
        self.assertEqual(len(likes_counts), 7)
        # two sources write the index: the report per index key comes first;
        # follows and likes share no key, so each key's fan-in is one source's
        ix = rep["index"]
        self.assertEqual(ix["targets"], len(self.counts) + 7)
        self.assertEqual(ix["hot"], 4)
        self.assertEqual(ix["top"], want_top)
        self.assertEqual(ix["shares"], [{"follows": c} for _, c, _, _ in want_top])
        self.assertEqual(f["all"], [t[1] for t in want_top])
        # no temporary file left next to the plan
        self.assertEqual(sorted(os.listdir(self.dir)),
                         ["follows.csv", "graph.json", "likes.tsv", "p.json", "users.csv"])

    def test_overrides(self):
        p, plan = self.plan("--hot-threshold", "300", "--max-shards", "4", "--top", "30")
        rep = parse_report(p.stdout)
        self.assertEqual(rep["follows"]["top"], expected_top(self.counts, 300, 4, 30))
        f, lk = plan["sources"]
        self.assertEqual((f["threshold"], f["max_shards"]), (300, 4))
        # the override reaches the source without "hot" too
        self.assertEqual((lk["threshold"], lk["max_shards"]), (300, 4))
        likes_counts = collections.Counter("POST#p%d" % (i % 7) for i in range(3000))
        want = expected_hot(self.counts, 300, 4, "follows") + \
            expected_hot(likes_counts, 300, 4, "likes")
        want.sort(key=lambda h: (-h["fan_in"], h["key"].encode("utf-8")))
        self.assertEqual(plan["hot"], want)
        self.assertTrue(any(h["shards"] == 2 for h in plan["hot"]))
        self.assertTrue(all(2 <= h["shards"] <= 4 for h in plan["hot"]))
        self.assertEqual(sum(h["fan_in"] for h in plan["hot"] if "likes" in h["sources"]), 3000)

    def test_fan_in_across_sources(self):
        """Two sources write the same index keys (follows split over two
        files): a key's fan-in is theirs together, reported per index key
        and per source, and planned as one source holding every edge."""
        d = tempfile.mkdtemp(prefix="edgeload-plan-two-")
        try:
            with open(os.path.join(d, "a.csv"), "w") as f:
                f.write("a,b\n" + "".join("u%d,bob\n" % i for i in range(4)) + "u9,amy\n")
            with open(os.path.join(d, "b.csv"), "w") as f:
                f.write("a,b\nv1,bob\nv2,bob\nv3,amy\nv4,amy\n")
            with open(os.path.join(d, "all.csv"), "w") as f:
                f.write("a,b\n" + "".join("u%d,bob\n" % i for i in range(4)) +
                        "u9,amy\nv1,bob\nv2,bob\nv3,amy\nv4,amy\n")
            src = lambda name, inp, hot=3: {"name": name, "input": inp, "pk": "ACTOR#{a}",
                                            "sk": "TARGET#{b}", "hot": {"threshold": hot}}
            two, one, bad = (os.path.join(d, n) for n in ("two.json", "one.json", "bad.json"))
            for path, sources in ((two, [src("a", "a.csv"), src("b", "b.csv")]),
                                  (one, [src("all", "all.csv")]),
                                  (bad, [src("a", "a.csv"), src("b", "b.csv", 5)])):
                with open(path, "w") as f:
                    json.dump({"table": "G", "sources": sources}, f)
            p = run("plan", "--mapping", two, "--plan-out", os.path.join(d, "p2.json"))
            run("plan", "--mapping", one, "--plan-out", os.path.join(d, "p1.json"))
            with open(os.path.join(d, "p2.json")) as f:
                p2 = json.load(f)
            with open(os.path.join(d, "p1.json")) as f:
                p1 = json.load(f)
            self.assertEqual(p2["hot"], [
                {"key": "TARGET#bob", "fan_in": 6, "shards": 2, "sources": {"a": 4, "b": 2}},
                {"key": "TARGET#amy", "fan_in": 3, "shards": 2, "sources": {"a": 1, "b": 2}}])
            self.assertEqual([(h["key"], h["fan_in"], h["shards"]) for h in p2["hot"]],
                             [(h["key"], h["fan_in"], h["shards"]) for h in p1["hot"]])
            rep = parse_report(p.stdout)
            self.assertEqual(rep["index"]["top"], [(1, 6, 2, "TARGET#bob"),
                                                   (2, 3, 2, "TARGET#amy")])
            self.assertEqual(rep["index"]["shares"], [{"a": 4, "b": 2}, {"a": 1, "b": 2}])
            # per source: its own rows, the key's fan-in over both, the shards
            self.assertEqual(rep["a"]["top"], [(1, 4, 2, "TARGET#bob"), (2, 1, 2, "TARGET#amy")])
            self.assertEqual(rep["a"]["all"], [6, 3])
            self.assertEqual(rep["b"]["top"], [(1, 2, 2, "TARGET#amy"), (2, 2, 2, "TARGET#bob")])
            self.assertEqual(rep["b"]["hot"], 2)
            self.assertIn("4 rows of this source over 4 index partitions", p.stdout)
            # sources that may share a key must shard it by the same rule
            p = run("plan", "--mapping", bad, check=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("sources 'a' and 'b' may write the same index partition key",
                          p.stderr)
            self.assertIn("same \"hot\" settings", p.stderr)
        finally:
            shutil.rmtree(d)

    def test_compressed_inputs_same_plan(self):
        _, want = self.plan()
        gz = os.path.join(self.dir, "f.csv.gz")
        with open(self.csv, "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        zst = os.path.join(self.dir, "f.csv.zst")
        subprocess.run(["zstd", "-q", "-f", self.csv, "-o", zst], check=True)
        try:
            for path in (gz, zst):
                _, got = self.plan(inputs=(path, self.users,
                                           self.likes))
                self.assertEqual(got, want, path)
        finally:
            os.unlink(gz)
            os.unlink(zst)

    def test_rejected_rows(self):
        d = tempfile.mkdtemp(prefix="edgeload-plan-rej-")
        try:
            csv = os.path.join(d, "e.csv")
            with open(csv, "w", encoding="utf-8") as f:
                f.write("a,b\nx,bob\ny,\n\"z\",bob\nw,\xff\n")
            mp = os.path.join(d, "m.json")
            with open(mp, "w") as f:
                json.dump({"table": "G", "sources": [{"name": "e", "input": "e.csv",
                                                      "pk": "A#{a}", "sk": "B#{b}"}]}, f)
            p = run("plan", "--mapping", mp, "--hot-threshold", "2", check=False)
            self.assertEqual(p.returncode, 3, p.stderr)
            rep = parse_report(p.stdout)["e"]
            self.assertEqual(rep["rows"], 3)
            self.assertEqual(rep["rejected"], 1)
            self.assertEqual(rep["top"][0], (1, 2, 2, "B#bob"))
            self.assertRegex(p.stderr, r"e\.csv:3:2: row not counted: .*'b' is (NULL|empty)")
        finally:
            shutil.rmtree(d)

    def test_usage_errors(self):
        p = run("plan", self.csv, check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--mapping", p.stderr)
        p = run("plan", "--mapping", self.mapping, "--max-shards", "1", check=False)
        self.assertEqual(p.returncode, 2)
        p = run("plan", "--mapping", self.mapping, "--hot-threshold", "0", check=False)
        self.assertEqual(p.returncode, 2)
        p = run("plan", "--mapping", self.mapping, "--bogus", check=False)
        self.assertEqual(p.returncode, 2)
        p = run("plan", "--mapping", self.mapping, "a.csv", "b.csv", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("2 inputs given for 3 sources", p.stderr)
        # a plan that could not be written is a configuration error, found
        # before the counting pass
        p = run("plan", "--mapping", self.mapping, "--plan-out",
                os.path.join(self.dir, "no", "dir", "p.json"), check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--plan-out %s: cannot write the plan there: folder %s does not exist" %
                      (os.path.join(self.dir, "no", "dir", "p.json"),
                       os.path.join(self.dir, "no", "dir")), p.stderr)
        self.assertEqual(p.stdout, "")
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            json.dump({"table": "G", "sources": [{"name": "e", "input": "follows.csv",
                                                  "pk": "A#{nope}", "sk": "B#{followee_id}"}]},
                      f)
        try:
            p = run("plan", "--mapping", bad, check=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown column 'nope'", p.stderr)
            self.assertIn("follower_id", p.stderr)
        finally:
            os.unlink(bad)
        p = run("plan", "--help")
        for opt in ("--mapping", "--hot-threshold", "--max-shards", "--plan-out", "--top",
                    "--quiet", "default"):
            self.assertIn(opt, p.stdout)

    def test_quiet(self):
        p, plan = self.plan("--quiet")
        self.assertEqual(p.stdout, "")
        self.assertEqual(plan["sources"][0]["rows"], len(self.edges))


class VectorsTest(unittest.TestCase):
    """The shard table of docs/SHARDING.md, recomputed independently."""

    def test_docs_table(self):
        with open(os.path.join(SRC_DIR, "docs", "SHARDING.md"), encoding="utf-8") as f:
            doc = f.read()
        rows = re.findall(r"^\| `([^`]*)` \| (\d+) \| `([0-9a-f]{16})` \| (\d+) \|$", doc, re.M)
        self.assertGreaterEqual(len(rows), 14)
        for key, n, h, shard in rows:
            self.assertEqual(fnv1a64(key.encode("utf-8")), int(h, 16), key)
            self.assertEqual(fnv1a64(key.encode("utf-8")) % int(n), int(shard), key)
        self.assertEqual(fnv1a64(b""), 0xcbf29ce484222325)
        self.assertEqual(fnv1a64(b"a"), 0xaf63dc4c8601ec8c)
        self.assertEqual(fnv1a64(b"foobar"), 0x85944171f73967e8)
        for f, want in ((9999, 1), (10000, 2), (10001, 2), (20000, 2), (20001, 3),
                        (99999, 10), (320000, 32), (5000000000, 32)):
            self.assertEqual(shard_count(f, 10000, 32), want, f)
            self.assertIn("%s → %d" % ("{:,}".format(f) if f >= 10**9 else f, want), doc)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--generate":
        n = int(sys.argv[2])
        hot = [400000, 200000, 100000, 50000, 20000, 10000, 9999]
        generate(sys.argv[3], n, hot if n >= 1000000 else HOT)
        sys.exit(0)
    unittest.main()
