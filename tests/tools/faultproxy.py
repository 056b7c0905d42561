#!/usr/bin/python3
"""faultproxy: a fault-injecting HTTP/1.1 proxy in front of DynamoDB Local.

DESIGN
  One thread per client connection (socketserver.ThreadingTCPServer); each
  client connection owns one keep-alive connection to the upstream, opened
  lazily and reopened when the upstream drops it, so a client with N requests
  in flight over N connections gets N upstream connections.  Requests are
  read as raw bytes (request line, header lines, body) and forwarded
  byte-exact, so SigV4 signatures stay valid.  Only when a fault needs a
  different body (a partial batch or per-key throttling withholding some
  writes) is the body re-serialised and the upstream request re-signed with
  botocore's SigV4Auth, using the access key and region of the client's own
  Authorization header unless --access-key/--region say otherwise (DynamoDB
  Local does not check signatures, but keys its database by access key and
  region unless started with -sharedDb).

  Faults are picked per request from one seeded random.Random (under a lock):
  one uniform draw u in [0,1) selects, in this order, throttle, http500,
  http503, reset, slow, lost-reply, partial, truncate or nothing, each taking a slice
  of the width given by its rate.  The per-partition-key token buckets
  (--pk-wcu) are applied after that to whatever is about to be forwarded.
  Before either, hot key ranges (--hot-key, --hot-table-key) and the
  table's limit (--table-limit-wcu) may refuse a batch whole with the
  ThrottlingReasons the service sends, so that a loader can tell a hot key
  from the table's limit; the per-key buckets, like the service's partial
  batches, only hand writes back unprocessed and say no reason.
  With several connections in flight the order in which requests draw is
  the order they arrive, so a seed reproduces the fault mix, not which
  request got which fault.

  With --max-skew S the proxy refuses, as AWS does, a request whose
  X-Amz-Date is more than S seconds from its own clock
  (InvalidSignatureException "Signature expired" or "Signature not yet
  current", its time in the Date header), before any fault: a loader run
  under a faked clock must set its signing clock by that Date
  (--skew-targets limits it to some operations).

  Counters live in one dict under the same lock; GET /__stats returns them,
  /__config reads and changes rates at run time, and --stats-file gets them
  at exit (SIGTERM/SIGINT).  Nothing secret is logged: the log has targets,
  fault kinds, counts and status codes, never headers.
"""

import argparse
import base64
import binascii
import calendar
import collections
import json
import math
import os
import random
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time
import traceback
import zlib

FAULT_KINDS = ("throttle", "http500", "http503", "reset", "slow",
               "lost_reply", "partial", "truncate",
               # after the first eight, so that a seed draws the same faults for them
               "throttling", "http500_applied", "http503_html")

THROTTLE_BODY = (b'{"__type":"com.amazonaws.dynamodb.v20120810#'
                 b'ProvisionedThroughputExceededException","message":"The '
                 b'level of configured provisioned throughput for the table '
                 b'was exceeded. Consider increasing your provisioning level '
                 b'with the UpdateTable API."}')
# The service's wording of a throttle on an on-demand table (it points at hot
# keys); clients are meant to read ThrottlingReasons, not this text.
KEY_RANGE_MSG = ("Throughput exceeds the current capacity of your table or index. DynamoDB is "
                 "automatically scaling your table or index so please try again shortly. If "
                 "exceptions persist, check if you have a hot key: "
                 "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html")
TABLE_LIMIT_MSG = ("The level of configured provisioned throughput for the table was exceeded. "
                   "Consider increasing your provisioning level with the UpdateTable API.")
INDEX_KEY_RANGE = "IndexWriteKeyRangeThroughputExceeded"
TABLE_KEY_RANGE = "TableWriteKeyRangeThroughputExceeded"
TABLE_LIMIT = "TableWriteProvisionedThroughputExceeded"
HTTP500_BODY = (b'{"__type":"com.amazonaws.dynamodb.v20120810#'
                b'InternalServerError","message":"Internal server error"}')
HTTP503_BODY = (b'{"__type":"com.amazonaws.dynamodb.v20120810#'
                b'ServiceUnavailable","message":"Service Unavailable"}')
# ThrottlingException: the other throttle DynamoDB's API answers (a control-
# plane rate), with no reasons
THROTTLING_BODY = (b'{"__type":"com.amazon.coral.availability#ThrottlingException",'
                   b'"message":"Rate of requests exceeds the allowed throughput."}')
# what a load balancer in front of the service answers: not JSON at all
HTTP503_HTML_BODY = (b'<html><head><title>503 Service Temporarily Unavailable</title></head>'
                     b'<body><center><h1>503 Service Temporarily Unavailable</h1></center>'
                     b'</body></html>')

MAX_LINE = 65536
MAX_HEADERS = 200
MAX_BODY = 64 * 1024 * 1024
JSON_CT = b"application/x-amz-json-1.0"
_RID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


class ProtocolError(Exception):
    """The peer sent something that is not HTTP/1.1 we can relay."""


# ---------------------------------------------------------------- HTTP bits

class Message:
    """A parsed HTTP message, keeping the raw header lines for relaying."""

    __slots__ = ("start", "lines", "body", "raw")

    def __init__(self, start, lines, body, raw):
        self.start = start          # bytes, without CRLF
        self.lines = lines          # list of raw header lines, without CRLF
        self.body = body            # bytes (de-chunked)
        self.raw = raw              # bytes exactly as received, or None

    def header(self, name):
        """The value of the first header called name (bytes, lower-case), or None."""
        for line in self.lines:
            k, sep, v = line.partition(b":")
            if sep and k.strip().lower() == name:
                return v.strip()
        return None

    def status(self):
        parts = self.start.split(b" ", 2)
        try:
            return int(parts[1])
        except (IndexError, ValueError):
            return 0


def _read_line(rfile, allow_eof=False):
    line = rfile.readline(MAX_LINE + 1)
    if not line:
        if allow_eof:
            return None
        raise ProtocolError("connection closed mid-message")
    if len(line) > MAX_LINE:
        raise ProtocolError("line too long")
    return line


def _read_head(rfile, allow_eof):
    """Reads a start line and headers; returns (start, lines, raw) or None at EOF."""
    raw = bytearray()
    line = _read_line(rfile, allow_eof)
    while line is not None and line in (b"\r\n", b"\n"):   # tolerate stray CRLF
        line = _read_line(rfile, allow_eof)
    if line is None:
        return None
    raw += line
    start = line.rstrip(b"\r\n")
    lines = []
    while True:
        line = _read_line(rfile)
        raw += line
        if line in (b"\r\n", b"\n"):
            break
        if len(lines) >= MAX_HEADERS:
            raise ProtocolError("too many headers")
        if line[:1] in (b" ", b"\t") and lines:      # obsolete folding
            lines[-1] += b" " + line.strip()
        else:
            lines.append(line.rstrip(b"\r\n"))
    return start, lines, raw


