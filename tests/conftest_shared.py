"""Captures made once per test session and read by several test files.

Compiling the sample kernels under three Tritons for two targets takes minutes; the
coverage test, the version diffs and the capture-level pairing all read the same
captures, so they share one bundle. Under pytest-xdist every worker is its own process
with its own session fixtures, so the bundle lives in the session's common temporary
folder (the workers' base folders are its children) and each ``irscope run`` that
fills it runs under a file lock: the first worker to need a step runs it, the others
wait for it or take a step nobody is running yet, so two workers asking at once split
the work instead of doing it twice.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from setup_guard import setup_missing

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venvs"
SAMPLE_NAMES = tuple(sorted(p.stem for p in (ROOT / "sample_kernels").glob("*.py")))
VERSION_PYTHONS = {"3.2": VENVS / "triton-3.2" / "bin" / "python", "3.6": None,
                   "3.9": VENVS / "triton-3.9" / "bin" / "python"}
"""The Tritons of the version tests: 3.6 is the one installed in .venv (no --python)."""


@dataclass(frozen=True)
class Step:
    """One ``irscope run SCRIPT OPTIONS`` that adds captures to a shared bundle
    (``-o BUNDLE -q`` is added after the script)."""

    script: str
    options: tuple[str, ...]
    timeout: int = 1200


def _session_folder(factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this session sees: the workers' base temporary
    folders are siblings in one folder of the session (without xdist: the base folder)."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / "shared-captures"
    folder.mkdir(exist_ok=True)
    return folder


def _run_step(step: Step, bundle: Path, done: Path, failed: Path) -> None:
    cmd = [sys.executable, "-m", "irscope", "run", step.script, "-o", str(bundle), "-q", *step.options]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=step.timeout, env=env)
    if p.returncode != 0:
        message = f"irscope {' '.join(cmd[3:])} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
        failed.write_text(message)
        raise AssertionError(message)
    done.write_text("")


def _take(step: Step, index: int, bundle: Path, *, wait: bool) -> bool:
    """Run step ``index`` unless it is done; False when ``wait`` is off and another
    worker holds it (it is running there)."""
    stem = f"{bundle}.step{index}"
    done, failed = Path(stem + ".done"), Path(stem + ".failed")
    with open(stem + ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        try:
            if failed.exists():  # failed in another worker: the same failure here, not a second attempt
                raise AssertionError(failed.read_text())
            if not done.exists():
                _run_step(step, bundle, done, failed)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return True


def shared_bundle(factory: pytest.TempPathFactory, name: str, steps: list[Step]) -> Path:
    """The bundle ``name`` filled by ``steps``, made once per session for every worker.
    Its file name carries a hash of the steps, so two different recipes never share one."""
    key = hashlib.sha256(json.dumps([[s.script, s.options, s.timeout] for s in steps]).encode()).hexdigest()[:12]
    bundle = _session_folder(factory) / f"{name}-{key}.irscope"
    pending = [i for i, step in enumerate(steps) if not _take(step, i, bundle, wait=False)]
    for i in pending:  # running in another worker: wait for it
        _take(steps[i], i, bundle, wait=True)
    return bundle


def samples_by_version(factory: pytest.TempPathFactory) -> Path:
    """Every sample kernel, compiled for sm_90 and sm_80 (in that order) by Triton 3.2,
    3.6 and 3.9: one bundle, one ``irscope run scripts/run_samples.py`` per Triton. 3.9
    removed block pointers (a clear frontend error, tested elsewhere), so its run leaves
    block_ptr_matmul out. A Triton whose venv is missing skips the tests that ask (fails
    them on CI, where scripts/setup.sh makes every venv)."""
    steps = []
    for version, python in VERSION_PYTHONS.items():
        if python is not None and not python.exists():
            setup_missing(
                f"no {python.parent.parent} (scripts/setup.sh makes it)")
        names = [n for n in SAMPLE_NAMES if not (version == "3.9" and n == "block_ptr_matmul")]
        extra = ("--python", str(python)) if python else ()
        steps.append(Step(str(ROOT / "scripts" / "run_samples.py"),
                          (*extra, "--target", "sm_90", "--target", "sm_80", "--", *names)))
    return shared_bundle(factory, "samples-by-version", steps)


@pytest.fixture(scope="session")
def version_samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundle of ``samples_by_version``."""
    return samples_by_version(tmp_path_factory)
