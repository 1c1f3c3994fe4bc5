"""Expectations about a kernel's compiled code, checked against a capture: what
``irscope check BUNDLE RULES.toml`` runs in CI.

    rules = load_rules("rules.toml")
    report = run_checks(irscope.open("k.irscope"), rules)
    for v in report.violations:
        print(v.kernel, v.line, v.expectation, v.expected, v.actual, v.evidence)

The rules are TOML (docs/checks.md): one ``[[kernel]]`` table per capture (a kernel
name, and a target and variant picked as every command picks them:
:mod:`irscope.core.selection`), with kernel-wide expectations, ``[[kernel.line]]``
tables for one Python statement each and ``[[kernel.loop]]`` tables for one loop
each. Every expectation reads a fact of :meth:`irscope.core.Capture.explain` (and,
for an instruction named by its mnemonic, the PTX and SASS ops of the line), so it
holds across SSA renaming and Triton versions as long as the fact does.

Parsing (:func:`parse_rules`, in :mod:`irscope.core.check_rules`) rejects unknown keys and bad values with one line
(:class:`RuleError`); a rule naming a kernel, line or loop the capture does not have
is a :class:`RuleError` too, raised by :func:`run_checks`. Evaluation
(:func:`evaluate`) is a pure function of the rule and the capture's facts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import PTX, SASS
from irscope.core.check_rules import (LOOP_KEYS, KernelRule, LineRule, LoopRule, RuleError, RuleSet, load_rules,
                                      parse_rules)
from irscope.core.conversions import SHARED_MEMORY
from irscope.core.line_costs import LOAD, PATH_TMA, SHARED_KINDS, STORE
from irscope.errors import IrscopeError
from irscope.ir.instr_classes import CLASSES
from irscope.ir.python_lines import same_file

__all__ = ["CheckReport", "Facts", "KernelRule", "LineFacts", "LineRule", "LoopRule", "Outcome", "RuleError",
           "RuleSet", "evaluate", "facts_for", "load_rules", "parse_rules", "run_checks"]

if TYPE_CHECKING:
    from irscope.core.bundle import Bundle
    from irscope.core.capture import Capture
    from irscope.core.explain import Explanation, LineExplanation
    from irscope.core.loops import Loop


# -- results ----------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """One expectation checked against one capture."""

    kernel: str
    target: str
    variant: str
    capture: int
    expectation: str
    """The rule's key (``min_load_bits``, ``uses``, ``min_stages``...)."""
    line: int | None
    """The statement's (or the loop's) Python line; None for a kernel-wide expectation."""
    expected: Any
    """The rule's value (for ``uses``: one instruction name)."""
    actual: Any
    """The fact found (None when the capture does not hold it)."""
    ok: bool
    evidence: tuple[str, ...]
    """The facts the answer rests on: instructions, their widths, counts, resources."""
    message: str
    """The expectation in words, and what was found."""
    scope: str = "kernel"
    """What ``line`` names: ``kernel`` (no line), ``line`` (a statement) or ``loop``."""

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "target": self.target, "variant": self.variant, "capture": self.capture,
                "expectation": self.expectation, "scope": self.scope, "line": self.line, "expected": self.expected,
                "actual": self.actual, "ok": self.ok, "evidence": list(self.evidence), "message": self.message}


@dataclass(frozen=True)
class CheckReport:
    """Every expectation of a rules file, checked."""

    outcomes: tuple[Outcome, ...]

    @property
    def violations(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.outcomes if not o.ok)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def checked(self) -> int:
        return len(self.outcomes)

    def to_json(self) -> dict:
        """The ``irscope check --json`` object (docs/cli-json.md)."""
        return {"ok": self.ok, "checked": self.checked, "violated": len(self.violations),
                "violations": [o.to_json() for o in self.violations],
                "outcomes": [o.to_json() for o in self.outcomes]}


# -- the facts a rule reads -------------------------------------------------------

@dataclass(frozen=True)
class LineFacts:
    """One statement's facts: its explanation and the PTX and SASS opcodes charged to it."""

    explained: "LineExplanation"
    opcodes: dict[str, Counter[str]] = field(default_factory=dict)
    """Stage (``ptx``, ``sass``) -> opcode -> count."""


@dataclass(frozen=True)
class Facts:
    """What :func:`evaluate` reads of one capture."""

    kernel: str
    target: str
    variant: str
    capture: int
    explanation: "Explanation | None"
    """None for a failed compile (nothing to explain)."""
    lines: dict[tuple[int, str | None], LineFacts]
    """A line rule's (line, file) -> its statement's facts."""
    loops: dict[int, "Loop"]
    """Rule line -> its loop."""
    registers: int | None
    failed: str | None = None
    """Why the capture has no code to check (a failed compile); None when it compiled."""


