"""Shared harness for edgeload's integration tests (stdlib unittest + boto3).

The tests drive the real binary (env EDGELOAD_BIN) against DynamoDB Local
(env EDGELOAD_DDB_ENDPOINT, default http://127.0.0.1:8000) and check what
landed with an independent client, boto3's low-level DynamoDB client, so
every attribute comes back with its DynamoDB type ({"S": ...}, {"N": ...}).

When DynamoDB Local does not answer, the tests are skipped, unless the run
must not skip: env CI or EDGELOAD_REQUIRE_DDB set (scripts/test.sh sets the
latter after starting DynamoDB Local); then they fail.

Every test works on tables of its own, named uniquely and deleted afterwards,
so tests never see each other's items and a shared DynamoDB Local is fine.
"""

import concurrent.futures
import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest
import uuid

import boto3
import botocore.config
import botocore.exceptions

SOURCE_DIR = os.environ.get(
    "EDGELOAD_SOURCE_DIR",
    os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
SAMPLES_DIR = os.path.join(SOURCE_DIR, "samples")
ENDPOINT = os.environ.get("EDGELOAD_DDB_ENDPOINT", "http://127.0.0.1:8000")
REGION = "us-east-1"
INDEX_NAME = "GSI1"

# The environment edgeload and boto3 see: dummy keys (letters and digits
# only: DynamoDB Local rejects others), the local endpoint, and
# nothing from the user's own AWS set-up (profiles, files, other endpoints).
_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "edgeloadtest",
    "AWS_SECRET_ACCESS_KEY": "edgeloadtest",
    "AWS_REGION": REGION,
    "AWS_DEFAULT_REGION": REGION,
    "AWS_ENDPOINT_URL_DYNAMODB": ENDPOINT,
    "AWS_CONFIG_FILE": "/nonexistent/edgeload-test/config",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/edgeload-test/credentials",
    "AWS_EC2_METADATA_DISABLED": "true",
}
for _name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_MAX_ATTEMPTS"):
    os.environ.pop(_name, None)
os.environ.update(_AWS_ENV)


def must_not_skip():
    return bool(os.environ.get("CI") or os.environ.get("EDGELOAD_REQUIRE_DDB"))


def endpoint_host_port():
    """(host, port) of the DynamoDB endpoint the tests run against."""
    host, port = ENDPOINT.split("//")[1].rstrip("/").split(":")
    return host, int(port)


def require_stunnel(tlsfront):
    """Skips the calling class without stunnel4; fails it where tests may not skip."""
    if not tlsfront.stunnel_bin():
        msg = "stunnel4 is not installed (scripts/test.sh installs it)"
        if must_not_skip():
            raise RuntimeError(msg)
        raise unittest.SkipTest(msg)


def edgeload_bin():
    path = os.environ.get("EDGELOAD_BIN")
    if not path:
        for cand in ("build/edgeload", "build-asan/edgeload", "build-tsan/edgeload"):
            cand = os.path.join(SOURCE_DIR, cand)
            if os.access(cand, os.X_OK):
                return cand
    return path


# What ASan, LSan, UBSan and TSan print: a run of a sanitized build that
# reports anything fails the test whatever its exit status.
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "WARNING: ThreadSanitizer", "runtime error: ")


def assert_no_sanitizer_report(stderr):
    for sig in SANITIZER_REPORTS:
        if sig in stderr:
            raise AssertionError("sanitizer report from edgeload:\n" + stderr[-8000:])


# libfaketime for programs with threads (Debian's faketime package)
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"


