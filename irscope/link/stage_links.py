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
import functools
import operator
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import groupby
from typing import Iterable, Iterator, Mapping, NamedTuple, Sequence

from irscope.errors import IrscopeError
from irscope.robust import paused_gc
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


class StageLink(NamedTuple):
    """One op of ``src_stage`` tied to one op of ``dst_stage`` (lines are 1-based lines
    of the stage texts). A named tuple: a capture has thousands, built at C speed."""

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

@functools.lru_cache(maxsize=4096)  # a capture names few files, each on thousands of ops
def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


@functools.lru_cache(maxsize=1 << 16)  # stages print the same locations: key each once
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
    return sorted([*module.ops(), *module.functions], key=_LINE)


_LINE = operator.attrgetter("line")
_LOCATION = operator.attrgetter("location")
_MISSING = object()


def _index(ops: Iterable[Op], key, lines: bool = False) -> dict[tuple, list]:
    """Key -> the ops at it (their lines, with ``lines``), in ``ops`` order."""
    out: dict[tuple, list] = defaultdict(list)
    # Parsers share one Location object between the ops of one location alias or
    # !dbg node, and neighbouring instructions mostly share one: key each run of
    # equal locations once (and each object once: the ops keep it alive, so ids
    # are stable).
    keys: dict[int, tuple | None] = {}
    take = _LINE if lines else None
    for loc, run in groupby(ops, _LOCATION):
        k = keys.get(id(loc), _MISSING)
        if k is _MISSING:
            k = keys[id(loc)] = key(loc)
        if k is not None:
            out[k].extend(map(take, run) if take else run)
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

class LocationGroup:
    """The location links between two adjacent stages, kept grouped by location key.

    Every op of ``src_stage`` links to every op of ``dst_stage`` at the same key
    (:func:`chain_key`, or :func:`line_key` when SASS is involved), so the links are a
    union of per-key products. One flash_attention capture has ~270,000 such pairs but
    only a few thousand ops: storing the groups and expanding on query keeps building
    cheap. Pairs whose source line is in ``src_exact`` *and* whose destination line is in
    ``dst_exact`` are left out (both ends have an ``exact`` link between them instead).

    Iterating gives the :class:`StageLink` objects in the order :func:`link_by_location`
    lists them (source ops in line order, then destination ops in line order); ``len``
    counts them without building them.
    """

    __slots__ = ("src_stage", "dst_stage", "kind", "_src_keys", "_dst_keys", "src_lines", "dst_lines",
                 "src_exact", "dst_exact", "_len")

    def __init__(self, src_stage: str, dst_stage: str, kind: str,
                 src_index: Mapping[tuple, list[int]], dst_index: Mapping[tuple, list[int]],
                 src_exact: frozenset[int] = frozenset(), dst_exact: frozenset[int] = frozenset()) -> None:
        self.src_stage, self.dst_stage, self.kind = src_stage, dst_stage, kind
        # Only keys both stages have produce links; the others would only cost lookups.
        shared = src_index.keys() & dst_index.keys()
        self.src_lines: dict[tuple, list[int]] = {k: v for k, v in src_index.items() if k in shared}
        self.dst_lines: dict[tuple, list[int]] = {k: v for k, v in dst_index.items() if k in shared}
        self._src_keys: dict[int, list[tuple]] | None = None  # built by the first query
        self._dst_keys: dict[int, list[tuple]] | None = None
        self.src_exact, self.dst_exact = src_exact, dst_exact
        n = 0
        for k, ss in self.src_lines.items():
            ds = self.dst_lines[k]
            n += len(ss) * len(ds)
            if src_exact and dst_exact:
                n -= sum(s in src_exact for s in ss) * sum(d in dst_exact for d in ds)
        self._len = n

    def __len__(self) -> int:
        return self._len

    @property
    def src_keys(self) -> dict[int, list[tuple]]:
        """Source line -> its location keys, in line order."""
        if self._src_keys is None:
            self._src_keys = _keys_by_line(self.src_lines)
        return self._src_keys

    @property
    def dst_keys(self) -> dict[int, list[tuple]]:
        """Destination line -> its location keys, in line order."""
        if self._dst_keys is None:
            self._dst_keys = _keys_by_line(self.dst_lines)
        return self._dst_keys

    def __iter__(self) -> Iterator[StageLink]:
        a, b, kind, se, de = self.src_stage, self.dst_stage, self.kind, self.src_exact, self.dst_exact
        for s, keys in self.src_keys.items():
            for k in keys:
                cut = s in se
                for d in self.dst_lines[k]:
                    if not (cut and d in de):
                        yield StageLink(a, s, b, d, kind)

    def __repr__(self) -> str:
        return f"LocationGroup({self.src_stage}->{self.dst_stage}, {self.kind}, {len(self.src_lines)} keys, {self._len} links)"

    def linked(self, line: int, forward: bool) -> Iterator[int]:
        """The lines linked to ``line`` (of ``src_stage`` when ``forward``, else of
        ``dst_stage``), in the order the flat link list has them."""
        if forward:
            mine, theirs, cut, other_cut = self.src_keys, self.dst_lines, self.src_exact, self.dst_exact
        else:
            mine, theirs, cut, other_cut = self.dst_keys, self.src_lines, self.dst_exact, self.src_exact
        excluded = other_cut if line in cut else ()
        for k in mine.get(line, ()):
            for o in theirs[k]:
                if o not in excluded:
                    yield o

    def linked_lines(self) -> tuple[set[int], set[int]]:
        """(source lines, destination lines) that have at least one link here."""
        src: set[int] = set()
        dst: set[int] = set()
        se, de = self.src_exact, self.dst_exact
        for k, ss in self.src_lines.items():
            ds = self.dst_lines[k]
            # An excluded pair only matters when every partner of a line is excluded.
            free_d = [d for d in ds if d not in de]
            free_s = [s for s in ss if s not in se]
            src.update(ss if free_d else free_s)
            dst.update(ds if free_s else free_d)
        return src, dst


