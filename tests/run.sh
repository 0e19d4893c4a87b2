#!/bin/sh
# The README's test command: prepare the machine, build everything, run
# every test that needs no GPU (C tests, CLI tests, Python and Blender tests,
# all through ctest), then the C tests again under the sanitizers.
#
#   1. build/ (LULL_BUILD): everything; ctest without the label gpu.
#   2. build-asan/ (LULL_ASAN_BUILD): the library, the tool and the C tests
#      with AddressSanitizer + UndefinedBehaviorSanitizer (LULL_SANITIZE;
#      no Python module, no CUDA), built with clang when it is installed:
#      the fuzz harnesses then link libFuzzer and each fuzzes for
#      LULL_FUZZ_SECONDS (20) as a test.  ctest without the labels gpu,
#      valgrind (valgrind and ASan exclude each other), python and blender
#      (not built there).  Any finding (leaks included) fails its test.
#      LULL_SKIP_SANITIZE=1 leaves this step out.
#
# GPU tests carry the ctest label "gpu"; run them on a machine with an
# NVIDIA GPU with `ctest --test-dir build -L gpu` (tests/gpu/device_run.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LULL_BUILD:-$root/build}
sh "$root/examples/bootstrap.sh" --tests
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --label-exclude gpu --output-on-failure -j "$jobs"

[ "${LULL_SKIP_SANITIZE:-0}" = 1 ] && exit 0
asan=${LULL_ASAN_BUILD:-$root/build-asan}
set -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLULL_SANITIZE=ON -DLULL_PYTHON=OFF -DLULL_CUDA=OFF \
  -DLULL_FUZZ_SECONDS="${LULL_FUZZ_SECONDS:-20}"
if command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1; then
  set -- "$@" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
fi
printf 'lull: sanitizer build in %s\n' "$asan"
cmake -S "$root" -B "$asan" "$@" >/dev/null
cmake --build "$asan" -j "$jobs"
UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan" --label-exclude "gpu|valgrind|python|blender" --output-on-failure \
  -j "$jobs"
