"""The add-on's settings (scene.lull) and their mapping to lull filter
parameters (lull.filter_params lists them with ranges and meaning)."""

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from .pipeline import Settings


class LullSceneSettings(bpy.types.PropertyGroup):
    device: EnumProperty(
        name="Device",
        items=(("default", "Automatic", "CUDA when a usable NVIDIA GPU is present, else CPU"),
               ("cpu", "CPU", "The CPU"),
               ("cuda", "CUDA", "An NVIDIA GPU")),
        default="default")
    filter_type: EnumProperty(
        name="Filter",
        items=(("RT", "RT", "lull's best classical filter for the passes given (OIDN's name)"),
               ("ATrous", "À-Trous", "Edge-avoiding à-trous wavelets with every knob exposed")),
        default="RT")
    halves_filter: EnumProperty(
        name="Halves Filter",
        description="The filter of Render Halves: both halves of the samples go to it",
        items=(("Regression", "Regression", "NFOR-class regression: lull's best quality"),
               ("RDFC", "RDFC", "Rousselle et al. 2013, the published classical baseline "
                "(slower; CPU device)"),
               ("DDID", "DDID", "Dual-domain image denoising (Knaus and Zwicker; Vicini 2015): "
                "slow, minutes a frame; CPU device")),
        default="Regression")
    quality: EnumProperty(
        name="Quality",
        items=(("6", "High", "5 levels"), ("5", "Balanced", "5 levels"), ("4", "Fast", "4 levels")),
        default="6")
    clean_aux: BoolProperty(
        name="Clean Passes",
        description="Albedo and normal are noise-free (no depth of field or motion blur): "
                    "trust them more",
        default=False)
    iterations: IntProperty(name="Levels", description="Wavelet levels (filter width 4·(2^N−1)+1)",
                            default=5, min=1, max=10)
    sigma_luminance: FloatProperty(name="Luminance", description="Allowed luminance difference in "
                                   "standard deviations", default=1.5, min=0.01, soft_max=20)
    sigma_normal: FloatProperty(name="Normal", description="Normal edge sigma (0 disables)",
                                default=0.5, min=0.0, soft_max=2)
    sigma_depth: FloatProperty(name="Depth", description="Depth edge sigma in pixel footprints "
                               "(0 disables)", default=4.0, min=0.0, soft_max=50)
    sigma_albedo: FloatProperty(name="Albedo", description="Albedo edge sigma (0 disables)",
                                default=0.3, min=0.0, soft_max=2)
    temporal: BoolProperty(
        name="Temporal (Animations)",
        description="Denoise an animation's frames in order, each with the history of the "
                    "frames before it reprojected by the Vector pass, so the result does not "
                    "flicker.  Needs the Vector pass (Enable Passes), which Cycles writes only "
                    "with Motion Blur off; frames without it are denoised alone",
        default=True)
    auto_denoise: BoolProperty(
        name="Denoise Written Frames",
        description="After each frame Blender writes as multilayer EXR, denoise it in the "
                    "background into a copy with a Denoised pass",
        default=False)
    suffix: StringProperty(name="Suffix", description="Appended to a frame's file name for the "
                           "denoised copy", default="_denoised")
    in_place: BoolProperty(
        name="Into the Same File",
        description="Add the Denoised pass to the rendered file itself (the original passes "
                    "are kept) instead of writing a copy",
        default=False)


def settings_of(scene):
    """pipeline.Settings from the scene's add-on settings."""
    s = scene.lull
    if s.filter_type == "RT":
        params = {"quality": int(s.quality), "cleanAux": s.clean_aux}
    else:
        params = {"iterations": s.iterations, "sigmaLuminance": s.sigma_luminance,
                  "sigmaNormal": s.sigma_normal, "sigmaDepth": s.sigma_depth,
                  "sigmaAlbedo": s.sigma_albedo}
    return Settings(s.filter_type, s.device, params,
                    view_layers=[layer.name for layer in scene.view_layers],
                    aovs={layer.name: [aov.name for aov in getattr(layer, "aovs", ())]
                          for layer in scene.view_layers},
                    temporal=s.temporal, halves_filter=s.halves_filter)


def output_path(scene, src):
    from .pipeline import denoised_path

    return src if scene.lull.in_place else denoised_path(src, scene.lull.suffix)


def register():
    bpy.utils.register_class(LullSceneSettings)
    bpy.types.Scene.lull = bpy.props.PointerProperty(type=LullSceneSettings)


def unregister():
    del bpy.types.Scene.lull
    bpy.utils.unregister_class(LullSceneSettings)