def _read_chunked(rfile, raw):
    body = bytearray()
    while True:
        line = _read_line(rfile)
        raw += line
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise ProtocolError("bad chunk size")
        if size == 0:
            while True:                                # trailers
                t = _read_line(rfile)
                raw += t
                if t in (b"\r\n", b"\n"):
                    return bytes(body)
        if len(body) + size > MAX_BODY:
            raise ProtocolError("body too large")
        chunk = rfile.read(size + 2)
        if len(chunk) != size + 2:
            raise ProtocolError("connection closed mid-chunk")
        raw += chunk
        body += chunk[:size]


def _read_fixed(rfile, n):
    if n > MAX_BODY:
        raise ProtocolError("body too large")
    data = rfile.read(n) if n else b""
    if len(data) != n:
        raise ProtocolError("connection closed mid-body")
    return data


def read_request(rfile, on_expect=None):
    """Reads one request; None at a clean EOF between requests."""
    head = _read_head(rfile, allow_eof=True)
    if head is None:
        return None
    start, lines, raw = head
    msg = Message(start, lines, b"", None)
    if on_expect is not None and (msg.header(b"expect") or b"").lower() == b"100-continue":
        on_expect()
    te = (msg.header(b"transfer-encoding") or b"").lower()
    if te and te != b"identity":
        msg.body = _read_chunked(rfile, raw)
    else:
        cl = msg.header(b"content-length")
        try:
            n = int(cl) if cl is not None else 0
        except ValueError:
            raise ProtocolError("bad content-length")
        msg.body = _read_fixed(rfile, n)
        raw += msg.body
    msg.raw = bytes(raw)
    return msg


def read_response(rfile, method_head=False):
    """Reads one final response (1xx interim responses are skipped)."""
    while True:
        head = _read_head(rfile, allow_eof=False)
        start, lines, raw = head
        msg = Message(start, lines, b"", None)
        code = msg.status()
        if 100 <= code < 200:
            continue
        break
    te = (msg.header(b"transfer-encoding") or b"").lower()
    cl = msg.header(b"content-length")
    if method_head or code in (204, 304):
        pass
    elif te and te != b"identity":
        msg.body = _read_chunked(rfile, raw)
    elif cl is not None:
        try:
            n = int(cl)
        except ValueError:
            raise ProtocolError("bad content-length from upstream")
        msg.body = _read_fixed(rfile, n)
        raw += msg.body
    else:                                              # read to close
        msg.body = rfile.read()
        raw += msg.body
        msg.lines.append(b"X-Faultproxy-Close: 1")
    msg.raw = bytes(raw)
    return msg


AMZ_DATE = "%Y%m%dT%H%M%SZ"


def clock_refusal(req, max_skew, now):
    """The InvalidSignatureException AWS answers a request signed more than
    max_skew seconds away from now, or None when its X-Amz-Date is close
    enough (or absent: unsigned requests are not this check's)."""
    value = (req.header(b"x-amz-date") or b"").decode("latin-1")
    try:
        signed = calendar.timegm(time.strptime(value, AMZ_DATE))
    except ValueError:
        return None
    if abs(signed - now) <= max_skew:
        return None
    fmt = lambda t: time.strftime(AMZ_DATE, time.gmtime(t))
    if signed < now:
        msg = "Signature expired: %s is now earlier than %s (%s - %d min.)" % (
            value, fmt(now - max_skew), fmt(now), max_skew // 60)
    else:
        msg = "Signature not yet current: %s is still later than %s (%s + %d min.)" % (
            value, fmt(now + max_skew), fmt(now), max_skew // 60)
    return json.dumps({"__type": "com.amazon.coral.service#InvalidSignatureException",
                       "message": msg}).encode()


def request_id():
    rnd = random.SystemRandom()
    return "".join(rnd.choice(_RID_ALPHABET) for _ in range(52))


def build_response(code, reason, body, extra_lines=(), keep_alive=True):
    """A DynamoDB-shaped response: request id, CRC32 of the body, JSON type."""
    lines = [
        b"HTTP/1.1 %d %s" % (code, reason.encode()),
        b"Server: Server",
        b"Date: " + time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime()).encode(),
        b"Content-Type: " + JSON_CT,
        b"Content-Length: %d" % len(body),
        b"Connection: " + (b"keep-alive" if keep_alive else b"close"),
        b"x-amzn-RequestId: " + request_id().encode(),
        b"x-amz-crc32: %d" % (zlib.crc32(body) & 0xFFFFFFFF),
    ]
    lines.extend(extra_lines)
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def rebuild_response(upstream, body):
    """The upstream's response with a new body (length and CRC32 recomputed)."""
    lines = []
    for line in upstream.lines:
        k = line.partition(b":")[0].strip().lower()
        if k in (b"content-length", b"x-amz-crc32", b"transfer-encoding",
                 b"x-faultproxy-close"):
            continue
        lines.append(line)
    lines.append(b"Content-Length: %d" % len(body))
    lines.append(b"x-amz-crc32: %d" % (zlib.crc32(body) & 0xFFFFFFFF))
    return upstream.start + b"\r\n" + b"\r\n".join(lines) + b"\r\n\r\n" + body


# ------------------------------------------------------- DynamoDB item model

def _num_size(text):
    """DynamoDB's size of a number: about one byte per two significant digits, plus one."""
    digits = text.strip().lstrip("+-").lower().split("e")[0].replace(".", "")
    digits = digits.strip("0") or "0"
    return 1 + (len(digits) + 1) // 2


def _b_size(text):
    try:
        return len(base64.b64decode(text, validate=False))
    except (binascii.Error, ValueError):
        return len(text)


def value_size(v):
    """Approximates DynamoDB's storage size of one AttributeValue (bytes)."""
    if not isinstance(v, dict) or not v:
        return 1
    t, x = next(iter(v.items()))
    if t == "S":
        return len(x.encode("utf-8"))
    if t == "N":
        return _num_size(x)
    if t == "B":
        return _b_size(x)
    if t in ("BOOL", "NULL"):
        return 1
    if t == "SS":
        return sum(len(s.encode("utf-8")) for s in x)
    if t == "NS":
        return sum(_num_size(s) for s in x)
    if t == "BS":
        return sum(_b_size(s) for s in x)
    if t == "L":
        return 3 + sum(1 + value_size(e) for e in x)
    if t == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(e) for k, e in x.items())
    return 1


def item_size(item):
    """DynamoDB's size of an item: attribute names plus values (UTF-8 bytes)."""
    total = 0
    for k, v in item.items():
        total += len(k) if k.isascii() else len(k.encode("utf-8"))
        s = v.get("S") if isinstance(v, dict) and len(v) == 1 else None
        if s is not None and isinstance(s, str):       # fast path: the common string
            total += len(s) if s.isascii() else len(s.encode("utf-8"))
        else:
            total += value_size(v)
    return total


def item_wcu(item):
    """Write capacity units of a put of item: ceil(size / 1 KB), at least 1."""
    try:
        size = item_size(item)
    except (AttributeError, TypeError, ValueError):      # malformed value: its JSON size
        size = len(json.dumps(item))
    return max(1, math.ceil(size / 1024.0))


def _scalar_key(v):
    """A hashable bucket key for a key attribute's value."""
    if isinstance(v, dict) and v:
        t, x = next(iter(v.items()))
        return t + ":" + (x if isinstance(x, str) else json.dumps(x, sort_keys=True))
    return json.dumps(v, sort_keys=True)


