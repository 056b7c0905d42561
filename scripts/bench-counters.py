#!/usr/bin/python3
"""Benchmark of `load --incremental` on hot vs spread counter items (issue 7).

Generates a delta of N new follow edges either concentrated on 10 hot
targets or spread over many targets, applies each to its own fresh table on
DynamoDB Local, and prints rows/s (and, with --check, verifies every counter
against counts computed here). Results: docs/PERFORMANCE.md (current), docs/bench-log/2026-12-02-counters.md (the run).

  scripts/bench-counters.py --rows 100000 --endpoint http://127.0.0.1:8000 \
      --bin build/edgeload [--no-group] [--concurrency 16] [--check]
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid

import boto3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--hot", type=int, default=10, help="hot targets")
    ap.add_argument("--spread", type=int, default=100000, help="targets of the spread delta")
    ap.add_argument("--endpoint", default="http://127.0.0.1:8000")
    ap.add_argument("--bin", default="build/edgeload")
    ap.add_argument("--concurrency", default="16")
    ap.add_argument("--no-group", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", choices=("hot", "spread"))
    a = ap.parse_args()
    env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_REGION="us-east-1")
    ddb = boto3.client("dynamodb", endpoint_url=a.endpoint, region_name="us-east-1",
                       aws_access_key_id="bench", aws_secret_access_key="bench")
    work = tempfile.mkdtemp(prefix="bench-counters-")
    results = {}
    for kind in ("hot", "spread"):
        if a.only and kind != a.only:
            continue
        ntargets = a.hot if kind == "hot" else a.spread
        rows = [("fan%d" % i, "star%d" % (i % ntargets) if kind == "hot" else
                 "t%d" % ((i * 7919) % ntargets)) for i in range(a.rows)]
        path = os.path.join(work, kind + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["follower_id", "followee_id"])
            w.writerows(rows)
        table = "bench-ctr-%s-%s" % (kind, uuid.uuid4().hex[:6])
        subprocess.run([a.bin, "create-table", "--table", table, "--endpoint-url", a.endpoint],
                       env=env, check=True, capture_output=True)
        st = os.path.join(work, kind + ".json")
        cmd = [a.bin, "load", "--endpoint-url", a.endpoint, "--table", table,
               "--pk", "ACTOR#{follower_id}", "--sk", "TARGET#{followee_id}",
               "--counter", "USER#{followee_id},PROFILE,followerCount",
               "--counter", "USER#{follower_id},PROFILE,followingCount",
               "--incremental", "--concurrency", a.concurrency, "--stats-json", st, path]
        if a.no_group:
            cmd.append("--no-group")
        t0 = time.time()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        elapsed = time.time() - t0
        if p.returncode != 0:
            sys.exit("%s failed: %s" % (kind, p.stderr))
        with open(st) as f:
            s = json.load(f)
        s["rows_per_s"] = round(a.rows / elapsed, 1)
        s["targets"] = ntargets
        if a.check:
            want = collections.Counter()
            for x, y in rows:
                want[("USER#" + y, "followerCount")] += 1
                want[("USER#" + x, "followingCount")] += 1
            got = {}
            for page in ddb.get_paginator("scan").paginate(TableName=table):
                for it in page["Items"]:
                    for attr in ("followerCount", "followingCount"):
                        if attr in it:
                            got[(it["PK"]["S"], attr)] = int(it[attr]["N"])
            s["exact"] = got == dict(want)
        results[kind] = s
        print("%s: %s" % (kind, json.dumps(s, sort_keys=True)), flush=True)
        ddb.delete_table(TableName=table)
    if "hot" in results and "spread" in results:
        print("hot/spread rate ratio: %.2f" % (results["hot"]["rows_per_s"] /
                                               results["spread"]["rows_per_s"]))


if __name__ == "__main__":
    main()
