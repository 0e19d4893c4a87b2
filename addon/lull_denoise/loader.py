"""Finds the `lull` Python module: the one bundled in the add-on's folder
(build_zip.py copies it there), else one on Blender's Python path.  When it
cannot be imported, the reason is kept for the panel and the operators,
e.g. a compiled module built for another Python than Blender's."""

import os
import sys

_state = {"module": None, "error": None, "source": None}


def _python():
    return "Blender's Python is %d.%d (%s)" % (sys.version_info[0], sys.version_info[1],
                                               sys.executable or "embedded")


def load():
    """Imports lull once; returns the module or None (see error())."""
    if _state["module"] is not None or _state["error"] is not None:
        return _state["module"]
    bundled = os.path.join(os.path.dirname(__file__), "lull")
    problems = []
    if os.path.isdir(bundled):
        try:
            from . import lull as module

            _state.update(module=module, source="bundled with the add-on")
            return module
        except ImportError as e:
            problems.append(f"the bundled lull module cannot be loaded: {e}")
    try:
        import lull as module

        if not hasattr(module, "Device"):
            raise ImportError(f"'{module.__name__}' at {module.__file__} is not lull")
        _state.update(module=module, source=f"from {os.path.dirname(module.__file__)}")
        return module
    except ImportError as e:
        problems.append(f"no lull module on the Python path ({e})")
    _state["error"] = "; ".join(problems) + ". " + _python() + "."
    return None


def require():
    """The lull module, or RuntimeError with the reason it is missing."""
    module = load()
    if module is None:
        raise RuntimeError(_state["error"])
    return module


def error():
    load()
    return _state["error"]


def source():
    load()
    return _state["source"]
