#!/bin/sh
# Runs the GPU tests, the à-trous and Poisson benchmarks and
# compute-sanitizer on a machine with an NVIDIA GPU.  Logs go to $OUT (or
# ./device-logs; the GPU tests' output in ctest-output.log).
#   sh tests/gpu/device_run.sh [bench-repeats]
# LULL_DEVICE_BENCH (default "atrous poisson"; "regression" adds the
# Regression benchmarks) and LULL_DEVICE_SANITIZE (default "test_cuda_atrous
# test_cuda_api test_cuda_poisson test_cuda_gradient_domain
# test_cuda_atrous_tiles test_cuda_temporal test_cuda_regression") pick the
# benchmarks and the programs compute-sanitizer runs.
# The Python module is built when the machine has Python's headers (then
# the test python_gpu, label gpu, runs too, with pytest and NumPy there).
# Builds with CUDA into $LULL_BUILD (default build-device), for the
# architectures in $LULL_CUDA_ARCH (default 90-real, the H100/H200 the
# figures come from; e.g. 89-real for an RTX 40xx, or the library's
# default list "75-real;80-real;86-real;89-real;90-real;90-virtual"), unless
# LULL_PREBUILT names a folder made by `sh tests/gpu/device_run.sh pack`
# on the development machine (bin/, lib/ and the CTest files of a build
# configured with -DLULL_CUDA_ARCHITECTURES=90-real), which is copied to
# $LULL_BUILD instead: the GPU machine's time then goes to running only.
#   LULL_BUILD=build-x sh tests/gpu/device_run.sh pack DIR   # here
#   LULL_BUILD=build-x LULL_PREBUILT=DIR sh tests/gpu/device_run.sh 20   # there
# Needs .gpu/testdata from tests/gpu/export_testdata.py for the render test
# and from tests/gpu/export_gradient_testdata.py for the gradient scenes.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${LULL_BUILD:-$root/build-device}
case "$build" in /*) ;; *) build=$root/$build ;; esac

if [ "${1:-}" = pack ]; then
  dest=${2:?pack needs a folder}
  rm -rf "$dest" && mkdir -p "$dest" && dest=$(cd "$dest" && pwd)
  (cd "$build" && find . -name CTestTestfile.cmake -o -path ./bin/\* -o -path ./lib/\*.so\* |
     grep -v '\.a$' | while read -r f; do mkdir -p "$dest/$(dirname "$f")"; cp -P "$f" "$dest/$f"; done)
  du -sh "$dest"
  exit 0
fi

out=${OUT:-$root/device-logs}
mkdir -p "$out"
log="$out/log"
: >"$log"
say() { printf '== %s\n' "$*" | tee -a "$log"; }
jobs=$(nproc 2>/dev/null || echo 4)
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

if [ -n "${LULL_PREBUILT:-}" ]; then
  say "prebuilt build from $LULL_PREBUILT"
  mkdir -p "$build" && cp -a "$LULL_PREBUILT/." "$build/"
else
  say "configure and build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLULL_TOOLS=OFF \
    -DLULL_CUDA_ARCHITECTURES="${LULL_CUDA_ARCH:-90-real}" >>"$log" 2>&1 &&
    cmake --build "$build" -j "$jobs" >>"$log" 2>&1 || { say "BUILD FAILED"; tail -40 "$log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >>"$log" 2>&1

say "GPU tests ($(elapsed))"
(cd "$build" && ctest -L gpu --output-on-failure) >"$out/tests.log" 2>&1
cp "$build/Testing/Temporary/LastTest.log" "$out/ctest-output.log" 2>/dev/null
(cd "$build" && ctest -R "atrous_layout|atrous_emulation|poisson_emulation|regression_emulation|cuda_devices" --output-on-failure) >>"$out/tests.log" 2>&1
grep -E "tests passed|Failed|Not Run" "$out/tests.log" | tee -a "$log"
benches=${LULL_DEVICE_BENCH:-atrous poisson}
case " $benches " in *" atrous "*)
  "$build/bin/test_cuda_atrous" 2>&1 | tee -a "$log"
  say "benchmark ($(elapsed))"
  "$build/bin/bench_atrous_cuda" "${1:-50}" >"$out/bench.log" 2>&1
  cat "$out/bench.log" >>"$log"
  grep -E "^==|device|level|total|prepare|H2D" "$out/bench.log" ;;
esac
case " $benches " in *" regression "*)
  say "Regression benchmarks ($(elapsed))"
  "$build/bin/bench_regression_steps" --runs "${1:-10}" >"$out/bench_regression_steps.log" 2>&1
  tee -a "$log" <"$out/bench_regression_steps.log"
  # the CPU side at 720p only (a minute a frame of halves on 16 cores)
  "$build/bin/bench_regression" --runs "${1:-10}" --cpu-runs 1 --cpu-sizes 720 \
    >"$out/bench_regression.log" 2>&1
  tee -a "$log" <"$out/bench_regression.log" ;;
esac
case " $benches " in *" poisson "*)
  say "Poisson benchmark ($(elapsed))"
  "$build/bin/bench_poisson_cuda" --repeats "${1:-10}" >"$out/bench_poisson.log" 2>&1
  tee -a "$log" <"$out/bench_poisson.log" ;;
esac

# memcheck: invalid accesses and leaks; racecheck: shared-memory races;
# initcheck: device memory read before it was written (e.g. a padding or
# halo a kernel reads but no kernel filled)
# (test_cuda_poisson runs its quick part: without the scenes and 1280x720,
# and under racecheck its race part, iterations capped at 3;
# test_cuda_gradient_domain its quick part, under racecheck its tiny case;
# test_cuda_atrous_tiles its grids, and under racecheck one grid of a
# smaller image per schedule; test_cuda_regression its small cases, under
# racecheck its tiny ones)
for tool in memcheck racecheck initcheck; do
  for test in ${LULL_DEVICE_SANITIZE:-test_cuda_atrous test_cuda_api test_cuda_poisson test_cuda_gradient_domain
    test_cuda_atrous_tiles test_cuda_temporal test_cuda_regression}; do
    [ -x "$build/bin/$test" ] || continue
    args=
    [ "$test" = test_cuda_poisson ] && args=quick
    [ "$test" = test_cuda_gradient_domain ] && args=quick
    [ "$test" = test_cuda_regression ] && args=quick
    [ "$test" = test_cuda_atrous_tiles ] && args=grids
    [ "$test.$tool" = test_cuda_atrous_tiles.racecheck ] && args=race
    [ "$test.$tool" = test_cuda_poisson.racecheck ] && args=race
    [ "$test.$tool" = test_cuda_gradient_domain.racecheck ] && args=tiny
    [ "$test.$tool" = test_cuda_regression.racecheck ] && args=tiny
    say "compute-sanitizer $tool $test ($(elapsed))"
    timeout "${LULL_SANITIZER_TIMEOUT:-150}" compute-sanitizer --tool "$tool" --report-api-errors no \
      --error-exitcode 99 "$build/bin/$test" $args >"$out/$tool.$test.log" 2>&1
    printf '%s %s: exit %s; %s\n' "$tool" "$test" "$?" \
      "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.$test.log" | tail -1)" | tee -a "$log"
  done
done
say "done ($(elapsed))"
