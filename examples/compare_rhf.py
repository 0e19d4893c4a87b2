#!/usr/bin/env python3
"""The RHF filter (ray histogram fusion) on gdpt's scenes beside lull's
other filters: relMSE, PSNR and SSIM against the scenes' references
(lull.metrics), and the time per image.

The histograms come from gdpt (examples/gdpt), which writes them beside
the halves with --histogram-bins B:

    gdpt --out DIR --scene all --spp 32 --ref-spp 0 --histogram-bins 8
    python3 examples/compare_rhf.py DIR [--reference tests/data/gradient]

With the default seed gdpt renders the same halves as tests/data/gradient,
whose references (75776 samples a pixel) the rows are measured against.
Every filter gets the same pixels: the colour is the halves' mean of
primal + direct (the plain path-traced image of 32 samples), the
histograms are the halves' sums; ATrous and RT get the first-hit albedo,
normal and depth, Regression and RDFC the two halves.  With pyoidn
installed (pip install pyoidn) OIDN's RT runs on the same colour, albedo
and normal (compare_oidn.py's OidnRT, CPU).
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                "python"))
import lull  # noqa: E402


def read(path, key=""):
    passes = lull.read_exr(path)
    return np.ascontiguousarray(passes[key] if key in passes else next(iter(passes.values())),
                                dtype=np.float32)


def histogram(path):
    """(H, W, 3, B) from gdpt's passes histogram0 .. histogramB-1."""
    passes = lull.read_exr(path)
    bins = sorted((k for k in passes if k.startswith("histogram")), key=lambda k: int(k[9:]))
    return np.stack([passes[k] for k in bins], axis=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", help="gdpt's output folder, rendered with --histogram-bins")
    ap.add_argument("--reference", default=os.path.join(os.path.dirname(__file__), "..", "tests",
                                                        "data", "gradient"))
    ap.add_argument("--scenes", default="cornell,window,textured")
    ap.add_argument("--thresholds", default="1", help="RHF thresholds to run, e.g. 0.5,1,2")
    args = ap.parse_args()
    print("| scene | method | relMSE | PSNR | SSIM | ms |")
    print("|---|---|---|---|---|---|")
    for scene in args.scenes.split(","):
        p = lambda what: os.path.join(args.data, f"{scene}-{what}.exr")  # noqa: E731
        if not os.path.exists(p("A-histogram")):
            print(f"{scene}: no {p('A-histogram')} (render with --histogram-bins)",
                  file=sys.stderr)
            continue
        halves = [read(p(f"{h}-primal")) + read(p(f"{h}-direct")) for h in "AB"]
        color = np.ascontiguousarray((halves[0] + halves[1]) / 2)
        hist = histogram(p("A-histogram")) + histogram(p("B-histogram"))
        guides = {"albedo": read(p("albedo")), "normal": read(p("normal")),
                  "depth": read(p("depth"))}
        ref = read(os.path.join(args.reference, f"{scene}-reference.exr"))
        rows = [("noisy (32 spp)", lambda: color)]
        for k in args.thresholds.split(","):
            rows.append((f"RHF (threshold {k})",
                         lambda k=k: lull.denoise(color, filter="RHF", histogram=hist,
                                                  threshold=float(k))))
        rows += [
            ("ATrous (albedo, normal, depth)",
             lambda: lull.denoise(color, filter="ATrous", **guides)),
            ("RT (quality HIGH: Regression, one buffer)",
             lambda: lull.denoise(color, filter="RT", **guides)),
            ("RDFC (halves)", lambda: lull.denoise(colorA=halves[0], colorB=halves[1],
                                                   filter="RDFC", **guides)),
            ("Regression (halves)", lambda: lull.denoise(colorA=halves[0], colorB=halves[1],
                                                         **guides)),
        ]
        try:
            import pyoidn
            from compare_oidn import OidnRT
            oidn = OidnRT(pyoidn, "cpu", 0)

            def run_oidn():
                oidn.prepare({"color": color, **guides})
                out = oidn.run().copy()
                oidn.release()
                return out
            rows.append(("OIDN 2.5 RT (albedo, normal)", run_oidn))
        except ImportError:
            pass
        for name, run in rows:
            t0 = time.perf_counter()
            out = run()
            ms = (time.perf_counter() - t0) * 1e3
            m = lull.metrics(out, ref)
            print(f"| {scene} | {name} | {m['relmse']:.4f} | {m['psnr']:.2f} | "
                  f"{m['ssim']:.3f} | {ms:.0f} |", flush=True)


if __name__ == "__main__":
    main()