class TokenBuckets:
    """Per partition-key-value token buckets: rate WCU/s, capacity burst WCU."""

    def __init__(self, rate, burst):
        self.rate = float(rate)
        self.burst = float(burst)
        self.buckets = {}          # key -> [tokens, last_refill]

    def _level(self, key, now):
        b = self.buckets.get(key)
        if b is None:
            b = [self.burst, now]
            self.buckets[key] = b
        else:
            b[0] = min(self.burst, b[0] + (now - b[1]) * self.rate)
            b[1] = now
        return b

    def try_take(self, keys, cost, now):
        """Takes cost from every bucket in keys if all hold enough; True if taken."""
        levels = [self._level(k, now) for k in keys]
        if any(b[0] < cost for b in levels):
            return False
        for b in levels:
            b[0] -= cost
        return True

    def trim(self, now):
        """Drops buckets that are full again (bounded memory on long runs)."""
        if len(self.buckets) < 200000:
            return
        full = [k for k, b in self.buckets.items()
                if b[0] + (now - b[1]) * self.rate >= self.burst]
        for k in full:
            del self.buckets[k]


class RateBucket:
    """One token bucket of rate WCU/s holding at most burst WCU, which may go
    into debt: a request is admitted when the bucket holds its cost, or is
    full (a request costing more than the burst would otherwise never pass;
    the debt it leaves keeps the long-run rate at `rate`).  rate <= 0: no limit."""

    __slots__ = ("tokens", "last")

    def __init__(self, burst, now):
        self.tokens = burst
        self.last = now

    def admits(self, cost, rate, burst, now):
        if rate <= 0:
            return True
        self.tokens = min(burst, self.tokens + (now - self.last) * rate)
        self.last = now
        return self.tokens >= min(cost, burst)

    def take(self, cost, rate):
        if rate > 0:
            self.tokens -= cost


def throttle_body(reasons, message):
    """The body of a throttle that says why, in the service's shape:
    {"__type": "...#ProvisionedThroughputExceededException", "message": ...,
     "ThrottlingReasons": [{"reason": R, "resource": ARN}, ...]}."""
    return json.dumps({
        "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "message": message,
        "ThrottlingReasons": [{"reason": r, "resource": a} for r, a in reasons],
    }, separators=(",", ":")).encode()


def table_arn(region, account, table, index=None):
    """The ARN DynamoDB names a table (or one of its indexes) by."""
    arn = "arn:aws:dynamodb:%s:%s:table/%s" % (region, account, table)
    return arn + "/index/" + index if index else arn


def client_scope(req):
    """(access key id, region, service) of the request's SigV4 credential scope,
    defaults when it has none."""
    auth = (req.header(b"authorization") or b"").decode("latin-1")
    akid, region, service = "faultproxy", "us-east-1", "dynamodb"
    i = auth.find("Credential=")
    if i >= 0:
        scope = auth[i + len("Credential="):].split(",", 1)[0].strip().split("/")
        if len(scope) >= 5:
            akid, region, service = scope[0], scope[2], scope[3]
    return akid, region, service


def consumed_capacity(mode, per_table, index_attr, index_name):
    """ConsumedCapacity as DynamoDB shapes it for BatchWriteItem.

    per_table: {table: (table_wcu, index_wcu)}.
    """
    out = []
    for table, (twcu, iwcu) in per_table.items():
        if mode == "INDEXES":
            entry = {"TableName": table, "CapacityUnits": float(twcu + iwcu),
                     "Table": {"CapacityUnits": float(twcu)}}
            if iwcu and index_name:
                entry["GlobalSecondaryIndexes"] = {index_name: {"CapacityUnits": float(iwcu)}}
            out.append(entry)
        else:
            out.append({"TableName": table, "CapacityUnits": float(twcu + iwcu)})
    return out


# ------------------------------------------------------------------ the proxy

class Config:
    def __init__(self, args):
        self.rates = {k: float(getattr(args, k)) for k in FAULT_KINDS}
        self.slow_ms = float(args.slow_ms)
        self.targets = set(t.strip() for t in args.targets.split(",") if t.strip())
        self.pk_wcu = float(args.pk_wcu)
        self.pk_burst = float(args.pk_burst) if args.pk_burst is not None else self.pk_wcu * 0.3
        self.pk_attr = args.pk_attr
        self.index_pk_attr = args.index_pk_attr
        self.index_name = args.index_name
        self.partial_max = float(args.partial_max)
        self.hot_keys = set(args.hot_key or ())
        self.hot_table_keys = set(args.hot_table_key or ())
        self.hot_wcu = float(args.hot_wcu)
        self.hot_burst = float(args.hot_burst) if args.hot_burst is not None else self.hot_wcu * 0.3
        self.table_limit_wcu = float(args.table_limit_wcu)
        self.table_limit_burst = (float(args.table_limit_burst) if args.table_limit_burst is not None
                                  else self.table_limit_wcu * 0.3)
        self.max_skew = float(args.max_skew)
        self.skew_targets = set(t.strip() for t in args.skew_targets.split(",") if t.strip())

    def refusing(self):
        """True when a batch may be refused whole with ThrottlingReasons, so
        every batch has to be parsed and its writes classified."""
        return bool(self.hot_keys or self.hot_table_keys or self.table_limit_wcu > 0)

    def as_json(self):
        d = dict(self.rates)
        d.update(slow_ms=self.slow_ms, targets=sorted(self.targets),
                 pk_wcu=self.pk_wcu, pk_burst=self.pk_burst, pk_attr=self.pk_attr,
                 index_pk_attr=self.index_pk_attr, index_name=self.index_name,
                 partial_max=self.partial_max, hot_keys=sorted(self.hot_keys),
                 hot_table_keys=sorted(self.hot_table_keys), hot_wcu=self.hot_wcu,
                 hot_burst=self.hot_burst, table_limit_wcu=self.table_limit_wcu,
                 table_limit_burst=self.table_limit_burst, max_skew=self.max_skew,
                 skew_targets=sorted(self.skew_targets))
        return d

    def update(self, d):
        for k, v in d.items():
            if k in self.rates:
                v = float(v)
                if not 0.0 <= v <= 1.0:
                    raise ValueError("%s must be in [0,1]" % k)
                self.rates[k] = v
            elif k == "slow_ms":
                self.slow_ms = float(v)
            elif k == "targets":
                self.targets = set(v if isinstance(v, list) else str(v).split(","))
            elif k == "skew_targets":
                self.skew_targets = set(v if isinstance(v, list) else str(v).split(","))
            elif k in ("pk_wcu", "pk_burst", "partial_max", "hot_wcu", "hot_burst",
                       "table_limit_wcu", "table_limit_burst", "max_skew"):
                setattr(self, k, float(v))
            elif k in ("hot_keys", "hot_table_keys"):
                if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                    raise ValueError("%s must be a list of strings" % k)
                setattr(self, k, set(v))
            elif k in ("pk_attr", "index_pk_attr", "index_name"):
                setattr(self, k, str(v) if v else None)
            else:
                raise ValueError("unknown setting %r" % k)
        if sum(self.rates.values()) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")


