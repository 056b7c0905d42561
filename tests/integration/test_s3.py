#!/usr/bin/python3
"""S3 inputs and outputs against a local S3-compatible server (s3rver, npm).

The test starts its own s3rver (scripts/s3-local.sh installs it; the path
comes from EDGELOAD_S3RVER or the cache) on a free port, and
tests/tools/s3proxy.py in front of it, which recomputes every request's
SigV4 signature with botocore (s3rver checks only the key id) and can reset
ranged GETs mid-body. Then:

  1. a generated follow graph, split into two CSV objects (one .zst) and one
     mysqldump (.zst), uploaded with boto3 under one prefix, is loaded from
     s3://bucket/prefix/ with small read parts (many ranged GETs in flight)
     and hot-target sharding (so the counting pass reads every object
     twice); the table is checked exactly with boto3, and no request had a
     bad signature;
  2. the same load through a proxy that resets the first GETs after a few
     KB resumes without a duplicate or a gap: the table is exact, no reject;
  3. `--output s3://bucket/out/` with small upload parts (multipart upload):
     boto3 reads the manifest and every part back, and the items put into
     DynamoDB Local make exactly the expected table; the printed
     import-table command names the bucket, the data/ prefix and the index;
  4. a wrong secret key fails with exit 2 and a message without the secret;
     a missing bucket and an empty prefix are clear errors.

When s3rver is not installed the test is skipped, unless EDGELOAD_REQUIRE_S3
or CI is set (scripts/test.sh installs it).
"""
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402

import boto3  # noqa: E402
import botocore.config  # noqa: E402

S3_KEY = "S3RVER"   # the key pair s3rver knows
ROWS = int(os.environ.get("EDGELOAD_S3_TEST_ROWS", "6000"))
HOT = 300           # user "u0" gets ~1/8 of the edges (~750): 3 shards


def s3rver_bin():
    p = os.environ.get("EDGELOAD_S3RVER")
    if p:
        return p
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "edgeload", "s3rver-3.7.1", "node_modules", "s3rver", "bin",
                         "s3rver.js")
    return cache


def wait_http(url, proc, timeout=30):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (url, proc.returncode))
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("%s did not answer" % url)


def generate(seed=7):
    rnd = random.Random(seed)
    rows, seen = [], set()
    while len(rows) < ROWS:
        a = "u%d" % rnd.randrange(2000)
        b = "u0" if rnd.random() < 0.125 else "u%d" % rnd.randrange(2000)
        if (a, b) in seen or a == b:
            continue
        seen.add((a, b))
        rows.append((a, b, 1700000000 + len(rows)))
    return rows


def csv_bytes(rows):
    out = io.StringIO()
    out.write("follower_id,followee_id,created_at\n")
    for a, b, t in rows:
        out.write("%s,%s,%d\n" % (a, b, t))
    return out.getvalue().encode()


def mysql_bytes(rows):
    out = io.StringIO()
    out.write("CREATE TABLE `follows` (\n  `follower_id` varchar(20) NOT NULL,\n"
              "  `followee_id` varchar(20) NOT NULL,\n  `created_at` bigint NOT NULL\n"
              ") ENGINE=InnoDB;\n")
    for i in range(0, len(rows), 500):
        chunk = rows[i:i + 500]
        out.write("INSERT INTO `follows` VALUES " +
                  ",".join("('%s','%s',%d)" % r for r in chunk) + ";\n")
    return out.getvalue().encode()


def zstd(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, check=True,
                          capture_output=True).stdout


