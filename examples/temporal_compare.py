#!/usr/bin/env python3
"""Flicker and quality of lull's temporal mode on the test animation.

Denoises every frame of tests/data/animation (examples/render_testdata.py:
24 frames, a cut at frame 13) five ways, at each sample count:

  - lull per frame: RT (quality HIGH: Regression, one buffer), each frame
                    on its own, what lull.denoise gives;
  - lull temporal:  RT with temporal=True, one filter for the sequence
                    (lull.denoise_sequence; the cut starts a new history):
                    the accumulation feeds Regression;
  - lull a-trous per frame, lull a-trous temporal: the same at quality
                    BALANCED, whose spatial filter is the a-trous filter
                    (each frame the first of its own sequence);
  - OIDN per frame: Open Image Denoise 2.5.1's RT (neural, quality HIGH,
                    HDR, colour + albedo + normal) through pyoidn, when
                    pyoidn is importable;

and prints, against the per-frame references:

  - the temporal error (issue 28's flicker metric): the mean over frames
    t >= 2, pixels and channels of (dOut_t - dRef_t)^2 / ((rbar_t^2 +
    rbar_{t-1}^2) / 2 + 0.01), where dX_t = X_t - X_{t-1} and rbar_t is
    the reference's mean of the channel in frame t; over all pairs as the
    issue defines it, and without the pair across the cut (both halves
    then measure the shots alone);
  - per-frame relMSE (mean over pixels and RGB of (x - r)^2 / (r^2 + 0.01));
  - the relMSE in a band around the rolling ball (12 pixels around its
    silhouette, the ball told by its albedo), where a ghost trail would be;
  - the time per frame of the filter at 1920x1080 (each frame tiled to
    it), spatial against temporal (ATrous in both modes: the same spatial
    filter), median of --repeats frames, on --device.

With --out DIR it writes DIR/temporal_strip.png (rows: lull per frame,
lull temporal, OIDN per frame, reference; columns: --strip-frames
consecutive frames at --strip-spp, enlarged 2x) and DIR/temporal_error.png (the temporal
error of each pair of frames, one panel per sample count: lull per frame
red, lull temporal blue, OIDN per frame grey; the pair across the cut is
left out), and DIR/temporal_compare.json with every number.

    PYTHONPATH=build/python python examples/temporal_compare.py [--spp 4 16]
        [--data tests/data/animation] [--device cpu] [--out docs/images]

Needs NumPy; pyoidn for the OIDN rows (pip install pyoidn==2.5.1).
"""

import argparse
import json
import os
import statistics
import struct
import sys
import time
import zlib

import numpy as np

import lull

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(os.path.dirname(HERE), "tests", "data", "animation")
CUT = 13  # render_testdata.py's ANIM_CUT: frame 13 starts the second shot


# -- data ------------------------------------------------------------------------------


def frame_numbers(folder):
    return sorted(int(n[:-4]) for n in os.listdir(folder) if n.endswith(".exr") and n[:-4].isdigit())


def load_frame(path):
    p = lull.read_exr(path)
    get = lambda name: p.get("ViewLayer." + name)  # noqa: E731
    return {"color": np.ascontiguousarray(get("Combined")[..., :3]),
            "albedo": get("Denoising Albedo"), "normal": get("Denoising Normal"),
            "depth": get("Denoising Depth"), "motion": get("Vector")}


def load(data, spp):
    frames = frame_numbers(os.path.join(data, "spp%d" % spp))
    noisy = [load_frame(os.path.join(data, "spp%d" % spp, "%04d.exr" % f)) for f in frames]
    refs = [np.ascontiguousarray(lull.read_exr(os.path.join(data, "ref", "%04d.exr" % f))
                                 ["ViewLayer.Combined"][..., :3]) for f in frames]
    return frames, noisy, refs


# -- metrics -----------------------------------------------------------------------------


def rel_mse(x, r):
    return float(np.mean((x - r) ** 2 / (r * r + 0.01)))


def temporal_errors(outs, refs):
    """The issue's flicker metric of each pair (t-1, t), t >= 2."""
    errors = []
    for t in range(1, len(outs)):
        d = (outs[t] - outs[t - 1]) - (refs[t] - refs[t - 1])
        mean_t, mean_p = refs[t].mean((0, 1)), refs[t - 1].mean((0, 1))
        errors.append(float(np.mean(d * d / ((mean_t ** 2 + mean_p ** 2) / 2 + 0.01))))
    return errors


