"""What a user reads (issue 8): plain progress lines (format and interval),
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
    r"wcu=\d+ wcu_per_s=\d+ throttled=\d+ retries=\d+ rejected=\d+( done=[0-9.]+% eta=\S+)?$")


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
