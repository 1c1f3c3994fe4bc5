"""SSA values as objects, and def-use per function (built on first use).

A value is an :class:`OpResult` (the ``i``-th result of an op) or a
:class:`BlockArgument` (of a function or of a block in a region). Each knows its
definer, its type and its uses. MLIR and LLVM IR are SSA; PTX, SASS and AMDGCN are not
(registers are written many times), so for them a use refers to the latest write
before it in text order, which ignores control flow: good enough to draw
dataflow, stated wherever it is shown.

:func:`def_use` is cached on the function; :func:`to_networkx` draws a module (or
one function) as a DiGraph of ops for the exporters.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator, Mapping, NamedTuple

from irscope import text_guard
from irscope.text_guard import paused_gc

from .model import DIALECT_AMDGCN, DIALECT_LLVM, DIALECT_PTX, DIALECT_SASS, Block, Function, Module, Op, read_unread_details

if TYPE_CHECKING:
    import networkx

    from .types import Type

# PTX opcodes whose first operand is read, not written (stores, branches, barriers...).
_PTX_NO_DEST = ("st.", "st", "bra", "ret", "exit", "bar", "barrier", "red.", "fence", "membar", "prefetch",
                "cp.async", "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "mbarrier.init",
                "mbarrier.arrive.expect_tx", "mbarrier.try_wait", "trap", "call", "tcgen05", "stmatrix",
                "griddepcontrol", "elect.sync", "setmaxnreg")
# SASS opcodes with no destination register.
_SASS_NO_DEST = ("ST", "STG", "STS", "STL", "RED", "BRA", "EXIT", "RET", "BAR", "MEMBAR", "NOP", "BSYNC", "BSSY",
                 "WARPSYNC", "CALL", "JMP", "SYNCS", "UTMASTG", "UTMALDG", "WARPGROUP", "DEPBAR", "ERRBAR",
                 "CCTL", "FENCE", "ATOMS.ARRIVE", "HMMA", "IMMA")
# AMDGCN mnemonic prefixes whose first operand is read, not written (stores, branches,
# waits, compares that set SCC); a VOPC compare's first operand is the mask it writes.
_AMDGCN_NO_DEST = ("buffer_store", "global_store", "flat_store", "scratch_store", "ds_write", "ds_store",
                   "s_store", "s_branch", "s_cbranch", "s_setpc", "s_waitcnt", "s_nop", "s_endpgm", "s_barrier",
                   "s_sleep", "s_setprio", "s_sendmsg", "s_cmp", "s_bitcmp", "s_trap", "s_dcache", "s_icache",
                   "buffer_wbl2", "buffer_inv", "global_atomic", "buffer_atomic", "ds_add")


class Use(NamedTuple):
    """One use of a value: operand ``index`` of ``op``."""

    op: Op
    index: int  # type: ignore[assignment]  # the public field name; it shadows tuple.index


@dataclass(eq=False, slots=True)
class SSAValue:
    """A value: defined once, used by the ops in ``uses``."""

    name: str
    """As printed: ``%acc#1``, ``%x_ptr``, ``%12``, ``%r5`` (PTX)."""
    _type_text: str | None = ""
    """Its type as printed; None until first read for an op result (reading result
    types costs more than the whole def-use, and a diff needs none)."""
    use_sites: list = field(default_factory=list, repr=False)
    """Every use, in text order, flat: ``[op, operand index, op, operand index, ...]``.
    A def-use records a use as two items here rather than as a :class:`Use` (building
    that tuple was a fifth of the def-use: tuples that hold an op are tracked by the
    cyclic collector); :attr:`uses` builds them when asked."""

    @property
    def uses(self) -> list[Use]:
        """Every use, in text order (a new list on each call)."""
        s = self.use_sites
        return list(map(Use, s[::2], s[1::2]))

    @property
    def type_text(self) -> str:
        """Its type as printed ('' when the text does not say)."""
        if self._type_text is None:
            self._type_text = self._read_type()
        return self._type_text

    def _read_type(self) -> str:
        return ""

    def type(self, aliases: Mapping[str, str] | None = None) -> "Type":
        """The parsed type (encodings resolve through ``aliases``, a module's ``encodings``)."""
        from .types import parse_type

        return parse_type(self.type_text, aliases)

    @property
    def users(self) -> list[Op]:
        """The ops that use the value, each once, in text order."""
        return list(dict.fromkeys(self.use_sites[::2]))


@dataclass(eq=False, slots=True)
class OpResult(SSAValue):
    """Result ``index`` of ``op``."""

    op: Op | None = None
    index: int = 0

    def _read_type(self) -> str:
        types = _result_types(self.op) if self.op is not None else []
        return types[self.index] if self.index < len(types) else ""


