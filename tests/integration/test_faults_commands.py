#!/usr/bin/python3
"""The commands besides load, through the fault proxy (issue 16), against
DynamoDB Local, with every result checked here independently: counts
computed in Python from the input, the table read back with boto3 straight
from DynamoDB Local (never through the proxy).

  - counters: a table loaded without counters, then `edgeload counters`
    through throttles, 5xx, resets, lost and cut replies on UpdateItem:
    every counter exact, stale values overwritten, no edge item touched;
  - counters killed with SIGKILL while writing (seen in its progress
    lines and its checkpoint), then --resume: exactly the counter items the
    checkpoint names as written are skipped, the rest written once, every
    counter exact; --resume of the finished checkpoint writes nothing; a
    changed input resumed writes every counter again;
  - load --incremental --op-column: a delta with new edges, edges already
    present, repeats, deletions of present and absent edges, and keys put
    and deleted in one delta, through faults on TransactWriteItems (a lost
    reply resent is a replay, thanks to the ClientRequestToken): the table's
    items and counters end exactly as the delta says, and the per-row
    figures add up; the same delta again ends with the same table;
  - verify through faults on BatchGetItem and Query: a correct table
    exits 0 with expected == present; after items and counters are
    damaged with boto3 it reports exactly those (counts and report file),
    with --stats-json equal to the summary; --counters-only too.

tests/tools/faultproxy.py picks the faults from one seeded generator; its
/__stats tell which faults were injected, and each test asserts that the
faults it is about really happened.
"""

import collections
import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgeload_test as et  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import faultproxy  # noqa: E402  (the suite's own tool)

# Roughly a quarter of the requests of the targeted operation fail, in
# every way the proxy knows that applies to them: high enough that every
# kind shows up in a few hundred requests, low enough that a run of a few
# hundred requests ends in seconds.
FAULTS = {"throttle": 0.08, "http500": 0.03, "http503": 0.03, "reset": 0.03,
          "lost_reply": 0.06, "truncate": 0.02, "slow": 0.01, "slow_ms": 300}
# verify sends a request per 100 keys, so a few dozen in all: twice the rates.
VERIFY_FAULTS = {"throttle": 0.14, "http500": 0.07, "http503": 0.07, "reset": 0.07,
                 "lost_reply": 0.10, "truncate": 0.03, "slow": 0.02, "slow_ms": 300}
# The kinds every run must have met (slow and truncate are too rare to
# insist on in a short run).
MUST_SEE = ("throttle", "http500", "http503", "reset", "lost_reply")

EDGE_FLAGS = ["--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
              "--const", "edgeType=FOLLOWS"]
COUNTER_FLAGS = ["--counter", "USER#{followee_id},PROFILE,followerCount",
                 "--counter", "USER#{follower_id},PROFILE,followingCount"]
FLAGS = EDGE_FLAGS + COUNTER_FLAGS
COUNTER_ATTRS = ("followerCount", "followingCount")


def gen_graph(rnd, users, rows, dup_share=0.1):
    """Follow rows (follower, followee), no self-follows, some repeated."""
    out = []
    while len(out) < rows:
        if out and rnd.random() < dup_share:
            out.append(rnd.choice(out))
            continue
        a, b = "u%d" % rnd.randrange(users), "u%d" % rnd.randrange(users)
        if a != b:
            out.append((a, b))
    return out


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def expected_counts(edges):
    """{(pk, attribute): n} for a set of distinct (follower, followee) edges."""
    c = collections.Counter()
    for a, b in edges:
        c[("USER#" + b, "followerCount")] += 1
        c[("USER#" + a, "followingCount")] += 1
    return dict(c)


def counter_items_in_key_order(counts):
    """The counter items [(pk, sk, [attributes])] in the order edgeload
    writes them: by the bytes of "PK\\0SK"."""
    items = collections.defaultdict(list)
    for pk, attr in counts:
        items[(pk, "PROFILE")].append(attr)
    return [(pk, sk, sorted(attrs)) for (pk, sk), attrs in
            sorted(items.items(), key=lambda kv: kv[0][0].encode() + b"\0" + kv[0][1].encode())]


