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
``drv-<pid>-<n>.json`` (irscope_load_reports.py).

The record's parts (JSON forms of Triton's objects, the stage files) are in
irscope_child_record.py; the launch that started a compile, in
irscope_child_launch.py. Siblings import each other by name: the child's
``sys.path`` starts with this folder.
"""

import os
import socket
import sys
import threading
import time

from irscope_child_source import error_info, source_info, strip_reproducer  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
from irscope_child_globals import used_globals  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
from irscope_child_launch import launch_info, patch_jit_run  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
from irscope_child_record import (  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
    Record, by_name, jsonable, now, stage_files, target_text, tools_dir, versions, write_json_atomic)
from irscope_load_reports import patch_init_handles  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

SPOOL = os.environ.get("IRSCOPE_SPOOL", "")
MODE = os.environ.get("IRSCOPE_MODE", "auto")  # "auto", "gpu" or "compile-only"
TARGET = os.environ.get("IRSCOPE_TARGET", "")

# One compile at a time per process: fd 2 is redirected around each compile to
# catch the C++ pass dumps, and a process has only one fd 2.
_LOCK = threading.RLock()
_STATE = threading.local()
_SEQ = [0]
_INSTALLED = [False]
# Whether this process's compiles print Triton's remarks: "recorded", "off"
# (``irscope run --no-remarks``) or "unsupported" (a Triton before 3.6); set with the patch.
_REMARKS = ["unsupported"]


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


def _capture_compile(original, src, target, options, args, kwargs):
    if getattr(_STATE, "record", None) is not None:  # nested: not a new kernel
        return original(src, target, options, *args, **kwargs)
    with _LOCK:
        _SEQ[0] += 1
        rec = Record(_SEQ[0], SPOOL)
        os.makedirs(rec.dir_tmp, exist_ok=True)
        os.makedirs(rec.cache_dir, exist_ok=True)
        saved_cache = os.environ.get("TRITON_CACHE_DIR")
        os.environ["TRITON_CACHE_DIR"] = rec.cache_dir
        started = now()
        try:  # what the parent needs if this process dies inside the compile
            write_json_atomic(os.path.join(rec.dir_tmp, "progress.json"),
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
        return {"files": stage_files(kernel, os.environ["TRITON_CACHE_DIR"])}
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
            "target": target_text(target),
            "target_full": jsonable(target),
            "signature": jsonable(getattr(src, "signature", None)),
            "constexprs": by_name(getattr(src, "constexprs", getattr(src, "constants", None)), names),
            "attrs": by_name(getattr(src, "attrs", None), names),
            "options": jsonable(options),
            "versions": versions(),
            "host": socket.gethostname(),
            "argv": list(sys.argv),
            "tools_dir": tools_dir(),
            "cache_dir": rec.cache_dir,
            "remarks": _REMARKS[0],
        }
    )
    return meta


def _write_record(rec, src, target, options, kernel, error, started, elapsed, exact=None):
    if kernel is not None:
        target = getattr(kernel.metadata, "target", target)
    meta = _base_meta(rec, src, target, options, started)
    meta.update(
        {
            "seconds": elapsed,
            "stages": rec.stages,
            "files": stage_files(kernel, rec.cache_dir),
            "hash": getattr(kernel, "hash", None),
            "error": error_info(error) if error is not None else None,
            "exact": exact,
            "fake_timing": _fake_timing(),
            "placeholder_reads": _placeholder_reads(),
            "launch": launch_info(src),
            "globals": _globals_info(src),
            "env": {k: v for k, v in os.environ.items() if k.startswith(("TRITON_", "MLIR_", "LLVM_", "USE_IR_LOC"))},
        }
    )
    write_json_atomic(os.path.join(rec.dir_tmp, "meta.json"), meta)
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
        patch_jit_run()
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
        patch_init_handles(ck, MODE == "gpu")
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
