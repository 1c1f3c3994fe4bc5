"""Exact TTGIR links from an ``--exact-links`` capture (``USE_IR_LOC=ttgir``)."""

from __future__ import annotations

import re
from collections import defaultdict

from irscope.compiler.stages import TTGIR
from irscope.ir import Module
from irscope.irdiff.align import align
from irscope.irdiff.engine import RENAMED, dataflow_agrees, op_pairs

from .keys import units
from .model import EXACT_STAGES, ExactReport, StageLink

_DBG_RE = re.compile(r",?\s*!dbg\s+!\d+")
_MD_RE = re.compile(r"!\d+")


def normalise_instruction(text: str) -> str:
    """An instruction with its debug references removed (``!dbg !N``; other metadata
    numbers shift when the debug table changes, so ``!N`` becomes ``!``)."""
    return _MD_RE.sub("!", _DBG_RE.sub("", text)).strip()


def ttgir_lines(ttgir: Module, ttgirloc: Module) -> dict[int, int]:
    """``_ttgirloc`` instruction line -> TTGIR op line, for the instructions whose debug
    location is a line of a ``.ttgir`` file holding an op of ``ttgir``.

    Instructions at the function's own line (``ld.param``...) tie to the ``tt.func`` line.
    """
    op_lines = {u.line for u in units(ttgir)}
    out: dict[int, int] = {}
    for ins in ttgirloc.ops():
        fr = ins.location.frame
        if fr is not None and fr.file.endswith(".ttgir") and fr.line in op_lines:
            out[ins.line] = fr.line
    return out


def align_ttgirloc(normal: Module, ttgirloc: Module) -> tuple[dict[int, int], bool, float]:
    """Pair the instructions of a normal stage with those of its ``_ttgirloc`` twin.

    Both compiles ran the same passes on the same TTGIR; only debug locations differ, so
    the instruction sequences should be equal once debug references are stripped. Returns
    (normal line -> ttgirloc line, identical?, similarity ratio). When they are not
    identical, :func:`pair_instructions` pairs them through the structural IR diff. The
    ratio is the share of instructions paired, ``2 * pairs / (instructions on both sides)``.
    """
    a = list(normal.ops())
    b = list(ttgirloc.ops())
    na = [normalise_instruction(o.text) for o in a]
    nb = [normalise_instruction(o.text) for o in b]
    if na == nb:
        return {x.line: y.line for x, y in zip(a, b)}, True, 1.0
    pairs = pair_instructions(normal, ttgirloc)
    return pairs, False, 2 * len(pairs) / (len(a) + len(b))


def pair_instructions(normal: Module, ttgirloc: Module) -> dict[int, int]:
    """normal line -> ttgirloc line of the instructions that correspond.

    First the instructions whose texts, debug references stripped, are equal: the
    IR diff's aligner (:func:`irscope.irdiff.align.align`, patience, never
    quadratic) over those texts, so that in a run of instructions of one shape
    (``mov.b32 %r467, %r374`` ...) each keeps its own partner. Then, for the
    instructions left, the structural IR diff (:func:`irscope.irdiff.engine.op_pairs`),
    which erases value names: when the second compile numbered its values
    differently, texts agree on little and it pairs them anyway. Last, when the
    texts left some instructions of both sides unpaired, every pair whose operands
    are not the values its operands' pairs define is dropped
    (:func:`irscope.irdiff.engine.dataflow_agrees`): a pair of two neighbours in a
    renumbered run, or a user of an instruction that has no partner. An instruction
    whose text changed (a location-sensitive optimisation) pairs with nothing, so a
    divergence costs only the instructions it touches and their users.
    """
    a, b = list(normal.ops()), list(ttgirloc.ops())
    pairs = {a[i]: b[j] for i, j in align([normalise_instruction(o.text) for o in a],
                                          [normalise_instruction(o.text) for o in b])}
    if len(pairs) == min(len(a), len(b)):  # the names agree: every text found its partner
        return {x.line: y.line for x, y in pairs.items()}
    taken = {id(y) for y in pairs.values()}
    for x, y, how in op_pairs(normal, ttgirloc, normal.stage):
        if x not in pairs and id(y) not in taken and (
                how != RENAMED or normalise_instruction(x.text) == normalise_instruction(y.text)):
            pairs[x] = y
            taken.add(id(y))
    # Every pair fed by the values its operands' pairs define (a text pair of two
    # neighbours in a renumbered run is not).
    return {x.line: y.line for x, y in dataflow_agrees(normal, ttgirloc, list(pairs.items()))}


def link_exact(stage: str, ttgir: Module, normal: Module | None, ttgirloc: Module
               ) -> tuple[list[StageLink], list[StageLink], ExactReport]:
    """Exact TTGIR links of one stage (``llir`` or ``ptx``).

    Returns (links TTGIR -> ``<stage>_ttgirloc``, links TTGIR -> ``<stage>`` transferred
    through :func:`align_ttgirloc`, report). With no normal stage the second list is empty.
    """
    loc_stage = EXACT_STAGES[stage]
    lines = ttgir_lines(ttgir, ttgirloc)
    report = ExactReport(stage, ttgirloc_ops=sum(1 for _ in ttgirloc.ops()), with_ttgir_line=len(lines))
    own = [StageLink(TTGIR, g, loc_stage, i, "exact") for i, g in lines.items()]
    moved: list[StageLink] = []
    if normal is not None:
        pairs, report.identical, report.ratio = align_ttgirloc(normal, ttgirloc)
        for n_line, l_line in pairs.items():
            g = lines.get(l_line)
            if g is not None:
                moved.append(StageLink(TTGIR, g, stage, n_line, "exact"))
        report.transferred = len({lk.dst_line for lk in moved})
    return own, moved, report


def _shared_ttgir_links(a: str, ea: dict[int, set[int]], b: str, eb: dict[int, set[int]]) -> list[StageLink]:
    """``exact`` links between two stages' instructions that came from one TTGIR op."""
    by_g: dict[int, list[int]] = defaultdict(list)
    for line, gs in eb.items():
        for g in gs:
            by_g[g].append(line)
    out = set()
    for line, gs in ea.items():
        for g in gs:
            for d in by_g.get(g, ()):
                out.add(StageLink(a, line, b, d, "exact"))
    return sorted(out, key=lambda lk: (lk.src_line, lk.dst_line))

