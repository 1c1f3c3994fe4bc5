"""The structural IR diff: two parsed modules of one format -> a :class:`StageDiff`.

1. Encoding aliases are paired by decoded content (:func:`.keys.pair_encodings`):
   a renamed or reordered alias is no change, an edited one is one change with
   its fields decoded, and the ops that use it still match.
2. Functions pair by name. Each function's body, then each region of each paired
   op, is aligned as a sequence of op keys (:mod:`.align`: anchors, never
   quadratic). Keys ignore value names, so the alignment survives renaming.
3. In each gap the alignment leaves, ops of the same name pair up as *changed*.
   Ops left over anywhere in a function that have the same key pair up as
   *moved*; the rest are *added* or *removed*. Constants pair by type and value,
   never by name alone (:mod:`.constants`).
4. A value map built from every pair (results, block and function arguments, by
   position; llvm-diff's idea) then checks each pair's operands: a pair whose
   operands are not the mapped values (rewired dataflow, swapped operands) is
   *changed* too. Renaming alone never is.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from irscope.ir import Function, Module, Op
from irscope.ir.values import DefUse, def_use
from irscope.ir.python_lines import python_line
from irscope.compiler.stages import FAMILY_MLIR, STAGES

from .align import align
from .constants import is_constant as _is_constant, pair_leftover_constants
from .keys import EncodingPair, Keys, canonical_name, pair_encodings
from .model import ADDED, CHANGED, MOVED, REMOVED, Change, OpRef, StageDiff

ALIGNED, RENAMED = "aligned", "renamed"  # pair kinds before operands are checked


@dataclass
class _Pairing:
    """Everything paired so far in one module pair."""

    pairs: list[tuple[Op, Op, str]] = field(default_factory=list)
    """(old op, new op, ALIGNED | RENAMED | MOVED)."""
    only_a: list[Op] = field(default_factory=list)
    only_b: list[Op] = field(default_factory=list)
    functions: list[tuple[Function, Function]] = field(default_factory=list)
    functions_only_a: list[Function] = field(default_factory=list)
    functions_only_b: list[Function] = field(default_factory=list)
    constants: list[tuple[list[Op], list[Op]]] = field(default_factory=list)
    """Per function, the constants of its gaps that no equal constant of their gap
    took: paired by type or value once the move pass has had them
    (:func:`_pair_constants`)."""


def family_of(stage: str) -> str:
    """The parser family of a stage name or format (``ttgir`` -> ``mlir``)."""
    info = STAGES.get(stage)
    if info is None or info.family is None:
        raise ValueError(f"cannot diff stage {stage!r}")
    return info.family


def diff_modules(a: Module, b: Module, stage: str) -> StageDiff:
    """The diff of two parses of one format (``stage`` names it: ``ttgir``, ``llir``,
    ``ptx``, ``sass``, or ``mlir`` for any MLIR such as an LLVM-dialect snapshot)."""
    enc_pairs, tokens_a, tokens_b, keys_a, keys_b, p = _pair(a, b, stage)
    du_a, du_b = _DefUses(), _DefUses()
    vmap = _value_map(p, du_a, du_b)
    lines: _Lines = {}
    # Each change with its sort position (new line, old line), computed as it is made:
    # a pass that rewrites a whole module (to the LLVM dialect) makes tens of thousands.
    keyed: list[tuple[float, int, int, Change]] = []
    matched = 0
    rows: list[tuple[int, int]] = []
    for x, y, how in p.pairs:
        # Aligned and moved ops have equal keys by construction: only a renamed pair
        # (same op name, text changed) can differ in its key.
        details = _details(x, y, keys_a, keys_b, a, b, lines, how == RENAMED)
        if not _operands_match(x, y, du_a, du_b, vmap):
            details.append(f"operands: {', '.join(x.operands)} -> {', '.join(y.operands)}")
        if how == MOVED:
            keyed.append((y.line, x.line, len(keyed), _change(MOVED, x, y, lines, details)))
            continue
        rows.append((x.line, y.line))
        if details:
            keyed.append((y.line, x.line, len(keyed), _change(CHANGED, x, y, lines, details)))
        else:
            matched += 1
    rows.sort()
    olds = [r[0] for r in rows]
    for x in p.only_a:
        keyed.append((_anchor(x.line, rows, olds), x.line, len(keyed), _change(REMOVED, x, None, lines)))
    for y in p.only_b:
        keyed.append((y.line, 0, len(keyed), _change(ADDED, None, y, lines)))
    for c in _encoding_changes(enc_pairs, a, b):
        keyed.append(_keyed(c, rows, olds, len(keyed)))
    for f in p.functions_only_a:
        keyed.append(_keyed(Change(REMOVED, f.kind, _fn_ref(f), None), rows, olds, len(keyed)))
    for f in p.functions_only_b:
        keyed.append(_keyed(Change(ADDED, f.kind, None, _fn_ref(f)), rows, olds, len(keyed)))
    # By (new line, old line), then the order made (the third item is unique, so
    # changes themselves are never compared).
    keyed.sort()
    changes = tuple(k[3] for k in keyed)
    return StageDiff(stage, matched, changes, _dialects(a), _dialects(b), tuple(rows))


def diff_counts(a: Module, b: Module, stage: str) -> dict[str, int]:
    """How many ops :func:`diff_modules` reports ``added``, ``removed``, ``moved`` and
    ``changed`` (keys: the kinds), without making the changes: what a summary of
    many diffs needs (``irscope passes``). The pairing, value map and test of a pair
    are the diff's own, so the counts are the diff's."""
    enc_pairs, _, _, keys_a, keys_b, p = _pair(a, b, stage)
    du_a, du_b = _DefUses(), _DefUses()
    vmap = _value_map(p, du_a, du_b)
    lines: _Lines = {}
    counts = dict.fromkeys((ADDED, REMOVED, MOVED, CHANGED), 0)
    moved = changed = 0
    for x, y, how in p.pairs:
        if how == MOVED:
            moved += 1
        elif _pair_differs(x, y, keys_a, keys_b, lines, how == RENAMED, du_a, du_b, vmap):
            changed += 1
    counts[MOVED] = moved
    counts[CHANGED] = changed
    counts[REMOVED] = len(p.only_a) + len(p.functions_only_a)
    counts[ADDED] = len(p.only_b) + len(p.functions_only_b)
    for c in _encoding_changes(enc_pairs, a, b):
        counts[c.kind] += 1
    return counts


def _keyed(c: Change, rows: list[tuple[int, int]], olds: list[int], n: int) -> tuple[float, int, int, Change]:
    """A change with its sort position: the new side's line (a removed op: where it
    goes in the new side's order), then the old side's line."""
    first = c.after.line if c.after else _anchor(c.before.line if c.before else None, rows, olds)
    return first, c.before.line if c.before else 0, n, c


def op_pairs(a: Module, b: Module, stage: str) -> list[tuple[Op, Op, str]]:
    """Every op of ``a`` that the diff pairs with an op of ``b``, and how: ``aligned``
    (equal up to renaming, in place), ``moved`` (equal up to renaming, elsewhere) or
    ``renamed`` (an op of the same name in place whose text changed).

    The correspondence :func:`diff_modules` reports its changes on, without the
    changes: what a caller that only follows ops from one side to the other needs
    (the exact links pair two compiles' instructions this way, and check the pairs
    with :func:`dataflow_agrees`).
    """
    return list(_pair(a, b, stage)[5].pairs)


def dataflow_agrees(a: Module, b: Module, pairs: list[tuple[Op, Op]]) -> list[tuple[Op, Op]]:
    """The pairs (an op of ``a``, an op of ``b``) whose operands are the values that
    the pairs themselves map onto each other: the results of paired ops, the
    arguments of functions paired by name (then in order), by position. A pair fed
    by values of unpaired ops is left out too."""
    p = _Pairing()
    _pair_functions(a, b, p)
    p.pairs = [(x, y, ALIGNED) for x, y in pairs]
    du_a, du_b = _DefUses(), _DefUses()
    vmap = _value_map(p, du_a, du_b)
    return [(x, y) for x, y in pairs if _operands_match(x, y, du_a, du_b, vmap)]


# ----------------------------------------------------------------- pairing

def _pair(a: Module, b: Module, stage: str
          ) -> tuple[list[EncodingPair], dict[str, str], dict[str, str], Keys, Keys, _Pairing]:
    """Steps 1-3 of the diff: encodings paired, keys, and the ops paired (aligned,
    renamed, moved)."""
    family = family_of(stage)
    enc_pairs, tokens_a, tokens_b = pair_encodings(a, b) if family == FAMILY_MLIR else ([], {}, {})
    keys_a, keys_b = Keys(family, tokens_a), Keys(family, tokens_b)
    p = _Pairing()
    _pair_functions(a, b, p)
    for fa, fb in p.functions:
        p.constants.append(([], []))  # constants are hoisted freely: they pair anywhere in their function
        _diff_bodies(_body(fa), _body(fb), keys_a, keys_b, p)
    p.constants.append(([], []))
    _diff_bodies(list(a.globals), list(b.globals), keys_a, keys_b, p)
    _pair_moves(p, keys_a, keys_b)
    _pair_constants(p, keys_a, keys_b)
    return enc_pairs, tokens_a, tokens_b, keys_a, keys_b, p


def _pair_functions(a: Module, b: Module, p: _Pairing) -> None:
    # Functions of one name (a text that defines one twice) pair in order.
    by_name: dict[str, list[Function]] = defaultdict(list)
    for f in b.functions:
        by_name[f.name].append(f)
    left_b = list(b.functions)
    unpaired = []
    for fa in a.functions:
        peers = by_name.get(fa.name)
        if peers:
            fb = peers.pop(0)
            p.functions.append((fa, fb))
            left_b.remove(fb)
        else:
            unpaired.append(fa)
    # A function renamed between versions (a single kernel, say) still pairs, in order.
    n = min(len(unpaired), len(left_b))
    p.functions.extend(zip(unpaired[:n], left_b[:n]))
    for fa in unpaired[n:]:
        p.functions_only_a.append(fa)
        p.only_a.extend(fa.ops())
    for fb in left_b[n:]:
        p.functions_only_b.append(fb)
        p.only_b.extend(fb.ops())


def _body(owner) -> list[Op]:
    """The ops directly in a function's body (all its blocks, in order)."""
    return [op for block in owner.blocks for op in block.ops]


