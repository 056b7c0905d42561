"""The C null endpoint (tests/tools/nullddb.c) and its throttling model.

No DynamoDB Local needed: everything runs against the endpoint itself.
Checked with boto3 (retries off) and raw HTTP:
  - writes are counted exactly (puts and deletes, one table or several, with
    and without --parse), in /__stats and in the count file at SIGTERM;
  - DescribeTable answers what nullddb.py answers (key schema, GSI1), so
    edgeload's table check passes; CreateTable keeps the schema it was given;
  - pipelined requests, Expect: 100-continue, Connection: close, x-amz-crc32;
  - --pk-wcu: a hot base-table key or a hot index key gets its over-budget
    writes back in UnprocessedItems exactly as sent, a batch with nothing in
    budget gets ProvisionedThroughputExceededException, spread keys pass,
    item size counts (ceil(size/1 KB) WCU), deletes cost 1;
  - edgeload itself loads through the throttling with an exact count;
  - the service model: answers delayed by --latency-ms + [0, --jitter-ms)
    without blocking other connections and in order on one connection,
    buckets of --burst-s seconds then refilled at their rate, the
    index-level limit (--index-wcu), ThrottlingReasons in the throttle body
    (one entry per cause and resource, none on a partial batch) as
    edgeload's parser reads them, and --service-model's figures.
Skipped when the C endpoint is not built (EDGELOAD_NULLDDB / next to
EDGELOAD_BIN), unless CI or EDGELOAD_REQUIRE_DDB is set.
"""

import json
import os
import threading
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.dont_write_bytecode = True
import faultproxy  # noqa: E402

import boto3  # noqa: E402
import botocore.config  # noqa: E402
import botocore.exceptions  # noqa: E402

BIN = faultproxy.nullddb_c_binary()
MUST = bool(os.environ.get("CI") or os.environ.get("EDGELOAD_REQUIRE_DDB"))


