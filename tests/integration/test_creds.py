#!/usr/bin/python3
"""Every credential source of the chain, against local stand-ins of its
service (tests/tools/awsstub.py), with botocore as the reference.

Each case writes a fresh HOME (~/.aws/config, credentials, the SSO token
cache), runs `edgeload create-table` against a capture endpoint that
records the access key and session token of the request it gets, and,
where botocore 1.29 (Debian's, in /usr/bin/python3) can resolve the same
setup, checks that botocore resolves the very same access key from the
same environment and files. The stand-ins issue keys deterministically
(the same request gets the same key), so the two must agree exactly.

Then the order of the chain (two or more sources set up at once, the one
botocore picks wins), and every failure a user can meet: one line on
standard error that names the source, exit 2, nothing secret.

The container endpoint's default address (169.254.170.2, for a relative
URI) and the instance metadata service's (169.254.169.254) are tested in a
network namespace of the test's own, where those addresses are on its
loopback (needs root and unshare; skipped otherwise). Needs no DynamoDB
Local.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import awsstub  # noqa: E402
from edgeload_test import (assert_no_sanitizer_report, edgeload_bin, faketime_env,  # noqa: E402
                           require_faketime)

REGION = "us-east-1"
STATIC_AK = "AKIASTATICBASE0001"
STATIC_SK = "StAtIcSeCrEt0base0key0000000000000000000"
ENV_AK = "AKIAFROMENVIRONMENT"
ENV_SK = "EnVsEcReT000000000000000000000000000000"
WEB_TOKEN = "eyJhbGciOiJSUzI1NiJ9.WebIdentityTokenMarker7q.sig"
SSO_TOKEN = "SsoAccessTokenMarker0123456789abcdef"
CONTAINER_TOKEN = "ContainerAuthTokenMarker5x8"


def sanitizer_env():
    return {k: v for k, v in os.environ.items()
            if k.split("_")[0] in ("ASAN", "UBSAN", "LSAN", "TSAN")}


class CredsTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.bin = edgeload_bin()
        if not cls.bin or not os.access(cls.bin, os.X_OK):
            raise unittest.SkipTest("edgeload binary not found (set EDGELOAD_BIN)")

    def setUp(self):
        self.home = tempfile.mkdtemp(prefix="edgeload-creds-")
        self.addCleanup(shutil.rmtree, self.home, True)
        os.makedirs(os.path.join(self.home, ".aws", "sso", "cache"))
        self.issuer = awsstub.Issuer()
        self.issuer.add_static(STATIC_AK, STATIC_SK)
        self.issuer.add_static(ENV_AK, ENV_SK)
        self.capture, self.capture_url = self.start(awsstub.Capture)
        self.sts, self.sts_url = self.start(awsstub.Sts, issuer=self.issuer, web_token=WEB_TOKEN)
        self.sso, self.sso_url = self.start(awsstub.Sso, issuer=self.issuer,
                                            tokens={SSO_TOKEN})
        self.env = dict(sanitizer_env())
        self.env.update({
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home,
            "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "AWS_MAX_ATTEMPTS": "1",
            "AWS_CONFIG_FILE": self.path("config"),
            "AWS_SHARED_CREDENTIALS_FILE": self.path("credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ENDPOINT_URL_STS": self.sts_url, "AWS_ENDPOINT_URL_SSO": self.sso_url,
        })

    def start(self, handler, **attrs):
        srv, url = awsstub.serve(handler, **attrs)
        self.addCleanup(awsstub.stop, srv)
        return srv, url

    def path(self, name):
        return os.path.join(self.home, ".aws", name)

    def write(self, name, text, mode=0o600):
        p = self.path(name) if not os.path.isabs(name) else name
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, mode)
        return p

    def sso_cache(self, key, expires_in=8 * 3600, token=SSO_TOKEN):
        name = hashlib.sha1(key.encode()).hexdigest() + ".json"
        exp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + expires_in))
        self.write(os.path.join(self.home, ".aws", "sso", "cache", name), json.dumps({
            "startUrl": "https://example.awsapps.com/start", "region": REGION,
            "accessToken": token, "expiresAt": exp}))

    # ---- running ----------------------------------------------------------

    def run_edgeload(self, env=None, profile=None, timeout=60):
        e = dict(self.env)
        e.update(env or {})
        e = {k: v for k, v in e.items() if v is not None}
        args = [self.bin, "create-table", "--table", "T", "--endpoint-url", self.capture_url,
                "--region", REGION]
        if profile:
            args += ["--profile", profile]
        with self.capture.lock:
            self.capture.calls.clear()
        proc = subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        assert_no_sanitizer_report(proc.stderr)
        self.assertNoSecret(proc.stdout + proc.stderr)
        return proc

    def assertNoSecret(self, text):
        for s in ([ENV_SK, STATIC_SK, WEB_TOKEN, SSO_TOKEN, CONTAINER_TOKEN] +
                  self.issuer.secrets() + self.issuer.tokens()):
            self.assertNotIn(s, text)
            self.assertNotIn(s[:16], text)

    def resolved(self, env=None, profile=None):
        """The access key edgeload signed with (and checks its token)."""
        proc = self.run_edgeload(env, profile)
        with self.capture.lock:
            calls = list(self.capture.calls)
        self.assertTrue(calls, "edgeload sent no request:\n" + proc.stderr)
        self.assertIn("already exists", proc.stderr)
        ak = calls[0]["access_key"]
        _, issued = self.issuer.secret_of(ak)
        if issued:
            self.assertEqual(calls[0]["token"], issued["token"], "the session token sent")
        return ak

    def same_as_botocore(self, env=None, profile=None, expect_source=None):
        e = dict(self.env)
        e.update(env or {})
        e = {k: v for k, v in e.items() if v is not None}
        ours = self.resolved(env, profile)
        ref = awsstub.botocore_access_key(e, profile, self.sts_url, self.sso_url)
        self.assertEqual(ours, ref, "edgeload and botocore resolve different keys")
        if expect_source:
            _, issued = self.issuer.secret_of(ours)
            self.assertEqual(issued["source"] if issued else "static", expect_source)
        return ours

    def fails(self, text, env=None, profile=None, code=2, helper_lines=0):
        proc = self.run_edgeload(env, profile)
        self.assertEqual(proc.returncode, code, proc.stderr)
        lines = proc.stderr.strip().splitlines()[helper_lines:]
        self.assertEqual(len(lines), 1, "one line:\n" + proc.stderr)
        for t in ([text] if isinstance(text, str) else text):
            self.assertIn(t, lines[0])
        return lines[0]

    def token_file(self, token=WEB_TOKEN):
        return self.write(os.path.join(self.home, "web-token"), token)

    # ---- each source ---------------------------------------------------------

    def test_environment(self):
        ak = self.same_as_botocore({"AWS_ACCESS_KEY_ID": ENV_AK,
                                    "AWS_SECRET_ACCESS_KEY": ENV_SK})
        self.assertEqual(ak, ENV_AK)

    def test_web_identity_environment(self):
        env = {"AWS_WEB_IDENTITY_TOKEN_FILE": self.token_file(),
               "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/loader",
               "AWS_ROLE_SESSION_NAME": "pod-7"}
        self.same_as_botocore(env, expect_source="sts")
        mine = self.sts.calls[0]["form"]
        self.assertEqual(mine["Action"], "AssumeRoleWithWebIdentity")
        self.assertEqual(mine["RoleSessionName"], "pod-7")
        self.assertEqual(mine["WebIdentityToken"], WEB_TOKEN)
        self.assertIsNone(self.sts.calls[0]["signed_by"], "AssumeRoleWithWebIdentity is unsigned")

    def test_web_identity_profile(self):
        self.write("config", "[profile k8s]\nrole_arn = arn:aws:iam::123456789012:role/k8s\n"
                   "web_identity_token_file = %s\n" % self.token_file())
        self.same_as_botocore(profile="k8s", expect_source="sts")
        self.assertTrue(self.sts.calls[0]["form"]["RoleSessionName"])

    def test_assume_role_with_source_profile(self):
        self.write("credentials", "[base]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   % (STATIC_AK, STATIC_SK))
        self.write("config", "[profile app]\nrole_arn = arn:aws:iam::123456789012:role/app\n"
                   "source_profile = base\nexternal_id = ext-42\nrole_session_name = nightly\n"
                   "duration_seconds = 1800\n")
        self.same_as_botocore(profile="app", expect_source="sts")
        for call in self.sts.calls:
            self.assertEqual(call["action"], "AssumeRole")
            self.assertEqual(call["signed_by"], STATIC_AK)
            self.assertEqual(call["form"]["ExternalId"], "ext-42")
            self.assertEqual(call["form"]["RoleSessionName"], "nightly")
            self.assertEqual(call["form"]["DurationSeconds"], "1800")

    def test_assume_role_clock_skew(self):
        """A clock 10 minutes behind: STS refuses AssumeRole (Signature
        expired), its Date sets the STS source's clock, the call is signed
        again and the run goes on with the role's keys, saying it once
        (test_clock_skew.py: DynamoDB's form)."""
        require_faketime(self)
        self.sts.max_skew = 300
        self.write("credentials", "[base]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   % (STATIC_AK, STATIC_SK))
        self.write("config", "[profile app]\nrole_arn = arn:aws:iam::123456789012:role/app\n"
                   "source_profile = base\n")
        env = faketime_env("-10m")
        ak = self.resolved(env, profile="app")
        _, issued = self.issuer.secret_of(ak)
        self.assertEqual(issued["source"], "sts")
        self.assertEqual([c["action"] for c in self.sts.calls], ["AssumeRole", "AssumeRole"])
        proc = self.run_edgeload(env, profile="app")
        self.assertEqual(proc.stderr.count("clock is"), 1, proc.stderr)
        self.assertIn("edgeload: this machine's clock is 10 min behind AWS's: signing with "
                      "AWS's time", proc.stderr)

    def test_role_chain(self):
        self.write("credentials", "[a]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   % (STATIC_AK, STATIC_SK))
        self.write("config", "[profile b]\nrole_arn = arn:aws:iam::111111111111:role/b\n"
                   "source_profile = a\n[profile c]\nrole_arn = arn:aws:iam::222222222222:role/c\n"
                   "source_profile = b\n")
        ak = self.same_as_botocore(profile="c", expect_source="sts")
        mine = self.sts.calls[:2]
        self.assertEqual(mine[0]["signed_by"], STATIC_AK)
        self.assertEqual(mine[0]["form"]["RoleArn"], "arn:aws:iam::111111111111:role/b")
        _, first = self.issuer.secret_of(mine[1]["signed_by"])
        self.assertIsNotNone(first, "the second role is assumed with the first one's keys")
        self.assertEqual(mine[1]["token"], first["token"])
        self.assertEqual(mine[1]["form"]["RoleArn"], "arn:aws:iam::222222222222:role/c")
        self.assertNotEqual(ak, mine[1]["signed_by"])

    def test_role_with_own_static_keys(self):
        # a profile may be its own source_profile when it has keys
        self.write("credentials", "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   % (STATIC_AK, STATIC_SK))
        self.write("config", "[default]\nrole_arn = arn:aws:iam::123456789012:role/self\n"
                   "source_profile = default\n")
        self.same_as_botocore(expect_source="sts")

    def test_credential_source(self):
        self.write("config", "[profile env]\nrole_arn = arn:aws:iam::123456789012:role/e\n"
                   "credential_source = Environment\n")
        env = {"AWS_ACCESS_KEY_ID": ENV_AK, "AWS_SECRET_ACCESS_KEY": ENV_SK}
        self.same_as_botocore(env, profile="env", expect_source="sts")
        self.assertEqual(self.sts.calls[0]["signed_by"], ENV_AK)
        ecs, url = self.start(awsstub.Container, issuer=self.issuer)
        self.write("config", "[profile ecs]\nrole_arn = arn:aws:iam::123456789012:role/e\n"
                   "credential_source = EcsContainer\n")
        self.same_as_botocore({"AWS_CONTAINER_CREDENTIALS_FULL_URI": url + "/v2/creds"},
                              profile="ecs", expect_source="sts")

    def test_sso_session(self):
        self.write("config", "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\n"
                   "sso_role_name = Loader\n[sso-session corp]\n"
                   "sso_start_url = https://example.awsapps.com/start\nsso_region = %s\n"
                   "sso_registration_scopes = sso:account:access\n" % REGION)
        self.sso_cache("corp")
        self.same_as_botocore(profile="dev", expect_source="sso")
        call = self.sso.calls[0]
        self.assertEqual(call["query"], {"account_id": "123456789012", "role_name": "Loader"})

    def test_sso_legacy(self):
        self.write("config", "[profile old]\nsso_start_url = https://example.awsapps.com/start\n"
                   "sso_region = %s\nsso_account_id = 123456789012\nsso_role_name = Loader\n"
                   % REGION)
        self.sso_cache("https://example.awsapps.com/start")
        self.same_as_botocore(profile="old", expect_source="sso")

    def test_credential_process(self):
        out = os.path.join(self.home, "argv.json")
        script = self.write(os.path.join(self.home, "creds helper.py"), """
import json, sys, time
json.dump(sys.argv[1:], open(%r, "w"))
print(json.dumps({"Version": 1, "AccessKeyId": "AKIAFROMPROCESS01",
                  "SecretAccessKey": "ProcSecret00000000000000000000000000",
                  "SessionToken": "ProcToken0000",
                  "Expiration": time.strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ",
                                              time.gmtime(time.time() + 3600))}))
""" % out, 0o700)
        self.issuer.add_static("AKIAFROMPROCESS01", "ProcSecret00000000000000000000000000")
        self.write("config", "[default]\ncredential_process = /usr/bin/python3 \"%s\" one "
                   "'two words' three\\ four\n" % script)
        self.assertEqual(self.same_as_botocore(), "AKIAFROMPROCESS01")
        with open(out) as f:
            self.assertEqual(json.load(f), ["one", "two words", "three four"])

    def test_container(self):
        ecs, url = self.start(awsstub.Container, issuer=self.issuer, auth=CONTAINER_TOKEN)
        env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": url + "/v2/credentials/abc",
               "AWS_CONTAINER_AUTHORIZATION_TOKEN": CONTAINER_TOKEN}
        self.same_as_botocore(env, expect_source="ecs")
        self.assertEqual(ecs.calls[0]["path"], "/v2/credentials/abc")
        # EKS Pod Identity: the token file wins over the variable (botocore
        # 1.29 does not know the file yet: edgeload alone)
        env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "wrong"
        env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = self.write(
            os.path.join(self.home, "eks-token"), CONTAINER_TOKEN)
        _, issued = self.issuer.secret_of(self.resolved(env))
        self.assertEqual(issued["source"], "ecs")

    def test_instance_metadata(self):
        imds, url = self.start(awsstub.Imds, issuer=self.issuer)
        env = {"AWS_EC2_METADATA_DISABLED": None, "AWS_EC2_METADATA_SERVICE_ENDPOINT": url}
        self.same_as_botocore(env, expect_source="imds")
        first = imds.calls[0]
        self.assertEqual((first["method"], first["path"]), ("PUT", "/latest/api/token"))
        self.assertTrue(all(c.get("token") == awsstub.Imds.TOKEN
                            for c in imds.calls if c["method"] == "GET"), imds.calls)

    # ---- the order -------------------------------------------------------------

    def test_precedence(self):
        imds, imds_url = self.start(awsstub.Imds, issuer=self.issuer)
        ecs, ecs_url = self.start(awsstub.Container, issuer=self.issuer)
        proc = self.write(os.path.join(self.home, "proc.sh"),
                          "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"AKIAPROCESSKEY01\","
                          " \"SecretAccessKey\": \"ProcSecret0000000000000000\"}'\n", 0o700)
        self.issuer.add_static("AKIAPROCESSKEY01", "ProcSecret0000000000000000")
        env_keys = {"AWS_ACCESS_KEY_ID": ENV_AK, "AWS_SECRET_ACCESS_KEY": ENV_SK}
        web = {"AWS_WEB_IDENTITY_TOKEN_FILE": self.token_file(),
               "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/web"}
        meta = {"AWS_EC2_METADATA_DISABLED": None, "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds_url}
        ecs_env = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": ecs_url + "/c"}
        creds = "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n" % (
            STATIC_AK, STATIC_SK)

        def case(want, env, config="", credentials="", profile=None):
            self.write("config", config)
            self.write("credentials", credentials)
            with self.subTest(want=want, env=sorted(env), profile=profile):
                ak = self.same_as_botocore(env, profile)
                _, issued = self.issuer.secret_of(ak)
                got = issued["source"] if issued else ak
                self.assertEqual(got, want)

        everything = dict(env_keys, **web, **meta, **ecs_env)
        case(ENV_AK, everything, "[default]\ncredential_process = %s\n" % proc, creds)
        case("sts", dict(web, **meta, **ecs_env), "[default]\ncredential_process = %s\n" % proc,
             creds)
        case(STATIC_AK, dict(meta, **ecs_env), "[default]\ncredential_process = %s\n" % proc,
             creds)
        case("AKIAPROCESSKEY01", dict(meta, **ecs_env),
             "[default]\ncredential_process = %s\naws_access_key_id = AKIACONFIGFILE01\n"
             "aws_secret_access_key = c0nfig\n" % proc)
        case("ecs", dict(meta, **ecs_env))
        case("imds", meta)
        # role_arn comes before the keys of the same profile and before web
        # identity from the environment
        case("sts", dict(web, **meta), "[default]\nrole_arn = arn:aws:iam::1:role/r\n"
             "source_profile = default\n", creds)
        # --profile: the environment's keys and web identity are not used
        self.issuer.add_static("AKIAPROFILEKEY01", "ProfileSecret000000000000")
        case("AKIAPROFILEKEY01", dict(env_keys, **web), "",
             creds + "[p]\naws_access_key_id = AKIAPROFILEKEY01\n"
             "aws_secret_access_key = ProfileSecret000000000000\n", profile="p")

    # ---- failures: one line naming the source ----------------------------------

    def test_sts_failures(self):
        env = {"AWS_WEB_IDENTITY_TOKEN_FILE": self.token_file(),
               "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/loader"}
        self.sts.fail = (403, "AccessDenied", "Not authorized to perform "
                         "sts:AssumeRoleWithWebIdentity")
        self.fails(["STS AssumeRoleWithWebIdentity of arn:aws:iam::123456789012:role/loader",
                    "AccessDenied", "Not authorized"], env)
        self.sts.fail = None
        self.fails(["web identity token", "cannot read", "/nonexistent/token"],
                   dict(env, AWS_WEB_IDENTITY_TOKEN_FILE="/nonexistent/token"))
        self.fails(["AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"], dict(env, AWS_ROLE_ARN=None))
        self.sts.web_token = "another"
        self.fails(["InvalidIdentityToken"], env)
        self.fails(["STS", "cannot reach", "127.0.0.1:9"],
                   dict(env, AWS_ENDPOINT_URL_STS="http://127.0.0.1:9"))

    def test_role_failures(self):
        self.write("credentials", "[a]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                   % (STATIC_AK, STATIC_SK))
        self.write("config", "[profile mfa]\nrole_arn = arn:aws:iam::1:role/m\nsource_profile = a\n"
                   "mfa_serial = arn:aws:iam::1:mfa/me\n"
                   "[profile loop1]\nrole_arn = arn:aws:iam::1:role/l1\nsource_profile = loop2\n"
                   "[profile loop2]\nrole_arn = arn:aws:iam::1:role/l2\nsource_profile = loop1\n"
                   "[profile bad]\nrole_arn = arn:aws:iam::1:role/b\ncredential_source = Laptop\n"
                   "[profile none]\nrole_arn = arn:aws:iam::1:role/n\n"
                   "[profile gone]\nrole_arn = arn:aws:iam::1:role/g\nsource_profile = nowhere\n"
                   "[profile denied]\nrole_arn = arn:aws:iam::1:role/d\nsource_profile = a\n")
        self.fails(["profile 'mfa'", "mfa_serial", "cannot ask for an MFA code"], profile="mfa")
        self.fails(["loop"], profile="loop1")
        self.fails(["credential_source 'Laptop'", "Environment, Ec2InstanceMetadata, "
                    "EcsContainer"], profile="bad")
        self.fails(["profile 'none'", "neither source_profile nor credential_source"],
                   profile="none")
        self.fails(["source_profile 'nowhere'"], profile="gone")
        self.sts.fail = (403, "AccessDenied", "User is not authorized to perform sts:AssumeRole")
        self.fails(["STS AssumeRole of arn:aws:iam::1:role/d", "AccessDenied"], profile="denied")

    def test_sso_failures(self):
        self.write("config", "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\n"
                   "sso_role_name = Loader\n[sso-session corp]\n"
                   "sso_start_url = https://example.awsapps.com/start\nsso_region = %s\n"
                   "[profile half]\nsso_account_id = 1\n" % REGION)
        self.fails(["profile 'dev'", "run aws sso login --profile dev"], profile="dev")
        self.sso_cache("corp", expires_in=-60)
        self.fails(["expired", "run aws sso login --profile dev"], profile="dev")
        self.sso_cache("corp", token="NotTheRightSsoToken0000000")
        self.fails(["refused", "run aws sso login --profile dev"], profile="dev")
        self.fails(["profile 'half'", "sso_role_name"], profile="half")

    def test_process_failures(self):
        def with_script(body):
            p = self.write(os.path.join(self.home, "p.sh"), "#!/bin/sh\n" + body, 0o700)
            self.write("config", "[default]\ncredential_process = %s --flag secret-arg\n" % p)
            return p
        # the program's own message reaches the user as it wrote it, then ours
        p = with_script("echo 'helper: please log in' >&2\nexit 3\n")
        line = self.fails(["credential_process", p, "exited with status 3"], helper_lines=1)
        self.assertNotIn("secret-arg", line)
        with_script("echo '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"B\"}'\n")
        self.fails(["credential_process", "Version 1"])
        with_script("echo not json\n")
        self.fails(["credential_process", "not a JSON object"])
        with_script("echo '{\"Version\": 1, \"AccessKeyId\": \"A\"}'\n")
        self.fails(["credential_process", "no SecretAccessKey"])
        self.write("config", "[default]\ncredential_process = /nonexistent/helper\n")
        self.fails(["credential_process /nonexistent/helper", "cannot run"])

    def test_container_and_metadata_failures(self):
        ecs, url = self.start(awsstub.Container, issuer=self.issuer, auth=CONTAINER_TOKEN)
        self.fails(["container credentials", "HTTP 401", "AWS_CONTAINER_AUTHORIZATION_TOKEN"],
                   {"AWS_CONTAINER_CREDENTIALS_FULL_URI": url + "/c",
                    "AWS_CONTAINER_AUTHORIZATION_TOKEN": "wrong"})
        self.fails(["AWS_CONTAINER_CREDENTIALS_FULL_URI", "refused", "https"],
                   {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://192.0.2.1/creds"})
        imds, imds_url = self.start(awsstub.Imds, issuer=self.issuer, role=None)
        self.fails(["EC2 instance metadata", "no IAM role"],
                   {"AWS_EC2_METADATA_DISABLED": None,
                    "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds_url})

    def test_nothing_found_is_quick(self):
        t0 = time.time()
        line = self.fails(["no credentials found", "AWS_ACCESS_KEY_ID",
                           self.path("credentials"), "container credentials endpoint",
                           "EC2 instance metadata service http://127.0.0.1:9",
                           "no answer within 1 s"],
                          {"AWS_EC2_METADATA_DISABLED": None,
                           "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9"})
        self.assertLess(time.time() - t0, 5, line)

    # ---- the default addresses, in a network namespace of our own --------------

    def test_default_addresses_in_netns(self):
        if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
            self.skipTest("needs root, unshare and ip for a private network namespace")
        probe = subprocess.run(["unshare", "--net", "true"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("cannot make a network namespace: " + probe.stderr.decode()[-200:])
        helper = os.path.join(HERE, "..", "tools", "netns_creds.py")
        env = dict(self.env)
        env.update({"EDGELOAD_BIN": self.bin, "PYTHONPATH": os.path.join(HERE, "..", "tools")})
        for name in ("AWS_EC2_METADATA_DISABLED", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_SSO"):
            env.pop(name, None)
        out = subprocess.run(["unshare", "--net", "/usr/bin/python3", helper], env=env,
                             capture_output=True, text=True, timeout=120)
        assert_no_sanitizer_report(out.stderr)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        res = json.loads(out.stdout.strip().splitlines()[-1])
        for case in ("relative_uri", "imds_default"):
            with self.subTest(case=case):
                r = res[case]
                self.assertEqual(r["rc"], 2, r)
                self.assertTrue(r["edgeload"], r)
                self.assertEqual(r["edgeload"], r["botocore"], r)


if __name__ == "__main__":
    unittest.main(verbosity=2)
