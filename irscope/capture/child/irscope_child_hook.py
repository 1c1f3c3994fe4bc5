"""irscope's compile hook, running inside the captured script's processes.

This file must work in any environment that has Triton (3.0 to 3.9), even one
where irscope itself and its dependencies are not installed (``--python``): it
uses only the standard library and Triton.

For every call of ``triton.compiler.compile`` it writes one *record* into the
spool folder named by ``IRSCOPE_SPOOL``:

    rec-<pid>-<seq>/meta.json   what was compiled, how, the outcome
    rec-<pid>-<seq>/dump.txt    everything the compile wrote to fd 2: the
                                per-pass MLIR (and LLVM) IR dumps
    cache/<pid>-<seq>/...       Triton's own stage files for that compile

A record is written in a ``.tmp`` folder and renamed when complete, so the
parent process only ever ingests whole records. On a real GPU, the driver's
register/spill counts arrive later (the first launch loads the binary) as
``drv-<pid>-<n>.json``.
"""

import json
import os
import platform
import socket
import sys
import threading
import time

from irscope_child_source import error_info, source_info, strip_reproducer  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
from irscope_child_globals import used_globals  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

SPOOL = os.environ.get("IRSCOPE_SPOOL", "")
MODE = os.environ.get("IRSCOPE_MODE", "auto")  # "auto", "gpu" or "compile-only"
TARGET = os.environ.get("IRSCOPE_TARGET", "")

# One compile at a time per process: fd 2 is redirected around each compile to
# catch the C++ pass dumps, and a process has only one fd 2.
_LOCK = threading.RLock()
_STATE = threading.local()
_SEQ = [0]
_DRV_SEQ = [0]
_INSTALLED = [False]
# Whether this process's compiles print Triton's remarks: "recorded", "off"
# (``irscope run --no-remarks``) or "unsupported" (a Triton before 3.6); set with the patch.
_REMARKS = ["unsupported"]


