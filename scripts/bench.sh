#!/usr/bin/env bash
# scripts/bench.sh [--rows N] [--quick] [OPTIONS] - edgeload's benchmark
# (issues 4 and 5), printed as one table with ratios against the peers.
#
#   (1) CSV -> `load --output DIR` rows/s: 1 file and the same rows split in
#       nproc files, --threads 1 and --threads nproc; a plain Python csv+json
#       script writing the same DynamoDB JSON lines (uncompressed) as the peer
#   (2) loads into DynamoDB Local: edgeload, boto3 batch_writer, AWS SDK for
#       JavaScript v3 (BatchWriteCommand, 16 batches in flight) - items/s,
#       the loader's own CPU us per item (user+sys, /usr/bin/time), peak RSS,
#       item count checked with a Scan (Select=COUNT) of a fresh table each,
#       after one unmeasured warm-up load (DynamoDB Local's JVM starts cold)
#   (3) edgeload against the null endpoint (tests/tools/nullddb.c, built
#       as build-bench/nullddb; --null-impl py for nullddb.py): items/s, the
#       loader's CPU us per item, and the endpoint's own CPU us per item;
#       plus the endpoint alone driven by wrk (if installed), to show its
#       ceiling is far above the loader's
#   (4) edgeload's peak RSS at two input sizes (N and 4N rows, --output)
#   (5) issue 5: the per-partition throttling model (1,000 WCU/s per table
#       PK and per index PK, burst 300, over-budget writes returned as
#       UnprocessedItems), the skewed graph sorted by follower loaded (a)
#       with sharding (--hot-threshold) and interleaving, (b) with both off
#       (EDGELOAD_BENCH_NO_INTERLEAVE=1, no --hot-threshold), and (c) the
#       same number of rows spread uniformly over keys. Through one or more
#       of (--throttle-via): c = nullddb.c's built-in model (no proxy, so
#       only the per-key limits and edgeload are measured), ddb =
#       tests/tools/faultproxy.py --pk-wcu in front of DynamoDB Local,
#       null = faultproxy.py in front of nullddb.c
#   (6) HTTPS: the same load into the null endpoint over plain HTTP and
#       over TLS (stunnel4 with a CA made on the spot, in front of the same
#       endpoint): the loader's CPU µs per item both ways and their ratio,
#       and the TLS handshakes of the load (stunnel's log: one per
#       connection; edgeload keeps them open)
#   (7) issue 17: the service model (nullddb.c --service-model: answers
#       after 8 + 0-4 ms, 1,000 WCU/s per table key and per index key,
#       20,000 WCU/s for the table and for the index, 1 s of burst, the
#       throttle body with ThrottlingReasons), the skewed graph of (5)
#       sorted by follower loaded (a) without sharding and (b) with
#       sharding (--hot-threshold), each also with per-key pacing and the
#       learned table rate off (EDGELOAD_BENCH_NO_PACING=1), and (b) with
#       only the learned table rate off (EDGELOAD_BENCH_NO_TABLE_RATE=1):
#       wall time against the floor the input
#       sets by the model's own rules (the hottest key's units / 1,000, the
#       table's and the index's units / 20,000, from the model's accounting
#       of what it accepted), the items sent and refused as the model
#       counted them, and the throttled share (refused / sent)
#   (8) issue 24: the rate-control scorecard (tests/sim/, virtual time):
#       every scenario of the matrix (limits x faults x reasons x item
#       sizes, capacity that changes, a budget, latencies) with its floor,
#       edgeload's wall/floor and refused share, the AWS SDKs' adaptive
#       retry mode beside it, and edgeload with per-key pacing or the
#       learned table rate switched off
#   (9) issue 24 in real time: 50,000 skewed follow edges loaded through
#       tests/tools/faultproxy.py in front of DynamoDB Local with every
#       partition key of the table and the index limited to 1,000 WCU/s,
#       (a) with about 20 % of requests faulted (every kind the proxy has)
#       and a random part of 30 % of batches handed back, (b) without
#       faults: wall, items refused / sent, keys paced, and (a)/(b)
#
# Options:
#   --rows N            rows for (1), (3), (6) and the smaller size of (4)
#                       (default 1000000; --quick: 200000)
#   --ddb-rows N        rows loaded into DynamoDB Local in (2) (default 100000;
#                       --quick: 20000)
#   --ddb-rounds N      rounds of (2): the three loaders in turn, N times; each
#                       row is a loader's fastest round (default 2; --quick: 1)
#   --throttle-rows N   rows of (5) through the C model (default 200000;
#                       --quick: 50000). The hottest target holds ~17 % of
#                       the edges, so "both off" needs >= 0.17 N / 1000 s
#   --throttle-ddb-rows N  rows of (5) through the proxy (ddb, null)
#                       (default 100000; --quick: 20000)
#   --hot-threshold N   threshold of (5a) (default 1000)
#   --throttle-via LIST  c, ddb, null, comma-separated (default c,ddb;
#                       --quick: c). Rows thr_*, thr_*_ddb, thr_*_pxn
#   --throttle-upstream ddb|null  the same as --throttle-via ddb|null (older name)
#   --svc-rows N        rows of (7) (default 200000; --quick: 50000)
#   --table-wcu T       with --throttle-via c, also limit each table to T WCU/s
#                       (DynamoDB's on-demand default is 40000; default: no limit)
#   --null-impl c|py    null endpoint of (3): nullddb.c (default) or nullddb.py
#   --quick             the small sizes above (the whole run takes minutes)
#   --only LIST         run only these parts, e.g. --only 1,3 (default 1,2,3,4,5,6,7,8,9)
#   --port P            first of four loopback ports: DynamoDB Local, the
#                       null endpoint, the proxy, the TLS endpoint (default
#                       8900: P .. P+3)
#   --work DIR          data and scratch directory (default build-bench/bench;
#                       generated inputs are kept there and reused)
#
# Its own DynamoDB Local is started on --port (and stopped at exit), so a
# shared instance's other traffic does not skew the figures. edgeload is built
# in build-bench (Release). The SDK v3 peer is installed with npm into
# ${XDG_CACHE_HOME:-~/.cache}/edgeload/bench-node, outside the repository.
# The table goes to standard output and to WORK/results.md.
set -euo pipefail
EL_PROG=bench
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PY=/usr/bin/python3
NPROC=$(nproc)
ROWS= DDB_ROWS= DDB_ROUNDS= THR_ROWS= THR_DDB_ROWS= THR_VIA= SVC_ROWS= NULL_IMPL=c TABLE_WCU=0 QUICK=0 ONLY=1,2,3,4,5,6,7,8,9 PORT=8900 HOT=1000 WORK=
while [ $# -gt 0 ]; do
  case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --ddb-rows) DDB_ROWS=$2; shift 2 ;;
    --ddb-rounds) DDB_ROUNDS=$2; shift 2 ;;
    --throttle-rows) THR_ROWS=$2; shift 2 ;;
    --throttle-ddb-rows) THR_DDB_ROWS=$2; shift 2 ;;
    --svc-rows) SVC_ROWS=$2; shift 2 ;;
    --hot-threshold) HOT=$2; shift 2 ;;
    --throttle-via|--throttle-upstream) THR_VIA=$2; shift 2 ;;
    --null-impl) NULL_IMPL=$2; shift 2 ;;
    --table-wcu) TABLE_WCU=$2; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    --port) PORT=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) el_die "unknown option '$1' (see --help)" ;;
  esac