def edge_item(a, b):
    return {"PK": et.S("ACTOR#" + a), "SK": et.S("TARGET#" + b),
            "GSI1PK": et.S("TARGET#" + b), "GSI1SK": et.S("ACTOR#" + a),
            "edgeType": et.S("FOLLOWS")}


def progress_lines(stderr, phase=None):
    """The plain progress lines as dicts of their key=value fields."""
    out = []
    for line in stderr.splitlines():
        if not line.startswith("edgeload: progress "):
            continue
        fields = dict(f.split("=", 1) for f in line.split()[2:] if "=" in f)
        if phase is None or fields.get("phase") == phase:
            out.append(fields)
    return out


class CommandFaultCase(et.EdgeloadTestCase):
    """Helpers: a proxy per test, runs through it, the table read back."""

    def proxy(self, targets, seed, **rates):
        p = faultproxy.ProxyProcess(et.ENDPOINT, seed=seed, targets=targets,
                                    **(rates or FAULTS))
        self.addCleanup(p.stop)
        return p

    def via(self, proxy, command, *args, timeout=300):
        return self.run_edgeload(command, "--endpoint-url", proxy.url, "--region", et.REGION,
                                 *args, timeout=timeout)

    def direct(self, command, *args, timeout=300):
        return self.run_edgeload(command, *self.endpoint_args(), *args, timeout=timeout)

    def stats(self, path):
        with open(path) as f:
            return json.load(f)

    def snapshot(self, table):
        return et.canon_sorted(self.scan_all(table, ConsistentRead=True))

    def table_counts(self, table):
        """{(pk, attribute): n} of every counter attribute in the table, 0s left out."""
        got = {}
        for it in self.scan_all(table, ConsistentRead=True):
            for attr in COUNTER_ATTRS:
                if attr in it and int(it[attr]["N"]) != 0:
                    got[(it["PK"]["S"], attr)] = int(it[attr]["N"])
        return got

    def assertCounts(self, table, expected, what):
        want = {k: v for k, v in expected.items() if v}
        got = self.table_counts(table)
        if got != want:
            diff = sorted(set(got.items()) ^ set(want.items()))
            self.fail("%s: %d counters differ (table vs expected), e.g. %s"
                      % (what, len(diff), diff[:10]))

    def assertFaultsSeen(self, faults, kinds=MUST_SEE):
        seen = {k: v for k, v in faults.get("faults", {}).items() if v}
        for kind in kinds:
            self.assertGreater(seen.get(kind, 0), 0,
                               "the proxy injected no %s, so this tests nothing: %s"
                               % (kind, seen))
        return seen

    def edges_loaded(self, table, work, rows, flags=EDGE_FLAGS):
        inp = write_csv(os.path.join(work, "base.csv"), ["follower_id", "followee_id"], rows)
        self.create_table_boto(table)
        self.assertExit(self.direct("load", "--table", table, *flags, "--progress", "none",
                                    inp), 0, "edgeload load (the table's items)")
        return inp


# ---------------------------------------------------------------- counters

