"""Run a script in a child process with the capture hook, and stream its kernels.

The child (any Python with Triton: ``--python``) writes records into a private
spool folder; this side ingests each finished record while the script goes on,
and hands the resulting CapturedKernel to a sink (the bundle writer). A crash of
the script never takes irscope down, and Ctrl-C keeps every finished kernel.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import irscope
from irscope.capture.child.irscope_fake_driver import parse_target
from irscope.capture.ingest import read_record
from irscope.vocab.records import CapturedKernel, RunInfo
from irscope.errors import IrscopeError

CHILD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child")
BOOTSTRAP = os.path.join(CHILD_DIR, "irscope_bootstrap.py")
EXIT_SCRIPT_FAILED = 3
EXIT_NO_TRITON = 4
POLL_S = 0.05

# Switches the capture turns on (all part of Triton's cache key, hence the
# private cache and TRITON_ALWAYS_COMPILE).
DUMP_SWITCHES = {"TRITON_ALWAYS_COMPILE": "1", "MLIR_ENABLE_DUMP": "1", "MLIR_ENABLE_TIMING": "1",
                 "LLVM_ENABLE_TIMING": "1"}
LLVM_SWITCHES = {"LLVM_IR_ENABLE_DUMP": "1"}
# A user's own dump settings would split or steal the stream we read.
CLEARED = ("MLIR_DUMP_PATH", "TRITON_KERNEL_DUMP", "TRITON_KERNEL_OVERRIDE", "TRITON_DISABLE_LINE_INFO", "TRITON_INTERPRET")


@dataclass(slots=True)
class CaptureRequest:
    """What to run and how."""

    script: str
    script_args: list[str] = field(default_factory=list)
    python: str | None = None
    targets: list[str] = field(default_factory=list)  # empty: GPU if present, else sm_90
    llvm_passes: bool = False
    exact_links: bool = False
    extra_env: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class TargetOutcome:
    """How one child run (one target) ended."""

    target: str | None
    exit_code: int
    mode: str = ""
    versions: dict = field(default_factory=dict)
    captured: int = 0
    script_error: dict | None = None
    interrupted: bool = False


def normalise_target(text: str) -> str:
    """Validate a ``--target`` and give its canonical name (sm_90, gfx942)."""
    try:
        backend, arch, _ = parse_target(text)
    except ValueError as exc:
        raise IrscopeError(str(exc)) from None
    if backend == "cuda":
        if arch < 50 or arch > 130:
            raise IrscopeError(f"unknown target {text!r}: NVIDIA targets run from sm_50 to sm_121")
        return f"sm_{arch}"
    return str(arch)


def check_python(python: str | None) -> str:
    """The interpreter to run the script with; a clear error if it is not one."""
    exe = python or sys.executable
    path = shutil.which(exe) if os.sep not in exe else exe
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise IrscopeError(f"--python {exe}: not an executable Python interpreter")
    return path


def run_info(req: CaptureRequest, argv: list[str]) -> RunInfo:
    """The run's provenance record (completed later with versions per capture)."""
    env = {k: v for k, v in _child_env(req, "", None).items() if k.startswith(("TRITON_", "MLIR_", "LLVM_", "IRSCOPE_MODE"))}
    return RunInfo(
        command=argv,
        script=os.path.abspath(req.script),
        cwd=os.getcwd(),
        host=socket.gethostname(),
        mode="compile-only" if req.targets else "auto",
        targets=list(req.targets),
        llvm_passes=req.llvm_passes,
        irscope_version=irscope.__version__,
        started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        python_executable=check_python(req.python),
        env={k: v for k, v in env.items() if k != "TRITON_CACHE_DIR"},
    )


