#!/bin/sh
# JOBS long fuzzing sessions side by side (one per core of a machine with
# cores to spare), each tests/fuzz/long_run.sh with its own work folder,
# and the sum of their executions and findings:
#
#   sh tests/fuzz/parallel_run.sh JOBS HARNESS_BINARY SECONDS WORK_DIR [SEED_CORPUS...]
#
# Worker k fuzzes in WORK_DIR/wk (corpus, findings, log.txt, total.txt);
# libFuzzer seeds each process from its time and pid, so the workers
# explore differently.  The seed corpora are only read.  The README's fuzz_api figures of
# 2026-11-24 (third session) come from 16 workers of build-fuzz/bin/fuzz_api
# (tests/fuzz/README.md) on the GPU machine's 16 cores.
set -eu
[ $# -ge 4 ] || {
  echo "usage: $0 JOBS HARNESS SECONDS WORK_DIR [SEED_CORPUS...]" >&2
  exit 2
}
jobs=$1
harness=$2
seconds=$3
work=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
k=1
while [ "$k" -le "$jobs" ]; do
  sh "$here/long_run.sh" "$harness" "$seconds" "$work/w$k" "$@" >"$work/w$k.out" 2>&1 &
  k=$((k + 1))
done
wait
total=0
findings=0
k=1
while [ "$k" -le "$jobs" ]; do
  n=$(cat "$work/w$k/total.txt" 2>/dev/null || echo 0)
  f=$(ls "$work/w$k/findings" 2>/dev/null | grep -v -c '^slow-unit' || true)
  echo "worker $k: $n executions, $f findings"
  total=$((total + n))
  findings=$((findings + f))
  k=$((k + 1))
done
echo "parallel_run: $harness: $total executions by $jobs workers, $findings findings"
