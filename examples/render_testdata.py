#!/usr/bin/env python3
"""Render lull's test data with Blender Cycles, headless, on the CPU.

Every scene is built procedurally here (no external assets).  For each scene
the script writes noisy renders at a few sample counts plus a high-spp
reference, all as Blender multilayer OpenEXR files:

    <out>/<scene>/<scene>_spp4.exr
    <out>/<scene>/<scene>_spp16.exr
    <out>/<scene>/<scene>_spp64.exr
    <out>/<scene>/<scene>_ref.exr

and, with --halves, each noisy total also as two independent halves of half
the samples (different seeds), for the two-buffer ("Regression") filter:

    <out>/<scene>/<scene>_spp16_A.exr, <scene>_spp16_B.exr   (8 spp each)

The halves hold only the passes a denoiser reads (Combined, Denoising
Albedo, Denoising Normal, Denoising Depth), which halves their size.

Each file holds the passes Combined (RGBA, half), Denoising Albedo (RGB,
half), Denoising Normal (XYZ), Denoising Depth (Z), Position (XYZ), Depth (Z)
and Normal (XYZ); Blender always stores the XYZ/Z data passes as 32-bit float.
Channel names look like ``ViewLayer.Combined.R`` and
``ViewLayer.Denoising Albedo.G``.

The scene ``animation`` is a short animation for temporal denoising instead
(``build_animation``): frames 1..24, a cut at frame 13, written as

    <out>/animation/spp<N>/<frame:04d>.exr   (Combined, Denoising Albedo,
                                              Denoising Normal, Denoising
                                              Depth, Vector.X/Y; all half)
    <out>/animation/ref/<frame:04d>.exr      (Combined only)

at 4:3 (--res is the width), a new seed every noisy frame and REF_SEED for
every reference; frames already written are kept, so an interrupted run
resumes (--frames renders a range).  It needs the ``OpenEXR`` module next to
bpy (compact_exr).  tests/data/animation was made with

    python examples/render_testdata.py --out tests/data --scenes animation \
        --res 160 --spp 4,16 --ref-spp 1024

Run it either with the ``bpy`` module from PyPI::

    python examples/render_testdata.py --out tests/data

or with a Blender binary::

    blender -b --factory-startup --python examples/render_testdata.py -- --out tests/data

Options (see --help): --out, --scenes, --spp, --ref-spp, --res, --threads,
--no-ref, --no-full, --halves, --pattern, --frames, --verbose.

Render settings shared by every image of a scene: Cycles on the CPU, adaptive
sampling off, Cycles denoising off (only its data passes are stored), no
clamping (direct and indirect), glossy filter ("blur glossy") off, light
threshold 0, default bounce limits, light tree on (unbiased, kept as in
Blender's defaults), path guiding off, the Blackman-Harris pixel filter of
width 1.5 px, the "Classic" (tabulated Sobol) sampling pattern so that the
noise of neighbouring pixels is independent.  Seeds are fixed: the noisy
images use seed = spp, the reference REF_SEED.

Blender 4.x writes one-part multilayer EXRs; Blender 5.x writes the same
channels as a multi-part EXR (one part per pass).  tests/data was made with
bpy 4.5.15 (see tests/data/README.md).
"""

import argparse
import math
import os
import sys
import time

import bpy
import bmesh
from mathutils import Vector

SCENES = ("cornell", "indirect", "dof_glossy")

# Deterministic seeds.  The noisy renders use seed = spp (so 4, 16 and 64 get
# different sample sequences); the reference uses REF_SEED.
REF_SEED = 7777


def noisy_seed(spp):
    return int(spp)


# The halves of a total of spp samples: seeds apart from every noisy and
# reference seed, so that each half's noise is independent of the other's
# and of the full render's (Cycles' seeds hash the sample sequence: error
# correlation about 0 between two seeds, see
# ../shared/reference/regression-and-temporal.md section 4).
def half_seed(spp, half):
    return 100000 * (1 + "AB".index(half)) + int(spp)


# --------------------------------------------------------------------------
# small scene-building helpers
# --------------------------------------------------------------------------

def link(ob):
    bpy.context.scene.collection.objects.link(ob)
    return ob


def mesh_object(name, verts, faces, mat, smooth=False):
    me = bpy.data.meshes.new(name)
    me.from_pydata([tuple(v) for v in verts], [], [tuple(f) for f in faces])
    me.update()
    if smooth:
        for p in me.polygons:
            p.use_smooth = True
    me.materials.append(mat)
    return link(bpy.data.objects.new(name, me))


def bmesh_object(name, bm, mat, smooth=False, loc=(0, 0, 0), rot=(0, 0, 0)):
    me = bpy.data.meshes.new(name)
    bm.to_mesh(me)
    bm.free()
    if smooth:
        for p in me.polygons:
            p.use_smooth = True
    me.materials.append(mat)
    ob = bpy.data.objects.new(name, me)
    ob.location = loc
    ob.rotation_euler = rot
    return link(ob)


