#!/usr/bin/python3
"""The figures add up: every row read ends as exactly one of written,
duplicate (superseded by a later row of its key) or rejected, and the
summary, --stats-json and --dry-run's report say the same.

  rows_read == items_written + duplicates + rejected

checked for: 30 rows of 10 keys x 3 (load, --dry-run, --output); rows whose
keys repeat close together and far apart, with bad rows, read in parallel
parts (--threads 2); the same through the fault proxy (throttles, 5xx,
partial batches, lost replies); a load killed with SIGKILL and resumed; and
--split workers. Shard directory items come from no row and are counted
apart. The table always holds the last row of every key.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import SOURCE_DIR, EdgeloadTestCase, N, S, main  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "tools"))
import faultproxy  # noqa: E402

KEYS = ["--pk", "ACTOR#{a}", "--sk", "TARGET#{b}", "--attr", "w=w:N"]


def make_rows(count, seed, bad_every=0):
    """CSV text of `count` rows a,b,w whose keys repeat near (one of the
    last few rows) and far (any earlier row), every bad_every-th row with a
    bad number; returns (text, expected items by key, bad rows)."""
    rng = random.Random(seed)
    keys, expected, bad = [], {}, 0
    lines = ["a,b,w"]
    for i in range(count):
        r = rng.random()
        if not keys or r < 0.4:
            key = ("u%d" % rng.randrange(100000), "t%d" % rng.randrange(40))
            keys.append(key)
        elif r < 0.7:
            key = keys[-1 - rng.randrange(min(3, len(keys)))]
        else:
            key = keys[rng.randrange(len(keys))]
        if bad_every and i % bad_every == bad_every - 1:
            lines.append("%s,%s,not-a-number" % key)
            bad += 1
            continue
        lines.append("%s,%s,%d" % (key[0], key[1], i))
        pk, sk = "ACTOR#" + key[0], "TARGET#" + key[1]
        expected[(pk, sk)] = {"PK": S(pk), "SK": S(sk), "GSI1PK": S(sk), "GSI1SK": S(pk),
                              "w": N(i)}
    return "\n".join(lines) + "\n", expected, bad


class Accounting(EdgeloadTestCase):

    def stats(self, path):
        with open(path) as f:
            return json.load(f)

    def assertAddsUp(self, st, rows=None, rejected=None):
        self.assertEqual(st["rows_read"], st["items_written"] + st["duplicates"] +
                         st["rejected"], st)
        if rows is not None:
            self.assertEqual(st["rows_read"], rows, st)
        if rejected is not None:
            self.assertEqual(st["rejected"], rejected, st)

    def assertSummary(self, stderr, st, verb="written"):
        # the summary says what --stats-json says
        self.assertIn("edgeload: %d rows read, %d items %s, %d duplicates, %d rejected, "
                      % (st["rows_read"], st["items_written"], verb, st["duplicates"],
                         st["rejected"]), stderr)

    def check_table(self, table, expected):
        items = self.scan_all(table, segments=4, ConsistentRead=True)
        got = {(i["PK"]["S"], i["SK"]["S"]): i for i in items}
        self.assertEqual(len(items), len(got))
        self.assertEqual(set(got), set(expected))
        for key, item in expected.items():
            self.assertEqual(got[key], item, key)

    def test_thirty_rows_ten_keys_three_times(self):
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", "a,b,w\n" + "".join(
            "u%d,t%d,%d\n" % (k, k, 3 * k + j) for k in range(10) for j in range(3)))
        table = self.unique_table("acc30")
        self.create_table_boto(table)
        runs = {
            "load": self.load("--table", table, *KEYS, "--progress", "none", "--stats-json",
                              os.path.join(d, "load.json"), csv),
            "dry": self.run_edgeload("load", "--table", table, *KEYS, "--dry-run",
                                     "--stats-json", os.path.join(d, "dry.json"), csv),
            "output": self.run_edgeload("load", "--table", table, *KEYS, "--output",
                                        os.path.join(d, "out"), "--progress", "none",
                                        "--stats-json", os.path.join(d, "output.json"), csv),
        }
        for name, proc in runs.items():
            self.assertExit(proc, 0, name)
            st = self.stats(os.path.join(d, name + ".json"))
            self.assertAddsUp(st, rows=30, rejected=0)
            self.assertEqual((st["items_written"], st["duplicates"]), (10, 20), name)
            self.assertSummary(proc.stderr, st, "printed" if name == "dry" else "written")
        printed = [json.loads(x)["Item"] for x in runs["dry"].stdout.splitlines()]
        self.assertEqual(len(printed), 10)
        self.assertEqual(sorted(int(i["w"]["N"]) for i in printed), [3 * k + 2 for k in range(10)])
        self.check_table(table, {("ACTOR#u%d" % k, "TARGET#t%d" % k): {
            "PK": S("ACTOR#u%d" % k), "SK": S("TARGET#t%d" % k), "GSI1PK": S("TARGET#t%d" % k),
            "GSI1SK": S("ACTOR#u%d" % k), "w": N(3 * k + 2)} for k in range(10)})

    def test_near_and_far_duplicates_rejects_parallel_parts(self):
        text, expected, bad = make_rows(12000, seed=7, bad_every=97)
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", text)
        table = self.unique_table("accpar")
        self.create_table_boto(table)
        sj = os.path.join(d, "s.json")
        proc = self.run_edgeload("load", *self.endpoint_args(), "--table", table, *KEYS,
                                 "--threads", "2", "--progress", "none", "--stats-json", sj,
                                 "--rejects", os.path.join(d, "rej.jsonl"), csv,
                                 env={"EDGELOAD_PART_BYTES": "16384"})  # many parts
        self.assertExit(proc, 3)
        st = self.stats(sj)
        self.assertAddsUp(st, rows=12000, rejected=bad)
        self.assertSummary(proc.stderr, st)
        self.assertGreaterEqual(st["items_written"], len(expected))
        self.check_table(table, expected)

    def test_through_faults(self):
        text, expected, bad = make_rows(6000, seed=11, bad_every=151)
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", text)
        table = self.unique_table("accflt")
        self.create_table_boto(table)
        sj = os.path.join(d, "s.json")
        with faultproxy.ProxyProcess(self.endpoint_args()[1], seed=5, throttle=0.1,
                                     http500=0.03, partial=0.3, lost_reply=0.02,
                                     reset=0.02) as proxy:
            proc = self.run_edgeload("load", "--endpoint-url", proxy.url, "--region", "us-east-1",
                                     "--table", table, *KEYS, "--progress", "none",
                                     "--stats-json", sj, "--max-retry-time", "300",
                                     "--rejects", os.path.join(d, "rej.jsonl"), csv)
            faults = proxy.stats()["faults"]
        self.assertExit(proc, 3)
        self.assertGreater(sum(faults.values()), 20, faults)
        st = self.stats(sj)
        self.assertAddsUp(st, rows=6000, rejected=bad)
        self.assertGreater(st["retries"], 0)
        self.check_table(table, expected)

    def test_resume_after_sigkill(self):
        text, expected, bad = make_rows(5000, seed=13, bad_every=211)
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", text)
        table = self.unique_table("accres")
        self.create_table_boto(table)
        ck, rej, sj = (os.path.join(d, n) for n in ("ck.json", "rej.jsonl", "s.json"))
        common = ["--table", table, *KEYS, "--checkpoint", ck, "--checkpoint-interval", "0.2",
                  "--rejects", rej, "--progress", "none", "--concurrency", "2"]
        # slow answers keep the first run going; it is killed in the middle
        with faultproxy.ProxyProcess(self.endpoint_args()[1], slow=1.0, slow_ms=60) as proxy:
            first = subprocess.Popen([self.bin, "load", "--endpoint-url", proxy.url, "--region",
                                      "us-east-1", *common, csv],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(2.0)
            first.send_signal(signal.SIGKILL)
            first.wait()
        self.assertEqual(first.returncode, -signal.SIGKILL)
        with open(ck) as f:
            self.assertFalse(all(i.get("done") for i in json.load(f)["inputs"]),
                             "the first run finished before the kill")
        proc = self.load(*common, "--resume", "--stats-json", sj, csv)
        self.assertExit(proc, 3)
        st = self.stats(sj)
        # this run's rows, from the checkpoint on, each ended one way
        self.assertAddsUp(st)
        self.assertGreater(st["rows_read"], 0)
        self.assertLess(st["rows_read"], 5000)
        self.assertSummary(proc.stderr, st)
        self.assertEqual(st["rejects_in_file"], bad)
        self.check_table(table, expected)

    def test_incremental(self):
        d = self.tmpdir()
        base = self.write_file(d, "base.csv", "a,b,w,op\n" + "".join(
            "u%d,t%d,%d,\n" % (i % 9, i, i) for i in range(300)))
        # new edges, edges already there (duplicates), deletes of edges there
        # and of edges never there (absent), and bad rows
        delta = self.write_file(d, "delta.csv", "a,b,w,op\n" +
                                "".join("u%d,n%d,%d,\n" % (i % 5, i, i) for i in range(200)) +
                                "".join("u%d,t%d,%d,\n" % (i % 9, i, i) for i in range(50)) +
                                "".join("u%d,t%d,0,D\n" % (i % 9, i) for i in range(50, 80)) +
                                "".join("u1,gone%d,0,D\n" % i for i in range(20)) +
                                "".join("u2,bad%d,oops,\n" % i for i in range(7)))
        table = self.unique_table("accinc")
        self.create_table_boto(table)
        keys = ["--table", table, *KEYS]
        self.assertExit(self.load(*keys, "--quiet", base), 0, "base load")
        sj = os.path.join(d, "s.json")
        proc = self.load(*keys, "--incremental", "--op-column", "op", "--progress", "none",
                         "--stats-json", sj, "--rejects", os.path.join(d, "rej.jsonl"), delta)
        self.assertExit(proc, 3)
        st = self.stats(sj)
        self.assertEqual(st["rows_read"], 307)
        self.assertEqual((st["added"], st["deleted"], st["duplicates"], st["absent"],
                          st["rejected"]), (200, 30, 50, 20, 7))
        # each row one way (--stats-json keeps the absent apart from the duplicates)
        self.assertEqual(st["rows_read"], st["items_written"] + st["duplicates"] +
                         st["absent"] + st["rejected"])
        self.assertIn("307 rows read, 230 items written, 70 duplicates, 7 rejected",
                      proc.stderr)

    def test_split_workers(self):
        text, expected, bad = make_rows(8000, seed=17, bad_every=173)
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", text)
        table = self.unique_table("accspl")
        self.create_table_boto(table)
        total = {"rows_read": 0, "rejected": 0}
        for i in (1, 2):
            sj = os.path.join(d, "s.json")
            proc = self.load("--table", table, *KEYS, "--split", "%d/2" % i, "--progress",
                             "none", "--stats-json", sj, "--rejects",
                             os.path.join(d, "rej.jsonl"), csv)
            self.assertIn(proc.returncode, (0, 3), proc.stderr)
            st = self.stats(os.path.join(d, "s.%d-of-2.json" % i))
            self.assertAddsUp(st)
            self.assertSummary(proc.stderr, st)
            for k in total:
                total[k] += st[k]
        self.assertEqual(total, {"rows_read": 8000, "rejected": bad})
        # each worker's part of the file is its own: a key in both parts is
        # written by both, and the later part's worker ran last here
        self.check_table(table, expected)


if __name__ == "__main__":
    main()
