"""Op-to-op links between the stages of one capture: what each op became.

Pure functions over parsed modules (:mod:`irscope.ir`), plus thin readers of a bundle
at the end. Links join *adjacent* stages; a query composes them along the pipeline.

How two ops are tied, strongest first (``kind``):

``same-op``
    TTIR -> TTGIR: the same full location chain (every frame compared by file base
    name, line and column) and the same op, or a known rename (:data:`RENAMES`).
``exact``
    TTGIR -> LLIR/PTX from an ``--exact-links`` capture: the ``llir_ttgirloc`` /
    ``ptx_ttgirloc`` stages were compiled with ``USE_IR_LOC=ttgir``, so their debug
    lines are line numbers of the TTGIR stage text: each instruction names the one
    TTGIR op it was lowered from. The normal ``llir``/``ptx`` get the same links where
    their instructions equal the ``_ttgirloc`` ones (see :func:`align_ttgirloc`).
``derived``
    TTIR -> TTGIR: an op TTGIR passes added (``ttg.convert_layout``,
    ``ttg.local_alloc``...) at a location TTIR ops have: it links to all of them.
``same-location``
    Same full location chain, different op (or, from TTGIR down, any instruction at
    that chain). Precision is one Python *location*: every op of one Python
    expression (``x_ptr + offsets`` gives a splat and an addptr) shares it.
``same-line``
    Anything <-> SASS: ``nvdisasm`` gives only the innermost file and line (no
    column, no inlined-at chain), so SASS ties at one Python *line*, and an op inlined
    from a helper ties to every use of that helper line.

A composed link has the weakest kind along its path.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from irscope.errors import IrscopeError
from irscope.ir import Location, Module, Op, parse_stage

# Pipeline order; a query walks this chain (plus the TTGIR -> PTX shortcut in exact mode).
PIPELINE = ("ttir", "ttgir", "llir", "ptx", "sass")
# The --exact-links stages and the normal stage whose code they repeat.
EXACT_STAGES = {"llir": "llir_ttgirloc", "ptx": "ptx_ttgirloc", "sass": "sass_ttgirloc"}

KIND_RANK = {"same-op": 0, "exact": 0, "derived": 1, "same-location": 2, "same-line": 3}
"""Strength of each link kind (lower is stronger); a path takes its weakest kind."""

RENAMES: dict[str, frozenset[str]] = {
    # TTIR op -> the TTGIR ops it may become (the same name always counts).
    "tt.dot": frozenset({"ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttg.dot"}),
    "tt.dot_scaled": frozenset({"ttng.tc_gen5_mma_scaled"}),
    "tt.load": frozenset({"ttg.async_copy_global_to_local", "ttg.local_load", "ttg.async_commit_group",
                          "ttg.async_wait"}),
    "tt.descriptor_load": frozenset({"ttng.async_tma_copy_global_to_local", "ttg.local_load"}),
    "tt.descriptor_store": frozenset({"ttng.async_tma_copy_local_to_global"}),
    "tt.trans": frozenset({"ttg.memdesc_trans"}),
    "tt.reshape": frozenset({"ttg.memdesc_reshape"}),
}
"""Known renames between TTIR and TTGIR (Triton 3.x lowering and pipelining)."""

# Dialects whose ops only TTGIR has: such an op at a TTIR location is "derived".
_GPU_DIALECTS = ("ttg", "ttng", "amdgpu", "nvgpu", "nvws")


@dataclass(frozen=True, slots=True)
class StageLink:
    """One op of ``src_stage`` tied to one op of ``dst_stage`` (lines are 1-based lines
    of the stage texts)."""

    src_stage: str
    src_line: int
    dst_stage: str
    dst_line: int
    kind: str

    def reversed(self) -> "StageLink":
        """The same link read from the other end."""
        return StageLink(self.dst_stage, self.dst_line, self.src_stage, self.src_line, self.kind)


@dataclass(frozen=True, slots=True)
class LinkedOp:
    """An op a query reached: its line and text in its stage, and how it is tied."""

    line: int
    text: str
    kind: str

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "kind": self.kind}


@dataclass(slots=True)
class ExactReport:
    """How the ``_ttgirloc`` stage of ``stage`` was used."""

    stage: str
    ttgirloc_ops: int = 0
    with_ttgir_line: int = 0
    """``_ttgirloc`` instructions whose debug line names a TTGIR op."""
    identical: bool = False
    """The instruction texts (debug info stripped) of both compiles are equal."""
    transferred: int = 0
    """Normal-stage instructions that received the exact TTGIR link."""
    ratio: float = 0.0


# ---------------------------------------------------------------------------- keys

def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def chain_key(loc: Location) -> tuple | None:
    """The whole frame chain as ``((base name, line, col), ...)``: absolute and relative
    paths of one file compare equal. None when the location is unknown."""
    if not loc.frames or not any(f.line for f in loc.frames):
        return None
    return tuple((_base(f.file), f.line, f.col) for f in loc.frames)


def line_key(loc: Location) -> tuple | None:
    """``(base name, line)`` of the innermost frame: all SASS knows. None when unknown."""
    fr = loc.frame
    if fr is None or not fr.line:
        return None
    return (_base(fr.file), fr.line)


def units(module: Module) -> list:
    """The linkable units of a module in line order: every op, and every function
    header (instructions placed at the function's own line, e.g. PTX ``ld.param``,
    tie to the ``tt.func`` / ``define`` / ``.entry`` line)."""
    return sorted([*module.ops(), *module.functions], key=lambda u: u.line)


def _index(ops: Iterable[Op], key) -> dict[tuple, list[Op]]:
    out: dict[tuple, list[Op]] = defaultdict(list)
    for op in ops:
        k = key(op.location)
        if k is not None:
            out[k].append(op)
    return out


# ---------------------------------------------------------------- TTIR -> TTGIR

def link_ttir_ttgir(ttir: Module, ttgir: Module) -> list[StageLink]:
    """Links from TTIR ops to the TTGIR ops at the same full location chain.

    Per TTGIR op, only its strongest tie is kept: ``same-op`` to the TTIR op(s) of the
    same name (or a :data:`RENAMES` source); else ``derived`` to every TTIR op there if
    it is a GPU-dialect op TTIR lacks; else ``same-location``. When both sides have the
    same number of same-name ops at one location they pair in order (TTGIR keeps the
    order); otherwise every such pair links (a layout split duplicates ``make_range``).
    """
    src = _index(units(ttir), chain_key)
    dst = _index(units(ttgir), chain_key)
    links: list[StageLink] = []
    for key, gops in dst.items():
        tops = src.get(key)
        if not tops:
            continue
        by_name: dict[str, list[Op]] = defaultdict(list)
        for t in tops:
            by_name[t.name].append(t)
        g_by_name: dict[str, list[Op]] = defaultdict(list)
        for g in gops:
            g_by_name[g.name].append(g)
        for g in gops:
            same = by_name.get(g.name)
            if same:
                peers = g_by_name[g.name]
                if len(peers) == len(same):
                    same = [same[peers.index(g)]]
                links.extend(StageLink("ttir", t.line, "ttgir", g.line, "same-op") for t in same)
                continue
            renamed = [t for t in tops if g.name in RENAMES.get(t.name, ())]
            if renamed:
                links.extend(StageLink("ttir", t.line, "ttgir", g.line, "same-op") for t in renamed)
                continue
            kind = "derived" if getattr(g, "dialect", "") in _GPU_DIALECTS else "same-location"
            links.extend(StageLink("ttir", t.line, "ttgir", g.line, kind) for t in tops)
    return links


# ------------------------------------------------------------ by Python location

def link_by_location(src_stage: str, src: Module, dst_stage: str, dst: Module) -> list[StageLink]:
    """Links between every pair of ops at the same Python location.

    The full chain (with columns and inlined-at frames) when both stages print one
    (``same-location``); the innermost file and line when either is SASS
    (``same-line``).
    """
    coarse = "sass" in (src_stage, dst_stage)
    key, kind = (line_key, "same-line") if coarse else (chain_key, "same-location")
    dst_index = _index(units(dst), key)
    links: list[StageLink] = []
    for op in units(src):
        k = key(op.location)
        for d in dst_index.get(k, ()) if k is not None else ():
            links.append(StageLink(src_stage, op.line, dst_stage, d.line, kind))
    return links


# ---------------------------------------------------------------- exact (ttgirloc)

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
    identical only the equal runs found by :class:`difflib.SequenceMatcher` pair up, so a
    divergence (a location-sensitive optimisation) costs only the ops it touches.
    """
    a = list(normal.ops())
    b = list(ttgirloc.ops())
    na = [normalise_instruction(o.text) for o in a]
    nb = [normalise_instruction(o.text) for o in b]
    if na == nb:
        return {x.line: y.line for x, y in zip(a, b)}, True, 1.0
    sm = difflib.SequenceMatcher(None, na, nb, autojunk=False)
    pairs: dict[int, int] = {}
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            pairs[a[blk.a + k].line] = b[blk.b + k].line
    return pairs, False, sm.ratio()


