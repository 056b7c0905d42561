#!/usr/bin/python3
"""`edgeload verify` checks counters (issues 7 and 8), against
DynamoDB Local.

A generated follow graph (duplicate rows, a row with an empty key that is
rejected, users who only follow and users who are only followed) plus a
users entity source is backfilled with counters; counts are computed here,
independently, from the rows. Then:

  1. verify on the intact table: exit 0, every counter present and equal,
     an empty report; --sample 15 checks 15 counter items, exit 0;
  2. with boto3: 3 counter values changed, 1 counter attribute removed from
     an item that keeps its other counter, 1 counter item deleted (an item
     with a single counter attribute and no entity row). verify: exit 4,
     and the report holds exactly those 5 (3 counter-different with the
     expected and found values, 2 counter-missing: one with its item
     present, one without), no item mismatch;
     --counters-only reports the same 5 and checks no item, also through
     tests/tools/faultproxy.py throttling, failing and cutting BatchGetItem
     answers (retried: every counter item checked once);
  3. --no-counters on the same table: exit 0.
"""

import collections
import csv
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402

PROXY = os.path.join(et.SOURCE_DIR, "tests", "tools", "faultproxy.py")

SOURCES = et.FOLLOW_COUNTER_SOURCES


def graph(rnd):
    """Follow rows with repeats; 'lurk*' only follow, 'star*' are only followed."""
    rows = []
    for _ in range(1500):
        if rows and rnd.random() < 0.1:
            rows.append(rnd.choice(rows))
            continue
        a, b = "u%d" % rnd.randrange(150), "u%d" % rnd.randrange(150)
        if a != b:
            rows.append((a, b))
    for i in range(5):
        rows.append(("lurk%d" % i, "u%d" % i))
        rows.append(("u%d" % (i + 10), "star%d" % i))
        rows.append(("u%d" % (i + 20), "star%d" % i))
    rnd.shuffle(rows)
    return rows


def counts(rows):
    """{(pk, attribute): n}, each distinct edge counted once."""
    c = collections.Counter()
    for a, b in set(r for r in rows if r[0] and r[1]):
        c[("USER#" + b, "followerCount")] += 1
        c[("USER#" + a, "followingCount")] += 1
    return c


