"""lull.read_exr / write_exr / add_passes (plugin/io), denoising real
Cycles renders, and parity with the command-line tool."""

import os
import subprocess

import pytest

import lull
from conftest import DATA, build_dir, render_path

pytestmark = pytest.mark.skipif(not lull.HAVE_IMAGE_IO, reason="built without plugin/io")


def rel_mse(np, x, ref):
    x, ref = x[..., :3].astype(np.float64), ref[..., :3].astype(np.float64)
    return float(np.mean((x - ref) ** 2 / (ref ** 2 + 1e-2)))


def test_read_blender_multilayer(np):
    passes = lull.read_exr(render_path("cornell", "spp16"))
    assert (passes.width, passes.height) == (256, 256)
    combined = passes["ViewLayer.Combined"]
    assert combined.shape == (256, 256, 4) and combined.dtype == np.float32
    assert passes.channel_names["ViewLayer.Combined"] == ("R", "G", "B", "A")
    assert passes["ViewLayer.Denoising Depth"].shape == (256, 256)
    assert passes.channel_names["ViewLayer.Denoising Normal"] == ("X", "Y", "Z")
    assert passes.half["ViewLayer.Combined"] is True
    assert all(np.isfinite(a).all() for a in passes.values())


def test_round_trip(np, rng, tmp_path):
    data = {
        "Layer.Beauty": rng.random((9, 7, 4), dtype=np.float32),
        "Layer.Depth": rng.random((9, 7), dtype=np.float32) * 100,
        "Other.Normal": rng.normal(size=(9, 7, 3)).astype(np.float32),
    }
    path = tmp_path / "many.exr"
    lull.write_exr(path, data)
    back = lull.read_exr(path)
    assert set(back) == set(data)
    for key, value in data.items():
        assert np.array_equal(back[key], value), key
    assert back.channel_names["Other.Normal"] == ("X", "Y", "Z")
    assert back.channel_names["Layer.Depth"] == ("Z",)
    # half storage rounds exactly like NumPy's float16
    lull.write_exr(path, data, half=True)
    back = lull.read_exr(path)
    for key, value in data.items():
        assert np.array_equal(back[key], value.astype(np.float16).astype(np.float32)), key
        assert back.half[key]
    # a plain RGB image, and float16 input kept as half
    plain = rng.random((5, 6, 3), dtype=np.float32).astype(np.float16)
    lull.write_exr(tmp_path / "plain.exr", {"": plain})
    back = lull.read_exr(tmp_path / "plain.exr")
    assert list(back) == [""] and back.half[""]
    assert np.array_equal(back[""], plain.astype(np.float32))
    # PFM: one pass
    lull.write_exr(tmp_path / "x.pfm", {"": plain.astype(np.float32)})
    assert np.array_equal(lull.read_exr(tmp_path / "x.pfm")[""], plain.astype(np.float32))


def test_add_passes_is_non_destructive(np, tmp_path):
    src = render_path("cornell", "spp4")
    dst = tmp_path / "with_denoised.exr"
    original = lull.read_exr(src)
    clean = lull.denoise(original["ViewLayer.Combined"], filter="Gaussian", sigma=1.0)
    lull.add_passes(src, dst, {"ViewLayer.Denoised": clean},
                    channel_names={"ViewLayer.Denoised": ("R", "G", "B", "A")})
    back = lull.read_exr(dst)
    assert set(back) == set(original) | {"ViewLayer.Denoised"}
    for key in original:
        assert np.array_equal(back[key], original[key]) and back.half[key] == original.half[key]
    assert np.array_equal(back["ViewLayer.Denoised"], clean)
    # adding again replaces, in place
    lull.add_passes(dst, dst, {"ViewLayer.Denoised": clean * 2})
    assert np.array_equal(lull.read_exr(dst)["ViewLayer.Denoised"], clean * 2)
    # channel names of the wrong count are refused (defaults took their place)
    before = dst.read_bytes()
    with pytest.raises(ValueError, match="2 names, the pass 4 channels"):
        lull.add_passes(dst, dst, {"ViewLayer.Denoised": clean},
                        channel_names={"ViewLayer.Denoised": ("X", "Y")})
    assert dst.read_bytes() == before


