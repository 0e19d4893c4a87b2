"""lull Denoiser: denoise Cycles renders with lull, a classical (non-neural)
denoiser, from Render Properties.

- Enable Passes: turns on the passes the filter uses (Denoising Data,
  Position) and multilayer EXR output.
- Denoise Last Render: the render result goes through a multilayer EXR;
  the result of each view layer appears as an image "lull Denoised <layer>".
- Denoise Animation Frames: the frame range's multilayer EXR files get
  denoised copies with a "Denoised" pass per view layer (originals kept);
  progress in the status bar, Esc cancels.
- Denoise Written Frames: a render_write handler queues each written frame
  for a background thread, so rendering never waits.
- Render Halves and Denoise: two Cycles renders of half the samples with
  different seeds, denoised together by lull's Regression filter (a still,
  or every frame of the range into files holding both halves).

Blender 4.2+ reads blender_manifest.toml; bl_info serves older versions.
"""

bl_info = {
    "name": "lull Denoiser",
    "author": "lull developers",
    "version": (0, 1, 0),
    "blender": (3, 6, 0),
    "location": "Properties > Render > lull Denoiser",
    "description": "Classical (non-neural) denoising of Cycles renders with lull",
    "category": "Render",
}


def _modules():
    # imported here, not at the top: loader, passes and pipeline work
    # without bpy (tests, scripts), only these need Blender
    from . import halves, operators, panel, properties

    return (properties, operators, halves, panel)


def register():
    for module in _modules():
        module.register()


def unregister():
    for module in reversed(_modules()):
        module.unregister()
