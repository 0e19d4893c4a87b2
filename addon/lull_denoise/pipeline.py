"""Denoising render files: the work behind the add-on's operators, without
bpy, so it can run on a worker thread (lull releases the GIL while it
filters and while it reads and writes files) and in tests.

A file is denoised non-destructively: every original pass stays as it was
(bit for bit, with the file's metadata), and a "Denoised" pass is added per
view layer, written atomically to a new file (or back into the same one).

The frames of an animation go through temporal mode when Settings.temporal
is on and a frame has Cycles' Vector pass (docs/temporal.md): a Temporal
keeps a filter per view layer whose history carries from one frame to the
next, so they must come in frame order; a gap, a cut or a frame without
the Vector pass starts a new history.

Two halves of a render (two renders of half the samples with different
seeds, Render Halves and Denoise) are denoised together by lull's
Regression filter: denoise_halves.  An animation's frame of halves is one
file holding both, each pass of a half named as the pass with " A" or " B"
appended (as `lull denoise` reads halves), and the Denoised pass.
"""

import os
import queue
import threading
import time

from . import passes as cycles_passes


class Settings:
    """What to run: a filter type, a device and filter parameters."""

    def __init__(self, filter_type="RT", device="default", params=None, view_layers=None,
                 aovs=None, temporal=False, halves_filter=None):
        self.filter_type = filter_type
        self.device = device
        self.params = dict(params or {})
        # the scene's view layers (None: every layer of the file); a file
        # also holds the compositor's output as a "layer" (Composite), which
        # has no guides and is not a render to denoise
        self.view_layers = tuple(view_layers) if view_layers is not None else None
        # {view layer: names of its AOVs}: Blender's passes named by the
        # user, which the Denoised pass must never replace
        self.aovs = {layer: tuple(names) for layer, names in (aovs or {}).items()}
        # animations: temporal mode where a frame has the Vector pass
        self.temporal = bool(temporal)
        # two halves: the filter that takes them (Regression, RDFC or DDID)
        self.halves_filter = halves_filter or HALVES_FILTER

    def __repr__(self):
        return (f"Settings({self.filter_type!r}, {self.device!r}, {self.params!r}, "
                f"{self.view_layers!r}, {self.aovs!r}, temporal={self.temporal!r}, "
                f"halves_filter={self.halves_filter!r})")


class Cancelled(Exception):
    """Raised when a cancel event stops the work."""


def read_views(lull, files):
    """The passes of [(view, path)] files as one lull.read_exr result: a
    single ("", path) as it reads; files of views (a stereo render result,
    which Blender saves a file a view) with every key ending in ".<view>",
    as lull.read_exr gives a file of both views."""
    if len(files) == 1 and not files[0][0]:
        return lull.read_exr(files[0][1])
    merged = None
    for view, path in files:
        passes = lull.read_exr(path)
        if merged is None:
            merged = lull.Passes(width=passes.width, height=passes.height,
                                 views=[v for v, _ in files])
        for key, array in passes.items():
            # a view's file saved with its view in it (EXR Interleave on)
            # reads as "Layer.Pass.left" already: ".left" again had hidden
            # every pass
            name = key if view in passes.views and key.endswith("." + view) else f"{key}.{view}"
            merged[name] = array
            merged.channel_names[name] = passes.channel_names.get(key)
            merged.half[name] = passes.half.get(key, False)
    return merged


def check_suffix(suffix):
    """Raises ValueError for a suffix that gives no copy of a file name: an
    empty one (the copy would be the rendered file itself) or one with a
    path separator (a file in a folder that may not exist)."""
    if not suffix:
        raise ValueError("the Suffix is empty, which names the rendered file itself: set a "
                         "suffix, or turn on Into the Same File")
    if any(sep and sep in suffix for sep in ("/", os.sep, os.altsep)):
        raise ValueError(f"the Suffix '{suffix}' holds a path separator: it is appended to "
                         "the file name, and can name no folder")


def denoised_path(src, suffix="_denoised"):
    """frames/0001.exr -> frames/0001_denoised.exr; a file named only by its
    extension (a still's output path left a folder, "/tmp/": /tmp/.exr)
    -> /tmp/_denoised.exr."""
    check_suffix(suffix)
    folder, name = os.path.split(src)
    stem, ext = os.path.splitext(name)
    if not ext and stem.startswith(".") and "." not in stem[1:]:
        stem, ext = "", stem  # splitext(".exr") is (".exr", ""): a hidden file's name
    return os.path.join(folder, stem + suffix + (ext or ".exr"))


