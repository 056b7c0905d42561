#!/usr/bin/python3
"""edgeload over HTTPS, the only scheme real DynamoDB and S3 speak.

A CA made by the test (openssl) signs a certificate for 127.0.0.1, and
stunnel (Debian's stunnel4; scripts/test.sh installs it) terminates TLS
with it in front of DynamoDB Local and of an s3rver of the test's own
(tests/tools/tlsfront.py). Then:

  1. a load over HTTPS with AWS_CA_BUNDLE naming that CA ends exact
     (checked with boto3 on the plain endpoint), and reuses its
     connections: stunnel's log counts the TLS handshakes, which must be
     about one per request in flight, not one per request;
  2. the same CA given as ca_bundle in the config file works;
  3. without the CA the load fails at once (no retries) with one line that
     names the host and both ways out, AWS_CA_BUNDLE and --no-verify-ssl;
  4. --no-verify-ssl warns and works;
  5. an s3:// input over HTTPS with the CA loads exactly; without it, the
     same one-line refusal.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import edgeload_test as et  # noqa: E402
import tlsfront  # noqa: E402
from test_s3 import S3_KEY, s3rver_bin, wait_http  # noqa: E402

import boto3  # noqa: E402
import botocore.config  # noqa: E402

ROWS = 2000
CONCURRENCY = 4


class HttpsTest(et.EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        et.require_stunnel(tlsfront)
        cls.work = tempfile.mkdtemp(prefix="edgeload-https-")
        cls.ca = tlsfront.make_ca(os.path.join(cls.work, "ca"))
        backends = {"ddb": et.endpoint_host_port()}
        cls.s3rver = None
        binp = s3rver_bin()
        if os.path.exists(binp):
            port = tlsfront.free_port()
            cls.s3dir = os.path.join(cls.work, "s3")
            os.makedirs(cls.s3dir)
            cls.s3rver = subprocess.Popen(
                ["node", binp, "-d", cls.s3dir, "-a", "127.0.0.1", "-p", str(port), "--silent",
                 "--no-vhost-buckets"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_http("http://127.0.0.1:%d/" % port, cls.s3rver)
            cls.s3_plain = "http://127.0.0.1:%d" % port
            backends["s3"] = ("127.0.0.1", port)
        elif os.environ.get("EDGELOAD_REQUIRE_S3") or et.must_not_skip():
            raise RuntimeError("s3rver not installed: " + binp)
        cls.tls = tlsfront.Stunnel(cls.ca, backends).__enter__()

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "tls", None):
            cls.tls.__exit__(None, None, None)
        if getattr(cls, "s3rver", None):
            cls.s3rver.terminate()
            cls.s3rver.wait(10)
        shutil.rmtree(getattr(cls, "work", ""), True)
        super().tearDownClass()

    def setUp(self):
        self.dir = self.tmpdir()
        self.csv = self.write_file(self.dir, "e.csv", "src,dst\n" + "".join(
            "u%d,v%d\n" % (i, i % 89) for i in range(ROWS)))
        self.tls.reset_counts()

    def expected(self):
        return {("A#u%d" % i, "B#v%d" % (i % 89)) for i in range(ROWS)}

    def keys(self, table):
        return {(i["PK"]["S"], i["SK"]["S"]) for i in self.scan_all(table)}

    def load_https(self, table, *extra, env=None, inputs=None, endpoint=None):
        return self.run_edgeload(
            "load", "--endpoint-url", endpoint or self.tls.url("ddb"), "--region", et.REGION,
            "--table", table, "--pk", "A#{src}", "--sk", "B#{dst}",
            "--concurrency", str(CONCURRENCY), *extra, *(inputs or [self.csv]),
            env=env, timeout=300)

    def one_line(self, proc, *parts):
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        for p in parts:
            self.assertIn(p, lines[0])
        return lines[0]

    def test_load_exact_with_ca_bundle_and_connections_reused(self):
        table = self.unique_table("tls")
        self.create_table_boto(table)
        proc = self.load_https(table, env={"AWS_CA_BUNDLE": self.ca["ca"]})
        self.assertExit(proc, 0, "the load over HTTPS")
        self.assertEqual(self.keys(table), self.expected())
        handshakes = self.tls.handshakes("ddb")
        requests = ROWS // 25
        print("\nTLS handshakes for %d BatchWriteItem requests at --concurrency %d: %d"
              % (requests, CONCURRENCY, handshakes), file=sys.stderr)
        # the connections in flight, plus the control plane's own one
        self.assertLessEqual(handshakes, CONCURRENCY + 2)

    def test_ca_bundle_in_config_file(self):
        table = self.unique_table("tls")
        self.create_table_boto(table)
        cfg = self.write_file(self.dir, "config", "[default]\nca_bundle = %s\n" % self.ca["ca"])
        proc = self.load_https(table, env={"AWS_CONFIG_FILE": cfg, "AWS_CA_BUNDLE": ""})
        self.assertExit(proc, 0, "the load with ca_bundle")
        self.assertEqual(self.keys(table), self.expected())

    def test_unknown_ca_fails_at_once(self):
        t0 = time.time()
        proc = self.load_https("T", env={"AWS_CA_BUNDLE": ""})
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(proc.returncode, (1, 2))
        self.one_line(proc, "127.0.0.1:%d" % self.tls.ports["ddb"], "certificate",
                      "AWS_CA_BUNDLE", "--no-verify-ssl")
        self.assertLess(time.time() - t0, 5)
        self.assertLessEqual(self.tls.handshakes("ddb"), 1, "a certificate is not retried")

    def test_no_verify_ssl_warns_and_works(self):
        table = self.unique_table("tls")
        self.create_table_boto(table)
        proc = self.load_https(table, "--no-verify-ssl", env={"AWS_CA_BUNDLE": ""})
        self.assertExit(proc, 0, "the load with --no-verify-ssl")
        self.assertIn("warning: --no-verify-ssl", proc.stderr)
        self.assertEqual(self.keys(table), self.expected())

    def test_s3_input_over_https(self):
        if not self.s3rver:
            self.skipTest("s3rver not installed")
        s3 = boto3.client("s3", endpoint_url=self.s3_plain, region_name=et.REGION,
                          aws_access_key_id=S3_KEY, aws_secret_access_key=S3_KEY,
                          config=botocore.config.Config(s3={"addressing_style": "path"}))
        s3.create_bucket(Bucket="tls")
        with open(self.csv, "rb") as f:
            s3.put_object(Bucket="tls", Key="in/e.csv", Body=f.read())
        table = self.unique_table("tls")
        self.create_table_boto(table)
        env = {"AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_KEY,
               "AWS_ENDPOINT_URL_S3": self.tls.url("s3"), "AWS_CA_BUNDLE": self.ca["ca"]}
        proc = self.load_https(table, env=env, inputs=["s3://tls/in/e.csv"])
        self.assertExit(proc, 0, "the load from s3:// over HTTPS")
        self.assertEqual(self.keys(table), self.expected())
        self.assertGreaterEqual(self.tls.handshakes("s3"), 1)
        env["AWS_CA_BUNDLE"] = ""  # DynamoDB over plain HTTP here: S3's refusal is the one
        proc = self.load_https(table, env=env, inputs=["s3://tls/in/e.csv"],
                               endpoint=et.ENDPOINT)
        self.assertNotEqual(proc.returncode, 0)
        self.one_line(proc, "s3://tls/in/e.csv", "certificate", "AWS_CA_BUNDLE",
                      "--no-verify-ssl")


if __name__ == "__main__":
    et.main()
