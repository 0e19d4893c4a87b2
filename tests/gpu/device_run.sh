#!/bin/sh
# Builds lull with CUDA and runs the GPU tests, compute-sanitizer (memcheck
# and racecheck) on them, and the à-trous benchmark, on a machine with an
# NVIDIA GPU.  Logs go to $OUT (or ./device-logs).
#   sh tests/gpu/device_run.sh [bench-repeats]
# Needs .gpu/testdata from tests/gpu/export_testdata.py for the render test.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-logs}
build=${LULL_BUILD:-$root/build-device}
mkdir -p "$out"
log="$out/log"
: >"$log"
say() { printf '== %s\n' "$*" | tee -a "$log"; }
jobs=$(nproc 2>/dev/null || echo 4)

say "configure and build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLULL_TOOLS=OFF -DLULL_PYTHON=OFF \
  >>"$log" 2>&1 && cmake --build "$build" -j "$jobs" >>"$log" 2>&1 || { say "BUILD FAILED"; tail -40 "$log"; exit 1; }
variants=${LULL_BENCH_VARIANTS-fastexp strip1 strip4 occ3}
for v in $variants; do
  cmake --build "$build" -j "$jobs" --target "bench_atrous_cuda_$v" >>"$log" 2>&1 || say "variant $v: build failed"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$log" 2>&1

say "GPU tests"
(cd "$build" && ctest -L gpu -R "cuda|atrous_layout" --output-on-failure) >"$out/tests.log" 2>&1
(cd "$build" && ctest -R "atrous_layout|cuda_devices" --output-on-failure) >>"$out/tests.log" 2>&1
grep -E "tests passed|Failed" "$out/tests.log" | tee -a "$log"
"$build/bin/test_cuda_atrous" 2>&1 | tee -a "$log"

for tool in memcheck racecheck; do
  say "compute-sanitizer $tool"
  for t in test_cuda_atrous test_cuda_api; do
    # (the API test provokes out-of-memory on purpose: not a finding)
    timeout 150 compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 "$build/bin/$t" >"$out/$tool-$t.log" 2>&1
    printf '%s %s: exit %s; %s\n' "$tool" "$t" "$?" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool-$t.log" | tail -1)" | tee -a "$log"
  done
done

say "benchmark"
"$build/bin/bench_atrous_cuda" "${1:-50}" >"$out/bench.log" 2>&1
for v in $variants; do
  printf '\n== variant %s\n' "$v" >>"$out/bench.log"
  "$build/bin/bench_atrous_cuda_$v" "${1:-50}" >>"$out/bench.log" 2>&1
done
cat "$out/bench.log" >>"$log"
grep -E "^==|device|level|total|H2D" "$out/bench.log"