def _now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _jsonable(value):
    """Best-effort JSON form of Triton's signature/constexpr/attr objects."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {_key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "_asdict"):
        return _jsonable(value._asdict())
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):  # a tl.constexpr default: its value
        return _jsonable(value.value)
    return repr(value)


def _key(k, names=None):
    if isinstance(k, tuple) and len(k) == 1:
        k = k[0]
    if names is not None and isinstance(k, int) and 0 <= k < len(names):
        return names[k]
    if names is not None and isinstance(k, str) and k.isdigit() and int(k) < len(names):
        return names[int(k)]
    return k if isinstance(k, str) else repr(k)


def _by_name(value, names):
    """Key a {param index: x} mapping by parameter name, as users read it."""
    if hasattr(value, "arg_properties") and hasattr(value, "property_values"):
        # Triton 3.0-3.2 AttrsDescriptor: {property: [param indices]}
        out: dict = {}
        for prop, ids in value.arg_properties.items():
            for i in ids:
                out.setdefault(_key(i, names), []).append([prop, value.property_values.get(prop)])
        return out
    if not isinstance(value, dict):
        return _jsonable(value)
    return {_key(k, names): _jsonable(v) for k, v in value.items()}


def _target_text(target):
    if target is None:
        return ""
    backend = getattr(target, "backend", "")
    arch = getattr(target, "arch", "")
    if backend == "cuda":
        return "sm_%s" % arch
    return str(arch)


def _write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, default=repr)
    os.replace(tmp, path)


def _fd2_offset():
    try:
        return os.lseek(2, 0, os.SEEK_CUR)
    except OSError:
        return -1


class _Record:
    """State of the compile in progress on this thread."""

    def __init__(self, seq):
        self.seq = seq
        self.name = "rec-%d-%d" % (os.getpid(), seq)
        self.dir_tmp = os.path.join(SPOOL, self.name + ".tmp")
        self.cache_dir = os.path.join(SPOOL, "cache", "%d-%d" % (os.getpid(), seq))
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
            _write_json_atomic(os.path.join(self.dir_tmp, "stages.json"),
                               [{k: v for k, v in st.items() if k != "t0"} for st in self.stages])
        except Exception:  # a progress note only: never break the user's compile because of us
            pass


def _wrap_stage(ext, fn):
    def stage(*args, **kwargs):
        rec = getattr(_STATE, "record", None)
        if rec is None:
            return fn(*args, **kwargs)
        rec.stage_started(ext)
        try:
            out = fn(*args, **kwargs)
        except BaseException:
            rec.stage_ended(False)
            raise
        rec.stage_ended(True)
        return out

    stage.__irscope_wrapped__ = True  # type: ignore[attr-defined]  # marks the stage wrapped once
    return stage


def _patch_backend_class(backend):
    cls = type(backend)
    if getattr(cls, "__irscope_patched__", False):
        return
    original = cls.add_stages

    def add_stages(self, stages, *args, **kwargs):
        out = original(self, stages, *args, **kwargs)
        for ext, fn in list(stages.items()):
            if not getattr(fn, "__irscope_wrapped__", False):
                stages[ext] = _wrap_stage(ext, fn)
        return out

    cls.add_stages = add_stages
    cls.__irscope_patched__ = True


def _versions():
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in ("triton", "torch"):
        mod = sys.modules.get(name)
        if mod is not None:
            out[name] = getattr(mod, "__version__", None)
    return out


def _tools_dir():
    triton = sys.modules.get("triton")
    if triton is None or triton.__file__ is None:
        return None
    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    return path if os.path.isdir(path) else None


def _stage_files(kernel, cache_dir):
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


def _capture_compile(original, src, target, options, args, kwargs):
    if getattr(_STATE, "record", None) is not None:  # nested: not a new kernel
        return original(src, target, options, *args, **kwargs)
    with _LOCK:
        _SEQ[0] += 1
        rec = _Record(_SEQ[0])
        os.makedirs(rec.dir_tmp, exist_ok=True)
        os.makedirs(rec.cache_dir, exist_ok=True)
        saved_cache = os.environ.get("TRITON_CACHE_DIR")
        os.environ["TRITON_CACHE_DIR"] = rec.cache_dir
        started = _now()
        try:  # what the parent needs if this process dies inside the compile
            _write_json_atomic(os.path.join(rec.dir_tmp, "progress.json"),
                               _base_meta(rec, src, target, options, started))
        except Exception:  # a progress note only (it reads Triton's objects): never break the compile
            pass
        dump_fd = os.open(os.path.join(rec.dir_tmp, "dump.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        out_path = os.path.join(rec.dir_tmp, "stdout.txt")
        out_fd = os.open(out_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stderr.flush()
        try:
            sys.stdout.flush()
        except Exception:  # the user's stdout may be any object: never break the compile over a flush
            pass
        saved_fd2 = os.dup(2)
        saved_fd1 = os.dup(1)
        os.dup2(dump_fd, 2)
        os.dup2(out_fd, 1)
        _STATE.record = rec
        t0 = time.perf_counter()
        kernel = None
        error = None
        try:
            kernel = original(src, target, options, *args, **kwargs)
        except BaseException as exc:  # re-raised below, unchanged
            error = exc
        finally:
            elapsed = time.perf_counter() - t0
            _STATE.record = None
            for stream in (sys.stderr, sys.stdout):
                try:
                    stream.flush()
                except Exception:  # the user's streams may be any object: never break the compile over a flush
                    pass
            os.dup2(saved_fd2, 2)
            os.dup2(saved_fd1, 1)
            os.close(saved_fd2)
            os.close(dump_fd)
            _replay_stdout(out_fd, saved_fd1)
            if saved_cache is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = saved_cache
        exact = None
        if error is None and os.environ.get("IRSCOPE_EXACT_LINKS") == "1":
            exact = _compile_with_ttgir_locations(original, src, target, options, args, kwargs, rec)
        try:
            _write_record(rec, src, target, options, kernel, error, started, elapsed, exact)
        except Exception as exc:  # never break the user's compile because of us
            sys.stderr.write("irscope: could not record a compile: %s\n" % exc)
        if error is not None:
            raise error
        return kernel


_EXACT_ENV = {
    "USE_IR_LOC": "ttgir",  # 3.2+
    "USE_TTGIR_LOC": "1",  # 3.0/3.1
    "MLIR_ENABLE_DUMP": "0",
    "LLVM_IR_ENABLE_DUMP": "0",
}


def _compile_with_ttgir_locations(original, src, target, options, args, kwargs, rec):
    """Second compile whose LLIR/PTX locations point at lines of the TTGIR file.

    That ties every LLVM instruction to the one TTGIR op it came from (the
    normal compile only knows Python lines). Returns {"files": {...}} or
    {"error": "..."}; its output (Triton prints a line per snapshot) is dropped.
    """
    saved = {k: os.environ.get(k) for k in list(_EXACT_ENV) + ["TRITON_CACHE_DIR"]}
    os.environ.update(_EXACT_ENV)
    os.environ["TRITON_CACHE_DIR"] = rec.cache_dir + "-ttgirloc"
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved_fd1, saved_fd2 = os.dup(1), os.dup(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        kernel = original(src, target, options, *args, **kwargs)
        return {"files": _stage_files(kernel, os.environ["TRITON_CACHE_DIR"])}
    except Exception as exc:  # the second compile is optional: its failure is recorded, never raised
        return {"error": "%s: %s" % (type(exc).__name__, str(exc)[:500])}
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved_fd1, 1)
        os.dup2(saved_fd2, 2)
        for fd in (saved_fd1, saved_fd2, devnull):
            os.close(fd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _replay_stdout(out_fd, saved_fd1):
    """Give the terminal what the compile printed (``tl.static_print``...), less
    Triton's PTX reproducer dump, which stays in the record."""
    try:
        os.lseek(out_fd, 0, os.SEEK_SET)
        chunks = []
        while True:
            chunk = os.read(out_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        if data:
            shown = strip_reproducer(data.decode("utf-8", "replace")).encode("utf-8")
            while shown:
                shown = shown[os.write(saved_fd1, shown):]
    except OSError:
        pass
    finally:
        os.close(out_fd)
        os.close(saved_fd1)


def _base_meta(rec, src, target, options, started):
    """What a record says about a compile before it ends."""
    meta = source_info(src)
    names = list(getattr(getattr(src, "fn", None), "arg_names", None) or []) or None
    if target is None:
        try:
            from triton.runtime import driver

            target = driver.active.get_current_target()
        except Exception:  # no driver or no GPU (any error Triton's backends raise): target unknown
            target = None
    meta.update(
        {
            "pid": os.getpid(),
            "seq": rec.seq,
            "started": started,
            "mode": MODE,
            "target": _target_text(target),
            "target_full": _jsonable(target),
            "signature": _jsonable(getattr(src, "signature", None)),
            "constexprs": _by_name(getattr(src, "constexprs", getattr(src, "constants", None)), names),
            "attrs": _by_name(getattr(src, "attrs", None), names),
            "options": _jsonable(options),
            "versions": _versions(),
            "host": socket.gethostname(),
            "argv": list(sys.argv),
            "tools_dir": _tools_dir(),
            "cache_dir": rec.cache_dir,
            "remarks": _REMARKS[0],
        }
    )
    return meta


def _patch_jit_run():
    """Remember each ``JITFunction.run`` call's arguments and grid while it runs, so a
    compile it starts can record its launch (``irscope repro`` launches the kernel on
    inputs of the same shapes, with the same grid)."""
    from triton.runtime import jit

    cls = getattr(jit, "JITFunction", None)
    original = getattr(cls, "run", None)
    if cls is None or original is None or getattr(original, "_irscope", False):
        return

    def run(self, *args, **kwargs):
        saved = getattr(_STATE, "launch", None)
        _STATE.launch = (self, args, kwargs)
        try:
            return original(self, *args, **kwargs)
        finally:
            _STATE.launch = saved

    run._irscope = True  # type: ignore[attr-defined]  # marks the wrapper: patch once
    cls.run = run


def _launch_value(value):
    """A launch argument as JSON: a tensor's shape, stride and dtype; a number; else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return {"value": value}
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "stride"):
        return {"shape": [int(d) for d in value.shape], "stride": [int(d) for d in value.stride()],
                "dtype": str(value.dtype).replace("torch.", "")}
    return None


def _launch_info(src):
    """The grid and argument shapes of the launch compiling ``src``; None for a compile
    no launch started (``triton.compile`` called directly, a warmup without a grid)."""
    state = getattr(_STATE, "launch", None)
    fn = getattr(src, "fn", None)
    if state is None or fn is None or state[0] is not fn:
        return None
    try:
        _, args, kwargs = state
        names = list(fn.arg_names)
        values = dict(zip(names, args))
        values.update({k: v for k, v in kwargs.items() if k in names})
        out = {name: got for name, got in ((n, _launch_value(v)) for n, v in values.items()) if got is not None}
    except Exception:  # a record of the launch is optional: never break the user's launch for it
        return None
    try:
        grid = kwargs.get("grid")
        if callable(grid):  # the launch calls it after the compile with the same values
            grid = grid({**{k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}, **values})
        if isinstance(grid, int):
            grid = (grid,)
        grid = [int(g) for g in grid] if isinstance(grid, (tuple, list)) else None
    except Exception:  # a grid function that needs more than the arguments: the shapes still help
        grid = None
    return {"grid": grid, "args": out}


def _write_record(rec, src, target, options, kernel, error, started, elapsed, exact=None):
    if kernel is not None:
        target = getattr(kernel.metadata, "target", target)
    meta = _base_meta(rec, src, target, options, started)
    meta.update(
        {
            "seconds": elapsed,
            "stages": rec.stages,
            "files": _stage_files(kernel, rec.cache_dir),
            "hash": getattr(kernel, "hash", None),
            "error": error_info(error) if error is not None else None,
            "exact": exact,
            "fake_timing": _fake_timing(),
            "placeholder_reads": _placeholder_reads(),
            "launch": _launch_info(src),
            "globals": _globals_info(src),
            "env": {k: v for k, v in os.environ.items() if k.startswith(("TRITON_", "MLIR_", "LLVM_", "USE_IR_LOC"))},
        }
    )
    _write_json_atomic(os.path.join(rec.dir_tmp, "meta.json"), meta)
    os.replace(rec.dir_tmp, os.path.join(SPOOL, rec.name))


def _globals_info(src):
    """The module-level values the kernel reads (``irscope repro`` writes them from the
    bundle); None when they cannot be read."""
    try:
        return used_globals(src)
    except Exception:  # a record of them is optional: never break the user's compile for it
        return None


def _placeholder_reads():
    """How many tensor values the script had read as placeholders (compile-only:
    fake tensors hold none) when this compile ended: after one, the script may have
    taken a path a GPU run would not."""
    tensors = sys.modules.get("irscope_fake_tensors")
    return tensors.READS[0] if tensors is not None else 0


def _fake_timing():
    """Whether this compile ran inside irscope's stand-in benchmarker (compile-only
    autotuning or ``do_bench``): the time the script was given for it is not real."""
    fake = sys.modules.get("irscope_fake_driver")
    return bool(fake is not None and fake.benchmarking())


def _patch_init_handles(compiled_kernel_cls, gpu):
    """Report what loading a kernel for its first launch says: on a GPU, the
    driver's register and spill counts (``drv-<pid>-<n>.json``); in any mode, a
    launch Triton refused (OutOfResources: more shared memory or threads than the
    device has), as ``refused-<pid>-<n>.json`` with the reason."""
    original = compiled_kernel_cls._init_handles
    if getattr(original, "__irscope_wrapped__", False):
        return

    def _init_handles(self):
        fresh = getattr(self, "module", None) is None
        try:
            out = original(self)
        except BaseException as exc:  # re-raised below, unchanged
            if type(exc).__name__ == "OutOfResources":
                _report_refusal(self, exc)
            raise
        if gpu and fresh and getattr(self, "module", None) is not None:
            try:
                with _LOCK:
                    _DRV_SEQ[0] += 1
                    path = os.path.join(SPOOL, "drv-%d-%d.json" % (os.getpid(), _DRV_SEQ[0]))
                _write_json_atomic(
                    path,
                    {
                        "hash": getattr(self, "hash", None),
                        "name": getattr(self, "name", None),
                        "n_regs": getattr(self, "n_regs", None),
                        "n_spills": getattr(self, "n_spills", None),
                        "n_max_threads": getattr(self, "n_max_threads", None),
                    },
                )
            except Exception:  # resource figures are optional: never break the user's kernel launch
                pass
        return out

    _init_handles.__irscope_wrapped__ = True  # type: ignore[attr-defined]  # marks the method wrapped once
    _init_handles.__wrapped__ = original  # type: ignore[attr-defined]  # Triton's own, for inspect.unwrap
    compiled_kernel_cls._init_handles = _init_handles


_REFUSED: set = set()  # hashes reported: Triton <= 3.1 tries to load again at each launch


def _report_refusal(kernel, exc):
    key = getattr(kernel, "hash", None)
    if key in _REFUSED:
        return
    _REFUSED.add(key)
    fake = sys.modules.get("irscope_fake_driver")
    try:
        with _LOCK:
            _DRV_SEQ[0] += 1
            path = os.path.join(SPOOL, "refused-%d-%d.json" % (os.getpid(), _DRV_SEQ[0]))
        _write_json_atomic(path, {
            "hash": key,
            "name": getattr(kernel, "name", None),
            "type": type(exc).__name__,
            "message": str(exc),
            # inside a stand-in benchmark: an autotuner's config, which the autotuner prunes
            "benchmarking": bool(fake is not None and fake.benchmarking()),
        })
    except Exception:  # a report only: the user's launch fails with Triton's own error either way
        pass


def _patch_triton():
    """Wrap Triton's compile entry points; called once Triton is imported."""
    if _INSTALLED[0]:
        return
    _INSTALLED[0] = True
    import triton.compiler.compiler as cc

    global MODE
    if MODE == "auto":
        MODE = "gpu" if _gpu_present() else "compile-only"
    if os.environ.get("IRSCOPE_HOOK") == "off":  # benchmarks' baseline: fake driver only
        if MODE == "compile-only":
            import irscope_fake_driver  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

            irscope_fake_driver.install(TARGET or "sm_90")
        return
    _REMARKS[0] = _enable_remarks()
    try:
        _patch_jit_run()
    except Exception:  # launch records are optional: a Triton whose JIT differs still compiles
        pass
    original_compile = cc.compile

    def compile(src, target=None, options=None, *args, **kwargs):
        return _capture_compile(original_compile, src, target, options, args, kwargs)

    compile.__wrapped__ = original_compile  # type: ignore[attr-defined]  # what functools.wraps would set
    original_make_backend = cc.make_backend

    def make_backend(*args, **kwargs):
        backend = original_make_backend(*args, **kwargs)
        try:
            _patch_backend_class(backend)
        except Exception:  # a backend we cannot patch still compiles (without stage timing)
            pass
        return backend

    # The JIT and other modules hold their own references (``from ..compiler
    # import compile``): replace every reference to the originals we can find.
    for name, module in list(sys.modules.items()):
        if not name.startswith("triton") or module is None:
            continue
        if getattr(module, "compile", None) is original_compile:
            setattr(module, "compile", compile)  # a Triton module that imported compile by name
        if getattr(module, "make_backend", None) is original_make_backend:
            setattr(module, "make_backend", make_backend)
    ck = getattr(cc, "CompiledKernel", None)
    if ck is not None:
        _patch_init_handles(ck, MODE == "gpu")
    if MODE == "compile-only":
        import irscope_fake_driver

        irscope_fake_driver.install(TARGET or "sm_90")


