"""Capacity budgets that hold for any item, against DynamoDB Local through
the fault proxy (no faults: it only captures every request and answer).

For load (with and without the index), load --incremental and counters
under --max-wcu 300 and 1000, and verify under --max-rcu 300 and 1000, the
units consumed are recomputed from the captured traffic by DynamoDB's own
rules (a write: one unit per started KB of the item, again in the index;
a transaction: twice; an UpdateItem: by the larger of the item before and
after; a consistent read: one unit per started 4 KB), placed at the moment
the answer left, and every 10-second window of the run must stay within
10 % of the budget. Items are of mixed size, 100 B to 8 KB, with a run of
350 KB items in the loads (one such item with its index write costs more
than two seconds of a 300-unit budget).

The runs go at once, each with its own table and proxy, so the whole test
lasts about as long as one run (~25 s).
"""

import concurrent.futures
import json
import math
import os
import random
import sys

from edgeload_test import ENDPOINT, EdgeloadTestCase, main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import faultproxy  # noqa: E402

SECONDS = float(os.environ.get("EDGELOAD_CAPACITY_SECONDS", "22"))  # of budget per run
BIG = 350 * 1024


def sizes(rng, n):
    """n item payload sizes: mostly 100 B - 8 KB."""
    return [rng.choice((100, 300, 900, 1500, 2500, 4000, 6000, 8000)) for _ in range(n)]


def write_units(item, indexed):
    u = max(1, math.ceil(faultproxy.item_size(item) / 1024.0))
    return 2 * u if indexed and "GSI1PK" in item and "GSI1SK" in item else u


def read_units(item):
    return max(1, math.ceil(faultproxy.item_size(item) / 4096.0))


def key_of(item):
    return (item["PK"]["S"], item["SK"]["S"])


class Consumption:
    """Units by the second, recomputed from a capture file."""

    def __init__(self, path, indexed, stored=None, reported=False):
        self.events = []                  # (time, units)
        self.stored = stored or {}        # key -> item, for UpdateItem's before-size
        with open(path) as f:
            for line in f:
                c = json.loads(line)
                if c["status"] != 200 or not c["request"]:
                    continue
                if reported:              # what DynamoDB said it consumed
                    cc = (c["answer"] or {}).get("ConsumedCapacity", [])
                    units = sum(e.get("CapacityUnits", 0)
                                for e in (cc if isinstance(cc, list) else [cc]))
                else:
                    units = self.units(c["target"], c["request"], c["answer"] or {}, indexed)
                if units:
                    self.events.append((c["t1"], units))
        self.events.sort()

    def units(self, target, req, ans, indexed):
        if target == "BatchWriteItem":
            unprocessed = set()
            for writes in ans.get("UnprocessedItems", {}).values():
                for w in writes:
                    unprocessed.add(key_of(w["PutRequest"]["Item"]))
            return sum(write_units(w["PutRequest"]["Item"], indexed)
                       for writes in req["RequestItems"].values() for w in writes
                       if key_of(w["PutRequest"]["Item"]) not in unprocessed)
        if target == "TransactWriteItems":
            total = 0
            for a in req["TransactItems"]:
                if "Put" in a:
                    total += write_units(a["Put"]["Item"], indexed)
                else:                     # the counter ADD: a small counter item
                    total += 1
            return 2 * total
        if target == "UpdateItem":
            key = (req["Key"]["PK"]["S"], req["Key"]["SK"]["S"])
            before = dict(self.stored.get(key, {}))
            after = dict(before, **{"PK": req["Key"]["PK"], "SK": req["Key"]["SK"]})
            names = req.get("ExpressionAttributeNames", {})
            values = req.get("ExpressionAttributeValues", {})
            for k, name in names.items():
                after[name] = values.get(":n" + k[2:], {"N": "0"})
            self.stored[key] = after
            return max(write_units(before, False) if before else 1, write_units(after, False))
        if target == "BatchGetItem":
            return sum(read_units(i) for items in ans.get("Responses", {}).values()
                       for i in items)
        return 0

    def worst_window(self, seconds=10.0):
        """(units a second, start) of the busiest window of `seconds` that
        lies inside the run."""
        if not self.events:
            return 0, 0
        first, last = self.events[0][0], self.events[-1][0]
        worst, at = 0.0, first
        times = [t for t, _ in self.events]
        j, total = 0, 0.0
        for i, (t, u) in enumerate(self.events):
            # windows that start at an event and end inside the run
            if t + seconds > last + 1e-9 and i > 0:
                break
            while j < len(self.events) and self.events[j][0] < t + seconds:
                total += self.events[j][1]
                j += 1
            if total / seconds > worst:
                worst, at = total / seconds, t - first
            total -= u
        return worst, at

    def span(self):
        return self.events[-1][0] - self.events[0][0] if self.events else 0


