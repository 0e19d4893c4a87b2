"""The lull panel in Render Properties."""

import bpy

from . import halves, loader, oidn_library, operators, passes


class RENDER_PT_lull(bpy.types.Panel):
    bl_label = "lull Denoiser"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "render"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        scene = context.scene
        s = scene.lull

        # Cycles' own denoiser: lull when Blender was started with `lull blender`
        oidn = oidn_library.info()
        layout.label(text=oidn["text"], icon="CHECKMARK" if oidn["lull"] else "INFO")

        problem = loader.error()
        if problem:
            box = layout.box()
            box.alert = True
            box.label(text="The lull module is not available:", icon="ERROR")
            for line in _wrap(problem, 60):
                box.label(text=line)

        layout.prop(s, "device")
        layout.prop(s, "filter_type")
        col = layout.column(align=True)
        if s.filter_type == "RT":
            col.prop(s, "quality")
            col.prop(s, "clean_aux")
        else:
            col.prop(s, "iterations")
            col = layout.column(align=True, heading="Edge Sigmas")
            col.prop(s, "sigma_luminance")
            col.prop(s, "sigma_normal")
            col.prop(s, "sigma_depth")
            col.prop(s, "sigma_albedo")

        layout.prop(s, "temporal")
        if s.temporal and scene.render.use_motion_blur:
            row = layout.row()
            row.alert = True
            row.label(text="Motion Blur is on: Cycles writes no Vector pass", icon="ERROR")

        box = layout.box()
        box.label(text=f"Passes on '{context.view_layer.name}':")
        needed = passes.NEEDED_SETTINGS.get(s.filter_type, ())
        if s.temporal and needed:
            needed = needed + passes.TEMPORAL_SETTINGS
        for label, owner, attr in needed:
            target = getattr(context.view_layer, "cycles", None) if owner == "cycles" \
                else context.view_layer
            on = bool(target is not None and getattr(target, attr, False))
            box.label(text=label, icon="CHECKMARK" if on else "X")
        box.operator(operators.LULL_OT_enable_passes.bl_idname, icon="RENDERLAYERS")

        col = layout.column(align=True)
        col.enabled = problem is None
        col.operator(operators.LULL_OT_denoise_render.bl_idname, icon="IMAGE_DATA")
        col.operator(operators.LULL_OT_denoise_animation.bl_idname, icon="RENDER_ANIMATION")
        col = layout.column(align=True)
        col.enabled = problem is None
        col.operator(halves.LULL_OT_render_halves.bl_idname, icon="RENDER_STILL")
        col.operator(halves.LULL_OT_render_halves.bl_idname, text="Render Halves Animation",
                     icon="RENDER_ANIMATION").animation = True
        col.prop(s, "halves_filter")

        layout.separator()
        layout.prop(s, "auto_denoise")
        sub = layout.column()
        sub.prop(s, "in_place")
        row = sub.row()
        row.enabled = not s.in_place
        row.prop(s, "suffix")
        worker = operators._auto["worker"]
        if worker is not None:
            layout.label(text=f"Background: {worker.status()}", icon="TIME")


def _wrap(text, width):
    words, line, lines = text.split(), "", []
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return lines + ([line] if line else [])


def register():
    bpy.utils.register_class(RENDER_PT_lull)


def unregister():
    bpy.utils.unregister_class(RENDER_PT_lull)
