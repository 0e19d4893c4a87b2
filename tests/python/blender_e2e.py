"""End-to-end run of the lull add-on in real Blender (the `bpy` module,
headless), in its own process (test_blender_addon.py starts it):

1. builds a tiny scene (a box with a sphere, an area light) with two view
   layers, Cycles on the CPU;
2. installs and enables the add-on from its zip (extension install on 4.2+);
3. runs Enable Passes, renders a high-spp reference and a 4-spp image,
   runs Denoise Last Render;
4. renders a 2-frame animation as multilayer EXR with automatic denoising
   on (render_write handler + background worker), then runs Denoise
   Animation Frames on the same frames;
4b. drives both denoise operators' modal paths (invoke, TIMER events, Esc)
   as Blender's event loop would, with a recording window manager;
4c. Render Halves and Denoise: a still and a 2-frame animation (blocking),
   the modal path to the end, Esc, and a render Blender cancelled;
5. writes what it found to a JSON file for the test to judge.

    python blender_e2e.py ZIP WORKDIR RESULT.json
"""

import json
import os
import shutil
import sys
import time

import blender_scene
import bpy
import numpy as np

ZIP, WORK, RESULT = sys.argv[1:4]
RES = (64, 48)


def build_scene():
    scene, sphere = blender_scene.build(RES)
    # a second view layer without the sphere
    second = scene.view_layers.new("Second")
    coll = bpy.data.collections.new("Props")
    scene.collection.children.link(coll)
    scene.collection.objects.unlink(sphere)
    coll.objects.link(sphere)
    second.layer_collection.children["Props"].exclude = True
    return scene


def install_addon():
    """Installs from the zip like a user: extension (4.2+) or legacy add-on."""
    if hasattr(bpy.ops, "extensions") and bpy.app.version >= (4, 2, 0):
        bpy.ops.extensions.package_install_files(filepath=ZIP, repo="user_default",
                                                 enable_on_install=True)
        how = "extension"
    else:
        bpy.ops.preferences.addon_install(filepath=ZIP)
        bpy.ops.preferences.addon_enable(module="lull_denoise")
        how = "legacy"
    module = next((m for name, m in sys.modules.items() if name.endswith("lull_denoise")), None)
    return how, module


def linear_pixels(image):
    """Blender image pixels (bottom row first) as (H, W, 4), top row first."""
    w, h = image.size
    pixels = np.empty(w * h * 4, np.float32)
    image.pixels.foreach_get(pixels)
    return pixels.reshape(h, w, 4)[::-1]


def rel_mse(x, ref):
    x, ref = x[..., :3].astype(np.float64), ref[..., :3].astype(np.float64)
    return float(np.mean((x - ref) ** 2 / (ref ** 2 + 1e-2)))


def exr_compression(path):
    """The compression byte of an EXR's (first) header: 3 ZIP, 8 DWAA."""
    with open(path, "rb") as f:
        header = f.read(1 << 16)
    at = header.find(b"compression\0compression\0")
    return header[at + 28] if at >= 0 else None


class LayoutRecorder:
    """Stands in for a panel's UILayout: records what draw() puts in it and
    checks it against Blender's own description of UILayout (every keyword
    and icon name) and of the data (every property) and operators it names
    (the panel's code runs only when someone opens it)."""

    def __init__(self, log, parent=None):
        self.log, self.parent = log, parent
        self.use_property_split = self.use_property_decorate = False
        self.alert = self.enabled = True

    def _live(self):
        """Whether items added here are enabled (every enclosing layout is)."""
        return self.enabled and (self.parent is None or self.parent._live())

    def _check(self, function, kwargs):
        params = bpy.types.UILayout.bl_rna.functions[function].parameters
        for key, value in kwargs.items():
            if key not in params:
                self.log["errors"].append(f"UILayout.{function}() has no keyword {key}")
            elif key == "icon" and value not in params["icon"].enum_items.keys():
                self.log["errors"].append(f"no icon {value}")

    def box(self, **kwargs):
        self._check("box", kwargs)
        return LayoutRecorder(self.log, self)

    def column(self, **kwargs):
        self._check("column", kwargs)
        return LayoutRecorder(self.log, self)

    def row(self, **kwargs):
        self._check("row", kwargs)
        return LayoutRecorder(self.log, self)

    def separator(self, **kwargs):
        self._check("separator", kwargs)

    def label(self, **kwargs):
        self._check("label", kwargs)
        self.log["labels"].append(kwargs.get("text", ""))

    def prop(self, data, name, **kwargs):
        self._check("prop", kwargs)
        self.log["props"].append(name)
        if name not in data.bl_rna.properties:
            self.log["errors"].append(f"no property {name} on {data.bl_rna.identifier}")

    def operator(self, idname, **kwargs):
        self._check("operator", kwargs)
        self.log["operators"].append([idname, self._live()])
        group, op = idname.split(".")
        if op not in dir(getattr(bpy.ops, group)):
            self.log["errors"].append(f"no operator {idname}")
            return None
        return OperatorProperties(self.log, getattr(getattr(bpy.ops, group), op))


