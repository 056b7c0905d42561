"""`edgeload create-table` makes a table ready for a bulk load.

Where DynamoDB Local keeps a setting, the table is checked with boto3's
DescribeTable: the billing mode, the provisioned capacity of the table and
of its index, the projection, deletion protection (Debian's botocore 1.29
predates DeletionProtectionEnabled and drops it from the parsed answer, so
the raw answer of the same boto3 call is read, and boto3's DeleteTable must
be refused). Where it keeps nothing (WarmThroughput, OnDemandThroughput,
TableClass, Tags), the CreateTable request is checked as
tests/tools/faultproxy.py captured it on its way to DynamoDB Local: its
values, and its shape against botocore's service model. Debian's botocore
model (1.29.27, 2022) has BillingMode, ProvisionedThroughput, TableClass,
Tags and the GSIs; the three members it predates (WarmThroughput and
OnDemandThroughput, on the table and on each GSI, and
DeletionProtectionEnabled) are added to it as botocore's current model
(boto/botocore, botocore/data/dynamodb/2012-08-10/service-2.json) defines
them, each only when the installed model lacks it.

The wait for ACTIVE covers the warm throughput: a stand-in service keeps
WarmThroughput.Status UPDATING for a few DescribeTable calls. The
combinations DynamoDB refuses are usage errors (exit 2) sent nowhere.
`plan` names the warm throughput a load can use and the create-table line
that sets it; that line, run, sends it.
"""

import json
import math
import os
import re
import sys

import botocore.loaders
import botocore.model
import botocore.validate

import edgeload_test as et
from edgeload_test import ENDPOINT, EdgeloadTestCase, main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import faultproxy  # noqa: E402

# The members of CreateTable's input that Debian's botocore model predates,
# as botocore's current model has them (shape name -> definition).
NEWER_SHAPES = {
    "LongObject": {"type": "long"},
    "WarmThroughput": {"type": "structure", "members": {
        "ReadUnitsPerSecond": {"shape": "LongObject"},
        "WriteUnitsPerSecond": {"shape": "LongObject"}}},
    "OnDemandThroughput": {"type": "structure", "members": {
        "MaxReadRequestUnits": {"shape": "LongObject"},
        "MaxWriteRequestUnits": {"shape": "LongObject"}}},
    "DeletionProtectionEnabled": {"type": "boolean"},
}
NEWER_MEMBERS = {
    "CreateTableInput": ("DeletionProtectionEnabled", "WarmThroughput", "OnDemandThroughput"),
    "GlobalSecondaryIndex": ("WarmThroughput", "OnDemandThroughput"),
}


def service_model():
    """Debian's DynamoDB model with the newer members it lacks; and the
    list of what was added ("CreateTableInput.WarmThroughput", ...)."""
    m = botocore.loaders.Loader().load_service_model("dynamodb", "service-2")
    shapes, added = m["shapes"], []
    for name, shape in NEWER_SHAPES.items():
        shapes.setdefault(name, shape)
    for owner, members in NEWER_MEMBERS.items():
        for member in members:
            if member not in shapes[owner]["members"]:
                shapes[owner]["members"][member] = {"shape": member}
                added.append("%s.%s" % (owner, member))
    return botocore.model.ServiceModel(m, "dynamodb"), added


def enum_errors(shape, value, path="input"):
    """What botocore's validator leaves out: string values outside the enum."""
    out = []
    if shape.type_name == "structure" and isinstance(value, dict):
        for k, v in value.items():
            if k in shape.members:
                out += enum_errors(shape.members[k], v, path + "." + k)
    elif shape.type_name == "list" and isinstance(value, list):
        for i, v in enumerate(value):
            out += enum_errors(shape.member, v, "%s[%d]" % (path, i))
    elif shape.type_name == "string" and shape.enum and value not in shape.enum:
        out.append("%s: %r is not one of %s" % (path, value, shape.enum))
    return out


