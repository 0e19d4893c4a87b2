"""Render Halves and Denoise: two Cycles renders of half the samples each
with different seeds, denoised together by lull's Regression filter (the
two-buffer regression: each half's noise is estimated from the other, which
one render cannot give).

The renders use the scene as it is but for the settings HalfSettings
changes (samples, seed, adaptive sampling and Cycles' own denoiser off,
Denoising Data on every view layer, no time limit), which are restored
afterwards, also after a failure or Esc.  A still's result is shown as
Denoise Last Render shows its own; an animation's frames (the scene's frame
range) are written to the output path as multilayer EXR files holding both
halves ("ViewLayer.Combined A", "ViewLayer.Combined B", ...) and the
Denoised pass, which `lull denoise` also reads as halves.

In a window the operator is modal: each render runs as Blender's render
job (render_complete / render_cancel handlers say when it ends), the
denoising on a thread of its own, and Esc stops the run (Blender's render
too).  From a script or in background mode it blocks.
"""

import os

import bpy

from . import loader, pipeline
from .operators import (_lull_or_report, _Progress, _temp_folder, is_multilayer_exr,
                        save_render_result, show_results)
from .properties import settings_of

# The seed of half B: far from half A's in every bit, as Cycles combines the
# seed with each pixel's hash (the test renders' halves used offsets of
# 100000 too).
SEED_OFFSET = 100003
SEED_LIMIT = 2 ** 31 - 1  # Cycles' seed is a non-negative int

# The run in progress in a window (its state, which the render handlers set).
_current = {"run": None}