@dataclass(eq=False, slots=True)
class BlockArgument(SSAValue):
    """Argument ``index`` of ``block``; ``owner`` is the op whose region holds the
    block, or the function for its entry block's arguments."""

    block: Block | None = None
    owner: Op | Function | None = None
    index: int = 0


@dataclass(eq=False)
class DefUse:
    """The values of one function and who defines and uses them."""

    function: Function
    values: dict[str, SSAValue]
    """Every value by name, in definition order."""
    ssa: bool
    """False for PTX, SASS and AMDGCN: a use refers to the latest earlier write (see module notes)."""
    _results: dict[int, "OpResult | tuple[OpResult, ...]"] = field(default_factory=dict, repr=False)
    """Per op: its one result (most ops: no tuple kept for it), or a tuple of them."""
    _operands: dict[int, tuple[SSAValue | None, ...]] = field(default_factory=dict, repr=False)

    def results(self, op: Op) -> tuple[OpResult, ...]:
        """The values ``op`` defines."""
        got = self._results.get(id(op), ())
        return got if isinstance(got, tuple) else (got,)

    def operands(self, op: Op) -> tuple[SSAValue | None, ...]:
        """Per operand of ``op``: the value it uses, or None (a constant, a label, a
        value defined outside the function)."""
        return self._operands.get(id(op), ())

    def producers(self, op: Op) -> list[Op | None]:
        """The ops whose results ``op`` uses (None for a block argument), in operand order."""
        out = []
        for v in self.operands(op):
            if isinstance(v, OpResult):
                out.append(v.op)
            elif isinstance(v, BlockArgument):
                out.append(None)
        return out

    def users(self, op: Op) -> list[Op]:
        """The ops that use any result of ``op``, each once, in text order."""
        return list(dict.fromkeys(o for r in self.results(op) for o in r.use_sites[::2]))


def _no_result_types(op: Op) -> list[str]:
    """What a types-parser bug gives (the guard's fallback): no type text, so def-use still works."""
    return [""] * len(op.results)


@text_guard.never_raise(_no_result_types, pause_gc=False)
def _result_types(op: Op) -> list[str]:
    """Best-effort type text of each result: MLIR's trailing type list, or what an
    LLVM IR instruction says it defines."""
    if not op.results:
        return []
    from .result_types import op_result_types
    from .types import instruction_result_type

    if not op.types and op.dialect == DIALECT_LLVM:
        t = instruction_result_type(op.text)
        return [t.raw if t is not None else ""] * len(op.results)
    if not op.types:
        return [""] * len(op.results)
    got = op_result_types(op)  # what the op defines: tt.load's pointee, not its printed pointer type
    texts = [t.raw for t in got]
    if len(texts) == 1 and len(op.results) > 1:
        texts *= len(op.results)
    return (texts + [""] * len(op.results))[: len(op.results)]


@functools.lru_cache(maxsize=4096)  # a function repeats a few dozen opcodes thousands of times
def _writer_name(dialect: str, name: str) -> bool:
    """Whether a PTX/SASS/AMDGCN instruction called ``name`` writes its first operand."""
    if dialect == DIALECT_AMDGCN:
        return not name.startswith(_AMDGCN_NO_DEST)
    if dialect == DIALECT_SASS:
        return not name.startswith(_SASS_NO_DEST) and not name.split(".")[0] in _SASS_NO_DEST
    return not name.startswith(_PTX_NO_DEST)


@paused_gc  # it makes a value and a use per op and operand, and all of them stay alive
def _build(function: Function) -> DefUse:
    ssa = not any(op.dialect in (DIALECT_PTX, DIALECT_SASS, DIALECT_AMDGCN) for op in _first_ops(function))
    values: dict[str, SSAValue] = {}
    du = DefUse(function, values, ssa)
    if function.blocks:
        for i, a in enumerate(function.args):
            values[a.name] = BlockArgument(a.name, a.type, block=function.blocks[0], owner=function, index=i)
    for block in function.blocks:
        _block_args(block, function, values)
    ops = list(function.ops())
    read_unread_details(ops)
    results, operands = du._results, du._operands
    if ssa:
        # Every definition first: a phi (or a loop-carried MLIR value) may use a value
        # that the text defines further down.
        for op in ops:
            for region in op.regions:
                for block in region.blocks:
                    _block_args(block, op, values)
            names = op.results
            if len(names) == 1:  # most ops: one result, its type read on first use
                results[id(op)] = values[names[0]] = OpResult(names[0], None, [], op, 0)
            elif names:
                results[id(op)] = rs = tuple(OpResult(n, None, [], op, i) for i, n in enumerate(names))
                for r in rs:
                    values[r.name] = r
        _ssa_uses(values, ops, operands)
        return du
    for op in ops:  # registers: a use reads the latest earlier write
        names = op.operands
        writes = bool(names) and _writer_name(op.dialect, op.name)
        operands[id(op)] = _uses(values, op, names, 1 if writes else 0, op.dialect in (DIALECT_SASS, DIALECT_AMDGCN))
        if writes:
            results[id(op)] = values[names[0]] = OpResult(names[0], "", [], op, 0)
    return du


