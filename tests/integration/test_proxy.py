#!/usr/bin/python3
"""edgeload through an HTTP proxy, as corporate networks require.

A proxy of the test's own (tests/tools/tlsfront.py ConnectProxy: CONNECT
tunnels, absolute-URI forwarding, Basic proxy credentials) stands between
edgeload and DynamoDB Local, which is reached over HTTPS through stunnel
with a CA made by the test, or over plain HTTP. Then:

  1. HTTPS_PROXY with credentials in its URL: the load tunnels through the
     proxy (CONNECT to the TLS endpoint) and ends exact;
  2. HTTP_PROXY, in capitals as the AWS CLI reads it, for an http://
     endpoint: the requests go through the proxy and the load ends exact;
  3. NO_PROXY naming the endpoint's host: the proxy is not used;
  4. a wrong proxy password, and a proxy that is down: the load fails with
     one line, and the proxy password appears nowhere in what edgeload
     prints.
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import edgeload_test as et  # noqa: E402
import tlsfront  # noqa: E402

ROWS = 600
PASSWORD = "PrOxYpAsSwOrD7xLEAKCHECK"


class ProxyTest(et.EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        et.require_stunnel(tlsfront)
        cls.work = tempfile.mkdtemp(prefix="edgeload-proxy-")
        cls.ca = tlsfront.make_ca(os.path.join(cls.work, "ca"))
        cls.tls = tlsfront.Stunnel(cls.ca, {"ddb": et.endpoint_host_port()}).__enter__()

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "tls", None):
            cls.tls.__exit__(None, None, None)
        shutil.rmtree(getattr(cls, "work", ""), True)
        super().tearDownClass()

    def setUp(self):
        self.dir = self.tmpdir()
        self.csv = self.write_file(self.dir, "e.csv", "src,dst\n" + "".join(
            "u%d,v%d\n" % (i, i % 31) for i in range(ROWS)))
        self.proxy = tlsfront.ConnectProxy("loader", PASSWORD)
        self.addCleanup(self.proxy.close)
        # none of the machine's own proxy settings
        self.env = {k: "" for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                    "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY")}
        self.env["AWS_CA_BUNDLE"] = self.ca["ca"]
        self.env["AWS_MAX_ATTEMPTS"] = "1"

    def load(self, table, endpoint, **env):
        e = dict(self.env)
        e.update(env)
        proc = self.run_edgeload("load", "--endpoint-url", endpoint, "--region", et.REGION,
                                 "--table", table, "--pk", "A#{src}", "--sk", "B#{dst}",
                                 self.csv, env=e, timeout=300)
        self.assertNotIn(PASSWORD, proc.stdout + proc.stderr)
        self.assertNotIn(PASSWORD[:12], proc.stdout + proc.stderr)
        return proc

    def exact(self, table):
        got = {(i["PK"]["S"], i["SK"]["S"]) for i in self.scan_all(table)}
        self.assertEqual(got, {("A#u%d" % i, "B#v%d" % (i % 31)) for i in range(ROWS)})

    def test_https_proxy_with_credentials(self):
        table = self.unique_table("proxy")
        self.create_table_boto(table)
        proc = self.load(table, self.tls.url("ddb"), HTTPS_PROXY=self.proxy.url())
        self.assertExit(proc, 0, "the load through HTTPS_PROXY")
        self.exact(table)
        self.assertIn("127.0.0.1:%d" % self.tls.ports["ddb"], self.proxy.connects)
        self.assertEqual(self.proxy.refused, 0)

    def test_http_proxy_in_capitals(self):
        table = self.unique_table("proxy")
        self.create_table_boto(table)
        proc = self.load(table, et.ENDPOINT, HTTP_PROXY=self.proxy.url())
        self.assertExit(proc, 0, "the load through HTTP_PROXY")
        self.exact(table)
        self.assertTrue(self.proxy.forwards, "nothing went through the proxy")
        self.assertTrue(all(f.startswith(et.ENDPOINT.rstrip("/")) for f in self.proxy.forwards))

    def test_no_proxy(self):
        table = self.unique_table("proxy")
        self.create_table_boto(table)
        proc = self.load(table, self.tls.url("ddb"), HTTPS_PROXY=self.proxy.url(),
                         NO_PROXY="localhost,127.0.0.1")
        self.assertExit(proc, 0, "the load with NO_PROXY")
        self.exact(table)
        self.assertEqual(self.proxy.connects + self.proxy.forwards, [])

    def test_proxy_failures_never_print_the_password(self):
        bad = self.proxy.url().replace(PASSWORD, PASSWORD + "x")
        proc = self.load("T", self.tls.url("ddb"), HTTPS_PROXY=bad)
        self.assertNotEqual(proc.returncode, 0)
        self.assertGreater(self.proxy.refused, 0)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        self.assertIn("proxy", proc.stderr)
        down = "http://loader:%s@127.0.0.1:9" % PASSWORD
        proc = self.load("T", self.tls.url("ddb"), HTTPS_PROXY=down)
        self.assertNotEqual(proc.returncode, 0)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1, proc.stderr)
        proc = self.load("T", et.ENDPOINT, HTTP_PROXY=down)
        self.assertNotEqual(proc.returncode, 0)


if __name__ == "__main__":
    et.main()