def test_stereo_views(np, tmp_path):
    """Blender's Multi-View stereo EXR (a part per pass and view): the
    passes of each view under "Layer.Pass.view", and add_passes puts a
    view's pass into a part of that view; a key without a view adds a pass
    without one (it replaced the left eye's); a replaced pass keeps its
    channel names unless new ones are given (a plain dict's defaults had
    renamed Denoising Normal's X Y Z to R G B)."""
    src = DATA / "stereo" / "multiview.exr"
    passes = lull.read_exr(src)
    assert passes.views == ("left", "right")
    assert {"ViewLayer.Combined.left", "ViewLayer.Combined.right",
            "ViewLayer.Denoising Normal.right"} <= set(passes)
    assert not (passes["ViewLayer.Combined.left"] == passes["ViewLayer.Combined.right"]).all()
    left, right = passes["ViewLayer.Combined.left"], passes["ViewLayer.Combined.right"]
    normal = passes["ViewLayer.Denoising Normal.left"]
    dst = tmp_path / "out.exr"
    lull.add_passes(src, dst, {"ViewLayer.Denoised.left": left + 1,
                               "ViewLayer.Denoised.right": right + 2,
                               "ViewLayer.Extra": left,
                               "ViewLayer.Denoising Normal.left": -normal})
    out = lull.read_exr(dst)
    np.testing.assert_array_equal(out["ViewLayer.Denoised.left"], left + 1)
    np.testing.assert_array_equal(out["ViewLayer.Denoised.right"], right + 2)
    np.testing.assert_array_equal(out["ViewLayer.Combined.left"], left)  # untouched
    np.testing.assert_array_equal(out["ViewLayer.Extra"], left)
    np.testing.assert_array_equal(out["ViewLayer.Denoising Normal.left"], -normal)
    assert out.channel_names["ViewLayer.Denoising Normal.left"] == ("X", "Y", "Z")
    for key in passes:  # every other pass as it was
        if key != "ViewLayer.Denoising Normal.left":
            np.testing.assert_array_equal(out[key], passes[key])
    # a new pass of a view gets its own name's default channels (it got
    # those of a pass named "left")
    lull.add_passes(src, dst, {"ViewLayer.My Normal.left": normal})
    assert lull.read_exr(dst).channel_names["ViewLayer.My Normal.left"] == ("X", "Y", "Z")
    # a misspelt view is refused, not added as pass "lefft" of a new layer
    # "ViewLayer.My Normal" without a view
    before = dst.read_bytes()
    with pytest.raises(ValueError, match="'lefft' is none of the file's views \\(left, right\\)"):
        lull.add_passes(dst, dst, {"ViewLayer.My Normal.lefft": normal})
    assert dst.read_bytes() == before
    # write_exr cannot keep views (the file would silently stop being stereo)
    with pytest.raises(ValueError, match="add_passes"):
        lull.write_exr(tmp_path / "flat.exr", passes)


def test_add_passes_refuses_a_texture(np, tmp_path):
    # only the first resolution level is read: add_passes would have
    # dropped the others, in place too
    import shutil
    src = tmp_path / "texture.exr"
    shutil.copyfile(DATA / "texture" / "mipmapped.exr", src)
    before = src.read_bytes()
    passes = lull.read_exr(src)
    assert passes["ViewLayer.Combined"].shape == (4, 8, 3)
    with pytest.raises(ValueError, match="4 resolution levels"):
        lull.add_passes(src, src, {"ViewLayer.Denoised": passes["ViewLayer.Combined"]})
    assert src.read_bytes() == before


def test_add_passes_to_an_8bit_file(np, tmp_path):
    """add_passes from a PNG into an EXR: the PNG's colour becomes linear
    (an EXR holds linear values), the passes added keep the caller's values
    (they were decoded and clamped too: a depth of 5 read back as 1)."""
    png = tmp_path / "p.png"
    grey = np.full((8, 8, 3), 0.5, np.float32)
    lull.write_exr(png, {"": grey})
    stored = lull.read_exr(png)[""]  # display-encoded, as the PNG holds them
    out = tmp_path / "p_add.exr"
    lull.add_passes(png, out, {"Depth": np.full((8, 8), 5.0, np.float32),
                               "Normal": np.full((8, 8, 3), -0.5, np.float32)})
    back = lull.read_exr(out)
    np.testing.assert_array_equal(back["Depth"], np.full((8, 8), 5.0, np.float32))
    np.testing.assert_array_equal(back["Normal"], np.full((8, 8, 3), -0.5, np.float32))
    linear = np.where(stored <= 0.04045, stored / 12.92, ((stored + 0.055) / 1.055) ** 2.4)
    np.testing.assert_allclose(back[""], linear, rtol=1e-5)


def test_dotted_layer_names(np, tmp_path):
    """A view layer "ViewLayer.001" (Blender's name for a new one): its
    passes are found, and add_passes replaces its pass on a second run
    (it had failed: "channel 'ViewLayer.001.Denoised.R' is written twice")."""
    a = np.full((8, 10, 3), 0.25, np.float32)
    path = tmp_path / "d.exr"
    lull.write_exr(path, {"ViewLayer.001.Combined": a})
    for value in (0.5, 0.75):
        lull.add_passes(path, path, {"ViewLayer.001.Denoised": a * 0 + value})
    passes = lull.read_exr(path)
    assert set(passes) == {"ViewLayer.001.Combined", "ViewLayer.001.Denoised"}
    np.testing.assert_array_equal(passes["ViewLayer.001.Denoised"], a * 0 + 0.75)


