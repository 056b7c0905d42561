"""The secret access key and the session token never appear in anything
edgeload writes (no secret in any output, log or file).

Every run here has recognisable fake secrets in AWS_SECRET_ACCESS_KEY and
AWS_SESSION_TOKEN (or in a credentials file) and works in a fresh directory;
after each test every byte edgeload wrote - stdout, stderr, and every file
in that directory (rejects, checkpoint, stats, plan, verify report) - is
searched for the markers. The paths: load success, dry-run, rejects,
checkpoint and --stats-json, plain progress, verify and its report, plan,
create-table, a missing table, credentials refused (a fake endpoint that
answers UnrecognizedClientException, and one whose InvalidSignatureException
message quotes the request's headers back, as AWS's canonical-request
message does), an unreachable endpoint; plus the warnings: a credentials
file readable by group or others, and --no-verify-ssl.

The credential sources' own secrets too (tests/tools/awsstub.py stand-ins):
a web identity token and the STS answer's secret key and session token (a
load, and an STS refusal that quotes the request, token included, back),
an IAM Identity Center access token (a load, a refused token), a container
authorization token (a load, a refusal that quotes it), and the session
token of renewed credentials quoted back by InvalidSignatureException.
"""

import hashlib
import http.server
import json
import os
import stat
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import awsstub  # noqa: E402
from edgeload_test import EdgeloadTestCase, send_answer, serve  # noqa: E402

# DynamoDB Local accepts only letters and digits in the keys
SECRET = "SeCrEtMaRkEr7q9x2k4w8z1LEAKCHECK"
TOKEN = "ToKeNmArKeR5m3n8p1v6LEAKCHECKsessiontoken"
WEB_TOKEN = "WeBiDeNtItYtOkEnLEAKCHECK.payload.signature"
SSO_TOKEN = "SsOaCcEsStOkEnLEAKCHECK0123456789"
CONTAINER_TOKEN = "CoNtAiNeRtOkEnLEAKCHECK42"
MARKERS = [SECRET, TOKEN, SECRET[:16], TOKEN[:16], WEB_TOKEN, WEB_TOKEN[:16], SSO_TOKEN,
           SSO_TOKEN[:16], CONTAINER_TOKEN, CONTAINER_TOKEN[:16]]


