"""lull: removes Monte Carlo path-tracing noise without a neural network.

Edge-avoiding à-trous wavelets (Dammertz et al. 2010) and gradient-domain
reconstruction behind the Open Image Denoise API, here as a Python module.

One call::

    import lull
    clean = lull.denoise(color, albedo, normal)              # filter "RT"
    clean = lull.denoise(color, albedo, normal, depth, filter="ATrous",
                         iterations=5, sigmaLuminance=4.0)
    clean = lull.denoise(colorA=a, colorB=b, albedo=albedo)  # two halves: "Regression"
    image = lull.reconstruct(primal, dx, dy)                 # "Poisson"

Animations, without flicker (temporal mode, docs/temporal.md)::

    for clean in lull.denoise_sequence(sorted(glob.glob("frames/*.exr"))):
        ...                                   # each frame with its history

Objects, mirroring the C API::

    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        f.set_image("color", color)
        f.set_image("output", out)
        f["iterations"] = 5
        f.progress = lambda done: print(f"{done:.0%}")  # return False to cancel
        f.execute()                                      # releases the GIL

Files (Blender's multilayer EXR and others, through lull's C image I/O)::

    passes = lull.read_exr("render.exr")        # {"ViewLayer.Combined": array, ...}
    lull.write_exr("out.exr", {"ViewLayer.Denoised": clean})
    lull.add_passes("render.exr", "render_denoised.exr", {"ViewLayer.Denoised": clean})

Arrays come in through the buffer protocol: float32 or float16, shape
(H, W) or (H, W, C) with C <= 4, any strides.  NumPy is not required;
results are NumPy arrays when NumPy is importable, else memoryviews.
Errors of the library raise lull.Error (with .code, one of lull.ERROR_*).
"""

import glob as _glob
import os as _os
import sys as _sys
import threading as _threading

try:
    from . import _lull
except ImportError as _exc:  # say which Python the compiled module is for
    _here = _os.path.dirname(_os.path.abspath(__file__))
    _built = sorted(_os.path.basename(p) for p in _glob.glob(_os.path.join(_here, "_lull*")))
    _want = "cpython-%d%d" % _sys.version_info[:2]
    if _built and not any(_want in b for b in _built):
        raise ImportError(
            "lull's compiled module does not match this Python (%s %d.%d): found %s; "
            "rebuild lull for this Python (cmake -DPython3_EXECUTABLE=%s)"
            % (_sys.implementation.name, _sys.version_info[0], _sys.version_info[1],
               ", ".join(_built), _sys.executable)) from _exc
    raise

from ._lull import (  # noqa: F401  (re-exported API)
    COLOR_MODE_FIXED,
    COLOR_MODE_VARIANCE,
    ERROR_CANCELLED,
    ERROR_INVALID_ARGUMENT,
    ERROR_INVALID_OPERATION,
    ERROR_NONE,
    ERROR_OUT_OF_MEMORY,
    ERROR_UNKNOWN,
    ERROR_UNSUPPORTED_HARDWARE,
    HAVE_IMAGE_IO,
    SCHEDULE_AUTO,
    SCHEDULE_BASELINE,
    SCHEDULE_PERMUTED,
    Device,
    Error,
    Filter,
    __version__,
    filter_images,
    filter_params,
    filter_types,
    metrics,
    physical_devices,
)

__all__ = [
    "Device", "Filter", "Error", "Passes", "denoise", "denoise_sequence", "reconstruct",
    "read_exr", "write_exr",
    "add_passes", "metrics", "filter_types", "filter_params", "filter_images", "physical_devices",
    "__version__",
]

try:
    import numpy as _np
except ImportError:  # the module works without NumPy
    _np = None


# -- arrays -------------------------------------------------------------------


def _shape_and_code(array):
    """(shape, 'f' | 'e') of a buffer or a CUDA array; ('f' for formats
    set_image will reject)."""
    try:
        view = memoryview(array)
    except TypeError:
        cai = getattr(array, "__cuda_array_interface__", None)
        if not isinstance(cai, dict) or "shape" not in cai:
            raise
        return tuple(cai["shape"]), ("e" if str(cai.get("typestr", ""))[1:] == "f2" else "f")
    code = view.format.lstrip("@=<")
    return tuple(view.shape), ("e" if code == "e" else "f")


