"""Local stand-ins for the AWS services credentials come from, for the tests.

Each stand-in is an http.server handler run on a loopback port in a thread
of the test process (start one with `serve(handler, **attributes)`), and
answers in the shapes the real service uses:

  Sts        STS's query protocol: AssumeRole (its SigV4 signature checked
             with botocore against the secret of the key that signed it)
             and AssumeRoleWithWebIdentity (the token checked), answered
             with the real AssumeRole(WithWebIdentity)Response XML or an
             ErrorResponse;
  Sso        IAM Identity Center's GetRoleCredentials (GET
             /federation/credentials, x-amz-sso_bearer_token), JSON with
             roleCredentials and an expiration in milliseconds;
  Container  the ECS/EKS container credentials endpoint (Authorization
             checked when a token is expected);
  Imds       the EC2 instance metadata service, IMDSv2 only (a PUT for the
             session token, then the role name and its credentials);
  KeyCheck   a forwarding proxy in front of DynamoDB Local that reads the
             access key of every request's Authorization and records the
             requests signed with a key the Issuer did not issue, or after
             it expired.

Credentials come from one Issuer per test, which remembers every key it
handed out and when it expires. In "stable" mode the same request gets the
same key (so edgeload and botocore, asked to resolve the same setup,
must print the same access key); otherwise every call gets a fresh set
(renewal tests). Keys, secrets and tokens are letters and digits only:
DynamoDB Local refuses anything else.

botocore_access_key(env) resolves credentials with Debian's botocore in a
child /usr/bin/python3 with exactly env, pointing botocore's STS and SSO
clients at the stand-ins (botocore 1.29 does not read
AWS_ENDPOINT_URL_STS itself), and returns the access key it found.
"""

import calendar
import datetime
import hashlib
import http.client
import http.server
import json
import os
import subprocess
import threading
import time
import urllib.parse
from unittest import mock

import botocore.auth
import botocore.credentials
from botocore.awsrequest import AWSRequest

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _alnum(seed, n):
    out = []
    h = hashlib.sha256(seed.encode()).digest()
    while len(out) < n:
        for b in h:
            out.append(ALNUM[b % len(ALNUM)])
        h = hashlib.sha256(h).digest()
    return "".join(out[:n])


def iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class Issuer:
    """Hands out credential sets and remembers them."""

    def __init__(self, lifetime=3600, stable=True, marker="StUbSeCrEt",
                 token_marker="StUbToKeN"):
        self.lifetime = lifetime
        self.stable = stable
        self.marker = marker
        self.token_marker = token_marker
        self.lock = threading.Lock()
        self.issued = {}    # access key -> {"secret", "token", "expires", "source"}
        self.static = {}    # long-term keys: access key -> secret
        self.count = 0

    def add_static(self, ak, sk):
        with self.lock:
            self.static[ak] = sk

    def issue(self, source, seed="", lifetime=None):
        """A new set for `source` ("sts", "sso", ...); `seed` makes it stable."""
        life = self.lifetime if lifetime is None else lifetime
        with self.lock:
            self.count += 1
            key = "%s|%s" % (source, seed) if self.stable else "%s|%d" % (source, self.count)
            ak = "ASIA" + source.upper()[:4] + _alnum(key, 12).upper()
            s = {"secret": self.marker + _alnum(key + "s", 30),
                 "token": self.token_marker + _alnum(key + "t", 180),
                 "expires": int(time.time()) + life, "source": source,
                 "issued_at": time.time()}
            self.issued[ak] = s
            return ak, s

    def secret_of(self, ak):
        with self.lock:
            if ak in self.static:
                return self.static[ak], None
            s = self.issued.get(ak)
            return (s["secret"], s) if s else (None, None)

    def tokens(self):
        with self.lock:
            return [s["token"] for s in self.issued.values()]

    def secrets(self):
        with self.lock:
            return [s["secret"] for s in self.issued.values()] + list(self.static.values())


def serve(handler, **attrs):
    """Starts handler on 127.0.0.1 (threaded); returns (server, base URL).
    Stop it with stop(server)."""
    srv = http.server.ThreadingHTTPServer((attrs.pop("host", "127.0.0.1"),
                                           attrs.pop("port", 0)), handler)
    srv.daemon_threads = True
    srv.calls = []
    srv.lock = threading.Lock()
    for k, v in attrs.items():
        setattr(srv, k, v)
    # a short poll interval: shutdown() waits for it, once per stand-in per test
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    host, port = srv.server_address[:2]
    return srv, "http://%s:%d" % (host, port)


def stop(srv):
    srv.shutdown()
    srv.server_close()