class Proxy:
    """Shared state: configuration, RNG, token buckets and counters."""

    def __init__(self, args):
        self.args = args
        self.cfg = Config(args)
        if sum(self.cfg.rates.values()) > 1.0 + 1e-9:
            raise SystemExit("faultproxy: fault rates add up to more than 1")
        self.lock = threading.Lock()
        self.rng = random.Random(args.seed)
        self.buckets = TokenBuckets(self.cfg.pk_wcu, self.cfg.pk_burst)
        self.hot_buckets = {}      # ("I"|"T", table, key value) -> RateBucket (--hot-key/--hot-table-key)
        self.table_buckets = {}    # table -> RateBucket (--table-limit-wcu)
        self.started = time.time()
        self.stats = self._zero_stats()
        up = args.upstream
        if up.startswith("http://"):
            up = up[len("http://"):]
        elif "://" in up:
            raise SystemExit("faultproxy: only http:// upstreams are supported")
        up = up.rstrip("/")
        host, _, port = up.rpartition(":")
        self.upstream_netloc = up
        self.upstream_addr = (host or up, int(port) if port else 80)
        self.log_file = None
        self.log_lock = threading.Lock()
        self.capture_file = open(args.capture, "a", buffering=1) if getattr(args, "capture", None) else None
        if args.log == "-":
            self.log_file = sys.stderr
        elif args.log:
            self.log_file = open(args.log, "a", buffering=1)

    @staticmethod
    def _zero_stats():
        return {
            "requests": 0,
            "by_target": collections.Counter(),
            "faults": collections.Counter({k: 0 for k in FAULT_KINDS + (
                "pk_throttle", "hot_key_throttle", "table_limit_throttle")}),
            # throttles answered with ThrottlingReasons, by reason (one per answer and reason)
            "throttled_by_reason": collections.Counter(),
            "items_refused": 0,
            # writes forwarded and answered 200, per class (a hot key's or
            # not), with the wall-clock times of the first and last such
            # answer: the throughput of the keys that are not hot is
            # other.items / (other.last - other.first)
            "classes": {c: {"items": 0, "first": None, "last": None} for c in ("hot", "other")},
            "batch_requests": 0,
            "items_received": 0,
            "items_forwarded": 0,
            "items_withheld": 0,
            "items_withheld_partial": 0,
            "items_withheld_pk": 0,
            "items_lost_reply": 0,
            "items_upstream_unprocessed": 0,
            "upstream_status": collections.Counter(),
            "upstream_errors": 0,
            "client_errors": 0,
            "connections": 0,
            "clock_refused": 0,        # --max-skew refusals
        }

    def snapshot(self):
        with self.lock:
            s = {k: (dict(v) if isinstance(v, collections.Counter) else
                     json.loads(json.dumps(v)) if isinstance(v, dict) else v)
                 for k, v in self.stats.items()}
        s["uptime_s"] = round(time.time() - self.started, 3)
        s["seed"] = self.args.seed
        return s

    def count(self, key, n=1, sub=None):
        with self.lock:
            if sub is None:
                self.stats[key] += n
            else:
                self.stats[key][sub] += n

    def capture(self, t_arrival, target, req_body, out, delivered):
        """One line of --capture: what was asked and what was answered."""
        if self.capture_file is None:
            return
        head, _, body = out.partition(b"\r\n\r\n")
        try:
            status = int(head.split(b" ", 2)[1])
        except (IndexError, ValueError):
            status = 0
        if b"transfer-encoding: chunked" in head.lower():
            plain, rest = b"", body
            while rest:
                size_line, _, rest = rest.partition(b"\r\n")
                try:
                    n = int(size_line.split(b";")[0], 16)
                except ValueError:
                    break
                if n == 0:
                    break
                plain, rest = plain + rest[:n], rest[n + 2:]
            body = plain

        def parse(b):
            try:
                return json.loads(b)
            except ValueError:
                return None
        line = json.dumps({"t0": t_arrival, "t1": time.time(), "target": target,
                           "status": status, "delivered": delivered,
                           "request": parse(req_body), "answer": parse(body)})
        with self.log_lock:
            self.capture_file.write(line + "\n")

    def log(self, fmt, *a):
        if self.log_file is None:
            return
        line = "%.3f %s\n" % (time.time(), fmt % a)
        with self.log_lock:
            self.log_file.write(line)

    def write_stats_file(self):
        path = self.args.stats_file
        if not path:
            return
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.snapshot(), f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def pick_fault(self, target):
        """Draws the fault for one request; None for a clean pass."""
        with self.lock:
            if target not in self.cfg.targets:
                return None
            u = self.rng.random()
            edge = 0.0
            for k in FAULT_KINDS:
                edge += self.cfg.rates[k]
                if u < edge:
                    return k
        return None

    def choose_withheld(self, n):
        """Indices (of n writes) a partial fault withholds: at least one, never all."""
        with self.lock:
            if n < 2:
                return set()
            hi = max(1, min(n - 1, int(math.floor(n * self.cfg.partial_max))))
            k = self.rng.randint(1, hi)
            return set(self.rng.sample(range(n), k))