# The compositor's output in a multilayer EXR: a "layer" of its own, not a
# view layer (it has no guides, and is the render after the compositor).
COMPOSITE_LAYER = "Composite"


def _targets(passes, settings):
    """The (view layer, view) pairs of `passes` to denoise."""
    found = cycles_passes.targets(passes)
    targets = found
    if settings.view_layers is not None:
        targets = [t for t in found if t[0] in settings.view_layers]
        if not targets:
            # no layer of the scene's name: a view layer renamed since the
            # render, or the render of another scene; every layer of the
            # file then, but the compositor's output
            targets = [t for t in found if t[0] != COMPOSITE_LAYER]
    if not targets:
        layers = []
        for key in passes:
            layer = cycles_passes.split_key(passes, key)[0]
            if layer not in layers:
                layers.append(layer)
        have = ", ".join(f"'{layer}'" for layer in layers if layer) or "none"
        raise ValueError("no Combined pass of a view layer found (is this a Cycles multilayer "
                         f"EXR? the file's layers: {have})")
    return targets


def _check_replaceable(passes, targets, settings):
    """Raises ValueError when a Denoised pass to write would replace a pass
    of that name in the file that lull may not have written (the user's AOV
    named "Denoised": add_passes replaces a pass of the same name, and "Into
    the Same File" had lost it).  The file holds no record of who wrote a
    pass (lull.add_passes writes no header attribute), so lull's own, from
    an earlier run and replaced, is told by the scene: Blender writes a pass
    of that name only for an AOV of that name, so in a view layer of the
    scene without one it is lull's.  In a layer the scene does not have,
    lull cannot tell, and the pass is kept as for an AOV."""
    for layer, view in targets:
        key = cycles_passes.output_key(layer, view)
        if key not in passes:
            continue
        if settings.view_layers is None or layer not in settings.view_layers:
            why = (f"lull cannot tell it wrote it (view layer '{layer}' is not the scene's: "
                   "the pass may be an AOV)")
        elif cycles_passes.OUTPUT_PASS in settings.aovs.get(layer, ()):
            why = (f"it is the AOV '{cycles_passes.OUTPUT_PASS}' of view layer '{layer}' "
                   "(rename the AOV and render again)")
        else:
            continue
        raise ValueError(f"the file already has a pass '{key}', not replaced: {why}")


class Temporal:
    """The history of an animation's frames: a lull filter in temporal mode
    per (view layer, view), kept while frames come in order.

    begin(frame, cut) before each frame says whether it starts a new history
    (the first frame, a gap, a cut, a different filter or device); filter()
    gives a layer's filter.  The filters go with close() (or the object)."""

    def __init__(self, lull):
        self.lull = lull
        self.filters = {}
        self.device = None
        self.key = None
        self.last_frame = None
        self.reset = True
        self.frame = -1

    def begin(self, frame, settings, cut=False):
        key = (settings.filter_type, settings.device, tuple(sorted(settings.params.items())))
        if key != self.key:
            self.close()
            self.key = key
            self.device = self.lull.Device(settings.device)
        self.reset = cut or self.last_frame is None or frame != self.last_frame + 1
        self.frame = frame
        return self.reset

    def end(self, ok):
        """After the frame: the next one follows it (or, after a failure,
        starts anew)."""
        self.last_frame = self.frame if ok else None

    def filter(self, layer, view, settings):
        f = self.filters.get((layer, view))
        if f is None:
            f = self.device.new_filter(settings.filter_type)
            self.filters[(layer, view)] = f
        return f

    def close(self):
        for f in self.filters.values():
            f.close()
        self.filters = {}
        self.last_frame = None


