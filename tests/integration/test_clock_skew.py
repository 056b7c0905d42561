"""A machine whose clock is 10 minutes behind AWS's: edgeload runs under
faketime (Debian's libfaketime, preloaded: the binary is linked
dynamically) behind the fault proxy, which refuses, as AWS does, a request
whose X-Amz-Date is more than 5 minutes from its own clock
(--max-skew 300: InvalidSignatureException "Signature expired", the
proxy's time in the Date header). edgeload sets its signing clock by that
Date, signs the refused request again, sends it once more and signs every
later request by AWS's time: the load ends exact (checked with boto3), the
clock line is said once, and the proxy refused only the requests signed
before the correction.

  - every operation checked: the first refusal is DescribeTable's (the
    control plane), corrected before the first write;
  - BatchWriteItem only: the first window of writes is refused in the
    request driver, each request resent once.

The S3 and STS forms run in test_s3.py and test_creds.py (faketime_env
and require_faketime are edgeload_test.py's).
"""

import os
import sys

from edgeload_test import EdgeloadTestCase, faketime_env, main, require_faketime

# the suite's own fault proxy (tests/tools), which load_edges_through_proxy runs
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))

ROWS = 3000
LINE = "edgeload: this machine's clock is 10 min behind AWS's: signing with AWS's time"


class ClockSkewTest(EdgeloadTestCase):

    def load_behind(self, name, proxy_options):
        require_faketime(self)
        d = self.tmpdir()
        path = self.write_edges(d, (("u%d" % i, "t%d" % (i % 89)) for i in range(ROWS)))
        opts = {"max_skew": 300}
        opts.update(proxy_options)
        table, proc, stats, ps = self.load_edges_through_proxy(
            d, path, name, opts, env=faketime_env("-10m"))
        got = sorted((it["PK"]["S"], it["SK"]["S"]) for it in self.scan_all(table))
        self.assertEqual(got, sorted(("A#u%d" % i, "B#t%d" % (i % 89)) for i in range(ROWS)))
        self.assertEqual(stats["items_written"], ROWS)
        self.assertEqual(proc.stderr.count("clock is"), 1, proc.stderr)
        self.assertIn(LINE, proc.stderr)
        return stats, ps

    def test_control_plane_corrects_first(self):
        stats, ps = self.load_behind("skewcp", {})
        # DescribeTable's refusal set the clock: nothing else was refused
        self.assertEqual(ps["clock_refused"], 1, ps)
        self.assertEqual(ps["by_target"].get("DescribeTable"), 2, ps)

    def test_driver_corrects_the_first_window(self):
        stats, ps = self.load_behind("skewdrv", {"skew_targets": "BatchWriteItem"})
        refused = ps["clock_refused"]
        # the requests in flight when the first answer came back, each once
        self.assertGreaterEqual(refused, 1, ps)
        self.assertLessEqual(refused, 16, ps)
        self.assertEqual(ps["by_target"]["BatchWriteItem"], stats["requests"], (ps, stats))
        print("\nclock 10 min behind: %d of %d BatchWriteItem refused for the clock and sent "
              "again, %.1f s" % (refused, stats["requests"], stats["elapsed_s"]),
              file=sys.stderr)


if __name__ == "__main__":
    main()
