"""The add-on's Blender-free parts (addon/lull_denoise: loader, passes,
pipeline) outside Blender: pass selection, cancellation, failures, and the
loader's message for a compiled module built for another Python."""

import importlib
import os
import shutil
import subprocess
import sys
import threading

import pytest

import lull
from conftest import ROOT, render_path

ADDON = ROOT / "addon" / "lull_denoise"


@pytest.fixture(scope="module")
def addon():
    """passes and pipeline as a package (their relative imports need one)."""
    sys.path.insert(0, str(ADDON.parent))
    try:
        yield (importlib.import_module("lull_denoise.passes"),
               importlib.import_module("lull_denoise.pipeline"))
        assert "bpy" not in sys.modules  # these parts need no Blender
    finally:
        sys.path.pop(0)


def test_pass_selection(np, addon):
    passes, _ = addon
    a = np.zeros((2, 2, 4), np.float32)
    g = np.zeros((2, 2, 3), np.float32)
    data = {"L.Combined": a, "L.Noisy Image": a + 1, "L.Denoising Normal": g,
            "L.Denoising Depth": g[..., 0], "M.Combined": a, "M.Denoising Albedo": g,
            "M.Denoising Normal": g}
    assert passes.layers(data) == ["L", "M"]
    inputs = passes.filter_inputs(data, "L", lull.filter_images("RT"))
    assert inputs["color"] is data["L.Noisy Image"]  # Cycles' own denoiser ran
    assert "normal" not in inputs  # no albedo: OIDN's rule
    assert "depth" in inputs
    inputs = passes.filter_inputs(data, "M", lull.filter_images("Gaussian"))
    assert set(inputs) == {"color"}  # Gaussian takes no guides
    with pytest.raises(KeyError, match="'X'"):
        passes.filter_inputs(data, "X", ["color"])


def test_layers_filtered_and_unguided_named(np, addon):
    """Only the scene's view layers are denoised (a file also holds the
    compositor's output as a layer "Composite"); layers without an albedo
    (no Denoising Data) are named, so the add-on can say so."""
    _, pipeline = addon
    rng = np.random.default_rng(3)
    a = rng.random((8, 8, 4), dtype=np.float32)
    g = rng.random((8, 8, 3), dtype=np.float32)
    data = {"L.Combined": a, "L.Denoising Albedo": g, "L.Denoising Normal": g,
            "M.Combined": a, "Composite.Combined": a}
    settings = pipeline.Settings("RT", "cpu", view_layers=["L", "M"])
    unguided = []
    results = pipeline.denoise_passes(lull, data, settings, unguided=unguided)
    assert sorted(results) == ["L.Denoised", "M.Denoised"]
    assert unguided == ["M"]
    with pytest.raises(ValueError, match="view layer"):
        pipeline.denoise_passes(lull, {"Composite.Combined": a}, settings)


def test_stereo_views(np, addon, tmp_path):
    """A stereo render's passes ("L.Combined.left", views listed) are
    denoised view by view; a render result saved a file a view
    (read_views) reads as one file of both views would."""
    passes, pipeline = addon
    rng = np.random.default_rng(5)
    a = rng.random((8, 8, 4), dtype=np.float32)
    g = rng.random((8, 8, 3), dtype=np.float32)
    data = lull.Passes({"L.Combined.left": a, "L.Combined.right": a[::-1].copy(),
                        "L.Denoising Albedo.left": g, "L.Denoising Normal.left": g},
                       views=["left", "right"])
    assert passes.targets(data) == [("L", "left"), ("L", "right")]
    assert passes.layers(data) == ["L"]
    assert passes.split_key(data, "L.Combined.right") == ("L", "Combined", "right")
    assert passes.split_key({"L.Combined.right": a}, "L.Combined.right") == \
        ("L.Combined", "right", "")  # not a view of the file: a pass name
    dotted = lull.Passes({"L.Combined.cam.c": a}, views=["c", "cam.c"])
    assert passes.split_key(dotted, "L.Combined.cam.c") == ("L", "Combined", "cam.c")
    inputs = passes.filter_inputs(data, "L", lull.filter_images("RT"), "right")
    assert inputs["color"] is data["L.Combined.right"] and "albedo" not in inputs
    unguided = []
    results = pipeline.denoise_passes(lull, data, pipeline.Settings("RT", "cpu"),
                                      unguided=unguided)
    assert sorted(results) == ["L.Denoised.left", "L.Denoised.right"]
    assert unguided == ["L (right)"]
    # a file a view, merged
    for view, array in (("left", a), ("right", 2 * a)):
        lull.write_exr(tmp_path / f"r_{view}.exr", {"L.Combined": array})
    merged = pipeline.read_views(lull, [("left", str(tmp_path / "r_left.exr")),
                                        ("right", str(tmp_path / "r_right.exr"))])
    assert merged.views == ("left", "right")
    assert sorted(merged) == ["L.Combined.left", "L.Combined.right"]
    np.testing.assert_array_equal(merged["L.Combined.right"], 2 * a)
    assert passes.targets(merged) == [("L", "left"), ("L", "right")]
    # a file a view that names its view (the render result saved with EXR
    # Interleave on: "L.Combined.left", views ("left",)) is not given the
    # view twice ("L.Combined.left.left" had left no Combined pass)

    class ViewFiles:  # lull, reading such files
        Passes = lull.Passes

        @staticmethod
        def read_exr(path):
            view = os.path.basename(path)
            return lull.Passes({f"L.Combined.{view}": a, "L.Extra": g}, views=[view])

    merged = pipeline.read_views(ViewFiles, [("left", "/x/left"), ("right", "/x/right")])
    assert sorted(merged) == ["L.Combined.left", "L.Combined.right", "L.Extra.left",
                              "L.Extra.right"]
    assert passes.targets(merged) == [("L", "left"), ("L", "right")]


