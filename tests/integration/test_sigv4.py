#!/usr/bin/python3
"""SigV4: the requests edgeload sends are signed exactly as botocore signs them.

A capture server on 127.0.0.1 (ephemeral port) records the raw request and
answers with a ResourceNotFoundException body. `$EDGELOAD_BIN create-table`
is pointed at it with keys in the environment (once without, once with a
session token). For the FIRST captured request the test

  1. checks the DynamoDB headers are there (Content-Type, X-Amz-Target,
     X-Amz-Date, the token header when a token is set);
  2. checks edgeload signs the same headers a real botocore DynamoDB client
     signs (learned by sending one boto3 request to the same server);
  3. recomputes the Authorization header with botocore.auth.SigV4Auth over
     the captured method, path, headers and body, at the captured
     X-Amz-Date, and asserts it is byte-identical to edgeload's.

The secret key holds '/', '+' and ':' so a credentials split on ':' would
show as a wrong signature. Needs no DynamoDB Local.

The load path is checked the same way: `$EDGELOAD_BIN load` of a small CSV
(DescribeTable answered with a table, BatchWriteItem with no unprocessed
items) sends its BatchWriteItems from pooled requests driven by the multi
interface; every captured request's Authorization must be botocore's, with
and without a session token.
"""
import datetime
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest
from unittest import mock

import botocore.auth
import botocore.credentials
import botocore.session
from botocore.awsrequest import AWSRequest
from botocore.config import Config

REGION = "eu-west-1"
ACCESS_KEY = "AKIDEXAMPLE0EDGELOAD"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY:EXAMPLE/KEY"
TOKEN = ("IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+abc/def="
         "FwoGZXIvYXdzEBYaDH+edgeload+session+token/with/slashes" + "Zm9v" * 200 + "==")
# (STS session tokens run to a thousand characters and more.)
NOT_FOUND = json.dumps({
    "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
    "message": "Requested resource not found",
}).encode()