def _region_bodies(op: Op) -> list[list[Op]]:
    return [[o for block in region.blocks for o in block.ops] for region in op.regions]


def _diff_bodies(ops_a: list[Op], ops_b: list[Op], keys_a: Keys, keys_b: Keys, p: _Pairing) -> None:
    ka = [keys_a(o) for o in ops_a]
    kb = [keys_b(o) for o in ops_b]
    aligned = align(ka, kb)
    pairs: list[tuple[Op, Op, str]] = []
    pa = pb = 0
    for i, j in [*aligned, (len(ops_a), len(ops_b))]:
        pairs.extend(_pair_gap(ops_a[pa:i], ops_b[pb:j], p, keys_a, keys_b))
        if i < len(ops_a):
            pairs.append((ops_a[i], ops_b[j], ALIGNED))
        pa, pb = i + 1, j + 1
    p.pairs.extend(pairs)
    for x, y, _ in pairs:
        _diff_regions(x, y, keys_a, keys_b, p)


def _diff_regions(x: Op, y: Op, keys_a: Keys, keys_b: Keys, p: _Pairing) -> None:
    if not x.regions and not y.regions:
        return
    ra, rb = _region_bodies(x), _region_bodies(y)
    for body_a, body_b in zip(ra, rb):
        _diff_bodies(body_a, body_b, keys_a, keys_b, p)
    for body in ra[len(rb):]:
        p.only_a.extend(o2 for o in body for o2 in o.walk())
    for body in rb[len(ra):]:
        p.only_b.extend(o2 for o in body for o2 in o.walk())


