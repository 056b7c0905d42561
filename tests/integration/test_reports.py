"""What a user reads (issue 8): plain progress lines (format and interval),
the same lines, summary and --stats-json figures for `load --incremental`,
--quiet, --stats-json figures, and the one-line errors for the failures a
newcomer meets: no credentials, a host that does not resolve, TLS against a
plain HTTP endpoint, nothing listening, a key schema that does not fit.
"""

import json
import os
import re

import boto3

from edgeload_test import ENDPOINT, REGION, EdgeloadTestCase, main

PROGRESS = re.compile(
    r"^edgeload: progress elapsed=(?P<elapsed>[0-9.]+) rows=\d+ items=\d+ items_per_s=\d+ "
    r"wcu=\d+ wcu_per_s=\d+ throttled=\d+ retries=\d+ rejected=\d+ duplicates=\d+ "
    r"read_ahead=\d+( done=[0-9.]+% eta=\S+)?$")


INCR_PROGRESS = re.compile(
    r"^edgeload: progress elapsed=(?P<elapsed>[0-9.]+) rows=(?P<rows>\d+) items=(?P<items>\d+) "
    r"items_per_s=\d+ wcu=\d+ wcu_per_s=\d+ throttled=\d+ retries=\d+ rejected=\d+ "
    r"transactions=(?P<txns>\d+) duplicates=(?P<dups>\d+) read_ahead=\d+"
    r"( done=[0-9.]+% eta=\S+)?$")