class CountersThroughFaults(CommandFaultCase):

    def test_counters_exact_through_faults(self):
        rnd = random.Random(101)
        work = self.tmpdir()
        rows = gen_graph(rnd, 300, 2500)
        table = self.unique_table("fcctr")
        inp = self.edges_loaded(table, work, rows)
        edges = set(rows)
        exp = expected_counts(edges)
        before = {(it["PK"]["S"], it["SK"]["S"]): it for it in self.scan_all(table)}
        # stale values the backfill must overwrite
        for pk, attr in sorted(exp)[:6]:
            self.ddb.update_item(TableName=table, Key={"PK": et.S(pk), "SK": et.S("PROFILE")},
                                 UpdateExpression="SET #a = :n",
                                 ExpressionAttributeNames={"#a": attr},
                                 ExpressionAttributeValues={":n": et.N(987654)})
        st = os.path.join(work, "st.json")
        proxy = self.proxy("UpdateItem", seed=7)
        p = self.via(proxy, "counters", "--table", table, *FLAGS, "--stats-json", st,
                     "--progress", "none", inp)
        faults = proxy.stats()
        self.assertExit(p, 0, "edgeload counters through the fault proxy")
        self.assertCounts(table, exp, "counters through faults")
        # no edge item rewritten or added: exactly the items the load wrote
        after = {(it["PK"]["S"], it["SK"]["S"]): it for it in self.scan_all(table)
                 if it["SK"]["S"] != "PROFILE"}
        self.assertEqual(after, before)
        s = self.stats(st)
        self.assertEqual(s["rows_read"], len(rows))
        self.assertEqual(s["edges"], len(edges))
        self.assertEqual(s["duplicates"], len(rows) - len(edges))
        self.assertEqual(s["counters_written"], len(exp))
        self.assertEqual(s["counters_skipped"], 0)
        self.assertEqual(s["rejected"], 0)
        self.assertGreater(s["retries"], 0)
        self.assertGreater(s["throttled"], 0)
        self.assertFaultsSeen(faults)
        # every UpdateItem reached the proxy at least once, plus one request
        # for each fault that was retried
        self.assertGreaterEqual(faults["by_target"]["UpdateItem"],
                                len(counter_items_in_key_order(exp)))
        # and edgeload's requests are the ones the proxy saw: libcurl's own
        # resends on a new connection (after a reset of a reused one) too
        self.assertEqual(s["requests"], faults["by_target"]["UpdateItem"])

    def test_counters_sigkill_while_writing_then_resume(self):
        rnd = random.Random(202)
        work = self.tmpdir()
        rows = gen_graph(rnd, 1000, 2500, dup_share=0.05)
        table = self.unique_table("fcctk")
        inp = self.edges_loaded(table, work, rows)
        exp = expected_counts(set(rows))
        order = counter_items_in_key_order(exp)
        ck = os.path.join(work, "ck.json")
        common = ["--table", table, *FLAGS, "--checkpoint", ck, "--checkpoint-interval", "0.2"]
        proxy = self.proxy("UpdateItem", seed=17)
        # a budget that makes the writing phase last several seconds
        first = subprocess.Popen(
            [self.bin, "counters", "--endpoint-url", proxy.url, "--region", et.REGION, *common,
             "--max-wcu", "200", "--progress", "plain", "--progress-interval", "0.1", inp],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: first.poll() is None and (first.kill(), first.wait()))
        err_lines = []
        reader = threading.Thread(target=lambda: err_lines.extend(first.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and first.poll() is None:
            writing = progress_lines("".join(err_lines), "writing-counters")
            try:
                with open(ck) as f:
                    cp = json.load(f)
            except (OSError, ValueError):
                cp = {}
            if writing and cp.get("counters", {}).get("done", 0) > 0:
                first.send_signal(signal.SIGKILL)
                break
            time.sleep(0.05)
        first.wait(30)
        reader.join(10)
        first.stderr.close()
        stderr = "".join(err_lines)
        self.assertEqual(first.returncode, -signal.SIGKILL,
                         "counters ended before the kill:\n" + stderr[-3000:])
        et.assert_no_sanitizer_report(stderr)
        with open(ck) as f:
            done_at_kill = json.load(f)["counters"]["done"]
        self.assertGreater(done_at_kill, 0)
        self.assertLess(done_at_kill, len(order), "the kill came after the last counter")
        # the progress lines of the writing phase: its own units, never past 100%
        writing = progress_lines(stderr, "writing-counters")
        self.assertTrue(writing)
        for f in writing:
            self.assertEqual(int(f["total"]), len(order), f)
            self.assertEqual(int(f["rows"]), len(rows), f)
            self.assertLessEqual(int(f["done"]), int(f["total"]), f)
            self.assertLessEqual(float(f["phase_done"].rstrip("%")), 100.0, f)
        # what the checkpoint says is written is in the table, exactly
        table_now = self.table_counts(table)
        for pk, sk, attrs in order[:done_at_kill]:
            for attr in attrs:
                self.assertEqual(table_now.get((pk, attr)), exp[(pk, attr)],
                                 "the checkpoint says %s %s is written" % (pk, attr))

        st = os.path.join(work, "st.json")
        proxy2 = self.proxy("UpdateItem", seed=18)
        p = self.via(proxy2, "counters", *common, "--resume", "--stats-json", st,
                     "--progress", "none", inp)
        faults = proxy2.stats()
        self.assertExit(p, 0, "edgeload counters --resume")
        self.assertCounts(table, exp, "counters killed and resumed")
        s = self.stats(st)
        self.assertEqual(s["counters_skipped"], done_at_kill)
        self.assertEqual(s["counters_written"],
                         sum(len(attrs) for _, _, attrs in order[done_at_kill:]))
        self.assertEqual(s["rows_read"], len(rows), "a resumed backfill counts every row")
        self.assertIn("resumed: %d counter items were written by the run resumed" % done_at_kill,
                      p.stderr)
        self.assertFaultsSeen(faults, ("throttle", "lost_reply"))

        # the finished checkpoint resumed: every counter item stands, none written
        self.ddb.update_item(TableName=table, Key={"PK": et.S(order[0][0]), "SK": et.S("PROFILE")},
                             UpdateExpression="SET marker = :m",
                             ExpressionAttributeValues={":m": et.S("kept")})
        st2 = os.path.join(work, "st2.json")
        p = self.direct("counters", *common, "--resume", "--stats-json", st2, "--progress",
                        "none", inp)
        self.assertExit(p, 0, "edgeload counters --resume of a finished checkpoint")
        s2 = self.stats(st2)
        self.assertEqual((s2["counters_skipped"], s2["counters_written"]), (len(order), 0))
        self.assertCounts(table, exp, "finished checkpoint resumed")

        # the input changed since: the counts differ, every counter written again
        more = gen_graph(random.Random(203), 1000, 200, dup_share=0.0)
        write_csv(inp, ["follower_id", "followee_id"], rows + more)
        exp2 = expected_counts(set(rows + more))
        st3 = os.path.join(work, "st3.json")
        p = self.direct("counters", *common, "--resume", "--stats-json", st3, "--progress",
                        "none", inp)
        self.assertExit(p, 0, "edgeload counters --resume after the input changed")
        self.assertIn("the counts differ from the run resumed", p.stderr)
        s3 = self.stats(st3)
        self.assertEqual((s3["counters_skipped"], s3["counters_written"]), (0, len(exp2)))
        self.assertCounts(table, exp2, "changed input resumed")


# ---------------------------------------------------------------- incremental

class IncrementalThroughFaults(CommandFaultCase):

    def make_delta(self, rnd, edges, users):
        """Rows (follower, followee, op): new edges, edges already present,
        repeats, deletions of present and absent edges, a key put and
        deleted (and one deleted and put back), a target gaining many
        followers; shuffled."""
        existing = sorted(edges)
        delta = []
        while len(delta) < 120:
            a, b = "u%d" % rnd.randrange(users), "u%d" % rnd.randrange(users)
            if a != b and (a, b) not in edges:
                delta.append((a, b, "I"))
        delta += [(a, b, "I") for a, b in rnd.sample(existing, 40)]      # already present
        delta += [r for r in rnd.sample(delta, 20)]                       # repeats
        delta += [(a, b, "D") for a, b in rnd.sample(existing, 40)]      # present: deleted
        delta += [("ghost%d" % i, "u1", "D") for i in range(8)]           # absent
        delta += [("fan%d" % i, "u7", "I") for i in range(40)]            # a star gains fans
        rnd.shuffle(delta)
        # order matters for these: appended after the shuffle
        delta += [("newbie", "u3", "I"), ("newbie", "u3", "D")]           # put, then deleted
        gone = existing[-1]
        delta += [(gone[0], gone[1], "D"), (gone[0], gone[1], "I")]       # deleted, put back
        return delta

    @staticmethod
    def apply(edges, delta):
        """The edge set after the delta, and how many rows changed it."""
        cur, flips = set(edges), 0
        for a, b, op in delta:
            if (op == "D") == ((a, b) in cur):
                flips += 1
                (cur.discard if op == "D" else cur.add)((a, b))
        return cur, flips

    def assertTable(self, table, edges, what):
        """Edge items exactly the edge set's, counters exactly its counts,
        nothing else but counter items."""
        items = self.scan_all(table, ConsistentRead=True)
        got_edges = [it for it in items if it["SK"]["S"] != "PROFILE"]
        self.assertItems(got_edges, [edge_item(a, b) for a, b in edges], what + ": edge items")
        for it in items:
            if it["SK"]["S"] == "PROFILE":
                self.assertTrue(set(it) <= {"PK", "SK"} | set(COUNTER_ATTRS), it)
        self.assertCounts(table, expected_counts(edges), what)

    def test_delta_through_faults_then_again(self):
        rnd = random.Random(303)
        work = self.tmpdir()
        base = gen_graph(rnd, 200, 800, dup_share=0.0)
        table = self.unique_table("fcinc")
        self.edges_loaded(table, work, base, flags=FLAGS)
        edges = set(base)
        self.assertCounts(table, expected_counts(edges), "the base backfill")
        delta = self.make_delta(rnd, edges, 200)
        inp = write_csv(os.path.join(work, "delta.csv"), ["follower_id", "followee_id", "op"],
                        delta)
        after, flips = self.apply(edges, delta)
        args = ["--table", table, *FLAGS, "--incremental", "--op-column", "op",
                "--progress", "none"]

        st = os.path.join(work, "st.json")
        proxy = self.proxy("TransactWriteItems", seed=31)
        p = self.via(proxy, "load", *args, "--stats-json", st, inp)
        faults = proxy.stats()
        self.assertExit(p, 0, "load --incremental through the fault proxy")
        self.assertTable(table, after, "delta through faults")
        s = self.stats(st)
        self.assertEqual(s["rows_read"], len(delta))
        self.assertEqual(s["rejected"], 0)
        self.assertEqual(s["added"] + s["deleted"] + s["duplicates"] + s["absent"] +
                         s["replayed"], len(delta))
        # a row changes the table when its edge's presence flips at its
        # place in the delta; a lost reply resent is answered as a replay
        self.assertEqual(s["added"] + s["deleted"] + s["replayed"], flips)
        self.assertGreater(s["replayed"], 0, "no lost reply was resent as a replay")
        self.assertGreater(s["retries"], 0)
        self.assertFaultsSeen(faults)

        # the same delta again, through other faults: the same table at the
        # end (rows of a key both put and deleted flip again on the way)
        snap = self.snapshot(table)
        again, flips2 = self.apply(after, delta)
        self.assertEqual(again, after)
        st2 = os.path.join(work, "st2.json")
        proxy2 = self.proxy("TransactWriteItems", seed=32)
        p = self.via(proxy2, "load", *args, "--stats-json", st2, inp)
        faults2 = proxy2.stats()
        self.assertExit(p, 0, "the same delta again")
        self.assertEqual(self.snapshot(table), snap, "the second run changed the table")
        s2 = self.stats(st2)
        self.assertEqual(s2["added"] + s2["deleted"] + s2["replayed"], flips2)
        self.assertEqual(s2["added"] + s2["deleted"] + s2["duplicates"] + s2["absent"] +
                         s2["replayed"], len(delta))
        self.assertFaultsSeen(faults2, ("throttle", "lost_reply"))


# ---------------------------------------------------------------- verify

SUMMARY_ITEMS = re.compile(r"verify: expected (\d+) present (\d+) missing (\d+) different (\d+)")
SUMMARY_COUNTERS = re.compile(
    r"verify: counters: expected (\d+) present (\d+) missing (\d+) different (\d+)")
SUMMARY_REVERSE = re.compile(
    r"verify: reverse: (\d+) index keys, (\d+) items expected, reverse-missing (\d+) "
    r"reverse-extra (\d+)")
SUMMARY_RUN = re.compile(
    r"verify: (\d+) rows read, (\d+) rejected, (\d+) duplicates, (\d+) requests, (\d+) "
    r"retries, (\d+) throttled, ([\d.]+) RCU in ([\d.]+) s")


def summary_figures(stdout):
    """The summary's figures under the names --stats-json gives them."""
    out = {}
    for rx, names in ((SUMMARY_ITEMS, ("expected", "present", "missing", "different")),
                      (SUMMARY_COUNTERS, ("counters_expected", "counters_present",
                                          "counters_missing", "counters_different")),
                      (SUMMARY_REVERSE, ("reverse_keys", None, "reverse_missing",
                                         "reverse_extra")),
                      (SUMMARY_RUN, ("rows_read", "rejected", "duplicates", "requests",
                                     "retries", "throttled", "rcu_consumed", "elapsed_s"))):
        m = rx.search(stdout)
        if not m:
            continue
        for name, value in zip(names, m.groups()):
            if name:
                out[name] = float(value) if "." in value else int(value)
    return out


class VerifyThroughFaults(CommandFaultCase):

    def report(self, path):
        """The report's mismatches as sorted (kind, PK, SK) tuples, counter
        kinds with their attribute."""
        out = []
        for r in et.read_jsonl(path):
            t = (r["kind"], r["key"]["PK"], r["key"]["SK"])
            if r["kind"].startswith("counter-"):
                self.assertEqual(len(r["attributes"]), 1, r)
                t += tuple(r["attributes"])
            out.append(t)
        return sorted(out)

    def test_verify_exact_through_faults(self):
        rnd = random.Random(404)
        work = self.tmpdir()
        rows = gen_graph(rnd, 400, 3000)
        table = self.unique_table("fcver")
        inp = self.edges_loaded(table, work, rows, flags=FLAGS)
        edges = set(rows)
        exp = expected_counts(edges)
        nitems = len(counter_items_in_key_order(exp))
        rep = os.path.join(work, "report.jsonl")
        args = ["--table", table, *FLAGS, "--progress", "none", "--report", rep]
        targets = "BatchGetItem,Query"

        # a correct table: exit 0, every expected item and counter present
        proxy = self.proxy(targets, seed=41, **VERIFY_FAULTS)
        p = self.via(proxy, "verify", *args, "--reverse", "10", inp)
        faults = proxy.stats()
        self.assertExit(p, 0, "verify of a correct table through faults")
        fig = summary_figures(p.stdout)
        self.assertEqual((fig["expected"], fig["present"], fig["missing"], fig["different"]),
                         (len(edges), len(edges), 0, 0), p.stdout)
        self.assertEqual((fig["counters_expected"], fig["counters_present"],
                          fig["counters_missing"], fig["counters_different"]),
                         (len(exp), len(exp), 0, 0), p.stdout)
        self.assertEqual((fig["reverse_keys"], fig["reverse_missing"], fig["reverse_extra"]),
                         (10, 0, 0), p.stdout)
        self.assertEqual(et.read_jsonl(rep), [])
        self.assertGreater(fig["retries"], 0)
        self.assertFaultsSeen(faults)
        self.assertGreater(faults["by_target"].get("Query", 0), 0)

        # damage the table behind edgeload's back
        keys = sorted(edges)
        picked = rnd.sample(keys, 7)
        deleted, changed = picked[:4], picked[4:]
        for a, b in deleted:
            self.ddb.delete_item(TableName=table, Key={"PK": et.S("ACTOR#" + a),
                                                       "SK": et.S("TARGET#" + b)})
        for a, b in changed:
            self.ddb.update_item(TableName=table, Key={"PK": et.S("ACTOR#" + a),
                                                       "SK": et.S("TARGET#" + b)},
                                 UpdateExpression="SET edgeType = :v",
                                 ExpressionAttributeValues={":v": et.S("BLOCKS")})
        counter_keys = sorted(exp)
        cpicked = rnd.sample(counter_keys, 3)
        cdifferent, cmissing = cpicked[:2], cpicked[2:]
        for pk, attr in cdifferent:
            self.ddb.update_item(TableName=table, Key={"PK": et.S(pk), "SK": et.S("PROFILE")},
                                 UpdateExpression="SET #a = :n",
                                 ExpressionAttributeNames={"#a": attr},
                                 ExpressionAttributeValues={":n": et.N(exp[(pk, attr)] + 5)})
        for pk, attr in cmissing:
            self.ddb.update_item(TableName=table, Key={"PK": et.S(pk), "SK": et.S("PROFILE")},
                                 UpdateExpression="REMOVE #a",
                                 ExpressionAttributeNames={"#a": attr})
        want_items = sorted([("missing", "ACTOR#" + a, "TARGET#" + b) for a, b in deleted] +
                            [("different", "ACTOR#" + a, "TARGET#" + b) for a, b in changed])
        want_counters = sorted([("counter-different", pk, "PROFILE", attr)
                                for pk, attr in cdifferent] +
                               [("counter-missing", pk, "PROFILE", attr)
                                for pk, attr in cmissing])

        st = os.path.join(work, "st.json")
        proxy = self.proxy(targets, seed=42, **VERIFY_FAULTS)
        p = self.via(proxy, "verify", *args, "--stats-json", st, inp)
        faults = proxy.stats()
        self.assertExit(p, 4, "verify of a damaged table through faults")
        fig = summary_figures(p.stdout)
        # an item that differs is present; a counter is present when it is equal
        self.assertEqual((fig["expected"], fig["present"], fig["missing"], fig["different"]),
                         (len(edges), len(edges) - 4, 4, 3), p.stdout)
        self.assertEqual((fig["counters_expected"], fig["counters_present"],
                          fig["counters_missing"], fig["counters_different"]),
                         (len(exp), len(exp) - 3, 1, 2), p.stdout)
        self.assertEqual(self.report(rep), sorted(want_items + want_counters))
        for r in et.read_jsonl(rep):
            if r["kind"] == "different":
                self.assertEqual(r["attributes"], {"edgeType": {"expected": et.S("FOLLOWS"),
                                                                "actual": et.S("BLOCKS")}})
        self.assertFaultsSeen(faults)
        # --stats-json says what the summary says
        s = self.stats(st)
        for name, value in fig.items():
            if isinstance(value, float):
                self.assertAlmostEqual(s[name], value, delta=0.051 if name == "rcu_consumed"
                                       else 0.006, msg=name)
            else:
                self.assertEqual(s[name], value, name)
        self.assertEqual(s["rows_read"], len(rows))
        self.assertEqual(s["duplicates"], len(rows) - len(edges))
        self.assertIn("%d mismatches, all in %s" % (len(want_items) + len(want_counters), rep),
                      p.stdout)

        # --counters-only: the counter mismatches and no item
        proxy = self.proxy(targets, seed=43, **VERIFY_FAULTS)
        p = self.via(proxy, "verify", *args, "--counters-only", inp)
        faults = proxy.stats()
        self.assertExit(p, 4, "verify --counters-only through faults")
        fig = summary_figures(p.stdout)
        self.assertNotIn("expected", fig, "--counters-only checked items: " + p.stdout)
        self.assertEqual((fig["counters_expected"], fig["counters_present"],
                          fig["counters_missing"], fig["counters_different"]),
                         (len(exp), len(exp) - 3, 1, 2), p.stdout)
        self.assertEqual(self.report(rep), want_counters)
        self.assertFaultsSeen(faults, ("throttle", "lost_reply"))
        # one BatchGetItem per 100 counter items, plus one per fault resent
        self.assertGreaterEqual(faults["by_target"]["BatchGetItem"], (nitems + 99) // 100)


if __name__ == "__main__":
    et.main()
