#!/usr/bin/python3
"""Self-test of the test suite's fault-injection tools (tests/tools).

Starts tests/tools/faultproxy.py on an ephemeral port in front of DynamoDB
Local (EDGELOAD_DDB_ENDPOINT, default http://127.0.0.1:8000), sends batches
through it with boto3 (retries off) and checks that every fault kind does
what the README says; then checks tests/tools/nullddb.py answers.

Without DynamoDB Local the DynamoDB tests are skipped, unless CI or
EDGELOAD_REQUIRE_DDB is set in the environment: then they fail.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request
import zlib

import boto3
import botocore.exceptions
from botocore.config import Config

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(os.path.dirname(HERE), "tools")
PROXY = os.path.join(TOOLS, "faultproxy.py")
NULLDDB = os.path.join(TOOLS, "nullddb.py")
ENDPOINT = os.environ.get("EDGELOAD_DDB_ENDPOINT", "http://127.0.0.1:8000")
CREDS = dict(region_name="us-east-1", aws_access_key_id="fakeMyKeyId",
             aws_secret_access_key="fakeSecretAccessKey")
CONN_ERRORS = (botocore.exceptions.HTTPClientError, botocore.exceptions.EndpointConnectionError,
               ConnectionError)
THROTTLE_MSG = ("The level of configured provisioned throughput for the table was exceeded. "
                "Consider increasing your provisioning level with the UpdateTable API.")


def endpoint_reachable():
    host_port = ENDPOINT.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def start_tool(path, *args):
    """Starts a tool on port 0; returns (Popen, port) once it listens."""
    p = subprocess.Popen([sys.executable, path, "--listen", "127.0.0.1:0"] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if " listening on " not in line:
        p.kill()
        raise AssertionError("%s did not start: %r %s" % (path, line, p.stderr.read()))
    port = int(line.split(" listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
    return p, port


def stop_tool(p):
    p.terminate()
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError("tool did not stop on SIGTERM")
    return p.returncode, out, err


def client(port, pool=16):
    # total_max_attempts counts the first try; "max_attempts" would allow one retry
    cfg = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=20,
                 max_pool_connections=pool)
    return boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port, config=cfg, **CREDS)


def reasons_client(port, tmp):
    """A boto3 client (retries off) whose DynamoDB model knows
    ProvisionedThroughputExceededException's ThrottlingReasons member, so
    botocore's own parser of the error (modeled fields) reads it.

    Debian's botocore (1.29) predates the member; then the installed model
    is copied into tmp with the member added as the service model
    describes it (ThrottlingReasons: a list of structures with the strings
    reason and resource; the JSON protocol uses member names on the wire).
    A newer botocore that has it is used as it is.
    """
    import botocore.loaders
    import botocore.session
    model = botocore.loaders.Loader().load_service_model("dynamodb", "service-2")
    session = botocore.session.Session()
    exc = model["shapes"]["ProvisionedThroughputExceededException"]
    if "ThrottlingReasons" not in exc["members"]:
        shapes = model["shapes"]
        shapes["FaultproxyThrottlingString"] = {"type": "string"}
        shapes["ThrottlingReason"] = {"type": "structure", "members": {
            "reason": {"shape": "FaultproxyThrottlingString"},
            "resource": {"shape": "FaultproxyThrottlingString"}}}
        shapes["ThrottlingReasonList"] = {"type": "list", "member": {"shape": "ThrottlingReason"}}
        exc["members"]["ThrottlingReasons"] = {"shape": "ThrottlingReasonList"}
        d = os.path.join(tmp, "dynamodb", model["metadata"]["apiVersion"])
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "service-2.json"), "w") as f:
            json.dump(model, f)
        session.set_config_variable("data_path", tmp)
    cfg = Config(retries={"total_max_attempts": 1}, connect_timeout=5, read_timeout=20)
    return session.create_client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port,
                                 config=cfg, **CREDS)


def http_json(port, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 data=json.dumps(body).encode() if body is not None else None,
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def put(pk, sk, gsi_pk=None, **attrs):
    item = {"PK": {"S": pk}, "SK": {"S": sk}}
    if gsi_pk is not None:
        item["GSI1PK"] = {"S": gsi_pk}
        item["GSI1SK"] = {"S": pk}
    for k, v in attrs.items():
        item[k] = {"N": str(v)} if isinstance(v, int) else {"S": v}
    return {"PutRequest": {"Item": item}}


def key_of(w):
    item = w["PutRequest"]["Item"]
    return (item["PK"]["S"], item["SK"]["S"])


@unittest.skipUnless(os.path.exists(PROXY), "faultproxy.py missing")
class FaultProxyTest(unittest.TestCase):
    table = None

    @classmethod
    def setUpClass(cls):
        if not endpoint_reachable():
            msg = "DynamoDB Local not reachable at %s" % ENDPOINT
            if os.environ.get("CI") or os.environ.get("EDGELOAD_REQUIRE_DDB"):
                raise AssertionError(msg)
            raise unittest.SkipTest(msg)
        cls.ddb = boto3.client("dynamodb", endpoint_url=ENDPOINT,
                               config=Config(retries={"max_attempts": 3}), **CREDS)
        cls.table = "fpself_%d_%d" % (os.getpid(), int(time.time()))
        cls.ddb.create_table(
            TableName=cls.table,
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"}
                                  for a in ("PK", "SK", "GSI1PK", "GSI1SK")],
            GlobalSecondaryIndexes=[{
                "IndexName": "GSI1",
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                              {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}],
            BillingMode="PAY_PER_REQUEST")
        cls.ddb.get_waiter("table_exists").wait(TableName=cls.table)

    @classmethod
    def tearDownClass(cls):
        if cls.table:
            try:
                cls.ddb.delete_table(TableName=cls.table)
            except botocore.exceptions.ClientError:
                pass
            cls.ddb.close()

    def setUp(self):
        self.procs = []
        self.prefix = "%s#%s#" % (self.id().rsplit(".", 1)[-1], time.time_ns())
        self.sent = set()

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.communicate()

    # -- helpers

    def proxy(self, *args):
        p, port = start_tool(PROXY, "--upstream", ENDPOINT, *args)
        self.procs.append(p)
        return p, port

    def client(self, port, pool=16):
        c = client(port, pool)
        self.addCleanup(c.close)
        return c

    def batch(self, n, pk=None, gsi=None, start=0):
        """n distinct puts; one PK (or one GSI1PK) shared when given."""
        out = []
        for i in range(start, start + n):
            out.append(put(pk or "%sA%d" % (self.prefix, i), "%sT%d" % (self.prefix, i),
                           gsi if gsi is not None else "%sT%d" % (self.prefix, i), n=i))
        self.sent.update(key_of(w) for w in out)
        return out

    def stored(self):
        """This test's items in the table, by key (strongly consistent).

        Only keys this test sent can be there (the proxy forwards nothing
        else), so a BatchGetItem of those keys sees exactly what landed.
        """
        keys = sorted(self.sent)
        found = {}
        for i in range(0, len(keys), 100):
            want = [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in keys[i:i + 100]]
            req = {self.table: {"Keys": want, "ConsistentRead": True}}
            while req:
                r = self.ddb.batch_get_item(RequestItems=req)
                for it in r["Responses"].get(self.table, []):
                    found[(it["PK"]["S"], it["SK"]["S"])] = it
                req = r.get("UnprocessedKeys") or None
        return found

    # -- the fault kinds

    def test_passthrough_and_stats(self):
        p, port = self.proxy()
        c = self.client(port)
        reqs = self.batch(25)
        r = c.batch_write_item(RequestItems={self.table: reqs}, ReturnConsumedCapacity="INDEXES")
        self.assertEqual(r["UnprocessedItems"], {})
        self.assertEqual(r["ConsumedCapacity"][0]["TableName"], self.table)
        self.assertEqual(set(self.stored()), {key_of(w) for w in reqs})
        # other operations pass through too, over the same keep-alive connection
        self.assertEqual(c.describe_table(TableName=self.table)["Table"]["TableStatus"], "ACTIVE")
        s = http_json(port, "/__stats")
        self.assertEqual(s["items_received"], 25)
        self.assertEqual(s["items_forwarded"], 25)
        self.assertEqual(s["items_withheld"], 0)
        self.assertEqual(s["by_target"], {"BatchWriteItem": 1, "DescribeTable": 1})
        self.assertEqual(sum(s["faults"].values()), 0)
        self.assertEqual(s["upstream_status"], {"200": 2})

    def test_throttle(self):
        p, port = self.proxy("--throttle", "1")
        c = self.client(port)
        reqs = self.batch(5)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            c.batch_write_item(RequestItems={self.table: reqs})
        e = cm.exception.response
        self.assertEqual(e["Error"]["Code"], "ProvisionedThroughputExceededException")
        self.assertEqual(e["Error"]["Message"], THROTTLE_MSG)
        self.assertEqual(e["ResponseMetadata"]["HTTPStatusCode"], 400)
        h = e["ResponseMetadata"]["HTTPHeaders"]
        self.assertEqual(h["content-type"], "application/x-amz-json-1.0")
        self.assertTrue(h["x-amzn-requestid"])
        self.assertIn("x-amz-crc32", h)          # botocore checked it against the body
        self.assertEqual(self.stored(), {})
        # the raw body is the service's, byte for byte, with a matching CRC32
        req = urllib.request.Request("http://127.0.0.1:%d/" % port, data=b"{}", headers={
            "X-Amz-Target": "DynamoDB_20120810.BatchWriteItem",
            "Content-Type": "application/x-amz-json-1.0"})
        try:
            urllib.request.urlopen(req, timeout=10)
            self.fail("expected a 400")
        except urllib.error.HTTPError as he:
            body = he.read()
            self.assertEqual(json.loads(body), {
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": THROTTLE_MSG})
            self.assertEqual(int(he.headers["x-amz-crc32"]), zlib.crc32(body))
        # faults apply to BatchWriteItem only by default
        c.describe_table(TableName=self.table)
        self.assertEqual(http_json(port, "/__stats")["faults"]["throttle"], 2)

    def test_http500_and_503(self):
        for opt, status, code in (("--http500", 500, "InternalServerError"),
                                  ("--http503", 503, "ServiceUnavailable")):
            p, port = self.proxy(opt, "1")
            c = self.client(port)
            with self.assertRaises(botocore.exceptions.ClientError) as cm:
                c.batch_write_item(RequestItems={self.table: self.batch(3)})
            self.assertEqual(cm.exception.response["ResponseMetadata"]["HTTPStatusCode"], status)
            self.assertEqual(cm.exception.response["Error"]["Code"], code)
            self.assertEqual(self.stored(), {})

    def test_reset(self):
        p, port = self.proxy("--reset", "1")
        c = self.client(port)
        with self.assertRaises(CONN_ERRORS):
            c.batch_write_item(RequestItems={self.table: self.batch(3)})
        self.assertEqual(self.stored(), {})
        self.assertEqual(http_json(port, "/__stats")["faults"]["reset"], 1)

    def test_slow(self):
        p, port = self.proxy("--slow", "1", "--slow-ms", "400")
        c = self.client(port)
        reqs = self.batch(3)
        t0 = time.monotonic()
        r = c.batch_write_item(RequestItems={self.table: reqs})
        self.assertGreaterEqual(time.monotonic() - t0, 0.4)
        self.assertEqual(r["UnprocessedItems"], {})
        self.assertEqual(set(self.stored()), {key_of(w) for w in reqs})

    def test_lost_reply(self):
        p, port = self.proxy("--lost-reply", "1")
        c = self.client(port)
        reqs = self.batch(10)
        with self.assertRaises(CONN_ERRORS):
            c.batch_write_item(RequestItems={self.table: reqs})
        # the write was applied although the client never heard of it
        self.assertEqual(set(self.stored()), {key_of(w) for w in reqs})
        s = http_json(port, "/__stats")
        self.assertEqual(s["faults"]["lost_reply"], 1)
        self.assertEqual(s["items_lost_reply"], 10)

    def test_truncated_reply(self):
        p, port = self.proxy("--truncate", "1")
        c = self.client(port)
        reqs = self.batch(10)
        # botocore (urllib3 1.x) does not enforce Content-Length; DynamoDB's CRC32 catches the cut
        with self.assertRaises(CONN_ERRORS + (botocore.exceptions.ChecksumError,)):
            c.batch_write_item(RequestItems={self.table: reqs}, ReturnConsumedCapacity="TOTAL")
        self.assertEqual(set(self.stored()), {key_of(w) for w in reqs})
        # on the wire: the head with the full Content-Length, half the body, then the end
        body = json.dumps({"RequestItems": {self.table: self.batch(2, start=50)},
                           "ReturnConsumedCapacity": "TOTAL"}).encode()
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\n"
                  b"Authorization: AWS4-HMAC-SHA256 Credential=fakeMyKeyId/20260101/us-east-1/dynamodb/"
                  b"aws4_request, SignedHeaders=host, Signature=0\r\n"
                  b"Content-Type: application/x-amz-json-1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except ConnectionResetError:
            pass
        s.close()
        head, _, got = data.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head)
        length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
        self.assertTrue(0 < len(got) < length, (len(got), length))
        self.assertEqual(http_json(port, "/__stats")["faults"]["truncate"], 2)

    def test_partial(self):
        p, port = self.proxy("--partial", "1", "--seed", "7")
        c = self.client(port)
        total_withheld = 0
        seen_sizes = set()
        for b in range(4):
            reqs = self.batch(25, start=100 * b)
            before = set(self.stored())
            r = c.batch_write_item(RequestItems={self.table: reqs}, ReturnConsumedCapacity="INDEXES")
            un = r["UnprocessedItems"].get(self.table, [])
            self.assertEqual(set(r["UnprocessedItems"]) - {self.table}, set())
            self.assertTrue(0 < len(un) < 25, len(un))
            seen_sizes.add(len(un))
            # withheld writes come back exactly as sent, in the service's shape
            by_key = {key_of(w): w for w in reqs}
            for w in un:
                self.assertEqual(w, by_key[key_of(w)])
            landed = set(self.stored()) - before
            self.assertEqual(landed | {key_of(w) for w in un}, set(by_key))
            self.assertEqual(landed & {key_of(w) for w in un}, set())
            cc = r["ConsumedCapacity"][0]
            self.assertEqual(cc["Table"]["CapacityUnits"], 25 - len(un))
            total_withheld += len(un)
        self.assertGreater(len(seen_sizes), 1)          # the subset is random
        s = http_json(port, "/__stats")
        self.assertEqual(s["items_withheld_partial"], total_withheld)
        self.assertEqual(s["items_forwarded"], 100 - total_withheld)
        self.assertEqual(s["faults"]["partial"], 4)
        # a single-item batch cannot be split: it goes through whole
        r = c.batch_write_item(RequestItems={self.table: self.batch(1, start=999)})
        self.assertEqual(r["UnprocessedItems"], {})

    def test_partial_with_deletes(self):
        p, port = self.proxy("--partial", "1", "--seed", "3")
        c = self.client(port)
        first = self.batch(10)
        self.ddb.batch_write_item(RequestItems={self.table: first[:1]})   # the one to delete
        dels = [{"DeleteRequest": {"Key": {"PK": w["PutRequest"]["Item"]["PK"],
                                           "SK": w["PutRequest"]["Item"]["SK"]}}} for w in first[:1]]
        reqs = dels + self.batch(9, start=50)
        r = c.batch_write_item(RequestItems={self.table: reqs})
        un = r["UnprocessedItems"].get(self.table, [])
        self.assertTrue(0 < len(un) < 10)
        for w in un:
            self.assertIn(w, reqs)
        # apply what came back directly: the result must be as if all went through
        self.ddb.batch_write_item(RequestItems={self.table: un})
        self.assertEqual(set(self.stored()), {key_of(w) for w in reqs[1:]})

    def test_pk_token_buckets(self):
        # A burst of 20 WCU per key and (for now) a refill too slow to matter:
        # a batch of 25 on one key lands 20.
        p, port = self.proxy("--pk-wcu", "0.01", "--pk-burst", "20")
        c = self.client(port)
        hot = self.prefix + "HOT"
        reqs = self.batch(25, pk=hot)
        r = c.batch_write_item(RequestItems={self.table: reqs}, ReturnConsumedCapacity="TOTAL")
        un = r["UnprocessedItems"].get(self.table, [])
        # the same key again: everything is over budget -> throttled
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            c.batch_write_item(RequestItems={self.table: un})
        self.assertEqual(cm.exception.response["Error"]["Code"], "ProvisionedThroughputExceededException")
        self.assertEqual(len(un), 5)
        self.assertEqual(len(self.stored()), 20)
        # at 10 WCU/s, 0.6 seconds refill 6 WCU: the 5 land (rate changed at run time)
        self.assertEqual(http_json(port, "/__config", {"pk_wcu": 10})["pk_wcu"], 10)
        time.sleep(0.6)
        r = c.batch_write_item(RequestItems={self.table: un})
        self.assertEqual(r["UnprocessedItems"], {})
        self.assertEqual(len(self.stored()), 25)
        http_json(port, "/__config", {"pk_wcu": 0.01})
        # the index partition key has its own bucket: distinct PKs, one GSI1PK
        star = self.prefix + "STAR"
        reqs = self.batch(25, gsi=star, start=1000)
        r = c.batch_write_item(RequestItems={self.table: reqs})
        self.assertEqual(len(r["UnprocessedItems"].get(self.table, [])), 5)
        # spread keys are not limited
        reqs = self.batch(25, start=2000)
        r = c.batch_write_item(RequestItems={self.table: reqs})
        self.assertEqual(r["UnprocessedItems"], {})
        s = http_json(port, "/__stats")
        self.assertEqual(s["items_withheld_pk"], 5 + 5 + 5)
        self.assertEqual(s["faults"]["pk_throttle"], 1)
        # item size counts: a 3 KB item costs 3 WCU of the 20
        big = [put("%sBIG" % self.prefix, "%sB%d" % (self.prefix, i), None, pad="x" * 2900)
               for i in range(10)]
        self.sent.update(key_of(w) for w in big)
        r = c.batch_write_item(RequestItems={self.table: big})
        self.assertEqual(len(r["UnprocessedItems"].get(self.table, [])), 10 - 6)

    def throttled(self, c, reqs):
        """Sends a batch that must be refused whole; returns botocore's parsed error."""
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            c.batch_write_item(RequestItems={self.table: reqs})
        e = cm.exception.response
        self.assertEqual(e["Error"]["Code"], "ProvisionedThroughputExceededException")
        self.assertEqual(e["ResponseMetadata"]["HTTPStatusCode"], 400)
        return e

    def test_hot_key_throttling_reasons(self):
        # a hot index key and a hot table key: 2 WCU/s each (slow, so that
        # a busy machine's delays between requests refill less than 1 WCU), 3 WCU of burst
        star, hot_pk = self.prefix + "STAR", self.prefix + "HOTPK"
        p, port = self.proxy("--hot-key", star, "--hot-table-key", hot_pk,
                             "--hot-wcu", "2", "--hot-burst", "3")
        c = reasons_client(port, tempfile.mkdtemp(prefix="fpself-model-"))
        self.addCleanup(c.close)
        index_arn = "arn:aws:dynamodb:us-east-1:000000000000:table/%s/index/GSI1" % self.table
        table_arn = "arn:aws:dynamodb:us-east-1:000000000000:table/%s" % self.table
        # the burst: 3 writes of the hot index key land, with 2 others
        first = self.batch(3, gsi=star) + self.batch(2, start=100)
        self.assertEqual(c.batch_write_item(RequestItems={self.table: first})["UnprocessedItems"], {})
        # the bucket is empty: a batch with one hot write among 24 others is
        # refused whole, none of the others is written (nothing forwarded)
        mixed = self.batch(1, gsi=star, start=200) + self.batch(24, start=300)
        e = self.throttled(c, mixed)
        self.assertEqual(e["ThrottlingReasons"],
                         [{"reason": "IndexWriteKeyRangeThroughputExceeded", "resource": index_arn}])
        self.assertEqual(set(self.stored()), {key_of(w) for w in first})
        # writes of other keys are not held back by the hot key
        others = self.batch(25, start=400)
        self.assertEqual(c.batch_write_item(RequestItems={self.table: others})["UnprocessedItems"], {})
        # at 2 WCU/s, 0.7 s refill more than the 1 WCU the refused batch needs: it lands
        time.sleep(0.7)
        self.assertEqual(c.batch_write_item(RequestItems={self.table: mixed})["UnprocessedItems"], {})
        # the hot table key: a full bucket admits a batch costing more than
        # its burst (else such a batch could never pass) and goes into debt,
        # so the next write of that key is refused, naming the table
        heavy = self.batch(5, pk=hot_pk, start=500)
        self.assertEqual(c.batch_write_item(RequestItems={self.table: heavy})["UnprocessedItems"], {})
        e = self.throttled(c, self.batch(1, pk=hot_pk, start=600))
        self.assertEqual(e["ThrottlingReasons"],
                         [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": table_arn}])
        self.assertEqual(e["Error"]["Message"], e["message"])
        self.assertIn("hot key", e["message"])
        # the raw body: the service's shape exactly, with a matching CRC32
        body = json.dumps({"RequestItems": {self.table: self.batch(1, pk=hot_pk, start=700)}}).encode()
        req = urllib.request.Request("http://127.0.0.1:%d/" % port, data=body, headers={
            "X-Amz-Target": "DynamoDB_20120810.BatchWriteItem",
            "Content-Type": "application/x-amz-json-1.0"})
        with self.assertRaises(urllib.error.HTTPError) as he:
            urllib.request.urlopen(req, timeout=10)
        raw = he.exception.read()
        self.assertEqual(he.exception.code, 400)
        self.assertEqual(json.loads(raw), {
            "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
            "message": e["message"],
            "ThrottlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded",
                                   "resource": table_arn}]})
        self.assertEqual(int(he.exception.headers["x-amz-crc32"]), zlib.crc32(raw))
        self.assertEqual(set(self.stored()), {key_of(w) for w in first + others + mixed + heavy})
        s = http_json(port, "/__stats")
        self.assertEqual(s["faults"]["hot_key_throttle"], 3)
        self.assertEqual(s["faults"]["pk_throttle"], 0)
        self.assertEqual(s["throttled_by_reason"], {"IndexWriteKeyRangeThroughputExceeded": 1,
                                                    "TableWriteKeyRangeThroughputExceeded": 2})
        self.assertEqual(s["items_refused"], 25 + 1 + 1)
        self.assertEqual(s["items_forwarded"], 5 + 25 + 25 + 5)
        # per class: hot writes are the hot keys' (index or table), the rest "other"
        self.assertEqual(s["classes"]["hot"]["items"], 3 + 1 + 5)
        self.assertEqual(s["classes"]["other"]["items"], 2 + 25 + 24)
        self.assertLess(s["classes"]["other"]["first"], s["classes"]["other"]["last"])

    def test_table_limit_throttling_reason(self):
        p, port = self.proxy("--table-limit-wcu", "4", "--table-limit-burst", "20")
        c = reasons_client(port, tempfile.mkdtemp(prefix="fpself-model-"))
        self.addCleanup(c.close)
        ok = self.batch(20)
        self.assertEqual(c.batch_write_item(RequestItems={self.table: ok})["UnprocessedItems"], {})
        e = self.throttled(c, self.batch(5, start=100))
        self.assertEqual(e["ThrottlingReasons"], [{
            "reason": "TableWriteProvisionedThroughputExceeded",
            "resource": "arn:aws:dynamodb:us-east-1:000000000000:table/%s" % self.table}])
        self.assertEqual(e["message"], THROTTLE_MSG)
        self.assertEqual(set(self.stored()), {key_of(w) for w in ok})
        s = http_json(port, "/__stats")
        self.assertEqual(s["faults"]["table_limit_throttle"], 1)
        self.assertEqual(s["faults"]["hot_key_throttle"], 0)
        self.assertEqual(s["throttled_by_reason"], {"TableWriteProvisionedThroughputExceeded": 1})

    def test_config_and_stats_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stats.json")
            p, port = self.proxy("--stats-file", path, "--log", os.path.join(d, "log"))
            c = self.client(port)
            c.batch_write_item(RequestItems={self.table: self.batch(2)})
            cfg = http_json(port, "/__config", {"throttle": 1.0})
            self.assertEqual(cfg["throttle"], 1.0)
            self.assertEqual(http_json(port, "/__config")["throttle"], 1.0)
            with self.assertRaises(botocore.exceptions.ClientError):
                c.batch_write_item(RequestItems={self.table: self.batch(2, start=10)})
            with self.assertRaises(urllib.error.HTTPError):
                http_json(port, "/__config", {"throttle": 2.0})
            rc, out, err = stop_tool(p)
            self.assertEqual(rc, 0, err)
            with open(path) as f:
                s = json.load(f)
            self.assertEqual(s["requests"], 2)
            self.assertEqual(s["faults"]["throttle"], 1)
            self.assertEqual(s["items_received"], 4)
            self.assertEqual(s["items_forwarded"], 2)
            with open(os.path.join(d, "log")) as f:
                log = f.read()
            self.assertIn("fault=throttle", log)
            self.assertNotIn("fakeMyKeyId", log)
            self.assertNotIn("Signature", log)

    def test_mixed_faults_concurrent_nothing_lost(self):
        """A small correct loader through every fault at once ends with exactly its items."""
        p, port = self.proxy("--seed", "42", "--throttle", "0.1", "--http500", "0.05",
                             "--http503", "0.05", "--reset", "0.05", "--slow", "0.05",
                             "--slow-ms", "100", "--lost-reply", "0.05", "--truncate", "0.03", "--partial", "0.3",
                             "--pk-wcu", "2000", "--pk-burst", "40")
        c = self.client(port, pool=8)
        batches = [self.batch(25, start=100 * b, gsi=self.prefix + "G%d" % (b % 3)) for b in range(24)]
        errors = []

        def worker(mine):
            try:
                for reqs in mine:
                    pending = reqs
                    for _ in range(200):
                        try:
                            r = c.batch_write_item(RequestItems={self.table: pending})
                            pending = r["UnprocessedItems"].get(self.table, [])
                        except botocore.exceptions.ClientError as e:
                            code = e.response["Error"]["Code"]
                            if code not in ("ProvisionedThroughputExceededException",
                                            "InternalServerError", "ServiceUnavailable"):
                                raise
                        except CONN_ERRORS + (botocore.exceptions.ChecksumError,):
                            pass
                        if not pending:
                            break
                        time.sleep(0.01)
                    if pending:
                        raise AssertionError("gave up with %d pending" % len(pending))
            except Exception as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(batches[i::6],)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        expected = {key_of(w) for b in batches for w in b}
        self.assertEqual(set(self.stored()), expected)
        s = http_json(port, "/__stats")
        self.assertGreater(s["faults"]["partial"], 0)
        self.assertGreater(sum(s["faults"].values()) - s["faults"]["partial"], 5)
        self.assertGreaterEqual(s["connections"], 6)


