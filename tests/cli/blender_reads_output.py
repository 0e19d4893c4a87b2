"""Blender reads what `lull denoise` writes: the denoised render opens in
Blender's compositor with every pass of the original plus 'Denoised'; and
a stereo render Blender writes (views format Multi-View: a part per pass
and view) is denoised view by view, each view's Denoised pass in a part of
that view, which Blender offers too.

    python blender_reads_output.py TOOL RENDER.exr SCRATCH_DIR

Exits 77 (skipped) when the tool is not built, the render is missing or
Blender's Python module `bpy` is not importable."""
import os
import subprocess
import sys

SKIP = 77


def pass_names(bpy, path):
    """The outputs Blender's compositor Image node offers for a file.  The
    node lives in a compositor node group of its own: scene.node_tree is
    gone in Blender 5.0, node groups work in 4.x and 5.x alike."""
    image = bpy.data.images.load(path, check_existing=False)
    tree = bpy.data.node_groups.new("lull_passes", "CompositorNodeTree")
    node = tree.nodes.new("CompositorNodeImage")
    node.image = image
    names = [o.name for o in node.outputs if o.enabled]
    bpy.data.node_groups.remove(tree)
    return names


def main():
    tool, render, scratch = sys.argv[1:4]
    if not tool or not os.path.exists(render):
        print("tool not built or no test render: skipped")
        return SKIP
    try:
        import bpy  # optional: Blender as a Python module
    except ImportError:
        print("bpy is not importable: skipped")
        return SKIP
    os.makedirs(scratch, exist_ok=True)
    out = os.path.join(scratch, "denoised_for_blender.exr")
    result = subprocess.run([tool, "denoise", render, "-o", out, "--quiet"],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print("lull denoise failed:", result.stderr)
        return 1
    before = pass_names(bpy, render)
    after = pass_names(bpy, out)
    print("original:", before)
    print("denoised:", after)
    missing = [name for name in before if name not in after]
    if missing or "Denoised" not in after or "Combined" not in before:
        print("Blender does not see:", missing or ["Denoised"])
        return 1
    print("Blender sees every original pass and 'Denoised'")
    return stereo(bpy, tool, scratch)


def stereo(bpy, tool, scratch):
    """A tiny stereo frame rendered by Blender, denoised, and read back."""
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 2
    scene.cycles.device = "CPU"
    scene.render.resolution_x, scene.render.resolution_y = 32, 24
    scene.render.resolution_percentage = 100
    scene.render.use_multiview = True
    settings = scene.render.image_settings
    if hasattr(settings, "media_type"):  # Blender 5.0
        settings.media_type = "MULTI_LAYER_IMAGE"
    settings.file_format = "OPEN_EXR_MULTILAYER"
    settings.views_format = "MULTIVIEW"
    scene.view_layers[0].cycles.denoising_store_passes = True
    scene.render.filepath = os.path.join(scratch, "stereo")
    bpy.ops.render.render(write_still=True)  # a still: no frame number
    render = os.path.join(scratch, "stereo.exr")
    out = os.path.join(scratch, "stereo_denoised.exr")
    result = subprocess.run([tool, "denoise", render, "-o", out],
                            capture_output=True, text=True, check=False)
    print(result.stderr.strip())
    if result.returncode != 0 or "[ViewLayer/left]" not in result.stderr \
            or "[ViewLayer/right]" not in result.stderr:
        print("stereo: lull did not denoise both views")
        return 1
    info = subprocess.run([tool, "info", out], capture_output=True, text=True, check=False)
    print(info.stdout)
    if info.stdout.count("Denoised") != 2:
        print("stereo: expected a Denoised pass per view")
        return 1
    after = pass_names(bpy, out)
    if "Denoised" not in after or "Combined" not in after:
        print("stereo: Blender does not see Denoised:", after)
        return 1
    print("stereo: both views denoised; Blender sees 'Denoised'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
