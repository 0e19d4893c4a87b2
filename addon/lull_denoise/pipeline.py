"""Denoising render files: the work behind the add-on's operators, without
bpy, so it can run on a worker thread (lull releases the GIL while it
filters and while it reads and writes files) and in tests.

A file is denoised non-destructively: every original pass stays as it was
(bit for bit, with the file's metadata), and a "Denoised" pass is added per
view layer, written atomically to a new file (or back into the same one).
"""

import os
import queue
import threading
import time

from . import passes as cycles_passes


class Settings:
    """What to run: a filter type, a device and filter parameters."""

    def __init__(self, filter_type="RT", device="default", params=None, view_layers=None):
        self.filter_type = filter_type
        self.device = device
        self.params = dict(params or {})
        # the scene's view layers (None: every layer of the file); a file
        # also holds the compositor's output as a "layer" (Composite), which
        # has no guides and is not a render to denoise
        self.view_layers = tuple(view_layers) if view_layers is not None else None

    def __repr__(self):
        return (f"Settings({self.filter_type!r}, {self.device!r}, {self.params!r}, "
                f"{self.view_layers!r})")


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
            merged[f"{key}.{view}"] = array
            merged.channel_names[f"{key}.{view}"] = passes.channel_names.get(key)
            merged.half[f"{key}.{view}"] = passes.half.get(key, False)
    return merged


def denoised_path(src, suffix="_denoised"):
    """frames/0001.exr -> frames/0001_denoised.exr"""
    stem, ext = os.path.splitext(src)
    return stem + suffix + (ext or ".exr")


def _targets(passes, settings):
    """The (view layer, view) pairs of `passes` to denoise."""
    targets = cycles_passes.targets(passes)
    if settings.view_layers is not None:
        targets = [t for t in targets if t[0] in settings.view_layers]
    if not targets:
        raise ValueError("no Combined pass of a view layer found (is this a Cycles multilayer "
                         "EXR?)")
    return targets


def denoise_passes(lull, passes, settings, device=None, progress=None, cancel=None,
                   unguided=None):
    """Denoises every view layer of `passes` (a lull.read_exr result), each
    view of a stereo render on its own.

    Returns {"Layer.Denoised": array} ("Layer.Denoised.view" in stereo).
    progress(fraction) is called over the whole file; cancel (a
    threading.Event) stops at the next step.  The names of layers without
    an albedo (no Denoising Data: filtered from the colour alone) are
    appended to `unguided`."""
    targets = _targets(passes, settings)
    accepted = lull.filter_images(settings.filter_type)
    device = device or lull.Device(settings.device)
    results = {}
    for i, (layer, view) in enumerate(targets):
        if cancel is not None and cancel.is_set():
            raise Cancelled()

        def step(done, i=i):
            if progress is not None:
                progress((i + done) / len(targets))
            return cancel is None or not cancel.is_set()

        inputs = cycles_passes.filter_inputs(passes, layer, accepted, view)
        if unguided is not None and "albedo" not in inputs:
            name = cycles_passes.label(layer, view)
            if name not in unguided:
                unguided.append(name)
        color = inputs.pop("color")
        try:
            results[cycles_passes.output_key(layer, view)] = lull.denoise(
                color, filter=settings.filter_type, device=device, progress=step,
                **inputs, **settings.params)
        except lull.Error as e:
            if e.code == lull.ERROR_CANCELLED:
                raise Cancelled() from e
            raise
    return results


def denoise_file(lull, src, dst, settings, device=None, progress=None, cancel=None):
    """Reads src, denoises every view layer and writes src's passes plus the
    denoised ones to dst (atomically; dst may be src).  Returns the list of
    keys written."""
    passes = lull.read_exr(src)
    results = denoise_passes(lull, passes, settings, device, progress, cancel)
    half = {}
    names = {}
    for layer, view in _targets(passes, settings):
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

    start() returns at once; running(), fraction, and after the end results
    (as denoise_passes returns them), labels (each result's view layer, and
    view in stereo, as the user reads it), unguided, seconds, cancelled and
    error (the exception that stopped it, or None) tell how it went."""

    def __init__(self, lull, passes, settings):
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
        self._thread = threading.Thread(target=self._run, args=(lull, passes, settings),
                                        name="lull-denoise-render", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def _progress(self, fraction):
        self.fraction = fraction

    def _run(self, lull, passes, settings):
        start = time.perf_counter()
        try:
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
        self.current = None
        self.fraction = 0.0

    def submit(self, src, dst, settings):
        with self._lock:
            self._cancel.clear()
            self._queue.put((src, dst, settings))
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
                src, dst, settings = self._queue.get(timeout=0.5)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            self.current, self.fraction = src, 0.0
            try:
                denoise_file(self.lull, src, dst, settings, progress=self._progress,
                             cancel=self._cancel)
                self.done.append((src, dst))
            except Cancelled:
                self.failed.append((src, "cancelled"))
            except Exception as e:  # noqa: BLE001 - reported to the user, never raised
                self.failed.append((src, str(e)))
            finally:
                self.current = None
                self._queue.task_done()

    def pending(self):
        return self._queue.unfinished_tasks

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