def _keys_by_line(index: Mapping[tuple, list[int]]) -> dict[int, list[tuple]]:
    # Line order, as link_by_location walks the source ops; a line normally has one key,
    # but two units starting on one line keep both.
    out: dict[int, list[tuple]] = defaultdict(list)
    for k, lines in index.items():
        for ln in lines:
            out[ln].append(k)
    return {ln: out[ln] for ln in sorted(out)}


def _line_index(module: Module, key) -> dict[tuple, list[int]]:
    return _index(units(module), key, lines=True)



def location_group(src_stage: str, src: Module, dst_stage: str, dst: Module, *,
                   drop_dst: Iterable[int] = (), src_exact: Iterable[int] = (),
                   dst_exact: Iterable[int] = (), _indexes: dict | None = None) -> LocationGroup:
    """The location links of :func:`link_by_location`, grouped (see :class:`LocationGroup`).

    ``drop_dst``: destination lines that get no location link at all; ``src_exact`` /
    ``dst_exact``: pairs with both ends in them are left out.
    """
    coarse = "sass" in (src_stage, dst_stage)
    key, kind = (line_key, "same-line") if coarse else (chain_key, "same-location")

    def index(stage: str, module: Module) -> dict[tuple, list[int]]:
        # A middle stage is the destination of one group and the source of the next:
        # build_links passes _indexes so its keys are computed once.
        if _indexes is None:
            return _line_index(module, key)
        got = _indexes.get((stage, key))
        if got is None:
            got = _indexes[(stage, key)] = _line_index(module, key)
        return got

    dst_index = index(dst_stage, dst)
    drop = set(drop_dst)
    if drop:
        dst_index = {k: kept for k, v in dst_index.items() if (kept := [d for d in v if d not in drop])}
    return LocationGroup(src_stage, dst_stage, kind, index(src_stage, src), dst_index,
                         frozenset(src_exact), frozenset(dst_exact))


def link_by_location(src_stage: str, src: Module, dst_stage: str, dst: Module) -> list[StageLink]:
    """Links between every pair of ops at the same Python location.

    The full chain (with columns and inlined-at frames) when both stages print one
    (``same-location``); the innermost file and line when either is SASS
    (``same-line``). This builds every pair; :func:`build_links` keeps them grouped
    (:func:`location_group`).
    """
    return list(location_group(src_stage, src, dst_stage, dst))


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