TABLE = json.dumps({"Table": {
    "TableName": "T", "TableStatus": "ACTIVE",
    "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                  {"AttributeName": "SK", "KeyType": "RANGE"}],
    "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"}
                             for n in ("PK", "SK", "GSI1PK", "GSI1SK")],
    "GlobalSecondaryIndexes": [{
        "IndexName": "GSI1", "IndexStatus": "ACTIVE",
        "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                      {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}],
    "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}}}).encode()
WRITTEN = b'{"UnprocessedItems":{}}'


class Capture(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        self.server.captured.append({
            "method": self.command,
            "path": self.path,
            "headers": list(self.headers.items()),
            "body": body,
        })
        target = self.headers.get("X-Amz-Target", "")
        status, answer = 400, NOT_FOUND
        if self.server.answer_loads and target.endswith(".DescribeTable"):
            status, answer = 200, TABLE
        elif self.server.answer_loads and target.endswith(".BatchWriteItem"):
            status, answer = 200, WRITTEN
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, fmt, *args):
        pass


def header(req, name):
    """The captured value of a header (case-insensitive), None if absent."""
    values = [v for k, v in req["headers"] if k.lower() == name.lower()]
    if len(values) > 1:
        raise AssertionError(f"header {name} sent {len(values)} times")
    return values[0] if values else None


def parse_authorization(value):
    """'AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...'."""
    algo, _, rest = value.partition(" ")
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    return algo, fields


def botocore_authorization(req, port, signed_names, token):
    """botocore's Authorization for the captured request at its X-Amz-Date."""
    amz_date = header(req, "X-Amz-Date")
    fixed = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")

    class FixedClock(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return fixed

    # botocore itself sets X-Amz-Date, X-Amz-Security-Token and Authorization;
    # every other signed header comes from the captured request as sent.
    own = {"x-amz-date", "x-amz-security-token", "authorization"}
    headers = {}
    for name in signed_names:
        if name in own:
            continue
        value = header(req, name)
        if value is None:
            raise AssertionError(f"botocore signs '{name}' but edgeload did not send it")
        headers[name] = value
    aws_req = AWSRequest(method=req["method"], url=f"http://127.0.0.1:{port}{req['path']}",
                         data=req["body"], headers=headers)
    creds = botocore.credentials.Credentials(ACCESS_KEY, SECRET_KEY, token)
    with mock.patch.object(botocore.auth.datetime, "datetime", FixedClock):
        botocore.auth.SigV4Auth(creds, "dynamodb", REGION).add_auth(aws_req)
    return aws_req.headers["Authorization"]


class SigV4Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("EDGELOAD_BIN")
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise unittest.SkipTest("EDGELOAD_BIN is not set to an executable")

    def setUp(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
        self.server.captured = []
        self.server.answer_loads = False
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.home = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.home.cleanup()

    def run_edgeload(self, token):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home.name,
               "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
               "AWS_MAX_ATTEMPTS": "1"}
        if token:
            env["AWS_SESSION_TOKEN"] = token
        proc = subprocess.run(
            [self.bin, "create-table", "--table", "T", "--endpoint-url",
             f"http://127.0.0.1:{self.port}", "--region", REGION],
            env=env, capture_output=True, timeout=120)
        output = proc.stdout + proc.stderr
        for secret in (SECRET_KEY, TOKEN):
            self.assertNotIn(secret.encode(), output, "a secret appeared in the output")
        if not self.server.captured:
            if b"create-table" not in output and proc.returncode == 0:
                self.skipTest(f"{self.bin} does not implement create-table yet")
            self.fail("edgeload sent no request; output:\n" + output.decode(errors="replace"))
        return self.server.captured[0]

    def boto3_signed_headers(self, token):
        """The header names a real botocore DynamoDB client signs."""
        session = botocore.session.get_session()
        client = session.create_client(
            "dynamodb", region_name=REGION, endpoint_url=f"http://127.0.0.1:{self.port}",
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
            aws_session_token=token,
            config=Config(retries={"max_attempts": 1, "mode": "standard"}))
        try:
            client.create_table(
                TableName="Tbl", BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}])
        except client.exceptions.ResourceNotFoundException:
            pass
        finally:
            client.close()
        req = self.server.captured.pop()
        self.server.captured.clear()
        _, fields = parse_authorization(header(req, "Authorization"))
        names = fields["SignedHeaders"].split(";")
        # Sanity check of the method: the recomputation reproduces boto3's own.
        self.assertEqual(botocore_authorization(req, self.port, names, token),
                         header(req, "Authorization"))
        return names

    def check(self, token):
        reference = self.boto3_signed_headers(token)
        req = self.run_edgeload(token)

        self.assertEqual(req["method"], "POST")
        self.assertEqual(req["path"], "/")
        self.assertEqual(header(req, "Content-Type"), "application/x-amz-json-1.0")
        target = header(req, "X-Amz-Target")
        self.assertIsNotNone(target)
        self.assertTrue(target.startswith("DynamoDB_20120810."), target)
        json.loads(req["body"])  # the body is JSON
        self.assertEqual(header(req, "X-Amz-Security-Token"), token)

        auth = header(req, "Authorization")
        self.assertIsNotNone(auth, "request is not signed")
        self.assertNotIn(SECRET_KEY, auth)
        algo, fields = parse_authorization(auth)
        self.assertEqual(algo, "AWS4-HMAC-SHA256")
        amz_date = header(req, "X-Amz-Date")
        self.assertEqual(fields["Credential"],
                         f"{ACCESS_KEY}/{amz_date[:8]}/{REGION}/dynamodb/aws4_request")
        signed = fields["SignedHeaders"].split(";")
        self.assertEqual(signed, sorted(reference),
                         "edgeload signs other headers than botocore")
        if token:
            self.assertIn("x-amz-security-token", signed)

        expected = botocore_authorization(req, self.port, signed, token)
        self.assertEqual(auth, expected)

    def test_signature_without_session_token(self):
        self.check(None)

    def test_signature_with_session_token(self):
        self.check(TOKEN)

    def check_load(self, token):
        reference = self.boto3_signed_headers(token)
        self.server.answer_loads = True
        rows = 600  # 24 requests: pooled requests and handles are reused
        with open(os.path.join(self.home.name, "edges.csv"), "w") as f:
            f.write("a,b\n")
            for i in range(rows):
                f.write(f"u{i % 37},v{i}\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home.name,
               "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
               "AWS_MAX_ATTEMPTS": "1"}
        if token:
            env["AWS_SESSION_TOKEN"] = token
        proc = subprocess.run(
            [self.bin, "load", "--table", "T", "--pk", "A#{a}", "--sk", "B#{b}",
             "--endpoint-url", f"http://127.0.0.1:{self.port}", "--region", REGION,
             "--concurrency", "4", "--progress", "none",
             os.path.join(self.home.name, "edges.csv")],
            env=env, capture_output=True, timeout=120)
        output = proc.stdout + proc.stderr
        for secret in (SECRET_KEY, TOKEN):
            self.assertNotIn(secret.encode(), output, "a secret appeared in the output")
        self.assertEqual(proc.returncode, 0, output.decode(errors="replace"))
        writes = [r for r in self.server.captured
                  if header(r, "X-Amz-Target") == "DynamoDB_20120810.BatchWriteItem"]
        self.assertEqual(sum(len(json.loads(r["body"])["RequestItems"]["T"]) for r in writes),
                         rows)
        for req in writes:
            auth = header(req, "Authorization")
            _, fields = parse_authorization(auth)
            signed = fields["SignedHeaders"].split(";")
            self.assertEqual(signed, sorted(reference))
            self.assertEqual(header(req, "X-Amz-Security-Token"), token)
            self.assertEqual(auth, botocore_authorization(req, self.port, signed, token))

    def test_load_requests_without_session_token(self):
        self.check_load(None)

    def test_load_requests_with_session_token(self):
        self.check_load(TOKEN)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
