"""The Python module `lull`: objects, arrays of any layout, errors, the GIL,
cancellation and leaks."""

import array
import gc
import os
import signal
import sys
import threading
import time
import tracemalloc

import pytest

import lull

# -- introspection ---------------------------------------------------------------


def test_version_and_introspection():
    assert isinstance(lull.__version__, str) and lull.__version__.count(".") == 2
    types = lull.filter_types()
    assert {"RT", "RTLightmap", "ATrous", "Gaussian"} <= set(types)
    params = {p["name"]: p for p in lull.filter_params("ATrous")}
    assert params["iterations"]["type"] == "int" and params["iterations"]["default"] == 5
    assert params["demodulate"]["type"] == "bool"
    assert params["sigmaLuminance"]["type"] == "float"
    assert params["tileOverlap"]["read_only"] is True
    assert params["inputScale"]["default"] is None  # automatic
    assert lull.filter_images("RT")[:2] == ["color", "output"]
    with pytest.raises(ValueError, match="unknown filter type"):
        lull.filter_params("NoSuchFilter")
    devices = lull.physical_devices()
    assert any(d["type"] == "cpu" for d in devices)
    assert [d["id"] for d in devices] == list(range(len(devices)))


def test_parameters_are_typed(np, noisy):
    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        f["iterations"] = 3
        assert f["iterations"] == 3 and f.get("iterations") == 3
        f.set("demodulate", False)
        assert f["demodulate"] is False
        f["sigmaLuminance"] = 2  # ints are fine for floats
        assert f["sigmaLuminance"] == 2.0
        assert f["inputScale"] is None  # automatic by default, as filter_params lists it
        f["inputScale"] = 2.0
        assert f["inputScale"] == 2.0
        f["inputScale"] = None  # automatic again
        assert f["inputScale"] is None
        with pytest.raises(TypeError, match="iterations"):
            f["iterations"] = 2.5
        with pytest.raises(TypeError, match="demodulate"):
            f["demodulate"] = "yes"
        with pytest.raises(ValueError, match="out of range"):
            f["iterations"] = 0
        with pytest.raises(ValueError, match="out of range"):
            f["sigmaLuminance"] = -1.0
        # the listed minimum, and what reading it back gives (a float), are
        # valid (9.99999997e-07 was refused)
        f["sigmaLuminance"] = 1e-6
        f["sigmaLuminance"] = f["sigmaLuminance"]
        f["sigmaLuminance"] = np.float32(1e-6)
        with pytest.raises(ValueError, match="out of range"):
            f["sigmaLuminance"] = 5e-7
        with pytest.raises(ValueError, match="read-only"):
            f["tileOverlap"] = 1
        with pytest.raises(KeyError, match="nope"):
            f["nope"] = 1
        with pytest.raises(KeyError, match="nope"):
            f["nope"]
        # tileOverlap is computed by the commit from iterations
        f.set_image("color", noisy["color"])
        f.set_image("output", noisy["color"].copy())
        f.commit()
        assert f["tileOverlap"] > 0 and f["tileOverlap"] % 16 == 0


# -- results -------------------------------------------------------------------------


def run_atrous(np, color, out=None, **images):
    out = np.zeros(color.shape, np.float32) if out is None else out
    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        f.set_image("color", color)
        for name, image in images.items():
            f.set_image(name, image)
        f.set_image("output", out)
        f.execute()
    return out


def test_object_api_equals_one_call(np, noisy):
    by_objects = run_atrous(np, noisy["color"], albedo=noisy["albedo"], normal=noisy["normal"])
    by_call = lull.denoise(noisy["color"], noisy["albedo"], noisy["normal"], filter="ATrous")
    assert by_call.dtype == np.float32 and by_call.shape == noisy["color"].shape
    assert np.array_equal(by_objects, by_call)


def test_denoise_removes_noise(np, noisy):
    out = lull.denoise(noisy["color"], noisy["albedo"], noisy["normal"])
    assert np.isfinite(out).all()
    err_in = np.mean((noisy["color"] - noisy["clean"]) ** 2)
    err_out = np.mean((out - noisy["clean"]) ** 2)
    assert err_out < 0.25 * err_in


def test_grey_albedo_and_two_channel_normal(np, noisy):
    # OIDN 2.1+ reads a 1-channel guide v as (v, v, v) and a 2-channel one
    # (x, y) as (x, y, y); so does lull, from NumPy arrays of those shapes
    grey = np.ascontiguousarray(noisy["albedo"][..., 1])
    xy = np.ascontiguousarray(noisy["normal"][..., :2])
    narrow = lull.denoise(noisy["color"], grey, xy)
    wide = lull.denoise(noisy["color"], np.repeat(grey[..., None], 3, axis=-1),
                        np.concatenate([xy, xy[..., 1:]], axis=-1))
    assert np.array_equal(narrow, wide)
    assert not np.array_equal(narrow, lull.denoise(noisy["color"]))


