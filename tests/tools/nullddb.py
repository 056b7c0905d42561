#!/usr/bin/python3
"""nullddb: a null DynamoDB endpoint that answers every write at once.

DESIGN
  Used to measure a loader's own CPU per item: the server must cost as
  little as possible per request.  It is a raw asyncio.BufferedProtocol
  (no http.server, no header objects, no allocation per read: the socket
  is read into one reusable buffer per connection) that scans for
  complete requests (pipelining allowed), finds Content-Length and
  X-Amz-Target by a byte search in the lower-cased head, counts the writes
  of a BatchWriteItem by counting '"PutRequest":' and '"DeleteRequest":' in
  the body (no JSON parse unless --parse), and writes all answers of one
  read in one transport.write.  Response bytes are built once per distinct
  shape and cached.

  --workers N forks N single-threaded processes that share one listening
  socket; each keeps its counters in its own slot of an anonymous shared
  mmap, so GET /__stats (from any worker) and --count-file (written by the
  parent at exit) see the sum.  Every worker exits when the parent is gone.

  Answers: BatchWriteItem -> {"UnprocessedItems":{}} (+ ConsumedCapacity
  when asked, 1 WCU per write, or the exact size rule with --parse);
  DescribeTable -> an ACTIVE table (PK/SK strings and one GSI,
  --index-name with GSI1PK/GSI1SK, or the schema given to CreateTable);
  CreateTable -> that table, ACTIVE; ListTables; PutItem, UpdateItem,
  DeleteItem, TransactWriteItems -> {}; anything else ->
  UnknownOperationException.
"""

import argparse
import asyncio
import json
import mmap
import os
import re
import signal
import socket
import struct
import sys
import time
import zlib

SLOT = struct.Struct("qqqq")     # requests, batch items, batch requests, other requests
SLOT_SIZE = 64
MAX_WORKERS = 64

CT = b"application/x-amz-json-1.0"
_TABLE_RE = re.compile(rb'"RequestItems"\s*:\s*\{\s*"((?:[^"\\]|\\.)*)"')
_MORE_TABLES_RE = re.compile(rb'\]\s*,\s*"(?:[^"\\]|\\.)*"\s*:\s*\[')
_RCC_RE = re.compile(rb'"ReturnConsumedCapacity"\s*:\s*"([A-Z]*)"')


def response(code, body, keep_alive=True):
    reason = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}.get(code, b"OK")
    return b"".join((
        b"HTTP/1.1 %d %s\r\n" % (code, reason),
        b"x-amzn-RequestId: NULLDDB0000000000000000000000000000000000000000000000\r\n",
        b"Content-Type: ", CT, b"\r\n",
        b"x-amz-crc32: %d\r\n" % (zlib.crc32(body) & 0xFFFFFFFF),
        b"Content-Length: %d\r\n" % len(body),
        b"" if keep_alive else b"Connection: close\r\n",
        b"\r\n", body))


def err(type_, message):
    return json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#" + type_,
                       "message": message}).encode()


