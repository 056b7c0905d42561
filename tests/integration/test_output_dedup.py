#!/usr/bin/python3
"""`--output DIR` and `--dry-run` mean the same table as a load through the API.

DynamoDB's Import from S3 keeps an arbitrary one of several items with one
key, and does not count them; a load through the API leaves the last row of
each key. So `--output` writes each key once, the last row winning, and
counts the rows it merged as duplicates.

  1. An input whose keys repeat near (the next rows) and far apart (a third
     of the file later), each row with its own row number in an attribute,
     goes to `--output` (small parts, and a fingerprint budget forced low
     with EDGELOAD_DEDUP_MEMORY so the sorted runs spill and merge), to
     `--output` again from standard input, to `--dry-run`, and to
     DynamoDB Local through the API. The parts' items are put back with
     boto3's batch_writer (which refuses two items of one key in a batch,
     so a duplicate left in a part fails it) into a second table: both
     tables hold exactly the last row of every key. The summaries and
     --stats-json add up: rows = written + duplicates + rejected.
  2. A million rows from standard input (an input read once) under a
     fingerprint budget of 2 MB: the parts hold each key once, the last row
     of each, and the peak RSS stays bounded (docs/PERFORMANCE.md has the
     10 M and 100 M-row runs with the default budget).
"""
import json
import os
import random
import subprocess
import sys
import threading

import boto3
from boto3.dynamodb.types import TypeDeserializer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import (ENDPOINT, REGION, EdgeloadTestCase, canon_sorted,  # noqa: E402
                           main)

TIME = "/usr/bin/time"
HEADER = "follower_id,followee_id,n\n"
MAPPING = ["--table", "T", "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
           "--attr", "n=n:N", "--const", "edgeType=FOLLOWS"]


