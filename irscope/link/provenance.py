"""What each compiler pass did to the IR: changed or not, ops added/removed/modified.

Pure functions over texts (no I/O). The input is the ordered list of a capture's
per-pass snapshots (:class:`PassInput`) plus the final text of each stage; the
output is one :class:`PassChange` per snapshot and, per stage, where each op name
came from (:class:`StageOrigins`).

Comparison is at op level and robust to SSA renaming: every op line is normalised
by :func:`normalise_op_text` (locations stripped, value names, block labels and
location aliases replaced by placeholders) and two IRs are compared as multisets
of ``(op name, normalised text)``. See :func:`diff_summaries` for the exact rule
that splits a difference into added, removed and modified ops.

Parsing goes through :mod:`irscope.ir`; every text is summarised once per distinct
content (a :class:`ProvenanceCache` keyed by the text's hash), so the many passes
that change nothing cost a dictionary look-up.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from irscope.ir import ParseCache, op_forms
from irscope.ir.forms import normalise_op_text, op_form
from irscope.compiler.pass_order import INTERNAL, Side, place_steps
from irscope.compiler.stages import LLIR, MLIR, SNAPSHOT_KINDS, pass_stage
from irscope.ir.model import DIALECT_LLVM, DIALECT_MIR

__all__ = ["normalise_op_text", "OpSummary", "OpDiff", "PassInput", "PassChange", "StageOrigins",
           "ProvenanceCache", "summarise_module_ops", "summarise_forms", "diff_summaries", "pass_changes",
           "stage_origins", "dialect_of"]

# LLVM passes print either the whole module or just the function they ran on
# (function passes of the new pass manager, some legacy ones), so declarations and
# globals come and go between consecutive snapshots without any pass touching them:
# LLVM summaries count the ops inside functions only.
_MODULE_LEVEL = frozenset({"declare", "global"})


def module_scope(text: str) -> bool:
    """Whether an LLVM IR snapshot prints the whole module (its first line is the
    module header) rather than one function."""
    head = text[:256].lstrip()  # not text.lstrip(): that copies a whole snapshot
    return head.startswith(("; ModuleID", "source_filename", "target "))


def dialect_of(op_name: str) -> str:
    """Dialect prefix of an op name: ``ttg`` for ``ttg.convert_layout``. A name without
    a dot is an instruction: ``mir`` for a machine opcode (``COPY``, ``LD_i32``: upper
    case), ``llvm`` for an LLVM IR one (``fadd``)."""
    head, dot, _ = op_name.partition(".")
    if dot:
        return head
    return DIALECT_MIR if op_name[:1].isupper() else DIALECT_LLVM


@dataclass(frozen=True, slots=True)
class OpSummary:
    """The op content of one IR text, independent of SSA names and locations."""

    ops: Counter
    """``(op name, normalised text)`` -> count."""
    names: Counter
    """op name -> count."""
    dialects: dict[str, int]
    """dialect prefix -> op count, largest first."""

    @property
    def total(self) -> int:
        """Number of ops."""
        return sum(self.names.values())


@dataclass(frozen=True, slots=True)
class OpDiff:
    """Op-level difference between two :class:`OpSummary`."""

    added: int
    removed: int
    modified: int
    by_name: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """op name -> (added, removed, modified), only names with a non-zero entry."""


EMPTY_DIFF = OpDiff(0, 0, 0, {})


def summarise_module_ops(ops: Iterable) -> OpSummary:
    """Summarise parsed ops (anything with ``.name`` and ``.text``); ops the parser did
    not understand (``<unknown>``) are left out: they are not ops of any dialect."""
    return summarise_forms((op.name, op_form(op)) for op in ops
                           if op.name != "<unknown>" and op.name)


def summarise_forms(forms: Iterable[tuple[str, str]]) -> OpSummary:
    """Summarise ``(op name, form)`` pairs (:func:`irscope.ir.op_forms`)."""
    pairs: Counter = Counter(forms)
    names: Counter = Counter()
    for (name, _), count in pairs.items():
        names[name] += count
    dialects: Counter = Counter()
    for name, count in names.items():
        dialects[dialect_of(name)] += count
    return OpSummary(pairs, names, dict(dialects.most_common()))


def diff_summaries(before: OpSummary, after: OpSummary) -> OpDiff:
    """Split the difference between two summaries into added, removed, modified ops.

    Per op name ``n``: let ``B`` and ``A`` be the multisets of normalised texts of
    ``n`` ops before and after, ``common = |B ∩ A|`` (multiset intersection),
    ``gone = |B| - common`` and ``new = |A| - common``. Then
    ``modified = min(gone, new)`` (an old text paired with a new one: the op was
    rewritten in place), ``removed = gone - modified`` and ``added = new - modified``.
    So ``added - removed == |A| - |B|`` for every name, and the totals are the sums
    over names.
    """
    if before is after:
        return EMPTY_DIFF
    by_name: dict[str, list[int]] = {}
    for key, count in before.ops.items():
        d = count - after.ops.get(key, 0)
        if d > 0:
            by_name.setdefault(key[0], [0, 0])[0] += d
    for key, count in after.ops.items():
        d = count - before.ops.get(key, 0)
        if d > 0:
            by_name.setdefault(key[0], [0, 0])[1] += d
    out: dict[str, tuple[int, int, int]] = {}
    added = removed = modified = 0
    for name, (gone, new) in by_name.items():
        mod = min(gone, new)
        a, r = new - mod, gone - mod
        out[name] = (a, r, mod)
        added += a
        removed += r
        modified += mod
    return OpDiff(added, removed, modified, out)


class ProvenanceCache:
    """Memo of summaries per distinct text (and of diffs per pair of texts).

    Keys are a SHA-1 of the text plus the parse stage, so identical snapshots are
    parsed and compared once, whatever their number.
    """

    def __init__(self) -> None:
        self.summaries: dict[tuple[str, str], OpSummary] = {}
        self.diffs: dict[tuple, OpDiff] = {}
        self.parse_cache = ParseCache()
        # id(text) -> (text, key): the same text object is asked for again and again
        # (as one pass's "after" and the next one's "before"); hashing 390 MB of
        # snapshots once per question cost a second. The text is kept so its id stays valid.
        self._keys: dict[int, tuple[str, str]] = {}

    def key(self, text: str) -> str:
        """Content key of a text."""
        hit = self._keys.get(id(text))
        if hit is not None and hit[0] is text:
            return hit[1]
        k = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        self._keys[id(text)] = (text, k)
        return k

    def summary(self, text: str, stage: str = MLIR) -> OpSummary:
        """The summary of ``text`` parsed as ``stage`` (memoised)."""
        k = (stage, self.key(text))
        hit = self.summaries.get(k)
        if hit is None:
            forms = op_forms(stage, text, self.parse_cache)
            if stage == LLIR:  # see _MODULE_LEVEL
                forms = [f for f in forms if f[0] not in _MODULE_LEVEL]
            hit = summarise_forms(forms)
            self.summaries[k] = hit
        return hit

    def diff(self, before: OpSummary, after: OpSummary) -> OpDiff:
        """:func:`diff_summaries`, memoised on the two summaries' identities."""
        if before is after:
            return EMPTY_DIFF
        k = (id(before), id(after))
        hit = self.diffs.get(k)
        if hit is None:
            hit = diff_summaries(before, after)
            self.diffs[k] = hit
        return hit