done
if [ $QUICK = 1 ]; then
  : "${ROWS:=200000}" "${DDB_ROWS:=20000}" "${DDB_ROUNDS:=1}" "${THR_ROWS:=50000}" "${THR_DDB_ROWS:=20000}" "${THR_VIA:=c}"
  : "${SVC_ROWS:=50000}"
else
  : "${ROWS:=1000000}" "${DDB_ROWS:=100000}" "${DDB_ROUNDS:=2}" "${THR_ROWS:=200000}" "${THR_DDB_ROWS:=100000}" "${THR_VIA:=c,ddb}"
  : "${SVC_ROWS:=200000}"
fi
case $TABLE_WCU in ''|*[!0-9]*) el_die "--table-wcu must be a number" ;; esac
for v in ROWS DDB_ROWS DDB_ROUNDS THR_ROWS THR_DDB_ROWS SVC_ROWS HOT PORT; do
  case ${!v} in ''|*[!0-9]*|0) el_die "$v must be a positive integer" ;; esac
done
for v in ${THR_VIA//,/ }; do
  case $v in c|ddb|null) ;; *) el_die "--throttle-via takes c, ddb and null" ;; esac
done
case $NULL_IMPL in c|py) ;; *) el_die "--null-impl must be c or py" ;; esac
want() { case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
via() { case ",$THR_VIA," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

WORK=${WORK:-$EL_ROOT/build-bench/bench}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
DATA=$WORK/data
SCRATCH=$WORK/scratch
mkdir -p "$DATA"
rm -rf "$SCRATCH"; mkdir -p "$SCRATCH"
RESULTS=$WORK/results.md
NODE_DIR=$EL_CACHE_DIR/bench-node

el_say "building edgeload (Release) in build-bench"
el_build build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
EL=$EL_ROOT/build-bench/edgeload
NULLC=$EL_ROOT/build-bench/nullddb
[ -x "$EL" ] || el_die "no edgeload binary in build-bench"
[ -x "$NULLC" ] || el_die "no nullddb (tests/tools/nullddb.c) binary in build-bench"

DDB_PORT=$PORT NULL_PORT=$((PORT + 1)) PROXY_PORT=$((PORT + 2)) TLS_PORT=$((PORT + 3))
export EDGELOAD_DDB_PORT=$DDB_PORT
el_use_local_aws
DDB=$(el_ddb_endpoint)
MAP=(--pk 'ACTOR#{follower_id}' --sk 'TARGET#{followee_id}'
     --attr createdAt=created_at:epoch --const edgeType=FOLLOWS)

# ---- processes we start; stopped by pid at exit -----------------------------
PIDS=() STARTED_DDB=0
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ $STARTED_DDB = 1 ]; then "$EL_ROOT/scripts/ddb-local.sh" stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME CMD... - runs a tests/tools server in the background and
# waits for its "listening" line. Sets SERVER_PID.
start_server() {
  local name=$1 log=$SCRATCH/$1.log i; shift
  "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  for i in $(seq 100); do
    grep -q listening "$log" 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; el_die "$name exited"; }
    sleep 0.1
  done
  el_die "$name did not start (see $log)"
}
stop_server() {  # stop_server PID
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
  local keep=() p
  for p in "${PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  PIDS=("${keep[@]}")
}

# ---- inputs ------------------------------------------------------------------
# gen NAME ROWS SHAPE [SPLIT] - generated once, kept in DATA
gen() {
  local out=$DATA/$1 rows=$2 shape=$3 split=${4:-0} probe
  probe=$out; [ "$split" -gt 0 ] && probe=$out.$((split - 1))
  if [ ! -s "$probe" ]; then
    el_say "generating $1 ($rows rows, $shape${4:+, $split files})"
    "$PY" "$EL_ROOT/scripts/bench_gen.py" --rows "$rows" --shape "$shape" --split "$split" "$out"
  fi
}

# ---- measuring ---------------------------------------------------------------
# Each case leaves: elapsed s, CPU s (user+sys), peak RSS KB, item count.
declare -A T_EL T_CPU T_RSS T_N T_NOTE
ORDER=()

# run_timed CASE CMD... - runs CMD under /usr/bin/time; fails the bench if it fails
run_timed() {
  local c=$1 tf=$SCRATCH/time.$1 t0 t1; shift
  t0=$(date +%s.%N)
  if ! /usr/bin/time -f '%U %S %M' -o "$tf" "$@" >"$SCRATCH/out.$c" 2>"$SCRATCH/err.$c"; then
    cat "$SCRATCH/err.$c" >&2
    el_die "case '$c' failed: $*"
  fi
  t1=$(date +%s.%N)
  read -r u s m < <(tail -n1 "$tf")
  T_EL[$c]=$(echo "$t1 - $t0" | bc -l)
  T_CPU[$c]=$(echo "$u + $s" | bc -l)
  T_RSS[$c]=$m
  ORDER+=("$c")
  printf '%s\t%s\t%s\t%s\n' "$c" "${T_EL[$c]}" "${T_CPU[$c]}" "$m" >>"$SCRATCH/cases.tsv"
}
# run_best CASE CMD... - run_timed again for a CASE already measured: the
# table keeps one row per case, the faster run's figures (part 2's rounds)
run_best() {
  local c=$1; shift
  if [ -z "${T_EL[$c]:-}" ]; then
    run_timed "$c" "$@"
    return
  fi
  local el=${T_EL[$c]} cpu=${T_CPU[$c]} rss=${T_RSS[$c]} n=${#ORDER[@]}
  run_timed "$c" "$@"
  ORDER=("${ORDER[@]:0:$n}")
  if [ "$(echo "${T_EL[$c]} > $el" | bc -l)" = 1 ]; then
    T_EL[$c]=$el T_CPU[$c]=$cpu T_RSS[$c]=$rss
  fi
}
stat_items() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["items_written"])' "$1"; }
# stat_all_items STATS - every item the load wrote: the rows' items and the
# shard directory items sharding adds (edgeload counts those apart)
stat_all_items() {
  "$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["items_written"] + s.get("directory_items", 0))' "$1"
}

