#!/bin/sh
# Open Image Denoise's own programs on a GPU machine, lull beside OIDN, in
# one run on the same GPU: oidnTest --device cuda on lull and on OIDN 2.5.1,
# both devices' external memory and semaphore kinds, and oidnBenchmark's RT
# hdr_alb_nrm at 1280x720, 1920x1080 and 3840x2160, quality HIGH and FAST,
# printed as a table with lull's time over OIDN's.
#
#   sh tests/gpu/oidn_programs.sh WHEEL_DIR [LULL_LIB]
#
# WHEEL_DIR  the pyoidn 2.5.1 wheel unzipped (it holds pyoidn/oidn/bin and
#            pyoidn/oidn/lib): unzip pyoidn-2.5.1.0-py3-none-manylinux2014_x86_64.whl
# LULL_LIB   lull's libOpenImageDenoise.so.2 from a CUDA build (default
#            $LULL_BUILD/lib/libOpenImageDenoise.so.2, LULL_BUILD default
#            build-device, as tests/gpu/device_run.sh builds it)
# LULL_BENCH_RUNS (default 20): oidnBenchmark's -n.  LULL_BENCH_CPU=1 adds
# the same benchmark on the CPU with 2 threads (OIDN takes seconds a 4K
# image there).  Logs and table.md go to $OUT (or ./oidn-programs).
#
# The programs run unchanged: a copy of bin/ beside a lib/ that holds only
# lull's library (their RPATH is $ORIGIN/../lib), and the wheel's own tree
# for OIDN.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
wheel=${1:?usage: sh tests/gpu/oidn_programs.sh WHEEL_DIR [LULL_LIB]}
build=${LULL_BUILD:-$root/build-device}
lib=${2:-$build/lib/libOpenImageDenoise.so.2}
out=${OUT:-$PWD/oidn-programs}
runs=${LULL_BENCH_RUNS:-20}
oidn=$wheel/pyoidn/oidn
[ -x "$oidn/bin/oidnTest" ] || { echo "no $oidn/bin/oidnTest: unzip the pyoidn 2.5.1 wheel into $wheel"; exit 2; }
[ -r "$lib" ] || { echo "no lull library at $lib (build with CUDA first)"; exit 2; }
mkdir -p "$out"
unset OIDN_DEFAULT_DEVICE OIDN_DEVICE_CPU OIDN_DEVICE_CUDA OIDN_VERBOSE LD_PRELOAD LD_LIBRARY_PATH

# lull's tree: OIDN's programs beside lull's library
tree=$out/lull
rm -rf "$tree"
mkdir -p "$tree/lib"
cp -r "$oidn/bin" "$tree/bin"
cp -L "$lib" "$tree/lib/libOpenImageDenoise.so.2"
echo "lull:  $(ldd "$tree/bin/oidnTest" | grep libOpenImageDenoise)"
echo "OIDN:  $(ldd "$oidn/bin/oidnTest" | grep 'libOpenImageDenoise.so.2 ')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU:   /'

summary() { # the last line of Catch2's summary
  grep -E "^(All tests passed|test cases:)" "$1" | tail -1
}

# 1. oidnTest on the CUDA device: lull, then OIDN for reference
for who in lull oidn; do
  bin=$tree/bin
  [ "$who" = oidn ] && bin=$oidn/bin
  start=$(date +%s)
  "$bin/oidnTest" --device cuda --durations yes > "$out/oidnTest_cuda_$who.log" 2>&1
  echo "oidnTest --device cuda on $who: exit $?, $(summary "$out/oidnTest_cuda_$who.log"), $(( $(date +%s) - start )) s"
done

# 2. the kinds of external memory and semaphores each CUDA device imports:
# lull's semaphore flags (OPAQUE_FD 1, TIMELINE_SEMAPHORE_FD 128) take
# OIDN's pattern (docs/oidn-compatibility.md); OIDN's device reporting the
# same value confirms them
if command -v python3 >/dev/null 2>&1; then
  for who in lull oidn; do
    path=$tree/lib/libOpenImageDenoise.so.2
    [ "$who" = oidn ] && path=$oidn/lib/libOpenImageDenoise.so.2
    python3 - "$path" "$who" <<'EOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.oidnNewDevice.restype = ctypes.c_void_p
lib.oidnCommitDevice.argtypes = [ctypes.c_void_p]
lib.oidnGetDeviceInt.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
device = lib.oidnNewDevice(3)  # OIDN_DEVICE_TYPE_CUDA
if not device:
    sys.exit(f"{sys.argv[2]}: no CUDA device")
lib.oidnCommitDevice(device)
values = {name: lib.oidnGetDeviceInt(device, name.encode())
          for name in ("version", "externalMemoryTypes", "externalSemaphoreTypes")}
print(f"{sys.argv[2]} CUDA device: {values}")
EOF
  done 2>&1 | tee "$out/external_types.log"
fi

# 3. oidnBenchmark side by side
bench() { # who device quality size -> msec/image
  bin=$tree/bin
  [ "$1" = oidn ] && bin=$oidn/bin
  extra=""
  [ "$2" = cpu ] && extra="--threads 2"
  # shellcheck disable=SC2086
  "$bin/oidnBenchmark" -d "$2" -q "$3" -r "RT.hdr_alb_nrm.$4\$" -n "$runs" $extra \
    >> "$out/oidnBenchmark_$1_$2.log" 2>&1
  grep -E "^RT\.hdr_alb_nrm\.$4 " "$out/oidnBenchmark_$1_$2.log" | tail -1 |
    sed -E 's/^[^ ]+ [.]+ ([0-9.]+) msec\/image.*/\1/' # (not the "host" figure after it)
}
devices=cuda
[ "${LULL_BENCH_CPU:-0}" = 1 ] && devices="cuda cpu"
table=$out/table.md
{
  echo "oidnBenchmark RT hdr_alb_nrm (float), $runs runs, msec/image; lull / OIDN: time ratio (below 1: lull faster)"
  echo
  echo "| device | quality | size | OIDN 2.5.1 | lull | lull / OIDN |"
  echo "|---|---|---|---:|---:|---:|"
} > "$table"
for device in $devices; do
  for quality in high fast; do
    for size in 1280x720 1920x1080 3840x2160; do
      o=$(bench oidn "$device" "$quality" "$size")
      l=$(bench lull "$device" "$quality" "$size")
      ratio=$(awk -v l="$l" -v o="$o" 'BEGIN { if (o > 0 && l > 0) printf "%.3f", l / o; else print "-" }')
      label=$device
      [ "$device" = cpu ] && label="cpu, 2 threads"
      echo "| $label | $quality | $size | ${o:--} | ${l:--} | $ratio |" >> "$table"
    done
  done
done
cat "$table"
