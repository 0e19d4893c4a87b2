"""Operators: enable the passes, denoise the last render, denoise an
animation's frames, and the render_write handler for automatic denoising.

Python cannot read a render result's pixels (bpy.data.images["Render
Result"] has no pixels), so the last render goes through a multilayer EXR
in Blender's temporary folder.  Frames are read from the files Blender
wrote (scene.render.frame_path).  Nothing uses the compositor, whose Python
API changed in Blender 5.0 (scene.node_tree is gone).
"""

import os
import time

import bpy

from . import loader, passes, pipeline
from .properties import output_path, settings_of


def is_multilayer_exr(settings):
    """Whether image format settings write multilayer OpenEXR."""
    return settings.file_format == "OPEN_EXR_MULTILAYER"


def use_multilayer_exr(settings):
    """Sets image format settings to multilayer OpenEXR.  Blender 5.0 offers
    the format OPEN_EXR_MULTILAYER only for the media type MULTI_LAYER_IMAGE
    (before 5.0 there are no media types)."""
    if hasattr(settings, "media_type"):
        settings.media_type = "MULTI_LAYER_IMAGE"
    settings.file_format = "OPEN_EXR_MULTILAYER"


# One background worker for automatic denoising (created on first use).
# temporal: view -> pipeline.Temporal of a batch render's frames (denoised in
# the render's thread)
_auto = {"worker": None, "render_started": 0.0, "temporal": {}}
# The job of the Denoise Last Render that runs in the UI, if any.
_last_render = {"job": None}
# The worker of the Denoise Animation Frames that runs in the UI, if any.
_animation = {"worker": None}
# Window-manager timers of running modal operators, taken down by
# unregister() (Blender frees a modal operator whose class goes without
# calling its cancel()).
_timers = []


def auto_worker():
    if _auto["worker"] is None:
        _auto["worker"] = pipeline.Worker(loader.require())
    return _auto["worker"]


def _lull_or_report(op):
    try:
        return loader.require()
    except RuntimeError as e:
        op.report({"ERROR"}, f"lull: {e}")
        return None


class LULL_OT_enable_passes(bpy.types.Operator):
    """Enable the render passes the selected filter uses on the active view layer"""

    bl_idname = "lull.enable_passes"
    bl_label = "Enable Passes"
    bl_options = {"REGISTER", "UNDO"}

    all_layers: bpy.props.BoolProperty(name="All View Layers", default=False)
    multilayer_output: bpy.props.BoolProperty(
        name="Multilayer EXR Output",
        description="Also set the output format to multilayer OpenEXR (needed for denoising "
                    "written frames)",
        default=True)

    def execute(self, context):
        scene = context.scene
        layers = scene.view_layers if self.all_layers else [context.view_layer]
        enabled = []
        needed = passes.NEEDED_SETTINGS.get(scene.lull.filter_type, ())
        if scene.lull.temporal and needed:
            needed = needed + passes.TEMPORAL_SETTINGS
        for layer in layers:
            for label, owner, attr in needed:
                target = getattr(layer, "cycles", None) if owner == "cycles" else layer
                if target is not None and hasattr(target, attr) and not getattr(target, attr):
                    setattr(target, attr, True)
                    enabled.append(f"{layer.name}: {label}")
        if self.multilayer_output and not is_multilayer_exr(scene.render.image_settings):
            use_multilayer_exr(scene.render.image_settings)
            enabled.append("multilayer EXR output")
        self.report({"INFO"}, "lull: enabled " + (", ".join(enabled) if enabled else "nothing "
                                                  "(all set already)"))
        if scene.lull.temporal and scene.render.use_motion_blur:
            # not turned off here: motion blur is the user's look
            self.report({"WARNING"}, "lull: Motion Blur is on, so Cycles writes no Vector pass "
                        "and the frames are denoised without temporal mode")
        return {"FINISHED"}