def test_file_errors_leave_files_intact(np, tmp_path):
    good = tmp_path / "good.exr"
    lull.write_exr(good, {"": np.ones((4, 4, 3), np.float32)})
    before = good.read_bytes()
    with pytest.raises(ValueError, match="'L.B'.*4 x 4|is 3 x 4"):
        lull.write_exr(good, {"L.A": np.ones((4, 4, 3), np.float32),
                              "L.B": np.ones((3, 4, 3), np.float32)})
    with pytest.raises(TypeError, match="'L.A'"):
        lull.write_exr(good, {"L.A": np.ones((4, 4, 3), np.float64)})
    assert good.read_bytes() == before
    with pytest.raises(lull.Error):
        lull.write_exr(tmp_path / "missing" / "dir" / "x.exr", {"": np.ones((2, 2, 3), np.float32)})
    assert not (tmp_path / "missing").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.exr"]  # no temporary left
    with pytest.raises(lull.Error) as info:
        lull.read_exr(tmp_path / "nope.exr")
    assert info.value.code == lull.ERROR_INVALID_ARGUMENT and "nope.exr" in str(info.value)
    corrupt = tmp_path / "corrupt.exr"
    corrupt.write_bytes(b"v/1\x01" + os.urandom(200))
    with pytest.raises(lull.Error):
        lull.read_exr(corrupt)
    truncated = tmp_path / "truncated.exr"
    truncated.write_bytes(render_path("cornell", "spp4").read_bytes()[:5000])
    with pytest.raises(lull.Error):
        lull.read_exr(truncated)
    with pytest.raises(lull.Error):
        lull.add_passes(corrupt, good, {"": np.ones((4, 4, 3), np.float32)})
    assert good.read_bytes() == before


@pytest.mark.parametrize("scene", ["cornell", "indirect", "dof_glossy"])
def test_denoising_real_renders_lowers_error(np, scene):
    ref_path = DATA / scene / f"{scene}_ref.exr"
    if not ref_path.exists():
        pytest.skip(f"{ref_path} not present")
    ref = lull.read_exr(ref_path)["ViewLayer.Combined"]
    noisy = lull.read_exr(render_path(scene, "spp16"))
    get = lambda name: noisy[f"ViewLayer.{name}"]  # noqa: E731
    out = lull.denoise(get("Combined"), get("Denoising Albedo"), get("Denoising Normal"),
                       get("Denoising Depth"))
    assert np.isfinite(out).all()
    assert np.array_equal(out[..., 3], get("Combined")[..., 3])  # alpha passes through
    assert rel_mse(np, out, ref) < 0.5 * rel_mse(np, get("Combined"), ref)


def _cli():
    path = build_dir() / "bin" / "lull"
    if not path.exists():
        pytest.skip(f"the command-line tool is not built ({path})")
    return path


def _synthetic_render(np, path):
    """A small Blender-style multilayer EXR (no test data needed)."""
    rng = np.random.default_rng(7)
    h, w = 40, 56
    clean = np.zeros((h, w, 3), np.float32)
    clean[:, w // 2:] = (0.9, 0.5, 0.1)
    clean[:, : w // 2] = (0.2, 0.3, 0.8)
    color = np.concatenate([clean + rng.normal(0, 0.2, clean.shape).astype(np.float32),
                            np.ones((h, w, 1), np.float32)], axis=2)
    normal = np.zeros((h, w, 3), np.float32)
    normal[..., 2] = 1
    depth = np.full((h, w), 5.0, np.float32)
    position = rng.random((h, w, 3), dtype=np.float32)
    lull.write_exr(path, {"ViewLayer.Combined": color, "ViewLayer.Denoising Albedo": clean,
                          "ViewLayer.Denoising Normal": normal,
                          "ViewLayer.Denoising Depth": depth, "ViewLayer.Position": position},
                   half={"ViewLayer.Combined": True, "ViewLayer.Denoising Albedo": True})
    return path


@pytest.mark.parametrize("source", ["synthetic", "render"])
@pytest.mark.parametrize("filter_type", ["RT", "ATrous"])
def test_parity_with_command_line_tool(np, tmp_path, filter_type, source):
    """The module and `lull denoise` give identical output on the same file."""
    tool = _cli()
    src = (_synthetic_render(np, tmp_path / "in.exr") if source == "synthetic"
           else render_path("cornell", "spp16"))
    out = tmp_path / "cli.exr"
    proc = subprocess.run([str(tool), "denoise", str(src), "-o", str(out), "--filter",
                           filter_type, "--device", "cpu", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    by_cli = lull.read_exr(out)
    key = "ViewLayer.Denoised"
    assert key in by_cli, sorted(by_cli)
    passes = lull.read_exr(src)
    accepted = lull.filter_images(filter_type)
    images = {name: passes[f"ViewLayer.{p}"] for name, p in
              (("albedo", "Denoising Albedo"), ("normal", "Denoising Normal"),
               ("depth", "Denoising Depth"), ("position", "Position"))
              if name in accepted}
    by_module = lull.denoise(passes["ViewLayer.Combined"], filter=filter_type, device="cpu",
                             **images)
    if by_cli.half[key]:
        by_module = by_module.astype(np.float16).astype(np.float32)
    assert by_cli[key].shape == by_module.shape
    assert np.array_equal(by_cli[key], by_module)