def test_renamed_view_layers(np, addon):
    """A view layer renamed since the render (or a render of another scene):
    no layer of the file has a name of the scene's, so every layer of the
    file is denoised but the compositor's output; and with none, the error
    names the layers the file has."""
    _, pipeline = addon
    rng = np.random.default_rng(4)
    a = rng.random((8, 8, 4), dtype=np.float32)
    data = {"L.Combined": a, "M.Noisy Image": a, "Composite.Combined": a}
    renamed = pipeline.Settings("RT", "cpu", view_layers=["Renamed"])
    assert sorted(pipeline.denoise_passes(lull, data, renamed)) == ["L.Denoised", "M.Denoised"]
    # a layer of the scene's name in the file: only the scene's, as before
    kept = pipeline.Settings("RT", "cpu", view_layers=["M", "Other"])
    assert list(pipeline.denoise_passes(lull, data, kept)) == ["M.Denoised"]
    with pytest.raises(ValueError, match="the file's layers: 'Composite', 'X'"):
        pipeline.denoise_passes(lull, {"Composite.Combined": a, "X.Depth": a[..., 0]}, renamed)


def test_denoised_pass_of_the_user_kept(np, addon, tmp_path):
    """A pass of the output's name that lull did not write (an AOV named
    "Denoised") is never replaced: add_passes replaces a pass of the same
    name, and Into the Same File had lost the user's pass.  lull's own
    pass, from an earlier run over the same file, is replaced."""
    _, pipeline = addon
    rng = np.random.default_rng(6)
    a = rng.random((8, 8, 4), dtype=np.float32)
    g = rng.random((8, 8, 3), dtype=np.float32)
    aov = np.full((8, 8, 4), 0.25, np.float32)
    src = tmp_path / "aov.exr"
    lull.write_exr(src, {"L.Combined": a, "L.Denoising Albedo": g, "L.Denoising Normal": g,
                         "L.Denoised": aov, "M.Combined": a})
    before = src.read_bytes()
    scene = pipeline.Settings("RT", "cpu", view_layers=["L", "M"], aovs={"L": ["Denoised"]})
    for settings in (pipeline.Settings("RT", "cpu"),  # no scene: lull cannot tell
                     pipeline.Settings("RT", "cpu", view_layers=["Renamed"]),  # not the scene's
                     scene):  # the scene says it is an AOV
        with pytest.raises(ValueError, match="pass 'L.Denoised', not replaced"):
            pipeline.denoise_file(lull, str(src), str(src), settings)
        with pytest.raises(ValueError, match="'L.Denoised'"):
            pipeline.denoise_file(lull, str(src), str(tmp_path / "copy.exr"), settings)
    assert src.read_bytes() == before and not (tmp_path / "copy.exr").exists()
    # lull's own: denoised into the same file twice, the second run replaces
    # the first's pass (and names the layer without guides each time)
    own = tmp_path / "own.exr"
    lull.write_exr(own, {"L.Combined": a, "L.Denoising Albedo": g, "M.Combined": a})
    settings = pipeline.Settings("RT", "cpu", view_layers=["L", "M"], aovs={"L": ["Other"]})
    for _ in range(2):
        unguided = []
        assert sorted(pipeline.denoise_file(lull, str(own), str(own), settings,
                                            unguided=unguided)) == ["L.Denoised", "M.Denoised"]
        assert unguided == ["M"]
    assert sorted(lull.read_exr(own)) == ["L.Combined", "L.Denoised", "L.Denoising Albedo",
                                          "M.Combined", "M.Denoised"]