# ---- DynamoDB Local helpers --------------------------------------------------
ddb_start() {
  [ $STARTED_DDB = 1 ] && return 0
  if "$EL_ROOT/scripts/ddb-local.sh" status >/dev/null 2>&1; then
    el_die "something already answers on port $DDB_PORT; pick another --port"
  fi
  "$EL_ROOT/scripts/ddb-local.sh" start >/dev/null
  STARTED_DDB=1
}
ddb_table() {  # ddb_table NAME - a fresh table (dropped first if present)
  ddb_drop "$1"
  "$EL" create-table --table "$1" --endpoint-url "$DDB" >/dev/null
}
ddb_drop() {
  "$PY" - "$1" <<'EOF'
import os, sys, boto3
c = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"])
try:
    c.delete_table(TableName=sys.argv[1])
except c.exceptions.ResourceNotFoundException:
    pass
EOF
}
ddb_count() {
  "$PY" - "$1" <<'EOF'
import os, sys, boto3
c = boto3.client("dynamodb", endpoint_url=os.environ["AWS_ENDPOINT_URL_DYNAMODB"])
n, kw = 0, {"TableName": sys.argv[1], "Select": "COUNT"}
while True:
    r = c.scan(**kw)
    n += r["Count"]
    if "LastEvaluatedKey" not in r:
        break
    kw["ExclusiveStartKey"] = r["LastEvaluatedKey"]
print(n)
EOF
}
# check_count CASE TABLE EXPECTED
check_count() {
  local got
  got=$(ddb_count "$2")
  T_N[$1]=$got
  [ "$got" = "$3" ] || el_die "case '$1': the table holds $got items, expected $3"
}

node_peer_install() {
  command -v node >/dev/null 2>&1 || el_apt_install nodejs npm
  if [ ! -d "$NODE_DIR/node_modules/@aws-sdk/lib-dynamodb" ]; then
    el_say "installing @aws-sdk/client-dynamodb and @aws-sdk/lib-dynamodb into $NODE_DIR"
    mkdir -p "$NODE_DIR"
    [ -f "$NODE_DIR/package.json" ] || echo '{"name":"edgeload-bench-node","private":true}' >"$NODE_DIR/package.json"
    (cd "$NODE_DIR" && npm install --silent --no-audit --no-fund \
      @aws-sdk/client-dynamodb@3 @aws-sdk/lib-dynamodb@3 >/dev/null) ||
      el_die "npm install failed"
  fi
}

# ======================= (1) CSV -> --output ==================================
if want 1; then
  gen "skewed-$ROWS.csv" "$ROWS" skewed
  gen "skewed-$ROWS-split$NPROC.csv" "$ROWS" skewed "$NPROC"
  one=$DATA/skewed-$ROWS.csv
  split=(); for k in $(seq 0 $((NPROC - 1))); do split+=("$DATA/skewed-$ROWS-split$NPROC.csv.$k"); done
  cat "$one" >/dev/null; cat "${split[@]}" >/dev/null  # page cache
  out1() {  # out1 CASE THREADS NOTE FILES...
    local c=$1 th=$2 note=$3; shift 3
    rm -rf "$SCRATCH/out"
    run_timed "$c" "$EL" load "${MAP[@]}" --table Graph --output "$SCRATCH/out" \
      --threads "$th" --quiet --stats-json "$SCRATCH/stats.$c" "$@"
    T_N[$c]=$(stat_items "$SCRATCH/stats.$c")
    T_NOTE[$c]=$note
    [ "${T_N[$c]}" = "$ROWS" ] || el_die "case '$c' wrote ${T_N[$c]} items, expected $ROWS"
    rm -rf "$SCRATCH/out"
  }
  el_say "(1) CSV -> --output, $ROWS rows"
  out1 out_1f_t1 1 "1 file, --threads 1, zstd parts" "$one"
  out1 out_1f_tN "$NPROC" "1 file, --threads $NPROC (cut into parts parsed in parallel)" "$one"
  out1 out_Nf_t1 1 "$NPROC files, --threads 1" "${split[@]}"
  out1 out_Nf_tN "$NPROC" "$NPROC files, --threads $NPROC" "${split[@]}"
  run_timed out_py "$PY" "$EL_ROOT/scripts/bench_peer.py" transform "$one" "$SCRATCH/py.json"
  T_N[out_py]=$(tail -n1 "$SCRATCH/out.out_py")
  T_NOTE[out_py]="Python csv+json, 1 file, uncompressed JSON lines"
  rm -f "$SCRATCH/py.json"
fi