def save_render_result(scene, path):
    """Writes the last render (all view layers and passes) as multilayer EXR:
    [("", path)], or in stereo a file a view, [(view name, file)] (Blender
    saves a stereo render result a file a view, whatever the views format,
    named with the views' suffixes, and then reports the path it was given
    as not saved)."""
    image = bpy.data.images.get("Render Result")
    if image is None or image.type != "RENDER_RESULT":
        raise RuntimeError("there is no render result: render an image first (F12)")
    settings = scene.render.image_settings
    # restored in this order: media_type first, as it limits the file
    # formats (Blender 5.0); the codec and views format after the file
    # format, whose change resets them (a Stereo 3D output became Individual)
    # (setting the file format also resets the colour mode, RGBA of a video
    # with alpha, and the output colour space override)
    names = [n for n in ("media_type", "file_format", "color_mode", "color_depth", "exr_codec",
                         "views_format") if hasattr(settings, n)]
    saved = [(n, getattr(settings, n)) for n in names]
    space = getattr(settings, "linear_colorspace_settings", None)
    saved_space = getattr(space, "name", None)
    # the render result is stereo when it was rendered so, whatever the
    # scene says now: every view's file is a candidate
    stem, ext = os.path.splitext(path)
    views = [(v.name, stem + v.file_suffix + ext) for v in scene.render.views
             if v.file_suffix and stem + v.file_suffix + ext != path]
    for _, file in views + [("", path)]:
        if os.path.exists(file):
            os.remove(file)  # an earlier render's must not pass for this one's
    failure = None
    try:
        use_multilayer_exr(settings)
        settings.color_depth = "32"
        # lossless: an output set to DWAA or B44 would blur the noisy image
        # and its guides before they are denoised (DWAA: 2.7% of Combined)
        settings.exr_codec = "ZIP"
        image.save_render(filepath=path, scene=scene)
    except RuntimeError as e:
        failure = e
    finally:
        for name, value in saved:
            try:
                setattr(settings, name, value)
            except (TypeError, ValueError):  # a value the restored format does not offer
                pass
        if saved_space is not None and space.name != saved_space:
            space.name = saved_space
    written = [(view, file) for view, file in views if os.path.exists(file)]
    if written and not os.path.exists(path):
        return written
    if failure is not None:
        raise failure
    if not os.path.exists(path):
        raise RuntimeError("Blender wrote no render result (render an image first)")
    return [("", path)]


def _temp_folder():
    """Where the last render and its denoised images go."""
    return bpy.app.tempdir or os.path.join(os.path.expanduser("~"), ".cache")


def show_image(context, image):
    """Shows the image in an Image Editor of the current window, or in the
    render view when the window has none."""
    screen = getattr(context, "screen", None)
    if screen is None or bpy.app.background:
        return False  # no UI (background mode: render.view_show logged an error)
    for area in screen.areas:
        if area.type == "IMAGE_EDITOR":
            area.spaces.active.image = image
            return True
    try:
        bpy.ops.render.view_show("INVOKE_DEFAULT")
    except RuntimeError:
        return False
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "IMAGE_EDITOR":
                area.spaces.active.image = image
                return True
    return False


class _Progress:
    """The timer, progress display and status text of a modal operator that
    follows work on another thread, taken down when it ends or when Blender
    frees the operator (a file opened, the window closed: cancel; the
    add-on disabled: unregister(), as Blender then calls no cancel)."""

    _timer = None

    def _begin(self, context, steps):
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.1, window=context.window)
        _timers.append(self._timer)
        wm.progress_begin(0, steps)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def _stop_work(self):
        raise NotImplementedError

    def cancel(self, context):
        self._stop_work()
        self._finish(context)

    def _finish(self, context):
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            if self._timer in _timers:
                _timers.remove(self._timer)
            self._timer = None
            wm.progress_end()
        if context.workspace is not None:
            context.workspace.status_text_set(None)