def _enable_remarks():
    """Turn on Triton's remarks for every compile of this process, where its Triton
    prints them with their source positions (3.6+: ``MLIR_ENABLE_DIAGNOSTICS=remarks``,
    read by the C++ side at each compile, so setting it here is enough). A user's own
    setting (``warnings``, ``operations``) is kept beside it. Returns the state."""
    if os.environ.get("IRSCOPE_REMARKS") == "0":
        return "off"
    version = getattr(sys.modules.get("triton"), "__version__", "") or ""
    parts = version.split(".")
    try:
        if (int(parts[0]), int(parts[1])) < (3, 6):
            return "unsupported"
    except (IndexError, ValueError):
        return "unsupported"
    have = [v for v in os.environ.get("MLIR_ENABLE_DIAGNOSTICS", "").split(",") if v]
    if "remarks" not in have:
        os.environ["MLIR_ENABLE_DIAGNOSTICS"] = ",".join(have + ["remarks"])
    return "recorded"


def _gpu_present():
    """Whether Triton's own driver finds a usable GPU in this process."""
    try:
        import triton.runtime.driver  # noqa: F401

        sys.modules["triton.runtime.driver"].driver.active.get_current_target()
        return True
    except Exception:  # any error of Triton's driver probe means no usable GPU
        return False


def resolved_mode():
    """'gpu' or 'compile-only' once Triton is imported ('auto' before)."""
    return MODE


class _TritonImportWatcher:
    """Meta-path finder that patches Triton right after ``import triton`` ends."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "triton":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass
            _patch_triton()

        loader.exec_module = exec_module  # type: ignore[method-assign]  # patches this one loader
        return spec


def install():
    """Install the hook in this process (idempotent)."""
    if not SPOOL:
        return
    if MODE != "gpu":
        # Compile-only CUDA tensors need it before torch is imported (irscope_cuda_guard).
        import irscope_cuda_guard  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

        irscope_cuda_guard.install()
    if "triton" in sys.modules:
        _patch_triton()
    elif not any(isinstance(f, _TritonImportWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _TritonImportWatcher())
