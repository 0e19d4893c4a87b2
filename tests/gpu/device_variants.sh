#!/bin/sh
# A/B runs of bench_atrous_cuda on the GPU machine: builds the benchmark
# once per variant of the source tree, then runs the variants in turn,
# twice, so that every comparison is measured in the same minutes
# (cuda/NOTES.md's "before -> after" figures come from such runs).
#
#   sh tests/gpu/device_variants.sh VARIANTS_FILE
#
# VARIANTS_FILE is shell: it sets VARIANTS (names, in run order), SIZES
# (bench_atrous_cuda size indices: 0 512x512 .. 3 3840x2160) and calls
#   mk NAME "COMMAND" &
# per variant, COMMAND run in a copy of the tree at /tmp/variants/NAME
# before it is built (e.g. "true" for the tree as it is, a sed of a
# constant, or "patch -s -R -p1 < diff" with a diff against the last
# commit to get the commit back).  RUNS (default 30) is the benchmark's
# repeat count.  Builds run in parallel (-j5 each).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
list=${1:?usage: device_variants.sh VARIANTS_FILE}
case "$list" in /*) ;; *) list=$(pwd)/$list ;; esac
mkdir -p /tmp/variants
mk() {
  name=$1
  shift
  rm -rf "/tmp/variants/$name" "/tmp/variants/build_$name"
  cp -r "$root" "/tmp/variants/$name"
  (cd "/tmp/variants/$name" && eval "$*")
  (cmake -S "/tmp/variants/$name" -B "/tmp/variants/build_$name" -DCMAKE_BUILD_TYPE=Release \
     -DLULL_TOOLS=OFF -DLULL_PYTHON=OFF -DLULL_CUDA_ARCHITECTURES=90-real \
     >"/tmp/variants/$name.log" 2>&1 &&
   cmake --build "/tmp/variants/build_$name" -j5 --target bench_atrous_cuda \
     >>"/tmp/variants/$name.log" 2>&1) ||
    { echo "BUILD FAILED: $name"; tail -20 "/tmp/variants/$name.log"; }
}
. "$list"
wait
for round in 1 2; do
  for v in $VARIANTS; do
    for size in $SIZES; do
      echo "== $v round $round size $size"
      "/tmp/variants/build_$v/bin/bench_atrous_cuda" "${RUNS:-30}" "$size" 2>&1 |
        grep -E "prepare|level [0-4]|total|guide kernel|blocks/SM"
    done
  done
done