class VerifyCountersTest(et.EdgeloadTestCase):

    def test_counters_checked(self):
        rnd = random.Random(4)
        work = self.tmpdir()
        rows = graph(rnd)
        follows = os.path.join(work, "follows.csv")
        users = os.path.join(work, "users.csv")
        with open(follows, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["follower_id", "followee_id"])
            w.writerows(rows)
            w.writerow(["u1", ""])  # empty key: rejected by load and verify, counts nothing
        with open(users, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "name"])
            w.writerows(("u%d" % i, "user %d" % i) for i in range(150))
        table = self.unique_table("vctr")
        self.create_table_boto(table)
        mapping = self.write_file(work, "mapping.json", json.dumps(
            {"table": table, "index": {"name": "GSI1", "pk": "GSI1PK", "sk": "GSI1SK"},
             "sources": SOURCES}))
        p = self.load("--mapping", mapping, "--rejects", os.path.join(work, "rej.jsonl"),
                      users, follows, cwd=work)
        self.assertExit(p, 3, "load (one row rejected)")
        exp = counts(rows)
        nitems = len({pk for pk, _ in exp})
        report = os.path.join(work, "report.jsonl")

        def verify(*extra, allow_rejected=True):
            # the rejected row is expected unless a check is about it
            allow = ("--allow-rejected",) if allow_rejected else ()
            return self.run_edgeload("verify", *self.endpoint_args(), "--mapping", mapping,
                                     "--report", report, *allow, *extra, users, follows,
                                     cwd=work)

        # 1. intact: but for the row the load rejected, which is not in the
        # table (exit 4), unless --allow-rejected says it is expected
        v = verify("--no-counters", allow_rejected=False)
        self.assertExit(v, 4, "verify, a rejected row")
        self.assertIn("edgeload: verify: 1 rows of follows could not become items (rejected: "
                      "see the rejects file)", v.stderr)
        self.assertIn("missing 0 different 0", v.stdout)
        self.assertEqual(et.read_jsonl(report), [])
        v = verify()
        self.assertExit(v, 0, "verify, intact table")
        self.assertIn("1 rows of follows could not become items (rejected, allowed by "
                      "--allow-rejected)", v.stdout)
        self.assertIn("1 rejected (allowed)", v.stdout)
        self.assertIn("missing 0 different 0", v.stdout)
        self.assertIn("counters: expected %d present %d missing 0 different 0 (%d counter "
                      "items; %d distinct edges counted, %d duplicate rows counted once)"
                      % (len(exp), len(exp), nitems, len(set(rows)),
                         len(rows) - len(set(rows))), v.stdout)
        self.assertEqual(et.read_jsonl(report), [])
        v = verify("--sample", "15")
        self.assertExit(v, 0, "verify --sample 15")
        self.assertIn("(15 counter items, sample;", v.stdout)

        # 2. tamper: 3 values, 1 attribute removed, 1 counter item deleted
        both = sorted(pk for pk in {pk for pk, _ in exp}
                      if (pk, "followerCount") in exp and (pk, "followingCount") in exp
                      and pk.startswith("USER#u"))
        changed = both[:3]
        for pk in changed:
            self.ddb.update_item(TableName=table, Key={"PK": et.S(pk), "SK": et.S("PROFILE")},
                                 UpdateExpression="SET followerCount = :n",
                                 ExpressionAttributeValues={
                                     ":n": et.N(exp[(pk, "followerCount")] + 7)})
        stripped = both[3]
        self.ddb.update_item(TableName=table, Key={"PK": et.S(stripped), "SK": et.S("PROFILE")},
                             UpdateExpression="REMOVE followingCount")
        deleted = "USER#star2"
        self.assertEqual([k for k in exp if k[0] == deleted], [(deleted, "followerCount")])
        self.ddb.delete_item(TableName=table, Key={"PK": et.S(deleted), "SK": et.S("PROFILE")})
        v = verify()
        self.assertExit(v, 4, "verify, tampered counters")
        self.assertIn("expected %d present %d missing 0 different 0\n"
                      % (150 + len(set(rows)), 150 + len(set(rows))), v.stdout)
        self.assertIn("counters: expected %d present %d missing 2 different 3"
                      % (len(exp), len(exp) - 5), v.stdout)
        got = sorted(et.read_jsonl(report), key=lambda r: (r["kind"], r["key"]["PK"]))
        want = []
        for pk in changed:
            n = exp[(pk, "followerCount")]
            want.append({"kind": "counter-different", "key": {"PK": pk, "SK": "PROFILE"},
                         "attributes": {"followerCount": {"expected": {"N": str(n)},
                                                          "actual": {"N": str(n + 7)}}},
                         "item_present": True})
        want.append({"kind": "counter-missing", "key": {"PK": stripped, "SK": "PROFILE"},
                     "attributes": {"followingCount": {
                         "expected": {"N": str(exp[(stripped, "followingCount")])},
                         "actual": None}},
                     "item_present": True})
        want.append({"kind": "counter-missing", "key": {"PK": deleted, "SK": "PROFILE"},
                     "attributes": {"followerCount": {
                         "expected": {"N": str(exp[(deleted, "followerCount")])},
                         "actual": None}},
                     "item_present": False})
        want.sort(key=lambda r: (r["kind"], r["key"]["PK"]))
        self.assertEqual(got, want)
        # the printed lines name key, attribute, expected and found
        self.assertIn("counter-different PK=%s SK=PROFILE followerCount: expected {\"N\":\"%d\"} "
                      "found {\"N\":\"%d\"}" % (changed[0], exp[(changed[0], "followerCount")],
                                                exp[(changed[0], "followerCount")] + 7),
                      v.stdout)
        self.assertIn("counter-missing   PK=%s SK=PROFILE followerCount: expected {\"N\":\"%d\"} "
                      "found (item absent)" % (deleted, exp[(deleted, "followerCount")]),
                      v.stdout)
        self.assertIn("found (attribute absent)", v.stdout)
        self.assertIn("5 mismatches, all in", v.stdout)
        print("verify-counters: rows %d, distinct edges %d, counters %d, counter items %d, "
              "mismatches found %d" % (len(rows) + 1, len(set(rows)), len(exp), nitems,
                                       len(got)), file=sys.stderr)

        # --counters-only: the same 5, and no item line
        v = verify("--counters-only")
        self.assertExit(v, 4, "verify --counters-only, tampered counters")
        self.assertNotIn("verify: expected", v.stdout)
        self.assertEqual(sorted(et.read_jsonl(report), key=lambda r: (r["kind"], r["key"]["PK"])),
                         want)

        # the same through a proxy that throttles, fails and cuts BatchGetItem
        # answers: every counter item still checked once, the same 5 found
        if os.path.exists(PROXY):
            proxy = subprocess.Popen(
                ["/usr/bin/python3", PROXY, "--listen", "127.0.0.1:0", "--upstream",
                 et.ENDPOINT, "--seed", "9", "--targets", "BatchGetItem", "--throttle", "0.4",
                 "--http500", "0.2", "--truncate", "0.1"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                line = proxy.stdout.readline()
                self.assertIn(" listening on ", line)
                port = int(line.split(" listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
                v = self.run_edgeload("verify", "--endpoint-url", "http://127.0.0.1:%d" % port,
                                      "--region", et.REGION, "--mapping", mapping, "--report",
                                      report, "--counters-only", "--concurrency", "4", users,
                                      follows, cwd=work)
            finally:
                proxy.terminate()
                proxy.communicate(timeout=10)
            self.assertExit(v, 4, "verify --counters-only through the fault proxy")
            self.assertIn("counters: expected %d present %d missing 2 different 3 (%d counter "
                          "items;" % (len(exp), len(exp) - 5, nitems), v.stdout)
            self.assertEqual(sorted(et.read_jsonl(report),
                                    key=lambda r: (r["kind"], r["key"]["PK"])), want)
            retries = int(re.search(r" (\d+) retries, ", v.stdout).group(1))
            self.assertGreater(retries, 0, v.stdout)

        # 3. without counters the items alone match
        v = verify("--no-counters")
        self.assertExit(v, 0, "verify --no-counters")
        self.assertNotIn("counters:", v.stdout)


if __name__ == "__main__":
    et.main()
