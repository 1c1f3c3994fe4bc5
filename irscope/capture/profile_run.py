"""Run a script again under a GPU profiler, for ``irscope run --profile``.

Nsight Compute (``ncu``) when it is on PATH: per-SASS-instruction samples with stall
reasons, of the first N launches of the kernels the capture saw (``-k`` on their names,
``-c N``). Otherwise Proton's PC sampling (Triton's own profiler): per-line samples of
every launch. The profiled run is a plain run of the script (no capture hook), so the
profiler's overhead never touches the capture; the capture's SASS check then proves
that the code profiled is the code captured.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

from irscope.capture.ncu_tool import find_ncu
from irscope.capture.session import CHILD_DIR, check_python
from irscope.errors import IrscopeError

NCU = "ncu"
PROTON = "proton"
DEFAULT_LAUNCHES = 10
# ncu's own options: every section (source counters need it), the source imported into
# the report, the GPU's clocks left as they are (a shared or lent GPU's settings are
# not ours to change).
NCU_FLAGS = ("--set", "full", "--import-source", "yes", "--clock-control", "none")
LOG_TAIL = 2000
# Variables that would make the profiled run differ from a plain one.
CLEARED = ("TRITON_INTERPRET", "TRITON_KERNEL_OVERRIDE", "TRITON_DISABLE_LINE_INFO")


@dataclass(frozen=True)
class ProfilerRun:
    """What one profiled run of the script left: the profiler's file and its stamps."""

    tool: str  # "ncu" | "proton"
    output: str  # the .ncu-rep report or the .hatchet tree
    gpu: str | None
    tool_version: str | None
    date: str  # when the run began (UTC, ISO 8601)
    seconds: float
    log: str  # the tail of the profiler's and the script's output


def choose_profiler() -> str:
    """``ncu`` when Nsight Compute's command line is on PATH, else Proton."""
    return NCU if find_ncu() else PROTON


def gpu_present() -> bool:
    """Whether this machine shows an NVIDIA GPU (its driver's device node, or
    ``nvidia-smi -L`` naming one): a profile needs one, a capture does not."""
    if os.path.exists("/dev/nvidiactl"):
        return True
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        p = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and "GPU" in p.stdout


def ncu_kernel_filter(kernels: list[str]) -> str:
    """ncu's ``-k`` value that matches exactly these kernel (function) names."""
    names = sorted(set(kernels))
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"


def ncu_command(ncu: str, python: str, script: str, script_args: list[str], kernels: list[str], launches: int,
                report_stem: str) -> list[str]:
    """The ``ncu`` command line that profiles the script's first ``launches`` launches
    of ``kernels`` into ``report_stem.ncu-rep``."""
    return [ncu, *NCU_FLAGS, "-k", ncu_kernel_filter(kernels), "-c", str(launches), "-f", "-o", report_stem,
            python, script, *script_args]


def gpu_name() -> str | None:
    """The first GPU's name, from ``nvidia-smi`` (None without it)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        p = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                           timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = p.stdout.strip().splitlines()[:1]
    return first[0].strip() if p.returncode == 0 and first else None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for key in CLEARED:
        env.pop(key, None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(cmd: list[str], what: str) -> tuple[str, float]:
    """Run ``cmd`` (output kept); its output's tail and seconds. IrscopeError (one
    line) when it cannot start or exits non-zero."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env())
    except OSError as exc:
        raise IrscopeError(f"{what}: cannot start {cmd[0]}: {exc}") from None
    tail = p.stdout[-LOG_TAIL:]
    if p.returncode != 0:
        raise IrscopeError(f"{what} exited with code {p.returncode}: {failure_line(p.stdout)}")
    return tail, time.monotonic() - t0


def profile_with_ncu(script: str, script_args: list[str], python: str | None, kernels: list[str],
                     launches: int, workdir: str) -> ProfilerRun:
    """Profile the script's first ``launches`` launches of ``kernels`` with Nsight Compute."""
    exe = check_python(python)
    ncu = find_ncu()
    if ncu is None:
        raise IrscopeError("no ncu on PATH (Nsight Compute's command line)")
    stem = os.path.join(workdir, "profile")
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    log, seconds = _run(ncu_command(ncu, exe, script, script_args, kernels, launches, stem), "the script under ncu")
    report = stem + ".ncu-rep"
    if not os.path.exists(report):
        # ncu exits 0 when its filter matched no launch ("No kernels were profiled").
        raise IrscopeError(f"ncu profiled no launch of {', '.join(sorted(set(kernels)))} (ncu: "
                           f"{failure_line(log)})")
    # The report's own stamps (GPU, version) are read when it is exported.
    return ProfilerRun(NCU, report, gpu_name(), None, date, seconds, log)


def profile_with_proton(script: str, script_args: list[str], python: str | None, workdir: str) -> ProfilerRun:
    """Profile every launch of the script with Proton's PC sampling."""
    exe = check_python(python)
    stem = os.path.join(workdir, "profile")
    info_path = os.path.join(workdir, "proton_info.json")
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    child = os.path.join(CHILD_DIR, "irscope_proton.py")
    log, seconds = _run([exe, child, stem, info_path, script, *script_args], "the script under Proton")
    hatchet = stem + ".hatchet"
    if not os.path.exists(hatchet):
        raise IrscopeError(f"Proton wrote no profile ({failure_line(log)})")
    info: dict = {}
    try:
        with open(info_path) as f:
            info = json.load(f)
    except (OSError, ValueError):
        pass  # the stamps stay unknown; the samples are what matters
    version = info.get("triton")
    return ProfilerRun(PROTON, hatchet, info.get("gpu") or gpu_name(), f"Triton {version}" if version else None,
                       date, seconds, log)


def failure_line(text: str) -> str:
    """The line that says why: ncu's first ``==ERROR==`` (e.g. no permission to read the
    GPU's counters), else the output's last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("==ERROR==")]
    return errors[0] if errors else (lines[-1] if lines else "no output")
