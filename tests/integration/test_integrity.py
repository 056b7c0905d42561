"""A BatchWriteItem answer whose x-amz-crc32 does not match its body is a
transient failure, retried, as the AWS SDKs treat it: an answer that fails
its CRC32 check is never believed.

edgeload talks to DynamoDB Local through a small proxy on 127.0.0.1 that
spoils the first BatchWriteItem answer: either its body (a bogus
UnprocessedItems naming a key that was never loaded, the checksum left as
it was) or its x-amz-crc32 header. The load must still succeed, retry that
request, not believe the spoiled body, and leave exactly the rows' items in
the table with items_written counting each once.
"""

import http.client
import http.server
import json
import os
import sys
import threading
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgeload_test import ENDPOINT, EdgeloadTestCase, S, send_answer, serve  # noqa: E402
import unittest  # noqa: E402

ROWS = 60


class SpoilingProxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        srv = self.server
        body = self.rfile.read(int(self.headers["Content-Length"]))
        up = http.client.HTTPConnection(srv.upstream_host, srv.upstream_port, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        up.request("POST", self.path, body=body, headers=headers)
        resp = up.getresponse()
        data = resp.read()
        status = resp.status
        up.close()
        op = self.headers.get("X-Amz-Target", "").split(".")[-1]
        crc = str(zlib.crc32(data) & 0xFFFFFFFF)
        with srv.lock:
            srv.ops.append(op)
            spoil = op == "BatchWriteItem" and status == 200 and not srv.spoiled
            if spoil:
                srv.spoiled = True
        if spoil and srv.mode == "body":
            # keep the checksum of the true body, send another: an item that
            # was never loaded claimed unprocessed
            fake = json.loads(data)
            fake["UnprocessedItems"] = {srv.table: [{"PutRequest": {"Item": {
                "PK": S("BOGUS#1"), "SK": S("BOGUS#2")}}}]}
            data = json.dumps(fake).encode()
        elif spoil and srv.mode == "header":
            crc = str((int(crc) + 1) & 0xFFFFFFFF)
        send_answer(self, status, data, [("x-amz-crc32", crc),
                                         ("x-amzn-RequestId", "proxy-%d" % len(srv.ops))])


class CrcMismatchRetried(EdgeloadTestCase):

    def start_proxy(self, mode, table):
        host, port = ENDPOINT.split("//")[1].split(":")
        return serve(self, SpoilingProxy, upstream_host=host, upstream_port=int(port),
                     mode=mode, table=table, spoiled=False, ops=[], lock=threading.Lock())

    def check(self, mode):
        table = self.unique_table("crc")
        self.create_table_boto(table)
        d = self.tmpdir()
        csv = self.write_file(d, "e.csv", "src,dst\n" + "".join(
            "u%d,v%d\n" % (i, i) for i in range(ROWS)))
        stats = os.path.join(d, "stats.json")
        srv, url = self.start_proxy(mode, table)
        proc = self.run_edgeload(
            "load", "--endpoint-url", url, "--region", "us-east-1", "--table", table,
            "--pk", "A#{src}", "--sk", "B#{dst}", "--stats-json", stats,
            "--concurrency", "1", "--progress", "none", csv)
        self.assertExit(proc, 0)
        self.assertTrue(srv.spoiled, "no BatchWriteItem went through the proxy")
        # 60 rows are 3 requests; the spoiled one is sent again
        self.assertEqual(srv.ops.count("BatchWriteItem"), 4, srv.ops)
        with open(stats) as f:
            st = json.load(f)
        self.assertEqual(st["items_written"], ROWS, st)
        self.assertGreaterEqual(st["retries"], 1, st)
        items = self.ddb.scan(TableName=table, ConsistentRead=True)["Items"]
        self.assertEqual(len(items), ROWS)
        self.assertEqual(sorted(i["PK"]["S"] for i in items),
                         sorted("A#u%d" % i for i in range(ROWS)))
        self.assertFalse(any(i["PK"]["S"].startswith("BOGUS") for i in items))

    def test_spoiled_body_is_retried_not_believed(self):
        self.check("body")

    def test_spoiled_checksum_header_is_retried(self):
        self.check("header")


if __name__ == "__main__":
    unittest.main(verbosity=2)