class HalfSettings:
    """The scene's settings that the half renders change, saved, set for a
    half and restored."""

    def __init__(self, scene):
        self.scene = scene
        cycles = scene.cycles
        names = ("samples", "seed", "use_animated_seed", "use_adaptive_sampling",
                 "use_denoising", "time_limit")
        self.saved = [(cycles, n, getattr(cycles, n)) for n in names if hasattr(cycles, n)]
        for layer in scene.view_layers:
            layer_cycles = getattr(layer, "cycles", None)
            if layer_cycles is not None and hasattr(layer_cycles, "denoising_store_passes"):
                self.saved.append((layer_cycles, "denoising_store_passes",
                                   layer_cycles.denoising_store_passes))
        self.frame = scene.frame_current
        self.samples = max(1, cycles.samples // 2)
        self.seed = cycles.seed
        self.animated_seed = bool(getattr(cycles, "use_animated_seed", False))
        self.restored = True

    def seeds(self, frame):
        """(seed of half A, seed of half B) of a frame: with Use Animated
        Seed on, every frame's pair differs from every other frame's."""
        base = (self.seed + (2 * SEED_OFFSET * frame if self.animated_seed else 0)) % SEED_LIMIT
        return base, (base + SEED_OFFSET) % SEED_LIMIT

    def apply(self, half, frame):
        """The scene set up to render half `half` (0: A, 1: B) of `frame`."""
        self.restored = False
        if self.scene.frame_current != frame:
            self.scene.frame_set(frame)
        cycles = self.scene.cycles
        cycles.samples = self.samples
        cycles.seed = self.seeds(frame)[half]
        for name, value in (("use_animated_seed", False), ("use_adaptive_sampling", False),
                            ("use_denoising", False), ("time_limit", 0.0)):
            if hasattr(cycles, name):
                setattr(cycles, name, value)
        for owner, name, _ in self.saved:
            if name == "denoising_store_passes":
                setattr(owner, name, True)  # the guides

    def restore(self):
        """The user's settings back (once: a change the user makes after
        that is theirs)."""
        if self.restored:
            return
        self.restored = True
        for owner, name, value in self.saved:
            try:
                if getattr(owner, name) != value:
                    setattr(owner, name, value)
            except (AttributeError, ReferenceError, TypeError, ValueError):
                pass  # a view layer removed meanwhile
        if self.scene.frame_current != self.frame:
            self.scene.frame_set(self.frame)


def problem(scene, animation):
    """Why the scene cannot be rendered in halves (None: it can)."""
    if scene.render.engine != "CYCLES":
        return "Render Halves needs Cycles (Render Properties > Render Engine)"
    if scene.render.use_multiview:
        return "Render Halves renders one view: turn Stereoscopy off"
    if animation and not is_multilayer_exr(scene.render.image_settings):
        return ("the frames are written as multilayer OpenEXR: set Output Properties > "
                "Output > File Format")
    return None


def half_paths():
    """Where the halves' render results go (Blender's temporary folder)."""
    folder = _temp_folder()
    return [os.path.join(folder, f"lull_half_{h}.exr") for h in "AB"]


def frames_of(scene, animation):
    if not animation:
        return [scene.frame_current]
    return list(range(scene.frame_start, scene.frame_end + 1, max(1, scene.frame_step)))


def frame_file(scene, frame):
    """An animation's frame of halves: the output path's file of the frame."""
    return scene.render.frame_path(frame=frame)


def _render_finished(*_):
    run = _current["run"]
    if run is not None:
        run.render_ended = True


def _render_cancelled(*_):
    run = _current["run"]
    if run is not None:
        run.render_ended = run.render_cancelled = True


def _add_handlers():
    for handlers, function in ((bpy.app.handlers.render_complete, _render_finished),
                               (bpy.app.handlers.render_cancel, _render_cancelled)):
        if function not in handlers:
            handlers.append(function)


def remove_handlers():
    for handlers, function in ((bpy.app.handlers.render_complete, _render_finished),
                               (bpy.app.handlers.render_cancel, _render_cancelled)):
        if function in handlers:
            handlers.remove(function)


class _Run:
    """A run in a window: what is being done, and what the handlers said."""

    def __init__(self, plan, frames):
        self.plan = plan
        self.frames = frames
        self.index = 0            # frame being done
        self.half = 0             # half being rendered
        self.files = [None, None]
        self.render_ended = False
        self.render_cancelled = False
        self.rendering = False
        self.job = None           # the denoising (pipeline.LayersJob)
        self.halves = None        # the halves' passes being denoised
        self.written = []         # an animation's frame files

    def fraction(self):
        """Progress over the run: each frame two renders, then denoising."""
        within = (0.45 * self.half if self.job is None
                  else 0.9 + 0.1 * self.job.fraction)
        return (self.index + within) / len(self.frames)


class LULL_OT_render_halves(_Progress, bpy.types.Operator):
    """Render the scene twice with half the samples each and different seeds (adaptive
    sampling and Cycles' denoiser off; the settings are restored afterwards), then denoise
    the two halves together with lull's Regression filter (or RDFC: Halves Filter); Esc
    cancels"""

    bl_idname = "lull.render_halves"
    bl_label = "Render Halves and Denoise"

    animation: bpy.props.BoolProperty(
        name="Animation",
        description="Every frame of the frame range, each written to the output path as a "
                    "multilayer EXR with both halves and a Denoised pass",
        default=False)

    _run = None

    def _check(self, context):
        """The lull module when the run can start (else reported why not)."""
        lull = _lull_or_report(self)
        if lull is None:
            return None
        why = problem(context.scene, self.animation)
        name = settings_of(context.scene).halves_filter
        if why is None and name not in lull.filter_types():
            why = f"this build of lull has no {name} filter"
        if why is not None:
            self.report({"ERROR"}, f"lull: {why}")
            return None
        return lull

    # -- blocking: scripts and background mode --------------------------------------

    def execute(self, context):
        lull = self._check(context)
        if lull is None:
            return {"CANCELLED"}
        scene = context.scene
        settings = settings_of(scene)
        plan = HalfSettings(scene)
        paths = half_paths()
        written = []
        try:
            device = lull.Device(settings.device)
            for frame in frames_of(scene, self.animation):
                files = []
                for half in (0, 1):
                    plan.apply(half, frame)
                    bpy.ops.render.render()
                    files.append(save_render_result(scene, paths[half]))
                halves = [pipeline.read_views(lull, f) for f in files]
                if not self.animation:
                    plan.restore()
                    job = pipeline.LayersJob(lull, halves[0], settings, half_b=halves[1])
                    job.start().wait()
                    return show_results(self, context, job)
                results = pipeline.denoise_halves(lull, halves, settings, device=device)
                path = frame_file(scene, frame)
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                pipeline.write_halves_file(lull, path, halves, results)
                written.append(path)
        except (RuntimeError, ValueError, KeyError, OSError, lull.Error) as e:
            self.report({"ERROR"}, f"lull: {e}")
            return {"CANCELLED"}
        finally:
            plan.restore()
        self.report({"INFO"}, f"lull: rendered in halves and denoised {len(written)} frame(s)")
        return {"FINISHED"}

    # -- in a window: modal ----------------------------------------------------------

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        running = _current["run"]
        if running is not None:
            self.report({"WARNING"}, "lull: halves are being rendered (Esc cancels)")
            return {"CANCELLED"}
        if self._check(context) is None:
            return {"CANCELLED"}
        scene = context.scene
        self._run = _Run(HalfSettings(scene), frames_of(scene, self.animation))
        _current["run"] = self._run
        _add_handlers()
        self._begin(context, 100)
        if not self._render_next(context):
            self._end(context)
            return {"CANCELLED"}
        return {"RUNNING_MODAL"}

    def _render_next(self, context):
        """Starts Blender's render job of the current half (False: reported
        why not)."""
        run = self._run
        run.render_ended = run.render_cancelled = False
        run.rendering = True
        run.plan.apply(run.half, run.frames[run.index])
        try:
            bpy.ops.render.render("INVOKE_DEFAULT")
        except RuntimeError as e:
            run.rendering = False
            self.report({"ERROR"}, f"lull: cannot start the render: {e}")
            return False
        return True

    def modal(self, context, event):
        run = self._run
        if event.type == "ESC":
            if run.job is not None:
                run.job.cancel()
            if run.rendering and not run.render_ended:
                # Blender's render job sees the Esc too; the run ends when it
                # has stopped (the settings are the render's until then)
                run.render_cancelled = True
                return {"PASS_THROUGH"}
            self.cancel(context)
            self.report({"WARNING"}, "lull: Render Halves cancelled")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        context.window_manager.progress_update(int(100 * run.fraction()))
        if context.workspace is not None:
            what = ("denoising" if run.job is not None
                    else f"rendering half {'AB'[run.half]}")
            frame = (f" frame {run.frames[run.index]}," if self.animation else "")
            context.workspace.status_text_set(
                f"lull:{frame} {what}, {run.fraction():.0%} (Esc cancels)")
        if run.rendering:
            return self._after_render(context)
        if run.job is not None and not run.job.running():
            return self._after_denoising(context)
        return {"RUNNING_MODAL"}

    def _after_render(self, context):
        run = self._run
        job_running = getattr(bpy.app, "is_job_running", None)
        if not run.render_ended or (job_running is not None and job_running("RENDER")):
            return {"RUNNING_MODAL"}  # (the next render waits for the job's end)
        run.rendering = False
        if run.render_cancelled:
            self._end(context)
            self.report({"WARNING"}, "lull: Render Halves cancelled")
            return {"CANCELLED"}
        lull = loader.require()
        scene = context.scene
        try:
            run.files[run.half] = save_render_result(scene, half_paths()[run.half])
            if run.half == 0:
                run.half = 1
                if self._render_next(context):
                    return {"RUNNING_MODAL"}
                self._end(context)
                return {"CANCELLED"}
            halves = [pipeline.read_views(lull, f) for f in run.files]
        except (RuntimeError, ValueError, OSError, lull.Error) as e:
            self._end(context)
            self.report({"ERROR"}, f"lull: {e}")
            return {"CANCELLED"}
        if not self.animation:
            run.plan.restore()  # the settings are the user's while the result is made
        run.halves = halves
        run.job = pipeline.LayersJob(lull, halves[0], settings_of(scene),
                                     half_b=halves[1]).start()
        return {"RUNNING_MODAL"}

    def _after_denoising(self, context):
        run = self._run
        job = run.job
        if not self.animation or job.cancelled or job.error is not None:
            self._end(context)
            return show_results(self, context, job)
        lull = loader.require()
        scene = context.scene
        try:
            path = frame_file(scene, run.frames[run.index])
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            pipeline.write_halves_file(lull, path, run.halves, job.results)
            run.written.append(path)
        except (RuntimeError, ValueError, OSError, lull.Error) as e:
            self._end(context)
            self.report({"ERROR"}, f"lull: {e}")
            return {"CANCELLED"}
        run.job = None
        run.index += 1
        run.half = 0
        if run.index == len(run.frames):
            self._end(context)
            self.report({"INFO"},
                        f"lull: rendered in halves and denoised {len(run.written)} frame(s)")
            return {"FINISHED"}
        if not self._render_next(context):
            self._end(context)
            return {"CANCELLED"}
        return {"RUNNING_MODAL"}

    def _stop_work(self):
        """Esc or Blender freeing the operator: the denoising stops, the
        settings come back."""
        run = self._run
        if run is not None and run.job is not None:
            run.job.cancel()
        self._release()

    def _release(self):
        if self._run is not None:
            self._run.plan.restore()
        if _current["run"] is self._run:
            _current["run"] = None
            remove_handlers()

    def _end(self, context):
        self._release()
        self._finish(context)


classes = (LULL_OT_render_halves,)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    run = _current["run"]
    if run is not None:
        if run.job is not None:
            run.job.cancel()
        run.plan.restore()
        _current["run"] = None
    remove_handlers()
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
