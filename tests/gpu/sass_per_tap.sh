#!/bin/sh
# Instructions per tap of the à-trous kernels, read from the Hopper SASS
# (no GPU needed): compiles the kernel files for sm_90, disassembles them
# with nvdisasm (or cuobjdump) and counts, per kernel, the instructions from
# the first to the last ex2 of the stencil divided by its ex2 count (one per
# tap evaluation), plus the register use.
#   sh tests/gpu/sass_per_tap.sh [nvdisasm]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dis=${1:-$(command -v nvdisasm || command -v cuobjdump || true)}
[ -n "$dis" ] || { echo "needs nvdisasm or cuobjdump (pip: nvidia-cuda-nvdisasm)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in atrous_prepare atrous_baseline atrous_permuted; do
  nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -I"$root/cuda" -I"$root/core" \
    "$root/cuda/$f.cu" -o "$tmp/$f.cubin" 2>&1 | grep -E "registers" | sed 's/^/  /'
  case "$dis" in *cuobjdump) "$dis" -sass "$tmp/$f.cubin" ;; *) "$dis" "$tmp/$f.cubin" ;; esac >"$tmp/$f.sass"
  python3 - "$tmp/$f.sass" <<'PY'
import collections, re, sys
text = open(sys.argv[1]).read()
parts = re.split(r"\n\s*(?:\.text\.|Function : )(\S+?):?\n", text)
for i in range(1, len(parts), 2):
    lines = [l for l in parts[i + 1].split("\n") if re.search(r"/\*[0-9a-f]{4,}\*/", l)]
    ops = []
    for l in lines:
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", l)
        ops.append((m.group(1) if m else "", l))
    ex2 = [k for k, (o, l) in enumerate(ops) if o == "MUFU" and "EX2" in l]
    if not ex2:
        continue
    seg = [o for o, _ in ops[ex2[0] - 30 : ex2[-1] + 8]]
    c = collections.Counter(seg)
    print("%-60s %5d SASS, %3d taps, %.1f per tap: %s" % (parts[i][:60], len(ops), len(ex2),
          len(seg) / len(ex2), " ".join("%s %d" % kv for kv in c.most_common(7))))
PY
done
