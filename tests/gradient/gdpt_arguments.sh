#!/bin/sh
# gdpt refuses bad arguments with exit status 2 and a message, before it
# renders anything: they had been read as 0 or 2^64 - 1 ("--seed abc",
# "--seed -1", "--ref-first-sample -5"), or a trailing "junk" ignored
# ("--size 4x3junk"), or an all-NaN direct-light image written
# ("--direct-only --ref-spp 0"); histograms of 0 or 33 bins, or in PFM
# (which holds three channels).
#   sh gdpt_arguments.sh path/to/gdpt
gdpt=${1:?usage: gdpt_arguments.sh GDPT}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for args in "--seed abc" "--seed -1" "--seed 12x" "--size 4x3junk" "--size 1x8" \
            "--direct-only --ref-spp 0" "--ref-first-sample -5" "--spp 3" \
            "--histogram-bins 0" "--histogram-bins 33" "--histogram-bins 8 --format pfm"; do
  # shellcheck disable=SC2086
  "$gdpt" --out "$out" --scene cornell --size 8x6 --spp 2 --ref-spp 0 $args >/dev/null 2>"$out/err"
  rc=$?
  if [ "$rc" -ne 2 ] || [ ! -s "$out/err" ] || ls "$out" | grep -q '\.exr$'; then
    echo "gdpt $args: exit $rc, expected 2 with a message and no image"
    status=1
  fi
done
# and good ones still run (no reference: a second, tiny render), the
# histograms beside the halves
"$gdpt" --out "$out" --scene cornell --size 8x6 --spp 2 --ref-spp 0 --seed 7 \
  --histogram-bins 4 >/dev/null 2>&1 ||
  { echo "gdpt with good arguments failed"; status=1; }
for half in A B; do
  [ -s "$out/cornell-$half-histogram.exr" ] ||
    { echo "gdpt --histogram-bins wrote no cornell-$half-histogram.exr"; status=1; }
done
exit $status