def quad(name, a, b, c, d, mat):
    """One quad; vertices in counter-clockwise order seen from the front."""
    return mesh_object(name, [a, b, c, d], [(0, 1, 2, 3)], mat)


def box(name, center, size, mat, rot_z_deg=0.0):
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    for v in bm.verts:
        v.co = Vector((v.co.x * size[0], v.co.y * size[1], v.co.z * size[2]))
    return bmesh_object(name, bm, mat, loc=center,
                        rot=(0, 0, math.radians(rot_z_deg)))


def sphere(name, center, radius, mat, segments=64, rings=32):
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=segments, v_segments=rings,
                              radius=radius)
    return bmesh_object(name, bm, mat, smooth=True, loc=center)


def cylinder(name, p0, p1, radius, mat, segments=12):
    """A capped cylinder from point p0 to point p1."""
    p0, p1 = Vector(p0), Vector(p1)
    axis = p1 - p0
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False,
                          segments=segments, radius1=radius, radius2=radius,
                          depth=axis.length)
    rot = axis.to_track_quat("Z", "Y").to_euler()
    return bmesh_object(name, bm, mat, smooth=True, loc=(p0 + p1) / 2, rot=rot)


def torus(name, center, major, minor, mat, rot=(0, 0, 0), seg=96, ring=16):
    verts, faces = [], []
    for i in range(seg):
        u = 2 * math.pi * i / seg
        for j in range(ring):
            v = 2 * math.pi * j / ring
            r = major + minor * math.cos(v)
            verts.append((r * math.cos(u), r * math.sin(u), minor * math.sin(v)))
    for i in range(seg):
        for j in range(ring):
            a = i * ring + j
            b = ((i + 1) % seg) * ring + j
            c = ((i + 1) % seg) * ring + (j + 1) % ring
            d = i * ring + (j + 1) % ring
            faces.append((a, b, c, d))
    ob = mesh_object(name, verts, faces, mat, smooth=True)
    ob.location = center
    ob.rotation_euler = rot
    return ob


def _material(name):
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nt = mat.node_tree
    for n in list(nt.nodes):
        nt.nodes.remove(n)
    out = nt.nodes.new("ShaderNodeOutputMaterial")
    return mat, nt, out


