#!/usr/bin/env python3
"""lull side by side with Open Image Denoise on the test renders.

Denoises each noisy Cycles render of tests/data with OIDN's neural RT filter
(the official binaries, through the `pyoidn` package from PyPI) and with
lull's classical filters on the same device class, and prints relMSE, PSNR
and SSIM against the high-spp reference (lull.metrics: relMSE on linear
HDR, PSNR/SSIM on clamped sRGB, see core/metrics.h) and the time per image
(median of --repeats runs after a warm-up; execution only on the CPU, with
the host<->device copies on CUDA for both).

    pip install pyoidn                      # into the environment with lull
    PYTHONPATH=build/python python examples/compare_oidn.py [--device cpu|cuda]
        [--data tests/data] [--scenes cornell indirect] [--spp 4 16 64]
        [--repeats 5] [--threads N] [--png DIR]

Without pyoidn the lull rows are printed alone.  Both libraries use the
same inputs: colour (RGB), albedo, normal, plus depth where a row says so.

Two halves (tests/data/<scene>/<scene>_spp<N>_A.exr and _B.exr, N/2
samples each, the same N in total): lull's Regression takes the halves
(colorA/colorB and each guide's halves), OIDN their mean (colour and
guides), as issue 27's quality targets compare them; their noisy row is
the halves' mean, another render of N samples than <scene>_spp<N>.exr.
Rows of a filter this build of lull lacks are left out.

With --png DIR it writes DIR/<scene>_spp<N>.png for each scene and sample
count: noisy | lull ATrous | lull RT HIGH (Regression, one buffer) | lull
Regression on the halves | OIDN | reference, side by side (8-bit sRGB,
clipped to [0, 1]).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

import lull

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(os.path.dirname(HERE), "tests", "data")


def positive_int(text):
    """argparse type: a whole number >= 1 (0 runs have no median)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: needs at least 1")
    return value


def median_time(run, repeats):
    run()  # warm-up: first-touch allocations, OIDN's weight upload
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# -- OIDN through pyoidn -------------------------------------------------------------


class OidnRT:
    name = "OIDN RT (neural)"

    def __init__(self, pyoidn, kind, threads):
        self.pyoidn = pyoidn
        self.kind = kind
        types = {"cpu": pyoidn.OIDN_DEVICE_TYPE_CPU, "cuda": pyoidn.OIDN_DEVICE_TYPE_CUDA}
        self.device = pyoidn.Device(types[kind])
        if threads and kind == "cpu":
            self.device.set_int("numThreads", threads)
        self.device.commit()
        error = self.device.get_error()
        if error:
            raise RuntimeError(f"OIDN {kind} device: {error}")

    def prepare(self, inputs):
        p = self.pyoidn
        color = inputs["color"]
        self.out = np.zeros_like(color)
        self.filter = p.Filter(self.device, "RT")
        self.buffers = {}
        for name in ("color", "albedo", "normal", "output"):
            array = self.out if name == "output" else inputs[name]
            if self.kind == "cpu":
                self.filter.set_image(name, array, p.OIDN_FORMAT_FLOAT3)
            else:
                buf = p.Buffer(self.device, array.nbytes)
                self.buffers[name] = (buf, array)
                self.filter.set_image(name, buf, p.OIDN_FORMAT_FLOAT3, array.shape[1],
                                      array.shape[0])
        self.filter.set_bool("hdr", True)
        self.filter.commit()
        error = self.device.get_error()
        if error:
            raise RuntimeError(f"OIDN: {error}")

    def run(self):
        if self.kind == "cuda":
            for name, (buf, array) in self.buffers.items():
                if name != "output":
                    buf.write(0, array.nbytes, array)
        self.filter.execute()
        if self.kind == "cuda":
            buf, array = self.buffers["output"]
            buf.read(0, array.nbytes, self.out)
        self.device.wait()
        return self.out

    def release(self):
        for buf, _ in self.buffers.values():
            buf.release()
        self.filter.release()


# -- lull ---------------------------------------------------------------------------------


class LullFilter:
    """A lull filter on the images `images` of the inputs (the first one's
    shape is the output's)."""

    def __init__(self, device, filter_type, images, name, **params):
        self.device = device
        self.filter_type = filter_type
        self.images = images
        self.name = name
        self.params = params

    def prepare(self, inputs):
        self.out = np.zeros_like(inputs[self.images[0]])
        self.filter = self.device.new_filter(self.filter_type)
        for image in self.images:
            self.filter.set_image(image, inputs[image])
        self.filter.set_image("output", self.out)
        for key, value in self.params.items():
            self.filter[key] = value
        self.filter.commit()

    def run(self):
        self.filter.execute()
        return self.out

    def release(self):
        self.filter.close()


def read_inputs(path):
    """colour (RGB), albedo, normal and depth of a test render."""
    passes = lull.read_exr(path)
    get = lambda name: np.ascontiguousarray(passes[f"ViewLayer.{name}"])  # noqa: E731
    return {
        "color": np.ascontiguousarray(get("Combined")[..., :3]),
        "albedo": get("Denoising Albedo"),
        "normal": get("Denoising Normal"),
        "depth": get("Denoising Depth"),
    }


def load(data, scene, spp):
    noisy_path = os.path.join(data, scene, f"{scene}_spp{spp}.exr")
    ref_path = os.path.join(data, scene, f"{scene}_ref.exr")
    if not (os.path.exists(noisy_path) and os.path.exists(ref_path)):
        return None
    ref = np.ascontiguousarray(lull.read_exr(ref_path)["ViewLayer.Combined"][..., :3])
    return read_inputs(noisy_path), ref