class ReportsTest(EdgeloadTestCase):

    def edges(self, n):
        d = self.tmpdir()
        path = os.path.join(d, "e.csv")
        with open(path, "w") as f:
            f.write("a,b\n")
            for i in range(n):
                f.write("u%d,t%d\n" % (i % 101, i))
        return d, path

    def test_plain_progress_lines_and_stats_json(self):
        d, path = self.edges(3000)
        table = self.unique_table("rep")
        self.create_table_boto(table)
        stats = os.path.join(d, "stats.json")
        proc = self.load("--table", table, "--pk", "A#{a}", "--sk", "B#{b}", "--max-wcu", "1000",
                         "--progress", "plain", "--progress-interval", "1",
                         "--stats-json", stats, path)
        self.assertExit(proc, 0)
        lines = [l for l in proc.stderr.splitlines() if "progress" in l]
        self.assertGreaterEqual(len(lines), 3, proc.stderr)
        times = []
        for line in lines:
            m = PROGRESS.match(line)
            self.assertIsNotNone(m, line)
            times.append(float(m.group("elapsed")))
        gaps = [b - a for a, b in zip(times, times[1:])]
        for g in gaps:  # one line a second, not more often
            self.assertGreaterEqual(g, 0.9, times)
        self.assertRegex(proc.stderr.splitlines()[-1],
                         r"^edgeload: 3000 rows read, 3000 items written, ")
        with open(stats) as f:
            st = json.load(f)
        for key in ("rows_read", "items_written", "duplicates", "rejected", "retries",
                    "throttled", "wcu_consumed", "elapsed_s"):
            self.assertIn(key, st)
        self.assertEqual(st["rows_read"], 3000)
        self.assertEqual(st["items_written"], 3000)
        self.assertEqual(st["rejected"], 0)
        self.assertEqual(st["wcu_consumed"], 6000)  # table + index, from ConsumedCapacity

    def test_incremental_plain_progress_summary_and_stats_json(self):
        d = self.tmpdir()
        base = os.path.join(d, "base.csv")
        with open(base, "w") as f:
            f.write("a,b\n" + "".join("u%d,old%d\n" % (i % 7, i) for i in range(100)))
        delta = os.path.join(d, "delta.csv")
        with open(delta, "w") as f:  # 400 new edges, then the 100 of the base again
            f.write("a,b\n" + "".join("u%d,new%d\n" % (i % 13, i) for i in range(400)) +
                    "".join("u%d,old%d\n" % (i % 7, i) for i in range(100)))
        table = self.unique_table("repi")
        self.create_table_boto(table)
        keys = ["--table", table, "--pk", "A#{a}", "--sk", "B#{b}"]
        self.assertExit(self.load(*keys, "--quiet", base), 0, "base load")
        stats = os.path.join(d, "stats.json")
        proc = self.load(*keys, "--incremental", "--max-wcu", "800", "--progress", "plain",
                         "--progress-interval", "1", "--stats-json", stats, delta)
        self.assertExit(proc, 0, "incremental load")
        lines = [l for l in proc.stderr.splitlines() if "progress" in l]
        self.assertGreaterEqual(len(lines), 2, proc.stderr)
        times, rows = [], []
        for line in lines:
            m = INCR_PROGRESS.match(line)
            self.assertIsNotNone(m, line)
            times.append(float(m.group("elapsed")))
            rows.append(int(m.group("rows")))
            self.assertLessEqual(int(m.group("items")), 400)
        for a, b in zip(times, times[1:]):  # one line a second, not more often
            self.assertGreaterEqual(b - a, 0.9, times)
        self.assertEqual(rows, sorted(rows))
        tail = proc.stderr.splitlines()[-2:]
        self.assertRegex(tail[0], r"^edgeload: 500 rows read, 400 items written, 100 "
                                  r"duplicates, 0 rejected, \d+ retries, \d+ throttled in ")
        with open(stats) as f:
            st = json.load(f)
        self.assertRegex(tail[1], r"^edgeload: incremental: 400 added, 0 deleted, 100 "
                                  r"duplicates \(item existed\), 0 already absent, 0 "
                                  r"replayed; %d transactions, " % st["transactions"])
        for key in ("rows_read", "items_written", "duplicates", "rejected", "retries",
                    "throttled", "wcu_consumed", "elapsed_s", "transactions", "added"):
            self.assertIn(key, st)
        self.assertEqual((st["rows_read"], st["items_written"], st["duplicates"],
                          st["rejected"], st["added"]), (500, 400, 100, 0, 400))
        self.assertGreater(st["transactions"], 0)
        self.assertGreater(st["wcu_consumed"], 0)

    def test_quiet_prints_nothing(self):
        d, path = self.edges(50)
        table = self.unique_table("quiet")
        self.create_table_boto(table)
        proc = self.load("--table", table, "--pk", "A#{a}", "--sk", "B#{b}", "--quiet", path)
        self.assertExit(proc, 0)
        self.assertEqual(proc.stderr, "")
        self.assertEqual(proc.stdout, "")

    def one_line_error(self, proc, code, *parts):
        self.assertExit(proc, code)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, "one clear line, no stack of messages:\n" + proc.stderr)
        self.assertTrue(lines[0].startswith("edgeload: "), lines[0])
        for p in parts:
            self.assertIn(p, lines[0])

    def test_errors_a_newcomer_can_act_on(self):
        d, path = self.edges(5)
        base = ["load", "--table", "Graph", "--pk", "A#{a}", "--sk", "B#{b}", path]
        env_nocreds = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
                       "HOME": d}
        proc = self.run_edgeload(*base, "--endpoint-url", ENDPOINT,
                                 env={k: v for k, v in env_nocreds.items()})
        # an empty variable is no credential: say where edgeload looked
        self.one_line_error(proc, 2, "no credentials", "AWS_ACCESS_KEY_ID",
                            os.environ["AWS_SHARED_CREDENTIALS_FILE"],
                            os.environ["AWS_CONFIG_FILE"])
        proc = self.run_edgeload(*base, "--endpoint-url", "http://no-such-host.invalid:8000")
        self.one_line_error(proc, 1, "no-such-host.invalid", "resolve")
        host, port = ENDPOINT.rsplit(":", 1)
        proc = self.run_edgeload(*base, "--endpoint-url",
                                 "https://127.0.0.1:" + port.strip("/"))
        self.one_line_error(proc, 1, "TLS")
        proc = self.run_edgeload(*base, "--endpoint-url", "http://127.0.0.1:9")
        self.one_line_error(proc, 1, "127.0.0.1:9", "nothing answers")
        # a table with other keys: both schemas, and the command that fits
        table = self.unique_table("keys")
        self.ddb.create_table(
            TableName=table, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
        proc = self.load("--table", table, "--pk", "A#{a}", "--sk", "B#{b}", path)
        self.assertExit(proc, 2)
        self.assertIn("(id S, no sort key)", proc.stderr)
        self.assertIn("(PK S, SK S)", proc.stderr)
        self.assertIn("edgeload create-table --table " + table, proc.stderr)
        # no secret in any of it
        for text in (proc.stdout, proc.stderr):
            self.assertNotIn(os.environ["AWS_SECRET_ACCESS_KEY"] + "\n", text)


if __name__ == "__main__":
    main()
