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
# LULL_QUICK=1: a quick local run: step 1 without the tests labelled
# valgrind or slow (the longest hardening tests) and no step 2.  CI
# (.ci/run) runs everything.  The environment of examples/bootstrap.sh
# applies too (LULL_CUDA=OFF, LULL_CUDA_ARCHITECTURES=90-real).
#
# GPU tests carry the ctest label "gpu"; run them on a machine with an
# NVIDIA GPU with `ctest --test-dir build -L gpu` (tests/gpu/device_run.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LULL_BUILD:-$root/build}
asan=${LULL_ASAN_BUILD:-$root/build-asan}
say() { printf 'lull: %s\n' "$*"; }
quick=${LULL_QUICK:-0}
exclude="gpu"
sanitize=1
if [ "$quick" = 1 ]; then
  exclude="gpu|valgrind|slow"
  sanitize=0
fi
[ "${LULL_SKIP_SANITIZE:-0}" = 1 ] && sanitize=0
# the labels the sanitizer run leaves out (valgrind and ASan exclude each
# other; no Python module there); tests/docs checks the test count the
# docs give against this selection
sanitizer_exclude="gpu|valgrind|python|blender"

sh "$root/examples/bootstrap.sh" --tests
if [ "$quick" = 1 ]; then
  say "LULL_QUICK=1: without the valgrind and slow tests, no sanitizer build"
elif [ "$sanitize" = 1 ]; then
  say "then the sanitizer build in $asan (LULL_QUICK=1 or LULL_SKIP_SANITIZE=1 leave it out)"
fi
jobs=$(nproc 2>/dev/null || echo 2)
say "running the tests of $build (ctest --label-exclude '$exclude')"
ctest --test-dir "$build" --label-exclude "$exclude" --output-on-failure -j "$jobs"

[ "$sanitize" = 1 ] || exit 0
set -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLULL_SANITIZE=ON -DLULL_PYTHON=OFF -DLULL_CUDA=OFF \
  -DLULL_FUZZ_SECONDS="${LULL_FUZZ_SECONDS:-20}"
if command -v clang >/dev/null 2>&1 && command -v clang++ >/dev/null 2>&1; then
  set -- "$@" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
fi
sh "$root/examples/configure.sh" "$asan" "$@"
cmake --build "$asan" -j "$jobs"
say "running the tests of $asan under the sanitizers (ctest --label-exclude '$sanitizer_exclude')"
UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan" --label-exclude "$sanitizer_exclude" --output-on-failure -j "$jobs"