class OperatorProperties:
    """Stands in for the properties of an operator button: what the panel
    sets must be a property of the operator."""

    def __init__(self, log, op):
        object.__setattr__(self, "_log", log)
        object.__setattr__(self, "_names", op.get_rna_type().properties.keys())

    def __setattr__(self, name, value):
        if name not in self._names:
            self._log["errors"].append(f"the operator has no property {name}")


def draw_panel(addon, filter_type):
    """RENDER_PT_lull.draw for one filter type, on a recorder (the scene's
    filter type is put back afterwards)."""
    panel = sys.modules[addon.__name__ + ".panel"].RENDER_PT_lull
    settings = bpy.context.scene.lull
    before = settings.filter_type
    settings.filter_type = filter_type
    log = {"props": [], "operators": [], "labels": [], "errors": []}

    class Host:  # draw() reads only self.layout
        layout = LayoutRecorder(log)

    try:
        panel.draw(Host(), bpy.context)
    except Exception as e:  # noqa: BLE001 - reported to the test
        log["errors"].append(f"{type(e).__name__}: {e}")
    finally:
        settings.filter_type = before
    return log


def render_to(scene, path, samples, seed):
    scene.cycles.samples = samples
    scene.cycles.seed = seed
    bpy.ops.render.render()
    from_addon = sys.modules[ADDON.__name__ + ".operators"]
    from_addon.save_render_result(scene, path)


os.makedirs(WORK, exist_ok=True)
result = {"blender": bpy.app.version_string}
scene = build_scene()
how, ADDON = install_addon()
result["install"] = how
result["addon_loaded"] = ADDON is not None
result["operators"] = sorted(op for op in dir(bpy.ops.lull))
result["panel"] = hasattr(bpy.types, "RENDER_PT_lull") and hasattr(bpy.types.Scene, "lull")
lull = sys.modules[ADDON.__name__ + ".loader"].require()
result["lull_source"] = sys.modules[ADDON.__name__ + ".loader"].source()
# the panel's À-Trous parameters start at the library's defaults
library = {p["name"]: p["default"] for p in lull.filter_params("ATrous")}
result["atrous_defaults"] = {
    name: [getattr(scene.lull, prop), library[name]]
    for prop, name in (("iterations", "iterations"), ("sigma_luminance", "sigmaLuminance"),
                       ("sigma_normal", "sigmaNormal"), ("sigma_depth", "sigmaDepth"),
                       ("sigma_albedo", "sigmaAlbedo"))}

# the panel as Blender would draw it, for both filter types, and with the
# module missing and a background worker running
result["panel_draw"] = {t: draw_panel(ADDON, t) for t in ("RT", "ATrous")}
_loader = sys.modules[ADDON.__name__ + ".loader"]
_operators = sys.modules[ADDON.__name__ + ".operators"]


class _Worker:
    def status(self):
        return "2 frames queued"


_error, _worker = _loader.error, _operators._auto["worker"]
PROBLEM = ("the lull module was built for Python 3.11, and this Blender runs another Python, "
           "so its compiled extension cannot be loaded")
_loader.error = lambda: PROBLEM
_operators._auto["worker"] = _Worker()
try:
    result["panel_draw"]["problem"] = draw_panel(ADDON, "RT")
    result["panel_draw"]["problem"]["text"] = PROBLEM
finally:
    _loader.error, _operators._auto["worker"] = _error, _worker

# passes, via the add-on's button, on every layer
for layer in scene.view_layers:
    bpy.context.window_manager  # keeps the context alive in background mode
    with bpy.context.temp_override(view_layer=layer):
        bpy.ops.lull.enable_passes(all_layers=False)
