"""Two halves of a render in the Python module: lull.denoise(colorA=, colorB=,
albedoA=, ...), the filter chosen for them, errors as exceptions, and the
same result as the command-line tool's --half-b on the same passes."""

import os
import subprocess

import pytest

import lull
from conftest import DATA, build_dir


def _needs(filter_type):
    if filter_type not in lull.filter_types():
        pytest.skip("this build of lull has no %s filter" % filter_type)


@pytest.fixture
def halves(np, rng):
    """Two halves of a small render: one clean image, two independent noises."""
    h, w = 24, 32
    clean = np.zeros((h, w, 3), np.float32)
    clean[:, : w // 2] = (0.8, 0.3, 0.2)
    clean[:, w // 2 :] = (0.1, 0.4, 0.9)
    clean[h // 3 : 2 * h // 3, w // 4 : 3 * w // 4] = (0.5, 0.5, 0.5)
    clean *= np.linspace(0.4, 1.0, h, dtype=np.float32)[:, None, None]  # smooth shading
    a, b = (np.clip(clean + rng.normal(0, 0.15, clean.shape), 0, None).astype(np.float32)
            for _ in range(2))
    albedo = np.where(clean > 0, clean / clean.max(), 0).astype(np.float32)
    normal = np.zeros((h, w, 3), np.float32)
    normal[..., 2] = 1
    return {"colorA": a, "colorB": b, "albedo": albedo, "normal": normal, "clean": clean}


def _rel_mse(np, image, reference):
    return float(np.mean((image - reference) ** 2 / (reference ** 2 + 1e-2)))


def test_halves_pick_regression_and_remove_noise(np, halves):
    _needs("Regression")
    a, b, clean = halves["colorA"], halves["colorB"], halves["clean"]
    result = lull.denoise(colorA=a, colorB=b, albedo=halves["albedo"], normal=halves["normal"])
    assert result.shape == a.shape and result.dtype == np.float32
    assert np.isfinite(result).all()
    named = lull.denoise(colorA=a, colorB=b, albedo=halves["albedo"], normal=halves["normal"],
                         filter="Regression")
    assert np.array_equal(result, named)  # the default for halves
    noisy = _rel_mse(np, (a + b) / 2, clean)
    assert _rel_mse(np, result, clean) < 0.5 * noisy


def test_halves_equal_the_object_api(np, halves):
    _needs("Regression")
    a, b = halves["colorA"], halves["colorB"]
    out = np.empty_like(a)
    with lull.Device("cpu") as device, device.new_filter("Regression") as f:
        f.set_image("colorA", a)
        f.set_image("colorB", b)
        f.set_image("albedoA", halves["albedo"])
        f.set_image("albedoB", halves["albedo"])
        f.set_image("output", out)
        f["hdr"] = True
        f.execute()
    # albedoA and albedoB are images, taken by name
    result = lull.denoise(colorA=a, colorB=b, albedoA=halves["albedo"], albedoB=halves["albedo"],
                          device="cpu")
    assert np.array_equal(result, out)
    # a guide given once serves both halves when others come in halves
    once = lull.denoise(colorA=a, colorB=b, albedo=halves["albedo"],
                        normalA=halves["normal"], normalB=halves["normal"])
    both = lull.denoise(colorA=a, colorB=b, albedoA=halves["albedo"], albedoB=halves["albedo"],
                        normalA=halves["normal"], normalB=halves["normal"])
    assert np.array_equal(once, both)


def test_halves_errors_are_exceptions(np, halves):
    a, b = halves["colorA"], halves["colorB"]
    with pytest.raises(ValueError, match="colorA needs colorB"):
        lull.denoise(colorA=a)
    with pytest.raises(ValueError, match="colorB needs colorA"):
        lull.denoise(colorB=b)
    with pytest.raises(ValueError, match="not both"):
        lull.denoise(a, colorA=a, colorB=b)
    with pytest.raises(TypeError, match="needs color"):
        lull.denoise()
    with pytest.raises(ValueError, match="'colorB' is 12 x 32 .* but image 'colorA' is 24 x 32"):
        lull.denoise(colorA=a, colorB=b[:12])
    with pytest.raises(ValueError, match="albedoA needs albedoB"):
        lull.denoise(colorA=a, colorB=b, albedoA=halves["albedo"])
    with pytest.raises(ValueError, match="filter ATrous takes no halves"):
        lull.denoise(colorA=a, colorB=b, filter="ATrous")
    if "colorA" in lull.filter_images("RT") and "albedoA" not in lull.filter_images("RT"):
        with pytest.raises(ValueError, match="filter RT takes albedo once"):
            lull.denoise(colorA=a, colorB=b, albedoA=halves["albedo"], albedoB=halves["albedo"],
                         filter="RT")
    with pytest.raises(lull.Error, match="not available"):
        lull.denoise(colorA=a, colorB=b, filter="NoSuchFilter")
    _needs("Regression")
    with pytest.raises(ValueError, match="but image 'albedo' is 12 x 32"):
        lull.denoise(colorA=a, colorB=b, albedo=halves["albedo"][:12])
    # the library's own checks reach Python as lull.Error
    with pytest.raises(lull.Error) as info:
        lull.denoise(colorA=a, colorB=b, hdr=True, srgb=True)
    assert info.value.code == lull.ERROR_INVALID_OPERATION


def test_cli_halves_agree_with_the_module(np, tmp_path):
    """`lull denoise A --half-b B` passes each guide's halves as the module
    does (a crop of the cornell test render's 16-spp halves)."""
    _needs("Regression")
    if not lull.HAVE_IMAGE_IO:
        pytest.skip("lull was built without image I/O")
    tool = build_dir() / "bin" / "lull"
    if not tool.exists():
        pytest.skip("the command-line tool was not built")
    files = [DATA / "cornell" / ("cornell_spp16_%s.exr" % h) for h in "AB"]
    if not all(f.exists() for f in files):
        pytest.skip("the cornell halves are not in tests/data")
    crop = (slice(96, 128), slice(112, 152))  # 32 x 40 pixels around an edge
    passes = []
    for h, path in zip("AB", files):
        full = lull.read_exr(path)
        part = {k: np.ascontiguousarray(v[crop]) for k, v in full.items()}
        lull.write_exr(tmp_path / ("%s.exr" % h), part,
                       channel_names=full.channel_names, half=False)
        passes.append(part)
    out = tmp_path / "out.exr"
    run = subprocess.run([str(tool), "denoise", str(tmp_path / "A.exr"), "--half-b",
                          str(tmp_path / "B.exr"), "-o", str(out), "-d", "cpu"],
                         capture_output=True, text=True,
                         env=dict(os.environ, OIDN_DEFAULT_DEVICE="cpu"))
    assert run.returncode == 0, run.stderr
    assert "colorA, colorB, albedo (halves), normal (halves), depth (halves)" in run.stderr
    cli = lull.read_exr(out)["ViewLayer.Denoised"][..., :3]
    a, b = passes
    module = lull.denoise(
        colorA=np.ascontiguousarray(a["ViewLayer.Combined"][..., :3]),
        colorB=np.ascontiguousarray(b["ViewLayer.Combined"][..., :3]),
        albedoA=a["ViewLayer.Denoising Albedo"], albedoB=b["ViewLayer.Denoising Albedo"],
        normalA=a["ViewLayer.Denoising Normal"], normalB=b["ViewLayer.Denoising Normal"],
        depthA=a["ViewLayer.Denoising Depth"], depthB=b["ViewLayer.Denoising Depth"],
        device="cpu")
    assert np.array_equal(cli, module)


def test_rdfc_takes_the_halves_or_a_variance(np, halves):
    """RDFC through lull.denoise: the halves' noise is removed; one buffer
    needs its variance (an exception without it), and with it the result
    is finite and less noisy too."""
    _needs("RDFC")
    a, b, clean = halves["colorA"], halves["colorB"], halves["clean"]
    guides = {"albedo": halves["albedo"], "normal": halves["normal"]}
    result = lull.denoise(filter="RDFC", colorA=a, colorB=b, radius=5, **guides)
    assert result.shape == a.shape and np.isfinite(result).all()
    noisy = _rel_mse(np, (a + b) / 2, clean)
    assert _rel_mse(np, result, clean) < 0.5 * noisy
    mean = (a + b) / 2
    with pytest.raises(lull.Error, match="variance"):
        lull.denoise(filter="RDFC", color=mean, **guides)
    variance = np.full_like(mean, 0.15 ** 2 / 2)
    one = lull.denoise(filter="RDFC", color=mean, variance=variance, radius=5, **guides)
    assert np.isfinite(one).all()
    assert _rel_mse(np, one, clean) < 0.5 * noisy


def test_ddid_takes_the_halves_or_a_variance(np, halves):
    """DDID through lull.denoise: the halves' noise is removed; one buffer
    needs its variance (an exception without it), and with it the result
    is finite and less noisy too."""
    _needs("DDID")
    a, b, clean = halves["colorA"], halves["colorB"], halves["clean"]
    guides = {"albedo": halves["albedo"], "normal": halves["normal"]}
    result = lull.denoise(filter="DDID", colorA=a, colorB=b, spatialSigma=3.0, **guides)
    assert result.shape == a.shape and np.isfinite(result).all()
    noisy = _rel_mse(np, (a + b) / 2, clean)
    assert _rel_mse(np, result, clean) < 0.5 * noisy
    mean = (a + b) / 2
    with pytest.raises(lull.Error, match="variance"):
        lull.denoise(filter="DDID", color=mean, **guides)
    variance = np.full_like(mean, 0.15 ** 2 / 2)
    one = lull.denoise(filter="DDID", color=mean, variance=variance, spatialSigma=3.0, **guides)
    assert np.isfinite(one).all()
    assert _rel_mse(np, one, clean) < 0.5 * noisy