def _denoise_temporal(lull, temporal, layer, view, inputs, settings, step):
    """One layer of a frame through its temporal filter."""
    f = temporal.filter(layer, view, settings)
    for name in lull.filter_images(settings.filter_type):
        f.set_image(name, None)  # this frame's images only
    color = inputs.pop("color")
    out = lull._empty(*lull._shape_and_code(color))
    f.set_image("color", color)
    for name, array in inputs.items():
        f.set_image(name, array)
    f.set_image("output", out)
    params = dict(settings.params)
    if "hdr" not in params and not params.get("srgb"):
        params["hdr"] = True
    for name, value in params.items():
        f[name] = value
    f["temporal"] = True
    f["frame"] = temporal.frame if 0 <= temporal.frame < 2 ** 31 else -1
    f["resetHistory"] = temporal.reset
    f.progress = step
    f.execute()
    return out


def _each_layer(targets, progress, cancel):
    """(layer, view, step) of each target in turn, step(done) the filter's
    progress callback, reporting over all of them; Cancelled once cancel (a
    threading.Event) is set."""
    for i, (layer, view) in enumerate(targets):
        if cancel is not None and cancel.is_set():
            raise Cancelled()

        def step(done, i=i):
            if progress is not None:
                progress((i + done) / len(targets))
            return cancel is None or not cancel.is_set()

        yield layer, view, step


def denoise_passes(lull, passes, settings, device=None, progress=None, cancel=None,
                   unguided=None, temporal=None):
    """Denoises every view layer of `passes` (a lull.read_exr result), each
    view of a stereo render on its own.

    Returns {"Layer.Denoised": array} ("Layer.Denoised.view" in stereo).
    progress(fraction) is called over the whole file; cancel (a
    threading.Event) stops at the next step.  The names of layers without
    an albedo (no Denoising Data: filtered from the colour alone) are
    appended to `unguided`."""
    targets = _targets(passes, settings)
    accepted = lull.filter_images(settings.filter_type)
    device = device or (temporal.device if temporal is not None else lull.Device(settings.device))
    results = {}
    for layer, view, step in _each_layer(targets, progress, cancel):
        inputs = cycles_passes.filter_inputs(passes, layer, accepted, view,
                                             motion=temporal is not None)
        if unguided is not None and "albedo" not in inputs:
            name = cycles_passes.label(layer, view)
            if name not in unguided:
                unguided.append(name)
        try:
            if temporal is not None and "motion" in inputs:
                results[cycles_passes.output_key(layer, view)] = _denoise_temporal(
                    lull, temporal, layer, view, inputs, settings, step)
                continue
            inputs.pop("motion", None)
            color = inputs.pop("color")
            results[cycles_passes.output_key(layer, view)] = lull.denoise(
                color, filter=settings.filter_type, device=device, progress=step,
                **inputs, **settings.params)
        except lull.Error as e:
            if e.code == lull.ERROR_CANCELLED:
                raise Cancelled() from e
            raise
    return results


# The filter of two halves by default (Settings.halves_filter picks one:
# RDFC and DDID take the same images), and the suffixes of their passes in
# one file.
HALVES_FILTER = "Regression"
HALF_SUFFIXES = (" A", " B")


def denoise_halves(lull, halves, settings, device=None, progress=None, cancel=None,
                   unguided=None):
    """Denoises every view layer of two halves (lull.read_exr results of two
    renders of half the samples with different seeds) with
    settings.halves_filter (Regression unless RDFC or DDID is chosen): the colour and each
    guide as its two halves (colorA/colorB,
    albedoA/albedoB, ...).  Returns {"Layer.Denoised": array} as
    denoise_passes does; progress, cancel and unguided as there.  The
    halves must have the same view layers and passes (ValueError)."""
    name = settings.halves_filter
    if name not in lull.filter_types():
        raise ValueError(f"this build of lull has no {name} filter, which denoises two halves")
    targets, other = (_targets(h, settings) for h in halves)
    if sorted(other) != sorted(targets):
        names = [", ".join(cycles_passes.label(*t) for t in found) for found in (targets, other)]
        raise ValueError(f"the halves have other view layers: {names[0]} and {names[1]}")
    accepted = lull.filter_images(name)
    device = device or lull.Device(settings.device)
    results = {}
    for layer, view, step in _each_layer(targets, progress, cancel):
        inputs = [cycles_passes.filter_inputs(h, layer, accepted, view) for h in halves]
        if set(inputs[0]) != set(inputs[1]):
            raise ValueError(f"view layer '{cycles_passes.label(layer, view)}': the halves have "
                             f"other passes ({', '.join(sorted(inputs[0]))} and "
                             f"{', '.join(sorted(inputs[1]))})")
        if unguided is not None and "albedo" not in inputs[0]:
            label = cycles_passes.label(layer, view)
            if label not in unguided:
                unguided.append(label)
        images = {image + half: inputs[h][image]
                  for image in inputs[0] for h, half in enumerate("AB")}
        try:
            out = lull.denoise(filter=name, device=device, progress=step, **images)
        except lull.Error as e:
            if e.code == lull.ERROR_CANCELLED:
                raise Cancelled() from e
            raise
        if len(out.shape) == 3 and out.shape[2] == 4:
            # the alpha: the halves' mean (as `lull denoise` writes it)
            out[..., 3] = (images["colorA"][..., 3] + images["colorB"][..., 3]) / 2
        results[cycles_passes.output_key(layer, view)] = out
    return results


