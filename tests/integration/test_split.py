"""Split runs (issue 10) against DynamoDB Local: `load --split I/N`.

A skewed follow graph with hot targets in several inputs (a large plain CSV
with quoted values holding newlines, commas and doubled quotes and a few bad
rows, which the split cuts by byte ranges; a gzip CSV and a TSV, which go
whole to one worker), with counters. The documented path, `edgeload plan
--plan-out`, then four workers `--split 1/4 ... 4/4` run at once, then one
`edgeload counters`, gives, item for item with every attribute, the table of
a single run into a second table, shard directory items and counters
included; the four workers' rejects together are the single run's. Each
worker has its own checkpoint, and --resume works per worker: worker 1 is
killed (-9) in the middle of its part first and resumes with the others.
`verify --split I/N` checks each part; counters and verify --reverse refuse
--split.
"""

import gzip
import json
import os
import random
import re
import subprocess
import time

from edgeload_test import EdgeloadTestCase, canon, canon_sorted, main, read_jsonl

HOT = {"star": 1500, "idol": 700}   # fan-in: threshold 400 -> 4 and 2 shards
THRESHOLD = 400


def note(rnd, i):
    """A value that needs quoting now and then: newlines, commas, quotes."""
    k = rnd.randrange(6)
    if k == 0:
        return "line one\nline two %d" % i
    if k == 1:
        return 'said "hi", twice\n"hi"'
    if k == 2:
        return "a,b,c"
    if k == 3:
        return ""
    return "plain %d" % i


def csv_field(v):
    if any(c in v for c in ',"\n\r'):
        return '"' + v.replace('"', '""') + '"'
    return v


def make_inputs(d):
    rnd = random.Random(10)
    edges = []
    for target, fan_in in HOT.items():
        edges += [("f%05d" % i, target) for i in range(fan_in)]
    # unique pairs: two rows of one item in two workers would race for the last word
    others = set()
    while len(others) < 2600:
        others.add(("f%05d" % rnd.randrange(20000), "t%03d" % rnd.randrange(150)))
    edges += sorted(others)
    rnd.shuffle(edges)
    big, gz, tsv = edges[:3000], edges[3000:4000], edges[4000:]
    header = "follower_id,followee_id,created_at,note\n"
    lines = [header]
    bad = 0
    for i, (a, b) in enumerate(big):
        if i % 450 == 17:        # a row with a column missing: a reject
            lines.append("%s,%s,%d\n" % (a, b, 1718900000 + i))
            bad += 1
            continue
        if i % 700 == 5:         # an empty key: a reject
            lines.append(",%s,%d,x\n" % (b, 1718900000 + i))
            bad += 1
            continue
        lines.append("%s,%s,%d,%s\n" % (a, b, 1718900000 + i, csv_field(note(rnd, i))))
    paths = {}
    paths["big"] = os.path.join(d, "follows-big.csv")
    with open(paths["big"], "w", newline="") as f:
        f.write("".join(lines))
    paths["gz"] = os.path.join(d, "follows-more.csv.gz")
    with gzip.open(paths["gz"], "wt", newline="") as f:
        f.write(header)
        for i, (a, b) in enumerate(gz):
            f.write("%s,%s,%d,%s\n" % (a, b, 1718800000 + i, csv_field(note(rnd, i))))
    paths["tsv"] = os.path.join(d, "follows-rest.tsv")
    with open(paths["tsv"], "w", newline="") as f:
        f.write(header.replace(",", "\t"))
        for i, (a, b) in enumerate(tsv):
            f.write("%s\t%s\t%d\tnote %d\n" % (a, b, 1718700000 + i, i))
    return paths, bad


