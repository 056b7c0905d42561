#!/usr/bin/python3
"""The options every command shares (issue 16), as a user meets them:

  - every command's --help lists the shared options it takes and none it
    refuses; every shared option a command does not take is refused with
    exit 2 and one line that names the option and the reason;
  - verify --progress plain: phase lines with done= and total= in the
    phase's own units (total = the distinct expected items), done never
    past total, percentages never above 100;
  - verify --max-rcu N: the read units DynamoDB reports as consumed stay
    within the budget (N per second, 10 % slack, plus the half-second
    bucket a run starts with); the run is never asserted to be fast;
  - verify --stats-json: every field the summary prints, with its value;
  - plan --stats-json: rows read, rejected, distinct targets and hot
    targets, equal to figures computed here from the input and to plan's
    own report.
  - plan --progress: phase=counting lines, rows and bytes done never going
    back; create-table --progress/--quiet/--stats-json while it waits for
    ACTIVE (a stand-in service keeps the table CREATING).

counters --checkpoint/--resume/--progress are tested, killed and resumed
through the fault proxy, in test_faults_commands.
"""

import collections
import csv
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402
from test_faults_commands import (EDGE_FLAGS, gen_graph, progress_lines,  # noqa: E402
                                  summary_figures, write_csv)

COMMANDS = ("load", "plan", "verify", "counters", "create-table")

# Shared options each command must list in --help (and so take), and some
# it must not: the ones that mean nothing for it.
MAPPING_FLAGS = ("--mapping", "--table", "--pk", "--sk", "--index-pk", "--index-sk",
                 "--no-index", "--index-name", "--attr", "--const", "--all-columns",
                 "--source-table", "--counter")
INPUT_FLAGS = ("--format", "--delimiter", "--null", "--escape", "--columns")
AWS_FLAGS = ("--region", "--profile", "--no-verify-ssl")
REPORT_FLAGS = ("--stats-json", "--progress", "--progress-interval", "--quiet")
TAKES = {
    "load": MAPPING_FLAGS + INPUT_FLAGS + AWS_FLAGS + REPORT_FLAGS + (
        "--endpoint-url", "--hot-threshold", "--max-shards", "--plan", "--dry-run", "--output",
        "--concurrency", "--threads", "--max-wcu", "--max-retry-time", "--checkpoint",
        "--checkpoint-interval", "--resume", "--rejects", "--max-rejects", "--split"),
    "counters": MAPPING_FLAGS + INPUT_FLAGS + AWS_FLAGS + REPORT_FLAGS + (
        "--endpoint-url", "--concurrency", "--threads", "--max-wcu", "--max-retry-time",
        "--checkpoint", "--checkpoint-interval", "--resume", "--rejects", "--max-rejects"),
    "verify": MAPPING_FLAGS + INPUT_FLAGS + AWS_FLAGS + REPORT_FLAGS + (
        "--endpoint-url", "--hot-threshold", "--max-shards", "--plan", "--concurrency",
        "--max-rcu", "--max-retry-time", "--split"),
    "plan": MAPPING_FLAGS + INPUT_FLAGS + AWS_FLAGS + REPORT_FLAGS + (
        "--hot-threshold", "--max-shards",
        "--endpoint-url"),  # to ask the table's write limits for the estimate
    "create-table": ("--mapping", "--table", "--index-name", "--no-index", "--endpoint-url")
                    + AWS_FLAGS + REPORT_FLAGS,
}
NOT_TAKEN = {
    "load": ("--max-rcu",),
    "counters": ("--max-rcu", "--dry-run", "--output", "--split", "--plan", "--hot-threshold",
                 "--max-shards"),
    "verify": ("--max-wcu", "--dry-run", "--output", "--checkpoint", "--checkpoint-interval",
               "--resume", "--rejects", "--max-rejects", "--threads"),
    "plan": ("--plan", "--dry-run", "--output", "--concurrency", "--threads",
             "--max-wcu", "--max-rcu", "--max-retry-time", "--checkpoint", "--resume",
             "--rejects", "--split"),
    "create-table": ("--pk", "--sk", "--attr", "--counter", "--format", "--dry-run",
                     "--concurrency", "--max-wcu", "--checkpoint", "--split"),
}

OPTION_LINE = re.compile(r"^  (--[a-z0-9][a-z0-9-]*)(?: (\S+))?")