class Handler(socketserver.BaseRequestHandler):
    """Serves one client connection until it closes or a fault ends it."""

    def setup(self):
        self.p = self.server.proxy
        self.sock = self.request
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rfile = self.sock.makefile("rb", buffering=65536)
        self.up = None
        self.up_rfile = None
        self.p.count("connections")

    def finish(self):
        self._close_upstream()
        try:
            self.rfile.close()
        except OSError:
            pass

    # -- connection helpers

    def _send(self, data):
        self.sock.sendall(data)

    def _reset_client(self):
        """Closes the client connection with an RST (SO_LINGER 0)."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        try:
            self.rfile.close()
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass

    def _close_upstream(self):
        if self.up is not None:
            try:
                self.up_rfile.close()
                self.up.close()
            except OSError:
                pass
        self.up = None
        self.up_rfile = None

    def _upstream_roundtrip(self, data):
        """Sends one request upstream and reads its response; retries once on a stale connection."""
        for attempt in (0, 1):
            fresh = self.up is None
            try:
                if fresh:
                    self.up = socket.create_connection(self.p.upstream_addr, timeout=self.p.args.upstream_timeout)
                    self.up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.up_rfile = self.up.makefile("rb", buffering=65536)
                self.up.sendall(data)
                resp = read_response(self.up_rfile)
            except (OSError, ProtocolError):
                self._close_upstream()
                if fresh or attempt == 1:
                    raise
                continue
            conn = (resp.header(b"connection") or b"").lower()
            if conn == b"close" or resp.header(b"x-faultproxy-close") is not None:
                self._close_upstream()
            return resp
        raise OSError("unreachable")

    # -- the request loop

    def handle(self):
        while True:
            try:
                req = read_request(self.rfile, on_expect=lambda: self._send(b"HTTP/1.1 100 Continue\r\n\r\n"))
            except (OSError, ProtocolError, ValueError):
                return
            if req is None:
                return
            try:
                keep = self.serve(req)
            except (OSError, ProtocolError) as e:
                self.p.log("client connection error: %s", e.__class__.__name__)
                return
            if not keep:
                return

    def serve(self, req):
        """Serves one request; returns False when the connection must end."""
        parts = req.start.split(b" ")
        method = parts[0] if parts else b""
        path = parts[1] if len(parts) > 1 else b"/"
        version = parts[2] if len(parts) > 2 else b"HTTP/1.0"
        client_close = (req.header(b"connection") or b"").lower() == b"close" or version == b"HTTP/1.0"
        if path.startswith(b"/__"):
            return self.control(method, path, req) and not client_close

        target_h = req.header(b"x-amz-target") or b""
        target = target_h.decode("latin-1").rpartition(".")[2]
        p = self.p
        t_arrival = time.time()
        p.count("requests")
        p.count("by_target", 1, target or "(none)")
        cfg = p.cfg
        if cfg.max_skew > 0 and (not cfg.skew_targets or target in cfg.skew_targets):
            refusal = clock_refusal(req, int(cfg.max_skew), time.time())
            if refusal is not None:
                p.count("clock_refused")
                p.log("%s clock refused", target)
                self._send(build_response(400, "Bad Request", refusal,
                                          keep_alive=not client_close))
                return not client_close
        fault = p.pick_fault(target)

        if fault in ("throttle", "http500", "http503", "throttling", "http503_html"):
            p.count("faults", 1, fault)
            code, reason, body = {
                "throttle": (400, "Bad Request", THROTTLE_BODY),
                "http500": (500, "Internal Server Error", HTTP500_BODY),
                "http503": (503, "Service Unavailable", HTTP503_BODY),
                "throttling": (400, "Bad Request", THROTTLING_BODY),
                "http503_html": (503, "Service Unavailable", HTTP503_HTML_BODY),
            }[fault]
            self._count_batch_received(req, target)
            p.log("%s fault=%s", target, fault)
            self._send(build_response(code, reason, body, keep_alive=not client_close))
            return not client_close
        if fault == "reset":
            p.count("faults", 1, fault)
            self._count_batch_received(req, target)
            p.log("%s fault=reset", target)
            self._reset_client()
            return False
        if fault == "slow":
            p.count("faults", 1, fault)
            time.sleep(p.cfg.slow_ms / 1000.0)

        if target == "BatchWriteItem":
            out = self.batch(req, fault)
        else:
            out = self.forward(req)[0]
        p.capture(t_arrival, target, req.body, out, delivered=fault not in ("lost_reply",))
        if fault == "http500_applied":
            # the write went through; the answer says it failed
            p.count("faults", 1, fault)
            p.log("%s fault=http500_applied", target)
            self._send(build_response(500, "Internal Server Error", HTTP500_BODY,
                                      keep_alive=not client_close))
            return not client_close
        if fault == "lost_reply":
            p.count("faults", 1, fault)
            p.log("%s fault=lost_reply", target)
            self._reset_client()
            return False
        if fault == "truncate":
            # Headers (with the full Content-Length) and half the body, then FIN.
            p.count("faults", 1, fault)
            p.log("%s fault=truncate", target)
            he = out.find(b"\r\n\r\n") + 4
            self._send(out[:he + (len(out) - he) // 2])
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return False
        self._send(out)
        closing = b"\r\nconnection: close\r\n" in out[:out.find(b"\r\n\r\n") + 2].lower()
        return not (client_close or closing)

    def _count_batch_received(self, req, target):
        if target != "BatchWriteItem":
            return
        try:
            doc = json.loads(req.body)
            n = sum(len(v) for v in doc.get("RequestItems", {}).values())
        except (ValueError, AttributeError, TypeError):
            n = 0
        with self.p.lock:
            self.p.stats["batch_requests"] += 1
            self.p.stats["items_received"] += n

    def forward(self, req, data=None):
        """Relays a request as-is (or the given re-signed bytes).

        Returns (bytes for the client, parsed upstream response or None when
        the upstream could not be reached).
        """
        try:
            resp = self._upstream_roundtrip(data if data is not None else req.raw)
        except (OSError, ProtocolError) as e:
            self.p.count("upstream_errors")
            self.p.log("upstream error: %s", e.__class__.__name__)
            body = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError",
                               "message": "faultproxy: upstream unreachable (%s)" % e.__class__.__name__}).encode()
            return build_response(502, "Bad Gateway", body), None
        self.p.count("upstream_status", 1, str(resp.status()))
        return resp.raw, resp

    def resign(self, req, body):
        """The request with a new body, signed anew with SigV4 (botocore)."""
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        args = self.p.args
        akid, region, service = client_scope(req)
        akid = args.access_key or akid
        region = args.region or region
        token = req.header(b"x-amz-security-token")
        creds = Credentials(akid, args.secret_key or "faultproxy-secret",
                            token.decode("latin-1") if token else None)
        drop = {b"authorization", b"x-amz-date", b"x-amz-content-sha256",
                b"x-amz-security-token", b"content-length", b"transfer-encoding", b"expect"}
        headers = collections.OrderedDict()
        for line in req.lines:
            k, _, v = line.partition(b":")
            if k.strip().lower() in drop:
                continue
            headers[k.strip().decode("latin-1")] = v.strip().decode("latin-1")
        parts = req.start.split(b" ")
        path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
        host = req.header(b"host")
        url = "http://%s%s" % (host.decode("latin-1") if host else self.p.upstream_netloc, path)
        areq = AWSRequest(method="POST", url=url, data=body, headers=headers)
        SigV4Auth(creds, service, region).add_auth(areq)
        out = [b"POST " + path.encode("latin-1") + b" HTTP/1.1"]
        for k, v in areq.headers.items():
            out.append(k.encode("latin-1") + b": " + v.encode("latin-1"))
        out.append(b"Content-Length: %d" % len(body))
        return b"\r\n".join(out) + b"\r\n\r\n" + body

    def batch(self, req, fault):
        """BatchWriteItem: partial withholding and token buckets, then forwarding."""
        p = self.p
        if fault != "partial" and p.cfg.pk_wcu <= 0 and not p.cfg.refusing():
            # Nothing can change the body: relay it unparsed (writes counted by a byte search).
            n = req.body.count(b'"PutRequest"') + req.body.count(b'"DeleteRequest"')
            with p.lock:
                p.stats["batch_requests"] += 1
                p.stats["items_received"] += n
            out, resp = self.forward(req)
            self._account_forwarded(n, resp, fault)
            p.log("BatchWriteItem items=%d fwd=%d fault=%s status=%s", n, n, fault or "-",
                  resp.status() if resp else "none")
            return out
        try:
            doc = json.loads(req.body)
            items = doc["RequestItems"]
            assert isinstance(items, dict)
            for ws in items.values():
                assert isinstance(ws, list)
                for w in ws:
                    assert isinstance(w, dict)
                    for r in w.values():
                        assert isinstance(r, dict)
                        assert isinstance(r.get("Item", r.get("Key", {})), dict)
        except (ValueError, KeyError, TypeError, AssertionError):
            # Malformed: DynamoDB Local answers it (a ValidationException, as the service would).
            p.log("BatchWriteItem: malformed body, relayed as-is")
            return self.forward(req)[0]
        flat = [(t, w) for t, ws in items.items() for w in ws]
        n = len(flat)
        with p.lock:
            p.stats["batch_requests"] += 1
            p.stats["items_received"] += n

        hot = None
        if p.cfg.refusing():
            refusal, hot = self._refuse_whole(req, flat)
            if refusal is not None:
                return refusal
        withheld_partial = set()
        if fault == "partial":
            withheld_partial = p.choose_withheld(n)
            if withheld_partial:
                p.count("faults", 1, "partial")
        withheld_pk = set()
        cfg = p.cfg
        if cfg.pk_wcu > 0:
            now = time.monotonic()
            with p.lock:
                b = p.buckets
                b.rate, b.burst = cfg.pk_wcu, cfg.pk_burst
                for i, (table, w) in enumerate(flat):
                    if i in withheld_partial:
                        continue
                    keys, cost = self._bucket_keys(table, w)
                    if keys and not b.try_take(keys, cost, now):
                        withheld_pk.add(i)
                b.trim(now)

        withheld = withheld_partial | withheld_pk
        if not withheld:
            out, resp = self.forward(req)
            self._account_forwarded(n, resp, fault)
            self._account_classes(hot, range(n), resp)
            p.log("BatchWriteItem items=%d fwd=%d fault=%s status=%s", n, n, fault or "-",
                  resp.status() if resp else "none")
            return out

        with p.lock:
            p.stats["items_withheld"] += len(withheld)
            p.stats["items_withheld_partial"] += len(withheld_partial)
            p.stats["items_withheld_pk"] += len(withheld_pk)
        kept = collections.OrderedDict()
        held = collections.OrderedDict()
        for i, (table, w) in enumerate(flat):
            (held if i in withheld else kept).setdefault(table, []).append(w)

        mode = doc.get("ReturnConsumedCapacity", "NONE")
        if not kept:
            # Every write is over its partition's budget: the service throttles the call.
            p.count("faults", 1, "pk_throttle")
            p.log("BatchWriteItem items=%d fwd=0 fault=pk_throttle", n)
            return build_response(400, "Bad Request", THROTTLE_BODY)

        sub = dict(doc)
        sub["RequestItems"] = kept
        body = json.dumps(sub, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        out, resp = self.forward(req, self.resign(req, body))
        fwd = n - len(withheld)
        self._account_classes(hot, (i for i in range(n) if i not in withheld), resp)
        if resp is None or resp.status() != 200:
            # Upstream failed: the client sees that failure as it is.
            p.log("BatchWriteItem items=%d fwd=%d upstream failed", n, fwd)
            return out
        try:
            rdoc = json.loads(resp.body)
        except ValueError:
            rdoc = {}
        un = rdoc.get("UnprocessedItems") or {}
        up_un = sum(len(v) for v in un.values())
        merged = collections.OrderedDict((t, list(v)) for t, v in un.items())
        for table, ws in held.items():
            merged.setdefault(table, []).extend(ws)
        rdoc["UnprocessedItems"] = merged
        if mode in ("TOTAL", "INDEXES") and "ConsumedCapacity" not in rdoc:
            rdoc["ConsumedCapacity"] = self._capacity(kept, mode)
        with p.lock:
            p.stats["items_forwarded"] += fwd
            p.stats["items_upstream_unprocessed"] += up_un
            if fault in ("lost_reply", "truncate"):
                p.stats["items_lost_reply"] += fwd
        newbody = json.dumps(rdoc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        p.log("BatchWriteItem items=%d fwd=%d withheld_partial=%d withheld_pk=%d fault=%s",
              n, fwd, len(withheld_partial), len(withheld_pk), fault or "-")
        return rebuild_response(resp, newbody)

    def _refuse_whole(self, req, flat):
        """--hot-key, --hot-table-key, --table-limit-wcu: the throttles that say why.

        The writes of the batch are priced (a put ceil(size/1 KB) WCU, a
        delete 1) per hot index key value, per hot table key value and per
        table.  If one of those buckets does not admit its share, the whole
        request is refused, as the service refuses a request that meets a
        hot key range or the table's limit: 400
        ProvisionedThroughputExceededException with one ThrottlingReasons
        entry per bucket that refused (the index's ARN for an index key,
        the table's otherwise), and nothing is charged or forwarded.  Else
        every bucket is charged.  Returns (the answer or None, a list saying
        for each write whether it is a hot key's)."""
        p = self.p
        cfg = p.cfg
        need = collections.OrderedDict()      # bucket key -> cost
        table_need = collections.OrderedDict()
        hot = []
        for table, w in flat:
            if "PutRequest" in w:
                item = w["PutRequest"].get("Item", {})
                cost = item_wcu(item)
            else:
                item = (w.get("DeleteRequest") or {}).get("Key", {})
                cost = 1
            is_hot = False
            iv = item.get(cfg.index_pk_attr) if cfg.index_pk_attr else None
            if isinstance(iv, dict) and iv.get("S") in cfg.hot_keys:
                k = ("I", table, iv["S"])
                need[k] = need.get(k, 0) + cost
                is_hot = True
            tv = item.get(cfg.pk_attr) if cfg.pk_attr else None
            if isinstance(tv, dict) and tv.get("S") in cfg.hot_table_keys:
                k = ("T", table, tv["S"])
                need[k] = need.get(k, 0) + cost
                is_hot = True
            table_need[table] = table_need.get(table, 0) + cost
            hot.append(is_hot)
        akid, region, _ = client_scope(req)
        region = p.args.region or region
        now = time.monotonic()
        reasons = []
        with p.lock:
            for k, cost in need.items():
                b = p.hot_buckets.get(k)
                if b is None:
                    b = p.hot_buckets[k] = RateBucket(cfg.hot_burst, now)
                if not b.admits(cost, cfg.hot_wcu, cfg.hot_burst, now):
                    kind, table, _ = k
                    r = (INDEX_KEY_RANGE, table_arn(region, p.args.account_id, table, cfg.index_name)) \
                        if kind == "I" else (TABLE_KEY_RANGE, table_arn(region, p.args.account_id, table))
                    if r not in reasons:
                        reasons.append(r)
            key_range = bool(reasons)
            for table, cost in table_need.items():
                b = p.table_buckets.get(table)
                if b is None:
                    b = p.table_buckets[table] = RateBucket(cfg.table_limit_burst, now)
                if not b.admits(cost, cfg.table_limit_wcu, cfg.table_limit_burst, now):
                    reasons.append((TABLE_LIMIT, table_arn(region, p.args.account_id, table)))
            if reasons:
                p.stats["faults"]["hot_key_throttle" if key_range else "table_limit_throttle"] += 1
                for r, _ in reasons:
                    p.stats["throttled_by_reason"][r] += 1
                p.stats["items_refused"] += len(flat)
            else:
                for k, cost in need.items():
                    p.hot_buckets[k].take(cost, cfg.hot_wcu)
                for table, cost in table_need.items():
                    p.table_buckets[table].take(cost, cfg.table_limit_wcu)
        if not reasons:
            return None, hot
        p.log("BatchWriteItem items=%d fwd=0 fault=%s reasons=%s", len(flat),
              "hot_key" if key_range else "table_limit", ",".join(r for r, _ in reasons))
        body = throttle_body(reasons, KEY_RANGE_MSG if key_range else TABLE_LIMIT_MSG)
        return build_response(400, "Bad Request", body), hot

    def _account_classes(self, hot, forwarded, resp):
        """Counts the forwarded writes per class once the upstream said 200."""
        if hot is None or resp is None or resp.status() != 200:
            return
        n_hot = n_other = 0
        for i in forwarded:
            if hot[i]:
                n_hot += 1
            else:
                n_other += 1
        now = time.time()
        with self.p.lock:
            for name, k in (("hot", n_hot), ("other", n_other)):
                if not k:
                    continue
                c = self.p.stats["classes"][name]
                c["items"] += k
                if c["first"] is None:
                    c["first"] = now
                c["last"] = now

    def _account_forwarded(self, n, resp, fault):
        ok = resp is not None and resp.status() == 200
        up_un = 0
        if ok and b'"UnprocessedItems":{}' not in resp.body:
            try:
                un = json.loads(resp.body).get("UnprocessedItems") or {}
                up_un = sum(len(v) for v in un.values())
            except (ValueError, AttributeError):
                pass
        with self.p.lock:
            if ok:
                self.p.stats["items_forwarded"] += n
                self.p.stats["items_upstream_unprocessed"] += up_un
                if fault in ("lost_reply", "truncate"):
                    self.p.stats["items_lost_reply"] += n

    def _bucket_keys(self, table, w):
        cfg = self.p.cfg
        if "PutRequest" in w:
            item = w["PutRequest"].get("Item", {})
            cost = item_wcu(item)
        elif "DeleteRequest" in w:
            item = w["DeleteRequest"].get("Key", {})
            cost = 1
        else:
            return [], 0
        keys = []
        if cfg.pk_attr and cfg.pk_attr in item:
            keys.append((table, "", _scalar_key(item[cfg.pk_attr])))
        if cfg.index_pk_attr and cfg.index_pk_attr in item:
            keys.append((table, cfg.index_pk_attr, _scalar_key(item[cfg.index_pk_attr])))
        return keys, cost

    def _capacity(self, kept, mode):
        cfg = self.p.cfg
        per = {}
        for table, ws in kept.items():
            twcu = iwcu = 0
            for w in ws:
                if "PutRequest" in w:
                    item = w["PutRequest"].get("Item", {})
                    c = item_wcu(item)
                    twcu += c
                    if cfg.index_pk_attr and cfg.index_pk_attr in item:
                        iwcu += c
                else:
                    twcu += 1
            per[table] = (twcu, iwcu)
        return consumed_capacity(mode, per, cfg.index_pk_attr, cfg.index_name)

    # -- control endpoints

    def control(self, method, path, req):
        p = self.p
        path = path.split(b"?", 1)[0]
        code, obj = 200, None
        if path == b"/__stats" and method == b"GET":
            obj = p.snapshot()
        elif path == b"/__stats/reset" and method == b"POST":
            with p.lock:
                p.stats = p._zero_stats()
            obj = {"ok": True}
        elif path == b"/__config" and method == b"GET":
            with p.lock:
                obj = p.cfg.as_json()
        elif path == b"/__config" and method == b"POST":
            try:
                d = json.loads(req.body or b"{}")
                with p.lock:
                    saved = (dict(p.cfg.rates), p.cfg.as_json())
                    try:
                        p.cfg.update(d)
                    except (ValueError, TypeError):
                        p.cfg.rates = saved[0]
                        raise
                    obj = p.cfg.as_json()
                p.log("config changed: %s", json.dumps(d, sort_keys=True))
            except (ValueError, TypeError, AttributeError) as e:
                code, obj = 400, {"error": str(e)}
        else:
            code, obj = 404, {"error": "unknown control path"}
        body = json.dumps(obj, sort_keys=True).encode() + b"\n"
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[code]
        self._send(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                   % (code, reason.encode(), len(body)) + body)
        return True


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512

    def handle_error(self, request, client_address):
        self.proxy.count("client_errors")
        self.proxy.log("handler error: %s", traceback.format_exc().replace("\n", " | "))


# --------------------------------------------------- for tests: child process

class ToolProcess:
    """One of the test tools (this proxy or nullddb.py) run as a child process.

    Starts `python3 SCRIPT --listen 127.0.0.1:0 ARGS...` (or `COMMAND...
    --listen ...` when command is given), waits for its "listening on" line
    and exposes the port.  Use as a context manager, or
    call stop().  The child gets SIGTERM on stop and is killed if it does not
    exit within 10 s.  A separate process keeps the tool off the test's GIL.
    """

    def __init__(self, script, args, python=None, command=None):
        argv0 = list(command) if command else [python or sys.executable, script]
        self.proc = subprocess.Popen(argv0 + ["--listen", "127.0.0.1:0"] + list(args),
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if " listening on " not in line:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("%s did not start: %r" % (os.path.basename(argv0[-1]), line))
        self.port = int(line.split(" listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def _http(self, path, body=None):
        import urllib.request
        req = urllib.request.Request(self.url + path, method="POST" if body is not None else "GET",
                                     data=json.dumps(body).encode() if body is not None else None)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def stats(self):
        """The counters (GET /__stats)."""
        return self._http("/__stats")

    def stop(self):
        """SIGTERM and wait; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class ProxyProcess(ToolProcess):
    """faultproxy.py as a child process: ProxyProcess(upstream, throttle=0.1, seed=7, ...).

    Keyword options are the command-line options with '_' for '-'
    (lost_reply=0.01, pk_wcu=1000, stats_file=PATH, ...); a list or tuple
    repeats the option (hot_key=["TARGET#a", "TARGET#b"]).
    """

    def __init__(self, upstream="http://127.0.0.1:8000", python=None, **options):
        args = ["--upstream", upstream]
        for k, v in options.items():
            for one in (v if isinstance(v, (list, tuple)) else [v]):
                args += ["--" + k.replace("_", "-"), str(one)]
        ToolProcess.__init__(self, os.path.abspath(__file__), args, python)

    def config(self, **changes):
        """Changes rates/settings at run time (POST /__config); returns the new settings."""
        return self._http("/__config", changes) if changes else self._http("/__config")

    def reset_stats(self):
        return self._http("/__stats/reset", {})


def nullddb_c_binary():
    """Path of the C null endpoint (tests/tools/nullddb.c, built by CMake next
    to edgeload): env EDGELOAD_NULLDDB, else `nullddb` beside EDGELOAD_BIN.
    None when neither exists."""
    cands = [os.environ.get("EDGELOAD_NULLDDB")]
    if os.environ.get("EDGELOAD_BIN"):
        cands.append(os.path.join(os.path.dirname(os.environ["EDGELOAD_BIN"]), "nullddb"))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


class NullProcess(ToolProcess):
    """A null endpoint as a child process: NullProcess(count_file=PATH, workers=2).

    impl="py" (default) runs nullddb.py next to this file; impl="c" runs the
    C endpoint (tests/tools/nullddb.c; binary= its path, default
    nullddb_c_binary()), which takes the same options plus the throttling
    model (pk_wcu=1000, pk_burst=..., table_wcu=...) and runs one worker.
    """

    def __init__(self, python=None, impl="py", binary=None, **options):
        args = []
        for k, v in options.items():
            if v is True:
                args.append("--" + k.replace("_", "-"))
            elif v not in (False, None):
                args += ["--" + k.replace("_", "-"), str(v)]
        if impl == "c":
            exe = binary or nullddb_c_binary()
            if not exe:
                raise RuntimeError("the C null endpoint is not built (set EDGELOAD_NULLDDB)")
            ToolProcess.__init__(self, None, args, command=[exe])
        elif impl == "py":
            ToolProcess.__init__(self, os.path.join(os.path.dirname(os.path.abspath(__file__)), "nullddb.py"),
                                 args, python)
        else:
            raise ValueError("impl must be 'py' or 'c'")


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="faultproxy.py",
        description="Fault-injecting HTTP/1.1 proxy in front of DynamoDB Local.")
    ap.add_argument("--listen", default="127.0.0.1:8001", help="HOST:PORT to listen on (port 0: any free port)")
    ap.add_argument("--upstream", default="http://127.0.0.1:8000", help="DynamoDB Local URL (http only)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the fault RNG")
    ap.add_argument("--throttle", type=float, default=0.0, help="rate of ProvisionedThroughputExceededException (400)")
    ap.add_argument("--http500", type=float, default=0.0, help="rate of 500 InternalServerError")
    ap.add_argument("--http503", type=float, default=0.0, help="rate of 503 ServiceUnavailable")
    ap.add_argument("--reset", type=float, default=0.0, help="rate of connection resets before forwarding")
    ap.add_argument("--slow", type=float, default=0.0, help="rate of delayed answers")
    ap.add_argument("--slow-ms", type=float, default=2000.0, help="delay of a slow answer (ms)")
    ap.add_argument("--lost-reply", dest="lost_reply", type=float, default=0.0,
                    help="rate of requests applied upstream whose reply is replaced by a reset")
    ap.add_argument("--partial", type=float, default=0.0,
                    help="rate of batches partly withheld and returned as UnprocessedItems")
    ap.add_argument("--truncate", type=float, default=0.0,
                    help="rate of requests applied upstream whose reply is cut in the middle of its body (then FIN)")
    ap.add_argument("--throttling", type=float, default=0.0,
                    help="rate of ThrottlingException (400, no reasons)")
    ap.add_argument("--http500-applied", dest="http500_applied", type=float, default=0.0,
                    help="rate of requests applied upstream and answered 500 InternalServerError")
    ap.add_argument("--http503-html", dest="http503_html", type=float, default=0.0,
                    help="rate of 503 answers with an HTML body (a load balancer's)")
    ap.add_argument("--partial-max", type=float, default=1.0,
                    help="largest share of a batch a partial fault withholds (always at least 1, never all)")
    ap.add_argument("--targets", default="BatchWriteItem",
                    help="comma-separated X-Amz-Target operations the random faults apply to")
    ap.add_argument("--pk-wcu", type=float, default=0.0,
                    help="per-partition-key write budget in WCU/s (0: off)")
    ap.add_argument("--pk-burst", type=float, default=None,
                    help="token bucket capacity in WCU (default 0.3 x --pk-wcu)")
    ap.add_argument("--pk-attr", default="PK", help="base-table partition key attribute")
    ap.add_argument("--index-pk-attr", default="GSI1PK",
                    help="index partition key attribute ('' for none)")
    ap.add_argument("--index-name", default="GSI1", help="index name used in computed ConsumedCapacity")
    ap.add_argument("--hot-key", action="append", metavar="VALUE",
                    help="a hot index key range: a string value of --index-pk-attr (repeatable); "
                         "a batch writing it beyond --hot-wcu is refused whole with ThrottlingReasons "
                         "IndexWriteKeyRangeThroughputExceeded naming the index")
    ap.add_argument("--hot-table-key", action="append", metavar="VALUE",
                    help="a hot base-table key range: a string value of --pk-attr (repeatable); "
                         "refused the same way with TableWriteKeyRangeThroughputExceeded naming the table")
    ap.add_argument("--hot-wcu", type=float, default=0.0,
                    help="write limit of each hot key in WCU/s (0: the hot keys' writes are "
                         "counted and timed apart, never refused)")
    ap.add_argument("--hot-burst", type=float, default=None,
                    help="capacity of a hot key's bucket in WCU (default 0.3 x --hot-wcu)")
    ap.add_argument("--table-limit-wcu", type=float, default=0.0,
                    help="write limit of each table in WCU/s (0: off); a batch beyond it is refused "
                         "whole with ThrottlingReasons TableWriteProvisionedThroughputExceeded")
    ap.add_argument("--table-limit-burst", type=float, default=None,
                    help="capacity of a table's bucket in WCU (default 0.3 x --table-limit-wcu)")
    ap.add_argument("--max-skew", type=float, default=0.0,
                    help="refuse, as AWS does, a request whose X-Amz-Date is more than this many "
                         "seconds from the proxy's clock (0: off; AWS: 300)")
    ap.add_argument("--skew-targets", default="",
                    help="comma-separated operations --max-skew applies to (default: all)")
    ap.add_argument("--account-id", default="000000000000",
                    help="account id in the ARNs of ThrottlingReasons (DynamoDB Local's by default)")
    ap.add_argument("--access-key", default=None,
                    help="access key for re-signed requests (default: the client's)")
    ap.add_argument("--secret-key", default=None, help="secret key for re-signed requests (default: a dummy)")
    ap.add_argument("--region", default=None, help="region for re-signed requests (default: the client's)")
    ap.add_argument("--upstream-timeout", type=float, default=60.0, help="upstream socket timeout (s)")
    ap.add_argument("--stats-file", default=None, help="write the counters here as JSON at exit")
    ap.add_argument("--log", default=None, help="per-request log file ('-' for stderr); no headers are logged")
    ap.add_argument("--capture", default=None,
                    help="every forwarded request and its answer as a JSON line (arrival and "
                         "answer times, target, status, both bodies; no headers) for tests "
                         "that recompute what DynamoDB consumed")
    args = ap.parse_args(argv)
    for k in FAULT_KINDS:
        v = getattr(args, k)
        if not 0.0 <= v <= 1.0:
            ap.error("--%s must be between 0 and 1" % k.replace("_", "-"))
    if args.index_pk_attr == "":
        args.index_pk_attr = None
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    proxy = Proxy(args)
    host, _, port = args.listen.rpartition(":")
    server = Server((host or "127.0.0.1", int(port)), Handler)
    server.proxy = proxy
    addr = server.server_address
    print("faultproxy listening on %s:%d upstream %s seed %d" % (addr[0], addr[1], args.upstream, args.seed),
          flush=True)

    def stop(signum, frame):
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        proxy.write_stats_file()
        s = proxy.snapshot()
        print("faultproxy stopped: requests=%d items_received=%d forwarded=%d withheld=%d faults=%s"
              % (s["requests"], s["items_received"], s["items_forwarded"], s["items_withheld"],
                 json.dumps(s["faults"], sort_keys=True)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