class State:
    """Per-process state: options, counters (in the shared slot), tables."""

    def __init__(self, args, shm, slot):
        self.args = args
        self.shm = shm
        self.slot = slot
        self.requests = 0
        self.items = 0
        self.batches = 0
        self.other = 0
        self.tables = {}
        self.cache = {}
        self.empty_ok = response(200, b'{"UnprocessedItems":{}}')
        self.index_pk = b'"' + args.index_pk_attr.encode() + b'":' if args.index_pk_attr else None
        self.started = time.time()
        if args.parse:
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            sys.dont_write_bytecode = True  # no __pycache__ in the source tree
            import faultproxy               # item size rule, shared with the proxy
            self.item_wcu = faultproxy.item_wcu

    def publish(self):
        SLOT.pack_into(self.shm, self.slot * SLOT_SIZE, self.requests, self.items,
                       self.batches, self.other)

    def totals(self):
        tot = [0, 0, 0, 0]
        for i in range(MAX_WORKERS):
            vals = SLOT.unpack_from(self.shm, i * SLOT_SIZE)
            for j in range(4):
                tot[j] += vals[j]
        return {"requests": tot[0], "items": tot[1], "batch_requests": tot[2],
                "other_requests": tot[3], "workers": self.args.workers,
                "uptime_s": round(time.time() - self.started, 3)}

    # -- operations

    def batch(self, body):
        self.batches += 1
        if self.args.parse:
            return self._batch_parsed(body)
        n = body.count(b'"PutRequest":') + body.count(b'"DeleteRequest":')
        self.items += n
        i = body.find(b'"ReturnConsumedCapacity"')
        if i < 0:
            return self.empty_ok
        m = _RCC_RE.match(body, i, i + 64)
        mode = m.group(1).decode() if m else "NONE"
        if mode not in ("TOTAL", "INDEXES"):
            return self.empty_ok
        # One ']' can only be the end of the only table's list; otherwise look closer.
        if body.count(b"]") != 1 and _MORE_TABLES_RE.search(body):
            return self._batch_parsed(body, counted=True)
        j = body.find(b'"RequestItems"')
        m = _TABLE_RE.match(body, j, j + 1024) if j >= 0 else None
        raw_table = m.group(1) if m else b"?"
        idx = body.count(self.index_pk) if self.index_pk else 0
        key = (raw_table, n, idx, mode)
        out = self.cache.get(key)
        if out is None:
            table = json.loads(b'"' + raw_table + b'"') if m else "?"
            out = response(200, self._capacity_body({table: (n, idx)}, mode))
            if len(self.cache) > 4096:
                self.cache.clear()
            self.cache[key] = out
        return out

    def _batch_parsed(self, body, counted=False):
        try:
            doc = json.loads(body)
            items = doc["RequestItems"]
        except (ValueError, KeyError, TypeError):
            return response(400, err("SerializationException", "nullddb: unparsable BatchWriteItem body"))
        per = {}
        n = 0
        for table, ws in items.items():
            twcu = iwcu = 0
            for w in ws:
                n += 1
                if "PutRequest" in w:
                    item = w["PutRequest"].get("Item", {})
                    c = self.item_wcu(item) if self.args.parse else 1
                    twcu += c
                    if self.args.index_pk_attr in item:
                        iwcu += c
                else:
                    twcu += 1
            per[table] = (twcu, iwcu)
        if not counted:
            self.items += n
        mode = doc.get("ReturnConsumedCapacity", "NONE")
        if mode not in ("TOTAL", "INDEXES"):
            return self.empty_ok
        return response(200, self._capacity_body(per, mode))

    def _capacity_body(self, per, mode):
        cc = []
        for table, (twcu, iwcu) in per.items():
            if mode == "INDEXES":
                e = {"TableName": table, "CapacityUnits": float(twcu + iwcu),
                     "Table": {"CapacityUnits": float(twcu)}}
                if iwcu:
                    e["GlobalSecondaryIndexes"] = {self.args.index_name: {"CapacityUnits": float(iwcu)}}
            else:
                e = {"TableName": table, "CapacityUnits": float(twcu + iwcu)}
            cc.append(e)
        return json.dumps({"UnprocessedItems": {}, "ConsumedCapacity": cc},
                          separators=(",", ":")).encode()

    def describe(self, name):
        t = self.tables.get(name)
        if t is not None:
            return t
        a = self.args
        now = time.time()
        t = {
            "TableName": name,
            "TableStatus": "ACTIVE",
            "TableArn": "arn:aws:dynamodb:ddblocal:000000000000:table/" + name,
            "TableId": "00000000-0000-0000-0000-000000000000",
            "CreationDateTime": now,
            "ItemCount": 0, "TableSizeBytes": 0,
            "KeySchema": [{"AttributeName": a.pk_attr, "KeyType": "HASH"},
                          {"AttributeName": a.sk_attr, "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": x, "AttributeType": "S"}
                                     for x in (a.pk_attr, a.sk_attr, a.index_pk_attr, a.index_sk_attr) if x],
            "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST",
                                   "LastUpdateToPayPerRequestDateTime": now},
            "ProvisionedThroughput": {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 0,
                                      "WriteCapacityUnits": 0},
        }
        if a.index_name:
            t["GlobalSecondaryIndexes"] = [{
                "IndexName": a.index_name,
                "KeySchema": [{"AttributeName": a.index_pk_attr, "KeyType": "HASH"},
                              {"AttributeName": a.index_sk_attr, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "ALL"},
                "IndexStatus": "ACTIVE",
                "ProvisionedThroughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
                "IndexSizeBytes": 0, "ItemCount": 0,
                "IndexArn": t["TableArn"] + "/index/" + a.index_name,
            }]
        return t

    def create(self, body):
        try:
            req = json.loads(body)
            name = req["TableName"]
        except (ValueError, KeyError, TypeError):
            return response(400, err("ValidationException", "nullddb: CreateTable needs TableName"))
        t = dict(self.describe(name))
        for k in ("KeySchema", "AttributeDefinitions"):
            if k in req:
                t[k] = req[k]
        if "GlobalSecondaryIndexes" in req:
            t["GlobalSecondaryIndexes"] = [dict(g, IndexStatus="ACTIVE") for g in req["GlobalSecondaryIndexes"]]
        self.tables[name] = t
        return response(200, json.dumps({"TableDescription": t}).encode())

    def dispatch(self, target, body):
        self.requests += 1
        if target == b"batchwriteitem":
            return self.batch(body)
        self.other += 1
        if target == b"describetable":
            try:
                name = json.loads(body)["TableName"]
            except (ValueError, KeyError, TypeError):
                return response(400, err("ValidationException", "nullddb: DescribeTable needs TableName"))
            return response(200, json.dumps({"Table": self.describe(name)}).encode())
        if target == b"createtable":
            return self.create(body)
        if target == b"listtables":
            names = sorted(self.tables)
            return response(200, json.dumps({"TableNames": names}).encode())
        if target in (b"putitem", b"updateitem", b"deleteitem", b"transactwriteitems"):
            return response(200, b"{}")
        return response(400, json.dumps({"__type": "com.amazon.coral.service#UnknownOperationException"}).encode())

    def control(self, method, path):
        if path.startswith(b"/__stats"):
            self.publish()
            body = json.dumps(self.totals(), sort_keys=True).encode() + b"\n"
            return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % len(body)) + body
        return b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