# ======================= (2) DynamoDB Local ===================================
if want 2; then
  gen "skewed-$DDB_ROWS.csv" "$DDB_ROWS" skewed
  in=$DATA/skewed-$DDB_ROWS.csv
  ddb_start
  node_peer_install
  el_say "(2) loads into DynamoDB Local (127.0.0.1:$DDB_PORT), $DDB_ROWS rows each"
  # A warm-up load first, not measured: a fresh DynamoDB Local is a cold
  # JVM, and whichever loader ran first paid for its JIT (measured: the same
  # 20,000-row load took 7.1 s cold and 5.2 s right after).
  ddb_table bench_warm
  "$EL" load "${MAP[@]}" --table bench_warm --endpoint-url "$DDB" --quiet "$in" ||
    el_die "warm-up load into DynamoDB Local failed"
  ddb_drop bench_warm
  # The JVM keeps warming for several loads after that (the same 100,000
  # rows: 21.8, 17.8, then ~14.5 s), which favours whoever runs last: the
  # three loaders run in turn DDB_ROUNDS times and each keeps its best.
  for round in $(seq 1 "$DDB_ROUNDS"); do
    ddb_table bench_el
    run_best ddb_el "$EL" load "${MAP[@]}" --table bench_el --endpoint-url "$DDB" --quiet "$in"
    check_count ddb_el bench_el "$DDB_ROWS"; ddb_drop bench_el
    ddb_table bench_boto3
    run_best ddb_boto3 "$PY" "$EL_ROOT/scripts/bench_peer.py" boto3 "$in" bench_boto3
    check_count ddb_boto3 bench_boto3 "$DDB_ROWS"; ddb_drop bench_boto3
    ddb_table bench_sdk
    run_best ddb_sdk env NODE_PATH="$NODE_DIR/node_modules" node "$EL_ROOT/scripts/bench_peer_sdkv3.cjs" "$in" bench_sdk
    check_count ddb_sdk bench_sdk "$DDB_ROWS"; ddb_drop bench_sdk
  done
  rounds="best of $DDB_ROUNDS round$([ "$DDB_ROUNDS" -gt 1 ] && echo s)"
  T_NOTE[ddb_el]="edgeload, --concurrency 16 (default); $rounds"
  T_NOTE[ddb_boto3]="boto3 Table.batch_writer(); $rounds"
  T_NOTE[ddb_sdk]="SDK v3 BatchWriteCommand, 16 in flight; $rounds"
fi

