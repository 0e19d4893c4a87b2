"""Which Open Image Denoise this Blender loaded: Intel's (the copy Blender
ships) or lull's, when Blender was started with `lull blender` (or with a
folder holding lull's libOpenImageDenoise.so.2 first on LD_LIBRARY_PATH).
Cycles' denoiser 'OpenImageDenoise' and the compositor's Denoise node then
run lull.  Read from the libraries mapped into the process (Linux)."""

import ctypes
import os
import sys

_cache = {}


def _mapped_oidn():
    """The path of the libOpenImageDenoise.so.* mapped into this process (not
    OIDN's own _core and _device_* parts), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps
                     if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    found = sorted(p for p in paths if os.path.basename(p).startswith("libOpenImageDenoise.so"))
    return found[0] if found else None


def info():
    """{"path": str or None, "lull": bool, "version": str, "text": one line}."""
    if "info" in _cache:
        return _cache["info"]
    path = _mapped_oidn() if sys.platform.startswith("linux") else None
    result = {"path": path, "lull": False, "version": ""}
    if path is None:
        result["text"] = ("Open Image Denoise: not loaded (or not Linux)" if sys.platform
                          .startswith("linux") else "Open Image Denoise: only known on Linux")
    else:
        try:
            lib = ctypes.CDLL(path)  # already loaded: the same library, nothing new
            get_version = getattr(lib, "lullGetVersionString", None)
        except OSError:
            get_version = None
        if get_version is not None:
            get_version.restype = ctypes.c_char_p
            result.update(lull=True, version=get_version().decode())
            result["text"] = f"Cycles' OpenImageDenoise is lull {result['version']}"
        else:
            result["text"] = "Cycles' OpenImageDenoise is Intel's (start Blender with `lull blender`)"
    _cache["info"] = result
    return result
