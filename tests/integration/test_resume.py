"""Checkpoint and resume (issue 6): a load killed with SIGKILL at a
random moment and resumed with --resume ends with exactly the table an
uninterrupted run makes, and every bad row in the rejects file exactly once.
SIGINT stops with exit 130 and a checkpoint that resumes the same way.
"""

import os
import random
import signal
import subprocess
import time

from edgeload_test import EdgeloadTestCase, N, S, main, read_jsonl

RUNS = int(os.environ.get("EDGELOAD_KILL_RUNS", "20"))
ROWS = 6000


def make_input(path, seed):
    """Edges with duplicate keys (the later row wins) and bad rows (rejects).

    Returns (expected items by key, expected reject line numbers)."""
    rnd = random.Random(seed)
    expected, bad_lines = {}, []
    lines = ["follower_id,followee_id,weight"]
    for i in range(ROWS):
        line_no = len(lines) + 1
        a, b = "u%d" % rnd.randrange(400), "u%d" % rnd.randrange(400)
        if i % 250 == 17:
            lines.append("%s,%s,not-a-number" % (a, b))
            bad_lines.append(line_no)
            continue
        w = rnd.randrange(1000)
        lines.append("%s,%s,%d" % (a, b, w))
        key = ("ACTOR#" + a, "TARGET#" + b)
        expected[key] = {"PK": S(key[0]), "SK": S(key[1]), "GSI1PK": S(key[1]),
                         "GSI1SK": S(key[0]), "weight": N(w)}
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return expected, bad_lines


class ResumeTest(EdgeloadTestCase):

    def load_args(self, table, work, inp):
        return ["load", "--endpoint-url", self.endpoint_args()[1], "--region",
                self.endpoint_args()[3], "--table", table, "--pk", "ACTOR#{follower_id}",
                "--sk", "TARGET#{followee_id}", "--attr", "weight=weight:N",
                "--checkpoint", os.path.join(work, "ck.json"), "--checkpoint-interval", "0.2",
                "--rejects", os.path.join(work, "rejects.jsonl"), "--concurrency", "4",
                "--progress", "none", inp]

    def check(self, table, work, expected, bad_lines):
        items = self.scan_all(table, ConsistentRead=True)
        got = {(i["PK"]["S"], i["SK"]["S"]): i for i in items}
        self.assertEqual(len(items), len(got))
        self.assertEqual(set(got), set(expected), "item keys differ")
        for key, item in expected.items():
            self.assertEqual(got[key], item, key)
        rejects = read_jsonl(os.path.join(work, "rejects.jsonl"))
        self.assertEqual(sorted(r["line"] for r in rejects), bad_lines)
        for r in rejects:
            self.assertIn("weight", r["reason"])

    def uninterrupted_seconds(self):
        """How long a whole load takes here, so the kills land inside it
        whether the machine is idle or busy."""
        work = self.tmpdir()
        inp = os.path.join(work, "edges.csv")
        make_input(inp, seed=1000)
        table = self.unique_table("calib")
        self.create_table_boto(table)
        t0 = time.monotonic()
        proc = self.run_edgeload(*self.load_args(table, work, inp))
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.delete_table(table)
        return time.monotonic() - t0

    def test_sigkill_at_random_moments_then_resume(self):
        rnd = random.Random(1234)
        window = max(0.2, 0.9 * self.uninterrupted_seconds())
        killed = 0
        for run in range(RUNS):
            with self.subTest(run=run):
                work = self.tmpdir()
                inp = os.path.join(work, "edges.csv")
                expected, bad = make_input(inp, seed=run)
                table = self.unique_table("resume")
                self.create_table_boto(table)
                args = [self.bin] + self.load_args(table, work, inp)
                proc = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
                time.sleep(rnd.uniform(0.05, window))
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                if proc.returncode == -signal.SIGKILL:
                    killed += 1
                # resume until it finishes (a resumed run may need a second go
                # only if it was killed too; here it is not)
                done = self.run_edgeload(*self.load_args(table, work, inp), "--resume")
                self.assertIn(done.returncode, (0, 3), done.stderr)
                self.assertEqual(done.returncode, 3, "bad rows must give exit 3")
                self.check(table, work, expected, bad)
                self.delete_table(table)
        # the kills must really have interrupted most runs, or this tests nothing
        self.assertGreater(killed, RUNS // 2)

    def test_sigint_exits_130_with_checkpoint_then_resumes(self):
        work = self.tmpdir()
        inp = os.path.join(work, "edges.csv")
        expected, bad = make_input(inp, seed=99)
        table = self.unique_table("sigint")
        self.create_table_boto(table)
        proc = subprocess.Popen([self.bin] + self.load_args(table, work, inp),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        if proc.returncode == 130:
            self.assertIn("checkpoint", err)
            self.assertTrue(os.path.exists(os.path.join(work, "ck.json")))
        elif proc.returncode == -signal.SIGINT:
            # signalled before edgeload set its handler: a slow start (a
            # sanitized build on a busy machine); --resume then starts over
            pass
        else:
            self.assertEqual(proc.returncode, 3, err)  # finished before the signal
        done = self.run_edgeload(*self.load_args(table, work, inp), "--resume")
        self.assertEqual(done.returncode, 3, done.stderr)
        self.check(table, work, expected, bad)

    def test_resume_refuses_another_job(self):
        work = self.tmpdir()
        inp = os.path.join(work, "edges.csv")
        make_input(inp, seed=7)
        table = self.unique_table("other")
        self.create_table_boto(table)
        first = self.run_edgeload(*self.load_args(table, work, inp))
        self.assertEqual(first.returncode, 3, first.stderr)
        args = self.load_args(table, work, inp)
        args[args.index("ACTOR#{follower_id}")] = "USER#{follower_id}"
        again = self.run_edgeload(*args, "--resume")
        self.assertEqual(again.returncode, 2, again.stderr)
        self.assertIn("another job", again.stderr)


if __name__ == "__main__":
    main()
