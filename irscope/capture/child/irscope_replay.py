"""``irscope replay``: compile captured IR files again, with changes, in one process.

Run by irscope_bootstrap as the "script": ``irscope_replay.py SPEC.json``. The spec
lists jobs; each compiles one ``.ttir``/``.ttgir`` file with ``triton.compile(path,
target=..., options=...)`` (Triton is imported once for all of them: an ablation
runs dozens). The capture hook records each compile as it records any other, so
every job becomes an ordinary capture.

Passes are left out through Triton's stage hook (``knobs.runtime.add_stages_inspection_hook``,
Triton 3.6+): the hook wraps the stage whose pipeline is edited (``ttgir`` for a
replay from TTIR, ``llir`` from TTGIR), and while that stage runs, every
``add_*`` pass binding first adds its passes to a scratch pass manager: when one of
them is a pass to leave out, the binding adds nothing. A pass is named by its MLIR
argument (``tritongpu-pipeline``), as the pass dumps print it.

The outcome of each job goes to the spec's ``results`` file (JSON). Standard
library and Triton only: this runs in any Python that has Triton (``--python``).
"""

import json
import os
import re
import sys
import threading

_STATE = threading.local()  # .drop: the pass arguments to leave out now; .dropped: those left out
_PATCHED = [False]
_HOOK_KEY = ["irscope-replay"]  # part of Triton's cache key (3.9+ asks the hook for one)


class ReplayUnsupported(Exception):
    """This Triton cannot do what the spec asks (no stage hook): said as one line."""


def _version(triton):
    parts = (getattr(triton, "__version__", "") or "0.0").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return 0, 0


_PIPELINE_NAME = re.compile(r"([A-Za-z0-9_.$-]+)\s*(\{|\(|,|\)|$)")


def pipeline_passes(text):
    """The pass arguments in a pass manager's pipeline text
    (``any(tritongpu-pipeline{num-stages=3},canonicalize{...})``), without the
    anchors (``builtin.module(``) and option blocks."""
    out = []
    depth_brace = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth_brace += 1
        elif ch == "}":
            depth_brace -= 1
        elif depth_brace == 0 and (ch.isalnum() or ch in "_-."):
            m = _PIPELINE_NAME.match(text, i)
            if m:
                if m.group(2) != "(":  # "name(" is an op anchor, not a pass
                    out.append(m.group(1))
                i = m.end(1)
                continue
        i += 1
    return out


def _binding_modules():
    """Every pybind submodule that holds ``add_*`` pass bindings."""
    from triton._C import libtriton

    found = []
    roots = [getattr(libtriton, "passes", None)]
    for backend in ("nvidia", "amd"):
        sub = getattr(libtriton, backend, None)
        roots.append(getattr(sub, "passes", None) if sub is not None else None)
    for root in roots:
        if root is None:
            continue
        for name in dir(root):
            mod = getattr(root, name, None)
            if mod is not None and type(mod).__name__ == "module":
                found.append(mod)
    return found


def _wrap_binding(original):
    def binding(pm, *args, **kwargs):
        drop = getattr(_STATE, "drop", None)
        if drop:
            from triton._C.libtriton import ir

            scratch = ir.pass_manager(_scratch_context())
            original(scratch, *args, **kwargs)
            added = pipeline_passes(scratch.get_pipeline_str())
            hit = [p for p in added if p in drop]
            if hit:
                _STATE.dropped.extend(p for p in added if p not in _STATE.dropped)
                return None
        return original(pm, *args, **kwargs)

    binding.__irscope_wrapped__ = True  # type: ignore[attr-defined]  # marks the binding wrapped once
    return binding


_SCRATCH: list = []  # the one MLIR context of the scratch pass managers (made on first use)


def _scratch_context():
    if not _SCRATCH:
        from triton._C.libtriton import ir

        _SCRATCH.append(ir.context())
    return _SCRATCH[0]


def _patch_bindings():
    if _PATCHED[0]:
        return
    _PATCHED[0] = True
    for mod in _binding_modules():
        for name in dir(mod):
            fn = getattr(mod, name, None)
            if name.startswith("add_") and callable(fn) and not getattr(fn, "__irscope_wrapped__", False):
                setattr(mod, name, _wrap_binding(fn))


