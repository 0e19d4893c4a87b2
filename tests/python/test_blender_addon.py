"""The Blender add-on end to end, in real Blender (bpy from PyPI, headless):
build the zip, install it as an extension, render a tiny two-layer scene
with Cycles, run the operators and the render_write handler (the work is
in blender_e2e.py, run in its own process so Blender's state and user
folders stay out of this one)."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, build_dir

pytestmark = pytest.mark.skipif(importlib.util.find_spec("bpy") is None,
                                reason="bpy is not installed (sh examples/bootstrap.sh --tests)")


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("blender")
    sys.path.insert(0, str(ROOT / "addon"))
    try:
        import build_zip
    finally:
        sys.path.pop(0)
    zip_path = build_zip.build(str(build_dir()), str(tmp / "lull_denoise.zip"), True)
    env = dict(os.environ)
    user = tmp / "user"  # Blender's user folders: never the real ones
    env.update(BLENDER_USER_RESOURCES=str(user), BLENDER_USER_CONFIG=str(user / "config"),
               BLENDER_USER_SCRIPTS=str(user / "scripts"),
               BLENDER_USER_EXTENSIONS=str(user / "extensions"),
               BLENDER_USER_DATAFILES=str(user / "datafiles"))
    env.pop("PYTHONPATH", None)  # the add-on must use the lull it bundles
    result = tmp / "result.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "python" / "blender_e2e.py"), zip_path,
         str(tmp / "work"), str(result)],
        env=env, cwd=tmp, capture_output=True, text=True, timeout=840)
    if proc.returncode != 0 or not result.exists():
        pytest.fail(f"blender_e2e.py failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                    f"{proc.stderr[-3000:]}")
    return json.loads(result.read_text())


def test_installs_from_zip_with_bundled_module(e2e):
    assert e2e["install"] == "extension" and e2e["addon_loaded"]
    assert e2e["lull_source"] == "bundled with the add-on"
    assert {"enable_passes", "denoise_render", "denoise_animation",
            "render_halves"} <= set(e2e["operators"])
    assert e2e["panel"]


def test_addon_defaults_are_the_librarys(e2e):
    # the add-on had its own (sigmaLuminance 4, sigmaNormal 0.2, sigmaAlbedo
    # 0.1), worse on every test render (indirect: relMSE 0.031 for 0.016)
    for name, (addon, library) in e2e["atrous_defaults"].items():
        assert addon == pytest.approx(library), name


def test_panel_draws(e2e):
    # every property and operator the panel names exists, for both filters
    rt, atrous = e2e["panel_draw"]["RT"], e2e["panel_draw"]["ATrous"]
    assert rt["errors"] == [] and atrous["errors"] == []
    assert {"device", "filter_type", "quality", "clean_aux", "auto_denoise"} <= set(rt["props"])
    assert {"iterations", "sigma_luminance", "sigma_normal", "sigma_depth",
            "sigma_albedo"} <= set(atrous["props"])
    assert "quality" not in atrous["props"]
    # with the module at hand every button works; without it only Enable Passes
    assert dict(rt["operators"]) == {"lull.enable_passes": True, "lull.denoise_render": True,
                                     "lull.denoise_animation": True, "lull.render_halves": True}
    assert [op for op, _ in rt["operators"]].count("lull.render_halves") == 2  # still, animation
    assert any(label.startswith("Passes on 'ViewLayer'") for label in rt["labels"])
    # which OIDN Cycles denoises with: the wheel's own here (test_blender_oidn
    # checks the lull case, started through `lull run`)
    assert rt["labels"][0].startswith("Cycles' OpenImageDenoise is Intel's")
    # the module missing: the reason, wrapped; a background worker: its status
    problem = e2e["panel_draw"]["problem"]
    assert problem["errors"] == []
    labels = problem["labels"]
    start = labels.index("The lull module is not available:") + 1
    end = next(i for i, label in enumerate(labels) if label.startswith("Passes on"))
    assert " ".join(labels[start:end]) == problem["text"]  # wrapped, nothing lost
    assert end - start > 1 and all(len(label) <= 60 for label in labels[start:end])
    assert "Background: 2 frames queued" in problem["labels"]
    assert dict(problem["operators"]) == {"lull.enable_passes": True,
                                          "lull.denoise_render": False,
                                          "lull.denoise_animation": False,
                                          "lull.render_halves": False}


def test_enable_passes(e2e):
    assert e2e["passes_enabled"] == {"ViewLayer": True, "Second": True}
    assert e2e["output_format"] in (["OPEN_EXR_MULTILAYER", None],  # Blender < 5.0
                                    ["OPEN_EXR_MULTILAYER", "MULTI_LAYER_IMAGE"])  # 5.0


def test_denoise_last_render_every_view_layer(e2e):
    assert e2e["denoise_render"] == ["FINISHED"]
    assert set(e2e["layers"]) == {"ViewLayer", "Second"}
    for name, layer in e2e["layers"].items():
        assert layer["image"], name
        assert layer["shape"] == [48, 64, 4]
        assert layer["finite"]
        # lower error against the high-spp render than the noisy render has
        assert layer["relmse_denoised"] < 0.5 * layer["relmse_noisy"], layer


def test_denoise_last_render_again(e2e):
    # the first result used by an image node: the node shows the second
    # (the old image was removed, leaving the node empty), under the name
    assert e2e["denoise_render_again"] == ["FINISHED"]
    assert e2e["result_in_use"] == ["lull Denoised ViewLayer", True]
    assert e2e["result_images"] == ["lull Denoised Second", "lull Denoised ViewLayer"]


def test_renamed_view_layers(e2e):
    # no layer of the file is named as the scene's now: the file's are
    # denoised (it had failed: "is this a Cycles multilayer EXR?")
    assert e2e["renamed_layers"] == ["FINISHED"]


def test_aov_named_denoised_is_kept(e2e):
    # Into the Same File, a view layer with an AOV "Denoised": the frame
    # fails, naming the pass, and the user's pass is as it was
    state, reports = e2e["aov_run"]
    assert state == ["FINISHED"] and e2e["aov_kept"]
    assert len(reports) == 1 and reports[0][0] == ["WARNING"]
    assert "denoised 0 frame(s), failed: a_0001.exr:" in reports[0][1]
    assert "'ViewLayer.Denoised', not replaced" in reports[0][1]
    # without the AOV, lull's own pass is replaced by a second run; a layer
    # without Denoising Data is named each time
    for state, reports in e2e["in_place_runs"]:
        assert state == ["FINISHED"]
        assert reports[0] == [["INFO"], "lull: denoised 1 frame(s)"]
        assert reports[1][0] == ["WARNING"]
        assert reports[1][1].startswith("lull: no Denoising Data in view layer(s) Second:")
    assert e2e["in_place_passes"] == ["Second.Denoised", "ViewLayer.Denoised"]


def test_suffix_names_a_copy(e2e):
    # an empty suffix is refused (the "copy" had been the rendered file)
    state, reports = e2e["empty_suffix"]
    assert state == ["CANCELLED"]
    assert reports[0][0] == ["ERROR"] and "Suffix is empty" in reports[0][1]
    assert e2e["empty_suffix_files"] == ["a_0001.exr"]
    # a still's output path a folder: the still ".exr", its copy named so
    assert e2e["folder_still_files"] == [".exr", "_denoised.exr"]


def _check_frames(frames):
    assert set(frames) == {"1", "2"}
    for frame in frames.values():
        assert frame["src"] and frame["dst"]
        assert frame["originals_identical"]  # non-destructive
        assert frame["added"] == ["Second.Denoised", "ViewLayer.Denoised"]
        for noisy, denoised in frame["relmse"].values():
            assert denoised < 0.5 * noisy


def test_auto_denoise_after_written_frames(e2e):
    assert e2e["auto_wait"], e2e["auto_status"]
    assert e2e["auto_failed"] == []
    _check_frames(e2e["auto_frames"])


def test_denoise_animation_operator(e2e):
    assert e2e["denoise_animation"] == ["FINISHED"]
    _check_frames(e2e["animation_frames"])


def test_last_render_saved_losslessly(e2e):
    # the output set to DWAA: the render is still saved with ZIP (DWAA had
    # changed Combined by 2.7% before it was denoised), and the setting kept
    assert e2e["saved_codec"] == 3
    assert e2e["codec_kept"] == "DWAA"
    # and the output colour space override, which the file format reset
    assert e2e["colorspace_kept"] == "ACEScg"


def test_disabling_keeps_the_queue(e2e):
    assert e2e["unregistered"]  # the add-on's unregister() ran
    assert e2e["queue_kept"]


def test_auto_denoise_of_a_still(e2e):
    # write_still: the still's file is denoised, the stale numbered one left
    assert e2e["still_files"] == ["shot.exr", "shot0001.exr", "shot_denoised.exr"]


def test_stereo_frames(e2e):
    # a file a view: both denoised (in batch mode as each frame is written)
    assert e2e["stereo_files"] == ["s_0001_L.exr", "s_0001_L_denoised.exr", "s_0001_R.exr",
                                   "s_0001_R_denoised.exr"]
    # both views in one file (Multi-View): each view denoised into a
    # Denoised pass of that view
    assert e2e["stereo_one_file"] == ["FINISHED"]
    assert e2e["stereo_one_file_passes"] == [
        "Second.Denoised.left", "Second.Denoised.right", "ViewLayer.Denoised.left",
        "ViewLayer.Denoised.right"]
    assert e2e["stereo_one_file_finite"] and e2e["stereo_one_file_views_differ"]
    # and the last render: an image a view
    assert e2e["stereo_last_render"] == ["FINISHED"]
    assert e2e["views_format_kept"] == "MULTIVIEW"
    assert e2e["stereo_last_render_images"] == [
        "lull Denoised Second (left)", "lull Denoised Second (right)",
        "lull Denoised ViewLayer (left)", "lull Denoised ViewLayer (right)"]
    # with EXR Interleave on, each view's file names its view (the view
    # had been added again, and no Combined pass found)
    assert e2e["stereo_interleaved"] == ["FINISHED"]
    assert e2e["stereo_interleaved_images"] == e2e["stereo_last_render_images"]


def test_composite_output_is_not_a_view_layer(e2e):
    assert e2e["composite_layer"]  # the file has it ...
    assert e2e["composite_added"] == ["Second.Denoised", "ViewLayer.Denoised"]  # ... left alone


def _check_modal_display(log, steps):
    """The timer, progress display and status text of a modal run: set up
    by invoke, taken down at the end."""
    assert log["returned"]["invoke"] == ["RUNNING_MODAL"]
    assert log["handlers"] == 1 and log["timers_added"] == 1 and log["timers_removed"]
    assert log["progress"][0] == ["begin", 0, steps] and log["progress"][-1] == ["end"]
    assert log["status"][-1] is None  # the status text cleared


def test_modal_animation_operator(e2e):
    # invoke, events that are not its timer passed through, TIMER events
    # until the frames are done
    log = e2e["modal_animation"]
    _check_modal_display(log, 2)
    assert log["returned"]["mouse"] == ["PASS_THROUGH"]
    assert log["returned"]["end"] == ["FINISHED"]
    updates = [p[1] for p in log["progress"] if p[0] == "update"]
    assert updates == sorted(updates) and updates[-1] == 2
    assert any(s and s.startswith("lull: ") and "(Esc cancels)" in s for s in log["status"])
    assert log["reports"] == [[["INFO"], "lull: 2 denoised"]]
    _check_frames(e2e["modal_animation_frames"])
    # a second one while frames are being denoised is refused
    refused, reports = e2e["modal_animation_second"]
    assert refused == ["CANCELLED"] and reports[0][0] == ["WARNING"]


def test_modal_animation_esc(e2e):
    log = e2e["modal_animation_esc"]
    _check_modal_display(log, 2)
    assert log["returned"]["esc"] == ["CANCELLED"]
    assert log["reports"][-1][0] == ["WARNING"] and "cancelled" in log["reports"][-1][1]
    assert log["worker_idle"]
    # only frames finished before the Esc are left, complete; no partial or
    # temporary files
    assert log["left"] == sorted(log["done"]) and log["readable"]


def test_modal_denoise_render(e2e):
    log = e2e["modal_render"]
    _check_modal_display(log, 100)
    assert log["returned"]["mouse"] == ["PASS_THROUGH"]
    assert log["returned"]["end"] == ["FINISHED"]
    assert log["reports"][0][0] == ["INFO"]
    assert e2e["modal_render_images"] == ["lull Denoised Second", "lull Denoised ViewLayer"]
    esc = e2e["modal_render_esc"]
    _check_modal_display(esc, 100)
    assert esc["returned"]["esc"] == ["CANCELLED"]
    assert esc["reports"] == [[["WARNING"], "lull: denoising cancelled"]]
    assert esc["job_ended"] and esc["images"] == []


# -- Render Halves and Denoise ------------------------------------------------------


def _check_halves_result(result):
    assert result["images"] == ["lull Denoised Second", "lull Denoised ViewLayer"]
    for name in ("ViewLayer", "Second"):
        layer = result[name]
        assert layer["finite"] and layer["guided"], name  # Denoising Data on for the halves
        # far closer to the reference than the halves' mean (the render of
        # all the samples)
        assert layer["relmse_denoised"] < 0.5 * layer["relmse_mean"], layer
        # the halves' seeds differ: their noise is independent
        assert abs(layer["noise_correlation"]) < 0.2, layer


def _check_kept(kept):
    assert all(kept.values()), kept  # the user's settings, the frame, no handlers left


def test_render_halves_still(e2e):
    assert e2e["halves_still"] == ["FINISHED"]
    _check_halves_result(e2e["halves_still_result"])
    _check_kept(e2e["halves_still_kept"])


def test_render_halves_animation(e2e, tmp_path):
    assert e2e["halves_animation"] == ["FINISHED"]
    _check_kept(e2e["halves_animation_kept"])
    assert e2e["halves_frames_differ"]  # Use Animated Seed: other seeds each frame
    for frame in e2e["halves_frames"].values():
        assert frame["exists"]
        # both halves in one file, as `lull denoise` reads halves
        assert {"ViewLayer.Combined A", "ViewLayer.Combined B", "ViewLayer.Denoising Albedo A",
                "ViewLayer.Denoising Albedo B", "ViewLayer.Denoised", "Second.Combined A",
                "Second.Denoised"} <= set(frame["passes"])
        for mean, denoised in frame["relmse"].values():
            assert denoised < 0.5 * mean
    # the command-line tool denoises such a file as the add-on did
    tool = build_dir() / "bin" / "lull"
    if not tool.exists():
        return
    import lull
    src = e2e["halves_frames"]["1"]["path"]
    out = tmp_path / "cli.exr"
    run = subprocess.run([str(tool), "denoise", src, "-o", str(out), "--output-pass", "Again",
                          "-d", "cpu"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "(Regression: colorA, colorB, albedo (halves)" in run.stderr
    passes = lull.read_exr(out)
    for layer in ("ViewLayer", "Second"):
        assert (passes[layer + ".Again"] == passes[layer + ".Denoised"]).all(), layer


def test_render_halves_modal(e2e):
    log = e2e["halves_modal"]
    _check_modal_display(log, 100)
    assert log["returned"]["mouse"] == ["PASS_THROUGH"]
    assert log["returned"]["end"] == ["FINISHED"]
    assert log["reports"][0][0] == ["INFO"]
    assert any(s and "rendering half B" in s for s in log["status"])
    assert any(s and "denoising" in s for s in log["status"])
    _check_halves_result(e2e["halves_modal_result"])
    _check_kept(e2e["halves_modal_kept"])


def test_render_halves_esc(e2e):
    for key, returned in (("halves_modal_esc", "esc"), ("halves_render_cancelled", "timer")):
        log = e2e[key]
        _check_modal_display(log, 100)
        assert log["returned"][returned] == ["CANCELLED"], key
        assert log["reports"] == [[["WARNING"], "lull: Render Halves cancelled"]], key
        _check_kept(log["kept"])
    assert e2e["halves_modal_esc"]["images"] == []