def test_gaussian_keeps_a_constant_image(np):
    color = np.full((20, 30, 3), 0.25, np.float32)
    out = lull.denoise(color, filter="Gaussian", sigma=3.0)
    assert np.allclose(out, 0.25, atol=1e-6)


@pytest.mark.parametrize(
    "make_view",
    [
        lambda a: a[::-1],                    # negative row stride
        lambda a: a[:, ::-1],                 # negative pixel stride
        lambda a: a[::2, ::3],                # spaced pixels and rows
        lambda a: a.transpose(1, 0, 2),       # row stride < pixel stride
        lambda a: a[..., ::-1],               # negative channel stride
        lambda a: a[:, 5:41],                 # padded rows (in place)
    ],
    ids=["flip-rows", "flip-cols", "spaced", "transposed", "bgr", "padded"],
)
def test_any_strides_read_correctly(np, noisy, make_view):
    view = make_view(noisy["color"])
    expected = run_atrous(np, np.ascontiguousarray(view))
    assert np.array_equal(run_atrous(np, view), expected)


def test_channel_strided_and_read_only_inputs(np, noisy):
    rgba = np.concatenate([noisy["color"], np.ones(noisy["color"].shape[:2] + (1,), np.float32)],
                          axis=2)
    view = rgba[..., :3]  # pixel stride 16 bytes, 3 channels used
    view.flags.writeable = False
    assert np.array_equal(run_atrous(np, view), run_atrous(np, np.ascontiguousarray(view)))
    planar = np.ascontiguousarray(noisy["color"].transpose(2, 0, 1)).transpose(1, 2, 0)
    assert np.array_equal(run_atrous(np, planar), run_atrous(np, noisy["color"]))


def test_strided_output_is_written_exactly(np, noisy):
    expected = run_atrous(np, noisy["color"])
    h, w, _ = noisy["color"].shape
    big = np.full((h, 2 * w, 4), -7.0, np.float32)
    out = big[::-1, ::2, 2::-1]  # reversed rows, every other pixel, BGR
    run_atrous(np, noisy["color"], out=out)
    assert np.array_equal(out, expected)
    untouched = np.ones(big.shape, bool)
    untouched[:, ::2, :3] = False
    assert (big[untouched] == -7.0).all()


def test_in_place(np, noisy):
    expected = run_atrous(np, noisy["color"])
    color = noisy["color"].copy()
    result = lull.denoise(color, filter="ATrous", out=color)
    assert result is color
    assert np.array_equal(color, expected)


def test_float16(np, noisy):
    expected = run_atrous(np, noisy["color"])
    half = noisy["color"].astype(np.float16)
    out = lull.denoise(half, filter="ATrous")
    assert out.dtype == np.float16
    ref = run_atrous(np, half.astype(np.float32))
    assert np.allclose(out.astype(np.float32), ref, rtol=2e-3, atol=2e-3)
    assert np.allclose(ref, expected, atol=2e-2)


def test_single_channel(np, rng):
    gray = rng.random((32, 40), dtype=np.float32)
    out = lull.denoise(gray, filter="Gaussian", sigma=1.0)
    assert out.shape == gray.shape and np.isfinite(out).all()
    assert out.std() < gray.std()


def test_without_numpy_buffers(np, noisy):
    """Plain buffers (array.array through memoryview) work like NumPy arrays,
    and the result is a memoryview when NumPy is not used."""
    h, w, c = noisy["color"].shape
    flat = array.array("f", noisy["color"].ravel().tolist())
    view = memoryview(flat).cast("B").cast("f", (h, w, c))
    out = memoryview(bytearray(4 * h * w * c)).cast("f", (h, w, c))
    lull.denoise(view, filter="ATrous", out=out)
    assert np.array_equal(np.asarray(out), run_atrous(np, noisy["color"]))


# -- errors ----------------------------------------------------------------------------


