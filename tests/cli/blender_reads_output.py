"""Blender reads what `lull denoise` writes: the denoised render opens in
Blender's compositor with every pass of the original plus 'Denoised'.

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