def _empty(shape, code):
    """A new writable array: NumPy when available, else a float32 memoryview."""
    if _np is not None:
        return _np.empty(shape, dtype=_np.float16 if code == "e" else _np.float32)
    count = 1
    for n in shape:
        count *= n
    # memoryview.cast has no float16 before Python 3.12: float32 then
    return memoryview(bytearray(4 * count)).cast("f", shape)


def _from_floats(data, height, width, channels):
    """float32 bytes (H*W*C) as an (H, W) or (H, W, C) array."""
    shape = (height, width) if channels == 1 else (height, width, channels)
    if _np is not None:
        return _np.frombuffer(data, dtype=_np.float32).reshape(shape)
    return memoryview(data).cast("f", shape)


# -- devices --------------------------------------------------------------------

_local = _threading.local()


def _device(device):
    """A Device from None / a type name / a Device.  Implicit devices are made
    once per thread (and per type), so threads never wait on each other's
    device."""
    if isinstance(device, Device):
        return device
    key = "default" if device is None else device
    cache = getattr(_local, "devices", None)
    if cache is None:
        cache = _local.devices = {}
    if key not in cache or cache[key].closed:
        cache[key] = Device(key)
    return cache[key]


def _lull_error(code, message):
    error = Error(message)
    error.code = code
    error.message = message
    return error


def _run(filter_type, device, images, out, progress, params, like):
    if filter_type not in filter_types():
        raise _lull_error(
            ERROR_INVALID_ARGUMENT,
            "filter '%s' is not available in this build of lull (filters: %s)"
            % (filter_type, ", ".join(filter_types())))
    accepted = filter_images(filter_type)
    for name in [k for k in params if k in accepted]:
        images[name] = params.pop(name)
    if "output" in images:  # output=... is out=..., not an input
        if out is not None:
            raise TypeError("give the output array once: out= or output=")
        out = images.pop("output")
    dev = _device(device)
    with dev.new_filter(filter_type) as f:
        for name, array in images.items():
            if array is not None:
                f.set_image(name, array)
        if out is None:
            # the output has the colour's shape; a reconstruction from the
            # halves alone (primal None) takes the first half's
            for candidate in (like, images.get("colorA"), images.get("colorB")):
                if candidate is not None:
                    like = candidate
                    break
            else:
                raise ValueError("no colour image to take the output's shape from (give out=)")
            out = _empty(*_shape_and_code(like))
        f.set_image("output", out)
        for name, value in params.items():
            f[name] = value
        f.progress = progress
        f.execute()
    return out


def denoise(color=None, albedo=None, normal=None, depth=None, *, filter=None, device=None,
            out=None, progress=None, **params):
    """Denoises `color` and returns the result (a new array, or `out`).

    albedo, normal, depth: optional guide images of the same size.
    filter: "RT" (the default; OIDN's name, lull's best classical filter),
        "ATrous", "Gaussian", ... (lull.filter_types()).
    device: None (a per-thread default device), "cpu", "cuda", "default"
        or a lull.Device.
    out: array to write into (same shape as color; may be color itself).
        Arrays in GPU memory (__cuda_array_interface__: CuPy, PyTorch,
        Numba) are read and written in place on a CUDA device; without
        `out` the result is then a NumPy array on the host.
    progress: callable(fraction); returning False cancels (lull.Error with
        code lull.ERROR_CANCELLED).
    params: filter parameters (lull.filter_params(filter)), e.g.
        iterations=5, or more images by name (position=..., variance=...).
        Colour is taken as HDR (hdr=True) unless hdr or srgb is given.

    RHF (ray histogram fusion): histogram= the samples' histograms as one
    (H, W, 3, B) array (bin k's counts of R, G, B at [..., k]; docs/rhf.md
    says how a renderer bins), passed as the images histogram0 ..
    histogramB-1.

    Two halves of a render (two renders of half the samples each, with
    different seeds, of the same size) instead of color: colorA=, colorB=;
    each guide once (albedo=...) or as halves too (albedoA=, albedoB=,
    normalA=, normalB=, depthA=, depthB=, positionA=, positionB=; a guide
    given once then serves both halves).  The filter is then "Regression"
    unless one is named; it must take colorA and colorB (lull.filter_images).
    """
    if params.get("histogram") is not None:
        params.update(_histogram_images(params.pop("histogram")))
    halves = {k: params.get(k) is not None for k in ("colorA", "colorB")}
    if any(halves.values()):
        if color is not None:
            raise ValueError("give color, or the two halves colorA and colorB, not both")
        if not all(halves.values()):
            given = "colorA" if halves["colorA"] else "colorB"
            raise ValueError("%s needs %s: the two halves of a render"
                             % (given, "colorB" if given == "colorA" else "colorA"))
        if filter is None:
            filter = "Regression" if "Regression" in filter_types() else "RT"
        _check_halves(filter, params)
    elif color is None:
        raise TypeError("denoise() needs color, or the two halves colorA= and colorB=")
    if filter is None:
        filter = "RT"
    if "hdr" in [p["name"] for p in _params_of(filter)] and "hdr" not in params \
            and not params.get("srgb"):
        params["hdr"] = True
    images = {"color": color, "albedo": albedo, "normal": normal, "depth": depth}
    if any(halves.values()):
        del images["color"]
        _guides_for_halves(filter, images, params)
    return _run(filter, device, images, out, progress, params, color)


