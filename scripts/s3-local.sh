#!/usr/bin/env bash
# scripts/s3-local.sh install|start|stop|status|bin - a local S3-compatible
# server (s3rver, from the npm registry) for edgeload's S3 tests, on
# 127.0.0.1:$EDGELOAD_S3_PORT (default 4568).
#
# s3rver is installed once with npm into
# ${XDG_CACHE_HOME:-$HOME/.cache}/edgeload/s3rver-VERSION/, outside the
# repository (nodejs and npm come from apt-get when missing). Its data
# directory, pid file and log live beside it, one per port; start empties the
# data directory, so every start is a fresh, empty server.
#
#   install  install s3rver if missing (what scripts/test.sh runs)
#   start    start it in the background and wait until it answers
#   stop     stop the instance this script started on that port (by pid)
#   status   say whether it answers; exit 0 if it does, 3 if not
#   bin      print the path of the s3rver executable (installing it first)
#
# s3rver accepts the access key S3RVER (secret S3RVER) and checks the key
# id, not SigV4 signatures: the tests put tests/tools/s3proxy.py in front of
# it to check every signature with botocore.
set -euo pipefail
EL_PROG=s3-local
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=$(el_s3_port)
case "$PORT" in ''|*[!0-9]*) el_die "EDGELOAD_S3_PORT must be a port number, not '$PORT'" ;; esac
ENDPOINT="http://127.0.0.1:$PORT"
DATA_DIR="$EL_CACHE_DIR/s3rver-data-$PORT"
PID_FILE="$EL_CACHE_DIR/s3rver-$PORT.pid"
LOG_FILE="$EL_CACHE_DIR/s3rver-$PORT.log"
START_TIMEOUT=${EDGELOAD_S3_START_TIMEOUT:-30}

answers() {
  curl -s -m 3 -o /dev/null -w '%{http_code}' "$ENDPOINT/" 2>/dev/null | grep -q '^[2-4]'
}

our_pid() { el_pidfile_pid "$PID_FILE" s3rver; }

cmd_start() {
  if answers; then
    el_say "something already answers on $ENDPOINT; left as it is"
    return 0
  fi
  el_s3rver_install
  rm -rf "$DATA_DIR"
  mkdir -p "$DATA_DIR"
  (exec nohup node "$(el_s3rver_bin)" -d "$DATA_DIR" -a 127.0.0.1 -p "$PORT" --silent \
     --no-vhost-buckets </dev/null >"$LOG_FILE" 2>&1) &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  el_wait_answering "s3rver on $ENDPOINT" "$pid" "$PID_FILE" "$LOG_FILE" "$START_TIMEOUT"
  el_say "running on $ENDPOINT (pid $pid, data $DATA_DIR)"
}

cmd_stop() {
  local pid
  if ! pid=$(our_pid); then
    rm -f "$PID_FILE"
    el_say "not started by this script on $ENDPOINT"
    return 0
  fi
  el_stop_pid "$pid"
  rm -f "$PID_FILE"
  rm -rf "$DATA_DIR"
  el_say "stopped (pid $pid)"
}

cmd_status() {
  if answers; then
    echo "running on $ENDPOINT"
    return 0
  fi
  echo "not running on $ENDPOINT"
  return 3
}

case "${1:-}" in
  install) el_s3rver_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  bin) el_s3rver_install; el_s3rver_bin ;;
  -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) echo "usage: scripts/s3-local.sh install|start|stop|status|bin" >&2; exit 2 ;;
esac
