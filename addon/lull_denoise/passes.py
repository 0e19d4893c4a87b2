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
# use_pass_position.
GUIDE_PASSES = (
    ("albedo", "Denoising Albedo"),
    ("normal", "Denoising Normal"),
    ("depth", "Denoising Depth"),
    ("position", "Position"),
)

# The pass the add-on writes next to the originals, per view layer.
OUTPUT_PASS = "Denoised"

# View-layer settings each filter wants: (description, owner, attribute),
# owner "cycles" meaning view_layer.cycles.
NEEDED_SETTINGS = {
    "RT": (("Denoising Data", "cycles", "denoising_store_passes"),),
    "ATrous": (("Denoising Data", "cycles", "denoising_store_passes"),
               ("Position", "layer", "use_pass_position")),
    "Gaussian": (),
}


def _key(layer, name):
    return f"{layer}.{name}" if layer else name


def layers(passes):
    """View layers of a file's passes that have a colour pass, in file order."""
    found = []
    for key in passes:
        layer, _, name = key.rpartition(".")
        if name in COLOR_PASSES and layer not in found:
            found.append(layer)
    return found


def color_key(passes, layer):
    for name in COLOR_PASSES:
        if _key(layer, name) in passes:
            return _key(layer, name)
    return None


def filter_inputs(passes, layer, accepted):
    """{image name: array} for one view layer: the colour and every guide
    the filter accepts that the file has.  OIDN's rule (normals need an
    albedo) is kept by dropping the normal when the albedo is missing."""
    key = color_key(passes, layer)
    if key is None:
        raise KeyError(f"view layer '{layer}' has no Combined pass")
    inputs = {"color": passes[key]}
    for image, name in GUIDE_PASSES:
        if image in accepted and _key(layer, name) in passes:
            inputs[image] = passes[_key(layer, name)]
    if "normal" in inputs and "albedo" not in inputs:
        del inputs["normal"]
    return inputs


def output_key(layer):
    return _key(layer, OUTPUT_PASS)
