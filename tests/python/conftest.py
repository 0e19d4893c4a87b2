"""Shared fixtures of lull's Python tests.

The tests import `lull` from the build tree (ctest sets PYTHONPATH to
<build>/python and LULL_BUILD_DIR to <build>); run by hand with

    PYTHONPATH=build/python .venv/bin/python -m pytest tests/python
"""

import os
import pathlib

import pytest

# lull.denoise(device=None) uses the default device, CUDA when a GPU is
# usable; these tests compare against CPU results, so the default is the
# CPU here (test_gpu.py names the CUDA device explicitly).
os.environ["OIDN_DEFAULT_DEVICE"] = "cpu"

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def build_dir():
    """The CMake build tree whose `lull` is under test."""
    env = os.environ.get("LULL_BUILD_DIR")
    if env:
        return pathlib.Path(env)
    import lull

    # <build>/python/lull/__init__.py
    return pathlib.Path(lull.__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def np():
    return pytest.importorskip("numpy")


@pytest.fixture
def rng(np):
    return np.random.default_rng(1234)


@pytest.fixture
def noisy(np, rng):
    """A small piecewise-constant image with noise, plus guides."""
    h, w = 48, 64
    clean = np.zeros((h, w, 3), np.float32)
    clean[:, : w // 2] = (0.8, 0.3, 0.2)
    clean[:, w // 2 :] = (0.1, 0.4, 0.9)
    clean[h // 3 : 2 * h // 3, w // 4 : 3 * w // 4] = (0.5, 0.5, 0.5)
    color = (clean + rng.normal(0, 0.15, clean.shape)).astype(np.float32)
    albedo = clean.copy()
    normal = np.zeros((h, w, 3), np.float32)
    normal[..., 2] = 1
    return {"color": color, "albedo": albedo, "normal": normal, "clean": clean}


def render_path(scene, spp):
    """Path of a Blender test render, or skip when it is not there."""
    path = DATA / scene / f"{scene}_{spp}.exr"
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path