class Conn(asyncio.BufferedProtocol):
    """One connection: reads straight into a reusable buffer (no allocation per read)."""

    __slots__ = ("st", "t", "ba", "n", "sent_continue")
    INITIAL = 256 * 1024

    def __init__(self, st):
        self.st = st
        self.t = None
        self.ba = bytearray(self.INITIAL)
        self.n = 0                      # valid bytes at the start of ba
        self.sent_continue = False

    def connection_made(self, transport):
        self.t = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

    def get_buffer(self, sizehint):
        if len(self.ba) - self.n < 65536:           # a large request: grow (no view is alive here)
            self.ba.extend(bytes(len(self.ba)))
        return memoryview(self.ba)[self.n:]

    def buffer_updated(self, nbytes):
        data = self.ba
        n = self.n + nbytes
        pos = 0
        out = []
        close = False
        st = self.st
        while True:
            he = data.find(b"\r\n\r\n", pos, n)
            if he < 0:
                if n - pos > 65536:
                    self.t.close()
                    return
                break
            head = bytes(data[pos:he]).lower()
            i = head.find(b"\ncontent-length:")
            if i >= 0:
                j = head.find(b"\r", i + 16)
                try:
                    cl = int(head[i + 16:j if j >= 0 else len(head)])
                except ValueError:
                    self.t.close()
                    return
            else:
                cl = 0
            end = he + 4 + cl
            if end > n:
                if not self.sent_continue and b"\nexpect: 100-continue" in head:
                    self.t.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    self.sent_continue = True
                break
            self.sent_continue = False
            body = bytes(data[he + 4:end])
            i = head.find(b"\nx-amz-target:")
            if i >= 0:
                j = head.find(b"\r", i)
                target = head[i + 14:j if j >= 0 else len(head)].strip().rpartition(b".")[2]
                out.append(st.dispatch(target, body))
            else:
                sp = head.find(b" ")
                sp2 = head.find(b" ", sp + 1)
                out.append(st.control(head[:sp], head[sp + 1:sp2]))
            pos = end
            if b"\nconnection: close" in head:
                close = True
                break
        if pos:
            rest = n - pos
            if rest:
                data[0:rest] = data[pos:n]          # same length: allowed while a view is alive
            n = rest
        self.n = n
        if out:
            self.t.write(b"".join(out) if len(out) > 1 else out[0])
            st.publish()
        if close:
            self.t.close()