class _Base(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def answer(self, status, body, ctype="application/json", headers=()):
        if not isinstance(body, (bytes, bytearray)):
            body = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def record(self, **kw):
        with self.server.lock:
            self.server.calls.append(kw)


def parse_authorization(value):
    """(access key, signed header names) of an AWS4-HMAC-SHA256 header."""
    if not value or not value.startswith("AWS4-HMAC-SHA256 "):
        return None, []
    fields = dict(p.strip().split("=", 1) for p in value[17:].split(","))
    return fields["Credential"].split("/")[0], fields.get("SignedHeaders", "").split(";")


def sigv4_matches(handler, body, secret, token, service, region):
    """Recomputes the request's Authorization with botocore."""
    amz_date = handler.headers.get("X-Amz-Date", "")
    fixed = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")

    class Clock(datetime.datetime):
        @classmethod
        def utcnow(cls):
            return fixed

    ak, names = parse_authorization(handler.headers.get("Authorization"))
    headers = {n: handler.headers.get(n) for n in names
               if n not in ("x-amz-date", "x-amz-security-token")}
    req = AWSRequest(method=handler.command,
                     url="http://%s%s" % (handler.headers.get("Host"), handler.path),
                     data=body, headers=headers)
    creds = botocore.credentials.Credentials(ak, secret, token)
    with mock.patch.object(botocore.auth.datetime, "datetime", Clock):
        botocore.auth.SigV4Auth(creds, service, region).add_auth(req)
    return req.headers["Authorization"] == handler.headers.get("Authorization")


STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"


def sts_error(code, message, status=403):
    return status, ('<ErrorResponse xmlns="%s">\n  <Error>\n    <Type>Sender</Type>\n'
                    '    <Code>%s</Code>\n    <Message>%s</Message>\n  </Error>\n'
                    '  <RequestId>4fa0a5b6-0000-11ee-be56-0242ac120002</RequestId>\n'
                    '</ErrorResponse>\n' % (STS_NS, code, message))


def sts_answer(action, role_arn, session, ak, s):
    extra = ""
    if action == "AssumeRoleWithWebIdentity":
        extra = ("    <SubjectFromWebIdentityToken>system:serviceaccount:default:loader"
                 "</SubjectFromWebIdentityToken>\n    <Audience>sts.amazonaws.com</Audience>\n"
                 "    <Provider>arn:aws:iam::123456789012:oidc-provider/oidc.example"
                 "</Provider>\n")
    role = role_arn.split("/")[-1]
    return ('<%sResponse xmlns="%s">\n  <%sResult>\n%s    <AssumedRoleUser>\n'
            '      <AssumedRoleId>AROA3XFRBF535PLBIFPI4:%s</AssumedRoleId>\n'
            '      <Arn>arn:aws:sts::123456789012:assumed-role/%s/%s</Arn>\n'
            '    </AssumedRoleUser>\n    <Credentials>\n'
            '      <SecretAccessKey>%s</SecretAccessKey>\n'
            '      <SessionToken>%s</SessionToken>\n'
            '      <Expiration>%s</Expiration>\n'
            '      <AccessKeyId>%s</AccessKeyId>\n'
            '    </Credentials>\n    <PackedPolicySize>6</PackedPolicySize>\n'
            '  </%sResult>\n  <ResponseMetadata>\n'
            '    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>\n'
            '  </ResponseMetadata>\n</%sResponse>\n'
            % (action, STS_NS, action, extra, session, role, session, s["secret"], s["token"],
               iso(s["expires"]), ak, action, action))


def clock_refusal(amz_date, max_skew):
    """STS's refusal of a request signed more than max_skew seconds from now
    (SignatureDoesNotMatch, "Signature expired"), None when it is not."""
    try:
        signed = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    except ValueError:
        return None
    now = time.time()
    if abs(signed - now) <= max_skew:
        return None
    fmt = lambda t: time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))
    if signed < now:
        msg = "Signature expired: %s is now earlier than %s (%s - 5 min.)" % (
            amz_date, fmt(now - max_skew), fmt(now))
    else:
        msg = "Signature not yet current: %s is still later than %s (%s + 5 min.)" % (
            amz_date, fmt(now + max_skew), fmt(now))
    return sts_error("SignatureDoesNotMatch", msg)