def _pair_gap(gap_a: list[Op], gap_b: list[Op], p: _Pairing, keys_a: Keys, keys_b: Keys
              ) -> list[tuple[Op, Op, str]]:
    """Within one gap: ops of one name pair in order (a changed op); the rest wait
    for the move pass. Constants pair with an equal constant of the gap; the others
    wait for the move pass too (an equal constant elsewhere is the same constant),
    then pair by type or value (:func:`_pair_constants`), never by name alone."""
    if not gap_a or not gap_b:
        p.only_a.extend(o2 for o in gap_a for o2 in o.walk())
        p.only_b.extend(o2 for o in gap_b for o2 in o.walk())
        if p.constants:
            p.constants[-1][0].extend(x for x in gap_a if _is_constant(x))
            p.constants[-1][1].extend(y for y in gap_b if _is_constant(y))
        return []
    pairs: list[tuple[Op, Op, str]] = []
    consts_a = [x for x in gap_a if _is_constant(x)]
    consts_b = [y for y in gap_b if _is_constant(y)]
    if consts_a or consts_b:
        equal: dict[str, list[Op]] = defaultdict(list)
        for y in consts_b:
            equal[keys_b(y)].append(y)
        left_a, paired_b = [], set()
        for x in consts_a:
            peers = equal.get(keys_a(x))
            if peers:
                y = peers.pop(0)
                paired_b.add(id(y))
                pairs.append((x, y, RENAMED))
            else:
                left_a.append(x)
        left_b = [y for y in consts_b if id(y) not in paired_b]
        p.only_a.extend(left_a)
        p.only_b.extend(left_b)
        if p.constants:  # (a moved op's regions, aligned apart, have no function entry)
            p.constants[-1][0].extend(left_a)
            p.constants[-1][1].extend(left_b)
        gap_a = [x for x in gap_a if not _is_constant(x)]
        gap_b = [y for y in gap_b if not _is_constant(y)]
    by_name: dict[str, list[Op]] = defaultdict(list)
    for y in gap_b:
        by_name[canonical_name(y.name)].append(y)
    taken: set[int] = set()
    for x in gap_a:
        peers = by_name.get(canonical_name(x.name))
        if peers:
            y = peers.pop(0)
            taken.add(id(y))
            pairs.append((x, y, RENAMED))
        else:
            p.only_a.extend(x.walk())
    # Keep the pairs in the new side's order where they cross: a crossing pair is a move.
    p.only_b.extend(o2 for y in gap_b if id(y) not in taken for o2 in y.walk())
    return pairs


