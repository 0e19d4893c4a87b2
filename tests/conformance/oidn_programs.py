"""OIDN's own programs against lull: the conformance tests (ctest label
conformance).

The pyoidn 2.5.1 wheel ships Open Image Denoise's test program, benchmark
and command-line denoiser (pyoidn/oidn/bin/oidnTest, oidnBenchmark,
oidnDenoise), linked against libOpenImageDenoise.so.2 with RPATH
$ORIGIN/../lib.  A copy of bin/ beside a lib/ that holds lull's
libOpenImageDenoise.so.2 runs them on lull, unchanged.

    oidn_programs.py test LIB WORK [--cases N] [CATCH_ARGS...]
        oidnTest --device cpu [CATCH_ARGS]: every selected test case passes,
        and there are N of them (OIDN 2.5.1's oidnTest has 20)
    oidn_programs.py denoise LIB WORK INPUTS_TOOL NOISY.exr REFERENCE.exr
        oidnDenoise -d cpu on a test render (colour, albedo and normal as PFM,
        made by lull's drop_in_inputs): the output is finite and closer to
        the high-spp reference (relMSE) than the noisy input

LIB is lull's libOpenImageDenoise.so.2, WORK a scratch folder.  Prints
"conformance skipped" (the tests' skip expression) when pyoidn is not
installed in this Python; examples/bootstrap.sh --tests installs it.
"""
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys

OIDN_VERSION = "2.5.1"
SKIP = "conformance skipped"


def oidn_bin():
    """pyoidn's bin/ folder, or None (skipped) when pyoidn is absent."""
    spec = importlib.util.find_spec("pyoidn")
    if spec is None or not spec.submodule_search_locations:
        print(f"{SKIP}: pyoidn is not installed in {sys.executable} "
              f"(sh examples/bootstrap.sh --tests installs pyoidn=={OIDN_VERSION})")
        return None
    version = importlib.metadata.version("pyoidn")
    if not (version == OIDN_VERSION or version.startswith(OIDN_VERSION + ".")):
        sys.exit(f"pyoidn {version} is installed; these tests run OIDN {OIDN_VERSION}'s "
                 f"programs (pip install pyoidn=={OIDN_VERSION})")
    folder = os.path.join(list(spec.submodule_search_locations)[0], "oidn", "bin")
    if not os.path.isdir(folder):
        sys.exit(f"pyoidn {version} has no programs in {folder}")
    return folder


def stage(lib, work):
    """WORK/bin (OIDN's programs) beside WORK/lib (lull's library only)."""
    source = oidn_bin()
    if source is None:
        return None
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, os.path.join(work, "bin"))
    os.makedirs(os.path.join(work, "lib"))
    shutil.copy(os.path.realpath(lib), os.path.join(work, "lib", "libOpenImageDenoise.so.2"))
    return os.path.join(work, "bin")