def _histogram_images(histogram):
    """An (H, W, 3, B) histogram as the images histogram0 .. histogramB-1."""
    shape = getattr(histogram, "shape", None)
    if shape is None or len(shape) != 4 or shape[2] != 3:
        raise ValueError("histogram must be an (H, W, 3, B) array: B bins of R, G, B counts "
                         "a pixel (got shape %s)" % (shape,))
    if not 1 <= shape[3] <= 32:
        raise ValueError("histogram: 1 to 32 bins (got %d)" % shape[3])
    import numpy as np
    return {"histogram%d" % k: np.ascontiguousarray(histogram[..., k], dtype=np.float32)
            for k in range(shape[3])}


def _check_halves(filter, params):
    """Errors of images given in halves: a filter without them, a half
    without its partner (sizes: Filter.set_image)."""
    if filter in filter_types() and "colorA" not in filter_images(filter):
        raise ValueError("filter %s takes no halves (colorA, colorB): name a filter that "
                         "does (%s), or give color= (e.g. the halves' mean)"
                         % (filter, ", ".join(t for t in filter_types()
                                              if "colorA" in filter_images(t))))
    accepted = filter_images(filter) if filter in filter_types() else None
    for base in ("color",) + _FEATURES:
        a, b = params.get(base + "A"), params.get(base + "B")
        if (a is None) != (b is None):
            given, other = (base + "A", base + "B") if b is None else (base + "B", base + "A")
            raise ValueError("%s needs %s: the two halves of a render" % (given, other))
        if a is not None and accepted is not None and base + "A" not in accepted:
            raise ValueError("filter %s takes %s once, not as halves: give %s= (e.g. the "
                             "halves' mean)" % (filter, base, base))


def _guides_for_halves(filter, images, params):
    """A guide given once, when others come in halves, as both halves where
    the filter takes them: a filter may read its guides either all once or
    all in halves (the command-line tool does the same)."""
    if filter not in filter_types():
        return
    accepted = filter_images(filter)
    if not any(params.get(f + "A") is not None for f in _FEATURES):
        return
    for feature in _FEATURES:
        once = images.get(feature, params.get(feature))
        if once is None or feature + "A" not in accepted or params.get(feature + "A") is not None:
            continue
        images.pop(feature, None)
        params.pop(feature, None)
        params[feature + "A"] = params[feature + "B"] = once


# Blender's passes for the images of a frame given as a file, best first.
_SEQUENCE_PASSES = {
    "color": ("Noisy Image", "Combined"),
    "albedo": ("Denoising Albedo",),
    "normal": ("Denoising Normal",),
    "depth": ("Denoising Depth",),
    "motion": ("Vector",),
}


def _frame_images(item):
    """A frame of denoise_sequence as {image: array} (and "frame", "cut")."""
    if isinstance(item, (str, bytes, _os.PathLike)):
        passes = read_exr(item)
        layers = [k.rpartition(".")[0] for k in passes if k.endswith((".Combined", ".Noisy Image"))]
        layer = layers[0] if layers else ""
        images = {}
        for image, names in _SEQUENCE_PASSES.items():
            for name in names:
                key = _join(layer, name)
                if key in passes:
                    images[image] = passes[key]
                    break
        if "color" not in images and "" in passes:
            images["color"] = passes[""]
        if "color" not in images:
            raise ValueError("%s: no colour pass (Combined, Noisy Image or plain RGB)"
                             % _os.fspath(item))
        return images
    if isinstance(item, dict):
        return dict(item)
    raise TypeError("a frame of denoise_sequence is a file name or a dict of images, not %s"
                    % type(item).__name__)