def _report_unguided(op, unguided):
    """The warning for view layers denoised without guides (no Denoising
    Data), as both denoise operators give it."""
    names = list(dict.fromkeys(unguided))  # once each: frames repeat their layers
    if names:
        op.report({"WARNING"}, "lull: no Denoising Data in view layer(s) "
                  f"{', '.join(names)}: denoised from the colour alone (Enable "
                  "Passes on each layer, then render again)")


class LULL_OT_denoise_render(_Progress, bpy.types.Operator):
    """Denoise the last render with lull and show the result as a new image
    (one per view layer); Esc cancels"""

    bl_idname = "lull.denoise_render"
    bl_label = "Denoise Last Render"

    _job = None

    def _start(self, context):
        """Saves the render result, reads it and starts the denoising on a
        thread of its own (None: reported why not)."""
        lull = _lull_or_report(self)
        if lull is None:
            return None
        scene = context.scene
        src = os.path.join(_temp_folder(), "lull_render_result.exr")
        try:
            data = pipeline.read_views(lull, save_render_result(scene, src))
        except (RuntimeError, ValueError, OSError, lull.Error) as e:
            self.report({"ERROR"}, f"lull: {e}")
            return None
        return pipeline.LayersJob(lull, data, settings_of(scene)).start()

    def execute(self, context):
        """Blocking (scripts and background mode)."""
        job = self._start(context)
        if job is None:
            return {"CANCELLED"}
        job.wait()
        return self._show(context, job)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        running = _last_render["job"]
        if running is not None and running.running():
            # one at a time: a second would share the progress display, and
            # Esc would stop only the last
            self.report({"WARNING"}, "lull: the last render is being denoised (Esc cancels it)")
            return {"CANCELLED"}
        self._job = self._start(context)
        if self._job is None:
            return {"CANCELLED"}
        _last_render["job"] = self._job
        return self._begin(context, 100)

    def modal(self, context, event):
        if event.type == "ESC":
            self.cancel(context)  # stop the work, take the display down
            self.report({"WARNING"}, "lull: denoising cancelled")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        if self._job.running():
            context.window_manager.progress_update(int(100 * self._job.fraction))
            if context.workspace is not None:
                context.workspace.status_text_set(
                    f"lull: denoising the last render, {self._job.fraction:.0%} (Esc cancels)")
            return {"RUNNING_MODAL"}
        self._finish(context)
        return self._show(context, self._job)

    def _stop_work(self):
        self._job.cancel()

    def _show(self, context, job):
        return show_results(self, context, job)


def show_results(op, context, job):
    """A finished LayersJob's images, loaded and shown, and its report (op's
    report), as Denoise Last Render and Render Halves and Denoise give them;
    the operator's return value."""
    lull = loader.require()
    if job.cancelled:
        op.report({"WARNING"}, "lull: denoising cancelled")
        return {"CANCELLED"}
    if job.error is not None:
        op.report({"ERROR"}, f"lull: {job.error}")
        return {"CANCELLED"}
    folder = _temp_folder()
    images = []
    try:
        for key, pixels in job.results.items():
            name = job.labels.get(key) or "Render"
            path = os.path.join(folder, f"lull_denoised_{bpy.path.clean_name(name)}.exr")
            lull.write_exr(path, {"": pixels})
            images.append(_load_image(f"lull Denoised {name}", path))
    except (RuntimeError, OSError, lull.Error) as e:
        op.report({"ERROR"}, f"lull: cannot show the result: {e}")
        return {"CANCELLED"}
    if images:
        show_image(context, images[0])
    op.report({"INFO"}, f"lull: denoised {len(images)} image(s) in "
                        f"{job.seconds:.2f} s ({', '.join(i.name for i in images)})")
    _report_unguided(op, job.unguided)
    return {"FINISHED"}


def _load_image(name, path):
    """A packed image of the file (the temporary file may vanish later).
    An earlier result of that name is replaced where it is used (an image
    node, an editor): removed alone, it had left them empty."""
    image = bpy.data.images.load(path, check_existing=False)
    image.pack()
    old = bpy.data.images.get(name)
    if old is not None:
        old.user_remap(image)
        bpy.data.images.remove(old)
    image.name = name
    return image


