"""100,000 generated edges: all land, with the right attributes, and every
one is reachable from both directions.

The edges are a deterministic sample of distinct (source, target) pairs, so a
failure reproduces exactly. Reachability is checked with a Query (Select=COUNT)
per source on the table and per target on the inverted index, for every
source and every target, compared with the generated fan-out and fan-in:
together with the Scan's exact item set this shows each edge answers both
questions. The queries run on a few threads; against DynamoDB Local on two
cores the whole test takes a couple of minutes, most of it the load.
"""

import collections
import concurrent.futures
import os
import random
import time

from edgeload_test import EdgeloadTestCase, canon, follow_edge, main

EDGES = int(os.environ.get("EDGELOAD_SCALE_EDGES", "100000"))
SOURCES = 4000
TARGETS = 2500
BASE_EPOCH = 1718900000
QUERY_THREADS = 8


def generate_edges(count=EDGES, seed=20240620):
    """[(source, target, created_at)], distinct pairs, always the same list."""
    rng = random.Random(seed)
    pairs = rng.sample(range(SOURCES * TARGETS), count)
    return [("u%05d" % (p // TARGETS), "u%05d" % (p % TARGETS), BASE_EPOCH + i)
            for i, p in enumerate(pairs)]


class Scale100k(EdgeloadTestCase):

    def test_100k_edges_both_directions(self):
        edges = generate_edges()
        d = self.tmpdir()
        path = os.path.join(d, "follows.csv")
        with open(path, "w") as f:
            f.write("follower_id,followee_id,created_at\n")
            for src, dst, created in edges:
                f.write("%s,%s,%d\n" % (src, dst, created))

        table = self.unique_table("scale")
        self.create_table_cli(table)
        t0 = time.monotonic()
        proc = self.load("--table", table,
                         "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
                         "--attr", "createdAt=created_at:N", "--const", "edgeType=FOLLOWS",
                         "--quiet", path, timeout=900)
        load_s = time.monotonic() - t0
        self.assertExit(proc, 0, "edgeload load (%d edges)" % len(edges))

        t0 = time.monotonic()
        items = self.scan_all(table, segments=4)
        scan_s = time.monotonic() - t0
        self.assertEqual(len(items), len(edges), "Scan item count")
        expected = set(canon(follow_edge(*e)) for e in edges)
        actual = set(canon(i) for i in items)
        missing, extra = expected - actual, actual - expected
        self.assertFalse(missing or extra,
                         "%d expected items missing (e.g. %s), %d unexpected (e.g. %s)"
                         % (len(missing), sorted(missing)[:3], len(extra), sorted(extra)[:3]))

        out_deg = collections.Counter("ACTOR#" + e[0] for e in edges)
        in_deg = collections.Counter("TARGET#" + e[1] for e in edges)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(QUERY_THREADS) as pool:
            fwd = dict(zip(out_deg, pool.map(lambda k: self.count_pk(table, k), out_deg)))
            rev = dict(zip(in_deg, pool.map(lambda k: self.count_index(table, k), in_deg)))
        query_s = time.monotonic() - t0
        self.assertEqual({k: v for k, v in fwd.items() if v != out_deg[k]}, {},
                         "sources whose Query count differs from their generated fan-out")
        self.assertEqual({k: v for k, v in rev.items() if v != in_deg[k]}, {},
                         "targets whose index Query count differs from their generated fan-in")
        print("\n%d edges: load %.1fs (%.0f items/s), scan %.1fs, %d+%d queries %.1fs"
              % (len(edges), load_s, len(edges) / load_s, scan_s,
                 len(out_deg), len(in_deg), query_s))


if __name__ == "__main__":
    main()
