"""Rate control through a bad hour (issue 24): 50,000 follow edges over
20,000 users, skewed toward a few popular targets, loaded through the fault
proxy in front of DynamoDB Local with about 20 % of requests faulted (both
throttles without reasons, 500 before and after the write, 503 with an HTML
body, resets, replies lost after the write, replies cut in half), a random
part of 30 % of batches handed back, and every partition key of the table
and of the index limited to 1,000 WCU/s. The table ends exact (boto3), the
load ends (it used to crawl at 5-15 items/s once random partial batches had
made every hot key a suspect), and the figures say what happened.

How fast it ends is measured by scripts/bench.sh, not asserted here.
"""

import json
import os
import random
import sys

from edgeload_test import ENDPOINT, EdgeloadTestCase, S, main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import faultproxy  # noqa: E402  (the suite's own tool, found beside this directory)

EDGES = 50000
USERS = 20000

# about a fifth of the requests faulted, each kind the proxy has
FAULTS = dict(throttle=0.03, throttling=0.02, http500=0.03, http500_applied=0.03,
              http503_html=0.02, reset=0.02, lost_reply=0.03, truncate=0.02)


def skewed_edges(seed=24):
    """(follower, followee) pairs, followees skewed: u**4 puts about 8 % of
    the edges on the first user; sorted by follower, as a dump is."""
    rng = random.Random(seed)
    seen = set()
    pairs = []
    while len(pairs) < EDGES:
        a = rng.randrange(USERS)
        b = int(USERS * rng.random() ** 4)
        if (a, b) not in seen:
            seen.add((a, b))
            pairs.append((a, b))
    pairs.sort()
    return pairs


class MixedFaultTest(EdgeloadTestCase):

    def test_mixed_faults_end_exact(self):
        d = self.tmpdir()
        pairs = skewed_edges()
        path = self.write_edges(d, pairs)
        hottest = max(range(20), key=lambda b: sum(1 for p in pairs if p[1] == b))
        options = dict(FAULTS, seed=24, partial=0.30, pk_wcu=1000)
        table, proc, stats, ps = self.load_edges_through_proxy(d, path, "mixed", options)
        count = sum(p["Count"] for p in self.ddb.get_paginator("scan").paginate(
            TableName=table, Select="COUNT"))
        self.assertEqual(count, EDGES)
        for a, b in pairs[::499]:
            item = self.get_item(table, "A#%d" % a, "B#%d" % b)
            self.assertEqual(item["GSI1PK"], S("B#%d" % b))
        # the hottest target's followers, by the index: all there
        q = self.ddb.get_paginator("query").paginate(
            TableName=table, IndexName="GSI1", KeyConditionExpression="GSI1PK = :k",
            ExpressionAttributeValues={":k": S("B#%d" % hottest)}, Select="COUNT")
        self.assertEqual(sum(p["Count"] for p in q),
                         sum(1 for p in pairs if p[1] == hottest))
        self.assertEqual(stats["items_written"], EDGES)
        self.assertEqual(stats["rows_read"], EDGES)
        self.assertEqual(stats["rejected"], 0)
        # faults were met, and the keys paced are the hot ones, not every
        # key a random partial batch handed back
        self.assertGreater(stats["items_refused"], 0)
        self.assertGreater(sum(v for k, v in ps.get("faults", {}).items()), 1000)
        self.assertLess(stats["keys_paced"], 50)
        # chance was found to be chance: what it refused is the noise, and
        # a rate cut by it was undone
        self.assertGreater(stats["refused_at_random"], 0.05)
        print("\nmixed faults: %d items in %.1f s, %.1f %% of items sent refused, %d keys paced, "
              "table rate %.0f, cuts %d (undone %d); proxy faults %s"
              % (EDGES, stats["elapsed_s"], 100.0 * stats["items_refused"] / stats["items_sent"],
                 stats["keys_paced"], stats["table_rate"], stats["rate_cuts"],
                 stats["rate_cuts_undone"], json.dumps(ps.get("faults", {}), sort_keys=True)),
              file=sys.stderr)


if __name__ == "__main__":
    main()
