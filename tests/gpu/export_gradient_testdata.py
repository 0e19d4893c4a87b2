#!/usr/bin/env python3
"""Exports the gradient-domain test scenes to PFM files for the GPU tests.

The GPU machine has no EXR reader, so the passes that the CUDA Poisson tests
need are written here as PFM (float32 RGB) into .gpu/testdata/gradient (git
ignores .gpu/; the device tool carries it):

    .venv/bin/python tests/gpu/export_gradient_testdata.py

For every scene NAME of tests/data/gradient (tests/data/gradient/README.md)
it writes the halves NAME-{A,B}-{primal,dx,dy}.pfm (the tests form the full
buffers as their means, as tests/gradient/scene_data.c does),
NAME-reference.pfm and NAME-reference-direct.pfm, and GradientDomain's
features: NAME-{albedo,normal,depth}.pfm (depth in all three channels) and
NAME-feature-variance.pfm (the channel means of the albedo's and the
normal's variance and the depth's, as tests/gradient/scene_data.c forms
them): 20 MB for the three scenes.
"""
import pathlib

import numpy as np
import OpenEXR

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "data" / "gradient"
OUT = ROOT / ".gpu" / "testdata" / "gradient"


def write_pfm(path, image):
    image = np.asarray(image, dtype="<f4")
    height, width = image.shape[:2]
    with open(path, "wb") as f:
        f.write(b"PF\n%d %d\n-1.0\n" % (width, height))
        f.write(np.ascontiguousarray(image[::-1]).tobytes())  # bottom row first


def read_rgb(path):
    channels = OpenEXR.File(str(path)).parts[0].channels
    return channels["RGB"].pixels.astype(np.float32)


def read_first(path):
    """The first channel of a one-channel pass."""
    channels = OpenEXR.File(str(path)).parts[0].channels
    pixels = next(iter(channels.values())).pixels.astype(np.float32)
    return pixels if pixels.ndim == 2 else pixels[..., 0]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    written = 0
    for primal_a in sorted(SOURCE.glob("*-A-primal.exr")):
        scene = primal_a.name[: -len("-A-primal.exr")]
        for part in ("primal", "dx", "dy"):
            for h in "AB":
                write_pfm(OUT / f"{scene}-{h}-{part}.pfm", read_rgb(SOURCE / f"{scene}-{h}-{part}.exr"))
                written += 1
        for part in ("reference", "reference-direct", "albedo", "normal"):
            write_pfm(OUT / f"{scene}-{part}.pfm", read_rgb(SOURCE / f"{scene}-{part}.exr"))
            written += 1
        depth = read_first(SOURCE / f"{scene}-depth.exr")
        write_pfm(OUT / f"{scene}-depth.pfm", np.stack([depth] * 3, axis=-1))
        variance = np.stack([read_rgb(SOURCE / f"{scene}-var-albedo.exr").mean(axis=-1, dtype=np.float32),
                             read_rgb(SOURCE / f"{scene}-var-normal.exr").mean(axis=-1, dtype=np.float32),
                             read_first(SOURCE / f"{scene}-var-depth.exr")], axis=-1)
        write_pfm(OUT / f"{scene}-feature-variance.pfm", variance)
        written += 2
    print(f"wrote {written} files to {OUT}")
    return 0 if written else 1


if __name__ == "__main__":
    raise SystemExit(main())
