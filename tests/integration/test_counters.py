#!/usr/bin/python3
"""Counters, exactly (issue 7: counters kept exact), against DynamoDB Local.

Every scenario compares every counter in the table with counts computed
here, independently, from the inputs:
  - backfill of a generated follow graph (with duplicate rows) plus a users
    entity source: exact counts, and the entity items keep their attributes
    (entities, edges, then counters);
  - the same backfill rerun: no change;
  - `edgeload counters` after counters were damaged: exact again, items not
    rewritten;
  - a backfill killed with SIGKILL and resumed (--checkpoint/--resume);
  - a delta (--incremental --op-column op) with new edges, duplicates of
    existing edges, duplicates inside the delta, deletions (present and
    absent) and a hot target: applied once, then again (no change);
  - a delta through tests/tools/faultproxy.py with lost replies, throttling
    and 5xx on TransactWriteItems: exact.
Figures (rows, counters, duplicates, transactions, retries, elapsed) are
printed with --verbose and taken from --stats-json.
"""

import collections
import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402

PROXY = os.path.join(et.SOURCE_DIR, "tests", "tools", "faultproxy.py")
FIG = os.environ.get("EDGELOAD_FIGURES")  # a file to append the figures to


def figure(name, data):
    line = "%s: %s" % (name, json.dumps(data, sort_keys=True))
    print(line, file=sys.stderr)
    if FIG:
        with open(FIG, "a") as f:
            f.write(line + "\n")


def gen_graph(rnd, users, rows, hot=(), hot_share=0.0, dup_share=0.1):
    """Follow rows (follower, followee); some repeated; hot targets get a share."""
    out = []
    for _ in range(rows):
        if out and rnd.random() < dup_share:
            out.append(rnd.choice(out))
            continue
        a = "u%d" % rnd.randrange(users)
        if hot and rnd.random() < hot_share:
            b = rnd.choice(hot)
        else:
            b = "u%d" % rnd.randrange(users)
        if a == b:
            continue
        out.append((a, b))
    return out


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def expected_counts(edges):
    """{(pk, attr): n} from a set of (follower, followee) edges."""
    c = collections.Counter()
    for a, b in edges:
        c[("USER#" + b, "followerCount")] += 1
        c[("USER#" + a, "followingCount")] += 1
    return c


MAPPING_SOURCES = et.FOLLOW_COUNTER_SOURCES

FLAGS = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
         "--const", "edgeType=FOLLOWS",
         "--counter", "USER#{followee_id},PROFILE,followerCount",
         "--counter", "USER#{follower_id},PROFILE,followingCount"]