def faketime_env(offset):
    """The environment that runs edgeload with its wall clock offset (e.g.
    "-10m"; libfaketime preloaded: the binary is linked dynamically); the
    monotonic clock, which times backoff and budgets, stays true. A
    sanitized build must not insist on coming first in the preload list."""
    asan = os.environ.get("ASAN_OPTIONS", "")
    return {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME": offset,
            "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1",
            "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}


def require_faketime(test):
    """Skips test without faketime (fails it where the run must not skip)."""
    if not os.path.exists(FAKETIME_LIB):
        msg = "faketime not installed (scripts/lib.sh installs it): %s" % FAKETIME_LIB
        if must_not_skip():
            raise AssertionError(msg)
        test.skipTest(msg)


_client = None


def client():
    """boto3's low-level DynamoDB client for the local endpoint (one per process)."""
    global _client
    if _client is None:
        _client = boto3.client(
            "dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
            aws_access_key_id=_AWS_ENV["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=_AWS_ENV["AWS_SECRET_ACCESS_KEY"],
            config=botocore.config.Config(
                connect_timeout=3, read_timeout=60, retries={"max_attempts": 3},
                max_pool_connections=16))
    return _client


def ddb_answers():
    probe = boto3.client(
        "dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
        config=botocore.config.Config(connect_timeout=2, read_timeout=5,
                                      retries={"max_attempts": 1}))
    try:
        probe.list_tables(Limit=1)
        return True
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError):
        return False
    finally:
        probe.close()


def serve(test, handler, **attrs):
    """Starts a loopback HTTP server (threaded) with handler, the given
    attributes set on the server object for the handler to read, stopped
    when the test ends. Returns (server, its http:// URL)."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    for name, value in attrs.items():
        setattr(srv, name, value)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    test.addCleanup(srv.server_close)
    test.addCleanup(srv.shutdown)
    return srv, "http://127.0.0.1:%d" % srv.server_address[1]


def send_answer(handler, status, body, headers=()):
    """Writes a DynamoDB-style answer from a BaseHTTPRequestHandler: body
    (bytes, or an object sent as JSON) with its Content-Type and Length."""
    if not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/x-amz-json-1.0")
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def canon(item):
    """An item (DynamoDB JSON) as a canonical string, for set comparisons."""
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def canon_sorted(items):
    return sorted(canon(i) for i in items)


def S(v):
    return {"S": v}


def N(v):
    return {"N": str(v)}


def follow_edge(src, dst, created):
    """The edge item the README's follows mapping makes for `src follows dst` at epoch `created`."""
    return {"PK": S("ACTOR#" + src), "SK": S("TARGET#" + dst),
            "GSI1PK": S("TARGET#" + dst), "GSI1SK": S("ACTOR#" + src),
            "createdAt": N(created), "edgeType": S("FOLLOWS")}


# The follow graph with counters: profiles, and follows that count on them.
FOLLOW_COUNTER_SOURCES = [
    {"name": "users", "pk": "USER#{id}", "sk": "PROFILE", "index": False,
     "attributes": {"name": {"column": "name"}}},
    {"name": "follows", "pk": "ACTOR#{follower_id}", "sk": "TARGET#{followee_id}",
     "attributes": {"edgeType": {"value": "FOLLOWS"}},
     "counters": [
         {"pk": "USER#{followee_id}", "sk": "PROFILE", "attribute": "followerCount"},
         {"pk": "USER#{follower_id}", "sk": "PROFILE", "attribute": "followingCount"}]},
]


class EdgeloadTestCase(unittest.TestCase):
    """Base class: checks binary and DynamoDB Local once, offers helpers."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            msg = "edgeload binary not found (set EDGELOAD_BIN): %r" % (cls.bin,)
            if must_not_skip():
                raise RuntimeError(msg)
            raise unittest.SkipTest(msg)
        if not ddb_answers():
            msg = ("DynamoDB Local does not answer at %s (run scripts/ddb-local.sh start)"
                   % ENDPOINT)
            if must_not_skip():
                raise RuntimeError(msg)
            raise unittest.SkipTest(msg)
        cls.ddb = client()

    # ---- temporary files -------------------------------------------------

    def tmpdir(self):
        d = tempfile.mkdtemp(prefix="edgeload-it-")
        self.addCleanup(shutil.rmtree, d, True)
        return d

    def write_file(self, directory, name, data):
        path = os.path.join(directory, name)
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(path, mode) as f:
            f.write(data)
        return path

    # ---- running the binary ----------------------------------------------

    def run_edgeload(self, *args, cwd=None, stdin=None, timeout=600, env=None):
        """Runs edgeload with args; returns CompletedProcess with text output."""
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        proc = subprocess.run(
            [self.bin] + [str(a) for a in args], cwd=cwd, env=full_env,
            input=stdin if stdin is not None else "", capture_output=True,
            text=True, errors="replace", timeout=timeout)
        assert_no_sanitizer_report(proc.stderr)
        return proc

    def endpoint_args(self):
        return ["--endpoint-url", ENDPOINT, "--region", REGION]

    def load(self, *args, cwd=None, timeout=600):
        """`edgeload load --endpoint-url ... ARGS`; returns CompletedProcess."""
        return self.run_edgeload("load", *self.endpoint_args(), *args,
                                 cwd=cwd, timeout=timeout)

    def write_edges(self, d, pairs):
        """d/edges.csv: a header a,b and one row a pair (a, b); its path."""
        path = os.path.join(d, "edges.csv")
        with open(path, "w") as f:
            f.write("a,b\n")
            for a, b in pairs:
                f.write("%s,%s\n" % (a, b))
        return path

    def load_edges_through_proxy(self, d, path, name, proxy_options, env=None):
        """A fresh table (boto3, with the index); `edgeload load` of path's
        a,b edges (A#{a} -> B#{b}) through a tests/tools/faultproxy.py with
        proxy_options in front of DynamoDB Local, exit 0 checked. Returns
        (table, CompletedProcess, its --stats-json, the proxy's /__stats)."""
        import faultproxy  # tests/tools, on the path of the tests that use it
        table = self.unique_table(name)
        self.create_table_boto(table)
        stats_path = os.path.join(d, name + ".json")
        with faultproxy.ProxyProcess(ENDPOINT, **proxy_options) as proxy:
            proc = self.run_edgeload(
                "load", "--endpoint-url", proxy.url, "--region", "us-east-1",
                "--table", table, "--pk", "A#{a}", "--sk", "B#{b}", "--progress", "none",
                "--stats-json", stats_path, path, env=env, timeout=600)
            ps = proxy.stats()
        self.assertExit(proc, 0)
        with open(stats_path) as f:
            stats = json.load(f)
        return table, proc, stats, ps

    def assertExit(self, proc, code, what="edgeload"):
        self.assertEqual(
            proc.returncode, code,
            "%s exited %d, expected %d\n--- stdout ---\n%s\n--- stderr ---\n%s"
            % (what, proc.returncode, code, proc.stdout[-4000:], proc.stderr[-4000:]))

    # ---- tables ------------------------------------------------------------

    def unique_table(self, prefix="el"):
        """A fresh table name, deleted (if it was created) after the test."""
        name = "%s-%d-%s" % (prefix, os.getpid(), uuid.uuid4().hex[:8])
        self.addCleanup(self.delete_table, name)
        return name

    def create_table_cli(self, name, *extra):
        """Creates the table with `edgeload create-table`; asserts exit 0."""
        proc = self.run_edgeload("create-table", "--table", name,
                                 *self.endpoint_args(), *extra)
        self.assertExit(proc, 0, "edgeload create-table")
        return proc

    def create_table_boto(self, name, index=True, index_name=INDEX_NAME,
                          index_pk="GSI1PK", index_sk="GSI1SK"):
        """Creates the adjacency-list table with boto3 (PK/SK, inverted GSI)."""
        attrs = [{"AttributeName": "PK", "AttributeType": "S"},
                 {"AttributeName": "SK", "AttributeType": "S"}]
        kwargs = {}
        if index:
            attrs += [{"AttributeName": index_pk, "AttributeType": "S"},
                      {"AttributeName": index_sk, "AttributeType": "S"}]
            kwargs["GlobalSecondaryIndexes"] = [{
                "IndexName": index_name,
                "KeySchema": [{"AttributeName": index_pk, "KeyType": "HASH"},
                              {"AttributeName": index_sk, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"}}]
        self.ddb.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST", AttributeDefinitions=attrs,
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                       {"AttributeName": "SK", "KeyType": "RANGE"}], **kwargs)
        self.ddb.get_waiter("table_exists").wait(
            TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})

    def delete_table(self, name):
        try:
            self.ddb.delete_table(TableName=name)
        except self.ddb.exceptions.ResourceNotFoundException:
            pass

    def table_exists(self, name):
        try:
            self.ddb.describe_table(TableName=name)
            return True
        except self.ddb.exceptions.ResourceNotFoundException:
            return False

    # ---- reading back ------------------------------------------------------

    def _paginate(self, op, key, **kwargs):
        out = []
        for page in self.ddb.get_paginator(op).paginate(**kwargs):
            out.extend(page[key])
        return out

    def scan_all(self, table, segments=1, **kwargs):
        """Every item of the table (paginated Scan), in DynamoDB JSON.

        segments > 1 runs a parallel Scan on that many threads: on a big
        table DynamoDB Local answers several segments much faster than one.
        """
        if segments == 1:
            return self._paginate("scan", "Items", TableName=table, **kwargs)
        with concurrent.futures.ThreadPoolExecutor(segments) as pool:
            parts = pool.map(lambda i: self._paginate(
                "scan", "Items", TableName=table, Segment=i, TotalSegments=segments,
                **kwargs), range(segments))
            return [item for part in parts for item in part]

    def query_pk(self, table, pk, **kwargs):
        """Query the base table: PK = pk (the forward direction)."""
        return self._paginate(
            "query", "Items", TableName=table, KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": S(pk)}, **kwargs)

    def query_index(self, table, index_pk, index_name=INDEX_NAME,
                    index_pk_attr="GSI1PK", **kwargs):
        """Query the inverted index: GSI1PK = index_pk (the reverse direction)."""
        return self._paginate(
            "query", "Items", TableName=table, IndexName=index_name,
            KeyConditionExpression="#ipk = :ipk",
            ExpressionAttributeNames={"#ipk": index_pk_attr},
            ExpressionAttributeValues={":ipk": S(index_pk)}, **kwargs)

    def count_pk(self, table, pk):
        return sum(p["Count"] for p in self.ddb.get_paginator("query").paginate(
            TableName=table, KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": S(pk)}, Select="COUNT"))

    def count_index(self, table, index_pk, index_name=INDEX_NAME, index_pk_attr="GSI1PK"):
        return sum(p["Count"] for p in self.ddb.get_paginator("query").paginate(
            TableName=table, IndexName=index_name, KeyConditionExpression="#ipk = :ipk",
            ExpressionAttributeNames={"#ipk": index_pk_attr},
            ExpressionAttributeValues={":ipk": S(index_pk)}, Select="COUNT"))

    def get_item(self, table, pk, sk):
        resp = self.ddb.get_item(TableName=table, Key={"PK": S(pk), "SK": S(sk)},
                                 ConsistentRead=True)
        return resp.get("Item")

    def assertItems(self, actual, expected, msg=None):
        """The same items, order ignored, types included."""
        self.assertEqual(canon_sorted(actual), canon_sorted(expected), msg)

    # ---- samples -------------------------------------------------------------

    def copy_sample(self, name, table):
        """Copies samples/<name> to a temp dir with its mapping's table renamed.

        Returns the path of the copied mapping.json. The mapping's `input`
        paths stay relative, so this also checks they resolve against the
        mapping file's directory, not the current directory.
        """
        dst = os.path.join(self.tmpdir(), name)
        shutil.copytree(os.path.join(SAMPLES_DIR, name), dst)
        mapping_path = os.path.join(dst, "mapping.json")
        with open(mapping_path) as f:
            mapping = json.load(f)
        mapping["table"] = table
        with open(mapping_path, "w") as f:
            json.dump(mapping, f, indent=2)
        return mapping_path


def fnv1a64(data):
    """FNV-1a 64 of bytes: the hash edgeload picks a hot key's shard with
    (pipeline/sharding/shard.c), written again here to check it."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def free_port():
    """A TCP port on 127.0.0.1 nothing listens on (at the time of asking)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sanitized(path):
    """True when the binary carries ASan or TSan (their runtime costs memory
    and time, so tests scale their bounds)."""
    with open(path, "rb") as f:
        data = f.read()
    return b"__asan_init" in data or b"__tsan_init" in data


def read_jsonl(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    unittest.main(verbosity=2)
