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
from irscope.capture.ingest import read_record
from irscope.compiler.records import CapturedKernel, RunInfo
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
    remarks: bool = True  # Triton's remarks (MLIR_ENABLE_DIAGNOSTICS=remarks, 3.6+); --no-remarks turns them off


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
    signal: int | None = None  # the signal that ended the child (SIGKILL, SIGABRT...), if one did
    hook_ran: bool = False  # the child's bootstrap reported (process.json): it was a Python with Triton
    recovered: int = 0  # compiles the child died in, kept as failed captures
    device_target: str = ""  # the target the child compiled for (the GPU's, or the compile-only one)
    refused: list[dict] = field(default_factory=list)  # launches Triton refused (OutOfResources), as reported
    placeholder_reads: int = 0  # tensor values read as placeholders (compile-only, after the first compile)
    placeholder_first: str = ""  # "file:line" of the first such read
    shutdown_signal: int | None = None  # the script ended, then the interpreter crashed on its way out


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
    env["IRSCOPE_REMARKS"] = "1" if req.remarks else "0"  # the child sets the variable where its Triton takes it
    env.update(req.extra_env)
    env["TRITON_CACHE_DIR"] = os.path.join(spool, "cache")
    env["IRSCOPE_SPOOL"] = spool
    env["IRSCOPE_MODE"] = "compile-only" if target else "auto"
    env["IRSCOPE_TARGET"] = target or "sm_90"
    env["PYTHONPATH"] = os.pathsep.join([CHILD_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONUNBUFFERED"] = "1"
    env["IRSCOPE_PARENT_PID"] = str(os.getpid())  # the child dies with us (bootstrap)
    return env


SPOOL_PREFIX = "irscope-spool-"
# After SIGINT, how long the child may take to stop before SIGKILL. Short: a child
# in native compiler code cannot act on SIGINT, and nothing is lost by the kill
# (the compile in flight is recovered from its unfinished record).
STOP_GRACE_S = 0.3


def spool_owner(name: str) -> int | None:
    """The pid in a spool folder's name (``irscope-spool-<pid>-xxxx``), or None."""
    if not name.startswith(SPOOL_PREFIX):
        return None
    head = name[len(SPOOL_PREFIX):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


def clean_stale_spools(tmp: str | None = None) -> list[str]:
    """Remove the spools of irscope runs that died without cleaning up (``kill -9``):
    folders named with an owner pid that no longer runs. Returns what was removed."""
    tmp = tmp or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        pid = spool_owner(name)
        if pid is None or pid == os.getpid() or _pid_alive(pid):
            continue
        path = os.path.join(tmp, name)
        try:
            if not os.path.isdir(path) or os.path.islink(path) or os.stat(path).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


class _Stopper:
    """Stops the child's process group: SIGINT (as a terminal's Ctrl-C would), then
    SIGKILL after STOP_GRACE_S, for a child stuck in native compiler code that
    cannot act on SIGINT. Called from a signal handler, so it never blocks."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.requested = False
        self.timer: threading.Timer | None = None

    def attach(self, proc: subprocess.Popen) -> None:
        self.proc, self.timer = proc, None
        if self.requested:  # the signal came while the child was being started
            self._fire()

    def request(self) -> None:
        self.requested = True
        if self.timer is None:
            self._fire()

    def _fire(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None or self.timer is not None:
            return
        _signal_group(proc, signal.SIGINT)
        self.timer = threading.Timer(STOP_GRACE_S, _signal_group, (proc, signal.SIGKILL))
        self.timer.daemon = True
        self.timer.start()

    def finish(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except OSError:
        try:
            proc.send_signal(sig)
        except OSError:
            pass


def run_capture(
    req: CaptureRequest,
    on_capture: Callable[[CapturedKernel], None],
    on_driver: Callable[[dict], None] = lambda d: None,
    on_output: Callable[[str], None] = lambda line: None,
    on_status: Callable[[str], None] = lambda s: None,
    on_refused: Callable[[dict], None] = lambda r: None,
) -> list[TargetOutcome]:
    """Run the script once per target (once in total with no ``--target``).

    Every finished kernel goes to ``on_capture`` as soon as it is ingested;
    driver resource reports to ``on_driver``; launches Triton refused to
    ``on_refused``; the script's output lines to ``on_output``. Stops early (returning the outcomes so far, the last one
    marked ``interrupted``) on Ctrl-C or SIGTERM.
    """
    python = check_python(req.python)
    if not os.path.isfile(req.script):
        raise IrscopeError(f"{req.script}: no such script")
    outcomes: list[TargetOutcome] = []
    for path in clean_stale_spools():
        on_status(f"removed the spool of an irscope run that was killed: {path}")
    stopper = _Stopper()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main_thread else {}

    def _on_stop(signum, frame):
        # Never raises: a KeyboardInterrupt in the middle of storing a kernel
        # would lose it. The loop sees the request and stops.
        stopper.request()

    for sig in previous:
        signal.signal(sig, _on_stop)
    try:
        targets: list[str | None] = list(req.targets) or [None]  # none named: the child picks
        for target in targets:
            if stopper.requested:  # Ctrl-C between two targets' children
                if outcomes:
                    outcomes[-1].interrupted = True
                break
            outcome = _run_one(req, python, target, on_capture, on_driver, on_output, on_status, stopper, on_refused)
            outcomes.append(outcome)
            if outcome.interrupted:
                break
    finally:
        stopper.finish()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return outcomes


def _run_one(req, python, target, on_capture, on_driver, on_output, on_status, stopper=None,
             on_refused=lambda r: None) -> TargetOutcome:
    stopper = stopper or _Stopper()

    def refused(report: dict) -> None:
        outcome.refused.append(report)
        on_refused(report)

    spool = tempfile.mkdtemp(prefix=f"{SPOOL_PREFIX}{os.getpid()}-")
    outcome = TargetOutcome(target=target, exit_code=0)
    seen: set[str] = set()
    duplicates: set[tuple] = set()
    try:
        env = _child_env(req, spool, target)
        cmd = [python, BOOTSTRAP, req.script, *req.script_args]
        # Its own process group: a terminal's Ctrl-C reaches irscope only, which
        # stops the child's whole group (ptxas, compile workers) itself.
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                **group)
        stopper.attach(proc)
        reader = threading.Thread(target=_pump, args=(proc.stdout, on_output), daemon=True)
        reader.start()
        try:
            while True:
                done = proc.poll() is not None
                if stopper.requested:
                    outcome.interrupted = True
                    done = _wait(proc, STOP_GRACE_S + 2)
                _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status, refused)
                if done:
                    break
                time.sleep(POLL_S)
        except KeyboardInterrupt:  # not the main thread's handler: stop as for Ctrl-C
            outcome.interrupted = True
            stopper.request()
            _wait(proc, STOP_GRACE_S + 2)
            _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status, refused)
        finally:
            stopper.finish()
            if proc.poll() is None:
                _signal_group(proc, signal.SIGKILL)
                _wait(proc, 5)
            elif outcome.interrupted or proc.returncode < 0:
                # what a stopped or killed child left running in its group (a ptxas, a worker)
                _signal_group(proc, signal.SIGKILL)
        reader.join(timeout=1 if outcome.interrupted else 5)
        outcome.exit_code = proc.returncode if proc.returncode is not None else -1
        if outcome.exit_code < 0:
            outcome.signal = -outcome.exit_code
            _after_the_end(spool, outcome)
        _read_process_info(spool, outcome)
        _recover_unfinished(spool, outcome, on_capture, on_status)
        err_path = os.path.join(spool, "script_error.json")
        if os.path.exists(err_path):
            with open(err_path) as f:
                outcome.script_error = json.load(f)
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    return outcome


def _after_the_end(spool: str, outcome: TargetOutcome) -> None:
    """A signal that came after the script ended (the bootstrap's ``script_done.json``)
    is not the script's: every kernel was captured, so the run keeps the script's own
    exit code and the signal is only noted."""
    path = os.path.join(spool, "script_done.json")
    if outcome.interrupted or not os.path.exists(path):
        return
    try:
        with open(path) as f:
            code = json.load(f).get("exit_code")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(code, int):
        outcome.shutdown_signal, outcome.signal, outcome.exit_code = outcome.signal, None, code


def _wait(proc: subprocess.Popen, seconds: float) -> bool:
    """Wait for the child to end; whether it did."""
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def signal_name(signum: int | None) -> str:
    """``SIGKILL`` for 9."""
    if signum is None:
        return f"signal {signum}"
    try:
        return signal.Signals(signum).name
    except (ValueError, TypeError):
        return f"signal {signum}"


def _recover_unfinished(spool, outcome, on_capture, on_status) -> None:
    """Compiles the child died in (an LLVM abort, SIGKILL, Ctrl-C): each unfinished
    record becomes a failed capture with every stage that finished before."""
    from irscope.capture.ingest import read_unfinished_record

    if outcome.interrupted:
        kind = "interrupted"
    elif outcome.signal in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        kind = "killed"
    elif outcome.signal is not None:
        kind = "crashed"  # SIGABRT (an LLVM assertion), SIGSEGV...
    else:
        kind = "ended"
    try:
        names = sorted(n for n in os.listdir(spool) if n.startswith("rec-") and n.endswith(".tmp"))
    except OSError:
        return
    for name in names:
        path = os.path.join(spool, name)
        if not os.path.exists(os.path.join(path, "progress.json")):
            continue
        try:
            kernel = read_unfinished_record(path, kind, signal_name(outcome.signal) if outcome.signal else None)
        except (OSError, ValueError, KeyError) as exc:
            on_status(f"skipped an unreadable unfinished record {name}: {exc}")
            continue
        on_capture(kernel)
        outcome.captured += 1
        outcome.recovered += 1


def _pump(stream, on_output) -> None:
    for raw in iter(stream.readline, b""):
        on_output(raw.decode("utf-8", "replace").rstrip("\n"))
    stream.close()


def _read_process_info(spool: str, outcome: TargetOutcome) -> None:
    path = os.path.join(spool, "process.json")
    if os.path.exists(path):
        with open(path) as f:
            info = json.load(f)
        outcome.hook_ran = True
        outcome.mode = info.get("mode", "")
        outcome.versions = info.get("versions", {})
        outcome.device_target = info.get("target") or ""
    path = os.path.join(spool, "values.json")
    if os.path.exists(path):
        try:
            with open(path) as f:
                values = json.load(f)
        except (OSError, ValueError):  # a child killed mid-write leaves the last complete file or none
            values = {}
        outcome.placeholder_reads = int(values.get("reads", 0))
        outcome.placeholder_first = str(values.get("first", ""))


def _sweep(spool, seen, duplicates, outcome, on_capture, on_driver, on_status, on_refused) -> None:
    """Ingest every finished record (and driver or refusal report) not seen yet."""
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
        elif name.startswith(("drv-", "refused-")) and name.endswith(".json"):
            seen.add(name)
            try:
                with open(path) as f:
                    report = json.load(f)
            except (OSError, ValueError):
                continue
            (on_driver if name.startswith("drv-") else on_refused)(report)


def _record_order(name: str):
    # Records before driver and refusal reports: a report refers to a kernel whose record
    # is already on disk, so it must be stored first.
    parts = name.split("-")
    rank = 0 if name.startswith("rec-") else 1
    if len(parts) >= 3 and parts[-1].isdigit() and parts[-2].isdigit():
        return (rank, int(parts[-2]), int(parts[-1]))
    return (rank, 0, 0)