def test_array_errors_name_the_image(np, noisy):
    color = noisy["color"]
    with pytest.raises(TypeError, match="'color'.*float32 or float16"):
        lull.denoise(color.astype(np.float64))
    with pytest.raises(TypeError, match="'albedo'"):
        lull.denoise(color, albedo=(color * 100).astype(np.int32))
    with pytest.raises(TypeError, match="'color'.*expected an array"):
        lull.denoise([[1.0]])
    with pytest.raises(ValueError, match="'color'.*channels"):
        lull.denoise(np.zeros((8, 8, 5), np.float32))
    with pytest.raises(ValueError, match="'color'.*dimensions"):
        lull.denoise(np.zeros(8, np.float32))
    with pytest.raises(ValueError, match="'color'.*empty"):
        lull.denoise(np.zeros((0, 8, 3), np.float32))
    with pytest.raises(ValueError, match="'albedo'.*same size"):
        lull.denoise(color, albedo=color[:-1])
    read_only = color.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="'output'.*read-only"):
        lull.denoise(color, out=read_only)
    with pytest.raises(ValueError, match="'output'.*overlapping"):
        lull.denoise(color, out=_zero_stride_output(np, color.shape))
    # rows that overlap without a zero stride (each row 12 bytes after the
    # last, a row 3 pixels of 12 bytes long) alias too
    h, w = color.shape[:2]
    base = np.zeros(h * 3 + w * 3 + 8, np.float32)
    rows = np.lib.stride_tricks.as_strided(base, shape=color.shape, strides=(12, 12, 4),
                                           writeable=True)
    with pytest.raises(ValueError, match="'output'.*overlapping"):
        lull.denoise(color, out=rows)
    with pytest.raises(ValueError, match="unknown image 'colour'"):
        with lull.Device("cpu") as device, device.new_filter("RT") as f:
            f.set_image("colour", color)


class FakeCudaArray:
    """An object that says its data is in GPU memory (CUDA Array Interface
    v3); the address is never read: every case below fails before the
    filter would touch it."""

    def __init__(self, shape=(8, 8, 3), typestr="<f4", data=(0x7F0000000000, False), **more):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=data, version=3)
        self.__cuda_array_interface__.update(more)


def test_cuda_arrays_are_checked_and_need_a_cuda_device(np):
    """Arrays in GPU memory (__cuda_array_interface__) are read in place by
    filters on a CUDA device; everything else about them is checked first,
    with the image's name, and a CPU device refuses them plainly."""
    cases = [
        (TypeError, "float32 or float16", dict(typestr="<i4")),
        (TypeError, "big-endian", dict(typestr=">f4")),
        (ValueError, "dimensions", dict(shape=(8,))),
        (ValueError, "channels", dict(shape=(8, 8, 5))),
        (ValueError, "empty", dict(shape=(0, 8, 3))),
        (ValueError, "masked", dict(mask=object())),
        (ValueError, "pointer", dict(data=(0, False))),
        (TypeError, "data must be", dict(data=0x1000)),
        (ValueError, "stream 0", dict(stream=0)),
        (TypeError, "stream must be", dict(stream="s")),
        (ValueError, "contiguous channels", dict(strides=(96, 12, 8))),
        (ValueError, "contiguous channels", dict(strides=(-96, 12, 4))),
        (ValueError, "2 strides for 3", dict(strides=(96, 12))),
        (TypeError, "must be a tuple", dict(shape=[8, 8, 3])),
        # a row of 4 pixels 2^62 bytes apart overflows: not a layout
        (ValueError, "contiguous channels", dict(strides=(0, 2 ** 62, 4))),
        (ValueError, "too large", dict(shape=(8, 2 ** 62, 3))),
    ]
    for error, message, cai in cases:
        with pytest.raises(error, match="'color'.*" + message):
            lull.denoise(FakeCudaArray(**cai), device="cpu")
    color = np.zeros((8, 8, 3), np.float32)
    with pytest.raises(ValueError, match="'output'.*read-only"):
        lull.denoise(color, device="cpu", out=FakeCudaArray(data=(0x7F0000000000, True)))
    with pytest.raises(ValueError, match="'color' is in GPU memory.*CUDA device"):
        lull.denoise(FakeCudaArray(), device="cpu")
    with pytest.raises(ValueError, match="'albedo' is in GPU memory"):
        lull.denoise(color, FakeCudaArray(), device="cpu")
    bad = FakeCudaArray()
    bad.__cuda_array_interface__ = "not a dict"
    with pytest.raises(TypeError, match="'color'.*not a dict"):
        lull.denoise(bad, device="cpu")
    # host-only helpers name GPU memory as the reason
    with pytest.raises(TypeError, match="in GPU memory"):
        lull.metrics(FakeCudaArray(), color)
    # a refused CUDA array is not kept alive by the filter
    cuda_array = FakeCudaArray()
    before = sys.getrefcount(cuda_array)
    with lull.Device("cpu") as device, device.new_filter("RT") as f:
        with pytest.raises(ValueError):
            f.set_image("color", cuda_array)
        assert f.get_image("color") is None
    assert sys.getrefcount(cuda_array) == before


