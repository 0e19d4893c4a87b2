"""Which Cycles passes lull's filters use, and how to find them in a render.

Pass names are those of Blender's RenderResult and multilayer EXR files
("ViewLayer.Combined.R", "ViewLayer.Denoising Albedo.G", ...): see
intern/cycles/blender/addon/engine.py, list_render_passes().  No bpy here,
so the add-on's file pipeline runs (and is tested) without Blender.
"""

# The colour to denoise, in order of preference: "Noisy Image" exists when
# Cycles' own denoiser ran (Combined is then already denoised by it).
COLOR_PASSES = ("Noisy Image", "Combined")

# filter image name -> Cycles pass.  "Denoising *" come with the view
# layer's "Denoising Data" option (denoising_store_passes); Position with
# use_pass_position (a guide only where there is no depth: Enable Passes
# does not ask for it, Denoising Data bringing the depth).
GUIDE_PASSES = (
    ("albedo", "Denoising Albedo"),
    ("normal", "Denoising Normal"),
    ("depth", "Denoising Depth"),
    ("position", "Position"),
)

# Temporal mode's motion vectors: Cycles' Vector pass (use_pass_vector; it is
# written only with motion blur off).
MOTION_PASS = "Vector"

# The pass the add-on writes next to the originals, per view layer.
OUTPUT_PASS = "Denoised"

# View-layer settings each filter wants: (description, owner, attribute),
# owner "cycles" meaning view_layer.cycles.
NEEDED_SETTINGS = {
    "RT": (("Denoising Data", "cycles", "denoising_store_passes"),),
    "ATrous": (("Denoising Data", "cycles", "denoising_store_passes"),),
    "Gaussian": (),
}

# What temporal mode adds (animations: no flicker).
TEMPORAL_SETTINGS = (("Vector (temporal)", "layer", "use_pass_vector"),)


def _key(layer, name, view=""):
    return ".".join(part for part in (layer, name, view) if part)


def split_key(passes, key):
    """(layer, pass, view) of a key of lull.read_exr's result: it ends in
    ".<view>" when the file has that view (a stereo render's
    "ViewLayer.Combined.left"; view names may hold dots: the longest that
    fits), else the view is ""."""
    view = ""
    for v in sorted(getattr(passes, "views", ()), key=len, reverse=True):
        if key.endswith("." + v) and len(key) > len(v) + 1:
            key, view = key[:-len(v) - 1], v
            break
    layer, _, name = key.rpartition(".")
    return layer, name, view


def targets(passes):
    """(view layer, view) of a file's passes that have a colour pass, in
    file order; the view is "" but in stereo renders."""
    found = []
    for key in passes:
        layer, name, view = split_key(passes, key)
        if name in COLOR_PASSES and (layer, view) not in found:
            found.append((layer, view))
    return found


def layers(passes):
    """View layers of a file's passes that have a colour pass, in file order."""
    found = []
    for layer, _ in targets(passes):
        if layer not in found:
            found.append(layer)
    return found


def label(layer, view=""):
    """How the add-on names a view layer (and view) to the user."""
    return f"{layer} ({view})" if view else layer


def color_key(passes, layer, view=""):
    for name in COLOR_PASSES:
        if _key(layer, name, view) in passes:
            return _key(layer, name, view)
    return None


def filter_inputs(passes, layer, accepted, view="", motion=False):
    """{image name: array} for one view layer (and view): the colour and
    every guide the filter accepts that the file has, and with `motion` the
    Vector pass as "motion" when there is one.  OIDN's rule (normals need an
    albedo) is kept by dropping the normal when the albedo is missing."""
    key = color_key(passes, layer, view)
    if key is None:
        raise KeyError(f"view layer '{label(layer, view)}' has no Combined pass")
    inputs = {"color": passes[key]}
    guides = GUIDE_PASSES + ((("motion", MOTION_PASS),) if motion else ())
    for image, name in guides:
        if image in accepted and _key(layer, name, view) in passes:
            inputs[image] = passes[_key(layer, name, view)]
    if "normal" in inputs and "albedo" not in inputs:
        del inputs["normal"]
    return inputs


def output_key(layer, view=""):
    return _key(layer, OUTPUT_PASS, view)