def write_halves_file(lull, path, halves, results):
    """Writes a frame of halves to one file (atomically): each pass of half
    A as "<pass> A" and of half B as "<pass> B" in its layer
    ("ViewLayer.Combined A", "ViewLayer.Denoising Albedo B", ...), which
    `lull denoise` reads as halves, and the denoised passes (stored as the
    colour is)."""
    out = lull.Passes(width=halves[0].width, height=halves[0].height)
    for passes, suffix in zip(halves, HALF_SUFFIXES):
        if passes.views:
            raise ValueError("a stereo render's halves cannot go into one file: render the "
                             "views one at a time")
        for key, array in passes.items():
            out[key + suffix] = array
            out.channel_names[key + suffix] = passes.channel_names.get(key)
            out.half[key + suffix] = passes.half.get(key, False)
    for key, array in results.items():
        layer = cycles_passes.split_key(out, key)[0]
        color = cycles_passes.color_key(halves[0], layer)
        out[key] = array
        out.channel_names[key] = halves[0].channel_names.get(color)
        out.half[key] = halves[0].half.get(color, False)
    lull.write_exr(path, out)


def denoise_file(lull, src, dst, settings, device=None, progress=None, cancel=None,
                 unguided=None, temporal=None):
    """Reads src, denoises every view layer and writes src's passes plus the
    denoised ones to dst (atomically; dst may be src).  Returns the list of
    keys written; a pass of the output's name that lull did not write is
    never replaced (ValueError, nothing written).  unguided: as
    denoise_passes; temporal: a Temporal after its begin() for this frame
    (its end() is the caller's)."""
    passes = lull.read_exr(src)
    targets = _targets(passes, settings)
    _check_replaceable(passes, targets, settings)
    results = denoise_passes(lull, passes, settings, device, progress, cancel, unguided,
                             temporal)
    half = {}
    names = {}
    for layer, view in targets:
        key = cycles_passes.output_key(layer, view)
        color = cycles_passes.color_key(passes, layer, view)
        half[key] = passes.half.get(color, False)
        names[key] = passes.channel_names.get(color)
    lull.add_passes(src, dst, results, channel_names=names, half=half)
    return list(results)