def view_names(scene):
    """The views Blender writes a file each for ("": one file a frame)."""
    render = scene.render
    if not render.use_multiview or render.image_settings.views_format != "INDIVIDUAL":
        return [""]
    return [v.name for v in render.views if v.use] or [""]


def views_problem(scene):
    """Why the scene's frames cannot be denoised (None: they can).  Stereo
    renders are denoised view by view, from a file a view (Individual) or
    from one file of all views (Multi-View)."""
    render = scene.render
    if render.use_multiview and render.image_settings.views_format not in ("INDIVIDUAL",
                                                                           "MULTIVIEW"):
        return ("stereo frames: set Output Properties > Views > Views Format to Individual "
                "or Multi-View")
    return None


def frame_paths(scene, frame):
    """The files of a frame as Blender writes them (one a view in stereo)."""
    return [scene.render.frame_path(frame=frame, view=v) if v else
            scene.render.frame_path(frame=frame) for v in view_names(scene)]


def frame_files(scene):
    """(frame, path, view) of the scene's frame range as Blender writes them,
    in frame order."""
    frames = range(scene.frame_start, scene.frame_end + 1, max(1, scene.frame_step))
    return [(f, p, v) for f in frames for p, v in zip(frame_paths(scene, f), view_names(scene))]


def cut_frames(scene):
    """Frames where the timeline's camera markers switch to another camera:
    each starts a new shot, whose motion vectors say nothing of the frame
    before (Cycles takes them from the new camera's own motion)."""
    markers = sorted((m.frame, m.camera) for m in scene.timeline_markers if m.camera)
    cuts, camera = set(), None
    for frame, cam in markers:
        if camera is not None and cam != camera:
            cuts.add(frame)
        camera = cam
    return cuts


def temporal_frames(scene):
    """Whether the scene's frames can be denoised in temporal mode: the
    Vector pass relates each frame to the one just before, so only frames
    rendered one after the other (a Frame Step of 1)."""
    return scene.lull.temporal and scene.frame_step == 1


