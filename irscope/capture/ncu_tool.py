"""Nsight Compute's command line, for reading a ``.ncu-rep`` report.

A report is a binary; ``ncu -i`` prints its pages. The source page as CSV with
SASS is what :mod:`irscope.profiles.ncu_source` parses; the raw page names the
GPU; ``ncu --version`` the tool's version. No ``ncu`` on PATH: one-line error
(export the CSV where ncu is, and import that).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from irscope.errors import IrscopeError
from irscope.profiles.ncu_source import gpu_from_raw_page, ncu_version

NCU_TIMEOUT_S = 300
#: The source export ``profile import`` reads (what to run by hand where ncu is).
SOURCE_EXPORT = ["--page", "source", "--csv", "--print-source", "sass"]  # ncu's words: its page and view names


@dataclass(frozen=True)
class NcuExport:
    """What a report gives: its source page (CSV text), the GPU and ncu's version."""

    source_csv: str
    gpu: str | None
    tool_version: str | None


def find_ncu() -> str | None:
    """The ``ncu`` executable on PATH (or ``$IRSCOPE_NCU``), None when there is none."""
    explicit = os.environ.get("IRSCOPE_NCU")
    if explicit and os.access(explicit, os.X_OK):
        return explicit
    return shutil.which("ncu")


def export_report(report: str) -> NcuExport:
    """Print a ``.ncu-rep``'s source page (SASS, CSV), raw page and ncu's version.
    :class:`IrscopeError` (one line) when ncu is missing or fails."""
    ncu = find_ncu()
    if ncu is None:
        raise IrscopeError(f"{report}: reading a .ncu-rep needs Nsight Compute's ncu on PATH; where it is, run "
                           f"`ncu -i {os.path.basename(report)} {' '.join(SOURCE_EXPORT)} > sass.csv` and import that")
    source = _run([ncu, "-i", report, *SOURCE_EXPORT], report)
    try:
        raw = _run([ncu, "-i", report, "--page", "raw", "--csv"], report)
    except IrscopeError:
        raw = ""  # the GPU's name is a stamp, not the profile: its absence is no failure
    try:
        version = ncu_version(_run([ncu, "--version"], report))
    except IrscopeError:
        version = None
    return NcuExport(source, gpu_from_raw_page(raw), version)


def _run(cmd: list[str], report: str) -> str:
    """stdout of ``cmd``; IrscopeError naming the report when it fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=NCU_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise IrscopeError(f"{report}: ncu took more than {NCU_TIMEOUT_S} s") from None
    except OSError as exc:
        raise IrscopeError(f"{report}: cannot run ncu ({exc})") from None
    if p.returncode != 0:
        why = " ".join((p.stderr or p.stdout).split())[:300] or f"exit status {p.returncode}"
        raise IrscopeError(f"{report}: ncu -i failed: {why}")
    return p.stdout