class HelpAndRefusals(et.EdgeloadTestCase):

    def help_options(self, command):
        """{option: takes an argument} of the option lines of COMMAND --help."""
        p = self.run_edgeload(command, "--help")
        self.assertExit(p, 0, command + " --help")
        self.assertEqual(p.stderr, "")
        out = {}
        for line in p.stdout.splitlines():
            m = OPTION_LINE.match(line)
            if m:
                out[m.group(1)] = m.group(2) is not None
        return out

    def shared_options(self):
        """Every shared option, from the helps of the commands that take them all."""
        out = {}
        for command in ("load", "verify"):
            out.update(self.help_options(command))
        for own in ("--help", "--part-items", "--incremental", "--op-column", "--no-group",
                    "--sample", "--seed", "--reverse", "--report", "--show", "--no-counters",
                    "--counters-only", "--allow-rejected"):
            out.pop(own, None)
        return out

    def refusal(self, command, option, takes_arg):
        """Runs COMMAND OPTION [1]; returns (exit status, stderr lines)."""
        args = [command, option] + (["1"] if takes_arg else [])
        p = self.run_edgeload(*args, timeout=60)
        self.assertEqual(p.stdout, "", " ".join(args))
        return p.returncode, p.stderr.splitlines()

    def test_help_lists_the_shared_options_taken(self):
        for command in COMMANDS:
            with self.subTest(command=command):
                listed = self.help_options(command)
                for opt in TAKES[command]:
                    self.assertIn(opt, listed, "%s --help does not list %s" % (command, opt))
                for opt in NOT_TAKEN[command]:
                    self.assertNotIn(opt, listed, "%s --help lists %s" % (command, opt))

    def test_named_refusals(self):
        cases = [
            (("verify", "--dry-run"), "verify does not take --dry-run: ", "writes nothing"),
            (("plan", "--threads", "2"), "plan does not take --threads: ", "one thread"),
            (("counters", "--split", "1/2"), "counters does not take --split: ", "whole input"),
            (("create-table", "--pk", "X"), "create-table does not take --pk: ", "names"),
            (("verify", "--max-wcu", "5"), "verify does not take --max-wcu: ", "--max-rcu"),
            (("counters", "--max-rcu", "5"), "counters does not take --max-rcu: ", "--max-wcu"),
        ]
        for args, head, why in cases:
            with self.subTest(args=args):
                # refused wherever it stands among otherwise good options
                p = self.run_edgeload(args[0], "--table", "T", *args[1:], "x.csv", timeout=60)
                self.assertExit(p, 2, " ".join(args))
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith("edgeload: " + head), lines[0])
                self.assertIn(why, lines[0])
                self.assertEqual(p.stdout, "")

    def test_every_refusal_is_one_line_with_its_reason(self):
        shared = self.shared_options()
        self.assertGreater(len(shared), 40, sorted(shared))
        for command in COMMANDS:
            taken = self.help_options(command)
            for opt, takes_arg in sorted(shared.items()):
                if opt in taken:
                    continue
                with self.subTest(command=command, option=opt):
                    rc, lines = self.refusal(command, opt, takes_arg)
                    self.assertEqual(rc, 2, lines)
                    self.assertEqual(len(lines), 1, lines)
                    head = "edgeload: %s does not take %s: " % (command, opt)
                    self.assertTrue(lines[0].startswith(head), lines[0])
                    self.assertGreater(len(lines[0]) - len(head), 10, "no reason: " + lines[0])


# ---------------------------------------------------------------- verify

