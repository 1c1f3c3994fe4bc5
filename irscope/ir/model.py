"""The IR model shared by every parser: locations, ops, blocks, functions, modules.

Every stage (MLIR, LLVM IR, PTX, SASS) parses into the same shapes so that the link
and diff layers can treat them alike: a :class:`Module` holds :class:`Function` s,
whose :class:`Block` s hold :class:`Op` s (an LLVM/PTX/SASS instruction is an
:class:`Instruction`, a kind of ``Op``). Each op keeps its line number, its text and
its resolved :class:`Location` (the whole chain of source frames).

The classes are plain data: no I/O, no parsing here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, TypeVar, overload

from irscope.compiler.stages import FAMILY_AMDGCN, FAMILY_LLVM, FAMILY_PTX, FAMILY_SASS, KIND_MIR

if TYPE_CHECKING:
    from .values import DefUse

# The dialect of an instruction of the non-MLIR parsers is its parser family's name
# (LLVM-dialect MLIR ops share ``llvm``: their name's prefix); MIR instructions and
# functions are told apart from LLVM IR as ``mir``, SASS functions as ``sass``.
DIALECT_LLVM = FAMILY_LLVM
DIALECT_MIR = KIND_MIR
DIALECT_PTX = FAMILY_PTX
DIALECT_SASS = FAMILY_SASS
DIALECT_AMDGCN = FAMILY_AMDGCN

_OpT = TypeVar("_OpT", bound="Op")

# A frame in one of these directories is Triton's own library code (tl.sum, tl.cdiv...),
# not the user's kernel.
LIBRARY_DIRS = ("/triton/language/",)


@functools.lru_cache(maxsize=1024)  # a capture names a handful of files, asked about per op
def _library_file(file: str) -> bool:
    path = file.replace("\\", "/")
    return any(d in path for d in LIBRARY_DIRS)


class Frame(NamedTuple):
    """One source position. (Named tuples, like :class:`Location`: parsers make
    thousands, and a tuple is built at C speed and needs no garbage-collector scans.)"""

    file: str
    """Path as the compiler printed it (absolute for MLIR/LLVM/PTX; a base name in MIR)."""
    line: int
    """1-based source line; 0 when unknown."""
    col: int
    """Column as printed (conventions differ between Triton versions; 0 in SASS)."""
    name: str | None = None
    """A name attached to the position: the Python variable of an MLIR named location,
    or the enclosing subprogram in LLVM debug info."""

    def is_library(self) -> bool:
        """True when the frame lies in Triton's language library (``triton/language/``)."""
        return _library_file(self.file)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Location(NamedTuple):
    """The resolved source location of an op: a chain of frames, innermost first.

    For an op inlined from a helper, ``frames[0]`` is the position in the helper (the
    callee) and the following frames are its call sites, out to the user's kernel.
    """

    frames: tuple[Frame, ...] = ()
    """Innermost first; empty when the location is unknown."""
    kind: str = "unknown"
    """'file', 'name', 'callsite', 'fused' or 'unknown' (the outermost construct)."""
    parts: tuple["Location", ...] = ()
    """The components of a fused location (``frames`` is taken from the first known one)."""

    @property
    def frame(self) -> Frame | None:
        """The innermost frame, or None."""
        return self.frames[0] if self.frames else None

    def user_frame(self) -> Frame | None:
        """The innermost frame outside Triton's library: where the user's code is.

        ``tl.sum`` inlines library code; this picks the user's call line instead of
        the line inside ``triton/language/standard.py``. None when every frame is library.
        """
        for fr in self.frames:
            if not fr.is_library():
                return fr
        return None


UNKNOWN_LOCATION = Location()


@dataclass(slots=True, eq=False)
class Value:
    """A named value defined by a block or function header (an argument)."""

    name: str
    """As written, e.g. ``%arg0``, ``%x_ptr`` (LLVM: ``%0``; PTX: the param name)."""
    type: str
    """Type text as written ('' when absent)."""
    location: Location = UNKNOWN_LOCATION
    """Resolved location of the argument."""
    loc_ref: str = ""
    """Location text as written (e.g. ``"x_ptr"(#loc)``)."""


@functools.cache
def _op_types_reader():
    # Loaded on first use: a stage's text is shown without the type parser.
    from .op_types import parse_op_types

    return parse_op_types


