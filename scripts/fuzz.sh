#!/usr/bin/env bash
# scripts/fuzz.sh - builds the libFuzzer targets (clang, ASan+UBSan) in
# build-fuzz/ and runs every target in tests/fuzz/ for a while.
#
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 60
#   TARGET              fuzz_csv, fuzz_mysql, ... (default: all of tests/fuzz/fuzz_*.c)
# env: FUZZ_JOBS     targets run side by side (default 2)
#      FUZZ_MERGE=1  afterwards, merge what each run found that adds coverage
#                    into tests/fuzz/corpus/<target>/ (commit it: ctest replays it)
#      FUZZ_ARGS     extra libFuzzer flags
#
# The repository corpus is read, never written, by the runs: new inputs go to
# build-fuzz/corpus/<target>/, crashes to build-fuzz/artifacts/<target>/,
# logs to build-fuzz/logs/<target>.log. Exit status 1 when any target found
# a crash, leak, timeout or sanitizer report.
set -euo pipefail
EL_PROG=fuzz.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

secs=${1:-60}
case "$secs" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]" >&2; exit 2 ;; esac
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$EL_ROOT"/tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
jobs=${FUZZ_JOBS:-2}

el_apt_install "${EL_BUILD_PACKAGES[@]}" clang
CC=clang el_build build-fuzz -DEDGELOAD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang

out="$EL_ROOT/build-fuzz"
run_one() {
  local t=$1
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$out/logs"
  # -rss_limit_mb: a parser that balloons is a finding too
  # shellcheck disable=SC2086
  "$out/tests/fuzz/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" ${FUZZ_ARGS:-} \
    "$out/corpus/$t" "$EL_ROOT/tests/fuzz/corpus/$t" >"$out/logs/$t.log" 2>&1
}

failed=()
running=0
declare -A pids=()
for t in "${targets[@]}"; do
  [ -x "$out/tests/fuzz/$t" ] || el_die "no fuzz target $t"
  el_say "fuzzing $t for ${secs}s (log: build-fuzz/logs/$t.log)"
  run_one "$t" &
  pids[$t]=$!
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
for t in "${targets[@]}"; do
  if ! wait "${pids[$t]}"; then
    failed+=("$t")
  fi
done
for t in "${targets[@]}"; do
  if grep -q 'ERROR: \|runtime error:\|==ERROR\|SUMMARY: ' "$out/logs/$t.log" &&
     ! printf '%s\n' "${failed[@]:-}" | grep -qx "$t"; then
    failed+=("$t")
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/logs/$t.log")
  el_say "$t: ${execs:-?} runs$(printf '%s\n' "${failed[@]:-}" | grep -qx "$t" && echo ', FAILED')"
  if [ -n "${FUZZ_MERGE:-}" ]; then
    "$out/tests/fuzz/$t" -merge=1 "$EL_ROOT/tests/fuzz/corpus/$t" "$out/corpus/$t" \
      >>"$out/logs/$t.merge.log" 2>&1 || el_say "merge failed for $t"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  el_say "findings in: ${failed[*]} (see build-fuzz/artifacts/ and build-fuzz/logs/)"
  exit 1
fi
el_say "no findings"