class EchoingDynamo(http.server.BaseHTTPRequestHandler):
    """Refuses every request; its message quotes the request's headers."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        srv = self.server
        if srv.kind == "unrecognized":
            obj = {"__type": "com.amazon.coral.service#UnrecognizedClientException",
                   "message": "The security token included in the request is invalid."}
        else:
            canon = "\n".join("%s:%s" % (k.lower(), v) for k, v in sorted(self.headers.items())
                              if k.lower() in ("host", "x-amz-security-token"))
            obj = {"__type": "com.amazon.coral.service#InvalidSignatureException",
                   "message": "The request signature we calculated does not match the "
                              "signature you provided. The Canonical String for this "
                              "request should have been\n'POST\n/\n\n" + canon + "'"}
        send_answer(self, 400, obj)


class Secrets(EdgeloadTestCase):

    def setUp(self):
        self.dir = self.tmpdir()
        self.written = []  # (what, text) of every run's stdout and stderr
        self.env = {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": TOKEN}
        self.csv = self.write_file(self.dir, "e.csv", "src,dst,n\n" + "".join(
            "u%d,v%d,%d\n" % (i, i, i) for i in range(40)) + "bad,row,notanumber\n")

    def tearDown(self):
        # every byte written: outputs and every file in the work directory
        for root, _, files in os.walk(self.dir):
            for name in files:
                with open(os.path.join(root, name), "rb") as f:
                    self.written.append((name, f.read().decode("utf-8", "replace")))
        for what, text in self.written:
            for m in MARKERS:
                self.assertNotIn(m, text, "a secret leaked into %s" % what)

    def edgeload(self, *args, env=None, code=None):
        full = dict(self.env)
        if env:
            full.update(env)
        proc = self.run_edgeload(*args, cwd=self.dir, env=full, timeout=300)
        self.written.append(("stdout of %s" % (args,), proc.stdout))
        self.written.append(("stderr of %s" % (args,), proc.stderr))
        if code is not None:
            self.assertExit(proc, code)
        return proc

    def key_args(self):
        return ["--pk", "A#{src}", "--sk", "B#{dst}", "--attr", "n=n:N"]

    def fake(self, kind):
        return serve(self, EchoingDynamo, kind=kind)[1]

    # ---- the paths that print and write ---------------------------------

    def test_load_rejects_checkpoint_stats_progress_verify(self):
        table = self.unique_table("sec")
        self.create_table_boto(table)
        proc = self.edgeload(
            "load", *self.endpoint_args(), "--table", table, *self.key_args(),
            "--rejects", "rejects.jsonl", "--checkpoint", "ck.json", "--stats-json",
            "stats.json", "--progress", "plain", "--progress-interval", "1", self.csv,
            code=3)
        self.assertIn("rejected", proc.stderr)
        for f in ("rejects.jsonl", "ck.json", "stats.json"):
            self.assertTrue(os.path.exists(os.path.join(self.dir, f)), f)
        # resume from the checkpoint (reads it back, writes it again)
        self.edgeload("load", *self.endpoint_args(), "--table", table, *self.key_args(),
                      "--rejects", "rejects.jsonl", "--checkpoint", "ck.json", "--resume",
                      self.csv)
        # verify: one item changed so the report has a line
        self.ddb.delete_item(TableName=table, Key={"PK": {"S": "A#u1"}, "SK": {"S": "B#v1"}})
        proc = self.edgeload("verify", *self.endpoint_args(), "--table", table,
                             *self.key_args(), "--report", "report.jsonl", "--reverse", "3",
                             self.csv, code=4)
        with open(os.path.join(self.dir, "report.jsonl")) as f:
            self.assertIn("missing", f.read())

    def test_dry_run_plan_create_table(self):
        self.edgeload("load", "--table", "T", *self.key_args(), "--dry-run", self.csv)
        self.edgeload("plan", "--table", "T", *self.key_args(), "--plan-out", "plan.json",
                      self.csv)
        table = self.unique_table("sec")
        self.edgeload("create-table", "--table", table, *self.endpoint_args(), code=0)
        self.edgeload("create-table", "--table", table, *self.endpoint_args())  # exists

    def test_missing_table(self):
        proc = self.edgeload("load", *self.endpoint_args(), "--table", "no-such-table-sec",
                             *self.key_args(), self.csv, code=2)
        self.assertIn("does not exist", proc.stderr)

    def test_credentials_refused(self):
        url = self.fake("unrecognized")
        proc = self.edgeload("load", "--endpoint-url", url, "--region", "us-east-1",
                             "--table", "T", *self.key_args(), self.csv, code=2)
        self.assertIn("UnrecognizedClient", proc.stderr)
        self.edgeload("verify", "--endpoint-url", url, "--region", "us-east-1",
                      "--table", "T", *self.key_args(), self.csv, code=2)

    def test_service_message_quoting_the_token(self):
        # AWS's InvalidSignatureException quotes the canonical request, which
        # holds x-amz-security-token: edgeload must not print it as it came
        url = self.fake("echo")
        proc = self.edgeload("load", "--endpoint-url", url, "--region", "us-east-1",
                             "--table", "T", *self.key_args(), self.csv, code=2)
        self.assertIn("InvalidSignature", proc.stderr)
        self.assertIn("Canonical String", proc.stderr)
        self.edgeload("create-table", "--table", "T", "--endpoint-url", url,
                      "--region", "us-east-1")
        self.edgeload("verify", "--endpoint-url", url, "--region", "us-east-1",
                      "--table", "T", *self.key_args(), self.csv, code=2)

    def test_unreachable_endpoint(self):
        self.edgeload("load", "--endpoint-url", "http://127.0.0.1:9", "--region",
                      "us-east-1", "--table", "T", *self.key_args(), self.csv)

    # ---- the credential sources' secrets ---------------------------------

    def sources_env(self):
        """A home with the sources set up; the stand-ins' keys carry the
        markers (secrets hold SECRET, session tokens TOKEN)."""
        self.issuer = awsstub.Issuer(marker=SECRET, token_marker=TOKEN)
        self.sts, sts_url = awsstub.serve(awsstub.Sts, issuer=self.issuer, web_token=WEB_TOKEN)
        self.addCleanup(awsstub.stop, self.sts)
        self.sso, sso_url = awsstub.serve(awsstub.Sso, issuer=self.issuer, tokens={SSO_TOKEN})
        self.addCleanup(awsstub.stop, self.sso)
        self.ecs, self.ecs_url = awsstub.serve(awsstub.Container, issuer=self.issuer,
                                               auth=CONTAINER_TOKEN)
        self.addCleanup(awsstub.stop, self.ecs)
        home = self.tmpdir()  # not the work directory: its files are searched
        os.makedirs(os.path.join(home, ".aws", "sso", "cache"))
        self.token_file = self.write_file(home, "token", WEB_TOKEN)
        cfg = self.write_file(home, "config", "[profile dev]\nsso_session = corp\n"
                              "sso_account_id = 123456789012\nsso_role_name = Loader\n"
                              "[sso-session corp]\nsso_start_url = https://x.awsapps.com/start\n"
                              "sso_region = us-east-1\n")
        exp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        self.write_file(os.path.join(home, ".aws", "sso", "cache"),
                        hashlib.sha1(b"corp").hexdigest() + ".json",
                        json.dumps({"accessToken": SSO_TOKEN, "expiresAt": exp}))
        return {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
                "HOME": home, "AWS_CONFIG_FILE": cfg, "AWS_ENDPOINT_URL_STS": sts_url,
                "AWS_ENDPOINT_URL_SSO": sso_url}

    def load_with(self, env, *extra, code=3, profile=None):
        table = self.unique_table("sec")
        self.create_table_boto(table)
        args = ["load", *self.endpoint_args(), "--table", table, *self.key_args(),
                "--rejects", "rejects.jsonl", "--checkpoint", "ck.json", "--stats-json",
                "stats.json", "--progress", "plain", "--progress-interval", "1"]
        if profile:
            args += ["--profile", profile]
        return self.edgeload(*args, *extra, self.csv, env=env, code=code)

    def test_web_identity_and_sts_answer(self):
        env = self.sources_env()
        env.update({"AWS_WEB_IDENTITY_TOKEN_FILE": self.token_file,
                    "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/loader"})
        self.load_with(env)
        self.assertEqual(self.sts.calls[0]["form"]["WebIdentityToken"], WEB_TOKEN)
        # a refusal that quotes the request, web identity token included
        self.sts.fail = (403, "AccessDenied", "Not authorized")
        self.sts.echo = True
        proc = self.edgeload("load", *self.endpoint_args(), "--table", "T", *self.key_args(),
                             self.csv, env=env, code=2)
        self.assertIn("AccessDenied", proc.stderr)

    def test_sso_access_token(self):
        env = self.sources_env()
        self.load_with(env, profile="dev")
        self.assertEqual(self.sso.calls[0]["token"], SSO_TOKEN)
        self.sso.tokens = set()
        proc = self.edgeload("load", *self.endpoint_args(), "--table", "T", *self.key_args(),
                             "--profile", "dev", self.csv, env=env, code=2)
        self.assertIn("aws sso login --profile dev", proc.stderr)

    def test_container_authorization_token(self):
        env = self.sources_env()
        env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = self.ecs_url + "/v2/creds"
        env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = CONTAINER_TOKEN
        self.load_with(env)
        self.ecs.status = 403  # its answer quotes the token back
        proc = self.edgeload("load", *self.endpoint_args(), "--table", "T", *self.key_args(),
                             self.csv, env=env, code=2)
        self.assertIn("HTTP 403", proc.stderr)

    def test_issued_token_quoted_back_by_the_service(self):
        env = self.sources_env()
        env.update({"AWS_WEB_IDENTITY_TOKEN_FILE": self.token_file,
                    "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/loader"})
        url = self.fake("echo")
        proc = self.edgeload("load", "--endpoint-url", url, "--region", "us-east-1",
                             "--table", "T", *self.key_args(), self.csv, env=env, code=2)
        self.assertIn("Canonical String", proc.stderr)

    # ---- warnings --------------------------------------------------------

    def creds_file(self, mode):
        home = self.tmpdir()  # not the work directory: its files are searched
        path = self.write_file(home, "credentials",
                               "[default]\naws_access_key_id = edgeloadtest\n"
                               "aws_secret_access_key = %s\naws_session_token = %s\n"
                               % (SECRET, TOKEN))
        os.chmod(path, mode)
        return path

    def load_with_file(self, path):
        table = self.unique_table("sec")
        self.create_table_boto(table)
        env = {"AWS_SHARED_CREDENTIALS_FILE": path, "AWS_ACCESS_KEY_ID": "",
               "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": ""}
        return self.edgeload("load", *self.endpoint_args(), "--table", table,
                             *self.key_args(), "--rejects", "rejects.jsonl", self.csv,
                             env=env, code=3)

    def test_group_readable_credentials_file_warns(self):
        proc = self.load_with_file(self.creds_file(0o644))
        self.assertRegex(proc.stderr, r"warning.*credentials.*(readable|permission)")

    def test_private_credentials_file_does_not_warn(self):
        proc = self.load_with_file(self.creds_file(stat.S_IRUSR | stat.S_IWUSR))
        self.assertNotIn("warning", proc.stderr)

    def test_no_verify_ssl_warns(self):
        table = self.unique_table("sec")
        self.create_table_boto(table)
        proc = self.edgeload("load", *self.endpoint_args(), "--no-verify-ssl", "--table",
                             table, *self.key_args(), "--rejects", "rejects.jsonl",
                             self.csv, code=3)
        self.assertIn("--no-verify-ssl", proc.stderr)
        self.assertIn("not verified", proc.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