def environment():
    """The environment the programs run in: none of OIDN's variables, no
    preloaded library, and no other OIDN on the library path (RPATH comes
    first anyway)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OIDN_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    return env


def check_loads_lull(program, work):
    """The dynamic loader resolves libOpenImageDenoise.so.2 to WORK/lib."""
    if shutil.which("ldd") is None:
        print("(no ldd: which library the program loads is not checked)")
        return
    out = subprocess.run(["ldd", program], capture_output=True, text=True, env=environment()).stdout
    line = next((l for l in out.splitlines() if "libOpenImageDenoise.so.2" in l), "")
    expected = os.path.realpath(os.path.join(work, "lib", "libOpenImageDenoise.so.2"))
    found = line.split("=>")[-1].split("(")[0].strip() if "=>" in line else ""
    if not found or os.path.realpath(found) != expected:
        sys.exit(f"{os.path.basename(program)} does not load lull's library: {line.strip()!r}")
    print(f"{os.path.basename(program)} loads {found}")


def run_test(lib, work, cases, catch_args):
    bindir = stage(lib, work)
    if bindir is None:
        return 0
    program = os.path.join(bindir, "oidnTest")
    check_loads_lull(program, work)
    command = [program, "--device", "cpu", "--durations", "yes", *catch_args]
    print(" ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, env=environment())
    print(result.stdout + result.stderr)
    # Catch2's summary: "All tests passed (N assertions in M test cases)"
    summary = re.search(r"All tests passed \((\d+) assertions? in (\d+) test cases?\)",
                        result.stdout)
    if result.returncode != 0 or summary is None:
        sys.exit(f"oidnTest failed (exit status {result.returncode})")
    if cases is not None and int(summary.group(2)) != cases:
        sys.exit(f"oidnTest ran {summary.group(2)} test cases, expected {cases}")
    print(f"oidnTest on lull's CPU device: {summary.group(2)} test cases, "
          f"{summary.group(1)} assertions, all passed")
    return 0


def read_pfm(path):
    """A 3-channel PFM as an (H, W, 3) array, rows top to bottom."""
    import numpy as np
    with open(path, "rb") as f:
        magic = f.readline().strip()
        if magic != b"PF":
            sys.exit(f"{path}: not a 3-channel PFM")
        width, height = (int(v) for v in f.readline().split())
        scale = float(f.readline())
        data = np.fromfile(f, dtype="<f4" if scale < 0 else ">f4", count=width * height * 3)
    if data.size != width * height * 3:
        sys.exit(f"{path}: truncated")
    return data.reshape(height, width, 3)[::-1].astype(np.float64)


def rel_mse(image, reference):
    import numpy as np
    return float(np.mean((image - reference) ** 2 / (reference ** 2 + 0.01)))


def run_denoise(lib, work, inputs_tool, noisy, reference):
    import numpy as np
    bindir = stage(lib, work)
    if bindir is None:
        return 0
    program = os.path.join(bindir, "oidnDenoise")
    check_loads_lull(program, work)
    data = os.path.join(work, "data")
    os.makedirs(data)
    made = subprocess.run([inputs_tool, "exr", noisy, reference, data])
    if made.returncode == 77:
        print(f"{SKIP}: the test render cannot be read here (no EXR support)")
        return 0
    if made.returncode != 0:
        sys.exit("preparing the PFM inputs failed")
    output = os.path.join(work, "output.pfm")
    command = [program, "-d", "cpu", "--hdr", os.path.join(data, "color.pfm"),
               "--alb", os.path.join(data, "albedo.pfm"), "--nrm", os.path.join(data, "normal.pfm"),
               "-o", output]
    print(" ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, env=environment())
    print(result.stdout + result.stderr)
    if result.returncode != 0:
        sys.exit(f"oidnDenoise failed (exit status {result.returncode})")
    color = read_pfm(os.path.join(data, "color.pfm"))
    ref = read_pfm(os.path.join(data, "ref.pfm"))
    out = read_pfm(output)
    if out.shape != color.shape:
        sys.exit(f"output {out.shape} != input {color.shape}")
    if not np.all(np.isfinite(out)):
        sys.exit("the output has non-finite values")
    noisy_error, denoised_error = rel_mse(color, ref), rel_mse(out, ref)
    print(f"relMSE against the reference: noisy {noisy_error:.5f}, "
          f"oidnDenoise on lull {denoised_error:.5f} ({noisy_error / denoised_error:.1f}x lower)")
    if not denoised_error < noisy_error:
        sys.exit("oidnDenoise on lull did not lower the error")
    return 0


def main(argv):
    if len(argv) < 3 or argv[0] not in ("test", "denoise"):
        sys.exit(__doc__)
    mode, lib, work, rest = argv[0], argv[1], argv[2], argv[3:]
    if mode == "test":
        cases = None
        if rest[:1] == ["--cases"]:
            cases, rest = int(rest[1]), rest[2:]
        return run_test(lib, work, cases, rest)
    if len(rest) != 3:
        sys.exit(__doc__)
    return run_denoise(lib, work, *rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