def _child_env(req: CaptureRequest, spool: str, target: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for key in CLEARED:
        env.pop(key, None)
    env.update(DUMP_SWITCHES)
    if req.llvm_passes:
        env.update(LLVM_SWITCHES)
    if req.exact_links:
        env["IRSCOPE_EXACT_LINKS"] = "1"
    env.update(req.extra_env)
    env["TRITON_CACHE_DIR"] = os.path.join(spool, "cache")
    env["IRSCOPE_SPOOL"] = spool
    env["IRSCOPE_MODE"] = "compile-only" if target else "auto"
    env["IRSCOPE_TARGET"] = target or "sm_90"
    env["PYTHONPATH"] = os.pathsep.join([CHILD_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Terminate(Exception):
    """Raised in the main thread on SIGTERM, handled like Ctrl-C."""


def run_capture(
    req: CaptureRequest,
    on_capture: Callable[[CapturedKernel], None],
    on_driver: Callable[[dict], None] = lambda d: None,
    on_output: Callable[[str], None] = lambda line: None,
    on_status: Callable[[str], None] = lambda s: None,
) -> list[TargetOutcome]:
    """Run the script once per target (once in total with no ``--target``).

    Every finished kernel goes to ``on_capture`` as soon as it is ingested;
    driver resource reports to ``on_driver``; the script's output lines to
    ``on_output``. Stops early (returning the outcomes so far, the last one
    marked ``interrupted``) on Ctrl-C or SIGTERM.
    """
    python = check_python(req.python)
    if not os.path.isfile(req.script):
        raise IrscopeError(f"{req.script}: no such script")
    outcomes: list[TargetOutcome] = []
    previous = signal.getsignal(signal.SIGTERM)

    def _on_term(signum, frame):
        raise _Terminate()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_term)
    try:
        for target in req.targets or [None]:
            outcome = _run_one(req, python, target, on_capture, on_driver, on_output, on_status)
            outcomes.append(outcome)
            if outcome.interrupted:
                break
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
    return outcomes


def _run_one(req, python, target, on_capture, on_driver, on_output, on_status) -> TargetOutcome:
    spool = tempfile.mkdtemp(prefix="irscope-spool-")
    outcome = TargetOutcome(target=target, exit_code=0)
    seen: set[str] = set()
    duplicates: set[tuple] = set()
    try:
        env = _child_env(req, spool, target)
        cmd = [python, BOOTSTRAP, req.script, *req.script_args]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        reader = threading.Thread(target=_pump, args=(proc.stdout, on_output), daemon=True)
        reader.start()
        try:
            while True:
                done = proc.poll() is not None
                _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status)
                if done:
                    break
                time.sleep(POLL_S)
        except (KeyboardInterrupt, _Terminate):
            outcome.interrupted = True
            _stop(proc)
            _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status)
        reader.join(timeout=5)
        outcome.exit_code = proc.returncode if proc.returncode is not None else -1
        _read_process_info(spool, outcome)
        err_path = os.path.join(spool, "script_error.json")
        if os.path.exists(err_path):
            with open(err_path) as f:
                outcome.script_error = json.load(f)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    return outcome


def _stop(proc: subprocess.Popen) -> None:
    """Ask the child to stop (SIGINT, like the terminal did), then insist."""
    for sig, wait in ((signal.SIGINT, 5), (signal.SIGTERM, 3), (signal.SIGKILL, 3)):
        if proc.poll() is not None:
            return
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        except OSError:
            return


def _pump(stream, on_output) -> None:
    for raw in iter(stream.readline, b""):
        on_output(raw.decode("utf-8", "replace").rstrip("\n"))
    stream.close()


def _read_process_info(spool: str, outcome: TargetOutcome) -> None:
    path = os.path.join(spool, "process.json")
    if os.path.exists(path):
        with open(path) as f:
            info = json.load(f)
        outcome.mode = info.get("mode", "")
        outcome.versions = info.get("versions", {})


def _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status) -> None:
    """Ingest every finished record (and driver report) not seen yet."""
    try:
        names = sorted(os.listdir(spool), key=_record_order)
    except OSError:
        return
    for name in names:
        if name in seen or name.endswith(".tmp"):
            continue
        path = os.path.join(spool, name)
        if name.startswith("rec-") and os.path.isdir(path):
            seen.add(name)
            try:
                kernel = read_record(path)
            except (OSError, ValueError, KeyError) as exc:
                on_status(f"skipped an unreadable record {name}: {exc}")
                continue
            # torch.compile compiles in a worker, then again (cache bypassed) in
            # the main process: the same compile twice is one capture.
            key = (kernel.hash, kernel.target, kernel.error is None)
            if kernel.hash and key in duplicates:
                continue
            duplicates.add(key)
            on_capture(kernel)
            outcome.captured += 1
            shutil.rmtree(path, ignore_errors=True)
            cache = os.path.join(spool, "cache", name[len("rec-") :])
            shutil.rmtree(cache, ignore_errors=True)
        elif name.startswith("drv-") and name.endswith(".json"):
            seen.add(name)
            try:
                with open(path) as f:
                    on_driver(json.load(f))
            except (OSError, ValueError):
                pass


def _record_order(name: str):
    # Records before driver reports: a report refers to a kernel whose record
    # is already on disk, so it must be stored first.
    parts = name.split("-")
    rank = 0 if name.startswith("rec-") else 1
    if len(parts) >= 3 and parts[-1].isdigit() and parts[-2].isdigit():
        return (rank, int(parts[-2]), int(parts[-1]))
    return (rank, 0, 0)