def _pair_moves(p: _Pairing, keys_a: Keys, keys_b: Keys) -> None:
    """Ops left unpaired on both sides with one key: moved (hoisted out of a loop,
    reordered), not removed and added."""
    waiting: dict[str, list[Op]] = defaultdict(list)
    for y in p.only_b:
        waiting[keys_b(y)].append(y)
    moved_b: set[int] = set()
    still_a = []
    nested_a: set[int] = set()
    for x in p.only_a:
        if id(x) in nested_a:
            continue
        peers = waiting.get(keys_a(x))
        if peers:
            y = peers.pop(0)
            moved_b.add(id(y))
            p.pairs.append((x, y, MOVED))
            if x.regions or y.regions:  # the moved op's body aligns with its partner's
                nested_a.update(id(o) for o in x.walk() if o is not x)
                moved_b.update(id(o) for o in y.walk() if o is not y)
                sub = _Pairing()
                _diff_regions(x, y, keys_a, keys_b, sub)
                p.pairs.extend(sub.pairs)
                still_a.extend(sub.only_a)
                p.only_b.extend(o for o in sub.only_b if id(o) not in moved_b)
        else:
            still_a.append(x)
    p.only_a = [x for x in still_a if id(x) not in nested_a]
    p.only_b = [y for y in p.only_b if id(y) not in moved_b]


def _pair_constants(p: _Pairing, keys_a: Keys, keys_b: Keys) -> None:
    """The constants of each function that neither an equal constant of their gap nor
    the move pass took, paired by :func:`.constants.pair_leftover_constants`."""
    if not p.constants:
        return
    open_a, open_b = {id(x) for x in p.only_a}, {id(y) for y in p.only_b}
    paired: set[int] = set()
    for gap_a, gap_b in p.constants:
        got = pair_leftover_constants([x for x in gap_a if id(x) in open_a],
                                      [y for y in gap_b if id(y) in open_b], keys_a, keys_b)
        for x, y in got:
            p.pairs.append((x, y, RENAMED))
            paired.update((id(x), id(y)))
    if paired:
        p.only_a = [x for x in p.only_a if id(x) not in paired]
        p.only_b = [y for y in p.only_b if id(y) not in paired]


# ------------------------------------------------------------ value map

class _DefUses:
    """Def-use per function, looked up from any op of it (memoised per parent: the
    diff asks once or twice for every op)."""

    def __init__(self) -> None:
        self._by_parent: dict[int, DefUse | None] = {}

    def of(self, op: Op) -> DefUse | None:
        parent = op.parent
        key = id(parent)
        if key in self._by_parent:
            return self._by_parent[key]
        fn = parent
        while isinstance(fn, Op):
            fn = fn.parent
        got = def_use(fn) if isinstance(fn, Function) else None
        self._by_parent[key] = got
        return got


