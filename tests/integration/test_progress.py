#!/usr/bin/python3
"""Progress follows the acknowledged position, not the bytes read.

The reader runs far ahead of the writes: against a slow endpoint (the fault
proxy delaying every BatchWriteItem) the whole input is read in a moment
while the items trickle out. Every plain progress line's percentage must
then be at most the share of the input whose rows are done (written,
merged as duplicates, or rejected) by that line's own figures, the rows
read ahead are shown apart, and the bar never says 100 % while rows are
unwritten. Rows are of one length, so a share of rows is a share of bytes.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import SOURCE_DIR, EdgeloadTestCase, main  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "tools"))
import faultproxy  # noqa: E402

LINE = re.compile(r"^edgeload: progress elapsed=(?P<elapsed>[0-9.]+) rows=(?P<rows>\d+) "
                  r"items=(?P<items>\d+) .* rejected=(?P<rejected>\d+) "
                  r"duplicates=(?P<dups>\d+) read_ahead=(?P<ahead>\d+) "
                  r"done=(?P<done>[0-9.]+)% eta=(?P<eta>\S+)$")
ROWS = 2500
HEADER = "a,b,w\n"


class ProgressFollowsAcks(EdgeloadTestCase):

    def test_percentage_at_most_rows_acknowledged(self):
        d = self.tmpdir()
        # fixed-width rows; every 50th key repeats the row before (a
        # duplicate), every 250th row is bad (a reject)
        lines = []
        for i in range(ROWS):
            k = i - 1 if i % 50 == 49 else i
            w = "xxxxx" if i % 250 == 17 else "%05d" % i
            lines.append("u%05d,t%05d,%s\n" % (k, k % 97, w))
        row_len = len(lines[0])
        self.assertTrue(all(len(x) == row_len for x in lines))
        csv = self.write_file(d, "e.csv", HEADER + "".join(lines))
        total = len(HEADER) + ROWS * row_len
        table = self.unique_table("prog")
        self.create_table_boto(table)
        sj = os.path.join(d, "s.json")
        with faultproxy.ProxyProcess(self.endpoint_args()[1], slow=1.0, slow_ms=150) as proxy:
            proc = self.run_edgeload(
                "load", "--endpoint-url", proxy.url, "--region", "us-east-1", "--table", table,
                "--pk", "A#{a}", "--sk", "B#{b}", "--attr", "w=w:N", "--concurrency", "2",
                "--progress", "plain", "--progress-interval", "1", "--stats-json", sj,
                "--rejects", os.path.join(d, "rej.jsonl"), csv)
        self.assertExit(proc, 3)
        seen = []
        for line in proc.stderr.splitlines():
            if "progress" not in line:
                continue
            m = LINE.match(line)
            self.assertIsNotNone(m, line)
            done_rows = int(m["items"]) + int(m["dups"]) + int(m["rejected"])
            done_bytes = len(HEADER) + done_rows * row_len
            pct = float(m["done"])
            # the percentage counts only bytes whose rows are done
            self.assertLessEqual(pct, 100.0 * done_bytes / total + 1e-9, line)
            # the rest of the rows read are read ahead, shown apart
            self.assertEqual(int(m["ahead"]), int(m["rows"]) - done_rows, line)
            if done_rows < ROWS:
                self.assertLess(pct, 100.0, line)
            seen.append((pct, int(m["rows"]), int(m["ahead"]), m["eta"]))
        self.assertGreaterEqual(len(seen), 3, proc.stderr)
        # the reader was ahead: all rows read while the percentage was low
        self.assertTrue(any(rows == ROWS and ahead > 0 and pct < 90
                            for pct, rows, ahead, _ in seen), seen)
        # and the percentage moved with the writes, with an ETA once it did
        pcts = [s[0] for s in seen]
        self.assertEqual(pcts, sorted(pcts))
        self.assertGreater(pcts[-1], pcts[0])
        self.assertTrue(any(eta != "?" for *_, eta in seen), seen)
        with open(sj) as f:
            st = json.load(f)
        self.assertEqual(st["rows_read"], ROWS)
        self.assertEqual(st["rows_read"], st["items_written"] + st["duplicates"] + st["rejected"])


if __name__ == "__main__":
    main()
