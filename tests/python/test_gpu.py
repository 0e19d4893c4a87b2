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


def test_cuda_progress_or_not(np, noisy, cuda):
    """Without a progress callback the library launches a run as one cached
    graph; with one it launches level by level and reports: same bits."""
    plain = lull.denoise(noisy["color"], filter="ATrous", device=cuda)
    reports = []
    reported = lull.denoise(noisy["color"], filter="ATrous", device=cuda, progress=reports.append)
    assert np.array_equal(plain, reported)
    assert reports and reports[-1] == 1.0


def test_cuda_cancel(np, noisy, cuda):
    with pytest.raises(lull.Error) as info:
        lull.denoise(noisy["color"], filter="ATrous", device=cuda, progress=lambda d: False)
    assert info.value.code == lull.ERROR_CANCELLED


# -- arrays in GPU memory (__cuda_array_interface__) ---------------------------


class _Oidn:
    """lull's C library through ctypes: device memory for the tests below,
    where neither CuPy nor PyTorch is installed.  (The module links its own
    copy of lull; both use the GPU's primary context, so pointers are
    valid in either.)"""

    def __init__(self):
        import ctypes

        from conftest import build_dir

        lib = ctypes.CDLL(str(build_dir() / "lib" / "liblull.so"))
        lib.oidnNewDevice.restype = ctypes.c_void_p
        lib.oidnNewDevice.argtypes = [ctypes.c_int]
        for name in ("oidnCommitDevice", "oidnReleaseDevice", "oidnReleaseBuffer"):
            getattr(lib, name).argtypes = [ctypes.c_void_p]
        lib.oidnNewBufferWithStorage.restype = ctypes.c_void_p
        lib.oidnNewBufferWithStorage.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lib.oidnGetBufferData.restype = ctypes.c_void_p
        lib.oidnGetBufferData.argtypes = [ctypes.c_void_p]
        for name in ("oidnWriteBuffer", "oidnReadBuffer"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                           ctypes.c_void_p]
        self.lib = lib
        self.device = lib.oidnNewDevice(3)  # OIDN_DEVICE_TYPE_CUDA
        lib.oidnCommitDevice(self.device)


class DeviceArray:
    """An (H, W, C) float array in device memory (OIDN_STORAGE_DEVICE),
    shown through __cuda_array_interface__ v3 as CuPy shows its arrays."""

    def __init__(self, oidn, host, row_padding=0, stream=None, readonly=False):
        import numpy

        self.oidn = oidn
        self.dtype = host.dtype
        h, w, c = host.shape
        pixel = c * host.itemsize
        row = w * pixel + row_padding
        self.nbytes = h * row
        self.buffer = oidn.lib.oidnNewBufferWithStorage(oidn.device, self.nbytes, 2)
        assert self.buffer
        staged = numpy.zeros(self.nbytes, numpy.uint8)
        for y in range(h):
            staged[y * row:y * row + w * pixel] = numpy.frombuffer(host[y].tobytes(), numpy.uint8)
        oidn.lib.oidnWriteBuffer(self.buffer, 0, self.nbytes, staged.ctypes.data)
        self.shape, self.row = host.shape, row
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str, "version": 3,
            "data": (oidn.lib.oidnGetBufferData(self.buffer), readonly),
            "strides": None if row_padding == 0 else (row, pixel, host.itemsize),
            "stream": stream}

    def get(self):
        import numpy

        staged = numpy.zeros(self.nbytes, numpy.uint8)
        self.oidn.lib.oidnReadBuffer(self.buffer, 0, self.nbytes, staged.ctypes.data)
        h, w, c = self.shape
        rows = staged.reshape(h, self.row)[:, :w * c * self.dtype.itemsize]
        return numpy.ascontiguousarray(rows).view(self.dtype).reshape(self.shape)

    def __del__(self):
        self.oidn.lib.oidnReleaseBuffer(self.buffer)


@pytest.fixture(scope="module")
def oidn():
    o = _Oidn()
    yield o
    o.lib.oidnReleaseDevice(o.device)


def test_cuda_arrays_in_place(np, noisy, cuda, oidn):
    """GPU arrays are read and written where they are: the result equals the
    one from host arrays, with padded rows, with the producer's stream
    (legacy and per-thread default), in place, and as float16."""
    images = {"albedo": noisy["albedo"], "normal": noisy["normal"]}
    expected = lull.denoise(noisy["color"], device=cuda, **images)
    gpu = {k: DeviceArray(oidn, v) for k, v in images.items()}
    color = DeviceArray(oidn, noisy["color"])
    out = DeviceArray(oidn, np.zeros_like(noisy["color"]))
    assert lull.denoise(color, device=cuda, out=out, **gpu) is out
    assert np.array_equal(out.get(), expected)
    # without `out`: the result comes back as a NumPy array
    assert np.array_equal(lull.denoise(color, device=cuda, **gpu), expected)
    for stream in (1, 2):
        padded = DeviceArray(oidn, noisy["color"], row_padding=48, stream=stream)
        out = DeviceArray(oidn, np.zeros_like(noisy["color"]), row_padding=16)
        lull.denoise(padded, device=cuda, out=out, **gpu)
        assert np.array_equal(out.get(), expected)
    work = DeviceArray(oidn, noisy["color"])
    lull.denoise(work, device=cuda, out=work, **gpu)
    assert np.array_equal(work.get(), expected)
    half = DeviceArray(oidn, noisy["color"].astype(np.float16))
    expected_half = lull.denoise(noisy["color"].astype(np.float16), device=cuda)
    assert np.array_equal(lull.denoise(half, device=cuda), expected_half)


