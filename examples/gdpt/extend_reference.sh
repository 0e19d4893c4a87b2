#!/bin/sh
# Renders more samples of the gdpt references within a time budget, in
# chunks that continue each other (gdpt --reference-only
# --ref-first-sample), merged as they finish, so a run cut short still
# leaves a complete reference of every finished chunk.  Meant for a machine
# with many cores (the references are the slow part of the test data);
# output is float PFM, which needs no OpenImageIO.
#
#   sh examples/gdpt/extend_reference.sh GDPT OUT FIRST CHUNK SECONDS [THREADS]
#
# GDPT: the gdpt binary; OUT: folder for NAME-reference.pfm and
# NAME-reference-direct.pfm of every scene; FIRST: the first sample (the
# sample count of the reference these continue, e.g. 8192); CHUNK: samples
# per chunk; SECONDS: no chunk starts that would end after this.  The
# samples rendered are written to OUT/samples.txt.  Then, on a machine with
# OpenEXR support:
#   gdpt --out tests/data/gradient --ref-spp FIRST --merge-reference OUT --merge-spp COUNT
set -eu
gdpt=$1 out=$2 first=$3 chunk=$4 budget=$5 threads=${6:-0}
mkdir -p "$out" "$out.part"
start=$(date +%s)
count=0
last=0
while :; do
  now=$(date +%s)
  [ $((now - start + last)) -le "$budget" ] || break
  "$gdpt" --out "$out.part" --reference-only --format pfm --size 256x192 --seed 1 \
    --ref-first-sample $((first + count)) --ref-spp "$chunk" --threads "$threads" 2>/dev/null
  if [ "$count" -eq 0 ]; then
    mv "$out.part"/*.pfm "$out"/
  else
    "$gdpt" --out "$out" --format pfm --size 256x192 --ref-spp "$count" \
      --merge-reference "$out.part" --merge-spp "$chunk"
  fi
  count=$((count + chunk))
  last=$(($(date +%s) - now))
  echo "samples $first .. $((first + count - 1)) ($count), chunk of $chunk took $last s"
  echo "first $first count $count" >"$out/samples.txt"
done
rm -rf "$out.part"