result["passes_enabled"] = {l.name: bool(l.cycles.denoising_store_passes)
                            for l in scene.view_layers}
# multilayer EXR: a file format, since Blender 5.0 only for its media type
result["output_format"] = [scene.render.image_settings.file_format,
                           getattr(scene.render.image_settings, "media_type", None)]

# reference and noisy render
start = time.perf_counter()
ref_path = os.path.join(WORK, "reference.exr")
render_to(scene, ref_path, 128, 7)
noisy_path = os.path.join(WORK, "noisy.exr")
scene.render.image_settings.exr_codec = "DWAA"  # lossy: not for the saved render
# an output colour space override, which setting the file format resets
scene.render.image_settings.color_management = "OVERRIDE"
scene.render.image_settings.linear_colorspace_settings.name = "ACEScg"
render_to(scene, noisy_path, 4, 1)
result["saved_codec"] = exr_compression(noisy_path)
result["codec_kept"] = scene.render.image_settings.exr_codec
result["colorspace_kept"] = scene.render.image_settings.linear_colorspace_settings.name
scene.render.image_settings.exr_codec = "ZIP"
scene.render.image_settings.color_management = "FOLLOW_SCENE"
result["render_seconds"] = time.perf_counter() - start
ref = lull.read_exr(ref_path)
noisy = lull.read_exr(noisy_path)

# Denoise Last Render
scene.lull.filter_type = "RT"
outcome = bpy.ops.lull.denoise_render()
result["denoise_render"] = sorted(outcome)
layers = {}
for layer in scene.view_layers:
    image = bpy.data.images.get(f"lull Denoised {layer.name}")
    entry = {"image": image is not None}
    if image is not None:
        pixels = linear_pixels(image)
        key = f"{layer.name}.Combined"
        entry.update(
            shape=list(pixels.shape), finite=bool(np.isfinite(pixels).all()),
            relmse_noisy=rel_mse(noisy[key], ref[key]),
            relmse_denoised=rel_mse(pixels, ref[key]))
    layers[layer.name] = entry
result["layers"] = layers

# again, with the first result in use (an image node): the node shows the
# new result (the old image had been removed, leaving its users empty)
user = bpy.data.materials.new("uses the result")
user.use_nodes = True
texture = user.node_tree.nodes.new("ShaderNodeTexImage")
texture.image = bpy.data.images["lull Denoised ViewLayer"]
first_result = linear_pixels(texture.image).copy()
scene.cycles.seed = 2  # another render: another result
bpy.ops.render.render()
result["denoise_render_again"] = sorted(bpy.ops.lull.denoise_render())
result["result_in_use"] = [getattr(texture.image, "name", None), texture.image is not None and
                           not np.array_equal(linear_pixels(texture.image), first_result)]
result["result_images"] = sorted(i.name for i in bpy.data.images
                                 if i.name.startswith("lull Denoised "))
bpy.data.materials.remove(user)

# view layers renamed since the render: the file's layers are denoised
# (there had been none of the scene's names in the file: an error)
for layer in scene.view_layers:
    layer.name = "Renamed " + layer.name
try:
    result["renamed_layers"] = sorted(bpy.ops.lull.denoise_render())
except RuntimeError as e:
    result["renamed_layers"] = str(e)
for layer in scene.view_layers:
    layer.name = layer.name[len("Renamed "):]

# automatic denoising of written frames, then the animation operator
frames_dir = os.path.join(WORK, "frames")
scene.render.filepath = os.path.join(frames_dir, "f_####")
scene.frame_start, scene.frame_end = 1, 2
scene.cycles.samples = 4
scene.cycles.use_animated_seed = True  # independent noise per frame
scene.lull.auto_denoise = True
scene.lull.filter_type = "ATrous"
bpy.ops.render.render(animation=True)
worker = sys.modules[ADDON.__name__ + ".operators"].auto_worker()
result["auto_wait"] = worker.wait(timeout=120)
result["auto_status"] = worker.status()
result["auto_failed"] = list(worker.failed)  # a copy: the worker goes on


