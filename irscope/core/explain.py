"""Why a kernel costs what it costs: every fact irscope reads from one capture, per
Python line and per kernel, in one typed result (what ``irscope explain`` prints).

    ex = irscope.open("k.irscope").capture("matmul_kernel").explain()
    for line in ex.lines:
        print(line.line, line.spills, [(a.bits, a.max_elements) for a in line.global_accesses])

Per line: Triton's remarks (:mod:`irscope.core.remarks`) and the static costs
(:mod:`irscope.core.line_costs`). Per kernel: the spills no line owns, the loops and
the main loop's arithmetic intensity (:mod:`irscope.core.loops`), the layout
conversions (:mod:`irscope.core.conversions`) and the occupancy
(:mod:`irscope.core.occupancy`). Then the hints: sentences drawn from these facts,
each citing its evidence (:mod:`irscope.core.hints`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from irscope.core.conversions import Conversion, conversions_of
from irscope.core.hints import Hint, hints_of
from irscope.core.line_costs import GlobalAccess, LineCosts, line_costs
from irscope.core.loops import Intensity, Loop, intensity_of, loops_of
from irscope.core.remarks import Remark, remarks_of
from irscope.ir.python_lines import same_file

if TYPE_CHECKING:
    from irscope.core.capture import Capture
    from irscope.core.occupancy import Occupancy


@dataclass(frozen=True, slots=True)
class LineExplanation:
    """One Python statement (keyed by its first line): its costs and its remarks."""

    costs: LineCosts
    remarks: tuple[Remark, ...] = ()

    @property
    def line(self) -> int:
        return self.costs.line

    @property
    def file(self) -> str | None:
        return self.costs.file

    @property
    def function(self) -> str:
        return self.costs.function

    @property
    def global_accesses(self) -> tuple[GlobalAccess, ...]:
        return self.costs.global_accesses

    @property
    def spills(self) -> int:
        return self.costs.spills

    @property
    def sass_by_class(self) -> dict[str, int]:
        return self.costs.sass_by_class

    def to_json(self) -> dict:
        """The ``lines`` object of ``irscope explain --json``."""
        out = self.costs.to_json()
        return {"line": out.pop("line"), "file": out.pop("file"), "remarks": [r.text for r in self.remarks],
                "global_accesses": out.pop("global_accesses"), "spills": out.pop("spills"),
                "sass_by_class": out.pop("sass_by_class"), **out,
                "remark_details": [r.to_json() for r in self.remarks]}


@dataclass(frozen=True)
class Explanation:
    """Everything ``irscope explain`` shows for one capture."""

    capture_id: int
    kernel: str
    target: str
    variant: str
    lines: tuple[LineExplanation, ...]
    """Every user line with ops or remarks: the kernel's, then each helper's."""
    unattributed_spills: int
    """SASS ``LDL``/``STL`` no line owns."""
    total_spills: int
    """Every ``LDL``/``STL`` of the SASS (the lines' plus the unattributed)."""
    remarks_available: bool
    remarks_why_not: str | None
    unplaced_remarks: tuple[Remark, ...]
    """Remarks no user line owns (no position, or only Triton's library frames)."""
    loops: tuple[Loop, ...]
    """Each ``scf.for`` holding global loads (:mod:`irscope.core.loops`)."""
    conversions: tuple[Conversion, ...]
    """Each ``ttg.convert_layout`` of the final TTGIR (:mod:`irscope.core.conversions`)."""
    intensity: Intensity | None
    """The main loop's arithmetic intensity; None without a loop with a dot."""
    occupancy: "Occupancy | None"
    hints: tuple[Hint, ...] = ()
    """Sentences drawn from the facts (:mod:`irscope.core.hints`), each with its evidence."""
    hints_computed: bool = False
    """True once the rules ran (``hints`` empty then means no rule found anything)."""
    has_ptx: bool = True
    has_sass: bool = True

    def line(self, line: int, file: str | None = None) -> LineExplanation | None:
        """The statement starting at ``line`` (of ``file``; default: any file, the
        kernel's first)."""
        for ln in self.lines:
            if ln.line == line and (file is None or same_file(ln.file or "", file)):
                return ln
        return None

    def to_json(self) -> dict:
        """The ``irscope explain --json`` object (docs/cli-json.md)."""
        return {"capture": self.capture_id, "kernel": self.kernel, "target": self.target, "variant": self.variant,
                "lines": [ln.to_json() for ln in self.lines], "unattributed_spills": self.unattributed_spills,
                "total_spills": self.total_spills, "loops": [lp.to_json() for lp in self.loops],
                "conversions": [c.to_json() for c in self.conversions],
                "intensity": self.intensity.to_json() if self.intensity is not None else None,
                "occupancy": self.occupancy.detail_json() if self.occupancy is not None else None,
                "hints": [h.to_json() for h in self.hints], "hints_computed": self.hints_computed,
                "remarks_available": self.remarks_available, "remarks_why_not": self.remarks_why_not,
                "unplaced_remarks": [r.to_json() for r in self.unplaced_remarks],
                "has_ptx": self.has_ptx, "has_sass": self.has_sass}


def _line_keys(cap: "Capture") -> dict[tuple[str | None, int], tuple[str | None, int, str]]:
    """(file, line) of every user function line -> (file, statement first line, function)."""
    out: dict[tuple[str | None, int], tuple[str | None, int, str]] = {}
    for fn in cap.user_functions().functions:
        for fl in fn.lines:
            out.setdefault((fn.file, fl.line), (fn.file, fl.statement, fn.name))
    return out


def _place(keys: dict[tuple[str | None, int], tuple[str | None, int, str]], file: str,
           line: int) -> tuple[str | None, int, str] | None:
    for (f, n), got in keys.items():
        if n == line and same_file(file, f or ""):
            return got
    return None


def explain(cap: "Capture") -> Explanation:
    """Every per-line and per-kernel fact of ``cap`` (computed once per capture)."""
    return cap._memo("explanation", lambda: _explain(cap))


def _explain(cap: "Capture") -> Explanation:
    table = line_costs(cap)
    rs = remarks_of(cap)
    keys = _line_keys(cap)
    by_key: dict[tuple[str | None, int], list[Remark]] = {}
    unplaced: list[Remark] = []
    for (rfile, rline), placed in rs.by_line().items():
        got = _place(keys, rfile, rline)
        if got is None:
            unplaced.extend(placed)
            continue
        by_key.setdefault((got[0], got[1]), []).extend(placed)
    unplaced.extend(rs.unplaced())
    lines: list[LineExplanation] = []
    for lc in table.lines:
        lines.append(LineExplanation(lc, tuple(by_key.pop((lc.file, lc.line), ()))))
    for (file, line), items in by_key.items():  # remarks on lines with no op
        name = keys.get((file, line), (file, line, cap.kernel))[2]
        lines.append(LineExplanation(LineCosts(line=line, file=file, function=name, ops={}), tuple(items)))
    order = {fn.name: i for i, fn in enumerate(cap.user_functions().functions)}
    lines.sort(key=lambda ln: (order.get(ln.function, len(order)), ln.file or "", ln.line))
    ex = Explanation(
        capture_id=cap.id, kernel=cap.kernel, target=cap.target, variant=cap.variant, lines=tuple(lines),
        unattributed_spills=table.unattributed_spills, total_spills=table.total_spills,
        remarks_available=rs.available, remarks_why_not=rs.why_not, unplaced_remarks=tuple(unplaced),
        loops=loops_of(cap, rs.items), conversions=conversions_of(cap), intensity=intensity_of(cap),
        occupancy=cap.occupancy, has_ptx=table.has_ptx, has_sass=table.has_sass)
    return replace(ex, hints=hints_of(cap, ex), hints_computed=True)
