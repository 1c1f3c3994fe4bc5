"""The plain records a capture hands out: its kernel's Python source, the run that made
it, and one op's links across stages. Values only (no bundle reads), so they live
apart from :class:`irscope.core.capture.Capture`, which re-exports them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.link import LinkedOp


@dataclass(frozen=True, slots=True)
class Source:
    """The kernel's Python source as captured: the ``@triton.jit`` function."""

    file: str | None
    """Path of the kernel's file as the compile saw it."""
    first_line: int | None
    """Line of the function's ``def`` (or its first decorator) in ``file``."""
    text: str | None
    """The function's source (None when the capture could not read it)."""

    def line(self, n: int) -> str | None:
        """Line ``n`` of the kernel's file: from the stored source when it covers ``n``,
        else from the file on disk; None when neither has it."""
        if self.text and self.first_line:
            lines = self.text.splitlines()
            if 0 <= n - self.first_line < len(lines):
                return lines[n - self.first_line]
        try:
            with open(self.file or "", encoding="utf-8") as fh:
                for i, text in enumerate(fh, 1):
                    if i == n:
                        return text.rstrip("\n")
        except (OSError, UnicodeDecodeError):
            pass
        return None

    @property
    def last_line(self) -> int | None:
        """The last line of the stored function, in file numbering."""
        if not self.text or not self.first_line:
            return None
        return self.first_line + len(self.text.splitlines()) - 1


@dataclass(frozen=True, slots=True)
class Run:
    """How a capture was made: one ``irscope run`` / ``irscope compile``."""

    id: int
    started: str
    finished: str | None
    complete: bool
    mode: str
    targets: tuple[str, ...]
    llvm_passes: bool
    command: tuple[str, ...]
    script: str | None
    cwd: str | None
    host: str | None
    python_executable: str | None
    irscope_version: str | None
    env: dict
    status: str | None
    error: str | None

    @classmethod
    def from_row(cls, r: dict) -> "Run":
        return cls(r["id"], r["started"], r.get("finished"), bool(r["complete"]), r["mode"],
                   tuple(r["targets"]), bool(r["llvm_passes"]), tuple(r["command"]), r.get("script"),
                   r.get("cwd"), r.get("host"), r.get("python_executable"), r.get("irscope_version"),
                   r.get("env") or {}, r.get("status"), r.get("error"))

    def to_json(self) -> dict:
        """The ``irscope ls --runs --json`` object."""
        return {"id": self.id, "started": self.started, "finished": self.finished, "complete": self.complete,
                "mode": self.mode, "targets": list(self.targets), "llvm_passes": int(self.llvm_passes),
                "command": list(self.command), "script": self.script, "cwd": self.cwd, "host": self.host,
                "python_executable": self.python_executable, "irscope_version": self.irscope_version,
                "env": self.env, "status": self.status, "error": self.error}


@dataclass(frozen=True, slots=True)
class OpLinks:
    """What one op is linked to in every other stage."""

    stage: str
    line: int
    text: str | None
    links: dict[str, list["LinkedOp"]]
    """Other stage -> the linked ops (line, text, kind), in pipeline order."""
    exact: bool
    """The capture has ``--exact-links`` stages: TTGIR -> LLIR/PTX/SASS links are op-exact."""

    def to_json(self) -> dict:
        """The ``irscope links --json`` object."""
        return {"stage": self.stage, "line": self.line, "text": self.text,
                "links": {s: [o.to_json() for o in ops] for s, ops in self.links.items()}}