class SplitTest(EdgeloadTestCase):

    def setUp(self):
        self.dir = self.tmpdir()
        self.paths, self.bad_rows = make_inputs(self.dir)
        self.inputs = [self.paths["big"], self.paths["gz"], self.paths["tsv"]]
        self.mapping = os.path.join(self.dir, "mapping.json")
        with open(self.mapping, "w") as f:
            json.dump({
                "table": "unused",
                "sources": [{
                    "name": "follows",
                    "pk": "ACTOR#{follower_id}", "sk": "TARGET#{followee_id}",
                    "attributes": {"createdAt": {"column": "created_at", "type": "N"},
                                   "note": {"column": "note"},
                                   "edgeType": {"value": "FOLLOWS"}},
                    "hot": {"threshold": THRESHOLD, "max_shards": 8},
                    "counters": [{"pk": "USER#{followee_id}", "sk": "PROFILE",
                                  "attribute": "followerCount"}]}]}, f)

    def test_four_workers_equal_one_run(self):
        single, split = self.unique_table("split-one"), self.unique_table("split-four")
        self.create_table_boto(single)
        self.create_table_boto(split)

        # the reference: one process, counting its own plan
        rej_single = os.path.join(self.dir, "single-rejects.jsonl")
        proc = self.load("--mapping", self.mapping, "--table", single, "--rejects",
                         rej_single, "--progress", "none", *self.inputs)
        self.assertExit(proc, 3, "single load")

        # one plan over the whole input, then four workers at once
        plan = os.path.join(self.dir, "plan.json")
        proc = self.run_edgeload("plan", "--mapping", self.mapping, "--plan-out", plan,
                                 "--quiet", *self.inputs)
        self.assertIn(proc.returncode, (0, 3), proc.stderr)
        ckpt = os.path.join(self.dir, "worker-{i}.ckpt")
        rejects = os.path.join(self.dir, "rejects.jsonl")
        stats = os.path.join(self.dir, "stats.json")

        def worker_args(i):
            # --resume in every worker: with no checkpoint yet it starts over
            return [self.bin, "load", *self.endpoint_args(), "--mapping", self.mapping,
                    "--table", split, "--plan", plan, "--split", "%d/4" % i,
                    "--checkpoint", ckpt, "--checkpoint-interval", "0.2", "--resume",
                    "--rejects", rejects, "--stats-json", stats, "--progress", "none",
                    *self.inputs]

        # worker 1 is killed (-9) in the middle of its part, once its checkpoint
        # shows progress (held to 200 edges/s meanwhile), and resumes with the others
        first = subprocess.Popen(worker_args(1) + ["--max-wcu", "400"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first_ckpt = os.path.join(self.dir, "worker-1.ckpt")
        deadline = time.monotonic() + 120
        while first.poll() is None and time.monotonic() < deadline:
            try:
                with open(first_ckpt) as f:
                    cp = json.load(f)
                # past the first chunk (the header and first row are ~60 bytes)
                if any(i["offset"] > 1000 and not i["done"] for i in cp["inputs"]):
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        first.kill()
        first.wait()
        killed = first.returncode == -9
        workers = [subprocess.Popen(worker_args(i), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for i in range(1, 5)]
        outs = [w.communicate(timeout=300) for w in workers]
        rows = 0
        for i, (w, (out, err)) in enumerate(zip(workers, outs), 1):
            self.assertIn(w.returncode, (0, 3), "worker %d:\n%s" % (i, err))
            self.assertIn("counters are not set by split workers", err)
            self.assertTrue(os.path.exists(os.path.join(self.dir, "worker-%d.ckpt" % i)))
            with open(os.path.join(self.dir, "stats.%d-of-4.json" % i)) as f:
                st = json.load(f)
            self.assertEqual(st["counters_written"], 0)
            if i > 1:
                self.assertGreater(st["rows_read"], 0, "worker %d read nothing" % i)
            rows += st["rows_read"]
        # the three inputs' rows (the big CSV's bad rows too), less those worker 1
        # had done before its kill (its checkpoint may also have gone from its
        # first chunk straight to done, batches mixing chunks: then it finished
        # on its own, and its second run read nothing)
        total = 3000 + 1000 + (sum(HOT.values()) + 2600 - 4000)
        self.assertLess(rows, total, "killed" if killed else "worker 1 finished first")

        # the counters: one pass over the whole input after the workers
        proc = self.run_edgeload("counters", *self.endpoint_args(), "--mapping", self.mapping,
                                 "--table", split, "--quiet", "--rejects",
                                 os.path.join(self.dir, "counters-rejects.jsonl"), *self.inputs)
        self.assertIn(proc.returncode, (0, 3), proc.stderr)

        # verify, split as the load was: every worker's part matches, and the
        # parts together read every row once
        verified = 0
        for i in range(1, 5):
            proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", self.mapping,
                                     "--table", split, "--plan", plan, "--split", "%d/4" % i,
                                     "--report", os.path.join(self.dir, "verify.jsonl"),
                                     "--allow-rejected", *self.inputs)
            self.assertExit(proc, 0, "verify --split %d/4" % i)
            verified += int(re.search(r"verify: (\d+) rows read",
                                      proc.stdout + proc.stderr).group(1))
            self.assertTrue(os.path.exists(os.path.join(self.dir, "verify.%d-of-4.jsonl" % i)))
        self.assertEqual(verified, total)

        one = self.scan_all(single)
        four = self.scan_all(split)
        self.assertEqual(len(one), len(four))
        self.assertEqual(canon_sorted(one), canon_sorted(four))
        # what was compared holds what matters: directory items, counters, shards
        dirs = [i for i in four if i["SK"]["S"] == "#SHARDS"]
        self.assertEqual(sorted(i["PK"]["S"] for i in dirs), ["TARGET#idol", "TARGET#star"])
        star = [i for i in four if i["PK"]["S"] == "USER#star"]
        # (the bad rows of the big CSV may be star's)
        self.assertGreaterEqual(int(star[0]["followerCount"]["N"]), HOT["star"] - self.bad_rows)
        self.assertTrue(any(i.get("GSI1PK", {}).get("S") == "TARGET#star#3" for i in four))
        self.assertTrue(any("\n" in i.get("note", {}).get("S", "") for i in four))

        # the rejects of the four workers together are the single run's
        single_rej = read_jsonl(rej_single)
        self.assertEqual(len(single_rej), self.bad_rows)
        parts = []
        big_holders = 0
        for i in range(1, 5):
            path = os.path.join(self.dir, "rejects.%d-of-4.jsonl" % i)
            got = read_jsonl(path) if os.path.exists(path) else []
            big_holders += any(r["input"] == self.paths["big"] for r in got)
            parts += got
        self.assertEqual(sorted(canon(r) for r in parts), sorted(canon(r) for r in single_rej))
        # the big CSV really was cut: its bad rows went to several workers
        self.assertGreaterEqual(big_holders, 3)

        # --resume, per worker: a finished worker's checkpoint has nothing left
        proc = self.load("--mapping", self.mapping, "--table", split, "--plan", plan,
                         "--split", "2/4", "--checkpoint", ckpt, "--resume", "--rejects",
                         rejects, "--stats-json", stats, "--progress", "none", *self.inputs)
        self.assertIn(proc.returncode, (0, 3), proc.stderr)
        with open(os.path.join(self.dir, "stats.2-of-4.json")) as f:
            st = json.load(f)
        self.assertEqual(st["rows_read"], 0)
        self.assertEqual(st["items_written"], 0)
        self.assertEqual(st["directory_items"], 2)  # the shard directory, rewritten as always
        # another worker's checkpoint is refused
        os.rename(os.path.join(self.dir, "worker-3.ckpt"), os.path.join(self.dir, "worker-2.ckpt"))
        proc = self.load("--mapping", self.mapping, "--table", split, "--plan", plan,
                         "--split", "2/4", "--checkpoint", ckpt, "--resume", "--progress",
                         "none", *self.inputs)
        self.assertExit(proc, 2, "resume from another worker's checkpoint")
        self.assertIn("belongs to another job", proc.stderr)

    def test_usage(self):
        # hot targets without a plan: every worker must shard the same keys
        proc = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping, "--table", "T",
                                 "--split", "1/4", *self.inputs)
        self.assertExit(proc, 2, "--split without --plan")
        self.assertIn("--plan", proc.stderr)
        for bad in ("0/4", "5/4", "x/4", "4"):
            proc = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping,
                                     "--split", bad, *self.inputs)
            self.assertExit(proc, 2, "--split " + bad)
        proc = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping, "--split",
                                 "auto/4", *self.inputs)
        self.assertExit(proc, 2, "--split auto/4 with no index variable")
        self.assertIn("AWS_BATCH_JOB_ARRAY_INDEX", proc.stderr)
        proc = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping, "--split",
                                 "1/2", "-", stdin="a,b\n")
        self.assertExit(proc, 2, "--split with standard input")
        proc = self.run_edgeload("verify", *self.endpoint_args(), "--mapping", self.mapping,
                                 "--table", "T", "--split", "1/2", "--reverse", "5",
                                 *self.inputs)
        self.assertExit(proc, 2, "verify --split with --reverse")
        proc = self.run_edgeload("counters", *self.endpoint_args(), "--mapping", self.mapping,
                                 "--table", "T", "--split", "1/2", *self.inputs)
        self.assertExit(proc, 2, "counters --split")
        self.assertIn("whole input", proc.stderr)

    def test_auto_index_from_the_scheduler(self):
        plan = os.path.join(self.dir, "plan.json")
        proc = self.run_edgeload("plan", "--mapping", self.mapping, "--plan-out", plan,
                                 "--quiet", *self.inputs)
        self.assertIn(proc.returncode, (0, 3), proc.stderr)

        def dry(split, env=None):
            p = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping, "--table",
                                  "T", "--plan", plan, "--split", split, "--rejects",
                                  os.path.join(self.dir, "r.jsonl"), "--quiet", *self.inputs,
                                  env=env)
            self.assertIn(p.returncode, (0, 3), p.stderr)
            return sorted(p.stdout.splitlines())

        clean = {"AWS_BATCH_JOB_ARRAY_INDEX": "", "JOB_COMPLETION_INDEX": "", "PARALLEL_SEQ": ""}
        second = dry("2/4")
        self.assertTrue(second)
        self.assertEqual(dry("auto/4", dict(clean, AWS_BATCH_JOB_ARRAY_INDEX="1")), second)
        self.assertEqual(dry("auto/4", dict(clean, JOB_COMPLETION_INDEX="1")), second)
        self.assertEqual(dry("auto/4", dict(clean, PARALLEL_SEQ="2")), second)
        # the parts of a dry run hold every item of the whole, once
        allp = []
        for i in range(1, 4):
            allp += dry("%d/3" % i)
        whole = self.run_edgeload("load", "--dry-run", "--mapping", self.mapping, "--table",
                                  "T", "--plan", plan, "--rejects",
                                  os.path.join(self.dir, "r.jsonl"), "--quiet", *self.inputs)
        # (each worker writes the shard directory items: the same items, idempotent)
        wlines = whole.stdout.splitlines()
        self.assertEqual(sorted(l for l in allp if "#SHARDS" not in l),
                         sorted(l for l in wlines if "#SHARDS" not in l))
        self.assertEqual({l for l in allp if "#SHARDS" in l},
                         {l for l in wlines if "#SHARDS" in l})
        self.assertEqual(len([l for l in wlines if "#SHARDS" in l]), 2)


if __name__ == "__main__":
    main()
