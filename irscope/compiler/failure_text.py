"""Which lines of a compile failure's text say what went wrong.

Triton's errors come wrapped: ptxas's diagnostic sits between ``PTXAS error:
Internal Triton PTX codegen error`` and ``Repro command: ...``; a frontend error
puts Triton's ``at 4:31:`` and the source snippet before the reason; a native
crash ends in a stack dump. The capture picks the one line of ``ls`` from here
(:func:`meaningful_line`), and the core the few lines an error panel shows
(:func:`telling_lines`), so both agree on what is boilerplate.
"""

from __future__ import annotations

import re

TRACEBACK = "\nTraceback (most recent call last):"
"""Where Python's traceback starts in a stored error text."""

# Lines that come with a failure but say nothing about it.
NOISE = ("repro command", "`ptxas` stderr", "ptxas fatal", "ptxas info", "failure value returned",
         "unreachable executed", "stack dump", "please submit", "please share", "program arguments",
         "internal triton ptx codegen error", "ptxas error: internal triton", "0.\t", "1.\t", "2.\t")
_TOOL_ERROR = re.compile(r"^(?:ptxas\S*)?\s*(?P<file>\S+), line (?P<line>\d+); (?:fatal )?error\s*:\s*(?P<msg>.+)$")
_DIAGNOSTIC = re.compile(r"(?:^|\s)(?:LLVM ERROR|error|fatal error)\s*:\s*(?P<msg>\S.*)$", re.IGNORECASE)
# ``ptxas fatal   : Value 'sm_100' is not defined for option 'gpu-name'``: the cause
# when ptxas stops before reading the PTX. After an ``error`` line, its fatal line only
# says that it stopped (``Ptx assembly aborted due to errors``).
_PTXAS_FATAL = re.compile(r"^ptxas\S*\s+fatal\s*:\s*(?P<msg>\S.*)$", re.IGNORECASE)
_ABORTED = "ptx assembly aborted due to errors"
_STACK_FRAME = re.compile(r"#\d+ 0x")
FRONTEND_AT = re.compile(r"at (\d+):(\d+):")
"""Triton's frontend position, ``at 4:31:``: line (counted from the ``def``) and column."""


def frontend_position(message: str, first_line: int | None) -> tuple[int, int] | None:
    """Where a frontend error points in the kernel's file: (line, 1-based column) from
    Triton's ``at 4:31:``, which counts lines from the kernel's ``def`` (``first_line``)
    and columns from 0; None when the message has no such position."""
    at = FRONTEND_AT.match((message or "").lstrip())
    if at is None or not first_line:
        return None
    return int(first_line) + int(at.group(1)) - 1, int(at.group(2)) + 1


def _lines(text: str) -> list[str]:
    lines = [ln.strip() for ln in (text or "").splitlines()]
    return [ln for ln in lines if ln and set(ln) - {"^", "~", " ", "=", "-"}]


def meaningful_line(text: str) -> str:
    """The line of a failure's text that says what went wrong: a tool's own
    diagnostic (``ptxas ..., line 39; error : Not a name of any known
    instruction: 'bogus'``), ptxas's ``fatal`` line when it stopped before any
    ``error`` (``ptxas fatal : Value 'sm_100' is not defined for option
    'gpu-name'``), an ``LLVM ERROR:``/``error:`` line, else the last line that is
    not boilerplate (``Repro command: ...``, stack dumps)."""
    lines = _lines(text)
    for ln in lines:
        m = _TOOL_ERROR.match(ln)
        if m:
            return f"PTX line {m['line']}: {m['msg'].strip()}" if m["file"].endswith(".ptx") else m["msg"].strip()
    for ln in lines:
        m = _PTXAS_FATAL.match(ln)
        if m and not m["msg"].lower().startswith(_ABORTED):
            return "ptxas fatal: " + m["msg"].strip()
    for ln in lines:
        m = _DIAGNOSTIC.search(ln)
        if m and not ln.lower().startswith(NOISE):
            return ln if len(ln) <= 300 else m["msg"]
    useful = [ln for ln in lines if not ln.lower().startswith(NOISE) and not _STACK_FRAME.match(ln)]
    return useful[-1] if useful else (lines[-1] if lines else "")


def ptx_line(text: str) -> int | None:
    """The line of the PTX file a ptxas diagnostic names (``ptxas /tmp/x.ptx, line 39;
    error : ...``), else None: the PTX stage holds the text ptxas read."""
    for ln in _lines(text):
        m = _TOOL_ERROR.match(ln)
        if m and m["file"].endswith(".ptx"):
            return int(m["line"])
    return None


def _boilerplate(line: str) -> bool:
    """A line an error panel leaves out: the wrappers around ptxas's own words,
    its closing ``aborted`` line, the reproducer command, stack dumps."""
    low = line.strip().lower()
    fatal = _PTXAS_FATAL.match(line.strip())
    if fatal:
        return fatal["msg"].lower().startswith(_ABORTED)
    return low.startswith(NOISE) or bool(_STACK_FRAME.match(low))


def telling_lines(detail: str, limit: int = 12) -> tuple[str, ...]:
    """The lines of a stored error text (``--stage error``) a reader needs: the
    message before Python's traceback, without Triton's ``at 4:31:`` header and the
    boilerplate around a tool's diagnostic. A frontend error keeps its source
    snippet and caret line as Triton drew them (indentation kept). At most
    ``limit`` lines, always with :func:`meaningful_line`'s line among them."""
    head = (detail or "").split(TRACEBACK, 1)[0]
    lines = [ln.rstrip() for ln in head.strip("\n").splitlines()]
    if lines and FRONTEND_AT.fullmatch(lines[0].strip().rstrip(":") + ":"):
        lines = lines[1:]
    kept = [ln for ln in lines if ln.strip() and not _boilerplate(ln)]
    if not kept:
        kept = [ln for ln in lines if ln.strip()][:1]
    if len(kept) > limit:
        key = meaningful_line(head)
        kept = kept[:limit - 1] + ([key] if key and not any(key in ln for ln in kept[:limit - 1]) else [kept[limit - 1]])
    return tuple(kept)


PASS_MANAGER_FAILED = "PassManager::run failed"
"""What Triton raises when an MLIR pass fails: the pass's own diagnostic went to stderr."""
_ASSERTION = re.compile(r"(?P<file>[^\s:]+):(?P<line>\d+):.*?Assertion `(?P<cond>.+)' failed\.?\s*$")
_MLIR_ERROR = re.compile(r"^\S+:\d+:\d+: error: (?P<msg>\S.*)$")
_GENERIC_MLIR = "failures have been detected while processing an mlir pass pipeline"


def pipeline_diagnostic(log: str) -> str | None:
    """The first line of what a compile printed (its ``log``) that says why an MLIR pass
    failed, when Triton's exception only says ``PassManager::run failed``: a failed
    assertion (``assertion `aElem.getType() == tgtTy' failed (FMA.cpp:28)``), an
    ``LLVM ERROR:``, or an MLIR ``error:`` other than the generic "failures have been
    detected" one; None when it printed none."""
    for raw in (log or "").splitlines():
        ln = raw.strip()
        m = _ASSERTION.search(ln)
        if m:
            return f"assertion `{m['cond']}' failed ({m['file'].rsplit('/', 1)[-1]}:{m['line']})"[:300]
        if ln.startswith("LLVM ERROR:"):
            return ln[:300]
        m = _MLIR_ERROR.match(ln)
        if m and not m["msg"].lower().startswith(_GENERIC_MLIR):
            return m["msg"][:300]
    return None