class Sts(_Base):
    """Server attributes: issuer; web_token (expected WebIdentityToken, None =
    any); fail (None, or (status, code, message)); region (of the signature
    scope, default any); max_skew (None, or the seconds a signature's
    X-Amz-Date may be from the stub's clock, as STS refuses past 5 minutes;
    the answer's Date header is the stub's time)."""

    def do_POST(self):
        raw = self.body()
        form = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode(), True).items()}
        action = form.get("Action", "")
        srv = self.server
        ak, _ = parse_authorization(self.headers.get("Authorization"))
        self.record(action=action, form=form, signed_by=ak,
                    token=self.headers.get("X-Amz-Security-Token"), at=time.time())
        fail = getattr(srv, "fail", None)
        if fail:
            msg = fail[2]
            if getattr(srv, "echo", False):   # a service that quotes the request back
                msg += " (request: %s)" % raw.decode()
            status, body = sts_error(fail[1], msg, fail[0])
            return self.answer(status, body, "text/xml")
        if form.get("Version") != "2011-06-15" or "RoleArn" not in form or \
                "RoleSessionName" not in form:
            status, body = sts_error("MissingParameter", "bad request", 400)
            return self.answer(status, body, "text/xml")
        if action == "AssumeRoleWithWebIdentity":
            want = getattr(srv, "web_token", None)
            if "Authorization" in self.headers:
                status, body = sts_error("InvalidRequest", "must not be signed", 400)
                return self.answer(status, body, "text/xml")
            if want is not None and form.get("WebIdentityToken") != want:
                status, body = sts_error("InvalidIdentityToken",
                                         "Couldn't retrieve verification key from your "
                                         "identity provider", 400)
                return self.answer(status, body, "text/xml")
            seed = form["RoleArn"] + form.get("WebIdentityToken", "")
        elif action == "AssumeRole":
            skew = getattr(srv, "max_skew", None)
            refusal = clock_refusal(self.headers.get("X-Amz-Date", ""), skew) \
                if skew is not None else None
            if refusal:
                return self.answer(refusal[0], refusal[1], "text/xml")
            secret, issued = srv.issuer.secret_of(ak) if ak else (None, None)
            if secret is None:
                status, body = sts_error("InvalidClientTokenId",
                                         "The security token included in the request is "
                                         "invalid.")
                return self.answer(status, body, "text/xml")
            if issued and issued["expires"] <= time.time():
                status, body = sts_error("ExpiredToken",
                                         "The security token included in the request is "
                                         "expired")
                return self.answer(status, body, "text/xml")
            token = self.headers.get("X-Amz-Security-Token")
            if (issued and token != issued["token"]) or not sigv4_matches(
                    self, raw, secret, token, "sts", self.headers.get("Authorization")
                    .split("/")[2]):
                status, body = sts_error("SignatureDoesNotMatch",
                                         "The request signature we calculated does not "
                                         "match the signature you provided.")
                return self.answer(status, body, "text/xml")
            seed = form["RoleArn"] + ak
        else:
            status, body = sts_error("InvalidAction", "unknown action", 400)
            return self.answer(status, body, "text/xml")
        life = int(form["DurationSeconds"]) if "DurationSeconds" in form and \
            getattr(srv, "honour_duration", False) else None
        nak, s = srv.issuer.issue("sts", seed, life)
        self.answer(200, sts_answer(action, form["RoleArn"], form["RoleSessionName"], nak, s),
                    "text/xml")


class Sso(_Base):
    """Server attributes: issuer; tokens (set of valid bearer tokens)."""

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = {k: v[0] for k, v in urllib.parse.parse_qs(u.query).items()}
        tok = self.headers.get("x-amz-sso_bearer_token")
        self.record(path=u.path, query=q, token=tok)
        if u.path != "/federation/credentials" or "account_id" not in q or "role_name" not in q:
            return self.answer(400, {"message": "bad request"},
                               headers=[("x-amzn-ErrorType", "InvalidRequestException")])
        if tok not in self.server.tokens:
            return self.answer(401, {"message": "Session token not found or invalid"},
                               headers=[("x-amzn-ErrorType", "UnauthorizedException")])
        ak, s = self.server.issuer.issue("sso", q["account_id"] + q["role_name"])
        self.answer(200, {"roleCredentials": {
            "accessKeyId": ak, "secretAccessKey": s["secret"], "sessionToken": s["token"],
            "expiration": s["expires"] * 1000}})


class Container(_Base):
    """Server attributes: issuer; auth (expected Authorization, None = none
    needed); status (answer this instead, when set)."""

    def do_GET(self):
        auth = self.headers.get("Authorization")
        self.record(path=self.path, auth=auth)
        if getattr(self.server, "status", None):
            return self.answer(self.server.status, {"message": "refused %s" % auth})
        want = getattr(self.server, "auth", None)
        if want is not None and auth != want:
            return self.answer(401, {"message": "Unauthorized"})
        ak, s = self.server.issuer.issue("ecs", self.path)
        self.answer(200, {"RoleArn": "arn:aws:iam::123456789012:role/task",
                          "AccessKeyId": ak, "SecretAccessKey": s["secret"],
                          "Token": s["token"], "Expiration": iso(s["expires"])})