def denoise_sequence(frames, *, filter="RT", device=None, cuts=(), progress=None, **params):
    """Denoises an animation in temporal mode: each frame is accumulated with
    the history of the frames before it (reprojected by its motion vectors),
    then filtered, so the result flickers less (docs/temporal.md).  A
    generator: yields each frame's result (a new array) in order.

    frames: an iterable of frames, each a file name (a Blender multilayer
        EXR: the first layer's Noisy Image or Combined, Denoising Albedo,
        Denoising Normal, Denoising Depth and Vector passes) or a dict of
        arrays {"color": ..., "albedo": ..., "normal": ..., "depth": ...,
        "motion": ...} where motion is Blender's Vector pass (2 or more
        channels: the offset in pixels to where the pixel was in the frame
        before, x right, y up; absent: a static camera), with optional
        "frame" (its number: the library then checks the order) and "cut"
        (True: a new shot, a new history).
    cuts: positions in `frames` (0-based) that start a new shot.
    filter: "RT" (at its default quality HIGH the accumulation feeds
        Regression; quality=5, BALANCED, the a-trous filter), "ATrous" or
        "Regression"; device and params as for denoise.
    progress: callable(position, fraction) for each frame; False cancels.
    """
    if "hdr" in [p["name"] for p in _params_of(filter)] and "hdr" not in params \
            and not params.get("srgb"):
        params["hdr"] = True
    cuts = set(cuts)
    accepted = filter_images(filter)
    dev = _device(device)
    with dev.new_filter(filter) as f:
        for name, value in params.items():
            f[name] = value
        f["temporal"] = True
        for position, item in enumerate(frames):
            images = _frame_images(item)
            number = images.pop("frame", -1)
            cut = bool(images.pop("cut", False)) or position in cuts
            unknown = [k for k in images if k not in accepted]
            if unknown:
                raise ValueError("filter %s takes no image %s" % (filter, ", ".join(unknown)))
            color = images.get("color")
            if color is None:
                raise ValueError("frame %d has no colour image" % position)
            for name in accepted:  # this frame's images only (sizes may change at a cut)
                f.set_image(name, None)
            out = _empty(*_shape_and_code(color))
            for name, array in images.items():
                if array is not None:
                    f.set_image(name, array)
            f.set_image("output", out)
            f["frame"] = int(number)
            f["resetHistory"] = cut
            f.progress = None if progress is None else (
                lambda done, position=position: progress(position, done))
            f.execute()
            yield out


def _params_of(filter_type):
    try:
        return filter_params(filter_type)
    except ValueError:
        return []


_FEATURES = ("albedo", "normal", "depth", "position")


def reconstruct(primal, dx, dy, *, filter=None, device=None, out=None, progress=None,
                **features_and_params):
    """Gradient-domain reconstruction: the image whose forward differences
    best match (dx, dy) while staying close to `primal` (Vicini 2015 ch. 5).

    dx[y, x] ~ I[y, x+1] - I[y, x] and dy[y, x] ~ I[y+1, x] - I[y, x].
    filter: "Poisson" (screened Poisson, L2 or L1; the default without
        features) or "GradientDomain" (feature-guided; the default when
        albedo/normal/depth/position are given).
    features_and_params: feature images by name (albedo=, normal=, depth=,
        position=, ...), the half-buffer images (colorA=, colorB=,
        gradientXA=, ...: with all six, primal, dx and dy may be None) and
        filter parameters (alpha=, norm=, ...).
    """
    if filter is None:
        has_features = any(features_and_params.get(k) is not None for k in _FEATURES)
        filter = "GradientDomain" if has_features else "Poisson"
    images = {"color": primal, "gradientX": dx, "gradientY": dy}
    return _run(filter, device, images, out, progress, features_and_params, primal)


# -- image files -------------------------------------------------------------------


class Passes(dict):
    """The passes of an image file: a dict "Layer.Pass" -> array, with the
    file's size, each pass's channel names and whether it was stored as half.

    Keys: "ViewLayer.Combined", "ViewLayer.Denoising Albedo", ... for
    Blender's multilayer EXR ("Layer.Pass.Channel"); "Pass" without a layer;
    "" for a plain RGB(A) file; the passes of a stereo (multiview) render
    end in ".<view>" ("ViewLayer.Combined.left"), its views listed in
    `views`.  add_passes takes such keys too: "ViewLayer.Denoised.left"
    adds the left view's pass; "ViewLayer.Extra" one without a view; a key
    "Layer.Pass.x" of an existing layer whose x is none of the views is
    refused as a misspelt view.
    """

    def __init__(self, *args, width=0, height=0, channel_names=None, half=None, views=(),
                 **kwargs):
        super().__init__(*args, **kwargs)
        self.width = width
        self.height = height
        self.channel_names = dict(channel_names or {})
        self.half = dict(half or {})
        self.views = tuple(views)


