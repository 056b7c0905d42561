#!/usr/bin/python3
"""The DynamoDB client against DynamoDB Local, judged by boto3.

- runs the live group of tests/unit/test_ddb_client (create a table, describe
  it, a 25-item BatchWriteItem through the multi interface, parse the answer)
  with EDGELOAD_DDB_ENDPOINT set, so ctest exercises it whenever DynamoDB
  Local is up;
- `edgeload create-table` (ALL and KEYS_ONLY projections, --no-index) makes
  exactly the table boto3 describes: string PK/SK, PAY_PER_REQUEST, the GSI
  with its own string keys, all ACTIVE; a second create-table fails with exit
  status 2 and says the table exists; the credentials and region come from a
  profile in a temporary ~/.aws, as the AWS CLI would read them.

Endpoint: EDGELOAD_DDB_ENDPOINT, else http://127.0.0.1:8000; skipped when
nothing answers there. Tables are named edgeload_it_<pid>_<n> and deleted.
"""
import os
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

import boto3

ENDPOINT = os.environ.get("EDGELOAD_DDB_ENDPOINT", "http://127.0.0.1:8000")
REGION = "eu-west-1"


def reachable(url):
    u = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((u.hostname, u.port or 80), timeout=2):
            return True
    except OSError:
        return False


class DynamoLocalTest(unittest.TestCase):
    counter = 0

    @classmethod
    def setUpClass(cls):
        if not reachable(ENDPOINT):
            raise unittest.SkipTest(f"DynamoDB Local is not running at {ENDPOINT}")
        cls.bin = os.environ.get("EDGELOAD_BIN")
        cls.ddb = boto3.client("dynamodb", endpoint_url=ENDPOINT, region_name=REGION,
                               aws_access_key_id="local", aws_secret_access_key="local")
        cls.home = tempfile.TemporaryDirectory()
        aws = os.path.join(cls.home.name, ".aws")
        os.mkdir(aws, 0o700)
        with open(os.path.join(aws, "credentials"), "w") as f:
            f.write("[it]\naws_access_key_id = AKIDLOCAL\naws_secret_access_key = a:b/c+d\n")
        os.chmod(os.path.join(aws, "credentials"), 0o600)
        with open(os.path.join(aws, "config"), "w") as f:
            f.write(f"[profile it]\nregion = {REGION}\n")

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanup()

    def setUp(self):
        self.tables = []

    def tearDown(self):
        for t in self.tables:
            try:
                self.ddb.delete_table(TableName=t)
            except self.ddb.exceptions.ResourceNotFoundException:
                pass

    def table_name(self):
        DynamoLocalTest.counter += 1
        name = f"edgeload_it_{os.getpid()}_{DynamoLocalTest.counter}"
        self.tables.append(name)
        return name

    def test_unit_live_group(self):
        if not self.bin:
            self.skipTest("EDGELOAD_BIN not set")
        unit = os.path.join(os.path.dirname(self.bin), "tests", "test_ddb_client")
        if not os.access(unit, os.X_OK):
            self.skipTest(f"{unit} not built")
        env = dict(os.environ, EDGELOAD_DDB_ENDPOINT=ENDPOINT)
        proc = subprocess.run([unit], env=env, capture_output=True, timeout=300)
        out = (proc.stdout + proc.stderr).decode(errors="replace")
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn("test_dynamodb_local", out)
        self.assertNotIn("SKIPPED ] test_dynamodb_local", out)

    def create_table(self, *args):
        if not self.bin or not os.access(self.bin, os.X_OK):
            self.skipTest("EDGELOAD_BIN is not set to an executable")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home.name}
        return subprocess.run([self.bin, "create-table", "--endpoint-url", ENDPOINT,
                               "--profile", "it", *args],
                              env=env, capture_output=True, timeout=300)

    def check_table(self, name, projection):
        t = self.ddb.describe_table(TableName=name)["Table"]
        self.assertEqual(t["TableStatus"], "ACTIVE")
        self.assertEqual(t["BillingModeSummary"]["BillingMode"], "PAY_PER_REQUEST")
        self.assertEqual(t["KeySchema"], [{"AttributeName": "PK", "KeyType": "HASH"},
                                          {"AttributeName": "SK", "KeyType": "RANGE"}])
        types = {d["AttributeName"]: d["AttributeType"] for d in t["AttributeDefinitions"]}
        if projection is None:
            self.assertNotIn("GlobalSecondaryIndexes", t)
            self.assertEqual(types, {"PK": "S", "SK": "S"})
            return
        self.assertEqual(types, {"PK": "S", "SK": "S", "GSI1PK": "S", "GSI1SK": "S"})
        (gsi,) = t["GlobalSecondaryIndexes"]
        self.assertEqual(gsi["IndexName"], "GSI1")
        self.assertEqual(gsi["IndexStatus"], "ACTIVE")
        self.assertEqual(gsi["KeySchema"], [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                                            {"AttributeName": "GSI1SK", "KeyType": "RANGE"}])
        self.assertEqual(gsi["Projection"]["ProjectionType"], projection)

    def test_create_table_all(self):
        name = self.table_name()
        proc = self.create_table("--table", name)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.check_table(name, "ALL")
        self.assertNotIn(b"a:b/c+d", proc.stdout + proc.stderr)

        again = self.create_table("--table", name)
        self.assertEqual(again.returncode, 2, again.stderr.decode())
        self.assertIn(b"already exists", again.stderr)

    def test_create_table_keys_only(self):
        name = self.table_name()
        proc = self.create_table("--table", name, "--projection", "KEYS_ONLY")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.check_table(name, "KEYS_ONLY")

    def test_create_table_no_index(self):
        name = self.table_name()
        proc = self.create_table("--table", name, "--no-index")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        self.check_table(name, None)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