def check_frames():
    frames = {}
    for frame in (1, 2):
        src = scene.render.frame_path(frame=frame)
        dst = os.path.splitext(src)[0] + "_denoised.exr"
        info = {"src": os.path.exists(src), "dst": os.path.exists(dst)}
        if info["src"] and info["dst"]:
            a, b = lull.read_exr(src), lull.read_exr(dst)
            info["originals_identical"] = all(
                k in b and np.array_equal(a[k], b[k]) and a.half[k] == b.half[k] for k in a)
            info["added"] = sorted(set(b) - set(a))
            info["relmse"] = {
                l.name: [rel_mse(a[f"{l.name}.Combined"], ref[f"{l.name}.Combined"]),
                         rel_mse(b[f"{l.name}.Denoised"], ref[f"{l.name}.Combined"])]
                for l in scene.view_layers}
        frames[frame] = info
    return frames


result["auto_frames"] = check_frames()
for frame in (1, 2):
    os.remove(os.path.splitext(scene.render.frame_path(frame=frame))[0] + "_denoised.exr")
scene.lull.auto_denoise = False
result["denoise_animation"] = sorted(bpy.ops.lull.denoise_animation())
result["animation_frames"] = check_frames()


# -- the modal paths: invoke, TIMER events and Esc ---------------------------
# In a window Blender runs these operators modally (a timer, a progress
# display, Esc); in background mode invoke takes the execute path, which
# is all the calls above reach.  Here the operators' own functions are
# driven the way Blender's event loop drives them, with invoke told it has
# a window, a window manager and a workspace that record what they are
# asked, and the events made up.

class _WindowManager:
    def __init__(self):
        self.timers, self.removed, self.progress, self.handlers = [], [], [], 0

    def event_timer_add(self, step, window=None):
        self.timers.append(object())
        return self.timers[-1]

    def event_timer_remove(self, timer):
        self.removed.append(timer)

    def progress_begin(self, low, high):
        self.progress.append(["begin", low, high])

    def progress_update(self, value):
        self.progress.append(["update", value])

    def progress_end(self):
        self.progress.append(["end"])

    def modal_handler_add(self, op):
        self.handlers += 1


class _Workspace:
    def __init__(self):
        self.status = []

    def status_text_set(self, text):
        self.status.append(text)


class _Context:
    def __init__(self):
        self.window_manager, self.workspace = _WindowManager(), _Workspace()
        self.window, self.scene = None, bpy.context.scene


class _Event:
    def __init__(self, kind):
        self.type, self.value = kind, "PRESS"


class _App:  # bpy.app as seen with a window
    background = False

    def __getattr__(self, name):
        return getattr(bpy.app, name)


class _Bpy:
    app = _App()

    def __getattr__(self, name):
        return getattr(bpy, name)


def modal_operator(cls):
    """An object with the operator class's functions (a registered
    operator class cannot be instantiated outside Blender's calls) whose
    reports are recorded."""
    members = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith(ADDON.__name__):
            members.update({k: v for k, v in vars(klass).items() if not k.startswith("__")})
            # its properties (annotations: bpy.props) at their defaults
            for name, prop in vars(klass).get("__annotations__", {}).items():
                members[name] = getattr(prop, "keywords", {}).get("default")
    members["report"] = lambda self, level, text: self.reports.append([sorted(level), text])
    op = type(cls.__name__, (), members)()
    op.reports = []
    return op


def drive(op, context, timeout=120.0):
    """invoke, then a non-timer event, then TIMER events until the
    operator leaves the modal state; returns what each call returned."""
    returned = {"invoke": sorted(op.invoke(context, _Event("NONE")))}
    if returned["invoke"] != ["RUNNING_MODAL"]:
        return returned
    returned["mouse"] = sorted(op.modal(context, _Event("MOUSEMOVE")))
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = sorted(op.modal(context, _Event("TIMER")))
        if state != ["RUNNING_MODAL"]:
            returned["end"] = state
            break
        time.sleep(0.02)
    return returned


def escape(cls):
    """invoke, then Esc at once; returns the operator and its log."""
    context, op = _Context(), modal_operator(cls)
    invoked = sorted(op.invoke(context, _Event("NONE")))
    escaped = sorted(op.modal(context, _Event("ESC")))
    return op, modal_log(op, context, {"invoke": invoked, "esc": escaped})


def modal_log(op, context, returned):
    wm = context.window_manager
    return {"returned": returned, "reports": op.reports, "progress": wm.progress,
            "handlers": wm.handlers, "timers_added": len(wm.timers),
            "timers_removed": wm.removed == wm.timers, "status": context.workspace.status}