class PoolArray:
    """An array in stream-ordered memory (cuMemAllocAsync on the legacy
    default stream, as CuPy's MemoryAsyncPool allocates), exported with
    stream 1: such memory has no context of its own, so the wait must
    find the device's."""

    def __init__(self, host):
        import ctypes

        cu = self.cu = ctypes.CDLL("libcuda.so.1")
        self.ctx, device = ctypes.c_void_p(), ctypes.c_int()
        assert cu.cuDeviceGet(ctypes.byref(device), 0) == 0
        self.device = device
        assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), device) == 0
        self.ptr = ctypes.c_uint64()
        with self._current():
            assert cu.cuMemAllocAsync(ctypes.byref(self.ptr), ctypes.c_size_t(host.nbytes),
                                      ctypes.c_void_p(1)) == 0
            assert cu.cuMemcpyHtoD_v2(self.ptr, ctypes.c_void_p(host.ctypes.data),
                                      ctypes.c_size_t(host.nbytes)) == 0
        self.shape, self.dtype, self.nbytes = host.shape, host.dtype, host.nbytes
        self.__cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str,
                                         "data": (self.ptr.value, False), "version": 3,
                                         "strides": None, "stream": 1}

    def _current(self):
        import contextlib
        import ctypes

        @contextlib.contextmanager
        def pushed():
            assert self.cu.cuCtxPushCurrent_v2(self.ctx) == 0
            try:
                yield
            finally:
                self.cu.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
        return pushed()

    def get(self, np):
        import ctypes

        out = np.empty(self.shape, self.dtype)
        with self._current():
            assert self.cu.cuMemcpyDtoH_v2(ctypes.c_void_p(out.ctypes.data), self.ptr,
                                           ctypes.c_size_t(self.nbytes)) == 0
        return out

    def free(self):
        import ctypes

        with self._current():
            self.cu.cuMemFreeAsync(self.ptr, ctypes.c_void_p(1))
            self.cu.cuStreamSynchronize(ctypes.c_void_p(1))
        self.cu.cuDevicePrimaryCtxRelease_v2(self.device)


def test_cuda_arrays_from_a_stream_ordered_pool(np, noisy, cuda):
    expected = lull.denoise(noisy["color"], device=cuda, filter="ATrous")
    color = PoolArray(noisy["color"])
    out = PoolArray(np.zeros_like(noisy["color"]))
    try:
        lull.denoise(color, device=cuda, filter="ATrous", out=out)
        assert np.array_equal(out.get(np), expected)
    finally:
        color.free()
        out.free()


def test_cuda_array_stream_is_read_at_every_execution(np, noisy, cuda, oidn):
    color = DeviceArray(oidn, noisy["color"])
    with cuda.new_filter("ATrous") as f:
        f.set_image("color", color)
        f.set_image("output", DeviceArray(oidn, np.zeros_like(noisy["color"])))
        f.execute()
        color.__cuda_array_interface__["stream"] = 0  # not allowed: the call must notice
        with pytest.raises(ValueError, match="stream 0"):
            f.execute()
        color.__cuda_array_interface__["stream"] = 2
        f.execute()


def test_cuda_arrays_errors(np, noisy, cuda, oidn):
    color = DeviceArray(oidn, noisy["color"])
    with pytest.raises(ValueError, match="'output'.*read-only"):
        lull.denoise(color, device=cuda, out=DeviceArray(oidn, noisy["color"], readonly=True))
    with pytest.raises(ValueError, match="'albedo'.*same size"):
        lull.denoise(color, DeviceArray(oidn, noisy["albedo"][:-1]), device=cuda)
    # a host pointer posing as device memory: the library's check, not a
    # crash (pageable memory is reachable only with HMM/ATS)
    if cuda.get("systemMemorySupported"):
        return
    host = noisy["color"].copy()
    fake = DeviceArray(oidn, noisy["color"])
    fake.__cuda_array_interface__ = dict(fake.__cuda_array_interface__,
                                         data=(host.ctypes.data, False))
    with pytest.raises(lull.Error) as info:
        lull.denoise(fake, device=cuda)
    assert "accessible" in info.value.message
