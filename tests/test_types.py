"""mypy over irscope/ with the configuration in pyproject.toml: any type error fails the
suite (scripts/test.sh runs it, so CI does)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_reports_no_error():
    # (mypy is one of the test tools, installed with '.[test]': a missing one fails here.)
    # No paths on the command line: ``files`` in [tool.mypy] names irscope/, so this is
    # exactly what a developer's plain ``mypy`` checks.
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and re.search(r"^Success: no issues found", out, re.M), out[-6000:]


def test_type_ignores_say_why():
    """A ``# type: ignore`` names its error codes and gives its reason on the same line."""
    bare = []
    for path in sorted((ROOT / "irscope").rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "type: ignore" in line and not re.search(r"#\s*type:\s*ignore\[[\w\-, ]+\]\s+#\s*\S", line):
                bare.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bare, "\n".join(bare)