_operators.bpy = _Bpy()
try:
    # Denoise Animation Frames: to the end, then cancelled at once
    for frame in (1, 2):
        os.remove(os.path.splitext(scene.render.frame_path(frame=frame))[0] + "_denoised.exr")
    ctx = _Context()
    op = modal_operator(_operators.LULL_OT_denoise_animation)
    result["modal_animation"] = modal_log(op, ctx, drive(op, ctx))
    result["modal_animation_frames"] = check_frames()
    # a second one while frames are being denoised is refused
    running, _operators._animation["worker"] = _operators._animation["worker"], type(
        "Busy", (), {"pending": lambda self: 1})()
    second = modal_operator(_operators.LULL_OT_denoise_animation)
    result["modal_animation_second"] = [sorted(second.invoke(_Context(), _Event("NONE"))),
                                        second.reports]
    _operators._animation["worker"] = running
    for frame in (1, 2):
        os.remove(os.path.splitext(scene.render.frame_path(frame=frame))[0] + "_denoised.exr")
    op, result["modal_animation_esc"] = escape(_operators.LULL_OT_denoise_animation)
    result["modal_animation_esc"]["worker_idle"] = op._worker.wait(timeout=120)
    # what the cancel left: the frames finished before it, complete, and
    # nothing else (no partial or temporary files)
    left = sorted(set(os.listdir(frames_dir)) - {"f_0001.exr", "f_0002.exr"})
    result["modal_animation_esc"]["left"] = left
    result["modal_animation_esc"]["done"] = [os.path.basename(d) for _, d in op._worker.done]
    result["modal_animation_esc"]["readable"] = all(
        np.isfinite(lull.read_exr(os.path.join(frames_dir, f))["ViewLayer.Denoised"]).all()
        for f in left)
    for f in left:
        os.remove(os.path.join(frames_dir, f))

    # Denoise Last Render (the last render: frame 2 of the animation)
    for name in [i.name for i in bpy.data.images if i.name.startswith("lull Denoised ")]:
        bpy.data.images.remove(bpy.data.images[name])
    ctx = _Context()
    op = modal_operator(_operators.LULL_OT_denoise_render)
    result["modal_render"] = modal_log(op, ctx, drive(op, ctx))
    result["modal_render_images"] = sorted(i.name for i in bpy.data.images
                                           if i.name.startswith("lull Denoised "))
    for name in result["modal_render_images"]:
        bpy.data.images.remove(bpy.data.images[name])
    op, result["modal_render_esc"] = escape(_operators.LULL_OT_denoise_render)
    result["modal_render_esc"]["job_ended"] = op._job.wait(timeout=120)
    # a later TIMER event does not reach a cancelled operator; nothing shown
    result["modal_render_esc"]["images"] = sorted(i.name for i in bpy.data.images
                                                  if i.name.startswith("lull Denoised "))
finally:
    _operators.bpy = bpy

# -- Render Halves and Denoise ------------------------------------------------
# Two renders of half the samples with different seeds, denoised together
# by the Regression filter; the user's settings (made unusual here) back
# afterwards, whichever way the run ends.
_halves = sys.modules[ADDON.__name__ + ".halves"]
scene.lull.auto_denoise = False
USER_SETTINGS = {"samples": 8, "seed": 5, "use_animated_seed": True,
                 "use_adaptive_sampling": True, "use_denoising": True, "time_limit": 100.0}


def set_user_settings():
    for name, value in USER_SETTINGS.items():
        setattr(scene.cycles, name, value)
    scene.view_layers["Second"].cycles.denoising_store_passes = False
    scene.frame_set(1)


def user_settings_kept():
    kept = {name: getattr(scene.cycles, name) == value for name, value in USER_SETTINGS.items()}
    kept["Second: Denoising Data"] = not scene.view_layers["Second"].cycles.denoising_store_passes
    kept["frame"] = scene.frame_current == 1
    kept["handlers"] = (_halves._render_finished not in bpy.app.handlers.render_complete and
                        _halves._render_cancelled not in bpy.app.handlers.render_cancel)
    return kept


