#!/bin/sh
# Prepares a fresh Debian 12 machine and builds lull (used by the README's
# two commands, examples/demo.sh and tests/run.sh).
#
#   sh examples/bootstrap.sh [--tests]
#
# 1. Debian packages: installed with apt-get when run as root; otherwise the
#    exact apt-get line is printed and the script stops.
# 2. A Python virtual environment in .venv (NumPy; with --tests also pytest,
#    Blender's bpy for the add-on's end-to-end test, OpenEXR's binding for
#    the GPU test-data export, and pyoidn 2.5.1 for OIDN's own programs).
# 3. CMake configure and build in build/ (LULL_BUILD overrides), with the
#    CUDA backend when nvcc is found (LULL_CUDA=OFF leaves it out;
#    LULL_CUDA_ARCHITECTURES=90-real builds for one GPU instead of six
#    architectures, much faster).  The configuration's full log goes to
#    build/cmake-configure.log; a summary of what was found is printed.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${LULL_BUILD:-$root/build}
venv=${LULL_VENV:-$root/.venv}
with_tests=0
[ "${1:-}" = "--tests" ] && with_tests=1

say() { printf 'lull: %s\n' "$*"; }

# -- 1. Debian packages -------------------------------------------------------
# openimageio-tools: libopenimageio-dev's CMake package names its programs
# (/usr/bin/iconvert ...) as imported targets and fails without them
packages="build-essential cmake pkg-config libopenimageio-dev openimageio-tools libopenexr-dev
python3 python3-dev python3-venv python3-pip"
# tests: valgrind; clang with its sanitizer and libFuzzer runtimes, its
# OpenMP and llvm-symbolizer for the sanitizer build of tests/run.sh
[ "$with_tests" = 1 ] && packages="$packages valgrind clang libclang-rt-14-dev libomp-14-dev llvm"
missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing Debian packages:$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  else
    say "missing Debian packages; run as root, or install them first:"
    echo "  sudo apt-get install -y$missing"
    exit 1
  fi
fi

# -- 2. Python environment ------------------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
  say "creating the Python environment $venv"
  /usr/bin/python3 -m venv "$venv"
fi
pip_install() {
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
}
"$venv/bin/python" -c "import numpy" 2>/dev/null || pip_install numpy
if [ "$with_tests" = 1 ]; then
  "$venv/bin/python" -c "import pytest" 2>/dev/null || pip_install pytest
  # OpenEXR's Python binding: tests/gpu/export_*testdata.py write the test
  # renders as PFM for the GPU machine, which has no EXR reader
  "$venv/bin/python" -c "import OpenEXR" 2>/dev/null || pip_install OpenEXR
  # Blender as a Python module, for the add-on's end-to-end test (~350 MB)
  "$venv/bin/python" -c "import bpy" 2>/dev/null || pip_install "bpy>=4.2"
  # OIDN 2.5.1's own programs (oidnTest, oidnDenoise, oidnBenchmark in
  # pyoidn/oidn/bin), run against lull by the ctest label conformance
  "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('pyoidn').startswith('2.5.1')" \
    2>/dev/null || pip_install "pyoidn==2.5.1"
fi

# -- 3. Build ---------------------------------------------------------------------
set -- -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$venv/bin/python"
[ -n "${LULL_CUDA:-}" ] && set -- "$@" -DLULL_CUDA="$LULL_CUDA"
[ -n "${LULL_CUDA_ARCHITECTURES:-}" ] && set -- "$@" -DLULL_CUDA_ARCHITECTURES="$LULL_CUDA_ARCHITECTURES"
sh "$root/examples/configure.sh" "$build" "$@"
jobs=$(nproc 2>/dev/null || echo 2)
say "building with $jobs jobs"
cmake --build "$build" -j "$jobs"