class LULL_OT_denoise_animation(_Progress, bpy.types.Operator):
    """Denoise the multilayer EXR frames of the scene's frame range (as written by Render
    Animation) into copies with a Denoised pass; Esc cancels"""

    bl_idname = "lull.denoise_animation"
    bl_label = "Denoise Animation Frames"

    _jobs = None
    _worker = None

    def _collect(self, context):
        if not is_multilayer_exr(context.scene.render.image_settings):
            # (the views advice below would not help a PNG output)
            self.report({"ERROR"}, "lull: the frames must be multilayer OpenEXR (Output "
                        "Properties > Output > File Format), rendered with Denoising Data")
            return None
        problem = views_problem(context.scene)
        if problem:
            self.report({"ERROR"}, f"lull: {problem}")
            return None
        try:
            jobs = [(p, output_path(context.scene, p), f, v)
                    for f, p, v in frame_files(context.scene) if os.path.exists(p)]
        except ValueError as e:  # the suffix
            self.report({"ERROR"}, f"lull: {e}")
            return None
        if not jobs:
            self.report({"ERROR"}, "lull: no rendered frames found at "
                        f"{context.scene.render.frame_path(frame=context.scene.frame_start)}")
        return jobs

    def execute(self, context):
        """Blocking (scripts and background mode)."""
        lull = _lull_or_report(self)
        jobs = self._collect(context) if lull else None
        if not jobs:
            return {"CANCELLED"}
        settings = self._settings(context)
        try:
            device = lull.Device(settings.device)
        except (ValueError, lull.Error) as e:
            self.report({"ERROR"}, f"lull: device '{settings.device}': {e}")
            return {"CANCELLED"}
        failed = []
        unguided = []
        cuts = cut_frames(context.scene)
        streams = {}  # view -> pipeline.Temporal (frames in order)
        for src, dst, frame, view in jobs:
            temporal = None
            if settings.temporal:
                if view not in streams:
                    streams[view] = pipeline.Temporal(lull)
                temporal = streams[view]
                temporal.begin(frame, settings, frame in cuts)
            ok = False
            try:
                pipeline.denoise_file(lull, src, dst, settings, device=device,
                                      unguided=unguided, temporal=temporal)
                ok = True
            except (ValueError, KeyError, lull.Error) as e:
                failed.append(f"{os.path.basename(src)}: {e}")
            if temporal is not None:
                temporal.end(ok)
        for temporal in streams.values():
            temporal.close()
        done = len(jobs) - len(failed)
        if failed:
            self.report({"WARNING"}, f"lull: denoised {done} frame(s), failed: "
                        + "; ".join(failed))
        else:
            self.report({"INFO"}, f"lull: denoised {done} frame(s)")
        _report_unguided(self, unguided)
        return {"FINISHED"}

    def _settings(self, context):
        settings = settings_of(context.scene)
        if settings.temporal and not temporal_frames(context.scene):
            settings.temporal = False
            self.report({"WARNING"}, "lull: a Frame Step above 1: the frames are denoised "
                        "without temporal mode (the Vector pass relates a frame to the one "
                        "just before)")
        return settings

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        running = _animation["worker"]
        if running is not None and running.pending() > 0:
            # one at a time: both would denoise the same frames and share the
            # progress display, and Esc would stop only the last
            self.report({"WARNING"}, "lull: frames are being denoised (Esc cancels)")
            return {"CANCELLED"}
        lull = _lull_or_report(self)
        self._jobs = self._collect(context) if lull else None
        if not self._jobs:
            return {"CANCELLED"}
        self._worker = pipeline.Worker(lull)
        _animation["worker"] = self._worker
        settings = self._settings(context)
        cuts = cut_frames(context.scene)
        # in frame order, one worker thread: temporal mode's history carries
        for src, dst, frame, view in self._jobs:
            self._worker.submit(src, dst, settings, frame, frame in cuts, view)
        return self._begin(context, len(self._jobs))

    def modal(self, context, event):
        wm = context.window_manager
        if event.type == "ESC":
            self.cancel(context)  # stop the work, take the display down
            self.report({"WARNING"}, f"lull: cancelled after {len(self._worker.done)} frame(s)")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"PASS_THROUGH"}
        finished = len(self._worker.done) + len(self._worker.failed)
        wm.progress_update(finished)
        if context.workspace is not None:
            context.workspace.status_text_set(
                f"lull: {finished}/{len(self._jobs)} frames — {self._worker.status()} "
                "(Esc cancels)")
        if self._worker.pending() == 0:
            self._finish(context)
            level = {"WARNING"} if self._worker.failed else {"INFO"}
            self.report(level, f"lull: {self._worker.status()}")
            _report_unguided(self, self._worker.unguided)
            return {"FINISHED"}
        return {"RUNNING_MODAL"}

    def _stop_work(self):
        self._worker.cancel()


def still_paths(scene):
    """The files of render(write_still=True): the output path without a frame
    number (one a view in stereo)."""
    render = scene.render
    stem = bpy.path.abspath(render.filepath)
    ext = render.file_extension
    if ext and stem.lower().endswith(ext.lower()):
        stem = stem[:-len(ext)]
    suffixes = [""]
    if view_names(scene) != [""]:
        suffixes = [render.views[v].file_suffix for v in view_names(scene)]
    return [stem + suffix + (ext if render.use_file_extension else "") for suffix in suffixes]


def written_paths(scene, since):
    """The files Blender has just written for the current frame: the
    animation frame's, or a still's (it had denoised a stale numbered file
    in the still's place), written since the render began."""
    found = []
    for path in frame_paths(scene, scene.frame_current) + still_paths(scene):
        try:
            fresh = os.path.getmtime(path) >= since - 1.0
        except OSError:
            continue
        if fresh and path not in found:
            found.append(path)
    return found


