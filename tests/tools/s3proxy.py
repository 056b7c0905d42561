#!/usr/bin/python3
"""s3proxy: a checking, connection-cutting HTTP/1.1 proxy in front of s3rver.

DESIGN
  s3rver checks the access key id of a SigV4 request but not its signature,
  so every request through this proxy has its signature recomputed with
  botocore's S3SigV4Auth from the headers the client says it signed, the
  secret given with --secret and the request's own x-amz-date; a mismatch is
  answered 403 SignatureDoesNotMatch (what S3 says) and never reaches
  s3rver. A body whose SHA-256 differs from its x-amz-content-sha256 is
  answered 400 XAmzContentSHA256Mismatch. Everything else is forwarded byte
  for byte (one upstream connection per request).

  Cutting: with --cut-after N and --cuts K, the first K GET answers whose
  body is longer than N bytes are sent as status line, headers and N bytes
  of body, and then the connection is reset (SO_LINGER 0): the client sees
  a connection lost in the middle of an object.

  With --bucket-region R, a request signed for another region is answered
  400 AuthorizationHeaderMalformed with <Region>R</Region>, as S3 answers
  for a bucket in another region.

  With --max-skew S, a request whose x-amz-date is more than S seconds from
  the proxy's clock is answered 403 RequestTimeTooSkewed (a HEAD without a
  body), the proxy's time in the Date header, as S3 answers (S3: 900).

  GET /__stats answers {"requests", "cuts", "bad_signatures", "gets",
  "skew_refused"} as JSON. Nothing secret is logged or answered.
"""

import argparse
import calendar
import hashlib
import http.client
import http.server
import json
import socket
import socketserver
import struct
import sys
import threading
import time

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ERROR = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
         '<Message>%s</Message></Error>')


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.stats = {"requests": 0, "cuts": 0, "bad_signatures": 0, "gets": 0,
                      "skew_refused": 0}
        self.cuts_left = args.cuts


def expected_signature(method, host, target, headers, secret):
    """The signature S3 would compute for this request, or None if unsigned."""
    auth = headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return None, None
    fields = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    cred = fields["Credential"].split("/")
    access_key, region = cred[0], cred[2]
    signed = fields["SignedHeaders"].split(";")
    sign_headers = {}
    for name in signed:
        v = headers.get(name)
        if v is None:
            return fields["Signature"], "missing"
        sign_headers[name] = v
    req = AWSRequest(method=method, url="http://%s%s" % (host, target), headers=sign_headers)
    req.context["timestamp"] = headers.get("x-amz-date", "")
    signer = S3SigV4Auth(Credentials(access_key, secret), "s3", region)
    canonical = signer.canonical_request(req)
    sts = signer.string_to_sign(req, canonical)
    return fields["Signature"], signer.signature(sts, req)


def make_handler(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def answer(self, status, body, ctype="application/xml"):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def skewed(self, amz_date):
            try:
                signed = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
            except ValueError:
                return False
            return abs(signed - time.time()) > state.args.max_skew

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if self.path == "/__stats":
                with state.lock:
                    self.answer(200, json.dumps(state.stats), "application/json")
                return
            with state.lock:
                state.stats["requests"] += 1
            if state.args.max_skew and self.skewed(self.headers.get("x-amz-date", "")):
                with state.lock:
                    state.stats["skew_refused"] += 1
                self.answer(403, "" if self.command == "HEAD" else ERROR % (
                    "RequestTimeTooSkewed", "The difference between the request time and the "
                    "current time is too large."))
                return
            auth = self.headers.get("Authorization", "")
            if state.args.bucket_region and "/%s/s3/" % state.args.bucket_region not in auth:
                # what S3 answers a request signed for another region
                self.answer(400, ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>'
                                  'AuthorizationHeaderMalformed</Code><Message>the region is '
                                  'wrong; expecting \'%s\'</Message><Region>%s</Region></Error>'
                                  % ((state.args.bucket_region,) * 2)))
                return
            given, want = expected_signature(self.command, self.headers.get("Host", ""),
                                             self.path, self.headers, state.args.secret)
            if given is not None and given != want:
                with state.lock:
                    state.stats["bad_signatures"] += 1
                self.answer(403, ERROR % ("SignatureDoesNotMatch",
                                          "The request signature we calculated does not "
                                          "match the signature you provided."))
                return
            sha = self.headers.get("x-amz-content-sha256")
            if sha and sha != "UNSIGNED-PAYLOAD" and sha != hashlib.sha256(body).hexdigest():
                self.answer(400, ERROR % ("XAmzContentSHA256Mismatch",
                                          "The provided 'x-amz-content-sha256' header does "
                                          "not match what was computed."))
                return
            up = http.client.HTTPConnection(state.args.upstream_host, state.args.upstream_port,
                                            timeout=60)
            fwd = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("connection", "keep-alive", "expect")}
            up.request(self.command, self.path, body=body if body else None, headers=fwd)
            resp = up.getresponse()
            data = resp.read()
            up.close()
            cut = False
            if self.command == "GET":
                with state.lock:
                    state.stats["gets"] += 1
                    if (state.cuts_left > 0 and len(data) > state.args.cut_after and
                            resp.status in (200, 206)):
                        state.cuts_left -= 1
                        state.stats["cuts"] += 1
                        cut = True
            self.send_response_only(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() in ("connection", "keep-alive", "transfer-encoding",
                                 "content-length"):
                    continue
                self.send_header(k, v)
            if self.command != "HEAD" or resp.getheader("Content-Length") is None:
                self.send_header("Content-Length", str(len(data)))
            else:
                self.send_header("Content-Length", resp.getheader("Content-Length"))
            self.end_headers()
            if cut:
                self.wfile.write(data[:state.args.cut_after])
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", type=int, required=True, help="port on 127.0.0.1")
    ap.add_argument("--upstream", required=True, help="host:port of s3rver")
    ap.add_argument("--secret", default="S3RVER", help="secret to check signatures with")
    ap.add_argument("--cut-after", type=int, default=0)
    ap.add_argument("--cuts", type=int, default=0)
    ap.add_argument("--bucket-region", default="",
                    help="answer requests signed for another region as S3 does")
    ap.add_argument("--max-skew", type=float, default=0,
                    help="answer requests signed more than this many seconds from the "
                         "proxy's clock RequestTimeTooSkewed (0: off)")
    args = ap.parse_args()
    host, port = args.upstream.rsplit(":", 1)
    args.upstream_host, args.upstream_port = host, int(port)
    srv = Server(("127.0.0.1", args.listen), make_handler(State(args)))
    print("listening", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