class CreateTableTest(EdgeloadTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model, cls.added = service_model()

    # ---- helpers -----------------------------------------------------------

    def assertValidRequest(self, op, body):
        shape = self.model.operation_model(op).input_shape
        report = botocore.validate.ParamValidator().validate(body, shape)
        self.assertFalse(report.has_errors(), "%s request against botocore's model:\n%s\n%s"
                         % (op, report.generate_report(), json.dumps(body, indent=1)))
        self.assertEqual(enum_errors(shape, body), [])

    def describe_raw(self, table):
        """boto3's DescribeTable, as DynamoDB Local answered it."""
        seen = {}

        def grab(http_response, **kw):
            seen["body"] = http_response.content
        event = "after-call.dynamodb.DescribeTable"
        self.ddb.meta.events.register(event, grab)
        try:
            self.ddb.describe_table(TableName=table)
        finally:
            self.ddb.meta.events.unregister(event, grab)
        return json.loads(seen["body"])["Table"]

    def unprotect(self, table):
        """UpdateTable DeletionProtectionEnabled=false with boto3 (the member
        added to the body before it is signed: Debian's model lacks it)."""
        def add(request, **kw):
            body = json.loads(request.body)
            body["DeletionProtectionEnabled"] = False
            request.data = json.dumps(body).encode()
        event = "before-sign.dynamodb.UpdateTable"
        self.ddb.meta.events.register(event, add)
        try:
            self.ddb.update_table(TableName=table)
        except self.ddb.exceptions.ResourceNotFoundException:
            pass
        finally:
            self.ddb.meta.events.unregister(event, add)

    def protected_table(self, prefix):
        """A table name whose deletion protection is turned off before the
        table is deleted at the end."""
        name = self.unique_table(prefix)
        self.addCleanup(self.unprotect, name)
        return name

    def create_captured(self, *args):
        """create-table ARGS through a capturing faultproxy in front of
        DynamoDB Local; (CompletedProcess, the CreateTable request bodies)."""
        cap = os.path.join(self.tmpdir(), "capture.jsonl")
        with faultproxy.ProxyProcess(ENDPOINT, capture=cap) as proxy:
            proc = self.run_edgeload("create-table", "--endpoint-url", proxy.url,
                                     "--region", et.REGION, "--progress", "none", *args)
        with open(cap) as f:
            lines = [json.loads(line) for line in f]
        return proc, [x["request"] for x in lines if x["target"] == "CreateTable"]

    # ---- against DynamoDB Local, checked with DescribeTable ------------------

    def test_model_lacks_what_was_added(self):
        """The members added to Debian's model are exactly those it lacks
        (none once Debian's botocore has them all)."""
        plain = botocore.loaders.Loader().load_service_model("dynamodb", "service-2")["shapes"]
        for entry in self.added:
            owner, member = entry.split(".")
            self.assertNotIn(member, plain[owner]["members"])
        for owner, members in NEWER_MEMBERS.items():
            for member in members:
                self.assertIn(member, self.model.shape_for(owner).members)

    def test_provisioned_kept_by_dynamodb_local(self):
        table = self.protected_table("ctprov")
        proc = self.create_table_cli(table, "--billing-mode", "PROVISIONED", "--write-units",
                                     "100", "--read-units", "5", "--deletion-protection",
                                     "--projection", "KEYS_ONLY", "--progress", "none")
        self.assertIn("capacity: PROVISIONED, 100 write / 5 read units a second (table and "
                      "index)", proc.stderr)
        t = self.ddb.describe_table(TableName=table)["Table"]
        self.assertEqual(t["TableStatus"], "ACTIVE")
        self.assertEqual(t.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED"),
                         "PROVISIONED")
        self.assertEqual((t["ProvisionedThroughput"]["WriteCapacityUnits"],
                          t["ProvisionedThroughput"]["ReadCapacityUnits"]), (100, 5))
        g = t["GlobalSecondaryIndexes"][0]
        self.assertEqual((g["IndexName"], g["Projection"]["ProjectionType"]), ("GSI1", "KEYS_ONLY"))
        self.assertEqual((g["ProvisionedThroughput"]["WriteCapacityUnits"],
                          g["ProvisionedThroughput"]["ReadCapacityUnits"]), (100, 5))
        self.assertIs(self.describe_raw(table).get("DeletionProtectionEnabled"), True)
        with self.assertRaises(self.ddb.exceptions.ClientError) as cm:
            self.ddb.delete_table(TableName=table)
        self.assertIn("protected against deletion", str(cm.exception))

    def test_mapping_settings_with_flags_over_them(self):
        """The mapping's "create_table" with its index's own figures; a flag
        wins over both; DynamoDB Local keeps the capacity, the request the
        rest."""
        table = self.unique_table("ctmap")
        d = self.tmpdir()
        mapping = self.write_file(d, "m.json", json.dumps({
            "table": table,
            "create_table": {
                "billing_mode": "PROVISIONED", "write_units": 100, "read_units": 5,
                "warm_throughput": {"write": 20000, "read": 12000},
                "table_class": "STANDARD", "tags": {"team": "data", "env": "prod"},
                "index": {"write_units": 50, "warm_throughput": {"write": 10000}}},
            "sources": [{"name": "e", "pk": "A#{a}", "sk": "B#{b}"}]}))
        proc, reqs = self.create_captured("--mapping", mapping, "--read-units", "7",
                                          "--tag", "env=test")
        self.assertExit(proc, 0, "create-table --mapping")
        self.assertEqual(len(reqs), 1)
        req = reqs[0]
        self.assertValidRequest("CreateTable", req)
        self.assertEqual(req["BillingMode"], "PROVISIONED")
        self.assertEqual(req["ProvisionedThroughput"],
                         {"WriteCapacityUnits": 100, "ReadCapacityUnits": 7})
        self.assertEqual(req["WarmThroughput"],
                         {"WriteUnitsPerSecond": 20000, "ReadUnitsPerSecond": 12000})
        g = req["GlobalSecondaryIndexes"][0]
        self.assertEqual(g["ProvisionedThroughput"],
                         {"WriteCapacityUnits": 50, "ReadCapacityUnits": 7})
        self.assertEqual(g["WarmThroughput"], {"WriteUnitsPerSecond": 10000})
        self.assertEqual(req["TableClass"], "STANDARD")
        self.assertEqual(req["Tags"], [{"Key": "team", "Value": "data"},
                                       {"Key": "env", "Value": "test"}])
        self.assertNotIn("OnDemandThroughput", req)
        self.assertNotIn("DeletionProtectionEnabled", req)
        t = self.ddb.describe_table(TableName=table)["Table"]
        self.assertEqual(t["ProvisionedThroughput"]["ReadCapacityUnits"], 7)
        self.assertEqual(t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
                         ["WriteCapacityUnits"], 50)

    # ---- what DynamoDB Local does not keep: the request ---------------------

    def test_bulk_load_settings_on_the_request(self):
        table = self.protected_table("ctbulk")
        st = os.path.join(self.tmpdir(), "st.json")
        proc, reqs = self.create_captured(
            "--table", table, "--warm-throughput", "40000,12000", "--max-write-units", "50000",
            "--max-read-units", "60000", "--table-class", "STANDARD_INFREQUENT_ACCESS",
            "--deletion-protection", "--tag", "team=data", "--tag", "cost centre=4=2",
            "--stats-json", st)
        self.assertExit(proc, 0, "create-table")
        self.assertEqual(len(reqs), 1)
        req = reqs[0]
        self.assertValidRequest("CreateTable", req)
        self.assertEqual(req["BillingMode"], "PAY_PER_REQUEST")
        self.assertNotIn("ProvisionedThroughput", req)
        for part in (req, req["GlobalSecondaryIndexes"][0]):
            self.assertEqual(part["WarmThroughput"],
                             {"WriteUnitsPerSecond": 40000, "ReadUnitsPerSecond": 12000})
            self.assertEqual(part["OnDemandThroughput"],
                             {"MaxWriteRequestUnits": 50000, "MaxReadRequestUnits": 60000})
            self.assertNotIn("ProvisionedThroughput", part)
        self.assertEqual(req["TableClass"], "STANDARD_INFREQUENT_ACCESS")
        self.assertIs(req["DeletionProtectionEnabled"], True)
        self.assertEqual(req["Tags"], [{"Key": "team", "Value": "data"},
                                       {"Key": "cost centre", "Value": "4=2"}])
        self.assertIn("maximum 50000 write / 60000 read units a second (table and index)",
                      proc.stderr)
        # DynamoDB Local keeps no warm throughput: said, not taken for done
        self.assertIn("reports no warm throughput", proc.stderr)
        with open(st) as f:
            s = json.load(f)
        self.assertEqual((s["created"], s["billing_mode"], s["warm_write_units"]),
                         (1, "PAY_PER_REQUEST", 0))
        t = self.ddb.describe_table(TableName=table)["Table"]
        self.assertEqual(t["BillingModeSummary"]["BillingMode"], "PAY_PER_REQUEST")
        self.assertIs(self.describe_raw(table).get("DeletionProtectionEnabled"), True)

    # ---- refusals: exit 2, nothing sent -------------------------------------

    def test_refused_combinations_send_nothing(self):
        calls = []

        class Handler(__import__("http.server").server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                calls.append(self.headers.get("X-Amz-Target"))
                et.send_answer(self, 500, {"__type": "InternalServerError"})
        _, url = et.serve(self, Handler)
        d = self.tmpdir()
        index_own = self.write_file(d, "io.json", json.dumps({
            "table": "T", "create_table": {"index": {"warm_throughput": {"write": 5}}},
            "sources": [{"name": "e", "pk": "A#{a}", "sk": "B#{b}", "index": False}]}))
        bad_key = self.write_file(d, "bk.json", json.dumps({
            "table": "T", "create_table": {"warm_throughput": {"writes": 5}},
            "sources": [{"name": "e", "pk": "A#{a}", "sk": "B#{b}"}]}))
        prov_file = self.write_file(d, "pf.json", json.dumps({
            "table": "T", "create_table": {"billing_mode": "PROVISIONED", "write_units": 10,
                                           "read_units": 10},
            "sources": [{"name": "e", "pk": "A#{a}", "sk": "B#{b}"}]}))
        cases = [
            (["--table", "T", "--write-units", "100"],
             "--write-units is a PROVISIONED table's capacity, but this one is PAY_PER_REQUEST "
             "(the default): give --billing-mode PROVISIONED, or --max-write-units N"),
            (["--table", "T", "--billing-mode", "PROVISIONED", "--write-units", "100"],
             "--billing-mode PROVISIONED needs the table's capacity: --write-units N and "
             "--read-units N"),
            (["--table", "T", "--billing-mode", "PROVISIONED", "--write-units", "1",
              "--read-units", "1", "--max-write-units", "9"],
             "--max-write-units is an on-demand table's maximum, but --billing-mode makes this "
             "one PROVISIONED"),
            (["--mapping", prov_file, "--billing-mode", "PAY_PER_REQUEST"],
             "create_table.write_units is a PROVISIONED table's capacity, but this one is "
             "PAY_PER_REQUEST (--billing-mode)"),
            (["--mapping", prov_file, "--max-read-units", "3"],
             "--max-read-units is an on-demand table's maximum, but create_table.billing_mode "
             "makes this one PROVISIONED"),
            (["--mapping", index_own, "--no-index"],
             "create_table.index.warm_throughput gives the index its own throughput, but the "
             "table gets no index (--no-index)"),
            (["--mapping", bad_key], "bk.json: create_table.warm_throughput has an unknown key "
             "\"writes\""),
            (["--table", "T", "--billing-mode", "ON_DEMAND"],
             "--billing-mode must be PAY_PER_REQUEST or PROVISIONED, not 'ON_DEMAND'"),
            (["--table", "T", "--warm-throughput", "40000,"], "--warm-throughput takes "
             "WRITE[,READ]"),
            (["--table", "T", "--max-write-units", "0"], "--max-write-units takes a whole "
             "number"),
            (["--table", "T", "--table-class", "IA"], "--table-class must be STANDARD or "
             "STANDARD_INFREQUENT_ACCESS"),
            (["--table", "T", "--tag", "aws:created-by=me"], "begins with aws:"),
            (["--table", "T", "--tag", "team"], "--tag takes KEY=VALUE"),
        ]
        for args, says in cases:
            proc = self.run_edgeload("create-table", "--endpoint-url", url, "--region",
                                     et.REGION, *args)
            self.assertExit(proc, 2, "create-table " + " ".join(args))
            lines = proc.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, proc.stderr)
            self.assertIn(says, lines[0])
        self.assertEqual(calls, [])

    # ---- the wait covers the warm throughput ----------------------------------

    def warming_service(self, table_polls, index_polls, got=40000):
        """A stand-in: the table and index ACTIVE at once, their
        WarmThroughput UPDATING for the first table_polls (index_polls)
        DescribeTable calls, then ACTIVE at `got` write units a second."""
        calls = []

        class Handler(__import__("http.server").server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                op = self.headers.get("X-Amz-Target", "").split(".")[-1]
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                calls.append(op)
                n = calls.count("DescribeTable")

                def warm(polls):
                    return {"WriteUnitsPerSecond": got, "ReadUnitsPerSecond": 12000,
                            "Status": "UPDATING" if n <= polls else "ACTIVE"}
                table = {"TableName": "T", "TableStatus": "ACTIVE" if n else "CREATING",
                         "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                       {"AttributeName": "SK", "KeyType": "RANGE"}],
                         "WarmThroughput": warm(table_polls),
                         "GlobalSecondaryIndexes": [{
                             "IndexName": "GSI1", "IndexStatus": "ACTIVE",
                             "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                                           {"AttributeName": "GSI1SK", "KeyType": "RANGE"}],
                             "WarmThroughput": warm(index_polls)}]}
                et.send_answer(self, 200, {"Table" if n else "TableDescription": table})
        _, url = et.serve(self, Handler)
        return url, calls

    def test_wait_covers_warm_throughput(self):
        url, calls = self.warming_service(table_polls=2, index_polls=3)
        st = os.path.join(self.tmpdir(), "st.json")
        proc = self.run_edgeload("create-table", "--table", "T", "--endpoint-url", url,
                                 "--region", et.REGION, "--warm-throughput", "40000,12000",
                                 "--progress", "plain", "--progress-interval", "0.1",
                                 "--stats-json", st)
        self.assertExit(proc, 0, "create-table")
        lines = [line for line in proc.stderr.splitlines() if " progress " in line]
        seen = [(re.search(r"table_warm_status=(\S+)", line).group(1),
                 re.search(r"index_warm_status=(\S+)", line).group(1)) for line in lines]
        # 2 polls see both UPDATING, a 3rd the index's; the 4th finds all ACTIVE
        self.assertEqual(seen, [("UPDATING", "UPDATING")] * 2 + [("ACTIVE", "UPDATING")])
        self.assertEqual(calls, ["CreateTable"] + ["DescribeTable"] * 4)
        self.assertIn("warm throughput 40000 write / 12000 read units a second (table and "
                      "index)", proc.stderr)
        self.assertNotIn("warning", proc.stderr)
        with open(st) as f:
            s = json.load(f)
        self.assertEqual((s["polls"], s["warm_write_units"], s["index_warm_write_units"]),
                         (4, 40000, 40000))

    def test_warm_throughput_short_of_the_asked_is_said(self):
        url, _ = self.warming_service(table_polls=0, index_polls=0, got=30000)
        proc = self.run_edgeload("create-table", "--table", "T", "--endpoint-url", url,
                                 "--region", et.REGION, "--warm-throughput", "40000",
                                 "--progress", "none")
        self.assertExit(proc, 0, "create-table")
        self.assertIn("warning: the warm throughput DescribeTable reports is less than the "
                      "40000 write units a second asked", proc.stderr)

    # ---- plan's advice, and the line it prints, run -------------------------

    def test_plan_prints_the_line_that_warms_the_table(self):
        d = self.tmpdir()
        table = self.unique_table("ctplan")
        n = 250000       # 2 units an edge: 500,000 units, 125 s at 4,000 a second
        path = os.path.join(d, "edges.csv")
        with open(path, "w") as f:
            f.write("a,b\n")
            for i in range(n):
                f.write("u%d,v%d\n" % (i, i % 7919))
        mapping = self.write_file(d, "m.json", json.dumps({
            "table": table, "sources": [{"name": "e", "input": "edges.csv",
                                          "pk": "A#{a}", "sk": "B#{b}"}]}))
        plan_out = os.path.join(d, "plan.json")
        proc = self.run_edgeload("plan", "--mapping", mapping, "--plan-out", plan_out,
                                 "--progress", "none")
        self.assertExit(proc, 0, "plan")
        with open(plan_out) as f:
            est = json.load(f)["estimate"]
        total, limits, warm = est["total"], est["limits"], est["warm_throughput"]
        rate = total["table_wcu"] / total["least_seconds"]
        self.assertEqual(warm["table_wcu"], math.ceil(min(limits["table_wcu"], rate)))
        self.assertEqual((warm["warm_table_wcu"], warm["needed"]), (4000, True))
        self.assertAlmostEqual(warm["cold_seconds"], total["table_wcu"] / 4000.0, places=3)
        line = re.search(r"^\s*(edgeload create-table .*)$", proc.stdout, re.M)
        self.assertIsNotNone(line, proc.stdout)
        self.assertEqual(line.group(1), "edgeload create-table --mapping %s --warm-throughput %d"
                         % (mapping, warm["table_wcu"]))
        # the line, run: the table and its index warm for that rate
        args = line.group(1).split()[2:]
        proc, reqs = self.create_captured(*args)
        self.assertExit(proc, 0, "the create-table plan printed")
        self.assertValidRequest("CreateTable", reqs[0])
        for part in (reqs[0], reqs[0]["GlobalSecondaryIndexes"][0]):
            self.assertEqual(part["WarmThroughput"], {"WriteUnitsPerSecond": warm["table_wcu"]})
        # with the table there: its own warm throughput (none reported by
        # DynamoDB Local: a new table's), and the AWS CLI's update-table
        proc = self.run_edgeload("plan", "--mapping", mapping, *self.endpoint_args(),
                                 "--progress", "none")
        self.assertExit(proc, 0, "plan --endpoint-url")
        self.assertIn("aws dynamodb update-table --table-name %s --warm-throughput "
                      "WriteUnitsPerSecond=%d" % (table, warm["table_wcu"]), proc.stdout)
        self.assertIn('"IndexName": "GSI1", "WarmThroughput": {"WriteUnitsPerSecond": %d}'
                      % warm["table_wcu"], proc.stdout)
        self.assertNotIn("edgeload create-table", proc.stdout)


if __name__ == "__main__":
    main()
