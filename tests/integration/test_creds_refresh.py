#!/usr/bin/python3
"""Credentials that expire during a load are renewed, and a renewal that
keeps failing stops the load cleanly.

A stand-in STS (tests/tools/awsstub.py) issues web identity credentials
that live 20 seconds, a fresh set at every call, and a checking proxy in
front of DynamoDB Local refuses, and records, every request signed with a
key STS did not issue or after that key expired, or sent with another
set's session token. A load paced by --max-wcu to last about a minute
must then:

  - end with exit 0 and the table exact (every row, checked with boto3);
  - have had no request refused by the proxy (none signed with expired
    keys: each set was replaced 7 s into its 20 s life, half of the 15 s
    it may sign in, as edgeload renews short-lived credentials);
  - have used several sets one after another, with no pause in the stream
    of requests when a set was swapped.

Then STS starts refusing after the first set (AccessDenied): the load stops
with exit 1 once that set expires, with one line naming the source, its
expiry and STS's answer, and keeps its checkpoint; with STS answering
again, --resume completes the table exactly.
"""
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import awsstub  # noqa: E402
import edgeload_test as et  # noqa: E402

ROLE = "arn:aws:iam::123456789012:role/loader"
TOKEN = "eyJhbGciOiJSUzI1NiJ9.RefreshTestWebToken.sig"


class Refresh(et.EdgeloadTestCase):

    def setUp(self):
        self.dir = self.tmpdir()
        self.issuer = awsstub.Issuer(lifetime=20, stable=False)
        self.sts, self.sts_url = awsstub.serve(awsstub.Sts, issuer=self.issuer,
                                               web_token=TOKEN)
        self.addCleanup(awsstub.stop, self.sts)
        host, port = et.ENDPOINT.split("//")[1].rstrip("/").split(":")
        self.check, self.check_url = awsstub.serve(awsstub.KeyCheck, issuer=self.issuer,
                                                   upstream=(host, int(port)), bad=[])
        self.addCleanup(awsstub.stop, self.check)
        token_file = self.write_file(self.dir, "token", TOKEN)
        self.env = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
                    "AWS_WEB_IDENTITY_TOKEN_FILE": token_file, "AWS_ROLE_ARN": ROLE,
                    "AWS_ENDPOINT_URL_STS": self.sts_url}

    def rows(self, n):
        return self.write_file(self.dir, "e.csv", "src,dst\n" + "".join(
            "u%d,v%d\n" % (i, i % 97) for i in range(n)))

    def load(self, table, csv, *extra, timeout=300):
        return self.run_edgeload(
            "load", "--endpoint-url", self.check_url, "--region", et.REGION, "--table", table,
            "--pk", "A#{src}", "--sk", "B#{dst}", "--progress", "plain",
            "--progress-interval", "5", *extra, csv, env=self.env, timeout=timeout)

    def expected(self, n):
        return {("A#u%d" % i, "B#v%d" % (i % 97)) for i in range(n)}

    def table_keys(self, table):
        return {(i["PK"]["S"], i["SK"]["S"]) for i in self.scan_all(table)}

    def test_renewed_during_a_minute_long_load(self):
        n = 3000
        table = self.unique_table("refresh")
        self.create_table_boto(table)
        t0 = time.time()
        # 3000 items x (table + index) = 6000 WCU at 100/s: about a minute
        proc = self.load(table, self.rows(n), "--max-wcu", "100")
        took = time.time() - t0
        self.assertExit(proc, 0, "the load")
        self.assertEqual(self.table_keys(table), self.expected(n))
        self.assertEqual(self.check.bad, [], "requests signed with keys STS did not issue "
                         "or that had expired")
        with self.check.lock:
            calls = list(self.check.calls)
        keys = []
        for _, ak in calls:
            if not keys or keys[-1] != ak:
                keys.append(ak)
        self.assertEqual(len(keys), len(set(keys)), "a set came back after it was replaced")
        self.assertGreaterEqual(len(keys), int(took // 10) - 1,
                                "one set every 10 s of a %.0f s load" % took)
        self.assertGreaterEqual(took, 40, "the load was meant to last about a minute")
        gaps = [b[0] - a[0] for a, b in zip(calls, calls[1:])]
        self.assertLess(max(gaps), 3.0, "a pause in the requests (a renewal must not stall)")
        for c in self.sts.calls:
            self.assertEqual(c["action"], "AssumeRoleWithWebIdentity")

    def test_failed_renewal_stops_with_checkpoint(self):
        n = 1500
        table = self.unique_table("refresh")
        self.create_table_boto(table)
        self.issuer.lifetime = 12   # signs for 7 s (edgeload's 5 s margin), renewed at 3 s
        csv = self.rows(n)
        ck = os.path.join(self.dir, "ck.json")
        self.sts.fail = None
        orig = awsstub.Sts.do_POST

        def first_then_deny(handler):
            if self.sts.calls:   # every call after the first is refused
                self.sts.fail = (403, "AccessDenied", "Not authorized to perform "
                                 "sts:AssumeRoleWithWebIdentity")
            orig(handler)
        awsstub.Sts.do_POST = first_then_deny
        self.addCleanup(setattr, awsstub.Sts, "do_POST", orig)
        t0 = time.time()
        proc = self.load(table, csv, "--max-wcu", "100", "--checkpoint", ck)
        took = time.time() - t0
        self.assertExit(proc, 1, "the load whose credentials cannot be renewed")
        self.assertLess(took, 30)
        self.assertGreaterEqual(len(self.sts.calls), 2, "renewal was retried")
        line = [ln for ln in proc.stderr.splitlines() if "expired at" in ln]
        self.assertEqual(len(line), 1, proc.stderr)
        for part in ("STS AssumeRoleWithWebIdentity", ROLE, "could not be renewed",
                     "AccessDenied"):
            self.assertIn(part, line[0])
        self.assertTrue(os.path.exists(ck), "the checkpoint is kept")
        # once the set has expired nothing is sent: neither signed with the
        # expired keys nor unsigned
        self.assertEqual(self.check.bad, [], "requests signed with expired keys, or unsigned")
        self.assertLess(len(self.table_keys(table)), n)
        # STS answers again: resume completes the table
        awsstub.Sts.do_POST = orig
        self.sts.fail = None
        self.issuer.lifetime = 3600
        proc = self.load(table, csv, "--checkpoint", ck, "--resume")
        self.assertExit(proc, 0, "the resumed load")
        self.assertEqual(self.table_keys(table), self.expected(n))
        for s in self.issuer.secrets() + self.issuer.tokens():
            self.assertNotIn(s[:16], proc.stderr + proc.stdout)


if __name__ == "__main__":
    et.main()