@dataclass(frozen=True, slots=True)
class PassInput:
    """One per-pass snapshot as the bundle stores it (``passes`` row plus its text)."""

    stage: str
    name: str
    argument: str
    when: str
    """``before``, ``after``, ``after-failed`` or ``internal``."""
    kind: str
    """``mlir``, ``llvm`` or ``mir``."""
    text: str
    anchor: str = ""
    """The op the pass ran on (``builtin.module``, ``tt.func``): a pass anchored inside
    the module runs nested in another (:mod:`irscope.compiler.pass_order`)."""


@dataclass(slots=True)
class PassChange:
    """What one pass did (see :func:`pass_changes`)."""

    index: int
    """Position in the capture's pass list (0-based, the order given)."""
    stage: str
    name: str
    argument: str
    when: str
    kind: str
    """Snapshot kind: ``mlir``, ``llvm`` (LLVM IR) or ``mir`` (machine IR of codegen passes)."""
    internal: bool
    """A snapshot printed inside another pass (e.g. the pipeliner's steps): its
    change is from the previous snapshot to this one, and it is left out of sums."""
    after_known: bool
    """False when the IR after the pass is not available in a comparable form (the
    last MLIR pass of ``llir``, whose result is only kept as LLVM IR); then
    ``changed`` is False and the counts are 0."""
    changed: bool
    """The text after the pass differs from the text before it (any byte)."""
    added: int
    removed: int
    modified: int
    ops_by_dialect: dict[str, int]
    """Op count per dialect after the pass ({} when unknown)."""
    ops_before: int
    ops_after: int
    by_name: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    introduces: list[str] = field(default_factory=list)
    """Op names that first appear in the stage after this pass (even if a later pass
    erases them again)."""
    erases: list[str] = field(default_factory=list)
    """Op names whose last instance in the stage this pass erased."""
    before_summary: OpSummary | None = field(default=None, repr=False)
    after_summary: OpSummary | None = field(default=None, repr=False)
    depth: int = 0
    """0 for a top-level pass; more for a pass run inside another (left out of sums
    and of origins, like an internal snapshot)."""

    def to_json(self) -> dict:
        """The fixed JSON shape of ``irscope passes --json``."""
        return {
            "index": self.index, "stage": self.stage, "name": self.name, "argument": self.argument,
            "when": self.when, "kind": self.kind, "internal": self.internal, "after_known": self.after_known,
            "changed": self.changed, "added": self.added, "removed": self.removed,
            "modified": self.modified, "ops_by_dialect": self.ops_by_dialect,
            "ops_before": self.ops_before, "ops_after": self.ops_after,
            "introduces": self.introduces, "erases": self.erases,
        }


