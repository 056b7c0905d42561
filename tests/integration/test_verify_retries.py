#!/usr/bin/python3
"""`edgeload verify` against a fake DynamoDB that misbehaves the way the real
one may: a throttling answer, a 500, and BatchGetItem answers that return
only part of the keys with the rest in UnprocessedKeys. Every key must still
be checked exactly once: the counts and the report are exact, the retries
and throttles are counted, and each request asks for at most 100 keys with
ConsistentRead. Needs no DynamoDB Local (a server on 127.0.0.1, ephemeral
port).
"""
import http.server
import json
import os
import subprocess
import tempfile
import threading
import unittest

SOURCE_DIR = os.environ.get("EDGELOAD_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("EDGELOAD_BIN", os.path.join(SOURCE_DIR, "build", "edgeload"))
TABLE = "Fake"
ROWS = 250


def key_of(k):
    return (k["PK"]["S"], k["SK"]["S"])


class FakeDynamo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        op = self.headers["X-Amz-Target"].split(".")[-1]
        srv = self.server
        if op == "DescribeTable":
            ks = [{"AttributeName": "PK", "KeyType": "HASH"},
                  {"AttributeName": "SK", "KeyType": "RANGE"}]
            ad = [{"AttributeName": n, "AttributeType": "S"} for n in ("PK", "SK")]
            return self.reply(200, {"Table": {"TableName": TABLE, "TableStatus": "ACTIVE",
                                              "KeySchema": ks, "AttributeDefinitions": ad}})
        if op != "BatchGetItem":
            return self.reply(400, {"__type": "com.amazon.coral.validate#ValidationException",
                                    "message": "unexpected " + op})
        with srv.lock:
            srv.calls += 1
            n = srv.calls
            req = body["RequestItems"][TABLE]
            srv.requests.append(req)
        if n == 1:
            return self.reply(400, {"__type": "com.amazonaws.dynamodb.v20120810#"
                                              "ProvisionedThroughputExceededException",
                                    "message": "slow down"})
        if n == 2:
            return self.reply(500, {"__type": "com.amazonaws.dynamodb.v20120810#"
                                              "InternalServerError",
                                    "message": "try again"})
        keys = req["Keys"]
        now, later = keys[:30], keys[30:]
        items = [srv.store[key_of(k)] for k in now if key_of(k) in srv.store]
        out = {"Responses": {TABLE: items}, "UnprocessedKeys": {}}
        if later:
            out["UnprocessedKeys"] = {TABLE: {"Keys": later, "ConsistentRead": True}}
        with srv.lock:
            for k in now:
                srv.served[key_of(k)] = srv.served.get(key_of(k), 0) + 1
        self.reply(200, out)


class VerifyRetriesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="edgeload-verify-retries-")
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeDynamo)
        self.server.lock = threading.Lock()
        self.server.calls = 0
        self.server.requests = []
        self.server.served = {}
        self.server.store = {}
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()

    def test_throttle_500_and_unprocessed_keys(self):
        path = os.path.join(self.tmp.name, "in.csv")
        with open(path, "w") as fh:
            fh.write("a,b,n\n")
            for i in range(ROWS):
                fh.write("a%d,b%d,%d\n" % (i, i % 17, i))
        for i in range(ROWS):
            pk, sk = "A#a%d" % i, "B#b%d" % (i % 17)
            self.server.store[(pk, sk)] = {
                "PK": {"S": pk}, "SK": {"S": sk}, "GSI1PK": {"S": sk}, "GSI1SK": {"S": pk},
                "n": {"N": "%d.0" % i}}
        for i in (3, 140, 249):
            del self.server.store[("A#a%d" % i, "B#b%d" % (i % 17))]
        self.server.store[("A#a77", "B#b%d" % (77 % 17))]["n"] = {"N": "-1"}
        env = dict(os.environ, AWS_ACCESS_KEY_ID="fake", AWS_SECRET_ACCESS_KEY="fake",
                   AWS_REGION="us-east-1")
        env.pop("AWS_PROFILE", None)
        p = subprocess.run([BIN, "verify", "--table", TABLE, "--pk", "A#{a}", "--sk", "B#{b}",
                            "--attr", "n=n:N", "--concurrency", "3", "--endpoint-url",
                            "http://127.0.0.1:%d" % self.server.server_address[1], path],
                           cwd=self.tmp.name, env=env, capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 4, p.stdout + p.stderr)
        self.assertIn("expected %d present %d missing 3 different 1" % (ROWS, ROWS - 3),
                      p.stdout)
        with open(os.path.join(self.tmp.name, "edgeload-verify.jsonl")) as fh:
            lines = [json.loads(l) for l in fh]
        self.assertEqual(sorted((l["kind"], l["key"]["PK"]) for l in lines),
                         [("different", "A#a77"), ("missing", "A#a140"), ("missing", "A#a249"),
                          ("missing", "A#a3")])
        diff = [l for l in lines if l["kind"] == "different"][0]
        self.assertEqual(diff["attributes"], {"n": {"expected": {"N": "77"},
                                                    "actual": {"N": "-1"}}})
        # every key was answered exactly once; requests were well formed
        self.assertEqual(len(self.server.served), ROWS)
        self.assertTrue(all(v == 1 for v in self.server.served.values()))
        for req in self.server.requests:
            self.assertTrue(req["ConsistentRead"])
            self.assertLessEqual(len(req["Keys"]), 100)
        self.assertRegex(p.stdout, r"[1-9]\d* retries, [1-9]\d* throttled")


if __name__ == "__main__":
    unittest.main(verbosity=2)