def ball_band(frame, radius=12):
    """Pixels within `radius` of the rolling ball but not on it: its albedo
    is one of its checker's two colours (yellow, dark blue), on a surface
    (depth > 0: not the sky, whose 'albedo' is its colour)."""
    a, z = frame["albedo"], frame["depth"]
    yellow = (a[..., 0] > 0.6) & (a[..., 1] > 0.5) & (a[..., 2] < 0.35)
    blue = (a[..., 0] < 0.25) & (a[..., 1] < 0.3) & (a[..., 2] > 0.4)
    ball = (yellow | blue) & (z > 0)
    h, w = ball.shape
    grown = np.zeros((h + 2 * radius, w + 2 * radius), bool)
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            if dx * dx + dy * dy <= radius * radius:
                grown[radius + dy:radius + dy + h, radius + dx:radius + dx + w] |= ball
    return grown[radius:radius + h, radius:radius + w] & ~ball


def band_rel_mse(x, r, band):
    e = ((x - r) ** 2 / (r * r + 0.01)).mean(-1)
    return float(e[band].mean()) if band.any() else float("nan")


# -- denoisers ---------------------------------------------------------------------------


BALANCED = 5  # OIDN_QUALITY_BALANCED: RT's a-trous filter


def lull_atrous_per_frame(noisy, frames, device):
    """The spatial filter RT BALANCED's temporal mode runs, frame by frame:
    each frame the first of its own sequence."""
    return [np.array(next(iter(lull.denoise_sequence([dict(f, frame=n)], device=device,
                                                     quality=BALANCED))))
            for f, n in zip(noisy, frames)]


def lull_per_frame(noisy, device):
    keys = ("albedo", "normal", "depth")
    return [np.array(lull.denoise(f["color"], **{k: f[k] for k in keys}, device=device))
            for f in noisy]


def lull_temporal(noisy, frames, device, **params):
    seq = [dict(f, frame=n, cut=(n == CUT)) for f, n in zip(noisy, frames)]
    return [np.array(o) for o in lull.denoise_sequence(seq, device=device, **params)]


def oidn_per_frame(noisy):
    try:
        import pyoidn
    except ImportError:
        return None
    dev = pyoidn.Device(pyoidn.OIDN_DEVICE_TYPE_CPU)
    dev.commit()
    outs = []
    for f in noisy:
        out = np.zeros_like(f["color"])
        flt = pyoidn.Filter(dev, "RT")
        for name in ("color", "albedo", "normal"):
            flt.set_image(name, np.ascontiguousarray(f[name][..., :3], np.float32),
                          pyoidn.OIDN_FORMAT_FLOAT3)
        flt.set_image("output", out, pyoidn.OIDN_FORMAT_FLOAT3)
        flt.set_bool("hdr", True)
        flt.set_int("quality", pyoidn.OIDN_QUALITY_HIGH)
        flt.commit()
        flt.execute()
        error = dev.get_error()
        if error:
            raise RuntimeError("OIDN: %s" % (error,))
        outs.append(out)
    return outs


