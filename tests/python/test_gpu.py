"""The module on a CUDA device (ctest label gpu): images reach the GPU
through device buffers (the device cannot read host memory in place), and
the results equal the CPU device's within the backends' tolerance."""

import pytest

import lull

pytestmark = pytest.mark.skipif(
    not any(d["type"] == "cuda" for d in lull.physical_devices()),
    reason="no CUDA device")


@pytest.fixture(scope="module")
def cuda():
    return lull.Device("cuda")


@pytest.mark.parametrize("filter_type", ["RT", "ATrous", "Gaussian"])
def test_cuda_equals_cpu(np, noisy, cuda, filter_type):
    images = {} if filter_type == "Gaussian" else {"albedo": noisy["albedo"],
                                                   "normal": noisy["normal"]}
    on_cpu = lull.denoise(noisy["color"], filter=filter_type, device="cpu", **images)
    on_gpu = lull.denoise(noisy["color"], filter=filter_type, device=cuda, **images)
    assert np.allclose(on_gpu, on_cpu, rtol=1e-4, atol=1e-5)


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