def test_denoised_path(addon):
    """The copy's name: an empty suffix (the rendered file itself) and one
    with a folder in it are refused; a name that is only an extension (a
    still's output path left a folder, Blender's "/tmp/") gets the suffix
    before it (it had given "/tmp/.exr_denoised.exr")."""
    _, pipeline = addon
    assert pipeline.denoised_path("/a/f_0001.exr") == "/a/f_0001_denoised.exr"
    assert pipeline.denoised_path("/a/f.v2.exr", "_d") == "/a/f.v2_d.exr"
    assert pipeline.denoised_path("/tmp/.exr") == "/tmp/_denoised.exr"
    assert pipeline.denoised_path("/tmp/f") == "/tmp/f_denoised.exr"
    with pytest.raises(ValueError, match="Suffix is empty"):
        pipeline.denoised_path("/a/f.exr", "")
    with pytest.raises(ValueError, match="path separator"):
        pipeline.denoised_path("/a/f.exr", "/denoised")


def test_denoise_file_and_cancel(np, addon, tmp_path):
    _, pipeline = addon
    src = render_path("cornell", "spp4")
    dst = tmp_path / "out.exr"
    settings = pipeline.Settings("ATrous", "cpu", {"iterations": 4})
    seen = []
    keys = pipeline.denoise_file(lull, str(src), str(dst), settings, progress=seen.append)
    assert keys == ["ViewLayer.Denoised"] and dst.exists()
    assert seen[0] == 0.0 and seen[-1] == 1.0
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(pipeline.Cancelled):
        pipeline.denoise_file(lull, str(src), str(tmp_path / "never.exr"), settings,
                              cancel=cancel)
    # cancelled inside the filter, at a progress step
    cancel.clear()

    def stop_at_half(fraction):
        if fraction > 0.3:
            cancel.set()

    with pytest.raises(pipeline.Cancelled):
        pipeline.denoise_file(lull, str(src), str(tmp_path / "never.exr"), settings,
                              progress=stop_at_half, cancel=cancel)
    assert not (tmp_path / "never.exr").exists()
    assert pipeline.denoised_path("/a/f_0001.exr") == "/a/f_0001_denoised.exr"


def test_layers_job(np, addon):
    """Denoise Last Render's job: on its own thread, the same result as the
    blocking call, progress to 1; a cancel stops it at a progress step; an
    error is kept for the operator to report, not raised on the thread."""
    _, pipeline = addon
    data = lull.read_exr(str(render_path("cornell", "spp4")))
    settings = pipeline.Settings("ATrous", "cpu", {"iterations": 4})
    job = pipeline.LayersJob(lull, data, settings).start()
    assert job.wait(timeout=120) and not job.running()
    assert job.error is None and not job.cancelled and job.fraction == 1.0
    expected = pipeline.denoise_passes(lull, data, settings)
    assert list(job.results) == ["ViewLayer.Denoised"]
    np.testing.assert_array_equal(job.results["ViewLayer.Denoised"],
                                  expected["ViewLayer.Denoised"])
    assert job.seconds > 0.0 and job.unguided == []

    job = pipeline.LayersJob(lull, data, settings)
    job.cancel()  # before the first layer: cancelled for sure
    assert job.start().wait(timeout=120)
    assert job.cancelled and job.results is None and job.error is None

    scene_layers = pipeline.Settings("ATrous", "cpu", view_layers=["ViewLayer"])
    job = pipeline.LayersJob(lull, {"Composite.Combined": data["ViewLayer.Combined"]},
                             scene_layers).start()
    assert job.wait(timeout=120)
    assert isinstance(job.error, ValueError) and "view layer" in str(job.error)
    assert not job.cancelled and job.results is None


