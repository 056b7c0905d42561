#!/usr/bin/python3
"""Deterministic follow graph for scripts/bench.sh.

Writes follows(follower_id, followee_id, created_at) as CSV with a header.

  skewed   (default) sorted by follower, as a dump sorted by primary key is.
           Followees: rows/5 users (followers are numbered on past them). Each follower follows the four "celebrities"
           u0..u3 with probability 0.80, 0.40, 0.20, 0.10 (so u0 has a
           fan-in of about 0.16 x rows) and 1..6 further users drawn from a
           Zipf(1.0) distribution over all users. No follower follows the
           same user twice, so every row is a distinct item.
  uniform  the same number of rows, follower and followee uniform over the
           users, in no particular order (rows of one follower are spread
           over the file): no partition key is hot.

The same --rows/--seed/--shape always give the same bytes. With --split K
the rows go to K files OUT.0 ... OUT.K-1 (contiguous ranges, each with the
header) instead of OUT.

usage: bench_gen.py --rows N [--shape skewed|uniform] [--seed S] [--split K] OUT
"""
import argparse
import os
import bisect
import itertools
import random
import sys
import time

CELEB_P = (0.80, 0.40, 0.20, 0.10)
BASE_EPOCH = 1704067200  # 2024-01-01 00:00:00 UTC


def stamp(i):
    # A deterministic timestamp per row, formatted as a SQL dump writes it.
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(BASE_EPOCH + (i * 7919) % 31536000))


def skewed(rows, rng):
    users = max(rows // 5, 16)
    cum = list(itertools.accumulate(1.0 / (k + 1) for k in range(users)))
    total = cum[-1]
    follower = 0
    n = 0
    while n < rows:
        f = follower  # never wraps: a second run of one follower could repeat an edge
        follower += 1
        seen = set()
        for c, p in enumerate(CELEB_P):
            if rng.random() < p and c != f:
                seen.add(c)
        want = len(seen) + rng.randint(1, 6)
        tries = 0
        while len(seen) < want and tries < 50:
            tries += 1
            t = bisect.bisect_left(cum, rng.random() * total)
            if t != f and t < users:
                seen.add(t)
        for t in sorted(seen):
            if n == rows:
                return
            yield "u%d" % f, "u%d" % t
            n += 1


def uniform(rows, rng):
    users = max(rows // 5, 16)
    seen = set()
    n = 0
    while n < rows:
        f = rng.randrange(users)
        t = rng.randrange(users)
        if f == t or (f, t) in seen:
            continue
        seen.add((f, t))
        yield "u%d" % f, "u%d" % t
        n += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--shape", choices=("skewed", "uniform"), default="skewed")
    ap.add_argument("--seed", type=int, default=20240620)
    ap.add_argument("--split", type=int, default=0)
    ap.add_argument("out")
    a = ap.parse_args()
    if a.rows < 1 or a.split < 0:
        sys.exit("bench_gen: --rows must be positive and --split not negative")
    rng = random.Random(a.seed)
    gen = skewed(a.rows, rng) if a.shape == "skewed" else uniform(a.rows, rng)
    parts = max(a.split, 1)
    names = [a.out] if a.split == 0 else ["%s.%d" % (a.out, k) for k in range(parts)]
    per = -(-a.rows // parts)
    it = enumerate(gen)
    for name in names:
        with open(name + ".tmp", "w", newline="") as fh:
            fh.write("follower_id,followee_id,created_at\n")
            out = []
            for i, (f, t) in it:
                out.append("%s,%s,%s\n" % (f, t, stamp(i)))
                if len(out) == 65536:
                    fh.write("".join(out))
                    out.clear()
                if (i + 1) % per == 0:
                    break
            fh.write("".join(out))
    for name in names:
        os.replace(name + ".tmp", name)


if __name__ == "__main__":
    main()
