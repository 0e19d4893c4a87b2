#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (tests/fuzz/corpus_io and
tests/fuzz/corpus_api).  Standard library only; the output is committed, so
this only runs again when the harnesses' input formats change.

    python3 tests/fuzz/make_corpus.py --lib build/lib/liblull.so

corpus_io: small image files, each prefixed by fuzz_io's selector byte
  (bit 0: .pfm name, bit 1: write back and read again).  EXR files are
  written here byte by byte (OpenEXR 2 file layout: magic, version flags,
  attribute headers, offset tables, chunks): single-part scanline images
  with and without zlib compression, a Blender-style multilayer file, a
  multi-part file, a multiview file, a tiled file; PFM files in both byte
  orders.  With oiiotool (OpenImageIO's tool) also 8x8 cuts of a test
  render (every pass of a real Blender multilayer file) under each EXR
  compression, so the harness starts inside OpenEXR's decoders.

corpus_api: programs for fuzz_api (see its opcode switch): for each filter
  type (names and images from lull.h's introspection, read through ctypes
  from the built library) a filter with 8x8 images that commits and runs.
"""
import argparse
import ctypes
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# -- EXR ---------------------------------------------------------------------------

HALF, FLOAT = 1, 2
NO_COMPRESSION, RLE, ZIPS, ZIP = 0, 1, 2, 3


def attr(name, type_name, value):
    return name.encode() + b"\0" + type_name.encode() + b"\0" + struct.pack("<i", len(value)) + value


def chlist(channels):
    """channels: [(name, pixel_type)], written sorted as OpenEXR requires."""
    out = b""
    for name, ptype in sorted(channels):
        out += name.encode() + b"\0" + struct.pack("<iB3xii", ptype, 0, 1, 1)
    return out + b"\0"


def box2i(w, h):
    return struct.pack("<iiii", 0, 0, w - 1, h - 1)


def header(channels, w, h, compression, extra=()):
    out = attr("channels", "chlist", chlist(channels))
    out += attr("compression", "compression", bytes([compression]))
    out += attr("dataWindow", "box2i", box2i(w, h))
    out += attr("displayWindow", "box2i", box2i(w, h))
    out += attr("lineOrder", "lineOrder", b"\0")
    out += attr("pixelAspectRatio", "float", struct.pack("<f", 1.0))
    out += attr("screenWindowCenter", "v2f", struct.pack("<ff", 0.0, 0.0))
    out += attr("screenWindowWidth", "float", struct.pack("<f", 1.0))
    for a in extra:
        out += a
    return out + b"\0"


def sample(ptype, value):
    return struct.pack("<e", value) if ptype == HALF else struct.pack("<f", value)


def lines_data(channels, w, y0, y1, value):
    """Uncompressed pixel data of rows [y0, y1): per row, per channel (sorted)."""
    out = b""
    for y in range(y0, y1):
        for k, (name, ptype) in enumerate(sorted(channels)):
            for x in range(w):
                out += sample(ptype, value(name, x, y, k))
    return out


def zip_block(raw):
    """OpenEXR's ZIP coding: bytes split into even and odd halves, a delta
    predictor, zlib.  Stored raw when that is not smaller (as OpenEXR does)."""
    half = (len(raw) + 1) // 2
    t = bytearray(len(raw))
    t[:half] = raw[0::2]
    t[half:] = raw[1::2]
    p = t[0] if t else 0
    for i in range(1, len(t)):
        d = (t[i] - p + 128 + 256) & 0xFF
        p = t[i]
        t[i] = d
    packed = zlib.compress(bytes(t))
    return packed if len(packed) < len(raw) else raw


def rows_per_block(compression):
    return 16 if compression == ZIP else 1


def scanline_chunks(channels, w, h, compression, value, part=None):
    chunks = []
    n = rows_per_block(compression)
    for y0 in range(0, h, n):
        raw = lines_data(channels, w, y0, min(y0 + n, h), value)
        data = zip_block(raw) if compression in (ZIP, ZIPS) else raw
        prefix = struct.pack("<i", part) if part is not None else b""
        chunks.append(prefix + struct.pack("<ii", y0, len(data)) + data)
    return chunks


def assemble(headers, chunk_lists, flags):
    """Magic, version, headers, one offset table per part, chunks."""
    out = struct.pack("<ii", 20000630, 2 | flags)
    for h in headers:
        out += h
    if flags & 0x1000:
        out += b"\0"  # the empty header that ends a multi-part header list
    table_size = sum(8 * len(c) for c in chunk_lists)
    offset = len(out) + table_size
    tables, body = b"", b""
    for chunks in chunk_lists:
        for c in chunks:
            tables += struct.pack("<Q", offset + len(body))
            body += c
    return out + tables + body


def exr_scanline(channels, w, h, compression, value, extra=()):
    return assemble([header(channels, w, h, compression, extra)],
                     [scanline_chunks(channels, w, h, compression, value)], 0)


def exr_multipart(parts, w, h, value):
    """parts: [(name, channels)] or [(name, channels, view)], uncompressed
    scanline parts (a view: the part's "view" attribute, as Blender writes
    stereo renders)."""
    headers, chunk_lists = [], []
    for index, (name, channels, *view) in enumerate(parts):
        chunks = scanline_chunks(channels, w, h, NO_COMPRESSION, value, part=index)
        extra = (attr("name", "string", name.encode()),
                 attr("type", "string", b"scanlineimage"),
                 attr("chunkCount", "int", struct.pack("<i", len(chunks))))
        if view:
            extra += (attr("view", "string", view[0].encode()),)
        headers.append(header(channels, w, h, NO_COMPRESSION, extra))
        chunk_lists.append(chunks)
    return assemble(headers, chunk_lists, 0x1000)


def exr_tiled(channels, w, h, tile, value):
    extra = (attr("tiles", "tiledesc", struct.pack("<IIB", tile, tile, 0)),)
    chunks = []
    for ty in range(0, (h + tile - 1) // tile):
        for tx in range(0, (w + tile - 1) // tile):
            x0, y0 = tx * tile, ty * tile
            x1, y1 = min(x0 + tile, w), min(y0 + tile, h)
            data = b""
            for y in range(y0, y1):
                for k, (name, ptype) in enumerate(sorted(channels)):
                    for x in range(x0, x1):
                        data += sample(ptype, value(name, x, y, k))
            chunks.append(struct.pack("<iiiii", tx, ty, 0, 0, len(data)) + data)
    return assemble([header(channels, w, h, NO_COMPRESSION, extra)], [chunks], 0x200)


def stringvector(items):
    return b"".join(struct.pack("<i", len(s)) + s.encode() for s in items)


def ramp(name, x, y, k):
    return 0.1 * x + 0.05 * y + 0.3 * k


def specials(name, x, y, k):
    """Ordinary values with NaN, infinities, a negative and a huge one."""
    table = [float("nan"), float("inf"), -float("inf"), -2.0, 60000.0]
    i = x + 3 * y + k
    return table[i % len(table)] if i % 4 == 0 else 0.25 * (x + y)


# -- PFM ---------------------------------------------------------------------------

def pfm(w, h, channels, little):
    magic = "PF" if channels == 3 else "Pf"
    scale = -1.0 if little else 1.0
    fmt = "<f" if little else ">f"
    body = b"".join(struct.pack(fmt, 0.01 * i) for i in range(w * h * channels))
    return f"{magic}\n{w} {h}\n{scale}\n".encode() + body


def io_corpus(render):
    rgb = [("R", HALF), ("G", HALF), ("B", HALF)]
    rgba_f = [("R", FLOAT), ("G", FLOAT), ("B", FLOAT), ("A", FLOAT)]
    blender = [("ViewLayer.Combined." + c, HALF) for c in "RGBA"] + \
              [("ViewLayer.Denoising Albedo." + c, HALF) for c in "RGB"] + \
              [("ViewLayer.Denoising Normal." + c, FLOAT) for c in "XYZ"] + \
              [("ViewLayer.Denoising Depth.Z", FLOAT), ("ViewLayer.Position.X", FLOAT)]
    files = {
        "rgb_half_none.exr": (2, exr_scanline(rgb, 4, 3, NO_COMPRESSION, ramp)),
        "rgba_float_zips.exr": (2, exr_scanline(rgba_f, 5, 4, ZIPS, ramp)),
        "rgb_half_zip.exr": (0, exr_scanline(rgb, 8, 20, ZIP, ramp)),
        "specials_float.exr": (2, exr_scanline(rgba_f, 6, 5, NO_COMPRESSION, specials)),
        "blender_multilayer.exr": (2, exr_scanline(
            blender, 4, 4, ZIPS, ramp, (attr("BlenderMultiChannel", "string", b"Blender"),))),
        "multipart.exr": (2, exr_multipart(
            [("ViewLayer.Combined", [("R", HALF), ("G", HALF), ("B", HALF)]),
             ("Denoising", [("ViewLayer.Denoising Albedo." + c, HALF) for c in "RGB"])],
            3, 3, ramp)),
        "multiview.exr": (2, exr_scanline(
            [("R", HALF), ("G", HALF), ("B", HALF), ("right.R", HALF), ("right.G", HALF),
             ("right.B", HALF)], 3, 2, NO_COMPRESSION, ramp,
            (attr("multiView", "stringvector", stringvector(["left", "right"])),))),
        # stereo as Blender writes it: a part per pass and view (one view's
        # name with a dot), and a single-layer stereo file (bare channels)
        "stereo_parts.exr": (2, exr_multipart(
            [("ViewLayer.Combined-left", [("ViewLayer.Combined." + c, HALF) for c in "RGB"],
              "left"),
             ("ViewLayer.Combined-cam.b", [("ViewLayer.Combined." + c, HALF) for c in "RGB"],
              "cam.b"),
             ("ViewLayer.Depth-left", [("ViewLayer.Depth.Z", FLOAT)], "left")],
            3, 2, ramp)),
        "stereo_single.exr": (2, exr_multipart(
            [("left", rgb, "left"), ("right", rgb, "right")], 3, 2, ramp)),
        "tiled.exr": (2, exr_tiled(rgb, 6, 5, 4, ramp)),
        "grey_y.exr": (2, exr_scanline([("Y", FLOAT)], 3, 3, NO_COMPRESSION, ramp)),
        "color_le.pfm": (3, pfm(3, 2, 3, True)),
        "color_be.pfm": (1, pfm(2, 3, 3, False)),
        "grey_le.pfm": (3, pfm(4, 1, 1, True)),
    }
    if render and shutil.which("oiiotool"):
        with tempfile.TemporaryDirectory() as tmp:
            for compression in ("none", "rle", "zips", "zip", "piz", "pxr24", "b44", "dwaa"):
                out = os.path.join(tmp, compression + ".exr")
                subprocess.run(["oiiotool", render, "--cut", "8x8+124+124", "-d", "half",
                                "--eraseattrib", "Exif:ImageHistory|Software|DateTime",
                                "--compression", compression, "-o", out], check=True)
                with open(out, "rb") as f:
                    files["render_8x8_" + compression + ".exr"] = (2, f.read())
    else:
        print("make_corpus: no oiiotool or render: the cuts of a real render are left out")
    return files


# -- API programs --------------------------------------------------------------------

OP_NEW_FILTER, OP_SET_SHARED, OP_SET_INT, OP_SET_BOOL, OP_COMMIT, OP_EXECUTE = 0, 6, 9, 10, 13, 15
FORMATS = {"float3": 0, "float": 1, "float4": 3, "half3": 4}  # fuzz_api's format_value table
SIDES = {1: 0, 2: 1, 3: 2, 4: 3, 5: 4, 7: 5, 8: 6, 13: 7, 16: 8}  # side_value's table


def api_corpus(lib_path):
    lib = ctypes.CDLL(lib_path)
    lib.lullGetFilterTypeName.restype = ctypes.c_char_p
    lib.lullGetFilterImageName.restype = ctypes.c_char_p
    types = [lib.lullGetFilterTypeName(i).decode() for i in range(lib.lullGetFilterTypeCount())]

    def images(t):
        n = lib.lullGetFilterImageCount(t.encode())
        return [lib.lullGetFilterImageName(t.encode(), i).decode() for i in range(n)]

    programs = {}
    for ti, t in enumerate(types):
        names = images(t)
        for variant, (fmt, side, arena_of) in enumerate(
                [("float3", 8, lambda k: k % 3), ("half3", 5, lambda k: k % 3),
                 ("float3", 4, lambda k: 0), ("float3", 7, None)]):
            p = bytearray(struct.pack(">I", 1 + variant))  # arena pattern seed
            slot, device = 0, 0

            def call(op, *args):
                p.extend([slot, device, op, *args])

            call(OP_NEW_FILTER, ti)
            # every image of the type: shared, tightly packed, offset 0
            # (pixel stride, row stride and offset choices 0), arenas 0..2
            for k, name in enumerate(names):
                if arena_of is None and name not in ("color", "output"):
                    continue  # the last variant: colour and output only
                image_fmt = FORMATS["float" if name in ("depth", "outputVariance") else fmt]
                call(OP_SET_SHARED, k, image_fmt, SIDES[side], SIDES[side], 0, 0, 0,
                     2 if name == "output" else (arena_of(k) if arena_of else 0))
            call(OP_COMMIT)
            call(OP_EXECUTE, 0)
            programs[f"{t}_{variant}.bin"] = bytes(p)
    return programs


def write(directory, files):
    os.makedirs(directory, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(content)
    print(f"make_corpus: {len(files)} files in {directory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", required=True, help="the built liblull.so")
    parser.add_argument("--render", default=os.path.join(
        HERE, "..", "data", "cornell", "cornell_spp16.exr"), help="a test render to cut")
    args = parser.parse_args()
    io_files = {name: bytes([selector]) + data
                for name, (selector, data) in io_corpus(args.render).items()}
    write(os.path.join(HERE, "corpus_io"), io_files)
    write(os.path.join(HERE, "corpus_api"), api_corpus(args.lib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