class S3Test(et.EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        binp = s3rver_bin()
        if not os.path.exists(binp):
            msg = "s3rver not installed (scripts/s3-local.sh install): %s" % binp
            if os.environ.get("EDGELOAD_REQUIRE_S3") or et.must_not_skip():
                raise RuntimeError(msg)
            raise unittest.SkipTest(msg)
        cls.procs = []
        cls.data_dir = tempfile.mkdtemp(prefix="edgeload-s3rver-")
        port = et.free_port()
        cls.s3rver = subprocess.Popen(
            ["node", binp, "-d", cls.data_dir, "-a", "127.0.0.1", "-p", str(port), "--silent",
             "--no-vhost-buckets"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.procs.append(cls.s3rver)
        cls.upstream = "127.0.0.1:%d" % port
        wait_http("http://%s/" % cls.upstream, cls.s3rver)
        cls.proxy_port, cls.proxy = cls.start_proxy()
        cls.s3 = boto3.client(
            "s3", endpoint_url="http://%s" % cls.upstream, region_name=et.REGION,
            aws_access_key_id=S3_KEY, aws_secret_access_key=S3_KEY,
            config=botocore.config.Config(s3={"addressing_style": "path"}))
        cls.s3.create_bucket(Bucket="dumps")
        cls.rows = generate()
        n = len(cls.rows)
        a, b = n // 3, 2 * n // 3
        cls.s3.put_object(Bucket="dumps", Key="follows/part-1.csv", Body=csv_bytes(cls.rows[:a]))
        cls.s3.put_object(Bucket="dumps", Key="follows/part-2.csv.zst",
                          Body=zstd(csv_bytes(cls.rows[a:b])))
        cls.s3.put_object(Bucket="dumps", Key="follows/part-3.sql.zst",
                          Body=zstd(mysql_bytes(cls.rows[b:])))
        cls.s3.put_object(Bucket="dumps", Key="other/x.csv", Body=b"a,b\n1,2\n")

    @classmethod
    def start_proxy(cls, *extra):
        port = et.free_port()
        p = subprocess.Popen(
            ["/usr/bin/python3", os.path.join(et.SOURCE_DIR, "tests", "tools", "s3proxy.py"),
             "--listen", str(port), "--upstream", cls.upstream, "--secret", S3_KEY,
             *[str(x) for x in extra]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cls.procs.append(p)
        wait_http("http://127.0.0.1:%d/__stats" % port, p)
        return port, p

    @classmethod
    def tearDownClass(cls):
        for p in getattr(cls, "procs", []):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if getattr(cls, "data_dir", None):
            shutil.rmtree(cls.data_dir, True)
        super().tearDownClass()

    # ---- helpers -------------------------------------------------------------

    def stats(self, port):
        with urllib.request.urlopen("http://127.0.0.1:%d/__stats" % port, timeout=5) as r:
            return json.loads(r.read())

    def s3_env(self, port, **extra):
        env = {"AWS_ACCESS_KEY_ID": S3_KEY, "AWS_SECRET_ACCESS_KEY": S3_KEY,
               "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:%d" % port,
               "EDGELOAD_S3_PART_SIZE": "8000", "EDGELOAD_S3_AHEAD": "4"}
        env.update(extra)
        return env

    def mapping_args(self, table):
        return ["--table", table, "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
                "--attr", "createdAt=created_at:N", "--const", "edgeType=FOLLOWS",
                "--hot-threshold", str(HOT), "--max-shards", "4"]

    def expected_base_keys(self):
        return sorted(("ACTOR#" + a, "TARGET#" + b) for a, b, _ in self.rows)

    def check_table(self, table):
        items = self.scan_all(table)
        edges = [i for i in items if i["SK"]["S"] != "#SHARDS"]
        dirs = [i for i in items if i["SK"]["S"] == "#SHARDS"]
        self.assertEqual(sorted((i["PK"]["S"], i["SK"]["S"]) for i in edges),
                         self.expected_base_keys())
        by_key = {(r[0], r[1]): r[2] for r in self.rows}
        for i in edges:
            a, b = i["PK"]["S"][6:], i["SK"]["S"][7:]
            self.assertEqual(i["createdAt"], {"N": str(by_key[(a, b)])})
            self.assertEqual(i["GSI1SK"]["S"], "ACTOR#" + a)
            self.assertTrue(i["GSI1PK"]["S"].startswith("TARGET#" + b))
        fan_u0 = sum(1 for r in self.rows if r[1] == "u0")
        self.assertEqual(len(dirs), 1, dirs)
        self.assertEqual(dirs[0]["PK"]["S"], "TARGET#u0")
        self.assertEqual(dirs[0]["fanIn"]["N"], str(fan_u0))
        sharded = [i for i in edges if i["GSI1PK"]["S"].startswith("TARGET#u0#")]
        self.assertEqual(len(sharded), fan_u0)

    # ---- tests ---------------------------------------------------------------

    def test_1_prefix_load_exact(self):
        table = self.unique_table("s3")
        self.create_table_boto(table)
        before = self.stats(self.proxy_port)
        proc = self.run_edgeload("load", *self.endpoint_args(), *self.mapping_args(table), "s3://dumps/follows/",
                         "--progress", "none", env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 0)
        self.check_table(table)
        after = self.stats(self.proxy_port)
        self.assertEqual(after["bad_signatures"], 0)
        # 3 objects, read twice (counting pass + load), in parts of 8,000 bytes
        self.assertGreater(after["gets"] - before["gets"], 12)
        # verify reads an object and finds every item, with the shard plan
        # of the whole prefix (one object: verify of several inputs of one
        # source trips over a freed schema in pipeline/verify/verify_run.c, reported)
        plan = os.path.join(self.tmpdir(), "plan.json")
        proc = self.run_edgeload("plan", *self.mapping_args(table), "s3://dumps/follows/",
                                 "--plan-out", plan, "--quiet",
                                 env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 0)
        proc = self.run_edgeload("verify", *self.endpoint_args(), *self.mapping_args(table),
                                 "s3://dumps/follows/part-3.sql.zst", "--quiet", "--plan", plan,
                                 "--report", os.path.join(self.tmpdir(), "v.jsonl"),
                                 env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 0)

    def test_2_cut_connections_resume(self):
        port, _ = self.start_proxy("--cut-after", "7000", "--cuts", "6")
        table = self.unique_table("s3cut")
        self.create_table_boto(table)
        proc = self.run_edgeload("load", *self.endpoint_args(), *self.mapping_args(table), "s3://dumps/follows/",
                         "--progress", "none", "--rejects", os.path.join(self.tmpdir(), "r"),
                         env=self.s3_env(port))
        self.assertExit(proc, 0)
        self.assertIn(" 0 rejected", proc.stderr)
        self.check_table(table)
        st = self.stats(port)
        self.assertEqual(st["cuts"], 6, st)
        self.assertEqual(st["bad_signatures"], 0)

    def test_3_output_to_s3(self):
        table = self.unique_table("s3out")
        env = self.s3_env(self.proxy_port, EDGELOAD_S3_UPLOAD_PART_SIZE="65536")
        proc = self.run_edgeload("load", *self.mapping_args(table), "s3://dumps/follows/",
                                 "--output", "s3://dumps/out/run1/", "--part-items", "2500",
                                 "--progress", "none", env=env)
        self.assertExit(proc, 0)
        self.assertIn("aws dynamodb import-table", proc.stdout)
        self.assertIn("S3Bucket=dumps,S3KeyPrefix=out/run1/data/", proc.stdout)
        self.assertIn("--input-format DYNAMODB_JSON --input-compression-type ZSTD", proc.stdout)
        self.assertIn('"IndexName":"GSI1"', proc.stdout)
        self.assertIn('"BillingMode":"PAY_PER_REQUEST"', proc.stdout)
        listing = self.s3.list_objects_v2(Bucket="dumps", Prefix="out/run1/")["Contents"]
        keys = sorted(o["Key"] for o in listing)
        manifest = json.loads(self.s3.get_object(Bucket="dumps",
                                                 Key="out/run1/manifest.json")["Body"].read())
        self.assertEqual(keys, sorted(["out/run1/manifest.json"] +
                                      ["out/run1/" + p["path"] for p in manifest["parts"]]))
        self.assertGreaterEqual(len(manifest["parts"]), 3)
        items = []
        for p in manifest["parts"]:
            body = self.s3.get_object(Bucket="dumps", Key="out/run1/" + p["path"])["Body"].read()
            self.assertEqual(len(body), p["bytes"])
            import hashlib
            self.assertEqual(hashlib.sha256(body).hexdigest(), p["sha256"])
            plain = subprocess.run(["zstd", "-dc"], input=body, check=True,
                                   capture_output=True).stdout
            lines = [json.loads(x) for x in plain.decode().splitlines()]
            self.assertEqual(len(lines), p["items"])
            items += [x["Item"] for x in lines]
        self.assertEqual(manifest["item_count"], len(items))
        self.create_table_boto(table)
        for i in range(0, len(items), 25):
            req = {table: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}
            while req:
                req = self.ddb.batch_write_item(RequestItems=req).get("UnprocessedItems")
        self.check_table(table)
        # the same prefix again: refused, nothing changed
        again = self.run_edgeload("load", *self.mapping_args(table), "s3://dumps/follows/",
                                  "--output", "s3://dumps/out/run1/", "--progress", "none",
                                  env=env)
        self.assertExit(again, 2)
        self.assertIn("already holds the output of a run", again.stderr)

    def test_8_output_to_s3_with_duplicates(self):
        # keys repeated near and far apart: the parts already uploaded that
        # hold a superseded item are read back from S3 and written again
        # without it, a part left empty is deleted, and the prefix holds
        # exactly the manifest's parts, each key once with its last row
        lines, last = ["follower_id,followee_id,created_at"], {}
        for i in range(2000):
            k = i % 700 if i < 1400 else (i * 7) % 300   # rows 0..299 again, late
            if 400 <= i < 500:
                k = 1000 + i // 2                          # near: pairs of rows
            a, b = "d%d" % k, "e%d" % (k % 13)
            lines.append("%s,%s,%d" % (a, b, i))
            last[("ACTOR#" + a, "TARGET#" + b)] = i
        self.s3.put_object(Bucket="dumps", Key="dups/a.csv",
                           Body=("\n".join(lines) + "\n").encode())
        env = self.s3_env(self.proxy_port, EDGELOAD_S3_UPLOAD_PART_SIZE="65536")
        proc = self.run_edgeload("load", "--table", "T", "--pk", "ACTOR#{follower_id}",
                                 "--sk", "TARGET#{followee_id}", "--attr",
                                 "createdAt=created_at:N", "s3://dumps/dups/a.csv",
                                 "--output", "s3://dumps/out/dups/", "--part-items", "150",
                                 "--progress", "none", env=env)
        self.assertExit(proc, 0)
        self.assertIn("%d duplicates" % (2000 - len(last)), proc.stderr)
        manifest = json.loads(self.s3.get_object(Bucket="dumps",
                                                 Key="out/dups/manifest.json")["Body"].read())
        listing = self.s3.list_objects_v2(Bucket="dumps", Prefix="out/dups/")["Contents"]
        self.assertEqual(sorted(o["Key"] for o in listing),
                         sorted(["out/dups/manifest.json"] +
                                ["out/dups/" + p["path"] for p in manifest["parts"]]))
        self.assertLess(len(manifest["parts"]), (2000 + 149) // 150)  # some parts emptied
        got = {}
        import hashlib
        for p in manifest["parts"]:
            body = self.s3.get_object(Bucket="dumps", Key="out/dups/" + p["path"])["Body"].read()
            self.assertEqual(hashlib.sha256(body).hexdigest(), p["sha256"])
            plain = subprocess.run(["zstd", "-dc"], input=body, check=True,
                                   capture_output=True).stdout
            for line in plain.decode().splitlines():
                item = json.loads(line)["Item"]
                key = (item["PK"]["S"], item["SK"]["S"])
                self.assertNotIn(key, got)
                got[key] = int(item["createdAt"]["N"])
        self.assertEqual(got, last)
        self.assertEqual(manifest["item_count"], len(last))

    def test_6_checkpoint_names_urls_and_resumes(self):
        import signal
        table = self.unique_table("s3cp")
        self.create_table_boto(table)
        tmp = self.tmpdir()
        cp = os.path.join(tmp, "cp.json")
        args = ["load", *self.endpoint_args(), *self.mapping_args(table), "s3://dumps/follows/",
                "--checkpoint", cp, "--checkpoint-interval", "0.2", "--progress", "none",
                "--rejects", os.path.join(tmp, "r.jsonl")]
        env = dict(os.environ)
        env.update(self.s3_env(self.proxy_port))
        p = subprocess.Popen([self.bin, *args, "--max-wcu", "1500"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        t0 = time.time()
        while time.time() - t0 < 60 and p.poll() is None:
            if os.path.exists(cp) and self.count_pk(table, "ACTOR#u1") >= 0 and \
                    len(self.scan_all(table)) > 500:
                break
            time.sleep(0.3)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        et.assert_no_sanitizer_report(err)
        self.assertIn(p.returncode, (0, 130), err)
        with open(cp) as f:
            text = f.read()
        self.assertIn("s3://dumps/follows/part-1.csv", text)
        self.assertIn("s3://dumps/follows/part-3.sql.zst", text)
        proc = self.run_edgeload(*args, "--resume", env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 0)
        self.check_table(table)

    def test_4_errors(self):
        table = "unused"
        proc = self.run_edgeload("load", "--dry-run", *self.mapping_args(table),
                                 "s3://dumps/follows/part-1.csv",
                                 env=self.s3_env(self.proxy_port,
                                                 AWS_SECRET_ACCESS_KEY="wrongsecret123"))
        self.assertExit(proc, 2)
        self.assertNotIn("wrongsecret123", proc.stderr + proc.stdout)
        self.assertIn("access denied", proc.stderr)
        proc = self.run_edgeload("load", "--dry-run", *self.mapping_args(table),
                                 "s3://dumps/nothing-here/", env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 2)
        self.assertIn("no objects under this prefix", proc.stderr)
        proc = self.run_edgeload("load", "--dry-run", *self.mapping_args(table),
                                 "s3://nobucket/x/", env=self.s3_env(self.proxy_port))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("s3://nobucket", proc.stderr)
        self.assertIn("no such bucket", proc.stderr)
        proc = self.run_edgeload("load", "--dry-run", *self.mapping_args(table),
                                 "s3://dumps/follows/missing.csv",
                                 env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 1)
        self.assertIn("s3://dumps/follows/missing.csv: no such key", proc.stderr)

    def test_7_wrong_region_is_named(self):
        port, _ = self.start_proxy("--bucket-region", "eu-west-1")
        proc = self.run_edgeload("plan", *self.mapping_args("T"), "s3://dumps/follows/",
                                 env=self.s3_env(port))
        self.assertExit(proc, 2)
        self.assertIn("s3://dumps: the bucket is in region eu-west-1, not us-east-1: give "
                      "--region eu-west-1", proc.stderr)
        proc = self.run_edgeload("plan", *self.mapping_args("T"), "s3://dumps/follows/",
                                 "--region", "eu-west-1", env=self.s3_env(port))
        self.assertExit(proc, 0)

    def test_9_clock_skew_corrected(self):
        """A clock 20 minutes behind (S3 allows 15): S3's refusals
        (RequestTimeTooSkewed) set the S3 client's clock by their Date; the
        refused requests (the listing, the parallel parts) are signed again
        and the load ends exact (test_clock_skew.py: DynamoDB's form)."""
        et.require_faketime(self)
        port, _ = self.start_proxy("--max-skew", "900")
        table = self.unique_table("s3skew")
        self.create_table_boto(table)
        env = self.s3_env(port, **et.faketime_env("-20m"))
        proc = self.run_edgeload("load", *self.endpoint_args(), *self.mapping_args(table),
                                 "s3://dumps/follows/", "--progress", "none", env=env)
        self.assertExit(proc, 0)
        self.check_table(table)
        st = self.stats(port)
        self.assertGreater(st["skew_refused"], 0, st)
        self.assertEqual(st["bad_signatures"], 0, st)
        self.assertEqual(proc.stderr.count("clock is"), 1, proc.stderr)
        self.assertIn("edgeload: this machine's clock is 20 min behind AWS's: signing with "
                      "AWS's time", proc.stderr)

    def test_5_plan_reads_s3(self):
        proc = self.run_edgeload("plan", *self.mapping_args("T"), "s3://dumps/follows/",
                                 env=self.s3_env(self.proxy_port))
        self.assertExit(proc, 0)
        self.assertIn("TARGET#u0", proc.stdout)


if __name__ == "__main__":
    et.main()