class RawForwardTest(unittest.TestCase):
    """Requests reach the upstream byte for byte (signatures stay valid)."""

    def test_byte_exact_and_expect_continue(self):
        got = []
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        port = srv.getsockname()[1]

        def upstream():
            conn, _ = srv.accept()
            conn.settimeout(10)
            buf = b""
            for _ in range(2):
                while b"\r\n\r\n" not in buf:
                    buf += conn.recv(65536)
                head, _, rest = buf.partition(b"\r\n\r\n")
                n = int([l.split(b":")[1] for l in head.split(b"\r\n")
                         if l.lower().startswith(b"content-length:")][0])
                if b"expect: 100-continue" in head.lower():
                    conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                while len(rest) < n:
                    rest += conn.recv(65536)
                got.append(head + b"\r\n\r\n" + rest[:n])
                buf = rest[n:]
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                             b"Content-Type: application/x-amz-json-1.0\r\n\r\n{}")
            conn.close()

        t = threading.Thread(target=upstream, daemon=True)
        t.start()
        p, pport = start_tool(PROXY, "--upstream", "http://127.0.0.1:%d" % port, "--throttle", "0")
        try:
            body = b'{"RequestItems":{"T":[{"PutRequest":{"Item":{"PK":{"S":"a\\u00e9"}}}}]}}'
            raw1 = (b"POST / HTTP/1.1\r\nHost: example.invalid:1234\r\n"
                    b"X-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\n"
                    b"Authorization: AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/dynamodb/aws4_request,"
                    b" SignedHeaders=host;x-amz-date;x-amz-target, Signature=abc\r\n"
                    b"x-amz-date:   20260101T000000Z\r\n"
                    b"Content-Length: %d\r\n\r\n" % len(body)) + body
            raw2 = (b"POST / HTTP/1.1\r\nHost: h\r\nX-Amz-Target: DynamoDB_20120810.DescribeTable\r\n"
                    b"Expect: 100-continue\r\nContent-Length: 16\r\n\r\n")
            s = socket.create_connection(("127.0.0.1", pport), timeout=10)
            s.sendall(raw1)
            r1 = s.recv(65536)
            self.assertTrue(r1.startswith(b"HTTP/1.1 200 OK"), r1)
            s.sendall(raw2)
            r = s.recv(65536)
            self.assertTrue(r.startswith(b"HTTP/1.1 100 Continue"), r)
            s.sendall(b'{"TableName":"T"}'[:16])
            r2 = r[len(b"HTTP/1.1 100 Continue\r\n\r\n"):]
            while not r2.endswith(b"{}"):
                r2 += s.recv(65536)
            self.assertTrue(r2.startswith(b"HTTP/1.1 200 OK"), r2)
            s.close()
            t.join(10)
            self.assertEqual(got[0], raw1)
            self.assertEqual(got[1], raw2 + b'{"TableName":"T"}'[:16])
        finally:
            stop_tool(p)
            srv.close()