def halves_result():
    """The still's results against the reference, and the halves' noise."""
    halves = [lull.read_exr(p) for p in _halves.half_paths()]
    out = {"images": sorted(i.name for i in bpy.data.images
                            if i.name.startswith("lull Denoised "))}
    for layer in scene.view_layers:
        key = f"{layer.name}.Combined"
        image = bpy.data.images.get(f"lull Denoised {layer.name}")
        if image is None:
            continue
        pixels = linear_pixels(image)
        mean = (halves[0][key] + halves[1][key]) / 2
        noise = [(h[key][..., :3] - ref[key][..., :3]).ravel() for h in halves]
        out[layer.name] = {
            "finite": bool(np.isfinite(pixels).all()),
            "relmse_mean": rel_mse(mean, ref[key]), "relmse_denoised": rel_mse(pixels, ref[key]),
            # two renders of other seeds: their noise is independent
            "noise_correlation": float(np.corrcoef(noise[0], noise[1])[0, 1]),
            "guided": f"{layer.name}.Denoising Albedo" in halves[0]}
    return out


for name in [i.name for i in bpy.data.images if i.name.startswith("lull Denoised ")]:
    bpy.data.images.remove(bpy.data.images[name])
set_user_settings()
result["halves_still"] = sorted(bpy.ops.lull.render_halves())
result["halves_still_result"] = halves_result()
result["halves_still_kept"] = user_settings_kept()

# the animation: every frame into a file of both halves and Denoised
halves_dir = os.path.join(WORK, "halves")
scene.render.filepath = os.path.join(halves_dir, "h_####")
scene.frame_start, scene.frame_end = 1, 2
set_user_settings()
result["halves_animation"] = sorted(bpy.ops.lull.render_halves(animation=True))
result["halves_animation_kept"] = user_settings_kept()
frames = {}
for frame in (1, 2):
    path = scene.render.frame_path(frame=frame)
    entry = {"path": path, "exists": os.path.exists(path)}
    if entry["exists"]:
        passes = lull.read_exr(path)
        entry["passes"] = sorted(passes)
        entry["relmse"] = {}
        for layer in scene.view_layers:
            key = f"{layer.name}.Combined"
            mean = (passes[key + " A"] + passes[key + " B"]) / 2
            entry["relmse"][layer.name] = [rel_mse(mean, ref[key]),
                                           rel_mse(passes[f"{layer.name}.Denoised"], ref[key])]
        entry["combined_a"] = passes["ViewLayer.Combined A"]
    frames[frame] = entry
# Use Animated Seed: each frame's halves have their own noise
result["halves_frames_differ"] = bool(
    frames[1]["exists"] and frames[2]["exists"] and
    not np.array_equal(frames[1].pop("combined_a"), frames[2].pop("combined_a")))
result["halves_frames"] = frames
scene.render.filepath = os.path.join(frames_dir, "f_####")


class _RenderOps:
    """bpy.ops as the modal path sees it: the render "job" runs at once
    (background mode has no job), firing render_complete as a job does."""

    class render:  # noqa: N801 - bpy.ops.render
        @staticmethod
        def render(*args, **kwargs):
            return bpy.ops.render.render(*[a for a in args if a != "INVOKE_DEFAULT"], **kwargs)

    def __getattr__(self, name):
        return getattr(bpy.ops, name)


class _HalvesBpy(_Bpy):
    ops = _RenderOps()


_halves.bpy = _HalvesBpy()
try:
    for name in [i.name for i in bpy.data.images if i.name.startswith("lull Denoised ")]:
        bpy.data.images.remove(bpy.data.images[name])
    set_user_settings()
    ctx = _Context()
    op = modal_operator(_halves.LULL_OT_render_halves)
    op.animation = False
    result["halves_modal"] = modal_log(op, ctx, drive(op, ctx))
    result["halves_modal_result"] = halves_result()
    result["halves_modal_kept"] = user_settings_kept()
    # Esc after the first half
    for name in result["halves_modal_result"]["images"]:
        bpy.data.images.remove(bpy.data.images[name])
    set_user_settings()
    op, result["halves_modal_esc"] = escape(_halves.LULL_OT_render_halves)
    result["halves_modal_esc"]["kept"] = user_settings_kept()
    result["halves_modal_esc"]["images"] = sorted(
        i.name for i in bpy.data.images if i.name.startswith("lull Denoised "))
    # Blender's render cancelled (Esc in the render window)
    set_user_settings()
    ctx = _Context()
    op = modal_operator(_halves.LULL_OT_render_halves)
    op.animation = False
    returned = {"invoke": sorted(op.invoke(ctx, _Event("NONE")))}
    _halves._render_cancelled()
    returned["timer"] = sorted(op.modal(ctx, _Event("TIMER")))
    result["halves_render_cancelled"] = modal_log(op, ctx, returned)
    result["halves_render_cancelled"]["kept"] = user_settings_kept()
