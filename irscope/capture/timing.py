"""Pass timing reports, matched to pass snapshots: MLIR's (``MLIR_ENABLE_TIMING=1``)
and LLVM's legacy pass manager's (``LLVM_ENABLE_TIMING=1``; see
:func:`parse_llvm_timing_reports`).

Each pass manager run (one per stage) prints, when it ends::

    ===-------------------------------------------------------------------------===
                             ... Execution time report ...
    ===-------------------------------------------------------------------------===
      Total Execution Time: 0.0044 seconds

      ----Wall Time----  ----Name----
        0.0006 ( 14.1%)  ConvertTritonToTritonGPU
        0.0001 (  3.2%)  'any' Pipeline
        0.0001 (  1.7%)    Canonicalizer
        0.0000 (  0.0%)    (A) DominanceInfo
        ...
        0.0044 (100.0%)  Total

Passes appear in execution order, nested ones indented; analyses are marked
``(A)``. Passes nested in a pipeline that ran on several functions are one line
with their summed time, while the dump has one snapshot per function: that
time goes to the first of those snapshots.
"""

from __future__ import annotations

import re
from typing import Sequence

# "    0.0006 ( 14.1%)  ConvertTritonToTritonGPU"   (wall time only)
# "    0.0006 ( 14.1%)    0.0006 ( 14.1%)  Name"     (user+wall columns on some builds: last number wins)
_ENTRY = re.compile(r"^\s+(?:\d+\.\d+\s+\(\s*[\d.]+%\)\s+)*(?P<secs>\d+\.\d+)\s+\(\s*[\d.]+%\)\s{2,}(?P<name>\S.*?)\s*$")
_REPORT = "... Execution time report ..."
LOOKAHEAD = 4


def _reports(text: str, banner: str) -> list[list[tuple[str, float]]]:
    """(name, seconds) of every entry of every report headed by ``banner``, up to and
    without its ``Total`` line."""
    reports: list[list[tuple[str, float]]] = []
    current: list[tuple[str, float]] | None = None
    for line in text.splitlines():
        if banner in line:
            current = []
            reports.append(current)
            continue
        if current is None:
            continue
        m = _ENTRY.match(line)
        if not m:
            continue
        if m["name"] == "Total":
            current = None
            continue
        current.append((m["name"], float(m["secs"])))
    return reports


def parse_timing_reports(text: str) -> list[list[tuple[str, float]]]:
    """Every timing report in ``text``: a list of (pass name, seconds) in run order,
    without analyses, pipeline adaptors, ``Rest`` and ``Total``."""
    return [[(name, secs) for name, secs in report
             if not (name.startswith("(A)") or name.endswith(" Pipeline") or name == "Rest")]
            for report in _reports(text, _REPORT)]


def assign_times(pass_names: Sequence[str], report: Sequence[tuple[str, float]],
                 nested: Sequence[bool] | None = None) -> list[float | None]:
    """Seconds for each snapshot of one stage, by matching names in order.

    Forward-only: a timing entry goes to the next snapshot with that pass name
    within a few places; an entry with no such snapshot nearby (a nested pass
    the dump names differently, or printed once for several functions) is
    skipped rather than allowed to jump ahead and misplace all that follow.
    Snapshots no entry reaches stay ``None``. ``nested`` marks snapshots of
    passes run on a function inside another pass (one dump per function, one
    timing line for all): they do not count towards the look-ahead.
    """
    nested = nested or [False] * len(pass_names)
    out: list[float | None] = [None] * len(pass_names)
    cursor = 0
    for name, secs in report:
        seen = 0
        for i in range(cursor, len(pass_names)):
            if pass_names[i] == name:
                out[i] = secs
                cursor = i + 1
                break
            if not nested[i]:
                seen += 1
                if seen >= LOOKAHEAD:
                    break
    return out


_LLVM_REPORT = "Pass execution timing report"


def parse_llvm_timing_reports(text: str) -> list[dict[str, float]]:
    """Every report of LLVM's legacy pass manager in ``text`` (``LLVM_ENABLE_TIMING=1``;
    Triton's ``make_ptx`` runs its codegen pipeline there)::

        ===-------------------------------------------------------------------------===
                                  Pass execution timing report
        ===-------------------------------------------------------------------------===
          Total Execution Time: 0.0030 seconds (0.0030 wall clock)
           ---User Time---   --System Time--   --User+System--   ---Wall Time---  --- Name ---
           0.0012 ( 40.0%)   0.0000 (  0.0%)   0.0012 ( 39.4%)   0.0012 ( 39.3%)  NVPTX DAG->DAG Pattern Instruction Selection
           ...
           0.0000 (  0.2%)   ...   Slot index numbering #2

    Entries are sorted by time, not run order; the ``k``-th instance of a pass is
    named ``Name #k`` (the first one plain). Gives ``{name: wall seconds}`` per report.
    """
    return [dict(report) for report in _reports(text, _LLVM_REPORT)]


def assign_numbered_times(pass_names: Sequence[str], reports: Sequence[dict[str, float]]) -> list[float | None]:
    """Seconds for each snapshot from :func:`parse_llvm_timing_reports` reports.

    Each report is one pass manager run, printed after it, so reports take the
    snapshots in order: the ``k``-th snapshot named ``N`` since the previous report's
    last match is ``N`` (k = 1) or ``N #k`` in this one. Snapshots no entry names
    (new pass manager passes, which these reports do not time) stay ``None``.
    """
    out: list[float | None] = [None] * len(pass_names)
    cursor = 0
    for report in reports:
        seen: dict[str, int] = {}
        last = -1
        for i in range(cursor, len(pass_names)):
            name = pass_names[i]
            k = seen[name] = seen.get(name, 0) + 1
            secs = report.get(name if k == 1 else f"{name} #{k}")
            if secs is not None:
                out[i] = secs
                last = i
        if last >= 0:
            cursor = last + 1
    return out