# ======================= (3) null endpoint ====================================
# start_null NAME COUNTFILE STATSFILE [OPTIONS...] - the null endpoint of
# --null-impl on NULL_PORT (the C one for any throttling options)
start_null() {
  local name=$1 cf=$2 sf=$3 impl=$NULL_IMPL; shift 3
  [ $# -gt 0 ] && impl=c
  rm -f "$cf" "$sf"
  if [ "$impl" = c ]; then
    start_server "$name" "$NULLC" --listen "127.0.0.1:$NULL_PORT" --count-file "$cf" --stats-file "$sf" "$@"
  else
    start_server "$name" "$PY" "$EL_ROOT/tests/tools/nullddb.py" --listen "127.0.0.1:$NULL_PORT" \
      --count-file "$cf" --stats-file "$sf"
  fi
}
# proc_usage PID - "CPU_SECONDS PEAK_RSS_KB" of a running process
proc_usage() {
  local tck; tck=$(getconf CLK_TCK)
  awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$1/stat" | tr '\n' ' '
  awk '/^VmHWM:/ {print $2}' "/proc/$1/status"
}
if want 3; then
  gen "skewed-$ROWS.csv" "$ROWS" skewed
  el_say "(3) edgeload against the null endpoint (nullddb.$NULL_IMPL), $ROWS rows"
  start_null nullddb "$SCRATCH/null.count" "$SCRATCH/null.stats"
  np=$SERVER_PID
  run_timed null_el "$EL" load "${MAP[@]}" --table Graph --endpoint-url "http://127.0.0.1:$NULL_PORT" \
    --quiet --stats-json "$SCRATCH/stats.null" "$DATA/skewed-$ROWS.csv"
  read -r srv_cpu srv_rss < <(proc_usage "$np")
  stop_server "$np"
  T_N[null_el]=$(cat "$SCRATCH/null.count")
  [ "${T_N[null_el]}" = "$ROWS" ] || el_die "the null endpoint received ${T_N[null_el]} writes, expected $ROWS"
  T_NOTE[null_el]="edgeload -> nullddb.$NULL_IMPL (1 thread, same 2 cores); the endpoint's own CPU $(echo "scale=2; $srv_cpu * 1000000 / $ROWS" | bc -l) µs/item, RSS $((srv_rss / 1024)) MB"
  if command -v wrk >/dev/null 2>&1 && [ "$NULL_IMPL" = c ]; then
    # The endpoint alone: wrk, 1 thread, 32 keep-alive connections, 25 edge
    # items a request with ReturnConsumedCapacity INDEXES, as edgeload sends.
    "$PY" - "$SCRATCH/wrk.body" "$SCRATCH/wrk.lua" <<'PYEOF'
import json, sys
items = [{"PutRequest": {"Item": {"PK": {"S": "ACTOR#u%d" % i}, "SK": {"S": "TARGET#u%d" % (i * 7)},
          "GSI1PK": {"S": "TARGET#u%d" % (i * 7)}, "GSI1SK": {"S": "ACTOR#u%d" % i},
          "createdAt": {"N": "1704067200"}, "edgeType": {"S": "FOLLOWS"}}}} for i in range(25)]
open(sys.argv[1], "w").write(json.dumps({"RequestItems": {"Graph": items}, "ReturnConsumedCapacity": "INDEXES"},
                                        separators=(",", ":")))
open(sys.argv[2], "w").write('''wrk.method = "POST"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.BatchWriteItem"
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
local f = io.open("%s", "rb"); wrk.body = f:read("*a"); f:close()
''' % sys.argv[1])
PYEOF
    start_null nullddb_wrk "$SCRATCH/wrk.count" "$SCRATCH/wrk.stats"
    np=$SERVER_PID
    wrk -t1 -c32 -d5s -s "$SCRATCH/wrk.lua" "http://127.0.0.1:$NULL_PORT/" >"$SCRATCH/wrk.out" 2>&1 ||
      el_die "wrk failed: $(cat "$SCRATCH/wrk.out")"
    read -r srv_cpu srv_rss < <(proc_usage "$np")
    stop_server "$np"
    T_N[null_srv]=$(cat "$SCRATCH/wrk.count")
    T_EL[null_srv]=$(sed -n 's/.* requests in \([0-9.]*\)s.*/\1/p' "$SCRATCH/wrk.out")
    T_CPU[null_srv]=$srv_cpu T_RSS[null_srv]=$srv_rss
    T_NOTE[null_srv]="nullddb.c alone, driven by wrk (-t1 -c32, 25 items a request): CPU and RSS are the endpoint's"
    ORDER+=(null_srv)
  fi
fi

# ======================= (4) RSS at two sizes =================================
if want 4; then
  big=$((ROWS * 4))
  gen "skewed-$ROWS.csv" "$ROWS" skewed
  gen "skewed-$big.csv" "$big" skewed
  el_say "(4) peak RSS, --output, $ROWS and $big rows"
  for n in "$ROWS" "$big"; do
    c=rss_$n
    rm -rf "$SCRATCH/out"
    run_timed "$c" "$EL" load "${MAP[@]}" --table Graph --output "$SCRATCH/out" --quiet \
      --stats-json "$SCRATCH/stats.$c" "$DATA/skewed-$n.csv"
    T_N[$c]=$(stat_items "$SCRATCH/stats.$c")
    T_NOTE[$c]="--output, $n rows, default --threads"
    rm -rf "$SCRATCH/out"
  done
fi

# ======================= (5) issue 5: throttling model ========================
if want 5; then
  # hottest N - the largest fan-in of one target in a generated CSV
  hottest() { awk -F, 'NR > 1 {n[$2]++} END {m = 0; for (k in n) if (n[k] > m) m = n[k]; print m}' "$1"; }
  # thr VIA SUFFIX ROWS CASE NOTE INPUT [ENV=...] -- [EDGELOAD OPTIONS...]
  thr() {
    local via=$1 sfx=$2 rows=$3 c=$4$2 note=$5 input=$6 envs=() expect up=$DDB np= pp= url
    shift 6
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    case $via in
      c)
        start_null "nullddb_$c" "$SCRATCH/null.$c.count" "$SCRATCH/null.$c.stats" --pk-wcu 1000 --pk-burst 300 \
          --table-wcu "$TABLE_WCU"
        np=$SERVER_PID url=http://127.0.0.1:$NULL_PORT ;;
      null)
        start_null "nullddb_$c" "$SCRATCH/null.$c.count" "$SCRATCH/null.$c.stats" --parse
        np=$SERVER_PID up=http://127.0.0.1:$NULL_PORT ;;
      ddb) ddb_table "bench_$c" ;;
    esac
    if [ "$via" != c ]; then
      start_server "proxy_$c" "$PY" "$EL_ROOT/tests/tools/faultproxy.py" --listen "127.0.0.1:$PROXY_PORT" \
        --upstream "$up" --pk-wcu 1000 --pk-burst 300 --stats-file "$SCRATCH/proxy.$c.json"
      pp=$SERVER_PID url=http://127.0.0.1:$PROXY_PORT
    fi
    run_timed "$c" env "${envs[@]}" "$EL" load "${MAP[@]}" --table "bench_$c" \
      --endpoint-url "$url" --quiet --stats-json "$SCRATCH/stats.$c" "$@" "$input"
    local srv_cpu=0 srv_rss=0
    [ -n "$np" ] && read -r srv_cpu srv_rss < <(proc_usage "$np")
    [ -n "$pp" ] && stop_server "$pp"
    expect=$(stat_all_items "$SCRATCH/stats.$c")
    if [ -n "$np" ]; then
      stop_server "$np"
      T_N[$c]=$(cat "$SCRATCH/null.$c.count")
      [ "${T_N[$c]}" = "$expect" ] || el_die "case '$c': the null endpoint got ${T_N[$c]} writes, expected $expect"
    else
      check_count "$c" "bench_$c" "$expect"
      ddb_drop "bench_$c"
    fi
    if [ "$via" = c ]; then
      T_NOTE[$c]="$note; nullddb.c model: $("$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%d requests, %d items withheld, %d throttled batches, endpoint CPU %.2f µs/item" % (s["batch_requests"], s["items_withheld"], s["pk_throttle"], float(sys.argv[2]) * 1e6 / max(1, s["items"])))' "$SCRATCH/null.$c.stats" "$srv_cpu")"
    else
      T_NOTE[$c]="$note; faultproxy -> $via: $("$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%d requests, %d items withheld, %d throttled batches" % (s["batch_requests"], s["items_withheld"], s["faults"]["pk_throttle"]))' "$SCRATCH/proxy.$c.json")"
    fi
  }
  # thr_set VIA SUFFIX ROWS - the three cases through one throttling path
  thr_set() {
    local via=$1 sfx=$2 rows=$3 hot
    gen "skewed-$rows.csv" "$rows" skewed
    gen "uniform-$rows.csv" "$rows" uniform
    [ "$via" = ddb ] && ddb_start
    hot=$(hottest "$DATA/skewed-$rows.csv")
    el_say "(5) per-partition throttling via $via (1,000 WCU/s per key), $rows rows; hottest target: $hot edges"
    THR_HOT[$via]=$hot THR_N[$via]=$rows
    [ "$via" = c ] && [ "$TABLE_WCU" -gt 0 ] && el_say "    and $TABLE_WCU WCU/s per table"
    thr "$via" "$sfx" "$rows" thr_on "skewed, sorted, sharding+interleaving on (--hot-threshold $HOT)" \
      "$DATA/skewed-$rows.csv" -- --hot-threshold "$HOT"
    thr "$via" "$sfx" "$rows" thr_off "skewed, sorted, sharding and interleaving off (hottest key $hot edges: >= $((hot / 1000)) s at 1,000 WCU/s)" \
      "$DATA/skewed-$rows.csv" EDGELOAD_BENCH_NO_INTERLEAVE=1 --
    thr "$via" "$sfx" "$rows" thr_uni "uniform keys, no sharding, interleaving on" \
      "$DATA/uniform-$rows.csv" --
  }
  declare -A THR_HOT THR_N
  via c && thr_set c "" "$THR_ROWS"
  via ddb && thr_set ddb _ddb "$THR_DDB_ROWS"
  via null && thr_set null _pxn "$THR_DDB_ROWS"
fi