def link_exact(stage: str, ttgir: Module, normal: Module | None, ttgirloc: Module
               ) -> tuple[list[StageLink], list[StageLink], ExactReport]:
    """Exact TTGIR links of one stage (``llir`` or ``ptx``).

    Returns (links TTGIR -> ``<stage>_ttgirloc``, links TTGIR -> ``<stage>`` transferred
    through :func:`align_ttgirloc`, report). With no normal stage the second list is empty.
    """
    loc_stage = EXACT_STAGES[stage]
    lines = ttgir_lines(ttgir, ttgirloc)
    report = ExactReport(stage, ttgirloc_ops=sum(1 for _ in ttgirloc.ops()), with_ttgir_line=len(lines))
    own = [StageLink("ttgir", g, loc_stage, i, "exact") for i, g in lines.items()]
    moved: list[StageLink] = []
    if normal is not None:
        pairs, report.identical, report.ratio = align_ttgirloc(normal, ttgirloc)
        for n_line, l_line in pairs.items():
            g = lines.get(l_line)
            if g is not None:
                moved.append(StageLink("ttgir", g, stage, n_line, "exact"))
        report.transferred = len({lk.dst_line for lk in moved})
    return own, moved, report


# ----------------------------------------------------------------- the link graph

@dataclass
class CaptureLinks:
    """Every adjacent-stage link of one capture, and queries that compose them."""

    modules: dict[str, Module]
    links: list[StageLink]
    exact: dict[str, ExactReport] = field(default_factory=dict)
    _adj: dict = field(default_factory=dict, repr=False)
    _ops: dict = field(default_factory=dict, repr=False)
    _graph: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        adj: dict[tuple[str, int], dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
        for lk in self.links:
            adj[(lk.src_stage, lk.src_line)][lk.dst_stage].append((lk.dst_line, lk.kind))
            adj[(lk.dst_stage, lk.dst_line)][lk.src_stage].append((lk.src_line, lk.kind))
        self._adj = adj
        self._ops = {s: {u.line: u for u in units(m)} for s, m in self.modules.items()}
        pairs = {(lk.src_stage, lk.dst_stage) for lk in self.links}
        graph: dict[str, list[str]] = defaultdict(list)
        for a, b in sorted(pairs, key=lambda p: (_rank(p[0]), _rank(p[1]))):
            graph[a].append(b)
            graph[b].append(a)
        self._graph = dict(graph)

    def stage_graph(self) -> dict[str, list[str]]:
        """Which stages link directly (TTGIR -> PTX only in exact mode)."""
        return self._graph

    def route(self, start: str, target: str) -> list[str]:
        """The shortest chain of stages from ``start`` to ``target`` (BFS, in pipeline
        order, so the result is deterministic); [] when they are not connected."""
        graph = self.stage_graph()
        prev = {start: None}
        queue = [start]
        while queue:
            s = queue.pop(0)
            if s == target:
                break
            for n in sorted(graph.get(s, ()), key=_rank):
                if n not in prev:
                    prev[n] = s
                    queue.append(n)
        if target not in prev:
            return []
        path = [target]
        while prev[path[-1]] is not None:
            path.append(prev[path[-1]])
        return path[::-1]

    def op(self, stage: str, line: int) -> Op | None:
        """The op (or function header) of ``stage`` that starts at ``line``."""
        return self._ops.get(stage, {}).get(line)

    def follow(self, stage: str, line: int) -> dict[str, dict[int, str]]:
        """Per other stage: linked line -> kind (the strongest over the stage route)."""
        out: dict[str, dict[int, str]] = {}
        for target in self.modules:
            if target == stage or target in EXACT_STAGES.values():
                continue
            path = self.route(stage, target)
            if not path:
                continue
            frontier = {line: "same-op"}
            for a, b in zip(path, path[1:]):
                nxt: dict[int, str] = {}
                for ln, kind in frontier.items():
                    for dl, k in self._adj.get((a, ln), {}).get(b, ()):
                        _keep(nxt, dl, _weaker(kind, k))
                frontier = nxt
            if frontier:
                out[target] = frontier
        return out

    def links_for_op(self, stage: str, line: int) -> dict:
        """What the op at ``line`` of ``stage`` became (or came from) in every other
        stage: ``{"stage", "line", "text", "links": {stage: [LinkedOp...]}}``."""
        op = self.op(stage, line)
        links = {s: [LinkedOp(ln, self._ops[s][ln].text.strip(), k) for ln, k in sorted(got.items())]
                 for s, got in self.follow(stage, line).items()}
        return {"stage": stage, "line": line, "text": op.text.strip() if op else None,
                "links": dict(sorted(links.items(), key=lambda kv: _rank(kv[0])))}

    def links_for_python_line(self, line: int, file: str | None = None) -> dict[str, list[LinkedOp]]:
        """The ops of every stage located at ``line`` of the kernel's file.

        ``python-line``: the innermost user frame (library frames skipped) is that line;
        ``call-site``: an outer frame is, i.e. the op was inlined from a helper called
        there (SASS has no call-site frames: see the module notes).
        """
        want = _base(file) if file else None
        out: dict[str, list[LinkedOp]] = {}
        for stage, mod in self.modules.items():
            if stage in EXACT_STAGES.values():
                continue
            got = []
            for op in units(mod):
                user = op.location.user_frame()
                kind = None
                for fr in op.location.frames:
                    if fr.line == line and (want is None or _base(fr.file) == want) and not fr.is_library():
                        kind = "python-line" if fr is user else "call-site"
                        break
                if kind:
                    got.append(LinkedOp(op.line, op.text.strip(), kind))
            out[stage] = got
        return out

    def counts(self) -> dict[str, int]:
        """Ops per stage that have at least one link (for reports and tests)."""
        seen: dict[str, set[int]] = defaultdict(set)
        for lk in self.links:
            seen[lk.src_stage].add(lk.src_line)
            seen[lk.dst_stage].add(lk.dst_line)
        return {s: len(seen[s]) for s in self.modules if s in seen}


def _rank(stage: str) -> int:
    return PIPELINE.index(stage) if stage in PIPELINE else len(PIPELINE)


def _weaker(a: str, b: str) -> str:
    return b if KIND_RANK.get(b, 9) >= KIND_RANK.get(a, 9) else a


def _keep(d: dict[int, str], line: int, kind: str) -> None:
    old = d.get(line)
    if old is None or KIND_RANK.get(kind, 9) < KIND_RANK.get(old, 9):
        d[line] = kind


def build_links(modules: Mapping[str, Module]) -> CaptureLinks:
    """All adjacent links of one capture from its parsed stages (any may be missing).

    TTIR -> TTGIR by :func:`link_ttir_ttgir`; TTGIR -> LLIR -> PTX -> SASS by location.
    With ``llir_ttgirloc``/``ptx_ttgirloc`` present, TTGIR -> LLIR and TTGIR -> PTX are
    exact (plus the ``_ttgirloc`` stages themselves) and LLIR <-> PTX pairs instructions
    that came from one TTGIR op; instructions without an exact link keep location links.
    """
    m = dict(modules)
    links: list[StageLink] = []
    exact: dict[str, ExactReport] = {}
    if "ttir" in m and "ttgir" in m:
        links += link_ttir_ttgir(m["ttir"], m["ttgir"])
    op_ttgir: dict[str, dict[int, set[int]]] = {}  # stage -> line -> TTGIR op lines
    if "ttgir" in m:
        for stage, loc_stage in EXACT_STAGES.items():
            if loc_stage not in m:
                continue
            own, moved, exact[stage] = link_exact(stage, m["ttgir"], m.get(stage), m[loc_stage])
            links += own + moved
            per: dict[int, set[int]] = defaultdict(set)
            for lk in moved:
                per[lk.dst_line].add(lk.src_line)
            if moved:
                op_ttgir[stage] = per
    chain = [s for s in PIPELINE[1:] if s in m]
    for a, b in zip(chain, chain[1:]):
        loc = link_by_location(a, m[a], b, m[b])
        ea, eb = op_ttgir.get(a), op_ttgir.get(b)
        if a == "ttgir" and eb is not None:
            links += [lk for lk in loc if lk.dst_line not in eb]
        elif ea is not None and eb is not None:
            links += _shared_ttgir_links(a, ea, b, eb)
            links += [lk for lk in loc if lk.src_line not in ea or lk.dst_line not in eb]
        else:
            links += loc
    return CaptureLinks(m, links, exact)


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


# ------------------------------------------------------------------ bundle readers

def parse_capture(bundle, capture_id: int) -> dict[str, Module]:
    """Parse the linkable stages a capture holds (``_ttgirloc`` with its base parser)."""
    out: dict[str, Module] = {}
    for stage in (*PIPELINE, *EXACT_STAGES.values()):
        try:
            text = bundle.stage_text(capture_id, stage)
        except IrscopeError:  # the stage is missing (failed compile, no --exact-links)
            continue
        if isinstance(text, bytes):
            continue
        out[stage] = parse_stage(stage.split("_")[0], text)
    return out


def capture_links(bundle, capture_id: int) -> CaptureLinks:
    """:class:`CaptureLinks` of one capture of an open :class:`~irscope.store.bundle.Bundle`."""
    return build_links(parse_capture(bundle, capture_id))


def links_for_op(bundle, capture_id: int, stage: str, stage_line: int) -> dict:
    """The ops the op at ``stage_line`` of ``stage`` is linked to, in every other stage.

    ``{"stage", "line", "text", "links": {stage: [LinkedOp(line, text, kind)...]}}``;
    ``text`` is None when no op starts at that line.
    """
    return capture_links(bundle, capture_id).links_for_op(stage, stage_line)


def links_for_python_line(bundle, capture_id: int, line: int, file: str | None = None
                          ) -> dict[str, list[LinkedOp]]:
    """The ops of every stage located at Python ``line`` (see
    :meth:`CaptureLinks.links_for_python_line`)."""
    return capture_links(bundle, capture_id).links_for_python_line(line, file)