class LayersJob:
    """Denoising the view layers of a lull.read_exr result on a thread of
    its own, so that Blender's UI stays responsive while it runs (Denoise
    Last Render: about 2 s at 1080p on two CPU cores) and Esc can stop it.
    With `half_b` (a second lull.read_exr result), `passes` and half_b are
    two halves, denoised together (denoise_halves).

    start() returns at once; running(), fraction, and after the end results
    (as denoise_passes returns them), labels (each result's view layer, and
    view in stereo, as the user reads it), unguided, seconds, cancelled and
    error (the exception that stopped it, or None) tell how it went."""

    def __init__(self, lull, passes, settings, half_b=None):
        self.fraction = 0.0
        self.results = None
        self.labels = {}
        self.unguided = []
        self.seconds = 0.0
        self.cancelled = False
        self.error = None
        self._cancel = threading.Event()
        # a daemon: its results live in memory only, so quitting Blender
        # loses nothing a wait would save
        self._thread = threading.Thread(target=self._run, args=(lull, passes, settings, half_b),
                                        name="lull-denoise-render", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _progress(self, fraction):
        self.fraction = fraction

    def _run(self, lull, passes, settings, half_b):
        start = time.perf_counter()
        try:
            if half_b is not None:
                self.results = denoise_halves(lull, (passes, half_b), settings,
                                              progress=self._progress, cancel=self._cancel,
                                              unguided=self.unguided)
            else:
                self.results = denoise_passes(lull, passes, settings, progress=self._progress,
                                              cancel=self._cancel, unguided=self.unguided)
            self.labels = {cycles_passes.output_key(layer, view): cycles_passes.label(layer, view)
                           for layer, view in _targets(passes, settings)}
        except Cancelled:
            self.cancelled = True
        except Exception as e:  # noqa: BLE001 - reported by the operator
            self.error = e
        finally:
            self.seconds = time.perf_counter() - start

    def running(self):
        return self._thread.is_alive()

    def cancel(self):
        """Stops the job at its next progress step (the filter's next level)."""
        self._cancel.set()

    def wait(self, timeout=None):
        """Waits for the end; returns False on timeout."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


class Worker:
    """One background thread that denoises queued files in order.

    submit() never blocks (render_write handlers call it); status() and
    wait() let the UI and tests follow along; cancel() drops the queue and
    stops the file in progress."""

    def __init__(self, lull):
        self.lull = lull
        self._queue = queue.Queue()
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread = None
        self.done = []      # (src, dst)
        self.failed = []    # (src, message)
        self.unguided = []  # layers without Denoising Data (denoise_passes)
        self.current = None
        self.fraction = 0.0
        self._temporal = {}  # stream -> Temporal of its frames in order (settings.temporal)

    def submit(self, src, dst, settings, frame=None, cut=False, stream=""):
        """Queues a file; `frame` (its frame number) with settings.temporal
        makes it a frame of an animation in temporal mode (the files of a
        stream, a view of a stereo render written a file a view, then come
        in frame order; cut: a new shot)."""
        with self._lock:
            self._cancel.clear()
            self._queue.put((src, dst, settings, frame, cut, stream))
            if self._thread is None or not self._thread.is_alive():
                # not a daemon: Python waits for it at exit, so a batch
                # render (blender -b -a) or a quit keeps the queued frames
                self._thread = threading.Thread(target=self._run, name="lull-denoise",
                                                daemon=False)
                self._thread.start()

    def _progress(self, fraction):
        self.fraction = fraction

    def _run(self):
        while True:
            try:
                src, dst, settings, frame, cut, stream = self._queue.get(timeout=0.5)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            self.current, self.fraction = src, 0.0
            temporal = None
            if settings.temporal and frame is not None:
                temporal = self._temporal.get(stream)
                if temporal is None:
                    temporal = self._temporal[stream] = Temporal(self.lull)
            ok = False
            try:
                if temporal is not None:
                    temporal.begin(frame, settings, cut)
                denoise_file(self.lull, src, dst, settings, progress=self._progress,
                             cancel=self._cancel, unguided=self.unguided, temporal=temporal)
                self.done.append((src, dst))
                ok = True
            except Cancelled:
                self.failed.append((src, "cancelled"))
            except Exception as e:  # noqa: BLE001 - reported to the user, never raised
                self.failed.append((src, str(e)))
            finally:
                if temporal is not None:
                    temporal.end(ok)
                self.current = None
                self._queue.task_done()

    def pending(self):
        return self._queue.unfinished_tasks

    def forget_history(self):
        """The next frames start new histories (a new animation render)."""
        for temporal in self._temporal.values():
            temporal.end(False)

    def cancel(self):
        self._cancel.set()
        while True:
            try:
                self._queue.get_nowait()
                self._queue.task_done()
            except queue.Empty:
                break

    def wait(self, timeout=None):
        """Waits until the queue is empty; returns False on timeout."""
        finished = threading.Event()

        def join():
            self._queue.join()
            finished.set()

        threading.Thread(target=join, daemon=True).start()
        return finished.wait(timeout)

    def status(self):
        if self.current:
            return (f"denoising {os.path.basename(self.current)} ({self.fraction:.0%}), "
                    f"{self.pending() - 1} queued")
        if self.done or self.failed:
            text = f"{len(self.done)} denoised"
            if self.failed:
                text += f", {len(self.failed)} failed ({self.failed[-1][1]})"
            return text
        return "idle"