def _zero_stride_output(np, shape):
    base = np.zeros(shape[2], np.float32)
    return np.lib.stride_tricks.as_strided(base, shape=shape, strides=(0, 0, 4))


def test_library_errors_raise_lull_error(np, noisy):
    color = noisy["color"]
    # OIDN's rule: normal without albedo is not supported by RT
    with pytest.raises(lull.Error) as info:
        lull.denoise(color, normal=noisy["normal"])
    assert info.value.code == lull.ERROR_INVALID_OPERATION
    assert "unsupported combination" in str(info.value) and info.value.message
    with pytest.raises(lull.Error) as info:
        lull.denoise(color, hdr=True, srgb=True)
    assert info.value.code == lull.ERROR_INVALID_OPERATION
    with pytest.raises(ValueError, match="unknown filter type"):
        lull.Device("cpu").new_filter("NoSuchFilter")
    with pytest.raises(lull.Error) as info:
        lull.denoise(color, filter="NoSuchFilter")
    assert info.value.code == lull.ERROR_INVALID_ARGUMENT
    with pytest.raises(ValueError, match="unknown device type"):
        lull.Device("gpu")
    with pytest.raises(lull.Error) as info:
        lull.Device(99)
    assert info.value.code == lull.ERROR_INVALID_ARGUMENT
    if not any(d["type"] == "cuda" for d in lull.physical_devices()):
        with pytest.raises(lull.Error) as info:
            lull.Device("cuda")
        assert info.value.code == lull.ERROR_UNSUPPORTED_HARDWARE
    with pytest.raises(TypeError):
        lull.Filter()


def test_lifetimes(np, noisy):
    device = lull.Device("cpu")
    f = device.new_filter("ATrous")
    device.close()
    assert device.closed
    with pytest.raises(ValueError, match="closed"):
        device.new_filter("RT")
    # the filter keeps the underlying device alive
    out = np.zeros_like(noisy["color"])
    f.set_image("color", noisy["color"])
    f.set_image("output", out)
    f.execute()
    assert np.array_equal(out, run_atrous(np, noisy["color"]))
    f.close()
    with pytest.raises(ValueError, match="closed"):
        f.execute()
    with lull.Device() as d:
        assert d.type in ("cpu", "cuda") and not d.closed
        assert d.get("version") >= 20000
    assert d.closed


def test_changing_images_recommits(np, noisy):
    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        out = np.zeros_like(noisy["color"])
        f.set_image("color", noisy["color"])
        f.set_image("output", out)
        f.execute()
        first = out.copy()
        f.set_image("albedo", noisy["albedo"])  # changes the result
        f.execute()
        assert not np.array_equal(first, out)
        f.set_image("albedo", None)
        f.execute()
        assert np.array_equal(first, out)
        # the data is read at execute time, as OIDN's shared images
        noisy["color"][:] = 0.5
        f.execute()
        assert np.allclose(out, 0.5, atol=1e-6)


# -- progress, cancellation, KeyboardInterrupt -------------------------------------------


def test_progress_reports_increasing_fractions(np, noisy):
    seen = []
    lull.denoise(noisy["color"], filter="ATrous", iterations=4, progress=seen.append)
    assert len(seen) >= 5 and seen == sorted(seen)
    assert seen[0] == 0.0 and seen[-1] == 1.0


def test_progress_false_cancels(np, noisy):
    out = np.full_like(noisy["color"], -1.0)
    calls = []

    def stop(done):
        calls.append(done)
        return False

    with pytest.raises(lull.Error) as info:
        lull.denoise(noisy["color"], filter="ATrous", out=out, progress=stop)
    assert info.value.code == lull.ERROR_CANCELLED
    assert calls == [0.0]


def test_progress_numpy_false_cancels(np, noisy):
    with pytest.raises(lull.Error) as info:
        lull.denoise(noisy["color"], filter="ATrous", progress=lambda done: np.float32(done) < 0)
    assert info.value.code == lull.ERROR_CANCELLED


def test_exception_at_the_last_report_leaves_any_layout_alike(np, noisy):
    # the library ignores a cancel at the last report (the run has ended),
    # so its output is written; a strided output, which the module copies
    # back, had kept its old values where a contiguous one was overwritten
    def at_end(done):
        if done >= 1.0:
            raise RuntimeError("at the end")

    color = noisy["color"]
    contiguous = color.copy()
    backing = color[::-1].copy()
    strided = backing[::-1]  # the same values, negative row stride
    for out in (contiguous, strided):
        with pytest.raises(RuntimeError, match="at the end"):
            lull.denoise(out, filter="ATrous", out=out, progress=at_end)
    assert not np.array_equal(contiguous, color)  # denoised in place
    assert np.array_equal(strided, contiguous)