@dataclass(slots=True)
class StageOrigins:
    """Where the op names of one stage's final IR came from."""

    stage: str
    introduced: dict[str, int | None]
    """Op name in the stage's final IR -> index of the pass after which it first
    appeared in that stage, or None when it was already in the stage's input."""
    erased: dict[str, int]
    """Op name seen during the stage but absent from its final IR -> index of the pass
    that erased its last instance."""
    first_seen: dict[str, int] = field(default_factory=dict)
    """Every op name that was not in the stage's input -> the pass after which it first
    appeared, whether or not it survives to the final IR."""


def pass_changes(passes: Sequence[PassInput], finals: Mapping[str, str],
                 cache: ProvenanceCache | None = None) -> list[PassChange]:
    """One :class:`PassChange` per snapshot, in order.

    ``passes`` is the capture's snapshots in ``seq`` order, each stage's passes
    contiguous; ``finals`` maps a stage to its final text (``ttir``, ``ttgir``,
    ``llir``). Which texts hold the IR before and after each pass is the rule of
    :func:`irscope.compiler.pass_order.place_steps`, the one the core's pass steps use.
    """
    cache = cache or ProvenanceCache()
    places = place_steps(passes, [s for s, t in finals.items() if isinstance(t, str)])
    out: list[PassChange] = []

    def text_of(side: Side | None) -> str | None:
        if side is None:
            return None
        return passes[side.pass_index].text if side.pass_index is not None else finals[side.stage or ""]

    for i, (p, place) in enumerate(zip(passes, places)):
        stage = pass_stage(p.kind) if p.kind in SNAPSHOT_KINDS else None
        before_text, after_text = text_of(place.before), text_of(place.after)
        internal = p.when == INTERNAL
        if stage is None or before_text is None or after_text is None:
            bsum = cache.summary(before_text, stage) if before_text is not None and stage else None
            out.append(PassChange(i, p.stage, p.name, p.argument, p.when, p.kind, internal, False, False,
                                  0, 0, 0, {}, bsum.total if bsum else 0, 0, before_summary=bsum,
                                  depth=place.depth))
            continue
        bsum = cache.summary(before_text, stage)
        asum = cache.summary(after_text, stage)
        changed = before_text != after_text
        diff = cache.diff(bsum, asum) if changed else EMPTY_DIFF
        if changed and stage == LLIR and module_scope(before_text) != module_scope(after_text):
            # One side printed the whole module, the other one function: the texts
            # differ by what was printed, so only a difference in the ops says the pass did something.
            changed = bool(diff.added or diff.removed or diff.modified)
        out.append(PassChange(i, p.stage, p.name, p.argument, p.when, p.kind, internal, True, changed,
                              diff.added, diff.removed, diff.modified, dict(asum.dialects),
                              bsum.total, asum.total, dict(diff.by_name),
                              before_summary=bsum, after_summary=asum, depth=place.depth))
    _mark_origins(passes, out)
    return out


