"""irscope installed into a kernel author's own environment.

A fresh venv gets a Triton and torch first (the user's stack: Triton 3.8, a
version none of the project's own environments uses), then irscope's wheel,
built from this checkout. Installing it must pull only the viewer's
dependencies and leave that Triton and torch exactly as they were; `irscope
run` in that venv must then capture with that venv's Triton.

Slow (about a minute and a half: the installs of Triton and torch dominate).
IRSCOPE_TEST_USER_TRITON picks the user's Triton version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
USER_TRITON = os.environ.get("IRSCOPE_TEST_USER_TRITON", "3.8.0")
USER_TORCH = os.environ.get("IRSCOPE_TORCH", "torch==2.13.0")

pytestmark = pytest.mark.slow


def _base_python() -> str:
    """The interpreter this venv was made from (a fresh venv must not inherit .venv)."""
    base = getattr(sys, "_base_executable", None)
    if base and os.path.exists(base) and Path(base).resolve() != Path(sys.executable).resolve():
        return base
    return shutil.which("python3") or sys.executable


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, **kw)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def _freeze(python: Path) -> dict[str, str]:
    out = _run([python, "-m", "pip", "list", "--format", "json"]).stdout
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def _wheel(tmp: Path) -> Path:
    """irscope's wheel, built from a copy of the package (the checkout stays untouched)."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "irscope", src / "irscope", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp / "wheel"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", src, "-w", out])
    (wheel,) = out.glob("irscope-*.whl")
    return wheel


def test_install_into_a_venv_with_its_own_triton(tmp_path):
    wheel = _wheel(tmp_path)
    venv = tmp_path / "user-venv"
    _run([_base_python(), "-m", "venv", venv])
    py = venv / "bin" / "python"
    # The user's environment, as they had it before hearing of irscope (--no-compile:
    # byte-compiling torch's thousands of files would be most of this test's time).
    _run([py, "-m", "pip", "install", "-q", "--no-compile", USER_TORCH, f"triton=={USER_TRITON}"])
    before = _freeze(py)
    assert before["triton"] == USER_TRITON

    install = _run([py, "-m", "pip", "install", wheel])
    log = install.stdout + install.stderr
    after = _freeze(py)
    assert after["triton"] == before["triton"] and after["torch"] == before["torch"], log
    for name in ("triton", "torch", "nvidia", "numpy"):
        assert f"Uninstalling {name}" not in log, log
    added = set(after) - set(before)
    assert "irscope" in added and {"rich", "textual"} <= added, added
    # Only the viewer's dependencies (and theirs) arrive: nothing that captures.
    assert not {n for n in added if n.startswith(("triton", "torch", "nvidia"))}, added
    for name, version in before.items():  # nothing the user had was replaced, except to meet networkx>=3
        assert after[name] == version or name == "networkx", (name, version, after[name])

    irscope = venv / "bin" / "irscope"
    assert _run([irscope, "--version"]).stdout.strip().endswith(after["irscope"])
    where = _run([py, "-c", "import irscope; print(irscope.__file__)"], cwd=tmp_path).stdout.strip()
    assert Path(where).resolve().is_relative_to(venv.resolve()), where

    bundle = tmp_path / "mine.irscope"
    script = tmp_path / "vector_add.py"
    shutil.copy(ROOT / "sample_kernels" / "vector_add.py", script)
    _run([irscope, "run", script, "-q", "-o", bundle], cwd=tmp_path, timeout=300)
    rows = json.loads(_run([irscope, "ls", bundle, "--json"], cwd=tmp_path).stdout)
    captures = rows if isinstance(rows, list) else rows.get("captures", rows)
    assert len(captures) >= 1
    assert {c["triton_version"] for c in captures} == {USER_TRITON}
    assert all(c["error"] is None for c in captures)
    # irscope's own Triton-free viewer works there too.
    text = _run([irscope, "cat", bundle, captures[0]["kernel"], "--stage", "ttir"], cwd=tmp_path).stdout
    assert "tt.func" in text