def rows_with_duplicates(count, seed=20261203):
    """(follower, followee, n) rows: a third new keys, a third the key of a
    row just before (near), a third the key of a row far back."""
    rng = random.Random(seed)
    keys, rows = [], []
    for n in range(count):
        r = rng.random()
        if not keys or r < 0.34:
            key = ("u%d" % rng.randrange(count), "v%d" % rng.randrange(50))
            keys.append(key)
        elif r < 0.67:
            key = keys[max(0, len(keys) - 1 - rng.randrange(3))]
        else:
            key = keys[rng.randrange(max(1, len(keys) // 2))]
        rows.append((key[0], key[1], n))
    return rows


def expected_items(rows):
    last = {}
    for follower, followee, n in rows:
        last[(follower, followee)] = n
    return [{"PK": {"S": "ACTOR#" + f}, "SK": {"S": "TARGET#" + t},
             "GSI1PK": {"S": "TARGET#" + t}, "GSI1SK": {"S": "ACTOR#" + f},
             "n": {"N": str(n)}, "edgeType": {"S": "FOLLOWS"}} for (f, t), n in last.items()]


def read_parts(out_dir):
    """The manifest and every item of every part it lists."""
    with open(os.path.join(out_dir, "manifest.json")) as f:
        manifest = json.load(f)
    items = []
    for p in manifest["parts"]:
        plain = subprocess.run(["zstd", "-dc", os.path.join(out_dir, p["path"])], check=True,
                               capture_output=True).stdout
        lines = plain.decode().splitlines()
        assert len(lines) == p["items"], (p, len(lines))
        items += [json.loads(x)["Item"] for x in lines]
    listed = sorted(os.path.basename(p["path"]) for p in manifest["parts"])
    assert sorted(os.listdir(os.path.join(out_dir, "data"))) == listed, "unlisted files"
    return manifest, items


class OutputDedup(EdgeloadTestCase):

    def stats(self, path):
        with open(path) as f:
            return json.load(f)

    def check_adds_up(self, st, rows, distinct):
        self.assertEqual(st["rows_read"], rows)
        self.assertEqual(st["items_written"], distinct)
        self.assertEqual(st["duplicates"], rows - distinct)
        self.assertEqual(st["rejected"], 0)
        self.assertEqual(st["rows_read"], st["items_written"] + st["duplicates"] + st["rejected"])

    def test_same_table_as_a_load(self):
        rows = rows_with_duplicates(6000)
        want = expected_items(rows)
        self.assertLess(len(want), 4500)  # plenty of duplicates, near and far
        d = self.tmpdir()
        text = HEADER + "".join("%s,%s,%d\n" % r for r in rows)
        csv = self.write_file(d, "follows.csv", text)
        low = {"EDGELOAD_DEDUP_MEMORY": "65536"}  # 6,000 fingerprints spill and merge

        # --output from the file, and from standard input
        outs = {}
        for name, arg, stdin in (("file", csv, None), ("stdin", "-", text)):
            out = os.path.join(d, "out-" + name)
            sj = os.path.join(d, "stats-%s.json" % name)
            proc = self.run_edgeload("load", *MAPPING, "--output", out, "--part-items", "700",
                                     "--stats-json", sj, "--progress", "none", arg,
                                     stdin=stdin, env=low)
            self.assertExit(proc, 0)
            self.assertIn("%d duplicates" % (len(rows) - len(want)), proc.stderr)
            self.check_adds_up(self.stats(sj), len(rows), len(want))
            manifest, items = read_parts(out)
            self.assertEqual(manifest["item_count"], len(want))
            self.assertEqual(canon_sorted(items), canon_sorted(want), name)
            outs[name] = items
        self.assertEqual(canon_sorted(outs["file"]), canon_sorted(outs["stdin"]))

        # --dry-run prints each key once too, and says how many it merged
        sj = os.path.join(d, "stats-dry.json")
        proc = self.run_edgeload("load", *MAPPING, "--dry-run", "--stats-json", sj, csv,
                                 env=low)
        self.assertExit(proc, 0)
        printed = [json.loads(x)["Item"] for x in proc.stdout.splitlines()]
        self.assertEqual(canon_sorted(printed), canon_sorted(want))
        self.assertIn("%d items printed, %d duplicates" % (len(want), len(rows) - len(want)),
                      proc.stderr)
        self.check_adds_up(self.stats(sj), len(rows), len(want))

        # through the API: the same table
        api = self.unique_table("dedup-api")
        self.create_table_cli(api)
        sj = os.path.join(d, "stats-api.json")
        proc = self.load(*MAPPING[:1], api, *MAPPING[2:], "--stats-json", sj,
                         "--progress", "none", csv)
        self.assertExit(proc, 0)
        st = self.stats(sj)
        self.assertEqual(st["rows_read"], st["items_written"] + st["duplicates"] +
                         st["rejected"])
        loaded = self.scan_all(api, segments=4)

        # the parts put back with boto3's batch_writer: the same table again
        imported = self.unique_table("dedup-import")
        self.create_table_boto(imported)
        table = boto3.resource("dynamodb", endpoint_url=ENDPOINT, region_name=REGION).Table(
            imported)
        des = TypeDeserializer()
        with table.batch_writer() as bw:
            for item in outs["file"]:
                bw.put_item(Item={k: des.deserialize(v) for k, v in item.items()})
        put_back = self.scan_all(imported, segments=4)
        self.assertEqual(len(put_back), len(want))
        self.assertEqual(canon_sorted(put_back), canon_sorted(want))
        self.assertEqual(canon_sorted(loaded), canon_sorted(put_back))

    def test_million_rows_from_stdin_capped(self):
        # 1,000,000 rows over 700,000 keys: the first 300,000 keys come again
        # 700,000 rows later (far apart), with a new value
        total, keys = 1000000, 700000
        d = self.tmpdir()
        out = os.path.join(d, "out")
        rss_path = os.path.join(d, "rss")
        err_path = os.path.join(d, "stderr")
        err_file = open(err_path, "wb")
        self.addCleanup(err_file.close)
        proc = subprocess.Popen(
            [TIME, "-f", "%M %e", "-o", rss_path, self.bin, "load", *MAPPING, "--output", out,
             "--progress", "none", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err_file,
            env=dict(os.environ, EDGELOAD_DEDUP_MEMORY=str(2 << 20)))

        def feed():
            proc.stdin.write(HEADER.encode())
            for start in range(0, total, 50000):
                proc.stdin.write("".join(
                    "u%d,v%d,%d\n" % (i % keys, i % keys % 7, i)
                    for i in range(start, min(total, start + 50000))).encode())
            proc.stdin.close()
        writer = threading.Thread(target=feed)
        writer.start()
        writer.join(900)
        proc.wait(900)
        with open(err_path, "rb") as f:
            stderr = f.read().decode(errors="replace")
        self.assertEqual(proc.returncode, 0, stderr[-3000:])
        self.assertIn("%d duplicates" % (total - keys), stderr)
        with open(rss_path) as f:
            rss_kb, secs = f.read().split()[-2:]
        print("  1 M rows from stdin, 2 MB fingerprint budget: peak RSS %s KB, %s s"
              % (rss_kb, secs), file=sys.stderr)
        sanitized = b"__asan_init" in open(self.bin, "rb").read()
        self.assertLess(int(rss_kb), (768 if sanitized else 64) * 1024)
        with open(os.path.join(out, "manifest.json")) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["item_count"], keys)
        # every key once, with the value of its last row
        seen = 0
        for p in manifest["parts"]:
            plain = subprocess.run(["zstd", "-dc", os.path.join(out, p["path"])], check=True,
                                   capture_output=True).stdout
            for line in plain.split(b"\n"):
                if not line:
                    continue
                item = json.loads(line)["Item"]
                k = int(item["PK"]["S"][len("ACTOR#u"):])
                n = int(item["n"]["N"])
                self.assertEqual(n, k + keys if k < total - keys else k)
                seen += 1
        self.assertEqual(seen, keys)


if __name__ == "__main__":
    main()