class CapacityTest(EdgeloadTestCase):

    def proxy_run(self, name, args, budget, indexed, stored=None):
        """Runs edgeload through a capturing proxy; returns (proc, consumption)."""
        d = self.tmpdir()
        cap = os.path.join(d, "capture.jsonl")
        with faultproxy.ProxyProcess(ENDPOINT, seed=1, capture=cap,
                                     targets="BatchWriteItem,TransactWriteItems,UpdateItem,"
                                             "BatchGetItem") as proxy:
            proc = self.run_edgeload(*[a.replace("@PROXY@", proxy.url) for a in args],
                                     timeout=600)
        return (name, budget, proc, Consumption(cap, indexed, dict(stored or {})),
                Consumption(cap, indexed, reported=True))

    def edges(self, d, rng, budget, indexed, big):
        """A CSV of edges worth about SECONDS of the budget."""
        units, rows, i = 0, [], 0
        target = budget * SECONDS
        if big:                           # a run of 350 KB items first
            for k in range(3 if budget < 500 else 6):
                rows.append((i, "x" * BIG))
                units += (2 if indexed else 1) * math.ceil((BIG + 40) / 1024.0)
                i += 1
        for size in sizes(rng, 100000):
            if units >= target:
                break
            rows.append((i, "y" * size))
            units += (2 if indexed else 1) * max(1, math.ceil((size + 40) / 1024.0))
            i += 1
        rng.shuffle(rows)
        path = os.path.join(d, "edges.csv")
        with open(path, "w") as f:
            f.write("a,b,note\n")
            for k, note in rows:
                f.write("u%d,t%d,%s\n" % (k % 97, k, note))
        return path

    def load_args(self, table, path, budget, indexed, *extra):
        return (["load", "--endpoint-url", "@PROXY@", "--region", "us-east-1", "--table", table,
                 "--pk", "A#{a}", "--sk", "B#{b}", "--attr", "note=note",
                 "--max-wcu", str(budget), "--progress", "none"]
                + ([] if indexed else ["--no-index"]) + list(extra) + [path])

    def entity_table(self, rng, budget, reads):
        """A table of mixed-size items, written directly: what counters update
        and verify reads. Returns (table, csv path, stored items by key)."""
        table = self.unique_table("capent")
        self.create_table_boto(table, index=False)
        d = self.tmpdir()
        target = budget * SECONDS
        items, units, i = {}, 0, 0
        while units < target:
            size = rng.choice((100, 900, 2500, 4000, 6000, 8000, 12000, 16000))
            item = {"PK": {"S": "U#%d" % i}, "SK": {"S": "P"}, "pad": {"S": "z" * size}}
            items[key_of(item)] = item
            units += read_units(item) if reads else write_units(item, False)
            i += 1
        with self.ddb_batch(table) as put:
            for item in items.values():
                put(item)
        path = os.path.join(d, "rows.csv")
        with open(path, "w") as f:
            f.write("id,pad\n")
            for (pk, _), item in items.items():
                f.write("%s,%s\n" % (pk[2:], item["pad"]["S"]))
        return table, path, items

    def ddb_batch(self, table):
        ddb = self.ddb

        class Batch:
            def __enter__(self):
                self.buf = []
                return self.put

            def put(self, item):
                self.buf.append({"PutRequest": {"Item": item}})
                if len(self.buf) == 25:
                    self.flush()

            def flush(self):
                req = {table: self.buf}
                while req:
                    req = ddb.batch_write_item(RequestItems=req).get("UnprocessedItems")
                self.buf = []

            def __exit__(self, *exc):
                if self.buf:
                    self.flush()
        return Batch()

    def test_budgets_hold_over_every_ten_seconds(self):
        rng = random.Random(20261203)
        runs = []
        for budget in (300, 1000):
            for indexed in (True, False):
                table = self.unique_table("capload")
                self.create_table_boto(table, index=indexed)
                path = self.edges(self.tmpdir(), rng, budget, indexed, big=True)
                runs.append(("load %s wcu %d" % ("indexed" if indexed else "no index", budget),
                             self.load_args(table, path, budget, indexed), budget, indexed, None))
            # load --incremental: new rows, a counter each
            table = self.unique_table("capincr")
            self.create_table_boto(table)
            # (a transaction costs twice its writes; DynamoDB Local reports
            # twice that again, and the budget follows what is reported)
            path = self.edges(self.tmpdir(), rng, budget // 4, True, big=False)
            runs.append(("incremental wcu %d" % budget,
                         self.load_args(table, path, budget, True, "--incremental",
                                        "--counter", "U#{b},P,n", "--no-group"),
                         budget, True, None))
            # counters: SET on existing items of 100 B - 16 KB
            table, path, items = self.entity_table(rng, budget, reads=False)
            runs.append(("counters wcu %d" % budget,
                         ["counters", "--endpoint-url", "@PROXY@", "--region", "us-east-1",
                          "--table", table, "--pk", "U#{id}", "--sk", "P", "--no-index",
                          "--counter", "U#{id},P,n", "--max-wcu", str(budget),
                          "--progress", "none", path], budget, False, items))
            # verify: consistent reads of the same mixed sizes
            table, path, items = self.entity_table(rng, budget, reads=True)
            runs.append(("verify rcu %d" % budget,
                         ["verify", "--endpoint-url", "@PROXY@", "--region", "us-east-1",
                          "--table", table, "--pk", "U#{id}", "--sk", "P", "--no-index",
                          "--attr", "pad=pad", "--max-rcu", str(budget), "--quiet",
                          "--report", os.path.join(self.tmpdir(), "report.jsonl"), path],
                         budget, False, None))
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            results = list(pool.map(lambda r: self.proxy_run(r[0], r[1], r[2], r[3], r[4]),
                                    runs))
        lines, failures = [], []

        def judge(result, note=""):
            name, budget, proc, cons, said = result
            self.assertExit(proc, 0, name)
            worst, at = cons.worst_window()
            worst_said, _ = said.worst_window()
            span = cons.span()
            lines.append("%-24s budget %5d: %6d units in %5.1f s, worst 10 s window %7.1f/s "
                         "(%3.0f %%) at %4.1f s; as reported %7.1f/s (%3.0f %%)%s"
                         % (name, budget, sum(u for _, u in cons.events), span, worst,
                            100.0 * worst / budget, at, worst_said, 100.0 * worst_said / budget,
                            note))
            found = []
            if span < 12:
                found.append("%s: the run lasted %.1f s, too short for a 10 s window"
                             % (name, span))
            for what, w in (("by DynamoDB's rules", worst), ("as DynamoDB reported", worst_said)):
                if w > 1.10 * budget:
                    found.append("%s: %.1f units a second over 10 s %s, budget %d"
                                 % (name, w, what, budget))
            return found

        for run, result in zip(runs, results):
            found = judge(result)
            if found and run[0].startswith("load "):
                # Units are placed when the proxy's answer left, so a run's
                # windows also hold the latency jitter of ten runs and their
                # proxies sharing two cores (seen once: 112 % with every other
                # run at 105-108 %). Run the same load again alone, into a new
                # table (over existing items DynamoDB Local reports no index
                # writes, so the same table would measure something else), and
                # it must hold then.
                name, args, budget, indexed, stored = run
                fresh = self.unique_table("capagain")
                self.create_table_boto(fresh, index=indexed)
                args = [fresh if a == args[args.index("--table") + 1] else a for a in args]
                found = judge(self.proxy_run(name, args, budget, indexed, stored),
                              "  (again, alone)")
            failures.extend(found)
        print("\n" + "\n".join(lines), file=sys.stderr)
        self.assertEqual(failures, [])


if __name__ == "__main__":
    main()
