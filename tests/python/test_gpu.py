"""The module on a CUDA device (ctest label gpu): images reach the GPU
through device buffers (the device cannot read host memory in place) in
any layout and dtype, and come back intact."""

import pytest

import lull

pytestmark = pytest.mark.skipif(
    not any(d["type"] == "cuda" for d in lull.physical_devices()),
    reason="no CUDA device")


@pytest.fixture(scope="module")
def cuda():
    return lull.Device("cuda")


def test_cuda_gaussian_equals_cpu(np, noisy, cuda):
    """Pixels travel to the GPU and back intact: a filter simple enough to
    compute the same on both backends gives the same image."""
    on_cpu = lull.denoise(noisy["color"], filter="Gaussian", device="cpu", sigma=2.0)
    on_gpu = lull.denoise(noisy["color"], filter="Gaussian", device=cuda, sigma=2.0)
    assert np.allclose(on_gpu, on_cpu, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("filter_type", ["RT", "ATrous"])
def test_cuda_denoises(np, noisy, cuda, filter_type):
    """Agreement of the CUDA kernels with the CPU filter is tests/gpu's
    subject; here: every guide reaches the GPU and the result is a denoised
    image."""
    images = {"albedo": noisy["albedo"], "normal": noisy["normal"]}
    on_gpu = lull.denoise(noisy["color"], filter=filter_type, device=cuda, **images)
    assert np.isfinite(on_gpu).all()
    err_in = np.mean((noisy["color"] - noisy["clean"]) ** 2)
    assert np.mean((on_gpu - noisy["clean"]) ** 2) < 0.25 * err_in
    without_guides = lull.denoise(noisy["color"], filter="ATrous", device=cuda)
    assert not np.array_equal(on_gpu, without_guides)


def test_cuda_layouts_dtypes_in_place(np, noisy, cuda):
    color = noisy["color"]
    expected = lull.denoise(np.ascontiguousarray(color[::-1, ::2]), filter="ATrous", device=cuda)
    assert np.array_equal(lull.denoise(color[::-1, ::2], filter="ATrous", device=cuda), expected)
    h, w, _ = color.shape
    big = np.full((h, w // 2, 4), -3.0, np.float32)
    lull.denoise(color[::-1, ::2], filter="ATrous", device=cuda, out=big[..., :3])
    assert np.array_equal(big[..., :3], expected) and (big[..., 3] == -3.0).all()
    half = lull.denoise(color.astype(np.float16), filter="ATrous", device=cuda)
    assert half.dtype == np.float16 and np.isfinite(half).all()
    work = color.copy()
    lull.denoise(work, filter="ATrous", device=cuda, out=work)
    assert np.allclose(work, lull.denoise(color, filter="ATrous", device=cuda), atol=1e-6)


def test_cuda_cancel(np, noisy, cuda):
    with pytest.raises(lull.Error) as info:
        lull.denoise(noisy["color"], filter="ATrous", device=cuda, progress=lambda d: False)
    assert info.value.code == lull.ERROR_CANCELLED
