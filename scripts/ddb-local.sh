#!/usr/bin/env bash
# scripts/ddb-local.sh start|stop|status - AWS's DynamoDB Local for tests and
# the quickstart, in memory, on 127.0.0.1:$EDGELOAD_DDB_PORT (default 8000).
#
# DynamoDB Local comes from the npm package amplify-dynamodb-simulator (it
# ships AWS's DynamoDBLocal.jar), packed and unpacked once into
# ${XDG_CACHE_HOME:-$HOME/.cache}/edgeload/, outside the repository. Java 17
# and npm are installed with apt-get when missing. The pid file and the log
# live in the same cache directory, one per port.
#
#   start   start it in the background and wait until it answers ListTables;
#           a no-op when something on that port already answers as DynamoDB
#   stop    stop the instance this script started on that port (by pid)
#   status  say whether it answers; exit 0 if it does, 3 if not
#
# Note: DynamoDBLocal.jar has no option to choose the listening address
# (see `java -jar DynamoDBLocal.jar -help`); it listens on every interface.
# Clients here always use 127.0.0.1.
set -euo pipefail
EL_PROG=ddb-local
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=$(el_ddb_port)
case "$PORT" in ''|*[!0-9]*) el_die "EDGELOAD_DDB_PORT must be a port number, not '$PORT'" ;; esac
ENDPOINT=$(el_ddb_endpoint)
EMULATOR_DIR="$EL_CACHE_DIR/package/emulator"
PID_FILE="$EL_CACHE_DIR/ddb-local-$PORT.pid"
LOG_FILE="$EL_CACHE_DIR/ddb-local-$PORT.log"
START_TIMEOUT=${EDGELOAD_DDB_START_TIMEOUT:-60}

# True when something on the port answers a ListTables as DynamoDB does.
# DynamoDB Local checks that a request is signed, not the signature itself.
answers() {
  curl -s -m 3 -X POST "$ENDPOINT/" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=edgeload/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00' \
    -d '{}' 2>/dev/null | grep -q '"TableNames"'
}

# The pid in our pid file, if that process is still our DynamoDB Local.
our_pid() { el_pidfile_pid "$PID_FILE" DynamoDBLocal.jar; }

java_major() {
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  java -version 2>&1 | sed -n 's/.*version "\([0-9]*\)\(\.[0-9]*\)*.*/\1/p' | head -n1
}

ensure_java() {
  local major
  major=$(java_major)
  if [ "${major:-0}" -lt 17 ]; then
    el_apt_install openjdk-17-jre-headless
    major=$(java_major)
    [ "${major:-0}" -ge 17 ] || el_die "java 17 or newer is needed; 'java' is version ${major:-none} (check update-alternatives --config java)"
  fi
}

ensure_emulator() {
  [ -f "$EMULATOR_DIR/DynamoDBLocal.jar" ] && return 0
  el_apt_install curl ca-certificates
  command -v npm >/dev/null 2>&1 || el_apt_install nodejs npm
  mkdir -p "$EL_CACHE_DIR"
  local tgz
  tgz=$(ls -t "$EL_CACHE_DIR"/amplify-dynamodb-simulator-*.tgz 2>/dev/null | head -n1 || true)
  if [ -z "$tgz" ]; then
    el_say "fetching DynamoDB Local (npm package amplify-dynamodb-simulator)"
    (cd "$EL_CACHE_DIR" && npm pack --silent amplify-dynamodb-simulator >/dev/null) ||
      el_die "npm pack amplify-dynamodb-simulator failed"
    tgz=$(ls -t "$EL_CACHE_DIR"/amplify-dynamodb-simulator-*.tgz | head -n1)
  fi
  tar -xzf "$tgz" -C "$EL_CACHE_DIR" package/emulator ||
    el_die "could not unpack $tgz"
  [ -f "$EMULATOR_DIR/DynamoDBLocal.jar" ] || el_die "$tgz holds no emulator/DynamoDBLocal.jar"
}

cmd_start() {
  if answers; then
    if pid=$(our_pid); then
      el_say "already running on $ENDPOINT (pid $pid)"
    else
      el_say "already running on $ENDPOINT (not started by this script)"
    fi
    return 0
  fi
  command -v curl >/dev/null 2>&1 || el_apt_install curl ca-certificates
  ensure_java
  ensure_emulator
  if pid=$(our_pid); then
    # Ours, alive, but not answering (yet): give it the same grace period.
    el_say "pid $pid exists but does not answer yet; waiting"
  else
    rm -f "$PID_FILE"
    (cd "$EMULATOR_DIR" &&
      exec nohup java -Djava.library.path="$EMULATOR_DIR/DynamoDBLocal_lib" \
        -jar DynamoDBLocal.jar -inMemory -sharedDb -disableTelemetry -port "$PORT" \
        </dev/null >"$LOG_FILE" 2>&1) &
    pid=$!
    echo "$pid" >"$PID_FILE"
  fi
  el_wait_answering "DynamoDB Local on $ENDPOINT" "$pid" "$PID_FILE" "$LOG_FILE" "$START_TIMEOUT"
  el_say "running on $ENDPOINT (pid $pid, log $LOG_FILE)"
}

cmd_stop() {
  local pid
  if ! pid=$(our_pid); then
    rm -f "$PID_FILE"
    if answers; then
      el_say "something answers on $ENDPOINT but this script did not start it; left running"
    else
      el_say "not running on $ENDPOINT"
    fi
    return 0
  fi
  el_stop_pid "$pid"
  rm -f "$PID_FILE"
  el_say "stopped (pid $pid)"
}

cmd_status() {
  local pid
  if answers; then
    if pid=$(our_pid); then
      echo "running on $ENDPOINT (pid $pid)"
    else
      echo "running on $ENDPOINT (not started by this script)"
    fi
    return 0
  fi
  if pid=$(our_pid); then
    echo "pid $pid alive but not answering on $ENDPOINT"
  else
    echo "not running on $ENDPOINT"
  fi
  return 3
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: scripts/ddb-local.sh start|stop|status" >&2; exit 2 ;;
esac