def test_names_with_a_nul_are_refused(np):
    # C would cut them at the NUL: "ATrous\0x" had made an ATrous filter
    with pytest.raises(ValueError, match="NUL"):
        lull.filter_params("RT\0x")
    with lull.Device("cpu") as device:
        with pytest.raises(ValueError, match="NUL"):
            device.new_filter("ATrous\0junk")
        with device.new_filter("ATrous") as f:
            with pytest.raises(ValueError, match="NUL"):
                f["iterations\0junk"] = 3
            with pytest.raises(ValueError, match="NUL"):
                f.get("iterations\0junk")
            assert f["iterations"] != 3


def test_progress_exception_propagates(noisy):
    def boom(done):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        lull.denoise(noisy["color"], filter="ATrous", progress=boom)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signals reach the main thread only")
def test_keyboard_interrupt_cancels(np, rng):
    """SIGINT arriving during execute (GIL released) raises KeyboardInterrupt
    at the next progress step; the filter stays usable."""
    color = rng.random((256, 256, 3), dtype=np.float32)
    seen = []

    def send_sigint(done):
        if not seen:
            threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()
            time.sleep(0.05)
        seen.append(done)

    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        out = np.zeros_like(color)
        f.set_image("color", color)
        f.set_image("output", out)
        f["iterations"] = 8
        f.progress = send_sigint
        with pytest.raises(KeyboardInterrupt):
            f.execute()
        assert len(seen) < 9  # stopped before the last level
        f.progress = None
        f.execute()
        assert np.array_equal(out, lull.denoise(color, filter="ATrous", iterations=8))


def test_keyboard_interrupt_without_callback(np, rng):
    """Ctrl-C with no progress callback: the module's own progress monitor
    checks for signals between levels and cancels; the output is not the
    finished result and the filter stays usable."""
    color = rng.random((1024, 1024, 3), dtype=np.float32)
    with lull.Device("cpu", num_threads=1) as device, device.new_filter("ATrous") as f:
        out = np.full_like(color, -1.0)
        f.set_image("color", color)
        f.set_image("output", out)
        f["iterations"] = 10
        start = time.perf_counter()
        f.execute()  # uninterrupted: the result, and how long a run takes here
        full = out.copy()
        seconds = time.perf_counter() - start
        out[:] = -1.0
        # the signal comes a quarter into the run (timing schedules, never asserts)
        killer = threading.Timer(seconds / 4, os.kill, args=(os.getpid(), signal.SIGINT))
        returned = False
        killer.start()
        try:
            f.execute()
            returned = True
            killer.join()
            time.sleep(0.2)  # a late signal lands here, not in another test
        except KeyboardInterrupt:
            pass
        killer.join()
        assert not returned, "execute finished before the signal came"
        assert not np.array_equal(out, full)
        f.execute()
        assert np.array_equal(out, full)


# -- threads -----------------------------------------------------------------------------


