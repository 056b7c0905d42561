"""One process per checkpoint and per --output directory, against DynamoDB
Local: a second run on a checkpoint (or directory) another run holds stops
at once with exit 2 and one line naming the holder (pid, host, start time);
once the holder is killed with SIGKILL, a rerun with --resume takes the lock
(the kernel dropped it with its holder) and ends with the exact table.
"""

import os
import re
import signal
import subprocess
import time

from edgeload_test import EdgeloadTestCase, N, S, main

ROWS = 20000


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


class LockTest(EdgeloadTestCase):

    def make_input(self, d):
        lines = ["follower_id,followee_id,weight"]
        expected = {}
        for i in range(ROWS):
            a, b = "u%d" % (i % 997), "v%d" % i
            lines.append("%s,%s,%d" % (a, b, i))
            expected[("ACTOR#" + a, "TARGET#" + b)] = i
        return self.write_file(d, "in.csv", "\n".join(lines) + "\n"), expected

    def args(self, table, d, inp, *extra):
        return ["load"] + list(self.endpoint_args()) + [
            "--table", table, "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
            "--attr", "weight=weight:N", "--checkpoint", os.path.join(d, "ck.json"),
            "--checkpoint-interval", "0.2", "--rejects", os.path.join(d, "rej.jsonl"),
            "--concurrency", "1", "--progress", "none"] + list(extra) + [inp]

    def test_second_run_on_a_held_checkpoint(self):
        table = self.unique_table("lock")
        self.create_table_boto(table)
        d = self.tmpdir()
        inp, expected = self.make_input(d)
        first = subprocess.Popen([self.bin] + self.args(table, d, inp),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # the first run holds the lock from its start: wait until the
            # lock file names it
            lock = os.path.join(d, "ck.json.lock")
            deadline = time.time() + 30
            while time.time() < deadline:
                if ("pid %d " % first.pid) in read(lock):
                    break
                time.sleep(0.05)
            self.assertIsNone(first.poll(), "the first load ended too soon to be overlapped")
            second = self.run_edgeload(*self.args(table, d, inp, "--resume"))
            self.assertExit(second, 2, "a second run on a held checkpoint")
            lines = [l for l in second.stderr.splitlines() if l.strip()]
            self.assertEqual(len(lines), 1, second.stderr)
            self.assertIn("checkpoint %s is in use by edgeload pid %d on host "
                          % (os.path.join(d, "ck.json"), first.pid), lines[0])
            self.assertRegex(lines[0], r"since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
            # wait for a checkpoint past the start, then kill the holder
            ck = os.path.join(d, "ck.json")
            deadline = time.time() + 60
            while time.time() < deadline and first.poll() is None:
                if re.search(r'"offset":[1-9]', read(ck)):
                    break
                time.sleep(0.05)
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=30)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
            first.stdout.close()
            first.stderr.close()
        # the lock went with its holder: the rerun takes it and finishes
        rerun = self.run_edgeload(*self.args(table, d, inp, "--resume"))
        self.assertExit(rerun, 0, "the rerun after SIGKILL")
        items = self.scan_all(table, ConsistentRead=True)
        got = {(i["PK"]["S"], i["SK"]["S"]): int(i["weight"]["N"]) for i in items}
        self.assertEqual(len(items), len(got))
        self.assertEqual(got, expected)

    def test_second_run_into_a_held_output_directory(self):
        d = self.tmpdir()
        lines = ["a,b"] + ["%d,%d" % (i, i) for i in range(400000)]
        inp = self.write_file(d, "big.csv", "\n".join(lines) + "\n")
        out = os.path.join(d, "out")
        args = ["load", "--table", "T", "--pk", "A#{a}", "--sk", "B#{b}", "--quiet",
                "--output", out, inp]
        first = subprocess.Popen([self.bin] + args, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        try:
            lock = os.path.join(out, ".edgeload.lock")
            deadline = time.time() + 30
            while time.time() < deadline and first.poll() is None:
                if ("pid %d " % first.pid) in read(lock):
                    break
                time.sleep(0.01)
            if first.poll() is not None:
                self.skipTest("the first run ended before the second could overlap it")
            second = self.run_edgeload(*args)
            if first.poll() is None:
                self.assertExit(second, 2, "a second run into a held --output directory")
                self.assertIn("--output directory %s is in use by edgeload pid %d" %
                              (out, first.pid), second.stderr)
        finally:
            if first.poll() is None:
                first.wait(timeout=120)
            first.stdout.close()
            first.stderr.close()
        self.assertEqual(first.returncode, 0)
        self.assertTrue(os.path.exists(os.path.join(out, "manifest.json")))


if __name__ == "__main__":
    main()