finally:
    _halves.bpy = bpy
for name, value in (("samples", 4), ("use_adaptive_sampling", False), ("use_denoising", False),
                    ("time_limit", 0.0)):
    setattr(scene.cycles, name, value)
scene.view_layers["Second"].cycles.denoising_store_passes = True

# a still (write_still) with automatic denoising: the still is denoised, not
# an older numbered frame in its place (shot0001.exr had been)
still_dir = os.path.join(WORK, "still")
os.makedirs(still_dir, exist_ok=True)
scene.render.filepath = os.path.join(still_dir, "shot")
stale = scene.render.frame_path(frame=scene.frame_current)
shutil.copyfile(noisy_path, stale)
os.utime(stale, (time.time() - 3600, time.time() - 3600))
scene.lull.auto_denoise = True
bpy.ops.render.render(write_still=True)
scene.lull.auto_denoise = False
result["still_files"] = sorted(os.listdir(still_dir))
# the output path a folder (Blender's default "/tmp/"): the still is
# ".exr", its copy "_denoised.exr" (it had been ".exr_denoised.exr")
folder_dir = os.path.join(WORK, "folder")
os.makedirs(folder_dir, exist_ok=True)
scene.render.filepath = folder_dir + os.sep
scene.lull.auto_denoise = True
bpy.ops.render.render(write_still=True)
scene.lull.auto_denoise = False
result["folder_still_files"] = sorted(os.listdir(folder_dir))
scene.render.filepath = os.path.join(frames_dir, "f_####")

# a user's AOV named "Denoised" is never replaced (Into the Same File had
# lost it: the frame fails, named); lull's own pass, from an earlier run
# into the same file, is; Denoise Animation Frames names a layer without
# Denoising Data, as Denoise Last Render does; an empty suffix is refused
# (the copy had been the rendered file itself)
aov_dir = os.path.join(WORK, "aov")
scene.render.filepath = os.path.join(aov_dir, "a_####")
scene.frame_start = scene.frame_end = 1
main_layer = scene.view_layers["ViewLayer"]
aov = main_layer.aovs.add()
aov.name = "Denoised"
bpy.ops.render.render(animation=True)
aov_src = scene.render.frame_path(frame=1)
user_pass = lull.read_exr(aov_src)["ViewLayer.Denoised"]


def denoise_animation_execute():
    """Denoise Animation Frames' execute (what a script or background mode
    runs), its reports recorded."""
    op = modal_operator(_operators.LULL_OT_denoise_animation)
    return [sorted(op.execute(_Context())), op.reports]


scene.lull.in_place = True
result["aov_run"] = denoise_animation_execute()
result["aov_kept"] = bool(np.array_equal(lull.read_exr(aov_src)["ViewLayer.Denoised"],
                                         user_pass))
main_layer.aovs.remove(aov)
scene.view_layers["Second"].cycles.denoising_store_passes = False
bpy.ops.render.render(animation=True)  # the frame again, without the AOV
result["in_place_runs"] = [denoise_animation_execute() for _ in range(2)]
result["in_place_passes"] = sorted(k for k in lull.read_exr(aov_src) if "Denoised" in k)
scene.view_layers["Second"].cycles.denoising_store_passes = True
scene.lull.in_place = False
scene.lull.suffix = ""
result["empty_suffix"] = denoise_animation_execute()
result["empty_suffix_files"] = sorted(os.listdir(aov_dir))
scene.lull.suffix = "_denoised"
scene.render.filepath = os.path.join(frames_dir, "f_####")

# stereo: a file a view (Blender's default) gets each view denoised, at once
# in batch mode; so does one file of both views (Multi-View: a part per
# pass and view), and the last render of both views
scene.frame_start = scene.frame_end = 1
scene.lull.auto_denoise = True
scene.render.use_multiview = True
stereo_dir = os.path.join(WORK, "stereo")
scene.render.filepath = os.path.join(stereo_dir, "s_####")
bpy.ops.render.render(animation=True)
result["stereo_files"] = sorted(os.listdir(stereo_dir))
scene.lull.auto_denoise = False
scene.render.image_settings.views_format = "MULTIVIEW"
scene.render.filepath = os.path.join(stereo_dir, "m_####")
bpy.ops.render.render(animation=True)
try:
    result["stereo_one_file"] = sorted(bpy.ops.lull.denoise_animation())