# ======================= (6) HTTPS vs plain HTTP ==============================
if want 6; then
  el_apt_install openssl stunnel4
  gen "skewed-$ROWS.csv" "$ROWS" skewed
  el_say "(6) the same load over plain HTTP and over TLS (stunnel4 -> nullddb.c), $ROWS rows"
  tlsdir=$SCRATCH/tls
  mkdir -p "$tlsdir"
  "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import tlsfront; tlsfront.make_ca(sys.argv[2])' \
    "$EL_ROOT/tests/tools" "$tlsdir"
  printf '%s\n' "foreground = yes" "pid =" "output = $tlsdir/stunnel.log" "debug = info" \
    "cert = $tlsdir/server.pem" "[null]" "accept = 127.0.0.1:$TLS_PORT" \
    "connect = 127.0.0.1:$NULL_PORT" >"$tlsdir/stunnel.conf"
  : >"$tlsdir/stunnel.log"
  stunnel4 "$tlsdir/stunnel.conf" >/dev/null 2>&1 &
  st=$!
  PIDS+=("$st")
  for i in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$TLS_PORT") 2>/dev/null && break
    kill -0 "$st" 2>/dev/null || el_die "stunnel4 exited: $(tail -n5 "$tlsdir/stunnel.log")"
    sleep 0.1
  done
  sleep 0.2
  tls_case() {  # tls_case CASE URL NOTE [ENV=...]
    local c=$1 url=$2 note=$3; shift 3
    start_null "nullddb_$c" "$SCRATCH/null.$c.count" "$SCRATCH/null.$c.stats"
    local np=$SERVER_PID
    run_timed "$c" env "$@" "$EL" load "${MAP[@]}" --table Graph --endpoint-url "$url" --quiet \
      --stats-json "$SCRATCH/stats.$c" "$DATA/skewed-$ROWS.csv"
    stop_server "$np"
    T_N[$c]=$(cat "$SCRATCH/null.$c.count")
    [ "${T_N[$c]}" = "$ROWS" ] || el_die "case '$c': the null endpoint got ${T_N[$c]} writes, expected $ROWS"
    T_NOTE[$c]=$note
  }
  tls_case tls_http "http://127.0.0.1:$NULL_PORT" "plain HTTP -> nullddb.c (the baseline of tls_https)"
  base=$(grep -c 'accepted connection' "$tlsdir/stunnel.log" || true)
  read -r st_cpu0 _ < <(proc_usage "$st")
  tls_case tls_https "https://127.0.0.1:$TLS_PORT" "HTTPS (TLS by stunnel4) -> nullddb.c" \
    AWS_CA_BUNDLE="$tlsdir/ca.pem"
  read -r st_cpu1 _ < <(proc_usage "$st")
  TLS_HANDSHAKES=$(( $(grep -c 'accepted connection' "$tlsdir/stunnel.log" || true) - base ))
  TLS_REQUESTS=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch_requests"])' \
    "$SCRATCH/null.tls_https.stats")
  T_NOTE[tls_https]+="; $TLS_HANDSHAKES TLS handshakes for $TLS_REQUESTS requests; stunnel's own CPU $(echo "scale=2; ($st_cpu1 - $st_cpu0) * 1000000 / $ROWS" | bc -l) µs/item"
  stop_server "$st"
fi

# ======================= (7) issue 17: service model ==========================
# Each case is a row of the main table and of SVC_TABLE (issue 17's figures).
SVC_TABLE=()
declare -A T_FLOOR
if want 7; then
  gen "skewed-$SVC_ROWS.csv" "$SVC_ROWS" skewed
  svc_in=$DATA/skewed-$SVC_ROWS.csv
  svc_hot=$(awk -F, 'NR > 1 {n[$2]++} END {m = 0; for (k in n) if (n[k] > m) m = n[k]; print m}' "$svc_in")
  el_say "(7) the service model (nullddb.c --service-model), $SVC_ROWS rows; hottest target: $svc_hot edges"
  # svc CASE NOTE [ENV=...] -- [EDGELOAD OPTIONS...]
  svc() {
    local c=$1 note=$2 envs=() expect written sf=$SCRATCH/null.$1.stats row; shift 2
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    start_null "nullddb_$c" "$SCRATCH/null.$c.count" "$sf" --service-model
    local np=$SERVER_PID
    run_timed "$c" env "${envs[@]}" "$EL" load "${MAP[@]}" --table "bench_$c" \
      --endpoint-url "http://127.0.0.1:$NULL_PORT" --quiet --stats-json "$SCRATCH/stats.$c" "$@" "$svc_in"
    stop_server "$np"
    # every row once, plus the shard directory items sharding writes
    written=$(stat_items "$SCRATCH/stats.$c")
    [ "$written" = "$SVC_ROWS" ] || el_die "case '$c': edgeload wrote $written items of $SVC_ROWS rows"
    expect=$(stat_all_items "$SCRATCH/stats.$c")
    T_N[$c]=$(cat "$SCRATCH/null.$c.count")
    [ "${T_N[$c]}" = "$expect" ] || el_die "case '$c': the endpoint accepted ${T_N[$c]} writes, edgeload wrote $expect (with the shard directory)"
    T_NOTE[$c]=$note
    # The floor by the model's rules, from its own accounting of the units
    # it accepted (item sizes counted exactly as it throttles them): the
    # hottest table key's and index key's units over the per-key rate, the
    # table's and the index's totals over their limits; the largest wins.
    # The burst (1 s) is not subtracted: the floor is the issue's.
    row=$("$PY" - "$c" "${T_EL[$c]}" "$sf" "$SCRATCH/stats.$c" "$note" <<'EOF'
import json, sys
c, wall, sf, ef, note = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
s, e = json.load(open(sf)), json.load(open(ef))
bounds = [(s["max_key_units_table"] / s["pk_wcu"], "table key %s" % s["hot_table_key"]),
          (s["max_key_units_index"] / s["pk_wcu"], "index key %s" % s["hot_index_key"]),
          (s["units_table"] / s["table_wcu"], "table limit"),
          (s["units_index"] / s["index_wcu"], "index limit")]
floor, by = max(bounds)
sent, refused = s["items_received"], s["items_withheld"]
# requests in flight on average (Little's law: requests x mean answer time
# / wall): a loader that keeps its window full shows about --concurrency
inflight = s["batch_requests"] * (s["latency_ms"] + s["jitter_ms"] / 2) / 1000.0 / wall
print("%.6f\t| %-12s | %8d | %7.2f | %7.2f | %6.3f | %8d | %8d | %6.2f %% | %5d | %5.1f | %s | %s; edgeload: %d sent, %d refused, %d keys paced |" % (
    floor, c, s["items"], wall, floor, wall / floor, sent, refused, 100.0 * refused / max(1, sent),
    s["requests_throttled"], inflight, by, note, e.get("items_sent", 0), e.get("items_refused", 0),
    e.get("keys_paced", 0)))
EOF
)
    T_FLOOR[$c]=${row%%$'\t'*}
    SVC_TABLE+=("${row#*$'\t'}")
  }
  svc svc_flat "no sharding, per-key pacing on" --
  svc svc_flat_np "no sharding, per-key pacing off (EDGELOAD_BENCH_NO_PACING=1)" EDGELOAD_BENCH_NO_PACING=1 --
  svc svc_shard "sharding (--hot-threshold $HOT), per-key pacing on" -- --hot-threshold "$HOT"
  svc svc_shard_np "sharding (--hot-threshold $HOT), per-key pacing off (EDGELOAD_BENCH_NO_PACING=1)" \
    EDGELOAD_BENCH_NO_PACING=1 -- --hot-threshold "$HOT"
  svc svc_shard_nt "sharding (--hot-threshold $HOT), learned table rate off (EDGELOAD_BENCH_NO_TABLE_RATE=1)" \
    EDGELOAD_BENCH_NO_TABLE_RATE=1 -- --hot-threshold "$HOT"
