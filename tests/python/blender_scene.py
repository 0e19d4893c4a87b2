"""The tiny Cycles scene of the Blender tests (blender_e2e.py,
blender_oidn.py), built in the running Blender (bpy): a box seen from
inside with a sphere and an area light in its ceiling, Cycles on 2 CPU
threads, no denoiser, seed 1."""

import bpy


def build(resolution):
    """Returns (scene, sphere) after a factory reset."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.use_denoising = False
    scene.cycles.use_adaptive_sampling = False
    scene.cycles.seed = 1
    scene.render.resolution_x, scene.render.resolution_y = resolution
    scene.render.resolution_percentage = 100
    scene.render.threads_mode = "FIXED"
    scene.render.threads = 2
    scene.render.film_transparent = False

    def material(name, rgb, emission=0.0):
        m = bpy.data.materials.new(name)
        m.use_nodes = True
        bsdf = m.node_tree.nodes["Principled BSDF"]
        bsdf.inputs["Base Color"].default_value = (*rgb, 1)
        if emission:
            bsdf.inputs["Emission Color"].default_value = (1, 1, 1, 1)
            bsdf.inputs["Emission Strength"].default_value = emission
        return m

    bpy.ops.mesh.primitive_cube_add(size=4, location=(0, 0, 2))
    box = bpy.context.object
    box.data.materials.append(material("walls", (0.7, 0.7, 0.7)))
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.flip_normals()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.8, location=(0.3, 0.2, 0.8))
    sphere = bpy.context.object
    sphere.data.materials.append(material("sphere", (0.8, 0.2, 0.1)))
    bpy.ops.mesh.primitive_plane_add(size=1.0, location=(0, 0, 3.95))
    bpy.context.object.data.materials.append(material("lamp", (1, 1, 1), emission=15.0))
    bpy.ops.object.camera_add(location=(0, -1.9, 2.0), rotation=(1.45, 0, 0))
    scene.camera = bpy.context.object
    scene.camera.data.lens = 16
    return scene, sphere