def test_halves(np, addon, tmp_path):
    """Render Halves' denoising, without Blender: each layer's colour and
    guides as their halves through Regression (alpha: the halves' mean),
    the same as lull.denoise given them; the job; halves of other layers or
    passes refused; a frame of halves as one file that lull.read_exr gives
    back under the halves' names."""
    _, pipeline = addon
    if pipeline.HALVES_FILTER not in lull.filter_types():
        pytest.skip("this build of lull has no Regression filter")
    rng = np.random.default_rng(5)
    clean = rng.random((16, 20, 4), dtype=np.float32)
    albedo = rng.random((16, 20, 3), dtype=np.float32)
    halves = []
    for _ in range(2):
        color = clean * rng.uniform(0.5, 1.5, clean.shape).astype(np.float32)
        halves.append(lull.Passes({"L.Combined": color, "L.Denoising Albedo": albedo},
                                  width=20, height=16))
    settings = pipeline.Settings("RT", "cpu", {"quality": 6}, view_layers=["L"])
    results = pipeline.denoise_halves(lull, halves, settings)
    expected = lull.denoise(colorA=halves[0]["L.Combined"], colorB=halves[1]["L.Combined"],
                            albedoA=albedo, albedoB=albedo, device="cpu")
    out = results["L.Denoised"]
    np.testing.assert_array_equal(out[..., :3], expected[..., :3])
    np.testing.assert_array_equal(
        out[..., 3], (halves[0]["L.Combined"][..., 3] + halves[1]["L.Combined"][..., 3]) / 2)
    job = pipeline.LayersJob(lull, halves[0], settings, half_b=halves[1]).start()
    assert job.wait(timeout=120) and job.error is None and job.fraction == 1.0
    np.testing.assert_array_equal(job.results["L.Denoised"], out)
    assert job.labels == {"L.Denoised": "L"}

    other = lull.Passes({"M.Combined": halves[1]["L.Combined"]}, width=20, height=16)
    with pytest.raises(ValueError, match="other view layers"):
        pipeline.denoise_halves(lull, [halves[0], other], pipeline.Settings("RT", "cpu"))
    unguided = lull.Passes({"L.Combined": halves[1]["L.Combined"]}, width=20, height=16)
    with pytest.raises(ValueError, match="the halves have other passes"):
        pipeline.denoise_halves(lull, [halves[0], unguided], settings)

    path = tmp_path / "frame.exr"
    pipeline.write_halves_file(lull, str(path), halves, results)
    back = lull.read_exr(path)
    assert sorted(back) == ["L.Combined A", "L.Combined B", "L.Denoised",
                            "L.Denoising Albedo A", "L.Denoising Albedo B"]
    np.testing.assert_array_equal(back["L.Combined B"], halves[1]["L.Combined"])
    np.testing.assert_array_equal(back["L.Denoised"], out)
    assert back.channel_names["L.Denoised"] == ("R", "G", "B", "A")


def test_halves_without_guides_and_other_filters(np, addon):
    """Halves without Denoising Data are denoised and named in `unguided`
    (the layer's name once was taken for the filter's); Halves Filter
    RDFC and DDID run the same images, each equal to lull.denoise's."""
    _, pipeline = addon
    rng = np.random.default_rng(7)
    clean = rng.random((12, 14, 3), dtype=np.float32)
    halves = [lull.Passes({"L.Combined": clean * rng.uniform(0.5, 1.5, clean.shape)
                           .astype(np.float32)}, width=14, height=12) for _ in range(2)]
    for name in ("Regression", "RDFC", "DDID"):
        if name not in lull.filter_types():
            continue
        settings = pipeline.Settings("RT", "cpu", view_layers=["L"], halves_filter=name)
        unguided = []
        results = pipeline.denoise_halves(lull, halves, settings, unguided=unguided)
        assert unguided == ["L"]
        expected = lull.denoise(filter=name, colorA=halves[0]["L.Combined"],
                                colorB=halves[1]["L.Combined"], device="cpu")
        np.testing.assert_array_equal(results["L.Denoised"], expected)


def test_worker_reports_failures(addon, tmp_path):
    _, pipeline = addon
    bad = tmp_path / "bad.exr"
    bad.write_bytes(b"not an exr")
    good = render_path("cornell", "spp4")
    worker = pipeline.Worker(lull)
    settings = pipeline.Settings("RT", "cpu")
    worker.submit(str(bad), str(tmp_path / "bad_out.exr"), settings)
    worker.submit(str(good), str(tmp_path / "good_out.exr"), settings)
    assert worker.wait(timeout=120)
    assert [d for d, _ in worker.done] == [str(good)]
    assert worker.failed[0][0] == str(bad) and "bad.exr" in worker.failed[0][1]
    assert "1 denoised, 1 failed" in worker.status()
    assert not (tmp_path / "bad_out.exr").exists()
    # layers without Denoising Data, named for Denoise Animation Frames' report
    assert worker.unguided == []
    color = lull.read_exr(good)["ViewLayer.Combined"]
    lull.write_exr(tmp_path / "plain.exr", {"L.Combined": color})
    worker.submit(str(tmp_path / "plain.exr"), str(tmp_path / "plain_out.exr"), settings)
    assert worker.wait(timeout=120) and worker.unguided == ["L"]


def test_loader_explains_a_mismatched_module(tmp_path):
    package = tmp_path / "lull_denoise"
    shutil.copytree(ADDON, package)
    (package / "lull").mkdir()
    shutil.copy(lull.__file__, package / "lull" / "__init__.py")
    (package / "lull" / "_lull.cpython-39-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    code = "from lull_denoise import loader; print(loader.error())"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, env=env)
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "bundled lull module cannot be loaded" in out
    assert "does not match this Python" in out
    assert "Blender's Python is %d.%d" % sys.version_info[:2] in out