fi

# ======================= the table ============================================
fmt_row() {  # CASE
  local c=$1
  "$PY" - "$c" "${T_N[$c]}" "${T_EL[$c]}" "${T_CPU[$c]}" "${T_RSS[$c]}" "${T_NOTE[$c]:-}" <<'EOF'
import sys
c, n, el, cpu, rss, note = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
print("| %-10s | %9d | %8.2f | %10.0f | %8.2f | %7.0f | %s |" % (c, n, el, n / el, cpu * 1e6 / n, rss / 1024, note))
EOF
}
ratio() {  # ratio LABEL A B  (items/s of A over items/s of B; equal item counts)
  [ -n "${T_EL[$2]:-}" ] && [ -n "${T_EL[$3]:-}" ] || return 0
  "$PY" - "$1" "${T_N[$2]}" "${T_EL[$2]}" "${T_N[$3]}" "${T_EL[$3]}" <<'EOF'
import sys
label = sys.argv[1]
a = int(sys.argv[2]) / float(sys.argv[3]); b = int(sys.argv[4]) / float(sys.argv[5])
print("- %s: %.2fx" % (label, a / b))
EOF
}
tratio() {  # tratio LABEL A B  (elapsed of A over elapsed of B)
  [ -n "${T_EL[$2]:-}" ] && [ -n "${T_EL[$3]:-}" ] || return 0
  echo "- $1: $(echo "scale=2; ${T_EL[$2]} / ${T_EL[$3]}" | bc -l)"
}
cpu_ratio() {  # cpu_ratio LABEL A B  (CPU per item of B over A)
  [ -n "${T_EL[$2]:-}" ] && [ -n "${T_EL[$3]:-}" ] || return 0
  "$PY" - "$1" "${T_N[$2]}" "${T_CPU[$2]}" "${T_N[$3]}" "${T_CPU[$3]}" <<'EOF'
import sys
a = float(sys.argv[3]) / int(sys.argv[2]); b = float(sys.argv[5]) / int(sys.argv[4])
print("- %s: %.1fx less CPU per item" % (sys.argv[1], b / a))
EOF
}
SCORECARD=
if want 8; then
  el_say "(8) the rate-control scorecard (tests/sim/, virtual time)"
  SCORECARD=$("$EL_ROOT/build-bench/sim_scorecard" --ablate) || true
fi

MIXED_TABLE=()
if want 9; then
  el_say "(9) 50,000 skewed edges through faultproxy.py (1,000 WCU/s a key), with and without faults"
  "$PY" - "$DATA/mixed-50000.csv" <<'EOF'
import random, sys
rng, seen, pairs = random.Random(24), set(), []
while len(pairs) < 50000:
    a, b = rng.randrange(20000), int(20000 * rng.random() ** 4)
    if (a, b) not in seen:
        seen.add((a, b)); pairs.append((a, b))
with open(sys.argv[1], "w") as f:
    f.write("follower_id,followee_id\n")
    for a, b in sorted(pairs):
        f.write("%d,%d\n" % (a, b))
EOF
  # mixed CASE NOTE -- [FAULTPROXY OPTIONS...]
  mixed() {
    local c=$1 note=$2 pp; shift 3
    ddb_table "bench_$c"
    start_server "proxy_$c" "$PY" "$EL_ROOT/tests/tools/faultproxy.py" --listen "127.0.0.1:$PROXY_PORT" \
      --upstream "$DDB" --pk-wcu 1000 --seed 24 --stats-file "$SCRATCH/proxy.$c.json" "$@"
    pp=$SERVER_PID
    run_timed "$c" "$EL" load "${MAP[@]}" --table "bench_$c" --endpoint-url "http://127.0.0.1:$PROXY_PORT" \
      --quiet --stats-json "$SCRATCH/stats.$c" "$DATA/mixed-50000.csv"
    stop_server "$pp"
    check_count "$c" "bench_$c" 50000
    MIXED_TABLE+=("$("$PY" - "$c" "${T_EL[$c]}" "$SCRATCH/stats.$c" "$note" <<'EOF'
import json, sys
c, wall, e, note = sys.argv[1], float(sys.argv[2]), json.load(open(sys.argv[3])), sys.argv[4]
print("| %-10s | %7.1f | %8d | %8d | %6.2f %% | %5d | %10.0f | %s |" % (
    c, wall, e["items_sent"], e["items_refused"], 100.0 * e["items_refused"] / max(1, e["items_sent"]),
    e["keys_paced"], e.get("table_rate", 0), note))
EOF
)")
  }
  mixed mix_faults "about 20 % of requests faulted, 30 % of batches partly handed back" -- \
    --throttle 0.03 --throttling 0.02 --http500 0.03 --http500-applied 0.03 --http503-html 0.02 \
    --reset 0.02 --lost-reply 0.03 --truncate 0.02 --partial 0.30
  mixed mix_clean "the same keys' limits, no faults" --
fi