def _mark_origins(passes: Sequence[PassInput], changes: list[PassChange]) -> None:
    """Fill ``introduces`` / ``erases`` of each change from the origins of its group."""
    for origins in _origins_by_group(changes).values():
        for name, idx in origins.first_seen.items():
            changes[idx].introduces.append(name)
        for name, idx in origins.erased.items():
            changes[idx].erases.append(name)
    for c in changes:
        c.introduces.sort()
        c.erases.sort()


def _known_steps(changes: Sequence[PassChange]) -> dict[tuple[str, str], list[PassChange]]:
    """The top-level passes (not internal, not nested) whose result is known,
    grouped by (stage, snapshot kind) in order. A stage can run passes of several kinds (llir: MLIR, then LLVM; ptx:
    LLVM IR, then MIR); ops of one kind never turn into ops of another inside a
    group, so each group is traced on its own."""
    groups: dict[tuple[str, str], list[PassChange]] = {}
    for c in changes:
        if not c.internal and not c.depth and c.after_known and c.after_summary is not None:
            groups.setdefault((c.stage, c.kind), []).append(c)
    return groups


def stage_origins(passes: Sequence[PassInput], changes: Sequence[PassChange]) -> dict[str, StageOrigins]:
    """Per stage: the pass that introduced each op name of the stage's final IR and the
    pass that erased each name that disappeared (see :class:`StageOrigins`), traced
    through the stage's last group of passes of one kind (see :func:`_known_steps`).

    Walks those passes in order; a name first appears after pass ``i`` when pass
    ``i``'s result holds it and no earlier state of the group did. The final op names
    are those after its last pass.
    """
    return {stage: origins for (stage, _), origins in _origins_by_group(changes).items()}


def _origins_by_group(changes: Sequence[PassChange]) -> dict[tuple[str, str], StageOrigins]:
    result: dict[tuple[str, str], StageOrigins] = {}
    for (stage_name, kind), steps in _known_steps(changes).items():
        start = steps[0].before_summary
        current: set[str] = set(start.names) if start is not None else set()
        initial = set(current)
        seen = set(current)
        first_seen: dict[str, int] = {}
        last_erased: dict[str, int] = {}
        for c in steps:
            if c.after_summary is None:  # _known_steps keeps only steps with one
                continue
            after_names = set(c.after_summary.names)
            for name in after_names - seen:
                first_seen[name] = c.index
                seen.add(name)
            for name in current - after_names:
                last_erased[name] = c.index
            current = after_names
        introduced = {n: (None if n in initial else first_seen.get(n)) for n in sorted(current)}
        erased = {n: last_erased[n] for n in sorted(seen - current) if n in last_erased}
        result[(stage_name, kind)] = StageOrigins(stage_name, introduced, erased, first_seen)
    return result
