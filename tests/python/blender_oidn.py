"""Blender's own denoisers, in real Blender (the `bpy` module, headless), in
a process of its own (test_blender_oidn.py starts it twice: as it is, with
the Open Image Denoise the bpy wheel ships, and through `lull run`, with
lull's):

1. the tiny Cycles scene of blender_scene.py (a box with a sphere, an
   area light) on the CPU;
2. MODE "reference": a high-spp render, no denoiser;
   MODE "denoise": a low-spp render with Cycles' denoiser OpenImageDenoise
   on the CPU (prefilter Accurate, Blender's default) and the Denoising
   Data passes (the noisy colour, albedo and normal Cycles hands the
   denoiser), plus the compositor's Denoise node (prefilter None) on the
   same passes;
3. the render as a multilayer EXR (32-bit float), and what the process
   found (the libOpenImageDenoise it mapped, the add-on's account of it)
   as JSON.

    python blender_oidn.py MODE OUT.exr RESULT.json ADDON_DIR
"""

import json
import sys

import blender_scene
import bpy

MODE, OUT, RESULT, ADDON_DIR = sys.argv[1:5]
RES = (64, 48)


def build_scene():
    scene, _ = blender_scene.build(RES)
    settings = scene.render.image_settings
    if hasattr(settings, "media_type"):  # Blender 5.0
        settings.media_type = "MULTI_LAYER_IMAGE"
    settings.file_format = "OPEN_EXR_MULTILAYER"
    settings.color_depth = "32"
    settings.exr_codec = "ZIP"
    scene.render.filepath = OUT
    return scene


def compositor_denoise(scene):
    """Render Layers' noisy colour, albedo and normal through a Denoise node
    (HDR, prefilter None) into the composite (Blender 5.0's node group
    compositor; 4.x's scene node tree)."""
    if hasattr(scene, "compositing_node_group"):
        tree = bpy.data.node_groups.new("Denoise", "CompositorNodeTree")
        scene.compositing_node_group = tree
        tree.interface.new_socket(name="Image", in_out="OUTPUT", socket_type="NodeSocketColor")
        out = tree.nodes.new("NodeGroupOutput")
    else:
        scene.use_nodes = True
        tree = scene.node_tree
        tree.nodes.clear()
        out = tree.nodes.new("CompositorNodeComposite")
    layers = tree.nodes.new("CompositorNodeRLayers")
    denoise = tree.nodes.new("CompositorNodeDenoise")
    tree.links.new(layers.outputs["Noisy Image"], denoise.inputs["Image"])
    tree.links.new(layers.outputs["Denoising Albedo"], denoise.inputs["Albedo"])
    tree.links.new(layers.outputs["Denoising Normal"], denoise.inputs["Normal"])
    tree.links.new(denoise.outputs["Image"], out.inputs["Image"])
    if "Prefilter" in denoise.inputs:  # 5.0: sockets
        denoise.inputs["HDR"].default_value = True
        denoise.inputs["Prefilter"].default_value = "None"
    else:
        denoise.use_hdr = True
        denoise.prefilter = "NONE"


scene = build_scene()
if MODE == "reference":
    scene.cycles.samples = 512
    scene.cycles.use_denoising = False
else:
    scene.cycles.samples = 16
    scene.cycles.use_denoising = True
    scene.cycles.denoiser = "OPENIMAGEDENOISE"
    scene.cycles.denoising_use_gpu = False
    scene.cycles.denoising_prefilter = "ACCURATE"
    scene.cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    scene.cycles.denoising_quality = "HIGH"
    scene.view_layers[0].cycles.denoising_store_passes = True
    compositor_denoise(scene)
bpy.ops.render.render(write_still=True)

with open("/proc/self/maps") as maps:
    mapped = sorted({line.split(None, 5)[5].strip() for line in maps
                     if len(line.split(None, 5)) == 6 and "OpenImageDenoise" in line})
sys.path.insert(0, ADDON_DIR)
from lull_denoise import oidn_library  # noqa: E402 - the add-on's account

with open(RESULT, "w") as f:
    json.dump({"blender": bpy.app.version_string, "mapped": mapped,
               "addon": oidn_library.info()}, f)