{
  echo "edgeload benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$EL_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "machine: $NPROC cores ($(lscpu | sed -n 's/^Model name: *//p' | head -n1)), $(free -g | awk '/^Mem:/ {print $2}') GiB, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rows: (1)(3) $ROWS, (2) $DDB_ROWS, (4) $ROWS and $((ROWS * 4)), (5) $THR_ROWS via nullddb.c's model$([ "$TABLE_WCU" -gt 0 ] && echo " with $TABLE_WCU WCU/s per table"), $THR_DDB_ROWS via faultproxy ($THR_VIA), (7) $SVC_ROWS via nullddb.c --service-model; null endpoint: nullddb.$NULL_IMPL; wall-clock items/s; CPU = user+sys of the loader process only (null_srv: of the endpoint)"
  echo
  echo "| case       |     items |  elapsed |    items/s | CPU µs/it | RSS MB  | what |"
  echo "|------------|-----------|----------|------------|----------|---------|------|"
  for c in "${ORDER[@]}"; do fmt_row "$c"; done
  echo
  echo "Ratios (items/s unless said):"
  ratio "CSV->output, 1 file: --threads $NPROC vs --threads 1" out_1f_tN out_1f_t1
  ratio "CSV->output, $NPROC files: --threads $NPROC vs --threads 1" out_Nf_tN out_Nf_t1
  ratio "CSV->output, $NPROC files --threads $NPROC vs 1 file --threads 1" out_Nf_tN out_1f_t1
  ratio "CSV->output: edgeload --threads 1 vs Python csv+json" out_1f_t1 out_py
  cpu_ratio "CSV->output: edgeload --threads 1 vs Python csv+json" out_1f_t1 out_py
  ratio "DynamoDB Local: edgeload vs boto3 batch_writer" ddb_el ddb_boto3
  ratio "DynamoDB Local: edgeload vs SDK v3" ddb_el ddb_sdk
  cpu_ratio "DynamoDB Local: edgeload vs boto3 batch_writer" ddb_el ddb_boto3
  cpu_ratio "DynamoDB Local: edgeload vs SDK v3" ddb_el ddb_sdk
  if [ -n "${T_RSS[rss_$ROWS]:-}" ] && [ -n "${T_RSS[rss_$((ROWS * 4))]:-}" ]; then
    echo "- peak RSS $((ROWS * 4)) rows / $ROWS rows: $(echo "scale=3; ${T_RSS[rss_$((ROWS * 4))]} / ${T_RSS[rss_$ROWS]}" | bc -l)"
  fi
  tratio "issue 5 (nullddb.c model): elapsed, both off / sharding+interleaving on (target >= 10)" thr_off thr_on
  tratio "issue 5 (nullddb.c model): elapsed, sharding+interleaving on / uniform keys (target <= 1.5)" thr_on thr_uni
  tratio "issue 5 (faultproxy -> DynamoDB Local): elapsed, both off / on" thr_off_ddb thr_on_ddb
  tratio "issue 5 (faultproxy -> DynamoDB Local): elapsed, on / uniform keys" thr_on_ddb thr_uni_ddb
  tratio "issue 5 (faultproxy -> nullddb.c): elapsed, both off / on" thr_off_pxn thr_on_pxn
  tratio "issue 5 (faultproxy -> nullddb.c): elapsed, on / uniform keys" thr_on_pxn thr_uni_pxn
  floor_ratio() {  # floor_ratio LABEL CASE  (wall over the floor the input sets)
    [ -n "${T_EL[$2]:-}" ] && [ -n "${T_FLOOR[$2]:-}" ] || return 0
    echo "- $1: $(echo "scale=3; ${T_EL[$2]} / ${T_FLOOR[$2]}" | bc -l)"
  }
  floor_ratio "issue 17 (service model): wall / floor, no sharding, pacing on (target <= 1.05)" svc_flat
  floor_ratio "issue 17 (service model): wall / floor, no sharding, pacing off" svc_flat_np
  floor_ratio "issue 17 (service model): wall / floor, sharding, pacing on (target <= 1.05)" svc_shard
  floor_ratio "issue 17 (service model): wall / floor, sharding, pacing off" svc_shard_np
  floor_ratio "issue 17 (service model): wall / floor, sharding, learned table rate off" svc_shard_nt
  tratio "issue 17 (service model): elapsed, no sharding, pacing off / on" svc_flat_np svc_flat
  tratio "issue 17 (service model): elapsed, sharding, pacing off / on" svc_shard_np svc_shard
  if [ ${#SVC_TABLE[@]} -gt 0 ]; then
    echo
    echo "Service model (issue 17): nullddb.c --service-model, $SVC_ROWS rows, hottest target $svc_hot edges."
    echo "sent/refused as the model counted them (resends included); throttled = refused / sent (target <= 2 %);"
    echo "400s = requests refused whole; floor = the largest of the hottest key's units / 1,000 and the"
    echo "table's and the index's units / 20,000 ('floor set by' names it; target wall/floor <= 1.05);"
    echo "in flight = the loader's requests in flight on average (requests x 10 ms mean answer time / wall)."
    echo
    echo "| case         |    items |  wall s | floor s | wall/floor |     sent |  refused | throttled |  400s | in flight | floor set by | what |"
    echo "|--------------|----------|---------|---------|--------|----------|----------|----------|-------|-------|------|------|"
    printf '%s\n' "${SVC_TABLE[@]}"
  fi
  if [ ${#MIXED_TABLE[@]} -gt 0 ]; then
    echo
    echo "Mixed faults in real time (issue 24): 50,000 skewed edges through faultproxy.py, 1,000 WCU/s a key."
    echo
    echo "| case       |  wall s |     sent |  refused | refused | paced | table rate | what |"
    echo "|------------|---------|----------|----------|---------|-------|------------|------|"
    printf '%s\n' "${MIXED_TABLE[@]}"
    tratio "issue 24: elapsed, mixed faults / no faults (target <= 2)" mix_faults mix_clean
  fi
  if [ -n "$SCORECARD" ]; then
    echo
    echo "Rate-control scorecard (issue 24; tests/sim/, virtual time): wall/fl = wall over the floor,"
    echo "refused = items refused / sent, sdk = the AWS SDKs' adaptive retry mode, nopace / norate ="
    echo "edgeload with per-key pacing or the learned table rate off (wall/floor)."
    echo
    echo '```'
    printf '%s\n' "$SCORECARD"
    echo '```'
  fi
  if [ -n "${T_EL[tls_https]:-}" ] && [ -n "${T_EL[tls_http]:-}" ]; then
    "$PY" - "${T_N[tls_http]}" "${T_EL[tls_http]}" "${T_CPU[tls_http]}" "${T_N[tls_https]}" \
      "${T_EL[tls_https]}" "${T_CPU[tls_https]}" "$TLS_HANDSHAKES" "$TLS_REQUESTS" <<'EOF'
import sys
n0, e0, c0, n1, e1, c1 = (float(x) for x in sys.argv[1:7])
print("- HTTPS vs plain HTTP (null endpoint): loader CPU per item %.2fx, items/s %.2fx; "
      "%s TLS handshakes for %s requests" % ((c1 / n1) / (c0 / n0), (n1 / e1) / (n0 / e0),
                                              sys.argv[7], sys.argv[8]))
EOF
  fi
} | tee "$RESULTS"
el_say "table written to $RESULTS"