def load_halves(data, scene, spp):
    """The two halves of N = spp samples: (the halves' images as colorA,
    colorB, albedoA, ..., their mean as color, albedo, ...), or None."""
    paths = [os.path.join(data, scene, f"{scene}_spp{spp}_{h}.exr") for h in "AB"]
    if not all(os.path.exists(p) for p in paths):
        return None
    a, b = (read_inputs(p) for p in paths)
    halves = {name + h: images[name] for name in a for h, images in (("A", a), ("B", b))}
    mean = {name: np.ascontiguousarray((a[name] + b[name]) / 2) for name in a}
    return halves, mean


def run_rows(methods, inputs, ref, scene, spp, repeats):
    """Prints a row a method; returns their results by name."""
    results = {}
    for method in methods:
        method.prepare(inputs)
        seconds = median_time(method.run, repeats)
        results[method.name] = np.array(method.run())
        m = lull.metrics(results[method.name], ref)
        method.release()
        print(f"| {scene} | {spp} | {method.name} | {m['relmse']:.4f} | "
              f"{m['psnr']:.2f} | {m['ssim']:.4f} | {1000 * seconds:.1f} |")
    return results


# the columns of the --png strips, by row name (those present)
STRIP = ("noisy input", "lull ATrous +depth", "lull RT HIGH +depth", "lull Regression (halves) +depth",
         OidnRT.name, "reference")


def write_strip(path, images, gap=4):
    """The images of STRIP present in `images`, side by side, as a PNG."""
    from temporal_compare import write_png  # the same folder: its PNG writer

    row = [images[name] for name in STRIP if name in images]
    h = row[0].shape[0]
    spacer = np.ones((h, gap, 3), dtype=np.float32)
    parts = [p for image in row for p in (image, spacer)][:-1]
    write_png(path, np.concatenate(parts, axis=1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=DEFAULT_DATA)
    parser.add_argument("--scenes", nargs="+", default=["cornell", "indirect", "dof_glossy"])
    parser.add_argument("--spp", nargs="+", type=int, default=[4, 16, 64])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--repeats", type=positive_int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    parser.add_argument("--png", default="", help="folder for side-by-side pictures")
    args = parser.parse_args(argv)
    if args.png:
        os.makedirs(args.png, exist_ok=True)

    device = lull.Device(args.device, num_threads=args.threads or None)
    guides = ("albedo", "normal")
    methods = [
        # OIDN's default quality, HIGH (6), named: one buffer
        LullFilter(device, "RT", ("color",) + guides, "lull RT HIGH", hdr=True, quality=6),
        LullFilter(device, "RT", ("color",) + guides + ("depth",), "lull RT HIGH +depth",
                   hdr=True, quality=6),
        LullFilter(device, "RT", ("color",) + guides, "lull RT FAST", hdr=True, quality=4),
        LullFilter(device, "ATrous", ("color",) + guides + ("depth",), "lull ATrous +depth"),
    ]
    # the halves: each filter that takes colorA and colorB, with each guide's halves
    halves_methods = [
        LullFilter(device, name, tuple(f"{image}{h}" for image in ("color",) + guides
                                       + ("depth",) for h in "AB"),
                   f"lull {name} (halves) +depth", hdr=True)
        for name in ("Regression", "RDFC", "DDID", "RT") if name in lull.filter_types()
        and {"colorA", "albedoA", "depthA"} <= set(lull.filter_images(name))]
    oidn = None
    try:
        import pyoidn

        oidn = OidnRT(pyoidn, args.device, args.threads)
        methods.insert(0, oidn)
    except ImportError:
        print("pyoidn is not installed (pip install pyoidn): lull only\n")

    names = ", ".join(d["name"] for d in lull.physical_devices() if d["type"] == args.device)
    print(f"device: {args.device} ({names}), lull {lull.__version__}, "
          f"median of {args.repeats} runs\n")
    print("| scene | spp | method | relMSE | PSNR (dB) | SSIM | time (ms) |")
    print("|---|---|---|---|---|---|---|")
    for scene in args.scenes:
        for spp in args.spp:
            loaded = load(args.data, scene, spp)
            if loaded is None:
                print(f"| {scene} | {spp} | (files missing) | | | | |")
                continue
            inputs, ref = loaded
            m = lull.metrics(inputs["color"], ref)
            print(f"| {scene} | {spp} | noisy input | {m['relmse']:.4f} | {m['psnr']:.2f} | "
                  f"{m['ssim']:.4f} | |")
            images = run_rows(methods, inputs, ref, scene, spp, args.repeats)
            images.update({"noisy input": inputs["color"], "reference": ref})
            halves = load_halves(args.data, scene, spp) if halves_methods else None
            if halves is not None:
                halves, mean = halves
                m = lull.metrics(mean["color"], ref)
                print(f"| {scene} | {spp} | noisy halves' mean | {m['relmse']:.4f} | "
                      f"{m['psnr']:.2f} | {m['ssim']:.4f} | |")
                if oidn is not None:
                    oidn.name = "OIDN RT (neural), halves' mean"
                    run_rows([oidn], mean, ref, scene, spp, args.repeats)
                    oidn.name = OidnRT.name
                images.update(run_rows(halves_methods, halves, ref, scene, spp, args.repeats))
            if args.png:
                write_strip(os.path.join(args.png, f"{scene}_spp{spp}.png"), images)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