def test_gil_released_two_threads_overlap(np, rng):
    """Two threads denoise at once, each on its own device: their executions
    overlap in time, which they cannot if execute held the GIL."""
    color = rng.random((512, 512, 3), dtype=np.float32)
    barrier = threading.Barrier(2)
    spans = {}
    results = {}

    def work(name):
        device = lull.Device("cpu", num_threads=1)
        barrier.wait()
        start = time.perf_counter()
        results[name] = lull.denoise(color, filter="ATrous", iterations=8, device=device)
        spans[name] = (start, time.perf_counter())

    threads = [threading.Thread(target=work, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = spans["a"], spans["b"]
    overlap = min(a1, b1) - max(a0, b0)
    assert overlap > 0.5 * min(a1 - a0, b1 - b0), spans
    assert np.array_equal(results["a"], results["b"])


def test_busy_filter_refuses_changes(np, rng):
    color = rng.random((256, 256, 3), dtype=np.float32)
    errors = []
    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        f.set_image("color", color)
        f.set_image("output", np.zeros_like(color))
        f["iterations"] = 6

        def meddle(done):
            if done == 0.0:
                t = threading.Thread(target=_try_set, args=(f, color, errors))
                t.start()
                t.join()

        f.progress = meddle
        f.execute()
    assert errors and "executing" in errors[0]


def _try_set(f, color, errors):
    try:
        f.set_image("color", color)
    except RuntimeError as e:
        errors.append(str(e))


_SHARED_DEVICE_SCRIPT = """
import threading, numpy as np, lull
rng = np.random.default_rng(1)
image = rng.random((256, 256, 3), dtype=np.float32)
device = lull.Device("cpu")
def work():
    for _ in range(3):
        lull.denoise(image, filter="ATrous", iterations=5, device=device)
workers = [threading.Thread(target=work) for _ in range(2)]
for t in workers:
    t.start()
while any(t.is_alive() for t in workers):
    with device.new_filter("Gaussian") as f:   # the library's device lock
        f["sigma"] = 2.0
        assert f["sigma"] == 2.0
for t in workers:
    t.join()
print("ok")
"""


def test_threads_sharing_a_device_do_not_deadlock():
    """The library holds a device's lock while a filter executes and calls
    the progress monitor, which takes the GIL: a thread holding the GIL must
    not wait for that lock (it once hung every time).  In a child process,
    so that a regression fails instead of hanging the suite."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", _SHARED_DEVICE_SCRIPT], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_failed_set_image_keeps_the_image(np, noisy):
    color, albedo = noisy["color"], noisy["albedo"]
    gpu_like = type("GpuArray", (), {"__cuda_array_interface__": {
        "shape": albedo.shape, "typestr": "<f4", "data": (0x1000, False), "version": 2}})()
    with lull.Device("cpu") as device, device.new_filter("RT") as f:
        f.set_image("color", color)
        f.set_image("albedo", albedo)
        with pytest.raises(ValueError, match="GPU memory"):
            f.set_image("albedo", gpu_like)   # refused on a CPU device
        assert f.get_image("albedo") is albedo
        out = np.zeros_like(color)
        f.set_image("output", out)
        f.execute()
    assert np.array_equal(out, lull.denoise(color, albedo, hdr=False))  # RT: OIDN's LDR default


def test_output_keyword_is_out(np, noisy):
    color = noisy["color"]
    target = np.zeros_like(color)
    assert lull.denoise(color, output=target) is target
    assert np.array_equal(target, lull.denoise(color))
    with pytest.raises(TypeError, match="once"):
        lull.denoise(color, out=target, output=np.zeros_like(color))


def test_cuda_interface_read_once(np):
    """Reading the interface runs Python code (here a value's __bool__ that
    empties the dict): the module reads a copy, not values freed under it."""
    interface = {}

    class Flag:
        def __bool__(self):
            interface.clear()
            return False

    # the shape built at run time: the dict holds its only reference
    interface.update({"shape": tuple([4, 4, 3]), "typestr": "<f4", "data": (0x1000, Flag()),
                      "version": 2})
    gpu_like = type("GpuArray", (), {"__cuda_array_interface__": interface})()
    with lull.Device("cpu") as device, device.new_filter("ATrous") as f:
        with pytest.raises(ValueError, match="GPU memory"):
            f.set_image("color", gpu_like)


def test_output_variance_is_written_through_any_layout(np, rng):
    if "Poisson" not in lull.filter_types():
        pytest.skip("built without the gradient-domain filters")
    names = ["color", "gradientX", "gradientY", "colorA", "colorB", "gradientXA", "gradientXB",
             "gradientYA", "gradientYB"]
    inputs = {n: rng.random((16, 16, 3), dtype=np.float32) for n in names}
    results = []
    for variance in (np.zeros((16, 16, 3), np.float32), np.zeros((16, 16, 3), np.float32)[::-1]):
        with lull.Device("cpu") as device, device.new_filter("Poisson") as f:
            for n, a in inputs.items():
                f.set_image(n, a)
            f.set_image("output", np.zeros((16, 16, 3), np.float32))
            f.set_image("outputVariance", variance)
            f.execute()
        results.append(np.array(variance))
    assert results[0].sum() > 0
    assert np.array_equal(results[0], results[1])   # negative strides: copied back
    read_only = np.zeros((16, 16, 3), np.float32)
    read_only.flags.writeable = False
    with lull.Device("cpu") as device, device.new_filter("Poisson") as f:
        with pytest.raises(ValueError, match="read-only"):
            f.set_image("outputVariance", read_only)


def test_reconstruct_from_halves_alone(np, rng):
    """reconstruct() with the six half-buffers and no primal or gradients
    (the C API accepts it): the output takes the first half's shape; it
    failed with a TypeError about NoneType.  Without any colour there is
    nothing to shape the output: a ValueError that says so."""
    if "Poisson" not in lull.filter_types():
        pytest.skip("built without the gradient-domain filters")
    halves = {n: rng.random((12, 10, 3), dtype=np.float32)
              for n in ("colorA", "colorB", "gradientXA", "gradientXB", "gradientYA",
                        "gradientYB")}
    out = lull.reconstruct(None, None, None, device="cpu", **halves)
    assert out.shape == (12, 10, 3) and np.isfinite(out).all()
    # the same as the filter given the halves through the object API
    with lull.Device("cpu") as device, device.new_filter("Poisson") as f:
        for name, array in halves.items():
            f.set_image(name, array)
        expected = np.zeros((12, 10, 3), np.float32)
        f.set_image("output", expected)
        f.execute()
    assert np.array_equal(out, expected)
    with pytest.raises(ValueError, match="out="):
        lull.reconstruct(None, None, None, device="cpu")


# -- leaks ---------------------------------------------------------------------------------


def test_no_reference_leaks(np, noisy):
    color, albedo = noisy["color"], noisy["albedo"]
    before = sys.getrefcount(color), sys.getrefcount(albedo)
    device = lull.Device("cpu")
    for _ in range(20):
        lull.denoise(color, albedo, device=device, filter="ATrous")
        with device.new_filter("RT") as f:
            f.set_image("color", color)
            f.set_image("albedo", albedo)
            f.set_image("output", np.empty_like(color))
            f.progress = lambda done: None
            f.execute()
    f = device.new_filter("RT")
    f.set_image("color", color)
    assert sys.getrefcount(color) == before[0] + 1  # held by the filter
    del f
    gc.collect()
    assert (sys.getrefcount(color), sys.getrefcount(albedo)) == before


def test_no_memory_growth(np, noisy):
    color = noisy["color"]
    device = lull.Device("cpu")
    out = np.empty_like(color)

    def once():
        lull.denoise(color[::-1], filter="ATrous", device=device, out=out)
        try:
            lull.denoise(color.astype(np.float64), device=device)
        except TypeError:
            pass

    for _ in range(5):
        once()
    gc.collect()
    tracemalloc.start()
    first = tracemalloc.take_snapshot()
    for _ in range(200):
        once()
    gc.collect()
    growth = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(first, "filename"))
    tracemalloc.stop()
    assert growth < 64 * 1024, growth


# -- gradient-domain reconstruction ---------------------------------------------------------


def _gradients(np, image):
    """Forward differences dx[y, x] = I[y, x+1] - I[y, x] (0 on the last column),
    dy likewise."""
    dx = np.zeros_like(image)
    dy = np.zeros_like(image)
    dx[:, :-1] = image[:, 1:] - image[:, :-1]
    dy[:-1] = image[1:] - image[:-1]
    return dx, dy


def test_reconstruct(np, rng):
    y, x = np.mgrid[0:40, 0:56].astype(np.float32)
    image = np.stack([np.sin(x / 7) + 1.5, np.cos(y / 5) + 1.5, (x + y) / 96 + 0.2],
                     axis=2).astype(np.float32)
    dx, dy = _gradients(np, image)
    if "Poisson" not in lull.filter_types():
        with pytest.raises(lull.Error, match="not available") as info:
            lull.reconstruct(image, dx, dy)
        assert info.value.code == lull.ERROR_INVALID_ARGUMENT
        return
    # exact primal and gradients: the image itself, for L2 and L1
    for norm in (2, 1):
        out = lull.reconstruct(image, dx, dy, norm=norm)
        assert np.allclose(out, image, atol=1e-3), norm
    # a noisy primal with exact gradients: the gradients remove most noise
    noisy = (image + rng.normal(0, 0.2, image.shape)).astype(np.float32)
    out = lull.reconstruct(noisy, dx, dy, norm=2, alpha=0.05)
    assert np.mean((out - image) ** 2) < 0.2 * np.mean((noisy - image) ** 2)
    # in place: the same result
    in_place = noisy.copy()
    assert lull.reconstruct(in_place, dx, dy, norm=2, alpha=0.05, out=in_place) is in_place
    assert np.allclose(in_place, out, atol=1e-5)
    with pytest.raises(ValueError, match="'gradientX'.*same size"):
        lull.reconstruct(image, dx[:-1], dy)


def test_metrics(np, rng):
    ref = rng.random((24, 32, 4), dtype=np.float32) * 2
    same = lull.metrics(ref, ref)
    assert (same["relmse"] == 0 and same["ssim"] == pytest.approx(1.0)
            and same["psnr"] == float("inf"))
    brighter = ref * 1.1
    rgb = ref[..., :3].astype(np.float64)
    expected = np.mean((0.1 * rgb) ** 2 / (rgb ** 2 + 0.01))  # Rousselle et al. 2011
    assert lull.metrics(brighter, ref)["relmse"] == pytest.approx(expected, rel=1e-5)
    clamped = np.clip(ref, 0, 1)  # PSNR and SSIM see tone-mapped (clamped) values
    assert lull.metrics(clamped, ref)["psnr"] == float("inf")
    worse = lull.metrics(ref + rng.normal(0, 0.3, ref.shape).astype(np.float32), ref)
    assert worse["ssim"] < lull.metrics(brighter, ref)["ssim"] < 1
    with pytest.raises(ValueError, match="reference"):
        lull.metrics(ref, ref[:-1])
    with pytest.raises(ValueError, match="3 or 4 channels"):
        lull.metrics(ref[..., 0], ref[..., 0])
    # RGB against RGBA (a PFM reference of Blender's Combined): the colour's
    # metrics (it was refused)
    for a, b in ((brighter[..., :3], ref), (brighter, ref[..., :3])):
        assert lull.metrics(a, b) == lull.metrics(brighter, ref)
    # SSIM is negative for anti-correlated images (it raised MemoryError,
    # -1 having meant "out of memory")
    y = rng.random((32, 32, 3), dtype=np.float32)
    assert -1 <= lull.metrics(1 - y, y)["ssim"] < -0.5
    # a non-finite pixel is the worst pixel for PSNR and SSIM too (a NaN over
    # black read as black: PSNR inf, SSIM 1)
    black = np.zeros((8, 8, 3), np.float32)
    hole = black.copy()
    hole[3, 4, 1] = np.nan
    m = lull.metrics(hole, black)
    assert m["psnr"] == pytest.approx(10 * np.log10(3 * 64)) and m["ssim"] < 1


def test_mismatched_compiled_module_is_named(tmp_path):
    """A package whose compiled module was built for another Python says so."""
    import shutil
    import subprocess

    package = tmp_path / "lull"
    package.mkdir()
    shutil.copy(lull.__file__, package / "__init__.py")
    (package / "_lull.cpython-39-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    proc = subprocess.run([sys.executable, "-c", "import lull"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode != 0
    assert "does not match this Python" in proc.stderr
    assert "_lull.cpython-39-x86_64-linux-gnu.so" in proc.stderr


def test_works_without_numpy():
    """With NumPy unavailable the module imports, takes plain buffers and
    returns memoryviews."""
    import subprocess

    code = """
import sys, array
sys.modules['numpy'] = None  # import numpy now fails
import lull
h, w = 6, 5
data = array.array('f', [0.5] * (h * w * 3))
out = lull.denoise(memoryview(data).cast('B').cast('f', (h, w, 3)), filter='Gaussian')
assert isinstance(out, memoryview) and out.shape == (h, w, 3) and out.format == 'f'
assert all(abs(v - 0.5) < 1e-6 for v in out.cast('B').cast('f'))
print('ok')
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.path.dirname(
                              os.path.dirname(lull.__file__))})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_rhf_takes_a_histogram_array(np, rng):
    """RHF through lull.denoise with histogram= an (H, W, 3, B) array: equal
    to the histograms given one by one (histogram0 ...), less noisy than
    its input, and a clear error for an array of the wrong shape."""
    h, w, bins, spp = 20, 24, 6, 16
    truth = np.where(np.arange(w)[None, :, None] < w // 2, 0.1, 0.8).repeat(h, 0) \
        * np.ones((h, w, 3))
    samples = truth[..., None] * rng.exponential(1.0, (h, w, 3, spp))
    color = samples.mean(-1).astype(np.float32)
    # the binning of docs/rhf.md: (v / 2.5)^(1 / 2.2) spread over two bins
    t = np.clip(samples / 2.5, 0, 1) ** (1 / 2.2) * (bins - 1)
    k0 = np.floor(t).astype(int).clip(0, bins - 1)
    w0 = np.where(k0 + 1 < bins, 1 - (t - k0), 1.0)
    hist = np.zeros((h, w, 3, bins), np.float32)
    for k in range(bins):
        hist[..., k] = ((k0 == k) * w0).sum(-1) + ((k0 + 1 == k) * (1 - w0)).sum(-1)
    result = lull.denoise(color, filter="RHF", histogram=hist)
    by_name = lull.denoise(color, filter="RHF",
                           **{"histogram%d" % k: np.ascontiguousarray(hist[..., k])
                              for k in range(bins)})
    assert np.array_equal(result, by_name)
    assert np.mean((result - truth) ** 2) < 0.5 * np.mean((color - truth) ** 2)
    with pytest.raises(ValueError, match=r"\(H, W, 3, B\)"):
        lull.denoise(color, filter="RHF", histogram=hist[..., 0])