def _line_facts(cap: "Capture", ex: "Explanation", rule: LineRule, where: str) -> LineFacts:
    in_kernel_file = rule.file is None or same_file(cap.file or "", rule.file)
    first = cap.statement(rule.line).first if in_kernel_file else rule.line
    got = ex.line(first, rule.file or cap.file) or (ex.line(first) if rule.file is None else None)
    if got is None or not any(got.costs.ops.values()):
        with_ops = sorted({ln.line for ln in ex.lines if any(ln.costs.ops.values())
                           and (rule.file is None or same_file(ln.file or "", rule.file))})
        shown = ", ".join(map(str, with_ops[:40])) + (" ..." if len(with_ops) > 40 else "")
        raise RuleError(f"{where}: line {rule.line}{' of ' + rule.file if rule.file else ''} has no ops in "
                        f"{cap.title()} (lines with ops: {shown or 'none'})")
    opcodes: dict[str, Counter[str]] = {}
    if in_kernel_file:
        ops = cap.ops_at_line(first, stages=tuple(s for s in (PTX, SASS) if s in cap.stages))
        opcodes = {stage: Counter(op.name for op in stage_ops) for stage, stage_ops in ops.items()}
    return LineFacts(got, opcodes)


def facts_for(cap: "Capture", rule: KernelRule, where: str) -> Facts:
    """The facts ``rule`` reads of ``cap``; :class:`RuleError` for a line with no ops
    or a line with no loop."""
    who = (cap.kernel, cap.target, cap.variant, cap.id)
    if cap.failed:  # nothing to explain: evaluate() reports it as the one violation
        return Facts(*who, None, {}, {}, None, failed=f"failed to compile ({cap.failed_at or 'unknown stage'})")
    ex = cap.explain()
    lines = {(r.line, r.file): _line_facts(cap, ex, r, where) for r in rule.lines}
    loops: dict[int, Loop] = {}
    for r in rule.loops:
        first = cap.statement(r.line).first
        found = [lp for lp in ex.loops if lp.line in (r.line, first)]
        if not found:
            have = ", ".join(str(lp.line) for lp in ex.loops if lp.line is not None) or "none"
            raise RuleError(f"{where}: no loop holding global loads at line {r.line} in {cap.title()} "
                            f"(loops at lines: {have})")
        loops[r.line] = found[0]
    registers = cap.resources.registers if cap.resources is not None else None
    return Facts(*who, ex, lines, loops, registers)


# -- evaluation -------------------------------------------------------------------

def _access_text(a) -> str:
    width = "a TMA box" if a.bits is None else f"{a.bits}-bit"
    of = f", {a.elements} of {a.max_elements} elements" if a.elements is not None and a.max_elements else ""
    at = f" ({a.op} at ttgir line {a.ttgir_line}" if a.op else " ("
    return (f"{a.opcode or a.path} x{a.instructions}: {width}{of}{', masked' if a.masked else ''}"
            f"{at}{', ' if a.op else ''}{a.element_type or '?'})")


def _conversion_text(c) -> str:
    cost = f", {c.scratch_bytes} B scratch, {c.bank_conflicts}-way bank conflicts" if c.via == SHARED_MEMORY else ""
    return f"convert_layout at ttgir line {c.ttgir_line} via {c.via}{cost}: {c.source} -> {c.destination}"


def _present(name: str, facts: LineFacts) -> tuple[int, str]:
    """How many instructions ``name`` counts at the line, and where that was read."""
    costs = facts.explained.costs
    if name in CLASSES:  # first: "mma" means any tensor-core math (HMMA, HGMMA...), not only PTX mma
        return costs.sass_by_class.get(name, 0), "SASS instructions of that class"
    if name in SHARED_KINDS:
        return costs.shared_tensor.get(name, 0), "PTX shared-memory/tensor-core instructions"
    n = 0
    for stage in (PTX, SASS):
        n += sum(c for op, c in facts.opcodes.get(stage, Counter()).items()
                 if op == name or op.startswith(name + "."))
    return n, "PTX and SASS instructions with that mnemonic"


def _line_has(facts: LineFacts) -> str:
    costs = facts.explained.costs
    parts = [f"{k} x{v}" for k, v in costs.shared_tensor.items()]
    parts += [f"SASS {k} x{v}" for k, v in costs.sass_by_class.items() if k != "other"]
    return "the line has: " + (", ".join(parts) or "no shared-memory, tensor-core or classed SASS instructions")


