#!/usr/bin/env bash
# scripts/bench-s3.sh [EDGES] - the issue #10 figure: an EDGES-edge CSV dump
# (default 1,000,000) stored in a local S3-compatible server (s3rver) loads
# exactly into DynamoDB Local, read in parallel ranged GETs; the same file
# loaded from local disk is the peer measured in the same run.
#
# Uses build/edgeload, DynamoDB Local on $EDGELOAD_DDB_PORT (default 8000,
# started if needed) and s3rver on $EDGELOAD_S3_PORT (default 4568, started
# and stopped here). Prints wall and CPU time (user+sys), peak RSS, and the
# item counts Scanned back from both tables.
set -euo pipefail
EL_PROG=bench-s3
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EDGES=${1:-1000000}
BIN="$EL_ROOT/build/edgeload"
[ -x "$BIN" ] || el_die "build first (scripts/test.sh --unit or cmake --build build)"
WORK=$(mktemp -d /tmp/edgeload-bench-s3.XXXXXX)
trap 'rm -rf "$WORK"; "$EL_ROOT/scripts/s3-local.sh" stop >/dev/null 2>&1 || true' EXIT
"$EL_ROOT/scripts/ddb-local.sh" status >/dev/null || "$EL_ROOT/scripts/ddb-local.sh" start
"$EL_ROOT/scripts/s3-local.sh" start
el_use_local_aws
export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
S3_ENDPOINT="http://127.0.0.1:$(el_s3_port)"
export AWS_ENDPOINT_URL_S3=$S3_ENDPOINT

/usr/bin/python3 - "$WORK/follows.csv" "$EDGES" "$S3_ENDPOINT" <<'PY'
import random, sys, boto3
path, n, endpoint = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rnd, seen = random.Random(1), set()
with open(path, "w") as f:
    f.write("follower_id,followee_id,created_at\n")
    while len(seen) < n:
        a, b = rnd.randrange(200000), rnd.randrange(200000)
        if (a, b) not in seen:
            seen.add((a, b))
            f.write("u%d,u%d,%d\n" % (a, b, 1700000000 + len(seen)))
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER")
s3.create_bucket(Bucket="bench")
s3.upload_file(path, "bench", "big/follows.csv")
PY

M=(--pk 'ACTOR#{follower_id}' --sk 'TARGET#{followee_id}' --attr createdAt=created_at:N
   --progress none --concurrency 32)
for run in s3 file; do
  table="bench-s3-$run-$$"
  "$BIN" create-table --table "$table" >/dev/null
  input=s3://bench/big/
  [ "$run" = file ] && input="$WORK/follows.csv"
  /usr/bin/time -f "$run: %e s wall, %U s user + %S s sys, peak RSS %M KB" \
    "$BIN" load --table "$table" "${M[@]}" "$input"
  /usr/bin/python3 - "$table" "$(el_ddb_endpoint)" <<'PY'
import sys, boto3
t, ep = sys.argv[1], sys.argv[2]
d = boto3.client("dynamodb", endpoint_url=ep, region_name="us-east-1")
n, keys, kw = 0, set(), {}
while True:
    r = d.scan(TableName=t, ProjectionExpression="PK,SK", **kw)
    keys.update((i["PK"]["S"], i["SK"]["S"]) for i in r["Items"])
    n += len(r["Items"])
    if "LastEvaluatedKey" not in r:
        break
    kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
print("%s: %d items scanned, %d distinct keys" % (t, n, len(keys)))
d.delete_table(TableName=t)
PY
done
