"""Every link of one capture, and the queries that compose them along the pipeline."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping, Sequence

from irscope.compiler.stages import TTGIR, TTIR
from irscope.ir import Module, Op
from irscope.text_guard import paused_gc

from .by_location import LocationGroup, location_group
from .exact import _shared_ttgir_links, link_exact
from .keys import units
from irscope.ir.python_lines import line_match
from .model import EXACT_STAGES, PIPELINE, ExactReport, LinkedOp, StageLink
from .model import keep as _keep
from .model import rank as _rank
from .model import weaker as _weaker
from .ttir_ttgir import link_ttir_ttgir

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
        prev: dict[str, str | None] = {start: None}
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
        while (step := prev[path[-1]]) is not None:
            path.append(step)
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

    def links_for_python_line(self, line: int, file: str | None = None, call_sites: bool = True
                              ) -> dict[str, list[LinkedOp]]:
        """The ops of every stage at Python ``line`` of the kernel's file, by the one
        rule of :mod:`irscope.ir.python_lines` (kind ``python-line`` or ``call-site``).
        SASS has no call-site frames: see the module notes."""
        out: dict[str, list[LinkedOp]] = {}
        for stage, mod in self.modules.items():
            if stage in EXACT_STAGES.values():
                continue
            got = []
            for op in units(mod):
                kind = line_match(op.location, line, file, call_sites)
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
    if TTIR in m and TTGIR in m:
        parts.append(link_ttir_ttgir(m[TTIR], m[TTGIR]))
    op_ttgir: dict[str, dict[int, set[int]]] = {}  # stage -> line -> TTGIR op lines
    if TTGIR in m:
        for stage, loc_stage in EXACT_STAGES.items():
            if loc_stage not in m:
                continue
            own, moved, exact[stage] = link_exact(stage, m[TTGIR], m.get(stage), m[loc_stage])
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
        if a == TTGIR and eb is not None:
            # Exactly linked instructions drop their TTGIR location links.
            parts.append(location_group(a, m[a], b, m[b], drop_dst=eb, _indexes=indexes))
        elif ea is not None and eb is not None:
            parts.append(_shared_ttgir_links(a, ea, b, eb))
            parts.append(location_group(a, m[a], b, m[b], src_exact=ea, dst_exact=eb,
                                        _indexes=indexes))
        else:
            parts.append(location_group(a, m[a], b, m[b], _indexes=indexes))
    return CaptureLinks(m, LinkList(parts), exact)