def _value_map(p: _Pairing, du_a: _DefUses, du_b: _DefUses) -> dict[int, object]:
    """Old value (by id) -> the new value it corresponds to."""
    vmap: dict[int, object] = {}
    for fa, fb in p.functions:
        da, db = def_use(fa), def_use(fb)
        for va, vb in zip(fa.args, fb.args):
            arg_a, arg_b = da.values.get(va.name), db.values.get(vb.name)
            if arg_a is not None and arg_b is not None:
                vmap[id(arg_a)] = arg_b
        # The arguments of the body's other blocks (^bb1(%1: index) after a cf.br),
        # by position, as for the blocks of an op's regions below.
        _map_block_args(fa.blocks, fb.blocks, da, db, vmap)
    of_a, of_b = du_a.of, du_b.of
    for x, y, _ in p.pairs:
        ua, ub = of_a(x), of_b(y)
        if ua is None or ub is None:
            continue
        rxs = ua.results(x)
        if rxs:
            for rx, ry in zip(rxs, ub.results(y)):
                vmap[id(rx)] = ry
        if x.regions and y.regions:
            for region_x, region_y in zip(x.regions, y.regions):
                _map_block_args(region_x.blocks, region_y.blocks, ua, ub, vmap)
    return vmap


def _map_block_args(blocks_a: list, blocks_b: list, da: DefUse, db: DefUse, vmap: dict[int, object]) -> None:
    """Map the arguments of two block lists onto each other, block by block, by position."""
    for bx, by in zip(blocks_a, blocks_b):
        for ax, ay in zip(bx.args, by.args):
            vx, vy = da.values.get(ax.name), db.values.get(ay.name)
            if vx is not None and vy is not None:
                vmap[id(vx)] = vy


def _operands_match(x: Op, y: Op, du_a: _DefUses, du_b: _DefUses, vmap: dict[int, object]) -> bool:
    da, db = du_a.of(x), du_b.of(y)
    if da is None or db is None:
        return True
    get = vmap.get
    for va, vb in zip(da.operands(x), db.operands(y)):
        if va is None:
            if vb is None:
                continue  # constants and labels: the key compares them
            return False
        if vb is None or get(id(va)) is not vb:
            return False
    return True


# ------------------------------------------------------------- details

_Lines = dict[int, tuple[object, "int | None"]]
"""Location (by id) -> (the location, kept alive so its id is not reused, its Python line)."""


def _python_line(op: Op, memo: _Lines) -> int | None:
    """:func:`python_line` of an op's location, memoised for one diff: ops share
    location objects (a few dozen in a module of thousands of ops)."""
    location = op.location
    got = memo.get(id(location))
    if got is None:
        got = memo[id(location)] = (location, python_line(location))
    return got[1]


def _pair_differs(x: Op, y: Op, keys_a: Keys, keys_b: Keys, lines: _Lines, keys_may_differ: bool,
                  du_a: _DefUses, du_b: _DefUses, vmap: dict[int, object]) -> bool:
    """Whether :func:`diff_modules` reports a pair as changed (its details are not
    empty), without writing the details: a key that differs always yields one (the
    text when nothing else), so comparing the keys is enough."""
    if x.name != y.name and canonical_name(x.name) != canonical_name(y.name):
        return True
    if keys_may_differ and keys_a(x) != keys_b(y):
        return True
    la, lb = _python_line(x, lines), _python_line(y, lines)
    if la != lb and la is not None and lb is not None:
        return True
    return not _operands_match(x, y, du_a, du_b, vmap)


def _details(x: Op, y: Op, keys_a: Keys, keys_b: Keys, a: Module, b: Module, lines: _Lines,
             keys_may_differ: bool = True) -> list[str]:
    out = []
    if x.name != y.name and canonical_name(x.name) != canonical_name(y.name):
        out.append(f"op: {x.name} -> {y.name}")
    if keys_may_differ and keys_a(x) != keys_b(y):
        out.extend(_what_differs(x, y, a, b, keys_a, keys_b))
    la, lb = _python_line(x, lines), _python_line(y, lines)
    if la != lb and la is not None and lb is not None:
        out.append(f"location: line {la} -> {lb}")
    return out