@dataclass(slots=True, eq=False)
class Op:
    """One operation (MLIR) or instruction (LLVM IR, PTX, SASS) and where it is."""

    name: str
    """Op name or opcode: ``tt.load``, ``getelementptr``, ``ld.global.b32``, ``LDG.E``;
    ``<unknown>`` for a line the parser did not understand (the text is kept)."""
    dialect: str
    """``tt``, ``arith``, ``scf``...; ``llvm``, ``mir``, ``ptx`` or ``sass`` for the
    later stages; '' for unknown lines."""
    results: tuple[str, ...]
    """Defined values, as users refer to them (``%12:2`` gives ``%12#0``, ``%12#1``)."""
    operands: tuple[str, ...]
    """Used values / operand texts in order."""
    types: str
    """Type text (after the top-level ``:`` in MLIR; the LLVM result type)."""
    attributes: str
    """Attribute dictionary text (MLIR ``{...}``/``<{...}>``), '' when none."""
    location: Location
    """Resolved source location."""
    line: int
    """1-based line in the parsed text (the first line of a multi-line op)."""
    text: str
    """The source line as written."""
    regions: "list[Region] | tuple[()]" = ()
    """Nested regions (``scf.for`` body, ``tt.reduce`` combiner...); ``()`` when none
    (a shared empty tuple: most ops have no region and this keeps them small)."""
    parent: "Op | Function | None" = None
    """The op or function whose region holds this op; None at module level."""
    loc_ref: str = ""
    """The location as written: ``#loc12``, ``"f.py":3:4``, ``!12``, ``1 37 24``."""
    end_line: int = 0
    """Last line of the op (its closing brace for ops with regions)."""
    form: str = ""
    """The op's *form*: its text with value names, block labels, location aliases and
    ``loc(...)``/``!dbg`` taken out (:func:`irscope.ir.forms.normalise_op_text`). Ops
    equal up to renaming and locations have equal forms. Filled by the MLIR and LLVM
    parsers (once per line shape); '' elsewhere: use :func:`irscope.ir.forms.op_form`."""

    def signature(self, aliases=None):
        """Operand and result types, parsed (:func:`irscope.ir.types.op_types`);
        encodings resolve through ``aliases`` (the module's ``encodings``)."""
        # The module memo's hit without the two calls below (a def-use's ops ask this
        # hundreds of times of a few dozen type lists); parse_op_types fills it.
        memo = getattr(aliases, "decoded", None)
        types = self.types
        if type(memo) is dict and type(types) is str:
            got = memo.get((types, len(self.results)))
            if got is not None:
                return got
        return _op_types_reader()(types, aliases, num_results=len(self.results))

    def attribute_values(self) -> dict:
        """The attribute dictionary, name -> typed value
        (:func:`irscope.ir.attributes.parse_attributes`)."""
        from .attributes import parse_attributes

        return parse_attributes(self.attributes)

    def walk(self) -> Iterator["Op"]:
        """This op, then every op nested in its regions, in text order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()


@dataclass(slots=True, eq=False)
class Instruction(Op):
    """An LLVM IR, MIR, PTX or SASS instruction."""

    predicate: str = ""
    """Guard predicate (PTX ``@%p1``, SASS ``@!P0``), '' when unconditional."""
    offset: int = -1
    """SASS byte offset (``/*0040*/`` is 0x40); -1 elsewhere."""


@overload
def unknown_op(line: int, text: str, *, parent: "Op | Function | None" = None, loc_ref: str = "",
               location: Location = UNKNOWN_LOCATION, end_line: int | None = None) -> Op: ...


@overload
def unknown_op(line: int, text: str, *, parent: "Op | Function | None" = None, loc_ref: str = "",
               location: Location = UNKNOWN_LOCATION, end_line: int | None = None, cls: type[_OpT]) -> _OpT: ...


def unknown_op(line: int, text: str, *, parent: "Op | Function | None" = None, loc_ref: str = "",
               location: Location = UNKNOWN_LOCATION, end_line: int | None = None, cls: type = Op) -> Op:
    """An op for a line no parser understood: its text is kept, its name is ``<unknown>``."""
    return cls(name="<unknown>", dialect="", results=(), operands=(), types="", attributes="",
               location=location, line=line, text=text, parent=parent, loc_ref=loc_ref,
               end_line=line if end_line is None else end_line)


def read_unread_details(ops) -> None:
    """Read the details of every lazy op among ``ops`` (:class:`LazyOp`,
    :class:`LazyInstruction`) that has not read them yet, in one loop: what the first
    use of each would do, without a property call per op (a def-use reads every op's
    operands)."""
    for op in ops:
        if isinstance(op, LazyOp):
            if op._unread:  # LazyOp._read, written out: a call per op costs more than the loop
                op._operands, op._types, op._attributes = op.read_details(op.text)
                op._unread = False
        elif isinstance(op, LazyInstruction) and op._unread:
            op._read()


def _lazy_detail(slot: str, doc: str) -> property:
    """A detail kept in ``slot`` and read by the op's ``_read`` on first use. Setting it
    first reads the others (a hand change is kept: no later read undoes it)."""
    # The getter is compiled from text so that ``op.<slot>`` in it is the interpreter's
    # fast slot read: a getter shared by the slots, taking the name, would not be.
    ns: dict = {}
    exec(f"def get(op):\n    if op._unread:\n        op._read()\n    return op.{slot}\n", ns)  # noqa: S102

    def fset(op, value):
        if getattr(op, "_unread", False):  # (an op built bare, object.__new__, has no flag yet)
            op._read()
        setattr(op, slot, value)

    return property(ns["get"], fset, doc=doc)


_UNSET = object()


def _lazy_state(op):
    """What ``copy`` and ``pickle`` keep of a lazy op: every slot, the details read
    first. (Restoring sets the slots one by one, the details before the text; a
    detail set on an op still unread would read its text, not there yet.)"""
    if op._unread:
        op._read()
    state = {}
    for k in type(op).__mro__:
        for n in k.__dict__.get("__slots__", ()):
            # (the dataclass's own slots of the details are hidden by the properties and
            # stay empty: their values are in ``_operands``...)
            if n not in op.unread:
                value = getattr(op, n, _UNSET)
                if value is not _UNSET:
                    state[n] = value
    return None, state


class LazyOp(Op):
    """An :class:`Op` whose ``operands``, ``types`` and ``attributes`` are read from its
    text on first use.

    A stage file's parse reads every line's kind, name, results, nesting and location
    at once (what links and views need); the rest of an op's text is read only for
    the ops someone looks at. The three are properties over slots of their own
    (``_operands``...), filled together by ``read_details`` (each parser's subclass
    has its own) on the first read of any. The values equal those of the eager parse
    (the tests hold them to it). (Properties, not ``__getattr__`` on an empty slot as
    before: a class with ``__getattr__`` gets none of the interpreter's fast attribute
    reads, and the model and the parsers read an op's other fields many times. Slots
    of their own, not the dataclass's: a store into a shadowed slot costs a call.)
    """

    __slots__ = ("_unread", "_operands", "_types", "_attributes")  # _unread: set by new_lazy_op
    unread = ("operands", "types", "attributes")
    """The details the parser leaves unread (read together on the first use of any)."""

    def __init__(self, *args, **kwargs) -> None:
        self._unread = False  # built whole, by the dataclass fields
        Op.__init__(self, *args, **kwargs)

    @staticmethod
    def read_details(text: str) -> tuple:
        """(operands, types, attributes) of an op printed as ``text``."""
        raise NotImplementedError

    def _read(self) -> None:
        self._operands, self._types, self._attributes = self.read_details(self.text)
        self._unread = False

    __getstate__ = _lazy_state

    operands = _lazy_detail("_operands", "Used values / operand texts.")
    types = _lazy_detail("_types", "Type text after the top-level colon.")
    attributes = _lazy_detail("_attributes", "Attribute dictionary text.")


class LazyInstruction(Instruction):
    """An :class:`Instruction` whose operands are read on first use, like :class:`LazyOp`."""

    __slots__ = ("_unread", "_operands")  # _unread: set by new_lazy_instruction
    unread = ("operands",)  # an instruction's types and attributes are '' at once

    def __init__(self, *args, **kwargs) -> None:
        self._unread = False
        Instruction.__init__(self, *args, **kwargs)

    read_details = LazyOp.read_details

    def _read(self) -> None:
        self._operands = self.read_details(self.text)[0]
        self._unread = False

    __getstate__ = _lazy_state

    operands = _lazy_detail("_operands", "Used values / operand texts.")


_new_object = object.__new__


# The two factories below store every field themselves, not through a shared helper: a
# stage parse makes one op per line, and the helper's call was a tenth of the final
# stages' parse. tests/test_ir_model.py checks that each sets every field.
def new_lazy_op(cls: type, name: str, dialect: str, results: tuple, line: int, text: str, parent,
                loc_ref: str, end_line: int, form: str = "") -> Op:
    """A :class:`LazyOp` of ``cls`` with operands, types and attributes unread: what the
    dataclass ``__init__`` gives, less those three, in half the time (a stage parse
    makes thousands; the parsers' hot loops call it positionally). Its location is
    unknown until the parser resolves it. ``tests/test_ir_model.py`` holds it to the
    dataclass fields."""
    op: LazyOp = _new_object(cls)
    op.name = name
    op.dialect = dialect
    op.results = results
    op.location = UNKNOWN_LOCATION
    op.line = line
    op.text = text
    op.regions = ()
    op.parent = parent
    op.loc_ref = loc_ref
    op.end_line = end_line
    op.form = form
    op._unread = True
    return op


def new_lazy_instruction(cls: type, name: str, dialect: str, results: tuple, line: int, text: str, parent,
                         loc_ref: str, end_line: int, form: str = "", predicate: str = "") -> Instruction:
    """:func:`new_lazy_op` for a :class:`LazyInstruction` (its operands unread; its
    types and attributes '', as an instruction's are)."""
    op: LazyInstruction = _new_object(cls)
    op.name = name
    op.dialect = dialect
    op.results = results
    op.location = UNKNOWN_LOCATION
    op.line = line
    op.text = text
    op.regions = ()
    op.parent = parent
    op.loc_ref = loc_ref
    op.end_line = end_line
    op.form = form
    op.types = ""
    op.attributes = ""
    op.predicate = predicate
    op.offset = -1
    op._unread = True
    return op


@dataclass(slots=True, eq=False)
class Block:
    """A block: an MLIR ``^bb`` block, an LLVM basic block, a PTX/SASS label."""

    label: str | None
    """``^bb0``, ``5``, ``$L__BB0_1``, ``.L_x_0``; None for an unlabelled entry block."""
    args: tuple[Value, ...] = ()
    """Block arguments (MLIR) with their locations."""
    ops: list[Op] = field(default_factory=list)
    """Ops directly in this block."""
    line: int = 0
    """Line of the label (or of the first op for an unlabelled block)."""


@dataclass(slots=True, eq=False)
class Region:
    """A region of an op or function: a list of blocks."""

    blocks: list[Block] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class Function:
    """A function with a body: ``tt.func``, ``llvm.func``, LLVM ``define``, PTX
    ``.entry``/``.func``, a SASS ``.text.<name>`` section, an MIR function."""

    name: str
    """Symbol name without ``@``."""
    kind: str
    """Header keyword: ``tt.func``, ``llvm.func``, ``define``, ``.entry``, ``.func``,
    ``sass``, ``mir``."""
    args: tuple[Value, ...] = ()
    """Arguments / parameters with their locations."""
    blocks: list[Block] = field(default_factory=list)
    """Body blocks (the function's region)."""
    line: int = 0
    """Line of the header."""
    end_line: int = 0
    """Line of the closing brace (or last line)."""
    visibility: str = ""
    """``public``/``private`` (MLIR), linkage (LLVM), ``.visible`` (PTX)."""
    attributes: str = ""
    """Attribute text of the header."""
    location: Location = UNKNOWN_LOCATION
    """Location of the function itself."""
    loc_ref: str = ""
    """Location as written."""
    text: str = ""
    """The header line."""
    def_use_cache: DefUse | None = field(default=None, repr=False)
    """The function's def-use, once built (:func:`irscope.ir.values.def_use`)."""
    body_ops: "list[Op] | None" = field(default=None, repr=False)
    """Every op of the body in text order as the parser read it, nested ones included
    (what :meth:`ops` gives, without walking the regions); None: :meth:`ops` walks."""

    def def_use(self) -> DefUse:
        """Values, definers and uses of the function (built once:
        :func:`irscope.ir.values.def_use`)."""
        from .values import def_use

        return def_use(self)

    def ops(self) -> Iterator[Op]:
        """Every op of the body, nested ones included, in text order."""
        if self.body_ops is not None:
            return iter(self.body_ops)
        return self._walk()

    def _walk(self) -> Iterator[Op]:
        for block in self.blocks:
            for op in block.ops:
                yield from op.walk()


def _memo_clearing(name: str) -> Any:
    """dict's mutator ``name`` for :class:`AliasTable`: clears the table's memo first."""
    def method(self: "AliasTable", *args: Any, **kwargs: Any) -> Any:
        self.decoded.clear()
        return getattr(dict, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


class AliasTable(dict):
    """A module's aliases (name -> attribute text), with a memo of what was read
    through it: the encodings decoded (keyed by their text) and the op type lists
    parsed (keyed by ``(text, number of results)``). A TTGIR prints a few layouts
    and type lists and uses each on hundreds of ops, and finding what a read depends
    on costs more than looking it up. Any change to the table clears the memo."""

    __slots__ = ("decoded",)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.decoded: dict = {}

    def __setitem__(self, key, value) -> None:
        self.decoded.clear()
        super().__setitem__(key, value)

    def __delitem__(self, key) -> None:
        self.decoded.clear()
        super().__delitem__(key)

    def __ior__(self, other):  # type: ignore[misc]  # returns the table itself, as dict's does, not dict's __or__ type
        self.decoded.clear()
        return super().__ior__(other)

    update = _memo_clearing("update")
    pop = _memo_clearing("pop")
    popitem = _memo_clearing("popitem")
    clear = _memo_clearing("clear")
    setdefault = _memo_clearing("setdefault")

    def __reduce__(self):
        return (AliasTable, (dict(self),))


@dataclass(slots=True, eq=False)
class Module:
    """The parse of one stage text (or one pass snapshot)."""

    stage: str
    """Stage name the text was parsed as (``ttir``, ``ttgir``, ``mlir``, ``llir``...)."""
    functions: list[Function] = field(default_factory=list)
    """Functions with bodies, in text order."""
    globals: list[Op] = field(default_factory=list)
    """Module-level ops outside functions (``llvm.mlir.global``, declarations, opaque
    unknown lines), in text order."""
    encodings: dict[str, str] = field(default_factory=AliasTable)
    """MLIR attribute/type aliases other than locations: ``#blocked`` -> ``#ttg.blocked<{...}>``."""
    loc_aliases: dict[str, str] = field(default_factory=dict)
    """Location tables as written: MLIR ``#loc3`` -> ``"k.py":6:24``; LLVM ``!7`` ->
    ``!DILocation(...)``; PTX file number -> path."""
    attributes: str = ""
    """Module attribute text (MLIR ``module attributes {...}``; PTX ``.target``...)."""
    location: Location = UNKNOWN_LOCATION
    """Location of the module op (MLIR)."""
    all_ops: list[Op] = field(default_factory=list)
    """Every op in text order (nested ones included); what :meth:`ops` iterates."""
    unknown: list[tuple[int, str]] = field(default_factory=list)
    """(line number, text) of the lines not understood."""
    total_lines: int = 0
    """Non-blank, non-comment lines."""
    understood_lines: int = 0
    """Of those, the lines understood."""

    def ops(self) -> Iterator[Op]:
        """Every op / instruction in text order, nested ones included."""
        return iter(self.all_ops)

    @property
    def coverage(self) -> float:
        """Share of non-blank, non-comment lines understood, 0..1 (1.0 for empty text)."""
        if not self.total_lines:
            return 1.0
        return self.understood_lines / self.total_lines

    def to_networkx(self):
        """A DiGraph of every function's ops and def-use edges
        (:func:`irscope.ir.values.to_networkx`)."""
        from .values import to_networkx

        return to_networkx(self)

    def encoding(self, ref: str):
        """The decoded encoding of an alias (``#blocked1``) or inline attribute text
        (:func:`irscope.ir.layouts.decode_encoding`)."""
        from .layouts import decode_encoding

        return decode_encoding(ref, self.encodings)

    def function(self, name: str) -> Function | None:
        """The function called ``name``, or None."""
        for fn in self.functions:
            if fn.name == name:
                return fn
        return None


@dataclass(slots=True)
class ParseCache:
    """Per-line memo tables shared across parses (pass snapshots repeat most lines).

    Each parser family keeps its own table: raw line text -> parsed tuple. Locations
    that do not depend on an alias table are cached too.
    """

    mlir: dict = field(default_factory=dict)
    mlir_forms: dict = field(default_factory=dict)
    """Raw line -> just the op name and form (:func:`irscope.ir.op_forms`)."""
    llvm_forms: dict = field(default_factory=dict)
    mir_forms: dict = field(default_factory=dict)
    mlir_shapes: dict = field(default_factory=dict)
    """Line template (names replaced by placeholders) -> classified shape; see ``line_shapes``."""
    llvm_shapes: dict = field(default_factory=dict)
    llvm: dict = field(default_factory=dict)
    mir: dict = field(default_factory=dict)
    ptx: dict = field(default_factory=dict)
    sass: dict = field(default_factory=dict)
    amdgcn: dict = field(default_factory=dict)
    locs: dict = field(default_factory=dict)
    """Context-free location text -> :class:`Location`."""
    resolvers: dict = field(default_factory=dict)
    """Recent alias tables -> their resolver (with its resolved aliases): consecutive
    snapshots usually print the very same ``#loc`` table."""

    def clear(self) -> None:
        """Drop every table."""
        for table in (self.mlir, self.mlir_forms, self.llvm_forms, self.mir_forms, self.mlir_shapes, self.llvm_shapes, self.llvm, self.mir, self.ptx, self.sass, self.amdgcn, self.locs, self.resolvers):
            table.clear()
