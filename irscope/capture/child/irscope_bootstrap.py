"""Entry point of the captured script's process: ``python irscope_bootstrap.py SCRIPT ARGS...``.

Runs SCRIPT as ``__main__`` the way ``python SCRIPT`` would, after irscope's hook
is in place (sitecustomize installed it). In compile-only mode, tensors are fake
(torch's FakeTensorMode: shapes, dtypes and strides, no data) and Triton's driver
is a stand-in, so ``kernel[grid](...)`` compiles for the chosen target and skips
the launch (irscope_fake_tensors.py says what those tensors can and cannot do). Standard library only, like the hook.

A failure of the script is written to ``IRSCOPE_SPOOL/script_error.json`` (one
line for the user, plus the traceback), so the parent can report it and keep
every kernel captured before it.
"""

import json
import os
import runpy
import sys
import traceback

EXIT_SCRIPT_FAILED = 3
EXIT_NO_TRITON = 4
EXIT_PARENT_GONE = 137


def _report(kind, exc, script):
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    script_abs = os.path.abspath(script)
    for frame in reversed(tb):  # the innermost frame in the user's script
        if os.path.abspath(frame.filename) == script_abs:
            where = "%s:%d" % (os.path.basename(frame.filename), frame.lineno or 0)
            break
    if isinstance(exc, SyntaxError) and exc.filename:
        where = "%s:%s" % (os.path.basename(exc.filename), exc.lineno)
    lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip() and set(ln.strip()) - {"^", "~"}]
    # Triton's CompilationError starts with "at 2:20:" and the source snippet;
    # its reason is the last line.
    message = (lines[-1] if lines[0].endswith(":") else lines[0]) if lines else ""
    chain, seen = exc, 0
    while chain is not None and seen < 10:  # fake tensors cannot give values
        if "DataDependent" in type(chain).__name__ or "FakeTensor" in str(chain)[:2000]:
            kind = "data-dependent"
            break
        chain, seen = chain.__cause__ or chain.__context__, seen + 1
    info = {
        "kind": kind,
        "type": type(exc).__name__,
        "message": message[:500],
        "where": where,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-20000:],
    }
    spool = os.environ.get("IRSCOPE_SPOOL")
    if spool:
        _write_json(os.path.join(spool, "script_error.json"), info)


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _current_target(record):
    """``sm_90``, ``gfx942``: what the active driver compiles for ("" if it cannot say)."""
    try:
        return record.target_text(sys.modules["triton.runtime.driver"].driver.active.get_current_target())
    except Exception:  # any error of Triton's driver probe: the target stays unknown
        return ""


def _die_with_parent():
    """End this process when irscope's process ends (``kill -9`` of irscope must not
    leave a compile running and its spool growing). Linux: the kernel sends SIGKILL
    when the parent dies (``PR_SET_PDEATHSIG``); elsewhere, or with
    ``IRSCOPE_PARENT_WATCH=thread``, a daemon thread watches the parent's pid."""
    try:
        parent = int(os.environ.get("IRSCOPE_PARENT_PID", ""))
    except ValueError:
        return
    how = os.environ.get("IRSCOPE_PARENT_WATCH", "")
    if how == "off":
        return
    if how != "thread" and sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # PR_SET_PDEATHSIG
                if os.getppid() != parent:  # the parent died before prctl
                    os._exit(EXIT_PARENT_GONE)
                return
        except Exception:  # no prctl here (not Linux, no libc): the watcher thread below does it
            pass
    import threading
    import time

    def watch():
        while True:
            if os.getppid() != parent:
                os._exit(EXIT_PARENT_GONE)
            time.sleep(0.2)

    threading.Thread(target=watch, name="irscope-parent-watch", daemon=True).start()


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: irscope_bootstrap.py SCRIPT [ARGS...]\n")
        return 2
    _die_with_parent()
    script = argv[1]
    try:
        import triton  # noqa: F401  (also triggers the hook's patching)
    except Exception as exc:  # a Triton that fails to import, whatever the error: reported to the parent
        _report("no-triton", exc, script)
        return EXIT_NO_TRITON
    sys.argv = argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    import irscope_child_hook  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path
    import irscope_child_record  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

    compile_only = irscope_child_hook.resolved_mode() == "compile-only"
    if compile_only:
        # For scripts: tensors hold no values, so a result check can only fail.
        os.environ["IRSCOPE_COMPILE_ONLY"] = "1"
        import warnings

        # Triton reads data_ptr() of fake tensors to check alignment (it is 0,
        # i.e. aligned, as real allocations are); torch warns about each read.
        warnings.filterwarnings("ignore", message=".*data pointer of FakeTensor.*")
    _write_json(os.path.join(os.environ.get("IRSCOPE_SPOOL", "."), "process.json"), {
        "mode": irscope_child_hook.resolved_mode(),
        "target": _current_target(irscope_child_record),
        "versions": irscope_child_record.versions(),
        "python_executable": sys.executable,
    })
    try:
        if compile_only:
            import irscope_fake_tensors  # type: ignore[import-not-found]  # a sibling script, on the child's sys.path

            ctx = irscope_fake_tensors.compile_only_context(irscope_child_hook.TARGET)
        else:
            ctx = None
        if ctx is None:
            runpy.run_path(script, run_name="__main__")
        else:
            with ctx:
                runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None or code == 0:
            return 0
        if not isinstance(code, int):
            sys.stderr.write("%s\n" % code)
            code = 1
        _report("exit", exc, script)
        return code
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the user's script failed: reported to the parent, not a traceback of ours
        _report("exception", exc, script)
        return EXIT_SCRIPT_FAILED
    return 0


def _mark_done(code):
    """Tell the parent the script has ended: a crash after this is the interpreter's
    shutdown (a native thread some library left running, such as torch's autograd
    device thread), which loses nothing the script compiled."""
    spool = os.environ.get("IRSCOPE_SPOOL")
    if spool:
        _write_json(os.path.join(spool, "script_done.json"), {"exit_code": code})


if __name__ == "__main__":
    _code = main(sys.argv)
    _mark_done(_code)
    sys.exit(_code)
