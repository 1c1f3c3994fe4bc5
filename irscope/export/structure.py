"""A parsed module as the op graph sees it: the things to draw (ops and block
arguments) with their cluster chains, the clusters (functions, region ops, their
regions and blocks), and the def-use and yield edges between them.

Built from the IR model (:mod:`irscope.ir.model`) and each function's def-use
(:mod:`irscope.ir.values`); nothing here decides what is drawn or how.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.ir import Module, Op
from irscope.ir.model import Block
from irscope.ir.values import BlockArgument, OpResult
from irscope.ir.python_lines import python_line

from .style import clean

# Region terminators whose operands flow back to the op that owns the region.
_YIELDS = ("scf.yield", "scf.condition", "tt.reduce.return", "tt.scan.return", "ttg.warp_yield",
           "ttg.warp_return", "affine.yield", "tt.map_elementwise.return")


@dataclass(eq=False, slots=True)
class Thing:
    """An op or a block argument: one node, unless folded."""

    key: str
    kind: str
    """``op`` or ``block_arg``."""
    clusters: tuple[str, ...]
    python_line: int | None
    op: Op | None = None
    arg: BlockArgument | None = None

    @property
    def name(self) -> str:
        if self.op is not None:
            return self.op.name
        assert self.arg is not None  # a thing is an op or a block argument
        return self.arg.name


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    cid: str
    label: str
    parent: str | None
    kind: str
    """``function``, ``region`` (an op with regions), ``part`` (one of several
    regions), ``block``."""


@dataclass(eq=False)
class Structure:
    things: dict[str, Thing] = field(default_factory=dict)
    """In text order."""
    clusters: dict[str, ClusterInfo] = field(default_factory=dict)
    """Parents first."""
    edges: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(source key, target key, kind, value name): ``def-use`` or ``yield``."""
    ssa: bool = True
    module_ops: int = 0
    """Module-level ops (globals, declarations): not drawn, not in def-use."""
    result_types: dict[str, str] = field(default_factory=dict)
    """Op key -> its first result's type text, for the ops that were asked about."""

    def owners(self) -> set[str]:
        """Keys of the ops that own regions, and of region terminators: the skeleton."""
        out = set()
        for t in self.things.values():
            if t.op is not None and (t.op.regions or t.op.name in _YIELDS):
                out.add(t.key)
        return out


def op_key(op: Op) -> str:
    return f"op{op.line}"


def _block_label(block: Block) -> str:
    args = ", ".join(a.name for a in block.args[:6]) + (", \u2026" if len(block.args) > 6 else "")
    return clean(f"{block.label or 'block'}({args})" if block.args else (block.label or "block"), 60)


def build_structure(module: Module, file: str | None = None) -> Structure:
    """Every function's ops, block arguments, clusters and edges."""
    s = Structure(module_ops=len(module.globals))
    block_cluster: dict[int, tuple[str, ...]] = {}
    for fi, fn in enumerate(module.functions):
        fcid = f"fn{fi}"
        s.clusters[fcid] = ClusterInfo(fcid, clean(f"{fn.kind} @{fn.name}", 80), None, "function")
        _blocks(s, fn.blocks, (fcid,), f"fn{fi}", block_cluster, file)
        du = fn.def_use()
        s.ssa = s.ssa and du.ssa
        arg_keys: dict[int, str] = {}
        for v in du.values.values():
            if not isinstance(v, BlockArgument):
                continue
            chain = block_cluster.get(id(v.block), (fcid,)) if v.block is not None else (fcid,)
            key = f"arg:{fi}:{v.block.line if v.block is not None else 0}:{v.name}"
            arg_keys[id(v)] = key
            line = None
            if v.block is not None and v.index < len(v.block.args):
                line = python_line(v.block.args[v.index].location, file)
            s.things[key] = Thing(key, "block_arg", chain, line, arg=v)
        for op in fn.ops():
            dst = op_key(op)
            for used in du.operands(op):
                if isinstance(used, OpResult) and used.op is not None:
                    s.edges.append((op_key(used.op), dst, "def-use", used.name))
                elif isinstance(used, BlockArgument) and id(used) in arg_keys:
                    s.edges.append((arg_keys[id(used)], dst, "def-use", used.name))
            if op.name in _YIELDS and isinstance(op.parent, Op):
                s.edges.append((dst, op_key(op.parent), "yield", ""))
    # Block arguments were added after the ops: put things back in text order.
    s.things = dict(sorted(s.things.items(), key=lambda kv: _order(kv[1])))
    return s


def _order(t: Thing) -> tuple[int, int]:
    if t.op is not None:
        return (t.op.line, 1)
    assert t.arg is not None  # a thing is an op or a block argument
    return (t.arg.block.line if t.arg.block is not None else 0, 0)


def _blocks(s: Structure, blocks: list[Block], chain: tuple[str, ...], prefix: str,
            block_cluster: dict[int, tuple[str, ...]], file: str | None) -> None:
    """Ops of ``blocks`` into cluster ``chain[-1]``; a block of several gets its own."""
    several = len(blocks) > 1
    for bi, block in enumerate(blocks):
        here = chain
        if several:
            bcid = f"{prefix}b{bi}"
            s.clusters[bcid] = ClusterInfo(bcid, _block_label(block), chain[-1], "block")
            here = chain + (bcid,)
        block_cluster[id(block)] = here
        for op in block.ops:
            _op(s, op, here, block_cluster, file)


def _op(s: Structure, op: Op, chain: tuple[str, ...], block_cluster, file) -> None:
    key = op_key(op)
    line = python_line(op.location, file)
    if not op.regions:
        s.things[key] = Thing(key, "op", chain, line, op=op)
        return
    rcid = f"r{op.line}"
    where = f" \u00b7 py {line}" if line else ""
    s.clusters[rcid] = ClusterInfo(rcid, clean(f"{op.name} (IR line {op.line}{where})", 80), chain[-1], "region")
    inner = chain + (rcid,)
    s.things[key] = Thing(key, "op", inner, line, op=op)
    several = len(op.regions) > 1
    for ri, region in enumerate(op.regions):
        here = inner
        if several:
            pcid = f"{rcid}p{ri}"
            s.clusters[pcid] = ClusterInfo(pcid, f"region {ri}", rcid, "part")
            here = inner + (pcid,)
        _blocks(s, region.blocks, here, f"{here[-1]}_", block_cluster, file)
