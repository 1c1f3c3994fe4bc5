"""The layouts of one op of a parsed stage: its result tensors, and its operands where they differ.

``ttg.convert_layout %x : tensor<128xf16, #blocked1> -> tensor<128xf16, #slice>``
has two sides; ``tt.dot`` three (A, B and the accumulator); an elementwise op one.
Types come from the op's own type text (:meth:`irscope.ir.model.Op.signature`), its
results' from :func:`irscope.ir.result_types.op_result_types` (``tt.load`` of
``tensor<..x!tt.ptr<f16>>`` defines f16 values), aliases resolve through the module
(``Module.encodings``).

Stable API (the HTML report uses it): :func:`op_layouts` for one op line,
:func:`module_layouts` for every distinct layout of a module.
"""

from __future__ import annotations

from dataclasses import dataclass

from irscope.compiler.stages import TTGIR
from irscope.errors import IrscopeError
from irscope.ir.layouts import SharedEncoding
from irscope.ir.result_types import op_result_types
from irscope.ir.types import MemDescType, PointerType, ScalarType, TensorType

from .layout_picture import LayoutPicture, picture_of
from .style import clean

__all__ = ["LayoutSide", "OpLayouts", "module_layouts", "op_layouts"]


@dataclass(frozen=True, slots=True)
class LayoutSide:
    """One tensor of an op and its picture: ``role`` is ``result 0``, ``operand 1``...;
    ``value`` the SSA name (``%y``; '' when unknown); ``type`` the type as printed."""

    role: str
    value: str
    type: str
    picture: LayoutPicture

    def to_json(self) -> dict:
        """``{"role", "value", "type", "encoding", "layout": picture.to_json()}``."""
        return {"role": self.role, "value": self.value, "type": self.type, "encoding": self.picture.encoding,
                "layout": self.picture.to_json()}


@dataclass(frozen=True, slots=True)
class OpLayouts:
    """The drawn tensors of the op starting at ``line`` of ``stage``: operands that
    differ from every result first (the source side of a conversion), then results."""

    stage: str
    line: int
    op_name: str
    text: str
    sides: tuple[LayoutSide, ...]

    @property
    def pictures(self) -> list[LayoutPicture]:
        return [s.picture for s in self.sides]

    def to_json(self) -> dict:
        """``{"stage", "line", "op", "text", "layouts": [side.to_json(), ...]}``."""
        return {"stage": self.stage, "line": self.line, "op": self.op_name, "text": self.text,
                "layouts": [s.to_json() for s in self.sides]}


def _element_bits(t) -> int | None:
    e = t.element
    if isinstance(e, ScalarType):
        return e.bits or None
    if isinstance(e, PointerType):
        return 64
    return None


def _layout_type(t, aliases) -> bool:
    """A tensor with an encoding, or a shared-memory descriptor: a type with a picture."""
    if isinstance(t, TensorType):
        return t.encoding_ref is not None and None not in t.shape
    if isinstance(t, MemDescType):
        return (t.encoding_ref is not None and None not in t.shape and t.memory_kind(aliases) != "tensor"
                and isinstance(t.encoding(aliases), SharedEncoding))
    return False


def _key(t, aliases) -> tuple:
    return (t.encoding_text(aliases), tuple(t.shape))


def _side(role: str, value: str, t, aliases) -> LayoutSide:
    text = clean(str(t), 300)
    title = f"{role} {clean(value, 60)} : {text}" if value else f"{role} : {text}"
    try:
        pic = picture_of(t.encoding_ref, t.shape, element_bits=_element_bits(t), aliases=aliases, title=title)
    except IrscopeError as exc:
        raise IrscopeError(f"{role} {clean(value, 60)} ({text}): {exc}") from None
    return LayoutSide(role, clean(value, 60), text, pic)


def op_layouts(module, line: int, stage: str = TTGIR) -> OpLayouts:
    """The layouts of the op that starts at ``line`` of ``module`` (a parsed stage).

    IrscopeError (one line) when no op starts there or it has no tensor result
    with a layout (``tt.store``, a scalar op, TTIR without encodings).
    """
    op = next((o for o in module.ops() if o.line == line and o.name != "<unknown>"), None)
    if op is None:
        raise IrscopeError(f"no op starts at line {line} of the {stage} stage")
    aliases = module.encodings
    sig = op.signature(aliases)
    result_types = op_result_types(op, aliases)
    results = [(i, t) for i, t in enumerate(result_types) if _layout_type(t, aliases)]
    if not results:
        bare = any(isinstance(t, TensorType) and t.encoding_ref is None for t in result_types)
        raise IrscopeError(f"the op at line {line} of the {stage} stage ({clean(op.name, 60)}) has no tensor "
                           f"result with a layout" + (" (its tensors have no encoding: layouts appear in ttgir)"
                                                      if bare else ""))
    # Printed operand types pair with the leading operands (``A * B -> C`` leaves the
    # accumulator out; ``%a[%i] : T -> T2`` the index); a list pairs only when whole.
    names = op.operands if sig.form in ("dot", "arrow", "cast") or len(op.operands) == len(sig.operands) else ()
    seen = {_key(t, aliases) for _, t in results}
    sides = []
    if sig.form != "single":  # one printed type stands for every operand: nothing differs
        for i, t in enumerate(sig.operands):
            if _layout_type(t, aliases) and _key(t, aliases) not in seen:
                seen.add(_key(t, aliases))
                sides.append(_side(f"operand {i}", names[i] if i < len(names) else "", t, aliases))
    res_names = op.results if len(op.results) == len(result_types) else ()
    done = set()
    for i, t in results:
        if _key(t, aliases) not in done:  # scf.for yields several tensors of one layout
            done.add(_key(t, aliases))
            sides.append(_side(f"result {i}", res_names[i] if res_names else "", t, aliases))
    return OpLayouts(stage, line, clean(op.name, 80), clean(op.text.strip(), 400), tuple(sides))


def module_layouts(module, *, max_elements: int | None = None) -> list[LayoutSide]:
    """Every distinct (layout, shape) of the op results of ``module``, in text order,
    each with the first op that makes it (role ``line N``).  Layouts that cannot be
    drawn (tensor memory, nvidia_mma v5) and tensors over ``max_elements`` are skipped."""
    aliases = module.encodings
    seen, out = set(), []
    for op in module.ops():
        if op.name == "<unknown>" or not op.results:
            continue
        for i, t in enumerate(op_result_types(op, aliases)):
            if not isinstance(t, (TensorType, MemDescType)) or not _layout_type(t, aliases) \
                    or _key(t, aliases) in seen:
                continue
            seen.add(_key(t, aliases))
            numel = 1
            for s in t.shape:
                numel *= s or 0  # never 0: _layout_type takes static shapes only
            if max_elements is not None and numel > max_elements:
                continue
            value = op.results[i] if i < len(op.results) else ""
            try:
                out.append(_side(f"line {op.line} {clean(op.name, 60)}", value, t, aliases))
            except IrscopeError:
                continue
    return out