def client(url):
    return boto3.client("dynamodb", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="nullc", aws_secret_access_key="nullc",
                        config=botocore.config.Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def put(pk, gsi=None, pad=0, sk="s"):
    item = {"PK": {"S": pk}, "SK": {"S": sk}}
    if gsi is not None:
        item["GSI1PK"] = {"S": gsi}
        item["GSI1SK"] = {"S": pk}
    if pad:
        item["pad"] = {"S": "x" * pad}
    return {"PutRequest": {"Item": item}}


def raw_http(port, data, reads=1, timeout=5.0):
    """Sends raw bytes, returns everything read until `reads` responses or close."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while out.count(b"HTTP/1.1 ") < reads or not _complete(out, reads):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def _complete(buf, reads):
    pos = 0
    for _ in range(reads):
        he = buf.find(b"\r\n\r\n", pos)
        if he < 0:
            return False
        head = buf[pos:he].lower()
        i = head.find(b"content-length:")
        cl = int(head[i + 15:].split(b"\r\n")[0]) if i >= 0 else 0
        if len(buf) < he + 4 + cl:
            return False
        pos = he + 4 + cl
    return True


def split_responses(buf):
    out, pos = [], 0
    while pos < len(buf):
        he = buf.index(b"\r\n\r\n", pos)
        head = buf[pos:he].decode()
        lines = head.split("\r\n")
        hdr = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        cl = int(hdr.get("content-length", "0"))
        out.append((int(lines[0].split()[1]), hdr, buf[he + 4:he + 4 + cl]))
        pos = he + 4 + cl
    return out


def request(target, body, extra=b""):
    body = json.dumps(body, separators=(",", ":")).encode() if not isinstance(body, bytes) else body
    return (b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810." + target.encode() +
            b"\r\nContent-Type: application/x-amz-json-1.0\r\n" + extra +
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


@unittest.skipUnless(BIN or MUST, "the C null endpoint is not built")
class NullC(unittest.TestCase):

    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)  # boto3's pooled sockets

    def start(self, **opts):
        p = faultproxy.NullProcess(impl="c", **opts)
        self.addCleanup(p.stop)
        return p

    # -------------------------------------------------------- plain endpoint

    def test_counts_and_files(self):
        d = tempfile.mkdtemp(prefix="nullc-")
        cf, sf = os.path.join(d, "count"), os.path.join(d, "stats.json")
        for parse in (False, True):
            p = faultproxy.NullProcess(impl="c", count_file=cf, stats_file=sf, parse=parse)
            try:
                c = client(p.url)
                total = 0
                for n in (1, 7, 25, 25, 3):
                    r = c.batch_write_item(RequestItems={"Graph": [put("a%d" % i, "g%d" % i) for i in range(n)]},
                                           ReturnConsumedCapacity="INDEXES")
                    self.assertEqual(r["UnprocessedItems"], {})
                    cc = r["ConsumedCapacity"][0]
                    self.assertEqual(cc["TableName"], "Graph")
                    self.assertEqual(cc["CapacityUnits"], 2.0 * n)
                    self.assertEqual(cc["Table"]["CapacityUnits"], float(n))
                    self.assertEqual(cc["GlobalSecondaryIndexes"]["GSI1"]["CapacityUnits"], float(n))
                    total += n
                # deletes, no ConsumedCapacity asked
                r = c.batch_write_item(RequestItems={"Graph": [
                    {"DeleteRequest": {"Key": {"PK": {"S": "a%d" % i}, "SK": {"S": "s"}}}} for i in range(4)]})
                self.assertEqual(r["UnprocessedItems"], {})
                self.assertNotIn("ConsumedCapacity", r)
                total += 4
                # two tables in one batch
                r = c.batch_write_item(RequestItems={"Tab1": [put("x"), put("y")], "Tab2": [put("z", "g")]},
                                       ReturnConsumedCapacity="TOTAL")
                self.assertEqual(sorted((e["TableName"], e["CapacityUnits"]) for e in r["ConsumedCapacity"]),
                                 [("Tab1", 2.0), ("Tab2", 2.0)])
                total += 3
                s = p.stats()
                self.assertEqual(s["items"], total)
                self.assertEqual(s["items_received"], total)
                self.assertEqual(s["batch_requests"], 7)
                self.assertEqual(s["requests"], 7)
                self.assertEqual(s["impl"], "c")
                self.assertGreaterEqual(s["cpu_s"], 0.0)
            finally:
                self.assertEqual(p.stop(), 0)
            with open(cf) as f:
                self.assertEqual(int(f.read()), total)
            with open(sf) as f:
                self.assertEqual(json.load(f)["items"], total)

    def test_item_size_with_parse(self):
        p = self.start(parse=True)
        r = client(p.url).batch_write_item(
            RequestItems={"Graph": [put("big", "g", pad=2500), put("small", "g")]},
            ReturnConsumedCapacity="INDEXES")
        cc = r["ConsumedCapacity"][0]
        self.assertEqual(cc["Table"]["CapacityUnits"], 4.0)        # 3 + 1
        self.assertEqual(cc["GlobalSecondaryIndexes"]["GSI1"]["CapacityUnits"], 4.0)

    def test_tables_like_the_python_endpoint(self):
        c_p = self.start()
        py = faultproxy.NullProcess()
        self.addCleanup(py.stop)
        got = client(c_p.url).describe_table(TableName="Graph")["Table"]
        want = client(py.url).describe_table(TableName="Graph")["Table"]
        for t in (got, want):
            for k in ("CreationDateTime", "BillingModeSummary"):
                t.pop(k)
        self.assertEqual(got, want)
        self.assertEqual([k["AttributeName"] for k in got["KeySchema"]], ["PK", "SK"])
        self.assertEqual(got["GlobalSecondaryIndexes"][0]["IndexName"], "GSI1")
        # CreateTable keeps the given schema; ListTables lists it
        c = client(c_p.url)
        r = c.create_table(TableName="Other", BillingMode="PAY_PER_REQUEST",
                           KeySchema=[{"AttributeName": "A", "KeyType": "HASH"}],
                           AttributeDefinitions=[{"AttributeName": "A", "AttributeType": "S"},
                                                 {"AttributeName": "B", "AttributeType": "S"}],
                           GlobalSecondaryIndexes=[{"IndexName": "ByB", "KeySchema": [
                               {"AttributeName": "B", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}])
        self.assertEqual(r["TableDescription"]["TableStatus"], "ACTIVE")
        t = c.describe_table(TableName="Other")["Table"]
        self.assertEqual(t["KeySchema"], [{"AttributeName": "A", "KeyType": "HASH"}])
        self.assertEqual(t["GlobalSecondaryIndexes"][0]["IndexName"], "ByB")
        self.assertEqual(t["GlobalSecondaryIndexes"][0]["IndexStatus"], "ACTIVE")
        self.assertEqual(c.list_tables()["TableNames"], ["Other"])
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            c.get_item(TableName="Other", Key={"A": {"S": "x"}})
        self.assertIn("UnknownOperation", str(e.exception))

    def test_raw_http(self):
        p = self.start()
        one = request("BatchWriteItem", {"RequestItems": {"G": [put("a"), put("b")]}})
        # two pipelined requests in one send, the second asking to close
        two = request("BatchWriteItem", {"RequestItems": {"G": [put("c")]}}, b"Connection: close\r\n")
        resp = split_responses(raw_http(p.port, one + two, reads=2))
        self.assertEqual([r[0] for r in resp], [200, 200])
        for code, hdr, body in resp:
            self.assertEqual(int(hdr["x-amz-crc32"]), zlib.crc32(body) & 0xFFFFFFFF)
            self.assertEqual(json.loads(body), {"UnprocessedItems": {}})
        self.assertEqual(resp[1][1].get("connection"), "Connection: close".split(": ")[1])
        # Expect: 100-continue, body sent after the interim answer
        s = socket.create_connection(("127.0.0.1", p.port), timeout=5)
        body = json.dumps({"RequestItems": {"G": [put("d")]}}).encode()
        s.sendall(b"POST / HTTP/1.1\r\nX-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\n"
                  b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        self.assertTrue(s.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n"))
        s.sendall(body)
        buf = b""
        while not _complete(buf, 1):
            buf += s.recv(65536)
        s.close()
        self.assertEqual(split_responses(buf)[0][0], 200)
        self.assertEqual(p.stats()["items"], 4)

    # ----------------------------------------------------------- throttling

    def test_hot_base_key_throttled(self):
        # refill negligible (0.01 WCU/s): the burst of 20 WCU is all a key gets
        p = self.start(pk_wcu=0.01, pk_burst=20, parse=True)
        c = client(p.url)
        batch = [put("hot", sk="s%02d" % i) for i in range(25)]
        r = c.batch_write_item(RequestItems={"Graph": batch}, ReturnConsumedCapacity="INDEXES")
        un = r["UnprocessedItems"]["Graph"]
        self.assertEqual(un, batch[20:])                    # the last 5, exactly as sent
        self.assertEqual(r["ConsumedCapacity"][0]["Table"]["CapacityUnits"], 20.0)
        # nothing of the next batch fits: the whole call is throttled
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            c.batch_write_item(RequestItems={"Graph": batch[:3]})
        self.assertEqual(e.exception.response["Error"]["Code"], "ProvisionedThroughputExceededException")
        # spread keys pass whole
        spread = [put("k%d" % i, "g%d" % i) for i in range(25)]
        r = c.batch_write_item(RequestItems={"Graph": spread})
        self.assertEqual(r["UnprocessedItems"], {})
        s = p.stats()
        self.assertEqual(s["items"], 45)
        self.assertEqual(s["items_received"], 53)
        self.assertEqual(s["items_withheld"], 8)
        self.assertEqual(s["pk_throttle"], 1)
        self.assertEqual(s["batch_requests"], 3)

    def test_hot_index_key_sizes_and_deletes(self):
        p = self.start(pk_wcu=0.01, pk_burst=20)
        c = client(p.url)
        # distinct base keys, one index key: the index bucket throttles
        batch = [put("f%02d" % i, "TARGET#star") for i in range(25)]
        r = c.batch_write_item(RequestItems={"Graph": batch})
        self.assertEqual(r["UnprocessedItems"]["Graph"], batch[20:])
        # 2,500-byte items cost 3 WCU: 6 of them fit in 20, a small one then still fits (2 left)
        big = [put("big", pad=2500, sk="s%d" % i) for i in range(8)] + [put("big", sk="small")]
        r = c.batch_write_item(RequestItems={"Graph": big})
        self.assertEqual(r["UnprocessedItems"]["Graph"], big[6:8])
        # deletes cost 1 from the base-table key's bucket
        dels = [{"DeleteRequest": {"Key": {"PK": {"S": "d"}, "SK": {"S": "s%d" % i}}}} for i in range(22)]
        r = c.batch_write_item(RequestItems={"Graph": dels})
        self.assertEqual(r["UnprocessedItems"]["Graph"], dels[20:])
        s = p.stats()
        self.assertEqual(s["items"], 20 + 7 + 20)
        self.assertEqual(s["items_withheld"], 5 + 2 + 2)

    def test_refill(self):
        p = self.start(pk_wcu=200, pk_burst=10)
        c = client(p.url)
        batch = [put("hot", sk="s%02d" % i) for i in range(25)]
        r = c.batch_write_item(RequestItems={"Graph": batch})
        first = len(r["UnprocessedItems"].get("Graph", []))
        self.assertGreaterEqual(first, 10)                  # about 15 over the burst of 10
        time.sleep(0.2)                                     # refills at least the 10 again
        r = c.batch_write_item(RequestItems={"Graph": batch[:10]})
        self.assertEqual(r["UnprocessedItems"], {})

    # -------------------------------------------------------- service model

    def test_latency_observed(self):
        lat, jit = 0.040, 0.020
        p = self.start(latency_ms=lat * 1000, jitter_ms=jit * 1000, seed=7)
        # one request at a time: each answer takes latency + [0, jitter)
        times = []
        for i in range(8):
            t0 = time.monotonic()
            resp = split_responses(raw_http(p.port, request("BatchWriteItem", {"RequestItems": {"G": [put("a%d" % i)]}})))
            times.append(time.monotonic() - t0)
            self.assertEqual(resp[0][0], 200)
        self.assertGreaterEqual(min(times), lat)
        # 100 ms for the test's own work on a busy machine
        self.assertLess(max(times), lat + jit + 0.100)
        self.assertGreater(max(times) - min(times), 0.001)  # the jitter is there
        # the control endpoint is not delayed
        t0 = time.monotonic()
        p.stats()
        self.assertLess(time.monotonic() - t0, lat)
        # 12 pipelined requests on one connection: answered in order (each
        # batch of a different size, so its ConsumedCapacity names it), all
        # within about one delay, not twelve
        reqs = b"".join(request("BatchWriteItem", {"RequestItems": {"G": [put("p%d_%d" % (n, k)) for k in range(n)]},
                                                   "ReturnConsumedCapacity": "TOTAL"}) for n in range(1, 13))
        t0 = time.monotonic()
        resp = split_responses(raw_http(p.port, reqs, reads=12))
        took = time.monotonic() - t0
        self.assertEqual([json.loads(b)["ConsumedCapacity"][0]["CapacityUnits"] for _, _, b in resp],
                         [float(n) for n in range(1, 13)])
        self.assertGreaterEqual(took, lat)
        # pipelined, not one after another (12 x 40 ms): far under that on a
        # busy machine too
        self.assertLess(took, 6 * lat)
        # 16 connections at once: the loop does not wait on any of them
        done = []

        def one(i):
            r = split_responses(raw_http(p.port, request("BatchWriteItem", {"RequestItems": {"G": [put("c%d" % i)]}})))
            done.append(r[0][0])
        t0 = time.monotonic()
        th = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        self.assertEqual(done, [200] * 16)
        self.assertLess(time.monotonic() - t0, 8 * lat)  # not one after another: 16 x 40 ms
        s = p.stats()
        self.assertEqual(s["items"], 8 + sum(range(1, 13)) + 16)
        self.assertEqual(s["answers_delayed"], 8 + 12 + 16)
        self.assertEqual((s["latency_ms"], s["jitter_ms"]), (40, 20))

    def test_burst_then_rate(self):
        # --burst-s 2 at 100 WCU/s: 200 WCU at once, then 100 a second
        p = self.start(pk_wcu=100, burst_s=2, parse=True)
        c = client(p.url)
        batch = [put("hot", sk="s%02d" % i) for i in range(25)]

        def send(n):
            got = 0
            for _ in range(n):
                try:
                    r = c.batch_write_item(RequestItems={"Graph": batch})
                    got += 25 - len(r["UnprocessedItems"].get("Graph", []))
                except botocore.exceptions.ClientError as e:
                    self.assertEqual(e.response["Error"]["Code"], "ProvisionedThroughputExceededException")
            return got
        t0 = time.monotonic()
        got = send(10)                                      # 250 asked at once
        early = time.monotonic() - t0
        self.assertGreaterEqual(got, 200)                   # the burst: 2 s of the rate
        self.assertLessEqual(got, 200 + 100 * early + 1)    # plus the refill meanwhile, no more
        time.sleep(0.5)
        t1 = time.monotonic()
        more = send(3)                                      # 75 asked after 0.5 s
        t2 = time.monotonic()
        self.assertGreaterEqual(more, int(100 * (t1 - t0 - early)) - 1)  # refilled at the rate
        self.assertLessEqual(more, 100 * (t2 - t0 - early) + 1)          # and no faster
        self.assertLess(more, 75)
        self.assertEqual(p.stats()["pk_burst"], 200)
        # --pk-burst (WCU) still wins over --burst-s for the key buckets
        q = self.start(pk_wcu=0.01, burst_s=2, pk_burst=10)
        r = client(q.url).batch_write_item(RequestItems={"Graph": batch})
        self.assertEqual(len(r["UnprocessedItems"]["Graph"]), 15)

    def test_index_limit(self):
        # only the index's own limit: 30 WCU, nothing refilled in the test
        p = self.start(index_wcu=0.01, index_burst=30)
        c = client(p.url)
        first = [put("a%d" % i, "g%d" % i) for i in range(25)]
        r = c.batch_write_item(RequestItems={"Graph": first})
        self.assertEqual(r["UnprocessedItems"], {})
        second = [put("b%d" % i, "h%d" % i) for i in range(25)]
        raw = raw_http(p.port, request("BatchWriteItem", {"RequestItems": {"Graph": second}}))
        code, _, body = split_responses(raw)[0]
        self.assertEqual(code, 200)
        doc = json.loads(body)
        self.assertEqual(doc["UnprocessedItems"]["Graph"], second[5:])
        self.assertNotIn("ThrottlingReasons", doc)          # a partial batch names no reason
        # puts without the index key do not touch the index's limit
        plain = [put("c%d" % i) for i in range(25)]
        self.assertEqual(c.batch_write_item(RequestItems={"Graph": plain})["UnprocessedItems"], {})
        code, _, body = split_responses(raw_http(p.port, request("BatchWriteItem",
                                                                 {"RequestItems": {"Graph": second[:3]}})))[0]
        self.assertEqual(code, 400)
        self.assertEqual(json.loads(body)["ThrottlingReasons"], [
            {"reason": "IndexWriteProvisionedThroughputExceeded",
             "resource": "arn:aws:dynamodb:ddblocal:000000000000:table/Graph/index/GSI1"}])
        s = p.stats()
        self.assertEqual(s["items"], 25 + 5 + 25)
        self.assertEqual(s["items_withheld"], 20 + 3)
        self.assertEqual(s["withheld_index"], 23)
        self.assertEqual(s["withheld_table_key"] + s["withheld_index_key"] + s["withheld_table"], 0)
        self.assertEqual(s["requests_throttled"], 1)
        self.assertEqual((s["units_table"], s["units_index"]), (55, 30))

    def test_reasons_body(self):
        # key buckets of 5 WCU, the table's of 1,000: no refill to speak of
        p = self.start(pk_wcu=0.01, pk_burst=5, table_wcu=0.01, table_burst=1000)

        def call(items):
            code, hdr, body = split_responses(raw_http(p.port, request("BatchWriteItem", {"RequestItems": items})))[0]
            self.assertEqual(int(hdr["x-amz-crc32"]), zlib.crc32(body) & 0xFFFFFFFF)
            return code, json.loads(body)
        arn = "arn:aws:dynamodb:ddblocal:000000000000:table/"
        code, doc = call({"Graph": [put("hot", sk="s%d" % i) for i in range(8)]})
        self.assertEqual((code, len(doc["UnprocessedItems"]["Graph"])), (200, 3))
        self.assertNotIn("ThrottlingReasons", doc)
        code, doc = call({"Graph": [put("hot", sk="t%d" % i) for i in range(3)]})
        self.assertEqual(code, 400)
        self.assertTrue(doc["__type"].endswith("#ProvisionedThroughputExceededException"))
        self.assertEqual(doc["ThrottlingReasons"],
                         [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn + "Graph"}])
        # an index key made hot (distinct base keys), then a batch refused for both
        call({"Graph": [put("f%d" % i, "TARGET#star") for i in range(5)]})
        code, doc = call({"Graph": [put("g1", "TARGET#star"), put("hot", "TARGET#other")]})
        self.assertEqual(code, 400)
        self.assertEqual(doc["ThrottlingReasons"], [
            {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn + "Graph"},
            {"reason": "IndexWriteKeyRangeThroughputExceeded", "resource": arn + "Graph/index/GSI1"}])
        # two tables: each names its own resource, each cause once
        call({"Other": [put("hot2", sk="s%d" % i) for i in range(5)]})
        code, doc = call({"Graph": [put("hot", sk="x1"), put("hot", sk="x2")], "Other": [put("hot2", sk="x")]})
        self.assertEqual(code, 400)
        self.assertEqual(doc["ThrottlingReasons"], [
            {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn + "Graph"},
            {"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn + "Other"}])
        # the table's own limit: the next 1,000 WCU drain it, then it is the cause
        q = self.start(table_wcu=0.01, table_burst=30)
        client(q.url).batch_write_item(RequestItems={"Graph": [put("k%d" % i) for i in range(25)]})
        client(q.url).batch_write_item(RequestItems={"Graph": [put("l%d" % i) for i in range(5)]})
        code, _, body = split_responses(raw_http(q.port, request("BatchWriteItem",
                                                                 {"RequestItems": {"Graph": [put("m")]}})))[0]
        self.assertEqual(code, 400)
        self.assertEqual(json.loads(body)["ThrottlingReasons"],
                         [{"reason": "TableWriteProvisionedThroughputExceeded", "resource": arn + "Graph"}])
        s = p.stats()
        self.assertEqual(s["requests_throttled"], 3)
        self.assertEqual(s["withheld_table_key"], 3 + 3 + 1 + 2 + 1)
        self.assertEqual(s["withheld_index_key"], 1)
        self.assertEqual(s["withheld_table"], 0)
        self.assertEqual(s["max_key_units_table"], 5)
        self.assertEqual(s["hot_table_key"], '{"S":"hot"}')

    def test_service_model_figures(self):
        p = self.start(service_model=True)
        s = p.stats()
        self.assertEqual((s["pk_wcu"], s["pk_burst"], s["table_wcu"], s["table_burst"], s["index_wcu"],
                          s["index_burst"], s["latency_ms"], s["jitter_ms"], s["service_model"]),
                         (1000, 1000, 20000, 20000, 20000, 20000, 8, 4, True))
        # an option given wins over the model's figure
        q = self.start(service_model=True, latency_ms="0", jitter_ms="0", pk_wcu=500)  # "0": NullProcess drops a falsy 0
        s = q.stats()
        self.assertEqual((s["pk_wcu"], s["pk_burst"], s["latency_ms"], s["table_wcu"]), (500, 500, 0, 20000))
        t0 = time.monotonic()
        r = client(q.url).batch_write_item(RequestItems={"Graph": [put("a")]})
        self.assertEqual(r["UnprocessedItems"], {})
        self.assertLess(time.monotonic() - t0, 0.5)

    def test_edgeload_reads_the_reasons(self):
        """edgeload's parser (dynamo/ddb_answers.c) reads the reasons sent:
        every throttled answer of a load whose only hot key is an index key
        is counted under IndexWriteKeyRangeThroughputExceeded."""
        el = self._edgeload_bin()
        d = tempfile.mkdtemp(prefix="nullc-reasons-")
        csv = os.path.join(d, "edges.csv")
        with open(csv, "w") as f:
            f.write("follower_id,followee_id\n")
            for i in range(3000):                      # every edge onto "star": one hot index key
                f.write("u%04d,star\n" % i)
        p = faultproxy.NullProcess(impl="c", pk_wcu=1000, pk_burst=50, latency_ms=2)
        s, el_stats = self._load_through(el, p, d, csv)
        self.assertEqual(el_stats["items_written"], 3000)
        self.assertEqual(s["items"], 3000)
        self.assertGreater(s["requests_throttled"], 0)
        self.assertEqual(s["withheld_table_key"], 0)
        reasons = el_stats["throttled_by_reason"]
        self.assertEqual(reasons.get("IndexWriteKeyRangeThroughputExceeded", 0), s["requests_throttled"], reasons)
        self.assertEqual(sum(v for k, v in reasons.items() if k != "IndexWriteKeyRangeThroughputExceeded"), 0,
                         reasons)

    def _edgeload_bin(self):
        """The edgeload binary to test; skips (fails under MUST) without one."""
        el = os.environ.get("EDGELOAD_BIN")
        if not el or not os.access(el, os.X_OK):
            if MUST:
                self.fail("EDGELOAD_BIN not set")
            self.skipTest("EDGELOAD_BIN not set")
        return el

    def _load_through(self, el, p, d, csv):
        """Loads csv (follower_id,followee_id) through the endpoint p and stops
        it; returns the endpoint's stats and edgeload's --stats-json."""
        env = dict(os.environ, AWS_ACCESS_KEY_ID="nullc", AWS_SECRET_ACCESS_KEY="nullc", AWS_REGION="us-east-1")
        try:
            r = subprocess.run([el, "load", "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
                                "--table", "Graph", "--endpoint-url", p.url, "--quiet",
                                "--stats-json", os.path.join(d, "stats.json"), csv],
                               env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            s = p.stats()
        finally:
            p.stop()
        with open(os.path.join(d, "stats.json")) as f:
            return s, json.load(f)

    def test_edgeload_through_throttling(self):
        el = self._edgeload_bin()
        d = tempfile.mkdtemp(prefix="nullc-el-")
        csv = os.path.join(d, "edges.csv")
        rows = 0
        with open(csv, "w") as f:
            f.write("follower_id,followee_id\n")
            for i in range(1500):                      # sorted by follower; 1,500 edges onto "star"
                for t in ("star", "t%d" % (i % 50)):
                    f.write("u%04d,%s\n" % (i, t))
                    rows += 1
        cf = os.path.join(d, "count")
        p = faultproxy.NullProcess(impl="c", pk_wcu=3000, pk_burst=100, count_file=cf)
        s, el_stats = self._load_through(el, p, d, csv)
        self.assertEqual(el_stats["items_written"], rows)
        with open(cf) as f:
            self.assertEqual(int(f.read()), rows)
        self.assertGreater(s["items_withheld"], 0)          # the hot key was pushed back
        self.assertEqual(s["items"], rows)


if __name__ == "__main__":
    unittest.main(verbosity=2)