def _what_differs(x: Op, y: Op, a: Module, b: Module, keys_a: Keys, keys_b: Keys) -> list[str]:
    out: list[str] = []
    tx, ty = keys_a._key(x.types) if x.types else "", keys_b._key(y.types) if y.types else ""
    if tx != ty:
        layout = _layout_change(x, y, a, b)
        out.append(f"layout: {layout}" if layout else f"type: {x.types}  =>  {y.types}")
    if x.attributes or y.attributes:
        ax, ay = keys_a._key(x.attributes), keys_b._key(y.attributes)
        if ax != ay:
            out.append("attributes: " + _attribute_change(x, y))
    if not out and canonical_name(x.name) == canonical_name(y.name):
        fx, fy = keys_a(x), keys_b(y)
        out.append(f"text: {fx.strip()} -> {fy.strip()}")
    return out


def _layout_change(x: Op, y: Op, a: Module, b: Module) -> str | None:
    """The decoded difference when the result types differ only in their encoding."""
    from irscope.ir.layouts import diff_fields
    from irscope.ir.types import MemDescType, TensorType

    # (never raises: a type the parser does not model is an OpaqueType, no layout)
    rx, ry = x.signature(a.encodings).results, y.signature(b.encodings).results
    for sx, sy in zip(rx, ry):
        if isinstance(sx, (TensorType, MemDescType)) and isinstance(sy, type(sx)):
            if sx.shape == sy.shape and sx.element == sy.element:
                ex, ey = sx.encoding(a.encodings), sy.encoding(b.encodings)
                if ex is not None and ey is not None and ex.describe() != ey.describe():
                    return "; ".join(diff_fields(ex, ey)) or f"{ex.describe()} -> {ey.describe()}"
    return None


def _attribute_change(x: Op, y: Op) -> str:
    ax, ay = x.attribute_values(), y.attribute_values()  # never raises (text_guard)
    parts = []
    for k in list(ax) + [k for k in ay if k not in ax]:
        vx, vy = ax.get(k), ay.get(k)
        rx, ry = (vx.raw if vx is not None else "-"), (vy.raw if vy is not None else "-")
        if rx != ry:
            parts.append(f"{k} {rx} -> {ry}")
    return "; ".join(parts[:4]) + (f" (+{len(parts) - 4} more)" if len(parts) > 4 else "") if parts else \
        f"{x.attributes} -> {y.attributes}"


# --------------------------------------------------------------- output

def _fn_ref(fn: Function) -> OpRef:
    return OpRef(fn.line, fn.text.strip(), fn.kind)


def _ref(op: Op) -> OpRef:
    return OpRef(op.line, op.text.strip(), op.name)


def _change(kind: str, x: Op | None, y: Op | None, lines: _Lines, details: list[str] | tuple[str, ...] = ()
            ) -> Change:
    op = y if y is not None else x
    assert op is not None  # a change has at least one side
    line = _python_line(y, lines) if y is not None else None
    if line is None and x is not None:
        line = _python_line(x, lines)
    return Change(kind, op.name, _ref(x) if x is not None else None, _ref(y) if y is not None else None,
                  tuple(details), line)


def _encoding_changes(pairs: list[EncodingPair], a: Module, b: Module) -> list[Change]:
    out = []
    for p in pairs:
        if p.same:
            continue
        if p.details and all(d.startswith("parent ") for d in p.details):
            continue  # only its parent changed (a slice of an edited layout): that change is reported
        before = OpRef(0, f"{p.before} = {a.encodings[p.before]}", p.before) if p.before else None
        after = OpRef(0, f"{p.after} = {b.encodings[p.after]}", p.after) if p.after else None
        kind = CHANGED if before and after else (REMOVED if before else ADDED)
        out.append(Change(kind, p.after or p.before or "", before, after,
                          tuple(f"layout: {d}" for d in p.details)))
    return out


def _anchor(before: int | None, rows: list[tuple[int, int]], olds: list[int]) -> float:
    """Where a removed op (its old line ``before``) goes in the new side's order: after
    the new partner of the nearest aligned old op before it (``olds``: the rows' old
    lines, sorted)."""
    if before is None or not rows:
        return 0
    k = bisect_right(olds, before) - 1
    return rows[k][1] + 0.5 if k >= 0 else 0


def _dialects(m: Module) -> dict[str, int]:
    c = Counter(op.dialect for op in m.ops() if op.name != "<unknown>")
    return dict(c.most_common())
