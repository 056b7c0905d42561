"""The README's three jobs, run as written on samples/migration: plan,
create-table, load, verify from a real pg_dump; an incremental delta applied
twice; a counter backfill. Counts checked with boto3 against the dump's
data, computed here by hand from make-dump.sh's rows.
"""

import os
import shutil

from edgeload_test import SAMPLES_DIR, EdgeloadTestCase, main
import json

# followers/following after the full dump, then after the delta
AFTER_LOAD = {"bob": (3, 1), "alice": (1, 2), "carol": (1, None), "dave": (None, 1),
              "erin": (None, 1)}
AFTER_DELTA = {"bob": (3, 1), "alice": (2, 2), "carol": (1, 1), "dave": (None, 1),
               "erin": (None, 1)}


class WalkthroughTest(EdgeloadTestCase):

    def counts(self, table):
        out = {}
        for u in AFTER_LOAD:
            item = self.get_item(table, "USER#" + u, "PROFILE")
            f = item.get("followerCount", {}).get("N")
            g = item.get("followingCount", {}).get("N")
            out[u] = (int(f) if f else None, int(g) if g else None)
        return out

    def test_three_jobs(self):
        d = os.path.join(self.tmpdir(), "migration")
        shutil.copytree(os.path.join(SAMPLES_DIR, "migration"), d)
        table = self.unique_table("walk")
        for name in ("mapping.json", "delta.json"):
            path = os.path.join(d, name)
            with open(path) as f:
                m = json.load(f)
            m["table"] = table
            with open(path, "w") as f:
                json.dump(m, f)
        ep = self.endpoint_args()

        def run(*args):
            return self.run_edgeload(*args, *ep, cwd=d) if args[0] != "plan" else \
                self.run_edgeload(*args, cwd=d)
        p = run("plan", "--mapping", "mapping.json")
        self.assertExit(p, 0, "plan")
        self.assertIn("TARGET#bob", p.stdout)
        self.assertExit(run("create-table", "--mapping", "mapping.json"), 0, "create-table")
        self.assertExit(run("load", "--mapping", "mapping.json"), 0, "load")
        v = run("verify", "--mapping", "mapping.json")
        self.assertExit(v, 0, "verify")
        self.assertIn("missing 0 different 0", v.stdout + v.stderr)
        # verify checks the counters too (7 counters on 5 user items)
        self.assertIn("counters: expected 7 present 7 missing 0 different 0", v.stdout)
        self.assertEqual(self.counts(table), AFTER_LOAD)
        edge = self.get_item(table, "ACTOR#erin", "TARGET#bob")
        self.assertEqual(edge["createdAt"], {"N": "1718953200"})  # 09:00+02 in UTC
        self.assertEqual(self.get_item(table, "USER#erin", "PROFILE")["name"],
                         {"S": "Erin 絵里"})
        for _ in range(2):  # the same delta twice: the second changes nothing
            p = run("load", "--mapping", "delta.json", "--incremental", "--op-column", "op")
            self.assertExit(p, 0, "incremental load")
            self.assertEqual(self.counts(table), AFTER_DELTA)
        self.assertIsNone(self.get_item(table, "ACTOR#dave", "TARGET#bob"))
        # damage a counter, then the backfill sets it right from the dump
        self.ddb.update_item(TableName=table, Key={"PK": {"S": "USER#bob"},
                                                   "SK": {"S": "PROFILE"}},
                             UpdateExpression="SET followerCount = :z",
                             ExpressionAttributeValues={":z": {"N": "0"}})
        v = run("verify", "--mapping", "mapping.json", "--counters-only")
        self.assertExit(v, 4, "verify --counters-only before the backfill")
        # bob's damaged count and alice's from the delta differ from the dump
        self.assertIn("counters: expected 7 present 5 missing 0 different 2", v.stdout)
        self.assertExit(run("counters", "--mapping", "mapping.json"), 0, "counters")
        self.assertEqual(self.counts(table)["bob"], AFTER_LOAD["bob"])
        v = run("verify", "--mapping", "mapping.json", "--counters-only")
        self.assertExit(v, 0, "verify --counters-only after the backfill")
        self.assertIn("counters: expected 7 present 7 missing 0 different 0", v.stdout)


if __name__ == "__main__":
    main()
