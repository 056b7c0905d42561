# shellcheck shell=bash
# shellcheck disable=SC2034  # the EL_ variables are used by the scripts that source this
# scripts/lib.sh - shell helpers shared by quickstart.sh, test.sh,
# ddb-local.sh, s3-local.sh and the benchmarks. Sourced, never run. Bash only.
#
# Everything here is idempotent and quiet when there is nothing to do, so a
# second run of any script costs seconds, not an apt-get round trip.

EL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EL_CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/edgeload"

# Debian packages edgeload needs to build and to run its whole test suite.
# nodejs/npm are only needed to fetch DynamoDB Local; ddb-local.sh installs
# them (and Java) itself when they are missing. openssl and stunnel4 make
# the TLS endpoint of test_https and test_proxy; iproute2 (ip) the private
# network namespace in which test_creds serves the credential endpoints'
# default addresses. slurm-wlm and munge are the one-node Slurm cluster on
# which test_slurm runs a job array of workers (the daemons are started by
# the test itself, in a temporary directory, and stopped by it).
EL_BUILD_PACKAGES=(
  build-essential cmake pkg-config
  libcsv-dev libzstd-dev zstd libcurl4-openssl-dev libyajl-dev zlib1g-dev libssl-dev
  libcmocka-dev
)
EL_TEST_PACKAGES=(python3 python3-boto3 awscli curl ca-certificates time openssl stunnel4 iproute2
  faketime slurm-wlm munge)

el_say() { printf '%s: %s\n' "${EL_PROG:-edgeload}" "$*" >&2; }
el_die() { el_say "error: $*"; exit 1; }

# Runs a command as root: directly when we are root, through sudo otherwise.
el_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    el_die "need root (or sudo) to run: $*"
  fi
}

# el_apt_install PKG... - installs the packages that dpkg does not already
# report as installed; runs apt-get update once per process, and only then.
el_apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  command -v apt-get >/dev/null 2>&1 ||
    el_die "missing packages (${missing[*]}) and no apt-get to install them"
  el_say "installing: ${missing[*]}"
  # another apt-get on the machine holds dpkg's lock for a while: wait for
  # it (up to 5 minutes) rather than fail at once
  if [ -z "${EL_APT_UPDATED:-}" ]; then
    el_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 \
      update -qq || el_die "apt-get update failed"
    EL_APT_UPDATED=1
  fi
  el_as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || el_die "apt-get install failed: ${missing[*]}"
}

# el_build BUILD_DIR [CMAKE_ARGS...] - configures (first time, or when the
# arguments change) and builds with two jobs.
el_build() {
  local dir=$1; shift
  cmake -S "$EL_ROOT" -B "$EL_ROOT/$dir" "$@" >/dev/null ||
    el_die "cmake configure failed in $dir"
  cmake --build "$EL_ROOT/$dir" -j2 || el_die "build failed in $dir"
}

# DynamoDB Local's port and endpoint, as every script and test sees them.
el_ddb_port() { printf '%s\n' "${EDGELOAD_DDB_PORT:-8000}"; }
el_ddb_endpoint() { printf 'http://127.0.0.1:%s\n' "$(el_ddb_port)"; }

# Exports dummy credentials, a region and the local endpoint so that
# edgeload and the AWS CLI talk to DynamoDB Local and nothing else.
el_use_local_aws() {
  export AWS_ACCESS_KEY_ID=edgeloadlocal AWS_SECRET_ACCESS_KEY=edgeloadlocal
  export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
  export AWS_ENDPOINT_URL_DYNAMODB
  AWS_ENDPOINT_URL_DYNAMODB=$(el_ddb_endpoint)
  export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=""
  unset AWS_SESSION_TOKEN AWS_PROFILE
}

# The AWS CLI: Debian's when it is there (a user's PATH may put another first).
el_aws() {
  if [ -x /usr/bin/aws ]; then /usr/bin/aws "$@"; else aws "$@"; fi
}

# s3rver (npm), the local S3-compatible server of the S3 tests: installed
# once into the cache, outside the repository (scripts/s3-local.sh).
EL_S3RVER_VERSION=3.7.1
el_s3_port() { printf '%s\n' "${EDGELOAD_S3_PORT:-4568}"; }
el_s3rver_dir() { printf '%s\n' "$EL_CACHE_DIR/s3rver-$EL_S3RVER_VERSION"; }
el_s3rver_bin() { printf '%s\n' "$(el_s3rver_dir)/node_modules/s3rver/bin/s3rver.js"; }

# el_s3rver_install - npm-installs s3rver when it is not there yet.
el_s3rver_install() {
  [ -f "$(el_s3rver_bin)" ] && return 0
  command -v npm >/dev/null 2>&1 || el_apt_install nodejs npm
  mkdir -p "$(el_s3rver_dir)"
  el_say "installing s3rver $EL_S3RVER_VERSION (npm) into $(el_s3rver_dir)"
  (cd "$(el_s3rver_dir)" &&
    npm install --prefix . --no-audit --no-fund --loglevel=error \
      "s3rver@$EL_S3RVER_VERSION" >/dev/null) ||
    el_die "npm install s3rver@$EL_S3RVER_VERSION failed"
  [ -f "$(el_s3rver_bin)" ] || el_die "s3rver installed but $(el_s3rver_bin) is missing"
}

# --- background services (ddb-local.sh, s3-local.sh) -----------------------
# Each service script defines `answers` (true when the service responds) and
# keeps one pid file per port; these are the start/stop steps they share.

# el_pidfile_pid PID_FILE PATTERN - prints the pid in PID_FILE when that
# process is alive and its command line contains PATTERN (so a recycled pid
# is never taken for ours); fails otherwise.
el_pidfile_pid() {
  local file=$1 pattern=$2 pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file" 2>/dev/null) || return 1
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$pattern" || return 1
  printf '%s\n' "$pid"
}

# el_wait_answering NAME PID PID_FILE LOG_FILE TIMEOUT_SECS - polls `answers`
# every 0.2 s until it succeeds; dies (and kills PID) when the process exits
# or the timeout passes, showing the log's tail.
el_wait_answering() {
  local name=$1 pid=$2 pid_file=$3 log_file=$4 timeout=$5 waited=0
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      tail -n 20 "$log_file" >&2 || true
      el_die "$name exited during start-up (log: $log_file)"
    fi
    if [ "$waited" -ge $((timeout * 5)) ]; then
      kill "$pid" 2>/dev/null || true
      rm -f "$pid_file"
      el_die "$name did not answer within ${timeout}s (log: $log_file)"
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
}

# el_stop_pid PID - SIGTERM, up to 10 s of grace, then SIGKILL.
el_stop_pid() {
  local pid=$1
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid" 2>/dev/null || true
  fi
}