def _ssa_uses(values: dict, ops: list, operands: dict) -> None:
    """:func:`_uses` of every op of an SSA function, in one loop (a call per op cost a
    tenth of the def-use): ``operands[id(op)]`` gets each op's used values."""
    get = values.get
    for op in ops:
        names = op.operands
        if not names:
            operands[id(op)] = ()
            continue
        out = []
        i = 0
        for name in names:
            v = get(name)
            if v is None and "#" in name:  # '%x#0' of a value printed whole elsewhere
                v = get(name.split("#", 1)[0])
            if v is not None:
                sites = v.use_sites
                sites.append(op)
                sites.append(i)
            out.append(v)
            i += 1
        operands[id(op)] = tuple(out)


def _uses(values: dict, op: Op, names, skip: int, sass: bool) -> tuple:
    """The values ``op``'s operands (after the first ``skip``, its destination) use,
    each use recorded on its value; None where an operand names no value."""
    out: list[SSAValue | None] = [None] * len(names)
    for i in range(skip, len(names)):
        name = names[i]
        if sass:  # SASS 'R21.reuse', '-R3', '!P0' read register R21, R3, P0; AMDGCN '-v1' reads v1
            name = name.lstrip("-!|~").removesuffix(".reuse")
        v = values.get(name)
        if v is None and "#" in name:  # '%x#0' of a value printed whole elsewhere
            v = values.get(name.split("#", 1)[0])
        if v is not None:
            sites = v.use_sites
            sites.append(op)
            sites.append(i)
            out[i] = v
    return tuple(out)


def _first_ops(function: Function) -> Iterator[Op]:
    for i, op in enumerate(function.ops()):
        if i >= 4:
            return
        yield op


def _block_args(block: Block, owner, values: dict[str, SSAValue]) -> None:
    for i, a in enumerate(block.args):
        if a.name not in values or owner is not None:
            values[a.name] = BlockArgument(a.name, a.type, block=block, owner=owner, index=i)


def def_use(function: Function) -> DefUse:
    """The function's :class:`DefUse`, built on first use and kept on the function."""
    got = function.def_use_cache
    if got is None:
        got = function.def_use_cache = _build(function)
    return got


def _enclosing(op: Op) -> tuple[int, ...]:
    """Lines of the ops whose regions hold ``op``, outermost first."""
    path = []
    parent = op.parent
    while isinstance(parent, Op):
        path.append(parent.line)
        parent = parent.parent
    return tuple(reversed(path))


def _python_line(op: Op) -> int | None:
    fr = op.location.user_frame()
    return fr.line if fr is not None and fr.line else None


def to_networkx(target: Module | Function) -> "networkx.DiGraph":
    """A DiGraph of the ops of a module (every function) or of one function.

    Nodes are ``"op<line>"`` (the op's first line in the text) with attributes
    ``kind="op"``, ``name``, ``dialect``, ``line``, ``text``, ``results``,
    ``result_types``, ``python_line``, ``function``, ``parent`` (line of the op
    whose region holds it, or None) and ``regions`` (the enclosing ops' lines,
    outermost first); block arguments are nodes ``"arg:<function>:<name>"`` with
    ``kind="block_arg"``, ``owner`` (line of the owning op, or None for the
    function) and ``type``. Edges run from definer to user with ``value`` and
    ``operand`` (its index) attributes.
    """
    import networkx as nx

    g = nx.DiGraph()
    functions = target.functions if isinstance(target, Module) else [target]
    for fn in functions:
        du = def_use(fn)
        g.graph.setdefault("ssa", du.ssa)
        arg_nodes: dict[int, str] = {}
        for v in du.values.values():
            if isinstance(v, BlockArgument):
                node = f"arg:{fn.name}:{v.name}"
                arg_nodes[id(v)] = node
                owner = v.owner.line if isinstance(v.owner, Op) else None
                g.add_node(node, kind="block_arg", name=v.name, type=v.type_text, owner=owner, function=fn.name)
        for op in fn.ops():
            regions = _enclosing(op)
            g.add_node(f"op{op.line}", kind="op", name=op.name, dialect=op.dialect, line=op.line,
                       text=op.text.strip(), results=list(op.results),
                       result_types=[r.type_text for r in du.results(op)], python_line=_python_line(op),
                       function=fn.name, parent=regions[-1] if regions else None, regions=regions)
        for op in fn.ops():
            for i, used in enumerate(du.operands(op)):
                if used is None:
                    continue
                src = (f"op{used.op.line}" if isinstance(used, OpResult) and used.op is not None
                       else arg_nodes.get(id(used)))
                if src is not None:
                    g.add_edge(src, f"op{op.line}", value=used.name, operand=i)
    return g
