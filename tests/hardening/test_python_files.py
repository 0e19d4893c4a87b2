"""The Python module on truncated and corrupt image files: an exception
(lull.Error), never a crash, and never a damaged output file.

    - the Blender test render cut at 60 lengths (every 40 bytes through the
      headers, then through the pixel data): read_exr raises lull.Error;
    - 400 copies of the render with bytes overwritten (seeded; header and
      pixel data): read_exr raises lull.Error or returns passes of the
      render's size;
    - every file of the fuzz corpus and of the fixed fuzz findings
      (tests/fuzz): an error or passes, nothing else;
    - add_passes and write_exr from corrupt input onto an existing file, and
      denoise + add_passes on a truncated render: the existing file keeps
      every byte, and no temporary file is left beside it.

A crash of the interpreter fails the test (ctest sees the process die).
"""

import os
import pathlib
import random

import pytest

import lull

ROOT = pathlib.Path(__file__).resolve().parents[2]
RENDER = ROOT / "tests" / "data" / "cornell" / "cornell_spp16.exr"
FUZZ = ROOT / "tests" / "fuzz"


@pytest.fixture(scope="module")
def render():
    if not RENDER.exists():
        pytest.skip(f"{RENDER} not present")
    return RENDER.read_bytes()


def read_or_error(path):
    """read_exr's result, or None when it raised lull.Error."""
    try:
        return lull.read_exr(path)
    except lull.Error as error:
        assert str(error), "an error without a message"
        assert "\n" not in str(error)
        return None


def test_truncated_render_raises(tmp_path, render):
    path = tmp_path / "cut.exr"
    # every 40 bytes through the headers and offset tables, then 20 cuts
    # through the pixel data
    lengths = [*range(0, 1600, 40), *range(1600, len(render), (len(render) - 1600) // 20)]
    for length in lengths:
        path.write_bytes(render[:length])
        with pytest.raises(lull.Error):
            lull.read_exr(path)


def test_corrupt_render_raises_or_reads(tmp_path, render):
    path = tmp_path / "corrupt.exr"
    rng = random.Random(20261122)
    outcomes = {"error": 0, "read": 0}
    for trial in range(400):
        data = bytearray(render)
        # half the trials hit the header (the first 2 KB), half anywhere
        span = 2048 if trial % 2 == 0 else len(data)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(span)] = rng.randrange(256)
        path.write_bytes(bytes(data))
        passes = read_or_error(path)
        if passes is None:
            outcomes["error"] += 1
            continue
        outcomes["read"] += 1
        assert passes.width > 0 and passes.height > 0
        for array in passes.values():
            assert array.shape[:2] == (passes.height, passes.width)
    assert outcomes["error"] > 0 and outcomes["read"] > 0, outcomes


def fuzz_files():
    files = []
    for folder in ("corpus_io", "regressions_io"):
        files += sorted((FUZZ / folder).glob("*"))
    return files


@pytest.mark.parametrize("source", fuzz_files(), ids=lambda p: p.name)
def test_fuzz_inputs(tmp_path, source):
    data = source.read_bytes()
    # fuzz_io's first byte picks the name: odd .pfm, even .exr
    path = tmp_path / ("input.pfm" if data and data[0] & 1 else "input.exr")
    path.write_bytes(data[1:])
    passes = read_or_error(path)
    if passes is not None:
        assert passes.width > 0 and passes.height > 0


def test_failed_writes_leave_the_output(tmp_path, render, np):
    out = tmp_path / "out.exr"
    lull.write_exr(out, {"ViewLayer.Combined": np.ones((8, 8, 4), np.float32)})
    before = out.read_bytes()
    corrupt = tmp_path / "corrupt.exr"
    corrupt.write_bytes(render[:3000])
    extra = {"ViewLayer.Denoised": np.zeros((256, 256, 3), np.float32)}
    with pytest.raises(lull.Error):
        lull.add_passes(corrupt, out, extra)
    refused = 0
    for source in sorted((FUZZ / "regressions_io").glob("*")):
        corrupt.write_bytes(source.read_bytes()[1:])
        # a corrupt file is refused with lull.Error; a regression file that
        # is a valid image (a round-trip finding) refuses the pass of the
        # wrong size with ValueError: neither may touch the output
        readable = read_or_error(corrupt) is not None
        refused += not readable
        with pytest.raises(ValueError if readable else lull.Error):
            lull.add_passes(corrupt, out, extra)
    assert refused >= 9  # the corrupt regression files
    # an array the file cannot hold
    with pytest.raises((lull.Error, TypeError, ValueError)):
        lull.write_exr(out, {"ViewLayer.Combined": np.ones((8, 8, 7), np.float32)})
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.exr", "out.exr"]


@pytest.fixture(scope="module")
def np():
    return pytest.importorskip("numpy")


def test_denoise_truncated_render_keeps_output(tmp_path, render, np):
    good = lull.read_exr(RENDER)
    out = tmp_path / "denoised.exr"
    denoised = lull.denoise(good["ViewLayer.Combined"], good["ViewLayer.Denoising Albedo"],
                            good["ViewLayer.Denoising Normal"], device="cpu")
    lull.add_passes(RENDER, out, {"ViewLayer.Denoised": denoised})
    before = out.read_bytes()
    truncated = tmp_path / "truncated.exr"
    truncated.write_bytes(render[: len(render) // 2])
    with pytest.raises(lull.Error):
        passes = lull.read_exr(truncated)
        lull.add_passes(truncated, out, {"ViewLayer.Denoised": passes["ViewLayer.Combined"]})
    with pytest.raises(lull.Error):
        lull.add_passes(truncated, out, {"ViewLayer.Denoised": denoised})
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["denoised.exr", "truncated.exr"]
    os.remove(truncated)
