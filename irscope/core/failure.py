"""Why a capture failed, told once for every view: the app's error panel, the
report's failure panel, ``irscope ls``.

Get it from :attr:`irscope.Capture.failure` (None for a capture that compiled).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.failure_text import TRACEBACK, frontend_position, ptx_line, telling_lines
from irscope.compiler.stages import display_name

if TYPE_CHECKING:
    from irscope.core.capture import Capture

LAUNCH_STAGE = "launch"
"""The failed stage of a capture whose launch Triton refused (it compiled)."""
_SUMMARY_AT = re.compile(r"^\S+ at (?P<file>[^\s:]+):(?P<line>\d+):")


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed compile: where it stopped, what it said, and the user's line it names."""

    error: str
    """The one line (``irscope ls``'s status, ``CompilationError at bad_kernels.py:15: NameError(...)``)."""
    stage: str | None
    """The stage it stopped in (``frontend``, ``ttgir``, ``cubin``, ``launch``...), when known."""
    pass_name: str | None
    """The pass it stopped in (``TritonGPUCoalesce (tritongpu-coalesce)``), when known."""
    lines: tuple[str, ...]
    """The telling lines of the message (no traceback, no reproducer boilerplate)."""
    detail: str
    """The whole stored error text, traceback included (``--stage error``)."""
    file: str | None
    """The kernel's file as the compile saw it."""
    line: int | None
    """The line of ``file`` the error names (a frontend error's position), else None."""
    column: int | None
    """The column on :attr:`line` Triton's caret points at (1-based), when it says."""
    ptx_line: int | None = None
    """The line of the PTX stage a ptxas diagnostic names (``PTX line 39: ...``), else None."""

    @property
    def where(self) -> str | None:
        """``bad_kernels.py:15`` when the error names a line of the user's file."""
        if self.line is None:
            return None
        return f"{os.path.basename(self.file or '?')}:{self.line}"

    @property
    def headline(self) -> str:
        """What happened, where: ``Compile failed in the frontend (Python to TTIR) at
        bad_kernels.py:15``; ``Launch refused`` for a launch Triton refused after compiling."""
        if self.stage == LAUNCH_STAGE:
            return "Launch refused: the kernel compiled, Triton refused to launch it"
        return f"Compile failed in {self.failed_in}" + (f" at {self.where}" if self.where else "")

    @property
    def failed_in(self) -> str:
        """Where it stopped, in words: ``pass X (arg) of TTGIR``, ``cubin``, ``the frontend``."""
        if self.stage in (None, "frontend"):
            return "the frontend (Python to TTIR)" if self.stage else "an unknown stage"
        stage = display_name(self.stage)
        if stage.lower() != self.stage.lower():
            stage = f"{stage} ({self.stage})"
        return f"pass {self.pass_name} of {stage}" if self.pass_name else stage


def failure_of(capture: "Capture") -> Failure | None:
    """The :class:`Failure` of ``capture`` (use :attr:`irscope.Capture.failure`)."""
    if not capture.error:
        return None
    detail = str(capture.info.get("error_detail") or capture.error)
    line, column = _user_line(capture, detail)
    return Failure(error=capture.error, stage=capture.failed_stage, pass_name=capture.failed_pass,
                   lines=telling_lines(detail) or (capture.error,), detail=detail, file=capture.file,
                   line=line, column=column, ptx_line=ptx_line(detail.split(TRACEBACK, 1)[0]))


def _user_line(capture: "Capture", detail: str) -> tuple[int | None, int | None]:
    """The user's line a failure names: Triton's ``at 4:31:`` by
    :func:`~irscope.compiler.failure_text.frontend_position` (the rule the capture
    used for the one line), else the ``FILE:LINE`` the one line already names in the kernel's file."""
    position = frontend_position(detail.split(TRACEBACK, 1)[0], capture.source.first_line)
    if position is not None:
        return position
    m = _SUMMARY_AT.match(capture.error or "")
    if m and capture.file and os.path.basename(capture.file) == m["file"]:
        return int(m["line"]), None
    return None, None