class Imds(_Base):
    """Server attributes: issuer; role (None = the instance has no role)."""

    TOKEN = "AQAEAImdsSessionTokenStub0123456789"

    def do_PUT(self):
        self.body()
        self.record(method="PUT", path=self.path,
                    ttl=self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"))
        if self.path != "/latest/api/token" or \
                not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            return self.answer(400, "", "text/plain")
        self.answer(200, self.TOKEN, "text/plain")

    def do_GET(self):
        tok = self.headers.get("X-aws-ec2-metadata-token")
        self.record(method="GET", path=self.path, token=tok)
        if tok != self.TOKEN:
            return self.answer(401, "", "text/plain")
        base = "/latest/meta-data/iam/security-credentials/"
        role = getattr(self.server, "role", "loader-role")
        if self.path == base:
            if not role:
                return self.answer(404, "", "text/plain")
            return self.answer(200, role + "\n", "text/plain")
        if role and self.path == base + role:
            ak, s = self.server.issuer.issue("imds", role)
            return self.answer(200, {
                "Code": "Success", "LastUpdated": iso(time.time()), "Type": "AWS-HMAC",
                "AccessKeyId": ak, "SecretAccessKey": s["secret"], "Token": s["token"],
                "Expiration": iso(s["expires"])})
        self.answer(404, "", "text/plain")


class Capture(_Base):
    """A DynamoDB endpoint that records who signed each request and refuses
    CreateTable as ResourceInUse (so `create-table` stops at once)."""

    def do_POST(self):
        self.body()
        ak, _ = parse_authorization(self.headers.get("Authorization"))
        self.record(access_key=ak, token=self.headers.get("X-Amz-Security-Token"),
                    target=self.headers.get("X-Amz-Target"))
        self.answer(400, {"__type": "com.amazonaws.dynamodb.v20120810#ResourceInUseException",
                          "message": "Table already exists: T"},
                    "application/x-amz-json-1.0")


class KeyCheck(_Base):
    """Forwards to server.upstream (host, port); records for every request
    the access key and whether the Issuer issued it and it was still valid
    on arrival (server.bad lists the others)."""

    def do_POST(self):
        body = self.body()
        ak, _ = parse_authorization(self.headers.get("Authorization"))
        now = time.time()
        secret, issued = self.server.issuer.secret_of(ak) if ak else (None, None)
        ok = issued is not None and issued["expires"] > now and \
            self.headers.get("X-Amz-Security-Token") == issued["token"]
        with self.server.lock:
            self.server.calls.append((now, ak))
            if not ok:
                self.server.bad.append((now, ak, "expired" if issued else "unknown"))
        if not ok:
            return self.answer(400, {"__type": "com.amazon.coral.service#ExpiredTokenException",
                                     "message": "The security token included in the request "
                                                "is expired"}, "application/x-amz-json-1.0")
        up = http.client.HTTPConnection(*self.server.upstream, timeout=60)
        fwd = {k: v for k, v in self.headers.items()
               if k.lower() not in ("connection", "keep-alive", "expect")}
        up.request("POST", self.path, body=body, headers=fwd)
        resp = up.getresponse()
        data = resp.read()
        hdrs = [(k, v) for k, v in resp.getheaders()
                if k.lower() in ("x-amz-crc32", "x-amzn-requestid")]
        up.close()
        self.answer(resp.status, data, resp.getheader("Content-Type",
                                                      "application/x-amz-json-1.0"), hdrs)


REFERENCE = r'''
import json, os, sys
import botocore.session
orig = botocore.session.Session.create_client
def create_client(self, service, *a, **kw):
    url = os.environ.get("EDGELOAD_REF_ENDPOINT_" + service.upper().replace("-", "_"))
    if url:
        kw["endpoint_url"] = url
    return orig(self, service, *a, **kw)
botocore.session.Session.create_client = create_client
s = botocore.session.Session(profile=os.environ.get("EDGELOAD_REF_PROFILE") or None)
try:
    c = s.get_credentials()
    print(json.dumps(None if c is None else c.get_frozen_credentials().access_key))
except Exception as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
'''


def botocore_access_key(env, profile=None, sts=None, sso=None):
    """The access key botocore resolves from env (and the files it names)."""
    e = dict(env)
    if profile:
        e["EDGELOAD_REF_PROFILE"] = profile
    if sts:
        e["EDGELOAD_REF_ENDPOINT_STS"] = sts
    if sso:
        e["EDGELOAD_REF_ENDPOINT_SSO"] = sso
    out = subprocess.run(["/usr/bin/python3", "-c", REFERENCE], env=e, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError("botocore reference failed: " + out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])
