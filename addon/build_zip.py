#!/usr/bin/env python3
"""Builds the Blender add-on zip: addon/lull_denoise plus the compiled lull
module from a build tree, installable in Blender 4.2+ (Preferences > Get
Extensions > Install from Disk) and, through bl_info, older versions
(Preferences > Add-ons > Install).

    python addon/build_zip.py [--build build] [--out dist/lull_denoise-0.1.0-linux-x64.zip]
                              [--no-module]

The zip holds one folder, lull_denoise/, with the add-on, its manifest
(version from CMakeLists.txt, `platforms` set when the compiled module is
bundled) and lull_denoise/lull/ (the `lull` package: __init__.py and
_lull.<abi>.so, which carries liblull statically, so no other library of
lull is needed).  The module must be built for Blender's Python: Blender
4.2-4.5 use Python 3.11 (cmake -DPython3_EXECUTABLE=/path/to/python3.11).
It links the system's OpenImageIO for EXR files, so the target machine
needs the same OpenImageIO libraries (Debian 12: libopenimageio2.4).
"""

import argparse
import glob
import os
import re
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGE = "lull_denoise"

# SOABI platform part -> Blender extension platform
PLATFORMS = {
    "x86_64-linux-gnu": "linux-x64",
    "aarch64-linux-gnu": "linux-arm64",
    "darwin": "macos-arm64",
    "win_amd64": "windows-x64",
}


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(lull\s+VERSION\s+([0-9.]+)", f.read())
    if not match:
        sys.exit("build_zip: no version in CMakeLists.txt")
    return match.group(1)


def find_module(build):
    found = sorted(glob.glob(os.path.join(build, "python", "lull", "_lull*.so")) +
                   glob.glob(os.path.join(build, "python", "lull", "_lull*.pyd")))
    if not found:
        sys.exit(f"build_zip: no compiled module in {build}/python/lull "
                 "(configure with -DLULL_PYTHON=ON and build first, or pass --no-module)")
    if len(found) > 1:
        sys.exit(f"build_zip: several compiled modules in {build}/python/lull: {found}")
    return found[0]


def platform_of(module):
    name = os.path.basename(module)
    for key, platform in PLATFORMS.items():
        if key in name:
            return platform
    sys.exit(f"build_zip: cannot tell the platform of {name}")


def manifest(version, platform):
    with open(os.path.join(HERE, PACKAGE, "blender_manifest.toml"), encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r'^version = ".*"$', f'version = "{version}"', text, count=1, flags=re.M)
    if platform:
        # a top-level key: before the first [table]
        text = text.replace('blender_version_min = "4.2.0"\n',
                            f'blender_version_min = "4.2.0"\nplatforms = ["{platform}"]\n', 1)
    return text


def build(build_dir, out, with_module):
    version = project_version()
    module = find_module(build_dir) if with_module else None
    platform = platform_of(module) if module else None
    if out is None:
        suffix = f"-{platform}" if platform else ""
        out = os.path.join(ROOT, "dist", f"{PACKAGE}-{version}{suffix}.zip")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(os.path.join(HERE, PACKAGE))):
            path = os.path.join(HERE, PACKAGE, name)
            if name == "blender_manifest.toml":
                z.writestr(f"{PACKAGE}/{name}", manifest(version, platform))
            elif name.endswith(".py"):
                z.write(path, f"{PACKAGE}/{name}")
        if module:
            z.write(os.path.join(os.path.dirname(module), "__init__.py"),
                    f"{PACKAGE}/lull/__init__.py")
            z.write(module, f"{PACKAGE}/lull/{os.path.basename(module)}")
    os.replace(tmp, out)  # a half-written zip never replaces a good one
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.environ.get("LULL_BUILD", os.path.join(ROOT, "build")),
                        help="CMake build tree with the compiled module (default: build)")
    parser.add_argument("--out", help="zip to write (default: dist/lull_denoise-<version>-"
                                      "<platform>.zip, e.g. lull_denoise-0.1.0-linux-x64.zip; "
                                      "without the module: no platform part)")
    parser.add_argument("--no-module", action="store_true",
                        help="leave the compiled module out (it must then be on Blender's path)")
    args = parser.parse_args(argv)
    print(build(args.build, args.out, not args.no_module))


if __name__ == "__main__":
    main()
