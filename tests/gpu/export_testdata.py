#!/usr/bin/env python3
"""Exports the test renders' passes to PFM files for the GPU tests.

The GPU machine has no EXR reader, so the passes the CUDA tests need are
written here as PFM (float32, 3 or 1 channels) into .gpu/testdata (git
ignores .gpu/; the device tool carries it):

    .venv/bin/python tests/gpu/export_testdata.py

For every tests/data/<scene>/<scene>_spp4.exr (and <scene>_ref.exr when
present) it writes <scene>_spp4_{color,albedo,normal,depth}.pfm and
<scene>_ref_color.pfm.  Blender's channel names: ViewLayer.Combined,
ViewLayer.Denoising Albedo / Normal / Depth.
"""
import pathlib
import sys

import numpy as np
import OpenEXR

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / ".gpu" / "testdata"


def write_pfm(path, image):
    image = np.asarray(image, dtype="<f4")
    height, width = image.shape[:2]
    channels = 1 if image.ndim == 2 else image.shape[2]
    kind = b"PF" if channels == 3 else b"Pf"
    with open(path, "wb") as f:
        f.write(b"%s\n%d %d\n-1.0\n" % (kind, width, height))
        f.write(np.ascontiguousarray(image[::-1]).tobytes())  # bottom row first


def passes(path):
    part = OpenEXR.File(str(path)).parts[0]
    ch = part.channels

    def get(name):
        for key in (f"ViewLayer.{name}", name):
            if key in ch:
                return ch[key].pixels.astype(np.float32)
        return None

    out = {}
    combined = get("Combined")
    if combined is not None:
        out["color"] = combined[..., :3]
    albedo = get("Denoising Albedo")
    if albedo is not None:
        out["albedo"] = albedo[..., :3]
    normal = [get(f"Denoising Normal.{c}") for c in "XYZ"]
    if all(n is not None for n in normal):
        out["normal"] = np.stack(normal, axis=-1)
    depth = get("Denoising Depth.Z")
    if depth is not None:
        out["depth"] = depth
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    written = 0
    for scene_dir in sorted((ROOT / "tests" / "data").glob("*")):
        scene = scene_dir.name
        noisy = scene_dir / f"{scene}_spp4.exr"
        if not noisy.exists():
            continue
        for name, image in passes(noisy).items():
            write_pfm(OUT / f"{scene}_spp4_{name}.pfm", image)
            written += 1
        ref = scene_dir / f"{scene}_ref.exr"
        if ref.exists():
            write_pfm(OUT / f"{scene}_ref_color.pfm", passes(ref)["color"])
            written += 1
    print(f"wrote {written} files to {OUT}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
