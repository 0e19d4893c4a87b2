#!/bin/sh
# Nsight Compute summary of the à-trous kernels at 1920x1080 (after
# tests/gpu/device_run.sh built $LULL_BUILD): the first launches of the
# prepare kernel, a guide kernel and the level kernels of both schedules.
# Writes $OUT/ncu.txt and prints the key lines; then profiles level 2 of
# the packed level kernel and of the prepare kernel once more with every
# section and writes their per-instruction SASS table (executed
# instructions and stall samples per instruction) to $OUT/NAME.sass.csv,
# which cuda/NOTES.md's per-region figures come from.  (Instruction counts
# per tap come from the SASS, which needs no GPU: cuda/NOTES.md says how.)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-logs}
build=${LULL_BUILD:-$root/build-device}
case "$build" in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$out"
timeout "${LULL_NCU_TIMEOUT:-240}" ncu \
  --kernel-name regex:"prepare_depth|level_guides|baseline_variance_depth|permuted_variance_depth|permuted_packed_depth" \
  --launch-count 40 \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section LaunchStats \
  "$build/bin/bench_atrous_cuda" 1 2 profile >"$out/ncu.txt" 2>&1
grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|No Eligible|Issued Warp Per|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Shared Memory Configuration Size|Block Limit" "$out/ncu.txt"
grep -A3 -E "OPT   |WRN   " "$out/ncu.txt" | grep -E "stall|Stall|cycles|bank" | sort | uniq -c | sort -rn | head -12
for k in permuted_packed_depth prepare_depth_float; do
  timeout "${LULL_NCU_TIMEOUT:-240}" ncu -k regex:"^$k\$" -s 2 -c 1 --set full --import-source no \
    -o "$out/$k" "$build/bin/bench_atrous_cuda" 1 2 profile >"$out/$k.log" 2>&1 &&
    ncu --import "$out/$k.ncu-rep" --page source --print-source sass --csv >"$out/$k.sass.csv" 2>&1
  rm -f "$out/$k.ncu-rep"
done