def timing(noisy, device, repeats, size=(1080, 1920)):
    """Median seconds a frame at `size` (frames tiled to it) takes, through
    one reused filter: spatial ATrous, then temporal ATrous (frames in
    order): the a-trous rows' filter (bench_temporal --filter Regression
    times Regression's)."""
    h, w = size

    def tile(a):
        reps = (-(-h // a.shape[0]), -(-w // a.shape[1])) + (1,) * (a.ndim - 2)
        return np.ascontiguousarray(np.tile(a, reps)[:h, :w])

    frames = [{k: tile(v) for k, v in f.items()} for f in noisy[:max(2, repeats + 1)]]
    out = np.zeros_like(frames[0]["color"])
    dev = lull.Device(device)
    result = {}
    for mode in ("spatial", "temporal"):
        times = []
        with dev.new_filter("ATrous") as flt:
            flt["hdr"] = True
            flt["temporal"] = mode == "temporal"
            for i, f in enumerate(frames):
                for name in ("color", "albedo", "normal", "depth") + (
                        ("motion",) if mode == "temporal" else ()):
                    flt.set_image(name, f[name])
                flt.set_image("output", out)
                if mode == "temporal":
                    flt["frame"] = i
                start = time.perf_counter()
                flt.execute()
                if i > 0:  # the first run allocates (and temporal has no history yet)
                    times.append(time.perf_counter() - start)
        result[mode] = statistics.median(times)
    return result


# -- pictures ----------------------------------------------------------------------------


def write_png(path, rgb):
    """An 8-bit sRGB PNG of linear RGB in [0, 1] (values clipped)."""
    v = np.clip(rgb, 0.0, 1.0)
    v = np.where(v <= 0.0031308, v * 12.92, 1.055 * np.power(v, 1 / 2.4) - 0.055)
    a = (v * 255 + 0.5).astype(np.uint8)
    h, w, _ = a.shape
    raw = b"".join(b"\0" + a[y].tobytes() for y in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def strip(rows, frames_at, scale=2, gap=2):
    """rows: lists of images; columns: the images at indices frames_at."""
    tiles = []
    for row in rows:
        cells = []
        for i in frames_at:
            img = np.repeat(np.repeat(row[i], scale, 0), scale, 1)
            cells += [img, np.ones((img.shape[0], gap, 3), np.float32)]
        tiles += [np.concatenate(cells[:-1], 1)]
        tiles += [np.ones((gap, tiles[-1].shape[1], 3), np.float32)]
    return np.concatenate(tiles[:-1], 0)


# A 3x5 pixel font for the plot's numbers and letters.
FONT = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111",
    "3": "111001111001111", "4": "101101111001001", "5": "111100111001111",
    "6": "111100111101111", "7": "111001001001001", "8": "111101111101111",
    "9": "111101111001111", ".": "000000000000010", "-": "000000111000000",
    " ": "000000000000000", "e": "000111101110011", "s": "000011110001110",
    "p": "000110101110100", "f": "011100110100100", "r": "000110101100100",
    "a": "000011101101011", "m": "000111111101101", "t": "010111010010011",
    "l": "110010010010111", "u": "000101101101011", "o": "000010101101010",
    "d": "001011101101011", "i": "010000010010010", "n": "000110101101101",
    "x": "000101010101000", "c": "000011100100011", "k": "100101110101101",
    "h": "100110101101101", "g": "011101011001110", "/": "001001010100100",
}


def text(img, x, y, s, color, scale=2):
    for ch in s:
        bits = FONT.get(ch, FONT[" "])
        for k, b in enumerate(bits):
            if b == "1":
                r, c = divmod(k, 3)
                img[y + r * scale:y + (r + 1) * scale, x + c * scale:x + (c + 1) * scale] = color
        x += 4 * scale


def plot(panels, path, width=420, height=220):
    """panels: [(title, {name: (color, [(frame, value), ...])})], side by
    side; log-scale y axis from the smallest to the largest value."""
    values = [v for _, series in panels for _, pts in series.values() for _, v in pts if v > 0]
    lo, hi = np.log10(min(values)) - 0.05, np.log10(max(values)) + 0.05
    frames = [f for _, series in panels for _, pts in series.values() for f, _ in pts]
    f0, f1 = min(frames), max(frames)
    out = []
    for title, series in panels:
        img = np.ones((height, width, 3), np.float32)
        left, right, top, bottom = 56, width - 10, 24, height - 26
        img[top:bottom, left] = img[bottom, left:right] = 0.0
        text(img, left, 6, title, (0, 0, 0))
        for tick in np.arange(np.ceil(lo * 2) / 2, hi, 0.5):  # half decades
            y = int(bottom - (tick - lo) / (hi - lo) * (bottom - top))
            img[y, left:right] = 0.85
            text(img, 2, y - 5, "%.0e" % 10 ** tick if tick == int(tick) else "%.4f" % 10 ** tick,
                 (0.3, 0.3, 0.3))
        for f in range(f0, f1 + 1, 4):
            x = int(left + (f - f0) / (f1 - f0) * (right - left))
            img[bottom:bottom + 4, x] = 0.0
            text(img, x - 4, bottom + 8, str(f), (0.3, 0.3, 0.3))
        for color, pts in series.values():
            xy = [(int(left + (f - f0) / (f1 - f0) * (right - left)),
                   int(bottom - (np.log10(v) - lo) / (hi - lo) * (bottom - top))) for f, v in pts]
            for (xa, ya), (xb, yb) in zip(xy, xy[1:]):
                if xb - xa > (right - left) / (f1 - f0) * 1.5:
                    continue  # the cut: no line across it
                n = max(abs(xb - xa), abs(yb - ya)) + 1
                for s in np.linspace(0, 1, n):
                    x, y = int(round(xa + s * (xb - xa))), int(round(ya + s * (yb - ya)))
                    img[y - 1:y + 1, x - 1:x + 1] = color
        out.append(img)
    write_png(path, np.concatenate(out, 1))


# -- main ----------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--spp", type=int, nargs="+", default=[4, 16])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=5, help="timed frames at 1080p (0: no timing)")
    ap.add_argument("--out", default="", help="folder for the PNGs and the JSON")
    ap.add_argument("--strip-frames", default="17-19", help="consecutive frames of the strip")
    ap.add_argument("--strip-spp", type=int, default=4, help="sample count of the strip")
    a = ap.parse_args()

    results, panels, strip_rows = {}, [], None
    for spp in a.spp:
        frames, noisy, refs = load(a.data, spp)
        methods = {"lull per frame": lull_per_frame(noisy, a.device),
                   "lull temporal": lull_temporal(noisy, frames, a.device),
                   "lull a-trous per frame": lull_atrous_per_frame(noisy, frames, a.device),
                   "lull a-trous temporal": lull_temporal(noisy, frames, a.device,
                                                          quality=BALANCED)}
        oidn = oidn_per_frame(noisy)
        if oidn is not None:
            methods["OIDN per frame"] = oidn
        bands = [ball_band(f) for f in noisy]
        pairs = [i for i in range(1, len(frames)) if frames[i] != CUT]
        row = {}
        for name, outs in methods.items():
            te = temporal_errors(outs, refs)
            row[name] = {
                "temporal_error": float(np.mean(te)),
                "temporal_error_shots": float(np.mean([te[i - 1] for i in pairs])),
                "temporal_error_pairs": te,
                "relmse": [rel_mse(o, r) for o, r in zip(outs, refs)],
                "band_relmse": [band_rel_mse(o, r, b) for o, r, b in zip(outs, refs, bands)],
            }
        results[spp] = {"frames": frames, "methods": row}
        base = row["lull per frame"]
        print("\n%d spp, %d frames (cut at %d)" % (spp, len(frames), CUT))
        print("| method | temporal error | w/o the cut | vs lull per frame | vs OIDN | "
              "mean relMSE | band relMSE |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, r in row.items():
            vs_oidn = ("%.2fx" % (r["temporal_error"] / row["OIDN per frame"]["temporal_error"])
                       if "OIDN per frame" in row else "-")
            print("| %s | %.5f | %.5f | %.2fx | %s | %.5f | %.4f |"
                  % (name, r["temporal_error"], r["temporal_error_shots"],
                     r["temporal_error"] / base["temporal_error"], vs_oidn, np.mean(r["relmse"]),
                     np.nanmean(r["band_relmse"])))
        after = [i for i, f in enumerate(frames) if not (f - 1 < 3 or 0 <= f - CUT < 3)]
        for temporal, per_frame in (("lull temporal", "lull per frame"),
                                    ("lull a-trous temporal", "lull a-trous per frame")):
            t, p = row[temporal], row[per_frame]
            worse = [frames[i] for i in after if t["relmse"][i] > p["relmse"][i]]
            ratios = [t["band_relmse"][i] / p["band_relmse"][i] for i in after]
            print("%s against %s: temporal error %.2fx; frames past the first three of a "
                  "shot with a higher relMSE: %s; band around the ball, relMSE ratio mean "
                  "%.2f, max %.2f" % (temporal, per_frame,
                                      t["temporal_error"] / p["temporal_error"],
                                      worse or "none", np.mean(ratios), max(ratios)))
        series = {name: (color, [(frames[i], row[name]["temporal_error_pairs"][i - 1]) for i in pairs])
                  for name, color in (("OIDN per frame", (0.55, 0.55, 0.55)),
                                      ("lull per frame", (0.85, 0.15, 0.1)),
                                      ("lull temporal", (0.1, 0.3, 0.85))) if name in row}
        panels.append(("%d spp temporal error" % spp, series))
        if spp == a.strip_spp or (a.strip_spp not in a.spp and spp == a.spp[0]):
            first, last = (int(v) for v in a.strip_frames.split("-"))
            at = [frames.index(f) for f in range(first, last + 1)]
            strip_rows = ([methods[m] for m in ("lull per frame", "lull temporal", "OIDN per frame")
                           if m in methods] + [refs], at)
        if a.repeats > 0:
            tm = timing(noisy, a.device, a.repeats)
            results[spp]["seconds_1080p"] = tm
            print("time per 1920x1080 frame on %s: spatial %.1f ms, temporal %.1f ms (+%.0f%%)"
                  % (a.device, 1e3 * tm["spatial"], 1e3 * tm["temporal"],
                     100 * (tm["temporal"] / tm["spatial"] - 1)))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        plot(panels, os.path.join(a.out, "temporal_error.png"))
        if strip_rows:
            write_png(os.path.join(a.out, "temporal_strip.png"), strip(*strip_rows))
        with open(os.path.join(a.out, "temporal_compare.json"), "w") as f:
            json.dump({str(k): v for k, v in results.items()}, f, indent=1)
        print("wrote %s/temporal_error.png, temporal_strip.png, temporal_compare.json" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