def diffuse(name, color):
    mat, nt, out = _material(name)
    bsdf = nt.nodes.new("ShaderNodeBsdfDiffuse")
    bsdf.inputs["Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.0
    nt.links.new(bsdf.outputs[0], out.inputs["Surface"])
    return mat


def principled(name, color, roughness=0.5, metallic=0.0, specular=0.5,
               coat=0.0):
    mat, nt, out = _material(name)
    bsdf = nt.nodes.new("ShaderNodeBsdfPrincipled")
    bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = roughness
    bsdf.inputs["Metallic"].default_value = metallic
    bsdf.inputs["Specular IOR Level"].default_value = specular
    bsdf.inputs["Coat Weight"].default_value = coat
    bsdf.inputs["Coat Roughness"].default_value = 0.03
    nt.links.new(bsdf.outputs[0], out.inputs["Surface"])
    return mat, nt, bsdf


def world(color, strength):
    w = bpy.data.worlds.new("World")
    w.use_nodes = True
    bg = w.node_tree.nodes.get("Background")
    bg.inputs["Color"].default_value = (*color, 1.0)
    bg.inputs["Strength"].default_value = strength
    bpy.context.scene.world = w
    return w


def camera(loc, target, lens_mm, sensor_mm=36.0):
    cd = bpy.data.cameras.new("Camera")
    cd.lens = lens_mm
    cd.sensor_width = sensor_mm
    cd.sensor_fit = "HORIZONTAL"
    cd.clip_start = 0.05
    cd.clip_end = 200.0
    ob = link(bpy.data.objects.new("Camera", cd))
    ob.location = loc
    d = Vector(target) - Vector(loc)
    ob.rotation_euler = d.to_track_quat("-Z", "Y").to_euler()
    bpy.context.scene.camera = ob
    return ob


def light(name, kind, loc, target=None, energy=10.0, size=0.5,
          color=(1, 1, 1), angle_deg=0.5):
    ld = bpy.data.lights.new(name, kind)
    ld.energy = energy
    ld.color = color
    if kind == "AREA":
        ld.shape = "SQUARE"
        ld.size = size
    elif kind == "SUN":
        ld.angle = math.radians(angle_deg)
    elif kind in ("POINT", "SPOT"):
        ld.shadow_soft_size = size
    ob = link(bpy.data.objects.new(name, ld))
    ob.location = loc
    if target is not None:
        d = Vector(target) - Vector(loc)
        ob.rotation_euler = d.to_track_quat("-Z", "Y").to_euler()
    return ob


# --------------------------------------------------------------------------
# scenes
# --------------------------------------------------------------------------

def build_cornell():
    """Diffuse Cornell-style box, lit by a small area light under the ceiling.

    Box: x in [-1, 1], y in [-1, 1] (open towards -y), z in [0, 2].
    Everything is Lambertian; the light is 0.4 m x 0.4 m, so most of the
    image is lit indirectly.
    """
    white = diffuse("white", (0.73, 0.73, 0.73))
    red = diffuse("red", (0.63, 0.065, 0.05))
    green = diffuse("green", (0.14, 0.45, 0.091))
    quad("floor", (-1, -1, 0), (1, -1, 0), (1, 1, 0), (-1, 1, 0), white)
    quad("ceiling", (-1, -1, 2), (-1, 1, 2), (1, 1, 2), (1, -1, 2), white)
    quad("back", (-1, 1, 0), (1, 1, 0), (1, 1, 2), (-1, 1, 2), white)
    quad("left", (-1, -1, 0), (-1, 1, 0), (-1, 1, 2), (-1, -1, 2), red)
    quad("right", (1, -1, 0), (1, -1, 2), (1, 1, 2), (1, 1, 0), green)
    box("tall_box", (-0.34, 0.3, 0.6), (0.58, 0.58, 1.2), white, 17.0)
    box("short_box", (0.35, -0.3, 0.3), (0.58, 0.58, 0.6), white, -17.0)
    light("ceiling_light", "AREA", (0, 0, 1.985), energy=25.0, size=0.4,
          color=(1.0, 0.85, 0.65))
    world((0, 0, 0), 0.0)
    camera((0, -3.8, 1.0), (0, 0, 1.0), lens_mm=52.0)


def build_indirect():
    """A closed room lit by the sun through an open window.

    Room: x in [-2.5, 2.5], y in [-2.5, 2.5], z in [0, 2.8].  The window
    (no glass, with a cross-shaped frame) is in the +x wall; a low sun
    throws a hard-edged patch onto the floor, and the rest of the room is lit
    by the light bouncing off that patch (plus a little sky light).
    """
    X, Y, H = 2.5, 2.5, 2.8
    wall = diffuse("wall", (0.8, 0.78, 0.74))
    blue_wall = diffuse("blue_wall", (0.35, 0.5, 0.75))
    floor = diffuse("floor", (0.6, 0.42, 0.26))
    ceil = diffuse("ceiling", (0.85, 0.85, 0.85))
    frame = diffuse("frame", (0.9, 0.9, 0.88))
    sofa = diffuse("sofa", (0.7, 0.12, 0.08))
    wood = diffuse("wood", (0.35, 0.2, 0.1))
    ball = diffuse("ball", (0.2, 0.55, 0.3))

    quad("floor", (-X, -Y, 0), (X, -Y, 0), (X, Y, 0), (-X, Y, 0), floor)
    quad("ceiling", (-X, -Y, H), (-X, Y, H), (X, Y, H), (X, -Y, H), ceil)
    quad("back", (-X, Y, 0), (X, Y, 0), (X, Y, H), (-X, Y, H), blue_wall)
    quad("front", (-X, -Y, 0), (-X, -Y, H), (X, -Y, H), (X, -Y, 0), wall)
    quad("left", (-X, -Y, 0), (-X, Y, 0), (-X, Y, H), (-X, -Y, H), wall)
    # +x wall with a window opening y in [y0, y1], z in [z0, z1]
    y0, y1, z0, z1 = -1.1, 0.9, 0.8, 2.3
    quad("right_low", (X, -Y, 0), (X, -Y, z0), (X, Y, z0), (X, Y, 0), wall)
    quad("right_high", (X, -Y, z1), (X, -Y, H), (X, Y, H), (X, Y, z1), wall)
    quad("right_a", (X, -Y, z0), (X, -Y, z1), (X, y0, z1), (X, y0, z0), wall)
    quad("right_b", (X, y1, z0), (X, y1, z1), (X, Y, z1), (X, Y, z0), wall)
    # window reveal (wall thickness 0.2 m outside the room) and frame bars
    t = 0.2
    quad("sill", (X, y0, z0), (X + t, y0, z0), (X + t, y1, z0), (X, y1, z0), wall)
    quad("lintel", (X, y0, z1), (X, y1, z1), (X + t, y1, z1), (X + t, y0, z1), wall)
    quad("jamb_a", (X, y0, z0), (X, y0, z1), (X + t, y0, z1), (X + t, y0, z0), wall)
    quad("jamb_b", (X, y1, z0), (X + t, y1, z0), (X + t, y1, z1), (X, y1, z1), wall)
    xm = X + 0.1
    box("mullion", (xm, (y0 + y1) / 2, (z0 + z1) / 2), (0.05, 0.04, z1 - z0), frame)
    box("transom", (xm, (y0 + y1) / 2, 0.58 * z1 + 0.42 * z0),
        (0.05, y1 - y0, 0.04), frame)

    # furniture
    box("sofa_seat", (-1.65, 0.6, 0.22), (0.9, 2.2, 0.44), sofa)
    box("sofa_back", (-2.3, 0.6, 0.45), (0.4, 2.2, 0.9), sofa)
    box("table_top", (0.2, 1.2, 0.72), (1.2, 0.7, 0.05), wood)
    for i, (dx, dy) in enumerate(((-0.55, -0.3), (0.55, -0.3),
                                  (-0.55, 0.3), (0.55, 0.3))):
        box("table_leg%d" % i, (0.2 + dx, 1.2 + dy, 0.35), (0.05, 0.05, 0.7), wood)
    box("shelf", (1.2, 2.3, 0.9), (1.4, 0.4, 1.8), wall)
    sphere("ball", (0.9, -0.9, 0.25), 0.25, ball)

    # sun: comes from +x, above and slightly from -y
    elev, azim = math.radians(38.0), math.radians(12.0)
    sdir = Vector((math.cos(elev) * math.cos(azim),
                   -math.cos(elev) * math.sin(azim), math.sin(elev)))
    light("sun", "SUN", tuple(sdir * 10), target=(0, 0, 0), energy=30.0,
          color=(1.0, 0.9, 0.78), angle_deg=0.53)
    world((0.45, 0.6, 0.9), 0.6)
    camera((-2.3, -2.3, 1.6), (0.6, 0.8, 0.6), lens_mm=20.0)


def build_dof_glossy():
    """Depth of field, glossy and metallic surfaces, fine textures, thin rods.

    A textured ground (fine checker whose two colours come from noise
    textures), glossy spheres in front of, at and behind the focus plane,
    thin vertical rods and a thin wire torus, small emitters far behind for
    bokeh, lit by a large soft area light, a small hard area light and a
    dim sky.  The lens is focused on the middle sphere at f/1.0.
    """
    # ground: checker with noise-modulated colours, noise-modulated roughness
    mat, nt, bsdf = principled("ground", (0.5, 0.5, 0.5), roughness=0.35)
    tc = nt.nodes.new("ShaderNodeTexCoord")
    chk = nt.nodes.new("ShaderNodeTexChecker")
    chk.inputs["Scale"].default_value = 12.0
    n1 = nt.nodes.new("ShaderNodeTexNoise")
    n1.inputs["Scale"].default_value = 40.0
    n1.inputs["Detail"].default_value = 8.0
    r1 = nt.nodes.new("ShaderNodeValToRGB")
    r1.color_ramp.elements[0].color = (0.05, 0.05, 0.06, 1)
    r1.color_ramp.elements[1].color = (0.25, 0.22, 0.2, 1)
    r2 = nt.nodes.new("ShaderNodeValToRGB")
    r2.color_ramp.elements[0].color = (0.55, 0.5, 0.4, 1)
    r2.color_ramp.elements[1].color = (0.85, 0.82, 0.75, 1)
    rr = nt.nodes.new("ShaderNodeMapRange")
    rr.inputs["To Min"].default_value = 0.08
    rr.inputs["To Max"].default_value = 0.6
    nt.links.new(tc.outputs["Object"], chk.inputs["Vector"])
    nt.links.new(tc.outputs["Object"], n1.inputs["Vector"])
    nt.links.new(n1.outputs["Fac"], r1.inputs["Fac"])
    nt.links.new(n1.outputs["Fac"], r2.inputs["Fac"])
    nt.links.new(r1.outputs["Color"], chk.inputs["Color1"])
    nt.links.new(r2.outputs["Color"], chk.inputs["Color2"])
    nt.links.new(chk.outputs["Color"], bsdf.inputs["Base Color"])
    nt.links.new(n1.outputs["Fac"], rr.inputs["Value"])
    nt.links.new(rr.outputs["Result"], bsdf.inputs["Roughness"])
    S = 12.0
    mesh_object("ground", [(-S, -S, 0), (S, -S, 0), (S, S, 0), (-S, S, 0)],
                [(0, 1, 2, 3)], mat)

    gold, _, _ = principled("gold", (1.0, 0.71, 0.29), roughness=0.18, metallic=1.0)
    chrome, _, _ = principled("chrome", (0.95, 0.95, 0.95), roughness=0.04, metallic=1.0)
    red, _, _ = principled("red_coat", (0.6, 0.03, 0.02), roughness=0.4, coat=1.0)
    # a marbled, glossy dielectric sphere (fine noise texture)
    marble, mnt, mb = principled("marble", (0.5, 0.5, 0.5), roughness=0.08)
    mtc = mnt.nodes.new("ShaderNodeTexCoord")
    mn = mnt.nodes.new("ShaderNodeTexNoise")
    mn.inputs["Scale"].default_value = 25.0
    mn.inputs["Detail"].default_value = 10.0
    mn.inputs["Distortion"].default_value = 3.0
    mr = mnt.nodes.new("ShaderNodeValToRGB")
    mr.color_ramp.elements[0].position = 0.45
    mr.color_ramp.elements[0].color = (0.02, 0.06, 0.12, 1)
    mr.color_ramp.elements[1].position = 0.55
    mr.color_ramp.elements[1].color = (0.8, 0.85, 0.9, 1)
    mnt.links.new(mtc.outputs["Object"], mn.inputs["Vector"])
    mnt.links.new(mn.outputs["Fac"], mr.inputs["Fac"])
    mnt.links.new(mr.outputs["Color"], mb.inputs["Base Color"])
    wire, _, _ = principled("wire", (0.9, 0.9, 0.9), roughness=0.25, metallic=1.0)
    white, _, _ = principled("white", (0.8, 0.8, 0.8), roughness=0.6)

    sphere("near_gold", (-0.75, -2.2, 0.35), 0.35, gold)
    sphere("focus_red", (0.25, 0.0, 0.5), 0.5, red)
    sphere("focus_marble", (-0.85, 0.4, 0.4), 0.4, marble)
    sphere("far_chrome", (1.1, 3.5, 0.6), 0.6, chrome)
    sphere("far_white", (-1.6, 5.5, 0.7), 0.7, white)
    # thin rods (1 cm radius): a row crossing the focus plane
    for i in range(9):
        y = -1.8 + 0.6 * i
        x = 0.95 + 0.03 * i
        cylinder("rod%d" % i, (x, y, 0.0), (x, y, 1.3), 0.012, wire)
    # thin wire torus at the focus plane
    torus("ring", (-0.2, 0.6, 1.1), 0.42, 0.008, wire,
          rot=(math.radians(75), 0, math.radians(20)))
    # small chrome balls far behind the focus plane: their tiny, very bright
    # highlights become bokeh discs
    for i, (x, z) in enumerate(((-2.4, 0.9), (-1.3, 1.6), (0.3, 1.3),
                                (1.6, 1.9), (2.6, 0.8), (-0.4, 2.2))):
        sphere("bokeh%d" % i, (x, 10.0 + 0.7 * i, z), 0.08, chrome, 32, 16)

    light("key", "AREA", (-3.0, -1.5, 4.0), target=(0, 0.5, 0.3), energy=900.0,
          size=2.5, color=(1.0, 0.95, 0.9))
    light("spark", "AREA", (3.0, -2.0, 2.5), target=(0, 0, 0.5), energy=150.0,
          size=0.15, color=(0.9, 0.95, 1.0))
    world((0.5, 0.6, 0.8), 0.3)
    cam = camera((0.0, -6.0, 1.5), (0.0, 0.0, 0.45), lens_mm=85.0)
    cam.data.dof.use_dof = True
    cam.data.dof.focus_distance = (Vector((0.25, 0.0, 0.5)) - cam.location).length
    cam.data.dof.aperture_fstop = 1.0
    cam.data.dof.aperture_blades = 0


def textured(name, color1, color2, scale, coords="Object"):
    """A diffuse material with a procedural checker of two colours."""
    mat, nt, out = _material(name)
    bsdf = nt.nodes.new("ShaderNodeBsdfDiffuse")
    tc = nt.nodes.new("ShaderNodeTexCoord")
    chk = nt.nodes.new("ShaderNodeTexChecker")
    chk.inputs["Scale"].default_value = scale
    chk.inputs["Color1"].default_value = (*color1, 1.0)
    chk.inputs["Color2"].default_value = (*color2, 1.0)
    nt.links.new(tc.outputs[coords], chk.inputs["Vector"])
    nt.links.new(chk.outputs["Color"], bsdf.inputs["Color"])
    nt.links.new(bsdf.outputs[0], out.inputs["Surface"])
    return mat


# The animation: frames 1..ANIM_FRAMES, a cut (a second camera) at ANIM_CUT.
ANIM_FRAMES = 24
ANIM_CUT = 13


def keyframes(ob, path, values):
    """Keys ob.<path> at each (frame, value), interpolated linearly (constant
    velocity between keys, so the Vector pass is exact)."""
    for frame, value in values:
        setattr(ob, path, value)
        ob.keyframe_insert(data_path=path, frame=frame)
    for fc in ob.animation_data.action.fcurves:
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"


def build_animation():
    """A short animation for temporal denoising: camera motion, a moving
    object, a cut half-way.

    An open-fronted room: a textured floor, a back and a left wall and a
    roof over the back half, so that the back of the room is lit only by
    light bouncing off the sunlit front (noisy indirect light) while the
    front gets the sun's soft-edged shadows.  A static box and column; a
    textured ball rolls across the floor in every frame (its shadow moves
    over the floor).  Frames 1..12 look from the front with a camera that
    dollies sideways while turning (parallax, disocclusions behind the
    column and the ball); at frame 13 the view cuts to a second camera on
    the right that moves towards the scene.  The Vector pass (Cycles'
    motion vectors) is on, so motion blur is off.
    """
    floor = textured("floor", (0.75, 0.72, 0.66), (0.3, 0.26, 0.22), 3.0)
    wall = diffuse("wall", (0.78, 0.76, 0.72))
    red = diffuse("red", (0.63, 0.12, 0.08))
    box_mat = diffuse("box", (0.25, 0.4, 0.65))
    ball_mat = textured("ball", (0.9, 0.75, 0.15), (0.15, 0.2, 0.55), 3.0)
    S, H = 3.0, 2.4
    quad("floor", (-S, -S, 0), (S, -S, 0), (S, S, 0), (-S, S, 0), floor)
    quad("back", (-S, S, 0), (S, S, 0), (S, S, H), (-S, S, H), wall)
    quad("left", (-S, -S, 0), (-S, S, 0), (-S, S, H), (-S, -S, H), red)
    quad("roof", (-S, 0.4, H), (-S, S, H), (S, S, H), (S, 0.4, H), wall)
    box("box", (1.1, 1.2, 0.35), (0.7, 0.7, 0.7), box_mat, 25.0)
    cylinder("column", (-0.9, 0.5, 0.0), (-0.9, 0.5, H), 0.18, wall, 32)
    r = 0.32
    ball = sphere("ball", (0, 0, r), r, ball_mat)
    x0, x1 = -1.8, 1.6
    keyframes(ball, "location", [(0, (x0, -0.5, r)), (ANIM_FRAMES + 1, (x1, -0.5, r))])
    # rolling without slipping: the angle about y is the distance over r
    keyframes(ball, "rotation_euler",
              [(0, (0, 0, 0)), (ANIM_FRAMES + 1, (0, (x1 - x0) / r, 0))])

    light("sun", "SUN", (2, -6, 4.5), target=(0, 0, 0), energy=4.0,
          color=(1.0, 0.93, 0.82), angle_deg=3.0)
    world((0.45, 0.58, 0.85), 0.5)

    scene = bpy.context.scene
    scene.frame_start = 1
    scene.frame_end = ANIM_FRAMES
    a0, a1 = Vector((-1.5, -4.6, 1.5)), Vector((0.6, -4.2, 1.3))
    t0, t1 = Vector((0, 0.4, 0.7)), Vector((0.3, 0.6, 0.6))
    cam_a = camera(a0, t0, lens_mm=28.0)
    cam_a.name = "CameraFront"
    keyframes(cam_a, "location", [(1, a0), (ANIM_CUT - 1, a1)])
    keyframes(cam_a, "rotation_euler",
              [(1, (t0 - a0).to_track_quat("-Z", "Y").to_euler()),
               (ANIM_CUT - 1, (t1 - a1).to_track_quat("-Z", "Y").to_euler())])
    b0, b1 = Vector((3.6, -3.0, 1.9)), Vector((3.0, -2.2, 1.7))
    cam_b = camera(b0, (-0.3, 0.5, 0.6), lens_mm=30.0)
    cam_b.name = "CameraSide"
    keyframes(cam_b, "location", [(ANIM_CUT, b0), (ANIM_FRAMES, b1)])
    # the cut: timeline markers bind the cameras to frames
    for frame, cam in ((1, cam_a), (ANIM_CUT, cam_b)):
        m = scene.timeline_markers.new("shot_%s" % cam.name, frame=frame)
        m.camera = cam
    scene.camera = cam_a


BUILDERS = {
    "cornell": build_cornell,
    "indirect": build_indirect,
    "dof_glossy": build_dof_glossy,
    "animation": build_animation,
}


# --------------------------------------------------------------------------
# render settings and output
# --------------------------------------------------------------------------

def setup_render(res, threads, pattern):
    scene = bpy.context.scene
    r = scene.render
    r.engine = "CYCLES"
    r.resolution_x = res
    r.resolution_y = res
    r.resolution_percentage = 100
    r.pixel_aspect_x = r.pixel_aspect_y = 1.0
    r.film_transparent = False
    r.use_border = False
    r.use_persistent_data = False
    r.threads_mode = "FIXED"
    r.threads = threads
    # No stamps/metadata (keeps files reproducible), except a note we set.
    for k in ("date", "time", "render_time", "frame", "frame_range", "memory",
              "hostname", "camera", "lens", "scene", "marker", "filename",
              "sequencer_strip"):
        if hasattr(r, "use_stamp_" + k):
            setattr(r, "use_stamp_" + k, False)
    r.use_stamp = False
    r.use_stamp_note = True

    c = scene.cycles
    c.device = "CPU"
    if hasattr(c, "feature_set"):  # gone in Blender 5.0
        c.feature_set = "SUPPORTED"
    c.use_adaptive_sampling = False
    c.use_denoising = False
    c.use_light_tree = True
    c.use_guiding = False
    c.sample_clamp_direct = 0.0
    c.sample_clamp_indirect = 0.0
    c.blur_glossy = 0.0
    c.light_sampling_threshold = 0.0
    c.caustics_reflective = True
    c.caustics_refractive = True
    c.pixel_filter_type = "BLACKMAN_HARRIS"
    c.filter_width = 1.5
    c.sampling_pattern = pattern
    c.use_animated_seed = False
    c.sample_offset = 0
    c.auto_scrambling_distance = False
    c.scrambling_distance = 1.0
    c.film_exposure = 1.0
    c.time_limit = 0.0
    c.use_auto_tile = False

    scene.view_settings.view_transform = "Standard"
    scene.view_settings.look = "None"
    scene.view_settings.exposure = 0.0
    scene.view_settings.gamma = 1.0

    vl = scene.view_layers[0]
    vl.use_pass_combined = True
    vl.use_pass_z = True
    vl.use_pass_normal = True
    vl.use_pass_position = True
    vl.cycles.denoising_store_passes = True
    vl.cycles.use_denoising = False

    im = r.image_settings
    if hasattr(im, "media_type"):  # Blender >= 5.0
        im.media_type = "MULTI_LAYER_IMAGE"
    im.file_format = "OPEN_EXR_MULTILAYER"
    im.color_depth = "16"
    im.exr_codec = "ZIP"
    im.color_mode = "RGBA"
    if hasattr(im, "use_exr_interleave"):
        im.use_exr_interleave = False
    r.use_file_extension = True


class _Silence:
    """Redirect the process' stdout (fd 1) to a file while Blender renders."""

    def __init__(self, active):
        self.active = active

    def __enter__(self):
        if self.active:
            sys.stdout.flush()
            self.saved = os.dup(1)
            self.null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(self.null, 1)
        return self

    def __exit__(self, *exc):
        if self.active:
            sys.stdout.flush()
            os.dup2(self.saved, 1)
            os.close(self.saved)
            os.close(self.null)
        return False


def render_to(path, spp, seed, note, verbose):
    scene = bpy.context.scene
    scene.cycles.samples = spp
    scene.cycles.seed = seed
    scene.render.stamp_note_text = note
    scene.render.filepath = path
    t0 = time.time()
    with _Silence(not verbose):
        bpy.ops.render.render(write_still=True)
    dt = time.time() - t0
    if not os.path.exists(path):
        raise RuntimeError("Blender did not write %s" % path)
    return dt


def anim_seed(spp, frame):
    """Noisy animation frames: a new seed every frame (Cycles' "animated
    seed"), so each frame's noise is independent, as temporal accumulation
    needs; the reference keeps REF_SEED (its own small noise then changes
    little from frame to frame, which keeps it out of the flicker metric)."""
    return 1000 * int(spp) + int(frame)


def set_anim_passes(data):
    """The passes of the animation's files: the noisy frames carry what a
    temporal denoiser reads (Combined, Denoising Albedo/Normal/Depth,
    Vector); the reference only Combined."""
    scene = bpy.context.scene
    vl = scene.view_layers[0]
    vl.use_pass_z = False
    vl.use_pass_normal = False
    vl.use_pass_position = False
    vl.use_pass_vector = data
    vl.cycles.denoising_store_passes = data


def compact_exr(path):
    """Rewrites a multilayer EXR with every channel as half float (ZIP):
    Blender stores the data passes (Vector, Denoising Normal/Depth) as
    32-bit float whatever the colour depth, which tripled the animation's
    size; half keeps depth to 1/1000 relative.  The motion vectors are
    rounded to 1/64 pixel (half's own step for 8 to 16 pixels), which
    makes them compress 3x better (a third of a noisy frame otherwise).
    The header's attributes (Note, Camera, cycles.*) stay.  Needs the
    OpenEXR module (pip install OpenEXR) next to bpy."""
    import numpy as np
    try:
        import OpenEXR
    except ImportError:
        sys.exit("the animation needs the OpenEXR module: pip install OpenEXR")
    with OpenEXR.File(path, separate_channels=True) as f:
        header = dict(f.header())
        # Vector.Z/W (the motion towards the next frame) are left out: a
        # temporal denoiser reads X/Y, and they were 12% of a file
        channels = {}
        for name, ch in f.channels().items():
            if name.endswith(("Vector.Z", "Vector.W")):
                continue
            values = ch.pixels.astype(np.float32)
            if ".Vector." in name:
                values = np.round(values * 64.0) / 64.0
            channels[name] = np.ascontiguousarray(values.astype(np.float16))
    header["compression"] = OpenEXR.ZIP_COMPRESSION
    OpenEXR.File(header, channels).write(path)


def render_animation(a):
    """Renders frames 1..ANIM_FRAMES of the animation into
    <out>/animation/spp<N>/<frame:04d>.exr and <out>/animation/ref/...;
    frames already there are kept (a resumed run renders the rest)."""
    scene = bpy.context.scene
    scene.render.use_motion_blur = False  # the Vector pass needs it off
    scene.render.use_stamp_camera = True  # the camera's name marks the cut
    # 4:3 (--res is the width): with --res 160, 160 x 120, small enough that
    # 24 frames at two sample counts plus references stay near 8 MB
    scene.render.resolution_x = a.res
    scene.render.resolution_y = a.res * 3 // 4
    root = os.path.join(os.path.abspath(a.out), "animation")
    spps = [int(x) for x in a.spp.split(",") if x]
    jobs = [(spp, "spp%d" % spp, True) for spp in spps]
    if not a.no_ref:
        jobs.append((a.ref_spp, "ref", False))
    frames = range(1, ANIM_FRAMES + 1)
    if a.frames:
        lo, hi = (int(v) for v in a.frames.split("-"))
        frames = range(lo, hi + 1)
    for spp, sub, data in jobs:
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    for frame in frames:
        scene.frame_set(frame)
        for spp, sub, data in jobs:
            path = os.path.join(root, sub, "%04d.exr" % frame)
            if os.path.exists(path):
                continue
            seed = anim_seed(spp, frame) if data else REF_SEED
            set_anim_passes(data)
            note = ("lull test data: scene=animation frame=%d spp=%d seed=%d res=%d "
                    "blender=%s" % (frame, spp, seed, a.res, bpy.app.version_string))
            tmp = path + ".part.exr"
            dt = render_to(tmp, spp, seed, note, a.verbose)
            compact_exr(tmp)
            os.replace(tmp, path)
            print("[animation] frame %d %s: %.1f s (%.1f KiB)"
                  % (frame, sub, dt, os.path.getsize(path) / 1024.0), flush=True)


def parse_args():
    argv = sys.argv
    if "--" in argv:
        argv = argv[argv.index("--") + 1:]
    elif bpy.app.background and not argv[0].endswith(".py"):
        argv = []  # run inside blender without our own arguments
    else:
        argv = argv[1:]
    p = argparse.ArgumentParser(
        prog="render_testdata.py",
        description="Render lull's denoising test data with Blender Cycles.")
    p.add_argument("--out", default="tests/data", help="output folder")
    p.add_argument("--scenes", default=",".join(SCENES),
                   help="comma-separated scene names (%s, or animation)" % ",".join(SCENES))
    p.add_argument("--spp", default="4,16,64",
                   help="comma-separated samples per pixel of the noisy images")
    p.add_argument("--ref-spp", type=int, default=8192,
                   help="samples per pixel of the reference")
    p.add_argument("--no-ref", action="store_true", help="skip the reference")
    p.add_argument("--no-full", action="store_true",
                   help="skip the noisy full renders (e.g. to add only halves)")
    p.add_argument("--halves", action="store_true",
                   help="also render each noisy total as two halves A and B of "
                        "spp/2 samples each (seeds 100000 + spp, 200000 + spp)")
    p.add_argument("--res", type=int, default=256, help="image width = height")
    p.add_argument("--threads", type=int, default=2, help="CPU render threads")
    p.add_argument("--pattern", default="TABULATED_SOBOL",
                   choices=("TABULATED_SOBOL", "BLUE_NOISE", "AUTOMATIC"),
                   help="Cycles sampling pattern (TABULATED_SOBOL = 'Classic')")
    p.add_argument("--frames", default="",
                   help="animation only: frame range FIRST-LAST (default: all)")
    p.add_argument("--verbose", action="store_true",
                   help="show Blender's own render log")
    return p.parse_args(argv)


def main():
    a = parse_args()
    scenes = [s for s in a.scenes.split(",") if s]
    for s in scenes:
        if s not in BUILDERS:
            sys.exit("unknown scene %r (known: %s)" % (s, ", ".join(SCENES)))
    spps = [int(x) for x in a.spp.split(",") if x]
    print("Blender %s, Cycles CPU, %d threads, %dx%d, spp %s, ref %s"
          % (bpy.app.version_string, a.threads, a.res, a.res, spps,
             "off" if a.no_ref else a.ref_spp), flush=True)
    total0 = time.time()
    for name in scenes:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        BUILDERS[name]()
        setup_render(a.res, a.threads, a.pattern)
        if name == "animation":
            render_animation(a)
            continue
        folder = os.path.join(os.path.abspath(a.out), name)
        os.makedirs(folder, exist_ok=True)
        jobs = [] if a.no_full else [
            (spp, noisy_seed(spp), "%s_spp%d.exr" % (name, spp), True) for spp in spps]
        if not a.no_ref:
            jobs.append((a.ref_spp, REF_SEED, "%s_ref.exr" % name, True))
        if a.halves:
            for spp in spps:
                if spp % 2:
                    sys.exit("--halves needs even sample counts, not %d" % spp)
                jobs += [(spp // 2, half_seed(spp, h), "%s_spp%d_%s.exr" % (name, spp, h), False)
                         for h in "AB"]
        for spp, seed, fname, all_passes in jobs:
            # halves: only the passes a denoiser reads
            vl = bpy.context.scene.view_layers[0]
            vl.use_pass_z = vl.use_pass_normal = vl.use_pass_position = all_passes
            path = os.path.join(folder, fname)
            note = ("lull test data: scene=%s spp=%d seed=%d res=%d blender=%s"
                    % (name, spp, seed, a.res, bpy.app.version_string))
            print("[%s] rendering %s (%d spp, seed %d) ..." % (name, fname, spp, seed),
                  flush=True)
            dt = render_to(path, spp, seed, note, a.verbose)
            print("[%s] wrote %s in %.1f s (%.1f KiB)"
                  % (name, path, dt, os.path.getsize(path) / 1024.0), flush=True)
    print("done in %.1f s" % (time.time() - total0), flush=True)


if __name__ == "__main__":
    main()
