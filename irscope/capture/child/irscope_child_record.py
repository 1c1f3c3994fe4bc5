"""A compile record's parts, for the compile hook (:mod:`irscope_child_hook`): the JSON
form of Triton's signature, constexpr and target objects, the record of the compile in
progress (its stages and where each one's dump starts in fd 2), the stage files it wrote
and the versions of the tools it ran with.

Standard library only, like the hook: it runs inside the user's Python.
"""

import json
import os
import platform
import sys
import time


def now():
    """The local time, ISO 8601 with its offset: when a compile started."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def jsonable(value):
    """Best-effort JSON form of Triton's signature/constexpr/attr objects."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "_asdict"):
        return jsonable(value._asdict())
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):  # a tl.constexpr default: its value
        return jsonable(value.value)
    return repr(value)


def _key(k, names=None):
    if isinstance(k, tuple) and len(k) == 1:
        k = k[0]
    if names is not None and isinstance(k, int) and 0 <= k < len(names):
        return names[k]
    if names is not None and isinstance(k, str) and k.isdigit() and int(k) < len(names):
        return names[int(k)]
    return k if isinstance(k, str) else repr(k)


def by_name(value, names):
    """Key a {param index: x} mapping by parameter name, as users read it."""
    if hasattr(value, "arg_properties") and hasattr(value, "property_values"):
        # Triton 3.0-3.2 AttrsDescriptor: {property: [param indices]}
        out: dict = {}
        for prop, ids in value.arg_properties.items():
            for i in ids:
                out.setdefault(_key(i, names), []).append([prop, value.property_values.get(prop)])
        return out
    if not isinstance(value, dict):
        return jsonable(value)
    return {_key(k, names): jsonable(v) for k, v in value.items()}


def target_text(target):
    """``sm_90``, ``gfx942``: a Triton target as users write it ("" for none)."""
    if target is None:
        return ""
    backend = getattr(target, "backend", "")
    arch = getattr(target, "arch", "")
    if backend == "cuda":
        return "sm_%s" % arch
    return str(arch)


def write_json_atomic(path, obj):
    """Write ``obj`` as JSON to ``path`` through a rename: a reader never sees half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, default=repr)
    os.replace(tmp, path)


def _fd2_offset():
    try:
        return os.lseek(2, 0, os.SEEK_CUR)
    except OSError:
        return -1


class Record:
    """State of the compile in progress on this thread."""

    def __init__(self, seq, spool):
        self.seq = seq
        self.name = "rec-%d-%d" % (os.getpid(), seq)
        self.dir_tmp = os.path.join(spool, self.name + ".tmp")
        self.cache_dir = os.path.join(spool, "cache", "%d-%d" % (os.getpid(), seq))
        self.stages = []  # [{"stage", "seconds", "dump_start", "dump_end", "ok"}]

    def stage_started(self, ext):
        sys.stderr.flush()
        self.stages.append({"stage": ext, "dump_start": _fd2_offset(), "t0": time.perf_counter()})
        self.write_progress()

    def stage_ended(self, ok):
        sys.stderr.flush()
        st = self.stages[-1]
        st["seconds"] = time.perf_counter() - st.pop("t0")
        st["dump_end"] = _fd2_offset()
        st["ok"] = ok
        self.write_progress()

    def write_progress(self):
        """``stages.json`` in the unfinished record: if the process dies in native
        code (an LLVM abort, SIGKILL), the parent still knows which stages had
        finished, which one was running and where its dump starts."""
        try:
            write_json_atomic(os.path.join(self.dir_tmp, "stages.json"),
                              [{k: v for k, v in st.items() if k != "t0"} for st in self.stages])
        except Exception:  # a progress note only: never break the user's compile because of us
            pass


def versions():
    """The versions of Python, Triton and torch this process runs (None: not imported)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("triton", "torch"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", None)
    return out


def tools_dir():
    """The folder of the CUDA tools Triton ships (ptxas, nvdisasm...), None if absent."""
    triton = sys.modules.get("triton")
    if triton is None or triton.__file__ is None:
        return None
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    return path if os.path.isdir(path) else None


def stage_files(kernel, cache_dir):
    """{file name: absolute path} of the stage files the compile wrote."""
    group = getattr(kernel, "metadata_group", None) if kernel is not None else None
    if group:
        return {os.path.basename(k): v for k, v in group.items()}
    # Failed compile: whatever stages finished are in the private cache dir.
    found = {}
    for root, _dirs, files in os.walk(cache_dir):
        for f in files:
            if ".tmp." in f or f.startswith("__grp__") or f == "lock":
                continue
            found[f] = os.path.join(root, f)
    return found

