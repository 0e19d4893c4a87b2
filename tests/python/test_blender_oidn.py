"""Blender's own denoisers through lull, in real Blender (bpy from PyPI,
headless): Cycles' denoiser OpenImageDenoise and the compositor's Denoise
node, once with the OIDN the bpy wheel ships and once started through
`lull run` (the CLI puts lull's libOpenImageDenoise.so.2 first on the
library path; `lull blender` does the same for the Blender program).

With lull the render's denoised Combined pass is lull's RT on exactly the
noisy colour, albedo and normal Cycles handed over (its Denoising Data
passes of the same render), with Cycles' settings (prefilter Accurate:
albedo and normal prefiltered in place by RT, then cleanAux; quality
HIGH; HDR), and the compositor's output is RT on the same passes (prefilter
None).  Equal up to float rounding (1e-5 relative on 98% of the values,
1e-3 on all: the passes pass through an EXR, Cycles scales the colour it
hands over on its own, and that rounding can flip one of Regression's
thresholds on a pixel).  Both
denoisers' results are clean against a 512-spp render."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, build_dir

pytestmark = pytest.mark.skipif(importlib.util.find_spec("bpy") is None,
                                reason="bpy is not installed (sh examples/bootstrap.sh --tests)")

SCRIPT = ROOT / "tests" / "python" / "blender_oidn.py"


def blender_env(tmp):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OIDN_") and k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH")}
    user = tmp / "user"  # Blender's user folders: never the real ones
    env.update(BLENDER_USER_RESOURCES=str(user), BLENDER_USER_CONFIG=str(user / "config"),
               BLENDER_USER_SCRIPTS=str(user / "scripts"),
               BLENDER_USER_EXTENSIONS=str(user / "extensions"),
               BLENDER_USER_DATAFILES=str(user / "datafiles"))
    return env


def render(tmp, mode, through_lull):
    out, result = tmp / f"{mode}_{through_lull}.exr", tmp / f"{mode}_{through_lull}.json"
    command = [sys.executable, str(SCRIPT), mode, str(out), str(result), str(ROOT / "addon")]
    if through_lull:
        tool = build_dir() / "bin" / "lull"
        if not tool.exists():
            pytest.skip(f"{tool} is not built (LULL_TOOLS)")
        command = [str(tool), "run", *command]
    proc = subprocess.run(command, env=blender_env(tmp), cwd=tmp, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0 or not result.exists():
        pytest.fail(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                    f"{proc.stderr[-3000:]}")
    return out, json.loads(result.read_text())


@pytest.fixture(scope="module")
def renders(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("blender_oidn")
    return {"reference": render(tmp, "reference", False),
            "oidn": render(tmp, "denoise", False),
            "lull": render(tmp, "denoise", True)}


def passes(path, np):
    import lull

    found = lull.read_exr(str(path))
    return {name: np.ascontiguousarray(np.asarray(array)[..., :3], dtype=np.float32)
            for name, array in found.items()}


def rt(np, images, **params):
    """lull's RT on the CPU device, images by name."""
    import lull

    out = np.empty_like(next(iter(images.values())))
    with lull.Device("cpu").new_filter("RT") as f:
        for name, array in images.items():
            f.set_image(name, array)
        f.set_image("output", out)
        for name, value in params.items():
            f[name] = value
        f.execute()
    return out


def rel_mse(np, x, ref):
    x, ref = x.astype(np.float64), ref.astype(np.float64)
    return float(np.mean((x - ref) ** 2 / (ref ** 2 + 1e-2)))


def test_each_run_loads_the_library_it_should(renders):
    lull_lib = os.path.realpath(build_dir() / "lib" / "libOpenImageDenoise.so.2")
    mapped = renders["lull"][1]["mapped"]
    assert mapped == [lull_lib], mapped  # and none of Intel's parts
    oidn = renders["oidn"][1]["mapped"]
    assert lull_lib not in oidn and any(os.path.basename(p) == "libOpenImageDenoise.so.2"
                                        for p in oidn), oidn


def test_addon_says_which_oidn_cycles_uses(renders):
    with_lull, without = renders["lull"][1]["addon"], renders["oidn"][1]["addon"]
    assert with_lull["lull"] and with_lull["text"].startswith("Cycles' OpenImageDenoise is lull")
    assert with_lull["path"] == os.path.realpath(build_dir() / "lib" / "libOpenImageDenoise.so.2")
    assert not without["lull"] and "Intel" in without["text"]


def assert_rt_result(np, result, expected):
    """RT HIGH is Regression, whose single-pixel weights and firefly test
    are thresholds: float rounding of the passes on their way (Cycles
    scales the colour it hands over; the compositor's buffers) can move a
    pixel across one, which moves its neighbours' results a little.  Nearly
    all values agree to float rounding, all to 1e-3."""
    close = np.isclose(result, expected, rtol=1e-5, atol=1e-6)
    assert close.mean() > 0.98, close.mean()
    np.testing.assert_allclose(result, expected, rtol=1e-3, atol=1e-5)


def test_cycles_denoiser_is_lulls_rt_on_the_passes_cycles_handed_over(renders, np):
    p = passes(renders["lull"][0], np)
    noisy = p["ViewLayer.Noisy Image"]
    albedo = rt(np, {"albedo": p["ViewLayer.Denoising Albedo"]}, quality=6)
    normal = rt(np, {"normal": p["ViewLayer.Denoising Normal"]}, quality=6)
    expected = rt(np, {"color": noisy, "albedo": albedo, "normal": normal},
                  hdr=True, srgb=False, quality=6, cleanAux=True)
    assert_rt_result(np, p["ViewLayer.Combined"], expected)
    # not Intel's: the other run's result, from the same noisy passes, differs
    q = passes(renders["oidn"][0], np)
    np.testing.assert_array_equal(q["ViewLayer.Noisy Image"], noisy)  # same seed, same render
    assert np.abs(q["ViewLayer.Combined"] - p["ViewLayer.Combined"]).max() > 1e-3


def test_compositor_denoise_node_is_lulls_rt(renders, np):
    p = passes(renders["lull"][0], np)
    expected = rt(np, {"color": p["ViewLayer.Noisy Image"],
                       "albedo": p["ViewLayer.Denoising Albedo"],
                       "normal": p["ViewLayer.Denoising Normal"]},
                  hdr=True, quality=6, cleanAux=True)
    assert_rt_result(np, p["Composite.Combined"], expected)


def test_both_are_clean(renders, np):
    ref = passes(renders["reference"][0], np)["ViewLayer.Combined"]
    errors = {}
    for name in ("oidn", "lull"):
        p = passes(renders[name][0], np)
        errors[name] = {key: rel_mse(np, p[f"ViewLayer.{key}"], ref)
                        for key in ("Noisy Image", "Combined")}
        errors[name]["Composite"] = rel_mse(np, p["Composite.Combined"], ref)
    print(errors)
    for name, e in errors.items():
        assert e["Combined"] < 0.1 * e["Noisy Image"], (name, e)
        assert e["Composite"] < 0.1 * e["Noisy Image"], (name, e)
