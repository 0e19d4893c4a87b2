#!/bin/sh
# A long fuzzing session on one core, at the lowest priority: runs a
# libFuzzer harness for SECONDS in all, starting again after each finding
# (libFuzzer stops at the first), and adds up the executions.
#
#   sh tests/fuzz/long_run.sh HARNESS_BINARY SECONDS WORK_DIR [SEED_CORPUS...]
#
# WORK_DIR/corpus collects the inputs found; WORK_DIR/findings the inputs of
# crashes, leaks, timeouts and out-of-memory cases (and of slow units, which
# are not counted as findings: on a shared machine they are mostly waits
# for a core); WORK_DIR/log.txt one line per libFuzzer run.  The total is printed
# at the end and kept in WORK_DIR/total.txt.  The harness comes from the
# sanitizer build (build-asan/bin/fuzz_io, fuzz_api: tests/run.sh builds it).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 HARNESS SECONDS WORK_DIR [SEED_CORPUS...]" >&2; exit 2; }
harness=$1
seconds=$2
work=$3
shift 3
mkdir -p "$work/corpus" "$work/findings"
# huge allocations fail (as the API promises) instead of aborting; big ones
# (a corrupt header claiming gigapixels) fail early instead of being zeroed
# one worker thread per device unless a program sets numThreads: the fuzzed
# images are tiny, and two harnesses share two cores
export OIDN_NUM_THREADS="${OIDN_NUM_THREADS:-1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:quarantine_size_mb=16:max_allocation_size_mb=256}"
end=$(( $(date +%s) + seconds ))
total=0
runs=0
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  out="$work/run_$runs.txt"
  nice -n 19 "$harness" "$work/corpus" "$@" -max_total_time="$left" -rss_limit_mb=2048 \
    -timeout=60 -print_final_stats=1 -artifact_prefix="$work/findings/" >"$out" 2>&1 || true
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out" | tail -n 1)
  n=${n:-0}
  total=$((total + n))
  found=$(ls "$work/findings" | grep -v -c '^slow-unit' || true)
  echo "run $runs: executions $n total $total findings $found" >>"$work/log.txt"
  runs=$((runs + 1))
  # a run that dies at once (a finding in the seeds) must not spin
  [ "$n" -gt 0 ] || sleep 5
  # keep the logs of runs with findings only
  grep -q -E "ERROR|deadly signal|Test unit written" "$out" || rm -f "$out"
done
echo "$total" >"$work/total.txt"
echo "long_run: $harness: $total executions in $runs runs," \
  "$(ls "$work/findings" | grep -v -c '^slow-unit' || true) findings"
