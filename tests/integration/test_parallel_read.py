"""Parallel reading (issue 4): one CSV/TSV input cut into parts at record
boundaries and parsed by several threads gives exactly what one thread
gives: the same items in the same order (--dry-run output and --output
parts compared byte for byte), the same rejects file (line, column, offset),
on inputs with quoted fields holding newlines, doubled quotes, CRLF lines,
duplicate keys and bad rows, cut into many small parts (EDGELOAD_PART_BYTES).
And a load killed mid-way with SIGKILL and resumed with --resume ends with
exactly the table and the rejects an uninterrupted run makes.
"""

import glob
import os
import random
import signal
import subprocess
import time

from edgeload_test import EdgeloadTestCase, main, read_jsonl
from test_resume import make_input

PART = {"EDGELOAD_PART_BYTES": "3000"}  # many parts out of a small file


def tricky_csv(path, rows, seed, crlf_every=7, tsv=False):
    """Edges with notes that hold newlines, quotes and delimiters, CRLF
    lines, duplicate keys and bad rows (wrong column count, bad number)."""
    rnd = random.Random(seed)
    sep = "\t" if tsv else ","
    out = [sep.join(["follower_id", "followee_id", "weight", "note"]) + "\n"]
    for i in range(rows):
        a, b = "u%d" % rnd.randrange(300), "u%d" % rnd.randrange(300)
        w = str(rnd.randrange(1000))
        if i % 97 == 5:
            w = "not-a-number"
        if tsv:
            note = "plain %d \"q\" %s" % (i, "x" * rnd.randrange(40))
        else:
            kind = i % 5
            if kind == 0:
                note = '"line one\nline two, with a comma\nand ""quotes"""'
            elif kind == 1:
                note = '"%s"' % ("long " * rnd.randrange(1, 200))
            elif kind == 2:
                note = 'un"quoted'
            else:
                note = "n%d" % i
        fields = [a, b, w, note]
        if i % 131 == 9:
            fields = fields[:2]  # a row with columns missing
        end = "\r\n" if i % crlf_every == 3 else "\n"
        out.append(sep.join(fields) + end)
    with open(path, "w", newline="") as f:
        f.write("".join(out))


class ParallelReadTest(EdgeloadTestCase):

    MAP = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
           "--attr", "weight=weight:N", "--attr", "note=note"]

    def dry(self, inp, threads, work, extra=()):
        rej = os.path.join(work, "rejects-%d.jsonl" % threads)
        proc = self.run_edgeload("load", "--dry-run", "--table", "T", "--threads", threads,
                                 "--rejects", rej, "--progress", "none", *self.MAP, *extra,
                                 inp, env=PART)
        self.assertEqual(proc.returncode, 3, proc.stderr)  # bad rows: exit 3
        with open(rej, "rb") as f:
            return proc.stdout, f.read()

    def assert_same_as_one_thread(self, inp, work, extra=()):
        items1, rej1 = self.dry(inp, 1, work, extra)
        self.assertGreater(len(items1.splitlines()), 1000)
        self.assertGreater(len(rej1.splitlines()), 10)
        for threads in (2, 3):
            items, rej = self.dry(inp, threads, work, extra)
            self.assertEqual(items, items1, "items differ with --threads %d" % threads)
            self.assertEqual(rej, rej1, "rejects differ with --threads %d" % threads)

    def test_csv_threads_give_the_same_items_and_rejects(self):
        work = self.tmpdir()
        inp = os.path.join(work, "edges.csv")
        tricky_csv(inp, 4000, seed=1)
        self.assertGreater(os.path.getsize(inp), 20 * int(PART["EDGELOAD_PART_BYTES"]))
        self.assert_same_as_one_thread(inp, work)
        # the rejects name the line the row starts on: count it here
        with open(inp, newline="") as f:
            text = f.read()
        for r in read_jsonl(os.path.join(work, "rejects-2.jsonl")):
            self.assertEqual(text.count("\n", 0, r["offset"]) + 1, r["line"], r)

    def test_tsv_and_compressed_input(self):
        work = self.tmpdir()
        tsv = os.path.join(work, "edges.tsv")
        tricky_csv(tsv, 3000, seed=2, tsv=True)
        self.assert_same_as_one_thread(tsv, work)
        csv = os.path.join(work, "edges.csv")
        tricky_csv(csv, 3000, seed=3)
        if subprocess.run(["zstd", "-q", "-k", csv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("no zstd command")
        self.assert_same_as_one_thread(csv + ".zst", work)

    def test_output_parts_are_identical(self):
        work = self.tmpdir()
        inp = os.path.join(work, "edges.csv")
        tricky_csv(inp, 4000, seed=4)
        parts = {}
        for threads in (1, 2):
            out = os.path.join(work, "out%d" % threads)
            proc = self.run_edgeload("load", "--output", out, "--table", "T", "--threads",
                                     threads, "--rejects", os.path.join(work, "r.jsonl"),
                                     "--progress", "none", *self.MAP, inp, env=PART)
            self.assertEqual(proc.returncode, 3, proc.stderr)
            files = sorted(glob.glob(os.path.join(out, "**", "*.json.zst"), recursive=True))
            self.assertTrue(files, os.listdir(out))
            parts[threads] = []
            for p in files:
                with open(p, "rb") as f:
                    parts[threads].append(f.read())
        self.assertEqual(parts[1], parts[2])

    def test_sigkill_then_resume_with_parts(self):
        rnd = random.Random(77)
        killed = 0
        runs = 4
        for run in range(runs):
            with self.subTest(run=run):
                work = self.tmpdir()
                inp = os.path.join(work, "edges.csv")
                expected, bad = make_input(inp, seed=500 + run)
                table = self.unique_table("pread")
                self.create_table_boto(table)
                args = ["load", "--endpoint-url", self.endpoint_args()[1], "--region",
                        self.endpoint_args()[3], "--table", table, "--pk",
                        "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}", "--attr",
                        "weight=weight:N", "--checkpoint", os.path.join(work, "ck.json"),
                        "--checkpoint-interval", "0.2", "--rejects",
                        os.path.join(work, "rejects.jsonl"), "--concurrency", "4",
                        "--threads", "2", "--progress", "none", inp]
                env = dict(os.environ, **PART)
                proc = subprocess.Popen([self.bin] + args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env=env)
                time.sleep(rnd.uniform(0.3, 1.5))
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                if proc.returncode == -signal.SIGKILL:
                    killed += 1
                done = self.run_edgeload(*args, "--resume", env=PART)
                self.assertEqual(done.returncode, 3, done.stderr)
                items = self.scan_all(table, ConsistentRead=True)
                got = {(i["PK"]["S"], i["SK"]["S"]): i for i in items}
                self.assertEqual(len(items), len(got))
                self.assertEqual(got, expected)
                rejects = read_jsonl(os.path.join(work, "rejects.jsonl"))
                self.assertEqual(sorted(r["line"] for r in rejects), bad)
                self.delete_table(table)
        self.assertGreater(killed, 0, "no run was interrupted: the kills test nothing")


if __name__ == "__main__":
    main()