def _stage_hook(*args):
    """Triton's stage inspection hook: ``(backend, stages, options, language,
    capability)`` wraps the edited stage; with no arguments (3.9+) it gives the
    cache key of the edited pipeline."""
    if not args:
        key = _HOOK_KEY[0]
        import hashlib

        return key, hashlib.sha256(key.encode()).hexdigest()
    stages = args[1]
    edit = getattr(_STATE, "edit_stage", None)
    if edit and edit in stages:
        stages[edit] = _dropping(stages[edit])
    return None


def _dropping(fn):
    def stage(src, metadata):
        _STATE.drop = set(getattr(_STATE, "want", ()))
        try:
            return fn(src, metadata)
        finally:
            _STATE.drop = None

    return stage


def _install_hook(triton):
    knobs = getattr(triton, "knobs", None)
    runtime = getattr(knobs, "runtime", None) if knobs is not None else None
    if runtime is None or not hasattr(runtime, "add_stages_inspection_hook"):
        raise ReplayUnsupported(
            "Triton %s has no stage hook (knobs.runtime.add_stages_inspection_hook, Triton 3.6 and later): "
            "it cannot leave passes out; replay without --without-pass, or use a Triton 3.6+ --python"
            % triton.__version__)
    from triton._C.libtriton import ir

    if not hasattr(ir.pass_manager, "get_pipeline_str"):
        raise ReplayUnsupported("Triton %s cannot list a pass pipeline (pass_manager.get_pipeline_str): "
                                "it cannot leave passes out" % triton.__version__)
    _patch_bindings()
    runtime.add_stages_inspection_hook = _stage_hook


def _target(triton, text):
    from triton.backends.compiler import GPUTarget

    if text.startswith("gfx"):
        return GPUTarget("hip", text, 64)
    return GPUTarget("cuda", int(text[3:]), 32)


def _in_ir_reading(exc):
    """Whether ``exc`` came from Triton reading the IR file (its ``IRSource``: the
    parse, the options it reads from the module), not from compiling it."""
    import traceback

    names = [f.name for f in traceback.extract_tb(exc.__traceback__)
             if f.filename.replace(os.sep, "/").endswith("triton/compiler/compiler.py")]
    # compile -> IRSource.__init__ (the parse), IRSource.parse_options (3.0-3.2: a regex
    # for num-warps, _get_num_warps_from_ir_str) or make_ir; never a stage of the pipeline
    return len(names) >= 2 and names[0] == "compile" and names[1] in ("__init__", "parse_options", "make_ir")


def _one_line(exc):
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    head = lines[0] if lines else ""
    # MLIR parse errors: the line naming the problem ("error: ...") says most
    for ln in lines:
        if "error:" in ln:
            head = ln
            break
    return ("%s: %s" % (type(exc).__name__, head))[:400]


def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    jobs: list = []
    results: dict = {"triton": None, "fatal": None, "jobs": jobs}
    try:
        import triton

        results["triton"] = triton.__version__
        if any(job.get("without") for job in spec["jobs"]):
            _install_hook(triton)
        for job in spec["jobs"]:
            jobs.append(_run_job(triton, job))
            _write(spec["results"], results)
    except ReplayUnsupported as exc:
        results["fatal"] = str(exc)
    _write(spec["results"], results)


def _run_job(triton, job):
    out = {"index": job["index"], "entered": False, "ok": False, "error": None, "unreadable": False,
           "dropped": []}
    _STATE.want = tuple(job.get("without") or ())
    _STATE.edit_stage = job.get("edit_stage") if _STATE.want else None
    _STATE.dropped = []
    _HOOK_KEY[0] = "irscope-replay:" + ",".join(sorted(_STATE.want))
    try:
        target = _target(triton, job["target"])
        options = dict(job.get("options") or {})
        options["irscope_replay_job"] = job["index"]  # not a Triton option: it names the job in the record
        out["entered"] = True
        triton.compile(job["ir"], target=target, options=options)
        out["ok"] = True
    except Exception as exc:  # a job's failure is its outcome: the next job still runs
        out["error"] = _one_line(exc)
        out["unreadable"] = _in_ir_reading(exc)
    finally:
        out["dropped"] = list(_STATE.dropped)
        _STATE.want, _STATE.edit_stage = (), None
    return out


def _write(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


if __name__ == "__main__":
    main(sys.argv[1])