class VerifyOptions(et.EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        import tempfile
        import shutil
        cls.work = tempfile.mkdtemp(prefix="edgeload-it-")
        cls.addClassCleanup(shutil.rmtree, cls.work, True)
        cls.rows = gen_graph(random.Random(505), 300, 2500)
        cls.inp = write_csv(os.path.join(cls.work, "edges.csv"), ["follower_id", "followee_id"],
                            cls.rows)
        cls.table = "vopt-%d-%s" % (os.getpid(), random.Random().getrandbits(32))
        cls.addClassCleanup(cls._drop, cls.table)
        cls.ddb.create_table(
            TableName=cls.table, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"}
                                  for n in ("PK", "SK", "GSI1PK", "GSI1SK")],
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                              {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}])
        cls.ddb.get_waiter("table_exists").wait(TableName=cls.table,
                                                WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        p = cls.run_edgeload(cls, "load", "--endpoint-url", et.ENDPOINT, "--region", et.REGION,
                             "--table", cls.table, *EDGE_FLAGS, "--progress", "none", cls.inp)
        if p.returncode != 0:
            raise AssertionError("load for the verify tests failed: " + p.stderr)

    @classmethod
    def _drop(cls, name):
        try:
            cls.ddb.delete_table(TableName=name)
        except cls.ddb.exceptions.ResourceNotFoundException:
            pass

    def verify(self, *extra):
        work = self.tmpdir()
        st = os.path.join(work, "st.json")
        p = self.run_edgeload("verify", *self.endpoint_args(), "--table", self.table,
                              *EDGE_FLAGS, "--report", os.path.join(work, "r.jsonl"),
                              "--stats-json", st, *extra, self.inp)
        self.assertExit(p, 0, "verify " + " ".join(extra))
        with open(st) as f:
            return p, json.load(f)

    def test_progress_plain_and_max_rcu(self):
        budget = 700
        p, s = self.verify("--progress", "plain", "--progress-interval", "0.1",
                           "--max-rcu", str(budget))
        n = len(set(self.rows))
        self.assertEqual((s["expected"], s["present"]), (n, n))
        lines = progress_lines(p.stderr, "checking-items")
        self.assertTrue(lines, "no checking-items line:\n" + p.stderr)
        last = 0
        for f in lines:
            self.assertEqual(int(f["total"]), n, f)
            done = int(f["done"])
            self.assertLessEqual(done, n, f)
            self.assertGreaterEqual(done, last, "done went back: %s" % f)
            last = done
            self.assertLessEqual(float(f["phase_done"].rstrip("%")), 100.0, f)
            self.assertIn("rcu", f, "verify's lines count read units: %s" % f)
        for f in progress_lines(p.stderr):
            if "phase_done" in f:
                self.assertLessEqual(float(f["phase_done"].rstrip("%")), 100.0, f)
        # every item is one consistent read of less than 4 KB: one unit
        # each, so the budget held back a run of more than two seconds. The
        # bound: N a second with 10 % slack over the whole run, the
        # half-second bucket it starts with, and one request of 100 keys
        # (charged as it goes out)
        self.assertGreaterEqual(s["rcu_consumed"], n * 0.9, s)
        self.assertLessEqual(s["rcu_consumed"],
                             budget * 1.1 * s["elapsed_s"] + budget * 0.5 + 100,
                             "verify read faster than --max-rcu %d: %s" % (budget, s))

    def test_stats_json_equals_summary(self):
        p, s = self.verify("--reverse", "5", "--progress", "none")
        fig = summary_figures(p.stdout)
        self.assertGreaterEqual(len(fig), 15, p.stdout)
        for name, value in fig.items():
            if isinstance(value, float):
                self.assertAlmostEqual(s[name], value, delta=0.051 if name == "rcu_consumed"
                                       else 0.006, msg=name)
            else:
                self.assertEqual(s[name], value, name)
        self.assertEqual(s["rows_read"], len(self.rows))
        self.assertEqual(s["duplicates"], len(self.rows) - len(set(self.rows)))
        self.assertEqual(s["reverse_keys"], 5)
        self.assertGreater(s["requests"], 0)


# ---------------------------------------------------------------- counters

class CounterPhaseProgress(et.EdgeloadTestCase):
    """The counter phase's progress lines carry on from the run's figures:
    a load's lines during writing-counters showed elapsed, rows and items
    starting again from 0 (so items_per_s wrapped around to 2^64 and
    wcu_per_s went negative)."""

    def assertLinesGoOn(self, stderr, rows, items):
        lines = progress_lines(stderr)
        phases = [f.get("phase") for f in lines]
        self.assertIn("writing-counters", phases, stderr)
        prev = None
        for f in lines:
            for rate in ("items_per_s", "wcu_per_s"):
                self.assertGreaterEqual(float(f[rate]), 0, f)
            if f.get("phase") == "writing-counters":
                self.assertEqual((int(f["rows"]), int(f["items"])), (rows, items), f)
                self.assertLessEqual(int(f["done"]), int(f["total"]), f)
                self.assertLessEqual(float(f["phase_done"].rstrip("%")), 100.0, f)
            if prev:
                for name in ("elapsed", "rows", "items", "wcu"):
                    self.assertGreaterEqual(float(f[name]), float(prev[name]),
                                            "%s went back:\n%s\n%s" % (name, prev, f))
            prev = f

    def test_load_and_counters_progress_through_the_counter_phase(self):
        work = self.tmpdir()
        # every row a counter item of its own on each side: ~2 counter
        # writes an item, so the counter phase lasts as long as the items'
        n = 900
        rows = [("a%d" % i, "b%d" % i) for i in range(n)]
        inp = write_csv(os.path.join(work, "edges.csv"), ["follower_id", "followee_id"], rows)
        table = self.unique_table("cprog")
        self.create_table_boto(table)
        flags = ["--table", table, "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
                 "--no-index", "--counter", "USER#{followee_id},PROFILE,followerCount",
                 "--counter", "USER#{follower_id},PROFILE,followingCount",
                 "--max-wcu", "900", "--progress", "plain", "--progress-interval", "0.1"]
        p = self.run_edgeload("load", *self.endpoint_args(), *flags, inp)
        self.assertExit(p, 0, "load with counters")
        self.assertLinesGoOn(p.stderr, n, n)
        p = self.run_edgeload("counters", *self.endpoint_args(), *flags, inp)
        self.assertExit(p, 0, "counters")
        self.assertLinesGoOn(p.stderr, n, 0)


# ---------------------------------------------------------------- plan

class PlanStatsJson(et.EdgeloadTestCase):

    def test_plan_stats_json(self):
        rnd = random.Random(606)
        work = self.tmpdir()
        rows = []
        for star, fans in (("star0", 160), ("star1", 120), ("near", 99)):
            rows += [("f%d" % rnd.randrange(500), star) for _ in range(fans)]
        rows += [("u%d" % rnd.randrange(300), "t%d" % rnd.randrange(200)) for _ in range(900)]
        rows += [("u1", "")] * 4 + [("", "t1")] * 3   # empty keys: rejected
        rnd.shuffle(rows)
        inp = write_csv(os.path.join(work, "follows.csv"), ["follower_id", "followee_id"], rows)
        mapping = {"table": "T", "index": {"name": "GSI1", "pk": "GSI1PK", "sk": "GSI1SK"},
                   "sources": [{"name": "follows", "input": inp, "pk": "ACTOR#{follower_id}",
                                "sk": "TARGET#{followee_id}",
                                "hot": {"threshold": 100, "max_shards": 8}}]}
        mp = self.write_file(work, "mapping.json", json.dumps(mapping))
        st = os.path.join(work, "st.json")
        p = self.run_edgeload("plan", "--mapping", mp, "--stats-json", st)
        self.assertExit(p, 3, "plan (rows with empty keys are rejects)")
        with open(st) as f:
            s = json.load(f)
        kept = [r for r in rows if r[0] and r[1]]
        fan_in = collections.Counter(b for _, b in kept)   # every row counts
        want = {"rows_read": len(rows), "rejected": len(rows) - len(kept),
                "targets": len(fan_in), "hot_targets": sum(1 for v in fan_in.values() if v >= 100)}
        self.assertEqual({k: s[k] for k in want}, want)
        self.assertEqual(want["hot_targets"], 2)
        # and the report says the same
        self.assertIn("rows:              %d counted, %d rejected" % (len(kept), want["rejected"]),
                      p.stdout)
        self.assertIn("distinct targets:  %d " % want["targets"], p.stdout)
        self.assertIn("hot targets:       2 at fan-in >= 100", p.stdout)

    def test_plan_progress(self):
        """plan reads inputs, so it shows its progress as the others do: a
        `phase=counting` line about once a second with the rows read so
        far, never going back, the input bytes done never past 100 %."""
        work = self.tmpdir()
        n = 1500000  # a few seconds of counting
        inp = os.path.join(work, "follows.csv")
        with open(inp, "w") as f:
            f.write("follower_id,followee_id\n")
            f.writelines("u%d,t%d\n" % (i, i % 5000) for i in range(n))
        mapping = {"table": "T", "index": {"name": "GSI1", "pk": "GSI1PK", "sk": "GSI1SK"},
                   "sources": [{"name": "follows", "input": inp, "pk": "ACTOR#{follower_id}",
                                "sk": "TARGET#{followee_id}"}]}
        mp = self.write_file(work, "mapping.json", json.dumps(mapping))
        p = self.run_edgeload("plan", "--mapping", mp, "--progress", "plain",
                              "--progress-interval", "0.1")
        self.assertExit(p, 0, "plan --progress plain")
        lines = [ln for ln in p.stderr.splitlines() if " progress " in ln]
        self.assertGreater(len(lines), 0, p.stderr)
        rows = [int(re.search(r" rows=(\d+)", ln).group(1)) for ln in lines]
        done = [float(re.search(r" done=([\d.]+)%", ln).group(1)) for ln in lines]
        for ln in lines:
            self.assertIn(" phase=counting ", ln)
        self.assertEqual(rows, sorted(rows))
        self.assertLessEqual(rows[-1], n)
        self.assertEqual(done, sorted(done))
        self.assertLessEqual(done[-1], 100.0)
        # --quiet: neither progress nor report
        q = self.run_edgeload("plan", "--mapping", mp, "--progress", "plain", "--quiet")
        self.assertExit(q, 0, "plan --quiet")
        self.assertEqual((q.stdout, q.stderr), ("", ""))


# ---------------------------------------------------------------- create-table

class SlowTableService:
    """A DynamoDB stand-in whose new table stays CREATING (then its index)
    for a few DescribeTable calls: the wait create-table reports on, which
    DynamoDB Local (ACTIVE at once) never shows. Answers are the service's
    JSON shapes; requests are not checked for signatures."""

    def __init__(self, creating_polls=2, index_polls=1):
        import http.server
        import threading
        self.calls = []
        svc = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                op = self.headers.get("X-Amz-Target", "").split(".")[-1]
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                svc.calls.append(op)
                polls = svc.calls.count("DescribeTable")
                if op == "CreateTable":
                    body = {"TableDescription": {"TableName": "T", "TableStatus": "CREATING"}}
                else:
                    table = "CREATING" if polls <= creating_polls else "ACTIVE"
                    index = "CREATING" if polls <= creating_polls + index_polls else "ACTIVE"
                    body = {"Table": {
                        "TableName": "T", "TableStatus": table,
                        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                      {"AttributeName": "SK", "KeyType": "RANGE"}],
                        "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
                        "GlobalSecondaryIndexes": [{
                            "IndexName": "GSI1", "IndexStatus": index,
                            "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                                          {"AttributeName": "GSI1SK", "KeyType": "RANGE"}]}]}}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class CreateTableReports(et.EdgeloadTestCase):
    """create-table calls DynamoDB, so it takes --progress, --quiet and
    --stats-json as the other commands do: progress lines while it waits
    for ACTIVE, its figures as JSON, and no summary line with --quiet."""

    def setUp(self):
        import tempfile
        import shutil
        self.work = tempfile.mkdtemp(prefix="edgeload-it-")
        self.addCleanup(shutil.rmtree, self.work, True)
        self.svc = SlowTableService()
        self.addCleanup(self.svc.close)

    def create(self, *extra):
        return self.run_edgeload("create-table", "--table", "T", "--endpoint-url", self.svc.url,
                                 "--region", et.REGION, *extra)

    def test_progress_and_stats_while_waiting(self):
        st = os.path.join(self.work, "st.json")
        p = self.create("--progress", "plain", "--progress-interval", "0.1",
                        "--stats-json", st)
        self.assertExit(p, 0, "create-table")
        lines = [line for line in p.stderr.splitlines() if " progress " in line]
        states = [(re.search(r"table_status=(\S+)", line).group(1),
                   re.search(r"index_status=(\S+)", line).group(1)) for line in lines]
        # 2 polls see the table CREATING, 1 more the index; the 4th is ACTIVE
        self.assertEqual(states, [("CREATING", "CREATING")] * 2 + [("ACTIVE", "CREATING")])
        waited = [float(re.search(r"elapsed=([0-9.]+)", line).group(1)) for line in lines]
        self.assertEqual(waited, sorted(waited))
        self.assertIn("created table T", p.stderr)
        with open(st) as f:
            s = json.load(f)
        self.assertEqual(self.svc.calls, ["CreateTable"] + ["DescribeTable"] * 4)
        self.assertEqual((s["table"], s["created"], s["requests"], s["retries"], s["polls"]),
                         ("T", 1, 5, 0, 4))
        self.assertGreaterEqual(s["elapsed_s"], s["wait_s"])

    def test_quiet_prints_nothing_on_success(self):
        p = self.create("--quiet", "--progress", "plain", "--progress-interval", "0.1")
        self.assertExit(p, 0, "create-table --quiet")
        self.assertEqual(p.stderr, "")

    def test_stats_json_of_a_refused_create(self):
        """The table exists: exit 2, the reason printed, created 0 in the figures."""
        st = os.path.join(self.work, "st.json")
        table = self.unique_table("ctrep")
        self.create_table_cli(table)
        p = self.run_edgeload("create-table", "--table", table, *self.endpoint_args(),
                              "--quiet", "--stats-json", st)
        self.assertExit(p, 2, "create-table of a table that exists")
        self.assertIn("already exists", p.stderr)
        with open(st) as f:
            s = json.load(f)
        self.assertEqual((s["created"], s["requests"], s["polls"]), (0, 1, 0))


if __name__ == "__main__":
    et.main()