@unittest.skipUnless(os.path.exists(NULLDDB), "nullddb.py missing")
class NullEndpointTest(unittest.TestCase):

    def run_endpoint(self, *args):
        with tempfile.TemporaryDirectory() as d:
            count = os.path.join(d, "count")
            p, port = start_tool(NULLDDB, "--count-file", count, *args)
            try:
                c = client(port)
                self.addCleanup(c.close)
                t = c.describe_table(TableName="Graph")["Table"]
                self.assertEqual(t["TableStatus"], "ACTIVE")
                self.assertEqual([k["AttributeName"] for k in t["KeySchema"]], ["PK", "SK"])
                gsi = t["GlobalSecondaryIndexes"][0]
                self.assertEqual(gsi["IndexName"], "GSI1")
                self.assertEqual([k["AttributeName"] for k in gsi["KeySchema"]], ["GSI1PK", "GSI1SK"])
                r = c.create_table(TableName="Other", KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                                   AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                                   BillingMode="PAY_PER_REQUEST")
                self.assertEqual(r["TableDescription"]["TableStatus"], "ACTIVE")
                reqs = [put("A%d" % i, "T%d" % i, "T%d" % i) for i in range(25)]
                sent = 0
                for _ in range(8):
                    r = c.batch_write_item(RequestItems={"Graph": reqs})
                    self.assertEqual(r["UnprocessedItems"], {})
                    sent += 25
                r = c.batch_write_item(RequestItems={"Graph": reqs}, ReturnConsumedCapacity="INDEXES")
                sent += 25
                self.assertEqual(r["ConsumedCapacity"], [{
                    "TableName": "Graph", "CapacityUnits": 50.0, "Table": {"CapacityUnits": 25.0},
                    "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 25.0}}}])
                r = c.batch_write_item(RequestItems={"Graph": reqs[:3], "Other": [put("x", "y")]},
                                       ReturnConsumedCapacity="TOTAL")
                sent += 4
                self.assertEqual(sorted((e["TableName"], e["CapacityUnits"]) for e in r["ConsumedCapacity"]),
                                 [("Graph", 6.0), ("Other", 1.0)])
                r = c.batch_write_item(RequestItems={"Graph": [
                    {"DeleteRequest": {"Key": {"PK": {"S": "a"}, "SK": {"S": "b"}}}}]})
                sent += 1
                with self.assertRaises(botocore.exceptions.ClientError):
                    c.scan(TableName="Graph")
                s = http_json(port, "/__stats")
                self.assertEqual(s["items"], sent)
                # keep-alive and pipelining: two requests in one write, two answers
                body = json.dumps({"RequestItems": {"Graph": reqs[:2]}}).encode()
                one = (b"POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: DynamoDB_20120810.BatchWriteItem\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(body)) + body
                sk = socket.create_connection(("127.0.0.1", port), timeout=10)
                sk.sendall(one + one)
                data = b""
                while data.count(b'{"UnprocessedItems":{}}') < 2:
                    chunk = sk.recv(65536)
                    self.assertTrue(chunk)
                    data += chunk
                sk.close()
                sent += 4
            finally:
                rc, out, err = stop_tool(p)
            self.assertEqual(rc, 0, err)
            with open(count) as f:
                self.assertEqual(int(f.read()), sent)

    def test_null_endpoint(self):
        self.run_endpoint()

    def test_python_api_proxy_in_front_of_null_endpoint(self):
        sys.path.insert(0, TOOLS)
        sys.dont_write_bytecode = True
        import faultproxy
        with faultproxy.NullProcess() as null, \
                faultproxy.ProxyProcess(null.url, seed=5, partial=1.0, pk_wcu=1000, pk_burst=10) as proxy:
            c = client(proxy.port)
            self.addCleanup(c.close)
            reqs = [put("A%d" % i, "T", "STAR") for i in range(25)]
            r = c.batch_write_item(RequestItems={"Graph": reqs}, ReturnConsumedCapacity="INDEXES")
            un = r["UnprocessedItems"]["Graph"]
            # partial, then at most 10 of the rest under the index key's burst
            self.assertGreaterEqual(len(un), 15)
            landed = 25 - len(un)
            self.assertEqual(null.stats()["items"], landed)
            self.assertEqual(r["ConsumedCapacity"][0]["Table"]["CapacityUnits"], landed)
            s = proxy.stats()
            self.assertEqual(s["items_forwarded"], landed)
            self.assertEqual(s["items_withheld"], len(un))
            self.assertEqual(proxy.config(partial=0)["partial"], 0)
        self.assertEqual(proxy.proc.returncode, 0)
        self.assertEqual(null.proc.returncode, 0)

    def test_null_endpoint_parse_mode(self):
        self.run_endpoint("--parse")

    def test_null_endpoint_two_workers(self):
        self.run_endpoint("--workers", "2")


if __name__ == "__main__":
    unittest.main(verbosity=2)
