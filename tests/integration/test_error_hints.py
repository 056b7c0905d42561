#!/usr/bin/python3
"""Refusals a newcomer can act on (issue 8): an expired session token, a
wrong region, an unknown access key and a table missing from the region
used each give one clear line on standard error, naming where the
credentials or the region came from, and never a secret.

A tiny stdlib HTTP server on loopback plays DynamoDB: it answers each
operation (X-Amz-Target) with a fixed status and body, the exact JSON
shapes the service sends. No DynamoDB Local is needed.
"""

import http.server
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402

SECRET = "SeCrEtHiNtMaRkEr7q9x2k4w8z1"
TOKEN = "ToKeNhInTmArKeR5m3n8p1v6sessiontoken"
KEY_ID = "AKIAEDGELOADTEST7Q2Z"

with open(os.path.join(et.SOURCE_DIR, "tests", "fixtures", "ddb", "describe_table.json")) as f:
    DESCRIBE_OK = json.load(f)

EXPIRED = {"__type": "com.amazon.coral.service#ExpiredTokenException",
           "message": "The security token included in the request is expired"}
UNRECOGNIZED = {"__type": "com.amazon.coral.service#UnrecognizedClientException",
                "message": "The security token included in the request is invalid."}
WRONG_REGION = {"__type": "com.amazon.coral.service#InvalidSignatureException",
                "message": "Credential should be scoped to a valid region, not 'eu-west-3'. "}
NOT_FOUND = {"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
             "message": "Requested resource not found"}


class FakeDynamo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        op = self.headers.get("X-Amz-Target", "").rsplit(".", 1)[-1]
        status, obj = self.server.answers.get(op, (400, {
            "__type": "com.amazon.coral.validate#ValidationException",
            "message": "unexpected operation " + op}))
        et.send_answer(self, status, obj, [
            ("x-amzn-RequestId", "HINTTEST0000000000000000000000000000000000000000")])


class ErrorHints(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.bin = et.edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise unittest.SkipTest("edgeload binary not found (set EDGELOAD_BIN)")

    def setUp(self):
        self.dir = et.EdgeloadTestCase.tmpdir(self)
        self.csv = os.path.join(self.dir, "e.csv")
        with open(self.csv, "w") as f:
            f.write("src,dst\n" + "".join("u%d,v%d\n" % (i, i) for i in range(30)))

    def fake(self, answers):
        return et.serve(self, FakeDynamo, answers=answers)[1]

    def run_cmd(self, cmd, url, *extra, env=None, region_flag=True, code=None):
        full = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_SESSION_TOKEN": TOKEN, "AWS_ENDPOINT_URL_DYNAMODB": url,
                "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_MAX_ATTEMPTS": "1"}
        full.update(env or {})
        args = [cmd, "--table", "T", "--pk", "A#{src}", "--sk", "B#{dst}", "--quiet"]
        if region_flag:
            args += ["--region", "us-east-1"]
        proc = et.EdgeloadTestCase.run_edgeload(self, *args, *extra, self.csv, cwd=self.dir,
                                                env=full, timeout=120)
        for text in (proc.stdout, proc.stderr):
            for m in (SECRET, TOKEN, SECRET[:12], TOKEN[:12], KEY_ID):
                self.assertNotIn(m, text, "a secret leaked")
        if code is not None:
            self.assertEqual(proc.returncode, code, proc.stderr)
        return proc

    def one_line(self, proc):
        lines = proc.stderr.strip("\n").split("\n")
        self.assertEqual(len(lines), 1, "want exactly one line:\n" + proc.stderr)
        self.assertTrue(lines[0].startswith("edgeload: "), lines[0])
        return lines[0]

    # ---- expired session token -------------------------------------------

    def test_expired_token_at_describe_table(self):
        url = self.fake({"DescribeTable": (400, EXPIRED)})
        for cmd, code in (("load", 2), ("verify", 2), ("counters", 2)):
            extra = ["--counter", "U#{dst},P,n"] if cmd == "counters" else []
            line = self.one_line(self.run_cmd(cmd, url, *extra, code=code))
            self.assertIn("the AWS session token has expired (credentials from the "
                          "environment)", line)
            self.assertIn("aws sso login", line)
            self.assertIn("AWS_SESSION_TOKEN", line)
            self.assertIn("(DescribeTable ExpiredTokenException: The security token included "
                          "in the request is expired)", line)

    def test_expired_token_mid_load_from_a_credentials_file(self):
        # DescribeTable passes, the token expires before the writes
        url = self.fake({"DescribeTable": (200, DESCRIBE_OK),
                         "BatchWriteItem": (400, EXPIRED)})
        creds = os.path.join(self.dir, "credentials")
        with open(creds, "w") as f:
            f.write("[nightly]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                    "aws_session_token = %s\n" % (KEY_ID, SECRET, TOKEN))
        os.chmod(creds, 0o600)
        env = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
               "AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_PROFILE": "nightly"}
        proc = self.run_cmd("load", url, "--progress", "none", env=env, code=1)
        line = self.one_line(proc)
        self.assertIn("the AWS session token has expired (credentials from %s [nightly])"
                      % creds, line)
        self.assertIn("aws sso login --profile nightly", line)
        self.assertIn("(BatchWriteItem ExpiredTokenException", line)

    # ---- wrong region --------------------------------------------------------

    def test_wrong_region(self):
        url = self.fake({"DescribeTable": (400, WRONG_REGION)})
        proc = self.run_cmd("load", url, env={"AWS_REGION": "eu-west-3"}, region_flag=False,
                            code=2)
        line = self.one_line(proc)
        self.assertIn("wrong region: requests are signed for eu-west-3 (from AWS_REGION)", line)
        self.assertIn("--region", line)
        self.assertIn("Credential should be scoped to a valid region, not 'eu-west-3'", line)

    def test_missing_table_in_an_implicit_region(self):
        url = self.fake({"DescribeTable": (400, NOT_FOUND)})
        proc = self.run_cmd("verify", url, env={"AWS_DEFAULT_REGION": "eu-central-1"},
                            region_flag=False, code=2)
        line = self.one_line(proc)
        self.assertIn("table 'T' does not exist in eu-central-1 at %s (region eu-central-1 "
                      "from AWS_DEFAULT_REGION: if the table is in another region, give "
                      "--region)" % url, line)
        # said with --region, the region is no guess: no such advice
        proc = self.run_cmd("verify", url, code=2)
        line = self.one_line(proc)
        self.assertIn("table 'T' does not exist in us-east-1 at %s" % url, line)
        self.assertNotIn("give --region", line)
        # load adds the create-table command on a second line
        proc = self.run_cmd("load", url, env={"AWS_DEFAULT_REGION": "eu-central-1"},
                            region_flag=False, code=2)
        self.assertIn("from AWS_DEFAULT_REGION", proc.stderr)
        self.assertIn("edgeload create-table --table T", proc.stderr)

    # ---- unknown access key ------------------------------------------------

    def test_unrecognized_access_key(self):
        url = self.fake({"DescribeTable": (400, UNRECOGNIZED)})
        line = self.one_line(self.run_cmd("load", url, code=2))
        self.assertIn("AWS does not recognise the access key id ending in '%s' (credentials "
                      "from environment)" % KEY_ID[-4:], line)
        self.assertIn("aws sts get-caller-identity", line)
        self.assertIn("UnrecognizedClientException", line)


if __name__ == "__main__":
    unittest.main(verbosity=2)