@bpy.app.handlers.persistent
def on_render_init(*_):
    """When a render (a still or an animation) begins: files older than
    this are not its output, and the frames of an animation start a new
    history in temporal mode."""
    _auto["render_started"] = time.time()
    if _auto["worker"] is not None:
        _auto["worker"].forget_history()
    for temporal in _auto["temporal"].values():
        temporal.end(False)


@bpy.app.handlers.persistent
def on_render_write(scene, *_):
    """After Blender writes a frame: queue it for the background worker (never
    blocks the render)."""
    settings = getattr(scene, "lull", None)
    if settings is None or not settings.auto_denoise:
        return
    if not is_multilayer_exr(scene.render.image_settings):
        print("lull: automatic denoising needs multilayer OpenEXR output; frame skipped")
        return
    problem = views_problem(scene)
    if problem:
        print(f"lull: {problem}; frame not denoised")
        return
    lull = loader.load()
    if lull is None:
        print("lull: the lull module is not available; frame not denoised")
        return
    if not settings.in_place:
        try:
            pipeline.check_suffix(settings.suffix)
        except ValueError as e:
            print(f"lull: {e}; frame not denoised")
            return
    settings = settings_of(scene)
    frame = scene.frame_current
    # an animation's frame (a numbered file) goes through temporal mode, in
    # the order Blender renders them; a still does not
    animation_files = frame_paths(scene, frame)
    temporal_ok = settings.temporal and temporal_frames(scene)
    cut = frame in cut_frames(scene)
    for src in written_paths(scene, _auto["render_started"]):
        numbered = temporal_ok and src in animation_files
        view = view_names(scene)[animation_files.index(src)] if numbered else ""
        if bpy.app.background:
            # batch: at once, in the render's thread, with the result in the log
            temporal = None
            if numbered:
                temporal = _auto["temporal"].get(view)
                if temporal is None:
                    temporal = _auto["temporal"][view] = pipeline.Temporal(lull)
                temporal.begin(frame, settings, cut)
            ok = False
            try:
                pipeline.denoise_file(lull, src, output_path(scene, src), settings,
                                      temporal=temporal)
                print(f"lull: denoised {src}")
                ok = True
            except (ValueError, KeyError, OSError, lull.Error) as e:
                print(f"lull: {src}: {e}")
            if temporal is not None:
                temporal.end(ok)
        else:
            auto_worker().submit(src, output_path(scene, src), settings,
                                 frame if numbered else None, cut, view)


classes = (LULL_OT_enable_passes, LULL_OT_denoise_render, LULL_OT_denoise_animation)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    if on_render_write not in bpy.app.handlers.render_write:
        bpy.app.handlers.render_write.append(on_render_write)
    if on_render_init not in bpy.app.handlers.render_init:
        bpy.app.handlers.render_init.append(on_render_init)


def unregister():
    if on_render_write in bpy.app.handlers.render_write:
        bpy.app.handlers.render_write.remove(on_render_write)
    if on_render_init in bpy.app.handlers.render_init:
        bpy.app.handlers.render_init.remove(on_render_init)
    # Frames queued by Denoise Written Frames are left to finish: Blender
    # disables every add-on when it quits, and the worker's thread (not a
    # daemon) then keeps Python alive until the queue is done (cancelling
    # here had dropped the queue on every quit).  The operators' own work
    # stops, and their timers and progress display go, since Blender frees
    # them without calling their cancel().
    job = _last_render["job"]
    if job is not None and job.running():
        job.cancel()
    if _animation["worker"] is not None:
        _animation["worker"].cancel()
    wm = getattr(bpy.context, "window_manager", None)
    while _timers:
        timer = _timers.pop()
        if wm is not None:
            try:
                wm.event_timer_remove(timer)
                wm.progress_end()
            except (ReferenceError, RuntimeError):
                pass
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