class CountersTest(et.EdgeloadTestCase):

    def table_counts(self, table):
        """{(pk, attr): n} of every counter attribute in the table (0s dropped)."""
        got = {}
        for it in self.scan_all(table):
            if it["SK"]["S"] != "PROFILE":
                continue
            for attr in ("followerCount", "followingCount"):
                if attr in it and int(it[attr]["N"]) != 0:
                    got[(it["PK"]["S"], attr)] = int(it[attr]["N"])
        return got

    def table_edges(self, table):
        return {(it["PK"]["S"][6:], it["SK"]["S"][7:]) for it in self.scan_all(table)
                if it["PK"]["S"].startswith("ACTOR#")}

    def assertCounts(self, table, edges, what):
        exp = {k: v for k, v in expected_counts(edges).items() if v}
        got = self.table_counts(table)
        if got != exp:
            diff = sorted(set(got.items()) ^ set(exp.items()))[:10]
            self.fail("%s: %d counters differ, e.g. %s" % (what, len(set(got.items()) ^
                                                                     set(exp.items())), diff))

    def stats(self, path):
        with open(path) as f:
            return json.load(f)

    def mapping(self, work, table):
        m = {"table": table, "index": {"name": "GSI1", "pk": "GSI1PK", "sk": "GSI1SK"},
             "sources": MAPPING_SOURCES}
        return self.write_file(work, "mapping.json", json.dumps(m))

    # ---- backfill ----------------------------------------------------------

    def test_backfill_rerun_and_counters_command(self):
        rnd = random.Random(7)
        work = self.tmpdir()
        rows = gen_graph(rnd, 300, 2500, hot=("u1", "u2"), hot_share=0.2, dup_share=0.12)
        users = [("u%d" % i, "name %d" % i) for i in range(300)]
        write_csv(os.path.join(work, "follows.csv"), ["follower_id", "followee_id"], rows)
        write_csv(os.path.join(work, "users.csv"), ["id", "name"], users)
        table = self.unique_table("ctr")
        self.create_table_boto(table)
        mp = self.mapping(work, table)
        inputs = [os.path.join(work, "users.csv"), os.path.join(work, "follows.csv")]
        st = os.path.join(work, "st.json")
        t0 = time.time()
        p = self.load("--mapping", mp, "--stats-json", st, *inputs)
        self.assertExit(p, 0)
        edges = set(rows)
        self.assertCounts(table, edges, "backfill")
        # entities loaded in the same run keep their attributes besides the counters
        for i in (0, 1, 2, 150):
            it = self.get_item(table, "USER#u%d" % i, "PROFILE")
            self.assertEqual(it["name"]["S"], "name %d" % i)
        s = self.stats(st)
        self.assertEqual(s["counter_edges"], len(edges))
        self.assertEqual(s["counter_duplicates"], len(rows) - len(edges))
        self.assertEqual(s["counters_written"], len(expected_counts(edges)))
        self.assertIn("%d distinct edges counted, %d duplicate rows" %
                      (len(edges), len(rows) - len(edges)), p.stderr)
        figure("backfill", {"rows": len(rows) + len(users), "edges": len(edges),
                            "duplicate_rows": len(rows) - len(edges),
                            "counters": len(expected_counts(edges)),
                            "retries": s["retries"], "elapsed_s": round(time.time() - t0, 2)})
        # rerun: no change
        p = self.load("--mapping", mp, *inputs)
        self.assertExit(p, 0)
        self.assertCounts(table, edges, "rerun")
        # damage some counters and mark an edge item; `counters` repairs the
        # counts and rewrites no item
        self.ddb.update_item(TableName=table, Key={"PK": et.S("USER#u1"), "SK": et.S("PROFILE")},
                             UpdateExpression="SET followerCount = :n",
                             ExpressionAttributeValues={":n": et.N(999)})
        self.ddb.update_item(TableName=table, Key={"PK": et.S("USER#u5"), "SK": et.S("PROFILE")},
                             UpdateExpression="REMOVE followingCount")
        a, b = rows[0]
        self.ddb.update_item(TableName=table,
                             Key={"PK": et.S("ACTOR#" + a), "SK": et.S("TARGET#" + b)},
                             UpdateExpression="SET marker = :m",
                             ExpressionAttributeValues={":m": et.S("kept")})
        st2 = os.path.join(work, "st2.json")
        t0 = time.time()
        p = self.run_edgeload("counters", *self.endpoint_args(), "--table", table, *FLAGS,
                              "--stats-json", st2, os.path.join(work, "follows.csv"))
        self.assertExit(p, 0, "edgeload counters")
        self.assertCounts(table, edges, "edgeload counters")
        it = self.get_item(table, "ACTOR#" + a, "TARGET#" + b)
        self.assertEqual(it.get("marker"), et.S("kept"), "counters rewrote an item")
        s = self.stats(st2)
        self.assertEqual(s["edges"], len(edges))
        self.assertEqual(s["duplicates"], len(rows) - len(edges))
        figure("counters-command", {"rows": s["rows_read"], "counters": s["counters_written"],
                                    "duplicates": s["duplicates"], "retries": s["retries"],
                                    "elapsed_s": round(time.time() - t0, 2)})

    def test_backfill_sigkill_then_resume(self):
        rnd = random.Random(11)
        work = self.tmpdir()
        rows = gen_graph(rnd, 500, 5000, hot=("u3",), hot_share=0.1, dup_share=0.1)
        inp = os.path.join(work, "follows.csv")
        write_csv(inp, ["follower_id", "followee_id"], rows)
        table = self.unique_table("ctrk")
        self.create_table_boto(table)
        ck = os.path.join(work, "ck.json")
        args = ["load", *self.endpoint_args(), "--table", table, *FLAGS, "--checkpoint", ck,
                "--checkpoint-interval", "0.2", "--max-wcu", "4000", "--concurrency", "4",
                "--progress", "none", inp]
        t0 = time.time()
        proc = subprocess.Popen([self.bin] + args, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(1.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertEqual(proc.returncode, -signal.SIGKILL, "finished before the kill")
        written = len(self.table_edges(table))
        self.assertLess(written, len(set(rows)), "the kill came too late to test anything")
        st = os.path.join(work, "st.json")
        done = self.run_edgeload(*args[:-1], "--stats-json", st, "--resume", inp)
        self.assertExit(done, 0, "resumed load")
        edges = set(rows)
        self.assertEqual(self.table_edges(table), edges)
        self.assertCounts(table, edges, "resumed backfill")
        # the finished run's checkpoint has every input done and every
        # counter item written, with the digest of the counts: --resume must
        # still count every row (or the digest would differ and every counter
        # be written again from a partial count), then writes no item and no
        # counter. So a counter damaged since stays damaged: a repair is a
        # run without --resume, or `edgeload counters`. (A kill inside the
        # counter phase: test_faults_commands, counters killed and resumed.)
        self.ddb.update_item(TableName=table, Key={"PK": et.S("USER#u3"), "SK": et.S("PROFILE")},
                             UpdateExpression="SET followerCount = :n",
                             ExpressionAttributeValues={":n": et.N(1)})
        st_again = os.path.join(work, "st-again.json")
        again = self.run_edgeload(*args[:-1], "--resume", "--stats-json", st_again, inp)
        self.assertExit(again, 0, "resume of a finished checkpoint")
        self.assertIn(" 0 items written", again.stderr)
        nitems = len({pk for pk, _ in expected_counts(edges)})
        self.assertIn("resumed: %d counter items were written by the run resumed" % nitems,
                      again.stderr)
        s_again = self.stats(st_again)
        self.assertEqual((s_again["counters_skipped"], s_again["counters_written"]), (nitems, 0))
        self.assertEqual(s_again["counter_edges"], len(edges))
        self.assertEqual(self.get_item(table, "USER#u3", "PROFILE")["followerCount"], et.N(1))
        repair = self.run_edgeload("counters", *self.endpoint_args(), "--table", table, *FLAGS,
                                   "--progress", "none", inp)
        self.assertExit(repair, 0, "edgeload counters, the repair")
        self.assertCounts(table, edges, "after the repair")
        # a kill during the counter phase before it recorded any progress
        # leaves a checkpoint with every input done and no counter written:
        # --resume must count every row and write every counter again
        with open(ck) as f:
            cp = json.load(f)
        items = {key for key, _attr in expected_counts(edges)}  # counter items, not attributes
        self.assertEqual(cp["counters"]["done"], len(items))
        del cp["counters"]
        with open(ck, "w") as f:
            json.dump(cp, f)
        self.ddb.update_item(TableName=table, Key={"PK": et.S("USER#u3"), "SK": et.S("PROFILE")},
                             UpdateExpression="SET followerCount = :n",
                             ExpressionAttributeValues={":n": et.N(1)})
        again = self.run_edgeload(*args[:-1], "--resume", inp)
        self.assertExit(again, 0, "resume of a checkpoint with every input done")
        self.assertIn(" 0 items written", again.stderr)
        self.assertCounts(table, edges, "resume after every input was done")
        s = self.stats(st)
        figure("backfill-sigkill-resume", {"rows": len(rows), "edges": len(edges),
                                           "written_before_kill": written,
                                           "rows_written_after_resume": s["rows_read"],
                                           "counters": len(expected_counts(edges)),
                                           "retries": s["retries"],
                                           "elapsed_s": round(time.time() - t0, 2)})

    # ---- incremental -------------------------------------------------------

    def base_table(self, rnd, work, nusers=200, nrows=1000):
        rows = gen_graph(rnd, nusers, nrows, dup_share=0.0)
        inp = os.path.join(work, "base.csv")
        write_csv(inp, ["follower_id", "followee_id"], rows)
        table = self.unique_table("ctri")
        self.create_table_boto(table)
        p = self.load("--table", table, *FLAGS, inp)
        self.assertExit(p, 0)
        edges = set(rows)
        self.assertCounts(table, edges, "base backfill")
        return table, edges

    def make_delta(self, rnd, edges, nusers, hot="u0", n_hot=100):
        """Rows (follower, followee, op) and the edge set after applying them."""
        existing = sorted(edges)
        delta = []
        for _ in range(60):   # new edges
            a, b = "u%d" % rnd.randrange(nusers), "u%d" % rnd.randrange(nusers)
            if a != b:
                delta.append((a, b, "I"))
        for e in rnd.sample(existing, 25):   # duplicates of existing edges
            delta.append((e[0], e[1], "I"))
        delta += [(r[0], r[1], r[2]) for r in rnd.sample(delta, 15)]  # repeats in the delta
        for e in rnd.sample(existing, 20):   # deletions of existing edges
            delta.append((e[0], e[1], "D"))
        for i in range(5):                   # deletions of edges that do not exist
            delta.append(("ghost%d" % i, "u1", "D"))
        for i in range(n_hot):               # a star gains followers
            delta.append(("fan%d" % i, hot, "I"))
        rnd.shuffle(delta)
        after = set(edges)
        for a, b, op in delta:
            if op == "D":
                after.discard((a, b))
            else:
                after.add((a, b))
        return delta, after

    def test_delta_applied_twice(self):
        rnd = random.Random(21)
        work = self.tmpdir()
        table, edges = self.base_table(rnd, work)
        delta, after = self.make_delta(rnd, edges, 200)
        inp = os.path.join(work, "delta.csv")
        write_csv(inp, ["follower_id", "followee_id", "op"], delta)
        st = os.path.join(work, "st.json")
        t0 = time.time()
        p = self.load("--table", table, *FLAGS, "--incremental", "--op-column", "op",
                      "--stats-json", st, inp)
        self.assertExit(p, 0, "incremental load")
        self.assertEqual(self.table_edges(table), after)
        self.assertCounts(table, after, "delta once")
        s = self.stats(st)
        self.assertEqual(s["rows_read"], len(delta))
        self.assertEqual(s["added"] + s["deleted"] + s["duplicates"] + s["absent"] +
                         s["replayed"], len(delta))
        # the true number of changes: a row changes the table when its edge's
        # presence flips at that point of the delta
        cur, flips = set(edges), 0
        for a, b, op in delta:
            if (op == "D") == ((a, b) in cur):
                flips += 1
                (cur.discard if op == "D" else cur.add)((a, b))
        self.assertEqual(s["added"] + s["deleted"], flips)
        figure("delta-once", dict(s, elapsed_s=round(time.time() - t0, 2)))
        # the same delta again: no count changes
        st2 = os.path.join(work, "st2.json")
        p = self.load("--table", table, *FLAGS, "--incremental", "--op-column", "op",
                      "--stats-json", st2, inp)
        self.assertExit(p, 0, "incremental load, second time")
        self.assertEqual(self.table_edges(table), after)
        self.assertCounts(table, after, "delta twice")
        s2 = self.stats(st2)
        figure("delta-twice", s2)

    @unittest.skipUnless(os.path.exists(PROXY), "tests/tools/faultproxy.py missing")
    def test_delta_through_fault_proxy(self):
        rnd = random.Random(33)
        work = self.tmpdir()
        table, edges = self.base_table(rnd, work, nrows=600)
        delta, after = self.make_delta(rnd, edges, 200, hot="u7", n_hot=100)
        inp = os.path.join(work, "delta.csv")
        write_csv(inp, ["follower_id", "followee_id", "op"], delta)
        statsf = os.path.join(work, "faults.json")
        proxy = subprocess.Popen(
            ["/usr/bin/python3", PROXY, "--listen", "127.0.0.1:0", "--upstream", et.ENDPOINT,
             "--seed", "5", "--targets", "TransactWriteItems", "--throttle", "0.15",
             "--lost-reply", "0.15", "--http500", "0.05", "--truncate", "0.05",
             "--stats-file", statsf],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proxy.stdout.readline()
            self.assertIn(" listening on ", line, proxy.stderr.read() if proxy.poll() else "")
            port = int(line.split(" listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
            st = os.path.join(work, "st.json")
            t0 = time.time()
            p = self.run_edgeload("load", "--endpoint-url", "http://127.0.0.1:%d" % port,
                                  "--region", et.REGION, "--table", table, *FLAGS,
                                  "--incremental", "--op-column", "op", "--stats-json", st, inp)
            self.assertExit(p, 0, "incremental load through the proxy")
            elapsed = time.time() - t0
        finally:
            proxy.terminate()
            proxy.communicate(timeout=10)
        self.assertEqual(self.table_edges(table), after)
        self.assertCounts(table, after, "delta through the fault proxy")
        s = self.stats(st)
        with open(statsf) as f:
            faults = json.load(f)
        injected = {k: v for k, v in faults.get("faults", {}).items() if v}
        figure("delta-fault-proxy", dict(s, elapsed_s=round(elapsed, 2), faults=injected))
        # the faults must really have happened, or this tests nothing
        self.assertGreater(injected.get("lost_reply", 0), 0)
        self.assertGreater(injected.get("throttle", 0), 0)
        self.assertGreater(s["retries"], 0)


if __name__ == "__main__":
    et.main()
