"""The records a GPU profile is parsed into, before any charging to a capture.

An Nsight Compute profile is per SASS instruction (:class:`SampledInstruction`,
offsets from the function entry); a Proton PC-sampling profile is per source
line (:class:`SampledLine`). Both become one :class:`KernelProfile`, which is
what a bundle stores (as :meth:`KernelProfile.to_json`).

Stall reasons use one vocabulary for both tools (:data:`STALL_REASONS`:
Nsight Compute's words in snake case), plus ``unlisted`` (ncu: samples of an
instruction no listed reason covers, such as HGMMA's warpgroup_arrive) and
``not_stalled`` (Proton: samples taken while the warp was not stalled).
Zero entries are left out of every ``stalls`` dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from irscope.errors import IrscopeError

#: The stall reasons both profilers report, in Nsight Compute's order.
STALL_REASONS: tuple[str, ...] = (
    "barrier", "branch_resolving", "dispatch", "drain", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc",
    "no_instruction", "not_selected", "selected", "short_scoreboard", "sleeping",
    "tex_throttle", "wait",
)
#: ncu: an instruction's samples that none of the listed reasons covers.
UNLISTED = "unlisted"
#: Proton: samples taken while the warp was not stalled.
NOT_STALLED = "not_stalled"
#: Every key a ``stalls`` dict may hold.
ALL_STALL_KEYS: frozenset[str] = frozenset(STALL_REASONS) | {UNLISTED, NOT_STALLED}

TOOLS = ("ncu", "proton")
#: The version of the JSON shape :meth:`KernelProfile.to_json` writes.
PROFILE_FORMAT = 1


@dataclass(frozen=True)
class SampledInstruction:
    """One SASS instruction of an Nsight Compute profile.

    ``offset`` is bytes from the function entry (the capture's ``/*0040*/``);
    ``text`` is the profiler's instruction text as given; ``samples`` all PC
    samples on it, ``not_issued`` those where the warp did not issue;
    ``executed`` the warp-level executions (None when the export lacks it).
    """

    offset: int
    text: str
    samples: int
    not_issued: int
    executed: int | None
    stalls: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SampledLine:
    """One source line of a Proton profile: ``file`` as the profiler names it
    (an absolute path on the profiling machine), its samples and stalls."""

    file: str
    line: int
    samples: int
    stalls: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelProfile:
    """One kernel's profile, from one tool, possibly several launches merged.

    ``unplaced`` counts samples the profile itself gives neither a PC nor a
    line; ``total_samples`` is the profile's own total (instructions' or lines'
    samples plus ``unplaced``), which charging must conserve.
    """

    tool: str
    tool_version: str | None
    gpu: str | None
    date: str | None
    launches: int
    kernel: str
    instructions: tuple[SampledInstruction, ...]
    lines: tuple[SampledLine, ...]
    unplaced: int
    total_samples: int
    source: str
    notes: tuple[str, ...] = ()

    def stamp(self) -> str:
        """A one-line description: tool, version, GPU, date, launches, source."""
        parts = [self.tool + (f" {self.tool_version}" if self.tool_version else ""),
                 self.gpu or "GPU unknown", self.date or "date unknown",
                 f"{self.launches} launch{'es' if self.launches != 1 else ''}",
                 f"{self.total_samples} samples", f"from {self.source}"]
        return f"{self.kernel}: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (what a bundle stores); :meth:`from_json` reads it back."""
        return {
            "format": PROFILE_FORMAT,
            "tool": self.tool, "tool_version": self.tool_version, "gpu": self.gpu, "date": self.date,
            "launches": self.launches, "kernel": self.kernel,
            # Rows as short lists: a 2,000-instruction profile stays small in the bundle.
            "instructions": [[i.offset, i.text, i.samples, i.not_issued, i.executed, dict(i.stalls)]
                             for i in self.instructions],
            "lines": [[ln.file, ln.line, ln.samples, dict(ln.stalls)] for ln in self.lines],
            "unplaced": self.unplaced, "total_samples": self.total_samples,
            "source": self.source, "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, d: Any) -> KernelProfile:
        """Read what :meth:`to_json` wrote; :class:`IrscopeError` (one line) when malformed."""
        try:
            if not isinstance(d, dict):
                raise TypeError("not an object")
            if d.get("format", PROFILE_FORMAT) != PROFILE_FORMAT:
                raise IrscopeError(f"profile data format {d.get('format')!r} is not {PROFILE_FORMAT}: "
                                   "a newer irscope wrote it")
            instructions = tuple(
                SampledInstruction(int(r[0]), str(r[1]), int(r[2]), int(r[3]),
                                   None if r[4] is None else int(r[4]), _stalls(r[5]))
                for r in d["instructions"])
            lines = tuple(SampledLine(str(r[0]), int(r[1]), int(r[2]), _stalls(r[3])) for r in d["lines"])
            tool = str(d["tool"])
            if tool not in TOOLS:
                raise ValueError(f"unknown tool {tool!r}")
            return cls(tool=tool, tool_version=_opt_str(d.get("tool_version")), gpu=_opt_str(d.get("gpu")),
                       date=_opt_str(d.get("date")), launches=int(d["launches"]), kernel=str(d["kernel"]),
                       instructions=instructions, lines=lines, unplaced=int(d["unplaced"]),
                       total_samples=int(d["total_samples"]), source=str(d["source"]),
                       notes=tuple(str(n) for n in d.get("notes", ())))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise IrscopeError(f"malformed profile data: {type(exc).__name__}: {exc}") from None


def _stalls(raw: Any) -> dict[str, int]:
    """A stalls dict from JSON: string keys, int values, zeros dropped."""
    return {str(k): int(v) for k, v in dict(raw).items() if int(v)}


def _opt_str(v: Any) -> str | None:
    return None if v is None else str(v)