def _join(*parts):
    return ".".join(p for p in parts if p)


def read_exr(path):
    """Reads an image file (multilayer or single-layer EXR, PFM, and what
    OpenImageIO reads) into a Passes dict of float32 arrays ((H, W) for
    one channel, (H, W, C) otherwise).  8/16-bit files (PNG, TIFF, JPEG)
    give the values they store, display-encoded in [0, 1], not linear."""
    width, height, passes = _lull._read_image(_os.fspath(path))
    views = []
    for *_, view in passes:
        if view and view not in views:
            views.append(view)
    result = Passes(width=width, height=height, views=views)
    for layer, name, channels, half, data, view in passes:
        key = _join(layer, name, view)
        result[key] = _from_floats(data, height, width, len(channels))
        result.channel_names[key] = tuple(channels)
        result.half[key] = bool(half)
    return result


def _default_channels(name, count):
    lowered = name.lower()
    if count == 1:
        return ("Z",) if ("depth" in lowered or lowered == "mist") else ("Y",)
    if count == 2:
        return ("X", "Y")
    if any(w in lowered for w in ("normal", "position", "vector")) and count == 3:
        return ("X", "Y", "Z")
    return ("R", "G", "B", "A")[:count]


def _pass_tuples(passes, channel_names, half):
    channel_names = dict(channel_names or {})
    known_names = getattr(passes, "channel_names", {})
    known_half = getattr(passes, "half", {})
    tuples = []
    for key, array in passes.items():
        layer, _, name = key.rpartition(".")
        shape, code = _shape_and_code(array)
        count = 1 if len(shape) == 2 else (shape[2] if len(shape) == 3 else 0)
        given = channel_names.get(key)
        if given is not None and len(given) != count:
            # the defaults had silently taken their place
            raise ValueError("channel_names['%s'] has %d names, the pass %d channels"
                             % (key, len(given), count))
        names = given or known_names.get(key)
        explicit = names is not None and len(names) == count
        if not explicit:
            names = _default_channels(name, count)
        # the defaults were those of the pass "name"; if add_passes finds
        # that "name" is a view of the file (a stereo render's
        # "Layer.Pass.left"), the pass is the last part of "layer"
        view_names = names if explicit else _default_channels(layer.rpartition(".")[2], count)
        if isinstance(half, dict):
            as_half = half.get(key, known_half.get(key, code == "e"))
        elif half is None:
            as_half = known_half.get(key, code == "e")
        else:
            as_half = bool(half)
        tuples.append((layer, name, tuple(names), bool(as_half), array, explicit,
                       tuple(view_names)))
    return tuples


def write_exr(path, passes, *, channel_names=None, half=None):
    """Writes passes ({"Layer.Pass": array}, or a Passes from read_exr) to an
    image file, atomically: the file appears complete or not at all.  EXR is
    multilayer when a key names a pass; the format follows the extension.

    channel_names: {key: ("R", "G", "B")} (default: RGB(A), XYZ for normals
        and positions, Z for depth, Y otherwise; Passes keep theirs).
    half: True/False for all passes, or {key: bool} (default: float16
        arrays and passes read as half are stored as half).
    """
    if getattr(passes, "views", ()):
        # views need their source file's parts: add_passes keeps them
        raise ValueError("write_exr cannot write the views of a stereo file (%s): use "
                         "add_passes(src, dst, passes) with the file they came from"
                         % ", ".join(passes.views))
    _lull._write_image(_os.fspath(path), _pass_tuples(passes, channel_names, half))


def add_passes(src, dst, passes, *, channel_names=None, half=None):
    """Copies image file `src` to `dst` (which may be `src`) with `passes`
    added, or replaced where a pass of that name exists.  Every other
    channel and the file's metadata are kept exactly, and so is its
    compression but for lossy codecs (DWAA, DWAB, B44: ZIP, so that copied
    passes do not change); the colour of an 8/16-bit `src` (display values)
    becomes linear in a float `dst` (EXR); the write is atomic.  A texture
    (MIP levels) is refused with ValueError: only its first level is read,
    so the copy would lack the others."""
    _lull._add_passes(_os.fspath(src), _os.fspath(dst), _pass_tuples(passes, channel_names, half))