def serve(args, sock, shm, slot, parent):
    """Runs one worker's event loop on the listening socket until SIGTERM."""
    st = State(args, shm, slot)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    stop = loop.create_future()

    def on_signal():
        if not stop.done():
            stop.set_result(None)

    loop.add_signal_handler(signal.SIGTERM, on_signal)
    loop.add_signal_handler(signal.SIGINT, on_signal)

    def watch_parent():
        if parent is not None and os.getppid() != parent:
            on_signal()
        else:
            loop.call_later(1.0, watch_parent)

    async def main():
        server = await loop.create_server(lambda: Conn(st), sock=sock, backlog=1024)
        watch_parent()
        await stop
        server.close()

    try:
        loop.run_until_complete(main())
    finally:
        st.publish()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
            signal.signal(sig, signal.SIG_IGN)
        loop.close()
    return st


def write_count(path, n):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % n)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="nullddb.py",
                                 description="A null DynamoDB endpoint: answers every write at once.")
    ap.add_argument("--listen", default="127.0.0.1:8002", help="HOST:PORT (port 0: any free port)")
    ap.add_argument("--workers", type=int, default=1, help="processes sharing the socket (default 1)")
    ap.add_argument("--count-file", default=None, help="write the number of BatchWriteItem writes received here at exit")
    ap.add_argument("--stats-file", default=None, help="write the counters as JSON here at exit")
    ap.add_argument("--parse", action="store_true",
                    help="parse every BatchWriteItem body as JSON (exact counts and item sizes; slower)")
    ap.add_argument("--index-name", default="GSI1", help="GSI name in DescribeTable and ConsumedCapacity")
    ap.add_argument("--pk-attr", default="PK")
    ap.add_argument("--sk-attr", default="SK")
    ap.add_argument("--index-pk-attr", default="GSI1PK")
    ap.add_argument("--index-sk-attr", default="GSI1SK")
    args = ap.parse_args(argv)
    if not 1 <= args.workers <= MAX_WORKERS:
        ap.error("--workers must be 1..%d" % MAX_WORKERS)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    host, _, port = args.listen.rpartition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host or "127.0.0.1", int(port)))
    sock.listen(1024)
    sock.setblocking(False)
    shm = mmap.mmap(-1, SLOT_SIZE * MAX_WORKERS)
    addr = sock.getsockname()
    print("nullddb listening on %s:%d workers %d" % (addr[0], addr[1], args.workers), flush=True)

    if args.workers == 1:
        st = serve(args, sock, shm, 0, None)
    else:
        parent = os.getpid()
        pids = []
        for w in range(args.workers):
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    serve(args, sock, shm, w, parent)
                except BaseException:
                    import traceback
                    traceback.print_exc()
                    code = 1
                os._exit(code)
            pids.append(pid)
        sock.close()

        class Stop(Exception):
            pass

        def on_signal(signum, frame):
            raise Stop()                  # waitpid would otherwise be resumed (PEP 475)

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        try:
            while pids:
                pid, _ = os.waitpid(-1, 0)
                pids.remove(pid)
        except (Stop, ChildProcessError):
            pass
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        st = State(args, shm, 0)
    tot = st.totals()
    if args.count_file:
        write_count(args.count_file, tot["items"])
    if args.stats_file:
        with open(args.stats_file, "w") as f:
            json.dump(tot, f, sort_keys=True)
            f.write("\n")
    print("nullddb stopped: requests=%d items=%d" % (tot["requests"], tot["items"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
