#!/bin/sh
# Nsight Compute and SASS summaries of the à-trous kernels at 1920x1080
# (after tests/gpu/device_run.sh built build-device).  Writes $OUT/ncu.txt
# and $OUT/sass.txt and prints the key lines.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/device-logs}
build=${LULL_BUILD:-$root/build-device}
mkdir -p "$out"
timeout 300 ncu --kernel-name regex:"variance_depth|prepare_|permuted_finish" --launch-count 14 \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis "$build/bin/bench_atrous_cuda" 1 2 profile >"$out/ncu.txt" 2>&1
grep -E "^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|No Eligible|Issued Warp Per|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Shared Memory Configuration Size" "$out/ncu.txt"
grep -A3 -E "OPT   |WRN   " "$out/ncu.txt" | grep -E "stall|Stall|cycles|bank" | sort | uniq -c | sort -rn | head -12
cuobjdump -sass "$build/bin/bench_atrous_cuda" >"$out/sass.txt" 2>&1
python3 - "$out/sass.txt" <<'PY'
import re, sys, collections
text = open(sys.argv[1]).read()
for name in ("permuted_variance_depth", "baseline_variance_depth"):
    m = re.search(r"Function : (\S*%s\S*)(.*?)(?=\n\s+Function :|\Z)" % name, text, re.S)
    if not m:
        print(name, "not found"); continue
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", m.group(2))
    c = collections.Counter(ops)
    print(name, "SASS instructions:", len(ops))
    print("  ", ", ".join("%s %d" % kv for kv in c.most_common(24)))
PY