def _spill_evidence(ex: "Explanation") -> tuple[str, ...]:
    if not ex.has_sass:
        return ("the capture holds no SASS",)
    worst = sorted((ln for ln in ex.lines if ln.spills), key=lambda ln: -ln.spills)
    out = [f"line {ln.line}: {ln.spills} LDL/STL ({ln.costs.spill_loads} LDL, {ln.costs.spill_stores} STL)"
           for ln in worst[:5]]
    if len(worst) > 5:
        out.append(f"{len(worst) - 5} more lines spill")
    if ex.unattributed_spills:
        out.append(f"{ex.unattributed_spills} LDL/STL on no line")
    return tuple(out)


class _Out:
    """Collects the outcomes of one capture."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.items: list[Outcome] = []

    def add(self, expectation: str, line: int | None, expected: Any, actual: Any, ok: bool,
            evidence: tuple[str, ...] | list[str], message: str) -> None:
        f = self.facts
        scope = "kernel" if line is None else "loop" if expectation in LOOP_KEYS else "line"
        self.items.append(Outcome(f.kernel, f.target, f.variant, f.capture, expectation, line, expected,
                                  actual, ok, tuple(evidence), message, scope))


def _spills(out: _Out, line: int | None, exact: int | None, most: int | None, actual: int | None,
            evidence: tuple[str, ...]) -> None:
    if exact is not None:
        out.add("spills", line, exact, actual, actual == exact, evidence,
                f"{exact} spill instructions expected, {actual if actual is not None else 'unknown'} found")
    if most is not None:
        out.add("max_spills", line, most, actual, actual is not None and actual <= most, evidence,
                f"at most {most} spill instructions expected, "
                f"{actual if actual is not None else 'unknown'} found")


def _conversions(out: _Out, line: int | None, convs: list, no_shared: bool, max_conflicts: int | None) -> None:
    shared = [c for c in convs if c.via == SHARED_MEMORY]
    if no_shared:
        out.add("no_shared_memory_conversion", line, 0, len(shared), not shared,
                [_conversion_text(c) for c in (shared or convs)],
                f"no convert_layout through shared memory expected, {len(shared)} found")
    if max_conflicts is not None:
        worst = max((c.bank_conflicts or 1 for c in shared), default=None)
        bad = [c for c in shared if (c.bank_conflicts or 1) > max_conflicts]
        out.add("max_bank_conflicts", line, max_conflicts, worst, not bad, [_conversion_text(c) for c in (bad or shared)],
                f"at most {max_conflicts}-way bank conflicts expected through shared memory, "
                f"{'none through shared memory' if worst is None else f'{worst}-way found'}")


def _widths(out: _Out, line: int, kind: str, minimum: int, accesses: list) -> None:
    key = "min_load_bits" if kind == LOAD else "min_store_bits"
    mine = [a for a in accesses if a.kind == kind]
    if not mine:
        out.add(key, line, minimum, None, False, [],
                f"{kind}s of at least {minimum} bits expected, the line has no global {kind}")
        return
    sized = [a.bits for a in mine if a.bits is not None]  # TMA (None) moves a whole box
    actual = min(sized) if sized else None
    narrow = [a for a in mine if a.bits is not None and a.bits < minimum]
    out.add(key, line, minimum, actual, not narrow, [_access_text(a) for a in (narrow or mine)],
            f"global {kind}s of at least {minimum} bits expected, "
            + (f"{actual}-bit found" if actual is not None else "TMA copies found"))


def _line(out: _Out, rule: LineRule, facts: LineFacts, ex: "Explanation") -> None:
    ln = facts.explained
    n = rule.line
    for name in rule.uses:
        count, read = _present(name, facts)
        out.add("uses", n, name, count, count > 0, [f"{name}: {count} {read}", _line_has(facts)],
                f"{name} expected, {count} found")
    for name in rule.not_uses:
        count, read = _present(name, facts)
        out.add("not_uses", n, name, count, count == 0, [f"{name}: {count} {read}", _line_has(facts)],
                f"no {name} expected, {count} found")
    accesses = list(ln.global_accesses)
    if rule.min_load_bits is not None:
        _widths(out, n, LOAD, rule.min_load_bits, accesses)
    if rule.min_store_bits is not None:
        _widths(out, n, STORE, rule.min_store_bits, accesses)
    if rule.full_width:
        narrow = [a for a in accesses if a.narrow]
        # A width irscope cannot bound is not shown to be full; a TMA copy moves whole boxes.
        unknown = [a for a in accesses if a.path != PATH_TMA and (a.elements is None or a.max_elements is None)]
        holds = bool(accesses) and not narrow and not unknown
        found = (f"{len(narrow)} narrower found" if narrow else "none found" if not accesses else
                 f"{len(unknown)} of unknown width found" if unknown else "all are")
        out.add("full_width", n, True, holds, holds, [_access_text(a) for a in (narrow or unknown or accesses)],
                f"global accesses as wide as their layout allows expected, {found}")
    _spills(out, n, rule.spills, rule.max_spills, ln.spills if ex.has_sass else None,
            (f"line {n}: {ln.costs.spill_loads} LDL, {ln.costs.spill_stores} STL",) if ex.has_sass
            else ("the capture holds no SASS",))
    lines = set(ln.costs.statement_lines or (n,)) | {ln.line}
    convs = [c for c in ex.conversions if c.python_line in lines]
    _conversions(out, n, convs, rule.no_shared_memory_conversion, rule.max_bank_conflicts)


def _loop(out: _Out, rule: LoopRule, loop: "Loop") -> None:
    n = rule.line
    evidence = tuple(e for e in (f"scf.for at ttgir line {loop.ttgir_line}: {loop.evidence}",
                                 f"remark: {loop.remark}" if loop.remark else None) if e)
    if rule.pipelined is not None:
        out.add("pipelined", n, rule.pipelined, loop.pipelined, loop.pipelined == rule.pipelined, evidence,
                f"{'pipelined' if rule.pipelined else 'not pipelined'} expected, "
                f"{'pipelined' if loop.pipelined else 'not pipelined'} found")
    if rule.min_stages is not None:
        out.add("min_stages", n, rule.min_stages, loop.stages, loop.stages >= rule.min_stages, evidence,
                f"at least {rule.min_stages} stages expected, {loop.stages} found")
    if rule.min_async_loads is not None:
        out.add("min_async_loads", n, rule.min_async_loads, loop.async_loads,
                loop.async_loads >= rule.min_async_loads, evidence,
                f"at least {rule.min_async_loads} async/TMA loads expected, "
                f"{loop.async_loads} found")


def evaluate(rule: KernelRule, facts: Facts) -> tuple[Outcome, ...]:
    """Every expectation of ``rule`` checked against ``facts`` (pure)."""
    ex = facts.explanation
    out = _Out(facts)
    if ex is None:
        out.add("compiles", None, True, False, False, (facts.failed or "failed to compile",),
                f"the kernel {facts.failed or 'failed to compile'}")
        return tuple(out.items)
    _spills(out, None, rule.spills, rule.max_spills, ex.total_spills if ex.has_sass else None, _spill_evidence(ex))
    if rule.min_occupancy_blocks is not None:
        occ = ex.occupancy
        got = occ.blocks_per_sm if occ is not None else None
        evidence = ((f"{occ.blocks_per_sm} blocks of {occ.num_warps} warps per SM, limited by {occ.limited_by} "
                     f"({occ.registers} registers/thread, {occ.shared_allocated} B shared/block)",)
                    if occ is not None else ("occupancy unknown: no register count or target limits",))
        out.add("min_occupancy_blocks", None, rule.min_occupancy_blocks, got,
                got is not None and got >= rule.min_occupancy_blocks, evidence,
                f"at least {rule.min_occupancy_blocks} blocks per SM expected, "
                f"{got if got is not None else 'unknown'} found")
    if rule.max_registers is not None:
        r = facts.registers
        out.add("max_registers", None, rule.max_registers, r, r is not None and r <= rule.max_registers,
                (f"{r} registers per thread" if r is not None else "register count unknown",),
                f"at most {rule.max_registers} registers expected, {r if r is not None else 'unknown'} found")
    _conversions(out, None, list(ex.conversions), rule.no_shared_memory_conversion, None)
    for lr in rule.lines:
        _line(out, lr, facts.lines[(lr.line, lr.file)], ex)
    for lp in rule.loops:
        _loop(out, lp, facts.loops[lp.line])
    return tuple(out.items)


def run_checks(bundle: "Bundle", rules: RuleSet) -> CheckReport:
    """Every ``[[kernel]]`` of ``rules`` checked against its capture in ``bundle``.
    :class:`RuleError` for a kernel, target, variant, line or loop it does not have."""
    outcomes: list[Outcome] = []
    for rule in rules.kernels:
        where = f"{rules.source}: [[kernel]] {rule.name}"
        try:
            cap = bundle.capture(rule.name, rule.target, rule.variant)
        except RuleError:
            raise
        except IrscopeError as exc:  # no such kernel, target or variant: the rules are wrong
            raise RuleError(f"{where}: {exc}") from None
        outcomes.extend(evaluate(rule, facts_for(cap, rule, where)))
    return CheckReport(tuple(outcomes))
