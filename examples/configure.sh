#!/bin/sh
# Configures a CMake build of lull for the set-up scripts (bootstrap.sh,
# tests/run.sh), with CMake's full output in BUILD/cmake-configure.log, and
# prints what the build has (the "-- lull:" lines of the log: CUDA and its
# architectures, OpenImageIO, Python, bpy for the add-on tests, sanitizers).
#
#   sh examples/configure.sh BUILD [CMAKE_ARGS...]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
shift
mkdir -p "$build"
log="$build/cmake-configure.log"
if ! cmake -S "$root" -B "$build" "$@" >"$log" 2>&1; then
  tail -n 30 "$log"
  printf 'lull: configuring %s failed; the full log is %s\n' "$build" "$log"
  exit 1
fi
printf 'lull: configured %s (full log: %s):\n' "$build" "$log"
sed -n 's/^-- lull: /  /p' "$log"