except RuntimeError as e:
    result["stereo_one_file"] = str(e)
stereo = lull.read_exr(os.path.join(stereo_dir, "m_0001_denoised.exr"))
result["stereo_one_file_passes"] = sorted(k for k in stereo if "Denoised" in k)
result["stereo_one_file_finite"] = all(bool(np.isfinite(stereo[k]).all())
                                       for k in stereo if "Denoised" in k)
result["stereo_one_file_views_differ"] = bool(
    (stereo["ViewLayer.Denoised.left"] != stereo["ViewLayer.Denoised.right"]).any())
bpy.ops.render.render()
result["stereo_last_render"] = sorted(bpy.ops.lull.denoise_render())
# the output's views format as it was (switching the file format reset it)
result["views_format_kept"] = scene.render.image_settings.views_format
result["stereo_last_render_images"] = sorted(i.name for i in bpy.data.images
                                             if i.name.startswith("lull Denoised ")
                                             and i.name.endswith(")"))
# the output's EXR Interleave on, views a file each: each view's file
# names its view ("ViewLayer.Combined.left"), which had been given again
scene.render.image_settings.views_format = "INDIVIDUAL"
scene.render.image_settings.use_exr_interleave = True
for name in result["stereo_last_render_images"]:
    bpy.data.images.remove(bpy.data.images[name])
try:
    result["stereo_interleaved"] = sorted(bpy.ops.lull.denoise_render())
except RuntimeError as e:
    result["stereo_interleaved"] = str(e)
result["stereo_interleaved_images"] = sorted(i.name for i in bpy.data.images
                                             if i.name.startswith("lull Denoised ")
                                             and i.name.endswith(")"))
scene.render.image_settings.use_exr_interleave = False
scene.render.image_settings.views_format = "INDIVIDUAL"
scene.render.use_multiview = False

# the compositor's output is written as a layer "Composite": not denoised
if hasattr(scene, "compositing_node_group"):  # Blender 5
    tree = bpy.data.node_groups.new("Comp", "CompositorNodeTree")
    scene.compositing_node_group = tree
    tree.interface.new_socket("Image", in_out="OUTPUT", socket_type="NodeSocketColor")
    tree.links.new(tree.nodes.new("CompositorNodeRLayers").outputs["Image"],
                   tree.nodes.new("NodeGroupOutput").inputs[0])
else:
    scene.use_nodes = True  # the default tree: render layers to Composite
comp_dir = os.path.join(WORK, "composite")
scene.render.filepath = os.path.join(comp_dir, "c_####")
bpy.ops.render.render(animation=True)
comp_src = scene.render.frame_path(frame=1)
comp_in = set(lull.read_exr(comp_src))
bpy.ops.lull.denoise_animation()
result["composite_layer"] = any(k.startswith("Composite.") for k in comp_in)
result["composite_added"] = sorted(
    set(lull.read_exr(os.path.splitext(comp_src)[0] + "_denoised.exr")) - comp_in)

# disabling the add-on (Blender does it for every add-on when it quits)
# leaves the frames queued by Denoise Written Frames to finish (it had
# dropped the queue, so a quit lost them)
operators = sys.modules[ADDON.__name__ + ".operators"]
queued = []
for frame in (1, 2):
    src = os.path.join(frames_dir, f"f_{frame:04d}.exr")
    dst = os.path.join(frames_dir, f"f_{frame:04d}_queued.exr")
    operators.auto_worker().submit(src, dst, operators.settings_of(scene))
    queued.append(dst)
import addon_utils  # noqa: E402 - Blender's own module, importable once bpy is

# as Blender disables it (at quit too; unregister() called directly was
# called again at this process's exit, and failed there)
addon_utils.disable(ADDON.__name__)
result["unregistered"] = not hasattr(bpy.types, "RENDER_PT_lull")
result["queue_kept"] = (operators._auto["worker"].wait(timeout=120)
                        and all(os.path.exists(q) for q in queued))

with open(RESULT, "w") as f:
    json.dump(result, f, indent=1, default=str)
print(json.dumps(result, indent=1, default=str))
