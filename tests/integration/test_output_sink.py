#!/usr/bin/python3
"""`edgeload load --output DIR`: the files are what DynamoDB accepts.

A deterministic follow graph (a few thousand edges, with notes holding
quotes, backslashes, commas, newlines and non-ASCII text) is written with
`--output DIR --part-items 1000`, with no AWS configuration at all. The test

  1. checks the manifest against the files: format, compression, table,
     item counts, compressed and uncompressed sizes, and the SHA-256 of every
     part recomputed here; no temporary file is left behind;
  2. decompresses every part with the zstd CLI (Python's stdlib has no
     zstd), parses every line as {"Item": {...}}, and compares the items with
     what `load --dry-run` prints for the same input and with the items the
     generated rows must become;
  3. puts EVERY item from the parts into a fresh table on DynamoDB Local
     (created by `$EDGELOAD_BIN create-table`) with boto3's low-level
     batch_write_item, resending UnprocessedItems, then Scans the table and
     checks it holds exactly the expected items; one index query checks the
     inverted keys;
  4. checks a directory that already holds a run is refused (exit 2) and
     left as it was.

Endpoint: EDGELOAD_DDB_ENDPOINT (default http://127.0.0.1:8000). When it is
unreachable the DynamoDB test is skipped, or fails when CI is set.
"""
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import boto3
from botocore.config import Config

ENDPOINT = os.environ.get("EDGELOAD_DDB_ENDPOINT", "http://127.0.0.1:8000")
REGION = "us-east-1"
N_EDGES = 3217          # not a multiple of the part size: the last part is short
PART_ITEMS = 1000
NOTES = ['says "hi"', "back\\slash", "comma, inside", "two\nlines", "caf\u00e9 \u2603",
         "tab\there", "{braces}", ""]


def generate(path):
    """Writes the CSV and returns the rows as (follower, followee, created_at, note)."""
    rng = random.Random(20240611)
    rows, seen = [], set()
    while len(rows) < N_EDGES:
        follower = f"u{rng.randrange(400)}"
        followee = f"u{min(rng.randrange(300), rng.randrange(300))}"  # skewed fan-in
        if (follower, followee) in seen:
            continue
        seen.add((follower, followee))
        note = NOTES[len(rows) % len(NOTES)]
        rows.append((follower, followee, 1718900000 + len(rows), note))
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("follower_id,followee_id,created_at,note\r\n")
        for follower, followee, created, note in rows:
            # an unquoted empty field is NULL: the attribute is left out
            quoted = '"' + note.replace('"', '""') + '"' if note else ""
            f.write(f"{follower},{followee},{created},{quoted}\r\n")
    return rows


def expected_items(rows):
    items = []
    for follower, followee, created, note in rows:
        item = {
            "PK": {"S": f"ACTOR#{follower}"}, "SK": {"S": f"TARGET#{followee}"},
            "GSI1PK": {"S": f"TARGET#{followee}"}, "GSI1SK": {"S": f"ACTOR#{follower}"},
            "createdAt": {"N": str(created)}, "edgeType": {"S": "FOLLOWS"},
        }
        if note:
            item["note"] = {"S": note}
        items.append(item)
    return items


def key(item):
    return (item["PK"]["S"], item["SK"]["S"])


def endpoint_reachable():
    try:
        urllib.request.urlopen(ENDPOINT, timeout=3)
    except urllib.error.HTTPError:
        return True     # DynamoDB Local answers GET / with 400
    except OSError:
        return False
    return True


class OutputSinkTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("EDGELOAD_BIN")
        if not cls.bin:
            raise unittest.SkipTest("EDGELOAD_BIN is not set")
        cls.tmp = tempfile.TemporaryDirectory(prefix="edgeload_output_")
        cls.csv = os.path.join(cls.tmp.name, "follows.csv")
        cls.rows = generate(cls.csv)
        cls.expected = expected_items(cls.rows)
        cls.out = os.path.join(cls.tmp.name, "out")
        cls.mapping_args = ["--table", "Graph", "--pk", "ACTOR#{follower_id}",
                            "--sk", "TARGET#{followee_id}", "--attr", "createdAt=created_at:N",
                            "--attr", "note=note", "--const", "edgeType=FOLLOWS"]
        cls.proc = cls.edgeload(["load", "--output", cls.out, "--part-items", str(PART_ITEMS),
                                 *cls.mapping_args, "--quiet", cls.csv], no_aws=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def edgeload(cls, args, no_aws=False, **kw):
        """Runs the binary; with no_aws, in an environment with no AWS setting at all."""
        env = dict(os.environ)
        home = os.path.join(cls.tmp.name, "home")
        os.makedirs(home, exist_ok=True)
        if no_aws:
            env = {k: v for k, v in env.items() if not k.startswith("AWS_")}
            env["HOME"] = home
        else:
            env.update({"AWS_ACCESS_KEY_ID": "fakeKeyId", "AWS_SECRET_ACCESS_KEY": "fakeSecret",
                        "AWS_REGION": REGION, "HOME": home})
        return subprocess.run([cls.bin, *args], env=env, capture_output=True, timeout=300,
                              cwd=cls.tmp.name, **kw)

    def part_lines(self):
        """Every line of every part listed in the manifest, in order, as text."""
        with open(os.path.join(self.out, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        lines = []
        for part in manifest["parts"]:
            data = subprocess.run(["zstd", "-dc", os.path.join(self.out, part["path"])],
                                  check=True, capture_output=True).stdout
            text = data.decode("utf-8")
            self.assertTrue(text.endswith("\n"), part["path"])
            lines.extend(text[:-1].split("\n"))
        return lines

    def items_from_parts(self):
        items = []
        for line in self.part_lines():
            obj = json.loads(line)
            self.assertEqual(list(obj), ["Item"], line)
            items.append(obj["Item"])
        return items

    # ---- the files ----

    def test_run_succeeded(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr.decode(errors="replace"))

    def test_manifest_matches_the_files(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr.decode(errors="replace"))
        with open(os.path.join(self.out, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        self.assertEqual(manifest["format"], "DYNAMODB_JSON")
        self.assertEqual(manifest["compression"], "ZSTD")
        self.assertEqual(manifest["table"], "Graph")
        self.assertEqual(manifest["item_count"], N_EDGES)
        self.assertTrue(manifest["created_by"].startswith("edgeload "))
        parts = manifest["parts"]
        self.assertEqual(len(parts), -(-N_EDGES // PART_ITEMS))
        self.assertEqual(sum(p["items"] for p in parts), N_EDGES)
        for i, part in enumerate(parts):
            self.assertEqual(part["path"], f"data/part-{i:05d}.json.zst")
            self.assertLessEqual(part["items"], PART_ITEMS)
            path = os.path.join(self.out, part["path"])
            with open(path, "rb") as f:
                raw = f.read()
            self.assertEqual(part["bytes"], len(raw))
            self.assertEqual(part["sha256"], hashlib.sha256(raw).hexdigest())
            plain = subprocess.run(["zstd", "-dc", path], check=True,
                                   capture_output=True).stdout
            self.assertEqual(part["uncompressed_bytes"], len(plain))
            self.assertEqual(plain.count(b"\n"), part["items"])
        self.assertEqual([p["items"] for p in parts[:-1]], [PART_ITEMS] * (len(parts) - 1))
        # nothing but the listed parts: no temporary or stray file
        self.assertEqual(sorted(os.listdir(os.path.join(self.out, "data"))),
                         sorted(os.path.basename(p["path"]) for p in parts))
        self.assertEqual(sorted(os.listdir(self.out)), ["data", "manifest.json"])

    def test_items_match_dry_run_and_input(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr.decode(errors="replace"))
        lines = self.part_lines()
        dry = self.edgeload(["load", "--dry-run", *self.mapping_args, "--quiet", self.csv],
                            no_aws=True)
        self.assertEqual(dry.returncode, 0, dry.stderr.decode(errors="replace"))
        dry_lines = dry.stdout.decode("utf-8").splitlines()
        # the same bytes, line for line (one input: the same order too)
        self.assertEqual(len(lines), N_EDGES)
        self.assertEqual(lines, dry_lines)
        got = sorted((json.loads(line)["Item"] for line in lines), key=key)
        self.assertEqual(got, sorted(self.expected, key=key))

    def test_used_directory_is_refused(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr.decode(errors="replace"))
        before = {name: os.stat(os.path.join(self.out, "data", name)).st_mtime_ns
                  for name in os.listdir(os.path.join(self.out, "data"))}
        with open(os.path.join(self.out, "manifest.json"), "rb") as f:
            manifest = f.read()
        again = self.edgeload(["load", "--output", self.out, *self.mapping_args, "--quiet",
                               self.csv], no_aws=True)
        self.assertEqual(again.returncode, 2, again.stderr.decode(errors="replace"))
        self.assertIn(b"already holds", again.stderr)
        after = {name: os.stat(os.path.join(self.out, "data", name)).st_mtime_ns
                 for name in os.listdir(os.path.join(self.out, "data"))}
        self.assertEqual(before, after)
        with open(os.path.join(self.out, "manifest.json"), "rb") as f:
            self.assertEqual(f.read(), manifest)

    def test_output_and_dry_run_together_is_a_usage_error(self):
        proc = self.edgeload(["load", "--output", os.path.join(self.tmp.name, "other"),
                              "--dry-run", *self.mapping_args, self.csv], no_aws=True)
        self.assertEqual(proc.returncode, 2)
        self.assertFalse(os.path.exists(os.path.join(self.tmp.name, "other")))

    def test_interrupted_run_writes_no_manifest(self):
        """SIGINT mid-run: exit 130, closed parts stay, no manifest, no temporary file."""
        out = os.path.join(self.tmp.name, "interrupted")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        proc = subprocess.Popen(
            [self.bin, "load", "--output", out, "--part-items", "700", "--format", "csv",
             *self.mapping_args, "--quiet", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        try:
            with open(self.csv, "rb") as f:
                lines = f.read().split(b"\r\n")
            # the notes hold no CR LF, so every CRLF ends a record
            proc.stdin.write(b"\r\n".join(lines[:2001]) + b"\r\n")
            proc.stdin.flush()
            data = os.path.join(out, "data")
            deadline = time.time() + 60
            while time.time() < deadline and not (
                    os.path.isdir(data) and any(n.startswith(".part-") for n in os.listdir(data))):
                time.sleep(0.02)
            self.assertTrue(os.path.isdir(data), "the run never started writing")
            proc.send_signal(2)
            time.sleep(0.2)
            try:
                # a reader blocked on standard input sees the stop after more input
                proc.stdin.write(b"\r\n".join(lines[2001:2101]) + b"\r\n")
                proc.stdin.close()
            except BrokenPipeError:
                pass   # it had stopped already
            proc.wait(timeout=60)
            err = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stderr.close()
        self.assertEqual(proc.returncode, 130, err.decode(errors="replace"))
        self.assertFalse(os.path.exists(os.path.join(out, "manifest.json")))
        names = os.listdir(os.path.join(out, "data"))
        self.assertEqual([n for n in names if n.startswith(".")], [])
        self.assertEqual(os.listdir(out), ["data"])
        for name in names:   # what is there is whole
            subprocess.run(["zstd", "-tq", os.path.join(out, "data", name)], check=True)

    # ---- into DynamoDB ----

    def test_every_item_loads_into_dynamodb_local(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr.decode(errors="replace"))
        if not endpoint_reachable():
            if os.environ.get("CI"):
                self.fail(f"DynamoDB Local is not reachable at {ENDPOINT} (CI is set)")
            self.skipTest(f"DynamoDB Local is not reachable at {ENDPOINT}")
        table = f"edgeload_output_{os.getpid()}_{random.randrange(1 << 30)}"
        created = self.edgeload(["create-table", "--table", table, "--endpoint-url", ENDPOINT,
                                 "--region", REGION])
        self.assertEqual(created.returncode, 0, created.stderr.decode(errors="replace"))
        client = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
                              aws_access_key_id="fakeKeyId", aws_secret_access_key="fakeSecret",
                              config=Config(retries={"max_attempts": 10, "mode": "standard"}))
        try:
            items = self.items_from_parts()
            self.assertEqual(len(items), N_EDGES)
            for i in range(0, len(items), 25):
                request = {table: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}
                for attempt in range(20):
                    resp = client.batch_write_item(RequestItems=request)
                    request = resp.get("UnprocessedItems") or {}
                    if not request:
                        break
                    time.sleep(min(2.0, 0.05 * 2 ** attempt))
                self.assertEqual(request, {}, "items left unprocessed")

            scanned = []
            kwargs = {"TableName": table, "ConsistentRead": True}
            while True:
                page = client.scan(**kwargs)
                scanned.extend(page["Items"])
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            self.assertEqual(len(scanned), N_EDGES)
            self.assertEqual(sorted(scanned, key=key), sorted(self.expected, key=key))

            # the inverted keys answer the reverse question through the index
            target = "TARGET#u0"
            want = sorted(k[0] for k in map(key, self.expected) if k[1] == target)
            got, kwargs = [], {"TableName": table, "IndexName": "GSI1",
                               "KeyConditionExpression": "GSI1PK = :t",
                               "ExpressionAttributeValues": {":t": {"S": target}}}
            while True:
                page = client.query(**kwargs)
                got.extend(it["GSI1SK"]["S"] for it in page["Items"])
                if "LastEvaluatedKey" not in page:
                    break
                kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            self.assertGreater(len(want), 1)
            self.assertEqual(sorted(got), want)
        finally:
            try:
                client.delete_table(TableName=table)
            except client.exceptions.ResourceNotFoundException:
                pass
            client.close()


if __name__ == "__main__":
    unittest.main(verbosity=2, argv=[sys.argv[0]])