class LinkList(Sequence[StageLink]):
    """Every link of a capture, as parts in build order: explicit :class:`StageLink`
    lists (same-op, derived, exact) and :class:`LocationGroup` (location links, which
    are the bulk and stay grouped until someone iterates them).

    Reads as a sequence of :class:`StageLink`: ``len`` is cheap; iterating, indexing or
    comparing with a list builds the location links (indexing keeps the built list).
    """

    __slots__ = ("parts", "_flat")

    def __init__(self, parts: Iterable[Sequence[StageLink] | LocationGroup] = ()) -> None:
        self.parts: list[Sequence[StageLink] | LocationGroup] = list(parts)
        self._flat: list[StageLink] | None = None

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self) -> Iterator[StageLink]:
        for p in self.parts:
            yield from p

    def __getitem__(self, i):
        if self._flat is None:
            self._flat = list(self)
        return self._flat[i]

    def __eq__(self, other) -> bool:
        if isinstance(other, (LinkList, list, tuple)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable parts, like the list it replaces

    def __repr__(self) -> str:
        groups = sum(isinstance(p, LocationGroup) for p in self.parts)
        return f"LinkList({len(self)} links, {groups} location group(s))"

    def explicit(self) -> Iterator[StageLink]:
        """The links held one by one (everything but the location groups)."""
        for p in self.parts:
            if not isinstance(p, LocationGroup):
                yield from p

    def groups(self) -> list[LocationGroup]:
        """The location groups."""
        return [p for p in self.parts if isinstance(p, LocationGroup)]


@dataclass
class CaptureLinks:
    """Every adjacent-stage link of one capture, and queries that compose them.

    ``links`` may be a plain list of :class:`StageLink` or a :class:`LinkList` (what
    :func:`build_links` gives: location links stay grouped and queries expand them).
    """

    modules: dict[str, Module]
    links: Sequence[StageLink]
    exact: dict[str, ExactReport] = field(default_factory=dict)
    _adj: dict | None = field(default=None, repr=False)
    _explicit: list = field(default_factory=list, repr=False)
    _ops: dict = field(default_factory=dict, repr=False)
    _graph: dict = field(default_factory=dict, repr=False)
    _groups: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.links, LinkList):
            explicit: Iterable[StageLink] = self.links.explicit()
            groups = [g for g in self.links.groups() if len(g)]
        else:
            explicit, groups = self.links, []
        self._explicit = explicit = list(explicit)
        self._adj = None  # (stage, line) -> other stage -> [(line, kind)]: on first query
        # A dict, not a set: stages of one rank (the _ttgirloc ones) keep the order the
        # links list them in, whatever the string hash seed.
        pairs: dict[tuple[str, str], None] = dict.fromkeys((lk.src_stage, lk.dst_stage) for lk in explicit)
        # (from stage, to stage) -> [(group, forward?)]: read after the explicit links of
        # that pair, which is where build_links puts them in the flat list.
        by_pair: dict[tuple[str, str], list[tuple[LocationGroup, bool]]] = defaultdict(list)
        for g in groups:
            by_pair[(g.src_stage, g.dst_stage)].append((g, True))
            by_pair[(g.dst_stage, g.src_stage)].append((g, False))
            pairs[(g.src_stage, g.dst_stage)] = None
        self._groups = dict(by_pair)
        self._ops = {}  # stage -> {line: unit}, built when a query first reads a stage
        graph: dict[str, list[str]] = defaultdict(list)
        for a, b in sorted(pairs, key=lambda p: (_rank(p[0]), _rank(p[1]))):
            graph[a].append(b)
            graph[b].append(a)
        self._graph = dict(graph)

    def _adjacency(self) -> dict:
        if self._adj is None:
            adj: dict = defaultdict(lambda: defaultdict(list))
            for lk in self._explicit:
                adj[(lk.src_stage, lk.src_line)][lk.dst_stage].append((lk.dst_line, lk.kind))
                adj[(lk.dst_stage, lk.dst_line)][lk.src_stage].append((lk.src_line, lk.kind))
            self._adj = adj
        return self._adj

    def _units(self, stage: str) -> dict[int, Op]:
        got = self._ops.get(stage)
        if got is None:
            m = self.modules.get(stage)
            got = self._ops[stage] = {u.line: u for u in units(m)} if m is not None else {}
        return got

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
        return self._units(stage).get(line)

    def neighbours(self, stage: str, line: int, other: str) -> list[tuple[int, str]]:
        """``(line, kind)`` of every op of ``other`` linked directly to ``line`` of
        ``stage`` (explicit links first, then location groups, as in ``links``)."""
        out = list(self._adjacency().get((stage, line), {}).get(other, ()))
        for g, forward in self._groups.get((stage, other), ()):
            out.extend((o, g.kind) for o in g.linked(line, forward))
        return out

    def follow(self, stage: str, line: int) -> dict[str, dict[int, str]]:
        """Per other stage: linked line -> kind (the strongest over the stage route)."""
        out: dict[str, dict[int, str]] = {}
        adj = self._adjacency()
        for target in self.modules:
            if target == stage or target in EXACT_STAGES.values():
                continue
            path = self.route(stage, target)
            if not path:
                continue
            frontier = {line: "same-op"}
            for a, b in zip(path, path[1:]):
                nxt: dict[int, str] = {}
                groups = self._groups.get((a, b), ())
                # Many frontier ops share a location key: a (group, key, kind, excluded?)
                # already expanded adds nothing new, so it is expanded once.
                done: set = set()
                for ln, kind in frontier.items():
                    for dl, k in adj.get((a, ln), _NONE).get(b, ()):
                        _keep(nxt, dl, _weaker(kind, k))
                    for g, forward in groups:
                        keys = (g.src_keys if forward else g.dst_keys).get(ln)
                        if not keys:
                            continue
                        cut = ln in (g.src_exact if forward else g.dst_exact)
                        excluded = (g.dst_exact if forward else g.src_exact) if cut else ()
                        theirs = g.dst_lines if forward else g.src_lines
                        k = _weaker(kind, g.kind)
                        for key in keys:
                            memo = (id(g), key, k, cut)
                            if memo in done:
                                continue
                            done.add(memo)
                            for dl in theirs[key]:
                                if dl not in excluded:
                                    _keep(nxt, dl, k)
                frontier = nxt
            if frontier:
                out[target] = frontier
        return out

    def links_for_op(self, stage: str, line: int) -> dict:
        """What the op at ``line`` of ``stage`` became (or came from) in every other
        stage: ``{"stage", "line", "text", "links": {stage: [LinkedOp...]}}``."""
        op = self.op(stage, line)
        links = {s: [LinkedOp(ln, self._units(s)[ln].text.strip(), k) for ln, k in sorted(got.items())]
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
        explicit = self.links.explicit() if isinstance(self.links, LinkList) else self.links
        for lk in explicit:
            seen[lk.src_stage].add(lk.src_line)
            seen[lk.dst_stage].add(lk.dst_line)
        for g in self.links.groups() if isinstance(self.links, LinkList) else ():
            src, dst = g.linked_lines()
            if src:
                seen[g.src_stage] |= src
                seen[g.dst_stage] |= dst
        return {s: len(seen[s]) for s in self.modules if s in seen}


_NONE: dict = {}


def _rank(stage: str) -> int:
    return PIPELINE.index(stage) if stage in PIPELINE else len(PIPELINE)


def _weaker(a: str, b: str) -> str:
    return b if KIND_RANK.get(b, 9) >= KIND_RANK.get(a, 9) else a


def _keep(d: dict[int, str], line: int, kind: str) -> None:
    old = d.get(line)
    if old is None or KIND_RANK.get(kind, 9) < KIND_RANK.get(old, 9):
        d[line] = kind


@paused_gc  # it allocates tens of thousands of small objects that all stay alive
def build_links(modules: Mapping[str, Module]) -> CaptureLinks:
    """All adjacent links of one capture from its parsed stages (any may be missing).

    TTIR -> TTGIR by :func:`link_ttir_ttgir`; TTGIR -> LLIR -> PTX -> SASS by location.
    With ``llir_ttgirloc``/``ptx_ttgirloc`` present, TTGIR -> LLIR and TTGIR -> PTX are
    exact (plus the ``_ttgirloc`` stages themselves) and LLIR <-> PTX pairs instructions
    that came from one TTGIR op; instructions without an exact link keep location links.
    Location links stay grouped (:class:`LocationGroup`) in the returned ``links``
    (a :class:`LinkList`); queries expand only what they reach.
    """
    m = dict(modules)
    parts: list[Sequence[StageLink] | LocationGroup] = []
    exact: dict[str, ExactReport] = {}
    if "ttir" in m and "ttgir" in m:
        parts.append(link_ttir_ttgir(m["ttir"], m["ttgir"]))
    op_ttgir: dict[str, dict[int, set[int]]] = {}  # stage -> line -> TTGIR op lines
    if "ttgir" in m:
        for stage, loc_stage in EXACT_STAGES.items():
            if loc_stage not in m:
                continue
            own, moved, exact[stage] = link_exact(stage, m["ttgir"], m.get(stage), m[loc_stage])
            parts.append(own + moved)
            per: dict[int, set[int]] = defaultdict(set)
            for lk in moved:
                per[lk.dst_line].add(lk.src_line)
            if moved:
                op_ttgir[stage] = per
    chain = [s for s in PIPELINE[1:] if s in m]
    indexes: dict = {}
    for a, b in zip(chain, chain[1:]):
        ea, eb = op_ttgir.get(a), op_ttgir.get(b)
        # A pair's explicit links go before its location group: CaptureLinks reads
        # neighbours in that order, as the flat list has them.
        if a == "ttgir" and eb is not None:
            # Exactly linked instructions drop their TTGIR location links.
            parts.append(location_group(a, m[a], b, m[b], drop_dst=eb, _indexes=indexes))
        elif ea is not None and eb is not None:
            parts.append(_shared_ttgir_links(a, ea, b, eb))
            parts.append(location_group(a, m[a], b, m[b], src_exact=ea, dst_exact=eb,
                                        _indexes=indexes))
        else:
            parts.append(location_group(a, m[a], b, m[b], _indexes=indexes))
    return CaptureLinks(m, LinkList(parts), exact)


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
