#!/bin/sh
# The README's test command: prepare the machine, build everything, run
# every test that needs no GPU (C tests, CLI tests, Python and Blender tests,
# all through ctest).  GPU tests carry the ctest label "gpu"; run them on a
# machine with an NVIDIA GPU with `ctest --test-dir build -L gpu`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LULL_BUILD:-$root/build}
sh "$root/examples/bootstrap.sh" --tests
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir "$build" --label-exclude gpu --output-on-failure -j "$jobs"
