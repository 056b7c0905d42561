#!/usr/bin/python3
"""The Python peers of scripts/bench.sh: what a user writes without edgeload.

  bench_peer.py transform IN.csv OUT.json   csv + json: the same DynamoDB JSON
                                            lines edgeload's --output writes,
                                            uncompressed (edgeload also zstd-
                                            compresses, so this peer does less)
  bench_peer.py boto3 IN.csv TABLE          boto3 Table.batch_writer(), every
                                            row one put_item

The transform is edgeload's for the bench mapping: PK=ACTOR#{follower_id},
SK=TARGET#{followee_id}, GSI1PK/GSI1SK the inversion, createdAt = epoch
seconds (N) of created_at read as UTC, edgeType = "FOLLOWS".
Endpoint, region and credentials come from the environment (AWS_*).
"""
import csv
import json
import os
import sys
from datetime import datetime, timezone


def epoch(text):
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp())


def rows(path):
    with open(path, newline="") as fh:
        rd = csv.reader(fh)
        header = next(rd)
        fi, ti, ci = (header.index(c) for c in ("follower_id", "followee_id", "created_at"))
        for r in rd:
            yield r[fi], r[ti], r[ci]


def transform(src, dst):
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    n = 0
    with open(dst, "w") as out:
        for f, t, c in rows(src):
            a, b = "ACTOR#" + f, "TARGET#" + t
            out.write(dumps({"Item": {"PK": {"S": a}, "SK": {"S": b}, "GSI1PK": {"S": b},
                                      "GSI1SK": {"S": a}, "createdAt": {"N": str(epoch(c))},
                                      "edgeType": {"S": "FOLLOWS"}}}))
            out.write("\n")
            n += 1
    print(n)


def load_boto3(src, table_name):
    import boto3
    # Debian 12's botocore (1.29) does not read AWS_ENDPOINT_URL_DYNAMODB itself
    url = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or os.environ.get("AWS_ENDPOINT_URL")
    table = boto3.resource("dynamodb", endpoint_url=url).Table(table_name)
    n = 0
    with table.batch_writer() as bw:
        for f, t, c in rows(src):
            a, b = "ACTOR#" + f, "TARGET#" + t
            bw.put_item(Item={"PK": a, "SK": b, "GSI1PK": b, "GSI1SK": a,
                              "createdAt": epoch(c), "edgeType": "FOLLOWS"})
            n += 1
    print(n)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("transform", "boto3"):
        sys.exit(__doc__)
    if sys.argv[1] == "transform":
        transform(sys.argv[2], sys.argv[3])
    else:
        load_boto3(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
