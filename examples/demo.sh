#!/bin/sh
# The README's main command: prepare the machine, build everything, and
# denoise the bundled example render (a Cycles render with its albedo,
# normal and depth passes) with the command-line tool.  Writes
# build/demo/denoised.exr and build/demo/side_by_side.png (noisy | denoised
# | reference) and prints relMSE, PSNR and SSIM of the noisy and the
# denoised image against the high-sample reference.  Also writes the
# render's colour, albedo and normal as build/demo/{color,albedo,normal}.pfm,
# the inputs of the README's C example (examples/denoise_oidn.c).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LULL_BUILD:-$root/build}
sh "$root/examples/bootstrap.sh"
mkdir -p "$build/demo"
"$build/bin/lull" denoise "$root/examples/data/demo_spp16.exr" \
  -o "$build/demo/denoised.exr" \
  --reference "$root/examples/data/demo_ref.exr" \
  --side-by-side "$build/demo/side_by_side.png"
for pass in color:Combined "albedo:Denoising Albedo" "normal:Denoising Normal"; do
  "$build/bin/lull" extract "$root/examples/data/demo_spp16.exr" --pass "${pass#*:}" \
    -o "$build/demo/${pass%%:*}.pfm"
done
echo "lull: wrote $build/demo/denoised.exr and $build/demo/side_by_side.png"
echo "lull: and the render's passes for the C example: $build/demo/color.pfm, albedo.pfm, normal.pfm"
