#!/usr/bin/env bash
# scripts/test.sh - installs what the build and the suite need, builds with
# -Werror, starts DynamoDB Local and runs the whole suite with ctest.
#
# usage: scripts/test.sh [--asan | --tsan | --ci] [--unit] [-- CTEST_ARGS...]
#   --asan   build in build-asan with AddressSanitizer + UBSan (+ LeakSanitizer)
#   --tsan   build in build-tsan with ThreadSanitizer
#   --ci     the normal suite, then the ASan suite (what .ci/run runs)
#   --unit   unit tests only (no DynamoDB Local)
#
# The default build directory is build/. DynamoDB Local listens on
# 127.0.0.1:$EDGELOAD_DDB_PORT (default 8000); it is stopped at the end only
# if this script started it. The exit status is ctest's.
set -euo pipefail
EL_PROG=test.sh
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

build_dir=build
cmake_args=(-DEDGELOAD_WERROR=ON)
unit_only=
ci=
ctest_extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --asan) build_dir=build-asan; cmake_args+=(-DEDGELOAD_ASAN=ON) ;;
    --tsan) build_dir=build-tsan; cmake_args+=(-DEDGELOAD_TSAN=ON) ;;
    --ci) ci=1 ;;
    --unit) unit_only=1 ;;
    --) shift; ctest_extra=("$@"); break ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: scripts/test.sh [--asan | --tsan | --ci] [--unit] [-- CTEST_ARGS...]" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "$ci" ]; then
  # both suites run even when the first fails; the status is the worse one
  extra=()
  [ -n "$unit_only" ] && extra+=(--unit)
  status=0
  bash "$0" "${extra[@]}" -- "${ctest_extra[@]}" || status=$?
  el_say "normal suite: exit $status; now the ASan suite"
  bash "$0" --asan "${extra[@]}" -- "${ctest_extra[@]}" || { s=$?; [ "$status" -eq 0 ] && status=$s; }
  exit "$status"
fi

# Sanitizers: a report fails the test (exit 86, which no test expects from
# edgeload; TSan exits 66), leaks included; child
# processes started by the integration tests inherit these.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:exitcode=86}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=86}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$EL_ROOT/tests/tsan.supp}"

if [ -n "$unit_only" ]; then
  el_apt_install "${EL_BUILD_PACKAGES[@]}"
else
  el_apt_install "${EL_BUILD_PACKAGES[@]}" "${EL_TEST_PACKAGES[@]}"
fi
el_build "$build_dir" "${cmake_args[@]}"

started_ddb=
stop_ddb() {
  if [ -n "$started_ddb" ]; then
    "$EL_ROOT/scripts/ddb-local.sh" stop || true
  fi
}
trap stop_ddb EXIT

ctest_args=(--test-dir "$EL_ROOT/$build_dir" --output-on-failure -j2)
if [ -n "$unit_only" ]; then
  ctest_args+=(-L unit)
else
  if ! "$EL_ROOT/scripts/ddb-local.sh" status >/dev/null; then
    "$EL_ROOT/scripts/ddb-local.sh" start
    started_ddb=1
  fi
  # The S3 tests start their own s3rver (npm, cached like DynamoDB Local).
  el_s3rver_install
  export EDGELOAD_REQUIRE_S3=1 EDGELOAD_S3RVER
  EDGELOAD_S3RVER=$(el_s3rver_bin)
  # The integration harness fails (rather than skips) without DynamoDB Local.
  export EDGELOAD_REQUIRE_DDB=1
  export EDGELOAD_DDB_ENDPOINT
  EDGELOAD_DDB_ENDPOINT=$(el_ddb_endpoint)
fi

status=0
ctest "${ctest_args[@]}" "${ctest_extra[@]}" || status=$?
exit "$status"
